"""The ASGI app (FastAPI on Starlette): the webhook, the JSON API and the pages.

    POST /api/alerts             Alertmanager webhook payload, an alert object or a list (also /webhook)
    GET  /api/runs               every alert's run: state, stop reason, verdicts, timings
    GET  /api/runs/{run_id}      one run, with its root cause when it has one
    GET  /api/runs/{run_id}/report   the report (JSON, the same as `investigator show --json`)
    GET  /api/refusals           posts the door refused: status, field, what was expected (never the body)
    GET  /                       the runs page
    GET  /runs/{run_id}          the report page: the same page as report.html, under a bar with the run's state
    GET  /runs/{run_id}/report.html  the full report as `investigator run` writes it (report.html)
    GET  /healthz
"""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from celery import Celery
from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from investigator.runtime import Investigator
from investigator.service.alerts import AlertError, parse_body
from investigator.service.ledger import AlertRow, Ledger
from investigator.service.queue import InProcessWorker, make_celery, publish
from investigator.service.settings import ServiceSettings
from state.errors import ConfigError, RunNotFound
from state.store import RunRow

TEMPLATES = Path(__file__).parent / "templates"


class Service:
    """What the routes need: the ledger, the store (through the Investigator) and the queue."""

    def __init__(self, settings: ServiceSettings, celery: Celery | None = None) -> None:
        self.settings = settings
        self.inv = Investigator(settings.runtime(), progress=lambda _m: None)
        self.inv.store.create()  # the ledger's table lives in the store's database
        self.ledger = Ledger(self.inv.store.engine)
        self.celery = celery or make_celery(settings)

    def submit(self, body: bytes) -> tuple[int, dict[str, Any]]:
        parsed = parse_body(body, dedupe=self.settings.dedupe)
        roots = []  # all mapped, or none admitted
        for i, a in enumerate(parsed.alerts):
            try:
                roots.append(self.settings.root_for(a.labels)[0])
            except ConfigError as exc:  # named as the label it is about
                raise AlertError(f"alerts[{i}].labels.{self.settings.sources.by}", str(exc)) from None
        out, unsent = [], []
        for alert, root in zip(parsed.alerts, roots):
            row, new = self.ledger.admit(alert, root)
            if self.ledger.claim_publish(row.key):  # the first post, or a repeat of one whose publish failed
                try:
                    publish(self.celery, row.key)
                except Exception as exc:  # noqa: BLE001 - the broker is down: recorded, queued again later
                    self.ledger.publish_failed(row.key)
                    unsent.append(f"{row.run_id}: {type(exc).__name__}: {exc}")
            out.append({"key": row.key, "run_id": row.run_id, "duplicate": not new, "state": row.state,
                        "links": _links(row.run_id)})
        body_out = {"accepted": sum(not a["duplicate"] for a in out), "duplicates": sum(a["duplicate"] for a in out),
                    "resolved": parsed.resolved, "alerts": out}
        if unsent:
            body_out["error"] = ("broker unreachable; the alerts are recorded and are queued again when the "
                                 "service restarts or the alert is sent again: " + "; ".join(unsent))
            return 503, body_out
        return 202, body_out

    def requeue(self, *, all_pending: bool) -> int:
        """Publish again what the broker may not hold: unpublished rows, or (single machine, no other worker)
        every unfinished row, since the SQLite queue forgets a job taken by a process that died."""
        rows = self.ledger.rows(states=("queued", "running")) if all_pending else self.ledger.unpublished()
        for row in rows:
            publish(self.celery, row.key)
            self.ledger.queued(row.key)
        return len(rows)

    def run_row(self, run_id: str) -> RunRow | None:
        return self.inv.store.run(run_id) if self.inv.store.has_run(run_id) else None

    def summaries(self, rows: list[AlertRow]) -> list[dict[str, Any]]:
        """Each alert's run: its state, stop reason and latest verdicts (three queries for the lot)."""
        from sqlmodel import Session, select

        from state.store import DecisionRow

        ids = [r.run_id for r in rows]
        with Session(self.inv.store.engine) as s:
            runs = {r.run_id: r for r in s.exec(select(RunRow).where(RunRow.run_id.in_(ids)))} if ids else {}
            verdicts: dict[str, dict[str, tuple[int, str]]] = {}
            if runs:
                q = select(DecisionRow.run_id, DecisionRow.claim_id, DecisionRow.revision, DecisionRow.verdict)
                for run_id, claim_id, revision, verdict in s.exec(q.where(DecisionRow.run_id.in_(list(runs)))):
                    have = verdicts.setdefault(run_id, {}).get(claim_id)
                    if have is None or revision > have[0]:
                        verdicts[run_id][claim_id] = (revision, verdict)
        return [_summary(r, runs.get(r.run_id), {c: v for c, (_n, v) in sorted(verdicts.get(r.run_id, {}).items())})
                for r in rows]

    def summary(self, row: AlertRow) -> dict[str, Any]:
        return self.summaries([row])[0]

    def detail(self, run_id: str) -> dict[str, Any]:
        row = self.ledger.by_run(run_id)
        out = self.summary(row)
        if self.run_row(run_id) is not None:
            report = self.inv.report(run_id)
            out["claims"] = [{"id": c.id, "kind": c.kind, "verdict": c.verdict, "statement": c.statement,
                              "root_cause": c.root_cause.model_dump(mode="json") if c.root_cause else None,
                              "missing": list(c.missing)} for c in report.claims]
        return out


def _summary(row: AlertRow, run: RunRow | None, verdicts: dict[str, str]) -> dict[str, Any]:
    stop = json.loads(run.stop_json) if run and run.stop_json else None
    took = (row.finished_at - row.received_at).total_seconds() if row.finished_at and row.state == "done" else None
    return {
        "run_id": row.run_id, "state": row.state, "run_status": run.status if run else None,
        "stop": {"kind": stop.get("kind"), "detail": stop.get("detail", "")} if stop else None,
        "verdicts": verdicts, "error": row.error,
        "alert": {"key": row.key, "rule": row.rule, "labels": row.label_map(), "fingerprint": row.fingerprint,
                  "group_key": row.group_key, "source_root": row.root, "repeats": row.repeats},
        "attempts": row.attempts, "worker": row.worker,
        "received_at": _iso(row.received_at), "started_at": _iso(row.started_at),
        "finished_at": _iso(row.finished_at), "seconds_to_report": took, "links": _links(row.run_id),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _links(run_id: str) -> dict[str, str]:
    return {"api": f"/api/runs/{run_id}", "report": f"/api/runs/{run_id}/report", "page": f"/runs/{run_id}",
            "html": f"/runs/{run_id}/report.html"}


def _service_bar(run: dict[str, Any]) -> dict[str, Any]:
    """What the report page adds above the report: the run's state, timings and links (the full report)."""
    took = run["seconds_to_report"]
    return {"run_id": run["run_id"], "state": run["state"], "error": run["error"],
            "received": (run["received_at"] or "")[:19].replace("T", " ") + " UTC",
            "took": f"{took:.1f} s" if took is not None else "", "attempts": run["attempts"], "worker": run["worker"],
            "full": run["links"]["html"], "json": run["links"]["report"], "api": run["links"]["api"]}


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it is longer than `limit`: a declared length is checked
    before reading, and the bytes are counted while they arrive (a chunked body declares none)."""
    too_big = AlertError("body", f"a body of at most {limit} bytes (max_body_bytes)", status=413)
    declared = request.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > limit:
        raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def create_app(settings: ServiceSettings, *, in_process_worker: bool | None = None,
               celery: Celery | None = None) -> FastAPI:
    """The app; with the SQLite queue (the default) it runs one worker on a thread of its own process."""
    svc = Service(settings, celery)
    run_worker = settings.local_queue if in_process_worker is None else in_process_worker
    pages = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))

    @asynccontextmanager
    async def lifespan(_app: FastAPI):  # noqa: ANN202
        worker = InProcessWorker(svc.celery).start() if run_worker else None
        try:
            svc.requeue(all_pending=run_worker and settings.local_queue)
        except Exception as exc:  # noqa: BLE001 - the broker is down: the next start or repeat publishes them
            print(f"[investigator] could not publish waiting alerts again ({type(exc).__name__}: {exc})",
                  file=sys.stderr, flush=True)
        try:
            yield
        finally:
            if worker is not None:
                worker.stop()

    app = FastAPI(title="Investigator", summary="Alerts in, investigations out", lifespan=lifespan)
    app.state.service = svc

    @app.exception_handler(AlertError)
    async def _bad_alert(_r: Request, exc: AlertError) -> JSONResponse:
        from starlette.concurrency import run_in_threadpool

        try:  # every refused post is named in the ledger; recording it never changes the answer
            await run_in_threadpool(svc.ledger.refused, exc.status, exc.field, exc.expected)
        except Exception as rec:  # noqa: BLE001 - a store that is away: the refusal is still answered
            print(f"[investigator] could not record a refusal ({type(rec).__name__})", file=sys.stderr, flush=True)
        return _error(exc.status, str(exc), field=exc.field, expected=exc.expected)

    @app.exception_handler(ConfigError)
    async def _no_root(_r: Request, exc: ConfigError) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(RunNotFound)
    async def _missing(_r: Request, exc: RunNotFound) -> JSONResponse:
        return _error(404, str(exc))

    @app.post("/api/alerts", status_code=202)
    @app.post("/webhook", status_code=202, include_in_schema=False)
    async def alerts(request: Request) -> JSONResponse:
        import hmac

        from starlette.concurrency import run_in_threadpool

        if settings.token is not None:
            scheme, _, given = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), settings.token):
                return _error(401, "authorization: expected `Bearer <token>` with the service's token")

        status, out = await run_in_threadpool(svc.submit, await _read_body(request, settings.max_body_bytes))
        return JSONResponse(out, status_code=status)

    @app.get("/api/runs")
    def runs(state: str | None = None, limit: int = Query(default=500, ge=1, le=5000)) -> dict[str, Any]:
        states = tuple(state.split(",")) if state else ("queued", "running", "done", "failed")
        return {"runs": svc.summaries(svc.ledger.rows(states=states, limit=limit))}

    @app.get("/api/refusals")
    def refusals(limit: int = Query(default=500, ge=1, le=5000)) -> dict[str, Any]:
        """Posts the door refused, newest first: status, field, what was expected, when."""
        return {"refusals": [{"status": r.status, "field": r.field, "expected": r.expected,
                              "received_at": _iso(r.received_at)} for r in svc.ledger.refusals(limit)]}

    @app.get("/api/runs/{run_id}")
    def run(run_id: str) -> dict[str, Any]:
        return svc.detail(run_id)

    @app.get("/api/runs/{run_id}/report")
    def report(run_id: str) -> Response:
        row = svc.ledger.by_run(run_id)
        if svc.run_row(run_id) is None:
            return _error(409, f"run {run_id!r} is {row.state}: no report yet" + (f" ({row.error})" if row.error else ""))
        return Response(svc.inv.report(run_id).to_json(), media_type="application/json")

    @app.get("/healthz")
    def health() -> dict[str, Any]:
        return {"ok": True, "queue": settings.broker_url.split("://", 1)[0], "in_process_worker": run_worker}

    @app.get("/", response_class=HTMLResponse)
    def runs_page() -> HTMLResponse:
        rows = svc.summaries(svc.ledger.rows(limit=500))
        return HTMLResponse(pages.get_template("runs.html").render(runs=rows))

    def _report_page(run_id: str, *, bar: bool, not_yet: int) -> HTMLResponse:
        """The report.html renderer for a run that has started (with the service bar when `bar`);
        404 for an unknown run, the queued/failed page with status `not_yet` before it starts."""
        from investigator.report_html import render_html

        try:
            row = svc.ledger.by_run(run_id)
        except RunNotFound as exc:
            return HTMLResponse(pages.get_template("missing.html").render(message=str(exc)), status_code=404)
        run = svc.summary(row)
        if svc.run_row(run_id) is None:
            return HTMLResponse(pages.get_template("run.html").render(run=run), status_code=not_yet)
        return HTMLResponse(render_html(svc.inv.report(run_id), service=_service_bar(run) if bar else None))

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(run_id: str) -> HTMLResponse:
        """The report page: the one renderer of report.html, under a bar with the run's state and links."""
        return _report_page(run_id, bar=True, not_yet=200)

    @app.get("/runs/{run_id}/report.html", response_class=HTMLResponse)
    def report_html(run_id: str) -> HTMLResponse:
        """The full report, the same page `investigator run` writes as report.html."""
        return _report_page(run_id, bar=False, not_yet=409)

    return app
