"""Which source states each relation: the path's hops get one chosen channel (or none, or prose),
every other dependency an ordinary one."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .incident import Scenario


# -- relations ------------------------------------------------------------------------------

def near_entities(sc: Scenario) -> set[str]:
    """The entities around the path: its members, their normal dependencies, consumers and callers."""
    topo = sc.topo
    near = set(topo.path) | set(topo.branch) | set(topo.consumers) | set(topo.callers)
    for sibs in topo.siblings.values():
        near |= set(sibs)
    return near


_SERVICE_CHANNELS = ["catalog", "config", "trace", "log_phrase", "log_field"]
PROSE_CARRIERS = ("runbook", "doc", "chat")
"""Where a hop in prose is written: the caller's runbook, its design notes, or a team chat export."""
PROSE_KIND = {"runbook": "runbook", "doc": "doc", "chat": "note"}


def plan_relations(sc: Scenario) -> None:
    r, topo, ents = sc.rng, sc.topo, sc.topo.entities
    path = topo.path
    hops: list[tuple[str, str]] = []
    for a, b in zip(path, path[1:]):
        hops.append((b, a) if b == topo.consumer else (a, b))     # the consumer depends on the root
    if topo.branch:
        hops.append((topo.subject, topo.branch[0]))

    def channels(a: str, b: str) -> list[str]:
        kb = ents[b].kind
        if kb == "node":
            return ["k8s", "k8s", "catalog"]
        if kb == "domain":
            return ["config", "log_phrase", "catalog"]
        if kb in ("database", "cache"):
            return ["catalog", "config", "trace", "log_field"]
        if kb == "queue":
            return ["catalog", "config", "log_phrase", "log_field"]
        if ents[a].kind == "node":
            return ["k8s"]
        return _SERVICE_CHANNELS

    if sc.variant == "relation_missing":
        if topo.consumer is not None:
            sc.never.add((topo.consumer, topo.root))
        else:
            sc.never.add((path[path.index(topo.root) - 1], topo.root))
    if sc.variant == "hop_in_prose":
        cands = [(a, b) for a, b in hops if ents[a].kind == "service" and ents[b].kind == "service"
                 and b != topo.consumer and a != topo.consumer]
        if cands:
            sc.prose_hop = r.choice(cands)
            sc.prose_lang = r.choice(["en", "en", "zh", "de"])
            # drawn apart from the case's own stream, so adding carriers moved no other draw of a case
            sc.prose_carrier = random.Random(f"investigator-generator-carrier:{sc.seed}:{sc.index}").choice(PROSE_CARRIERS)
        else:
            sc.variant = "clean"
    for a, b in hops:
        if (a, b) in sc.never:
            sc.hop_via[(a, b)] = "none"
            sc.stated[(a, b)] = set()
            continue
        if (a, b) == sc.prose_hop:
            sc.hop_via[(a, b)] = "prose"
            sc.stated[(a, b)] = {"prose"}
            continue
        opts = channels(a, b)
        if b == topo.root and sc.variant in ("root_telemetry_missing", "root_telemetry_denied"):
            opts = [o for o in opts if o in ("catalog", "config", "k8s")] or ["catalog"]
        if ents[b].kind == "domain" and sc.mode == "errors":
            opts = [o for o in opts if o != "trace"]
        via = r.choice(opts)
        sc.hop_via[(a, b)] = via
        extra = {o for o in opts if r.random() < 0.3 and o not in ("trace",)}
        if b == topo.root and sc.variant in ("root_telemetry_missing", "root_telemetry_denied"):
            extra = {o for o in extra if o in ("catalog", "config", "k8s")}
        sc.stated[(a, b)] = {via} | extra
    # every other true relation: stated somewhere ordinary (far from the path: the catalog only)
    near = near_entities(sc)
    for name, e in ents.items():
        for d in e.deps:
            if (name, d) in sc.stated or (name, d) in sc.never:
                continue
            if name not in near:
                sc.stated[(name, d)] = {"catalog"}
                continue
            opts = ["catalog", "config", "log_phrase", "log_field"]
            if ents[d].kind in ("database", "cache", "queue"):
                opts = ["catalog", "config", "log_field"]
            sc.stated[(name, d)] = {o for o in opts if r.random() < 0.45} or {"catalog"}
        for n in e.nodes:
            if ents.get(n) and ents[n].kind == "node":
                sc.stated.setdefault((name, n), {"k8s"} if e.in_k8s else {"catalog"})
    if sc.variant in ("root_telemetry_missing", "root_telemetry_denied", "relation_missing"):
        # the caller of the unreachable root never names it in a warning (it would make the root
        # "anomalous as seen by its callers", deciding.md §3)
        for (a, b), ch in sc.stated.items():
            if b == topo.root and a != topo.consumer:
                ch.discard("log_phrase")
                ch.discard("log_field")
                ch.discard("trace")
    if topo.hot_node:
        # a node hop is a placement; it is stated by Kubernetes output or the catalog
        for (a, b), ch in list(sc.stated.items()):
            if b == topo.hot_node and (a, b) not in sc.never:
                sc.stated[(a, b)] = {c for c in ch if c in ("k8s", "catalog")} or {"k8s"}


