"""A small BM25 channel that keeps exact identifiers (service names, config keys, versions)."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import numpy as np

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
    """Okapi BM25 over a fixed list of texts (k1=1.2, b=0.75)."""

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.n = len(texts)
        self.lengths = np.zeros(self.n, dtype=np.float32)
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, text in enumerate(texts):
            counts = Counter(tokenize(text))
            self.lengths[i] = sum(counts.values())
            for tok, c in counts.items():
                self.postings[tok].append((i, c))
        self.avg = float(self.lengths.mean()) if self.n else 0.0

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float32)
        if not self.n:
            return out
        for tok in set(tokenize(query)):
            plist = self.postings.get(tok)
            if not plist:
                continue
            idf = math.log(1 + (self.n - len(plist) + 0.5) / (len(plist) + 0.5))
            for i, tf in plist:
                denom = tf + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
                out[i] += idf * tf * (self.k1 + 1) / denom
        return out
