"""The sources of one case as they are written: text, manifest entry, and gold anchors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone


@dataclass
class Source:
    id: str
    path: str
    kind: str
    fmt: str                       # the documented format name
    service: str
    env: str
    text: str
    groups: list[str]
    trust: str = "verified"
    timezone: str | None = None
    captured_at: datetime | None = None
    version: str | None = None
    explicit_format: bool = True
    tags: list[str] = field(default_factory=list)   # generator's format tags (e.g. log/json-pino)
    sidecar: str | None = None     # text of <path>.meta.yaml


@dataclass
class Anchor:
    source: str
    quote: str


class Bundle:
    """Collects sources and the quotes the expected answers cite."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.anchors: dict[str, list[Anchor]] = {}
        self._ids: set[str] = set()
        self._paths: set[str] = set()

    def add(self, src: Source) -> Source:
        base, n = src.id, 2
        while src.id in self._ids:
            src.id = f"{base}-{n}"
            n += 1
        pbase, n = src.path, 2
        while src.path in self._paths:
            stem, dot, ext = pbase.rpartition(".")
            src.path = f"{stem}-{n}.{ext}" if dot else f"{pbase}-{n}"
            n += 1
        self._ids.add(src.id)
        self._paths.add(src.path)
        self.sources.append(src)
        return src

    def anchor(self, name: str, source: Source, quote: str) -> None:
        if quote not in source.text:
            raise AssertionError(f"anchor {name!r}: quote not in {source.id}: {quote!r}")
        self.anchors.setdefault(name, []).append(Anchor(source.id, quote))

    def first(self, name: str) -> Anchor | None:
        got = self.anchors.get(name)
        return got[0] if got else None

    def by_id(self, sid: str) -> Source:
        return next(s for s in self.sources if s.id == sid)


# -- formatting helpers -----------------------------------------------------------------------

def iso(dt: datetime, *, ms: bool = False) -> str:
    """ISO 8601 with an explicit offset (`+08:00` or `Z` for UTC)."""
    s = dt.isoformat(timespec="milliseconds" if ms else "seconds")
    return s.replace("+00:00", "Z")


def iso_offset(dt: datetime, *, ms: bool = False) -> str:
    return dt.isoformat(timespec="milliseconds" if ms else "seconds")


def utc(dt: datetime) -> datetime:
    return dt.astimezone(timezone.utc)


def epoch(dt: datetime) -> float:
    return dt.timestamp()


def num(v: float) -> str:
    """A value with about four significant digits, no exponent."""
    if v == 0 or not math.isfinite(v):
        return "0"
    mag = math.floor(math.log10(abs(v)))
    digits = max(0, min(5, 3 - mag))
    out = f"{v:.{digits}f}"
    return out


def yq(value: object) -> str:
    """A YAML scalar, quoted when needed."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    s = str(value)
    plain_ok = s and all(c.isalnum() or c in "._-/:+@ " for c in s) and s[0] not in "-:@ " \
        and s.lower() not in ("yes", "no", "true", "false", "on", "off", "null", "~") \
        and not s.replace(".", "", 1).isdigit() and ": " not in s and not s.endswith(":")
    return s if plain_ok else '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
