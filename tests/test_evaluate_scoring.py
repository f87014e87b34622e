"""How `eval` scores a root cause against the gold (investigator/evaluate.py)."""

from __future__ import annotations

from investigator.evaluate import _unspecified_change, change_matches


def test_a_gold_change_id_must_be_named_exactly():
    assert change_matches("DEP-7", "DEP-7", None) and not change_matches("DEP-8", "DEP-7", None)


def test_a_history_reference_matches_the_documented_id_of_that_revision():
    assert change_matches("web@helm-rev124", None, {"format": "helm", "revision": 124})
    assert not change_matches("web@helm-rev123", None, {"format": "helm", "revision": 124})


def test_a_gold_that_could_not_name_the_change_leaves_it_unconstrained_but_capacity_wants_none():
    assert _unspecified_change("deployment", None, None) and _unspecified_change("noisy_neighbour", None, None)
    assert not _unspecified_change("capacity", None, None)
    assert not _unspecified_change("deployment", "DEP-7", None)
    assert not _unspecified_change("deployment", None, {"format": "helm", "revision": 3})
