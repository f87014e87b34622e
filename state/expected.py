"""Gold answers of a case (`expected.yaml`): for evaluation and tests, never read by the runtime."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from state._base import Frozen
from state.casefiles import read_yaml, validation_to_case_error
from state.claims import CauseKind, StopKind, Verdict
from state.errors import CaseError


class GoldQuote(Frozen):
    source: str
    quote: str


class GoldHop(Frozen):
    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    source: str
    quote: str


class GoldClaim(Frozen):
    verdict: Verdict
    evidence: tuple[GoldQuote, ...] = ()
    bridge_path: tuple[GoldHop, ...] = ()


class GoldRootCause(Frozen):
    model_config = ConfigDict(extra="allow")
    entity: str
    kind: CauseKind | None = None
    """One of the root-cause kinds of docs/deciding.md §9 (a typo would make every run look wrong)."""
    change: str | None = None
    path: tuple[str, ...] = ()


class Expected(Frozen):
    model_config = ConfigDict(extra="allow")
    format: Literal["investigator/expected@1"]
    stop_reason: StopKind
    claims: dict[str, GoldClaim]
    root_cause: GoldRootCause | None = None
    canaries: tuple[str, ...] = ()


def load_expected(case_dir: Path) -> Expected | None:
    path = Path(case_dir) / "expected.yaml"
    if not path.exists():
        return None
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise CaseError(str(path), "<document>", "a mapping")
    try:
        return Expected.model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(path, exc) from None
