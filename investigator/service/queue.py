"""The queue engine: Celery, on RabbitMQ or Redis by URL, or on a SQLite file by default.

Engine policy, in one place:
  - a job is acknowledged only when it finished (`acks_late`), and a job whose worker process died
    is put back (`reject_on_worker_lost`); a worker that loses its broker connection (killed) has its
    unacknowledged job redelivered by the broker (RabbitMQ at once; Redis after `visibility_timeout`);
  - one job per worker process at a time (`prefetch_multiplier` 1), so a kill loses at most one;
  - hard and soft time limits per job (enforced by the prefork pool of `investigator worker`);
  - a job that meets its run held by another live worker is retried with backoff up to the lease; a job that
    cannot succeed (a bad case or settings, a value the code cannot take: `PERMANENT`) is failed at once with
    its reason; any other error is retried with backoff `task_retries` times, then the alert is marked failed.
The job itself only calls `Work.investigate` (work.py), which resumes a run from its checkpoint.
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

from celery import Celery
from celery.exceptions import SoftTimeLimitExceeded

from investigator.failures import describe
from investigator.service.settings import ServiceSettings
from state.errors import CaseError, ConfigError, RunNotFound

TASK = "investigator.investigate"
QUEUE = "investigations"
MAX_DELIVERIES = 12
"""A job delivered this often without finishing (it keeps killing its worker) is marked failed."""

PERMANENT: tuple[type[BaseException], ...] = (
    ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, UnicodeError, RecursionError)
"""Errors a job meets again on every delivery (a value the code cannot take, e.g. an alert dated year 1):
the alert is failed at once. Transient faults (a store or broker away: OSError, database errors) are retried."""

WORKER_ENV = "INVESTIGATOR_WORKER_NAME"
"""The name a worker records on the alerts it investigated (set by `investigator worker`, inherited by its pool)."""


def worker_work(settings: ServiceSettings) -> Any:
    """A Work for the settings: one Investigator (one embedding model, one store engine)."""
    from celery.utils.log import get_task_logger

    from investigator.runtime import Investigator
    from investigator.service.ledger import Ledger
    from investigator.service.work import Work

    log = get_task_logger(TASK)
    inv = Investigator(settings.runtime(), progress=lambda m: log.info("[investigator] %s", m))
    inv.store.create()  # the ledger's table lives in the store's database
    return Work(settings, inv, Ledger(inv.store.engine))


def make_celery(settings: ServiceSettings) -> Celery:
    if settings.local_queue:
        settings.home.mkdir(parents=True, exist_ok=True)  # the SQLite queue file lives there
    app = Celery("investigator", broker=settings.broker_url, set_as_current=False)
    options: dict[str, Any] = {}
    if settings.broker_url.startswith(("redis", "rediss")):
        options["visibility_timeout"] = int(settings.task_time_limit) + 60  # a redelivery never races a live job
    options.update(settings.broker_options)
    app.conf.update(
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        task_ignore_result=True, task_default_queue=QUEUE,
        task_time_limit=settings.task_time_limit, task_soft_time_limit=max(1.0, settings.task_time_limit - 30),
        broker_connection_retry_on_startup=True, broker_transport_options=options,
        worker_hijack_root_logger=False, worker_send_task_events=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )

    # shared=False: Celery otherwise hands this task (and the settings it closes over) to every app created
    # later in the process, which then runs it in place of its own (found by two apps in one test session)
    per_process: dict[int, Any] = {}  # this app's Work in this process (a prefork child makes its own)

    @app.task(name=TASK, bind=True, max_retries=settings.task_retries, acks_late=True, shared=False)
    def investigate(self, key: str) -> str:  # noqa: ANN001
        from investigator.service.work import RunBusy

        if os.getpid() not in per_process:
            per_process.clear()
            per_process[os.getpid()] = worker_work(settings)
        work = per_process[os.getpid()]
        worker = os.environ.get(WORKER_ENV) or f"{socket.gethostname()}:{os.getpid()}"
        try:
            row = work.ledger.get(key)
        except RunNotFound:  # a job from another store (e.g. a broker shared by two services): not ours
            work.progress(f"job for {key!r}: no such alert in this store; dropped")
            return "unknown"
        if row.attempts >= MAX_DELIVERIES:
            work.ledger.finish(key, worker, error=f"delivered {MAX_DELIVERIES} times without finishing")
            return "failed"
        try:
            return work.investigate(key, worker).state
        except RunBusy as exc:  # another live worker drives the run: wait out its lease, a bounded number of times
            if self.request.retries >= settings.task_retries + 10:
                work.ledger.finish(key, worker, error=f"run stayed held by another worker: {exc}")
                return "failed"
            # soon at first (the holder may be a worker killed a moment ago, still a zombie), then up to the lease
            work.ledger.retrying(key)
            raise self.retry(exc=exc, countdown=min(settings.lease_seconds, 2.0 * 2 ** self.request.retries),
                             max_retries=settings.task_retries + 10) from exc
        except (CaseError, ConfigError) as exc:  # the alert or its material cannot make a case: not retried
            work.ledger.finish(key, worker, error=str(exc))
            return "failed"
        except PERMANENT as exc:  # the same input fails the same way again: failed once, with its reason
            work.ledger.finish(key, worker, error=f"not retried (it would fail again): {describe(exc)}")
            return "failed"
        except SoftTimeLimitExceeded:
            work.ledger.finish(key, worker, error=f"timed out after {settings.task_time_limit:g} s")
            return "failed"
        except Exception as exc:
            if self.request.retries >= settings.task_retries:
                work.ledger.finish(key, worker, error=describe(exc))
                return "failed"
            work.ledger.retrying(key)
            raise self.retry(exc=exc, countdown=min(60, 2 ** self.request.retries)) from exc

    app.investigate = investigate  # type: ignore[attr-defined]
    return app


def publish(app: Celery, key: str) -> None:
    app.send_task(TASK, args=[key], queue=QUEUE)


class InProcessWorker:
    """The single-machine default: one Celery worker (solo pool) on a thread of the service process."""

    def __init__(self, app: Celery, name: str | None = None) -> None:
        name = name or f"in-process@{socket.gethostname()}"
        os.environ.setdefault(WORKER_ENV, name)
        self.controller = app.WorkController(
            pool_cls="solo", concurrency=1, loglevel="WARNING", queues=[QUEUE],
            hostname=name,
            without_heartbeat=True, without_mingle=True, without_gossip=True)
        self.app = app
        self.thread = threading.Thread(target=self._run, name="investigator-worker", daemon=True)

    def _run(self) -> None:
        # the solo pool runs a job under the current app of the thread that runs it: this thread, and the
        # worker's timer thread for a retry with a countdown (the process default: one service a process)
        self.app.set_default()
        self.app.set_current()
        self.controller.start()

    def start(self) -> "InProcessWorker":
        self.thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self.controller.stop(in_sighandler=False)
        self.thread.join(timeout)


def run_worker(settings: ServiceSettings, *, concurrency: int = 1, name: str | None = None,
               loglevel: str = "INFO") -> int:
    """`investigator worker`: a Celery worker process (prefork pool: time limits are enforced)."""
    app = make_celery(settings)
    name = name or f"investigator-{os.getpid()}@{socket.gethostname()}"
    os.environ[WORKER_ENV] = name
    worker = app.Worker(pool_cls="prefork", concurrency=concurrency, queues=[QUEUE], loglevel=loglevel, hostname=name,
                        without_mingle=True, without_gossip=True, optimization="fair")
    worker.start()
    return worker.exitcode or 0
