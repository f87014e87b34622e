"""Changes as the rules see them (docs/deciding.md §5, step 1; §6, the deployed version).

Change records are taken as read; these add what follows from several of them: a rollout revision
dated by its replica set's scale-ups, two config snapshots diffed into a config push (merged into
the deployment that installed the later one), and the version each entity runs at the window's end.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from state.change import ConfigChange
from state.facts import ChangeFact
from state.keys import canon_key as canon

Ref = tuple  # (fact, evidence id)


def date_rollouts(changes: list[Ref], rollouts: list[Ref]) -> tuple[list[Ref], list[Ref]]:
    """(dated, undated): a rollout revision no history time dates is dated by its replica set's scale-ups
    (first to last); a change that nothing dates can never be a cause."""
    dated: list[Ref] = []
    undated: list[Ref] = []
    for ch, eid in changes:
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
            undated.append((ch, eid))
            continue
        dated.append((ch, eid))
    return dated, undated


def diff_snapshots(changes: list[Ref], undated: list[Ref], snapshots: list[Ref], env: str) -> None:
    """Two snapshots of an entity's config that differ make a change (added to `changes`, or to `undated`
    when the later one has no capture time); one a deployment installed is merged into that deployment."""
    by: dict[str, list[Ref]] = defaultdict(list)
    for snap, eid in snapshots:
        if not any(s.source_id == snap.source_id for s, _e in by[snap.entity]):
            by[snap.entity].append((snap, eid))
    for entity, snaps in sorted(by.items()):
        if len(snaps) < 2:
            continue
        ordered = _order_snapshots(changes, entity, snaps)
        if ordered is None:
            continue
        for (a, ea), (b, eb) in zip(ordered, ordered[1:]):
            diff = tuple(ConfigChange(key=key, from_=a.settings.get(key), to=b.settings.get(key))
                         for key in sorted(set(a.settings) | set(b.settings))
                         if a.settings.get(key) != b.settings.get(key))
            if not diff:
                continue
            dep = next(((i, c, ce) for i, (c, ce) in enumerate(changes) if c.entity == entity and b.version
                        and b.version in (c.version_to, c.revision)), None)
            if dep is not None:
                # the deployment that installed the later snapshot made this diff: one change, its id
                i, c, ce = dep
                have = {canon(cc.key) for cc in c.config_changes}
                merged = c.model_copy(update={
                    "config_changes": (*c.config_changes, *(d for d in diff if canon(d.key) not in have)),
                    "summary": (c.summary + "; " if c.summary else "") + f"config diff of {a.source_id} and {b.source_id}"})
                changes[i] = (merged, f"{ce}+{ea}+{eb}")
                continue
            when = b.captured_at
            change = ChangeFact(id=f"{entity}@config:{a.source_id}..{b.source_id}", type="config_push",
                                entity=entity, environment=env, started_at=when, completed_at=when,
                                version_from=a.version, version_to=b.version, config_changes=diff,
                                summary=f"computed diff of {a.source_id} and {b.source_id}",
                                dated_by="captured_at of the later snapshot", at=b.at)
            ref = (change, f"{ea}+{eb}")
            (changes if when is not None else undated).append(ref)


def _order_snapshots(changes: list[Ref], entity: str, snaps: list[Ref]) -> list[Ref] | None:
    if all(s.captured_at is not None for s, _e in snaps):
        return sorted(snaps, key=lambda r: r[0].captured_at)
    # order by the deployments that installed each version
    when: dict[str, datetime] = {}
    for c, _e in changes:
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


def deployed_from_changes(changes: list[Ref], end: datetime, deployed: dict[str, tuple[str, str]]) -> None:
    """The version each entity (and each component a deployment upgraded) runs at the window's end, from
    the completed deployments and rollbacks, where no deployment mapping read says it (`deployed`)."""
    for ch, eid in sorted(changes, key=lambda r: r[0].effective or end):
        if ch.effective is None or ch.effective > end:
            continue
        if ch.type in ("deployment", "rollback") and ch.version_to:
            deployed.setdefault(ch.entity, (ch.version_to, eid))
        for dc in ch.dependency_changes:
            deployed[dc.name] = (dc.to, eid)


def puts_back(later: ChangeFact, earlier: ChangeFact) -> bool:
    """`later` undoes `earlier`: a rollback of it, a deploy back to the version it replaced, the same flag set
    back to what it was, or every key it pushed set back to its old value (docs/deciding.md §5)."""
    if later.id == earlier.id or later.effective is None or earlier.effective is None or later.effective <= earlier.effective:
        return False
    if later.rollback_of == earlier.id or (earlier.version_from and later.version_to == earlier.version_from):
        return True
    f, g = earlier.flag, later.flag
    if f is not None and g is not None and f.name == g.name and f.from_ is not None and g.to == f.from_:
        return True
    if earlier.config_changes and later.config_changes:
        back = {(canon(c.key), c.to) for c in later.config_changes}
        return all(c.from_ is not None and (canon(c.key), c.from_) in back for c in earlier.config_changes)
    return False

