"""The alert ledger: one row per distinct alert, in the investigation store; and one row per refused
post (its status, the field and what was expected: never the body, which may hold anything).

The row's primary key is the alert's dedupe key, so two posts of the same alert at once insert one
row: the database, not the process, decides which one was first (SQLite and PostgreSQL alike).
The row names the run that investigates the alert and follows it: queued -> running -> done | failed.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, select

from investigator.service.alerts import AlertIn
from state.errors import RunNotFound

STATES = ("queued", "running", "done", "failed")


def _now() -> datetime:
    return datetime.now(timezone.utc)


class AlertRow(SQLModel, table=True):
    __tablename__ = "svc_alert"
    key: str = Field(primary_key=True)
    run_id: str = Field(unique=True, index=True)
    fingerprint: str
    group_key: str = ""
    rule: str
    root: str
    """The name of the source root whose material the case was built from."""
    labels: str
    payload: str
    state: str = "queued"
    error: str | None = None
    repeats: int = 0
    """Posts of the same alert after the first (deduplicated)."""
    attempts: int = 0
    """Deliveries of the job to a worker (more than one after a redelivery or a retry)."""
    worker: str | None = None
    received_at: datetime = Field(default_factory=_now)
    queued_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None

    def label_map(self) -> dict[str, str]:
        return json.loads(self.labels)


class RefusalRow(SQLModel, table=True):
    """A post the door refused: what was wrong with it, never its content."""

    __tablename__ = "svc_refusal"
    id: int | None = Field(default=None, primary_key=True)
    status: int
    field: str
    expected: str
    received_at: datetime = Field(default_factory=_now)


def _aware(value: datetime | None) -> datetime | None:
    """SQLite gives naive datetimes back: they were written in UTC."""
    return value.replace(tzinfo=timezone.utc) if value is not None and value.tzinfo is None else value


class Ledger:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        SQLModel.metadata.create_all(engine, tables=[AlertRow.__table__, RefusalRow.__table__])

    def _get(self, s: Session, key: str) -> AlertRow | None:
        row = s.get(AlertRow, key)
        if row is not None:
            for f in ("received_at", "queued_at", "started_at", "finished_at"):
                setattr(row, f, _aware(getattr(row, f)))
        return row

    def admit(self, alert: AlertIn, root: str) -> tuple[AlertRow, bool]:
        """Record the alert; (row, True) the first time, (existing row, False) for a repeat."""
        row = AlertRow(key=alert.key, run_id=alert.run_id, fingerprint=alert.fingerprint, group_key=alert.group_key,
                       rule=alert.rule, root=root, labels=json.dumps(alert.labels, sort_keys=True),
                       payload=alert.payload)
        try:
            with Session(self.engine, expire_on_commit=False) as s:
                s.add(row)
                s.commit()
            return row, True
        except IntegrityError:
            pass
        with self.engine.begin() as conn:
            conn.execute(update(AlertRow).where(AlertRow.key == alert.key).values(repeats=AlertRow.repeats + 1))
        return self.get(alert.key), False

    def get(self, key: str) -> AlertRow:
        with Session(self.engine, expire_on_commit=False) as s:
            row = self._get(s, key)
        if row is None:
            raise RunNotFound(f"no alert {key!r} in the ledger")
        return row

    def by_run(self, run_id: str) -> AlertRow:
        with Session(self.engine, expire_on_commit=False) as s:
            key = s.exec(select(AlertRow.key).where(AlertRow.run_id == run_id)).first()
        if key is None:
            raise RunNotFound(f"no run {run_id!r} in the service")
        return self.get(key)

    def rows(self, *, states: tuple[str, ...] = STATES, limit: int | None = None) -> list[AlertRow]:
        with Session(self.engine, expire_on_commit=False) as s:
            q = select(AlertRow).where(AlertRow.state.in_(states)).order_by(AlertRow.received_at.desc())
            rows = list(s.exec(q.limit(limit) if limit else q))
        for row in rows:
            for f in ("received_at", "queued_at", "started_at", "finished_at"):
                setattr(row, f, _aware(getattr(row, f)))
        return rows

    def _set(self, key: str, *conds: Any, **values: Any) -> bool:
        with self.engine.begin() as conn:
            res = conn.execute(update(AlertRow).where(AlertRow.key == key, *conds).values(**values))
        return res.rowcount == 1

    def claim_publish(self, key: str) -> bool:
        """True for the one caller that is to publish the row's job (atomic: a repeat posted while the
        first post is publishing does not publish a second job)."""
        return self._set(key, AlertRow.state == "queued", AlertRow.queued_at.is_(None), queued_at=_now())

    def publish_failed(self, key: str) -> None:
        """The broker did not take the job: the row is published again (see `unpublished`)."""
        self._set(key, queued_at=None)

    def queued(self, key: str) -> None:
        """The job is with the broker again (a republish of a row whose job may have been lost)."""
        self._set(key, queued_at=_now())

    def unpublished(self) -> list[AlertRow]:
        return [r for r in self.rows(states=("queued",)) if r.queued_at is None]

    def begin(self, key: str, worker: str) -> AlertRow:
        """A worker took the job: one more attempt; a finished row is left as it is."""
        self._set(key, AlertRow.state.in_(("queued", "running")), state="running", worker=worker,
                  attempts=AlertRow.attempts + 1)
        self._set(key, AlertRow.started_at.is_(None), started_at=_now())
        return self.get(key)

    def retrying(self, key: str) -> None:
        """The engine will deliver the job again: the row waits in the queue (its attempts are kept)."""
        self._set(key, AlertRow.state == "running", state="queued")

    def finish(self, key: str, worker: str, *, error: str | None = None) -> None:
        self._set(key, state="failed" if error else "done", error=error, worker=worker, finished_at=_now())

    def refused(self, status: int, field: str, expected: str) -> None:
        """Record a refused post (the field and what was expected, as the answer said)."""
        with Session(self.engine) as s:
            s.add(RefusalRow(status=status, field=field[:200], expected=expected[:500]))
            s.commit()

    def refusals(self, limit: int = 500) -> list[RefusalRow]:
        with Session(self.engine, expire_on_commit=False) as s:
            rows = list(s.exec(select(RefusalRow).order_by(RefusalRow.id.desc()).limit(limit)))  # type: ignore[union-attr]
        for row in rows:
            row.received_at = _aware(row.received_at) or row.received_at
        return rows
