"""The case: alert, question, subject, window, principal, budgets, hypotheses, claims.

Loaded from `case.yaml` (format `investigator/case@1`, documented in docs/case-format.md).
Every problem becomes a `CaseError` naming the file, the field and what was expected.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Strict, Tag, ValidationError, ValidationInfo, field_validator, model_validator

from state._base import (
    NAME_MAX, NAME_PATTERN, NAME_RULE, AwareDatetime, Bool, Duration, Frozen, Int, Name, Number, TrustLevel, is_name,
)
from state.casefiles import read_yaml, validation_to_case_error
from state.errors import CaseError
from state.profile import Profile

__all__ = ["NAME_PATTERN", "Case", "check_vocabulary", "load_case"]


Direction = Literal["up", "down"]


class Subject(Frozen):
    """`env/service`: the service under investigation in one environment."""

    environment: str
    service: str

    @classmethod
    def parse(cls, text: str) -> "Subject":
        env, sep, service = str(text).partition("/")
        if not sep or not env or not service:
            raise ValueError("subject as 'env/service', e.g. 'prod/checkout'")
        return cls(environment=env, service=service)

    def __str__(self) -> str:
        return f"{self.environment}/{self.service}"


class Alert(Frozen):
    id: str
    rule: str = ""
    fired_at: AwareDatetime
    text: str
    labels: dict[str, str] = {}


class Window(Frozen):
    start: AwareDatetime
    end: AwareDatetime
    change_lookback: Duration = timedelta(minutes=30)
    """How long before an onset (and before `start`) a change still counts."""
    baseline: Duration = timedelta(minutes=30)
    """Length of the baseline before `start` for metric comparisons."""
    onset_lead: Duration = Field(default=timedelta(minutes=10), validate_default=True)
    """Onsets are searched from `start - onset_lead`; the baseline ends there."""
    onset_tolerance: Duration = timedelta(minutes=2)
    """Slack when ordering onsets along a path and changes before an onset."""

    # each check is on its own field, so an error names the field (window.baseline), not the window
    @field_validator("end")
    @classmethod
    def _after_start(cls, end: datetime, info: ValidationInfo) -> datetime:
        start = info.data.get("start")
        if start is not None and end <= start:
            raise ValueError("a time after window.start")
        return end

    @field_validator("change_lookback")
    @classmethod
    def _lookback(cls, value: timedelta) -> timedelta:
        return _between(value, timedelta(0), timedelta(days=7), "0 and 7d")

    @field_validator("baseline")
    @classmethod
    def _baseline(cls, value: timedelta) -> timedelta:
        return _between(value, timedelta(minutes=1), timedelta(days=7), "1m and 7d (a baseline has a length)")

    @field_validator("onset_lead")
    @classmethod
    def _lead(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        """Checked with its default too: `baseline: 5m` alone would leave the 10m lead longer."""
        baseline = info.data.get("baseline")
        if baseline is not None and not value < baseline:
            raise ValueError("a duration shorter than window.baseline (onset_lead is 10m unless given)")
        return value

    @field_validator("onset_tolerance")
    @classmethod
    def _tolerance(cls, value: timedelta) -> timedelta:
        return _between(value, timedelta(0), timedelta(hours=1), "0 and 1h")

    @property
    def search_from(self) -> datetime:
        """Where onsets are looked for (and where the baseline ends)."""
        return self.start - self.onset_lead

    @property
    def change_from(self) -> datetime:
        return self.start - self.change_lookback

    @property
    def baseline_from(self) -> datetime:
        return self.start - self.baseline


def _between(value: timedelta, low: timedelta, high: timedelta, text: str) -> timedelta:
    if not low <= value <= high:
        raise ValueError(f"a duration between {text}")
    return value


class Principal(Frozen):
    id: str = Field(min_length=1)
    groups: tuple[str, ...] = Field(min_length=1)
    may_request_access: Bool = False


class Budgets(Frozen):
    rounds: Int = Field(default=30, ge=1, le=500)
    """Retrieval rounds: one plan → retrieve → read → update → decide pass."""
    reads: Int = Field(default=100, ge=1, le=5000)
    """Source read-backs; each span read counts one."""
    reads_per_round: Int = Field(default=4, ge=1, le=50)
    """At most this many hits are read back per round."""


MAX_RATIO = 1e6
"""A `min_ratio` above this is a typo: no baseline-to-window rise is that large and still measured."""


class Prediction(Frozen):
    metric: str = Field(min_length=1)
    entity: str | None = None
    """The entity whose metric moves (default: the subject's service)."""
    direction: Direction = "up"
    min_ratio: Number = Field(gt=1, le=MAX_RATIO)


class Blame(Frozen):
    """A hypothesis that a change caused the symptom ("the in-window deploy of X did it")."""

    entity: str
    """Whose change (a service, a database, a cache…)."""
    change: str | None = None
    """The change's id, when the hypothesis names one."""
    version: str | None = None
    """The version it deployed, when the hypothesis names one (`8.17.13`)."""
    versions: tuple[str, ...] = ()
    """Versions its statement names, when read from a statement: the change is the one that
    deployed one of them (or any change of `entity`, when none did)."""
    types: tuple[str, ...] = ()
    """Change types that count (normalised through the profile); empty: every type."""


class Hypothesis(Frozen):
    id: Name
    statement: str
    mentioned_by: tuple[str, ...] = ()
    """Phrases that show a source proposing the hypothesis."""
    predicts: Prediction | None = None
    """A metric the hypothesis says moved (decided by reading it)."""
    blames: Blame | None = None
    """A change the hypothesis says caused the symptom (decided by timing, rollback, version
    split, the anomalous path and the change records: docs/deciding.md §7)."""

    @model_validator(mode="after")
    def _testable(self) -> "Hypothesis":
        if self.predicts is None and self.blames is None:
            raise ValueError(f"hypothesis {self.id!r}: what would show it: `predicts` (a metric that moves) "
                             f"or `blames` (a change that caused the symptom)")
        return self


class _ClaimBase(Frozen):
    id: Name
    statement: str


Signal = Literal["metric", "logs", "traces", "any"]


class SymptomClaim(_ClaimBase):
    """The subject's own telemetry shows the alerted departure."""

    kind: Literal["symptom", "metric_shift"]
    signal: Signal = "any"
    metric: str | None = None
    direction: Direction = "up"
    min_ratio: Number = Field(default=1.5, gt=1, le=MAX_RATIO)

    @model_validator(mode="after")
    def _metric(self) -> "SymptomClaim":
        if (self.kind == "metric_shift" or self.signal == "metric") and not self.metric:
            raise ValueError(f"claim {self.id!r}: a metric symptom names its `metric`")
        return self

    @property
    def wants(self) -> Signal:
        return "metric" if self.kind == "metric_shift" else self.signal


class ChangeInWindowClaim(_ClaimBase):
    kind: Literal["change_in_window"]
    change_types: tuple[str, ...] = ()
    """Change types that count (normalised through the profile); empty: every type."""
    scope: Literal["subject", "path"] = "subject"
    include_dependencies: Bool = False
    """Older spelling of `scope: path`."""

    @property
    def on_path(self) -> bool:
        return self.scope == "path" or self.include_dependencies


class CausalChainClaim(_ClaimBase):
    kind: Literal["causal_chain"]
    competitors: tuple[str, ...] = ()
    max_hops: Int = Field(default=6, ge=1, le=8)
    requires_owner_verification: Bool = False
    end_kinds: tuple[str, ...] = ()
    """Accepted from older cases and ignored: the case never states the answer's shape."""
    through_change: Bool | None = None
    """Accepted from older cases and ignored."""


class CounterEvidenceClaim(_ClaimBase):
    kind: Literal["counter_evidence"]
    hypothesis: str


def _claim_tag(value: object) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return "symptom" if kind in ("symptom", "metric_shift") else kind


Claim = Annotated[
    Annotated[SymptomClaim, Tag("symptom")] | Annotated[ChangeInWindowClaim, Tag("change_in_window")]
    | Annotated[CausalChainClaim, Tag("causal_chain")] | Annotated[CounterEvidenceClaim, Tag("counter_evidence")],
    Discriminator(_claim_tag),
]
MetricShiftClaim = SymptomClaim


class InitialEvidence(Frozen):
    id: Name
    claim: str
    trust: TrustLevel = "unverified"
    text: str
    origin: str = "alert"


def _unique(items: tuple) -> tuple:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ValueError(f"each id once (got {item.id!r} twice)")
        seen.add(item.id)
    return items


class Case(Frozen):
    """A whole case as declared in `case.yaml`."""

    format: Literal["investigator/case@1"]
    id: Name
    """Becomes a folder name (the case's index): a name, never a path."""
    run_id: Annotated[str, Strict()] = ""
    """Optional; a name when given (the default run id is `run-<id>`)."""
    title: str = ""
    alert: Alert
    question: str
    subject: Subject
    window: Window
    principal: Principal
    budgets: Budgets = Budgets()
    hypotheses: tuple[Hypothesis, ...] = ()
    required_claims: tuple[Claim, ...] = Field(min_length=1)
    initial_evidence: tuple[InitialEvidence, ...] = ()
    profile: dict[str, Any] = {}
    """Overrides of the default profile (docs/profile.md)."""

    @property
    def default_run_id(self) -> str:
        return self.run_id or f"run-{self.id}"[:NAME_MAX - 8]  # room for `-N` when taken

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        if value and not is_name(value):
            raise ValueError(NAME_RULE)
        return value

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, value: object) -> object:
        return Subject.parse(value) if isinstance(value, str) else value

    # fields are validated in declaration order: hypotheses before the claims that name them,
    # claims before the initial evidence that names them; each error names the list it is in
    @field_validator("hypotheses")
    @classmethod
    def _unique_hypotheses(cls, value: tuple[Hypothesis, ...]) -> tuple[Hypothesis, ...]:
        return _unique(value)

    @field_validator("required_claims")
    @classmethod
    def _claims(cls, value: tuple, info: ValidationInfo) -> tuple:
        _unique(value)
        if "hypotheses" not in info.data:
            return value  # the hypotheses had an error of their own (reported first)
        hyp_ids = {h.id for h in info.data["hypotheses"]}
        for claim in value:
            refs = (
                claim.competitors
                if isinstance(claim, CausalChainClaim)
                else (claim.hypothesis,) if isinstance(claim, CounterEvidenceClaim) else ()
            )
            for ref in refs:
                if ref not in hyp_ids:
                    raise ValueError(f"claim {claim.id!r} names hypothesis {ref!r}, which is not under hypotheses")
        return value

    @field_validator("initial_evidence")
    @classmethod
    def _evidence(cls, value: tuple[InitialEvidence, ...], info: ValidationInfo) -> tuple[InitialEvidence, ...]:
        _unique(value)
        if "required_claims" not in info.data:
            return value
        claim_ids = {c.id for c in info.data["required_claims"]}
        for ev in value:
            if ev.claim not in claim_ids:
                raise ValueError(f"initial evidence {ev.id!r} names claim {ev.claim!r}, which is not a required claim")
        return value

    def claim(self, claim_id: str) -> Claim:
        for c in self.required_claims:
            if c.id == claim_id:
                return c
        raise KeyError(claim_id)

    def hypothesis(self, hypothesis_id: str) -> Hypothesis:
        for h in self.hypotheses:
            if h.id == hypothesis_id:
                return h
        raise KeyError(hypothesis_id)


def load_case(case_dir: Path) -> Case:
    """Read and validate `case.yaml` of a case folder."""
    path = Path(case_dir) / "case.yaml"
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise CaseError(str(path), "<document>", "a mapping at the top level (format, id, alert, ...)")
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(path, exc) from None


def check_vocabulary(case: Case, profile: Profile, where: str) -> None:
    """Change types named by claims and hypotheses are the profile's (or spellings of them).

    A typo (`teleport`) would otherwise match no change and quietly refute the claim while
    another claim blames the very change; the message lists the types there are."""
    named = [(f"required_claims.{i}.change_types", c.change_types) for i, c in enumerate(case.required_claims)
             if isinstance(c, ChangeInWindowClaim)]
    named += [(f"hypotheses.{i}.blames.types", h.blames.types) for i, h in enumerate(case.hypotheses) if h.blames]
    for field, types in named:
        for j, written in enumerate(types):
            if not profile.known_change_type(written):
                shown = written if len(written) <= 40 else written[:39] + "…"
                raise CaseError(where, f"{field}.{j}", f"a change type: one of {profile.change_type_vocabulary()} "
                                f"(or a spelling the profile's change_types maps to one) (got {shown!r})")
