"""Trace parsers: OpenTelemetry OTLP JSON (collector file exporter) and Jaeger JSON.

Each span keeps the offsets of its JSON object. Attribute values are flattened to text.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from state.telemetry import TraceSpan, Unparsed, as_text
from tools.formats import jsonspan
from tools.formats.jsonspan import J
from tools.formats.shape import ContentError, expecting, listed

_OTLP = ("an OTLP resourceSpans entry (resource.attributes a list of {key, value} objects; scopeSpans a list of "
         "objects whose spans hold traceId, spanId, name text and startTimeUnixNano / endTimeUnixNano numbers)")
_JAEGER = ("a Jaeger trace object (processes an object of {serviceName}; spans objects with traceID, spanID and "
           "operationName text, startTime and duration numbers, tags and references lists of objects)")
_OTLP_EXPORT = "an OTLP JSON export object (resourceSpans a list), one a line or one in the file"
_JAEGER_EXPORT = "Jaeger JSON (data a list of trace objects, or the list itself)"
_OTLP_KIND = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer",
              "SPAN_KIND_INTERNAL": "internal", "SPAN_KIND_SERVER": "server", "SPAN_KIND_CLIENT": "client",
              "SPAN_KIND_PRODUCER": "producer", "SPAN_KIND_CONSUMER": "consumer"}


def _otlp_value(v: object) -> str:
    if isinstance(v, dict):
        for key in ("stringValue", "intValue", "doubleValue", "boolValue"):
            if key in v:
                return as_text(v[key])
        if "arrayValue" in v:
            return ",".join(_otlp_value(x) for x in (v["arrayValue"] or {}).get("values", []))
    return as_text(v)


def _attrs(items: list) -> dict[str, str]:
    out: dict[str, str] = {}
    for a in items or []:
        if isinstance(a, dict) and "key" in a:
            out[str(a["key"])] = _otlp_value(a.get("value"))
    return out


def _nanos(v: object) -> datetime | None:
    try:
        n = int(str(v))
    except (TypeError, ValueError):
        return None
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=n // 1000)


def _otlp_span(node: J, service: str) -> TraceSpan | None:
    s = node.value
    if not isinstance(s, dict):
        return None
    start, end = _nanos(s.get("startTimeUnixNano")), _nanos(s.get("endTimeUnixNano"))
    if start is None or end is None or not s.get("spanId"):
        return None
    status = s.get("status") or {}
    code = status.get("code")
    attrs = _attrs(s.get("attributes", []))
    return TraceSpan(start=node.start, end=node.end, trace_id=str(s.get("traceId", "")), span_id=str(s["spanId"]),
                     parent_id=str(s.get("parentSpanId") or "") or None, service=service, name=str(s.get("name", "")),
                     kind=_OTLP_KIND.get(s.get("kind"), "unknown"), start_ts=start,
                     duration_ms=max(0.0, (end - start).total_seconds() * 1000),
                     error=code in (2, "STATUS_CODE_ERROR") or attrs.get("error") == "true", attributes=attrs)


def parse_otlp(text: str) -> tuple[list[TraceSpan], list[Unparsed]]:
    docs, bad = jsonspan.parse_document_or_lines(text)
    spans: list[TraceSpan] = []
    unparsed = [Unparsed(start=s, end=e, reason=r) for s, e, r in bad]
    for doc in docs:
        if doc.get("resourceSpans") is None:  # not an object, or one without the list
            raise ContentError("<document>", _OTLP_EXPORT, doc.start)
        for n, rs in enumerate(listed(doc.get("resourceSpans"), "resourceSpans", _OTLP_EXPORT)):
            where = f"resourceSpans[{n}]"
            with expecting(where, _OTLP, rs.start):
                if rs.kind != "object":
                    raise ContentError(where, _OTLP, rs.start)
                resource = rs.get("resource")
                service = _attrs(resource.value.get("attributes", []) if resource else []).get("service.name", "")
                key = "scopeSpans" if rs.get("scopeSpans") is not None else "instrumentationLibrarySpans"
                for m, ss in enumerate(listed(rs.get(key), f"{where}.{key}", _OTLP)):
                    if ss.kind != "object":
                        raise ContentError(f"{where}.{key}[{m}]", _OTLP, ss.start)
                    for sp in listed(ss.get("spans"), f"{where}.{key}[{m}].spans", _OTLP):
                        got = _otlp_span(sp, service) if service else None
                        if got is None:
                            unparsed.append(Unparsed(start=sp.start, end=sp.end, reason="a span without service, id or times"))
                        else:
                            spans.append(got)
    return spans, unparsed


def parse_jaeger(text: str) -> tuple[list[TraceSpan], list[Unparsed]]:
    docs, bad = jsonspan.parse_document_or_lines(text)
    spans: list[TraceSpan] = []
    unparsed = [Unparsed(start=s, end=e, reason=r) for s, e, r in bad]
    for doc in docs:
        if doc.kind != "array" and doc.get("data") is None:  # not an object, or one without the list
            raise ContentError("<document>", _JAEGER_EXPORT, doc.start)
        traces = listed(doc.get("data"), "data", _JAEGER_EXPORT) if doc.kind == "object" else doc.items
        for n, tr in enumerate(traces):
            where = f"data[{n}]" if doc.kind == "object" else f"[{n}]"
            with expecting(where, _JAEGER, tr.start):
                if tr.kind != "object":
                    raise ContentError(where, _JAEGER, tr.start)
                procs = tr.get("processes")
                services = {k: (v.value or {}).get("serviceName", "") for k, v in (procs.keys.items() if procs else [])}
                for sp in listed(tr.get("spans"), f"{where}.spans", _JAEGER):
                    s = sp.value
                    if not isinstance(s, dict) or "startTime" not in s or "spanID" not in s:
                        unparsed.append(Unparsed(start=sp.start, end=sp.end, reason="a span without spanID or startTime"))
                        continue
                    tags = {str(t.get("key")): as_text(t.get("value")) for t in s.get("tags", []) if isinstance(t, dict)}
                    parent = next((r.get("spanID") for r in s.get("references", []) or []
                                   if isinstance(r, dict) and r.get("refType") == "CHILD_OF"), None)
                    service = services.get(s.get("processID"), "") or (s.get("process") or {}).get("serviceName", "")
                    if not service:
                        unparsed.append(Unparsed(start=sp.start, end=sp.end, reason="a span whose process has no serviceName"))
                        continue
                    kind = tags.get("span.kind", "unknown")
                    spans.append(TraceSpan(
                        start=sp.start, end=sp.end, trace_id=str(s.get("traceID", "")), span_id=str(s["spanID"]),
                        parent_id=str(parent) if parent else None, service=service, name=str(s.get("operationName", "")),
                        kind=kind if kind in ("server", "client", "internal", "producer", "consumer") else "unknown",
                        start_ts=datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=int(s["startTime"])),
                        duration_ms=float(s.get("duration", 0)) / 1000.0,
                        error=tags.get("error") in ("true", "1") or tags.get("otel.status_code") == "ERROR",
                        attributes=tags))
    return spans, unparsed


def detect(text: str) -> str:
    head = text[:4000]
    return "otlp" if "resourceSpans" in head else "jaeger"


def parse_traces(text: str, fmt: str) -> tuple[str, list[TraceSpan], list[Unparsed]]:
    fmt = detect(text) if fmt == "auto" else fmt
    spans, bad = parse_otlp(text) if fmt == "otlp" else parse_jaeger(text)
    return fmt, spans, bad
