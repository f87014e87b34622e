"""Helpers shared by the service tests: a folder of material per service, alerts, settings files."""

from __future__ import annotations

import copy
import json
import shutil
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MATERIAL = ROOT / "cases" / "ALR-20260819-204" / "sources"
SERVICE = "profile-api"

PAYLOAD = {
    "version": "4", "groupKey": "{}:{alertname=\"ProfileApiLatencyHigh\"}", "status": "firing", "receiver": "oncall",
    "groupLabels": {"alertname": "ProfileApiLatencyHigh"},
    "commonLabels": {"alertname": "ProfileApiLatencyHigh", "severity": "page"},
    "commonAnnotations": {}, "externalURL": "http://alertmanager:9093", "truncatedAlerts": 0,
    "alerts": [{"status": "firing",
                "labels": {"alertname": "ProfileApiLatencyHigh", "service": SERVICE, "environment": "prod"},
                "annotations": {"summary": "profile-api p99 latency above 800 ms for 5m"},
                "startsAt": "2026-08-19T14:10:00Z", "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus:9090/graph?g0.expr=histogram_quantile%280.99%2C+x%29+%3E+0.8",
                "fingerprint": "a1b2c3d4"}]}


def webhook(fingerprint: str = "a1b2c3d4", instance: str | None = None, starts: str | None = None) -> dict:
    """The Alertmanager payload with one alert, varied by fingerprint / instance label / start."""
    p = copy.deepcopy(PAYLOAD)
    a = p["alerts"][0]
    a["fingerprint"] = fingerprint
    if instance:
        a["labels"]["instance"] = instance
    if starts:
        a["startsAt"] = starts
    return p


def material(tmp: Path) -> Path:
    """A copy of a shipped case's sources as the service's folder of material for one service."""
    dst = tmp / "material" / SERVICE
    if not dst.exists():
        shutil.copytree(MATERIAL, dst)
    return dst


def settings_file(tmp: Path, **extra: object) -> Path:
    material(tmp)
    data = {"home": str(tmp / "home"), "sources": {"by": "service", "roots": {SERVICE: f"material/{SERVICE}"}}}
    data.update(extra)
    path = tmp / "service.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return path


def wait_done(client: Any, run_id: str, timeout: float = 240) -> dict:
    """Poll the run API (a TestClient or an httpx.Client) until the alert's run is done or failed."""
    t0 = time.monotonic()
    got: dict = {}
    while time.monotonic() - t0 < timeout:
        got = client.get(f"/api/runs/{run_id}").json()
        if got["state"] in ("done", "failed"):
            return got
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} did not finish in {timeout} s: {got}")
