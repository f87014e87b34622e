"""One consistency check over a run's verdicts: claims of one run never contradict each other.

Each required claim is decided by its own rule (docs/deciding.md §7); the rules read the same
facts, but a case can ask overlapping questions ("was there a change of the subject?", "did the
in-window deploy cause it?", "what caused it?"). Where two verdicts cannot both be true, the
stronger statement yields: the causal claim is held at `inferred` (state `conflicted`) naming
both claims, never shown `confirmed` beside a claim that denies it.

Contradictions checked:

- the confirmed cause is a change that a `change_in_window` claim covering it (its entities and
  types, the window) declares absent (`refuted`);
- the confirmed cause is a change that a refuted change hypothesis blames (unless the hypothesis
  also says how the change did it: then it may be refuted by its mechanism, not by its culprit),
  or a change hypothesis is confirmed while the confirmed cause is another;
- the symptom is refuted (the subject shows no anomaly) while a cause of its anomaly is confirmed.
"""

from __future__ import annotations

from graphs.rulebook.hypotheses import telling_prediction
from state.case import Blame, Case, CausalChainClaim, ChangeInWindowClaim, CounterEvidenceClaim, SymptomClaim
from state.claims import ClaimDecision
from state.profile import Profile


def contradictions(case: Case, profile: Profile, decisions: dict[str, ClaimDecision],
                   blames: dict[str, Blame] | None = None) -> list[str]:
    """Why the verdicts of one run contradict each other (empty when they do not)."""
    out: list[str] = []
    causal = [(c, decisions[c.id]) for c in case.required_claims
              if isinstance(c, CausalChainClaim) and c.id in decisions]
    for cc, cd in causal:
        if cd.verdict != "confirmed" or cd.root_cause is None:
            continue
        rc = cd.root_cause
        for claim in case.required_claims:
            d = decisions.get(claim.id)
            if d is None:
                continue
            if isinstance(claim, SymptomClaim) and d.verdict == "refuted":
                out.append(f"{claim.id} finds no anomaly of {case.subject} while {cc.id} confirms a cause of it")
            elif isinstance(claim, ChangeInWindowClaim) and d.verdict == "refuted" and rc.change:
                types = {profile.change_type(t) for t in claim.change_types}
                covered = rc.entity == case.subject.service or (claim.on_path and rc.entity in rc.path)
                if covered and (not types or rc.kind in types):
                    out.append(f"{claim.id} finds no change of {rc.entity} in the window while {cc.id} confirms "
                               f"{rc.change} as the cause")
            elif isinstance(claim, CounterEvidenceClaim) and (blames or {}).get(claim.hypothesis) is not None:
                b = (blames or {})[claim.hypothesis]
                if d.verdict == "confirmed" and b.entity != rc.entity:
                    out.append(f"{claim.id} confirms that a change of {b.entity} caused it while {cc.id} confirms "
                               f"{rc.change or rc.kind} of {rc.entity}")
                types = {profile.change_type(t) for t in b.types}
                same = (b.entity == rc.entity and rc.change is not None and b.change in (None, rc.change)
                        and not b.version and (not types or rc.kind in types))
                mechanism = telling_prediction(case.hypothesis(claim.hypothesis), case) is not None
                if d.verdict == "refuted" and same and not mechanism:
                    out.append(f"{claim.id} refutes that a change of {b.entity} caused it while {cc.id} confirms "
                               f"{rc.change} of {rc.entity} as the cause")
    return out


def reconcile(case: Case, profile: Profile, decisions: dict[str, ClaimDecision],
              blames: dict[str, Blame] | None = None) -> dict[str, ClaimDecision]:
    """The decisions with every contradiction resolved: a confirmed causal claim that another claim
    denies is held at `inferred` (conflicted), naming the contradiction."""
    found = contradictions(case, profile, decisions, blames)
    if not found:
        return decisions
    out = dict(decisions)
    for c in case.required_claims:
        d = out.get(c.id)
        if isinstance(c, CausalChainClaim) and d is not None and d.verdict == "confirmed":
            out[c.id] = d.model_copy(update={"verdict": "inferred", "state": "conflicted",
                                             "conflicts": (*d.conflicts, *found)})
    return out


__all__ = ["contradictions", "reconcile"]
