"""Retrieval and evidence metrics with explicit denominators (seed 004 §15.8.2).

- Recall against an allowed set: the denominator is `min(K, |allowed relevant|)`, never K
  when fewer items may be returned; an empty allowed set gives `None`, not a perfect score.
- nDCG uses exponential gain `2^rel - 1` and an ideal ranking built from *every* labelled
  item in the allowed set, including those the system did not return.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def ann_recall_at_k(returned: Sequence[str], exact: Sequence[str], k: int) -> float | None:
    """|top-k returned ∩ top-K_q exact| / K_q with K_q = min(k, |exact|) (exact = allowed set, exact order)."""
    kq = min(k, len(exact))
    if kq == 0:
        return None
    return len(set(_dedupe(returned)[:k]) & set(exact[:kq])) / kq


def recall_at_k(returned: Sequence[str], relevant: Iterable[str], k: int) -> float | None:
    """Share of the relevant items found in the top k (None when nothing is relevant)."""
    rel = set(relevant)
    if not rel:
        return None
    return len(set(_dedupe(returned)[:k]) & rel) / len(rel)


def mrr(returned: Sequence[str], relevant: Iterable[str]) -> float:
    rel = set(relevant)
    for i, item in enumerate(_dedupe(returned), start=1):
        if item in rel:
            return 1.0 / i
    return 0.0


def dcg(gains: Sequence[float]) -> float:
    return sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(returned: Sequence[str], grades: Mapping[str, float], k: int) -> float | None:
    """nDCG@k with the full-label ideal ranking; None when no labelled item is relevant (IDCG = 0)."""
    ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:k])
    if ideal <= 0:
        return None
    got = dcg([grades.get(item, 0.0) for item in _dedupe(returned)[:k]])
    return got / ideal


def mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def percentile(values: Sequence[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[idx]
