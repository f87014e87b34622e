"""`investigator collect` when systems fail, and the git collector on a real repository (no Prometheus
needed here; tests/test_collect_prometheus.py runs against a real server)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
import yaml

from collectkit import WEB_P95 as EXPR, alert_payload, free_port, minute, planted_incident
from investigator.collect import NothingCollected, collect
from investigator.loading import validate_case
from tools.collect.gitops import GitRepo, collect_git, service_of_path
from tools.collect.profile import load_collect_profile
from tools.collect.prometheus import PromClient, QueryFailed, series_expression
from tools.collect.urls import public_url
from tools.profile import default_profile

ROOT = Path(__file__).resolve().parent.parent
FIRED = minute(datetime.now(timezone.utc)) - timedelta(hours=2)


@pytest.fixture
def world(tmp_path):
    planted = planted_incident(tmp_path, FIRED)
    return planted.repo, planted.sha, planted.alert


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "investigator.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin:/usr/local/bin"}, timeout=300)


def _dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


# --- Prometheus faults -------------------------------------------------------------------------

def test_an_unreachable_prometheus_is_a_failed_source_and_the_case_keeps_the_git_material(world, tmp_path):
    repo, sha, alert = world
    got = collect(alert, tmp_path / "case", prometheus=_dead_url(), git=str(repo))
    failed = got.collection.failed()
    assert failed and all(f.collector == "prometheus" for f in failed)
    assert all("no answer" in (f.error or "") and f.attempts == 3 for f in failed)  # retried, then recorded
    assert all(f.query and f.server and f.start and f.end and f.step for f in failed)  # what was asked, kept
    manifest = yaml.safe_load((tmp_path / "case" / "sources.yaml").read_text())["sources"]
    assert not [s for s in manifest if s["kind"] == "metric"]
    assert [s for s in manifest if s["kind"] == "change"]
    recorded = yaml.safe_load((tmp_path / "case" / "collection.yaml").read_text())
    assert sum(f["status"] == "failed" for f in recorded["fetched"]) == len(failed)
    assert "failed" in (tmp_path / "case" / "init-report.md").read_text()
    validate_case(tmp_path / "case")


def test_a_query_the_server_refuses_is_not_retried_and_a_5xx_is_retried():
    calls: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        query = dict(httpx.QueryParams(request.content.decode()))["query"]
        calls.append(query)
        if query == "bad(":
            return httpx.Response(400, json={"status": "error", "errorType": "bad_data",
                                             "error": "1:5: parse error: unclosed left parenthesis"})
        return httpx.Response(503, text="overloaded")

    client = PromClient("http://prom.test", transport=httpx.MockTransport(answer), wait=0.01)
    start, end = FIRED - timedelta(hours=1), FIRED
    with pytest.raises(QueryFailed) as refused:
        client.query_range("bad(", start, end, "30s")
    assert refused.value.attempts == 1 and "bad_data" in refused.value.reason and "parse error" in refused.value.reason
    with pytest.raises(QueryFailed) as busy:
        client.query_range("up", start, end, "30s")
    assert busy.value.attempts == 3 and "HTTP 503" in busy.value.reason
    assert calls == ["bad(", "up", "up", "up"]


def test_when_nothing_can_be_collected_nothing_is_written_and_the_command_says_why(tmp_path):
    alert = alert_payload(tmp_path / "alert.json", service="web", env="prod", fired=FIRED, expr=EXPR)
    out = tmp_path / "cases" / "INC-1"
    done = _cli("collect", str(alert), "--prometheus", _dead_url(), "--out", str(out))
    assert done.returncode == 6, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: nothing was collected: prometheus") and "no answer" in last
    assert not (tmp_path / "cases").exists()  # not the case, not a staging folder, not the parent made for it
    with pytest.raises(NothingCollected):
        collect(alert, out, prometheus=_dead_url())
    assert not (tmp_path / "cases").exists()


# --- git -------------------------------------------------------------------------------------------

def test_a_commit_touching_a_service_becomes_a_change_with_its_commit_diff_and_snapshots(world, tmp_path):
    repo, sha, _alert = world
    prof = load_collect_profile().git
    out = tmp_path / "material"
    got = collect_git(GitRepo(str(repo)), prof, service="web", environment="prod",
                      environments=list(default_profile().environments), since=FIRED - timedelta(minutes=70),
                      until=FIRED + timedelta(minutes=30), folder=out)
    assert got.services == ["web", "payments"]  # web's values name payments; ledger is named by nobody
    ledger = yaml.safe_load((out / "git" / "changes.prod.yaml").read_text())["changes"]
    assert len(ledger) == 1
    change = ledger[0]
    assert change["id"] == f"payments@git-{sha[:12]}" and change["commit"] == sha
    assert change["author"] == "Dana Ops <dana@example.com>" and change["type"] == "deployment"
    assert change["config_changes"] == [{"key": "upstream_timeout", "from": "200ms", "to": "3000ms"}]
    assert "-upstream_timeout: 200ms\n+upstream_timeout: 3000ms" in change["diff"]
    assert datetime.fromisoformat(change["started_at"]) == FIRED - timedelta(minutes=8)
    snaps = {e["version"]: e for e in got.inventory if e["kind"] == "config" and e["service"] == "payments"}
    assert set(snaps) == {change["version_from"], change["version_to"]}  # before and after the commit
    after = yaml.safe_load((out / snaps[change["version_to"]]["path"]).read_text())
    assert after["upstream_timeout"] == "3000ms"
    web = [e for e in got.inventory if e["kind"] == "config" and e["service"] == "web"]
    assert len(web) == 1 and "1.5.0-rc1" not in (out / web[0]["path"]).read_text()  # staging values left out


def test_a_path_belongs_to_the_service_its_template_names_and_never_to_another_environment():
    paths = load_collect_profile().git.paths
    envs = list(default_profile().environments)
    assert service_of_path("apps/checkout/values-prod.yaml", paths, "prod", envs) == "checkout"
    assert service_of_path("environments/prod/checkout/kustomization.yaml", paths, "prod", envs) == "checkout"
    assert service_of_path("apps/checkout/values-staging.yaml", paths, "prod", envs) is None
    assert service_of_path("README.md", paths, "prod", envs) is None


def test_a_repository_that_is_not_one_is_a_failed_source_not_a_crash(tmp_path):
    alert = alert_payload(tmp_path / "alert.json", service="web", env="prod", fired=FIRED, expr=EXPR)
    (tmp_path / "not-a-repo").mkdir()
    (tmp_path / "material").mkdir()
    (tmp_path / "material" / "web.prod.log").write_text(
        f"{(FIRED - timedelta(minutes=5)).isoformat()} ERROR web upstream timeout\n")
    got = collect(alert, tmp_path / "case", git=str(tmp_path / "not-a-repo"), sources=tmp_path / "material")
    (failed,) = got.collection.failed()
    assert failed.collector == "git" and "not a git repository" in (failed.error or "")
    validate_case(tmp_path / "case")


# --- Kubernetes ------------------------------------------------------------------------------------

def test_without_a_kubeconfig_kubernetes_is_skipped_in_one_line(world, tmp_path):
    repo, _sha, alert = world
    got = collect(alert, tmp_path / "case", git=str(repo))
    assert [s for s in got.collection.skipped if s.startswith("kubernetes")] == [
        "kubernetes: no --kubeconfig given (events, pods and rollout histories not collected)"]


def test_a_cluster_that_does_not_answer_gives_failed_kubernetes_sources(world, tmp_path):
    if not Path("/usr/bin/kubectl").exists():
        pytest.skip("kubectl is not installed")
    repo, _sha, alert = world
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "dead",
        "clusters": [{"name": "dead", "cluster": {"server": f"https://127.0.0.1:{free_port()}",
                                                   "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "not-a-real-token"}}]}))
    got = collect(alert, tmp_path / "case", git=str(repo), kubeconfig=kubeconfig)
    kube = [f for f in got.collection.fetched if f.collector == "kubernetes"]
    assert {f.what for f in kube} == {"events", "pods", "rollout history of web", "rollout history of payments"}
    assert all(f.status == "failed" and f.query and f.query.startswith("kubectl ") for f in kube)
    assert "not-a-real-token" not in (tmp_path / "case" / "collection.yaml").read_text()
    validate_case(tmp_path / "case")


# --- small rules -----------------------------------------------------------------------------------

def test_the_alerts_threshold_is_dropped_so_the_range_shows_the_signal_itself():
    assert series_expression(EXPR) == EXPR.removesuffix(" > 0.5")
    assert series_expression('sum(rate(x{code=~"5.."}[5m])) / sum(rate(x[5m])) >= bool 0.05') == \
        'sum(rate(x{code=~"5.."}[5m])) / sum(rate(x[5m]))'
    assert series_expression("0.9 > avg(up)") == "avg(up)"
    assert series_expression('max(x{le=">1"})') == 'max(x{le=">1"})'  # a comparison inside a selector stays


def test_credentials_in_a_url_never_reach_the_case():
    assert public_url("https://bot:s3cret@git.example.com/org/gitops.git") == "https://git.example.com/org/gitops.git"
    assert public_url("/srv/gitops") == "/srv/gitops"
    client = PromClient("http://user:pw@prom.example:9090/", transport=httpx.MockTransport(
        lambda r: httpx.Response(200, json={"status": "success", "data": {"resultType": "matrix", "result": []}})))
    assert client.base_url == "http://prom.example:9090"


def test_a_bad_collection_profile_is_one_line_naming_the_field(tmp_path):
    bad = tmp_path / "profile.yaml"
    bad.write_text(json.dumps({"git": {"paths": ["apps/*/values.yaml"]}}))
    from state.errors import ConfigError

    with pytest.raises(ConfigError, match=r"git.paths: each path names \{service\}"):
        load_collect_profile(bad)


# --- the service ------------------------------------------------------------------------------------

def test_the_service_configured_to_collect_builds_an_alerts_case_from_the_repository(world, tmp_path):
    from investigator.service.ledger import AlertRow
    from investigator.service.settings import load_settings
    from investigator.service.work import Work

    repo, sha, alert = world
    (tmp_path / "service.yaml").write_text(f"home: {tmp_path / 'home'}\ncollect:\n  git: {repo.name}\n")
    settings = load_settings(tmp_path / "service.yaml").check()  # no folder of material: collecting is enough
    assert settings.collect.git == str(repo)  # relative to the settings file
    assert settings.root_for({"service": "web"}) == ("collected", None)
    payload = json.loads(alert.read_text())
    row = AlertRow(key="k1", run_id="run-k1", fingerprint="3f2a9c1d0b7e6a55", rule="LatencyHigh", root="collected",
                   labels=json.dumps(payload["alerts"][0]["labels"]), payload=alert.read_text())
    case = Work(settings, inv=None, ledger=None, progress=lambda _m: None)._case(row)  # type: ignore[arg-type]
    collection = yaml.safe_load((case / "collection.yaml").read_text())
    assert any(sha in f.get("commits", []) for f in collection["fetched"])
    validate_case(case)


def test_validate_refuses_a_collection_record_that_is_not_the_documented_format(world, tmp_path):
    repo, _sha, alert = world
    case = collect(alert, tmp_path / "case", git=str(repo)).case_dir
    data = yaml.safe_load((case / "collection.yaml").read_text())
    data["fetched"][0]["status"] = "fine"
    (case / "collection.yaml").write_text(yaml.safe_dump(data))
    done = _cli("validate", str(case))
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: {case / 'collection.yaml'}: fetched.0.status: "
                                   "Input should be 'ok', 'failed' or 'empty'")
