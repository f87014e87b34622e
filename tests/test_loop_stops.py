"""The loop is bounded: budgets, no progress, and what a run that cannot finish may still say."""

from __future__ import annotations

from pathlib import Path

import yaml

from graphs.planner import DeterministicPlanner
from state.evidence import DocumentsAction, Gap

ROOT = Path(__file__).resolve().parent.parent


def _budget(case_dir: Path, rounds: int, reads: int = 40) -> None:
    path = case_dir / "case.yaml"
    data = yaml.safe_load(path.read_text())
    data["budgets"].update(rounds=rounds, reads=reads)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_budget_too_small_stops_budget_exhausted_and_confirms_no_root_cause(make_investigator, case_copy):
    _budget(case_copy, rounds=4)
    result = make_investigator().start(case_copy)
    r = result.report
    assert r.stop.kind == "budget_exhausted" and "rounds" in r.stop.detail
    verdicts = {c.id: c.verdict for c in r.claims}
    assert verdicts["causal_attribution"] != "confirmed"
    assert verdicts["symptom_window"] == "confirmed", "symptoms are still reported"
    assert r.timeline, "the timeline is still reported"
    causal = next(c for c in r.claims if c.id == "causal_attribution")
    assert causal.missing, "it names what is missing"


def test_a_reads_budget_stops_the_run_too(make_investigator, case_copy):
    _budget(case_copy, rounds=12, reads=3)
    r = make_investigator().start(case_copy).report
    assert r.stop.kind == "budget_exhausted" and "reads" in r.stop.detail
    assert r.budgets["reads_used"] <= 3


class SameQueryPlanner(DeterministicPlanner):
    """A planner that asks the same thing forever (what a confused LLM planner does)."""

    def next_gap(self, case, decisions, k, t, done):
        return Gap(claim_id="causal_attribution",
                   act=DocumentsAction(query="order-service latency", seeds=("order-service",), kinds=("runbook",)),
                   reason="loop")


def test_the_same_query_returning_the_same_texts_stops_no_new_progress(make_investigator):
    r = make_investigator(planner=SameQueryPlanner()).start(ROOT / "cases" / "ALR-20260429-017").report
    assert r.stop.kind == "no_new_progress"
    assert r.budgets["rounds_used"] < 12


def test_the_same_run_twice_gives_the_same_report(make_investigator, tmp_path):
    import json

    def masked(report) -> dict:
        data = json.loads(report.to_json())
        data.pop("generated_at")
        for ev in data["evidence"]:
            ev["read_at"] = None
        for step in data["timeline"]:
            step["at"] = None
        return data

    a = make_investigator(workspace=tmp_path / "a").start(ROOT / "cases" / "ALR-20260429-017").report
    b = make_investigator(workspace=tmp_path / "b").start(ROOT / "cases" / "ALR-20260429-017").report
    assert masked(a) == masked(b)
