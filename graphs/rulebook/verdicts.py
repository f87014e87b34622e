"""§7 of docs/deciding.md, Verdicts: one decider per claim kind, chosen from a table.

Each decider takes the claim, what the evidence read establishes (`Knowledge`) and the anomalous
path traced once for the whole decision (`Trace`), and returns a `ClaimDecision` naming the rule,
the evidence ids used and, when the claim cannot be decided, the observation that is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphs.rulebook.causal_chain import decide_causal
from graphs.rulebook.change_in_window import decide_change_in_window
from graphs.rulebook.counter_evidence import decide_counter_evidence
from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.path import Trace
from graphs.rulebook.root import trace
from graphs.rulebook.symptom import decide_symptom
from state.case import (
    Case, CausalChainClaim, ChangeInWindowClaim, Claim, CounterEvidenceClaim, SymptomClaim,
)
from state.claims import ClaimDecision

Decider = Callable[[Any, Knowledge, Trace], ClaimDecision]
"""(claim of its kind, knowledge, the path) -> its decision."""

DECIDERS: dict[type, Decider] = {
    SymptomClaim: decide_symptom,
    ChangeInWindowClaim: decide_change_in_window,
    CounterEvidenceClaim: decide_counter_evidence,
    CausalChainClaim: decide_causal,
}
"""The decider of each claim kind (`state.case.Claim` is the union of exactly these)."""


def decide(claim: Claim, k: Knowledge, t: Trace) -> ClaimDecision:
    return DECIDERS[type(claim)](claim, k, t)


def causal_trace(case: Case, k: Knowledge) -> Trace:
    claim = next((c for c in case.required_claims if isinstance(c, CausalChainClaim)), None)
    return trace(k, case.subject.service, claim.max_hops if claim else 6)


def decide_all(case: Case, k: Knowledge) -> dict[str, ClaimDecision]:
    t = causal_trace(case, k)
    return {c.id: decide(c, k, t) for c in case.required_claims}


__all__ = ["DECIDERS", "Decider", "causal_trace", "decide", "decide_all"]
