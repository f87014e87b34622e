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
from scipy import sparse

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
    """Okapi BM25 over a fixed list of texts (k1=1.2, b=0.75), its statistics taken over the rows a
    search may return.

    Term counts are kept in a sparse document x term matrix. A query reads only its own columns;
    document frequencies and the mean length are computed over `rows` (the rows the searching
    principal may read), so text outside them cannot change how the rest ranks: what a principal
    cannot read has no effect on what they get, not even on its order."""

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.n = len(texts)
        self.k1, self.b = k1, b
        self.vocab: dict[str, int] = {}
        rows, cols, tfs = [], [], []
        self.lengths = np.zeros(self.n, dtype=np.float32)
        for i, text in enumerate(texts):
            counts = Counter(tokenize(text))
            self.lengths[i] = sum(counts.values())
            for tok, c in counts.items():
                rows.append(i)
                cols.append(self.vocab.setdefault(tok, len(self.vocab)))
                tfs.append(c)
        self.tf = sparse.csc_matrix((np.array(tfs, dtype=np.float32), (np.array(rows, dtype=np.int64),
                                     np.array(cols, dtype=np.int64))), shape=(self.n, len(self.vocab)),
                                    dtype=np.float32)

    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """A score per text (0 outside `rows`); `rows` (default: all) is what the statistics count."""
        out = np.zeros(self.n, dtype=np.float32)
        cols = sorted({self.vocab[t] for t in tokenize(query) if t in self.vocab})
        rows = np.arange(self.n) if rows is None else np.asarray(rows, dtype=np.int64)
        if not cols or not rows.size:
            return out
        sub = self.tf[:, cols].tocsr()[rows].tocoo()
        lengths = self.lengths[rows]
        avg = np.float32(lengths.mean()) or np.float32(1.0)
        df = np.bincount(sub.col, minlength=len(cols))
        idf = np.log1p((rows.size - df + 0.5) / (df + 0.5)).astype(np.float32)
        tf = sub.data
        w = idf[sub.col] * tf * np.float32(self.k1 + 1) / (tf + np.float32(self.k1) * (
            np.float32(1 - self.b) + np.float32(self.b) * lengths[sub.row] / avg))
        out[rows] = np.bincount(sub.row, weights=w, minlength=rows.size).astype(np.float32)
        return out
