"""A small world of read facts for testing the causal rules as pure functions (no loop, no store).

`World` holds a case, the facts each piece of evidence established and the lookups the run
made; `knowledge()` builds exactly what the loop's update node builds from its store.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from graphs.rulebook.knowledge import Knowledge
from state.case import Case
from state.evidence import (
    ChangesAction, Evidence, Gap, PlacementAction, RelationsAction, Scope, TelemetryAction,
)
from state.facts import ChangeFact, MentionFact, RelationFact, SignalFact
from state.span import Span
from state.steps import HitRef, Logged, ReadRef, ReadStep, RetrieveStep
from tools.profile import default_profile

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=timezone.utc)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def case(subject: str = "web", competitors: tuple[str, ...] = (), hypotheses: list | None = None) -> Case:
    return Case.model_validate({
        "format": "investigator/case@1", "id": "T-1",
        "alert": {"id": "T-1", "fired_at": at(5).isoformat(), "text": f"{subject} is slow"},
        "question": "why", "subject": f"prod/{subject}",
        "window": {"start": T0.isoformat(), "end": at(20).isoformat(), "change_lookback": "30m", "baseline": "60m"},
        "principal": {"id": "p", "groups": ["ops"]},
        "hypotheses": hypotheses or [],
        "required_claims": [{"id": "cause", "kind": "causal_chain", "statement": "s", "competitors": list(competitors)}],
    })


def rise(entity: str, onset_min: float, base: float = 100.0, level: float = 400.0, *, role: str = "latency",
         unit: str = "ms", name: str = "p95_ms") -> SignalFact:
    pts = tuple((at(m), base if m < onset_min else level) for m in range(-60, 21))
    return SignalFact(entity=entity, signal="metric", name=name, role=role, unit=unit, direction="up", anomalous=True,
                      onset=at(onset_min), baseline=base, level=level, ratio=level / base, delta=level - base,
                      series=f"{name}:{entity}", points=pts)


def flat(entity: str, base: float = 100.0, *, role: str = "latency", unit: str = "ms", name: str = "p95_ms") -> SignalFact:
    pts = tuple((at(m), base) for m in range(-60, 21))
    return SignalFact(entity=entity, signal="metric", name=name, role=role, unit=unit, anomalous=False, baseline=base,
                      level=base, peak=base, ratio=1.0, delta=0.0, series=f"{name}:{entity}", points=pts)


def dep(a: str, b: str, relation: str = "depends_on", via: str = "catalog depends_on") -> RelationFact:
    return RelationFact(source=a, target=b, relation=relation, via=via, environment="prod")


def change(cid: str, entity: str, minute: float, *, type_: str = "deployment", keys: tuple[str, ...] = (),
           target: str | None = None, rollback_of: str | None = None) -> ChangeFact:
    from state.change import ConfigChange

    return ChangeFact(id=cid, type=type_, entity=entity, target=target, environment="prod", started_at=at(minute - 1),
                      completed_at=at(minute), config_changes=tuple(ConfigChange(key=k, to="x") for k in keys),
                      rollback_of=rollback_of)


def names(writer: str, name: str, minute: float, kind: str = "config_key", severity: str = "error") -> MentionFact:
    return MentionFact(entity=writer, name=name, name_kind=kind, ts=at(minute), severity=severity, anomalous=True)


def lines(entity: str, onset_min: float) -> SignalFact:
    """A burst of warning/error lines of `entity` from `onset_min`."""
    return SignalFact(entity=entity, signal="logs", name="bad lines", role="errors", unit="lines/min", direction="up",
                      anomalous=True, onset=at(onset_min), baseline=0.0, level=3.0, series=f"logs:{entity}")


def fall(entity: str, onset_min: float, base: float = 80.0, level: float = 30.0, *, name: str = "processed_per_s") -> SignalFact:
    """Work done (a traffic series) falling from `base` to `level` at `onset_min`."""
    pts = tuple((at(m), base if m < onset_min else level) for m in range(-60, 21))
    return SignalFact(entity=entity, signal="metric", name=name, role="traffic", unit="1/s", direction="down",
                      anomalous=True, onset=at(onset_min), baseline=base, level=level, ratio=level / base,
                      delta=level - base, series=f"{name}:{entity}", points=pts)


class World:
    def __init__(self, c: Case | None = None, kinds: dict[str, str] | None = None) -> None:
        self.case = c or case()
        self.kinds = kinds or {}
        self.evidence: list[Evidence] = []
        self.steps: list[Logged] = []

    def read(self, *facts, trust: str = "verified", source_kind: str = "log") -> str:
        eid = f"E{len(self.evidence) + 1}"
        quote = f"fact {eid}"
        self.evidence.append(Evidence(id=eid, source_id=f"src-{eid}", source_kind=source_kind, version="1",
                                      revision="r", span=Span(start=0, end=len(quote), quote=quote), trust=trust,
                                      scope=Scope(environment="prod", service="*"), facts=tuple(facts)))
        return eid

    def looked(self, act, denied: tuple[str, ...] = (), more: bool = False,
               denied_about: tuple[tuple[str, str], ...] = ()) -> None:
        r = len(self.steps) + 1
        hits = (HitRef(source_id="s", chunk_id=f"c{r}", rank=1, score=1.0, channel="x"),) if more else ()
        self.steps.append(Logged(seq=r, at=T0, step=RetrieveStep(
            round=r, gap=Gap(claim_id="cause", act=act, reason="test"), fingerprint=f"fp{r}", tool="t", hits=hits,
            denied=denied, denied_about=denied_about, watermark="w")))
        self.steps.append(Logged(seq=r, at=T0, step=ReadStep(round=r, reads=(), watermark="w")))
        _ = ReadRef

    def everything_looked(self, *entities: str) -> "World":
        for e in entities:
            self.looked(TelemetryAction(entities=(e,), environment="prod"))
            self.looked(RelationsAction(entities=(e,), environment="prod"))
            self.looked(RelationsAction(entities=(e,), environment="prod", direction="consumers"))
            self.looked(ChangesAction(entities=(e,), environment="prod", start=at(-60), end=at(20)))
            self.looked(PlacementAction(entity=e, environment="prod"))
        return self

    def knowledge(self) -> Knowledge:
        return Knowledge.build(self.case, default_profile(), self.evidence, self.steps, self.kinds, "w")
