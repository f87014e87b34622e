"""The loop's graph state: small values and ids only; evidence text lives in the store."""

from __future__ import annotations

from typing import TypedDict

from state.claims import StopReason
from state.evidence import (
    ChangesAction, DocumentsAction, Gap, Hit, PlacementAction, RecordsAction, RelationsAction, TelemetryAction,
)


class LoopState(TypedDict, total=False):
    round: int
    """The current round (1-based); 0 before the first plan."""
    gap: Gap | None
    """The gap chosen by plan for this round (None: nothing left to try)."""
    hits: list[Hit]
    """Ranked candidates of this round, to read back."""
    new_evidence: list[str]
    """Evidence ids read in this round."""
    stop: StopReason | None
    planner: dict
    """A model-backed planner's running account (calls, tokens, fallbacks by reason, last choice);
    absent for the deterministic planner. The per-step record is the plan step in the store."""


CHECKPOINT_TYPES: tuple[type, ...] = (Gap, Hit, StopReason, TelemetryAction, RelationsAction, ChangesAction,
                                      PlacementAction, RecordsAction, DocumentsAction)
"""Types allowed in checkpoints (strict msgpack allow-list); their field types are registered too."""
