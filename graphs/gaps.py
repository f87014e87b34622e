"""The gaps of an investigation: what each open claim still needs, in the order it is worth acting on.

Gaps follow the causal rules' own needs (the `Trace`'s pending lookups): the subject's symptom,
what it depends on, the telemetry of those dependencies (deeper while the anomaly continues),
then at the root its changes, placement and consumers, the competing hypotheses, and documents
for a changed component. Enumerating them is not a choice: every planner chooses among them,
and `settle` asks them whether anything readable is left that could change a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.applicability import applicability
from graphs.rulebook.cause import cause_at
from graphs.rulebook.hypotheses import telling_prediction
from graphs.rulebook.path import Trace
from graphs.rulebook.root import change_candidates, fronting
from state.case import Case, CausalChainClaim, ChangeInWindowClaim, CounterEvidenceClaim, Hypothesis, SymptomClaim
from state.claims import ClaimDecision
from state.evidence import (
    ChangesAction, DocumentsAction, Gap, PlacementAction, RecordsAction, RelationsAction, TelemetryAction,
)

DOCUMENT_KINDS = ("runbook", "postmortem", "doc", "note", "config", "catalog", "mapping", "ownership")
"""Document search covers knowledge and records; telemetry and change records are read through
their own structured lookups, where similarity cannot pull in an out-of-window event."""


def change_range(case: Case) -> tuple[datetime, datetime]:
    """One range for every change lookup: from the earliest onset a lookback can reach to the window end."""
    w = case.window
    return w.search_from - w.change_lookback, w.end


def _explained_by_a_change(k: Knowledge, t: Trace) -> bool:
    """A change explains the root (its own, or one on the way to it): no configured limit is needed."""
    found = cause_at(k, t).cause
    return found is not None and found.change is not None



def open_gaps(case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, t: Trace, *,
              complete: bool = True) -> Iterable[Gap]:
    """Every gap in the order it is worth acting on; `complete=False` leaves out those that only
    complete the picture (they can change no verdict)."""
    s, env = case.subject.service, case.subject.environment
    lo, hi = change_range(case)
    # a claim waiting for access to a source that decides it: nothing readable can move it
    open_claims = [c for c in case.required_claims if not (decisions.get(c.id) and (
        decisions[c.id].decided or decisions[c.id].blocked_by))]
    for claim in open_claims:
        if isinstance(claim, SymptomClaim):
            signals = {"metric": ("metric",), "logs": ("logs",), "traces": ("traces",)}.get(claim.wants, ())
            yield Gap(claim_id=claim.id, act=TelemetryAction(entities=(s,), environment=env, metric=claim.metric,
                                                             signals=signals),
                      reason=f"read back {claim.metric or 'the symptom'} of {case.subject} to decide {claim.id}")
    causal = [c for c in open_claims if isinstance(c, CausalChainClaim)]
    for claim in open_claims:
        if isinstance(claim, CounterEvidenceClaim):
            yield from _hypothesis(case, claim.id, case.hypothesis(claim.hypothesis), k)
        elif isinstance(claim, ChangeInWindowClaim):
            ents = (s,) + (tuple(e for e in t.path() if e != s) if claim.on_path and t.root else ())
            yield Gap(claim_id=claim.id, act=ChangesAction(entities=ents, environment=env, start=lo, end=hi),
                      reason=f"changes of {', '.join(ents)} in the window decide {claim.id}")
    for claim in causal:
        yield from _trace(case, claim, k, t)
    for claim in causal:
        yield from _after_root(case, claim, k, t, decisions.get(claim.id))
    if complete:
        for claim in causal:
            yield from _complete(case, claim, t)


def _hypothesis(case: Case, claim_id: str, h: Hypothesis, k: Knowledge) -> Iterable[Gap]:
    """What decides a hypothesis: the metric it predicts, or the changes (and lines) of what it blames."""
    env, s = case.subject.environment, case.subject.service
    lo, hi = change_range(case)
    b = k.blames.get(h.id)
    if b is not None:
        yield Gap(claim_id=claim_id, act=ChangesAction(entities=(b.entity,), environment=env, start=lo, end=hi),
                  reason=f"{h.id} blames a change of {b.entity}: its change records decide whether there was one")
        if not k.searches.done_full(b.entity):
            yield Gap(claim_id=claim_id, act=TelemetryAction(entities=(b.entity,), environment=env,
                                                             signals=("logs", "traces", "events")),
                      reason=f"{h.id}: whether instances of {b.entity} on the version before the change fail too")
        p = telling_prediction(h, case)
        if p is not None:
            ent = p.entity or s
            yield Gap(claim_id=claim_id, act=TelemetryAction(entities=(ent,), environment=env, metric=p.metric),
                      reason=f"{h.id} says how the change did it: {p.metric} of {ent} {p.direction}")
        return
    assert h.predicts is not None
    ent = h.predicts.entity or s
    yield Gap(claim_id=claim_id, act=TelemetryAction(entities=(ent,), environment=env, metric=h.predicts.metric),
              reason=f"{h.id} predicts {h.predicts.metric} of {ent} {h.predicts.direction}; reading it decides {claim_id}")


def _trace(case: Case, claim: CausalChainClaim, k: Knowledge, t: Trace) -> Iterable[Gap]:
    """The path first: the subject's own lines, then what the anomaly's lines name, then the
    relations and other dependencies of an entity nothing named explains; then the root."""
    env = case.subject.environment
    lo, hi = change_range(case)
    s = case.subject.service
    if any(a == "telemetry" and e == s for a, e, _w in t.pending):
        # the subject's own lines name where its errors go: read them before its dependencies
        yield Gap(claim_id=claim.id, act=TelemetryAction(entities=(s,), environment=env,
                                                         signals=("logs", "traces", "events")),
                  reason=f"the lines, spans and events of {s}: they name where its errors come from")
    tel = [e for a, e, _w in t.pending if a == "telemetry" and e != s]
    named = [e for e in tel if e in t.named]
    for e in named:
        # one entity a round: what its callers' errors name is the next hop, read it whole
        yield Gap(claim_id=claim.id, act=TelemetryAction(entities=(e,), environment=env),
                  reason=f"{e}: named by the anomalous lines of its caller; whether it shows an anomaly "
                         f"no later than its caller, and where its own errors point")
    rel = [e for a, e, _w in t.pending if a == "relations"]
    if rel:
        # the subject's other dependencies ride along: a second anomalous one would be a rival root
        ride = [e for a, e, _w in t.later if a == "relations" and e == s and e not in rel]
        yield Gap(claim_id=claim.id, act=RelationsAction(entities=tuple(rel + ride), environment=env),
                  reason=f"what {', '.join(rel)} depend on (stated relations) is where the anomaly can be followed"
                         + (f"; and what else {s} depends on (a rival branch)" if ride else ""))
    rest = [e for e in tel if e not in t.named]
    if rest:
        # the dependencies left aside ride along: each is read before a cause is confirmed anyway
        aside = [e for e, _why in t.unread_dependencies() if e not in rest]
        yield Gap(claim_id=claim.id, act=TelemetryAction(entities=tuple(rest + aside), environment=env),
                  reason=f"whether {', '.join(rest)} show an anomaly no later than the entity that depends on them"
                         + (f"; and {', '.join(aside)}, which no error line names (a rival branch)" if aside else ""))
    cons = [e for a, e, _w in t.pending if a == "consumers"]
    if cons:
        yield Gap(claim_id=claim.id, act=RelationsAction(entities=tuple(cons), environment=env, direction="consumers"),
                  reason=f"what else uses {', '.join(cons)}: a noisy neighbour would have loaded it first")
    root = t.root
    if root is not None and not t.pending:
        if not k.searches.done("changes", root):
            yield Gap(claim_id=claim.id, act=ChangesAction(entities=(root,), environment=env, start=lo, end=hi),
                      reason=f"a change of {root} (the deepest anomalous entity) shortly before its onset")
        if k.kind(root) not in ("component", "node", "host", "domain", "external") and not k.searches.looked(
                "placement", root) and not t.nodes[root].sideways and t.nodes[root].state.how != "callers":
            yield Gap(claim_id=claim.id, act=PlacementAction(entity=root, environment=env),
                      reason=f"where {root} runs, and what else runs there")
        way = [x for x in fronting(k, t) if not k.searches.done("changes", x)]
        if way:
            yield Gap(claim_id=claim.id, act=ChangesAction(entities=tuple(way), environment=env, start=lo, end=hi),
                      reason=f"changes of {', '.join(way)}, on the way to {root} (only its callers see it fail)")
        if (k.searches.done("changes", root) and not change_candidates(k, root, t.nodes[root].state.onset)
                and not k.searches.looked("records", root) and not _explained_by_a_change(k, t)):
            yield Gap(claim_id=claim.id, act=RecordsAction(kinds=("config",), entity=root, environment=env),
                      reason=f"what {root} is configured with: a limit its load may have reached")
        tel = [e for e, _why in t.unread_dependencies()]
        if tel:
            yield Gap(claim_id=claim.id, act=TelemetryAction(entities=tuple(tel), environment=env),
                      reason=f"whether {', '.join(tel)}, which no error line names, show an anomaly too "
                             f"(a rival branch would leave the root in doubt)")


def _complete(case: Case, claim: CausalChainClaim, t: Trace) -> Iterable[Gap]:
    """What only completes the picture around hops the anomaly already points along: what else
    their entities depend on."""
    env = case.subject.environment
    rel = [e for a, e, _w in t.later if a == "relations"]
    if rel:
        yield Gap(claim_id=claim.id, act=RelationsAction(entities=tuple(rel), environment=env),
                  reason=f"what else {', '.join(rel)} depend on (their errors already point along the path)")


def _after_root(case: Case, claim: CausalChainClaim, k: Knowledge, t: Trace,
                d: ClaimDecision | None) -> Iterable[Gap]:
    env = case.subject.environment
    s = case.subject.service
    for h_id in claim.competitors:
        yield from _hypothesis(case, claim.id, case.hypothesis(h_id), k)
    if t.root is not None and not t.pending:
        cause = cause_at(k, t).cause
        if cause is not None and cause.change is not None and cause.element:
            ch = cause.change.change
            dep = next((x for x in ch.dependency_changes if x.name == cause.element), None)
            if dep is not None:
                yield Gap(claim_id=claim.id,
                          act=DocumentsAction(query=f"{dep.name} {dep.to} changed default behaviour",
                                              seeds=(dep.name, dep.to), kinds=("doc", "runbook", "note")),
                          reason=f"what {dep.name} {dep.to}, deployed by {ch.id}, changed")
            if cause.contested:
                yield Gap(claim_id=claim.id, act=TelemetryAction(entities=(cause.entity,), environment=env,
                                                                 signals=("metric",)),
                          reason=f"the series of {cause.entity}: one named after a key the documents disagree on "
                                 f"({', '.join(key for key, _e in cause.contested)}) shows which changed")
    yield Gap(claim_id=claim.id, act=DocumentsAction(query=f"{s} {case.alert.text} {case.question}", seeds=(s,),
                                                     kinds=DOCUMENT_KINDS),
              reason=f"sources describing how {s} behaves under this symptom (runbooks, hypotheses)")
    for hop in (d.path if d else ()):
        if hop.status != "unknown":
            continue
        for eid in hop.evidence_ids:
            doc = k.documents.get(eid)
            if doc is None or doc.service in ("*", ""):
                continue
            status, _note = applicability(k, eid, requires_owner=claim.requires_owner_verification)
            if status == "unknown":
                yield Gap(claim_id=claim.id, act=RecordsAction(kinds=("mapping", "ownership", "config"),
                                                               entity=doc.service, environment=env),
                          reason=f"whether {k.evidence[eid].source_id} applies to what is deployed")
