"""Metric parsers: one-series CSV with a sidecar, Grafana's CSV download, and Prometheus range-query JSON.

Every point keeps the offsets of its CSV line or of its `[ts, "value"]` pair, so the
onset or peak of a series can be cited exactly.
"""

from __future__ import annotations

import csv
import math
from datetime import datetime, timezone

from state.sources import MetricMeta
from state.telemetry import Series, SeriesPoint, Unparsed
from tools.formats import jsonspan
from tools.formats.logs import parse_time, zone
from tools.formats.shape import ContentError, expecting, listed


def _value(text: str) -> float | None:
    t = text.strip().strip('"')
    low = t.lower()
    if low in ("nan", "+nan", "-nan"):
        return math.nan
    if low in ("inf", "+inf", "infinity", "+infinity"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    try:
        return float(t)
    except ValueError:
        return None


def series_key(metric: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{metric}{{{inner}}}"


def parse_csv(text: str, meta: MetricMeta, default_metric: str, entity: str | None,
              tz: str | None = None) -> tuple[list[Series], list[Unparsed], str | None]:
    """(series, unparsed lines, header problem or None)."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return [], [], "a CSV header 'ts,value'"
    head = [h.strip().lower() for h in lines[0].strip().split(",")]
    if head[:2] != ["ts", "value"]:
        if grafana_columns(lines[0]) is None:
            return [], [], "a CSV header 'ts,value', or Grafana's 'Time,<series>…' or 'Series,Time,Value'"
        return (*parse_grafana(text, meta, entity, tz), None)
    default_tz = zone(tz)
    points: list[SeriesPoint] = []
    bad: list[Unparsed] = []
    offset = len(lines[0])
    for raw in lines[1:]:
        line = raw.rstrip("\r\n")
        end = offset + len(line)
        if line.strip():
            cells = line.split(",")
            ts: datetime | None = parse_time(cells[0].strip(), default_tz) if cells else None
            value = _value(cells[1]) if len(cells) > 1 else None
            if ts is None or value is None:
                bad.append(Unparsed(start=offset, end=end,
                                    reason="'ts,value' with a timestamp carrying a zone and a number"))
            else:
                points.append(SeriesPoint(start=offset, end=end, ts=ts, value=value))
        offset += len(raw)
    return [_csv_series(text, meta, meta.metric or default_metric, entity, points)], bad, None


def _csv_series(text: str, meta: MetricMeta, metric: str, entity: str | None, points: list[SeriesPoint]) -> Series:
    """A series of a CSV file: the whole file is its span; the sidecar says what it is about."""
    return Series(start=0, end=len(text.rstrip()), key=series_key(metric, {}), metric=metric,
                  entity=meta.service or entity, environment=meta.environment, unit=meta.unit, role=meta.role,
                  capacity=meta.capacity, points=tuple(points))


def grafana_columns(header: str) -> list[str] | None:
    """The columns of Grafana's "Download CSV" header (`"Time","<series>"…` joined by time, or
    `"Series","Time","Value"` one row a point), None for another header."""
    cells = [c.strip() for c in next(csv.reader([header.strip("\ufeff\r\n")]), [])]
    low = [c.lower() for c in cells]
    if low[:3] == ["series", "time", "value"] or (len(cells) >= 2 and low[0] == "time" and all(cells[1:])):
        return cells
    return None


def is_grafana(text: str) -> bool:
    """Whether a CSV file is Grafana's "Download CSV" (by its header line)."""
    return grafana_columns(text.split("\n", 1)[0]) is not None


def grafana_zoneless(text: str) -> bool:
    """Whether a Grafana CSV's first row is dated by a time without a zone (the browser's local time)."""
    lines = text.splitlines()
    cols = grafana_columns(lines[0]) if lines else None
    if cols is None or len(lines) < 2:
        return False
    at = [c.lower() for c in cols].index("time")
    cells = next(csv.reader([lines[1]]), [])
    cell = cells[at].strip() if len(cells) > at else ""
    return bool(cell) and parse_time(cell, None) is None and parse_time(cell, timezone.utc) is not None


def parse_grafana(text: str, meta: MetricMeta, entity: str | None, tz: str | None
                  ) -> tuple[list[Series], list[Unparsed]]:
    """Grafana's "Download CSV": a series per value column named by its header (or per `Series` value),
    its times as the browser wrote them — without a zone they are read in the manifest entry's
    `timezone`. The sidecar's metric names the series when there is one; else its own name does."""
    lines = text.splitlines(keepends=True)
    cols = grafana_columns(lines[0]) or []
    long = [c.lower() for c in cols[:3]] == ["series", "time", "value"]
    default_tz = zone(tz)
    points: dict[str, list[SeriesPoint]] = {} if long else {c: [] for c in cols[1:]}
    bad: list[Unparsed] = []
    offset = len(lines[0])
    for raw in lines[1:]:
        line = raw.rstrip("\r\n")
        end = offset + len(line)
        cells = next(csv.reader([line]), []) if line.strip() else []
        if cells:
            if long:  # (series, time, value) of one point
                named = [(cells[0], cells[1], cells[2])] if len(cells) >= 3 else []
            else:  # a time and a value per series column; an empty cell is a series without a point then
                named = [(c, cells[0], v) for c, v in zip(cols[1:], cells[1:]) if v.strip()]
            ts0 = parse_time(named[0][1].strip(), default_tz) if named else None
            got = [(name, _value(v)) for name, _t, v in named]
            if ts0 is None or not got or any(v is None for _n, v in got):
                bad.append(Unparsed(start=offset, end=end, reason=(
                    "a Grafana CSV row: a time (with a zone, or the manifest entry's timezone) and numbers")))
            else:
                for name, value in got:
                    assert value is not None
                    points.setdefault(name, []).append(SeriesPoint(start=offset, end=end, ts=ts0, value=value))
        offset += len(raw)
    one = len(points) == 1
    return [_csv_series(text, meta, meta.metric if one and meta.metric else name, entity, pts)
            for name, pts in points.items()], bad


_SERIES = ("a series object of a Prometheus query result (metric an object of label names to text; values a list of "
           "[timestamp, \"value\"] pairs, or value one pair)")


_RESULT = "a Prometheus query result (data an object whose result is a list of series objects)"


def parse_prometheus(text: str, meta: MetricMeta | None, default_metric: str,
                     entity: str | None) -> tuple[list[Series], list[Unparsed], str | None]:
    try:
        doc = jsonspan.parse(text)
    except jsonspan.JSONSpanError as exc:
        return [], [], f"Prometheus query JSON ({exc})"
    data = doc.get("data")
    if data is not None and data.kind != "object":
        raise ContentError("data", _RESULT, data.start)
    result = doc.path("data", "result")
    if result is None:
        return [], [], "Prometheus query JSON with data.result"
    out: list[Series] = []
    bad: list[Unparsed] = []
    for n, item in enumerate(listed(result, "data.result", _RESULT)):
        with expecting(f"data.result[{n}]", _SERIES, item.start):
            labels_node = item.get("metric")
            labels = {str(k): str(v) for k, v in (labels_node.value if labels_node else {}).items()}
            metric = labels.get("__name__") or (meta.metric if meta else None) or default_metric
            key = "values" if item.get("values") is not None else "value"
            values = item.get(key)
            pairs = listed(values, f"data.result[{n}].{key}", _SERIES)
            if values is not None and pairs and pairs[0].kind != "array":  # an instant vector: one pair
                pairs = [values]
            points: list[SeriesPoint] = []
            for pair in pairs:
                v = pair.value
                if not (isinstance(v, list) and len(v) == 2):
                    bad.append(Unparsed(start=pair.start, end=pair.end, reason="a [timestamp, \"value\"] pair"))
                    continue
                ts = parse_time(v[0], None)
                value = _value(str(v[1]))
                if ts is None or value is None:
                    bad.append(Unparsed(start=pair.start, end=pair.end, reason="a [timestamp, \"value\"] pair"))
                    continue
                points.append(SeriesPoint(start=pair.start, end=pair.end, ts=ts, value=value))
            out.append(Series(start=item.start, end=item.end, key=series_key(metric, labels), metric=metric,
                              labels={k: v for k, v in labels.items() if k != "__name__"},
                              entity=(meta.service if meta else None), environment=(meta.environment if meta else None),
                              unit=(meta.unit if meta else ""), role=(meta.role if meta else None),
                              capacity=(meta.capacity if meta else None), points=tuple(points)))
            _ = entity
    return out, bad, None


def detect(text: str) -> str:
    head = text.lstrip()[:200]
    return "prometheus" if head.startswith("{") else "csv"
