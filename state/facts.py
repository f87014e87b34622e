"""Facts: what a piece of read-back evidence establishes, typed from parse to decision.

The read step turns a source span into evidence carrying a tuple of facts; the rules are
pure functions of the facts of active evidence, so a revoked source takes its facts with
it. `at` is the exact span of the source (same version as the evidence) that states the
fact, so every fact can be cited on its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Discriminator, TypeAdapter

from state._base import Frozen
from state.change import ChangeBody, OfEntity, Revision
from state.span import Span
from state.telemetry import Role

RelationKind = Literal["depends_on", "calls", "uses", "configured", "runs_on", "talks_to", "stated"]
SignalKind = Literal["metric", "logs", "traces", "events", "callers"]


class RelationFact(Frozen):
    """`source` depends on `target`, as a source states it."""

    kind: Literal["relation"] = "relation"
    source: str
    target: str
    relation: RelationKind
    via: str
    """How it is stated: `catalog depends_on`, `config key payments.url`, `trace child span`,
    `log field upstream`, `log phrase 'call'`, `sentence`…"""
    environment: str = "*"
    at: Span | None = None


class EntityFact(Frozen):
    """A source says what kind of thing a name is (a catalog entry, a node, a pod)."""

    kind: Literal["entity"] = "entity"
    name: str
    entity_kind: str
    aliases: tuple[str, ...] = ()
    at: Span | None = None


class SignalFact(Frozen):
    """One signal of one entity read back for the window: anomalous or not, and since when."""

    kind: Literal["signal"] = "signal"
    entity: str
    signal: SignalKind
    name: str
    """The metric name, `warning/error lines`, `span p95 duration`, `span error share`, an event reason."""
    role: Role | None = None
    unit: str = ""
    direction: Literal["up", "down"] | None = None
    """The direction of the departure (None when not anomalous)."""
    anomalous: bool
    decidable: bool = True
    """False when the baseline is too thin to decide (named as missing, never anomalous)."""
    onset: datetime | None = None
    recovered_at: datetime | None = None
    """When a metric came back inside its threshold after the onset (a rollback that ended it)."""
    baseline: float | None = None
    """Baseline median (metrics), or baseline rate per minute (logs)."""
    level: float | None = None
    """Window level after the onset (median), or the window peak when not anomalous."""
    peak: float | None = None
    ratio: float | None = None
    delta: float | None = None
    """level - baseline, in `unit`: how much it rose (or fell)."""
    count: int = 0
    """Points (metrics) or events (logs, spans, events) in the search range."""
    series: str = ""
    """Which series or log stream (stable within the source)."""
    note: str = ""
    points: tuple[tuple[datetime, float], ...] = ()
    """The finite points of the baseline and search range (metrics and spans), so a claim can
    re-decide the series with its own direction and ratio."""
    capacity: float | None = None
    at: Span | None = None


UPSTREAM = "(something upstream)"
"""The name a bad line is counted under when it blames what lies below it without naming it."""


class MentionFact(Frozen):
    """A name that a warning/error event of `entity` in the search range states."""

    kind: Literal["mention"] = "mention"
    entity: str
    """The writer of the event (whose anomaly the event is part of)."""
    name: str
    """As normalised by the registry (a key in canonical form, an entity name)."""
    name_kind: str
    ts: datetime
    """The onset of the burst of bad lines naming it (or its first mention when there is no burst)."""
    severity: str
    anomalous: bool = True
    """The bad lines naming it burst above their baseline rate (a name they always carry does not count)."""
    at: Span | None = None


class _ChangeKind(Frozen):
    kind: Literal["change"] = "change"


class ChangeFact(Revision, ChangeBody, OfEntity, _ChangeKind):
    """A change of `entity` as the rules use it (the parts in `state.change`), and where it is stated."""

    dated_by: str = ""
    """When the time comes from elsewhere (a ScalingReplicaSet event): which."""
    at: Span | None = None

    @property
    def about(self) -> tuple[str, ...]:
        """The entities the change touched: its service, its target, and every target it went to."""
        return tuple(dict.fromkeys(e for e in (self.entity, self.target, *self.targets) if e))


class SnapshotFact(Frozen):
    """A configuration snapshot of an entity (for diffs between two snapshots)."""

    kind: Literal["snapshot"] = "snapshot"
    entity: str
    environment: str
    source_id: str
    version: str | None = None
    captured_at: datetime | None = None
    settings: dict[str, str]
    lines: dict[str, tuple[int, int]] = {}
    """Offsets of each key's line in the source, for citations of a computed diff."""
    at: Span | None = None


class RolloutDateFact(Frozen):
    """A ScalingReplicaSet event: a workload's replica set with this template hash scaled up."""

    kind: Literal["rollout_date"] = "rollout_date"
    workload: str
    template_hash: str
    ts: datetime
    at: Span | None = None


class PlacementFact(Frozen):
    kind: Literal["placement"] = "placement"
    workload: str
    node: str
    pod: str = ""
    at: Span | None = None


class DeployedFact(Frozen):
    """The version of an entity that is deployed (in the subject's environment)."""

    kind: Literal["deployed"] = "deployed"
    entity: str
    version: str
    how: str
    at: Span | None = None


class DocMappingFact(Frozen):
    kind: Literal["doc_mapping"] = "doc_mapping"
    service: str
    deployed_version: str
    doc_id: str
    version: str
    applies_to: tuple[str, ...]
    at: Span | None = None


class VerificationFact(Frozen):
    kind: Literal["verification"] = "verification"
    doc_id: str
    version: str
    verified_by: str
    for_versions: tuple[str, ...] = ()
    at: Span | None = None


class DocumentFact(Frozen):
    """Front-matter facts of a prose source, for applicability."""

    kind: Literal["document"] = "document"
    doc_id: str
    version: str
    status: str
    service: str
    applies_to_versions: tuple[str, ...] = ()
    title: str = ""


class StatementFact(Frozen):
    """A sentence of a prose source that states a change of a key (or default) of `about`."""

    kind: Literal["statement"] = "statement"
    about: str
    """The entity the document is about (its `service`)."""
    key: str
    """The key it states a change of (canonical form)."""
    versions: tuple[str, ...] = ()
    """Versions the sentence names."""
    phrase: str
    """The change phrase found (from the profile)."""
    at: Span | None = None


class VersionSeenFact(Frozen):
    """A version an entity's log lines carry in the search range (`ver=8.17.12`), and how many of
    its warning/error lines there carry it: which versions fail."""

    kind: Literal["version_seen"] = "version_seen"
    entity: str
    version: str
    lines: int
    bad: int
    first_bad: datetime | None = None
    at: Span | None = None
    """The first bad line carrying it (else the first line)."""


class InjectionFact(Frozen):
    """Text that tries to instruct the investigator: flagged, never obeyed."""

    kind: Literal["injection"] = "injection"
    phrase: str
    at: Span | None = None


Fact = Annotated[
    RelationFact | EntityFact | SignalFact | MentionFact | ChangeFact | SnapshotFact | RolloutDateFact
    | PlacementFact | DeployedFact | DocMappingFact | VerificationFact | DocumentFact | StatementFact
    | InjectionFact | VersionSeenFact,
    Discriminator("kind"),
]
FACTS: TypeAdapter[list[Fact]] = TypeAdapter(list[Fact])
