"""The loop's step log as typed values: one record per node run, saved and loaded through one adapter."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Discriminator, TypeAdapter

from state._base import Frozen
from state.claims import StopReason
from state.evidence import Gap, ReadOutcome


class HitRef(Frozen):
    source_id: str
    chunk_id: str
    rank: int
    score: float
    channel: str
    focus: str = ""
    about: str = ""
    """The entity a lookup of several entities returned this hit for."""


class ReadRef(Frozen):
    source_id: str
    chunk_id: str
    region: str = ""
    """`source@revision:start-end` of the hit read (a record read once serves every lookup)."""
    outcome: ReadOutcome
    attempts: int = 1
    detail: str = ""


class PlanChoice(Frozen):
    """How a model-backed planner chose this round's gap (the deterministic planner records none)."""

    planner: str = "llm"
    model: str = ""
    offered: int = 0
    """Candidate actions offered (the deterministic planner's, in its order)."""
    choice: int = 1
    """The 1-based candidate taken (1 = the deterministic planner's own first choice)."""
    fallback: str | None = None
    """Why the deterministic first choice was taken without the model's answer: `single` (one
    candidate), `budget` (token budget spent), `unusable answer`, `endpoint` (the call failed),
    `endpoint unavailable` (skipped after repeated failures); None when the model chose."""
    error: str = ""
    """The failure of the model call, named (`APIConnectionError: Connection error.`)."""
    why: str = ""
    """The model's one-sentence reason (its own words; it never sees source text)."""
    tokens: int = 0
    tokens_estimated: bool = False
    """True when the endpoint reported no usage and `tokens` is characters / 4."""


class PlanStep(Frozen):
    node: Literal["plan"] = "plan"
    round: int
    gap: Gap | None = None
    note: str = ""
    choice: PlanChoice | None = None


class RetrieveStep(Frozen):
    node: Literal["retrieve"] = "retrieve"
    round: int
    gap: Gap
    fingerprint: str
    tool: str
    hits: tuple[HitRef, ...] = ()
    hit_set: tuple[str, ...] = ()
    """`source@revision:start-end` of every hit: the same set twice is no progress."""
    denied: tuple[str, ...] = ()
    """Matching sources the principal may not read (manifest metadata only)."""
    searched: tuple[str, ...] = ()
    """Readable sources the lookup searched, matched or not ('searched and not found')."""
    denied_about: tuple[tuple[str, str], ...] = ()
    """(denied source, entity) for a lookup of several entities: which entity each denial is about."""
    watermark: str = ""


class ReadStep(Frozen):
    node: Literal["read"] = "read"
    round: int
    reads: tuple[ReadRef, ...] = ()
    new_evidence: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()
    watermark: str = ""


class UpdateStep(Frozen):
    node: Literal["update"] = "update"
    round: int
    decisions: dict[str, str] = {}
    missing: dict[str, tuple[str, ...]] = {}


class DecideStep(Frozen):
    node: Literal["decide"] = "decide"
    round: int
    stop: StopReason | None = None
    rounds_used: int = 0
    reads_used: int = 0
    resumed_after: str = ""


class Recheck(Frozen):
    """What a resume found when it re-read the store and the current access."""

    revoked: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    reanchored: tuple[str, ...] = ()
    reused: int = 0
    reopened: tuple[str, ...] = ()
    tombstoned: tuple[str, ...] = ()
    watermark: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.revoked or self.stale or self.reanchored)


class ResumeStep(Frozen):
    node: Literal["resume"] = "resume"
    round: int
    recheck: Recheck


class GrantStep(Frozen):
    """A permission grant answering a pause (who, which groups, what it unlocked)."""

    node: Literal["grant"] = "grant"
    round: int
    groups: tuple[str, ...]
    by: str = ""
    unlocks: tuple[str, ...] = ()


Step = Annotated[
    PlanStep | RetrieveStep | ReadStep | UpdateStep | DecideStep | ResumeStep | GrantStep,
    Discriminator("node"),
]
STEP: TypeAdapter[Step] = TypeAdapter(Step)


class Logged(Frozen):
    """A step as stored: its sequence number and time, and the step."""

    seq: int
    at: datetime
    step: Step
