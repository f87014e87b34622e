"""The authoritative investigation store: SQLModel tables on SQLite (default) or PostgreSQL.

Rows hold small indexed columns plus the frozen value as JSON, so the pydantic models stay
the contract and the tables stay simple. Every write is idempotent on a deterministic key:
re-running a step after a crash adds nothing twice.
"""

from __future__ import annotations

import errno
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import case, event, func, inspect, or_, update
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError
from sqlmodel import Field, Session, SQLModel, col, create_engine, select

from state._base import Frozen
from state.claims import ClaimDecision, StopReason
from state.errors import ConfigError, RunNotFound, StoreUnavailable
from state.evidence import BridgeOccurrence, Evidence, ReadRecord
from state.steps import STEP, Logged, Step


def _now() -> datetime:
    return datetime.now(timezone.utc)


class RunRow(SQLModel, table=True):
    __tablename__ = "inv_run"
    run_id: str = Field(primary_key=True)
    case_id: str
    case_dir: str
    retrieval: str
    principal_id: str
    status: str = "running"
    """running | stopped | awaiting_permission | interrupted (Ctrl-C, SIGTERM) | failed (an
    unexpected error; `error` says which) | quarantined (failed `max_attempts` times in a row:
    `work` sets it aside, `resume` still tries it)"""
    stop_kind: str | None = None
    stop_json: str | None = None
    rounds_limit: int
    reads_limit: int
    rounds_used: int = 0
    reads_used: int = 0
    watermark: str = ""
    grants: str = "[]"
    """JSON list of groups granted to the principal for this run (pause-for-permission)."""
    owner: str | None = None
    """The worker holding the run; nobody else drives it while the lease lasts."""
    lease_until: datetime | None = None
    planner: str | None = None
    """Who picked the actions: `deterministic` (also when None) or `llm`; a resume rebuilds the same."""
    planner_json: str | None = None
    """The LLM planner's endpoint, model, token budget and timeout as JSON (never an API key)."""
    error: str | None = None
    """The last error that stopped a drive of the run (one line, never source text)."""
    left_out: str | None = None
    """JSON list of `{source_id, path, problem}`: untrusted sources whose content could not be read
    when the run was last driven, left out of the case (their text was never read)."""
    attempts: int | None = 0
    """Drives in a row that ended in an error or whose worker vanished (reset by a clean drive)."""
    created_at: datetime = Field(default_factory=_now)
    updated_at: datetime = Field(default_factory=_now)


class EvidenceRow(SQLModel, table=True):
    __tablename__ = "inv_evidence"
    run_id: str = Field(primary_key=True)
    evidence_id: str = Field(primary_key=True)
    key: str = Field(index=True)
    source_id: str = Field(index=True)
    status: str = "active"
    round: int = 0
    payload: str


class ReadRow(SQLModel, table=True):
    __tablename__ = "inv_read"
    run_id: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    seq: int
    round: int
    source_id: str
    outcome: str
    payload: str


class DecisionRow(SQLModel, table=True):
    __tablename__ = "inv_claim_decision"
    run_id: str = Field(primary_key=True)
    claim_id: str = Field(primary_key=True)
    revision: int = Field(primary_key=True)
    round: int
    state: str
    verdict: str
    payload: str


def _paused(payload: str) -> bool:
    """A recorded step that paused its run (a decide that stopped `awaiting_permission`)."""
    return '"awaiting_permission"' in payload and STEP.validate_json(payload).node == "decide"


class StepRow(SQLModel, table=True):
    __tablename__ = "inv_step"
    run_id: str = Field(primary_key=True)
    round: int = Field(primary_key=True)
    node: str = Field(primary_key=True)
    seq: int
    payload: str
    at: datetime = Field(default_factory=_now)


class GrantRow(SQLModel, table=True):
    """One permission grant answering a paused run: who, when, which groups, what it unlocked."""

    __tablename__ = "inv_grant"
    run_id: str = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    by: str
    groups: str
    """JSON list of the groups granted."""
    unlocks: str = "[]"
    """JSON list of the sources the principal could read only after this grant."""
    answers: str = "[]"
    """JSON list of the paused run's denied sources this grant made readable."""
    at: datetime = Field(default_factory=_now)


class Grant(Frozen):
    """A grant as read back (the API model of GrantRow)."""

    seq: int
    by: str
    groups: tuple[str, ...]
    unlocks: tuple[str, ...]
    answers: tuple[str, ...]
    at: datetime


class BridgeRow(SQLModel, table=True):
    __tablename__ = "inv_bridge"
    run_id: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    entity: str = Field(index=True)
    evidence_id: str
    payload: str


DRIVABLE = ("running", "failed", "interrupted")
"""Statuses of runs a worker may pick up (when nobody holds them)."""


def shown_url(url: str) -> str:
    """A store URL as it may be printed (no password)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return re.sub(r"(?<=[/:])([^/@:]*):[^/@]*@", r"\1:***@", url)


def sqlite_path(url: str) -> Path | None:
    """The database file of a `sqlite:///…` URL (None for in-memory or another kind of store)."""
    if not url.startswith("sqlite"):
        return None
    db = make_url(url).database
    return Path(db) if db and db != ":memory:" else None


def sqlite_read_only(path: Path | None) -> bool:
    """An existing SQLite file this process may read but not write (nor create its WAL files beside):
    a workspace on a read-only mount, or one owned by another account, is still there to be read."""
    if path is None or not path.is_file():
        return False
    try:
        with open(path, "r+b"):  # opened for writing, nothing written: the file's mode and the mount decide
            pass
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return True
        raise
    return not os.access(path.parent, os.W_OK)


def read_only_uri(path: Path) -> str:
    """A SQLite URI for a store nobody may write: without locks or WAL files (`immutable`) when its last
    writer closed it (its write-ahead log is folded in); read-only through the log when one is left."""
    wal = path.with_name(path.name + "-wal")
    left = wal.exists() and wal.stat().st_size > 0
    return f"file:{path.resolve()}?mode=ro" if left else f"file:{path.resolve()}?immutable=1"


def make_engine(url: str) -> Engine:
    """An engine for a store URL (`sqlite:///path.db` or `postgresql+psycopg://…`); a SQLite file that
    cannot be written is opened read-only (listing and showing runs work, a write is refused)."""
    path = sqlite_path(url) if url.startswith("sqlite") else None
    if path is not None and sqlite_read_only(path):
        return create_engine(f"sqlite:///{read_only_uri(path)}&uri=true")
    if url.startswith("sqlite"):
        try:
            engine = create_engine(url, connect_args={"timeout": 30})
        except ArgumentError as exc:
            raise ConfigError(f"store URL {shown_url(url)!r}: expected sqlite:///path/to/file.db ({exc})") from None

        @event.listens_for(engine, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    if url.startswith("postgresql"):
        try:
            return create_engine(url, pool_pre_ping=True)
        except (ArgumentError, ValueError) as exc:
            raise ConfigError(f"store URL {shown_url(url)!r}: expected postgresql+psycopg://user@host:port/database "
                              f"({type(exc).__name__})") from None
    raise ConfigError(f"store URL {url!r}: expected sqlite:///… or postgresql+psycopg://…")


def _unreachable(exc: DBAPIError) -> bool:
    """A store that cannot be opened at all (no server, no database, not a database file): no retry helps."""
    text = str(exc.orig).lower()
    return exc.connection_invalidated or any(w in text for w in (
        "connection", "does not exist", "unable to open", "not a database", "authentication"))


class Store:
    """Reads and writes one investigation store. The engine is passed in.

    A SQLite store whose file does not exist yet is created (with its folder) by the first
    write, never by a look-up: asking for an unknown run leaves nothing behind."""

    def __init__(self, engine: Engine, path: Path | None = None) -> None:
        self.engine = engine
        self.path = path
        self._ready = "mode=ro" in str(engine.url) or "immutable=1" in str(engine.url)  # read-only: tables as they are
        if path is not None and not path.exists():
            self._check_folder()
        else:
            self._prepare()

    def _check_folder(self) -> None:
        """A SQLite file that is still to be created must have a folder it can be created in."""
        assert self.path is not None
        for parent in self.path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ConfigError(f"store {shown_url(str(self.engine.url))}: cannot create the folder "
                                      f"{self.path.parent} ({parent} is a file)")
                return

    def _prepare(self) -> None:
        """Create the tables (and a SQLite file's folder) once; a store that cannot be opened is one clear error."""
        if self._ready:
            return
        where = shown_url(str(self.engine.url))
        if self.path is not None:
            if self.path.is_dir():
                raise ConfigError(f"store {where}: expected a database file, found a folder")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"store {where}: cannot create the folder {self.path.parent} "
                                  f"({exc.strerror or type(exc).__name__})") from None
        for attempt in range(10):  # two first runs on a fresh store create its tables at once:
            try:  # the one that finds a table made meanwhile checks again
                SQLModel.metadata.create_all(self.engine)
                self._add_missing_columns()
                break
            except DBAPIError as exc:
                if attempt < 9 and not _unreachable(exc):
                    time.sleep(0.05 * (attempt + 1))
                    continue
                detail = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
                if self.path is not None:
                    raise ConfigError(f"store {where}: cannot open it as a SQLite database ({detail})") from None
                raise StoreUnavailable(f"store {where}: {detail}") from None
        self._ready = True

    def create(self) -> None:
        """Create the database (a SQLite file and its folder) and the tables now, for a writer that
        uses `engine` directly; the store's own methods create it on their first write."""
        self._prepare()

    def _absent(self) -> bool:
        """A SQLite store not created yet: look-ups find nothing and create nothing."""
        return not self._ready and self.path is not None and not self.path.exists()

    def _add_missing_columns(self) -> None:
        """Columns added to a table after a store was created are added to it (nullable, no data)."""
        insp = inspect(self.engine)
        for table in SQLModel.metadata.sorted_tables:
            if not table.name.startswith("inv_") or not insp.has_table(table.name):
                continue
            have = {c["name"] for c in insp.get_columns(table.name)}
            for column in table.columns:
                if column.name not in have:
                    kind = column.type.compile(dialect=self.engine.dialect)
                    with self.engine.begin() as conn:
                        conn.exec_driver_sql(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}')

    @classmethod
    def from_url(cls, url: str) -> "Store":
        return cls(make_engine(url), sqlite_path(url))

    @contextmanager
    def _session(self) -> Iterator[Session]:
        self._prepare()
        with Session(self.engine, expire_on_commit=False) as session:
            yield session
            session.commit()

    # runs -----------------------------------------------------------------
    def create_run(self, row: RunRow) -> RunRow:
        """Insert the run; when a row with its id exists already (also one inserted by another
        process a moment before), that row is returned instead: compare its owner to know."""
        try:
            with self._session() as s:
                existing = s.get(RunRow, row.run_id)
                if existing is not None:
                    return existing
                s.add(row)
        except IntegrityError:
            return self.run(row.run_id)
        return row

    def run(self, run_id: str) -> RunRow:
        if self._absent():
            raise RunNotFound(f"no run {run_id!r} in the store (the store {self.path} does not exist)")
        with self._session() as s:
            row = s.get(RunRow, run_id)
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in the store")
        return row

    def has_run(self, run_id: str) -> bool:
        if self._absent():
            return False
        with self._session() as s:
            return s.get(RunRow, run_id) is not None

    def runs(self) -> list[RunRow]:
        if self._absent():
            return []
        with self._session() as s:
            return list(s.exec(select(RunRow).order_by(col(RunRow.updated_at).desc())))

    def update_run(self, run_id: str, **fields: Any) -> RunRow:
        with self._session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise RunNotFound(f"no run {run_id!r} in the store")
            for k, v in fields.items():
                setattr(row, k, v)
            row.updated_at = _now()
            s.add(row)
        return row

    # leases: one worker drives a run at a time ----------------------------
    def acquire(self, run_id: str, owner: str, ttl: timedelta) -> bool:
        """Take the run if it is free, expired or already ours (one atomic UPDATE)."""
        now = _now()
        self._prepare()
        with self.engine.begin() as conn:
            res = conn.execute(
                update(RunRow).where(col(RunRow.run_id) == run_id)
                .where(or_(col(RunRow.owner).is_(None), col(RunRow.owner) == owner, col(RunRow.lease_until) < now))
                .values(owner=owner, lease_until=now + ttl))
        return res.rowcount == 1

    def take_over(self, run_id: str, dead_owner: str, owner: str, ttl: timedelta) -> bool:
        """Take a run from a worker known to be dead (only if it still holds it)."""
        with self.engine.begin() as conn:
            res = conn.execute(update(RunRow).where(col(RunRow.run_id) == run_id, col(RunRow.owner) == dead_owner)
                               .values(owner=owner, lease_until=_now() + ttl))
        return res.rowcount == 1

    def renew(self, run_id: str, owner: str, ttl: timedelta) -> bool:
        """Extend our lease; False when another worker has taken the run over."""
        now = _now()
        with self.engine.begin() as conn:
            res = conn.execute(update(RunRow).where(col(RunRow.run_id) == run_id, col(RunRow.owner) == owner)
                               .values(lease_until=now + ttl))
        return res.rowcount == 1

    def set_left_out(self, run_id: str, left_out: list[dict[str, str]]) -> None:
        """Record which untrusted sources this drive of the run left out (see `RunRow.left_out`)."""
        with self.engine.begin() as conn:
            conn.execute(update(RunRow).where(col(RunRow.run_id) == run_id).values(left_out=json.dumps(left_out)))

    def release(self, run_id: str, owner: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(RunRow).where(col(RunRow.run_id) == run_id, col(RunRow.owner) == owner)
                         .values(owner=None, lease_until=None))

    def claimable(self, gone: Callable[[str], bool] = lambda _owner: False) -> list[str]:
        """Runs still to drive (running, crashed, interrupted or failed, never quarantined) that nobody
        holds: the lease is free or expired, or `gone(owner)` says its holder is known to be dead.
        Oldest first."""
        if self._absent():
            return []
        now = _now()
        free = or_(col(RunRow.owner).is_(None), col(RunRow.lease_until) < now)
        with self._session() as s:
            rows = s.exec(select(RunRow.run_id, RunRow.owner, free).where(col(RunRow.status).in_(DRIVABLE))
                          .order_by(col(RunRow.created_at))).all()
        return [run_id for run_id, owner, is_free in rows if is_free or (owner is not None and gone(owner))]

    def record_failure(self, run_id: str, owner: str, error: str, max_attempts: int) -> RunRow | None:
        """A drive held by `owner` ended in `error`: one more failed attempt; `failed`, or `quarantined`
        once `max_attempts` drives in a row failed. A finished (`stopped`) run keeps its status.
        None when `owner` no longer holds the run (another worker took it over: it is theirs)."""
        attempts = func.coalesce(RunRow.attempts, 0) + 1
        with self.engine.begin() as conn:
            res = conn.execute(
                update(RunRow).where(col(RunRow.run_id) == run_id, col(RunRow.owner) == owner, col(RunRow.status) != "stopped")
                .values(attempts=attempts, error=error[:500], updated_at=_now(),
                        status=case((attempts >= max_attempts, "quarantined"), else_="failed")))
        return self.run(run_id) if res.rowcount == 1 else None

    def record_interrupt(self, run_id: str, owner: str, note: str) -> bool:
        """A drive held by `owner` was interrupted mid-run: `interrupted`, resumable (not an attempt)."""
        with self.engine.begin() as conn:
            res = conn.execute(
                update(RunRow).where(col(RunRow.run_id) == run_id, col(RunRow.owner) == owner, col(RunRow.status) == "running")
                .values(status="interrupted", error=note[:500], updated_at=_now()))
        return res.rowcount == 1

    def set_stop(self, run_id: str, stop: StopReason | None, status: str) -> None:
        self.update_run(
            run_id,
            status=status,
            stop_kind=stop.kind if stop else None,
            stop_json=stop.model_dump_json() if stop else None,
        )

    # evidence -------------------------------------------------------------
    def evidence_by_key(self, run_id: str, key: str) -> Evidence | None:
        with self._session() as s:
            row = s.exec(select(EvidenceRow).where(EvidenceRow.run_id == run_id, EvidenceRow.key == key)).first()
        return _evidence(row) if row else None

    def next_evidence_number(self, run_id: str, floor: int) -> int:
        with self._session() as s:
            ids = s.exec(select(EvidenceRow.evidence_id).where(EvidenceRow.run_id == run_id)).all()
        nums = [int(i[1:]) for i in ids if i[1:].isdigit()]
        return max([floor, *nums]) + 1

    def add_evidence(self, run_id: str, key: str, ev: Evidence) -> Evidence:
        """Insert unless evidence with the same key exists; returns the stored value."""
        with self._session() as s:
            row = s.exec(select(EvidenceRow).where(EvidenceRow.run_id == run_id, EvidenceRow.key == key)).first()
            if row is not None:
                return _evidence(row)
            s.add(EvidenceRow(run_id=run_id, evidence_id=ev.id, key=key, source_id=ev.source_id,
                              status=ev.status, round=ev.round, payload=ev.model_dump_json()))
        return ev

    def replace_evidence(self, run_id: str, ev: Evidence) -> None:
        with self._session() as s:
            row = s.get(EvidenceRow, (run_id, ev.id))
            if row is None:
                raise RunNotFound(f"no evidence {ev.id} in run {run_id}")
            row.payload, row.status = ev.model_dump_json(), ev.status
            s.add(row)

    def evidence(self, run_id: str, *, include_inactive: bool = False) -> list[Evidence]:
        with self._session() as s:
            q = select(EvidenceRow).where(EvidenceRow.run_id == run_id)
            if not include_inactive:
                q = q.where(EvidenceRow.status == "active")
            rows = list(s.exec(q))
        out = [_evidence(r) for r in rows]
        return sorted(out, key=lambda e: (e.round, _num(e.id), e.id))

    # reads ----------------------------------------------------------------
    def add_read(self, run_id: str, key: str, round_: int, read: ReadRecord) -> bool:
        """Record a read once; returns False when the key was already recorded."""
        with self._session() as s:
            if s.get(ReadRow, (run_id, key)) is not None:
                return False
            seq = len(s.exec(select(ReadRow.key).where(ReadRow.run_id == run_id)).all())
            s.add(ReadRow(run_id=run_id, key=key, seq=seq, round=round_, source_id=read.source_id,
                          outcome=read.outcome, payload=read.model_dump_json()))
        return True

    def reads(self, run_id: str) -> list[tuple[int, ReadRecord]]:
        with self._session() as s:
            rows = list(s.exec(select(ReadRow).where(ReadRow.run_id == run_id).order_by(col(ReadRow.seq))))
        return [(r.round, ReadRecord.model_validate_json(r.payload)) for r in rows]

    # decisions ------------------------------------------------------------
    def add_decision(self, run_id: str, round_: int, decision: ClaimDecision) -> bool:
        """Append a revision when the decision changed; history is never overwritten."""
        with self._session() as s:
            rows = list(s.exec(select(DecisionRow).where(
                DecisionRow.run_id == run_id, DecisionRow.claim_id == decision.claim_id
            ).order_by(col(DecisionRow.revision))))
            if rows and rows[-1].payload == decision.model_dump_json():
                return False
            if rows and rows[-1].round == round_ and round_ > 0:
                # the same round re-decided (a re-run after a crash): keep one revision per round
                rows[-1].payload, rows[-1].state, rows[-1].verdict = (
                    decision.model_dump_json(), decision.state, decision.verdict)
                s.add(rows[-1])
                return True
            s.add(DecisionRow(run_id=run_id, claim_id=decision.claim_id, revision=len(rows), round=round_,
                              state=decision.state, verdict=decision.verdict, payload=decision.model_dump_json()))
        return True

    def decisions(self, run_id: str) -> dict[str, ClaimDecision]:
        """The latest decision of each claim."""
        latest: dict[str, ClaimDecision] = {}
        for _round, d in self.decision_history(run_id):
            latest[d.claim_id] = d
        return latest

    def decision_history(self, run_id: str) -> list[tuple[int, ClaimDecision]]:
        with self._session() as s:
            rows = list(s.exec(select(DecisionRow).where(DecisionRow.run_id == run_id)
                               .order_by(col(DecisionRow.claim_id), col(DecisionRow.revision))))
        return [(r.round, ClaimDecision.model_validate_json(r.payload)) for r in rows]

    # steps ----------------------------------------------------------------
    def add_step(self, run_id: str, step: Step) -> None:
        """Record a node's step; the same node in the same round overwrites (a re-run after a crash),
        except a step that paused the run: the pause is history, and what ran after the resume is
        recorded after it (under `decide+1`, `decide+2`…), so the timeline shows both."""
        text = STEP.dump_json(step).decode()
        with self._session() as s:
            key: str = step.node
            n = 0
            row = s.get(StepRow, (run_id, step.round, key))
            while row is not None and _paused(row.payload) and row.payload != text:
                n += 1
                key = f"{step.node}+{n}"
                row = s.get(StepRow, (run_id, step.round, key))
            if row is not None:
                row.payload = text
                s.add(row)
                return
            seq = len(s.exec(select(StepRow.node).where(StepRow.run_id == run_id)).all())
            s.add(StepRow(run_id=run_id, round=step.round, node=key, seq=seq, payload=text))

    def steps(self, run_id: str) -> list[Logged]:
        with self._session() as s:
            rows = list(s.exec(select(StepRow).where(StepRow.run_id == run_id).order_by(col(StepRow.seq))))
        return [Logged(seq=r.seq, at=r.at, step=STEP.validate_json(r.payload)) for r in rows]

    # grants ---------------------------------------------------------------
    def add_grant(self, run_id: str, *, by: str, groups: list[str], unlocks: list[str], answers: list[str]) -> Grant:
        """Record a grant and add its groups to the run's, in one transaction."""
        with self._session() as s:
            run = s.get(RunRow, run_id)
            if run is None:
                raise RunNotFound(f"no run {run_id!r} in the store")
            seq = len(s.exec(select(GrantRow.seq).where(GrantRow.run_id == run_id)).all())
            row = GrantRow(run_id=run_id, seq=seq, by=by, groups=json.dumps(sorted(groups)),
                           unlocks=json.dumps(sorted(unlocks)), answers=json.dumps(sorted(answers)))
            s.add(row)
            run.grants = json.dumps(sorted(set(json.loads(run.grants)) | set(groups)))
            run.updated_at = _now()
            s.add(run)
        return _grant(row)

    def grants(self, run_id: str) -> list[Grant]:
        with self._session() as s:
            rows = list(s.exec(select(GrantRow).where(GrantRow.run_id == run_id).order_by(col(GrantRow.seq))))
        return [_grant(r) for r in rows]

    # bridges and hops -----------------------------------------------------
    def add_bridge(self, run_id: str, key: str, occ: BridgeOccurrence) -> None:
        with self._session() as s:
            if s.get(BridgeRow, (run_id, key)) is None:
                s.add(BridgeRow(run_id=run_id, key=key, entity=occ.entity, evidence_id=occ.evidence_id,
                                payload=occ.model_dump_json()))

    def bridges(self, run_id: str) -> list[BridgeOccurrence]:
        with self._session() as s:
            rows = list(s.exec(select(BridgeRow).where(BridgeRow.run_id == run_id).order_by(BridgeRow.key)))
        return [BridgeOccurrence.model_validate_json(r.payload) for r in rows]


def _num(evidence_id: str) -> int:
    return int(evidence_id[1:]) if evidence_id[1:].isdigit() else 0


def _grant(row: GrantRow) -> Grant:
    at = row.at if row.at.tzinfo is not None else row.at.replace(tzinfo=timezone.utc)
    return Grant(seq=row.seq, by=row.by, groups=tuple(json.loads(row.groups)), unlocks=tuple(json.loads(row.unlocks)),
                 answers=tuple(json.loads(row.answers)), at=at)


def _evidence(row: EvidenceRow) -> Evidence:
    return Evidence.model_validate_json(row.payload)
