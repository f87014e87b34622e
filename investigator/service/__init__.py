"""`investigator serve` / `investigator worker`: alerts in by webhook, investigations out.

    settings   what the service is configured with (YAML file and/or environment)
    alerts     Alertmanager webhook payloads and plain JSON alerts -> one value per alert
    ledger     the alert ledger in the store: one row per distinct alert (a unique key), its run
    work       one investigation for one ledger row (init, start or resume, report)
    queue      the Celery app, the task and its engine policy (acks late, retries, time limits)
    app        the ASGI app: webhook, JSON API and the runs / report pages
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from state.lazy import lazy_exports

if TYPE_CHECKING:
    from investigator.service.app import create_app
    from investigator.service.queue import run_worker
    from investigator.service.settings import load_settings

__all__ = ["create_app", "load_settings", "run_worker"]

_EXPORTS = {"create_app": "app", "load_settings": "settings", "run_worker": "queue"}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
