"""Kubernetes through a kubeconfig: events, pods and each service's rollout history (`kubectl`).

Each answer is written as `kubectl` prints it (`-o json` for events and pods, the
`REVISION  CHANGE-CAUSE` table for rollout history), the formats tools/formats/k8s.py and
tools/formats/changes.py read. A call that fails (no cluster, no such deployment, a timeout) is
recorded and the others go on.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from state.collection import Fetched

__all__ = ["collect_kubernetes"]


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _kubectl(kubeconfig: Path, args: list[str], timeout: float) -> str:
    exe = shutil.which("kubectl")
    if exe is None:
        raise RuntimeError("kubectl is not installed")
    try:
        done = subprocess.run([exe, "--kubeconfig", str(kubeconfig), f"--request-timeout={timeout:g}s", *args],
                              capture_output=True, timeout=timeout + 5)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"kubectl took longer than {timeout:g}s") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(lines[-1][:300] if lines else f"kubectl exited {done.returncode}")
    return done.stdout.decode("utf-8", "replace")


def collect_kubernetes(kubeconfig: Path, namespace: str, services: list[str], environment: str, folder: Path,
                       timeout: float = 20.0, rel_root: str = "kubernetes"
                       ) -> tuple[list[tuple[Fetched, str | None]], list[dict]]:
    """Write events, pods and rollout histories; return what was fetched and the inventory entries."""
    calls: list[tuple[str, list[str], str, str, str, str]] = [
        ("events", ["get", "events", "-n", namespace, "-o", "json"], f"events.{environment}.json", "kubernetes",
         "events", "*"),
        ("pods", ["get", "pods", "-n", namespace, "-o", "json"], f"pods.{environment}.json", "kubernetes", "pods", "*"),
    ]
    for s in services:
        calls.append((f"rollout history of {s}", ["rollout", "history", f"deployment/{s}", "-n", namespace],
                      f"rollout-{s}.{environment}.txt", "change", "rollout", s))
    fetched: list[tuple[Fetched, str | None]] = []
    inventory: list[dict] = []
    for what, args, name, kind, fmt, service in calls:
        command = "kubectl " + " ".join(args)
        try:
            text = _kubectl(kubeconfig, args, timeout)
        except RuntimeError as exc:
            fetched.append((Fetched(collector="kubernetes", what=what, status="failed", error=str(exc), query=command,
                                    server=str(kubeconfig), fetched_at=_now(),
                                    service=None if service == "*" else service), None))
            continue
        if not text.strip() or re.fullmatch(r'\s*\{\s*"apiVersion"[^\[]*"items"\s*:\s*\[\s*\][^\]]*\}\s*', text):
            fetched.append((Fetched(collector="kubernetes", what=what, status="empty", query=command,
                                    server=str(kubeconfig), fetched_at=_now()), None))
            continue
        rel = f"{rel_root}/{name}"
        body = text.encode()
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(body)
        fetched.append((Fetched(collector="kubernetes", what=what, status="ok", path=rel, query=command,
                                server=str(kubeconfig), fetched_at=_now(), sha256=hashlib.sha256(body).hexdigest(),
                                service=None if service == "*" else service), rel))
        inventory.append({"path": rel, "kind": kind, "format": fmt, "environment": environment,
                          **({"service": service} if service != "*" else {})})
    return fetched, inventory
