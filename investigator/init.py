"""`investigator init`: a review-ready case folder from an alert and a folder of material.

The alert is an Alertmanager webhook payload (its documented JSON: `alerts[].labels`,
`annotations`, `startsAt`, `endsAt`, `generatorURL`), a single alert object, or plain text.
Every file under the sources folder is detected (tools/detect.py), scoped by the service and
environment names its path and content carry, copied into `sources/<kind>/` and listed in
`sources.yaml` with one default group for the author to review. The case is written into a
temporary folder, validated, and only then moved into place: a failure leaves nothing behind.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from state import Frozen
from state.errors import CaseError
from tools.detect import detect
from tools.formats.logs import parse_time
from tools.profile import default_profile

ENV_LABELS = ("environment", "env", "namespace", "cluster_env", "stage", "tier")
SERVICE_LABELS = ("service", "app", "app_kubernetes_io_name", "job", "deployment", "container", "workload")


class AlertInfo(Frozen):
    id: str
    rule: str
    fired_at: datetime
    ends_at: datetime | None = None
    text: str
    environment: str
    service: str
    labels: dict[str, str] = {}
    expression: str = ""


def _name(text: str) -> str:
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return (out or "x")[:100]


def read_alert(path: Path) -> AlertInfo:
    """The first firing alert of a payload, a single alert, or a plain-text alert."""
    raw = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(raw)
    except ValueError:
        return _plain_alert(path, raw)
    alerts = data.get("alerts") if isinstance(data, dict) and "alerts" in data else [data]
    if not alerts or not isinstance(alerts[0], dict):
        raise CaseError(str(path), "alerts", "an Alertmanager payload with at least one alert")
    alert = next((a for a in alerts if a.get("status", "firing") == "firing"), alerts[0])
    labels = {str(k): str(v) for k, v in (alert.get("labels") or {}).items()}
    common = {str(k): str(v) for k, v in ((data.get("commonLabels") or {}) if isinstance(data, dict) else {}).items()}
    labels = {**common, **labels}
    ann = {str(k): str(v) for k, v in (alert.get("annotations") or {}).items()}
    fired = parse_time(alert.get("startsAt"), None)
    if fired is None:
        raise CaseError(str(path), "alerts[0].startsAt", "a timestamp with a zone")
    ends = parse_time(alert.get("endsAt"), None)
    if ends is not None and ends.year < 2000:  # Alertmanager writes 0001-01-01 for "still firing"
        ends = None
    env = next((labels[k] for k in ENV_LABELS if labels.get(k)), "")
    service = next((labels[k] for k in SERVICE_LABELS if labels.get(k)), "")
    if not env or not service:
        raise CaseError(str(path), "alerts[0].labels", f"an environment ({'/'.join(ENV_LABELS)}) and a service "
                                                       f"({'/'.join(SERVICE_LABELS)}) label")
    expr = ann.get("expr", "")
    if alert.get("generatorURL"):
        q = parse_qs(urlsplit(alert["generatorURL"]).query)
        expr = expr or unquote(next(iter(q.get("g0.expr", [])), ""))
    rule = labels.get("alertname", "alert")
    fp = alert.get("fingerprint") or _name(f"{rule}-{fired:%Y%m%d%H%M}")
    text = " ".join(x for x in (ann.get("summary"), ann.get("description"), ann.get("message")) if x) or rule
    return AlertInfo(id=_name(f"{rule}-{fired:%Y%m%dT%H%M}-{fp}")[:100], rule=rule, fired_at=fired, ends_at=ends,
                     text=text, environment=env, service=service, labels=labels, expression=expr)


def _plain_alert(path: Path, raw: str) -> AlertInfo:
    fired = parse_time(raw, None)
    m = re.search(r"\b([a-z][\w-]*)/([a-z][\w.-]*)\b", raw)
    pairs = dict(re.findall(r"\b(\w+)[=:]\s*\"?([\w./-]+)", raw))
    env = (m.group(1) if m else None) or next((pairs[k] for k in ENV_LABELS if pairs.get(k)), None)
    service = (m.group(2) if m else None) or next((pairs[k] for k in SERVICE_LABELS if pairs.get(k)), None)
    if fired is None or not env or not service:
        raise CaseError(str(path), "<text>", "a timestamp with a zone and `env/service` (or service= and env= pairs)")
    rule = pairs.get("alertname") or raw.strip().splitlines()[0][:60]
    return AlertInfo(id=_name(f"{service}-{fired:%Y%m%dT%H%M}"), rule=rule, fired_at=fired, text=raw.strip()[:2000],
                     environment=env, service=service)


def _metric_names(text: str, kind: str, fmt: str, sidecar: Path) -> set[str]:
    if kind != "metric":
        return set()
    if fmt == "csv" and sidecar.exists():
        meta = yaml.safe_load(sidecar.read_text()) or {}
        return {str(meta.get("metric"))} if meta.get("metric") else set()
    return set(re.findall(r'"__name__"\s*:\s*"([^"]+)"', text))


def scaffold(alert_path: Path, sources: Path, out: Path, *, group: str = "sre-oncall", force: bool = False) -> Path:
    """Write a case folder for the alert and the material; return it (validated)."""
    from investigator.runtime import validate_case

    alert = read_alert(alert_path)
    sources, out = Path(sources), Path(out)
    if not sources.is_dir():
        raise CaseError(str(sources), "<folder>", "a folder of source files")
    if out.exists() and not force:
        raise CaseError(str(out), "<folder>", "a folder that does not exist yet (or --force)")
    envs = [e.lower() for e in default_profile().environments]
    tmp = Path(tempfile.mkdtemp(prefix=".init-", dir=out.parent if out.parent.exists() else None))
    try:
        entries, metrics = [], set()
        files = sorted(p for p in sources.rglob("*") if p.is_file() and not p.is_symlink())
        texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in files}
        known = {alert.service}
        for p, text in texts.items():
            got = detect(p, text)
            if got and got[0] == "catalog":
                known |= set(re.findall(r"^\s*-?\s*name:\s*([\w.-]+)", text, re.M))
        used_ids: set[str] = set()
        for p, text in texts.items():
            got = detect(p, text)
            if got is None:
                continue
            kind, fmt = got
            rel = p.relative_to(sources)
            dest = Path("sources") / kind / rel
            (tmp / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, tmp / dest)
            sidecar = p.with_name(p.name + ".meta.yaml")
            if sidecar.exists():
                shutil.copyfile(sidecar, tmp / dest.with_name(dest.name + ".meta.yaml"))
            metrics |= _metric_names(text, kind, fmt, sidecar)
            where = str(rel).lower()
            stated = re.search(r'^\s*environment:\s*["\']?([\w-]+)', text, re.M) or (
                re.search(r'^\s*environment:\s*["\']?([\w-]+)', sidecar.read_text(), re.M) if sidecar.exists() else None)
            env = stated.group(1) if stated and stated.group(1) != "*" else (
                alert.environment if alert.environment.lower() in where else next(
                    (e for e in envs if re.search(rf"(?<![a-z]){re.escape(e)}(?![a-z])", where)), "*"))
            service = max((s for s in known if s.lower() in where), key=len, default="*")
            if service == "*" and kind in ("log", "metric") and env == alert.environment:
                service = alert.service
            groups = [group]
            m = re.match(r"\A---\r?\n(.*?)\r?\n---", text, re.S)
            if m:
                front = yaml.safe_load(m.group(1)) or {}
                groups = list(front.get("groups") or groups)
            sid = _name(rel.with_suffix("").as_posix().replace("/", "-"))
            while sid in used_ids:
                sid += "-2"
            used_ids.add(sid)
            entries.append({"id": sid, "path": dest.as_posix(), "kind": kind, "format": fmt, "environment": env,
                            "service": service, "groups": groups})
        if not entries:
            raise CaseError(str(sources), "<folder>", "at least one file of a known source kind")
        expr_metrics = [m for m in re.findall(r"[A-Za-z_:][\w:]*", alert.expression) if m in metrics]
        symptom = {"id": "symptom", "kind": "symptom", "statement": f"{alert.service} in {alert.environment} shows the "
                   f"alerted departure from its baseline ({alert.rule}).", "direction": "up"}
        if expr_metrics:
            symptom.update(signal="metric", metric=expr_metrics[0])
        start = alert.fired_at - timedelta(minutes=10)
        end = alert.ends_at if alert.ends_at and alert.ends_at > start else start + timedelta(minutes=25)
        case = {
            "format": "investigator/case@1", "id": alert.id,
            "title": f"{alert.environment}/{alert.service}: {alert.rule}",
            "alert": {"id": alert.id, "rule": alert.rule, "fired_at": alert.fired_at.isoformat(), "text": alert.text,
                      "labels": alert.labels},
            "question": f"Why did {alert.rule} fire for {alert.environment}/{alert.service} at "
                        f"{alert.fired_at.isoformat()}, and what caused it?",
            "subject": f"{alert.environment}/{alert.service}",
            "window": {"start": start.isoformat(), "end": end.isoformat(), "change_lookback": "30m", "baseline": "60m"},
            "principal": {"id": "oncall", "groups": [group], "may_request_access": False},
            "budgets": {"rounds": 30, "reads": 100, "reads_per_round": 4},
            "required_claims": [
                symptom,
                {"id": "change_in_window", "kind": "change_in_window",
                 "statement": f"A change to {alert.service} took effect shortly before or during the window."},
                {"id": "causal_attribution", "kind": "causal_chain",
                 "statement": f"The departure of {alert.service} is traced along stated relations to its root and cause."},
            ],
        }
        (tmp / "case.yaml").write_text("# Written by `investigator init`: review access groups before running.\n"
                                       + yaml.safe_dump(case, sort_keys=False, allow_unicode=True))
        (tmp / "sources.yaml").write_text("# Review: every source got the default group; narrow where it is restricted.\n"
                                          + yaml.safe_dump({"format": "investigator/sources@1", "sources": entries},
                                                           sort_keys=False, allow_unicode=True))
        validate_case(tmp)
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(out)
        return out
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


_ = timezone
