"""Change sources: YAML records, Helm and Argo CD histories, `kubectl rollout history`, flag audits.

Every entry becomes a `Change` with the offsets of the text that states it. A history entry
without a diff is a change all the same; a rollout revision without a time gets one from a
ScalingReplicaSet event later (the rules join them), or stays undated.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from pydantic import ValidationError

from state import yamlio
from state.change import ConfigChange, FlagChange, restated
from state.sources import ChangeRecord
from state.telemetry import Change, Unparsed, as_text
from tools.formats import jsonspan
from tools.formats.logs import parse_time
from tools.formats.records import load_yaml
from tools.formats.shape import ContentError, expecting, listed

_REV_ROW = re.compile(r"^(?P<rev>\d+)\s+(?P<cause>.*)$")
_REV_HEAD = re.compile(r"with revision #(?P<rev>\d+)")
_HELM = ("a Helm revision object as `helm history -o json` writes it (revision a whole number, updated a zoned "
         "time, chart, app_version, status and description text)")
_ARGOCD = ("an Argo CD history object (id, revision text; deployedAt and deployStartedAt zoned times; source an "
           "object with repoURL and targetRevision text)")
_FLAG_TEXT = ("id", "flag", "key", "name", "feature", "service", "environment")
_FLAG = "a flag toggle object (flag or key text, at a zoned time, from / to values, service and environment text)"
_HELM_LIST = "a list of Helm revision objects (`helm history -o json`), or one under `history` or `items`"
_ARGOCD_LIST = "a list of Argo CD history objects: an Application's `status.history`, `history`, or the list itself"
_FLAG_LIST = "a list of flag toggle objects (JSON lines, a JSON or YAML list, or one under `items` or `events`)"
_FLAG_KEYS = ("items", "events")


def from_record(record: ChangeRecord, start: int, end: int) -> Change:
    return restated(record, Change, start=start, end=end)


def parse_helm(text: str, service: str, environment: str) -> tuple[list[Change], list[Unparsed]]:
    doc = jsonspan.parse(text)
    key = next((k for k in ("history", "items") if doc.get(k) is not None), None)
    if doc.kind == "array":
        items = doc.items
    elif key is None:
        raise ContentError("<document>", _HELM_LIST, doc.start)
    else:
        items = listed(doc.get(key), key, _HELM_LIST)
    out: list[Change] = []
    bad: list[Unparsed] = []
    prev: str | None = None
    prev_id: str | None = None
    where = {id(j): f"[{n}]" if doc.kind == "array" else f"{key}[{n}]" for n, j in enumerate(items)}
    with expecting("<document>", "revisions that are whole numbers (" + _HELM + ")", doc.start):
        items = sorted(items, key=lambda j: int((j.value or {}).get("revision", 0) or 0) if isinstance(j.value, dict) else 0)
    for it in items:
        with expecting(where[id(it)], _HELM, it.start):
            v = it.value if isinstance(it.value, dict) else {}
            ts = parse_time(v.get("updated"), None)
            if ts is None or "revision" not in v:
                bad.append(Unparsed(start=it.start, end=it.end, reason="a helm revision without `revision` and `updated`"))
                continue
            if isinstance(v["revision"], bool) or not str(v["revision"]).isdigit():
                raise ContentError(where[id(it)], _HELM, it.start)
            version = as_text(v.get("app_version") or v.get("chart") or "") or None
            desc = as_text(v.get("description", ""))
            kind = "rollback" if "rollback" in desc.lower() else "deployment"
            cid = f"{service}@helm-rev{v['revision']}"
            # "Rollback to 128" undoes the revision before it (the one that was deployed)
            out.append(Change(start=it.start, end=it.end, id=cid, type=kind,
                              service=service, environment=environment, started_at=ts, completed_at=ts,
                              version_from=prev, version_to=version, summary=f"{v.get('chart', '')} {v.get('status', '')} {desc}".strip(),
                              revision=str(v["revision"]), rollback_of=prev_id if kind == "rollback" else None))
            prev, prev_id = version, cid
    return out, bad


def parse_argocd(text: str, service: str, environment: str) -> tuple[list[Change], list[Unparsed]]:
    doc = jsonspan.parse(text)
    path, items = _argocd_history(doc)
    out: list[Change] = []
    bad: list[Unparsed] = []
    prev: str | None = None
    for n, it in enumerate(items):
        with expecting(f"{path}[{n}]", _ARGOCD, it.start):
            v = it.value if isinstance(it.value, dict) else {}
            done = parse_time(v.get("deployedAt"), None)
            began = parse_time(v.get("deployStartedAt"), None) or done
            if done is None:
                bad.append(Unparsed(start=it.start, end=it.end, reason="an Argo CD history entry without deployedAt"))
                continue
            rev = as_text(v.get("revision") or (v.get("source") or {}).get("targetRevision") or "") or None
            out.append(Change(start=it.start, end=it.end, id=f"{service}@argocd-{v.get('id', len(out))}", type="deployment",
                              service=service, environment=environment, started_at=began, completed_at=done,
                              version_from=prev, version_to=rev, summary=as_text((v.get("source") or {}).get("repoURL", "")),
                              revision=as_text(v.get("id", "")) or None))
            prev = rev
    return out, bad


def _argocd_history(doc: jsonspan.J) -> tuple[str, list[jsonspan.J]]:
    """The JSON path of an Argo CD history and its entries. An Application that has not been synced yet
    has none (`status.history` is left out when empty); a document that is no Application and no history
    is refused."""
    if doc.kind == "array":
        return "", doc.items
    if doc.kind != "object":
        raise ContentError("<document>", _ARGOCD_LIST, doc.start)
    status = doc.get("status")
    if status is not None and status.kind != "object" and not (status.kind == "literal" and status.raw is None):
        raise ContentError("status", "an Application status object (history a list of deployments)", status.start)
    if status is not None and "history" in status.keys:
        return "status.history", listed(status.get("history"), "status.history", _ARGOCD_LIST)
    if "history" in doc.keys:
        return "history", listed(doc.get("history"), "history", _ARGOCD_LIST)
    app = doc.get("kind")
    if status is not None or (app is not None and app.raw == "Application"):
        return "status.history", []
    raise ContentError("<document>", _ARGOCD_LIST, doc.start)


_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Rollout", "CronJob", "Job")


def argocd_workloads(text: str) -> tuple[str, ...]:
    """The workloads an Argo CD Application deploys, as its own status lists them
    (`status.resources`, `status.operationState.syncResult.resources`): what its history changes.
    The Application's name is a GitOps handle that need not be any workload's."""
    try:
        data = json.loads(text)
    except ValueError:
        return ()
    status = data.get("status") if isinstance(data, dict) else None
    if not isinstance(status, dict):
        return ()
    op = status.get("operationState")
    sync = op.get("syncResult") if isinstance(op, dict) else None
    lists = [status.get("resources"), sync.get("resources") if isinstance(sync, dict) else None]
    names = [str(r["name"]) for rs in lists if isinstance(rs, list) for r in rs
             if isinstance(r, dict) and r.get("kind") in _WORKLOAD_KINDS and r.get("name")]
    return tuple(dict.fromkeys(names))


def parse_rollout(text: str, service: str, environment: str) -> tuple[list[Change], list[Unparsed]]:
    """`kubectl rollout history deployment/NAME` (the table, and `--revision=N` details)."""
    out: dict[str, Change] = {}
    details: dict[str, dict[str, Any]] = {}
    bad: list[Unparsed] = []
    workload = service
    pos = 0
    in_table = False
    current: str | None = None
    env_block = False
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        start, end = pos, pos + len(line)
        pos += len(raw)
        s = line.strip()
        if not s:
            continue
        m = re.match(r"^(?:deployment\.apps|deployment|deploy)/(\S+)", s)
        if m:
            workload = m.group(1)
            head = _REV_HEAD.search(s)
            current = head.group("rev") if head else None
            if current:
                details.setdefault(current, {"start": start, "env": {}, "end": end})
            in_table = False
            continue
        if s.startswith("REVISION"):
            in_table, current = True, None
            continue
        if in_table and (row := _REV_ROW.match(s)):
            rev = row.group("rev")
            cause = row.group("cause").strip()
            out[rev] = Change(start=start, end=end, id=f"{workload}@rev{rev}", type="deployment", service=service,
                              environment=environment, summary="" if cause == "<none>" else cause, revision=rev)
            continue
        if current:
            d = details[current]
            d["end"] = end
            if "pod-template-hash=" in s:
                d["hash"] = s.split("pod-template-hash=", 1)[1].split()[0].strip(",")
            elif s.startswith("Image:"):
                image = s.split(":", 1)[1].strip()
                d["version"] = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else None
            elif s.startswith("Environment:"):
                env_block = True
                continue
            elif env_block and re.match(r"^[A-Za-z_][\w.-]*:\s", s) and line.startswith(" " * 6):
                k, v = s.split(":", 1)
                d["env"][k.strip()] = v.strip()
                continue
            env_block = env_block and line.startswith(" " * 6)
            continue
        if in_table:
            bad.append(Unparsed(start=start, end=end, reason="a rollout history row `REVISION CHANGE-CAUSE`"))
    prev_env: dict[str, str] | None = None
    prev_version: str | None = None
    for rev in sorted(set(out) | set(details), key=int):
        d = details.get(rev)
        base = out.get(rev) or Change(start=d["start"], end=d["end"], id=f"{workload}@rev{rev}", type="deployment",
                                      service=service, environment=environment, revision=rev)
        if d is not None:
            env = d["env"]
            diffs = ()
            if prev_env is not None:
                diffs = tuple(ConfigChange(key=k, from_=prev_env.get(k), to=env.get(k))
                              for k in sorted(set(env) | set(prev_env)) if env.get(k) != prev_env.get(k))
            base = base.model_copy(update={"template_hash": d.get("hash"), "version_to": d.get("version"),
                                           "version_from": prev_version, "config_changes": diffs})
            prev_env, prev_version = env, d.get("version") or prev_version
        out[rev] = base
    return [out[r] for r in sorted(out, key=int)], bad


def parse_flags(text: str, service: str, environment: str) -> tuple[list[Change], list[Unparsed]]:
    """Flag toggles: JSON lines, a JSON list, or a YAML list of {at, flag, from, to, service, environment}."""
    entries: list[tuple[int, int, Any]] = []
    bad: list[Unparsed] = []
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        docs, broken = jsonspan.parse_document_or_lines(text)
        bad += [Unparsed(start=s, end=e, reason=r) for s, e, r in broken]
        for d in docs:
            key = next((k for k in _FLAG_KEYS if d.get(k) is not None), None)
            items = d.items if d.kind == "array" else listed(d.get(key), key, _FLAG_LIST) if key else [d]
            entries += [(it.start, it.end, it.value) for it in items]
    else:
        # a block item's text alone is not YAML (its later lines are indented): values from the whole document
        data, root = load_yaml(text)
        key = next((k for k in _FLAG_KEYS if k in data), None) if isinstance(data, dict) else None
        if key is not None:
            node = root.get(key) if root is not None else None
            if data[key] is not None and not isinstance(data[key], list):
                raise ContentError(key, _FLAG_LIST, node.start if node is not None else 0)
            data, nodes = data[key] or [], node.items() if node is not None else []
        elif isinstance(data, list):
            nodes = root.items() if root is not None else []
        else:  # one toggle written as a mapping (a scalar is kept as what it is not: a toggle object)
            data, nodes = ([data], [root]) if data is not None and root is not None else ([], [])
        for node, value in zip(nodes, data):
            entries.append((*yamlio.trim(text, node.start, node.end), value))
    out: list[Change] = []
    for start, end, v in entries:
        where = f"line {text.count(chr(10), 0, start) + 1}"
        with expecting(where, _FLAG, start):
            if not isinstance(v, dict):
                bad.append(Unparsed(start=start, end=end, reason="a flag toggle object"))
                continue
            if any(isinstance(v.get(k), (dict, list)) for k in _FLAG_TEXT):  # names are text, not structures
                raise ContentError(where, _FLAG, start)
            ts = parse_time(v.get("at") or v.get("ts") or v.get("time") or v.get("timestamp") or v.get("date"), None)
            flag = v.get("flag") or v.get("key") or v.get("name") or v.get("feature")
            if ts is None or not flag:
                bad.append(Unparsed(start=start, end=end, reason="a flag toggle with `flag` and a zoned time (`at`)"))
                continue
            old = v.get("from", v.get("old", v.get("previous")))
            new = v.get("to", v.get("new", v.get("value", v.get("enabled"))))
            svc = str(v.get("service") or service)
            out.append(Change(start=start, end=end, id=str(v.get("id") or f"{flag}@{ts.isoformat()}"), type="feature_flag",
                              service=svc, environment=str(v.get("environment") or environment), started_at=ts,
                              completed_at=ts, summary=as_text(v.get("comment") or v.get("reason") or ""),
                              flag=FlagChange(name=str(flag), from_=as_text(old) if old is not None else None,
                                              to=as_text(new) if new is not None else None)))
    return out, bad


def detect(text: str) -> str:
    head = text.lstrip()[:4000]
    if head.startswith("REVISION") or re.match(r"^(deployment\.apps|deployment|deploy)/", head):
        return "rollout"
    if head.startswith(("{", "[")):
        if '"deployedAt"' in head:
            return "argocd"
        if '"revision"' in head and '"updated"' in head:
            return "helm"
        if '"deployedAt"' in text and '"history"' in text:
            return "argocd"  # an Application whose `status.resources` fill the head before `history`
        return "flags"
    try:  # a YAML list of toggles, or a record (a mapping; it may start with `---` and hold lists)
        data = yamlio.loads(text)
    except (yaml.YAMLError, ValueError):
        data = None
    if isinstance(data, (list, dict)):
        return "flags" if isinstance(data, list) else "record"
    if re.match(r"-\s", head) or re.search(r"^-\s+(flag|at|key):", head, re.M):
        return "flags"
    return "record"


def parse_record(text: str) -> tuple[Any, ValidationError | None]:
    data = yamlio.loads(text)
    try:
        return ChangeRecord.model_validate(data), None
    except ValidationError as exc:
        return data, exc
