"""A report never shows a claim `confirmed` without evidence it cites and shows.

The report is built from the store as the run left it; whatever the deciders recorded (a change
found by diffing two snapshots cites the pair as one id `E3+E4`, evidence revoked on resume drops
out), a reader who sees `confirmed` must find the evidence behind it in the same report.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conftest import REFERENCE
from state import content_hash
from state.case import load_case
from state.claims import ClaimDecision, StopReason
from state.evidence import Evidence, Scope, Span
from state.store import RunRow, Store, make_engine


def _evidence(eid: str, quote: str, status: str = "active") -> Evidence:
    return Evidence(id=eid, source_id=f"src-{eid.lower()}", source_kind="config", version="v1",
                    revision=content_hash(quote), span=Span(start=0, end=len(quote), quote=quote), trust="verified",
                    scope=Scope(environment="prod", service="order-service"), status=status,  # type: ignore[arg-type]
                    status_note="the source changed under it" if status != "active" else "",
                    read_at=datetime(2026, 4, 29, 2, 40, tzinfo=UTC))


READY = StopReason(kind="evidence_ready")


def _report(tmp_path, decisions: list[ClaimDecision], evidence: list[Evidence], stop: StopReason | None = READY):
    from investigator.report import build_report

    case = load_case(REFERENCE)
    store = Store(make_engine(f"sqlite:///{tmp_path / 's.db'}"))
    run = store.create_run(RunRow(run_id="r", case_id=case.id, case_dir=str(REFERENCE), retrieval="basic",
                                  principal_id=case.principal.id, rounds_limit=12, reads_limit=40))
    for ev in evidence:
        store.add_evidence("r", ev.id, ev)
    for d in decisions:
        store.add_decision("r", 1, d)
    store.set_stop("r", stop, "stopped" if stop is not None else "running")
    return build_report(case, store.run(run.run_id), store)


def _confirmed(claim_id: str, supporting: tuple[str, ...]) -> ClaimDecision:
    return ClaimDecision(claim_id=claim_id, state="supported", verdict="confirmed", rule="test rule",
                         supporting=supporting)


def test_a_change_found_by_diffing_two_snapshots_cites_both_snapshots(tmp_path):
    before, after = _evidence("E3", "retry_timeout: 200ms"), _evidence("E4", "retry_timeout: 2000ms")
    r = _report(tmp_path, [_confirmed("deployment_change", ("E3+E4",))], [before, after])
    claim = next(c for c in r.claims if c.id == "deployment_change")
    assert claim.verdict == "confirmed"
    assert claim.supporting == ("E3", "E4")
    assert {"E3", "E4"} <= {e.id for e in r.evidence}


def test_a_claim_whose_evidence_is_gone_is_not_shown_confirmed(tmp_path):
    revoked = _evidence("E9", "p95_latency_ms 2100", status="revoked")
    r = _report(tmp_path, [_confirmed("symptom_window", ("E9",)), _confirmed("causal_attribution", ())], [revoked])
    for cid in ("symptom_window", "causal_attribution"):
        claim = next(c for c in r.claims if c.id == cid)
        assert claim.verdict == "insufficient", claim
        assert claim.supporting == ()
        assert claim.missing and "no evidence" in claim.missing[0]


def test_no_rendering_shows_a_confirmed_claim_without_evidence(tmp_path):
    from investigator.report_md import render_markdown
    from investigator.report_html import render_html

    r = _report(tmp_path, [_confirmed("causal_attribution", ())], [])
    for c in r.claims:
        assert not (c.verdict == "confirmed" and not c.supporting), c
    html, md = render_html(r), render_markdown(r)
    assert "class='v-confirmed'" not in html and "<strong>insufficient</strong>" in html
    assert "**confirmed**" not in md and "**insufficient**" in md


@pytest.mark.parametrize("stop", [StopReason(kind="budget_exhausted"), StopReason(kind="awaiting_permission"), None],
                         ids=["budget_exhausted", "awaiting_permission", "not_stopped"])
def test_a_root_cause_is_shown_confirmed_only_when_the_run_stopped_evidence_ready(tmp_path, stop):
    """The stored decision is the deciders' (confirmed, in its history too), as every version stored it;
    shown under a stop other than evidence_ready, or before any, the causal claim is inferred and says why."""
    from graphs.ready import NOT_READY

    cited = _evidence("E3", "p95_latency_ms 2100")
    decisions = [_confirmed("causal_attribution", ("E3",)), _confirmed("symptom_window", ("E3",))]
    shown = {c.id: c for c in _report(tmp_path, decisions, [cited], stop=stop).claims}
    causal = shown["causal_attribution"]
    assert (causal.verdict, causal.state, causal.note, causal.history) == ("inferred", "supported", NOT_READY,
                                                                            ("r1: confirmed",))
    assert causal.supporting == ("E3",)
    assert (shown["symptom_window"].verdict, shown["symptom_window"].note) == ("confirmed", "")


def test_at_evidence_ready_the_root_cause_is_shown_as_decided(tmp_path):
    cited = _evidence("E3", "p95_latency_ms 2100")
    causal = next(c for c in _report(tmp_path, [_confirmed("causal_attribution", ("E3",))], [cited]).claims
                  if c.id == "causal_attribution")
    assert (causal.verdict, causal.note) == ("confirmed", "")
