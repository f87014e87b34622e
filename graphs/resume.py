"""Resume: re-read the authoritative state and the current permissions before going on.

Evidence whose source the principal can no longer read is revoked (kept in history, never
shown); evidence of a source whose text changed is re-anchored (the quote found again) or
marked stale; the rest is reused without reading it again. Claims are re-decided, so a claim
that rested on revoked evidence reopens.
"""

from __future__ import annotations

from state._base import Frozen
from state.evidence import Evidence, Span
from graphs.deciders import Searches, decide_all
from graphs.deps import Deps
from graphs.knowledge import Knowledge
from tools.corpus import load_manifest, load_source


class Recheck(Frozen):
    revoked: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    reanchored: tuple[str, ...] = ()
    reused: int = 0
    reopened: tuple[str, ...] = ()
    watermark: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.revoked or self.stale or self.reanchored)


def _reanchor(ev: Evidence, text: str, revision: str, version: str) -> Evidence | None:
    assert ev.span is not None
    pos = text.find(ev.span.quote)
    if pos < 0:
        return None
    return ev.model_copy(update={"span": Span(start=pos, end=pos + len(ev.span.quote), quote=ev.span.quote),
                                 "revision": revision, "version": version,
                                 "status_note": f"re-anchored from [{ev.span.start}:{ev.span.end}] in revision {ev.revision}"})


def recheck(deps: Deps, round_: int) -> Recheck:
    store, run = deps.store, deps.run_id
    access = deps.policy.current()
    entries = {s.id: s for s in load_manifest(deps.case_dir).sources}
    revoked, stale, reanchored, reused = [], [], [], 0
    before = store.decisions(run)
    for ev in store.evidence(run):
        if ev.kind == "initial":
            continue
        if not access.can_read(ev.source_id):
            store.replace_evidence(run, ev.model_copy(update={
                "status": "revoked", "status_note": f"access revoked (watermark {ev.watermark} -> {access.watermark})"}))
            revoked.append(ev.id)
            continue
        entry = entries.get(ev.source_id)
        doc = load_source(deps.case_dir, entry) if entry is not None else None
        if doc is None:
            store.replace_evidence(run, ev.model_copy(update={"status": "stale", "status_note": "source removed"}))
            stale.append(ev.id)
        elif doc.revision == ev.revision:
            reused += 1
        else:
            moved = _reanchor(ev, doc.text, doc.revision, doc.version)
            if moved is None:
                store.replace_evidence(run, ev.model_copy(update={
                    "status": "stale", "status_note": f"quote no longer in {ev.source_id} (revision {doc.revision})"}))
                stale.append(ev.id)
            else:
                store.replace_evidence(run, moved)
                reanchored.append(ev.id)
    reopened: list[str] = []
    if revoked or stale or reanchored:
        k = Knowledge.build(deps.case, store.evidence(run), store.hops(run), store.bridges(run))
        for cid, d in decide_all(deps.case, k, Searches(store.steps(run))).items():
            if store.add_decision(run, round_, d) and before.get(cid) and before[cid].decided and not d.decided:
                reopened.append(cid)
    summary = Recheck(revoked=tuple(revoked), stale=tuple(stale), reanchored=tuple(reanchored), reused=reused,
                      reopened=tuple(reopened), watermark=access.watermark)
    store.add_step(run, round_, "resume", {"recheck": summary.model_dump()})
    store.update_run(run, watermark=access.watermark)
    return summary
