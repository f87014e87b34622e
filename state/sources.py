"""The source manifest and the structured records sources hold.

`sources.yaml` is the one place access is declared. The record models validate the
structured kinds (change, metric sidecar, config, mapping, ownership, catalog) and the
front matter of prose sources.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from state._base import AwareDatetime, Frozen

SourceKind = Literal[
    "runbook", "postmortem", "doc", "note", "change", "metric", "log",
    "config", "mapping", "ownership", "catalog",
]
PROSE_KINDS: frozenset[str] = frozenset({"runbook", "postmortem", "doc", "note"})
RECORD_KINDS: frozenset[str] = frozenset({"change", "config", "mapping", "ownership", "catalog"})
DocStatus = Literal["current", "historical", "retired", "superseded"]
ANY = "*"


class SourceEntry(Frozen):
    """One source as declared in the manifest."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]*$")
    path: str
    kind: SourceKind
    environment: str = ANY
    """Environment the source is about; `*` for every environment."""
    service: str = ANY
    groups: tuple[str, ...] = Field(min_length=1)
    """Groups allowed to read it; a principal reads it when it shares one."""
    trust: Literal["verified", "untrusted"] = "verified"


class Manifest(Frozen):
    format: Literal["investigator/sources@1"]
    sources: tuple[SourceEntry, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "Manifest":
        seen: set[str] = set()
        for s in self.sources:
            if s.id in seen:
                raise ValueError(f"source id {s.id!r} is declared twice")
            seen.add(s.id)
        return self


class FrontMatter(Frozen):
    """Front matter of a prose source (runbook, postmortem, doc, note)."""

    model_config = Frozen.model_config | {"extra": "allow"}
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


class ConfigChange(Frozen):
    key: str
    from_: Any = Field(default=None, alias="from")
    to: Any = None


class DependencyChange(Frozen):
    name: str
    from_: str | None = Field(default=None, alias="from")
    to: str


class ChangeRecord(Frozen):
    model_config = Frozen.model_config | {"extra": "allow", "populate_by_name": True}
    id: str
    type: str
    service: str
    environment: str
    started_at: AwareDatetime
    completed_at: AwareDatetime | None = None
    version_from: str | None = None
    version_to: str | None = None
    summary: str = ""
    config_changes: tuple[ConfigChange, ...] = ()
    dependency_changes: tuple[DependencyChange, ...] = ()


class MetricMeta(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    metric: str
    service: str
    environment: str
    unit: str = ""
    resolution: str = ""
    groups: tuple[str, ...] | None = None


class ServiceConfig(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    service: str
    environment: str
    version: str | None = None
    settings: dict[str, Any] = {}


class DocMapping(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    doc_id: str
    version: str
    applies_to: tuple[str, ...]


class DeploymentMapping(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    service: str
    environment: str
    deployed_version: str
    documents: tuple[DocMapping, ...] = ()


class Verification(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    doc_id: str
    version: str
    verified_by: str
    verified_at: AwareDatetime
    for_versions: tuple[str, ...] = ()


class OwnershipRecord(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    service: str
    owner: str
    verifications: tuple[Verification, ...] = ()


class CatalogService(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    name: str
    environment: str = ANY
    owner: str = ""
    depends_on: tuple[str, ...] = ()


class CatalogComponent(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    name: str
    kind: str = "component"


class Catalog(Frozen):
    model_config = Frozen.model_config | {"extra": "allow"}
    services: tuple[CatalogService, ...] = ()
    components: tuple[CatalogComponent, ...] = ()


RECORD_MODELS: dict[str, type[Frozen]] = {
    "change": ChangeRecord,
    "config": ServiceConfig,
    "mapping": DeploymentMapping,
    "ownership": OwnershipRecord,
    "catalog": Catalog,
}
