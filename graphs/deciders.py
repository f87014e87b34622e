"""Deterministic claim deciders: one rule per claim kind, driven by the case file (docs/deciding.md §7).

Each returns a `ClaimDecision` naming the rule, the evidence ids used and, when the claim
cannot be decided, the observation that is missing. A candidate observation (trust
`unverified`, such as the alert's own figure) never confirms a claim on its own.
"""

from __future__ import annotations

from graphs.hypotheses import change_hypothesis
from graphs.knowledge import Knowledge
from graphs.rules import (
    Cause, CauseResult, EntityState, Trace, _norm, applicability, blames_upstream, cause_at, entity_state, is_bad,
    moved, named_by,
    relation_status, trace,
)
from state.case import (
    Case, CausalChainClaim, ChangeInWindowClaim, Claim, CounterEvidenceClaim, Hypothesis, SymptomClaim,
)
from state.claims import Alternative, ClaimDecision, Hop, RootCause
from state.facts import SignalFact

SIGNAL_ORDER = {"metric": 0, "logs": 1, "traces": 2, "events": 3}


def _candidates(k: Knowledge, claim_id: str) -> tuple[str, ...]:
    return tuple(e.id for e in k.evidence.values() if e.kind == "initial" and claim_id in e.claim_ids)


def _why_unread(k: Knowledge, entity: str, what: str, metric: str | None = None) -> str:
    why = f"{what} of {entity} read back from its telemetry"
    denied = k.searches.denied("telemetry", entity, metric=metric)
    failed = k.searches.failed("telemetry", entity, metric=metric)
    if denied:
        why += f" (denied: {', '.join(denied)})"
    if failed:
        why += f" (failed: {', '.join(failed)})"
    if not denied and not failed and k.searches.done("telemetry", entity, metric=metric):
        why += " (no readable source holds it)"
    return why


def _symptom_signals(claim: SymptomClaim, sigs: list[tuple[SignalFact, str]]) -> list[tuple[SignalFact, str]]:
    want = claim.wants
    if claim.metric:
        return [(f, e) for f, e in sigs if f.signal == "metric" and f.name == claim.metric]
    if want == "logs":
        return [(f, e) for f, e in sigs if f.signal == "logs"]
    if want == "traces":
        return [(f, e) for f, e in sigs if f.signal == "traces"]
    metrics = [(f, e) for f, e in sigs if f.signal == "metric" and f.role in ("latency", "errors", "saturation",
                                                                               "availability")]
    if want == "metric":
        return metrics
    for group in (metrics, [(f, e) for f, e in sigs if f.signal == "logs"],
                  [(f, e) for f, e in sigs if f.signal == "traces"], [(f, e) for f, e in sigs if f.signal == "events"]):
        if group:
            return group
    return []


def decide_symptom(claim: SymptomClaim, k: Knowledge) -> ClaimDecision:
    subject = k.case.subject.service
    what = claim.metric or {"any": "a symptom signal", "metric": "a symptom metric", "logs": "warning/error lines",
                            "traces": "span latency or errors"}[claim.wants]
    rule = (f"symptom: {what} of {k.case.subject} anomalous {claim.direction} against its baseline "
            f"(threshold ×{claim.min_ratio}, sustained)")
    sigs = _symptom_signals(claim, list(k.signals.get(subject, [])))
    cands = _candidates(k, claim.id)
    verdicts = [(f, e, moved(f, k, claim.direction, claim.min_ratio)) for f, e in sigs]
    up = [e for f, e, m in verdicts if m]
    if up:
        return ClaimDecision(claim_id=claim.id, state="supported", verdict="confirmed", rule=rule,
                             supporting=tuple(dict.fromkeys(up)) + cands)
    read = [e for f, e, m in verdicts if m is False]
    if read and k.searches.done("telemetry", subject, metric=claim.metric):
        return ClaimDecision(claim_id=claim.id, state="refuted", verdict="refuted", rule=rule,
                             opposing=tuple(dict.fromkeys(read)) + cands)
    missing = _why_unread(k, subject, what, claim.metric)
    if any(m is None for _f, _e, m in verdicts):
        missing = f"{what} of {k.case.subject} with a baseline of at least 3 points before the window"
    return ClaimDecision(claim_id=claim.id, state="candidate" if cands else "insufficient", verdict="insufficient",
                         rule=rule, supporting=cands, missing=(missing,))


def hypothesis_status(h: Hypothesis, k: Knowledge, claim_id: str, t: Trace | None = None) -> ClaimDecision:
    blame = k.blames.get(h.id)
    if blame is not None:
        t = t or trace(k, k.case.subject.service, 6)
        v = change_hypothesis(h, blame, k, t)
        proposed = tuple(sorted(e.id for e in k.evidence.values() if e.span is not None and any(
            phrase.lower() in e.span.quote.lower() for phrase in h.mentioned_by)))
        rule = f"counter_evidence: {h.id} blames {blame.change or 'a change'} of {blame.entity}: {v.why}"
        state = {"confirmed": "supported", "refuted": "refuted", "insufficient": "insufficient"}[v.verdict]
        return ClaimDecision(claim_id=claim_id, state=state, verdict=v.verdict, rule=rule,  # type: ignore[arg-type]
                             supporting=v.supporting, opposing=v.opposing, missing=v.missing, proposed_by=proposed)
    p = h.predicts
    assert p is not None
    entity = p.entity or k.case.subject.service
    rule = f"counter_evidence: {h.id} predicts {p.metric} of {entity} {p.direction} (×{p.min_ratio})"
    sigs = [(f, e) for f, e in k.signals.get(entity, []) if f.signal == "metric" and f.name == p.metric]
    verdicts = [(e, moved(f, k, p.direction, p.min_ratio)) for f, e in sigs]
    proposed = tuple(sorted(e.id for e in k.evidence.values() if e.span is not None and any(
        phrase.lower() in e.span.quote.lower() for phrase in h.mentioned_by)))
    held = [e for e, m in verdicts if m]
    small = _too_small_to_explain(k, entity, [f for f, _e in sigs])
    if held and small:
        # it moved, but by far less than the symptom in the same unit: it cannot be what explains it
        return ClaimDecision(claim_id=claim_id, state="refuted", verdict="refuted",
                             rule=rule + f": observed, but {small}", opposing=tuple(held), proposed_by=proposed)
    if held:
        return ClaimDecision(claim_id=claim_id, state="supported", verdict="confirmed", rule=rule,
                             supporting=tuple(held), proposed_by=proposed)
    flat = [e for e, m in verdicts if m is False]
    if flat:
        return ClaimDecision(claim_id=claim_id, state="refuted", verdict="refuted", rule=rule + ": the prediction is not observed",
                             opposing=tuple(flat), proposed_by=proposed)
    return ClaimDecision(claim_id=claim_id, state="insufficient", verdict="insufficient", rule=rule,
                         missing=(_why_unread(k, entity, p.metric, p.metric),), proposed_by=proposed)


def _too_small_to_explain(k: Knowledge, entity: str, sigs: list[SignalFact]) -> str:
    """Why a competitor's predicted rise on another entity cannot explain the subject's symptom: in a
    comparable unit it is less than `explain_fraction` of the symptom's rise (§4: a 0 → 5 ms series
    does not explain a 2 s slowdown). Empty when it could, or when the units do not compare."""
    subject = k.case.subject.service
    if entity == subject:
        return ""
    frac = k.profile.anomaly.explain_fraction
    upper = [f for f, _e in entity_state(k, subject).anomalies if isinstance(f, SignalFact) and f.delta is not None]
    why = ""
    for lf in sigs:
        nl = _norm(lf)
        if nl is None or lf.delta is None:
            continue
        for uf in upper:
            nu = _norm(uf)
            if nu is None or nu[0] != nl[0] or uf.delta is None:
                continue
            if abs(lf.delta) * nl[1] >= frac * abs(uf.delta) * nu[1]:
                return ""  # one comparable rise large enough: it could explain the symptom
            why = why or (f"{entity}'s {lf.name} rose by {lf.delta:g} {lf.unit}, less than {int(frac * 100)} % of "
                          f"{subject}'s {uf.name} rise ({uf.delta:g} {uf.unit})")
    return why


def decide_counter_evidence(claim: CounterEvidenceClaim, k: Knowledge, t: Trace | None = None) -> ClaimDecision:
    return hypothesis_status(k.case.hypothesis(claim.hypothesis), k, claim.id, t)


def decide_change(claim: ChangeInWindowClaim, k: Knowledge, path: list[str], settled: bool) -> ClaimDecision:
    """`path`: the anomalous path; `settled`: whether it is known (a root was found, or the subject
    itself was read and shows no anomaly, so the path is the subject alone)."""
    w = k.case.window
    entities = [k.case.subject.service] + ([e for e in path if e != k.case.subject.service] if claim.on_path else [])
    types = {k.profile.change_type(t) for t in claim.change_types}
    rule = (f"change_in_window: a change of {', '.join(entities)} took effect in "
            f"{w.change_from:%H:%M}–{w.end:%H:%M} ({w.change_from:%Y-%m-%d %z})")
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


# --- the causal claim --------------------------------------------------------------------------

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
                else f"{a} {relation.replace('_', ' ')} {b} ({note}); {b} anomalous since {node.state.onset:%H:%M:%S}")
        evidence = tuple(dict.fromkeys([*ids, *node.state.evidence]))
        hops.append(Hop(source=a, target=b, relation=relation if not node.sideways else "shares", evidence_ids=evidence,
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
    missing += [f"check competing hypothesis {h} ({_what_shows(k, h)})" for h in open_comp]
    if t.ambiguous:
        missing.append(f"which root: {t.root} or {', '.join(t.ambiguous)} (onsets within the tolerance)")
    if t.root is not None and not t.pending:
        missing += [f"telemetry of {ent}: {why}" for ent, why in t.unread_dependencies()]
    # a source is needed when a lookup for an entity on the path, its changes, its placement or a
    # competitor's metric returned it (docs/deciding.md §8)
    blocked = _decisive_denials(k, t, cause, open_comp)
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
            why=(f"{d} is anomalous too and explains {by} on its own (onset {st.onset:%H:%M:%S}, no later than "
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


def _decisive_denials(k: Knowledge, t: Trace, cause: Cause | None, open_competitors: list[str]) -> list[str]:
    """Unreadable sources that could change the causal verdict (docs/deciding.md §8): what the end of the
    path depends on or what it names, the root's changes and own signals unless the anomaly itself
    names the change found, the root's placement unless a change explains it, a competitor's evidence. A source that
    is merely *about* an entity of the path (another metric of an entity whose anomaly is read, a
    change of an entity whose anomaly is explained below it) decides nothing, nor does one about a
    competitor the readable evidence has already decided."""
    # the path's own frontier: decisive once nothing readable is left to extend it
    # and the root's own sources are decisive only once the path has settled on it: while readable
    # lookups can still carry the path below, the root is provisional and so are its denials
    named = cause is not None and cause.change is not None and cause.change.implicated
    # what the root depends on is open like its changes and signals: not once the anomaly names the change
    out = [d for d, at in t.blocked.items() if not (named and at == t.root)] if not t.pending else []
    if t.root is not None and not t.pending:
        if not named:
            # a cause chosen by timing alone is open while the root's changes or its own signals (the
            # lines that would name what broke, or a dependency below) cannot be read — except the
            # signals of a root seen failing only by its callers, whose readable signals show it healthy:
            # what its callers' errors name is on the way to it, not in it
            out += k.searches.denied("changes", t.root)
            root_state = t.nodes[t.root].state
            if root_state.how != "callers" or not root_state.normal:
                out += k.searches.denied("telemetry", t.root)
        if cause is None or cause.change is None:
            out += k.searches.denied("placement", t.root)
        if not named:  # what stands in front of a dependency that left the path (§8)
            out += t.beside
    out += [d for h in open_competitors for d in _hypothesis_denied(k, h)]
    return list(dict.fromkeys(out))


def _what_shows(k: Knowledge, h_id: str) -> str:
    h = k.case.hypothesis(h_id)
    b = k.blames.get(h_id)
    if b is not None:
        return f"the change of {b.entity} it blames"
    return h.predicts.metric if h.predicts else h.statement


def _hypothesis_denied(k: Knowledge, h_id: str) -> list[str]:
    h = k.case.hypothesis(h_id)
    b = k.blames.get(h_id)
    if b is not None:
        return k.searches.denied("changes", b.entity)
    assert h.predicts is not None
    return k.searches.denied("telemetry", h.predicts.entity or k.case.subject.service, metric=h.predicts.metric)


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
                                   f"(anomalous since {t.nodes[below].state.onset:%H:%M:%S}); the cause is below it",
                                   evidence_ids=(eid, *t.nodes[below].state.evidence)))
        else:
            st = entity_state(k, ent)
            status = "refuted" if st.status == "normal" else "off_path"
            why = (f"{ent} shows no anomaly in the window" if st.status == "normal" else
                   f"{ent} is not on the anomalous path from {k.case.subject.service}")
            out.append(Alternative(what=ch.id, status=status, why=why, evidence_ids=(eid, *st.evidence)))
    return out


OBSERVABLE_KINDS = ("service", "workload", "database", "cache", "queue")
"""Kinds that have telemetry of their own when they are monitored (a domain, an external API, a
node or a library is seen through its callers, its events or its consumers instead)."""


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


def decide(claim: Claim, k: Knowledge, t: Trace) -> ClaimDecision:
    if isinstance(claim, SymptomClaim):
        return decide_symptom(claim, k)
    if isinstance(claim, ChangeInWindowClaim):
        start = t.nodes.get(k.case.subject.service)
        quiet = start is not None and start.state.status == "normal"  # no anomaly: the path is the subject alone
        return decide_change(claim, k, t.path() if t.root else [], settled=bool(t.root) or quiet)
    if isinstance(claim, CounterEvidenceClaim):
        return decide_counter_evidence(claim, k, t)
    return decide_causal(claim, k, t)


def causal_trace(case: Case, k: Knowledge) -> Trace:
    claim = next((c for c in case.required_claims if isinstance(c, CausalChainClaim)), None)
    return trace(k, case.subject.service, claim.max_hops if claim else 6)


def decide_all(case: Case, k: Knowledge) -> dict[str, ClaimDecision]:
    t = causal_trace(case, k)
    return {c.id: decide(c, k, t) for c in case.required_claims}


_ = (is_bad, SIGNAL_ORDER)
