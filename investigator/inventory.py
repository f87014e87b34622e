"""An inventory of exported material: a list of files with what each is about.

Exports often come with one (an index, a manifest): YAML or JSON, a list of entries — or one
under `sources`, `files`, `items` or `entries` — each with `path` (or `file`) and any of
`service`, `environment`, `timezone`, `metric`, `unit`, `captured_at`, `version`, `kind`, `format`.
init reads it to scope files whose content does not say what they are about (`--inventory FILE`,
or such a file found among the material, which is then not a source itself); a `kind` with one of
its `format`s is taken as written instead of detected (a collector knows what it wrote), and
`captured_at` and `version` go to the manifest entry (config snapshots).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from state import Frozen, yamlio
from state.errors import CaseError

_LIST_KEYS = ("sources", "files", "items", "entries", "inventory")
FIELDS = ("service", "environment", "timezone", "metric", "unit", "captured_at", "version", "kind", "format")


class InventoryEntry(Frozen):
    path: str
    """The file, relative to the material folder (or ending with that path)."""
    about: dict[str, str] = {}
    """What the inventory says of it (service, environment, timezone, metric, unit, …), as text."""


def _entries(data: Any) -> list[dict] | None:
    if isinstance(data, dict):
        data = next((data[k] for k in _LIST_KEYS if isinstance(data.get(k), list)), None)
    if not isinstance(data, list) or not data:
        return None
    rows = [d for d in data if isinstance(d, dict) and isinstance(d.get("path") or d.get("file"), str)]
    if len(rows) < max(1, len(data) // 2) or not any(any(f in r for f in FIELDS) for r in rows):
        return None
    return rows


def parse_inventory(text: str) -> list[InventoryEntry] | None:
    """The entries of an inventory, or None when the text is not one."""
    try:
        data = yamlio.loads(text)
    except (ValueError, yaml.YAMLError):
        return None
    rows = _entries(data)
    if rows is None:
        return None
    out = []
    for r in rows:
        about = {f: str(r[f]) if not hasattr(r[f], "isoformat") else r[f].isoformat() for f in FIELDS
                 if r.get(f) not in (None, "", "*")}
        out.append(InventoryEntry(path=str(r.get("path") or r.get("file")).lstrip("./"), about=about))
    return out


def read_inventory(path: Path, text: str) -> list[InventoryEntry]:
    got = parse_inventory(text)
    if got is None:
        raise CaseError(str(path), "<document>", "an inventory: a list of entries (or one under `sources`/`files`) "
                        "each with `path` and any of service, environment, timezone, metric, unit")
    return got


def lookup(entries: list[InventoryEntry], rel: str) -> dict[str, str]:
    """What the inventory says of the file at `rel` (relative to the material folder)."""
    rel_parts = PurePosixPath(rel).parts
    best: dict[str, str] = {}
    best_len = 0
    for e in entries:
        parts = PurePosixPath(e.path).parts
        n = min(len(parts), len(rel_parts))
        # the inventory may be written from the export's root (`sources/a/b.log`) or from the folder (`a/b.log`)
        if n and (parts[-n:] == rel_parts[-n:]) and (parts == rel_parts or rel_parts == parts[-len(rel_parts):]
                                                      or parts == rel_parts[-len(parts):]) and n > best_len:
            best, best_len = e.about, n
    return best
