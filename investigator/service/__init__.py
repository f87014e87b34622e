"""`investigator serve` / `investigator worker`: alerts in by webhook, investigations out.

    settings   what the service is configured with (YAML file and/or environment)
    alerts     Alertmanager webhook payloads and plain JSON alerts -> one value per alert
    ledger     the alert ledger in the store: one row per distinct alert (a unique key), its run
    work       one investigation for one ledger row (init, start or resume, report)
    queue      the Celery app, the task and its engine policy (acks late, retries, time limits)
    app        the ASGI app: webhook, JSON API and the runs / report pages
"""
