"""A small BM25 channel that keeps exact identifiers (service names, config keys, versions).

Tokens are Unicode words with accents and case folded (``Tekezé`` = ``tekeze``); an
identifier (``queue_depth_max``, ``billing-api``, ``4.19.0``) is kept whole *and* split into
its parts; common English function words are dropped (they match every passage and drown
the words that matter in long questions).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import numpy as np

from tools.sparse import CSR

_TOKEN = re.compile(r"[^\W_](?:[\w.\-]*[^\W_])?")
_PARTS = re.compile(r"[_.\-]")
_SPECIAL = str.maketrans({"ø": "o", "ł": "l", "ß": "ss", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "þ": "th",
                          "ı": "i"})
STOPWORDS = frozenset("""
a an and are as at be been but by for from had has have he her hers him his how i if in into is it its
me my no nor not of on or our she so than that the their them then there these they this those to was
we were what when where which who whom whose why will with would you your did does do can could
""".split())


def fold(text: str) -> str:
    """Lower case without accents: ``Tekezé`` -> ``tekeze``."""
    decomposed = unicodedata.normalize("NFKD", text.lower().translate(_SPECIAL))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> list[str]:
    """Folded tokens minus stopwords; an identifier is kept whole *and* split into its parts."""
    out: list[str] = []
    for tok in _TOKEN.findall(fold(text)):
        parts = [p for p in _PARTS.split(tok) if p]
        if len(parts) > 1:
            out.append(tok)
            out.extend(p for p in parts if p not in STOPWORDS)
        elif tok not in STOPWORDS:
            out.append(tok)
    return out


class BM25:
    """Okapi BM25 over a fixed list of texts (k1=1.2, b=0.75).

    Term weights are precomputed into a sparse matrix stored term × document (the
    columns of the document × term matrix), so a query is the sum of a few of its rows:
    no Python loop over postings at query time."""

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
            self.weights = CSR.empty((0, 0), dtype=np.float32)
            return
        avg = float(lengths.mean()) or 1.0
        rows_a, cols_a = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
        tf = np.array(tfs, dtype=np.float32)
        df = np.bincount(cols_a, minlength=len(self.vocab))
        idf = np.log1p((self.n - df + 0.5) / (df + 0.5)).astype(np.float32)
        denom = tf + k1 * (1 - b + b * lengths[rows_a] / avg)
        w = idf[cols_a] * tf * (k1 + 1) / denom
        self.weights = CSR.from_coo(w, cols_a, rows_a, (len(self.vocab), self.n), dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        cols = sorted({self.vocab[t] for t in tokenize(query) if t in self.vocab})
        if not cols or not self.n:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self.weights.sum_rows(cols), dtype=np.float32)

