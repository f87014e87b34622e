"""`investigator collect` against a real Prometheus (backfilled with promtool) and a real GitOps repository.

The planted incident (collectkit.planted_incident) collected through the CLI and investigated, the commit must come out as the cause, cited by its commit id, and the
metric sources must carry the PromQL that fetched them.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from collectkit import PROMETHEUS, PROMTOOL, WEB_P95 as EXPR, minute, planted_incident, prometheus_server

pytestmark = pytest.mark.skipif(PROMETHEUS is None or PROMTOOL is None,
                                reason="needs the prometheus and promtool binaries (Debian: apt-get install prometheus)")

ROOT = Path(__file__).resolve().parent.parent
FIRED = minute(datetime.now(timezone.utc)) - timedelta(hours=2)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "investigator.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin:/usr/local/bin",
                               "HF_HUB_OFFLINE": "1"}, timeout=900)


@pytest.fixture(scope="module")
def incident(tmp_path_factory):
    """The planted incident collected through the CLI: (case folder, commit id, Prometheus URL)."""
    root = tmp_path_factory.mktemp("incident")
    planted = planted_incident(root, FIRED)
    with prometheus_server(root, planted.samples) as url:
        done = _cli("collect", str(planted.alert), "--prometheus", url, "--git", str(planted.repo),
                    "--out", str(root / "case"))
    assert done.returncode == 0, done.stderr
    assert "case written and validated" in done.stdout
    return root / "case", planted.sha, url


def test_collected_metrics_cite_the_query_range_and_server_that_fetched_them(incident):
    case, _sha, url = incident
    collection = yaml.safe_load((case / "collection.yaml").read_text())
    manifest = {s["id"]: s for s in yaml.safe_load((case / "sources.yaml").read_text())["sources"]}
    metrics = [f for f in collection["fetched"] if f["collector"] == "prometheus" and f["status"] == "ok"]
    own = next(f for f in metrics if "the alert's expression" in f["what"])
    assert own["query"] == EXPR.removesuffix(" > 0.5")  # the alert's expression, its threshold dropped
    assert {f["service"] for f in metrics} == {"web", "payments"}
    assert any('http_request_duration_seconds_bucket{service="payments"}' in f["query"] for f in metrics)
    for f in metrics:
        assert f["server"] == url and f["step"] == "30s"
        assert datetime.fromisoformat(f["start"]) < FIRED - timedelta(minutes=40)
        body = (case / f["path"]).read_bytes()
        assert hashlib.sha256(body).hexdigest() == f["sha256"]  # the bytes as the server sent them
        assert json.loads(body)["status"] == "success"
        assert manifest[f["source_id"]]["path"] == f["path"]
        sidecar = yaml.safe_load((case / (f["path"] + ".meta.yaml")).read_text())
        assert sidecar["provenance"]["query"] == f["query"] and sidecar["service"] == f["service"]
    empty = [f for f in collection["fetched"] if f["status"] == "empty"]
    assert any("cpu_usage" in f["what"] for f in empty)  # no cAdvisor here: asked, answered empty, recorded


@pytest.mark.slow
def test_the_investigation_names_the_planted_commit_as_the_cause(incident, tmp_path):
    case, sha, _url = incident
    assert _cli("validate", str(case)).returncode == 0
    done = _cli("--home", str(tmp_path / "home"), "run", str(case), "--retrieval", "basic", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["stop"]["kind"] == "evidence_ready"
    claims = {c["id"]: c for c in report["claims"]}
    causal = claims["causal_attribution"]
    assert causal["verdict"] == "confirmed"
    root = causal["root_cause"]
    assert (root["entity"], root["change"], root["element"]) == ("payments", f"payments@git-{sha[:12]}",
                                                                 "upstream_timeout")
    assert root["path"] == ["web", "payments"]
    assert claims["symptom"]["verdict"] == "confirmed"
    assert claims["counter_evidence"]["verdict"] == "refuted"  # web's own deployment: there was none
    evidence = {e["id"]: e for e in report["evidence"]}
    cited = [evidence[i] for i in causal["supporting"]]
    assert any(f"commit: {sha}" in e["span"]["quote"] for e in cited)  # the change quoted with its commit id
    collection = yaml.safe_load((case / "collection.yaml").read_text())
    by_source = {f.get("source_id"): f for f in collection["fetched"]}
    metric_cites = [e for e in report["evidence"] if e["source_kind"] == "metric"]
    assert metric_cites and all("http_request_duration_seconds_bucket" in by_source[e["source_id"]]["query"]
                                for e in metric_cites if "latency" in e["source_id"] or "alert" in e["source_id"])
    assert sha in by_source[next(e["source_id"] for e in cited if e["source_kind"] == "change")]["commits"]
