"""Metric exports of hosted monitoring read as exported: CloudWatch and Datadog JSON.

A user who collects from AWS or Datadog saves what the CLI or API prints; each point keeps the
offsets of the text that holds its value, so an onset can be cited."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from state.sources import MetricMeta
from tools.detect import detect
from tools.formats.cloudmetrics import parse_cloudwatch, parse_datadog

UTC = timezone.utc
GET_METRIC_DATA = json.dumps({"MetricDataResults": [
    {"Id": "readiops", "Label": "ReadIOPS", "StatusCode": "Complete",
     "Timestamps": ["2026-03-13T07:02:00+00:00", "2026-03-13T07:01:00+00:00", "2026-03-13T07:00:00+00:00"],
     "Values": [2998.5, 3000.0, 410.25]},
    {"Id": "lat", "Label": "ReadLatency", "Timestamps": ["2026-03-13T07:01:00Z"], "Values": [0.04]}],
    "Messages": []}, indent=2)
GET_METRIC_STATISTICS = json.dumps({"Label": "CPUUtilization", "Datapoints": [
    {"Timestamp": "2026-03-13T07:01:00+00:00", "Average": 97.5, "Unit": "Percent"},
    {"Timestamp": "2026-03-13T07:00:00+00:00", "Average": 31.0, "Unit": "Percent"}]}, indent=2)
DATADOG = json.dumps({"status": "ok", "res_type": "time_series", "series": [
    {"metric": "trace.http.request.hits", "scope": "env:prod,service:rates", "tag_set": ["env:prod", "service:rates"],
     "unit": [{"family": "network", "name": "request", "short_name": "req/s"}, None],
     "pointlist": [[1773385260000.0, 62.0], [1773385320000.0, 831.5]]}]}, indent=1)


def test_get_metric_data_gives_one_series_per_result_oldest_point_first_each_citing_its_value():
    series, bad, problem = parse_cloudwatch(GET_METRIC_DATA, MetricMeta(service="pg-shared-01"), "src")
    assert problem is None and bad == []
    iops, lat = series
    assert (iops.metric, iops.entity, len(iops.points)) == ("ReadIOPS", "pg-shared-01", 3)
    assert [p.ts for p in iops.points] == [datetime(2026, 3, 13, 7, m, tzinfo=UTC) for m in (0, 1, 2)]
    assert [GET_METRIC_DATA[p.start:p.end] for p in iops.points] == ["410.25", "3000.0", "2998.5"]
    assert lat.points[0].value == 0.04


def test_get_metric_statistics_gives_its_statistic_and_unit():
    (cpu,), bad, problem = parse_cloudwatch(GET_METRIC_STATISTICS, None, "src")
    assert problem is None and bad == [] and cpu.metric == "CPUUtilization" and cpu.unit == "%"
    assert [p.value for p in cpu.points] == [31.0, 97.5]
    assert '"Average": 97.5' in GET_METRIC_STATISTICS[cpu.points[1].start:cpu.points[1].end]


def test_a_datadog_query_gives_each_series_with_its_tags_and_unit():
    (hits,), bad, problem = parse_datadog(DATADOG, None, "src")
    assert problem is None and bad == []
    assert (hits.metric, hits.labels, hits.unit) == ("trace.http.request.hits", {"env": "prod", "service": "rates"}, "req/s")
    assert hits.points[1].ts == datetime(2026, 3, 13, 7, 2, tzinfo=UTC) and hits.points[1].value == 831.5


def test_the_exports_are_recognised_and_a_wrong_shape_is_named():
    assert detect(Path("rds.json"), GET_METRIC_DATA) == ("metric", "cloudwatch")
    assert detect(Path("cpu.json"), GET_METRIC_STATISTICS) == ("metric", "cloudwatch")
    assert detect(Path("dd.json"), DATADOG) == ("metric", "datadog")
    broken = json.dumps({"MetricDataResults": [{"Label": "X", "Timestamps": ["2026-03-13T07:00:00Z"], "Values": []}]})
    series, bad, problem = parse_cloudwatch(broken, None, "src")
    assert series == [] and len(bad) == 1 and "Timestamps and Values" in bad[0].reason and problem
