"""What kind of source a file is, from its name and content (for `investigator init`).

Returns the manifest `kind` and `format`, or None for files that are not sources (sidecars,
binaries). The content decides; the extension only breaks ties.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from state import yamlio
from tools.formats import catalogs as fcatalogs
from tools.formats import changes as fchanges
from tools.formats import cloudmetrics as fcloud
from tools.formats import chat as fchat
from tools.formats import configs as fconfigs
from tools.formats import k8s as fk8s
from tools.formats import ledgers as fledgers
from tools.formats import logs as flogs
from tools.formats import metrics as fmetrics

PROSE_WORDS = (("postmortem", "postmortem"), ("post-mortem", "postmortem"), ("incident-review", "postmortem"),
               ("runbook", "runbook"), ("playbook", "runbook"), ("note", "note"), ("handover", "note"),
               ("wiki", "note"))


def _json(text: str) -> object | None:
    try:
        return json.loads(text)
    except ValueError:
        first = text.lstrip().split("\n", 1)[0]
        try:
            return json.loads(first)
        except ValueError:
            return None


def _records_kind(text: str) -> tuple[str, str] | None:
    """A file of records in a tool's shape: a change history/ledger/audit, or a service registry."""
    if fmt := fledgers.detect(text):
        return "change", fmt
    if fmt := fcatalogs.detect(text):
        return "catalog", fmt
    return None


def detect(path: Path, text: str) -> tuple[str, str] | None:
    name = path.name.lower()
    if name.endswith(".meta.yaml") or name.endswith(".meta.yml"):
        return None
    head = text.lstrip()[:4000]
    if name.endswith(".md") or name.endswith(".markdown"):
        if not head.startswith("---"):
            return None
        kind = next((k for w, k in PROSE_WORDS if w in str(path).lower()), "doc")
        return kind, "markdown"
    if name.endswith(".csv"):
        return ("metric", "csv") if head.lower().startswith("ts,value") or fmetrics.is_grafana(head) else None
    if name.endswith(".env"):
        return "config", "env"
    if name.endswith(".properties"):
        return "config", "properties"
    if head.startswith(("{", "[")):
        data = _json(text)
        blob = head
        if fchat.detect(text):
            return "note", "chat"
        if "resourceSpans" in blob:
            return "trace", "otlp"
        if '"spans"' in blob and '"traceID"' in blob:
            return "trace", "jaeger"
        if isinstance(data, dict) and isinstance(data.get("data"), dict) and "result" in data["data"]:
            return "metric", "prometheus"
        if (cloud := fcloud.detect(text)) is not None:
            return "metric", cloud
        if (fmt := fledgers.detect(text)) in ("certificates", "cloudtrail", "route53", "ecs", "spinnaker"):
            return "change", fmt
        if "involvedObject" in blob or '"reason"' in blob and '"Event' in blob:
            return "kubernetes", "events"
        if '"nodeName"' in blob or '"PodList"' in blob:
            return "kubernetes", "pods"
        if '"ConfigMap"' in blob:
            return "config", "configmap"
        fmt = fchanges.detect(text)
        if fmt in ("argocd", "helm"):
            return "change", fmt
        if re.search(r'"flag"\s*:', blob):  # a toggle names its flag (a `"kind": "flag"` audit entry is a ledger)
            return "change", "flags"
        if got := _records_kind(text):
            return got
        if flogs.detect(text) == "json" and any(k in blob for k in ('"level"', '"severity"', '"msg"', '"message"')):
            return "log", "json"
        return "config", "json"
    if (fmt := fledgers.detect(text)) == "migrations":
        return "change", fmt
    first = head.split("\n", 1)[0]
    if re.match(r"^(deployment\.apps|deployment|deploy)/", head) or first.startswith("REVISION"):
        return "change", "rollout"
    if first.startswith(("NAME ", "NAMESPACE ")) and "NODE" in first:
        return "kubernetes", "pods-wide"
    if re.search(r"^Name:\s", head, re.M) and re.search(r"^(Namespace|Roles|Labels):", head, re.M):
        return "kubernetes", "describe"
    if name.endswith((".yaml", ".yml")):
        try:
            data = yamlio.loads(text)
        except Exception:  # noqa: BLE001 - not YAML: fall through to logs
            data = None
        if isinstance(data, list) and data and isinstance(data[0], dict) and ("flag" in data[0] or "key" in data[0]):
            return "change", "flags"
        if fcatalogs.detect(text) == "backstage":
            return "catalog", "backstage"
        if isinstance(data, dict):  # the documented records first: their own fields, nothing guessed
            if fcatalogs.native(data):
                return "catalog", "record"
            if "deployed_version" in data:
                return "mapping", "record"
            if "verifications" in data:
                return "ownership", "record"
            if {"id", "type", "started_at"} <= set(data) and "service" in data:
                return "change", "record"
            if data.get("kind") == "ConfigMap":
                return "config", "configmap"
            if "settings" in data and "service" in data:
                return "config", "record"
        if got := _records_kind(text):
            return got
        if isinstance(data, dict) and ("services" in data or "components" in data):
            return "catalog", "record"
        if isinstance(data, (list, dict)):
            return "config", "yaml"
    fmt = flogs.detect(text)
    lines = [ln for ln in text.splitlines() if ln.strip()][:20]
    if lines and (fmt != "plain" or any(flogs._LEAD_TS.match(ln) for ln in lines)):
        return "log", fmt
    cfg = fconfigs.detect(text)
    if cfg in ("env", "properties"):
        return "config", cfg
    _ = fk8s
    return None
