"""Shared pydantic base and small value types."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict


class Frozen(BaseModel):
    """Immutable value: unknown fields are an error, instances are hashable snapshots."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timestamp must carry an explicit UTC offset, e.g. 2026-04-29T10:35:00+08:00")
    return value


AwareDatetime = Annotated[datetime, AfterValidator(_aware)]

_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d)\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> timedelta:
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int):
        return timedelta(seconds=value)
    m = _DURATION.match(str(value))
    if not m:
        raise ValueError("duration like '45m', '2h' or '90s'")
    return timedelta(seconds=int(m.group(1)) * _UNIT[m.group(2)])


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


def content_hash(text: str) -> str:
    """`sha256(text)[:16]`: the citation hash of a quote and the revision of a source text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def stable_id(*parts: object) -> str:
    """Deterministic id from parts: re-running a step produces the same id."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:16]
