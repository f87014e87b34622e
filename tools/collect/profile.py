"""The collection profile: PromQL templates, git path templates and limits (`default.yaml` here).

`collect --profile FILE` replaces it (the same keys; a missing key keeps the default). A bad
file is a ConfigError naming the file, the field and what was expected.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, field_validator

from state import Frozen, parse_duration, yamlio
from state.errors import ConfigError

DEFAULT = Path(__file__).with_name("default.yaml")
Role = Literal["latency", "errors", "saturation", "traffic", "availability"]


class QueryTemplate(Frozen):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The metric name the series get (the sidecar's `metric`)."""
    role: Role
    unit: str = ""
    expr: str = Field(min_length=1)
    """PromQL with {service}, {environment} and {rate} placeholders."""


class AlertRole(Frozen):
    pattern: str
    role: Role
    unit: str = ""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        re.compile(value)
        return value


class PrometheusProfile(Frozen):
    step: str = "30s"
    rate: str = "5m"
    timeout: str = "10s"
    attempts: int = Field(default=3, ge=1, le=10)
    before: str = "45m"
    queries: tuple[QueryTemplate, ...] = ()
    alert_roles: tuple[AlertRole, ...] = ()

    @field_validator("step", "rate", "timeout", "before")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)
        return value


class GitProfile(Frozen):
    lookback: str = "60m"
    paths: tuple[str, ...] = Field(min_length=1)
    config_files: str = "*.yaml *.yml *.json"
    related_depth: int = Field(default=2, ge=0, le=6)
    max_diff_bytes: int = Field(default=20000, ge=0)

    @field_validator("paths")
    @classmethod
    def _names_service(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for p in value:
            if "{service}" not in p:
                raise ValueError(f"each path names {{service}} (got {p!r})")
        return value


class KubernetesProfile(Frozen):
    timeout: str = "20s"


class CollectProfile(Frozen):
    prometheus: PrometheusProfile
    git: GitProfile
    kubernetes: KubernetesProfile = KubernetesProfile()


@lru_cache(maxsize=1)
def _default_data() -> dict:
    data = yamlio.load_file(DEFAULT)
    assert isinstance(data, dict)
    return data


def load_collect_profile(path: Path | None = None) -> CollectProfile:
    """The default profile, or FILE's keys over it (a section given replaces that section's keys)."""
    data = {k: dict(v) for k, v in _default_data().items()}
    where = str(path) if path else str(DEFAULT)
    if path is not None:
        try:
            given = yamlio.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ConfigError(f"{where}: a readable YAML collection profile ({type(exc).__name__})") from None
        if not isinstance(given, dict):
            raise ConfigError(f"{where}: <document>: a mapping with prometheus, git, kubernetes")
        for section, keys in given.items():
            if section not in data or not isinstance(keys, dict):
                raise ConfigError(f"{where}: {section}: one of prometheus, git, kubernetes (a mapping)")
            data[section].update(keys)
    try:
        return CollectProfile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{where}: {field}: {err['msg'].removeprefix('Value error, ')}") from None
