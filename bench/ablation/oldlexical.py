"""A small BM25 channel that keeps exact identifiers (service names, config keys, versions)."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
from scipy import sparse

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*[A-Za-z0-9]|[A-Za-z0-9]")


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens; an identifier is kept whole *and* split into its parts."""
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower()):
        out.append(tok)
        parts = re.split(r"[_.\-]", tok)
        if len(parts) > 1:
            out.extend(p for p in parts if p)
    return out


class BM25:
    """Okapi BM25 over a fixed list of texts (k1=1.2, b=0.75).

    Term weights are precomputed into a sparse document × term matrix, so a query is the
    sum of a few columns: no Python loop over postings at query time."""

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.n = len(texts)
        self.vocab: dict[str, int] = {}
        rows, cols, tfs = [], [], []
        lengths = np.zeros(self.n, dtype=np.float32)
        for i, text in enumerate(texts):
            counts = Counter(tokenize(text))
            lengths[i] = sum(counts.values())
            for tok, c in counts.items():
                rows.append(i)
                cols.append(self.vocab.setdefault(tok, len(self.vocab)))
                tfs.append(c)
        if not self.n:
            self.weights = sparse.csc_matrix((0, 0), dtype=np.float32)
            return
        avg = float(lengths.mean()) or 1.0
        rows_a, cols_a, tf = np.array(rows), np.array(cols), np.array(tfs, dtype=np.float32)
        df = np.bincount(cols_a, minlength=len(self.vocab))
        idf = np.log1p((self.n - df + 0.5) / (df + 0.5)).astype(np.float32)
        denom = tf + k1 * (1 - b + b * lengths[rows_a] / avg)
        w = idf[cols_a] * tf * (k1 + 1) / denom
        self.weights = sparse.csc_matrix((w, (rows_a, cols_a)), shape=(self.n, len(self.vocab)), dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        cols = sorted({self.vocab[t] for t in tokenize(query) if t in self.vocab})
        if not cols or not self.n:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self.weights[:, cols].sum(axis=1), dtype=np.float32).ravel()

