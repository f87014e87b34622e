"""Structured lookups over the case index (DuckDB): telemetry, relations, changes, placement, records.

Each answer lists the matching sources the principal may read, as hits to read back, and
separately the ids of matching sources it may not read: their existence is manifest
metadata, their content never leaves the index. `searched` lists the readable sources a
lookup covered, matched or not, so "searched and found nothing" can be told from "could not
look".
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from state import Frozen, stable_id
from state.evidence import Hit
from state.sources import PROSE_KINDS
from tools.access import AccessSnapshot
from tools.formats.records import environment_names
from tools.index import reading

_RELATION_ORDER = {"catalog": 0, "config": 1, "trace": 2, "kubernetes": 3, "change": 4, "log": 5, "runbook": 6,
                   "doc": 7, "note": 8, "postmortem": 9}
"""Structure first; a sentence that states a relation last (its source must also apply)."""


class Lookup(Frozen):
    hits: tuple[Hit, ...] = ()
    denied: tuple[str, ...] = ()
    searched: tuple[str, ...] = ()
    """Readable sources that were searched (matched or not): 'searched and not found' needs them."""
    denied_about: tuple[tuple[str, str], ...] = ()
    """(denied source, the entity it was returned for) in a lookup of several entities."""


def _envs(environment: str) -> list[list[str]]:
    """The one query parameter that matches a source of `environment`: the environment as the case
    names it, the names of its family as exports write it (`prod`, `production`, `prd`, `live`), and
    `*` (a source of every environment)."""
    return [[*environment_names(environment), "*"]]


def _may_date_a_change(snapshots: list[tuple], start: datetime, end: datetime) -> bool:
    """Whether two of an entity's config snapshots can show a change that took effect in [start, end]:
    a change between snapshots is dated by the later one's capture time, or else by the deployment
    that installed its version (a change record, found on its own). So an unreadable snapshot can hide
    such a change only when a snapshot of the entity was captured in the range (docs/deciding.md §8)."""
    return any(r[6] is not None and start <= r[6] <= end for r in snapshots)


def _lines_early(rows: list[tuple]) -> list[tuple]:
    """A metric of each of the two most telling roles first, then the entity's lines, spans and
    events (they say where its errors point), then its other series: an entity with many series
    (one per pod, per route) is not read series by series before its lines are."""
    first: list[tuple] = []
    roles: set = set()
    for r in rows:
        if r[3].startswith("metric|") and r[5] not in roles and len(roles) < 2:
            roles.add(r[5])
            first.append(r)
    lines = [r for r in rows if not r[3].startswith("metric|")]
    return first + lines + [r for r in rows if r not in first and r not in lines]


class Observations:
    """Lookups by entity and time over the case index."""

    def __init__(self, index_path: Path) -> None:
        self.index_path = index_path
        self._cache: dict[str, list[tuple]] = {}

    def _rows(self, sql: str, params: list) -> list[tuple]:
        with reading(self.index_path) as con:
            return con.execute(sql, params).fetchall()

    def _split(self, rows: list[tuple], access: AccessSnapshot, channel: str) -> Lookup:
        """rows: (source_id, start, end, focus, revision, score); readable ones become hits, in order."""
        hits: list[Hit] = []
        denied: list[str] = []
        seen: set[tuple] = set()
        for source_id, start, end, focus, revision, score in rows:
            if not access.can_read(source_id):
                if source_id not in denied:
                    denied.append(source_id)
                continue
            key = (source_id, focus)
            if key in seen:
                continue
            seen.add(key)
            hits.append(Hit(source_id=source_id, chunk_id=stable_id(channel, source_id, revision, focus, start, end),
                            start=int(start), end=int(end), score=float(score), rank=len(hits) + 1, channel=channel,
                            tool=channel, revision=revision or "", focus=focus))
        return Lookup(hits=tuple(hits), denied=tuple(denied))

    def telemetry(self, entity: str, environment: str, access: AccessSnapshot, metric: str | None = None,
                  signals: tuple[str, ...] = ()) -> Lookup:
        """The entity's own signal streams (a series, its log lines, its spans, its events), best roles first."""
        sql = """SELECT t.source_id, t.start_, t.end_, t.signal || '|' || t.key, s.revision,
                        CASE t.role WHEN 'latency' THEN 5 WHEN 'errors' THEN 4 WHEN 'saturation' THEN 3
                                    WHEN 'availability' THEN 2 WHEN 'traffic' THEN 1 ELSE 0 END
                 FROM streams t JOIN sources s USING (source_id)
                 WHERE t.entity = ? AND list_contains(?, t.environment)"""
        params: list = [entity, *_envs(environment)]
        if metric:
            sql += " AND t.metric = ?"
            params.append(metric)
        if signals:
            sql += f" AND t.signal IN ({','.join('?' * len(signals))})"
            params += list(signals)
        sql += " ORDER BY CASE t.signal WHEN 'metric' THEN 0 WHEN 'logs' THEN 1 WHEN 'traces' THEN 2 ELSE 3 END, 6 DESC, t.source_id, t.key"
        out = self._split(_lines_early(self._rows(sql, params)), access, "telemetry")
        return out.model_copy(update={"searched": tuple(h.source_id for h in out.hits)})

    def has_telemetry(self, entity: str, environment: str) -> bool:
        rows = self._rows("SELECT count(*) FROM streams WHERE entity = ? AND list_contains(?, environment)",
                          [entity, *_envs(environment)])
        return bool(rows and rows[0][0])

    def relations(self, entity: str, environment: str, access: AccessSnapshot,
                  direction: str = "dependencies") -> Lookup:
        """Sources stating what `entity` depends on (or what depends on it).

        A record (catalog, config, change) is one hit spanning the rows it states for the
        entity; a log, trace or Kubernetes source one hit per other end, at its first statement."""
        col, other = ("src", "dst") if direction == "dependencies" else ("dst", "src")
        rows = self._rows(
            f"""SELECT r.source_id, r.start_, r.end_, r.{other}, s.revision, r.kind
                FROM relations r JOIN sources s USING (source_id)
                WHERE r.{col} = ? AND list_contains(?, r.environment)
                ORDER BY r.source_id, r.start_""", [entity, *_envs(environment)])
        grouped: dict[tuple, list] = {}
        for source_id, start, end, peer, revision, kind in rows:
            if direction == "dependencies" and kind in ("log", "trace"):
                # whom an entity's own lines and spans call is read with its telemetry (docs/deciding.md §2)
                continue
            if kind in PROSE_KINDS and not access.can_read(source_id):
                # a sentence in a document is found like any document text: an unreadable
                # document is never returned, so it never stops a run by itself (deciding.md §8)
                continue
            key = (source_id,) if kind in ("catalog", "config", "change") else (source_id, peer)
            g = grouped.setdefault(key, [source_id, start, end, set(), revision, kind])
            g[1], g[2] = min(g[1], start), max(g[2], end)
            g[3].add(peer)
        ordered = sorted(grouped.values(), key=lambda g: (_RELATION_ORDER.get(g[5], 9), -len(g[3]), g[0], g[1]))
        out = self._split([(g[0], g[1], g[2], f"{direction}|{entity}|{','.join(sorted(g[3]))}", g[4], 1.0)
                           for g in ordered], access, "relations")
        return out.model_copy(update={"searched": tuple(dict.fromkeys(h.source_id for h in out.hits))})

    def changes(self, entities: list[str], environment: str, start: datetime, end: datetime,
                access: AccessSnapshot) -> Lookup:
        """Change records, history entries, toggles, rollout revisions (dated by their events) and
        config snapshots of the entities; a change counts when it took effect in [start, end]."""
        if not entities:
            return Lookup()
        marks = ",".join("?" * len(entities))
        rows = self._rows(
            f"""SELECT c.source_id, c.start_, c.end_, 'change|' || c.change_id, s.revision, 1.0, c.at_, c.template_hash,
                       c.entity
                FROM changes c JOIN sources s USING (source_id)
                WHERE (c.entity IN ({marks}) OR c.target IN ({marks})) AND list_contains(?, c.environment)
                ORDER BY c.at_ NULLS LAST, c.source_id, c.start_""", [*entities, *entities, *_envs(environment)])
        dated = self._rows(
            f"""SELECT r.source_id, r.start_, r.end_, 'rollout|' || r.workload || '|' || r.template_hash, s.revision, 1.0,
                       r.ts, r.template_hash, r.workload
                FROM rollouts r JOIN sources s USING (source_id)
                WHERE r.workload IN ({marks}) ORDER BY r.ts""", list(entities))
        keep, hashes = [], set()
        for r in rows:
            at, h = r[6], r[7]
            if at is not None and start <= at <= end:
                keep.append(r)
            elif at is None and h:
                hashes.add((r[8], h))
                keep.append(r)
        when = {(r[8], r[7]): r[6] for r in dated}
        keep = [r for r in keep if r[6] is not None or (start <= when.get((r[8], r[7]), start.replace(year=1)) <= end)]
        used = {(r[8], r[7]) for r in keep if r[6] is None}
        keep += [r for r in dated if (r[8], r[7]) in used]
        snaps = self._rows(
            f"""SELECT r.source_id, r.start_, r.end_, 'snapshot|' || r.service, s.revision, 1.0, r.captured_at
                FROM records r JOIN sources s USING (source_id)
                WHERE r.kind = 'config' AND r.service IN ({marks}) AND list_contains(?, r.environment)""",
            [*entities, *_envs(environment)])
        snapshot_groups: dict[str, list[tuple]] = {}
        for r in snaps:
            snapshot_groups.setdefault(r[3], []).append(r)
        pairs = []
        for group in snapshot_groups.values():
            if len(group) > 1:
                hides = _may_date_a_change(group, start, end)
                pairs += [r[:6] for r in group if hides or access.can_read(r[0])]
        out = self._split([r[:6] for r in keep] + pairs, access, "changes")
        searched = self._rows(
            f"""SELECT DISTINCT source_id FROM changes WHERE (entity IN ({marks}) OR target IN ({marks}))
                AND list_contains(?, environment) ORDER BY source_id""", [*entities, *entities, *_envs(environment)])
        return out.model_copy(update={"searched": tuple(s for (s,) in searched if access.can_read(s))})

    def any_change_source(self, environment: str) -> bool:
        rows = self._rows("SELECT count(*) FROM sources WHERE kind = 'change' AND list_contains(?, environment)",
                          _envs(environment))
        return bool(rows and rows[0][0])

    def placement(self, entity: str, environment: str, access: AccessSnapshot) -> Lookup:
        """Where the entity runs and what else runs there (the placements of its nodes)."""
        mine = self._rows("""SELECT DISTINCT node FROM placements WHERE (workload = ? OR node = ?)
                             AND list_contains(?, environment)""", [entity, entity, *_envs(environment)])
        nodes = [n for (n,) in mine]
        rel_nodes = self._rows("""SELECT DISTINCT dst FROM relations WHERE src = ? AND relation = 'runs_on'
                                  AND list_contains(?, environment)""", [entity, *_envs(environment)])
        nodes += [n for (n,) in rel_nodes if n not in nodes]
        if not nodes:
            return Lookup()
        marks = ",".join("?" * len(nodes))
        rows = self._rows(
            f"""SELECT p.source_id, p.start_, p.end_, 'placement|' || p.workload || '|' || p.node, s.revision,
                       CASE WHEN p.workload = ? THEN 2.0 ELSE 1.0 END
                FROM placements p JOIN sources s USING (source_id)
                WHERE p.node IN ({marks}) AND list_contains(?, p.environment)
                ORDER BY 6 DESC, p.node, p.workload, p.source_id""", [entity, *nodes, *_envs(environment)])
        rows += self._rows(
            f"""SELECT r.source_id, r.start_, r.end_, 'dependencies|' || r.src || '|' || r.dst, s.revision, 1.0
                FROM relations r JOIN sources s USING (source_id)
                WHERE r.relation = 'runs_on' AND r.dst IN ({marks}) AND r.kind = 'catalog'
                  AND list_contains(?, r.environment)""", [*nodes, *_envs(environment)])
        # one hit per workload on each node is enough to know who shares it
        return self._split(rows, access, "placement")

    def records(self, kinds: list[str], entity: str, environment: str, access: AccessSnapshot) -> Lookup:
        """Mapping / ownership / config / catalog records about an entity."""
        rows = self._rows(
            f"""SELECT r.source_id, r.start_, r.end_, 'record|' || r.kind, s.revision, 1.0
                FROM records r JOIN sources s USING (source_id)
                WHERE r.kind IN ({','.join('?' * len(kinds))}) AND (r.service = ? OR r.service = '*')
                  AND list_contains(?, r.environment) ORDER BY r.kind, r.source_id""",
            [*kinds, entity, *_envs(environment)])
        return self._split(rows, access, "records")
