"""Config sources: the settings record, plain YAML/JSON documents, `.env`, `.properties`, ConfigMaps.

Every format flattens to dotted keys with the offsets of the line (or value) that sets
each key, so a relation or a computed diff can cite it.
"""

from __future__ import annotations

import re

import yaml

from state import yamlio
from state.telemetry import ConfigSetting, Unparsed, as_text
from tools.formats import jsonspan
from tools.formats.shape import ContentError

_ENV = re.compile(r"^\s*(?:export\s+)?(?P<k>[A-Za-z_][\w.-]*)\s*=\s*(?P<v>.*?)\s*$")
_PROP = re.compile(r"^\s*(?P<k>[^\s=:#!][^=:]*?)\s*[=:]\s*(?P<v>.*?)\s*$")


_QUOTED = re.compile(r"""^(["'])(.*?)\1\s*(?:#.*)?$""")


def _unquote(v: str) -> str:
    m = _QUOTED.match(v)  # `"value"`, also with a comment after it: `KEY="value"  # why`
    if m:
        return m.group(2)
    return v.split(" #", 1)[0].strip()


def _flatten_yaml(node: yamlio.Node, text: str, prefix: str, out: list[ConfigSetting]) -> None:
    if isinstance(node.children, dict):
        for k, child in node.children.items():
            _flatten_yaml(child, text, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(node.children, list):
        if all(c.children is None for c in node.children):
            s, e = yamlio.trim(text, node.start, node.end)
            out.append(ConfigSetting(start=s, end=e, key=prefix, value=",".join(as_text(c.value) for c in node.children)))
        else:
            for i, child in enumerate(node.children):
                _flatten_yaml(child, text, f"{prefix}.{i}", out)
    elif prefix:
        s, e = yamlio.trim(text, node.start, node.end)
        out.append(ConfigSetting(start=s, end=e, key=prefix, value=as_text(node.value)))


def _flatten_json(node: jsonspan.J, prefix: str, out: list[ConfigSetting]) -> None:
    if node.kind == "object":
        for k, child in node.keys.items():
            _flatten_json(child, f"{prefix}.{k}" if prefix else k, out)
    elif node.kind == "array":
        out.append(ConfigSetting(start=node.start, end=node.end, key=prefix,
                                 value=",".join(as_text(c.value) for c in node.items)))
    elif prefix:
        out.append(ConfigSetting(start=node.start, end=node.end, key=prefix, value=as_text(node.value)))


def settings_of_record(text: str) -> list[ConfigSetting]:
    """The `settings:` of a settings record, flattened (dotted keys stay as written)."""
    root = yamlio.spans(text)
    node = root.get("settings") if root is not None else None
    out: list[ConfigSetting] = []
    if node is not None:
        _flatten_yaml(node, text, "", out)
    return out


def parse_yaml(text: str) -> list[ConfigSetting]:
    out: list[ConfigSetting] = []
    for doc in yaml_documents(text):
        _flatten_yaml(doc, text, "", out)
    return out


def yaml_documents(text: str) -> list[yamlio.Node]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [yamlio._walk(n) for n in yaml.compose_all(text, Loader=loader) if n is not None]


def parse_json(text: str) -> list[ConfigSetting]:
    out: list[ConfigSetting] = []
    _flatten_json(jsonspan.parse(text), "", out)
    return out


def parse_env(text: str) -> tuple[list[ConfigSetting], list[Unparsed]]:
    return _lines(text, _ENV)


def parse_properties(text: str) -> tuple[list[ConfigSetting], list[Unparsed]]:
    return _lines(text, _PROP)


def _lines(text: str, pattern: re.Pattern[str]) -> tuple[list[ConfigSetting], list[Unparsed]]:
    out: list[ConfigSetting] = []
    bad: list[Unparsed] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        start, end = pos, pos + len(line)
        pos += len(raw)
        s = line.strip()
        if not s or s.startswith(("#", "!", ";")):
            continue
        m = pattern.match(line)
        if m:
            out.append(ConfigSetting(start=start, end=end, key=m.group("k").strip(), value=_unquote(m.group("v"))))
        else:
            bad.append(Unparsed(start=start, end=end, reason="a `key=value` line"))
    return out, bad


_CONFIGMAP_DATA = "an object of keys to values (a ConfigMap's data)"


def parse_configmap(text: str) -> list[ConfigSetting]:
    """A ConfigMap's `data`: each value a scalar, or an embedded file (properties / env / YAML) flattened under its name."""
    if text.lstrip().startswith("{"):
        node = jsonspan.parse(text)
        data = node.get("data")
        if data is not None and data.kind != "object":
            raise ContentError("data", _CONFIGMAP_DATA, data.start)
        items = [(k, v.start, v.end, str(v.value)) for k, v in (data.keys.items() if data else [])]
    else:
        root = yaml_documents(text)
        data = root[0].get("data") if root else None
        if data is not None and data.value is not None and not isinstance(data.children, dict):
            raise ContentError("data", _CONFIGMAP_DATA, data.start)
        items = [(k, *yamlio.trim(text, v.start, v.end), as_text(v.value))
                 for k, v in (data.children.items() if data and isinstance(data.children, dict) else [])]
    out: list[ConfigSetting] = []
    for key, start, end, value in items:
        if "\n" in value.strip():
            out += _relocate(text, start, end, value, _embedded(key, value))
        else:
            out.append(ConfigSetting(start=start, end=end, key=key, value=value))
    return out


def _embedded(name: str, value: str) -> list[ConfigSetting]:
    """The settings of a data value that is itself a file (offsets in `value`): YAML or JSON by
    its name, else `key=value` / `key: value` lines (properties, env)."""
    low = name.lower()
    try:
        if low.endswith((".yaml", ".yml")):
            out: list[ConfigSetting] = []
            for doc in yaml_documents(value):
                _flatten_yaml(doc, value, "", out)
            return out
        if low.endswith(".json"):
            out = []
            _flatten_json(jsonspan.parse(value), "", out)
            return out
    except (ValueError, yaml.YAMLError):
        pass
    return _lines(value, _PROP)[0]


def _relocate(text: str, start: int, end: int, value: str, settings: list[ConfigSetting]) -> list[ConfigSetting]:
    """Offsets in an embedded file → offsets in the whole text. Each line of the file is found, in
    order, after the entry's start (a YAML block scalar only drops its indentation; a JSON string
    holds lines without escapes as they are); a setting whose line is not found cites the entry."""
    where: list[tuple[int, int, int]] = []  # (line start in value, line length, line start in text or -1)
    cursor, pos = start, 0
    for raw in jsonspan.physical_lines(value):
        line = raw.rstrip("\r\n")
        at = text.find(line, cursor, end) if line.strip() else -1
        if at >= 0:
            cursor = at + len(line)
        where.append((pos, len(line), at))
        pos += len(raw)

    def outer(offset: int) -> int | None:
        for line_start, length, at in reversed(where):
            if line_start <= offset:
                return at + offset - line_start if at >= 0 and offset - line_start <= length else None
        return None

    out: list[ConfigSetting] = []
    for s in settings:
        a, b = outer(s.start), outer(s.end)
        a, b = (a, b) if a is not None and b is not None and b > a else (start, end)
        out.append(ConfigSetting(start=a, end=b, key=s.key, value=s.value))
    return out


def detect(text: str) -> str:
    head = text.lstrip()[:2000]
    if head.startswith("{"):
        return "configmap" if '"ConfigMap"' in head else "json"
    if re.search(r"^kind:\s*ConfigMap", head, re.M):
        return "configmap"
    if re.search(r"^settings:", head, re.M) and re.search(r"^service:", head, re.M):
        return "record"
    lines = [ln for ln in head.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", "!"))]
    if lines and all(_ENV.match(ln) for ln in lines[:10]) and all(re.match(r"^\s*(export\s+)?[A-Z_][A-Z0-9_]*=", ln) for ln in lines[:10]):
        return "env"
    if lines and all("=" in ln and ":" not in ln.split("=", 1)[0] for ln in lines[:10]):
        return "properties"
    return "yaml"
