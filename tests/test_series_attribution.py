"""Which entity a metric series is about, and what a series that starts late means (docs/deciding.md §3)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from state.sources import SourceEntry
from tools import derive, derive_signals
from tools.corpus import ParseContext, load_source
from tools.entities import EntityExtractor
from tools.profile import default_profile
from tools.signals import Range

P = default_profile()
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=timezone.utc)
RANGE = Range(baseline_from=T0 - timedelta(minutes=30), search_from=T0 - timedelta(minutes=10),
              end=T0 + timedelta(minutes=20))


def _prom(tmp_path, name: str, series: list[tuple[dict, list[tuple[float, float]]]], service: str, kind="metric"):
    body = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels, "values": [[t, str(v)] for t, v in values]} for labels, values in series]}}
    (tmp_path / name).write_text(json.dumps(body))
    entry = SourceEntry(id=name, path=name, kind=kind, format="prometheus", environment="prod", service=service,
                        groups=("ops",))
    return load_source(tmp_path, entry, ParseContext(P))


def _catalog(tmp_path, *names: tuple[str, str]):
    text = "services:\n" + "".join(f"  - name: {n}\n    kind: {k}\n" for n, k in names)
    (tmp_path / "catalog.yaml").write_text(text)
    return load_source(tmp_path, SourceEntry(id="catalog", path="catalog.yaml", kind="catalog", environment="prod",
                                             groups=("ops",)), ParseContext(P))


def _minutes(start: float, end: float, value) -> list[tuple[float, float]]:
    out = []
    m = start
    while m <= end:
        out.append(((T0 + timedelta(minutes=m)).timestamp(), value(m) if callable(value) else value))
        m += 1
    return out


def test_a_pods_series_in_a_nodes_export_is_about_the_pods_workload(tmp_path):
    doc = _prom(tmp_path, "node-7.pod_cpu.json", [
        ({"__name__": "container_cpu_usage", "pod": "batch-5d8c7b9f4d-x2k9p", "node": "node-7"}, _minutes(-30, 20, 1.0)),
        ({"__name__": "container_cpu_usage", "pod": "web-7f6d4c8b95-h8zkt", "node": "node-7"}, _minutes(-30, 20, 0.5)),
    ], service="node-7")
    reg = EntityExtractor.from_sources([doc, _catalog(tmp_path, ("batch", "service"), ("web", "service"),
                                                      ("node-7", "node"))], P)
    assert [derive.series_entity(doc, s, reg, P) for s in doc.series] == ["batch", "web"]


def test_an_export_of_every_node_is_split_by_the_label_that_tells_its_series_apart(tmp_path):
    doc = _prom(tmp_path, "nodes.cpu.json", [
        ({"__name__": "node_cpu_utilisation", "instance": "node-a", "job": "node-exporter"}, _minutes(-30, 20, 0.4)),
        ({"__name__": "node_cpu_utilisation", "instance": "node-b", "job": "node-exporter"}, _minutes(-30, 20, 0.3)),
    ], service="the-cluster")
    reg = EntityExtractor.from_sources([doc, _catalog(tmp_path, ("node-a", "node"), ("node-b", "node"))], P)
    assert [derive.series_entity(doc, s, reg, P) for s in doc.series] == ["node-a", "node-b"]


def test_one_services_series_labelled_with_the_database_it_queries_stays_the_services(tmp_path):
    (tmp_path / "web.db_latency.json.meta.yaml").write_text("service: web\nenvironment: prod\nunit: s\n")
    doc = _prom(tmp_path, "web.db_latency.json", [
        ({"__name__": "db_query_seconds", "db": "orders-db", "quantile": "0.5"}, _minutes(-30, 20, 0.01)),
        ({"__name__": "db_query_seconds", "db": "orders-db", "quantile": "0.99"}, _minutes(-30, 20, 0.05)),
    ], service="web")
    reg = EntityExtractor.from_sources([doc, _catalog(tmp_path, ("web", "service"), ("orders-db", "database"))], P)
    assert {derive.series_entity(doc, s, reg, P) for s in doc.series} == {"web"}


def test_a_load_series_that_starts_late_in_an_export_covering_the_baseline_rose_from_nothing(tmp_path):
    """A pod that did not run yet has no series: absent is zero use, so its load is an anomaly."""
    doc = _prom(tmp_path, "node-7.pod_cpu.json", [
        ({"__name__": "container_cpu_usage_cores", "pod": "old-5d8c7b9f4d-x2k9p"}, _minutes(-30, 20, 0.5)),
        ({"__name__": "container_cpu_usage_cores", "pod": "new-5d8c7b9f4d-b7k2m"}, _minutes(-4, 20, 7.0)),
    ], service="node-7")
    late = doc.series[1]
    sig = derive_signals.series_facts(doc, late, "new", P, RANGE)
    assert sig.anomalous and sig.direction == "up" and sig.role == "saturation"
    assert "taken as 0" in sig.note
    assert sig.at is not None and doc.text[sig.at.start:sig.at.end].startswith("[")


def test_a_latency_series_that_starts_late_stays_undecidable(tmp_path):
    doc = _prom(tmp_path, "web.latency.json", [
        ({"__name__": "http_p95_ms", "route": "/a"}, _minutes(-30, 20, 100.0)),
        ({"__name__": "http_p95_ms", "route": "/b"}, _minutes(-4, 20, 900.0)),
    ], service="web")
    sig = derive_signals.series_facts(doc, doc.series[1], "web", P, RANGE)
    assert not sig.decidable and not sig.anomalous
