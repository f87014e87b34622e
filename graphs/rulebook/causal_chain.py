"""§7 of docs/deciding.md, the `causal_chain` claim: the path, the cause at its root, the alternatives.

Confirmed when every hop is observed on stated relations from applicable sources, the root's cause
is found (§5), every competing hypothesis is refuted, no candidate a readable source could check is
left unchecked and no source the path needed was denied (§8); `inferred` when the cause is found but
something is only supported; `insufficient` when no path or no cause, naming what is missing.
"""

from __future__ import annotations

from graphs.rulebook.anomalies import EntityState, entity_state, is_bad
from graphs.rulebook.applicability import applicability, relation_status
from graphs.rulebook.cause import Cause, CauseResult, cause_at
from graphs.rulebook.counter_evidence import hypothesis_status, what_shows
from graphs.rulebook.knowledge import OBSERVABLE_KINDS, Knowledge
from graphs.rulebook.partial_access import decisive_denials
from graphs.rulebook.path import Trace, blames_upstream, named_by
from graphs.rulebook.root import trace
from state.case import CausalChainClaim
from state.claims import Alternative, ClaimDecision, Hop, RootCause


def _round_of(k: Knowledge, ids: tuple[str, ...]) -> int | None:
    rounds = [k.evidence[x].round for e in ids for x in e.split("+") if x in k.evidence]
    return max(rounds) if rounds else None


def _path_hops(k: Knowledge, t: Trace, claim: CausalChainClaim) -> list[Hop]:
    hops = []
    path = t.path()
    for a, b in zip(path, path[1:]):
        node = t.nodes[b]
        status, ids, note = relation_status(k, node.via, claim.requires_owner_verification)
        relation = node.via[0][0].relation if node.via and hasattr(node.via[0][0], "relation") else "depends_on"
        what = (f"{b} also uses {a}; its load rose first" if node.sideways
                else f"{b} drains {a} ({note}); {b} slowed since {k.clock(node.state.onset)}" if node.drains
                else f"{a} {relation.replace('_', ' ')} {b} ({note}); {b} anomalous since {k.clock(node.state.onset)}")
        evidence = tuple(dict.fromkeys([*ids, *node.state.evidence]))
        hops.append(Hop(source=a, target=b, relation="shares" if node.sideways else "drained by" if node.drains else relation,
                        evidence_ids=evidence,
                        status=status, note=what, onset=node.state.onset, round=_round_of(k, evidence)))
    return hops


def _cause_hops(k: Knowledge, cause: Cause, claim: CausalChainClaim) -> list[Hop]:
    root = cause.entity
    hops: list[Hop] = []
    if cause.change is not None:
        ch = cause.change.change
        ids = tuple(dict.fromkeys([*cause.change.evidence.split("+"), *(e for x in cause.evidence for e in x.split("+")),
                                   *cause.element_evidence]))
        if cause.element and cause.element != root:
            named = "; named in its anomaly" if cause.element_evidence else ""
            hops.append(Hop(source=root, target=cause.element, relation=f"changed by {ch.id}",
                            evidence_ids=ids, status="applicable", note=f"{cause.summary}{named}"))
        else:
            hops.append(Hop(source=root, target=ch.id, relation=ch.type, evidence_ids=ids, status="applicable",
                            note=cause.summary))
        if cause.refined and cause.element:
            statuses = [applicability(k, e, requires_owner=claim.requires_owner_verification) for e in cause.refined_evidence]
            hops.append(Hop(source=cause.element, target=cause.refined, relation="stated change",
                            evidence_ids=cause.refined_evidence, status="applicable" if statuses else "unknown",
                            note="; ".join(n for _s, n in statuses)))
    elif cause.kind == "capacity":
        hops.append(Hop(source=root, target=cause.element or "traffic", relation="limit reached" if cause.element
                        else "load", evidence_ids=cause.evidence, status="applicable", note=cause.summary))
    return hops


def _competitors(claim: CausalChainClaim, k: Knowledge, t: Trace) -> dict[str, ClaimDecision]:
    return {h: hypothesis_status(k.case.hypothesis(h), k, claim.id, t) for h in claim.competitors}


def decide_causal(claim: CausalChainClaim, k: Knowledge, t: Trace | None = None) -> ClaimDecision:
    subject = k.case.subject.service
    rule = ("causal_chain: an anomalous path from the subject along stated relations (each next entity anomalous "
            "no later than the previous), ending at the deepest anomalous entity nothing below explains, and the "
            "change, consumer or load that explains it; competitors refuted")
    t = t or trace(k, subject, claim.max_hops)
    competitors = _competitors(claim, k, t)
    open_comp = [h for h, d in competitors.items() if d.verdict == "insufficient"]
    held = [h for h, d in competitors.items() if d.verdict == "confirmed"]
    refuting = tuple(e for d in competitors.values() if d.verdict == "refuted" for e in d.opposing)
    proposed = tuple(sorted({e for d in competitors.values() for e in d.proposed_by}))
    alternatives = [Alternative(what=f"hypothesis {h}", status="refuted" if d.verdict == "refuted" else
                                ("holds" if d.verdict == "confirmed" else "unchecked"),
                                why=d.rule, evidence_ids=d.opposing or d.supporting) for h, d in competitors.items()]
    start: EntityState = t.nodes[subject].state
    base = dict(claim_id=claim.id, rule=rule, proposed_by=proposed)
    if not start.anomalous:
        need = "the subject's anomaly (its symptom signal read back and anomalous)"
        if start.status == "normal":
            need = f"{subject} shows no anomaly in its telemetry: nothing to trace"
        return ClaimDecision(state="insufficient", verdict="insufficient", missing=(need,),
                             alternatives=tuple(alternatives), blocked_by=tuple(t.blocked), **base)
    cres: CauseResult = cause_at(k, t)
    hops = _path_hops(k, t, claim)
    cause = cres.cause
    if cause is not None:
        hops += [h.model_copy(update={"round": _round_of(k, h.evidence_ids)}) for h in _cause_hops(k, cause, claim)]
    root = t.root or subject
    # checks that could still change the answer
    missing = [f"{act} of {ent}: {why}" for act, ent, why in t.pending]
    if t.root is not None:
        if not k.searches.done("changes", root):
            missing.append(f"changes of {root} before its onset")
        if (k.kind(root) in OBSERVABLE_KINDS and not t.nodes[root].sideways
                and t.nodes[root].state.how != "callers" and not k.searches.looked("placement", root)):
            missing.append(f"placement of {root} (a node it shares)")
    missing += cres.missing
    missing += _unobservable_below(k, t, cause)
    if cause is not None and cause.change is not None and cause.element and not cause.refined:
        dep = next((x for x in cause.change.change.dependency_changes if x.name == cause.element), None)
        if dep is not None and not k.searches.done("documents", dep.name):
            missing.append(f"what {dep.name} {dep.to} changed (its documentation for that version)")
    missing += [f"hop {h.source} → {h.target}: {h.note}" for h in hops if not h.applicable]
    missing += [f"check competing hypothesis {h} ({what_shows(k, h)})" for h in open_comp]
    if t.ambiguous:
        missing.append(f"which root: {t.root} or {', '.join(t.ambiguous)} (onsets within the tolerance)")
    missing += [f"whether {x} failed on its own: it has no signals of its own, and only its caller's errors show it "
                f"failing" for x in t.unseen]
    if t.root is not None and not t.pending:
        missing += [f"telemetry of {ent}: {why}" for ent, why in t.unread_dependencies()]
    # a source is needed when a lookup for an entity on the path, its changes, its placement or a
    # competitor's metric returned it (docs/deciding.md §8)
    blocked = decisive_denials(k, t, cause, open_comp)
    alternatives += [Alternative(what=w, status=s, why=y, evidence_ids=ev) for w, s, y, ev in cres.rejected]  # type: ignore[arg-type]
    alternatives += _other_changes(k, t, cause)
    alternatives += [Alternative(what=d, status=_ruled(k, d), why=why, evidence_ids=entity_state(k, d).evidence)
                     for d, why in t.checked.items()]
    alternatives += [Alternative(what=e, status="unchecked", why=f"not read: {why}", evidence_ids=())
                     for act, e, why in t.later if act == "telemetry" and e not in t.checked]
    for d, by in t.aside.items():
        if d in t.nodes or d in t.checked:
            continue
        st = entity_state(k, d)
        alternatives.append(Alternative(
            what=d, status="off_path" if st.anomalous else _ruled(k, d), evidence_ids=st.evidence,
            why=(f"{d} is anomalous too and explains {by} on its own (onset {k.clock(st.onset)}, no later than "
                 f"the root's plus the tolerance), though {by}'s errors point elsewhere: a rival branch"
                 if d in t.rivals and st.onset is not None else
                 f"{d} is anomalous too, but {by}'s errors point elsewhere and no entity on the path names it"
                 if st.anomalous else f"{d} ({st.status.replace('_', ' ')}); {by}'s errors point elsewhere")))
    conflicts = tuple(f"competing hypothesis {h} holds: {k.case.hypothesis(h).statement}" for h in held)
    if cause is not None and cause.contested:
        conflicts += (_contested_words(k, cause),)
    root_cause = None
    if cause is not None:
        root_cause = RootCause(entity=cause.entity, kind=cause.kind,  # type: ignore[arg-type]
                               change=cause.change.change.id if cause.change else None, element=cause.element,
                               refined=cause.refined, path=tuple(t.path()), onset=t.nodes[root].state.onset,
                               summary=cause.summary)
    contested = [e for _key, ids in (cause.contested if cause else ()) for e in ids]
    supporting = tuple(dict.fromkeys([e for h in hops for e in h.evidence_ids] + list(cause.evidence if cause else ())
                                     + list(refuting) + contested))
    decision = dict(path=tuple(hops), supporting=supporting, alternatives=tuple(alternatives), root_cause=root_cause,
                    blocked_by=tuple(blocked), conflicts=conflicts,
                    opposing=tuple(e for h in held for e in competitors[h].supporting))
    if blocked:
        why = f"sources the path needs are not readable: {', '.join(blocked)}"
        return ClaimDecision(state="insufficient", verdict="insufficient", missing=(why, *missing),
                             **{**decision, "root_cause": None}, **base)
    if cause is None:
        return ClaimDecision(state="insufficient", verdict="insufficient",
                             missing=tuple(missing) or (f"what explains {root}'s anomaly",), **{**decision, "root_cause": None},
                             **base)
    if held or cause.contested:
        return ClaimDecision(state="conflicted", verdict="inferred", missing=tuple(missing), **decision, **base)
    if missing or cres.ambiguous:
        return ClaimDecision(state="candidate", verdict="inferred", missing=tuple(missing), **decision, **base)
    return ClaimDecision(state="supported", verdict="confirmed", **decision, **base)


def _contested_words(k: Knowledge, cause: Cause) -> str:
    """The refinements the documentation read disagrees on, each with the evidence that states it."""
    def cites(ids: tuple[str, ...]) -> str:
        return ", ".join(f"{e} from {k.evidence[e.split('+')[0]].source_id}" for e in ids)
    options = " or ".join(f"{key} ({cites(ids)})" for key, ids in cause.contested)
    return f"what {cause.element} changed: {options}; the sources read disagree and nothing in the anomaly names one"


def _other_changes(k: Knowledge, t: Trace, cause: Cause | None) -> list[Alternative]:
    """In-window changes that are not the cause: on the path above the root, or off the path."""
    w = k.case.window
    out = []
    chosen = cause.change.change.id if cause and cause.change else None
    path = t.path()
    for ch, eid in k.changes:
        if ch.id == chosen or ch.type == "rollback" or ch.effective is None:
            continue
        if not (w.change_from <= ch.effective <= w.end):
            continue
        ent = next((x for x in ch.about if x in t.nodes), ch.target if ch.target in t.nodes else ch.entity)
        if ent == t.root:
            continue  # judged at the root (cause_at)
        if ent in t.nodes and t.root is not None and ent in path:
            below = path[path.index(ent) + 1] if path.index(ent) + 1 < len(path) else t.root
            out.append(Alternative(what=ch.id, status="refuted", why=f"{ent}'s anomaly is explained by {below} "
                                   f"(anomalous since {k.clock(t.nodes[below].state.onset)}); the cause is below it",
                                   evidence_ids=(eid, *t.nodes[below].state.evidence)))
        else:
            st = entity_state(k, ent)
            status = "refuted" if st.status == "normal" else "off_path"
            why = (f"{ent} shows no anomaly in the window" if st.status == "normal" else
                   f"{ent} is not on the anomalous path from {k.case.subject.service}")
            out.append(Alternative(what=ch.id, status=status, why=why, evidence_ids=(eid, *st.evidence)))
    return out


def _unobservable_below(k: Knowledge, t: Trace, cause: Cause | None) -> list[str]:
    """A change found by its timing alone explains the root only if nothing below the root could
    have: a dependency of a kind that is normally monitored but has no telemetry at all in the
    case cannot be ruled out, so the cause stays inferred and the report names that dependency.
    A change the anomaly names (implicated, or ended by its rollback) is tied to it directly; a
    dependency the root's own error lines (read whole, bursting) do not name is not where they
    come from."""
    if t.root is None or cause is None or cause.change is None or cause.change.implicated:
        return []
    # the root's own bursting error lines, read whole, say where its failures go: a dependency they
    # do not name is not where they come from, telemetry or not — unless they blame something below
    # without naming it ("upstream dependency unavailable"): then they rule nothing out
    named = named_by(k, t.root)
    spoke = k.searches.done_full(t.root) and not blames_upstream(k, t.root) and any(
        f.signal in ("logs", "traces", "events") and is_bad(f) for f, _e in k.signals.get(t.root, []))
    out = []
    for d in sorted(k.dependencies(t.root)):
        if d in t.nodes or k.kind(d) not in OBSERVABLE_KINDS:
            continue
        if spoke and d not in named:
            continue
        status = entity_state(k, d).status
        if status == "no_telemetry":
            out.append(f"telemetry of {d}, a dependency of {t.root}: it has none, so its part in "
                       f"{t.root}'s anomaly cannot be ruled out")
        elif status == "undecidable":
            out.append(f"decidable telemetry of {d}, a dependency of {t.root}: what it has cannot show an "
                       f"anomaly (too thin a baseline, or no finite values), so its part cannot be ruled out")
    return out


def _ruled(k: Knowledge, entity: str) -> str:
    """How a checked entity stands as an alternative: refuted only when its readable telemetry shows it
    normal (or, by the documented rule, it has none and no caller names it); `unchecked` when that
    telemetry is unreadable or cannot decide (a baseline too thin, no finite values)."""
    return "unchecked" if entity_state(k, entity).status in ("denied", "undecidable") else "refuted"

