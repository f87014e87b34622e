"""The deterministic planner: open claims become concrete gaps; the first useful one is acted on.

A gap names the claim it can change and why. Gaps already executed (same fingerprint) are
not repeated. Text inside sources never reaches the planner except as entity names that
were read in a span, so an instruction in a document cannot change the plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import networkx as nx

from graphs.deciders import Searches, hypothesis_status
from graphs.knowledge import Knowledge
from state.case import Case, CausalChainClaim, ChangeInWindowClaim, CounterEvidenceClaim, MetricShiftClaim
from state.claims import ClaimDecision
from state.evidence import Gap

EXPANDABLE_KINDS = ("service", "component")
DOCUMENT_KINDS = ["runbook", "postmortem", "doc", "note", "config", "catalog", "mapping", "ownership"]
"""Document search covers knowledge and records; logs, metrics and change records are read
through their own time-window tools, where similarity cannot pull in an out-of-window event."""


class Planner(Protocol):
    def next_gap(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, searches: Searches,
                 done: set[str]) -> Gap | None: ...


def _metric_gap(case: Case, claim_id: str, metric: str, why: str) -> Gap:
    s = case.subject
    return Gap(claim_id=claim_id, action="metrics", query=f"{metric} {s}",
               params={"metric": metric, "service": s.service, "environment": s.environment}, reason=why)


def _services_for_changes(case: Case, claim: ChangeInWindowClaim, k: Knowledge) -> list[str]:
    services = [case.subject.service]
    if claim.include_dependencies:
        services += [d for d in (k.dependencies or ()) if d not in services]
    return services


class DeterministicPlanner:
    """Claims in case order; for each, its gaps in a fixed order of how much they can change it."""

    def gaps(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, searches: Searches) -> Iterable[Gap]:
        s, w = case.subject, case.window
        for claim in case.required_claims:
            d = decisions.get(claim.id)
            if d is not None and d.decided:
                continue
            if isinstance(claim, MetricShiftClaim):
                yield _metric_gap(case, claim.id, claim.metric, f"read back {claim.metric} to decide {claim.id}")
            elif isinstance(claim, CounterEvidenceClaim):
                h = case.hypothesis(claim.hypothesis)
                yield _metric_gap(case, claim.id, h.predicts.metric,
                                  f"{h.id} predicts {h.predicts.metric} {h.predicts.direction}; reading it decides {claim.id}")
            elif isinstance(claim, ChangeInWindowClaim):
                if claim.include_dependencies and k.dependencies is None:
                    yield Gap(claim_id=claim.id, action="records", query=f"service catalog entry of {s.service}",
                              params={"kinds": ["catalog"], "service": s.service, "environment": s.environment},
                              reason=f"the services {s.service} depends on decide where a change could be")
                yield Gap(claim_id=claim.id, action="changes", query=f"changes {s} in window",
                          params={"services": _services_for_changes(case, claim, k), "environment": s.environment,
                                  "start": w.change_from.isoformat(), "end": w.end.isoformat(),
                                  "types": list(claim.change_types)},
                          reason=f"release diff in the window for {s} decides {claim.id}")
            elif isinstance(claim, CausalChainClaim):
                yield from self._causal(case, claim, d, k, searches)

    def _causal(self, case: Case, claim: CausalChainClaim, d: ClaimDecision | None, k: Knowledge,
                searches: Searches) -> Iterable[Gap]:
        s, w = case.subject, case.window
        yield Gap(claim_id=claim.id, action="logs", query=f"WARN/ERROR of {s} in window",
                  params={"service": s.service, "environment": s.environment,
                          "start": w.start.isoformat(), "end": w.end.isoformat()},
                  reason=f"errors of {s.service} in the window name the component the first hop goes to")
        # seeded with the subject and what the in-window changes touched: a graph tool walks between them
        around = {s.service, *(k.dependencies or ())}
        changed = sorted(n for n in k.changed_by(around) if k.kinds.get(n) in EXPANDABLE_KINDS)
        yield Gap(claim_id=claim.id, action="documents", query=f"{s.service} {case.alert.text} {case.question}",
                  params={"seeds": [s.service, *changed], "kinds": DOCUMENT_KINDS},
                  reason=f"sources describing how {s.service} behaves under this symptom")
        yield from self._applicability(case, claim, d, k)
        # walk the bridge entities reached so far: changed ones first, then check competitors, then the rest
        frontier: list[str] = []
        if s.service in k.graph:
            order = list(nx.bfs_tree(k.graph, s.service))
            frontier = [n for n in order[1:] if k.kinds.get(n) in EXPANDABLE_KINDS]
        changed = set(k.changed_by({s.service, *frontier}))
        for node in [n for n in frontier if n in changed]:
            yield self._expand(case, claim, node, k)
            if node in k.deployed:
                yield Gap(claim_id=claim.id, action="documents", query=f"{node} {k.deployed[node]} changed defaults",
                          params={"seeds": [node, k.deployed[node]], "kinds": DOCUMENT_KINDS},
                          reason=f"what {node} {k.deployed[node]} changed (the release deployed it)")
        for rec, _eid in k.subject_changes({s.service, *frontier}):
            for cc in rec.config_changes:
                tail = cc.key.rsplit(".", 1)[-1]
                yield Gap(claim_id=claim.id, action="documents", query=f"{rec.service} {tail}",
                          params={"seeds": [rec.service, tail], "kinds": DOCUMENT_KINDS},
                          reason=f"what {tail}, changed by {rec.id} on {rec.service}, does")
        for h_id in claim.competitors:
            h = case.hypothesis(h_id)
            if hypothesis_status(h, k, claim.id, searches).verdict == "insufficient":
                yield _metric_gap(case, claim.id, h.predicts.metric,
                                  f"competing hypothesis {h.id} predicts {h.predicts.metric} {h.predicts.direction}")
        services = [n for n in frontier if k.kinds.get(n) == "service"]
        if services:
            yield Gap(claim_id=claim.id, action="changes", query=f"changes of {', '.join(services)} in window",
                      params={"services": services, "environment": s.environment, "start": w.change_from.isoformat(),
                              "end": w.end.isoformat(), "types": ["deployment", "config_push", "feature_flag", "rollback"]},
                      reason="a change of a service the symptom reaches could be what explains it")
        for node in [n for n in frontier if n not in changed]:
            yield self._expand(case, claim, node, k)

    @staticmethod
    def _applicability(case: Case, claim: CausalChainClaim, d: ClaimDecision | None, k: Knowledge) -> Iterable[Gap]:
        """Gaps that decide whether the documents on the best path so far apply to what is deployed."""
        s, w = case.subject, case.window
        for hop in (d.path if d else ()):
            if hop.status in ("inapplicable", "untrusted"):
                yield Gap(claim_id=claim.id, action="documents", query=f"{hop.source} {hop.target}",
                          params={"seeds": [hop.source, hop.target], "kinds": DOCUMENT_KINDS},
                          reason=f"find a source that applies for {hop.source} → {hop.target} ({hop.note})")
            if hop.status != "unknown":
                continue
            for eid in hop.evidence_ids:
                if k.evidence.get(eid) is not None and k.evidence[eid].meta.get("service") == hop.source:
                    continue  # the hop's own documentation: what it lacks is a statement, not a mapping
                ev = k.evidence.get(eid)
                service = (ev.meta.get("service") if ev else None) or s.service
                if service in ("*", ""):
                    continue
                yield Gap(claim_id=claim.id, action="records",
                          query=f"deployment mapping and owner verification of {service}",
                          params={"kinds": ["mapping", "ownership"], "service": service, "environment": s.environment},
                          reason=f"decides whether {ev.source_id if ev else eid} applies ({hop.note})")
                yield Gap(claim_id=claim.id, action="changes", query=f"deployed version of {service}",
                          params={"services": [service], "environment": s.environment,
                                  "start": (w.start - 30 * w.baseline).isoformat(), "end": w.end.isoformat(),
                                  "types": ["deployment", "rollback"]},
                          reason=f"the deployed version of {service} decides which document version applies")

    @staticmethod
    def _expand(case: Case, claim: CausalChainClaim, node: str, k: Knowledge) -> Gap:
        return Gap(claim_id=claim.id, action="documents", query=node, params={"seeds": [node], "kinds": DOCUMENT_KINDS},
                   reason=f"next hop from bridge entity {node} toward a {'/'.join(claim.end_kinds)}")

    def next_gap(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, searches: Searches,
                 done: set[str]) -> Gap | None:
        for gap in self.gaps(case, decisions, k, searches):
            if gap.fingerprint not in done:
                return gap
        return None
