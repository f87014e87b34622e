"""A generated test bed on every change: 30 incidents, never a false confirmation.

The generator (investigator/generator) has its own vocabularies and writes its gold answers
from docs/deciding.md, not from the runtime; the runtime is run on its cases as a new user
would run it on theirs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    from investigator.eval_parallel import evaluate_parallel
    from investigator.evaluate import expand
    from investigator.generator import generate

    out = tmp_path_factory.mktemp("generated")
    generate(seed=20261201, count=30, out=out)
    return evaluate_parallel(expand([out]), ["basic"], jobs=2)


def test_no_generated_case_gets_a_false_confirmation(scores):
    assert len(scores) == 30 and not [s.error for s in scores if s.error]
    assert [s.case_id for s in scores if s.false_confirmations] == []


def test_the_cause_is_found_where_the_evidence_suffices(scores):
    suff = [s for s in scores if s.causal_expected == "confirmed"]
    found = [s for s in suff if s.root_ok and s.causal_verdict == "confirmed"]
    assert len(found) >= 0.9 * len(suff), [(s.case_id, s.variant, s.root_found, s.root_expected) for s in suff
                                          if s not in found]


def test_an_insufficient_cause_names_what_is_missing_and_the_run_stops_as_expected(scores):
    for s in scores:
        if s.causal_expected == "insufficient":
            assert s.causal_verdict == "insufficient" and s.insufficient_named, s.case_id
    assert sum(s.stop == s.stop_expected for s in scores) >= 0.9 * len(scores)
    assert sum(s.leaks for s in scores) == 0 and all(s.citations_valid == s.citations for s in scores)


_ = Path
