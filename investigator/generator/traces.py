"""Traces as the OTLP file exporter writes them, or as Jaeger's API returns them.

One trace a minute through the services the scenario lets traces state, so that each
service's per-minute p95 duration follows its latency level (and no span carries an error:
error shares stay flat, the metrics carry error anomalies).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from .bundle import Bundle, Source
from .plan import Plan
from .scenario import Scenario

_OPS = ["GET /v1/items", "POST /v1/orders", "GET /v2/search", "POST /internal/sync", "GET /v1/state", "POST /v1/quotes"]


def _ns(dt: datetime) -> int:
    return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000


def _us(dt: datetime) -> int:
    return int(dt.timestamp()) * 1_000_000 + dt.microsecond


def _lat(sc: Scenario, name: str, t: datetime) -> float:
    b = sc.behaviour[name]
    on = b.onset is not None and t >= b.onset and b.lat_delta > 0
    return b.lat_base + (b.lat_delta if on else 0.0)


class _Span:
    __slots__ = ("trace", "span", "parent", "service", "name", "kind", "start", "end", "attrs")

    def __init__(self, trace: str, span: str, parent: str, service: str, name: str, kind: str,
                 start: datetime, end: datetime, attrs: dict[str, str]) -> None:
        self.trace, self.span, self.parent, self.service = trace, span, parent, service
        self.name, self.kind, self.start, self.end, self.attrs = name, kind, start, end, attrs


def _build(sc: Scenario, plan: Plan) -> list[list[_Span]]:
    r, ents = sc.rng, sc.topo.entities
    children: dict[str, list[str]] = {}
    for a, b in plan.trace_edges:
        children.setdefault(a, []).append(b)
    targets = {b for a, b in plan.trace_edges if ents[b].kind == "service"}
    roots = [a for a in children if a not in targets]
    t0 = sc.start - timedelta(minutes=sc.baseline)
    n = sc.baseline + int((sc.end - sc.start).total_seconds() // 60)
    traces: list[list[_Span]] = []
    for i in range(n):
        for root in roots:
            t = t0 + timedelta(minutes=i, seconds=r.randint(1, 50), microseconds=r.randint(0, 999_999))
            tid = f"{r.getrandbits(128):032x}"
            spans: list[_Span] = []

            def walk(svc: str, start: datetime, parent: str, budget: float | None, depth: int) -> None:
                dur = _lat(sc, svc, start) * r.uniform(0.985, 1.015)
                if budget is not None:
                    dur = min(dur, budget)
                sid = f"{r.getrandbits(64):016x}"
                end = start + timedelta(microseconds=int(dur * 1000))
                spans.append(_Span(tid, sid, parent, svc, r.choice(_OPS), "server", start, end,  # noqa: B023 - walk() runs within this iteration
                                   {"http.status_code": "200"}))
                offset = 0.3
                for c in children.get(svc, []):
                    cstart = start + timedelta(microseconds=int(offset * 1000))
                    if ents[c].kind == "service" and depth < 8:
                        walk(c, cstart, sid, max(0.1, dur - offset - 0.1), depth + 1)
                    else:
                        d = min(sc.behaviour[c].lat_base * r.uniform(0.9, 1.1), max(0.1, dur - offset - 0.1))
                        attr = "db.name" if ents[c].kind in ("database", "cache") else "messaging.destination"
                        spans.append(_Span(tid, f"{r.getrandbits(64):016x}", sid, svc,  # noqa: B023 - walk() runs within this iteration
                                           "SELECT" if ents[c].kind == "database" else "GET", "client", cstart,
                                           cstart + timedelta(microseconds=int(d * 1000)),
                                           {attr: c, "db.system": "postgresql" if ents[c].kind == "database" else "redis"}))
                    offset += 0.2

            walk(root, t, "", None, 0)
            traces.append(spans)
    return traces


def _otlp(traces: list[list[_Span]]) -> tuple[str, dict[tuple[str, str], str]]:
    lines = []
    quotes: dict[tuple[str, str], str] = {}
    for spans in traces:
        by_service: dict[str, list[_Span]] = {}
        for s in spans:
            by_service.setdefault(s.service, []).append(s)
        resources = []
        for svc, ss in by_service.items():
            out = []
            for s in ss:
                attrs = [{"key": k, "value": {"stringValue": v}} for k, v in s.attrs.items()]
                span = {"traceId": s.trace, "spanId": s.span}
                if s.parent:
                    span["parentSpanId"] = s.parent
                span.update({"name": s.name, "kind": 2 if s.kind == "server" else 3,
                             "startTimeUnixNano": str(_ns(s.start)), "endTimeUnixNano": str(_ns(s.end)),
                             "attributes": attrs, "status": {"code": 1}})
                out.append(span)
            resources.append({"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": svc}}]},
                              "scopeSpans": [{"scope": {"name": "io.opentelemetry.http"}, "spans": out}]})
        lines.append(json.dumps({"resourceSpans": resources}, separators=(",", ":")))
    text = "\n".join(lines) + "\n"
    return text, quotes


def _jaeger(traces: list[list[_Span]]) -> str:
    items = []
    for spans in traces:
        procs: dict[str, str] = {}
        out = []
        for s in spans:
            pid = procs.setdefault(s.service, f"p{len(procs) + 1}")
            tags = [{"key": "span.kind", "type": "string", "value": s.kind}] + \
                   [{"key": k, "type": "string", "value": v} for k, v in s.attrs.items()]
            refs = [{"refType": "CHILD_OF", "traceID": s.trace, "spanID": s.parent}] if s.parent else []
            out.append({"traceID": s.trace, "spanID": s.span, "operationName": s.name, "references": refs,
                        "startTime": _us(s.start), "duration": max(1, _us(s.end) - _us(s.start)), "tags": tags,
                        "logs": [], "processID": pid, "warnings": None})
        processes = {pid: {"serviceName": svc, "tags": []} for svc, pid in procs.items()}
        items.append(json.dumps({"traceID": spans[0].trace, "spans": out, "processes": processes, "warnings": None},
                                separators=(",", ":")))
    return '{"data":[\n' + ",\n".join(items) + '\n],"total":0,"limit":0,"offset":0,"errors":null}\n'


def write_traces(sc: Scenario, plan: Plan, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    if not plan.trace_edges:
        return
    traces = _build(sc, plan)
    if plan.trace_fmt == "otlp":
        text, _ = _otlp(traces)
        path = f"sources/traces/{sc.subject}-{sc.env}-otlp.jsonl"
    else:
        text = _jaeger(traces)
        path = f"sources/traces/{sc.subject}-{sc.env}-jaeger.json"
    services = sorted({a for a, _ in plan.trace_edges} | {b for _, b in plan.trace_edges
                                                           if sc.topo.entities[b].kind == "service"})
    src = bundle.add(Source(id=f"traces-{sc.env}-{plan.trace_fmt}", path=path, kind="trace", fmt=plan.trace_fmt or "",
                            service=services[0] if len(services) == 1 else "*", env=sc.env, text=text,
                            groups=groups_for("*"), explicit_format=sc.rng.random() < 0.5,
                            tags=[f"trace/{plan.trace_fmt}"]))
    ents = sc.topo.entities
    for a, b in plan.trace_edges:
        if ents[b].kind == "service":
            q = (f'{{"key":"service.name","value":{{"stringValue":"{b}"}}}}' if plan.trace_fmt == "otlp"
                 else f'"serviceName":"{b}"')
        else:
            attr = "db.name" if ents[b].kind in ("database", "cache") else "messaging.destination"
            q = (f'{{"key":"{attr}","value":{{"stringValue":"{b}"}}}}' if plan.trace_fmt == "otlp"
                 else f'{{"key":"{attr}","type":"string","value":"{b}"}}')
        bundle.anchor(f"hop:{a}:{b}", src, q)
