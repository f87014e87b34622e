"""YAML in and out: strict loading (duplicate keys are errors) and node offsets for citations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster


class DuplicateKey(ValueError):
    def __init__(self, key: object, line: int) -> None:
        self.key, self.line = key, line
        super().__init__(f"duplicate key {key!r} (line {line})")


class StrictLoader(_BASE):  # type: ignore[misc,valid-type]
    """Safe loading that refuses a mapping with the same key twice (a silent override hides typos)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hashable = key in seen
            except TypeError:
                continue
            if hashable:
                raise DuplicateKey(key, key_node.start_mark.line + 1)
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, StrictLoader.construct_mapping)


def loads(text: str) -> object:
    """Parse YAML text strictly; raises yaml.YAMLError or DuplicateKey."""
    return yaml.load(text, Loader=StrictLoader)


def load_file(path: Path) -> object:
    return loads(Path(path).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Node:
    """A YAML node with its character offsets in the text it was parsed from."""

    value: object
    start: int
    end: int
    children: "dict[str, Node] | list[Node] | None" = None

    def get(self, key: str) -> "Node | None":
        return self.children.get(key) if isinstance(self.children, dict) else None

    def items(self) -> "list[Node]":
        return self.children if isinstance(self.children, list) else []


def _walk(node: yaml.Node) -> Node:
    start, end = node.start_mark.index, node.end_mark.index
    if isinstance(node, yaml.MappingNode):
        kids: dict[str, Node] = {}
        for k, v in node.value:
            child = _walk(v)
            # a mapping entry's span runs from its key to the end of its value
            kids[str(k.value)] = Node(child.value, k.start_mark.index, child.end, child.children)
        return Node({k: c.value for k, c in kids.items()}, start, end, kids)
    if isinstance(node, yaml.SequenceNode):
        items = [_walk(v) for v in node.value]
        return Node([i.value for i in items], start, end, items)
    return Node(node.value, start, end, None)


def spans(text: str) -> Node | None:
    """The document's node tree with offsets (scalar values as written, unconverted)."""
    root = yaml.compose(text, Loader=_BASE)
    return _walk(root) if root is not None else None


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Offsets narrowed to drop surrounding whitespace and trailing commas/newlines."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] == ","):
        end -= 1
    return start, end
