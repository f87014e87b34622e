"""JSON with offsets: every value keeps the characters it was parsed from.

The standard library's parser drops positions; citations into JSON telemetry (a span, a
pod, a Prometheus point) need them. `parse(text)` returns a `J` tree; `J.value` is the
plain Python value. Strict JSON (RFC 8259) plus NaN/Infinity as Python's parser accepts them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_LITERALS = {"true": True, "false": False, "null": None, "NaN": float("nan"),
             "Infinity": float("inf"), "-Infinity": float("-inf")}


class JSONSpanError(ValueError):
    def __init__(self, msg: str, pos: int) -> None:
        self.pos = pos
        super().__init__(f"{msg} at offset {pos}")


@dataclass
class J:
    """A JSON value and its offsets; objects and arrays hold child `J`s."""

    kind: str  # object | array | string | number | literal
    start: int
    end: int
    raw: Any = None
    items: list["J"] = field(default_factory=list)
    keys: dict[str, "J"] = field(default_factory=dict)

    @property
    def value(self) -> Any:
        if self.kind == "object":
            return {k: v.value for k, v in self.keys.items()}
        if self.kind == "array":
            return [v.value for v in self.items]
        return self.raw

    def get(self, key: str) -> "J | None":
        return self.keys.get(key) if self.kind == "object" else None

    def path(self, *keys: str | int) -> "J | None":
        node: J | None = self
        for k in keys:
            if node is None:
                return None
            if isinstance(k, int):
                node = node.items[k] if node.kind == "array" and -len(node.items) <= k < len(node.items) else None
            else:
                node = node.get(k)
        return node

    def array(self, key: str) -> list["J"]:
        node = self.get(key)
        return node.items if node is not None and node.kind == "array" else []


class _Parser:
    def __init__(self, text: str) -> None:
        self.t = text
        self.n = len(text)

    def ws(self, i: int) -> int:
        return _WS.match(self.t, i).end()

    def value(self, i: int, depth: int = 0) -> J:
        if depth > 200:
            raise JSONSpanError("nesting deeper than 200", i)
        i = self.ws(i)
        if i >= self.n:
            raise JSONSpanError("unexpected end", i)
        c = self.t[i]
        if c == "{":
            return self.obj(i, depth)
        if c == "[":
            return self.arr(i, depth)
        if c == '"':
            m = _STRING.match(self.t, i)
            if not m:
                raise JSONSpanError("bad string", i)
            return J("string", i, m.end(), json.loads(m.group(0)))
        m = _NUMBER.match(self.t, i)
        if m and m.end() > i:
            s = m.group(0)
            if len(s) > 400:  # Python refuses ints of over 4,300 digits; no telemetry value has 400
                raise JSONSpanError("a number of at most 400 characters", i)
            return J("number", i, m.end(), float(s) if any(x in s for x in ".eE") else int(s))
        for lit, val in _LITERALS.items():
            if self.t.startswith(lit, i):
                return J("literal", i, i + len(lit), val)
        raise JSONSpanError("unexpected character", i)  # never quoted: the text may be unreadable to the principal

    def obj(self, i: int, depth: int) -> J:
        node = J("object", i, i)
        i = self.ws(i + 1)
        if i < self.n and self.t[i] == "}":
            node.end = i + 1
            return node
        while True:
            i = self.ws(i)
            m = _STRING.match(self.t, i)
            if not m:
                raise JSONSpanError("expected a key", i)
            key = json.loads(m.group(0))
            i = self.ws(m.end())
            if i >= self.n or self.t[i] != ":":
                raise JSONSpanError("expected ':'", i)
            child = self.value(i + 1, depth + 1)
            node.keys[key] = child
            i = self.ws(child.end)
            if i < self.n and self.t[i] == ",":
                i += 1
                continue
            if i < self.n and self.t[i] == "}":
                node.end = i + 1
                return node
            raise JSONSpanError("expected ',' or '}'", i)

    def arr(self, i: int, depth: int) -> J:
        node = J("array", i, i)
        i = self.ws(i + 1)
        if i < self.n and self.t[i] == "]":
            node.end = i + 1
            return node
        while True:
            child = self.value(i, depth + 1)
            node.items.append(child)
            i = self.ws(child.end)
            if i < self.n and self.t[i] == ",":
                i += 1
                continue
            if i < self.n and self.t[i] == "]":
                node.end = i + 1
                return node
            raise JSONSpanError("expected ',' or ']'", i)


def parse(text: str, start: int = 0, end: int | None = None) -> J:
    """Parse one JSON value from text[start:end] (offsets stay those of the whole text)."""
    p = _Parser(text if end is None else text[:end])
    node = p.value(start)
    rest = p.ws(node.end)
    if rest != p.n:
        raise JSONSpanError("extra data after the value", rest)
    return node


def physical_lines(text: str) -> list[str]:
    """The lines of a file with their ends, split at `\n` only.

    `str.splitlines` also breaks at U+2028/U+2029, NEL and form feeds, which JSON strings
    (JSON.stringify leaves U+2028 unescaped) and log messages may hold: they are not line
    breaks of the file."""
    out = text.split("\n")
    lines = [ln + "\n" for ln in out[:-1]]
    if out[-1]:
        lines.append(out[-1])
    return lines


def parse_lines(text: str) -> tuple[list[J], list[tuple[int, int, str]]]:
    """JSON lines: (values, unparsed (start, end, reason)) — a bad line is kept, not dropped."""
    values, bad = [], []
    pos = 0
    for raw in physical_lines(text):
        line_end = pos + len(raw.rstrip("\r\n"))
        if text[pos:line_end].strip():
            try:
                values.append(parse(text, pos, line_end))
            except JSONSpanError as exc:
                bad.append((pos, line_end, f"not JSON ({exc})"))
        pos += len(raw)
    return values, bad


def parse_document_or_lines(text: str) -> tuple[list[J], list[tuple[int, int, str]]]:
    """One JSON document, or JSON lines when the whole text is not one value."""
    try:
        return [parse(text)], []
    except JSONSpanError:
        return parse_lines(text)
