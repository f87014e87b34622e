"""The case: alert, question, subject, window, principal, budgets, hypotheses, claims.

Loaded from `case.yaml` (format `investigator/case@1`, documented in docs/case-format.md).
Every problem becomes a `CaseError` naming the file, the field and what was expected.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import Discriminator, Field, ValidationError, field_validator, model_validator

from state._base import AwareDatetime, Duration, Frozen
from state.errors import CaseError

TrustLevel = Literal["unverified", "verified", "untrusted"]
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
    rule: str
    fired_at: AwareDatetime
    text: str


class Window(Frozen):
    start: AwareDatetime
    end: AwareDatetime
    change_lookback: Duration = timedelta(minutes=30)
    """How long before `start` a change still counts."""
    baseline: Duration = timedelta(minutes=30)
    """Length of the baseline before `start` for metric comparisons."""

    @model_validator(mode="after")
    def _ordered(self) -> "Window":
        if self.end <= self.start:
            raise ValueError("window.end must be after window.start")
        return self

    @property
    def change_from(self) -> datetime:
        return self.start - self.change_lookback

    @property
    def baseline_from(self) -> datetime:
        return self.start - self.baseline


class Principal(Frozen):
    id: str
    groups: tuple[str, ...]
    may_request_access: bool = False


class Budgets(Frozen):
    rounds: int = Field(ge=1)
    """Retrieval rounds: one plan → retrieve → read → update → decide pass."""
    reads: int = Field(ge=1)
    """Source read-backs; each span read counts one."""
    reads_per_round: int = Field(default=3, ge=1)
    """At most this many hits are read back per round."""


class Prediction(Frozen):
    metric: str
    direction: Direction = "up"
    min_ratio: float = Field(gt=0)


class Hypothesis(Frozen):
    id: str
    statement: str
    mentioned_by: tuple[str, ...] = ()
    """Phrases that show a source proposing the hypothesis."""
    predicts: Prediction


class _ClaimBase(Frozen):
    id: str
    statement: str


class MetricShiftClaim(_ClaimBase):
    kind: Literal["metric_shift"]
    metric: str
    direction: Direction = "up"
    min_ratio: float = Field(gt=0)


class ChangeInWindowClaim(_ClaimBase):
    kind: Literal["change_in_window"]
    change_types: tuple[str, ...] = ("deployment", "config_push", "feature_flag")
    include_dependencies: bool = False


class CausalChainClaim(_ClaimBase):
    kind: Literal["causal_chain"]
    end_kinds: tuple[str, ...] = ("config_key",)
    through_change: bool = True
    competitors: tuple[str, ...] = ()
    max_hops: int = Field(default=4, ge=1, le=8)
    requires_owner_verification: bool = False


class CounterEvidenceClaim(_ClaimBase):
    kind: Literal["counter_evidence"]
    hypothesis: str


Claim = Annotated[
    MetricShiftClaim | ChangeInWindowClaim | CausalChainClaim | CounterEvidenceClaim,
    Discriminator("kind"),
]


class InitialEvidence(Frozen):
    id: str
    claim: str
    trust: TrustLevel = "unverified"
    text: str
    origin: str = "alert"


class Case(Frozen):
    """A whole case as declared in `case.yaml`."""

    format: Literal["investigator/case@1"]
    id: str
    run_id: str
    title: str = ""
    alert: Alert
    question: str
    subject: Subject
    window: Window
    principal: Principal
    budgets: Budgets
    hypotheses: tuple[Hypothesis, ...] = ()
    required_claims: tuple[Claim, ...] = Field(min_length=1)
    initial_evidence: tuple[InitialEvidence, ...] = ()

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, value: object) -> object:
        return Subject.parse(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _references(self) -> "Case":
        claim_ids = [c.id for c in self.required_claims]
        if len(set(claim_ids)) != len(claim_ids):
            raise ValueError(f"required_claims ids must be unique, got {claim_ids}")
        hyp_ids = {h.id for h in self.hypotheses}
        for claim in self.required_claims:
            refs = (
                claim.competitors
                if isinstance(claim, CausalChainClaim)
                else (claim.hypothesis,) if isinstance(claim, CounterEvidenceClaim) else ()
            )
            for ref in refs:
                if ref not in hyp_ids:
                    raise ValueError(f"claim {claim.id!r} names hypothesis {ref!r}, not declared under hypotheses")
        for ev in self.initial_evidence:
            if ev.claim not in claim_ids:
                raise ValueError(f"initial evidence {ev.id!r} names claim {ev.claim!r}, not a required claim")
        return self

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


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster


def read_yaml(path: Path) -> object:
    """Parse one YAML file; a syntax error is a CaseError naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(str(path), "<file>", "the file to exist") from None
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "<document>"
        raise CaseError(str(path), where, f"valid YAML ({getattr(exc, 'problem', exc)})") from None


def validation_to_case_error(path: Path | str, exc: ValidationError) -> CaseError:
    """The first validation problem as file / dotted field / expectation."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "<document>"
    got = err.get("input")
    got_text = "" if isinstance(got, (dict, list)) else f" (got {got!r})"
    return CaseError(str(path), loc, f"{err['msg']}{got_text}")


def load_case(case_dir: Path) -> Case:
    """Read and validate `case.yaml` of a case folder."""
    path = Path(case_dir) / "case.yaml"
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise CaseError(str(path), "<document>", "a mapping at the top level")
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(path, exc) from None
