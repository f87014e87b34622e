"""What the evidence read so far establishes, indexed for the rules.

Built from the facts of active (not revoked, not stale) evidence only, so a revocation on
resume removes everything that depended on it. Facts of another environment than the
subject's are dropped here: the same name in staging is another entity.
"""


from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from graphs.rulebook.searches import Searches
from state.case import Blame, Case
from state.evidence import Evidence
from state.facts import (
    ChangeFact, DeployedFact, DocMappingFact, DocumentFact, EntityFact, InjectionFact, MentionFact, PlacementFact,
    RelationFact, RolloutDateFact, SignalFact, SnapshotFact, StatementFact, VerificationFact, VersionSeenFact,
)
from state.profile import Profile
from state.sources import ConfigChange
from state.steps import Logged
from tools.entities import canon_key as canon

Ref = tuple  # (fact, evidence id)


@dataclass
class Knowledge:
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
    """Versions an entity's lines carry in the search range, with how many of its bad lines carry each."""
    blames: dict[str, "Blame"] = field(default_factory=dict)
    """Hypothesis id -> the change it blames (stated in the case, or read from its statement)."""
    configs: dict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    """Configuration snapshots read, by entity (its settings: limits, pool sizes, timeouts)."""
    undated: list[Ref] = field(default_factory=list)
    """Changes read that have no time (a rollout revision no event dates): they can never be a cause."""

    @classmethod
    def build(cls, case: Case, profile: Profile, evidence: list[Evidence], steps: list[Logged],
              kinds: dict[str, str] | None = None, watermark: str | None = None,
              blames: dict[str, Blame] | None = None) -> "Knowledge":
        active = {e.id: e for e in evidence if e.status == "active"}
        k = cls(case=case, profile=profile, evidence=active, searches=Searches(steps, watermark),
                env=case.subject.environment,
                kinds=dict(kinds or {}),
                blames=dict(blames) if blames is not None else {h.id: h.blames for h in case.hypotheses if h.blames})
        snapshots: list[Ref] = []
        rollouts: list[Ref] = []
        seen_rel: set[tuple[str, str, str, str]] = set()
        for ev in sorted(active.values(), key=lambda e: (e.round, e.id)):
            if ev.scope.environment not in (k.env, "*"):
                continue
            for f in ev.facts:
                if isinstance(f, RelationFact):
                    if f.environment not in (k.env, "*") or (f.source, f.target, f.via, ev.id) in seen_rel:
                        continue
                    seen_rel.add((f.source, f.target, f.via, ev.id))
                    k.deps[f.source].append((f, ev.id))
                    k.consumers[f.target].append((f, ev.id))
                elif isinstance(f, SignalFact):
                    k.signals[f.entity].append((f, ev.id))
                elif isinstance(f, MentionFact):
                    k.mentions[f.entity].append((f, ev.id))
                elif isinstance(f, ChangeFact):
                    if f.environment == k.env and not any(c.id == f.id for c, _e in k.changes):
                        k.changes.append((f, ev.id))
                elif isinstance(f, SnapshotFact):
                    if f.environment in (k.env, "*"):
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
        k._date_rollouts(rollouts)
        k._diff_snapshots(snapshots)
        k._deployed_from_changes()
        return k

    # --- derived changes ---------------------------------------------------------------------
    def _date_rollouts(self, rollouts: list[Ref]) -> None:
        dated: list[Ref] = []
        for ch, eid in self.changes:
            if ch.effective is None and ch.template_hash:
                ups = sorted(((r, reid) for r, reid in rollouts
                              if r.template_hash == ch.template_hash and r.workload == ch.entity), key=lambda x: x[0].ts)
                if ups:
                    # the revision rolls out from its replica set's first scale-up to its last
                    first, last = ups[0], ups[-1]
                    ch = ch.model_copy(update={"started_at": first[0].ts, "completed_at": last[0].ts,
                                               "dated_by": f"ScalingReplicaSet {ch.entity}-{ch.template_hash}"})
                    dated.append((ch, "+".join(dict.fromkeys([eid, *(r for _x, r in ups)]))))
                    continue
            if ch.effective is None:
                self.undated.append((ch, eid))
                continue
            dated.append((ch, eid))
        self.changes = dated

    def _diff_snapshots(self, snapshots: list[Ref]) -> None:
        by: dict[str, list[Ref]] = defaultdict(list)
        for snap, eid in snapshots:
            if not any(s.source_id == snap.source_id for s, _e in by[snap.entity]):
                by[snap.entity].append((snap, eid))
        for entity, snaps in sorted(by.items()):
            if len(snaps) < 2:
                continue
            ordered = self._order_snapshots(entity, snaps)
            if ordered is None:
                continue
            for (a, ea), (b, eb) in zip(ordered, ordered[1:]):
                diff = tuple(ConfigChange(key=key, from_=a.settings.get(key), to=b.settings.get(key))
                             for key in sorted(set(a.settings) | set(b.settings))
                             if a.settings.get(key) != b.settings.get(key))
                if not diff:
                    continue
                dep = next(((i, c, ce) for i, (c, ce) in enumerate(self.changes) if c.entity == entity and b.version
                            and b.version in (c.version_to, c.revision)), None)
                if dep is not None:
                    # the deployment that installed the later snapshot made this diff: one change, its id
                    i, c, ce = dep
                    have = {canon(cc.key) for cc in c.config_changes}
                    merged = c.model_copy(update={
                        "config_changes": (*c.config_changes, *(d for d in diff if canon(d.key) not in have)),
                        "summary": (c.summary + "; " if c.summary else "") + f"config diff of {a.source_id} and {b.source_id}"})
                    self.changes[i] = (merged, f"{ce}+{ea}+{eb}")
                    continue
                when = b.captured_at
                change = ChangeFact(id=f"{entity}@config:{a.source_id}..{b.source_id}", type="config_push",
                                    entity=entity, environment=self.env, started_at=when, completed_at=when,
                                    version_from=a.version, version_to=b.version, config_changes=diff,
                                    summary=f"computed diff of {a.source_id} and {b.source_id}",
                                    dated_by="captured_at of the later snapshot", at=b.at)
                ref = (change, f"{ea}+{eb}")
                (self.changes if when is not None else self.undated).append(ref)

    def _order_snapshots(self, entity: str, snaps: list[Ref]) -> list[Ref] | None:
        if all(s.captured_at is not None for s, _e in snaps):
            return sorted(snaps, key=lambda r: r[0].captured_at)
        # order by the deployments that installed each version
        when: dict[str, datetime] = {}
        for c, _e in self.changes:
            if c.entity == entity and c.effective is not None:
                for v in (c.version_to, c.revision):
                    if v:
                        when[v] = c.effective
        def key(r: Ref) -> datetime | None:
            s = r[0]
            return s.captured_at or (when.get(s.version) if s.version else None)
        if all(key(r) is not None for r in snaps):
            return sorted(snaps, key=lambda r: key(r))  # type: ignore[arg-type,return-value]
        versioned = [r for r in snaps if key(r) is not None]
        unversioned = [r for r in snaps if key(r) is None]
        if len(unversioned) == 1 and versioned:  # the one snapshot no deployment installed is the one before
            return [*unversioned, *sorted(versioned, key=lambda r: key(r))]  # type: ignore[arg-type,return-value]
        return None

    def _deployed_from_changes(self) -> None:
        end = self.case.window.end
        for ch, eid in sorted(self.changes, key=lambda r: r[0].effective or end):
            if ch.effective is None or ch.effective > end:
                continue
            if ch.type in ("deployment", "rollback") and ch.version_to:
                self.deployed.setdefault(ch.entity, (ch.version_to, eid))
            for dc in ch.dependency_changes:
                self.deployed[dc.name] = (dc.to, eid)

    # --- views ---------------------------------------------------------------------------------
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
