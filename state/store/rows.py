"""The store read without the ORM: DB-API (`sqlite3`, `psycopg`) over the tables `tables` declares.

The light commands (`runs`, `show`, `history`, `grant`) start in a fraction of the time SQLAlchemy
and SQLModel take to import; `Rows` gives them the store's reads, and the one write a grant is,
with the same answers as `Store`'s methods of the same names (a conformance test runs both on
SQLite and PostgreSQL). Table and column names come from `names`, shared with the SQLModel tables.

The ORM stays the store's owner: whatever `Store` does on first use before it reads (create the
database and tables, add columns a newer version declares, explain a store it cannot open) `Rows`
leaves to it, by asking it to prepare the store whenever a table or column is missing or the
database cannot be opened, and then reading as before. Stores other than a `sqlite:///file` or a
`postgresql+psycopg://` URL are not read here at all (`Rows.from_url` returns None).

Imports `names`, `location`, `clock`, `state.errors` and the value base (and `core`, the ORM, only
to prepare a store); the models of evidence, reads, decisions and steps are imported where a row
is read back, as `Store` does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from state._base import Frozen
from state.errors import RunNotFound
from state.store.clock import utc_now
from state.store.location import postgres_conninfo, read_only_uri, sqlite_file, sqlite_read_only
from state.store.names import DECISION, EVIDENCE, GRANT, READ, RUN, STEP, TABLES

if TYPE_CHECKING:
    from state.claims import ClaimDecision
    from state.evidence import Evidence, ReadRecord
    from state.steps import Logged
    from state.store.tables import RunRow


class RunRecord(Frozen):
    """A run's row as `Rows` reads it: the columns of `RunRow` (`tables`), same names, same values."""

    run_id: str
    case_id: str
    case_dir: str
    retrieval: str
    principal_id: str
    status: str
    stop_kind: str | None
    stop_json: str | None
    rounds_limit: int
    reads_limit: int
    rounds_used: int
    reads_used: int
    watermark: str
    grants: str
    owner: str | None
    lease_until: datetime | None
    planner: str | None
    planner_json: str | None
    error: str | None
    left_out: str | None
    attempts: int | None
    created_at: datetime
    updated_at: datetime


if TYPE_CHECKING:
    AnyRun: TypeAlias = "RunRow | RunRecord"
    """A run as either reader hands it back."""


class Grant(Frozen):
    """A grant as read back (the API model of GrantRow)."""

    seq: int
    by: str
    groups: tuple[str, ...]
    unlocks: tuple[str, ...]
    answers: tuple[str, ...]
    at: datetime


def grant_of(seq: int, by: str, groups: str, unlocks: str, answers: str, at: datetime) -> Grant:
    """A grant row's columns as the API model (a time stored without a zone is UTC)."""
    at = at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
    return Grant(seq=seq, by=by, groups=tuple(json.loads(groups)), unlocks=tuple(json.loads(unlocks)),
                 answers=tuple(json.loads(answers)), at=at)


def evidence_order(ev: Evidence) -> tuple[int, int, str]:
    """The order evidence is listed in: by round, then by number (`E2` before `E10`)."""
    return ev.round, int(ev.id[1:]) if ev.id[1:].isdigit() else 0, ev.id


def _time(value: Any) -> Any:
    """A stored time as the ORM hands it back (SQLModel's `UTCDateTime`): aware, in UTC. SQLite keeps
    `YYYY-MM-DD HH:MM:SS.ffffff` text without a zone, which is UTC."""
    if value is None:
        return None
    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    return at.replace(tzinfo=timezone.utc) if at.utcoffset() is None else at.astimezone(timezone.utc)


def _sqlite_time(at: datetime) -> str:
    """A time as the ORM writes it into SQLite: in UTC, the zone left out."""
    at = at.astimezone(timezone.utc)
    return (f"{at.year:04d}-{at.month:02d}-{at.day:02d} {at.hour:02d}:{at.minute:02d}:{at.second:02d}."
            f"{at.microsecond:06d}")


class Rows:
    """Reads of one store (and the write of a grant) through the database driver alone.

    `Rows.from_url(url)` for a `sqlite:///file` or `postgresql+psycopg://…` URL; a connection per call."""

    def __init__(self, url: str, *, path: Path | None = None, conninfo: str | None = None) -> None:
        self.url = url
        self.path = path
        self.conninfo = conninfo
        self._checked = False

    @classmethod
    def from_url(cls, url: str) -> Rows | None:
        """A reader of the store at `url`, or None when only the ORM reads such a store."""
        if (path := sqlite_file(url)) is not None:
            return cls(url, path=path)
        if (conninfo := postgres_conninfo(url)) is not None:
            return cls(url, conninfo=conninfo)
        return None

    # connections -------------------------------------------------------------
    def _absent(self) -> bool:
        """A SQLite store not created yet: look-ups find nothing and create nothing (as `Store`)."""
        return self.path is not None and not self.path.exists()

    def _connect(self, *, write: bool = False) -> Any:
        if self.path is not None:
            import sqlite3

            if not write and sqlite_read_only(self.path):
                return sqlite3.connect(read_only_uri(self.path), uri=True)
            conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")  # as the engine does on every connection
            return conn
        import psycopg

        assert self.conninfo is not None
        return psycopg.connect(self.conninfo)

    def _errors(self) -> tuple[type[Exception], ...]:
        if self.path is not None:
            import sqlite3

            return (sqlite3.Error,)
        import psycopg

        return (psycopg.Error,)

    def _columns(self, conn: Any) -> set[tuple[str, str]]:
        if self.path is not None:
            sql = ("SELECT m.name, p.name FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p "
                   "WHERE m.type = 'table'")
        else:
            sql = "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        return {(t, c) for t, c in conn.execute(sql).fetchall()}

    def _check(self) -> None:
        """Once: every table and column there, or the ORM prepares the store first (creating the tables,
        adding new columns, or raising the one clear error for a store it cannot open)."""
        if self._checked:
            return
        wanted = {(t.name, c) for t in TABLES for c in t.columns}
        try:
            with closing(self._connect()) as conn:
                ready = wanted <= self._columns(conn)
        except self._errors():
            ready = False
        if not ready:
            from state.store.core import StoreCore  # the ORM, for this once

            core = StoreCore.from_url(self.url)
            try:
                core.create()
            finally:
                core.engine.dispose()
        self._checked = True

    @contextmanager
    def _cursor(self, *, write: bool = False) -> Iterator[Callable[..., list[tuple[Any, ...]]]]:
        """`query(sql, params)` on one connection, `?` placeholders; a write commits at the end, in one transaction."""
        self._check()
        with closing(self._connect(write=write)) as conn:
            pg = self.path is None

            def query(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
                cur = conn.execute(sql.replace("?", "%s") if pg else sql, tuple(params))
                return cur.fetchall() if cur.description is not None else []

            if write and not pg:
                conn.execute("BEGIN IMMEDIATE")
            try:
                yield query
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    # runs --------------------------------------------------------------------
    def run(self, run_id: str) -> RunRecord:
        if self._absent():
            raise RunNotFound(f"no run {run_id!r} in the store (the store {self.path} does not exist)")
        with self._cursor() as q:
            rows = q(f"{RUN.select} WHERE run_id = ?", (run_id,))
        if not rows:
            raise RunNotFound(f"no run {run_id!r} in the store")
        return _run(rows[0])

    def has_run(self, run_id: str) -> bool:
        if self._absent():
            return False
        with self._cursor() as q:
            return bool(q(f"SELECT 1 FROM {RUN.name} WHERE run_id = ?", (run_id,)))

    def runs(self) -> list[RunRecord]:
        """Every run, the last updated first."""
        if self._absent():
            return []
        with self._cursor() as q:
            return [_run(r) for r in q(f"{RUN.select} ORDER BY updated_at DESC")]

    # what a report reads -------------------------------------------------------
    def evidence(self, run_id: str, *, include_inactive: bool = False) -> list[Evidence]:
        from state.evidence import Evidence

        with self._cursor() as q:
            rows = q(f"SELECT payload FROM {EVIDENCE.name} WHERE run_id = ?"
                     + ("" if include_inactive else " AND status = 'active'"), (run_id,))
        return sorted((Evidence.model_validate_json(p) for p, in rows), key=evidence_order)

    def reads(self, run_id: str) -> list[tuple[int, ReadRecord]]:
        from state.evidence import ReadRecord

        with self._cursor() as q:
            rows = q(f"SELECT round, payload FROM {READ.name} WHERE run_id = ? ORDER BY seq", (run_id,))
        return [(r, ReadRecord.model_validate_json(p)) for r, p in rows]

    def decision_history(self, run_id: str) -> list[tuple[int, ClaimDecision]]:
        from state.claims import ClaimDecision

        with self._cursor() as q:
            rows = q(f"SELECT round, payload FROM {DECISION.name} WHERE run_id = ? ORDER BY claim_id, revision",
                     (run_id,))
        return [(r, ClaimDecision.model_validate_json(p)) for r, p in rows]

    def decisions(self, run_id: str) -> dict[str, ClaimDecision]:
        """The latest decision of each claim."""
        return {d.claim_id: d for _round, d in self.decision_history(run_id)}

    def steps(self, run_id: str) -> list[Logged]:
        from state.steps import STEP as STEP_VALUE
        from state.steps import Logged

        with self._cursor() as q:
            rows = q(f"SELECT seq, at, payload FROM {STEP.name} WHERE run_id = ? ORDER BY seq", (run_id,))
        return [Logged(seq=s, at=_time(at), step=STEP_VALUE.validate_json(p)) for s, at, p in rows]

    def grants(self, run_id: str) -> list[Grant]:
        with self._cursor() as q:
            rows = q(f'SELECT seq, "by", groups, unlocks, answers, at FROM {GRANT.name} WHERE run_id = ? ORDER BY seq',
                     (run_id,))
        return [grant_of(seq, by, g, u, a, _time(at)) for seq, by, g, u, a, at in rows]

    # the one write -------------------------------------------------------------
    def add_grant(self, run_id: str, *, by: str, groups: list[str], unlocks: list[str], answers: list[str]) -> Grant:
        """Record a grant and add its groups to the run's, in one transaction (as `Store.add_grant`)."""
        at = utc_now()
        stored: Any = _sqlite_time(at) if self.path is not None else at
        with self._cursor(write=True) as q:
            got = q(f"SELECT grants FROM {RUN.name} WHERE run_id = ?" + ("" if self.path is not None else " FOR UPDATE"),
                    (run_id,))
            if not got:
                raise RunNotFound(f"no run {run_id!r} in the store")
            seq = q(f"SELECT COUNT(*) FROM {GRANT.name} WHERE run_id = ?", (run_id,))[0][0]
            g, u, a = json.dumps(sorted(groups)), json.dumps(sorted(unlocks)), json.dumps(sorted(answers))
            q(f'INSERT INTO {GRANT.name} (run_id, seq, "by", groups, unlocks, answers, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
              (run_id, seq, by, g, u, a, stored))
            q(f"UPDATE {RUN.name} SET grants = ?, updated_at = ? WHERE run_id = ?",
              (json.dumps(sorted(set(json.loads(got[0][0])) | set(groups))), stored, run_id))
        return grant_of(seq, by, g, u, a, at)


def _run(row: tuple[Any, ...]) -> RunRecord:
    values = dict(zip(RUN.columns, row, strict=True))
    for k in ("lease_until", "created_at", "updated_at"):
        values[k] = _time(values[k])
    return RunRecord(**values)
