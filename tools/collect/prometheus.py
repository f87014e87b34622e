"""Range queries against a Prometheus server, written as `query_range` JSON sources with sidecars.

Each answer is kept byte for byte as the server sent it (the `prometheus` format of
tools/formats/metrics.py reads it), with a `.meta.yaml` sidecar naming the metric, service,
environment, unit and role, and the provenance a citation needs (query, range, step, server,
fetched-at, SHA-256 of the body). A transient fault (no connection, a timeout, HTTP 5xx or 429)
is retried with backoff; a query the server refuses (HTTP 400/422: bad PromQL) is not. Either
way a failure is returned as a value, never raised: the caller records it and goes on.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import httpx
import yaml
from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from state import Frozen, parse_duration
from state.collection import Fetched
from tools.collect.profile import PrometheusProfile
from tools.collect.urls import public_url

__all__ = ["MetricQuery", "PromClient", "QueryFailed", "alert_query", "plan_queries", "series_expression",
           "write_answers"]


class QueryFailed(Exception):
    """A query that got no usable answer (after the retries a transient fault gets)."""

    def __init__(self, reason: str, attempts: int) -> None:
        self.reason, self.attempts = reason, attempts
        super().__init__(reason)


class _Transient(Exception):
    """A fault worth another try."""


class MetricQuery(Frozen):
    name: str
    """The metric name the series get (sidecar `metric`)."""
    service: str
    environment: str
    role: str | None = None
    unit: str = ""
    expr: str
    """The PromQL run."""
    origin: str = "template"
    """`alert` for the alert's own expression, else `template`."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


class PromClient:
    """`/api/v1/query_range` with a timeout and bounded retries (transport injectable for tests)."""

    def __init__(self, base_url: str, *, timeout: float = 10.0, attempts: int = 3, wait: float = 0.2,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._url = base_url.rstrip("/")
        self.base_url = public_url(self._url)
        """The server as written into the case (without credentials)."""
        self.attempts, self.wait = attempts, wait
        self._http = httpx.Client(timeout=timeout, transport=transport, follow_redirects=True)

    def close(self) -> None:
        self._http.close()

    def query_range(self, expr: str, start: datetime, end: datetime, step: str) -> tuple[bytes, int]:
        """The body of a successful answer and the tries it took; QueryFailed otherwise."""
        tries = 0

        def once() -> bytes:
            nonlocal tries
            tries += 1
            try:
                resp = self._http.post(f"{self._url}/api/v1/query_range", data={
                    "query": expr, "start": f"{start.timestamp():.3f}", "end": f"{end.timestamp():.3f}",
                    "step": f"{parse_duration(step).total_seconds():g}"})
            except httpx.TimeoutException:
                raise _Transient("timed out") from None
            except httpx.TransportError as exc:
                raise _Transient(f"no answer ({type(exc).__name__}: {_short(str(exc))})") from None
            if resp.status_code >= 500 or resp.status_code == 429:
                raise _Transient(f"HTTP {resp.status_code}{_prom_error(resp.content)}")
            if resp.status_code != 200:
                raise QueryFailed(f"refused: HTTP {resp.status_code}{_prom_error(resp.content)}", tries)
            try:
                doc = json.loads(resp.content)
            except ValueError:
                raise QueryFailed("the answer is not JSON (is the URL a Prometheus server?)", tries) from None
            if not isinstance(doc, dict) or doc.get("status") != "success" or not isinstance(doc.get("data"), dict):
                raise QueryFailed(f"not a successful query_range answer{_prom_error(resp.content)}", tries)
            return resp.content

        retrying = Retrying(retry=retry_if_exception_type(_Transient), stop=stop_after_attempt(self.attempts),
                            wait=wait_exponential(multiplier=self.wait, max=5 * self.wait), reraise=False)
        try:
            return retrying(once), tries
        except RetryError as exc:
            last = exc.last_attempt.exception() if exc.last_attempt else None
            raise QueryFailed(f"{last or 'no answer'} (after {tries} attempts)", tries) from None


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _prom_error(body: bytes) -> str:
    try:
        doc = json.loads(body)
    except ValueError:
        return ""
    if isinstance(doc, dict) and doc.get("error"):
        return f": {doc.get('errorType', 'error')}: {_short(str(doc['error']))}"
    return ""


_CMP = re.compile(r"(>=|<=|==|!=|>|<)\s*(bool\s+)?")
_NUMBER = re.compile(r"\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")


def series_expression(expr: str) -> str:
    """An alert's expression without its threshold: `X > 0.5` → `X` (the series it compares),
    so the range shows the signal before and after it crossed, not only the points above."""
    depth, quote, i = 0, "", 0
    while i < len(expr):
        c = expr[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and (m := _CMP.match(expr, i)) and _NUMBER.fullmatch(expr[m.end():]):
            return expr[:i].strip()
        elif depth == 0 and (m := _CMP.match(expr, i)) and _NUMBER.fullmatch(expr[:i]):
            return expr[m.end():].strip()  # `0.5 < X`
        i += 1
    return expr.strip()


def _fill(template: str, **values: str) -> str:
    return re.sub(r"\{(service|environment|rate)\}", lambda m: values[m.group(1)], template)


def plan_queries(profile: PrometheusProfile, services: list[str], environment: str) -> list[MetricQuery]:
    """The profile's templates for each service."""
    return [MetricQuery(name=q.name, service=s, environment=environment, role=q.role, unit=q.unit,
                        expr=_fill(q.expr, service=s, environment=environment, rate=profile.rate))
            for s in services for q in profile.queries]


def alert_query(profile: PrometheusProfile, expression: str, service: str, environment: str) -> MetricQuery | None:
    """The alert's own expression (without its threshold), with the role its words suggest."""
    expr = series_expression(expression)
    if not expr:
        return None
    role = next((r for r in profile.alert_roles if re.search(r.pattern, expr, re.I)), None)
    return MetricQuery(name="alert_expression", service=service, environment=environment,
                       role=role.role if role else None, unit=role.unit if role else "", expr=expr, origin="alert")


def _file_name(q: MetricQuery) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"{q.service}.{q.environment}.{q.name}").strip("-.") + ".json"


def write_answers(client: PromClient, queries: list[MetricQuery], start: datetime, end: datetime, step: str,
                  folder: Path, rel_root: str = "prometheus",
                  progress: Callable[[str], None] | None = None) -> list[tuple[Fetched, str | None]]:
    """Run every query; write each answer with series and its sidecar under `folder/rel_root/`.
    Returns (what was fetched, the written file relative to `folder` or None) per query."""
    out: list[tuple[Fetched, str | None]] = []
    for q in queries:
        what = f"{q.name} of {q.service}" + (" (the alert's expression)" if q.origin == "alert" else "")
        base = {"collector": "prometheus", "what": what, "server": client.base_url, "query": q.expr, "start": start,
                "end": end, "step": step, "service": q.service}
        try:
            body, tries = client.query_range(q.expr, start, end, step)
        except QueryFailed as exc:
            out.append((Fetched(status="failed", error=exc.reason, attempts=exc.attempts, fetched_at=_now(), **base),
                        None))
            if progress:
                progress(f"prometheus: {what}: failed: {exc.reason}")
            continue
        at = _now()
        result = json.loads(body)["data"].get("result")
        if not result:
            out.append((Fetched(status="empty", attempts=tries, fetched_at=at, **base), None))
            continue
        rel = f"{rel_root}/{_file_name(q)}"
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        digest = hashlib.sha256(body).hexdigest()
        meta = {"metric": q.name, "service": q.service, "environment": q.environment,
                **({"unit": q.unit} if q.unit else {}), **({"role": q.role} if q.role else {}),
                "resolution": step,
                "provenance": {"server": client.base_url, "query": q.expr, "start": start.isoformat(),
                               "end": end.isoformat(), "step": step, "fetched_at": at.isoformat(),
                               "sha256": digest}}
        target.with_name(target.name + ".meta.yaml").write_text(
            "# Written by `investigator collect`: the answer of a Prometheus range query.\n"
            + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
        out.append((Fetched(status="ok", attempts=tries, fetched_at=at, sha256=digest, path=rel, **base), rel))
    return out
