"""The blind cases as a regression suite (slow): incidents written by helpers who never read the runtime.

`bench/blind-*/` holds incidents written from the documented format alone, each first run recorded in
bench/results/blind/ before anything was fixed. Once their lessons are in the rules they are no longer
blind, but they stay what they were written to be: material shaped as people export it, in domains,
languages and formats the rules were not written for. What must hold on every one of them:
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SETS = sorted(p for p in (ROOT / "bench").glob("blind-*") if p.is_dir())


@pytest.fixture(scope="module")
def scores():
    from investigator.eval_parallel import evaluate_parallel
    from investigator.evaluate import expand

    return evaluate_parallel(expand(SETS), ["basic"], jobs=2)


def test_no_blind_case_gets_a_false_confirmation_a_leak_or_an_error(scores):
    assert scores and not [(s.case_id, s.error) for s in scores if s.error]
    assert [s.case_id for s in scores if s.false_confirmations] == []
    assert sum(s.leaks for s in scores) == 0 and all(s.citations_valid == s.citations for s in scores)


def test_the_root_cause_is_found_in_every_blind_case_that_names_one(scores):
    """Confirmed or inferred: an on-call engineer with the same files names the root; so must the run.
    A miss, or a wrong root confirmed, fails."""
    named = [s for s in scores if s.root_ok is not None]
    missed = [(s.case_id, s.root_found, s.root_expected) for s in named if not s.root_ok]
    assert named and missed == [], missed
    assert [s.case_id for s in named if s.root_found and not s.root_entity_ok and s.causal_verdict == "confirmed"] == []


def test_a_blind_case_whose_cause_is_unreadable_stops_saying_so(scores):
    """Insufficient where the gold says so, with the stop the gold names (permission, not progress)."""
    for s in scores:
        if s.causal_expected == "insufficient":
            assert (s.causal_verdict, s.stop) == ("insufficient", s.stop_expected), s.case_id
