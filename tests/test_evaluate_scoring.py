"""How `eval` scores a root cause against the gold (investigator/evaluate.py)."""

from __future__ import annotations

import re

from investigator.evaluate import (
    CaseScore, _unspecified_change, case_line, change_matches, finished_counter, summary, to_markdown,
)


def test_a_gold_change_id_must_be_named_exactly():
    assert change_matches("DEP-7", "DEP-7", None) and not change_matches("DEP-8", "DEP-7", None)


def test_a_history_reference_matches_the_documented_id_of_that_revision():
    assert change_matches("web@helm-rev124", None, {"format": "helm", "revision": 124})
    assert not change_matches("web@helm-rev123", None, {"format": "helm", "revision": 124})


def test_a_gold_that_could_not_name_the_change_leaves_it_unconstrained_but_capacity_wants_none():
    assert _unspecified_change("deployment", None, None) and _unspecified_change("noisy_neighbour", None, None)
    assert not _unspecified_change("capacity", None, None)
    assert not _unspecified_change("external", None, None), "a third party's own failure names no change of ours"
    assert not _unspecified_change("deployment", "DEP-7", None)
    assert not _unspecified_change("deployment", None, {"format": "helm", "revision": 3})


def _scored(case_id: str, *, expected: str, verdict: str, root_right: bool | None) -> CaseScore:
    return CaseScore(case_id=case_id, retrieval="basic", claims=3, verdicts_correct=3, false_confirmations=0,
                     causal_verdict=verdict, causal_expected=expected, root_found=("svc", "config_push", None),
                     root_entity_ok=root_right, root_change_ok=root_right, evidence_recall=1.0,
                     evidence_precision=1.0, citations=1, citations_valid=1, leaks=0, rounds=4, reads=6,
                     stop="evidence_ready", stop_expected="evidence_ready", seconds=1.0, verdicts={},
                     expected_verdicts={})


def test_the_group_root_cause_figure_agrees_with_the_marks_on_its_rows():
    scores = [
        _scored("right-and-confirmed", expected="confirmed", verdict="confirmed", root_right=True),
        _scored("right-but-left-insufficient", expected="confirmed", verdict="insufficient", root_right=True),
        _scored("wrong-root", expected="confirmed", verdict="confirmed", root_right=False),
        _scored("gold-says-insufficient", expected="insufficient", verdict="insufficient", root_right=None),
    ]
    table = to_markdown(scores, per_case=True)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines() if line.startswith("| ")}
    ticks = sum("✓" in rows[s.case_id] for s in scores)
    crosses = sum("✗" in rows[s.case_id] for s in scores)
    assert (ticks, crosses) == (1, 2)
    assert "✓" not in rows["right-but-left-insufficient"] and "not confirmed" in rows["right-but-left-insufficient"]
    assert "✓" not in rows["gold-says-insufficient"] and "✗" not in rows["gold-says-insufficient"]
    group = next(line for line in table.splitlines() if line.startswith("| all |"))
    assert group.split(" | ")[4] == f"{100 * ticks / (ticks + crosses):.0f} %"  # root cause acc. = ✓ / marked rows
    assert summary(scores)["basic"]["root_cause_accuracy"] == ticks / (ticks + crosses)
    lines = [case_line(s) for s in scores]
    assert [re.search(r"verdicts, root (.*?), stop", line)[1] for line in lines] == ["ok", "right, not confirmed", "WRONG", "-"]


def test_eval_numbers_each_finished_run_and_says_the_time_left():
    said: list[str] = []
    now = [0.0]
    finished = finished_counter(said.append, 4, clock=lambda: now[0])
    for line in ("a [basic]", "a [graph]", "b [basic]", "b [graph]"):
        now[0] += 30
        finished(line)
    assert said == ["[1/4, about 1 min 30 s left] a [basic]", "[2/4, about 1 min 00 s left] a [graph]",
                    "[3/4, about 30 s left] b [basic]", "[4/4] b [graph]"]
