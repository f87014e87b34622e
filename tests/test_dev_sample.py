"""The outside dev sample as a regression suite (slow): incidents nobody on the team wrote.

`../shared/cases-dev/converted` (see its README) holds incidents from a generator the team has
not seen, converted by hand into the case format. They are error analysis and regression only:
nothing in the runtime names anything in them. Skipped where the sample is not on the machine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CANDIDATES = [Path(os.environ["INVESTIGATOR_DEV_SAMPLE"])] if os.environ.get("INVESTIGATOR_DEV_SAMPLE") else [
    ROOT.parent / "shared" / "cases-dev" / "converted", Path("/work/shared/cases-dev/converted")]
SAMPLE = next((p for p in CANDIDATES if p.is_dir()), None)


@pytest.fixture(scope="module")
def scores():
    if SAMPLE is None:
        pytest.skip("the dev sample (../shared/cases-dev/converted) is not on this machine")
    from investigator.eval_parallel import evaluate_parallel
    from investigator.evaluate import expand

    return evaluate_parallel(expand([SAMPLE]), ["basic"], jobs=2)


def test_no_outside_incident_gets_a_false_confirmation_or_a_leak(scores):
    assert scores and not [s.error for s in scores if s.error]
    assert [s.case_id for s in scores if s.false_confirmations] == []
    assert sum(s.leaks for s in scores) == 0 and all(s.citations_valid == s.citations for s in scores)


def test_no_outside_incident_gets_verdicts_that_contradict_each_other(scores):
    """A change refuted in one claim and the confirmed cause in another, say (graphs/rulebook/consistency.py)."""
    assert [s.case_id for s in scores if s.contradictions] == []


def test_the_root_cause_is_found_in_nearly_every_outside_incident_that_names_one(scores):
    named = [s for s in scores if s.root_ok is not None]
    right = [s for s in named if s.root_ok]
    assert len(right) >= len(named) - 2, [(s.case_id, s.root_found, s.root_expected) for s in named if not s.root_ok]


def test_counter_evidence_and_stop_reasons_hold_on_the_outside_sample(scores):
    ce = [s for s in scores if all(s.verdicts.get(c) == v for c, v in s.expected_verdicts.items()
                                   if c.startswith("counter"))]
    assert len(ce) >= len(scores) - 2
    assert sum(s.stop == s.stop_expected for s in scores) >= len(scores) - 2, \
        [(s.case_id, s.stop, s.stop_expected) for s in scores if s.stop != s.stop_expected]
