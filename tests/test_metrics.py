"""Metric definitions on hand-computed examples (seed 004 §15.8.2 included)."""

from __future__ import annotations

import pytest

from tools.evaluation import ann_recall_at_k, mrr, ndcg_at_k, percentile, recall_at_k


def test_recall_divides_by_the_allowed_set_not_by_k():
    # K=5, allowed set A/B/C in exact order, the system returns A and C: 2/3, not 2/5
    assert ann_recall_at_k(["A", "C"], ["A", "B", "C"], 5) == pytest.approx(2 / 3)


def test_an_empty_allowed_set_is_not_a_perfect_score():
    assert ann_recall_at_k(["X"], [], 5) is None
    assert recall_at_k(["X"], [], 5) is None


def test_ndcg_builds_the_ideal_ranking_from_every_labelled_item():
    # grades A/B/C = 3/2/1, K=2, the system returns B, C
    assert ndcg_at_k(["B", "C"], {"A": 3, "B": 2, "C": 1}, 2) == pytest.approx(0.40830, abs=1e-5)


def test_ndcg_is_undefined_when_nothing_labelled_is_relevant():
    assert ndcg_at_k(["A"], {"A": 0, "B": 0}, 2) is None


def test_recall_mrr_and_percentiles_on_small_examples():
    assert recall_at_k(["a", "x", "b", "a"], {"a", "b"}, 2) == 0.5
    assert recall_at_k(["a", "x", "b"], {"a", "b"}, 5) == 1.0
    assert mrr(["x", "y", "b"], {"b"}) == pytest.approx(1 / 3)
    assert mrr(["x"], {"b"}) == 0.0
    assert percentile([5, 1, 3, 2, 4], 50) == 3 and percentile([5, 1, 3, 2, 4], 95) == 5
