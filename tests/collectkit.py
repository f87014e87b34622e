"""Real systems for the collect tests: a GitOps repository made with git, and a Prometheus server
fed with backfilled samples (promtool tsdb create-blocks-from openmetrics), on a free loopback port."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import httpx

PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None)
PROMTOOL = shutil.which("promtool") or ("/usr/bin/promtool" if Path("/usr/bin/promtool").exists() else None)
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
WEB_P95 = 'histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{service="web"}[5m]))) > 0.5'
"""The planted incident's alert expression: web's p95 latency over 500 ms."""
STEP = 15  # seconds between samples


def minute(t: datetime) -> datetime:
    return t.replace(second=0, microsecond=0)


# --- git ---------------------------------------------------------------------------------------

def git(repo: Path, *args: str, at: datetime | None = None) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo.parent), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Dana Ops", "GIT_AUTHOR_EMAIL": "dana@example.com",
           "GIT_COMMITTER_NAME": "Dana Ops", "GIT_COMMITTER_EMAIL": "dana@example.com"}
    if at is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = at.isoformat()
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def commit_file(repo: Path, path: str, text: str, message: str, at: datetime) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", message, at=at)
    return git(repo, "rev-parse", "HEAD")


def gitops_repo(root: Path, *, created: datetime, change_at: datetime, env: str = "prod") -> tuple[Path, str]:
    """A GitOps repository: `web` calls `payments` (its values name the URL); `payments`' timeout is raised
    from 200ms to 3000ms at `change_at`. Returns the repository and the id of that commit."""
    repo = root / "gitops"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_file(repo, f"apps/web/values-{env}.yaml",
                "image:\n  repository: registry.example.com/web\n  tag: 1.4.2\nreplicas: 3\n"
                "payments_url: http://payments:8080\nrequest_timeout: 5s\n", "web: first values", created)
    commit_file(repo, "apps/web/values-staging.yaml", "image:\n  tag: 1.5.0-rc1\nreplicas: 1\n",
                "web: staging values", created + timedelta(minutes=1))
    commit_file(repo, f"apps/payments/values-{env}.yaml",
                "image:\n  repository: registry.example.com/payments\n  tag: 2.8.0\nreplicas: 4\n"
                "upstream_timeout: 200ms\ndb_pool_size: 20\n", "payments: first values", created + timedelta(minutes=2))
    commit_file(repo, "apps/ledger/values-prod.yaml", "image:\n  tag: 0.9.1\n", "ledger: first values",
                created + timedelta(minutes=3))
    sha = commit_file(repo, f"apps/payments/values-{env}.yaml",
                      "image:\n  repository: registry.example.com/payments\n  tag: 2.8.0\nreplicas: 4\n"
                      "upstream_timeout: 3000ms\ndb_pool_size: 20\n",
                      "payments: raise upstream_timeout to 3s for the card network", change_at)
    return repo, sha


# --- Prometheus ----------------------------------------------------------------------------------

def _latency_shares(slow: bool) -> list[float]:
    """Cumulative share of requests at or under each bucket bound (then +Inf = 1)."""
    return [0.02, 0.05, 0.10, 0.20, 0.45, 0.97, 1.0] if slow else [0.60, 0.97, 0.995, 1.0, 1.0, 1.0, 1.0]


def openmetrics(start: datetime, end: datetime, onsets: dict[str, datetime | None], rps: float = 10.0) -> str:
    """Request counters and latency histograms of each service, every 15 s from `start` to `end`; a service's
    latency is slow from its onset on (None: never)."""
    t0, t1 = int(start.timestamp()), int(end.timestamp())
    hist: list[str] = ["# HELP http_request_duration_seconds Request latency.",
                       "# TYPE http_request_duration_seconds histogram"]
    reqs: list[str] = ["# HELP http_requests Requests served.", "# TYPE http_requests counter"]
    for svc, onset in onsets.items():
        counts = [0.0] * (len(BUCKETS) + 1)
        total_sum, ok, errors = 0.0, 0.0, 0.0
        rows: dict[str, list[str]] = {}
        for ts in range(t0, t1 + 1, STEP):
            slow = onset is not None and ts >= onset.timestamp()
            n = rps * STEP
            shares = _latency_shares(slow)
            for i, share in enumerate(shares):
                counts[i] += n * share
            counts[-1] += n
            total_sum += n * (1.6 if slow else 0.06)
            ok += n - 0.1 * STEP
            errors += 0.1 * STEP
            for i, le in enumerate((*BUCKETS, "+Inf")):
                rows.setdefault(f'_bucket{{le="{le}",service="{svc}"}}', []).append(f"{counts[i]:.1f} {ts}")
            rows.setdefault(f'_count{{service="{svc}"}}', []).append(f"{counts[-1]:.1f} {ts}")
            rows.setdefault(f'_sum{{service="{svc}"}}', []).append(f"{total_sum:.3f} {ts}")
            rows.setdefault(f'_total{{code="200",service="{svc}"}}', []).append(f"{ok:.1f} {ts}")
            rows.setdefault(f'_total{{code="500",service="{svc}"}}', []).append(f"{errors:.1f} {ts}")
        for suffix, values in rows.items():
            (reqs if suffix.startswith("_total") else hist).extend(
                f"{'http_requests' if suffix.startswith('_total') else 'http_request_duration_seconds'}{suffix} {v}"
                for v in values)
    return "\n".join(hist + reqs + ["# EOF"]) + "\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def prometheus_server(root: Path, om_text: str):
    """A real Prometheus on a free loopback port over a TSDB backfilled from `om_text`; yields its URL."""
    data = root / "tsdb"
    data.mkdir()
    om = root / "samples.om"
    om.write_text(om_text)
    subprocess.run([PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", str(om), str(data)], check=True,
                   capture_output=True, timeout=300)
    config = root / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
    port = free_port()
    log = (root / "prometheus.log").open("wb")
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={data}",
                             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/-/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"prometheus did not start: {(root / 'prometheus.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def alert_payload(path: Path, *, service: str, env: str, fired: datetime, expr: str) -> Path:
    """An Alertmanager webhook payload (version 4, group and common labels, as Alertmanager sends it) for a
    firing alert whose generatorURL carries `expr`."""
    labels = {"alertname": "LatencyHigh", "service": service, "namespace": env, "severity": "page"}
    annotations = {"summary": f"{service} p95 latency above 500ms"}
    body = {"version": "4", "groupKey": "{}:{alertname=\"LatencyHigh\"}", "status": "firing", "receiver": "investigator",
            "groupLabels": {"alertname": "LatencyHigh"}, "commonLabels": labels, "commonAnnotations": annotations,
            "externalURL": "http://alertmanager.example:9093", "truncatedAlerts": 0,
            "alerts": [{"status": "firing", "labels": labels, "annotations": annotations,
                        "startsAt": fired.astimezone(timezone.utc).isoformat().replace("+00:00", "Z"),
                        "endsAt": "0001-01-01T00:00:00Z",
                        "generatorURL": f"http://prometheus.example:9090/graph?g0.expr={quote(expr)}&g0.tab=1",
                        "fingerprint": "3f2a9c1d0b7e6a55"}]}
    path.write_text(json.dumps(body, indent=2))
    return path


@dataclass(frozen=True, kw_only=True)
class Incident:
    """The planted incident: `web` calls `payments` (web's values name its URL); a commit raises payments'
    `upstream_timeout` from 200ms to 3000ms 8 minutes before the alert; payments' p95 latency rises 3
    minutes later, web's a minute after that; the alert fires on web's p95 (`WEB_P95`)."""

    fired: datetime
    """When the alert fired (a whole minute)."""
    repo: Path
    """The GitOps repository."""
    sha: str
    """The id of the commit that caused it."""
    alert: Path
    """The Alertmanager webhook payload (its generatorURL carries `WEB_P95`)."""
    samples: str
    """OpenMetrics text for `prometheus_server`: web, payments and an unrelated ledger, 100 minutes before
    the alert to 40 after."""


def planted_incident(root: Path, fired: datetime) -> Incident:
    """Write the planted incident's repository and alert under `root`."""
    repo, sha = gitops_repo(root, created=fired - timedelta(days=3), change_at=fired - timedelta(minutes=8))
    samples = openmetrics(fired - timedelta(minutes=100), fired + timedelta(minutes=40),
                          {"web": fired - timedelta(minutes=4), "payments": fired - timedelta(minutes=5),
                           "ledger": None})
    alert = alert_payload(root / "alert.json", service="web", env="prod", fired=fired, expr=WEB_P95)
    return Incident(fired=fired, repo=repo, sha=sha, alert=alert, samples=samples)
