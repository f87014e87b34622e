"""Metric exports of hosted monitoring, as their CLIs and APIs write them.

- `cloudwatch`: `aws cloudwatch get-metric-data` (`MetricDataResults[]`: `Label`, parallel
  `Timestamps[]` and `Values[]`, newest first) and `aws cloudwatch get-metric-statistics`
  (`Label`, `Datapoints[]` of `{Timestamp, Average|Maximum|Sum|…, Unit}`).
- `datadog`: the v1 query API (`/api/v1/query`: `series[]` with `metric`, `scope`, `unit`,
  `pointlist` of `[epoch_ms, value]`).

Every point keeps the offsets of the text that holds its value (a `get-metric-data` value sits in
its own array, its time at the same index of `Timestamps`), so it can be cited exactly; the series
is about the manifest's (or sidecar's) service, as for the other metric formats.
"""

from __future__ import annotations

from datetime import datetime, timezone

from state.sources import MetricMeta
from state.telemetry import Series, SeriesPoint, Unparsed
from tools.formats import jsonspan
from tools.formats.logs import parse_time
from tools.formats.shape import expecting, listed

FORMATS = ("cloudwatch", "datadog")

_STATISTICS = ("Average", "Maximum", "Sum", "Minimum", "SampleCount", "p99", "p95", "p90", "p50")
_CW = ("a CloudWatch export: MetricDataResults (Label, Timestamps and Values of the same length) from "
       "get-metric-data, or Datapoints (Timestamp and a statistic) from get-metric-statistics")
_DD = "a Datadog query result: series, each with a metric and a pointlist of [epoch milliseconds, value]"
_UNITS = {"Percent": "%", "Milliseconds": "ms", "Seconds": "s", "Microseconds": "us", "Count/Second": "rps",
          "Bytes": "bytes", "Count": "count"}


def detect(text: str) -> str | None:
    """`cloudwatch` or `datadog` when the JSON has the shape one of them writes, else None."""
    head = text.lstrip()[:4000]
    if not head.startswith("{"):
        return None
    if '"MetricDataResults"' in head or ('"Datapoints"' in head and '"Label"' in head):
        return "cloudwatch"
    if '"pointlist"' in text and '"series"' in head:
        return "datadog"
    return None


def _number(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def _series(meta: MetricMeta | None, name: str, start: int, end: int, unit: str, points: list[SeriesPoint],
            labels: dict[str, str] | None = None) -> Series:
    from tools.formats.metrics import series_key

    metric = (meta.metric if meta and meta.metric else None) or name
    return Series(start=start, end=end, key=series_key(metric, labels or {}), metric=metric, labels=labels or {},
                  entity=meta.service if meta else None, environment=meta.environment if meta else None,
                  unit=(meta.unit if meta and meta.unit else unit), role=meta.role if meta else None,
                  capacity=meta.capacity if meta else None, points=tuple(sorted(points, key=lambda p: p.ts)))


def _document(text: str) -> jsonspan.J | str:
    """The parsed JSON with its offsets, or why it is no JSON."""
    try:
        return jsonspan.parse(text)
    except jsonspan.JSONSpanError as exc:
        return str(exc)


def parse_cloudwatch(text: str, meta: MetricMeta | None, default_metric: str
                     ) -> tuple[list[Series], list[Unparsed], str | None]:
    doc = _document(text)
    if isinstance(doc, str):
        return [], [], f"CloudWatch JSON ({doc})"
    out: list[Series] = []
    bad: list[Unparsed] = []
    for n, item in enumerate(listed(doc.get("MetricDataResults"), "MetricDataResults", _CW)):
        with expecting(f"MetricDataResults[{n}]", _CW, item.start):
            label = item.get("Label") or item.get("Id")
            name = str(label.value) if label is not None and label.value else default_metric
            stamps = listed(item.get("Timestamps"), f"MetricDataResults[{n}].Timestamps", _CW)
            values = listed(item.get("Values"), f"MetricDataResults[{n}].Values", _CW)
            if len(stamps) != len(values):
                bad.append(Unparsed(start=item.start, end=item.end, reason="Timestamps and Values of the same length"))
                continue
            points = []
            for ts_node, v_node in zip(stamps, values):
                ts, v = parse_time(ts_node.value, timezone.utc), _number(v_node.value)
                if ts is None or v is None:
                    bad.append(Unparsed(start=v_node.start, end=v_node.end, reason="a timestamp and a number"))
                    continue
                points.append(SeriesPoint(start=v_node.start, end=v_node.end, ts=ts, value=v))
            out.append(_series(meta, name, item.start, item.end, "", points))
    if doc.get("Datapoints") is not None:
        label = doc.get("Label")
        name = str(label.value) if label is not None and label.value else default_metric
        points, unit = [], ""
        for n, dp in enumerate(listed(doc.get("Datapoints"), "Datapoints", _CW)):
            with expecting(f"Datapoints[{n}]", _CW, dp.start):
                d = dp.value
                ts = parse_time(d.get("Timestamp"), timezone.utc)
                stat = next((s for s in _STATISTICS if s in d), None) or next(
                    (k for k in d.get("ExtendedStatistics", {}) or {}), None)
                v = _number(d.get(stat) if stat in d else (d.get("ExtendedStatistics") or {}).get(stat)) if stat else None
                if ts is None or v is None:
                    bad.append(Unparsed(start=dp.start, end=dp.end, reason="a Timestamp and a statistic"))
                    continue
                unit = _UNITS.get(str(d.get("Unit", "")), unit)
                points.append(SeriesPoint(start=dp.start, end=dp.end, ts=ts, value=v))
        out.append(_series(meta, name, doc.start, doc.end, unit, points))
    if not out:
        return [], bad, _CW
    return out, bad, None


def parse_datadog(text: str, meta: MetricMeta | None, default_metric: str
                  ) -> tuple[list[Series], list[Unparsed], str | None]:
    doc = _document(text)
    if isinstance(doc, str):
        return [], [], f"Datadog query JSON ({doc})"
    out: list[Series] = []
    bad: list[Unparsed] = []
    for n, item in enumerate(listed(doc.get("series"), "series", _DD)):
        with expecting(f"series[{n}]", _DD, item.start):
            v = item.value
            name = str(v.get("metric") or v.get("expression") or default_metric)
            labels = dict(t.split(":", 1) for t in (v.get("tag_set") or []) if isinstance(t, str) and ":" in t)
            if not labels and isinstance(v.get("scope"), str):
                labels = dict(t.split(":", 1) for t in v["scope"].split(",") if ":" in t)
            unit_obj = (v.get("unit") or [None])[0] if isinstance(v.get("unit"), list) else None
            unit = str(unit_obj.get("short_name") or unit_obj.get("name") or "") if isinstance(unit_obj, dict) else ""
            points = []
            for pair in listed(item.get("pointlist"), f"series[{n}].pointlist", _DD):
                p = pair.value
                ms = _number(p[0]) if isinstance(p, list) and len(p) == 2 else None
                val = _number(p[1]) if isinstance(p, list) and len(p) == 2 else None
                if ms is None or val is None:
                    bad.append(Unparsed(start=pair.start, end=pair.end, reason="an [epoch milliseconds, value] pair"))
                    continue
                points.append(SeriesPoint(start=pair.start, end=pair.end,
                                          ts=datetime.fromtimestamp(ms / 1000, timezone.utc), value=val))
            out.append(_series(meta, name, item.start, item.end, unit, points, labels))
    if not out:
        return [], bad, _DD
    return out, bad, None
