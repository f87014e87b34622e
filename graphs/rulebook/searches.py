"""What the run has looked up so far, from its steps (docs/deciding.md §8).

A rule asks whether a lookup about an entity ran to the end ("searched, found nothing"), which
sources it met and could not read (a denial under the current access watermark), and which failed;
`why_unread` words what is missing when a signal was not read back.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from state.evidence import (
    ChangesAction, DocumentsAction, PlacementAction, RecordsAction, RelationsAction, TelemetryAction,
)
from state.steps import Logged, ReadStep, RetrieveStep


@dataclass(frozen=True)
class Lookup:
    """One structured lookup the run made: what it asked about and what came back."""

    action: str
    entities: tuple[str, ...]
    hits: int
    denied: tuple[str, ...]
    failed: tuple[str, ...]
    searched: tuple[str, ...]
    more: bool
    round: int
    claim_id: str
    metric: str | None = None
    direction: str = ""
    watermark: str = ""
    fingerprint: str = ""
    full: bool = False
    """A telemetry lookup of every signal (no metric or signal filter)."""
    lines_left: bool = False
    """Line streams (log lines, spans, events) it returned that were not read."""
    denied_about: tuple[tuple[str, str], ...] = ()
    """(denied source, entity) when the lookup asked about several entities."""


def _is_lines(focus: str) -> bool:
    return focus.startswith(("logs|", "traces|", "events|"))


class Searches:
    """What the run has looked up so far (from its steps): for 'searched, found nothing' and denials."""

    def __init__(self, steps: list[Logged], watermark: str | None = None) -> None:
        self._by: dict[tuple[str, str], list[Lookup]] = defaultdict(list)
        """(action, entity) -> its lookups in order: a rule asks per entity, so a question costs
        what that entity was looked up for, not every lookup of the run."""
        self.watermark = watermark
        """The current access watermark: a denial met under an older one (before a grant) no longer counts."""
        reads = {s.step.round: s.step for s in steps if isinstance(s.step, ReadStep)}
        self.lookups: list[Lookup] = []
        self.fingerprints: dict[str, bool] = {}
        """fingerprint -> whether its last run left hits unread (more to do)."""
        for s in steps:
            st = s.step
            if not isinstance(st, RetrieveStep):
                continue
            a = st.gap.act
            read = reads.get(st.round)
            entities: tuple[str, ...] = ()
            if isinstance(a, (TelemetryAction, RelationsAction)):
                entities = a.entities
            elif isinstance(a, PlacementAction):
                entities = (a.entity,)
            elif isinstance(a, ChangesAction):
                entities = a.entities
            elif isinstance(a, DocumentsAction):
                entities = a.seeds
            elif isinstance(a, RecordsAction):
                entities = (a.entity,)
            read_ids = {r.chunk_id for r in (read.reads if read else ())}
            unread = [h for h in st.hits if h.chunk_id not in read_ids]
            more = bool(unread)
            # a lookup whose hits were all left unread or came back without a single readable span
            # taught nothing: run again on the same facts it would teach nothing again
            stalled = bool(st.hits) and read is not None and not any(r.outcome == "ok" for r in read.reads)
            self.fingerprints[st.fingerprint] = more
            lk = Lookup(
                action=a.action, entities=entities, hits=len(st.hits),
                denied=tuple(dict.fromkeys([*st.denied, *(read.denied if read else ())])), denied_about=st.denied_about,
                failed=tuple(read.failed if read else ()), searched=st.searched, more=more and not stalled,
                round=st.round, claim_id=st.gap.claim_id, metric=getattr(a, "metric", None),
                direction=getattr(a, "direction", ""), watermark=st.watermark, fingerprint=st.fingerprint,
                full=isinstance(a, TelemetryAction) and not a.metric and (
                    not a.signals or {"logs", "traces", "events"} <= set(a.signals)),
                lines_left=any(_is_lines(h.focus) for h in unread) and not stalled)
            self.lookups.append(lk)
            per_entity = any(h.about for h in st.hits) and len(entities) > 1
            for e in dict.fromkeys(entities):
                # a lookup of several entities: whether *this* entity has streams left unread
                mine = replace(lk, more=any(h.about == e for h in unread) and not stalled,
                               lines_left=any(h.about == e and _is_lines(h.focus) for h in unread) and not stalled
                               ) if per_entity else lk
                self._by[(lk.action, e)].append(mine)

    def done_fingerprints(self, watermark: str) -> set[str]:
        """Gaps run to the end (nothing left unread). One that met a denial under an older access
        watermark is not done: after a grant it may return more."""
        last = {lk.fingerprint: lk for lk in self.lookups}
        return {fp for fp, lk in last.items() if not lk.more and not (lk.denied and lk.watermark != watermark)}

    def looked(self, action: str, entity: str, *, metric: str | None = None, direction: str = "") -> list[Lookup]:
        return [lk for lk in self._by.get((action, entity), ())
                if (metric is None or lk.metric in (None, metric)) and (not direction or lk.direction == direction)]

    def done_full(self, entity: str) -> bool:
        """The entity's own lines, spans and events were looked up and read (what names where its
        errors go); its remaining metric series need not be, once one shows its anomaly."""
        got = [lk for lk in self._by.get(("telemetry", entity), ()) if lk.full]
        return bool(got) and not got[-1].lines_left

    def done(self, action: str, entity: str, **kw: str | None) -> bool:
        """The lookup ran and nothing it returned is left unread. One that met a denial under an
        older access watermark is not done: after a grant it may return what was denied."""
        got = self.looked(action, entity, **kw)  # type: ignore[arg-type]
        if kw.get("metric") is not None and any(lk.metric is None and lk.denied for lk in got):
            # a lookup of every signal that met a denial cannot say whether the unreadable source holds
            # this metric; a lookup of the metric itself can
            got = [lk for lk in got if lk.metric == kw["metric"]]
        if not got:
            return False
        last = got[-1]
        return not last.more and not (last.denied and self.watermark is not None and last.watermark != self.watermark)

    def denied(self, action: str, entity: str, **kw: str | None) -> list[str]:
        """Sources a lookup about `entity` met and could not read; in a lookup of several entities, only
        those returned for `entity` (a restricted series of one is not about the others)."""
        metric = kw.get("metric")
        looked = [lk for lk in self.looked(action, entity, **kw)  # type: ignore[arg-type]
                  if metric is None or lk.metric == metric]  # what a lookup of every signal met need not hold it
        return list(dict.fromkeys(d for lk in looked for d in lk.denied
                                  if (self.watermark is None or lk.watermark == self.watermark)
                                  and (d not in {x for x, _e in lk.denied_about} or (d, entity) in lk.denied_about)))

    def failed(self, action: str, entity: str, **kw: str | None) -> list[str]:
        return list(dict.fromkeys(f for lk in self.looked(action, entity, **kw) for f in lk.failed))  # type: ignore[arg-type]

    def for_claim(self, claim_id: str, action: str) -> list[Lookup]:
        return [lk for lk in self.lookups if lk.claim_id == claim_id and lk.action == action]

    def why_unread(self, entity: str, what: str, metric: str | None = None) -> str:
        """What is missing when `what` of `entity` was not read back: denied, failed, or held by no readable source."""
        why = f"{what} of {entity} read back from its telemetry"
        denied = self.denied("telemetry", entity, metric=metric)
        failed = self.failed("telemetry", entity, metric=metric)
        if denied:
            why += f" (denied: {', '.join(denied)})"
        if failed:
            why += f" (failed: {', '.join(failed)})"
        if not denied and not failed and self.done("telemetry", entity, metric=metric):
            why += " (no readable source holds it)"
        return why
