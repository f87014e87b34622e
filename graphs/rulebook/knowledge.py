"""What the evidence read so far establishes, indexed for the rules: entities and their kinds (§1),
stated relations (§2), signals, mentions, changes, documents.

Built from the facts of active (not revoked, not stale) evidence only, so a revocation on
resume removes everything that depended on it. Facts of another environment than the
subject's are dropped here: the same name in staging is another entity (`production` and `prod`,
as exports write them, are one environment).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from graphs.rulebook.changes import Ref, date_rollouts, deployed_from_changes, diff_snapshots
from graphs.rulebook.searches import Searches
from state.case import Blame, Case
from state.evidence import Evidence
from state.facts import (
    ChangeFact, DeployedFact, DocMappingFact, DocumentFact, EntityFact, InjectionFact, MentionFact, PlacementFact,
    RelationFact, RolloutDateFact, SignalFact, SnapshotFact, StatementFact, VerificationFact, VersionSeenFact,
)
from state.profile import Profile
from state.steps import Logged
from tools.formats.records import same_environment
from tools.signals import Range, series_verdict


Refs = tuple[Ref, ...]


class _Views:
    """What a rule asks of the facts indexed (shared by `Knowledge` and the draft it is built from)."""

    case: Case
    env: str
    deps: Mapping[str, Sequence[Ref]]
    consumers: Mapping[str, Sequence[Ref]]
    changes: Sequence[Ref]
    kinds: Mapping[str, str]

    def hosts_of_one_service(self) -> dict[str, str]:
        """Hosts that, by the relations read, run exactly one entity — `{host: service}`."""
        runs: dict[str, set[str]] = defaultdict(set)
        for source, rels in self.deps.items():
            for rel, _eid in rels:
                if rel.relation == "runs_on" and self.kind(rel.target) in HOST_KINDS:
                    runs[rel.target].add(source)
        return {h: next(iter(s)) for h, s in runs.items() if len(s) == 1}

    def clock(self, when: datetime | None, fmt: str = "%H:%M:%S") -> str:
        """A time of day as the report prints it: in the case's own zone (its window's offset)."""
        return "?" if when is None else when.astimezone(self.case.window.start.tzinfo).strftime(fmt)

    def here(self, environment: str) -> bool:
        """Whether a source or fact of `environment` is about the subject's environment (`*`: every one)."""
        return environment == "*" or same_environment(environment, self.env)

    def dependencies(self, entity: str) -> dict[str, list[Ref]]:
        """What `entity` depends on (stated relations), with the refs that state each."""
        out: dict[str, list[Ref]] = {}
        for rel, eid in self.deps.get(entity, []):
            out.setdefault(rel.target, []).append((rel, eid))
        return out

    def consumers_of(self, entity: str) -> dict[str, list[Ref]]:
        out: dict[str, list[Ref]] = {}
        for rel, eid in self.consumers.get(entity, []):
            out.setdefault(rel.source, []).append((rel, eid))
        return out

    def kind(self, entity: str) -> str:
        return self.kinds.get(entity, "service")

    def changes_of(self, entity: str) -> list[Ref]:
        return [(c, e) for c, e in self.changes if entity in c.about]


@dataclass(frozen=True)
class Knowledge(_Views):
    """The facts of the active evidence, indexed for the rules; read-only once built."""

    case: Case
    profile: Profile
    evidence: Mapping[str, Evidence]
    searches: Searches
    env: str = ""
    deps: Mapping[str, Refs] = field(default_factory=dict)
    consumers: Mapping[str, Refs] = field(default_factory=dict)
    signals: Mapping[str, Refs] = field(default_factory=dict)
    mentions: Mapping[str, Refs] = field(default_factory=dict)
    changes: Refs = ()
    placements: Refs = ()
    deployed: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    doc_mappings: Refs = ()
    verifications: Refs = ()
    documents: Mapping[str, DocumentFact] = field(default_factory=dict)
    statements: Refs = ()
    injections: Refs = ()
    kinds: Mapping[str, str] = field(default_factory=dict)
    versions: Mapping[str, Refs] = field(default_factory=dict)
    """Versions an entity's lines carry in the search range, with how many of its bad lines carry each."""
    blames: Mapping[str, Blame] = field(default_factory=dict)
    """Hypothesis id -> the change it blames (stated in the case, or read from its statement)."""
    configs: Mapping[str, Refs] = field(default_factory=dict)
    """Configuration snapshots read, by entity (its settings: limits, pool sizes, timeouts)."""
    undated: Refs = ()
    """Changes read that have no time (a rollout revision no event dates): they can never be a cause."""

    @classmethod
    def build(cls, case: Case, profile: Profile, evidence: list[Evidence], steps: list[Logged],
              kinds: dict[str, str] | None = None, watermark: str | None = None,
              blames: dict[str, Blame] | None = None) -> "Knowledge":
        active = {e.id: e for e in evidence if e.status == "active"}
        k = _Draft(case=case, profile=profile, evidence=active, searches=Searches(steps, watermark),
                   env=case.subject.environment,
                   kinds=dict(kinds or {}),
                   blames=dict(blames) if blames is not None else {h.id: h.blames for h in case.hypotheses if h.blames})
        snapshots: list[Ref] = []
        rollouts: list[Ref] = []
        seen_rel: set[tuple[str, str, str, str]] = set()
        for ev in sorted(active.values(), key=lambda e: (e.round, e.id)):
            if not k.here(ev.scope.environment):
                continue
            for f in ev.facts:
                if isinstance(f, RelationFact):
                    if not k.here(f.environment) or (f.source, f.target, f.via, ev.id) in seen_rel:
                        continue
                    seen_rel.add((f.source, f.target, f.via, ev.id))
                    k.deps[f.source].append((f, ev.id))
                    k.consumers[f.target].append((f, ev.id))
                elif isinstance(f, SignalFact):
                    k.signals[f.entity].append((f, ev.id))
                elif isinstance(f, MentionFact):
                    k.mentions[f.entity].append((f, ev.id))
                elif isinstance(f, ChangeFact):
                    if f.environment != "*" and k.here(f.environment) and not any(c.id == f.id for c, _e in k.changes):
                        k.changes.append((f, ev.id))
                elif isinstance(f, SnapshotFact):
                    if k.here(f.environment):
                        snapshots.append((f, ev.id))
                        if not any(s.source_id == f.source_id for s, _e in k.configs[f.entity]):
                            k.configs[f.entity].append((f, ev.id))
                elif isinstance(f, RolloutDateFact):
                    rollouts.append((f, ev.id))
                elif isinstance(f, PlacementFact):
                    k.placements.append((f, ev.id))
                elif isinstance(f, DeployedFact):
                    k.deployed[f.entity] = (f.version, ev.id)
                elif isinstance(f, DocMappingFact):
                    k.doc_mappings.append((f, ev.id))
                elif isinstance(f, VerificationFact):
                    k.verifications.append((f, ev.id))
                elif isinstance(f, DocumentFact):
                    k.documents[ev.id] = f
                elif isinstance(f, StatementFact):
                    k.statements.append((f, ev.id))
                elif isinstance(f, InjectionFact):
                    k.injections.append((f, ev.id))
                elif isinstance(f, EntityFact):
                    k.kinds[f.name] = f.entity_kind
                elif isinstance(f, VersionSeenFact):
                    k.versions[f.entity].append((f, ev.id))
        _fold_hosts(k)
        _loads_begun_in_the_window(k)
        k.changes, undated = date_rollouts(k.changes, rollouts)
        k.undated += undated
        diff_snapshots(k.changes, k.undated, snapshots, k.env)
        deployed_from_changes(k.changes, k.case.window.end, k.deployed)
        return k.frozen()


@dataclass
class _Draft(_Views):
    """`Knowledge` while it is being built: the same fields, in lists and lists by key."""

    case: Case
    profile: Profile
    evidence: dict[str, Evidence]
    searches: Searches
    env: str = ""
    deps: dict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    consumers: dict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    signals: dict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    mentions: dict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    changes: list[Ref] = field(default_factory=list)
    placements: list[Ref] = field(default_factory=list)
    deployed: dict[str, tuple[str, str]] = field(default_factory=dict)
    doc_mappings: list[Ref] = field(default_factory=list)
    verifications: list[Ref] = field(default_factory=list)
    documents: dict[str, DocumentFact] = field(default_factory=dict)
    statements: list[Ref] = field(default_factory=list)
    injections: list[Ref] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)
    versions: dict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    blames: dict[str, Blame] = field(default_factory=dict)
    configs: dict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    undated: list[Ref] = field(default_factory=list)

    def frozen(self) -> Knowledge:
        """The same facts, read-only: lists become tuples, lists by key plain dicts of tuples (a key
        never read into being)."""
        out: dict[str, Any] = {}
        for f in fields(Knowledge):
            v = getattr(self, f.name)
            if isinstance(v, list):
                v = tuple(v)
            elif isinstance(v, dict) and f.name not in ("evidence",):
                v = {key: tuple(x) if isinstance(x, list) else x for key, x in v.items()}
            out[f.name] = v
        return Knowledge(**out)


OBSERVABLE_KINDS = ("service", "workload", "database", "cache", "queue")
"""Kinds that have telemetry of their own when they are monitored — the kinds we run (a domain, an
external API, a node or a library is seen through its callers, its events or its consumers instead)."""

HOST_KINDS = ("host", "node")


def _fold_hosts(k: _Draft) -> None:
    """Machines named in lines (§2). A writer's lines naming the machine it runs on say where it is, not
    what it calls or what failed. A call to a host that runs exactly one service is a call to that
    service: on machines without an orchestrator the host is where the service listens, so
    `upstream=vm-score-01:9090` names it; the caller's relation and the names its bad lines state move
    to the service, and the host keeps its placement relations (what runs on it, for a noisy neighbour)."""
    own: dict[str, set[str]] = defaultdict(set)
    for source, rels in k.deps.items():
        own[source] |= {r.target for r, _e in rels if r.relation == "runs_on" and k.kind(r.target) in HOST_KINDS}
    for writer, ments in k.mentions.items():
        # a writer's lines that name the machine it runs on (`host=vm-7`) say where it is, not what failed
        if own.get(writer):
            k.mentions[writer] = [(m, e) for m, e in ments if m.name not in own[writer]]
    hosts = k.hosts_of_one_service()
    if not hosts:
        return
    for source, rels in list(k.deps.items()):
        moved: list[Ref] = []
        for rel, eid in rels:
            svc = hosts.get(rel.target)
            if rel.relation != "runs_on" and rel.target in own.get(source, ()):
                continue  # its own machine, named in its own lines: where it runs, already stated
            if svc is None or rel.relation == "runs_on" or svc == source:
                moved.append((rel, eid))
                continue
            f = rel.model_copy(update={"target": svc, "via": f"{rel.via} ({rel.target} runs {svc})"})
            moved.append((f, eid))
            k.consumers[rel.target] = [(r, e) for r, e in k.consumers[rel.target] if not (r is rel and e == eid)]
            k.consumers[svc].append((f, eid))
        k.deps[source] = moved
    for writer, ments in k.mentions.items():
        k.mentions[writer] = [(m.model_copy(update={"name": hosts[m.name], "name_kind": k.kind(hosts[m.name])}), e)
                              if m.name in hosts and hosts[m.name] != writer else (m, e) for m, e in ments]


def _loads_begun_in_the_window(k: _Draft) -> None:
    """A resource-use or traffic series with no point before the window, beginning inside it while the
    material read covers the baseline elsewhere, measures something that did not run before: a job's pod
    scheduled in the window uses nothing until it exists (Prometheus has no series for it). Its absence
    is taken as zero, as it is within one export (§3), so the load it brings has an onset."""
    rng = Range.of(k.case.window)
    stamps: list[datetime] = []
    for sigs in k.signals.values():
        for f, _e in sigs:
            if f.signal == "metric":
                base = [t for t, _v in f.points if rng.baseline_from <= t < rng.search_from]
                stamps = base if len(base) > len(stamps) else stamps
    if len(stamps) < k.profile.anomaly.min_baseline_points:
        return
    for entity, sigs in k.signals.items():
        out: list[Ref] = []
        for f, e in sigs:
            if (f.signal != "metric" or f.decidable or f.role not in ("saturation", "traffic") or not f.points
                    or f.points[0][0] <= rng.search_from):
                out.append((f, e))
                continue
            v = series_verdict([(t, 0.0) for t in stamps] + list(f.points), rng, k.profile.anomaly, ("up",), None,
                               f.capacity)
            if not v.anomalous:
                out.append((f, e))
                continue
            note = (f"no point before {k.clock(f.points[0][0])} while the material covers the baseline: taken as 0 "
                    f"(it did not run)")
            out.append((f.model_copy(update={
                "anomalous": True, "decidable": True, "direction": "up", "onset": v.onset, "recovered_at": v.recovered,
                "baseline": v.baseline, "level": v.level, "peak": v.peak, "ratio": v.ratio, "delta": v.delta,
                "note": note}), e))
        k.signals[entity] = out

