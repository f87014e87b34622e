"""`investigator serve` configured to collect: an Alertmanager webhook in, the alert's material fetched live
from a real Prometheus (backfilled with promtool) and a real GitOps repository, the planted cause out.

The app runs in-process with its default queue (a SQLite file) and its in-process worker, as in
test_service.py; the incident is collectkit.planted_incident, the one test_collect_prometheus.py collects
through the CLI.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from collectkit import PROMETHEUS, PROMTOOL, WEB_P95, free_port, minute, planted_incident, prometheus_server
from investigator.service.app import create_app
from investigator.service.settings import ServiceSettings, load_settings
from servicekit import wait_done

FIRED = minute(datetime.now(timezone.utc)) - timedelta(hours=2)


def _settings(tmp_path: Path, *, prometheus: str, git: Path) -> ServiceSettings:
    """A service with no folder of material: everything it investigates is collected."""
    path = tmp_path / "service.yaml"
    path.write_text(yaml.safe_dump({"home": str(tmp_path / "home"),
                                    "collect": {"prometheus": prometheus, "git": str(git)}}))
    return load_settings(path).check()


def _investigate(settings: ServiceSettings, alert: Path) -> tuple[dict, dict, str, Path]:
    """POST the webhook as Alertmanager does, wait for the run through the API: (run, report, page, case)."""
    with TestClient(create_app(settings)) as client:
        posted = client.post("/api/alerts", content=alert.read_bytes(), headers={"content-type": "application/json"})
        assert posted.status_code == 202, posted.text
        assert posted.json()["accepted"] == 1
        run_id = posted.json()["alerts"][0]["run_id"]
        run = wait_done(client, run_id, timeout=600)
        assert run["state"] == "done", run["error"]
        assert run["alert"]["source_root"] == "collected"
        report = client.get(f"/api/runs/{run_id}/report")
        assert report.status_code == 200, report.text
        page = client.get(f"/runs/{run_id}")
        assert page.status_code == 200
    return run, report.json(), page.text, settings.service_dir / "cases" / run_id


@pytest.mark.slow
@pytest.mark.skipif(PROMETHEUS is None or PROMTOOL is None,
                    reason="needs the prometheus and promtool binaries (Debian: apt-get install prometheus)")
def test_an_alert_posted_to_the_service_is_collected_live_and_the_planted_commit_confirmed(tmp_path):
    planted = planted_incident(tmp_path, FIRED)
    with prometheus_server(tmp_path, planted.samples) as url:
        settings = _settings(tmp_path, prometheus=url, git=planted.repo)
        run, report, page, case = _investigate(settings, planted.alert)
    change = f"payments@git-{planted.sha[:12]}"

    assert run["verdicts"]["causal_attribution"] == "confirmed"
    assert report["stop"]["kind"] == "evidence_ready"
    claims = {c["id"]: c for c in report["claims"]}
    causal = claims["causal_attribution"]
    root = causal["root_cause"]
    assert (root["entity"], root["change"], root["element"]) == ("payments", change, "upstream_timeout")
    assert root["path"] == ["web", "payments"]
    assert next(c for c in run["claims"] if c["id"] == "causal_attribution")["root_cause"]["change"] == change
    answer = page.split("Root cause (confirmed): ", 1)[1].split("</", 1)[0]  # the page's answer box
    assert answer.startswith("payments") and change in answer and "upstream_timeout" in answer

    collection = yaml.safe_load((case / "collection.yaml").read_text())
    assert collection["services"] == ["web", "payments"]
    by_source = {f["source_id"]: f for f in collection["fetched"] if f.get("source_id")}
    metrics = [f for f in by_source.values() if f["collector"] == "prometheus"]
    assert {f["service"] for f in metrics} == {"web", "payments"}
    assert all(f["server"] == url and f["query"] and f["step"] == "30s" for f in metrics)
    assert any(f["query"] == WEB_P95.removesuffix(" > 0.5") for f in metrics)  # the alert's own expression

    evidence = {e["id"]: e for e in report["evidence"]}
    cited = [evidence[i] for i in causal["supporting"]]
    cited_change = next(e for e in cited if e["source_kind"] == "change")
    assert f"commit: {planted.sha}" in cited_change["span"]["quote"]
    assert by_source[cited_change["source_id"]]["commits"] == [planted.sha]
    cited_metrics = [e for e in report["evidence"] if e["source_kind"] == "metric"]
    assert cited_metrics and all("http_request_duration_seconds_bucket" in by_source[e["source_id"]]["query"]
                                 for e in cited_metrics if "latency" in e["source_id"] or "alert" in e["source_id"])


def test_with_prometheus_unreachable_the_service_still_investigates_what_git_gave(tmp_path):
    planted = planted_incident(tmp_path, FIRED)
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    run, report, _page, case = _investigate(_settings(tmp_path, prometheus=dead, git=planted.repo), planted.alert)

    assert run["run_status"] == "stopped" and run["stop"]["kind"] and report["claims"]
    # no series, so no observed symptom: the commit is not confirmed on the change record alone
    assert run["verdicts"]["symptom"] == "insufficient" and run["verdicts"]["causal_attribution"] != "confirmed"
    collection = yaml.safe_load((case / "collection.yaml").read_text())
    failed = [f for f in collection["fetched"] if f["status"] == "failed"]
    assert failed and all(f["collector"] == "prometheus" and "no answer" in f["error"] for f in failed)
    assert all(f["query"] and f["server"] == dead for f in failed)  # what was asked of whom, kept
    assert any(planted.sha in f.get("commits", []) for f in collection["fetched"] if f["status"] == "ok")
    assert "failed" in (case / "init-report.md").read_text()
    manifest = yaml.safe_load((case / "sources.yaml").read_text())["sources"]
    assert {s["kind"] for s in manifest} >= {"change"} and not [s for s in manifest if s["kind"] == "metric"]
