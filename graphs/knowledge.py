"""What the evidence read so far establishes, indexed for the rules.

Built from the facts of active (not revoked, not stale) evidence only, so a revocation on
resume removes everything that depended on it. Facts of another environment than the
subject's are dropped here: the same name in staging is another entity.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime

from state.case import Blame, Case
from state.evidence import (
    ChangesAction, DocumentsAction, Evidence, PlacementAction, RecordsAction, RelationsAction, TelemetryAction,
)
from state.facts import (
    ChangeFact, DeployedFact, DocMappingFact, DocumentFact, EntityFact, InjectionFact, MentionFact, PlacementFact,
    RelationFact, RolloutDateFact, SignalFact, SnapshotFact, StatementFact, VerificationFact, VersionSeenFact,
)
from state.profile import Profile
from state.sources import ConfigChange
from tools.entities import canon_key as canon
from state.steps import Logged, ReadStep, RetrieveStep

Ref = tuple  # (fact, evidence id)


@dataclass(frozen=True)
class Lookup:
    """One structured lookup the run made: what it asked about and what came back."""

    action: str
    entities: tuple[str, ...]
    hits: int
    denied: tuple[str, ...]
    failed: tuple[str, ...]
    searched: tuple[str, ...]
    more: bool
    round: int
    claim_id: str
    metric: str | None = None
    direction: str = ""
    watermark: str = ""
    fingerprint: str = ""
    full: bool = False
    """A telemetry lookup of every signal (no metric or signal filter)."""
    lines_left: bool = False
    """Line streams (log lines, spans, events) it returned that were not read."""
    denied_about: tuple[tuple[str, str], ...] = ()
    """(denied source, entity) when the lookup asked about several entities."""


def _is_lines(focus: str) -> bool:
    return focus.startswith(("logs|", "traces|", "events|"))


class Searches:
    """What the run has looked up so far (from its steps): for 'searched, found nothing' and denials."""

    def __init__(self, steps: list[Logged], watermark: str | None = None) -> None:
        self._by: dict[tuple[str, str], list[Lookup]] = defaultdict(list)
        """(action, entity) -> its lookups in order: a rule asks per entity, so a question costs
        what that entity was looked up for, not every lookup of the run."""
        self.watermark = watermark
        """The current access watermark: a denial met under an older one (before a grant) no longer counts."""
        reads = {s.step.round: s.step for s in steps if isinstance(s.step, ReadStep)}
        self.lookups: list[Lookup] = []
        self.fingerprints: dict[str, bool] = {}
        """fingerprint -> whether its last run left hits unread (more to do)."""
        for s in steps:
            st = s.step
            if not isinstance(st, RetrieveStep):
                continue
            a = st.gap.act
            read = reads.get(st.round)
            entities: tuple[str, ...] = ()
            if isinstance(a, (TelemetryAction, RelationsAction)):
                entities = a.entities
            elif isinstance(a, PlacementAction):
                entities = (a.entity,)
            elif isinstance(a, ChangesAction):
                entities = a.entities
            elif isinstance(a, DocumentsAction):
                entities = a.seeds
            elif isinstance(a, RecordsAction):
                entities = (a.entity,)
            read_ids = {r.chunk_id for r in (read.reads if read else ())}
            unread = [h for h in st.hits if h.chunk_id not in read_ids]
            more = bool(unread)
            # a lookup whose hits were all left unread or came back without a single readable span
            # taught nothing: run again on the same facts it would teach nothing again
            stalled = bool(st.hits) and read is not None and not any(r.outcome == "ok" for r in read.reads)
            self.fingerprints[st.fingerprint] = more
            lk = Lookup(
                action=a.action, entities=entities, hits=len(st.hits),
                denied=tuple(dict.fromkeys([*st.denied, *(read.denied if read else ())])), denied_about=st.denied_about,
                failed=tuple(read.failed if read else ()), searched=st.searched, more=more and not stalled,
                round=st.round, claim_id=st.gap.claim_id, metric=getattr(a, "metric", None),
                direction=getattr(a, "direction", ""), watermark=st.watermark, fingerprint=st.fingerprint,
                full=isinstance(a, TelemetryAction) and not a.metric and (
                    not a.signals or {"logs", "traces", "events"} <= set(a.signals)),
                lines_left=any(_is_lines(h.focus) for h in unread) and not stalled)
            self.lookups.append(lk)
            per_entity = any(h.about for h in st.hits) and len(entities) > 1
            for e in dict.fromkeys(entities):
                # a lookup of several entities: whether *this* entity has streams left unread
                mine = replace(lk, more=any(h.about == e for h in unread) and not stalled,
                               lines_left=any(h.about == e and _is_lines(h.focus) for h in unread) and not stalled
                               ) if per_entity else lk
                self._by[(lk.action, e)].append(mine)

    def done_fingerprints(self, watermark: str) -> set[str]:
        """Gaps run to the end (nothing left unread). One that met a denial under an older access
        watermark is not done: after a grant it may return more."""
        last = {lk.fingerprint: lk for lk in self.lookups}
        return {fp for fp, lk in last.items() if not lk.more and not (lk.denied and lk.watermark != watermark)}

    def looked(self, action: str, entity: str, *, metric: str | None = None, direction: str = "") -> list[Lookup]:
        return [lk for lk in self._by.get((action, entity), ())
                if (metric is None or lk.metric in (None, metric)) and (not direction or lk.direction == direction)]

    def done_full(self, entity: str) -> bool:
        """The entity's own lines, spans and events were looked up and read (what names where its
        errors go); its remaining metric series need not be, once one shows its anomaly."""
        got = [lk for lk in self._by.get(("telemetry", entity), ()) if lk.full]
        return bool(got) and not got[-1].lines_left

    def done(self, action: str, entity: str, **kw: str | None) -> bool:
        """The lookup ran and nothing it returned is left unread. One that met a denial under an
        older access watermark is not done: after a grant it may return what was denied."""
        got = self.looked(action, entity, **kw)  # type: ignore[arg-type]
        if kw.get("metric") is not None and any(lk.metric is None and lk.denied for lk in got):
            # a lookup of every signal that met a denial cannot say whether the unreadable source holds
            # this metric; a lookup of the metric itself can
            got = [lk for lk in got if lk.metric == kw["metric"]]
        if not got:
            return False
        last = got[-1]
        return not last.more and not (last.denied and self.watermark is not None and last.watermark != self.watermark)

    def denied(self, action: str, entity: str, **kw: str | None) -> list[str]:
        """Sources a lookup about `entity` met and could not read; in a lookup of several entities, only
        those returned for `entity` (a restricted series of one is not about the others)."""
        metric = kw.get("metric")
        looked = [lk for lk in self.looked(action, entity, **kw)  # type: ignore[arg-type]
                  if metric is None or lk.metric == metric]  # what a lookup of every signal met need not hold it
        return list(dict.fromkeys(d for lk in looked for d in lk.denied
                                  if (self.watermark is None or lk.watermark == self.watermark)
                                  and (d not in {x for x, _e in lk.denied_about} or (d, entity) in lk.denied_about)))

    def failed(self, action: str, entity: str, **kw: str | None) -> list[str]:
        return list(dict.fromkeys(f for lk in self.looked(action, entity, **kw) for f in lk.failed))  # type: ignore[arg-type]

    def for_claim(self, claim_id: str, action: str) -> list[Lookup]:
        return [lk for lk in self.lookups if lk.claim_id == claim_id and lk.action == action]


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
