"""Claim states, verdicts, causal paths, root causes and stop reasons."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from state._base import Frozen

ClaimState = Literal["candidate", "insufficient", "supported", "refuted", "conflicted"]
Verdict = Literal["confirmed", "inferred", "insufficient", "refuted"]
StopKind = Literal[
    "evidence_ready", "budget_exhausted", "permission_denied", "source_failure",
    "no_new_progress", "awaiting_permission",
]
HopStatus = Literal["applicable", "unknown", "inapplicable", "untrusted"]
CauseKind = Literal[
    "deployment", "config_push", "feature_flag", "certificate", "dns", "rollback", "infrastructure",
    "schema_migration", "noisy_neighbour", "capacity", "external", "other",
]


class Hop(Frozen):
    """One link of a causal path, with the evidence that states and shows it."""

    source: str
    target: str
    relation: str = ""
    """How it is linked: `depends_on (catalog)`, `runs_on`, `changed by DEP-1`, `stated change`…"""
    evidence_ids: tuple[str, ...]
    status: HopStatus
    """`applicable` when stated by a source that applies and (for entities) the target's anomaly
    is observed; otherwise why it only supports."""
    note: str = ""
    onset: datetime | None = None
    """The target's onset, for entity hops."""
    round: int | None = None
    """The round by which every piece of evidence the hop rests on had been read."""
    reads: int | None = None
    """How many reads the run had made by then (what reaching this hop cost)."""

    @property
    def applicable(self) -> bool:
        return self.status == "applicable"


class RootCause(Frozen):
    """What the causal claim names as the cause."""

    entity: str
    kind: CauseKind
    change: str | None = None
    """The change id (None for a noisy neighbour or load without a change)."""
    element: str | None = None
    """The changed key, component or flag the anomaly implicates, when found."""
    refined: str | None = None
    """A key an applicable document states the changed component changed."""
    path: tuple[str, ...] = ()
    """The anomalous path from the subject to the root."""
    onset: datetime | None = None
    summary: str = ""


class Alternative(Frozen):
    """A competing explanation and what the evidence says of it."""

    what: str
    status: Literal["refuted", "not_implicated", "unchecked", "holds", "off_path", "after_onset"]
    why: str
    evidence_ids: tuple[str, ...] = ()


class ClaimDecision(Frozen):
    """A claim's state after one update, with the rule and evidence that decided it."""

    claim_id: str
    state: ClaimState
    verdict: Verdict
    rule: str
    """The decider rule that produced this decision, in words."""
    supporting: tuple[str, ...] = ()
    opposing: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    """Observations that would change the decision."""
    conflicts: tuple[str, ...] = ()
    path: tuple[Hop, ...] = ()
    root_cause: RootCause | None = None
    alternatives: tuple[Alternative, ...] = ()
    proposed_by: tuple[str, ...] = ()
    blocked_by: tuple[str, ...] = ()
    """Sources the decision needed and the principal may not read."""
    final: bool = False
    """True when nothing left to read could change this decision (a settled `inferred`)."""

    @property
    def decided(self) -> bool:
        if self.final:
            return True
        return self.state in ("supported", "refuted") and self.verdict in ("confirmed", "refuted")


class StopReason(Frozen):
    kind: StopKind
    detail: str = ""
    sources: tuple[str, ...] = Field(default=())
    """Source ids the stop is about (denied, failed)."""
    claims: tuple[str, ...] = ()
    """The claims that needed them."""
    groups: tuple[str, ...] = ()
    """Groups that could read the denied sources (who can grant)."""
