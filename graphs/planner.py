"""The deterministic planner: of the open claims' gaps (`graphs.gaps`), the first one not yet acted on.

A gap already executed with nothing left unread (same fingerprint) is not repeated. Text inside
sources never reaches the planner except as entity names read in a span, so an instruction in a
document cannot change the plan.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from graphs.gaps import open_gaps
from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.path import Trace
from state.case import Case
from state.claims import ClaimDecision
from state.evidence import Gap


class Planner(Protocol):
    """Picks the next gap. Optional attributes, read with `getattr` so any object with
    `next_gap` fits: `kind` (recorded on the run row; default `deterministic`),
    `settings()` (what a resume needs to rebuild it, never a secret) and `last_choice`
    (a `state.steps.PlanChoice` for the step just planned, recorded with it)."""

    def next_gap(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, t: Trace,
                 done: set[str]) -> Gap | None: ...


def planner_kind(planner: object) -> str:
    """`llm` or `deterministic` (any planner that does not say otherwise)."""
    return str(getattr(planner, "kind", "deterministic"))


def planner_settings(planner: object) -> dict:
    """What a resume needs to rebuild the planner (endpoint, model, budgets; no API key)."""
    fn = getattr(planner, "settings", None)
    return dict(fn()) if fn is not None else {}


class DeterministicPlanner:
    """Claims' needs in a fixed order of how much they can change the answer."""

    kind = "deterministic"
    last_choice = None

    def gaps(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, t: Trace, *,
             complete: bool = True) -> Iterable[Gap]:
        """Every gap in the order it is worth acting on (`graphs.gaps.open_gaps`)."""
        return open_gaps(case, decisions, k, t, complete=complete)

    def next_gap(self, case: Case, decisions: dict[str, ClaimDecision], k: Knowledge, t: Trace,
                 done: set[str]) -> Gap | None:
        for gap in self.gaps(case, decisions, k, t):
            if gap.fingerprint not in done:
                return gap
        return None
