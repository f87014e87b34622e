"""The generator's internal picture of one incident: entities, behaviour over time, changes.

These are plain dataclasses (mutable while a scenario is assembled); nothing here is written
to a case as is — the writers render them into the documented formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

INFRA_KINDS = ("database", "cache", "queue", "node", "cluster", "external", "domain")


@dataclass
class Entity:
    name: str
    kind: str = "service"          # service | database | cache | queue | node | cluster | domain | component
    team: str = ""
    deps: list[str] = field(default_factory=list)      # true "depends on" relations (A -> B)
    nodes: list[str] = field(default_factory=list)     # placement (services only)
    version: str = ""
    version_scheme: str = "semver"
    components: list[str] = field(default_factory=list)
    in_k8s: bool = True


@dataclass
class Behaviour:
    """What an entity's signals do; values are levels before noise, onsets whole minutes."""

    mode: str = "latency"          # latency | errors: the kind of the main anomaly
    onset: datetime | None = None  # onset of the main anomaly (None: normal)
    lat_base: float = 50.0         # ms
    lat_delta: float = 0.0
    err_base: float = 0.3          # percent
    err_delta: float = 0.0
    traffic_base: float = 200.0    # per second
    traffic_delta: float = 0.0
    traffic_onset: datetime | None = None
    sat_base: float = 40.0         # percent / count, per the metric
    sat_delta: float = 0.0
    sat_onset: datetime | None = None
    late: bool = False             # a red-herring anomaly after its caller (beyond the tolerance)

    @property
    def anomalous(self) -> bool:
        return self.onset is not None or self.traffic_onset is not None or self.sat_onset is not None


@dataclass
class Change:
    key: str                        # internal handle
    type: str                       # deployment | config_push | feature_flag | certificate | dns | ...
    service: str
    env: str
    started: datetime
    completed: datetime
    fmt: str = "record"             # record | helm | argocd | rollout | flags | snapshot
    id: str | None = None           # None for entries of a history (the docs give them no id)
    target: str | None = None
    version_from: str | None = None
    version_to: str | None = None
    config_changes: list[tuple[str, str, str]] = field(default_factory=list)   # (key, from, to)
    dependency_changes: list[tuple[str, str, str]] = field(default_factory=list)
    flag: tuple[str, str, str] | None = None
    summary: str = ""
    role: str = "herring"           # cause | candidate | herring
    denied: bool = False
    actor: str = ""
    ref: dict = field(default_factory=dict)   # how to find an id-less change (source, revision …)


@dataclass
class Hypothesis:
    id: str
    statement: str
    mentioned_by: list[str]
    metric: str
    entity: str
    direction: str
    min_ratio: float
    outcome: str                    # refuted | confirmed
    competitor: bool
    source_hint: str = ""           # which document proposes it


@dataclass
class Hop:
    a: str
    b: str
    via: str                        # catalog | config | trace | log_phrase | log_field | prose | k8s | none


def onset_of(sc: Any, name: str) -> datetime | None:
    """The onset of an entity of a scenario: its first departing signal."""
    b = sc.behaviour.get(name)
    if b is None:
        return None
    ts = [t for t in (b.onset, b.traffic_onset, b.sat_onset) if t is not None]
    return min(ts) if ts else None
