"""Evidence, reads, hits, actions and gaps: the values the loop passes around."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field

from state._base import Frozen, TrustLevel, stable_id
from state.facts import Fact, SignalFact
from state.span import Span

ReadOutcome = Literal["ok", "denied", "not_found", "failed"]
EvidenceStatus = Literal["active", "revoked", "stale"]

__all__ = ["Span", "Finding", "Scope", "Evidence", "ReadRecord", "Hit", "Action", "Gap", "BridgeOccurrence"]


class Finding(Frozen):
    """How a piece of evidence was found."""

    tool: str
    query: str
    channel: str
    rank: int
    score: float


class Scope(Frozen):
    environment: str
    service: str


class Evidence(Frozen):
    """One observation read back from a source (or given by the case, unverified)."""

    id: str
    kind: Literal["read", "initial"] = "read"
    source_id: str
    source_kind: str
    version: str
    """Declared version of the source (front matter, record id) or its revision."""
    revision: str
    """sha256 of the whole source text at read time, for re-anchoring."""
    span: Span | None
    found: Finding | None = None
    read_at: datetime | None = None
    watermark: str = ""
    """Permission watermark under which it was read."""
    trust: TrustLevel
    scope: Scope
    claim_ids: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()
    """What the span establishes, typed (relations, signals, changes, statements…)."""
    text: str = ""
    """For initial evidence only: what the case says."""
    status: EvidenceStatus = "active"
    status_note: str = ""
    round: int = 0

    def signals(self) -> list[SignalFact]:
        return [f for f in self.facts if isinstance(f, SignalFact)]

    @property
    def label(self) -> str:
        """'untrusted', or the document status when it is not current ('historical'…)."""
        if self.trust == "untrusted":
            return "untrusted"
        doc = next((f for f in self.facts if f.kind == "document"), None)
        return "" if doc is None or doc.status == "current" else doc.status


class ReadRecord(Frozen):
    """One attempt to read a span back, whatever its outcome."""

    source_id: str
    version: str = ""
    start: int = 0
    end: int = 0
    outcome: ReadOutcome
    detail: str = ""
    attempts: int = 1
    reused: bool = False
    """Answered from an earlier read of the same unchanged source version."""


class BridgeOccurrence(Frozen):
    """An entity on a causal path, with the evidence and span that put it there."""

    entity: str
    kind: str
    scope: Scope
    source_id: str
    version: str
    start: int
    end: int
    evidence_id: str


class Hit(Frozen):
    """A ranked candidate span returned by a tool (not yet read back)."""

    source_id: str
    chunk_id: str
    start: int
    end: int
    score: float
    rank: int
    channel: str
    tool: str
    revision: str = ""
    """Revision of the source when it was indexed (empty for structured lookups)."""
    focus: str = ""
    """What the lookup was about (an entity, a series key): the read step derives facts for it."""
    about: str = ""
    """The entity a structured lookup of several entities returned this hit for (telemetry,
    relations): whether *that* entity has streams left unread is then known per entity."""


# --- actions: what the planner asks a tool to do ---------------------------------------------

class TelemetryAction(Frozen):
    """Read entities' own signals (metrics, logs, traces, events) for the window."""

    action: Literal["telemetry"] = "telemetry"
    entities: tuple[str, ...]
    environment: str
    metric: str | None = None
    """Only this metric (a symptom or a hypothesis's prediction)."""
    signals: tuple[str, ...] = ()
    """Only these signal kinds (`metric`, `logs`, `traces`, `events`); empty: all."""


class RelationsAction(Frozen):
    """Read the sources that state what entities depend on (or what depends on them)."""

    action: Literal["relations"] = "relations"
    entities: tuple[str, ...]
    environment: str
    direction: Literal["dependencies", "consumers"] = "dependencies"


class ChangesAction(Frozen):
    """Read the change records, histories, toggles and config snapshots of entities in a range."""

    action: Literal["changes"] = "changes"
    entities: tuple[str, ...]
    environment: str
    start: datetime
    end: datetime


class PlacementAction(Frozen):
    """Read where an entity runs (pods, nodes) and what else runs there."""

    action: Literal["placement"] = "placement"
    entity: str
    environment: str


class RecordsAction(Frozen):
    """Read mapping / ownership / config records about an entity (applicability)."""

    action: Literal["records"] = "records"
    kinds: tuple[str, ...]
    entity: str
    environment: str


class DocumentsAction(Frozen):
    """Search documents with the retrieval tool (basic or graph)."""

    action: Literal["documents"] = "documents"
    query: str
    seeds: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()


Action = Annotated[
    TelemetryAction | RelationsAction | ChangesAction | PlacementAction | RecordsAction | DocumentsAction,
    Discriminator("action"),
]


class Gap(Frozen):
    """A concrete missing observation and the action that could fill it."""

    claim_id: str
    act: Action = Field(discriminator="action")
    reason: str
    """Which judgement the action can change, in words."""

    @property
    def action(self) -> str:
        return self.act.action

    @property
    def query(self) -> str:
        a = self.act
        if isinstance(a, DocumentsAction):
            return a.query
        if isinstance(a, ChangesAction):
            return f"changes of {', '.join(a.entities)} {a.start.isoformat()}..{a.end.isoformat()}"
        what = ", ".join(a.entities) if isinstance(a, (TelemetryAction, RelationsAction)) else getattr(a, "entity", "")
        extra = getattr(a, "metric", None) or getattr(a, "direction", None) or ""
        return f"{a.action} {what} {extra}".strip()

    @property
    def fingerprint(self) -> str:
        a = self.act
        # a document expansion from bridge entities is the same action whatever words the query carries
        if isinstance(a, DocumentsAction) and a.seeds:
            return stable_id("documents", sorted(s.lower() for s in a.seeds), sorted(a.kinds))
        data: dict[str, Any] = a.model_dump(mode="json")
        if isinstance(a, DocumentsAction):
            data["query"] = " ".join(a.query.lower().split())
        return stable_id(sorted(data.items()))
