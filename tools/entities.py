"""Deterministic entity extraction for incident corpora.

A gazetteer built from the structured sources (the catalog's services and components,
metric names from metric sidecars, config keys from configs and change records) plus two
patterns for identifiers written in prose: snake_case names (config keys, metrics) and
dotted keys. No model, no download: the same text always yields the same mentions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from state.evidence import Mention
from state.sources import (
    RECORD_MODELS, Catalog, CatalogComponent, CatalogService, ChangeRecord, ConfigChange, DependencyChange,
    DeploymentMapping, DocMapping, FrontMatter, MetricMeta, OwnershipRecord, ServiceConfig, Verification,
)
from tools.corpus import SourceDoc

_CODE = re.compile(r"`([^`\n]+)`")
_SNAKE = re.compile(r"(?<![A-Za-z0-9_-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![A-Za-z0-9_-])")
_KIND_ORDER = {"service": 0, "component": 1, "metric": 2, "config_key": 3}


def _format_fields() -> frozenset[str]:
    """Field names of the case format itself (`started_at`, `config_changes`…): never entities."""
    names: set[str] = set()
    for model in (*RECORD_MODELS.values(), ConfigChange, DependencyChange, DocMapping, Verification,
                  CatalogService, CatalogComponent, FrontMatter, MetricMeta):
        for name, info in model.model_fields.items():
            names.add(info.alias or name)
    return frozenset(names)


FORMAT_FIELDS = _format_fields()


def _key_tail(key: str) -> str:
    return key.rsplit(".", 1)[-1]


class EntityExtractor:
    """Finds entity mentions; `kinds` maps a known name to its kind."""

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = dict(sorted(kinds.items()))
        names = sorted(self.kinds, key=lambda n: (-len(n), n))
        self._known = (
            re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(re.escape(n) for n in names) + r")(?![A-Za-z0-9_-])")
            if names else None
        )

    @classmethod
    def from_sources(cls, docs: Iterable[SourceDoc]) -> "EntityExtractor":
        kinds: dict[str, str] = {}

        declared: dict[str, str] = {}

        def put(name: str, kind: str) -> None:
            name = name.strip()
            if not name or name == "*" or (kind == "config_key" and "_" not in name):
                return  # a one-word key ("host", "port") would match ordinary prose
            old = kinds.get(name)
            if old is None or _KIND_ORDER.get(kind, 9) < _KIND_ORDER.get(old, 9):
                kinds[name] = kind

        for doc in docs:
            if doc.entry.service != "*":
                put(doc.entry.service, "service")
            rec = doc.record
            if isinstance(rec, Catalog):
                for s in rec.services:
                    put(s.name, "service")
                    for dep in s.depends_on:
                        put(dep, "service" if any(x.name == dep for x in rec.services) else "component")
                for c in rec.components:
                    declared[c.name] = "component"
            elif isinstance(rec, ServiceConfig):
                put(rec.service, "service")
                for key in rec.settings:
                    put(_key_tail(key), "config_key")
            elif isinstance(rec, ChangeRecord):
                put(rec.service, "service")
                for cc in rec.config_changes:
                    put(_key_tail(cc.key), "config_key")
                for dc in rec.dependency_changes:
                    put(dc.name, "component")
            elif isinstance(rec, (DeploymentMapping, OwnershipRecord)):
                put(rec.service, "service")
            if doc.meta is not None:
                put(doc.meta.metric, "metric")
                put(doc.meta.service, "service")
        kinds.update(declared)  # the catalog says what a name is, whatever else mentions it
        return cls(kinds)

    def kind_of(self, name: str, in_code: bool = False) -> str:
        """Known names keep their kind; an unknown snake_case name is a config key only when
        written as code (`like_this`), otherwise a plain identifier (a log field, say)."""
        return self.kinds.get(name, "config_key" if in_code else "identifier")

    def mentions(self, text: str, offset: int = 0) -> list[Mention]:
        """Every entity mention in `text`, with offsets shifted by `offset`."""
        found: dict[tuple[int, int], Mention] = {}
        if self._known is not None:
            for m in self._known.finditer(text):
                found[(m.start(1), m.end(1))] = Mention(
                    name=m.group(1), kind=self.kinds[m.group(1)], start=offset + m.start(1), end=offset + m.end(1))
        code = [(c.start(1), c.end(1)) for c in _CODE.finditer(text)]
        for m in _SNAKE.finditer(text):
            key = (m.start(1), m.end(1))
            if m.group(1) in FORMAT_FIELDS:
                continue
            if key not in found and not any(s <= key[0] < e for s, e in found):
                in_code = any(s <= key[0] and key[1] <= e for s, e in code)
                found[key] = Mention(name=m.group(1), kind=self.kind_of(m.group(1), in_code),
                                     start=offset + m.start(1), end=offset + m.end(1))
        return sorted(found.values(), key=lambda x: (x.start, x.end))

    def names(self, text: str) -> list[str]:
        """Distinct entity names in order of first mention."""
        seen: dict[str, None] = {}
        for m in self.mentions(text):
            seen.setdefault(m.name, None)
        return list(seen)
