"""§7 of docs/deciding.md, the `counter_evidence` claim: is a competing hypothesis observed.

A hypothesis that predicts a metric is confirmed when that metric on its entity is anomalous in the
predicted direction, refuted when it was read and did not move (or, on another entity than the
subject, moved by less than `explain_fraction` of the subject's rise in a comparable unit). A
hypothesis that blames a change is decided as people decide it (`hypotheses.change_hypothesis`).
"""

from __future__ import annotations

from graphs.rulebook.anomalies import entity_state
from graphs.rulebook.hypotheses import change_hypothesis, observed, predicted_series
from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.path import Trace, comparable
from graphs.rulebook.root import trace
from state.case import CounterEvidenceClaim, Hypothesis
from state.claims import ClaimDecision
from state.facts import SignalFact


def hypothesis_status(h: Hypothesis, k: Knowledge, claim_id: str, t: Trace | None = None) -> ClaimDecision:
    blame = k.blames.get(h.id)
    if blame is not None:
        t = t or trace(k, k.case.subject.service, 6)
        v = change_hypothesis(h, blame, k, t)
        proposed = tuple(sorted(e.id for e in k.evidence.values() if e.span is not None and any(
            phrase.lower() in e.span.quote.lower() for phrase in h.mentioned_by)))
        rule = f"counter_evidence: {h.id} blames {blame.change or 'a change'} of {blame.entity}: {v.why}"
        state = {"confirmed": "supported", "refuted": "refuted", "insufficient": "insufficient"}[v.verdict]
        return ClaimDecision(claim_id=claim_id, state=state, verdict=v.verdict, rule=rule,  # type: ignore[arg-type]
                             supporting=v.supporting, opposing=v.opposing, missing=v.missing, proposed_by=proposed)
    p = h.predicts
    assert p is not None
    entity = p.entity or k.case.subject.service
    rule = f"counter_evidence: {h.id} predicts {p.metric} of {entity} {p.direction} (×{p.min_ratio})"
    sigs = predicted_series(p, k)
    held, flat = observed(p, k)
    proposed = tuple(sorted(e.id for e in k.evidence.values() if e.span is not None and any(
        phrase.lower() in e.span.quote.lower() for phrase in h.mentioned_by)))
    small = _too_small_to_explain(k, entity, [f for f, _e in sigs])
    if held and small:
        # it moved, but by far less than the symptom in the same unit: it cannot be what explains it
        return ClaimDecision(claim_id=claim_id, state="refuted", verdict="refuted",
                             rule=rule + f": observed, but {small}", opposing=tuple(held), proposed_by=proposed)
    late = _too_late_to_explain(k, [f for f, e in sigs if e in held]) if held else ""
    if late:
        # it moved, but only after the symptom had begun: an effect or a coincidence, not the explanation
        return ClaimDecision(claim_id=claim_id, state="refuted", verdict="refuted",
                             rule=rule + f": observed, but {late}", opposing=tuple(held), proposed_by=proposed)
    if held:
        return ClaimDecision(claim_id=claim_id, state="supported", verdict="confirmed", rule=rule,
                             supporting=tuple(held), proposed_by=proposed)
    if flat:
        return ClaimDecision(claim_id=claim_id, state="refuted", verdict="refuted", rule=rule + ": the prediction is not observed",
                             opposing=tuple(flat), proposed_by=proposed)
    return ClaimDecision(claim_id=claim_id, state="insufficient", verdict="insufficient", rule=rule,
                         missing=(k.searches.why_unread(entity, p.metric, p.metric),), proposed_by=proposed)


def _too_small_to_explain(k: Knowledge, entity: str, sigs: list[SignalFact]) -> str:
    """Why a competitor's predicted rise on another entity cannot explain the subject's symptom: in a
    comparable unit it is less than `explain_fraction` of the symptom's rise (§4: a 0 → 5 ms series
    does not explain a 2 s slowdown). Empty when it could, or when the units do not compare."""
    subject = k.case.subject.service
    if entity == subject:
        return ""
    frac = k.profile.anomaly.explain_fraction
    upper = [f for f, _e in entity_state(k, subject).anomalies if isinstance(f, SignalFact) and f.delta is not None]
    why = ""
    for lf in sigs:
        nl = comparable(lf)
        if nl is None or lf.delta is None:
            continue
        for uf in upper:
            nu = comparable(uf)
            if nu is None or nu[0] != nl[0] or uf.delta is None:
                continue
            if abs(lf.delta) * nl[1] >= frac * abs(uf.delta) * nu[1]:
                return ""  # one comparable rise large enough: it could explain the symptom
            why = why or (f"{entity}'s {lf.name} rose by {lf.delta:g} {lf.unit}, less than {int(frac * 100)} % of "
                          f"{subject}'s {uf.name} rise ({uf.delta:g} {uf.unit})")
    return why


def _too_late_to_explain(k: Knowledge, moved: list[SignalFact]) -> str:
    """Why a competitor's predicted series cannot explain the symptom by its timing: every series that
    moved as predicted began after the subject's own anomaly, beyond `onset_tolerance` (§7: what starts
    after the symptom began cannot be what started it). Empty when one began in time, or when an onset
    is unknown."""
    start = entity_state(k, k.case.subject.service).onset
    onsets = [f.onset for f in moved]
    if start is None or not onsets or any(o is None for o in onsets):
        return ""
    tol = k.case.window.onset_tolerance
    first = min(o for o in onsets if o is not None)
    if first <= start + tol:
        return ""
    tz = k.case.window.start.tzinfo
    return (f"only from {first.astimezone(tz):%H:%M}, after {k.case.subject.service}'s anomaly began at "
            f"{start.astimezone(tz):%H:%M}")


def decide_counter_evidence(claim: CounterEvidenceClaim, k: Knowledge, t: Trace | None = None) -> ClaimDecision:
    return hypothesis_status(k.case.hypothesis(claim.hypothesis), k, claim.id, t)


def what_shows(k: Knowledge, h_id: str) -> str:
    h = k.case.hypothesis(h_id)
    b = k.blames.get(h_id)
    if b is not None:
        return f"the change of {b.entity} it blames"
    return h.predicts.metric if h.predicts else h.statement

