"""One change, as every account of it states it: the fields declared once, composed three times.

A change is read three ways: `sources.ChangeRecord` (a change file as written, validated),
`telemetry.Change` (any change source as parsed, with its offsets) and `facts.ChangeFact` (what
the rules use, the service resolved to an entity). Each is its head (`id`, `type`), a subject
(`OfService` or `OfEntity`), the `ChangeBody` and, for the two read from histories, a `Revision`.

Field order is part of the stored form (run stores, the corpus fingerprint), so it stays what it
was: pydantic orders fields by the reversed MRO, so a model lists its parts last-first
(`class Change(Revision, ChangeBody, OfService, Located)` is start, end, id, type, service, body,
revision). `restated` turns one account into another, carrying every field both have.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from pydantic import ConfigDict, Field, field_validator

from state._base import Frozen

__all__ = ["ChangeBody", "ChangeHead", "ConfigChange", "DependencyChange", "FlagChange", "OfEntity", "OfService",
           "Revision", "restated", "text_or_none"]


def text_or_none(value: object) -> object:
    """A YAML scalar as text (`1.10` read as a number is `"1.1"`, as before); None stays None."""
    return None if value is None else str(value)


class ConfigChange(Frozen):
    model_config = ConfigDict(populate_by_name=True)
    key: str
    from_: Any = Field(default=None, alias="from")
    to: Any = None


class DependencyChange(Frozen):
    model_config = ConfigDict(populate_by_name=True)
    name: str
    from_: str | None = Field(default=None, alias="from")
    to: str

    @field_validator("from_", "to", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        return text_or_none(value)


class FlagChange(Frozen):
    model_config = ConfigDict(populate_by_name=True)
    name: str
    from_: Any = Field(default=None, alias="from")
    to: Any = None


class ChangeHead(Frozen):
    """Which change: its id and its type."""

    id: str
    type: str
    """As written in a record or a source; a fact's is normalised through the profile's `change_types`:
    deployment, config_push, feature_flag, certificate, dns, rollback, infrastructure, or as written."""


class OfService(ChangeHead):
    """A change of a service, named as the source names it."""

    service: str


class OfEntity(ChangeHead):
    """A change of an entity (the service resolved by the entity registry)."""

    entity: str


class ChangeBody(ChangeHead):
    """What a change did, where and when: the same in a record, a parsed source and a fact."""

    target: str | None = None
    targets: tuple[str, ...] = ()
    """Every entity the change was applied to, when it went to several (a push to a fleet or a
    target group: the service names the group, `targets` its members)."""
    environment: str
    started_at: datetime | None = None
    completed_at: datetime | None = None
    version_from: str | None = None
    version_to: str | None = None
    summary: str = ""
    config_changes: tuple[ConfigChange, ...] = ()
    dependency_changes: tuple[DependencyChange, ...] = ()
    flag: FlagChange | None = None
    rollback_of: str | None = None

    @property
    def effective(self) -> datetime | None:
        """When the change took effect: its completion, else its start."""
        return self.completed_at or self.started_at


class Revision(Frozen):
    """The revision a history (Helm, Argo CD, `kubectl rollout history`) gives a change."""

    revision: str | None = None
    template_hash: str | None = None
    """A Kubernetes pod-template hash: dates a rollout revision from ScalingReplicaSet events."""


M = TypeVar("M", bound=ChangeHead)


def restated(change: ChangeHead, as_: type[M], **fields: Any) -> M:
    """`change` as another account of it: every field both models have (the values themselves, not
    copies), then `fields` (the subject, offsets, a resolved name). Validated as `as_`."""
    both = as_.model_fields.keys() & type(change).model_fields.keys()
    return as_(**{name: getattr(change, name) for name in both} | fields)
