"""`Scenario`: one incident as the generator decides it (built by `scenario.build_scenario`; the
planners of changes, relations and hypotheses fill it in and read it, so it lives apart from them)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from .model import Behaviour, Change, Hypothesis
from .topology import Topology


@dataclass
class Scenario:
    seed: int
    index: int
    rng: random.Random
    topo: Topology
    cause: str
    variant: str
    depth: int
    root_kind: str
    mode: str
    env: str
    staging: str
    tz: timezone
    tz_text: str
    start: datetime
    end: datetime
    fired_at: datetime
    lookback: int = 30
    baseline: int = 60
    onset_lead: int = 10
    behaviour: dict[str, Behaviour] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    red_herrings: list[str] = field(default_factory=list)
    stated: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # relation -> channels
    never: set[tuple[str, str]] = field(default_factory=set)
    hop_via: dict[tuple[str, str], str] = field(default_factory=dict)
    principal: str = ""
    groups: list[str] = field(default_factory=list)
    may_request: bool = False
    scope: str = "subject"
    case_id: str = ""
    prefix: str = "INC"
    langs: list[str] = field(default_factory=list)
    canaries: list[str] = field(default_factory=list)
    restricted: list[str] = field(default_factory=list)
    denied_telemetry: str | None = None       # an entity whose telemetry is unreadable
    no_telemetry: set[str] = field(default_factory=set)  # entities with no telemetry source at all
    late_sibling: str | None = None
    late_parent: str | None = None
    caller_anomaly: str | None = None
    symptom: dict = field(default_factory=dict)
    implicate: str | None = None              # change key whose element the root's errors name
    prose_hop: tuple[str, str] | None = None
    prose_lang: str = "en"
    prose_carrier: str = "runbook"            # runbook | doc | chat: where the prose hop is written
    claim_ids: dict[str, str] = field(default_factory=dict)
    fmt_hint: str | None = None
    change_types: list[str] | None = None
    pods: dict[str, list[tuple[str, str]]] = field(default_factory=dict)   # workload -> [(pod, node)]
    pod_hash: dict[str, str] = field(default_factory=dict)
    deploy_hist: dict[str, list[tuple[datetime, str, str]]] = field(default_factory=dict)

    # -- the path as the documented rules let the runtime see it ---------------------------
    @property
    def subject(self) -> str:
        return self.topo.subject

    @property
    def path(self) -> list[str]:
        return self.topo.path

    def observed_path(self) -> list[str]:
        """The anomalous path the docs let a reader establish (truncated where a hop or telemetry is missing)."""
        if self.variant == "false_alarm":
            return []
        p = self.path
        if self.variant in ("root_telemetry_missing", "root_telemetry_denied"):
            return p[:p.index(self.topo.root)]
        if self.variant == "relation_missing":
            if self.topo.consumer:
                return p[:-1]
            return p[:p.index(self.topo.root)]
        return p

    def pod_name(self, name: str) -> str:
        return self.pods[name][0][0] if self.pods.get(name) else f"{name}-0"

    def t(self, minutes: float) -> datetime:
        return self.start + timedelta(minutes=minutes)

    def states(self, a: str, b: str, channel: str) -> bool:
        return channel in self.stated.get((a, b), set())

    def cause_changes(self) -> list[Change]:
        return [c for c in self.changes if c.role in ("cause", "candidate")]
