"""Config sources in every documented format, and snapshot pairs whose diff is a config push.

A value names another entity only for a relation the scenario states through configs; keys
come in the style of their format (UPPER_CASE env vars, dotted properties, nested YAML,
camelCase JSON, kebab/dotted ConfigMap keys, snake_case records).
"""

from __future__ import annotations

import json
from datetime import timedelta

from . import vocab
from .bundle import Bundle, Source, iso_offset, yq
from .model import Change
from .scenario import Scenario

_STYLE = {"env": "upper", "properties": "dotted", "yaml": "nested", "json": "camel", "configmap": "kebab",
          "record": "snake"}


def _rel_value(sc: Scenario, x: str, d: str) -> tuple[list[str], str]:
    """A key (as words) and a value naming d (URL, DSN, host:port or host name)."""
    r, kind = sc.rng, sc.topo.entities[d].kind
    stem = d.split("-")[0]
    if kind == "database":
        scheme = r.choice(["postgres", "postgresql", "mysql"])
        return ["database", "url"], f"{scheme}://app@{d}:5432/{stem}"
    if kind == "cache":
        return ["cache", "addr"], r.choice([f"redis://{d}:6379/0", f"{d}:6379"])
    if kind == "queue":
        return ["broker", "url"], f"amqp://{d}:5672/{sc.env}"
    if kind == "domain":
        return ["partner", "endpoint"], f"https://{d}/v2"
    if kind == "node":
        return ["node", "name"], d
    return [stem, "base", "url"], r.choice([f"http://{d}.{sc.env}.svc.cluster.local:8080", f"http://{d}:8080",
                                            f"grpc://{d}:9090", f"https://{d}.internal/api"])


def _settings(sc: Scenario, x: str, *, overrides: dict[tuple[str, ...], str] | None = None) -> list[tuple[list[str], str, str]]:
    """(key words, value, tag) for one service's config."""
    r = sc.rng
    e = sc.topo.entities[x]
    out: list[tuple[list[str], str, str]] = []
    used: set[tuple[str, ...]] = set()
    for d in e.deps:
        if sc.states(x, d, "config") and (x, d) not in sc.never:
            words, value = _rel_value(sc, x, d)
            if tuple(words) in used:
                words = words[:-1] + [d.split("-")[-1], words[-1]]
            used.add(tuple(words))
            out.append((words, value, f"rel:{d}"))
    for comp in e.components:
        out.append(([comp, "max", "retries"], str(r.randint(1, 5)), "component"))
    for words in r.sample(vocab.KEY_WORDS, k=r.randint(2, 5)):
        if tuple(words) not in used and tuple(words) not in (overrides or {}):
            used.add(tuple(words))
            out.append((list(words), str(r.choice([1, 2, 4, 8, 16, 30, 60, 100, 250, 500, 1000])), ""))
    for words, value in (overrides or {}).items():
        out.append((list(words), value, "override:" + "_".join(words)))
    return out


def _key(words: list[str], style: str) -> str:
    if style == "nested":
        style = "dotted"
    if len(words) > 1 and "-" in words[0]:
        if style != "upper":       # a component's name stays whole as the key's prefix
            rest = vocab.key_style(words[1:], "snake" if style in ("dotted", "kebab") else style)
            return f"{words[0]}.{rest}"
        words = words[0].split("-") + words[1:]
    return vocab.key_style([w.replace("-", "_") if style == "upper" else w for w in words], style)


def render(sc: Scenario, x: str, fmt: str, settings: list[tuple[list[str], str, str]], env: str,
           version: str | None) -> tuple[str, dict[str, tuple[str, str]]]:
    """The config text and, per tag, the exact line that carries it and its (flattened) key."""
    r = sc.rng
    style = _STYLE[fmt]
    lines: list[str] = []
    quotes: dict[str, tuple[str, str]] = {}
    if fmt == "env":
        lines.append(f"# {x} ({env})")
        for words, value, tag in settings:
            key = _key(words, "upper")
            line = f'{"export " if r.random() < 0.2 else ""}{key}={value if r.random() < 0.7 else chr(34) + value + chr(34)}'
            lines.append(line)
            quotes[tag or key] = (line, key)
    elif fmt == "properties":
        lines.append(f"# {x} {env}")
        for words, value, tag in settings:
            key = _key(words, "dotted")
            sep = r.choice(["=", " = ", ": "])
            line = f"{key}{sep}{value}"
            lines.append(line)
            quotes[tag or key] = (line, key)
    elif fmt in ("yaml", "record"):
        if fmt == "record":
            lines += [f"service: {x}", f"environment: {env}"] + ([f"version: {yq(version)}"] if version else []) + ["settings:"]
            ind = "  "
        else:
            ind = ""
        tree: dict = {}
        for words, value, tag in settings:
            if fmt == "record" or style != "nested" or len(words) < 3 or r.random() < 0.5:
                tree[_key(words, "snake")] = (value, tag)
            else:
                tree.setdefault(words[0], {})[_key(words[1:], "snake")] = (value, tag)
        for k, v in tree.items():
            if isinstance(v, dict):
                lines.append(f"{ind}{k}:")
                for k2, (val, tag) in v.items():
                    line = f"{ind}  {k2}: {yq(val)}"
                    lines.append(line)
                    quotes[tag or f"{k}.{k2}"] = (line.strip(), f"{k}.{k2}")
            else:
                val, tag = v
                line = f"{ind}{k}: {yq(val)}"
                lines.append(line)
                quotes[tag or k] = (line.strip(), k)
    elif fmt == "json":
        obj = {}
        for words, value, _tag in settings:
            obj[_key(words, "camel")] = int(value) if value.isdigit() else value
        text = json.dumps(obj, indent=2)
        for words, value, tag in settings:
            k = _key(words, "camel")
            quotes[tag or k] = (f'"{k}": ' + (value if value.isdigit() else json.dumps(value)), k)
        return text + "\n", quotes
    elif fmt == "configmap":
        lines += ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {x}-config", f"  namespace: {env}", "data:"]
        embed = r.random() < 0.4
        if embed:
            lines.append("  application.properties: |")
            for words, value, tag in settings:
                key = _key(words, "dotted")
                line = f"    {key}={value}"
                lines.append(line)
                quotes[tag or key] = (line.strip(), key)
        else:
            for words, value, tag in settings:
                key = _key(words, r.choice(["kebab", "dotted"]))
                line = f'  {key}: "{value}"'
                lines.append(line)
                quotes[tag or key] = (line.strip(), key)
    return "\n".join(lines) + "\n", quotes


def _ext(fmt: str) -> str:
    return {"env": "env", "properties": "properties", "json": "json"}.get(fmt, "yaml")


def write_configs(sc: Scenario, configs: dict[str, str], bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    cause = next((c for c in sc.changes if c.role in ("cause", "candidate") and c.type == "config_push"
                  and c.fmt == "record"), None)
    snap = next((c for c in sc.changes if c.fmt == "snapshot"), None)
    for x, fmt in configs.items():
        if snap is not None and x == snap.service:
            continue
        overrides: dict[tuple[str, ...], str] = {}
        if cause is not None and cause.service == x:
            for words, (_k, _f, t) in zip(cause.ref.get("words", []), cause.config_changes):
                overrides[tuple(words)] = t
        settings = _settings(sc, x, overrides=overrides)
        e = sc.topo.entities[x]
        text, quotes = render(sc, x, fmt, settings, sc.env, e.version)
        with_version = fmt == "record" or r.random() < 0.3
        src = bundle.add(Source(id=f"{x}-config-{sc.env}", path=f"sources/configs/{x}-{sc.env}.{_ext(fmt)}", kind="config",
                                fmt=fmt, service=x, env=sc.env, text=text, groups=groups_for(x),
                                version=e.version if with_version and fmt != "record" else None, tags=[f"config/{fmt}"]))
        for tag, (line, _k) in quotes.items():
            if tag.startswith("rel:"):
                bundle.anchor(f"hop:{x}:{tag[4:]}", src, line)
            if tag.startswith("override:") and cause is not None:
                bundle.anchor(f"config:{cause.key}", src, line)
    if snap is not None:
        _snapshots(sc, snap, configs.get(snap.service) or r.choice(["yaml", "json", "env", "properties", "configmap"]),
                   bundle, groups_for)
    for ch in sc.changes:
        if ch.env != sc.env and ch.type == "config_push" and ch.service in sc.topo.entities and ch.config_changes:
            _staging_config(sc, ch, bundle, groups_for)


def _snapshots(sc: Scenario, ch: Change, fmt: str, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    """Two snapshots of the root's config, taken by an audit job; their diff is the change."""
    r = sc.rng
    if fmt == "record":
        fmt = "yaml"
    x = ch.service
    words_list = ch.ref.get("words", [])
    before = {tuple(w): f for w, (k, f, t) in zip(words_list, ch.config_changes)}
    after = {tuple(w): t for w, (k, f, t) in zip(words_list, ch.config_changes)}
    t1 = ch.completed - timedelta(hours=r.randint(1, 20), minutes=r.randint(0, 59))
    state = r.getstate()
    rendered = []
    for over in (before, after):
        r.setstate(state)            # the same draws for both: only the changed values differ
        settings = _settings(sc, x, overrides=over)
        rendered.append(render(sc, x, fmt, settings, sc.env, None))
    for (text, quotes), when, label in ((rendered[0], t1, "before"), (rendered[1], ch.completed, "after")):
        stamp = f"{when:%Y%m%dT%H%M}"
        src = bundle.add(Source(id=f"{x}-config-{sc.env}-{stamp}", path=f"sources/configs/snapshots/{x}-{sc.env}-{stamp}.{_ext(fmt)}",
                                kind="config", fmt=fmt, service=x, env=sc.env, text=text, groups=groups_for(x),
                                captured_at=when, tags=[f"config/{fmt}", "config/snapshot"]))
        if label == "after":
            ch.ref.update(source=src.id, captured_at=iso_offset(when))
            elements = []
            for tag, (line, key) in quotes.items():
                if tag.startswith("rel:"):
                    bundle.anchor(f"hop:{x}:{tag[4:]}", src, line)
                if tag.startswith("override:"):
                    bundle.anchor(f"change:{ch.key}", src, line)
                    elements.append(key)
            ch.ref["elements"] = elements
            if words_list:
                ch.ref["element"] = quotes["override:" + "_".join(words_list[0])][1]


def _staging_config(sc: Scenario, ch: Change, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    x = ch.service
    overrides = {tuple(w): t for w, (k, f, t) in zip(ch.ref.get("words", []), ch.config_changes)}
    settings = _settings(sc, x, overrides=overrides)
    fmt = sc.rng.choice(["yaml", "env", "properties"])
    text, _ = render(sc, x, fmt, settings, ch.env, None)
    bundle.add(Source(id=f"{x}-config-{ch.env}", path=f"sources/configs/{x}-{ch.env}.{_ext(fmt)}", kind="config", fmt=fmt,
                      service=x, env=ch.env, text=text, groups=groups_for(x), tags=[f"config/{fmt}"]))
