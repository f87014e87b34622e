"""Every shipped case end to end with the basic tool: the verdicts, citations and leaks the product promises."""

from __future__ import annotations

import json
from pathlib import Path

from investigator.evaluate import store_text
from state.expected import load_expected
from tools.corpus import load_manifest, load_source

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
CASES = sorted(p.parent for p in (ROOT / "cases").glob("*/expected.yaml"))


@pytest.fixture(scope="module", params=[pytest.param(c, marks=() if c == REFERENCE else pytest.mark.slow) for c in CASES],
                ids=lambda p: p.name)
def case_run(request, tmp_path_factory, embedder):
    from investigator.config import Settings
    from investigator.runtime import Investigator

    ws = tmp_path_factory.mktemp(request.param.name)
    inv = Investigator(Settings(workspace=ws), embedder=embedder, progress=lambda _m: None)
    result = inv.start(request.param)
    inv.write(result.run_id, ws / "out")
    return request.param, inv, result, ws / "out"


def test_every_shipped_case_gets_its_expected_verdicts_path_and_stop(case_run):
    case_dir, _inv, result, _out = case_run
    expected = load_expected(case_dir)
    assert {c.id: c.verdict for c in result.report.claims} == {cid: g.verdict for cid, g in expected.claims.items()}
    assert result.report.stop.kind == expected.stop_reason
    causal = next(c for c in result.report.claims if c.kind == "causal_chain")
    if expected.root_cause is None:
        assert causal.root_cause is None or causal.verdict != "confirmed"
    else:
        rc = causal.root_cause
        assert rc is not None, causal.missing
        assert (rc.entity, rc.change) == (expected.root_cause.entity, expected.root_cause.change)
        if expected.root_cause.kind:
            assert rc.kind == expected.root_cause.kind
        if expected.root_cause.path:
            assert rc.path == expected.root_cause.path
    for claim in result.report.claims:
        gold = expected.claims[claim.id].bridge_path
        if gold and expected.claims[claim.id].verdict in ("confirmed", "inferred"):
            # every stated relation of the gold path is a hop of the reported path (either direction)
            hops = {frozenset((h.source, h.target)) for h in claim.path}
            assert {frozenset((g.from_, g.to)) for g in gold} <= hops, [(h.source, h.target) for h in claim.path]
            if claim.verdict == "confirmed":
                assert all(h.applicable for h in claim.path)


def test_the_verdicts_of_every_shipped_case_never_contradict_each_other(case_run):
    from investigator.evaluate import run_contradictions

    case_dir, inv, result, _out = case_run
    assert run_contradictions(case_dir, inv.store.decisions(result.run_id)) == []


def test_no_shipped_case_leaks_a_canary_or_a_bad_citation(case_run):
    case_dir, inv, result, out = case_run
    manifest = {s.id: s for s in load_manifest(case_dir).sources}
    cited = [e for e in result.report.evidence if e.span is not None]
    assert cited
    for ev in cited:
        doc = load_source(case_dir, manifest[ev.source_id])
        assert doc.version == ev.version and doc.text[ev.span.start:ev.span.end] == ev.span.quote
    blobs = [(out / "report.md").read_text(), (out / "report.json").read_text(), (out / "report.html").read_text(),
             store_text(inv.settings.workspace)]
    assert load_expected(case_dir).canaries
    for canary in load_expected(case_dir).canaries:
        assert not any(canary in b for b in blobs), f"{canary} leaked"


def test_the_causal_claim_follows_the_gold_bridge_path_hop_by_hop(reference_run):
    _inv, result, _out = reference_run
    gold = load_expected(REFERENCE).claims["causal_attribution"].bridge_path
    claim = next(c for c in result.report.claims if c.id == "causal_attribution")
    assert [(h.source, h.target) for h in claim.path] == [(g.from_, g.to) for g in gold]
    evidence = {e.id: e for e in result.report.evidence}
    for hop, g in zip(claim.path, gold):
        assert hop.applicable
        quotes = [evidence[i].span.quote for i in hop.evidence_ids if evidence[i].source_id == g.source]
        assert any(g.quote in q for q in quotes), f"hop {hop.source}->{hop.target} lacks gold span of {g.source}"


def test_the_alert_figure_is_never_confirmation_on_its_own(reference_run):
    _inv, result, _out = reference_run
    symptom = next(c for c in result.report.claims if c.id == "symptom_window")
    evidence = {e.id: e for e in result.report.evidence}
    e12 = evidence["E12"]
    assert e12.trust == "unverified" and e12.span is None
    read_back = [i for i in symptom.supporting if evidence[i].signals]
    assert read_back, "confirmed only with a metric series read back from the metrics source"
    assert evidence[read_back[0]].signals[0].ratio >= 3.0


def test_historical_and_untrusted_sources_are_labelled_where_they_appear(reference_run):
    from investigator.report import EvidenceView
    from investigator.report_md import _ev_line

    _inv, result, _out = reference_run
    for ev in result.report.evidence:
        if ev.source_id.startswith("PM-2025-1107"):
            assert ev.label == "historical"
        if ev.source_id.startswith("wiki-"):
            assert ev.label == "untrusted"
    view = EvidenceView(id="E9", kind="read", source_id="PM-1", source_kind="postmortem", version="v1",
                        span=None, trust="verified", label="historical")
    assert "**[historical]**" in _ev_line(view)


def test_the_report_carries_the_run_facts_an_on_call_engineer_needs(reference_run):
    _inv, result, out = reference_run
    data = json.loads((out / "report.json").read_text())
    assert data["schema"] == "investigator/report@1"
    assert data["budgets"]["rounds_used"] <= data["budgets"]["rounds_limit"]
    assert {"denied", "failed", "not_found"} <= set(data["reads"])
    assert [t["node"] for t in data["timeline"][:5]] == ["plan", "retrieve", "read", "update", "decide"]
    for claim in data["claims"]:
        assert claim["rule"] and claim["verdict"] in ("confirmed", "inferred", "insufficient", "refuted")


def test_a_source_is_opened_and_paid_for_once_a_round_whatever_regions_the_round_reads_in_it(case_run):
    """Two series of one export, two pods of one listing, one section asked about two entities: a
    round opens the source once and pays one read; every region it read is still cited."""
    from state.steps import ReadStep

    _case_dir, inv, result, _out = case_run
    reads = inv.store.reads(result.run_id)
    opened = [(n, r.source_id, r.version) for n, r in reads if r.outcome == "ok"]
    assert len(opened) == len(set(opened))
    assert result.report.budgets["reads_used"] == len(reads)
    regions = {(s.step.round, r.region) for s in inv.store.steps(result.run_id) if isinstance(s.step, ReadStep)
               for r in s.step.reads if r.outcome == "ok"}
    assert len(regions) >= len(opened)
    cited = {(e.source_id, e.version) for e in result.report.evidence if e.kind == "read"}
    assert {(sid, v) for _n, sid, v in opened} <= cited
