"""Shared pydantic base and small value types."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import AfterValidator, AllowInfNan, BaseModel, BeforeValidator, ConfigDict, Strict


class Frozen(BaseModel):
    """Immutable value: unknown fields are an error, instances are hashable snapshots."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timestamp must carry an explicit UTC offset, e.g. 2026-04-29T10:35:00+08:00")
    return value


AwareDatetime = Annotated[datetime, AfterValidator(_aware)]

# --- strict scalars --------------------------------------------------------------------------
# YAML writes `true`, `"30"` and `3.0` easily; a case field that wants a count, a ratio or a
# flag takes only that (`rounds: true` is not 1 round, `may_request_access: "no"` is not false).
Int = Annotated[int, Strict()]
"""An integer, never a bool, a float or a string."""
Number = Annotated[float, Strict(), AllowInfNan(False)]
"""A finite number (an integer is accepted), never a bool, a string, `.inf` or `.nan`."""
Bool = Annotated[bool, Strict()]
"""`true` or `false`, never 1, "yes" or "no"."""
TrustLevel = Literal["unverified", "verified", "untrusted"]
"""How far a source (and what is read from it) is trusted; here, not in `state.case`, so that
evidence names it without importing the case model."""

# --- names -----------------------------------------------------------------------------------
NAME_MAX = 128
NAME_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}$"
NAME_RULE = f"a name of letters, digits, '.', '_' and '-' that starts with a letter or digit, at most {NAME_MAX} characters"
_NAME = re.compile(NAME_PATTERN)


def is_name(value: object) -> bool:
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def _name(value: str) -> str:
    if not is_name(value):
        raise ValueError(NAME_RULE)
    return value


Name = Annotated[str, Strict(), AfterValidator(_name)]
"""Case ids and run ids (and the ids of claims, hypotheses, evidence): they become file and
folder names or keys, so they are names, never paths."""


def checked_name(value: object, what: str) -> str:
    """`value` when it is a Name; else a ConfigError naming `what` (a run id given on the
    command line or to the library)."""
    if not is_name(value):
        from state.errors import ConfigError

        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "...'"
        raise ConfigError(f"{what}: {NAME_RULE} (got {shown})")
    return value  # type: ignore[return-value]

_DURATION = re.compile(r"^\s*(\d{1,12})\s*(s|m|h|d)\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_DURATION = timedelta(days=3650)
"""No duration in a case is longer (a larger one is a typo, and Python's timedelta overflows)."""


def parse_duration(value: object) -> timedelta:
    """`45m`, `2h`, `90s`, `1d`, or whole seconds (an int); never negative, a bool or over ten years."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = int(m.group(1)) * _UNIT[m.group(2)]
    else:
        raise ValueError("a duration like '45m', '2h' or '90s' (or whole seconds)")
    if not 0 <= seconds <= MAX_DURATION.total_seconds():
        raise ValueError(f"a duration between 0 and {MAX_DURATION.days}d")
    return value if isinstance(value, timedelta) else timedelta(seconds=seconds)


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


def content_hash(text: str) -> str:
    """`sha256(text)[:16]`: the citation hash of a quote and the revision of a source text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def stable_id(*parts: object) -> str:
    """Deterministic id from parts: re-running a step produces the same id."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:16]
