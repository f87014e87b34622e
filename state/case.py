"""The case: alert, question, subject, window, principal, budgets, hypotheses, claims.

Loaded from `case.yaml` (format `investigator/case@1`, documented in docs/case-format.md).
Every problem becomes a `CaseError` naming the file, the field and what was expected.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Discriminator, Field, Tag, ValidationError, field_validator, model_validator

from state._base import AwareDatetime, Duration, Frozen
from state import yamlio
from state.errors import CaseError

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""Case ids, run ids and source ids are names, never paths."""

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
    onset_lead: Duration = timedelta(minutes=10)
    """Onsets are searched from `start - onset_lead`; the baseline ends there."""
    onset_tolerance: Duration = timedelta(minutes=2)
    """Slack when ordering onsets along a path and changes before an onset."""

    @model_validator(mode="after")
    def _ordered(self) -> "Window":
        if self.end <= self.start:
            raise ValueError("window.end must be after window.start")
        if not timedelta(0) <= self.change_lookback <= timedelta(days=7):
            raise ValueError("window.change_lookback must be between 0 and 7d")
        if not timedelta(minutes=1) <= self.baseline <= timedelta(days=7):
            raise ValueError("window.baseline must be between 1m and 7d")
        if not timedelta(0) <= self.onset_lead < self.baseline:
            raise ValueError("window.onset_lead must be at least 0 and shorter than window.baseline")
        if not timedelta(0) <= self.onset_tolerance <= timedelta(hours=1):
            raise ValueError("window.onset_tolerance must be between 0 and 1h")
        return self

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


class Principal(Frozen):
    id: str
    groups: tuple[str, ...] = Field(min_length=1)
    may_request_access: bool = False


class Budgets(Frozen):
    rounds: int = Field(default=30, ge=1, le=500)
    """Retrieval rounds: one plan → retrieve → read → update → decide pass."""
    reads: int = Field(default=100, ge=1, le=5000)
    """Source read-backs; each span read counts one."""
    reads_per_round: int = Field(default=4, ge=1, le=50)
    """At most this many hits are read back per round."""


class Prediction(Frozen):
    metric: str
    entity: str | None = None
    """The entity whose metric moves (default: the subject's service)."""
    direction: Direction = "up"
    min_ratio: float = Field(gt=1)


class Hypothesis(Frozen):
    id: str
    statement: str
    mentioned_by: tuple[str, ...] = ()
    """Phrases that show a source proposing the hypothesis."""
    predicts: Prediction


class _ClaimBase(Frozen):
    id: str
    statement: str


Signal = Literal["metric", "logs", "traces", "any"]


class SymptomClaim(_ClaimBase):
    """The subject's own telemetry shows the alerted departure."""

    kind: Literal["symptom", "metric_shift"]
    signal: Signal = "any"
    metric: str | None = None
    direction: Direction = "up"
    min_ratio: float = Field(default=1.5, gt=1)

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
    include_dependencies: bool = False
    """Older spelling of `scope: path`."""

    @property
    def on_path(self) -> bool:
        return self.scope == "path" or self.include_dependencies


class CausalChainClaim(_ClaimBase):
    kind: Literal["causal_chain"]
    competitors: tuple[str, ...] = ()
    max_hops: int = Field(default=6, ge=1, le=8)
    requires_owner_verification: bool = False
    end_kinds: tuple[str, ...] = ()
    """Accepted from older cases and ignored: the case never states the answer's shape."""
    through_change: bool | None = None
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
    id: str
    claim: str
    trust: TrustLevel = "unverified"
    text: str
    origin: str = "alert"


class Case(Frozen):
    """A whole case as declared in `case.yaml`."""

    format: Literal["investigator/case@1"]
    id: str = Field(pattern=NAME_PATTERN)
    run_id: str = Field(default="", pattern=r"^$|" + NAME_PATTERN)
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
        return self.run_id or f"run-{self.id}"

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, value: object) -> object:
        return Subject.parse(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _references(self) -> "Case":
        claim_ids = [c.id for c in self.required_claims]
        if len(set(claim_ids)) != len(claim_ids):
            raise ValueError(f"required_claims ids must be unique, got {claim_ids}")
        hyp_list = [h.id for h in self.hypotheses]
        if len(set(hyp_list)) != len(hyp_list):
            raise ValueError(f"hypotheses ids must be unique, got {hyp_list}")
        hyp_ids = set(hyp_list)
        for claim in self.required_claims:
            refs = (
                claim.competitors
                if isinstance(claim, CausalChainClaim)
                else (claim.hypothesis,) if isinstance(claim, CounterEvidenceClaim) else ()
            )
            for ref in refs:
                if ref not in hyp_ids:
                    raise ValueError(f"claim {claim.id!r} names hypothesis {ref!r}, not declared under hypotheses")
        ev_ids = [e.id for e in self.initial_evidence]
        if len(set(ev_ids)) != len(ev_ids):
            raise ValueError(f"initial_evidence ids must be unique, got {ev_ids}")
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


def read_yaml(path: Path, *, max_bytes: int | None = None) -> object:
    """Parse one YAML file strictly; a syntax error or a duplicate key is a CaseError naming the line."""
    path = Path(path)
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise CaseError(str(path), "<file>", f"at most {max_bytes} bytes (INVESTIGATOR_MAX_SOURCE_BYTES)")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(str(path), "<file>", "the file to exist") from None
    except UnicodeDecodeError:
        raise CaseError(str(path), "<file>", "UTF-8 text") from None
    except IsADirectoryError:
        raise CaseError(str(path), "<file>", "a file, not a directory") from None
    except PermissionError:
        raise CaseError(str(path), "<file>", "a file the runtime may read (permission denied)") from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, where: str) -> object:
    try:
        return yamlio.loads(text)
    except yamlio.DuplicateKey as exc:
        raise CaseError(where, f"line {exc.line}", f"each key once (got {exc.key!r} twice)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f"line {mark.line + 1}" if mark else "<document>"
        raise CaseError(where, loc, f"valid YAML ({getattr(exc, 'problem', None) or type(exc).__name__})") from None


def validation_to_case_error(path: Path | str, exc: ValidationError) -> CaseError:
    """The first validation problem as file / dotted field / expectation."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "<document>"
    got = err.get("input")
    got_text = "" if isinstance(got, (dict, list)) or len(repr(got)) > 80 else f" (got {got!r})"
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
