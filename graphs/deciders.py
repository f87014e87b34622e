"""Deterministic claim deciders: one rule per claim kind, driven by the case file.

Each returns a `ClaimDecision` naming the rule, the evidence ids used and, when the claim
cannot be decided, the observation that is missing. A candidate observation (trust
`unverified`, such as the alert's own figure) never confirms a claim on its own.
"""

from __future__ import annotations

from collections.abc import Iterable

import re
from fnmatch import fnmatch

import networkx as nx

from graphs.knowledge import FIRST_HOP_KINDS, Knowledge
from state.sources import PROSE_KINDS
from state.case import (
    Case, CausalChainClaim, ChangeInWindowClaim, Claim, CounterEvidenceClaim, Hypothesis, MetricShiftClaim,
)
from state.claims import ClaimDecision, Hop
from state.evidence import Evidence


class Searches:
    """What the run has looked up so far (from the retrieve steps): for 'searched, found nothing'."""

    def __init__(self, steps: Iterable[dict]) -> None:
        steps = list(steps)
        reads = {s["round"]: s for s in steps if s.get("node") == "read"}
        self.done: list[dict] = []
        for s in steps:
            if s.get("node") == "retrieve" and s.get("gap"):
                read = reads.get(s["round"], {})
                self.done.append({**s, "denied": [*s.get("denied", []), *read.get("denied", [])],
                                  "failed": read.get("failed", [])})

    def for_claim(self, claim_id: str, action: str) -> list[dict]:
        return [s for s in self.done if s["gap"]["claim_id"] == claim_id and s["gap"]["action"] == action]


def _moved(ratio: float, direction: str, min_ratio: float) -> bool:
    return ratio >= min_ratio if direction == "up" else (ratio > 0 and 1 / ratio >= min_ratio)


def _metric_evidence(k: Knowledge, metric: str) -> list[Evidence]:
    s = k.case.subject
    return [e for e in k.evidence.values() if e.kind == "metric" and e.metric is not None
            and e.metric.metric == metric and e.scope.service == s.service and e.scope.environment == s.environment]


def _series_rule(k: Knowledge, claim_id: str, metric: str, direction: str, min_ratio: float,
                 searches: Searches, rule_name: str) -> ClaimDecision:
    evs = _metric_evidence(k, metric)
    candidates = tuple(e.id for e in k.evidence.values() if e.kind == "initial" and claim_id in e.claim_ids)
    rule = f"{rule_name}: window peak / baseline median of {metric} {'≥' if direction == 'up' else '≤ 1/'}{min_ratio}"
    if not evs:
        blocked = [d for s in searches.for_claim(claim_id, "metrics") for d in s.get("denied", [])]
        failed = [f for s in searches.for_claim(claim_id, "metrics") for f in s.get("failed", [])]
        why = f"{metric} for {k.case.subject} read back from a metrics source"
        if blocked:
            why += f" (denied: {', '.join(sorted(set(blocked)))})"
        if failed:
            why += f" (failed: {', '.join(sorted(set(failed)))})"
        return ClaimDecision(claim_id=claim_id, state="candidate" if candidates else "insufficient",
                             verdict="insufficient", rule=rule, supporting=candidates, missing=(why,))
    moved = [e for e in evs if _moved(e.metric.ratio, direction, min_ratio)]
    if moved:
        return ClaimDecision(claim_id=claim_id, state="supported", verdict="confirmed", rule=rule,
                             supporting=tuple(e.id for e in moved) + candidates)
    return ClaimDecision(claim_id=claim_id, state="refuted", verdict="refuted", rule=rule,
                         opposing=tuple(e.id for e in evs) + candidates)


def decide_metric_shift(claim: MetricShiftClaim, k: Knowledge, searches: Searches) -> ClaimDecision:
    return _series_rule(k, claim.id, claim.metric, claim.direction, claim.min_ratio, searches, "metric_shift")


def hypothesis_status(h: Hypothesis, k: Knowledge, claim_id: str, searches: Searches) -> ClaimDecision:
    p = h.predicts
    d = _series_rule(k, claim_id, p.metric, p.direction, p.min_ratio, searches,
                     f"counter_evidence ({h.id} predicts {p.metric} {p.direction})")
    proposed = tuple(sorted(e.id for e in k.evidence.values() if e.span is not None and any(
        phrase.lower() in e.span.quote.lower() for phrase in h.mentioned_by)))
    return d.model_copy(update={"proposed_by": proposed})


def decide_counter_evidence(claim: CounterEvidenceClaim, k: Knowledge, searches: Searches) -> ClaimDecision:
    return hypothesis_status(k.case.hypothesis(claim.hypothesis), k, claim.id, searches)


def decide_change(claim: ChangeInWindowClaim, k: Knowledge, searches: Searches) -> ClaimDecision:
    rule = "change_in_window: a change record of the subject read back inside the window (minus lookback)"
    services = {k.case.subject.service}
    if claim.include_dependencies:
        rule += " or of a service it depends on (from the service catalog)"
        services |= set(k.dependencies or ())
    found = [eid for rec, eid in k.subject_changes(services) if rec.type in claim.change_types]
    if found:
        return ClaimDecision(claim_id=claim.id, state="supported", verdict="confirmed", rule=rule,
                             supporting=tuple(found))
    looked = [s for s in searches.for_claim(claim.id, "changes") if services <= set(s["gap"]["params"]["services"])]
    denied = sorted({d for s in looked for d in s.get("denied", [])})
    failed = sorted({f for s in looked for f in s.get("failed", [])})
    known = not claim.include_dependencies or k.dependencies is not None
    if known and looked and not denied and not failed and all(not s.get("hits") for s in looked):
        return ClaimDecision(claim_id=claim.id, state="refuted", verdict="refuted",
                             rule=rule + "; every readable change source searched, none in the window")
    missing = f"change records for {k.case.subject} between {k.case.window.change_from.isoformat()} and {k.case.window.end.isoformat()}"
    if denied:
        missing += f" (denied: {', '.join(denied)})"
    if failed:
        missing += f" (failed: {', '.join(failed)})"
    return ClaimDecision(claim_id=claim.id, state="insufficient", verdict="insufficient", rule=rule, missing=(missing,))


def _edge_status(k: Knowledge, claim: CausalChainClaim, a: str, b: str, first: bool,
                 last: bool = False) -> tuple[str, list[str], str]:
    """Best applicability of an edge: (status, evidence ids with that status, note).

    The first hop must be read where the symptom is observed or explained (logs, documents);
    the last hop, into the explanation, in a document that explains behaviour."""
    order = {"applicable": 0, "unknown": 1, "inapplicable": 2, "untrusted": 3}
    ids = [e for e in k.graph[a][b]["evidence"]
           if (not first or k.evidence[e].source_kind in FIRST_HOP_KINDS)
           and (not last or k.evidence[e].source_kind in PROSE_KINDS)]
    if not ids:
        where = "an observation of the symptom" if first else "a document that explains it"
        return "inapplicable", [], f"{a} → {b} is not read in {where}"
    judged = [(k.applicability(k.evidence[e], claim), e) for e in ids]
    best = min(order[s] for (s, _n), _e in judged)
    status = [s for s, v in order.items() if v == best][0]
    ids = [e for (s, _n), e in judged if s == status]
    notes = sorted({n for (s, n), _e in judged if s == status})
    return status, ids, "; ".join(notes)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*[|#*-])")
CHANGE_WORDS = re.compile(r"\b(changed|changes|increased|decreased|raised|lowered|new default|now defaults?|renamed|removed)\b", re.I)


def change_statement(text: str, key: str, version: str) -> str | None:
    """The first sentence that names `key` together with the deployed version or a change verb."""
    for sent in _SENTENCE_END.split(text):
        if re.search(rf"(?<![A-Za-z0-9_-]){re.escape(key)}(?![A-Za-z0-9_-])", sent) and (
                version in sent and CHANGE_WORDS.search(sent)):
            return " ".join(sent.split())
    return None


def _version_specific(k: Knowledge, claim: CausalChainClaim, comp: str, end: str,
                      edge: tuple[str, list[str], str]) -> tuple[str, list[str], str]:
    """A changed component explains the symptom through what its *new* version changed: the
    last hop must be read in documentation written for the deployed version, in a sentence
    that states the change of the end entity (names it with the version and a change verb)."""
    version = k.deployed.get(comp)
    ids = [e for e in k.graph[comp][end]["evidence"]
           if k.evidence[e].meta.get("service") == comp and version is not None
           and any(fnmatch(version, p) for p in k.evidence[e].meta.get("applies_to_versions") or ())
           and k.applicability(k.evidence[e], claim)[0] == "applicable"]
    stated = [(e, st) for e in ids if (st := change_statement(k.evidence[e].span.quote, end, version.rsplit(".", 1)[0]))]
    if stated:
        return "applicable", [e for e, _ in stated], f"{comp} {version} documentation: \"{stated[0][1]}\""
    if ids:
        return "unknown", ids, f"no sentence read that states what {comp} {version} changed about {end}"
    status, ids_, _note = edge
    if status == "applicable":
        return "inapplicable", ids_, f"{comp} → {end} is not read in documentation of the deployed {comp} {version or '?'}"
    return edge


def path_change_ids(k: Knowledge, services: set[str]) -> set[str]:
    return {eid for _rec, eid in k.subject_changes(services)}


def decide_causal(claim: CausalChainClaim, k: Knowledge, searches: Searches) -> ClaimDecision:
    rule = (f"causal_chain: bridge path {k.case.subject.service} → … → {'/'.join(claim.end_kinds)}"
            f"{' through an in-window change' if claim.through_change else ''}, every hop from an applicable source, "
            f"competitors refuted")
    start = k.case.subject.service
    changed_map = k.changed_by({start} | {n for n in k.graph.nodes if k.kinds.get(n) == "service"})
    changed = set(changed_map)
    g = k.graph
    ends = [n for n in g.nodes if k.kinds.get(n) in claim.end_kinds and n != start]
    candidates: list[tuple[int, int, int, list[str], list[tuple[str, list[str], str]]]] = []
    if start in g:
        for end in sorted(ends):
            for path in nx.all_simple_paths(g, start, end, cutoff=claim.max_hops):
                # the change explains the symptom only if the end is the changed thing or hangs off it
                if claim.through_change and not (path[-1] in changed or path[-2] in changed):
                    continue
                edges = [_edge_status(k, claim, a, b, i == 0, i == len(path) - 2)
                         for i, (a, b) in enumerate(zip(path, path[1:]))]
                if claim.through_change and path[-1] not in changed:
                    edges[-1] = _version_specific(k, claim, path[-2], path[-1], edges[-1])
                worst = max({"applicable": 0, "unknown": 1, "inapplicable": 2, "untrusted": 3}[s] for s, _i, _n in edges)
                # how much read evidence names the explanation at all: the best-corroborated end wins
                support = len({e for n in g.neighbors(path[-1]) for e in g[n][path[-1]]["evidence"]})
                # only changes of the subject or of a service on the path explain this path
                on_path = {start} | {n for n in path if k.kinds.get(n) == "service"}
                if claim.through_change and not any(set(changed_map.get(n, ())) & path_change_ids(k, on_path)
                                                    for n in path[-2:]):
                    continue
                candidates.append((worst, -support, len(path), path, edges))
    competitors = {h: hypothesis_status(k.case.hypothesis(h), k, claim.id, searches) for h in claim.competitors}
    open_comp = [h for h, d in competitors.items() if d.verdict == "insufficient"]
    held = [h for h, d in competitors.items() if d.verdict == "confirmed"]
    refuting = tuple(e for d in competitors.values() if d.verdict == "refuted" for e in d.opposing
                     if k.evidence[e].kind != "initial")
    proposed = tuple(sorted({e for d in competitors.values() for e in d.proposed_by}))
    if not candidates:
        reached = sorted(nx.node_connected_component(g, start) - {start}) if start in g else []
        frontier = ", ".join(reached[:6]) or start
        need = f"a hop from {frontier} to a {'/'.join(claim.end_kinds)}"
        if claim.through_change:
            need += " through an entity changed in the window" + (f" ({', '.join(sorted(changed))})" if changed else
                                                                   " (no in-window change read yet)")
        return ClaimDecision(claim_id=claim.id, state="insufficient", verdict="insufficient", rule=rule,
                             missing=(need,), proposed_by=proposed)
    worst, _support, _n, path, edges = min(candidates, key=lambda c: (c[0], c[1], c[2], c[3]))
    on_path = {start} | {n for n in path if k.kinds.get(n) == "service"}
    change_ids = tuple(sorted(path_change_ids(k, on_path)))
    hops = tuple(Hop(source=a, target=b, evidence_ids=tuple(ids), status=s, note=note)
                 for (a, b), (s, ids, note) in zip(zip(path, path[1:]), edges))
    supporting = tuple(dict.fromkeys([e for h in hops for e in h.evidence_ids] + list(change_ids) + list(refuting)))
    missing = tuple(f"{h.source} → {h.target}: {h.note}" for h in hops if not h.applicable)
    missing += tuple(f"check competing hypothesis {h} ({k.case.hypothesis(h).predicts.metric})" for h in open_comp)
    conflicts = tuple(f"competing hypothesis {h} holds: {k.case.hypothesis(h).statement}" for h in held)
    base = dict(claim_id=claim.id, rule=rule, path=hops, supporting=supporting, proposed_by=proposed,
                opposing=tuple(e for h in held for e in competitors[h].supporting))
    if worst == 0 and not open_comp and not held:
        return ClaimDecision(state="supported", verdict="confirmed", **base)
    if held:
        return ClaimDecision(state="conflicted", verdict="inferred", conflicts=conflicts, missing=missing, **base)
    return ClaimDecision(state="candidate", verdict="inferred", missing=missing, **base)


def decide(claim: Claim, k: Knowledge, searches: Searches) -> ClaimDecision:
    if isinstance(claim, MetricShiftClaim):
        return decide_metric_shift(claim, k, searches)
    if isinstance(claim, ChangeInWindowClaim):
        return decide_change(claim, k, searches)
    if isinstance(claim, CounterEvidenceClaim):
        return decide_counter_evidence(claim, k, searches)
    return decide_causal(claim, k, searches)


def decide_all(case: Case, k: Knowledge, searches: Searches) -> dict[str, ClaimDecision]:
    return {c.id: decide(c, k, searches) for c in case.required_claims}
