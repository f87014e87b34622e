"""Scoping material for `investigator init`: what each file is about and how far it is trusted.

The environment is the one the material states (content, then an inventory, then the path);
the service an inventory's word, else a catalog name in the path, else the name the file
carries (export-tool words and the environment dropped, a pod name cut to its workload).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tools.formats.records import same_environment


def _name(text: str) -> str:
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return (out or "x")[:100]


def environment(text: str, sidecar_text: str | None, where: str, subject_env: str, envs: list[str],
                listed: str | None = None) -> str:
    """Where the material states it: the content (`environment:` / `"environment":`), else an inventory,
    else the path, else `*`."""
    for t in (text, sidecar_text or ""):
        stated = re.search(r'^\s*"?(?:environment|env)"?\s*[:=]\s*["\']?([\w-]+)', t, re.M | re.I)
        if stated and stated.group(1) != "*" and stated.group(1).lower() in envs + [subject_env.lower()]:
            return subject_env if same_environment(stated.group(1), subject_env) else stated.group(1)
    if listed:
        if listed.lower() in _EVERY:
            return "*"
        return subject_env if same_environment(listed, subject_env) else listed
    tokens = set(re.split(r"[^a-z0-9]+", where))
    if any(same_environment(t, subject_env) for t in tokens if t):
        return subject_env
    return next((e for e in envs if e in tokens), "*")


# words export tools put in file names, around the name of what the file is about
_TOOL_WORDS = frozenset("""helm history release releases argocd argo app application ecs describe services service
flag flags audit flagsmith unleash launchdarkly events event alembic upgrade flyway info liquibase databasechangelog
sqitch log logs route53 change changes certificates certificate cert certs cloudtrail kubectl pods pod nodes node
describe deploy deployment deployments rollout config configs settings metrics metric prom json yaml yml jsonl txt
csv ndjson export dump ledger pipeline inventory catalog registry ownership teams""".split())


def service_from_name(rel: Path, envs: list[str]) -> str:
    """What a telemetry or record file is about, from its name: `checkout.prod.jsonl` → `checkout`,
    `helm-history-checkout-prod.json` → `checkout` (tool words and environment dropped)."""
    for part in rel.name.split("."):
        words = [w for w in part.split("-") if w]
        while words and (words[0].lower() in _TOOL_WORDS or words[0].lower() in envs):
            words.pop(0)
        while words and (words[-1].lower() in _TOOL_WORDS or words[-1].lower() in envs or words[-1].isdigit()):
            words.pop()
        if not words:
            continue  # a part made only of tool words: the name may be in the next one
        name = _POD.sub("", "-".join(words))
        return name if re.search(r"[a-z]", name) and not re.search(r"[A-Z]{3,}|_", name) else ""
    return ""


# a Kubernetes pod name: `<workload>-<replica-set hash>-<pod suffix>` or `<statefulset>-<ordinal>`
_POD = re.compile(r"-[a-f0-9]{8,10}-[a-z0-9]{5}$|-[bcdfghjklmnpqrstvwxz2-9]{9,10}-[bcdfghjklmnpqrstvwxz2-9]{5}$")


_UNTRUSTED_WORDS = ("wiki", "confluence", "kb", "slack", "chat", "scratch", "scratchpad", "discord", "mattermost")


def untrusted(where: str) -> bool:
    """What people typed in a channel, a scratchpad or a wiki anyone edits (by where it was exported to)."""
    tokens = set(re.split(r"[^a-z0-9]+", where))
    return any(w in tokens for w in _UNTRUSTED_WORDS)


def catalog_names(text: str) -> set[str]:
    return set(re.findall(r"^\s*-?\s*name:\s*[\"']?([\w.-]+)", text, re.M)) | set(
        re.findall(r'"name"\s*:\s*"([\w.-]+)"', text))


def metric_sidecar(p: Path, service: str, env: str, envs: list[str], about: dict[str, str], fmt: str) -> str:
    """A sidecar for a metric export without one: the metric and unit an inventory lists, else (for
    a bare `ts,value` CSV) the file name's last part that is not the service or an environment
    (`checkout.prod.p95_ms.csv` → `p95_ms`)."""
    parts = [x for x in re.sub(r"(\.prom)?\.(csv|json)$", "", p.name).split(".") if x]
    rest = [x for x in parts if x.lower() not in envs and x.lower() != service.lower()]
    guessed = _name(rest[-1] if rest else parts[-1] if parts else "value").replace(".", "_")
    metric = about.get("metric") or (guessed if fmt == "csv" else None)
    meta = {**({"metric": metric} if metric else {}), **({"service": service} if service != "*" else {}),
            **({"environment": env} if env != "*" else {}), **({"unit": about["unit"]} if about.get("unit") else {})}
    return "# Written by `investigator init`: the export came without a sidecar.\n" + yaml.safe_dump(meta, sort_keys=False)


_EVERY = frozenset({"all", "any", "*", "various", "multiple", "n/a", "every"})


def service_of(rel: Path, kind: str, env: str, known: set[str], subject_env: str, subject: str, envs: list[str],
               listed: str | None) -> str:
    """What a file is about: an inventory's word, else the longest catalog name in its path, else the
    name its file carries; a log or metric of the alert's environment naming nothing is the subject's."""
    if listed and listed.lower() not in _EVERY:
        return listed
    where = str(rel).lower()
    service = max((s for s in known if s.lower() in where), key=len, default="*")
    if service == "*" and kind in ("log", "metric", "trace", "change", "config", "kubernetes"):
        service = service_from_name(rel, envs) or "*"
    if service == "*" and kind in ("log", "metric") and env == subject_env:
        service = subject
    return service


def zone(text: str | None) -> str | None:
    """A manifest `timezone` from an inventory's (`UTC` → `Z`, `+08:00`); a named zone has no fixed offset."""
    if not text:
        return None
    t = text.strip()
    if t.upper() in ("UTC", "Z", "GMT", "ETC/UTC"):
        return "Z"
    m = re.fullmatch(r"(?:UTC|GMT)?\s*([+-])(\d{1,2}):?(\d{2})?", t)
    return f"{m.group(1)}{int(m.group(2)):02d}:{m.group(3) or '00'}" if m else None
