"""The pure domain: frozen pydantic values for cases, sources, claims, evidence, steps and the
profile; the error hierarchy; the SQLModel store. Imports nothing else of ours.

Modules: `case`, `sources`, `expected` (the case folder), `casefiles` (reading its files strictly),
`claims`, `evidence`, `span`, `facts`, `telemetry`, `change` (the parts every account of a change
composes), `steps` (what a run holds), `profile`, `keys` (one form for a config key), `errors`,
`store`, `yamlio`.

This package exports the value base and helpers that every layer uses: `Frozen` (an immutable
model that rejects unknown fields), `AwareDatetime`, `Duration`, `parse_duration`,
`content_hash` and `stable_id`; the strict field types `Int`, `Number`, `Bool` and
`Name` (a name that becomes a file name, never a path) with `checked_name` and `is_name`. They are imported on first use (PEP 562), so that
`from state.errors import ...` does not import pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from state.lazy import lazy_exports

if TYPE_CHECKING:
    from state._base import (
        AwareDatetime, Bool, Duration, Frozen, Int, Name, Number, checked_name, content_hash, is_name, parse_duration,
        stable_id,
    )

__all__ = ["AwareDatetime", "Bool", "Duration", "Frozen", "Int", "Name", "Number", "checked_name", "content_hash",
           "is_name", "parse_duration", "stable_id"]

_EXPORTS = dict.fromkeys(__all__, "_base")


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
