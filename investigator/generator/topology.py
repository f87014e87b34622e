"""Topologies: a causal chain from the subject to the root, embedded in a larger service graph.

The chain is built first; everything around it (siblings, callers, consumers of shared
infrastructure, unrelated services) is added so that no entity off the chain is a dependency
of an entity on it unless it stays normal — the property the expected answers rely on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import vocab
from .model import Entity


@dataclass
class Topology:
    domain: str
    entities: dict[str, Entity]
    chain: list[str]                 # services of the causal chain, subject first
    root: str                        # the entity the cause is at (before a consumer step)
    consumer: str | None = None      # the noisy neighbour (a consumer of the root), if any
    branch: list[str] = field(default_factory=list)   # a second anomalous branch (two roots)
    siblings: dict[str, list[str]] = field(default_factory=dict)   # normal deps of chain entities
    callers: list[str] = field(default_factory=list)  # upstream callers of the subject
    consumers: list[str] = field(default_factory=list)  # other (normal) consumers of the root
    nodes: list[str] = field(default_factory=list)
    hot_node: str | None = None
    domain_name: str | None = None   # an external host name at the root (certificate / dns)

    @property
    def subject(self) -> str:
        return self.chain[0]

    @property
    def path(self) -> list[str]:
        """The true anomalous path: chain, then the root if it is not a chain service, then the consumer."""
        out = list(self.chain)
        if self.root != out[-1]:
            out.append(self.root)
        if self.consumer:
            out.append(self.consumer)
        return out


class _Names:
    """Unique names from stems and suffixes, in a seeded order."""

    def __init__(self, rng: random.Random, domain: str) -> None:
        self.rng = rng
        self.stems = list(vocab.DOMAINS[domain])
        rng.shuffle(self.stems)
        self.used: set[str] = set()
        self.i = 0

    def _take(self, make) -> str:  # noqa: ANN001
        for _ in range(500):
            name = make()
            if name not in self.used:
                self.used.add(name)
                return name
        raise RuntimeError("name pool exhausted")

    def service(self) -> str:
        def make() -> str:
            stem = self.stems[self.i % len(self.stems)] if self.i < len(self.stems) else self.rng.choice(self.stems)
            self.i += 1
            return f"{stem}-{self.rng.choice(vocab.SERVICE_SUFFIXES)}"
        return self._take(make)

    def job(self) -> str:
        return self._take(lambda: f"{self.rng.choice(self.stems)}-{self.rng.choice(vocab.JOB_SUFFIXES)}")

    def edge(self) -> str:
        return self._take(lambda: f"{self.rng.choice(vocab.EDGE_STEMS)}-{self.rng.choice(['gateway', 'bff', 'api', 'web'])}")

    def infra(self, kind: str) -> str:
        suffixes = {"database": vocab.DB_SUFFIXES, "cache": vocab.CACHE_SUFFIXES, "queue": vocab.QUEUE_SUFFIXES}[kind]
        return self._take(lambda: f"{self.rng.choice(self.stems)}-{self.rng.choice(suffixes)}")

    def component(self) -> str:
        return self._take(lambda: f"{self.rng.choice(vocab.COMPONENT_STEMS)}-{self.rng.choice(vocab.COMPONENT_SUFFIXES)}")

    def node(self) -> str:
        r = self.rng

        def make() -> str:
            pat = r.choice(vocab.NODE_PATTERNS)
            return pat.format(n=r.randint(1, 40), m=r.randint(0, 255), k=r.randint(1, 254),
                              a=r.choice("abcdef"), h=f"{r.getrandbits(16):04x}")
        return self._take(make)


def _version(rng: random.Random, scheme: str) -> str:
    if scheme == "semver":
        return f"{rng.randint(1, 12)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
    if scheme == "calver":
        return f"2026.{rng.randint(1, 12):02d}.{rng.randint(0, 9)}"
    return f"build-{rng.randint(1000, 99999)}"


def bump(rng: random.Random, version: str) -> str:
    """The next version in the same scheme."""
    if version.startswith("build-"):
        return f"build-{int(version[6:]) + rng.randint(1, 400)}"
    parts = version.split(".")
    if len(parts[0]) == 4:  # calendar
        return f"{parts[0]}.{parts[1]}.{int(parts[2]) + 1}"
    if rng.random() < 0.6:
        return f"{parts[0]}.{parts[1]}.{int(parts[2]) + 1}"
    return f"{parts[0]}.{int(parts[1]) + 1}.0"


def build(rng: random.Random, *, cause: str, depth: int, size: int, root_kind: str, two_roots: bool) -> Topology:
    """A topology whose true path has `depth` hops and whose root has kind `root_kind`.

    root_kind: service | database | cache | queue | node | domain. For a noisy neighbour the
    path ends root -> consumer, so the chain has depth - 1 services before the root.
    """
    domain = rng.choice(sorted(vocab.DOMAINS))
    names = _Names(rng, domain)
    ents: dict[str, Entity] = {}

    def add(name: str, kind: str = "service", **kw) -> Entity:  # noqa: ANN003
        scheme = rng.choice(["semver", "semver", "calver", "build"])
        team = "edge-team" if kind == "domain" else f"{name.split('-')[0]}-team"
        e = Entity(name=name, kind=kind, team=team, version_scheme=scheme,
                   version=_version(rng, scheme) if kind in ("service", "database", "cache", "queue") else "", **kw)
        if kind != "service":
            e.in_k8s = False
        ents[name] = e
        return e

    nn = cause == "noisy_neighbour"
    if root_kind == "service":
        n_chain = depth + 1
    elif nn:
        n_chain = depth - 1
    else:
        n_chain = depth
    chain = [names.service() for _ in range(n_chain)]
    for s in chain:
        add(s)
    for a, b in zip(chain, chain[1:]):
        ents[a].deps.append(b)

    nodes = [names.node() for _ in range(rng.randint(3, 12))]
    for n in nodes:
        add(n, "node")

    topo = Topology(domain=domain, entities=ents, chain=chain, root=chain[-1], nodes=nodes)
    if root_kind in ("database", "cache", "queue"):
        r = names.infra(root_kind)
        add(r, root_kind)
        ents[chain[-1]].deps.append(r)
        topo.root = r
    elif root_kind == "domain":
        vendor = rng.choice(vocab.EXTERNAL_VENDORS)
        host = f"{rng.choice(vocab.EXTERNAL_STEMS)}.{vendor}.{rng.choice(vocab.EXTERNAL_DOMAINS)}"
        add(host, "domain")
        ents[chain[-1]].deps.append(host)
        topo.root = host
        topo.domain_name = host
    elif root_kind == "node":
        topo.root = topo.hot_node = nodes[0]

    # placement: every k8s service on one or two nodes; the hot node hosts only the last chain service
    for name in list(ents):
        e = ents[name]
        if e.kind == "service":
            pool = nodes[1:] if topo.hot_node else nodes
            e.nodes = sorted(rng.sample(pool, k=min(len(pool), rng.choice([1, 1, 2]))))
    if topo.hot_node:
        ents[chain[-1]].nodes = [topo.hot_node]

    if nn:
        c = names.job() if rng.random() < 0.6 else names.service()
        add(c)
        topo.consumer = c
        if root_kind == "node":
            ents[c].nodes = [topo.hot_node]
        else:
            ents[c].deps.append(topo.root)
            ents[c].nodes = [rng.choice(nodes)]

    # normal siblings of chain entities (never another anomalous entity)
    for s in chain:
        sibs: list[str] = []
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            if rng.random() < 0.65:
                x = names.service()
                add(x)
                ents[x].nodes = [rng.choice(nodes[1:] if topo.hot_node else nodes)]
            else:
                kind = rng.choice(["database", "cache"])
                x = names.infra(kind)
                add(x, kind)
            ents[s].deps.append(x)
            sibs.append(x)
        topo.siblings[s] = sibs
    if topo.root not in chain and root_kind not in ("domain", "node"):
        topo.siblings[topo.root] = []

    # a second anomalous branch from the subject (two candidate roots)
    if two_roots:
        q = names.service()
        add(q)
        ents[q].nodes = [rng.choice(nodes[1:] if topo.hot_node else nodes)]
        ents[chain[0]].deps.append(q)
        topo.branch = [q]
        topo.siblings[q] = []

    # other consumers of the root (they stay normal)
    if root_kind in ("database", "cache", "queue", "service", "node"):
        for _ in range(rng.choice([1, 1, 2, 3])):
            x = names.service() if rng.random() < 0.7 else names.job()
            add(x)
            if root_kind == "node":
                ents[x].nodes = [topo.hot_node]
            else:
                ents[x].deps.append(topo.root)
                ents[x].nodes = [rng.choice(nodes[1:] if topo.hot_node else nodes)]
            topo.consumers.append(x)

    # upstream callers of the subject
    for _ in range(rng.choice([0, 1, 1, 2])):
        x = names.edge()
        add(x)
        ents[x].deps.append(chain[0])
        ents[x].nodes = [rng.choice(nodes[1:] if topo.hot_node else nodes)]
        topo.callers.append(x)

    # unrelated services up to the size, with their own dependencies and shared stores
    n_services = sum(1 for e in ents.values() if e.kind == "service")
    unrelated: list[str] = []
    shared: list[str] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["database", "cache", "queue"])
        shared.append(names.infra(kind))
        add(shared[-1], kind)
    protected = set(topo.path) | set(topo.branch)
    while n_services < size:
        x = names.service()
        add(x)
        ents[x].nodes = [rng.choice(nodes[1:] if topo.hot_node else nodes)]
        pool = [u for u in unrelated if u not in protected] + shared
        for d in rng.sample(pool, k=min(len(pool), rng.randint(0, 3))):
            ents[x].deps.append(d)
        unrelated.append(x)
        n_services += 1
    # a cluster the queues run on
    clusters = [e for e in ents.values() if e.kind == "queue"]
    if clusters:
        cl = f"{rng.choice(vocab.CLUSTER_NAMES)}-{rng.choice(['prod', 'main', 'core'])}-{rng.randint(1, 9)}"
        add(cl, "cluster")
        for q in clusters:
            q.nodes = [cl]

    # components (client libraries) used by a few services
    for _ in range(rng.randint(1, 3)):
        comp = names.component()
        add(comp, "component")
        users = rng.sample(sorted(n for n, e in ents.items() if e.kind == "service"), k=2)
        for u in users:
            ents[u].components.append(comp)
        talks = [d for d in ents[users[0]].deps if d not in protected]
        ents[comp].deps = talks[:1]
    return topo


def unbump(rng: random.Random, version: str) -> str:
    """The version before `version` in the same scheme."""
    if version.startswith("build-"):
        return f"build-{max(100, int(version[6:]) - rng.randint(1, 400))}"
    a, b, c = (version.split(".") + ["0", "0"])[:3]
    if len(a) == 4:  # calendar
        return f"{a}.{int(b) - 1:02d}.{rng.randint(0, 4)}" if int(b) > 1 else f"{int(a) - 1}.12.{rng.randint(0, 4)}"
    if int(c) > 0:
        return f"{a}.{b}.{int(c) - 1}"
    if int(b) > 0:
        return f"{a}.{int(b) - 1}.{rng.randint(0, 9)}"
    return f"{max(0, int(a) - 1)}.{rng.randint(0, 20)}.0"

