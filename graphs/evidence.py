"""Turning a read-back source into evidence: spans, metric observations, bridge entities."""

from __future__ import annotations

import statistics
from datetime import datetime
from itertools import combinations

import yaml

from state.case import _LOADER
from pydantic import ValidationError

from graphs.knowledge import node_key
from state.sources import RECORD_KINDS, Catalog, ServiceConfig
from state._base import stable_id
from state.case import Case
from state.evidence import BridgeOccurrence, Evidence, Finding, Hit, MetricObservation, Scope, Span
from tools.corpus import SourceDoc
from tools.entities import EntityExtractor


def evidence_key(source_id: str, revision: str, start: int, end: int) -> str:
    return stable_id(source_id, revision, start, end)


def _scope(doc: SourceDoc) -> Scope:
    return Scope(environment=doc.entry.environment, service=doc.entry.service)


def _meta(doc: SourceDoc) -> dict:
    if doc.front is None:
        return {}
    f = doc.front
    return {"doc_id": f.doc_id, "status": f.status, "service": f.service,
            "applies_to_versions": list(f.applies_to_versions), "title": f.title}


def metric_observation(doc: SourceDoc, case: Case) -> tuple[MetricObservation, Span] | None:
    """Baseline median vs window peak of a series; the cited span is the peak line."""
    w = case.window
    base = [p for p in doc.points if w.baseline_from <= p.ts < w.start]
    win = [p for p in doc.points if w.start <= p.ts <= w.end]
    if not base or not win or doc.meta is None:
        return None
    median = statistics.median(p.value for p in base)
    peak = max(win, key=lambda p: (p.value, -p.ts.timestamp()))
    ratio = peak.value / median if median else float("inf")
    obs = MetricObservation(metric=doc.meta.metric, unit=doc.meta.unit, baseline_median=median,
                            window_peak=peak.value, ratio=round(ratio, 4), baseline_points=len(base),
                            window_points=len(win))
    return obs, Span(start=peak.start, end=peak.end, quote=doc.text[peak.start:peak.end])


def span_of(doc: SourceDoc, hit: Hit, indexed_text: str | None) -> Span | None:
    """The span to cite for a hit; re-anchored by its indexed text when the source changed."""
    if hit.chunk_id.startswith(("record:", "series:")):
        text = doc.text
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return Span(start=start, end=end, quote=text[start:end])
    if hit.revision and hit.revision != doc.revision:
        if not indexed_text:
            return None
        pos = doc.text.find(indexed_text)
        if pos < 0:
            return None
        return Span(start=pos, end=pos + len(indexed_text), quote=indexed_text)
    return Span(start=hit.start, end=hit.end, quote=doc.text[hit.start:hit.end])


def make_evidence(*, eid: str, doc: SourceDoc, hit: Hit, query: str, span: Span, claim_id: str, case: Case,
                  watermark: str, round_: int, read_at: datetime) -> Evidence:
    metric = None
    kind = "span"
    if hit.chunk_id.startswith("series:"):
        got = metric_observation(doc, case)
        if got is not None:
            metric, span = got
            kind = "metric"
    return Evidence(
        id=eid, kind=kind, source_id=doc.id, source_kind=doc.kind, version=doc.version, revision=doc.revision,
        span=span, found=Finding(tool=hit.tool, query=query, channel=hit.channel, rank=hit.rank, score=hit.score),
        read_at=read_at, watermark=watermark, trust=doc.entry.trust, scope=_scope(doc), claim_ids=(claim_id,),
        metric=metric, meta=_meta(doc), round=round_,
    )


def _record_hops(ev: Evidence, subject_env: str) -> list[tuple[str, str]]:
    """A record links what its structure says is linked, not everything it happens to list:
    a catalog's `depends_on`, a config's service to its keys."""
    try:
        data = yaml.load(ev.span.quote, Loader=_LOADER) if ev.span else None
    except yaml.YAMLError:
        return []
    key = lambda name: node_key(name, ev.scope.environment, subject_env)  # noqa: E731
    hops: set[tuple[str, str]] = set()
    try:
        if ev.source_kind == "catalog":
            cat = Catalog.model_validate(data)
            for svc in cat.services:
                if svc.environment in ("*", subject_env, ev.scope.environment):
                    hops |= {tuple(sorted((key(svc.name), key(dep)))) for dep in svc.depends_on}
        elif ev.source_kind == "config":
            cfg = ServiceConfig.model_validate(data)
            for setting in cfg.settings:
                parts = setting.split(".")
                owner = parts[0] if len(parts) > 1 else cfg.service
                hops.add(tuple(sorted((key(cfg.service), key(owner)))))
                hops.add(tuple(sorted((key(owner), key(parts[-1])))))
    except (ValidationError, TypeError, AttributeError):
        return []
    return sorted(h for h in hops if h[0] != h[1])


def bridges_of(ev: Evidence, extractor: EntityExtractor, subject_env: str
               ) -> tuple[list[BridgeOccurrence], list[tuple[str, str]]]:
    """Entity occurrences in the evidence span and the hops (entity pairs) it reads."""
    if ev.span is None or ev.kind == "metric":
        return [], []
    occs = [BridgeOccurrence(entity=m.name, kind=m.kind, scope=ev.scope, source_id=ev.source_id, version=ev.version,
                             start=m.start, end=m.end, evidence_id=ev.id)
            for m in extractor.mentions(ev.span.quote, offset=ev.span.start)]
    nodes = sorted({node_key(o.entity, ev.scope.environment, subject_env) for o in occs})
    if ev.source_kind in RECORD_KINDS:
        return occs, _record_hops(ev, subject_env)
    hops = [(a, b) for a, b in combinations(nodes, 2)]
    # a document is about its own subject: every entity it names links to that subject
    about = ev.meta.get("service")
    if about and about != "*":
        subject = node_key(about, ev.scope.environment, subject_env)
        hops += [tuple(sorted((subject, n))) for n in nodes if n != subject and (subject, n) not in hops
                 and (n, subject) not in hops]
    return occs, hops
