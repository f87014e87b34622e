"""Evidence, reads, bridge entities, hits and gaps: the values the loop passes around."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from state._base import Frozen, content_hash, stable_id
from state.case import TrustLevel

ReadOutcome = Literal["ok", "denied", "not_found", "failed"]
EvidenceStatus = Literal["active", "revoked", "stale"]


class Span(Frozen):
    """An exact span of one source text: `text[start:end] == quote`."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    quote: str
    content_hash: str = ""
    """`sha256(quote)[:16]`; filled in when omitted, checked when given."""

    @model_validator(mode="before")
    @classmethod
    def _hash(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("quote") is not None:
            expected = content_hash(data["quote"])
            if not data.get("content_hash"):
                data = {**data, "content_hash": expected}
            elif data["content_hash"] != expected:
                raise ValueError("content_hash does not match sha256(quote)[:16]")
        return data

    @model_validator(mode="after")
    def _length(self) -> "Span":
        if self.end - self.start != len(self.quote):
            raise ValueError("end - start must equal len(quote)")
        return self


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


class MetricObservation(Frozen):
    """What a read-back metric series showed for the window against its baseline."""

    metric: str
    unit: str
    baseline_median: float
    window_peak: float
    ratio: float
    baseline_points: int
    window_points: int


class Evidence(Frozen):
    """One observation read back from a source (or given by the case, unverified)."""

    id: str
    kind: Literal["span", "metric", "initial"]
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
    metric: MetricObservation | None = None
    text: str = ""
    """For initial evidence only: what the case says."""
    meta: dict[str, Any] = {}
    """Front-matter facts of a prose source (doc_id, status, service, applies_to_versions)."""
    status: EvidenceStatus = "active"
    status_note: str = ""
    round: int = 0


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


class Mention(Frozen):
    """An entity named at an exact place in a source text."""

    name: str
    kind: str
    start: int
    end: int


class BridgeOccurrence(Frozen):
    """An entity occurrence that links two hops, with provenance and scope."""

    entity: str
    kind: str
    scope: Scope
    source_id: str
    version: str
    start: int
    end: int
    evidence_id: str


class Hit(Frozen):
    """A ranked candidate span returned by a retrieval tool (not yet read back)."""

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


class Gap(Frozen):
    """A concrete missing observation and the action that could fill it."""

    claim_id: str
    action: Literal["metrics", "changes", "logs", "documents", "records"]
    query: str
    params: dict[str, Any] = {}
    reason: str
    """Which judgement the action can change, in words."""

    @property
    def fingerprint(self) -> str:
        # an expansion from a bridge entity is the same action whatever words the query carries
        what = self.params["seeds"] if self.action == "documents" and self.params.get("seeds") else self.query
        return stable_id(self.action, " ".join(str(what).lower().split()), sorted(self.params.items()))
