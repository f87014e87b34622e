"""Load a case's sources: the manifest, each file's text, front matter and records.

This is the "source system" of a case folder: ingestion reads it to index, and the read
tool reads it again (fresh from disk) to check permission and slice spans at read time.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime
from pathlib import Path

import yaml
from pydantic import ValidationError

from state._base import Frozen, content_hash
from state.case import _LOADER, read_yaml, validation_to_case_error
from state.errors import CaseError
from state.sources import (
    PROSE_KINDS, RECORD_MODELS, FrontMatter, Manifest, MetricMeta, SourceEntry,
)

_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n", re.S)
_TS = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))\s")


class MetricPoint(Frozen):
    ts: datetime
    value: float
    start: int
    end: int
    """Offsets of the CSV line in the file text."""


class LogLine(Frozen):
    ts: datetime
    start: int
    end: int


class SourceDoc(Frozen):
    """One source as it is on disk now."""

    entry: SourceEntry
    text: str
    revision: str
    version: str
    body_start: int = 0
    front: FrontMatter | None = None
    record: Frozen | None = None
    meta: MetricMeta | None = None
    points: tuple[MetricPoint, ...] = ()
    lines: tuple[LogLine, ...] = ()

    @property
    def id(self) -> str:
        return self.entry.id

    @property
    def kind(self) -> str:
        return self.entry.kind

    @property
    def status(self) -> str:
        return self.front.status if self.front else "current"

    @property
    def title(self) -> str:
        return self.front.title if self.front else self.entry.id


_MANIFESTS: dict[Path, tuple[tuple[int, int, int], Manifest]] = {}


def load_manifest(case_dir: Path) -> Manifest:
    """The manifest as it is on disk now (re-parsed whenever the file changes)."""
    path = (Path(case_dir) / "sources.yaml").resolve()
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    if st is not None:
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        hit = _MANIFESTS.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    manifest = _parse_manifest(path)
    if st is not None:
        _MANIFESTS[path] = (stamp, manifest)
    return manifest


def _parse_manifest(path: Path) -> Manifest:
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise CaseError(str(path), "<document>", "a mapping with 'format' and 'sources'")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(path, exc) from None


def load_source(case_dir: Path, entry: SourceEntry) -> SourceDoc:
    """Read and parse one source file; problems are CaseErrors naming the file."""
    path = Path(case_dir) / entry.path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(str(path), "path", f"source {entry.id!r} to exist at {entry.path}") from None
    revision = content_hash(text)
    fields: dict[str, object] = {"entry": entry, "text": text, "revision": revision, "version": f"rev-{revision[:8]}"}
    if entry.kind in PROSE_KINDS:
        fields.update(_prose(path, entry, text))
    elif entry.kind in RECORD_MODELS:
        record = _record(path, entry, text)
        fields["record"] = record
        fields["version"] = str(getattr(record, "id", None) or getattr(record, "version", None) or fields["version"])
    elif entry.kind == "metric":
        fields.update(_metric(path, entry, text))
    elif entry.kind == "log":
        fields["lines"] = _log_lines(path, text)
    return SourceDoc(**fields)


def load_sources(case_dir: Path, manifest: Manifest | None = None) -> list[SourceDoc]:
    manifest = manifest or load_manifest(case_dir)
    return [load_source(case_dir, e) for e in manifest.sources]


def _check_groups(path: Path, entry: SourceEntry, groups: tuple[str, ...] | None) -> None:
    if groups is not None and set(groups) != set(entry.groups):
        raise CaseError(str(path), "groups", f"the same groups as sources.yaml ({sorted(entry.groups)}), got {sorted(groups)}")


def _prose(path: Path, entry: SourceEntry, text: str) -> dict[str, object]:
    m = _FRONT.match(text)
    if not m:
        raise CaseError(str(path), "front matter", "a YAML front matter block between '---' lines at the top")
    try:
        data = yaml.load(m.group(1), Loader=_LOADER)
        front = FrontMatter.model_validate(data)
    except yaml.YAMLError as exc:
        raise CaseError(str(path), "front matter", f"valid YAML ({exc})") from None
    except ValidationError as exc:
        raise validation_to_case_error(path, exc) from None
    _check_groups(path, entry, front.groups)
    return {"front": front, "body_start": m.end(), "version": front.version}


def _record(path: Path, entry: SourceEntry, text: str) -> Frozen:
    try:
        data = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise CaseError(str(path), "<document>", f"valid YAML ({exc})") from None
    try:
        return RECORD_MODELS[entry.kind].model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(path, exc) from None


def _metric(path: Path, entry: SourceEntry, text: str) -> dict[str, object]:
    meta_path = path.with_name(path.name + ".meta.yaml")
    data = read_yaml(meta_path)
    try:
        meta = MetricMeta.model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(meta_path, exc) from None
    _check_groups(meta_path, entry, meta.groups)
    points: list[MetricPoint] = []
    offset = 0
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip().split(",")[:2] != ["ts", "value"]:
        raise CaseError(str(path), "header", "a CSV header 'ts,value'")
    offset = len(lines[0])
    for lineno, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip("\r\n")
        if line.strip():
            row = next(csv.reader(io.StringIO(line)))
            try:
                ts = datetime.fromisoformat(row[0])
                value = float(row[1])
            except (ValueError, IndexError):
                raise CaseError(str(path), f"line {lineno}", f"'ts,value' with an ISO timestamp and a number, got {line!r}") from None
            if ts.utcoffset() is None:
                raise CaseError(str(path), f"line {lineno}", "a timestamp with an explicit UTC offset")
            points.append(MetricPoint(ts=ts, value=value, start=offset, end=offset + len(line)))
        offset += len(raw)
    return {"meta": meta, "points": tuple(points)}


def _log_lines(path: Path, text: str) -> tuple[LogLine, ...]:
    out: list[LogLine] = []
    offset = 0
    for lineno, raw in enumerate(text.splitlines(keepends=True), start=1):
        line = raw.rstrip("\r\n")
        if line.strip():
            m = _TS.match(line)
            if not m:
                raise CaseError(str(path), f"line {lineno}", "a log line starting with an ISO-8601 timestamp with offset")
            out.append(LogLine(ts=datetime.fromisoformat(m.group(1).replace("Z", "+00:00")), start=offset, end=offset + len(line)))
        offset += len(raw)
    return tuple(out)
