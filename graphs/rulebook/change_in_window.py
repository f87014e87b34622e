"""§7 of docs/deciding.md, the `change_in_window` claim: a change of the subject (or, with
`scope: path`, of an entity on the anomalous path) took effect in the window.

Refuted only when every readable change source was searched and holds none, and, for the path, once
the path is known: a root was found, or the subject shows no anomaly and the path is the subject alone.
"""

from __future__ import annotations

from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.path import Trace
from state.case import ChangeInWindowClaim
from state.claims import ClaimDecision


def decide_change_in_window(claim: ChangeInWindowClaim, k: Knowledge, t: Trace) -> ClaimDecision:
    """The claim decided on the path `t` has found so far."""
    start = t.nodes.get(k.case.subject.service)
    quiet = start is not None and start.state.status == "normal"  # no anomaly: the path is the subject alone
    return decide_change(claim, k, t.path() if t.root else [], settled=bool(t.root) or quiet)


def decide_change(claim: ChangeInWindowClaim, k: Knowledge, path: list[str], settled: bool) -> ClaimDecision:
    """`path`: the anomalous path; `settled`: whether it is known (a root was found, or the subject
    itself was read and shows no anomaly, so the path is the subject alone)."""
    w = k.case.window
    entities = [k.case.subject.service] + ([e for e in path if e != k.case.subject.service] if claim.on_path else [])
    types = {k.profile.change_type(t) for t in claim.change_types}
    rule = (f"change_in_window: a change of {', '.join(entities)} took effect in "
            f"{k.clock(w.change_from, '%H:%M')}–{k.clock(w.end, '%H:%M')} ({w.change_from:%Y-%m-%d %z})")
    found = [e for c, e in k.changes if any(x in entities for x in c.about) and c.type != "rollback"
             and c.effective is not None and w.change_from <= c.effective <= w.end and (not types or c.type in types)]
    if found:
        return ClaimDecision(claim_id=claim.id, state="supported", verdict="confirmed", rule=rule,
                             supporting=tuple(dict.fromkeys(found)))
    denied = sorted({d for e in entities for d in k.searches.denied("changes", e)})
    failed = sorted({f for e in entities for f in k.searches.failed("changes", e)})
    if all(k.searches.done("changes", e) for e in entities) and not denied and not failed and (
            not claim.on_path or settled):
        return ClaimDecision(claim_id=claim.id, state="refuted", verdict="refuted",
                             rule=rule + "; every readable change source searched, none in the window")
    missing = f"change records of {', '.join(entities)} between {w.change_from.isoformat()} and {w.end.isoformat()}"
    if denied:
        missing += f" (denied: {', '.join(denied)})"
    if failed:
        missing += f" (failed: {', '.join(failed)})"
    return ClaimDecision(claim_id=claim.id, state="insufficient", verdict="insufficient", rule=rule, missing=(missing,))

