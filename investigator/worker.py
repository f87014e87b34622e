"""Who drives a run: leases, take-overs, what a drive that stops early leaves, and the worker loop.

`Leases` is a frozen value over the store, the settings (lease length, attempts before a run is
set aside) and this process's worker id. `work` drives every run nobody holds, through whatever
`drive` it is given. It may import `state/`, `tools/` (process liveness), `graphs.deps` (the
`Lease` a loop renews), `investigator.config` and `investigator.failures`, nothing else of ours.
"""

from __future__ import annotations

import os
import signal
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from graphs.deps import StoreLease
from investigator.config import Settings
from investigator.failures import describe, store_error
from state.errors import Interrupted, InvestigatorError, RunFailed, RunStateError, StoreUnavailable
from state.progress import Progress
from state.store import RunRow, Store
from tools.builds import pid_alive


def new_worker_id() -> str:
    """This process's name on the leases it holds: host, pid and a random tag."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def dead_local_worker(owner: str) -> bool:
    """A lease holder on this host whose process is gone (a worker elsewhere is waited out)."""
    host, _, rest = owner.partition(":")
    pid = rest.split(":", 1)[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return not pid_alive(int(pid))


@dataclass(frozen=True)
class Leases:
    """The runs this worker holds in `store`."""

    store: Store
    settings: Settings
    worker_id: str
    progress: Progress

    @property
    def ttl(self) -> timedelta:
        return timedelta(seconds=self.settings.lease_seconds)

    def lease(self, run_id: str) -> StoreLease:
        """The lease a loop renews after every node."""
        return StoreLease(self.store, run_id, self.worker_id, self.ttl)

    def hold(self, run: RunRow, *, asked: bool = True) -> None:
        """Take the run's lease (or take it over from a dead worker on this host); a driver that
        vanished mid-run counts as a failed attempt, so a run that kills its worker is set aside too."""
        before = self.store.run(run.run_id)
        if self.store.acquire(run.run_id, self.worker_id, self.ttl):
            vanished = before.owner if before.owner not in (None, self.worker_id) else None
        else:
            held = self.store.run(run.run_id)
            if not (held.owner and dead_local_worker(held.owner)
                    and self.store.take_over(run.run_id, held.owner, self.worker_id, self.ttl)):
                raise RunStateError(f"run {run.run_id!r} is held by {held.owner} until {held.lease_until}")
            vanished = held.owner
        if vanished and before.status == "running":
            max_attempts = self.settings.max_attempts
            row = self.store.record_failure(run.run_id, self.worker_id,
                                            f"the worker {vanished} stopped while driving it (killed or lost)",
                                            max_attempts)
            self.progress(f"run {run.run_id}: taken over from {vanished}, which stopped while driving it"
                          + (f" (attempt {row.attempts} of {max_attempts})" if row else ""))
            if row is not None and row.status == "quarantined" and not asked:
                self.store.release(run.run_id, self.worker_id)
                raise RunStateError(f"run {run.run_id!r} set aside (quarantined) after {row.attempts} failed "
                                    f"attempts: {row.error}; `investigator resume {run.run_id}` tries it again")

    def release(self, run_id: str) -> None:
        """Let go of the run; when the store is gone, its lease runs out by itself."""
        try:
            self.store.release(run_id, self.worker_id)
        except Exception as exc:  # noqa: BLE001 - the store is gone; the lease runs out by itself
            self.progress(f"run {run_id}: could not release it ({describe(exc)}); "
                          f"its lease ends in {self.settings.lease_seconds:g} s")

    def failed(self, run_id: str, exc: Exception) -> None:
        """Record an error that stopped a drive; re-raise it as one clear line (RunFailed for a foreign one)."""
        line = describe(exc)
        max_attempts = self.settings.max_attempts
        try:
            row = self.store.record_failure(run_id, self.worker_id, line, max_attempts)
        except Exception:  # noqa: BLE001 - the store itself failed: nothing more can be written
            row = None
        if row is None:  # the lease was lost to another worker (theirs now), or the store is unreachable
            if isinstance(exc, InvestigatorError):
                return
            if store_error(exc):
                raise StoreUnavailable(f"run {run_id!r}: the store stopped answering ({line}); the run stays held "
                                       f"until its lease ends, then `resume` or a worker continues it") from exc
            raise RunFailed(f"run {run_id!r} stopped: {line}") from exc
        where = (f"recorded as {row.status} (attempt {row.attempts} of {max_attempts}"
                 + ("; `work` sets it aside" if row.status == "quarantined" else "")
                 + f"); `investigator resume {run_id}` retries it")
        if isinstance(exc, InvestigatorError):
            exc.add_note(f"— run {run_id!r} {where}")
            return
        raise RunFailed(f"run {run_id!r} failed: {line}; {where}") from exc

    def interrupted(self, run_id: str, exc: KeyboardInterrupt) -> None:
        """Record Ctrl-C or SIGTERM on the run and raise Interrupted."""
        signum = getattr(exc, "signum", signal.SIGINT)
        name = signal.Signals(signum).name
        try:
            self.store.record_interrupt(run_id, self.worker_id, f"interrupted by {name}")
        except Exception as err:  # noqa: BLE001 - the lease runs out by itself
            self.progress(f"run {run_id}: could not record the interrupt ({describe(err)})")
        raise Interrupted(f"run {run_id!r} interrupted ({name}); `investigator resume {run_id}` continues it "
                          f"from its last checkpoint", signum) from exc


def work(store: Store, drive: Callable[[RunRow], object], progress: Progress, *, once: bool = False,
         poll: float = 2.0, stop_after: float | None = None) -> list[str]:
    """Drive runs nobody holds (new, crashed, interrupted, failed, or whose worker died) until none
    is left. A run that fails is recorded and skipped (the others go on); after `max_attempts`
    failures in a row it is quarantined and no longer picked up."""
    done: list[str] = []
    started = time.monotonic()
    while True:
        # free, expired, or held by a worker on this host that is gone (taken over at once)
        for run_id in store.claimable(dead_local_worker):
            try:
                drive(store.run(run_id))
                done.append(run_id)
            except RunStateError as exc:  # taken by another worker meanwhile, set aside, or nothing to do
                progress(str(exc))
            except Exception as exc:  # recorded on the run; the queue moves on
                if isinstance(exc, StoreUnavailable) or store_error(exc):
                    raise  # the store itself is gone: no run can be driven
                progress(describe(exc))
        if once or (stop_after is not None and time.monotonic() - started > stop_after):
            return done
        time.sleep(poll)
