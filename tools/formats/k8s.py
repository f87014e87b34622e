"""Kubernetes output: `get events -o json`, `get pods -o json`, `get pods -o wide`, `describe`.

Gives placements (pod → workload → node), events (warnings as anomalies, ScalingReplicaSet
as rollout dates) and node conditions, each with its offsets in the file.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

from state.telemetry import K8sEvent, PodPlacement, Unparsed
from tools.formats import jsonspan
from tools.formats.logs import parse_time
from tools.formats.shape import expecting, listed

_HASHED_POD = re.compile(r"^(?P<wl>.+?)-(?P<hash>[b-df-hj-np-tv-z0-9]{6,10})-(?P<suffix>[a-z0-9]{5})$")
"""`<workload>-<pod-template hash>-<suffix>`: Kubernetes writes hashes without vowels (its safe
alphabet; a CronJob's Job adds digits), so `node-exporter-7tq9v` — a DaemonSet's pod — is not `node`'s."""
_SCALED = re.compile(r"Scaled up replica set (?P<rs>\S+?) (?:to|from) ", re.I)
_POD = ("a pod object as `kubectl get pods -o json` writes it (metadata an object: name and namespace text, labels "
        "an object, ownerReferences a list of objects; spec.nodeName text)")
_EVENT = ("an event object as `kubectl get events -o json` writes it (reason and message text, involvedObject an "
          "object, count a whole number, a zoned time)")
_EVENTS = "a list of event objects (`kubectl get events -o json`)"
_PODS = "a list of pod objects (`kubectl get pods -o json`)"
_AGE = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def workload_of_pod(pod: str, template_hash: str | None = None) -> str | None:
    """`web-7f6d4c8b95-h8zkt` → `web` (a Deployment's pod); None when the name has no such shape."""
    if template_hash and f"-{template_hash}-" in pod:
        return pod.split(f"-{template_hash}-", 1)[0]
    m = _HASHED_POD.match(pod)
    return m.group("wl") if m else None


def workload_of_replicaset(rs: str, template_hash: str | None = None) -> tuple[str, str | None]:
    if template_hash and rs.endswith("-" + template_hash):
        return rs[: -len(template_hash) - 1], template_hash
    m = re.match(r"^(?P<wl>.+)-(?P<hash>[a-z0-9]{6,10})$", rs)
    return (m.group("wl"), m.group("hash")) if m else (rs, None)


def _items(doc: jsonspan.J, expected: str) -> list[jsonspan.J]:
    """The objects of one JSON document: a List's `items`, an array's items, else the document itself
    (one object, as `kubectl get KIND NAME -o json` writes it; a line that is none is kept unparsed)."""
    if doc.kind == "array":
        return doc.items
    if doc.kind == "object" and "items" in doc.keys:
        return listed(doc.get("items"), "items", expected)
    return [doc]


def _where(doc: jsonspan.J, i: int, item: jsonspan.J) -> str:
    """The JSON path of an item: `items[3]` of a list object, `[3]` of an array, else the document."""
    if item is doc:
        return "<document>"
    return f"items[{i}]" if doc.kind == "object" else f"[{i}]"


def _event_time(obj: dict) -> datetime | None:
    for key in ("firstTimestamp", "eventTime", "lastTimestamp"):
        ts = parse_time(obj.get(key), None)
        if ts is not None:
            return ts
    return parse_time((obj.get("metadata") or {}).get("creationTimestamp"), None)


def parse_events(text: str) -> tuple[list[K8sEvent], list[Unparsed]]:
    docs, bad = jsonspan.parse_document_or_lines(text)
    out: list[K8sEvent] = []
    unparsed = [Unparsed(start=s, end=e, reason=r) for s, e, r in bad]
    for doc in docs:
        for i, it in enumerate(_items(doc, _EVENTS)):
            with expecting(_where(doc, i, it), _EVENT, it.start):
                obj = it.value if isinstance(it.value, dict) else {}
                inv = obj.get("involvedObject") or obj.get("regarding") or {}
                ts = _event_time(obj)
                if ts is None or not obj.get("reason"):
                    unparsed.append(Unparsed(start=it.start, end=it.end, reason="an event without reason or time"))
                    continue
                out.append(K8sEvent(start=it.start, end=it.end, ts=ts, type=str(obj.get("type") or "Normal"),
                                    reason=str(obj["reason"]), message=str(obj.get("message") or obj.get("note") or ""),
                                    object_kind=str(inv.get("kind", "")), object_name=str(inv.get("name", "")),
                                    namespace=str(inv.get("namespace", "")), count=int(obj.get("count") or 1)))
    return out, unparsed


def rollout_of(event: K8sEvent) -> tuple[str, str] | None:
    """(workload, pod-template hash) of a ScalingReplicaSet event that scales a replica set *up*
    (a revision rolling out), or None; scaling the old one down dates nothing."""
    if event.reason != "ScalingReplicaSet":
        return None
    m = _SCALED.search(event.message)
    if not m:
        return None
    wl, h = workload_of_replicaset(m.group("rs"))
    if event.object_kind == "Deployment" and event.object_name:
        wl = event.object_name
    return (wl, h) if h else None


def parse_pods_json(text: str) -> tuple[list[PodPlacement], list[Unparsed]]:
    docs, bad = jsonspan.parse_document_or_lines(text)
    out: list[PodPlacement] = []
    unparsed = [Unparsed(start=s, end=e, reason=r) for s, e, r in bad]
    for doc in docs:
        for i, it in enumerate(_items(doc, _PODS)):
            with expecting(_where(doc, i, it), _POD, it.start):
                obj = it.value if isinstance(it.value, dict) else {}
                meta = obj.get("metadata") or {}
                name = meta.get("name")
                if not name:
                    unparsed.append(Unparsed(start=it.start, end=it.end, reason="a pod without metadata.name"))
                    continue
                labels = meta.get("labels") or {}
                h = labels.get("pod-template-hash")
                workload = None
                for ref in meta.get("ownerReferences") or []:
                    kind, rname = ref.get("kind", ""), ref.get("name", "")
                    if kind == "ReplicaSet":
                        workload, h2 = workload_of_replicaset(rname, h)
                        h = h or h2
                    elif kind == "Job":
                        workload = re.sub(r"-\d{6,}$", "", rname)
                    elif rname:
                        workload = rname
                out.append(PodPlacement(start=it.start, end=it.end, pod=str(name),
                                        workload=workload or workload_of_pod(str(name), h),
                                        node=(obj.get("spec") or {}).get("nodeName"), namespace=str(meta.get("namespace", "")),
                                        template_hash=h))
    return out, unparsed


def _columns(header: str) -> list[tuple[str, int]]:
    """Column names and start positions of a kubectl table header (two-word names kept together)."""
    cols = []
    for m in re.finditer(r"\S+(?: (?=[A-Z]{2,}\b)\S+)*", header):
        cols.append((m.group(0), m.start()))
    return cols


def parse_pods_wide(text: str) -> tuple[list[PodPlacement], list[Unparsed]]:
    lines = text.splitlines(keepends=True)
    out: list[PodPlacement] = []
    bad: list[Unparsed] = []
    pos = 0
    cols: list[tuple[str, int]] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        end = pos + len(line)
        if line.strip():
            if line.lstrip().startswith("NAME") or line.lstrip().startswith("NAMESPACE"):
                cols = _columns(line)
            elif cols:
                row = {}
                for i, (name, start) in enumerate(cols):
                    stop = cols[i + 1][1] if i + 1 < len(cols) else len(line)
                    row[name] = line[start:stop].strip()
                pod, node = row.get("NAME", ""), row.get("NODE", "")
                if pod and node and node != "<none>":
                    out.append(PodPlacement(start=pos, end=end, pod=pod, workload=workload_of_pod(pod),
                                            node=node, namespace=row.get("NAMESPACE", "")))
                else:
                    bad.append(Unparsed(start=pos, end=end, reason="a pod row without NAME or NODE"))
            else:
                bad.append(Unparsed(start=pos, end=end, reason="a row before the NAME … NODE header"))
        pos += len(raw)
    return out, bad


def _age(text: str) -> timedelta | None:
    m = _AGE.fullmatch(text.strip())
    if not m or not any(m.groups()):
        return None
    d, h, mi, s = (int(x or 0) for x in m.groups())
    return timedelta(days=d, hours=h, minutes=mi, seconds=s)


def parse_describe(text: str, captured_at: datetime | None
                   ) -> tuple[list[PodPlacement], list[K8sEvent], list[Unparsed], str | None]:
    """Pods/nodes described: placements, events (needs `captured_at` for ages) and node conditions."""
    placements: list[PodPlacement] = []
    events: list[K8sEvent] = []
    bad: list[Unparsed] = []
    lines = text.splitlines(keepends=True)
    offsets, pos = [], 0
    for raw in lines:
        offsets.append(pos)
        pos += len(raw)
    name = kind = node = ""
    section = ""
    cols: list[tuple[str, int]] = []
    problem = None
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        start, end = offsets[i], offsets[i] + len(line)
        if not line.strip():
            continue
        top = re.match(r"^([A-Za-z][\w -]*?):\s*(.*)$", line)
        if top and not line.startswith(" "):
            key, val = top.group(1), top.group(2).strip()
            section = key
            cols = []
            if key == "Name":
                name, node = val, ""
                kind = "Node" if "Node" in text[:200] and "Namespace:" not in text[:400] else "Pod"
            elif key == "Node" and name:
                node = val.split("/", 1)[0]
                placements.append(PodPlacement(start=start, end=end, pod=name, workload=workload_of_pod(name),
                                               node=node))
            elif key == "Controlled By" and placements and placements[-1].pod == name:
                ctl_kind, _, ctl = val.partition("/")
                wl = workload_of_replicaset(ctl)[0] if ctl_kind == "ReplicaSet" else ctl
                placements[-1] = placements[-1].model_copy(update={"workload": wl})
            elif key == "Roles" or key == "Taints":
                kind = "Node"
            continue
        if section in ("Events", "Conditions", "Non-terminated Pods"):
            stripped = line.strip()
            if stripped.startswith(("Type", "Namespace", "----", "---")) or stripped.startswith("("):
                if stripped.startswith(("Type", "Namespace")):
                    cols = _columns(line)
                continue
            if not cols:
                continue
            row = {}
            for j, (col, cstart) in enumerate(cols):
                stop = cols[j + 1][1] if j + 1 < len(cols) else len(line)
                row[col] = line[cstart:stop].strip()
            if section == "Events":
                age = row.get("Age", "")
                m = re.match(r"^(\S+)(?:\s+\(x(\d+) over (\S+)\))?$", age)
                first = _age(m.group(3)) if m and m.group(3) else (_age(m.group(1)) if m else None)
                if captured_at is None:
                    problem = "`captured_at` on the manifest entry (describe ages are relative)"
                    bad.append(Unparsed(start=start, end=end, reason="an event age without `captured_at`"))
                    continue
                if first is None:
                    bad.append(Unparsed(start=start, end=end, reason="an event row without an age"))
                    continue
                events.append(K8sEvent(start=start, end=end, ts=captured_at - first, type=row.get("Type", "Normal"),
                                       reason=row.get("Reason", ""), message=row.get("Message", ""),
                                       object_kind=kind, object_name=name, count=int(m.group(2)) if m and m.group(2) else 1))
            elif section == "Conditions":
                status = row.get("Status", "")
                when = row.get("LastTransitionTime", "")
                try:
                    ts = parsedate_to_datetime(when) if when else None
                except (TypeError, ValueError):
                    ts = parse_time(when, None)
                if status == "True" and ts is not None and row.get("Type"):
                    events.append(K8sEvent(start=start, end=end, ts=ts, type="Condition", reason=row["Type"],
                                           message=row.get("Message", ""), object_kind="Node", object_name=name))
            elif section == "Non-terminated Pods":
                pod = row.get("Name", "")
                if pod and name:
                    placements.append(PodPlacement(start=start, end=end, pod=pod, workload=workload_of_pod(pod),
                                                   node=name, namespace=row.get("Namespace", "")))
    return placements, events, bad, problem


def detect(text: str) -> str:
    head = text.lstrip()[:3000]
    if head.startswith(("{", "[")):
        if "involvedObject" in head or '"regarding"' in head:
            return "events"
        # a pod's status has `reason`s too (CrashLoopBackOff, ContainersNotReady): pods have a `spec`
        return "events" if '"reason"' in head and '"spec"' not in head else "pods"
    first = head.splitlines()[0] if head else ""
    if first.startswith(("NAME ", "NAMESPACE ")) and "NODE" in first:
        return "pods-wide"
    return "describe"
