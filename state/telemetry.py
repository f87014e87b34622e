"""Typed values parsed from telemetry and change sources, each with its exact offsets.

Every value keeps `start`/`end`: the characters of the source text it was parsed from, so
a citation of it slices back (`text[start:end]`). Names here are as written in the source
(a pod name, a host); resolving them to entities is the entity registry's job.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from state._base import Frozen
from state.change import ChangeBody, OfService, Revision

Severity = Literal["error", "warning", "info", "debug", "unknown"]
SEVERITY_RANK: dict[str, int] = {"unknown": 0, "debug": 1, "info": 2, "warning": 3, "error": 4}
Role = Literal["latency", "errors", "saturation", "traffic", "availability"]


class Located(Frozen):
    start: int
    end: int


class Unparsed(Located):
    """A line or block the format's parser could not read: kept, never dropped."""

    reason: str


class LogEvent(Located):
    """One log event (a line, or a line and its continuation lines such as a stack trace)."""

    ts: datetime
    severity: Severity
    writer: str | None = None
    """The service the event names as its writer (a field, or the word after the level)."""
    message: str
    fields: dict[str, str] = {}


class SeriesPoint(Located):
    ts: datetime
    value: float
    """May be NaN or ±inf as written; rules skip non-finite values."""


class Series(Located):
    """One metric series (a CSV file, or one labelled result of a Prometheus query)."""

    key: str
    """Stable within the source: the metric and its sorted labels."""
    metric: str
    labels: dict[str, str] = {}
    entity: str | None = None
    """The entity named by the sidecar or the labels, unresolved."""
    environment: str | None = None
    unit: str = ""
    role: Role | None = None
    capacity: float | None = None
    points: tuple[SeriesPoint, ...] = ()


class TraceSpan(Located):
    trace_id: str
    span_id: str
    parent_id: str | None = None
    service: str
    name: str
    kind: Literal["server", "client", "internal", "producer", "consumer", "unknown"] = "unknown"
    start_ts: datetime
    duration_ms: float
    error: bool = False
    attributes: dict[str, str] = {}


class K8sEvent(Located):
    ts: datetime
    type: str
    """`Warning` or `Normal` (a node condition that turned true is a `Warning`)."""
    reason: str
    message: str = ""
    object_kind: str = ""
    object_name: str = ""
    namespace: str = ""
    count: int = 1


class PodPlacement(Located):
    pod: str
    workload: str | None = None
    """The owning workload as the source states it (owner reference), else None."""
    node: str | None = None
    namespace: str = ""
    template_hash: str | None = None


class Change(Revision, ChangeBody, OfService, Located):
    """A change as a source states it: a record, a history entry, a toggle, a rollout revision."""

    @property
    def at(self) -> datetime | None:
        """When the change took effect: its completion, else its start."""
        return self.effective


class ConfigSetting(Located):
    key: str
    value: str


class ConfigSnapshot(Frozen):
    """A service's configuration as one source holds it (flattened to dotted keys)."""

    service: str
    environment: str
    version: str | None = None
    captured_at: datetime | None = None
    settings: tuple[ConfigSetting, ...] = ()

    def value(self, key: str) -> str | None:
        return next((s.value for s in self.settings if s.key == key), None)


def as_text(value: Any) -> str:
    """A config or label value as text (booleans lower-case, as YAML and JSON write them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
