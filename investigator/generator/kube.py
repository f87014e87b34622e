"""kubectl output: pods (JSON and -o wide), events (JSON), describe (pod or node)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from .bundle import Bundle, Source, iso, utc
from .plan import Plan
from .scenario import Scenario


def _z(dt: datetime) -> str:
    return iso(utc(dt))


def _age(delta: timedelta) -> str:
    s = int(delta.total_seconds())
    if s >= 86400:
        return f"{s // 86400}d{(s % 86400) // 3600}h" if (s % 86400) // 3600 else f"{s // 86400}d"
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60}m" if (s % 3600) // 60 else f"{s // 3600}h"
    return f"{max(1, s // 60)}m"


def _listed(sc: Scenario) -> list[str]:
    """Workloads whose pods the listing shows: everything near the path, and some others."""
    topo = sc.topo
    near = set(topo.path) | set(topo.branch) | set(topo.consumers) | set(topo.callers)
    for sibs in topo.siblings.values():
        near |= set(sibs)
    # a placement the scenario withholds (relation_missing on a node) is never listed
    hidden = {a for a, b in sc.never if sc.topo.entities[b].kind == "node"}
    return [w for w in sc.pods if (w in near or sc.rng.random() < 0.4) and w not in hidden]


def write_kube(sc: Scenario, plan: Plan, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    ns = sc.env
    if plan.k8s_pods:
        listed = _listed(sc)
        created = sc.start - timedelta(days=r.randint(1, 20), hours=r.randint(0, 23))
        rows: list[tuple[str, str, str]] = []   # (workload, pod, line)
        if plan.k8s_pods == "json":
            lines = []
            for w in listed:
                for pod, node in sc.pods[w]:
                    obj = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": pod, "namespace": ns, "labels": {"app": w, "pod-template-hash": sc.pod_hash[w]},
                                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                             "name": f"{w}-{sc.pod_hash[w]}", "controller": True}],
                                        "creationTimestamp": _z(created)},
                           "spec": {"nodeName": node, "containers": [{"name": "main", "image": f"registry.example.com/{w}:{sc.topo.entities[w].version}"}]},
                           "status": {"phase": "Running", "podIP": f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(2, 250)}"}}
                    line = json.dumps(obj, separators=(",", ":"))
                    lines.append(line)
                    rows.append((w, pod, line))
            text = '{"apiVersion":"v1","kind":"PodList","items":[\n' + ",\n".join(lines) + '\n],"metadata":{"resourceVersion":""}}\n'
            fmt, path = "pods", f"sources/kubernetes/pods-{ns}.json"
        else:
            table = []
            for w in listed:
                for pod, node in sc.pods[w]:
                    ip = f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(2, 250)}"
                    table.append((w, pod, "1/1", "Running", str(r.choice([0, 0, 0, 1, 2])), _age(sc.end - created), ip, node))
            wname = max([len("NAME")] + [len(t[1]) for t in table]) + 3
            wnode = max([len("NODE")] + [len(t[7]) for t in table]) + 3
            head = f"{'NAME':<{wname}}{'READY':<8}{'STATUS':<10}{'RESTARTS':<11}{'AGE':<7}{'IP':<16}{'NODE':<{wnode}}NOMINATED NODE   READINESS GATES"
            lines = [head]
            for w, pod, ready, status, restarts, age, ip, node in table:
                line = f"{pod:<{wname}}{ready:<8}{status:<10}{restarts:<11}{age:<7}{ip:<16}{node:<{wnode}}<none>           <none>"
                lines.append(line)
                rows.append((w, pod, line.rstrip()))
            text = "\n".join(lines) + "\n"
            fmt, path = "pods-wide", f"sources/kubernetes/pods-{ns}-wide.txt"
        src = bundle.add(Source(id=f"pods-{ns}", path=path, kind="kubernetes", fmt=fmt, service="*", env=ns, text=text,
                                groups=groups_for("*"), explicit_format=r.random() < 0.5, tags=[f"k8s/{fmt}"]))
        done: set[str] = set()
        for w, pod, line in rows:
            node = next(n for p, n in sc.pods[w] if p == pod)
            if f"hop:{w}:{node}" not in done:
                bundle.anchor(f"hop:{w}:{node}", src, line)
                done.add(f"hop:{w}:{node}")

    if plan.k8s_events:
        _events(sc, bundle, groups_for)
    if plan.k8s_describe:
        _describe(sc, plan, bundle, groups_for)


def _event(sc: Scenario, obj_kind: str, name: str, reason: str, message: str, typ: str, first: datetime,
           last: datetime, count: int, component: str) -> dict:
    r = sc.rng
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{r.getrandbits(64):x}", "namespace": sc.env},
            "involvedObject": {"kind": obj_kind, "name": name, "namespace": sc.env},
            "reason": reason, "message": message, "type": typ, "count": count,
            "firstTimestamp": _z(first), "lastTimestamp": _z(last), "source": {"component": component}}


def _events(sc: Scenario, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    items: list[tuple[datetime, dict]] = []
    t0 = sc.start - timedelta(minutes=sc.baseline)
    # routine events
    for w in sorted(sc.pods)[: r.randint(2, 8)]:
        pod, node = sc.pods[w][0]
        t = t0 + timedelta(minutes=r.randint(0, sc.baseline - sc.onset_lead - 2), seconds=r.randint(0, 59))
        items.append((t, _event(sc, "Pod", pod, "Pulled", f"Container image \"registry.example.com/{w}\" already present on machine",
                                "Normal", t, t, 1, "kubelet")))
    # rollouts: one ScalingReplicaSet event per revision, by pod-template hash
    for ch in sc.changes:
        if ch.fmt == "rollout":
            for rev in ch.ref.get("revisions", []):
                t = rev["at"]
                msg = f"Scaled up replica set {ch.service}-{rev['hash']} to {rev['replicas']}"
                items.append((t, _event(sc, "Deployment", ch.service, "ScalingReplicaSet", msg, "Normal", t, t, 1,
                                        "deployment-controller")))
    # warnings on the path (never for an entity whose telemetry the case withholds)
    for x in sc.topo.path + sc.topo.branch:
        b = sc.behaviour.get(x)
        if x not in sc.pods or b is None or b.onset is None or x in sc.no_telemetry or x == sc.denied_telemetry:
            continue
        if r.random() < 0.4:
            pod = sc.pods[x][0][0]
            first = b.onset + timedelta(seconds=r.randint(20, 50))
            last = min(sc.end, first + timedelta(minutes=r.randint(3, 9)))
            msg = r.choice(["Readiness probe failed: Get \"http://10.0.0.1:8080/ready\": context deadline exceeded",
                            "Liveness probe failed: HTTP probe failed with statuscode: 503"])
            items.append((first, _event(sc, "Pod", pod, "Unhealthy", msg, "Warning", first, last, r.randint(3, 12), "kubelet")))
    items.sort(key=lambda it: it[0])
    text = '{"apiVersion":"v1","kind":"List","items":[\n' + ",\n".join(json.dumps(o, separators=(",", ":")) for _, o in items) \
        + '\n],"metadata":{"resourceVersion":""}}\n'
    src = bundle.add(Source(id=f"events-{sc.env}", path=f"sources/kubernetes/events-{sc.env}.json", kind="kubernetes",
                            fmt="events", service="*", env=sc.env, text=text, groups=groups_for("*"),
                            explicit_format=r.random() < 0.5, tags=["k8s/events"]))
    for ch in sc.changes:
        if ch.fmt == "rollout":
            for rev in ch.ref.get("revisions", []):
                if rev.get("current"):
                    bundle.anchor(f"change:{ch.key}:event", src,
                                  f"Scaled up replica set {ch.service}-{rev['hash']} to {rev['replicas']}")


def _describe(sc: Scenario, plan: Plan, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    captured = (sc.end + timedelta(minutes=r.randint(3, 15))).replace(second=0, microsecond=0)
    if plan.k8s_describe == "node":
        node = sc.topo.hot_node or r.choice(sc.topo.nodes)
        hidden = {a for a, b in sc.never if b == node}
        pods = [(w, p) for w, ps in sorted(sc.pods.items()) for p, n in ps if n == node and w not in hidden]
        created = captured - timedelta(days=r.randint(5, 90))
        lines = [f"Name:               {node}", "Roles:              <none>",
                 f"Labels:             kubernetes.io/hostname={node}",
                 f"                    topology.kubernetes.io/zone=zone-{r.choice('abc')}",
                 f"CreationTimestamp:  {utc(created):%a, %d %b %Y %H:%M:%S} +0000", "Taints:             <none>",
                 "Unschedulable:      false", "Conditions:",
                 "  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message",
                 "  ----             ------  -----------------                 ------------------                ------                       -------"]
        hb = utc(captured - timedelta(seconds=r.randint(5, 50)))
        for typ, st, reason, msg in [("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                                     ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                     ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                                     ("Ready", "True", "KubeletReady", "kubelet is posting ready status")]:
            lines.append(f"  {typ:<17}{st:<8}{hb:%a, %d %b %Y %H:%M:%S} +0000   {utc(created):%a, %d %b %Y %H:%M:%S} +0000   {reason:<29}{msg}")
        lines += ["Capacity:", f"  cpu:                {r.choice([4, 8, 16])}", "  memory:             32871768Ki", "  pods:               110",
                  f"Non-terminated Pods:          ({len(pods)} in total)",
                  "  Namespace                   Name                                      CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age",
                  "  ---------                   ----                                      ------------  ----------  ---------------  -------------  ---"]
        rows = {}
        for w, p in pods:
            line = f"  {sc.env:<28}{p:<42}{'500m (12%)':<14}{'1 (25%)':<12}{'512Mi (1%)':<17}{'1Gi (3%)':<15}{_age(timedelta(days=r.randint(1, 9)))}"
            lines.append(line)
            rows[w] = line.rstrip()
        lines += ["Events:              <none>"]
        text = "\n".join(lines) + "\n"
        src = bundle.add(Source(id=f"describe-node-{node}", path=f"sources/kubernetes/describe-node-{node}.txt", kind="kubernetes",
                                fmt="describe", service=node, env=sc.env, text=text, groups=groups_for("*"),
                                captured_at=captured, tags=["k8s/describe"]))
        for w, line in rows.items():
            bundle.anchor(f"hop:{w}:{node}", src, line)
        return
    w = sc.subject if sc.subject in sc.pods else sorted(sc.pods)[0]
    pod, node = sc.pods[w][0]
    started = captured - timedelta(days=r.randint(1, 12), hours=r.randint(0, 23))
    ip = f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(2, 250)}"
    lines = [f"Name:             {pod}", f"Namespace:        {sc.env}", "Priority:         0", "Service Account:  default",
             f"Node:             {node}/10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(2, 250)}",
             f"Start Time:       {started:%a, %d %b %Y %H:%M:%S %z}", f"Labels:           app={w}",
             f"                  pod-template-hash={sc.pod_hash[w]}", "Status:           Running", f"IP:               {ip}",
             f"Controlled By:    ReplicaSet/{w}-{sc.pod_hash[w]}", "Containers:", "  main:",
             f"    Image:          registry.example.com/{w}:{sc.topo.entities[w].version}", "    State:          Running",
             f"      Started:      {started:%a, %d %b %Y %H:%M:%S %z}", "    Ready:          True", "    Restart Count:  0",
             "Conditions:", "  Type              Status", "  Initialized       True", "  Ready             True",
             "  ContainersReady   True", "  PodScheduled      True", "Events:",
             "  Type    Reason   Age   From     Message", "  ----    ------   ----  ----     -------",
             f"  Normal  Pulled   {_age(captured - started):<6}kubelet  Container image \"registry.example.com/{w}\" already present on machine"]
    text = "\n".join(lines) + "\n"
    src = bundle.add(Source(id=f"describe-pod-{w}", path=f"sources/kubernetes/describe-pod-{pod}.txt", kind="kubernetes",
                            fmt="describe", service=w, env=sc.env, text=text, groups=groups_for(w),
                            captured_at=captured, tags=["k8s/describe"]))
    bundle.anchor(f"hop:{w}:{node}", src, next(ln for ln in lines if ln.startswith("Node:")))
