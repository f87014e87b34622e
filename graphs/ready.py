"""The evidence-ready rule (docs/deciding.md §7): a run that stops without `evidence_ready` never shows
a causal claim as confirmed.

The deciders judge a claim on the evidence read; whether the run may stand by a confirmed root cause
depends on how it stopped, which only `decide` names. This is that rule, applied to a stored decision
and the run's stop whenever a decision is shown. It is applied when shown, not written into the stored
decision: a run that has not stopped yet, or is paused for a grant, goes on from its decisions as the
deciders left them, and a stored decision's history stays the deciders' own. Imports only `state`.
"""

from __future__ import annotations

from state.case import CausalChainClaim, Claim
from state.claims import ClaimDecision, StopReason, Verdict

NOT_READY = "the run stopped before evidence_ready: a root cause is never confirmed then"
"""The note a causal claim held back by the rule carries."""


def at_stop(claim: Claim, decision: ClaimDecision, stop: StopReason | None) -> tuple[Verdict, str]:
    """(verdict, note) of `decision` under the run's `stop` (None: not stopped yet): a confirmed causal
    chain stands only at `evidence_ready`, and is `inferred` otherwise; every other verdict stands."""
    if isinstance(claim, CausalChainClaim) and decision.verdict == "confirmed" and (
            stop is None or stop.kind != "evidence_ready"):
        return "inferred", NOT_READY
    return decision.verdict, ""
