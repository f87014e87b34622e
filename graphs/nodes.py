"""The five loop nodes. Each is a small function from state to a partial update.

Nodes write to the store with deterministic keys, so a node re-run after a crash (LangGraph
re-runs the interrupted node from its start) adds nothing twice.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from langgraph.types import interrupt

from graphs.rulebook.verdicts import causal_trace, decide_all
from graphs.deps import Deps
from graphs.evidence import anchor, evidence_key, make_evidence, page_statements, read_facts
from graphs.rulebook.consistency import reconcile
from graphs.rulebook.hypotheses import read_blames
from graphs.rulebook.knowledge import Knowledge
from graphs.loop_state import LoopState
from graphs.gaps import open_gaps
from graphs.rulebook.anomalies import entity_state
from graphs.round_memory import Basis, RoundMemory
from graphs.rulebook.path import Trace
from state import stable_id
from state.case import CausalChainClaim
from state.facts import Fact, StatementFact
from state.span import Span
from state.claims import ClaimDecision, StopReason
from state.evidence import (
    ChangesAction, DocumentsAction, Gap, Hit, PlacementAction, RecordsAction, RelationsAction, TelemetryAction,
)
from state.steps import (
    DecideStep, HitRef, Logged, PlanChoice, PlanStep, ReadRef, ReadStep, RetrieveStep, Step, UpdateStep,
)
from tools.corpus import SourceDoc
from tools.entities import EntityExtractor
from tools.observations import Lookup
from tools.retrieval import SearchQuery


def memory(deps: Deps) -> RoundMemory:
    """The round's memory (knowledge, trace, search log), built again only when the evidence, the
    lookups and reads logged or the access changed since the last node built it."""
    reg = deps.registry.current()
    basis = Basis(watermark=deps.policy.current().watermark, registry=reg,
                  evidence=tuple(deps.store.evidence(deps.run_id)),
                  log=tuple(s for s in deps.store.steps(deps.run_id) if isinstance(s.step, (RetrieveStep, ReadStep))))
    return deps.memo.get(basis, lambda b: _remember(deps, b, reg))


def _remember(deps: Deps, basis: Basis, reg: EntityExtractor) -> RoundMemory:
    k = Knowledge.build(deps.case, deps.profile, list(basis.evidence), list(basis.log), reg.kinds, basis.watermark,
                        blames=read_blames(deps.case, reg, deps.profile))
    return RoundMemory(basis=basis, knowledge=k, trace=causal_trace(deps.case, k))


def _done(deps: Deps, step: Step) -> None:
    deps.store.add_step(deps.run_id, step)
    deps.lease.renew()
    if deps.crash is not None:
        deps.crash.maybe_kill(step.node, step.round)


def next_gap(deps: Deps, decisions: dict[str, ClaimDecision] | None = None) -> Gap | None:
    mem = memory(deps)
    k, t = mem.knowledge, mem.trace
    decisions = decisions if decisions is not None else deps.store.decisions(deps.run_id)
    access = deps.policy.current()
    # a claim waits only for sources still unreadable: after a grant it is open to the planner again
    decisions = {cid: d.model_copy(update={"blocked_by": tuple(x for x in d.blocked_by if not access.can_read(x))})
                 if d.blocked_by else d for cid, d in decisions.items()}
    return deps.planner.next_gap(deps.case, decisions, k, t, k.searches.done_fingerprints(access.watermark))


def planner_tally(before: dict[str, Any] | None, choice: PlanChoice | None) -> dict[str, Any] | None:
    """The checkpointed running account of a model-backed planner: calls, tokens, fallbacks, last choice."""
    if choice is None:
        return before
    t = dict(before or {"planner": choice.planner, "model": choice.model, "asked": 0, "tokens": 0, "fallbacks": {}})
    t["asked"] += int(choice.fallback in (None, "unusable answer", "endpoint"))  # calls made
    t["tokens"] += choice.tokens
    if choice.fallback is not None:
        t["fallbacks"] = {**t["fallbacks"], choice.fallback: t["fallbacks"].get(choice.fallback, 0) + 1}
    t["last"] = {"choice": choice.choice, "offered": choice.offered, "fallback": choice.fallback, "error": choice.error}
    return t


def plan(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_ = state.get("round", 0) + 1
    gap = next_gap(deps)
    choice: PlanChoice | None = getattr(deps.planner, "last_choice", None) if gap is not None else None
    if gap is None:
        _done(deps, PlanStep(round=round_, note="no gap left that an action could change"))
        return {"round": round_, "gap": None, "hits": [], "new_evidence": []}
    how = ""
    if choice is not None:
        how = (f" [model chose {choice.choice} of {choice.offered}]" if choice.fallback is None
               else f" [deterministic: {choice.fallback}{' — ' + choice.error if choice.error else ''}]")
    deps.progress(f"round {round_}: {gap.action} for {gap.claim_id}: {gap.reason}{how}")
    _done(deps, PlanStep(round=round_, gap=gap, choice=choice))
    out: dict[str, Any] = {"round": round_, "gap": gap, "hits": [], "new_evidence": []}
    if choice is not None:
        out["planner"] = planner_tally(state.get("planner"), choice)
    return out


def _lookup(gap: Gap, deps: Deps, exclude: set[str]) -> Lookup:
    a, access, obs = gap.act, deps.policy.current(), deps.observations
    if isinstance(a, (TelemetryAction, RelationsAction)):
        hits, denied, searched, about = [], [], [], []
        for e in a.entities:
            got = (obs.telemetry(e, a.environment, access, metric=a.metric, signals=a.signals)
                   if isinstance(a, TelemetryAction) else obs.relations(e, a.environment, access, a.direction))
            hits += [h.model_copy(update={"about": e}) for h in got.hits if h.chunk_id not in {x.chunk_id for x in hits}]
            denied += [d for d in got.denied if d not in denied]
            about += [(d, e) for d in got.denied]
            searched += got.searched
        return Lookup(hits=tuple(hits), denied=tuple(denied), searched=tuple(searched), denied_about=tuple(about))
    if isinstance(a, ChangesAction):
        return obs.changes(list(a.entities), a.environment, a.start, a.end, access)
    if isinstance(a, PlacementAction):
        return obs.placement(a.entity, a.environment, access)
    if isinstance(a, RecordsAction):
        return obs.records(list(a.kinds), a.entity, a.environment, access)
    assert isinstance(a, DocumentsAction)
    q = SearchQuery(text=a.query, environment=deps.case.subject.environment, seeds=a.seeds, kinds=a.kinds,
                    exclude=tuple(sorted(exclude)), k=deps.case.budgets.reads_per_round)
    return Lookup(hits=tuple(deps.retrieval.search(q, access)))


def _read_chunks(deps: Deps) -> set[str]:
    """Chunk ids and (for records, histories, prose) regions already read back."""
    out: set[str] = set()
    for s in deps.store.steps(deps.run_id):
        if isinstance(s.step, ReadStep):
            for r in s.step.reads:
                if r.outcome == "ok":
                    out.add(r.chunk_id)
                    if r.region:
                        out.add(r.region)
    return out


def region(h: Hit) -> str:
    """Where a hit is; telemetry is per stream (two writers in one file are two reads)."""
    return f"{h.source_id}@{h.revision}:{h.start}-{h.end}" + (f":{h.focus}" if h.channel == "telemetry" else "")


def retrieve(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, gap = state["round"], state["gap"]
    assert gap is not None
    seen = _read_chunks(deps)
    found = _lookup(gap, deps, seen)
    hits = [h for h in found.hits if h.chunk_id not in seen and region(h) not in seen]
    deps.store.update_run(deps.run_id, rounds_used=round_)
    _done(deps, RetrieveStep(
        round=round_, gap=gap, fingerprint=gap.fingerprint, tool=hits[0].tool if hits else gap.action,
        hits=tuple(HitRef(source_id=h.source_id, chunk_id=h.chunk_id, rank=h.rank, score=h.score, channel=h.channel,
                          focus=h.focus, about=h.about) for h in hits),
        hit_set=tuple(sorted({f"{h.source_id}@{h.revision}:{h.start}-{h.end}:{h.focus}" for h in hits})),
        denied=found.denied, searched=found.searched, denied_about=found.denied_about,
        watermark=deps.policy.current().watermark))
    return {"hits": hits[: deps.case.budgets.reads_per_round]}


def read(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, gap, store, run = state["round"], state["gap"], deps.store, deps.run_id
    assert gap is not None
    budget_left = deps.case.budgets.reads - len(store.reads(run))
    reads: list[ReadRef] = []
    new_ids: list[str] = []
    failed: list[str] = []
    denied: list[str] = []
    opened_ok: set[tuple[str, str]] = set()
    reg = deps.registry.current()
    page_keys = _stated_keys(deps) if isinstance(gap.act, DocumentsAction) else None
    for hit in state.get("hits", []):
        if budget_left <= 0:
            break
        key = stable_id(round_, hit.chunk_id)
        result = deps.reader.read(hit.source_id)
        rec, doc = result.record, result.doc
        where = None
        if doc is not None and rec.outcome == "ok":
            indexed = deps.chunks.text(hit.chunk_id)
            try:
                where = anchor(doc, hit, indexed)
            except Exception as exc:  # noqa: BLE001 - text the span search breaks on: a failed read, named
                rec = rec.model_copy(update={"outcome": "failed", "detail": f"could not locate the span ({type(exc).__name__})"})
        if rec.outcome == "ok" and where is None:
            rec = rec.model_copy(update={"outcome": "not_found", "detail": "span no longer in the source (stale citation)"})
        facts, cite = [], None
        if rec.outcome == "ok" and doc is not None and where is not None:
            try:
                cite, facts = read_facts(doc, hit, where[0], where[1], reg, deps.profile, deps.case)
                rec = rec.model_copy(update={"start": cite.start, "end": cite.end})
            except Exception as exc:  # noqa: BLE001 - a source that parses but cannot be read as its kind: a failed read, named
                rec = rec.model_copy(update={"outcome": "failed", "detail": f"could not derive facts ({type(exc).__name__})"})
        # a read is one source version opened in one round: further regions of it that the round
        # needs (a second series of one export, a second pod of one listing, the same section asked
        # about two entities) come from that opening; facts are derived for each, paid for once
        opened = (rec.source_id, rec.version)
        again = rec.outcome == "ok" and opened in opened_ok
        if rec.outcome == "ok":
            opened_ok.add(opened)
        if not again and store.add_read(run, key, round_, rec):
            budget_left -= 1
        reads.append(ReadRef(source_id=hit.source_id, chunk_id=hit.chunk_id, region=region(hit), outcome=rec.outcome,
                             attempts=rec.attempts,
                             detail=rec.detail if rec.outcome != "denied" else "no shared group"))
        if rec.outcome == "failed":
            failed.append(hit.source_id)
        if rec.outcome == "denied":
            denied.append(hit.source_id)
        if rec.outcome != "ok" or doc is None or cite is None:
            continue
        new_ids.append(_cite(deps, round_, gap, doc, hit, cite, facts, result.watermark, hit.focus))
        if page_keys is not None:
            # the page a search opened is read whole for what it says changed: each such sentence
            # outside the hit is cited by its own span, from the same opening (no further read);
            # keys the page is already cited for (this hit, or an earlier reading) are not cited again
            known = page_keys.setdefault(doc.id, set())
            known.update(f.key for f in facts if isinstance(f, StatementFact))
            for span, said in page_statements(doc, cite.start, cite.end, reg, deps.profile, frozenset(known)):
                at = hit.model_copy(update={"channel": "page", "start": span.start, "end": span.end})
                new_ids.append(_cite(deps, round_, gap, doc, at, span, said, result.watermark, "page"))
                known.update(f.key for f in said if isinstance(f, StatementFact))
    new_ids = list(dict.fromkeys(new_ids))
    _done(deps, ReadStep(round=round_, reads=tuple(reads), new_evidence=tuple(new_ids), failed=tuple(failed),
                         denied=tuple(denied), watermark=deps.policy.current().watermark))
    return {"new_evidence": new_ids}


def _stated_keys(deps: Deps) -> dict[str, set[str]]:
    """Per source, the keys its evidence so far states a change of (read once per document round)."""
    out: dict[str, set[str]] = {}
    for e in deps.store.evidence(deps.run_id):
        out.setdefault(e.source_id, set()).update(f.key for f in e.facts if isinstance(f, StatementFact))
    return out


def _cite(deps: Deps, round_: int, gap: Gap, doc: SourceDoc, hit: Hit, span: Span, facts: list[Fact], watermark: str,
          focus: str) -> str:
    """The id of the evidence for `span` of `doc`: added once, found again by its key after a re-run."""
    store, run = deps.store, deps.run_id
    ekey = evidence_key(doc.id, doc.revision, span.start, span.end, focus)
    existing = store.evidence_by_key(run, ekey)
    if existing is None:
        floor = max([int(e.id[1:]) for e in deps.case.initial_evidence if e.id[1:].isdigit()] or [0])
        ev = make_evidence(eid=f"E{store.next_evidence_number(run, floor)}", doc=doc, hit=hit, query=gap.query,
                           span=span, facts=facts, claim_id=gap.claim_id, watermark=watermark,
                           round_=round_, read_at=datetime.now(timezone.utc))
        existing = store.add_evidence(run, ekey, ev)
    return existing.id


def settle(deps: Deps, k: Knowledge, t: Trace, decisions: dict[str, ClaimDecision]) -> dict[str, ClaimDecision]:
    """An `inferred` causal claim with nothing left to read that could change it is final."""
    out = dict(decisions)
    done = k.searches.done_fingerprints(deps.policy.current().watermark)
    for claim in deps.case.required_claims:
        d = out.get(claim.id)
        if not isinstance(claim, CausalChainClaim) or d is None or d.blocked_by:
            continue
        if d.verdict == "insufficient" and entity_state(k, deps.case.subject.service).status == "normal":
            out[claim.id] = d.model_copy(update={"final": True})  # no anomaly: nothing to trace, nothing to read
            continue
        if d.verdict != "inferred":
            continue
        general = (deps.case.subject.service,)  # the symptom's runbook search proposes; it decides nothing
        left = [g for g in open_gaps(deps.case, out, k, t, complete=False)
                if g.claim_id == claim.id and g.fingerprint not in done
                and not (isinstance(g.act, DocumentsAction) and g.act.seeds == general)]
        if not left:
            out[claim.id] = d.model_copy(update={"final": True})
    return out


def update(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, store, run = state["round"], deps.store, deps.run_id
    mem = memory(deps)
    k, t = mem.knowledge, mem.trace
    decisions = reconcile(deps.case, deps.profile, settle(deps, k, t, decide_all(deps.case, k)), k.blames)
    for d in decisions.values():
        store.add_decision(run, round_, d)
    _done(deps, UpdateStep(round=round_, decisions={c: d.verdict for c, d in decisions.items()},
                           missing={c: d.missing for c, d in decisions.items() if d.missing}))
    return {}


def blocking(deps: Deps, decisions: dict[str, ClaimDecision], k: Knowledge) -> tuple[list[str], list[str]]:
    """(denied, claims) that keep open claims from being decided under the current access."""
    denied: list[str] = []
    claims: list[str] = []
    for c in deps.case.required_claims:
        d = decisions.get(c.id)
        if d is not None and d.decided:
            continue
        mine = list(d.blocked_by) if d is not None else []
        if not isinstance(c, CausalChainClaim):
            mine += [x for lk in k.searches.lookups if lk.claim_id == c.id and lk.watermark == k.searches.watermark
                     for x in lk.denied]
        access = deps.policy.current()  # a deleted source is gone, not waiting for a grant
        mine = [x for x in dict.fromkeys(mine) if not access.can_read(x) and not access.is_deleted(x)]
        if mine:
            claims.append(c.id)
            denied += [x for x in mine if x not in denied]
    return denied, claims


def _failing(k: Knowledge, decisions: dict[str, ClaimDecision], deps: Deps) -> list[str]:
    open_ids = {c.id for c in deps.case.required_claims if not (decisions.get(c.id) and decisions[c.id].decided)}
    return list(dict.fromkeys(f for lk in k.searches.lookups if lk.claim_id in open_ids for f in lk.failed))


def _this_round_denied_only(k: Knowledge, round_: int, steps: list[Logged]) -> list[str]:
    retrieve = next((s.step for s in steps if isinstance(s.step, RetrieveStep) and s.step.round == round_), None)
    read = next((s.step for s in steps if isinstance(s.step, ReadStep) and s.step.round == round_), None)
    if retrieve is None or (read is not None and any(r.outcome == "ok" for r in read.reads)):
        return []
    return list(dict.fromkeys([*retrieve.denied, *(read.denied if read else ())]))


def _groups_for(deps: Deps, sources: list[str]) -> tuple[str, ...]:
    groups = deps.policy.current().groups  # the manifest's groups as they are now
    return tuple(sorted({g for s in sources if s in groups for g in groups[s]}))


def decide(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, store, run, case = state.get("round", 0), deps.store, deps.run_id, deps.case
    decisions = store.decisions(run)
    mem = memory(deps)
    k, steps = mem.knowledge, list(mem.log)  # the lookups and reads: all of the log decide reads
    retrieves = [s.step for s in steps if isinstance(s.step, RetrieveStep)]
    reads_used = len(store.reads(run))
    store.update_run(run, reads_used=reads_used)
    stop: StopReason | None = None
    denied, denied_claims = blocking(deps, decisions, k)
    undecided = [c.id for c in case.required_claims if decisions.get(c.id) is None or not decisions[c.id].decided]
    if decisions and not undecided:
        stop = StopReason(kind="evidence_ready", detail="every required claim decided with read-back evidence")
    elif decisions and denied and all(c in denied_claims and decisions[c].blocked_by for c in undecided):
        # every open claim waits for a source the principal cannot read, and nothing readable can decide
        # it without that source: pause for a grant (or stop), never spend the budget around it
        kind = "awaiting_permission" if case.principal.may_request_access else "permission_denied"
        stop = StopReason(kind=kind, sources=tuple(denied), claims=tuple(denied_claims),
                          groups=_groups_for(deps, denied),
                          detail=f"needed for {', '.join(denied_claims)}: not readable by the principal")
    elif case.principal.may_request_access and (now := [x for x in _this_round_denied_only(k, round_, steps)
                                                         if x in denied]):
        stop = StopReason(kind="awaiting_permission", sources=tuple(now), claims=tuple(denied_claims),
                          groups=_groups_for(deps, now),
                          detail=f"needed for {', '.join(denied_claims)}: not readable by the principal")
    elif state.get("gap") is None and next_gap(deps, decisions) is not None:
        pass  # access changed since the plan (a grant): there is something to do again
    elif state.get("gap") is None:
        failed = _failing(k, decisions, deps)
        if denied:
            kind = "awaiting_permission" if case.principal.may_request_access else "permission_denied"
            stop = StopReason(kind=kind, sources=tuple(denied), claims=tuple(denied_claims),
                              groups=_groups_for(deps, denied),
                              detail=f"needed for {', '.join(denied_claims)}: not readable by the principal")
        elif failed:
            stop = StopReason(kind="source_failure", detail="a source needed by an open claim failed after retries",
                              sources=tuple(failed))
        else:
            stop = StopReason(kind="no_new_progress", detail="no action left that could change an open claim")
    else:
        last = retrieves[-1] if retrieves else None
        if last is not None and any(s.fingerprint == last.fingerprint and s.hit_set == last.hit_set
                                    for s in retrieves[:-1]):
            stop = StopReason(kind="no_new_progress",
                              detail=f"query fingerprint {last.fingerprint} returned the same source texts again")
        elif round_ >= case.budgets.rounds:
            stop = StopReason(kind="budget_exhausted", detail=f"rounds: {round_} of {case.budgets.rounds} used")
        elif reads_used >= case.budgets.reads:
            stop = StopReason(kind="budget_exhausted", detail=f"reads: {reads_used} of {case.budgets.reads} used")
    if stop is not None and stop.kind == "awaiting_permission":
        store.set_stop(run, stop, "awaiting_permission")
        deps.progress(f"paused: awaiting permission for {', '.join(stop.sources)} (groups that can read them: "
                      f"{', '.join(stop.groups) or '?'})")
        _done(deps, DecideStep(round=round_, stop=stop, rounds_used=round_, reads_used=reads_used))
        # pauses here; `resume` after a grant re-runs this node and interrupt() returns the grant
        interrupt({"awaiting_permission": list(stop.sources), "detail": stop.detail})
        store.set_stop(run, None, "running")
        _done(deps, DecideStep(round=round_, stop=None, resumed_after="permission grant", rounds_used=round_,
                               reads_used=reads_used))
        return {"stop": None, "gap": None}
    if stop is not None:
        store.set_stop(run, stop, "stopped")
        deps.progress(f"stop: {stop.kind} ({stop.detail})")
    _done(deps, DecideStep(round=round_, stop=stop, rounds_used=round_, reads_used=reads_used))
    return {"stop": stop}

