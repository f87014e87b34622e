"""What the graph tool needs from an entity extractor, and how extractors compose.

The graph's entities are exactly the names an analyzer finds in the chunks, so the tool
takes any object with ``names(text)`` and ``kind_of(name)``: the incident extractor
(``tools.entities.EntityExtractor``), the encyclopaedic one
(``tools.textentities.TextEntityExtractor``) or both (``ComposedAnalyzer``). One optional
method refines it, looked up with ``getattr`` so that plain extractors still fit:
``canonical(label)``, the entity a chunk's subject label (its service or title) stands for
(``"Tekezé (river)"`` -> ``tekeze``); default the label itself.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from state import stable_id


@runtime_checkable
class EntityAnalyzer(Protocol):
    """Finds entity names in text; the graph's nodes are exactly these names."""

    def names(self, text: str) -> list[str]:
        """Distinct entity names in ``text``, in order of first mention."""
        ...

    def kind_of(self, name: str) -> str:
        """The kind of a name (``service``, ``config_key``, ``title``...)."""
        ...


def canonical(analyzer: EntityAnalyzer, label: str) -> str:
    """The entity name a subject label (service, title) stands for, or the label itself."""
    fn = getattr(analyzer, "canonical", None)
    return (fn(label) or label) if fn is not None else label


def analyzer_digest(analyzer: EntityAnalyzer) -> str:
    """Identity of an analyzer's vocabulary, for graph freshness checks."""
    fn = getattr(analyzer, "digest", None)
    if fn is not None:
        return str(fn())
    kinds = getattr(analyzer, "kinds", None)
    if kinds is not None:
        return stable_id(sorted(kinds.items()))
    return stable_id(type(analyzer).__qualname__)


class ComposedAnalyzer:
    """Several analyzers as one: names are the union in order, the first one that knows a
    name gives its kind (put the incident extractor first so a service stays a service)."""

    def __init__(self, *parts: EntityAnalyzer) -> None:
        self.parts = parts

    def names(self, text: str) -> list[str]:
        return list(dict.fromkeys(n for p in self.parts for n in p.names(text)))

    def canonical(self, label: str) -> str | None:
        for p in self.parts:
            fn = getattr(p, "canonical", None)
            found = fn(label) if fn is not None else None
            if found:
                return found
        return None

    def kind_of(self, name: str) -> str:
        for p in self.parts:
            kinds = getattr(p, "kinds", None)
            if kinds is not None and name in kinds:
                return kinds[name]
        return self.parts[0].kind_of(name) if self.parts else "identifier"

    def digest(self) -> str:
        return stable_id([analyzer_digest(p) for p in self.parts])
