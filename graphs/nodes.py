"""The five loop nodes. Each is a small function from state to a partial update.

Nodes write to the store with deterministic keys, so a node re-run after a crash (LangGraph
re-runs the interrupted node from its start) adds nothing twice.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from langgraph.types import interrupt

from graphs.deciders import Searches, decide_all
from graphs.deps import Deps
from graphs.evidence import bridges_of, evidence_key, make_evidence, span_of
from graphs.knowledge import Knowledge
from graphs.state import LoopState
from state._base import stable_id
from state.claims import ClaimDecision, StopReason
from state.evidence import Gap
from tools.observations import Lookup
from tools.retrieval import SearchQuery


def _knowledge(deps: Deps) -> tuple[Knowledge, Searches, dict[str, ClaimDecision], list[dict]]:
    store, run = deps.store, deps.run_id
    steps = store.steps(run)
    k = Knowledge.build(deps.case, store.evidence(run), store.hops(run), store.bridges(run))
    return k, Searches(steps), store.decisions(run), steps


def _done(deps: Deps, node: str, round_: int, payload: dict[str, Any]) -> None:
    deps.store.add_step(deps.run_id, round_, node, payload)
    deps.heartbeat()
    if deps.crash is not None:
        deps.crash.maybe_kill(node, round_)


def _next_gap(deps: Deps) -> Gap | None:
    """The planner's next gap; a gap counts as done only under the access it ran with."""
    k, searches, decisions, steps = _knowledge(deps)
    watermark = deps.policy.current().watermark
    done = {s["gap_fingerprint"] for s in steps if s.get("node") == "retrieve" and s.get("gap_fingerprint")
            and (not s.get("denied") or s.get("watermark") == watermark)}
    return deps.planner.next_gap(deps.case, decisions, k, searches, done)


def plan(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_ = state.get("round", 0) + 1
    gap = _next_gap(deps)
    if gap is None:
        _done(deps, "plan", round_, {"gap": None, "note": "no gap left that an action could change"})
        return {"round": round_, "gap": None, "hits": [], "new_evidence": []}
    deps.progress(f"round {round_}: {gap.action} for {gap.claim_id}: {gap.reason}")
    _done(deps, "plan", round_, {"gap": gap.model_dump(), "changes_claim": gap.claim_id})
    return {"round": round_, "gap": gap, "hits": [], "new_evidence": []}


def _lookup(gap: Gap, deps: Deps, exclude: set[str]) -> Lookup:
    p, access, obs = gap.params, deps.policy.current(), deps.observations
    if gap.action == "metrics":
        return obs.metric(p["metric"], p["service"], p["environment"], access)
    if gap.action == "changes":
        return obs.changes(list(p["services"]), p["environment"], datetime.fromisoformat(p["start"]),
                           datetime.fromisoformat(p["end"]), list(p["types"]), access)
    if gap.action == "logs":
        return obs.logs(p["service"], p["environment"], datetime.fromisoformat(p["start"]),
                        datetime.fromisoformat(p["end"]), access)
    if gap.action == "records":
        return obs.records(list(p["kinds"]), p["service"], p["environment"], access)
    q = SearchQuery(text=gap.query, environment=deps.case.subject.environment, seeds=tuple(p.get("seeds", ())),
                    kinds=tuple(p.get("kinds", ())),
                    exclude=tuple(sorted(exclude)), k=deps.case.budgets.reads_per_round)
    return Lookup(hits=tuple(deps.retrieval.search(q, access)))


def retrieve(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, gap = state["round"], state["gap"]
    assert gap is not None
    seen = {r["chunk_id"] for s in deps.store.steps(deps.run_id) if s.get("node") == "read"
            for r in s.get("reads", []) if r.get("outcome") == "ok"}
    found = _lookup(gap, deps, seen)
    hits = [h for h in found.hits if h.chunk_id not in seen]
    hits = hits[: deps.case.budgets.reads_per_round]
    deps.store.update_run(deps.run_id, rounds_used=round_)
    _done(deps, "retrieve", round_, {
        "gap": gap.model_dump(), "gap_fingerprint": gap.fingerprint, "tool": hits[0].tool if hits else gap.action,
        "hits": [{"source_id": h.source_id, "chunk_id": h.chunk_id, "rank": h.rank, "score": h.score,
                  "channel": h.channel} for h in hits],
        "hit_set": sorted({f"{h.source_id}@{h.revision}:{h.start}-{h.end}" for h in hits}),
        "denied": list(found.denied), "searched": list(found.searched),
        "watermark": deps.policy.current().watermark,
    })
    return {"hits": hits}


def read(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, gap, store, run = state["round"], state["gap"], deps.store, deps.run_id
    assert gap is not None
    budget_left = deps.case.budgets.reads - len(store.reads(run))
    reads, new_ids, failed, denied = [], [], [], []
    for hit in state.get("hits", []):
        key = stable_id(round_, hit.chunk_id)
        if budget_left <= 0:
            break
        result = deps.reader.read(hit.source_id)
        rec, doc = result.record, result.doc
        span = span_of(doc, hit, deps.chunk_text(hit.chunk_id)) if doc is not None and rec.outcome == "ok" else None
        if rec.outcome == "ok" and span is None:
            rec = rec.model_copy(update={"outcome": "not_found", "detail": "span no longer in the source (stale citation)"})
        if rec.outcome == "ok":
            rec = rec.model_copy(update={"start": span.start, "end": span.end})
        if store.add_read(run, key, round_, rec):
            budget_left -= 1
        reads.append({"source_id": hit.source_id, "chunk_id": hit.chunk_id, "outcome": rec.outcome,
                      "attempts": rec.attempts, "detail": rec.detail if rec.outcome != "denied" else "no shared group"})
        if rec.outcome == "failed":
            failed.append(hit.source_id)
        if rec.outcome == "denied":
            denied.append(hit.source_id)
        if rec.outcome != "ok":
            continue
        ekey = evidence_key(doc.id, doc.revision, span.start, span.end)
        existing = store.evidence_by_key(run, ekey)
        if existing is None:
            floor = max([int(e.id[1:]) for e in deps.case.initial_evidence if e.id[1:].isdigit()] or [0])
            ev = make_evidence(eid=f"E{store.next_evidence_number(run, floor)}", doc=doc, hit=hit, query=gap.query,
                               span=span, claim_id=gap.claim_id, case=deps.case, watermark=result.watermark,
                               round_=round_, read_at=datetime.now(timezone.utc))
            existing = store.add_evidence(run, ekey, ev)
        new_ids.append(existing.id)
    _done(deps, "read", round_, {"reads": reads, "new_evidence": new_ids, "failed": failed, "denied": denied,
                                 "watermark": deps.policy.current().watermark})
    return {"new_evidence": new_ids}


def update(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, store, run = state["round"], deps.store, deps.run_id
    env = deps.case.subject.environment
    by_id = {e.id: e for e in store.evidence(run)}
    for eid in state.get("new_evidence", []):
        ev = by_id.get(eid)
        if ev is None:
            continue
        occs, hops = bridges_of(ev, deps.extractor, env)
        for occ in occs:
            store.add_bridge(run, stable_id(occ.evidence_id, occ.start, occ.end), occ)
        for a, b in hops:
            store.add_hop(run, a, b, ev.id)
    k, searches, _old, _steps = _knowledge(deps)
    decisions = decide_all(deps.case, k, searches)
    for d in decisions.values():
        store.add_decision(run, round_, d)
    _done(deps, "update", round_, {"decisions": {c: d.verdict for c, d in decisions.items()},
                                   "missing": {c: list(d.missing) for c, d in decisions.items() if d.missing}})
    return {}


def _blocked(steps: list[dict], decisions: dict[str, ClaimDecision], key: str, watermark: str) -> list[str]:
    """Sources that blocked an open claim under the current access (a grant clears older blocks)."""
    open_claims = {c for c, d in decisions.items() if not d.decided}
    out: list[str] = []
    for s in steps:
        gap = s.get("gap") or {}
        if (s.get("node") in ("retrieve", "read") and s.get("watermark") == watermark
                and (gap.get("claim_id") in open_claims or s.get("node") == "read")):
            out += [x for x in s.get(key, []) if x not in out]
    return out


def _denied_this_round(steps: list[dict], round_: int) -> list[str]:
    """Sources this round's action needed and could not read, when nothing readable answered it."""
    mine = [s for s in steps if s.get("round") == round_ and s.get("node") in ("retrieve", "read")]
    retrieve = next((s for s in mine if s["node"] == "retrieve"), None)
    read = next((s for s in mine if s["node"] == "read"), {})
    if retrieve is None or any(r.get("outcome") == "ok" for r in read.get("reads", [])):
        return []
    return list(dict.fromkeys([*retrieve.get("denied", []), *read.get("denied", [])]))


def decide(state: LoopState, deps: Deps) -> dict[str, Any]:
    round_, store, run = state.get("round", 0), deps.store, deps.run_id
    case = deps.case
    decisions = store.decisions(run)
    steps = store.steps(run)
    retrieves = [s for s in steps if s.get("node") == "retrieve"]
    reads_used = len(store.reads(run))
    store.update_run(run, reads_used=reads_used)
    stop: StopReason | None = None
    if decisions and all(decisions.get(c.id) is not None and decisions[c.id].decided for c in case.required_claims):
        stop = StopReason(kind="evidence_ready", detail="every required claim decided with read-back evidence")
    elif case.principal.may_request_access and (blocked := _denied_this_round(steps, round_)):
        gap = state.get("gap")
        stop = StopReason(kind="awaiting_permission", sources=tuple(blocked),
                          detail=f"needed for {gap.claim_id if gap else 'an open claim'}: not readable by the principal")
    elif state.get("gap") is None and _next_gap(deps) is not None:
        pass  # access changed since the plan (a grant): there is something to do again
    elif state.get("gap") is None:
        watermark = deps.policy.current().watermark
        denied = _blocked(steps, decisions, "denied", watermark)
        failed = _blocked(steps, decisions, "failed", watermark)
        if denied:
            kind = "awaiting_permission" if case.principal.may_request_access else "permission_denied"
            open_ids = [c.id for c in case.required_claims if not (decisions.get(c.id) and decisions[c.id].decided)]
            stop = StopReason(kind=kind, detail=f"needed for {', '.join(open_ids)}: not readable by the principal",
                              sources=tuple(denied))
        elif failed:
            stop = StopReason(kind="source_failure", detail="a source needed by an open claim failed after retries",
                              sources=tuple(failed))
        else:
            stop = StopReason(kind="no_new_progress", detail="no action left that could change an open claim")
    else:
        last = retrieves[-1] if retrieves else None
        if last is not None and any(s["gap_fingerprint"] == last["gap_fingerprint"] and s["hit_set"] == last["hit_set"]
                                    for s in retrieves[:-1]):
            stop = StopReason(kind="no_new_progress",
                              detail=f"query fingerprint {last['gap_fingerprint']} returned the same source texts again")
        elif round_ >= case.budgets.rounds:
            stop = StopReason(kind="budget_exhausted", detail=f"rounds: {round_} of {case.budgets.rounds} used")
        elif reads_used >= case.budgets.reads:
            stop = StopReason(kind="budget_exhausted", detail=f"reads: {reads_used} of {case.budgets.reads} used")
    if stop is not None and stop.kind == "awaiting_permission":
        store.set_stop(run, stop, "awaiting_permission")
        deps.progress(f"paused: awaiting permission for {', '.join(stop.sources)}")
        _done(deps, "decide", round_, {"stop": stop.model_dump(), "rounds_used": round_, "reads_used": reads_used})
        # pauses here; `resume` after a grant re-runs this node and interrupt() returns the grant
        interrupt({"awaiting_permission": list(stop.sources), "detail": stop.detail})
        store.set_stop(run, None, "running")
        _done(deps, "decide", round_, {"stop": None, "resumed_after": "permission grant",
                                       "rounds_used": round_, "reads_used": reads_used})
        return {"stop": None, "gap": None}
    if stop is not None:
        store.set_stop(run, stop, "stopped")
        deps.progress(f"stop: {stop.kind} ({stop.detail})")
    _done(deps, "decide", round_, {"stop": stop.model_dump() if stop else None,
                                   "rounds_used": round_, "reads_used": reads_used})
    return {"stop": stop}
