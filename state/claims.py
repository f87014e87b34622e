"""Claim states, verdicts, budgets and stop reasons."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from state._base import Frozen

ClaimState = Literal["candidate", "insufficient", "supported", "refuted", "conflicted"]
Verdict = Literal["confirmed", "inferred", "insufficient", "refuted"]
StopKind = Literal[
    "evidence_ready", "budget_exhausted", "permission_denied", "source_failure",
    "no_new_progress", "awaiting_permission",
]


class Hop(Frozen):
    """One link of a bridge path, with the evidence that reads it."""

    source: str
    target: str
    evidence_ids: tuple[str, ...]
    status: Literal["applicable", "unknown", "inapplicable", "untrusted"]
    """Best applicability among the hop's evidence; `unknown` names a check still to read."""
    note: str = ""

    @property
    def applicable(self) -> bool:
        return self.status == "applicable"


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
    proposed_by: tuple[str, ...] = ()

    @property
    def decided(self) -> bool:
        return self.state in ("supported", "refuted") and self.verdict in ("confirmed", "refuted")


class StopReason(Frozen):
    kind: StopKind
    detail: str = ""
    sources: tuple[str, ...] = Field(default=())
    """Source ids the stop is about (denied, failed)."""
