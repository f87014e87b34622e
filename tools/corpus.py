"""Load a case's sources: the manifest, each file's text, and what its format holds.

This is the "source system" of a case folder: ingestion reads it to index, and the read
tool reads it again (fresh from disk) to check permission and slice spans at read time.
Every file is parsed by the parser of its kind and format (tools/formats) into typed
values with offsets; problems are `CaseError`s naming the file, the field and what was
expected, and never quote the file's content (the principal may not be allowed to read it:
an error names the file, the line or field, and what was expected instead).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from state import Frozen, content_hash
from state.casefiles import parse_yaml, read_text_file, read_yaml, validation_to_case_error
from state.errors import CaseError
from state.limits import CASE_BYTES, SOURCE_BYTES, YAML_BYTES
from state.profile import Profile
from state.sources import (
    FORMATS, PROSE_KINDS, Catalog, ChangeRecord, DeploymentMapping, FrontMatter, Manifest, MetricMeta, OwnershipRecord,
    ServiceConfig, SourceEntry,
)
from state.telemetry import (
    Change, ConfigSetting, K8sEvent, LogEvent, PodPlacement, Series, TraceSpan, Unparsed,
)
from tools.formats import catalogs as fcatalogs
from tools.formats import changes as fchanges
from tools.formats import chat as fchat
from tools.formats import configs as fconfigs
from tools.formats import k8s as fk8s
from tools.formats import ledgers as fledgers
from tools.formats import logs as flogs
from tools.formats import cloudmetrics as fcloud
from tools.formats import metrics as fmetrics
from tools.formats import traces as ftraces
from tools.formats.jsonspan import JSONSpanError
from tools.formats.shape import ContentError
from tools.manifest import load_manifest

_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n", re.S)


@dataclass(frozen=True)
class ParseContext:
    """What parsing needs beyond the file: the profile's spellings and the year of zone-less stamps."""

    profile: Profile
    year: int | None = None


class SourceDoc(Frozen):
    """One source as it is on disk now, parsed."""

    entry: SourceEntry
    text: str
    revision: str
    version: str
    format: str = ""
    """The format it was parsed as (the entry's, or the detected one)."""
    body_start: int = 0
    front: FrontMatter | None = None
    record: Frozen | None = None
    meta: MetricMeta | None = None
    events: tuple[LogEvent, ...] = ()
    spans: tuple[TraceSpan, ...] = ()
    series: tuple[Series, ...] = ()
    k8s_events: tuple[K8sEvent, ...] = ()
    placements: tuple[PodPlacement, ...] = ()
    changes: tuple[Change, ...] = ()
    settings: tuple[ConfigSetting, ...] = ()
    unparsed: tuple[Unparsed, ...] = ()
    set_aside: str | None = None
    """Why a source anyone may edit (trust: untrusted) was left out: its content could not be read
    ("file: field: expected"). Such a page never stops the case; nothing of it is indexed or cited."""

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

    @property
    def about(self) -> str:
        """The entity the source is about (front matter, record, manifest)."""
        if self.front is not None and self.front.service != "*":
            return self.front.service
        svc = getattr(self.record, "service", None)
        return str(svc) if svc else self.entry.service


def source_path(case_dir: Path, entry: SourceEntry) -> Path:
    """The file of a source, refused when it resolves outside the case folder (`..`, a symlink out)."""
    root = Path(case_dir).resolve()
    path = (root / entry.path)
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links
        raise CaseError(str(Path(case_dir) / "sources.yaml"), f"sources[{entry.id}].path",
                        "a path that resolves (it is a loop of symbolic links)") from None
    if not real.is_relative_to(root):
        raise CaseError(str(Path(case_dir) / "sources.yaml"), f"sources[{entry.id}].path",
                        "a file inside the case folder (it resolves outside it)")
    return real


def read_text(case_dir: Path, entry: SourceEntry) -> str:
    """The source's text as it is now: inside the case folder, a regular UTF-8 file, within the size limit."""
    path = source_path(case_dir, entry)
    shown = str(Path(case_dir) / entry.path)
    if not path.exists():
        raise CaseError(shown, "path", f"source {entry.id!r} to exist at {entry.path}")
    return read_text_file(path, SOURCE_BYTES, shown=shown, field="path")


class _ParsedCache:
    """Parsed sources by everything their parse depends on (the file's text, a metric's sidecar,
    the manifest entry, the profile, the year): a read re-reads the file every time (its current
    version, at read time) but parses a text it has parsed before only once. Bounded by the
    total size of the texts it holds."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._docs: OrderedDict[tuple, SourceDoc] = OrderedDict()
        self._bytes = 0

    def get(self, key: tuple) -> SourceDoc | None:
        doc = self._docs.get(key)
        if doc is not None:
            self._docs.move_to_end(key)
        return doc

    def put(self, key: tuple, doc: SourceDoc) -> None:
        if key in self._docs or len(doc.text) > self.max_bytes // 4:
            return
        self._docs[key] = doc
        self._bytes += len(doc.text)
        while self._bytes > self.max_bytes and self._docs:
            _k, old = self._docs.popitem(last=False)
            self._bytes -= len(old.text)


_PARSED = _ParsedCache()


def _parse_key(shown: Path, entry: SourceEntry, revision: str, ctx: ParseContext) -> tuple:
    sidecar = ""
    if entry.kind == "metric":
        meta = shown.with_name(shown.name + ".meta.yaml")
        try:
            sidecar = content_hash(meta.read_bytes().decode("utf-8", "replace"))
        except OSError:
            sidecar = "-"
    return (str(shown), entry.model_dump_json(), revision, sidecar,
            content_hash(ctx.profile.model_dump_json()), ctx.year)


def load_source(case_dir: Path, entry: SourceEntry, ctx: ParseContext | None = None) -> SourceDoc:
    """Read and parse one source file; problems are CaseErrors naming the file."""
    if ctx is None:
        from tools.profile import default_profile

        ctx = ParseContext(default_profile())
    text = read_text(case_dir, entry)
    shown = Path(case_dir) / entry.path
    revision = content_hash(text)
    key = _parse_key(shown, entry, revision, ctx)
    if (cached := _PARSED.get(key)) is not None:
        return cached
    try:
        doc = _parse(shown, entry, text, revision, ctx)
    except CaseError as exc:
        if entry.trust != "untrusted":
            raise
        # anyone may edit it: a broken page is left out, named, and the case goes on without it
        part = exc.file.replace(str(shown), "", 1).strip()  # "(front matter)", a sidecar, or nothing
        doc = SourceDoc(entry=entry, text=text, revision=revision, version=f"rev-{revision[:8]}",
                        set_aside=f"{part + ' ' if part else ''}{exc.field}: {exc.expected}")
    _PARSED.put(key, doc)
    return doc


def _parse(shown: Path, entry: SourceEntry, text: str, revision: str, ctx: ParseContext) -> SourceDoc:
    fields: dict[str, Any] = {"entry": entry, "text": text, "revision": revision, "version": f"rev-{revision[:8]}"}
    try:
        parse = _PARSERS[entry.kind]
        fields.update(parse(shown, entry, text, ctx))
    except JSONSpanError as exc:
        raise CaseError(str(shown), "<document>", f"valid JSON (a syntax error at offset {exc.pos})") from None
    except yaml.YAMLError as exc:  # a YAML history or config whose aliases run away (yamlio.TooComplex)
        line = getattr(exc, "line", None)
        raise CaseError(str(shown), f"line {line}" if line else "<document>",
                        getattr(exc, "problem", None) or "valid YAML") from None
    except RecursionError:
        raise CaseError(str(shown), "<document>", "content nested less deeply") from None
    except ContentError as exc:  # an item of another shape: its JSON path (or line) and the shape expected
        line = text.count("\n", 0, exc.pos) + 1
        raise CaseError(str(shown), f"{exc.where} (line {line})" if "line" not in exc.where else exc.where,
                        exc.expected) from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError):
        # a parser that met a shape it does not guard (tests/test_format_fuzz.py looks for these): still the
        # user's file to fix, named, and nothing of its content quoted
        raise CaseError(str(shown), "<document>", f"a {entry.kind} file in a format the runtime reads "
                        f"({', '.join(FORMATS[entry.kind])}); a value in it is of another type") from None
    return SourceDoc(**fields)


def load_sources(case_dir: Path, manifest: Manifest | None = None, ctx: ParseContext | None = None) -> list[SourceDoc]:
    """The case's sources, parsed; an untrusted source whose content cannot be read is left out
    (`set_aside_sources` names it)."""
    return [d for d in load_all_sources(case_dir, manifest, ctx) if d.set_aside is None]


def set_aside_sources(case_dir: Path, manifest: Manifest | None = None,
                      ctx: ParseContext | None = None) -> list[SourceDoc]:
    """Untrusted sources left out because their content cannot be read, each with its problem."""
    return [d for d in load_all_sources(case_dir, manifest, ctx) if d.set_aside is not None]


def load_all_sources(case_dir: Path, manifest: Manifest | None = None,
                     ctx: ParseContext | None = None) -> list[SourceDoc]:
    """Every source of the manifest, parsed, those left out (`set_aside`) included: one pass over the
    files for a caller that needs both."""
    manifest = manifest or load_manifest(case_dir)
    _check_total_size(case_dir, manifest)
    return [load_source(case_dir, e, ctx) for e in manifest.sources]


def _check_total_size(case_dir: Path, manifest: Manifest) -> None:
    """All the case's source files together within CASE_BYTES, checked before any is read."""
    cap, total = CASE_BYTES.value(), 0
    for entry in manifest.sources:
        try:
            total += source_path(case_dir, entry).stat().st_size
        except OSError:
            continue  # missing or unreadable: reported by name when the source is read
        if total > cap:
            raise CaseError(str(Path(case_dir) / "sources.yaml"), "sources",
                            f"{CASE_BYTES.describe(cap)}; the sources up to {entry.id!r} have {total} bytes")


def _check_groups(path: Path, entry: SourceEntry, groups: tuple[str, ...] | None) -> None:
    if groups is not None and set(groups) != set(entry.groups):
        raise CaseError(str(path), "groups", "the same groups as sources.yaml")


def _validated(path: Path, model: type[Frozen], data: object) -> Any:
    """A source's content as `model`; the error quotes nothing of it."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(path, exc, content_of=model) from None


def _prose(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    if entry.format == "chat" or (entry.format == "auto" and fchat.detect(text)):
        chat = fchat.front_matter(text, entry.id, entry.service, entry.environment, content_hash(text))
        if chat is None:
            raise CaseError(str(path), "<document>", "a chat export with dated messages (`ts`, `text`, `user`)")
        return {"front": chat, "body_start": 0, "version": chat.version, "format": "chat"}
    m = _FRONT.match(text)
    if not m:
        raise CaseError(str(path), "front matter", "a YAML front matter block between '---' lines at the top")
    front = _validated(path, FrontMatter, parse_yaml(m.group(1), f"{path} (front matter)", quote=False))
    _check_groups(path, entry, front.groups)
    return {"front": front, "body_start": m.end(), "version": front.version, "format": "markdown"}


def _log(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    fmt, events, bad = flogs.parse_logs(text, entry.format, ctx.profile, entry.timezone, ctx.year)
    return {"format": fmt, "events": tuple(events), "unparsed": tuple(bad)}


def _trace(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    fmt, spans, bad = ftraces.parse_traces(text, entry.format)
    return {"format": fmt, "spans": tuple(spans), "unparsed": tuple(bad)}


def _metric(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    fmt = (fcloud.detect(text) or fmetrics.detect(text)) if entry.format == "auto" else entry.format
    meta_path = path.with_name(path.name + ".meta.yaml")
    meta: MetricMeta | None = None
    names_itself = fmt == "csv" and fmetrics.is_grafana(text)
    if meta_path.exists() or fmt == "csv" and not names_itself:  # Grafana's CSV names its series
        meta = _validated(meta_path, MetricMeta, read_yaml(meta_path, limit=YAML_BYTES, quote=False))
        _check_groups(meta_path, entry, meta.groups)
        if fmt == "csv" and not meta.metric and not names_itself:
            raise CaseError(str(meta_path), "metric", "the metric name of the CSV series")
    entity = entry.service if entry.service != "*" else None
    if fmt == "csv":
        series, bad, problem = fmetrics.parse_csv(text, meta or MetricMeta(), entry.id, entity, entry.timezone)
    elif fmt == "cloudwatch":
        series, bad, problem = fcloud.parse_cloudwatch(text, meta, entry.id)
    elif fmt == "datadog":
        series, bad, problem = fcloud.parse_datadog(text, meta, entry.id)
    else:
        series, bad, problem = fmetrics.parse_prometheus(text, meta, entry.id, entity)
    if problem:
        raise CaseError(str(path), "header" if fmt == "csv" else "<document>", problem)
    return {"format": fmt, "meta": meta, "series": tuple(series), "unparsed": tuple(bad)}


def _kubernetes(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    fmt = fk8s.detect(text) if entry.format == "auto" else entry.format
    if fmt == "events":
        events, bad = fk8s.parse_events(text)
        return {"format": fmt, "k8s_events": tuple(events), "unparsed": tuple(bad)}
    if fmt == "pods":
        pods, bad = fk8s.parse_pods_json(text)
        return {"format": fmt, "placements": tuple(pods), "unparsed": tuple(bad)}
    if fmt == "pods-wide":
        pods, bad = fk8s.parse_pods_wide(text)
        return {"format": fmt, "placements": tuple(pods), "unparsed": tuple(bad)}
    pods, events, bad, problem = fk8s.parse_describe(text, entry.captured_at)
    if problem:
        raise CaseError(str(_case_dir(path, entry) / "sources.yaml"), f"sources[{entry.id}].captured_at", problem)
    return {"format": fmt, "placements": tuple(pods), "k8s_events": tuple(events), "unparsed": tuple(bad)}


def _change(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    fmt = fchanges.detect(text) if entry.format == "auto" else entry.format
    if fmt == "record":
        data = parse_yaml(text, str(path), quote=False)
        record = _validated(path, ChangeRecord, data)
        if not ctx.profile.known_change_type(record.type):
            raise _unknown_change_type(path, "type", ctx)
        s, e = len(text) - len(text.lstrip()), len(text.rstrip())
        return {"format": fmt, "record": record, "version": record.id,
                "changes": (fchanges.from_record(record, s, e),)}
    env = entry.environment
    svc = entry.service
    if fmt == "ledger" and (own := fledgers.own_shape(text)) is not None:
        fmt = own  # `ledger` names the family: a file in one of its tools' own shapes is read by that tool's reader
    if fmt in fledgers.PARSERS:
        try:
            if fmt == "ledger":  # a record of an API call with no type field is of the type its path names
                got, bad = fledgers.parse_ledger(text, svc, env, flogs.zone(entry.timezone), ctx.profile.known_change_type)
            else:
                got, bad = fledgers.PARSERS[fmt](text, svc, env, flogs.zone(entry.timezone))
        except (ValueError, TypeError, AttributeError, KeyError):
            raise CaseError(str(path), "<document>", f"a `{fmt}` change file as the tool writes it") from None
    elif fmt == "helm":
        got, bad = fchanges.parse_helm(text, svc, env)
    elif fmt == "argocd":
        got, bad = fchanges.parse_argocd(text, svc, env)
    elif fmt == "rollout":
        got, bad = fchanges.parse_rollout(text, svc, env)
    else:
        got, bad = fchanges.parse_flags(text, svc, env)
    for n, ch in enumerate(got):
        if not ctx.profile.known_change_type(ch.type):
            line = text.count("\n", 0, ch.start) + 1
            raise _unknown_change_type(path, f"entry {n + 1} (line {line}).type", ctx)
    return {"format": fmt, "changes": tuple(got), "unparsed": tuple(bad)}


def _unknown_change_type(path: Path, field: str, ctx: ParseContext) -> CaseError:
    """A change whose type the profile does not know; the value is content, so it is not quoted."""
    return CaseError(str(path), field, f"a change type: one of {ctx.profile.change_type_vocabulary()} "
                                       "(or a spelling the profile's change_types maps to one)")


def _config(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    fmt = fconfigs.detect(text) if entry.format == "auto" else entry.format
    bad: list[Unparsed] = []
    if fmt == "record":
        record = _validated(path, ServiceConfig, parse_yaml(text, str(path), quote=False))
        settings = fconfigs.settings_of_record(text)
        return {"format": fmt, "record": record, "settings": tuple(settings),
                "version": record.version or f"rev-{content_hash(text)[:8]}"}
    if fmt in ("yaml", "configmap") and not text.lstrip().startswith("{"):
        # strict first (syntax, duplicate keys, runaway aliases), every document of the file
        parse_yaml(text, str(path), quote=False, documents="all" if fmt == "yaml" else "one")
    if fmt == "yaml":
        settings = fconfigs.parse_yaml(text)
    elif fmt == "json":
        settings = fconfigs.parse_json(text)
    elif fmt == "env":
        settings, bad = fconfigs.parse_env(text)
    elif fmt == "properties":
        settings, bad = fconfigs.parse_properties(text)
    else:
        settings = fconfigs.parse_configmap(text)
    return {"format": fmt, "settings": tuple(settings), "unparsed": tuple(bad),
            **({"version": entry.version} if entry.version else {})}


def _yaml_record(model: type[Frozen]):  # noqa: ANN202
    def parse(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
        record = _validated(path, model, parse_yaml(text, str(path), quote=False))
        version = getattr(record, "id", None) or getattr(record, "version", None)
        return {"format": "record", "record": record, **({"version": str(version)} if version else {})}

    return parse


def _catalog(path: Path, entry: SourceEntry, text: str, ctx: ParseContext) -> dict[str, Any]:
    fmt = entry.format if entry.format != "auto" else (fcatalogs.detect(text) or "record")
    if fmt == "record":
        return _yaml_record(Catalog)(path, entry, text, ctx)
    catalog, _spans = fcatalogs.parse(text, fmt)
    return {"format": fmt, "record": catalog}


_PARSERS = {
    **{k: _prose for k in PROSE_KINDS},
    "log": _log, "trace": _trace, "metric": _metric, "kubernetes": _kubernetes,
    "change": _change, "config": _config,
    "mapping": _yaml_record(DeploymentMapping), "ownership": _yaml_record(OwnershipRecord),
    "catalog": _catalog,
}


def _case_dir(shown: Path, entry: SourceEntry) -> Path:
    """The case folder of a source's path as shown (`<case>/<entry.path>`)."""
    out = Path(shown)
    for _part in Path(entry.path).parts:
        out = out.parent
    return out


def case_year(start: datetime) -> int:
    return start.year
