"""Resume: re-read the authoritative state, the current permissions and tombstones before going on.

Evidence whose source the principal can no longer read, or that was deleted, is revoked
(kept in history, never shown); evidence of a source whose text changed is re-anchored
(the quote found again, every fact's span shifted with it) when its facts are local to the
quote, or marked stale (a signal computed over a whole series must be read again); the rest
is reused without reading it again. Claims are re-decided, so a claim that rested on
revoked evidence reopens.
"""

from __future__ import annotations

from graphs.rulebook.verdicts import decide_all
from graphs.deps import Deps
from graphs.nodes import memory, settle
from state.evidence import Evidence, Span
from state.steps import Recheck, ResumeStep
from tools.corpus import load_source

LOCAL_FACTS = frozenset({"relation", "entity", "statement", "injection", "document", "deployed", "doc_mapping",
                         "verification", "placement", "change"})
"""Facts that a quote states by itself: they move with it when a source is edited around it."""


def _reanchor(ev: Evidence, text: str, revision: str, version: str) -> Evidence | None:
    assert ev.span is not None
    if any(f.kind not in LOCAL_FACTS for f in ev.facts):
        return None
    pos = text.find(ev.span.quote)
    if pos < 0:
        return None
    delta = pos - ev.span.start
    facts = []
    for f in ev.facts:
        at = getattr(f, "at", None)
        if at is not None:
            if not (ev.span.start <= at.start and at.end <= ev.span.end):
                return None  # a fact stated outside the quote cannot be vouched for
            f = f.model_copy(update={"at": Span(start=at.start + delta, end=at.end + delta, quote=at.quote)})
        facts.append(f)
    return ev.model_copy(update={"span": Span(start=pos, end=pos + len(ev.span.quote), quote=ev.span.quote),
                                 "revision": revision, "version": version, "facts": tuple(facts),
                                 "status_note": f"re-anchored from [{ev.span.start}:{ev.span.end}] in revision {ev.revision}"})


def recheck(deps: Deps, round_: int) -> Recheck:
    store, run = deps.store, deps.run_id
    access = deps.policy.current()
    deleted = deps.tombstones.current()
    revoked, stale, reanchored, tombstoned, reused = [], [], [], [], 0
    before = store.decisions(run)
    for ev in store.evidence(run):
        if ev.kind == "initial":
            continue
        if ev.source_id in deleted:
            store.replace_evidence(run, ev.model_copy(update={"status": "revoked", "status_note": "source deleted (tombstone)"}))
            tombstoned.append(ev.id)
            revoked.append(ev.id)
            continue
        if not access.can_read(ev.source_id):
            store.replace_evidence(run, ev.model_copy(update={
                "status": "revoked", "status_note": f"access revoked (watermark {ev.watermark} -> {access.watermark})"}))
            revoked.append(ev.id)
            continue
        entry = deps.loaded.entry(ev.source_id)  # the manifest this drive loaded, just now
        try:
            doc = load_source(deps.case_dir, entry, deps.reader.ctx) if entry is not None else None
        except Exception:  # noqa: BLE001 - unreadable now, for any reason: whatever it said cannot be vouched for
            doc = None
        if doc is not None and doc.set_aside is not None:
            doc = None  # an editable page broken since: left out of the case, so of the evidence
        if doc is None:
            store.replace_evidence(run, ev.model_copy(update={"status": "stale", "status_note": "source removed or unreadable"}))
            stale.append(ev.id)
        elif doc.revision == ev.revision:
            reused += 1
        else:
            moved = _reanchor(ev, doc.text, doc.revision, doc.version)
            if moved is None:
                store.replace_evidence(run, ev.model_copy(update={
                    "status": "stale", "status_note": f"{ev.source_id} changed (revision {doc.revision}): read it again"}))
                stale.append(ev.id)
            else:
                store.replace_evidence(run, moved)
                reanchored.append(ev.id)
    reopened: list[str] = []
    if revoked or stale or reanchored:
        mem = memory(deps)
        for cid, d in settle(deps, mem.knowledge, mem.trace, decide_all(deps.case, mem.knowledge)).items():
            if store.add_decision(run, round_, d) and before.get(cid) and before[cid].decided and not d.decided:
                reopened.append(cid)
    summary = Recheck(revoked=tuple(revoked), stale=tuple(stale), reanchored=tuple(reanchored), reused=reused,
                      reopened=tuple(reopened), tombstoned=tuple(tombstoned), watermark=access.watermark)
    store.add_step(run, ResumeStep(round=round_, recheck=summary))
    store.update_run(run, watermark=access.watermark)
    return summary
