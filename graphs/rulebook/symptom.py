"""§7 of docs/deciding.md, the `symptom` claim: the subject's signal departs from its baseline.

The signal is the claim's `metric`, else any metric of role latency/errors/saturation/availability,
else its logs, traces or Kubernetes warning events, re-decided with the claim's own direction and
ratio. A candidate observation (trust `unverified`, such as the alert's own figure) never confirms it.
"""

from __future__ import annotations

from graphs.rulebook.anomalies import moved
from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.path import Trace
from state.case import SymptomClaim
from state.claims import ClaimDecision
from state.facts import SignalFact


def candidates(k: Knowledge, claim_id: str) -> tuple[str, ...]:
    return tuple(e.id for e in k.evidence.values() if e.kind == "initial" and claim_id in e.claim_ids)


def _symptom_signals(claim: SymptomClaim, sigs: list[tuple[SignalFact, str]]) -> list[tuple[SignalFact, str]]:
    want = claim.wants
    if claim.metric:
        return [(f, e) for f, e in sigs if f.signal == "metric" and f.name == claim.metric]
    if want == "logs":
        return [(f, e) for f, e in sigs if f.signal == "logs"]
    if want == "traces":
        return [(f, e) for f, e in sigs if f.signal == "traces"]
    metrics = [(f, e) for f, e in sigs if f.signal == "metric" and f.role in ("latency", "errors", "saturation",
                                                                               "availability")]
    if want == "metric":
        return metrics
    for group in (metrics, [(f, e) for f, e in sigs if f.signal == "logs"],
                  [(f, e) for f, e in sigs if f.signal == "traces"], [(f, e) for f, e in sigs if f.signal == "events"]):
        if group:
            return group
    return []


def decide_symptom(claim: SymptomClaim, k: Knowledge, t: Trace | None = None) -> ClaimDecision:
    """The subject's own signal decides it; the path (`t`) is not needed."""
    subject = k.case.subject.service
    what = claim.metric or {"any": "a symptom signal", "metric": "a symptom metric", "logs": "warning/error lines",
                            "traces": "span latency or errors"}[claim.wants]
    rule = (f"symptom: {what} of {k.case.subject} anomalous {claim.direction} against its baseline "
            f"(threshold ×{claim.min_ratio}, sustained)")
    sigs = _symptom_signals(claim, list(k.signals.get(subject, [])))
    cands = candidates(k, claim.id)
    verdicts = [(f, e, moved(f, k, claim.direction, claim.min_ratio)) for f, e in sigs]
    up = [e for f, e, m in verdicts if m]
    if up:
        return ClaimDecision(claim_id=claim.id, state="supported", verdict="confirmed", rule=rule,
                             supporting=tuple(dict.fromkeys(up)) + cands)
    read = [e for f, e, m in verdicts if m is False]
    if read and k.searches.done("telemetry", subject, metric=claim.metric):
        return ClaimDecision(claim_id=claim.id, state="refuted", verdict="refuted", rule=rule,
                             opposing=tuple(dict.fromkeys(read)) + cands)
    missing = k.searches.why_unread(subject, what, claim.metric)
    if any(m is None for _f, _e, m in verdicts):
        missing = f"{what} of {k.case.subject} with a baseline of at least 3 points before the window"
    return ClaimDecision(claim_id=claim.id, state="candidate" if cands else "insufficient", verdict="insufficient",
                         rule=rule, supporting=cands, missing=(missing,))

