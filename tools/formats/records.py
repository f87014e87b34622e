"""Records with offsets from JSON, JSON lines or YAML (one or several documents).

Many exported files hold many records: a deploy ledger's `entries`, an audit log's `Records`,
a flag audit's `events`, a migration history, a registry's `services`. `records()` finds them —
a top-level list, else the first list of objects under a mapping (preferring the usual names),
else the document itself as one record — each with the offsets of the text that states it and
its values (YAML scalars converted as YAML does). `records()` guesses (detection uses it) and never
raises; `read_records()` reads a file the user named a format for, and refuses what `records()` would
read as nothing: a syntax error, a container of another shape, a document with no records in it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from state import yamlio
from tools.formats import jsonspan
from tools.formats.shape import ContentError, bad_json, listed

LIST_KEYS = ("entries", "changes", "deployments", "records", "Records", "items", "events", "history", "migrations",
             "results", "releases", "pushes", "audit", "log", "services", "components", "data")


@dataclass(frozen=True)
class Rec:
    """One record: its offsets in the file and its value; `parent` is the document it sits in."""

    start: int
    end: int
    value: Any
    parent: Any = None
    where: str = "<document>"
    """Its JSON path in the document (`entries[3]`, `[0]`), for a message that names it."""


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
    """The first present, non-empty value among `keys` (dotted paths reach into nested objects).

    Names as written win; when none is present, a name is matched whatever its case: a result set
    exported from a database comes with the column names the database folded (PostgreSQL writes
    `dateexecuted` for `DATEEXECUTED`, Oracle the reverse), a spreadsheet with `Service` headings."""
    if not isinstance(value, dict):
        return None
    for k in keys:
        v: Any = value
        for part in k.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if v not in (None, "", [], {}):
            return v
    for k in keys:
        v = value
        for part in k.split("."):
            v = _folded(v, part)
        if v not in (None, "", [], {}):
            return v
    return None


def _folded(value: Any, name: str) -> Any:
    """`value[name]`, or the value of the one key that equals `name` ignoring case."""
    if not isinstance(value, dict):
        return None
    if name in value:
        return value[name]
    got = [v for key, v in value.items() if isinstance(key, str) and key.casefold() == name.casefold()]
    return got[0] if len(got) == 1 else None


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


_TOKEN = re.compile(r"[A-Za-z]+")


def stated_environment(record: Any, limit: int = 2000) -> str | None:
    """The one environment a record's own text names, when it has no environment field: a deploy
    tool writes it into a title (`7.1.4 → prod`), a parameter (`TARGET_ENV: prod`) or a resource path
    (`env/production`). None when it names none, or names environments of two families (`promote
    staging to production`): then the record's environment stays unknown."""
    named: dict[int, str] = {}
    seen = 0
    stack = [record]
    while stack and seen < limit:
        v = stack.pop()
        seen += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str):
            for tok in _TOKEN.findall(v):
                low = tok.lower()
                fam = next((i for i, f in enumerate(ENV_FAMILIES) if low in f), None)
                if fam is not None:
                    named.setdefault(fam, low)
    return next(iter(named.values())) if len(named) == 1 else None


def environment_names(env: str) -> list[str]:
    """Every name of `env`'s family, `env` first as written (`prod` -> prod, production, prd, live)."""
    low = env.strip().lower()
    family = next((f for f in ENV_FAMILIES if low in f), frozenset())
    return list(dict.fromkeys([env, low, *sorted(family)]))


def same_environment(a: str, b: str) -> bool:
    """`production` and `prod` (and the like) name one environment."""
    a, b = a.strip().lower(), b.strip().lower()
    return a == b or any(a in f and b in f for f in ENV_FAMILIES)


def as_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


# --- strict reading --------------------------------------------------------------------------

def load_yaml(text: str, start: int = 0, end: int | None = None) -> tuple[Any, yamlio.Node | None]:
    """One YAML document (`text[start:end]`) strictly, with its offset tree. A syntax error, a key written
    twice or runaway aliases is a ContentError naming the line of the whole text, quoting nothing."""
    chunk = text[start:end]
    lines = text.count("\n", 0, start)
    try:
        return yamlio.loads(chunk), yamlio.spans(chunk)
    except yamlio.DuplicateKey as exc:
        raise ContentError(f"line {lines + exc.line}", "each key once in a mapping", start) from None
    except yamlio.TooComplex as exc:
        raise ContentError(f"line {lines + exc.line}", exc.problem, start) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {lines + mark.line + 1}" if mark is not None else "<document>"
        raise ContentError(where, "valid YAML (a syntax error here)", start + (mark.index if mark else 0)) from None


def load_documents(text: str) -> list[tuple[int, int, Any, yamlio.Node | None]]:
    """As `yaml_documents`, strictly: a document that does not load is a ContentError naming its line."""
    out = []
    for s, e in _doc_spans(text):
        value, node = load_yaml(text, s, e)
        if value is not None:
            out.append((s, e, value, node))
    return out


def read_records(text: str, expected: str, *, keys: tuple[str, ...] = LIST_KEYS,
                 one: Callable[[dict], bool] = lambda v: False, loose: Callable[[dict], bool] | None = None
                 ) -> tuple[list[Rec], list[tuple[int, int, str]]]:
    """The records of a file as `records()` finds them, and the JSON lines that do not parse (start, end, why).

    Refused (ContentError naming where, and `expected`): JSON none of whose lines parses, a YAML
    document that does not load, a container under one of `keys` that is not a list (`"entries": 7`), a
    document that is neither a container nor a record. An object is one record when `one` says so (it
    is dated …), or, holding no container, when `loose` does (it is a record the format will judge);
    an empty or null container holds no records (an export with no entries)."""
    if not text.strip():
        return [], []
    is_record = loose or one
    if text.lstrip().startswith(("{", "[")):
        bad: list[tuple[int, int, str]] = []
        try:
            docs = [jsonspan.parse(text)]
        except jsonspan.JSONSpanError as exc:
            docs, bad = jsonspan.parse_lines(text)
            if not any(d.kind in ("object", "array") for d in docs):  # no JSON lines either: a broken document
                raise bad_json(exc.pos) from None
        out: list[Rec] = []
        for d in docs:
            if d.kind == "array":
                out += [Rec(i.start, i.end, i.value, None, f"[{n}]") for n, i in enumerate(d.items)]
            elif d.kind != "object":  # a JSON line that is no object: the format keeps it as what it is not
                out.append(Rec(d.start, d.end, d.value))
            else:
                value = d.value
                key = _container(value, keys, one, is_record, expected, _json_pos(d))
                out += [Rec(d.start, d.end, value)] if key is None else [
                    Rec(i.start, i.end, i.value, value, f"{key}[{n}]") for n, i in enumerate(listed(d.get(key), key, expected))]
        return out, bad
    recs: list[Rec] = []
    for s, _e, value, node in load_documents(text):
        if node is None:
            continue
        if isinstance(value, list):
            recs += [Rec(*_abs(text, s, n), v, None, f"[{i}]") for i, (n, v) in enumerate(zip(node.items(), value))]
        elif not isinstance(value, dict):
            raise ContentError("<document>", expected, s)
        else:
            key = _container(value, keys, one, is_record, expected, _yaml_pos(node, s))
            child = node.get(str(key)) if key is not None else None
            recs += [Rec(*_abs(text, s, node), value)] if key is None else [
                Rec(*_abs(text, s, n), v, value, f"{key}[{i}]")
                for i, (n, v) in enumerate(zip(child.items() if child is not None else [], value[key] or []))]
    return recs, []


def _json_pos(doc: jsonspan.J) -> Callable[[str | None], int]:
    def pos(key: str | None) -> int:
        child = doc.get(key) if key is not None else None
        return (child if child is not None else doc).start
    return pos


def _yaml_pos(node: yamlio.Node, base: int) -> Callable[[str | None], int]:
    def pos(key: str | None) -> int:
        child = node.get(key) if key is not None else None
        return base + (child.start if child is not None else node.start)
    return pos


def _container(value: dict, keys: tuple[str, ...], one: Callable[[dict], bool], is_record: Callable[[dict], bool],
               expected: str, pos: Callable[[str | None], int]) -> str | None:
    """The key of the list holding an object's records, or None when the object is itself one record."""
    key = _pick(value)  # a list of objects, the usual names first
    if key is not None:
        return key
    if one(value):
        return None
    present = [k for k in keys if k in value]
    for k in present:
        if value[k] is None or isinstance(value[k], list):
            return k
    # a scalar is never a record's container; an object may be a record's own field (`changes: {key: {from, to}}`)
    wrong = [k for k in present if not isinstance(value[k], dict)] or ([] if is_record(value) else present)
    if wrong:
        raise ContentError(wrong[0], expected, pos(wrong[0]))
    if is_record(value):
        return None
    raise ContentError("<document>", expected, pos(None))
