"""The metric-based RCA baseline harness (bench/baselines) on one tiny synthetic case.

The loader test runs in the project's venv (NumPy + PyYAML only). The harness test needs the
dedicated venv that `bash bench/baselines/setup.sh` creates; it is skipped without it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
BASELINES = ROOT / "bench" / "baselines"
VENV_PY = BASELINES / ".venv" / "bin" / "python"
TZ = timezone(timedelta(hours=2))
W_START = datetime(2026, 5, 4, 10, 30, tzinfo=TZ)
BASE_MIN, WIN_MIN = 40, 15


def _loader():
    spec = importlib.util.spec_from_file_location("rca_baselines_loader", BASELINES / "loader.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _series(rng, level, noise, shift=0.0, lag=0):
    """Baseline + window minutes; from window start + lag on, the level is raised by `shift`."""
    n = BASE_MIN + WIN_MIN + 1
    x = level + noise * rng.standard_normal(n)
    x[BASE_MIN + lag:] += shift
    return x


def write_case(d: Path) -> Path:
    """frontend -> api -> db-client (component) -> orders-db; api runs on node-1.

    The planted root: orders-db's query time steps up at the window start; api and frontend
    follow one minute later, through the call graph; node-1 CPU and api traffic stay flat.
    Formats: a CSV with sidecar (frontend), a Prometheus range query with service/pod/db/node
    labels, kubectl pods JSON, an OTLP trace line, a catalog, and a staging series that must
    be ignored.
    """
    rng = np.random.default_rng(7)
    (d / "sources" / "metrics").mkdir(parents=True)
    (d / "sources" / "k8s").mkdir()
    (d / "sources" / "traces").mkdir()
    t0 = W_START - timedelta(minutes=BASE_MIN)
    stamps = [t0 + timedelta(minutes=i) for i in range(BASE_MIN + WIN_MIN + 1)]

    db = _series(rng, 12, 1.0, shift=40)
    api = _series(rng, 80, 4.0) + np.r_[np.zeros(BASE_MIN + 1), 0.9 * db[BASE_MIN:-1] - 10]
    fe = _series(rng, 120, 5.0) + np.r_[np.zeros(BASE_MIN + 2), 1.0 * (api[BASE_MIN + 1:-1] - 80)]
    rps = _series(rng, 300, 8.0)
    cpu = _series(rng, 35, 2.0)
    staging = _series(rng, 50, 2.0, shift=500)

    (d / "sources" / "metrics" / "frontend-p95.csv").write_text(
        "ts,value\n" + "".join(f"{t.isoformat()},{v:.2f}\n" for t, v in zip(stamps, fe)))
    (d / "sources" / "metrics" / "frontend-p95.csv.meta.yaml").write_text(
        "metric: p95_latency_ms\nservice: frontend\nenvironment: prod\nunit: ms\nrole: latency\n")
    (d / "sources" / "metrics" / "staging-p95.csv").write_text(
        "ts,value\n" + "".join(f"{t.isoformat()},{v:.2f}\n" for t, v in zip(stamps, staging)))
    (d / "sources" / "metrics" / "staging-p95.csv.meta.yaml").write_text(
        "metric: p95_latency_ms\nservice: frontend\nenvironment: staging\nunit: ms\n")

    def prom(labels, values):
        return {"metric": labels, "values": [[int(t.timestamp()), f"{v:.3f}"] for t, v in zip(stamps, values)]}

    (d / "sources" / "metrics" / "backend.json").write_text(json.dumps({
        "status": "success", "data": {"resultType": "matrix", "result": [
            prom({"__name__": "latency_ms", "pod": "api-7d9f8c6b5-x2x9q", "namespace": "shop"}, api),
            prom({"__name__": "requests_per_second", "service": "api"}, rps),
            prom({"__name__": "query_duration_ms", "db": "orders-db"}, db),
            prom({"__name__": "node_cpu_utilisation", "node": "node-1", "instance": "10.0.0.1:9100"}, cpu),
        ]}}))
    (d / "sources" / "k8s" / "pods.json").write_text(json.dumps({"kind": "PodList", "items": [{
        "metadata": {"name": "api-7d9f8c6b5-x2x9q", "labels": {"pod-template-hash": "7d9f8c6b5"},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "api-7d9f8c6b5"}]},
        "spec": {"nodeName": "node-1"}}]}))
    ns = int((W_START - timedelta(minutes=20)).timestamp() * 1e9)
    (d / "sources" / "traces" / "otlp.jsonl").write_text(json.dumps({"resourceSpans": [
        {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "frontend"}}]},
         "scopeSpans": [{"spans": [{"traceId": "t1", "spanId": "a", "name": "GET /",
                                    "startTimeUnixNano": str(ns), "endTimeUnixNano": str(ns + 90_000_000)}]}]},
        {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "api"}}]},
         "scopeSpans": [{"spans": [{"traceId": "t1", "spanId": "b", "parentSpanId": "a", "name": "GET /orders",
                                    "startTimeUnixNano": str(ns + 1_000_000),
                                    "endTimeUnixNano": str(ns + 70_000_000)}]}]},
    ]}) + "\n")
    (d / "sources" / "catalog.yaml").write_text(
        "services:\n"
        "  - {name: frontend, depends_on: [api]}\n"
        "  - {name: api, depends_on: [db-client]}\n"
        "  - {name: orders-db, kind: database, aliases: [orders-db.shop.svc]}\n"
        "  - {name: billing, depends_on: []}\n"
        "components:\n"
        "  - {name: db-client, kind: client, talks_to: [orders-db]}\n")

    def src(i, path, kind, env="prod", svc="*", fmt=None):
        return {"id": i, "path": path, "kind": kind, "environment": env, "service": svc,
                "groups": ["sre"], **({"format": fmt} if fmt else {})}

    import yaml

    (d / "sources.yaml").write_text(yaml.safe_dump({"format": "investigator/sources@1", "sources": [
        src("fe-p95", "sources/metrics/frontend-p95.csv", "metric", svc="frontend"),
        src("stg-p95", "sources/metrics/staging-p95.csv", "metric", env="staging", svc="frontend"),
        src("backend", "sources/metrics/backend.json", "metric", fmt="prometheus"),
        src("pods", "sources/k8s/pods.json", "kubernetes"),
        src("otlp", "sources/traces/otlp.jsonl", "trace"),
        src("catalog", "sources/catalog.yaml", "catalog"),
    ]}))
    (d / "case.yaml").write_text(yaml.safe_dump({
        "format": "investigator/case@1", "id": "SYN-RCA-1", "subject": "prod/frontend",
        "alert": {"id": "SYN-RCA-1", "fired_at": (W_START + timedelta(minutes=4)).isoformat()},
        "window": {"start": W_START.isoformat(), "end": (W_START + timedelta(minutes=WIN_MIN)).isoformat(),
                   "baseline": f"{BASE_MIN}m"},
        "principal": {"id": "p", "groups": ["sre"]},
        "required_claims": [{"id": "c", "kind": "causal_chain", "statement": "why"}]}))
    (d / "expected.yaml").write_text(yaml.safe_dump({
        "format": "investigator/expected@1",
        "root_cause": {"entity": "orders-db", "kind": "config_push",
                       "path": ["frontend", "api", "orders-db"]},
        "generator": {"cause_kind": "config_push", "depth": 2}}))
    return d


def test_loader_builds_matrix_and_call_graph(tmp_path):
    loader = _loader()
    case = loader.load_case(write_case(tmp_path / "SYN-RCA-1"))

    assert case.case_id == "SYN-RCA-1" and case.subject == "frontend" and case.subject_env == "prod"
    # a minute grid over baseline + window; normal rows end onset_lead (default 10m) before
    # the window start, as the runtime's baseline does (docs/deciding.md §3)
    assert len(case.grid) == BASE_MIN + WIN_MIN + 1 and case.n_baseline == BASE_MIN - 10
    assert np.all(np.diff(case.grid) == 60)
    names = {c["name"] for c in case.columns}
    # the pod resolves to its workload, db/node labels to their entities; traces add span series
    assert {"frontend|p95_latency_ms", "api|latency_ms", "api|requests_per_second",
            "orders-db|query_duration_ms", "node-1|node_cpu_utilisation"} <= names
    assert {"frontend|span_p95_ms", "api|span_error_share"} <= names
    assert case.values.shape == (len(case.grid), len(case.columns))
    assert not np.isnan(case.values).any()
    col = [c["name"] for c in case.columns].index("orders-db|query_duration_ms")
    assert case.values[BASE_MIN:, col].mean() > case.values[: case.n_baseline, col].mean() + 30
    # the staging series is left out (frontend has one p95 column, at the prod level)
    fe = [c["name"] for c in case.columns].index("frontend|p95_latency_ms")
    assert case.values[: case.n_baseline, fe].mean() < 200
    # roles: sidecar first, else the profile's name patterns
    roles = {c["name"]: c["role"] for c in case.columns}
    assert roles["api|requests_per_second"] == "traffic" and roles["node-1|node_cpu_utilisation"] == "saturation"
    # the call graph: catalog, component talks_to, placement from the pods, traces
    deps = {(a, b) for a, b, _ in case.dependencies}
    assert {("frontend", "api"), ("api", "db-client"), ("db-client", "orders-db"), ("api", "node-1")} <= deps
    origins = {o for *_, o in case.dependencies}
    assert {"catalog", "placement", "trace"} <= origins
    assert ("orders-db", "frontend") not in case.causal_entity_edges()
    assert ("api", "frontend") in case.causal_entity_edges()
    assert case.canonical("orders-db.shop.svc") == "orders-db"
    # the gold
    assert case.scored and case.gold["entity"] == "orders-db"
    assert case.gold["cause_kind"] == "config_push" and case.gold["depth"] == 2


def test_loader_reads_jaeger_pods_wide_and_epoch_csv(tmp_path):
    """The other documented shapes: Jaeger JSON, `kubectl get pods -o wide`, epoch-second CSV."""
    loader = _loader()
    d = write_case(tmp_path / "SYN-RCA-1")
    (d / "sources" / "traces" / "otlp.jsonl").unlink()
    us = int((W_START - timedelta(minutes=5)).timestamp() * 1e6)
    (d / "sources" / "traces" / "jaeger.json").write_text(json.dumps({"data": [{
        "traceID": "t9", "processes": {"p1": {"serviceName": "frontend"}, "p2": {"serviceName": "billing"}},
        "spans": [{"traceID": "t9", "spanID": "s1", "processID": "p1", "startTime": us, "duration": 50000,
                   "references": [], "tags": [{"key": "error", "value": True}]},
                  {"traceID": "t9", "spanID": "s2", "processID": "p2", "startTime": us + 10, "duration": 20000,
                   "references": [{"refType": "CHILD_OF", "traceID": "t9", "spanID": "s1"}],
                   "tags": [{"key": "db.name", "value": "orders-db"}]}]}]}))
    (d / "sources" / "k8s" / "pods.json").unlink()
    (d / "sources" / "k8s" / "pods-wide.txt").write_text(
        "NAME                  READY   STATUS    RESTARTS      AGE   IP          NODE     NOMINATED NODE   READINESS GATES\n"
        "api-xp6p57b2tl-xcwl5  1/1     Running   2 (5m ago)    3d    10.0.0.7    node-1   <none>           <none>\n")
    rows = (d / "sources" / "metrics" / "frontend-p95.csv").read_text().splitlines()
    (d / "sources" / "metrics" / "frontend-p95.csv").write_text("\n".join(
        [rows[0]] + [f"{int(datetime.fromisoformat(r.split(',')[0]).timestamp())},{r.split(',')[1]}" for r in rows[1:]]))
    import yaml

    man = yaml.safe_load((d / "sources.yaml").read_text())
    for src in man["sources"]:
        if src["id"] == "otlp":
            src["path"] = "sources/traces/jaeger.json"
        if src["id"] == "pods":
            src["path"] = "sources/k8s/pods-wide.txt"
    (d / "sources.yaml").write_text(yaml.safe_dump(man))
    case = loader.load_case(d)
    deps = {(a, b, o) for a, b, o in case.dependencies}
    assert ("frontend", "billing", "trace") in deps            # parent span -> child span
    assert ("billing", "orders-db", "trace") in deps           # a span attribute naming a peer
    assert ("api", "node-1", "placement") in deps              # pod hash of any alphabet stripped
    names = [c["name"] for c in case.columns]
    assert "api|latency_ms" in names                           # the Prometheus pod label resolves
    fe = names.index("frontend|p95_latency_ms")
    assert not np.isnan(case.values[:, fe]).any() and case.values[-1, fe] > 100


def test_loader_skips_case_without_root_cause(tmp_path):
    loader = _loader()
    d = write_case(tmp_path / "SYN-RCA-1")
    (d / "expected.yaml").write_text("format: investigator/expected@1\nstop_reason: evidence_ready\n")
    case = loader.load_case(d)
    assert not case.scored
    case = loader.load_case(d, gold_override={"SYN-RCA-1": {"entity": "orders-db", "gold_source": "test"}})
    assert case.scored and case.gold["source"] == "test"


@pytest.mark.slow
@pytest.mark.skipif(not VENV_PY.exists(), reason="bench/baselines/.venv absent: run bash bench/baselines/setup.sh")
def test_harness_runs_every_method(tmp_path):
    write_case(tmp_path / "cases" / "SYN-RCA-1")
    out = tmp_path / "res.json"
    proc = subprocess.run([str(VENV_PY), str(BASELINES / "run_baselines.py"), "--cases", str(tmp_path / "cases"),
                           "--out", str(out), "--timeout", "120"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())
    assert out.with_suffix(".md").read_text().startswith("# Metric-based root-cause baselines")
    methods = ["pyrca_rw@call", "pyrca_rw@struct", "pyrca_rw_all@call", "pyrca_rw_all@struct", "pyrca_rcd",
               "pyrca_bn@call", "pyrca_bn@struct", "circa@call", "circa@struct", "nsigma"]
    assert set(res["summary"]["methods"]) == set(methods)
    assert res["summary"]["cases_scored"] == 1 and res["summary"]["root_without_metrics"] == 0
    (case,) = res["cases"]
    assert case["case"] == "SYN-RCA-1" and case["root_has_metrics"] is True
    for name in methods:
        m = case["methods"][name]
        assert m["status"] in ("ok", "failed", "timeout")
        assert isinstance(m["seconds"], float)
        if m["status"] == "ok":
            assert isinstance(m["entity_ranking"], list)
            assert m["top1"] == (m["entity_ranking"][:1] == ["orders-db"])
        else:
            assert m["error"]
        overall = res["summary"]["methods"][name]["overall"]
        assert overall["n"] == 1 and overall["top1"] in (0.0, 1.0)
        assert set(res["summary"]["methods"][name]["by_depth"]) == {"2"}
        assert set(res["summary"]["methods"][name]["by_cause_kind"]) == {"config_push"}
    # the libraries' own methods do run here; CIRCA on its structural graph finds the planted root
    assert case["methods"]["circa@struct"]["status"] == "ok"
    assert case["methods"]["circa@struct"]["top3"]
