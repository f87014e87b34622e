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


MAX_ALIAS_VALUES = 100_000
"""How many values aliases may repeat in one document: `*a` re-uses a subtree, and a few lines
of nested aliases (a "billion laughs") would otherwise expand to billions of values."""
MAX_DEPTH = 200
"""How deeply collections may nest (the same bound as the JSON parser's)."""


class TooComplex(yaml.YAMLError):
    """A document whose aliases expand too far, refer to themselves, or that nests too deeply."""

    def __init__(self, problem: str, line: int) -> None:
        self.problem, self.line = problem, line
        super().__init__(f"{problem} (line {line})")


def check_node(root: yaml.Node | None) -> None:
    """Refuse a composed document whose aliases repeat more than MAX_ALIAS_VALUES values, that
    contains itself through an alias, or that nests deeper than MAX_DEPTH. Linear in the distinct
    nodes (each subtree's expanded size is computed once)."""
    if root is None:
        return
    size: dict[int, int] = {}
    distinct = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    open_: set[int] = set()
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            if size[key] - distinct > MAX_ALIAS_VALUES:
                raise TooComplex(f"aliases that repeat at most {MAX_ALIAS_VALUES} values", node.start_mark.line + 1)
            continue
        if key in open_:
            raise TooComplex("no alias inside the value it names (a recursive document)", node.start_mark.line + 1)
        if key in size:
            continue
        if depth > MAX_DEPTH:
            raise TooComplex(f"collections nested at most {MAX_DEPTH} deep", node.start_mark.line + 1)
        distinct += 1
        open_.add(key)
        stack.append((node, depth, True))
        stack.extend((k, depth + 1, False) for k in _children(node))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


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

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:  # PyYAML's signature
        """A scalar the YAML resolver accepts but Python cannot build (`2026-13-45`, an int of
        5,000 digits) is a YAML error at its line, not a ValueError from deep inside PyYAML."""
        try:
            return super().construct_object(node, deep=deep)
        except (DuplicateKey, yaml.YAMLError):
            raise
        except (ValueError, OverflowError, TypeError):
            kind = node.tag.rsplit(":", 1)[-1] if node.tag.startswith("tag:yaml.org,2002:") else "value"
            raise yaml.constructor.ConstructorError(None, None, f"a valid {kind}", node.start_mark) from None


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, StrictLoader.construct_mapping)


def loads(text: str) -> object:
    """Parse one YAML document strictly; raises yaml.YAMLError (TooComplex among them) or DuplicateKey."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        check_node(node)
        return loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


def loads_all(text: str) -> list[object]:
    """Every document of a YAML stream, each parsed as strictly as `loads`."""
    loader = StrictLoader(text)
    out = []
    try:
        while loader.check_node():
            node = loader.get_node()
            check_node(node)
            out.append(loader.construct_document(node))
    finally:
        loader.dispose()
    return out


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
    """The offset tree of a composed node, refused (TooComplex) when its aliases expand too far."""
    check_node(node)
    return _tree(node)


def _tree(node: yaml.Node) -> Node:
    start, end = node.start_mark.index, node.end_mark.index
    if isinstance(node, yaml.MappingNode):
        kids: dict[str, Node] = {}
        for k, v in node.value:
            child = _tree(v)
            # a mapping entry's span runs from its key to the end of its value
            kids[str(k.value)] = Node(child.value, k.start_mark.index, child.end, child.children)
        return Node({k: c.value for k, c in kids.items()}, start, end, kids)
    if isinstance(node, yaml.SequenceNode):
        items = [_tree(v) for v in node.value]
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
