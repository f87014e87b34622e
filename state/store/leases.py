"""Leases: one worker drives a run at a time, and what its drive ended in (failure, interrupt).

Every change of holder is one atomic UPDATE that names the holder it expects, so two workers
never both believe they hold a run. Leases are held on runs: `Leases` extends `Runs`.
Imports the tables and the runs of this package.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import case, func, or_, update
from sqlmodel import col, select

from state.store.runs import Runs
from state.store.tables import RunRow, utc_now

DRIVABLE = ("running", "failed", "interrupted")
"""Statuses of runs a worker may pick up (when nobody holds them)."""


class Leases(Runs):
    """Taking, renewing and releasing runs; finding the ones nobody holds; recording how a drive ended."""

    def acquire(self, run_id: str, owner: str, ttl: timedelta) -> bool:
        """Take the run if it is free, expired or already ours (one atomic UPDATE)."""
        now = utc_now()
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
                               .values(owner=owner, lease_until=utc_now() + ttl))
        return res.rowcount == 1

    def renew(self, run_id: str, owner: str, ttl: timedelta) -> bool:
        """Extend our lease; False when another worker has taken the run over."""
        now = utc_now()
        with self.engine.begin() as conn:
            res = conn.execute(update(RunRow).where(col(RunRow.run_id) == run_id, col(RunRow.owner) == owner)
                               .values(lease_until=now + ttl))
        return res.rowcount == 1

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
        now = utc_now()
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
                .values(attempts=attempts, error=error[:500], updated_at=utc_now(),
                        status=case((attempts >= max_attempts, "quarantined"), else_="failed")))
        return self.run(run_id) if res.rowcount == 1 else None

    def record_interrupt(self, run_id: str, owner: str, note: str) -> bool:
        """A drive held by `owner` was interrupted mid-run: `interrupted`, resumable (not an attempt)."""
        with self.engine.begin() as conn:
            res = conn.execute(
                update(RunRow).where(col(RunRow.run_id) == run_id, col(RunRow.owner) == owner, col(RunRow.status) == "running")
                .values(status="interrupted", error=note[:500], updated_at=utc_now()))
        return res.rowcount == 1
