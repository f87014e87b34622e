"""Records with offsets from JSON, JSON lines or YAML (one or several documents).

Many exported files hold many records: a deploy ledger's `entries`, an audit log's `Records`,
a flag audit's `events`, a migration history, a registry's `services`. `records()` finds them —
a top-level list, else the first list of objects under a mapping (preferring the usual names),
else the document itself as one record — each with the offsets of the text that states it and
its values (YAML scalars converted as YAML does).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from state import yamlio
from tools.formats import jsonspan

LIST_KEYS = ("entries", "changes", "deployments", "records", "Records", "items", "events", "history", "migrations",
             "results", "releases", "pushes", "audit", "log", "services", "components", "data")


@dataclass(frozen=True)
class Rec:
    """One record: its offsets in the file and its value; `parent` is the document it sits in."""

    start: int
    end: int
    value: Any
    parent: Any = None


def _doc_spans(text: str) -> list[tuple[int, int]]:
    """Offsets of each YAML document (split on `---` lines)."""
    out, start = [], 0
    for m in re.finditer(r"^---[ \t]*\r?$\n?", text, re.M):
        if text[start:m.start()].strip():
            out.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        out.append((start, len(text)))
    return out


def _pick(value: dict) -> str | None:
    lists = [k for k, v in value.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
    return next((k for k in LIST_KEYS if k in lists), lists[0] if lists else None)


def yaml_documents(text: str) -> list[tuple[int, int, Any, yamlio.Node | None]]:
    """Every YAML document with its offsets, value and offset tree (strict loading; broken ones skipped)."""
    out = []
    for s, e in _doc_spans(text):
        chunk = text[s:e]
        try:
            value = yamlio.loads(chunk)
            node = yamlio.spans(chunk)
        except (ValueError, yaml.YAMLError):
            continue
        if value is not None:
            out.append((s, e, value, node))
    return out


def records(text: str) -> list[Rec]:
    """The records of a file (see the module docstring); empty when it is neither JSON nor YAML."""
    if text.lstrip().startswith(("{", "[")):
        try:
            docs, _bad = jsonspan.parse_document_or_lines(text)
        except (jsonspan.JSONSpanError, RecursionError):
            return []
        out: list[Rec] = []
        for d in docs:
            out += _json_records(d)
        return out
    out = []
    for s, _e, value, node in yaml_documents(text):
        if isinstance(value, list) and node is not None:
            out += [Rec(*_abs(text, s, n), v) for n, v in zip(node.items(), value)]
        elif isinstance(value, dict) and node is not None:
            key = _pick(value)
            if key is not None and (child := node.get(key)) is not None:
                out += [Rec(*_abs(text, s, n), v, value) for n, v in zip(child.items(), value[key])]
            else:
                out.append(Rec(*_abs(text, s, node), value))
    return out


def _abs(text: str, base: int, node: yamlio.Node) -> tuple[int, int]:
    return yamlio.trim(text, base + node.start, base + node.end)


def _json_records(d: jsonspan.J) -> list[Rec]:
    if d.kind == "array":
        return [Rec(i.start, i.end, i.value) for i in d.items]
    if d.kind != "object":
        return []
    value = d.value
    key = _pick(value)
    if key is not None:
        return [Rec(i.start, i.end, i.value, value) for i in d.array(key)]
    return [Rec(d.start, d.end, value)]


def first(value: Any, *keys: str) -> Any:
    """The first present, non-empty value among `keys` (dotted paths reach into nested objects)."""
    if not isinstance(value, dict):
        return None
    for k in keys:
        v: Any = value
        for part in k.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if v not in (None, "", [], {}):
            return v
    return None


def obj(value: Any) -> dict:
    """The value when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def scalar(value: Any, *keys: str) -> Any:
    """As `first`, skipping objects and lists (a field some tools write as `{name: …}` is read by its dotted path)."""
    for k in keys:
        v = first(value, k)
        if v is not None and not isinstance(v, (dict, list)):
            return v
    return None


ENV_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"prod", "production", "prd", "live"}), frozenset({"staging", "stage", "stg", "preprod"}),
    frozenset({"dev", "development"}), frozenset({"test", "testing", "qa", "uat"}))


def same_environment(a: str, b: str) -> bool:
    """`production` and `prod` (and the like) name one environment."""
    a, b = a.strip().lower(), b.strip().lower()
    return a == b or any(a in f and b in f for f in ENV_FAMILIES)


def as_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
