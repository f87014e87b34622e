"""Load the profile: the package default merged with a case's `profile:` overrides.

Merge rules (docs/profile.md): a mapping merges key by key; `{extend: [...]}` appends to a
default list (or, for a mapping of lists, to each named list); `{replace: X}` and any other
value replace the default.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from state.errors import CaseError
from state.profile import Profile
from state.yamlio import load_file

DEFAULT = Path(__file__).with_name("default.yaml")

__all__ = ["load_profile", "default_profile", "merge"]


def merge(base: Any, override: Any) -> Any:
    if isinstance(override, dict) and set(override) == {"extend"}:
        extra = override["extend"]
        if isinstance(base, list) and isinstance(extra, list):
            return [*base, *[x for x in extra if x not in base]]
        if isinstance(base, dict) and isinstance(extra, dict):
            return {**base, **{k: merge(base.get(k, []), {"extend": v}) for k, v in extra.items()}}
        return extra
    if isinstance(override, dict) and set(override) == {"replace"}:
        return override["replace"]
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{k: merge(base.get(k), v) if k in base else v for k, v in override.items()}}
    return override


@lru_cache(maxsize=1)
def _default_data() -> dict[str, Any]:
    data = load_file(DEFAULT)
    assert isinstance(data, dict)
    return data


@lru_cache(maxsize=1)
def default_profile() -> Profile:
    return Profile.model_validate(_default_data())


def load_profile(overrides: dict[str, Any] | None = None, *, where: str = "case.yaml") -> Profile:
    """The default profile with a case's overrides applied; a bad override is a CaseError."""
    if not overrides:
        return default_profile()
    unknown = sorted(set(overrides) - set(_default_data()))
    if unknown:
        raise CaseError(where, f"profile.{unknown[0]}", f"one of {', '.join(sorted(_default_data()))}")
    try:
        return Profile.model_validate(merge(_default_data(), overrides))
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CaseError(where, "profile." + ".".join(str(p) for p in err["loc"]),
                        err["msg"].removeprefix("Value error, ")) from None
