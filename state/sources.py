"""The source manifest and the structured records sources hold.

`sources.yaml` is the one place access is declared. The record models validate the
structured kinds (change, config, mapping, ownership, catalog, metric sidecar) and the
front matter of prose sources. Telemetry (logs, traces, metrics, Kubernetes output) is
parsed into the values of `state.telemetry`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from state._base import AwareDatetime, Frozen, Number
from state.change import ChangeBody, OfService, text_or_none

SourceKind = Literal[
    "runbook", "postmortem", "doc", "note", "change", "metric", "log", "trace", "kubernetes",
    "config", "mapping", "ownership", "catalog",
]
PROSE_KINDS: frozenset[str] = frozenset({"runbook", "postmortem", "doc", "note"})
RECORD_KINDS: frozenset[str] = frozenset({"change", "config", "mapping", "ownership", "catalog"})
TELEMETRY_KINDS: frozenset[str] = frozenset({"log", "trace", "metric", "kubernetes"})
FORMATS: dict[str, tuple[str, ...]] = {
    "runbook": ("markdown",), "postmortem": ("markdown",), "doc": ("markdown",), "note": ("markdown", "chat"),
    "log": ("plain", "logfmt", "json", "syslog"),
    "trace": ("otlp", "jaeger"),
    "metric": ("csv", "prometheus", "cloudwatch", "datadog"),
    "kubernetes": ("events", "pods", "pods-wide", "describe"),
    "change": ("record", "helm", "argocd", "rollout", "flags", "ledger", "ecs", "cloudtrail", "route53", "certificates",
               "migrations", "spinnaker"),
    "config": ("record", "yaml", "json", "env", "properties", "configmap"),
    "mapping": ("record",), "ownership": ("record",), "catalog": ("record", "backstage", "registry"),
}
"""Formats each kind accepts; `auto` (the default) detects one from the content."""
DocStatus = Literal["current", "historical", "retired", "superseded"]
ANY = "*"


class SourceEntry(Frozen):
    """One source as declared in the manifest."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
    path: str
    kind: SourceKind
    format: str = "auto"
    environment: str = ANY
    """Environment the source is about; `*` for every environment."""
    service: str = ANY
    """The entity the source is about; for a log, the writer of lines that do not name one."""
    groups: tuple[str, ...] = Field(min_length=1)
    """Groups allowed to read it; a principal reads it when it shares one."""
    trust: Literal["verified", "untrusted"] = "verified"
    timezone: str | None = Field(default=None, pattern=r"^(Z|[+-]\d{2}:\d{2})$")
    """Zone for timestamps written without one (`+08:00`, `Z`)."""
    captured_at: AwareDatetime | None = None
    """When the file was taken: `kubectl describe` ages, config snapshots."""
    version: str | None = None
    """The deployed version or revision a config snapshot belongs to."""

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        parts = value.replace("\\", "/").split("/")
        if value.startswith(("/", "~")) or ".." in parts or not value.strip() or ":" in parts[0]:
            raise ValueError("a relative path inside the case folder (no '..', not absolute)")
        if any(ord(c) < 32 or c == "\x7f" for c in value):
            raise ValueError("a path without control characters")
        if len(value) > 1024 or any(len(p.encode("utf-8")) > 255 for p in parts):
            raise ValueError("a path of at most 1024 characters, 255 bytes a component")
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _text(cls, value: object) -> object:
        return None if value is None else str(value)

    @field_validator("timezone")
    @classmethod
    def _offset(cls, value: str | None) -> str | None:
        if value not in (None, "Z") and (int(value[1:3]) > 23 or int(value[4:6]) > 59):
            raise ValueError("an offset from -23:59 to +23:59, e.g. +08:00, or Z")
        return value

    @model_validator(mode="after")
    def _format(self) -> "SourceEntry":
        allowed = FORMATS[self.kind]
        if self.format != "auto" and self.format not in allowed:
            raise ValueError(f"format of a {self.kind} source: one of auto, {', '.join(allowed)}")
        return self


class Manifest(Frozen):
    format: Literal["investigator/sources@1"]
    sources: tuple[SourceEntry, ...] = Field(min_length=1)

    @field_validator("sources")
    @classmethod
    def _unique(cls, sources: tuple[SourceEntry, ...]) -> tuple[SourceEntry, ...]:
        seen: set[str] = set()
        paths: set[str] = set()
        for s in sources:
            if s.id in seen:
                raise ValueError(f"each source id once (got {s.id!r} twice)")
            path = posixpath.normpath(s.path.replace("\\", "/"))  # `./a.md` and `a.md` are one file
            if path in paths:
                raise ValueError(f"each source path once (got {s.path!r} twice)")
            seen.add(s.id)
            paths.add(path)
        return sources


class FrontMatter(Frozen):
    """Front matter of a prose source (runbook, postmortem, doc, note)."""

    model_config = ConfigDict(extra="allow")
    doc_id: str
    title: str
    version: str
    service: str = ANY
    environment: str = ANY
    owner: str = ""
    updated_at: AwareDatetime
    status: DocStatus = "current"
    supersedes: str | None = None
    applies_to_versions: tuple[str, ...] = ()
    groups: tuple[str, ...] | None = None
    language: str | None = None

    @field_validator("version", "supersedes", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return text_or_none(value)

    @field_validator("applies_to_versions", mode="before")
    @classmethod
    def _versions(cls, value: object) -> object:
        if isinstance(value, str):
            return version_globs(value)
        return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else value


def version_globs(text: str) -> tuple[str, ...]:
    """Versions written as one string, as globs: `7.x (note)` → `7.*`; a lower bound `>=8.2.0` →
    `8.2.*` … `8.40.*`, `9.*` … `28.*` (the next 20 majors); a list `1.x, 2.x` → each; else as is."""
    out: list[str] = []
    for part in re.split(r"\s*[,;|]\s*|\s+or\s+", text.strip()):
        part = re.sub(r"\s*\(.*?\)\s*$", "", part).strip()
        if m := re.fullmatch(r">=?\s*v?(\d+)(?:\.(\d+))?(?:\.\d+)?", part):
            major, minor = int(m.group(1)), int(m.group(2) or 0)
            first = [f"{major}.{n}.*" for n in range(minor, minor + 40)] if minor else [f"{major}.*"]
            out += first + [f"{n}.*" for n in range(major + 1, major + 21)]
        elif part:
            out.append(re.sub(r"(?<=\.)[xX](?=$|\.)", "*", part))
    return tuple(out)


class ChangeRecord(ChangeBody, OfService):
    """A change file (`format: record`) as written: times must carry their zone, a start is required."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    started_at: AwareDatetime
    completed_at: AwareDatetime | None = None

    @field_validator("version_from", "version_to", "id", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return text_or_none(value)

    @field_validator("targets", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _times(self) -> "ChangeRecord":
        if self.completed_at is not None and self.completed_at < self.started_at:
            raise ValueError("completed_at must not be before started_at")
        return self


class MetricMeta(Frozen):
    model_config = ConfigDict(extra="allow")
    metric: str | None = None
    service: str | None = None
    environment: str | None = None
    unit: str = ""
    role: Literal["latency", "errors", "saturation", "traffic", "availability"] | None = None
    capacity: Number | None = Field(default=None, gt=0)
    resolution: str = ""
    groups: tuple[str, ...] | None = None


class ServiceConfig(Frozen):
    model_config = ConfigDict(extra="allow")
    service: str
    environment: str
    version: str | None = None
    settings: dict[str, Any] = {}

    @field_validator("version", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return text_or_none(value)


class DocMapping(Frozen):
    model_config = ConfigDict(extra="allow")
    doc_id: str
    version: str
    applies_to: tuple[str, ...]

    @field_validator("version", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return text_or_none(value)


class DeploymentMapping(Frozen):
    model_config = ConfigDict(extra="allow")
    service: str
    environment: str
    deployed_version: str
    documents: tuple[DocMapping, ...] = ()

    @field_validator("deployed_version", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return text_or_none(value)


class Verification(Frozen):
    model_config = ConfigDict(extra="allow")
    doc_id: str
    version: str
    verified_by: str
    verified_at: AwareDatetime
    for_versions: tuple[str, ...] = ()

    @field_validator("version", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return text_or_none(value)


class OwnershipRecord(Frozen):
    model_config = ConfigDict(extra="allow")
    service: str
    owner: str = ""
    verifications: tuple[Verification, ...] = ()


EntityKind = Literal["service", "database", "cache", "queue", "cluster", "node", "host", "external", "component"]


class CatalogService(Frozen):
    model_config = ConfigDict(extra="allow")
    name: str
    kind: EntityKind = "service"
    environment: str = ANY
    owner: str = ""
    aliases: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    runs_on: tuple[str, ...] = ()


class CatalogComponent(Frozen):
    model_config = ConfigDict(extra="allow")
    name: str
    kind: str = "component"
    owner: str = ""
    talks_to: tuple[str, ...] = ()


class Catalog(Frozen):
    model_config = ConfigDict(extra="allow")
    services: tuple[CatalogService, ...] = ()
    components: tuple[CatalogComponent, ...] = ()


RECORD_MODELS: dict[str, type[Frozen]] = {
    "change": ChangeRecord,
    "config": ServiceConfig,
    "mapping": DeploymentMapping,
    "ownership": OwnershipRecord,
    "catalog": Catalog,
}
