"""§3 of docs/deciding.md, Anomalies and onsets: is an entity anomalous, since when, on which evidence.

`entity_state` reads an entity's own signals (metrics, lines, spans, events) and, when those look
healthy or it has none, how its callers see it (their bursting bad lines naming it). `is_bad` and
`is_load` say which way a departure hurts by the signal's role; `moved` re-decides a series with a
claim's own direction and ratio.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from graphs.rulebook.knowledge import Knowledge, Ref
from state.facts import SignalFact
from tools.signals import Range, series_verdict

BAD_DIRECTION = {"latency": "up", "errors": "up", "saturation": "up", "availability": "down"}
"""Which way a departure of a series of each role hurts (§3); `traffic` may do either (a rise is load)."""

Status = Literal["anomalous", "normal", "unknown", "no_telemetry", "undecidable", "denied", "failed"]


def is_bad(sig: SignalFact) -> bool:
    """An anomaly that hurts (latency/errors/saturation up, availability down; unknown role: either)."""
    if not sig.anomalous or not sig.decidable:
        return False
    if sig.role in BAD_DIRECTION:
        return sig.direction == BAD_DIRECTION[sig.role]
    if sig.role == "traffic":
        return False
    return sig.direction in ("up", "down")


def is_load(sig: SignalFact) -> bool:
    """A rise of demand or resource use: traffic or saturation up."""
    return sig.anomalous and sig.decidable and sig.direction == "up" and sig.role in ("traffic", "saturation")


def moved(sig: SignalFact, k: Knowledge, direction: str, min_ratio: float) -> bool | None:
    """Re-decide a series with a claim's own direction and ratio; None when it cannot be decided."""
    if not sig.decidable:
        return None
    if sig.signal in ("logs", "events"):
        return sig.anomalous and direction == "up"
    if not sig.points:
        return None
    v = series_verdict(list(sig.points), Range.of(k.case.window), k.profile.anomaly, (direction,), min_ratio,
                       sig.capacity)
    return v.anomalous if v.decidable else None


@dataclass(frozen=True)
class EntityState:
    entity: str
    status: Status
    onset: datetime | None = None
    how: Literal["own", "callers", ""] = ""
    anomalies: tuple[Ref, ...] = ()
    """Bad anomalous signals (or caller mentions), earliest first."""
    normal: tuple[Ref, ...] = ()
    load: tuple[Ref, ...] = ()
    denied: tuple[str, ...] = ()

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e for _f, e in (*self.anomalies, *self.normal)))

    @property
    def anomalous(self) -> bool:
        return self.status == "anomalous"


def entity_state(k: Knowledge, entity: str, caller: str | None = None) -> EntityState:
    """How `entity` stands in the window. With `caller`, an entity whose own signals look healthy
    (or that has none) counts as anomalous only as *that* caller sees it: a hop follows the errors
    of the entity it starts from, not anybody's."""
    own = [(f, e) for f, e in k.signals.get(entity, [])]
    bad = sorted(((f, e) for f, e in own if is_bad(f)), key=lambda r: r[0].onset)
    load = tuple(sorted(((f, e) for f, e in own if is_load(f)), key=lambda r: r[0].onset))
    if bad:
        # sampled spans time an onset only as well as their density allows: a metric or the lines, when
        # there is one, say when the anomaly began
        dense = [r for r in bad if r[0].signal != "traces"]
        return EntityState(entity, "anomalous", (dense or bad)[0][0].onset, "own", tuple(bad),
                           tuple(r for r in own if not is_bad(r[0])), load)
    denied = tuple(k.searches.denied("telemetry", entity))
    done = k.searches.done("telemetry", entity)
    if own and not done and k.searches.looked("telemetry", entity):
        return EntityState(entity, "unknown")  # streams left unread could still show the anomaly
    if any(f.decidable for f, _e in own):
        normal = tuple(r for r in own if r[0].decidable)
        # its own signals look healthy, yet its callers' errors naming it burst: the failure is on
        # the way to it (a certificate, a DNS record, a limit that refuses connections) and shows
        # only where it is called from
        seen = callers_seeing(k, entity, caller)
        if seen:
            return EntityState(entity, "anomalous", seen[0][0].ts, "callers", tuple(seen), normal, load)
        return EntityState(entity, "normal", None, "own", (), normal, load, denied=denied)
    if own:
        return EntityState(entity, "undecidable", normal=tuple(own), denied=denied)
    if denied:
        return EntityState(entity, "denied", denied=denied)
    if k.searches.failed("telemetry", entity):
        return EntityState(entity, "failed")
    if not done:
        return EntityState(entity, "unknown")
    if k.kind(entity) == "component":
        return EntityState(entity, "no_telemetry")  # a library runs inside its callers: their anomaly is its
    # no telemetry of its own: anomalous as its callers see it (their bad lines name it)
    seen = callers_seeing(k, entity, caller)
    if seen:
        return EntityState(entity, "anomalous", seen[0][0].ts, "callers", tuple(seen))
    return EntityState(entity, "no_telemetry")


def callers_seeing(k: Knowledge, entity: str, caller: str | None = None) -> list[Ref]:
    """The bursting bad lines of anomalous callers (or of one `caller`) that name `entity`, earliest first."""
    out = []
    for writer, refs in k.mentions.items():
        if caller is not None and writer != caller:
            continue
        if writer == entity or not any(is_bad(f) for f, _e in k.signals.get(writer, [])):
            continue
        out += [(m, e) for m, e in refs if m.name == entity and m.anomalous]
    return sorted(out, key=lambda r: r[0].ts)

