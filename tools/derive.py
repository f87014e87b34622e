"""From a parsed source to typed facts: what the derivations share, the streams a source holds, and
what its records state (changes, rollout dates, config snapshots, deployed versions, front matter).

The same functions serve ingestion (which readable source can answer which lookup) and the
read step (what a read-back span establishes). Every fact carries the exact span of the
source that states it; names are resolved by the entity registry passed in. The facts a read
of one stream establishes are in `tools.derive_signals`, the relations a source states (by its
structure or in one sentence, docs/deciding.md §2) in `tools.derive_relations`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from state import yamlio
from state.change import restated
from state.facts import ChangeFact, DeployedFact, DocMappingFact, DocumentFact, RolloutDateFact, SnapshotFact, VerificationFact
from state.profile import Profile
from state.sources import DeploymentMapping, OwnershipRecord, ServiceConfig
from state.span import Span
from state.telemetry import LogEvent, Series, TraceSpan
from tools.corpus import SourceDoc
from tools.entities import EntityExtractor
from tools.formats.k8s import rollout_of, workload_of_pod

DERIVATION = "2026-12-06.4"
"""Changes whenever what a source yields (streams, relations, changes, their entities) changes:
part of every index fingerprint, so an index built by an older runtime is rebuilt, not trusted."""

Registry = EntityExtractor
ENTITY_KINDS = frozenset({"service", "database", "cache", "queue", "cluster", "node", "host", "external",
                          "component", "workload", "domain"})


def span(doc: SourceDoc, start: int, end: int) -> Span:
    s, e = yamlio.trim(doc.text, start, end)
    return Span.of(doc.text, s, e)


# --- streams: which signals a source holds, per entity ------------------------------------------

@dataclass(frozen=True)
class Stream:
    """One signal of one entity in a source: a series, a writer's log lines, a service's spans, an object's events."""

    signal: str  # metric | logs | traces | events
    entity: str
    key: str
    metric: str = ""
    role: str | None = None
    start: int = 0
    end: int = 0


def series_entity(doc: SourceDoc, s: Series, reg: Registry, profile: Profile) -> str | None:
    for label in profile.pod_labels:
        # a pod's series is about that pod's workload, whichever file (a node's export, say) holds it
        value = s.labels.get(label)
        wl = workload_of_pod(value) if value else None
        if value and (got := reg.resolve(value) or (reg.resolve(wl) if wl else None)):
            return got
    for label in _varying_labels(doc, profile):
        # one export of many entities (every node, every instance): the label that tells its
        # series apart says which entity each is about, whatever the file as a whole is filed under
        if (value := s.labels.get(label)) and (got := reg.resolve(value)):
            return got
    if s.entity:
        return reg.resolve(s.entity) or s.entity
    for label in profile.entity_labels:
        value = s.labels.get(label)
        if not value:
            continue
        if got := reg.resolve(value):
            return got
    return doc.entry.service if doc.entry.service != "*" else None


def _varying_labels(doc: SourceDoc, profile: Profile) -> list[str]:
    """Entity labels whose value differs between the series of one source, in the profile's order."""
    if len(doc.series) < 2:
        return []
    return [label for label in profile.entity_labels
            if len({s.labels.get(label) for s in doc.series if s.labels.get(label)}) > 1]


def writer_of(doc: SourceDoc, e: LogEvent, reg: Registry) -> str | None:
    for cand in (e.writer, e.fields.get("@after_level")):
        if cand and (got := reg.resolve(cand)):
            return got
    if e.writer and doc.entry.service == "*":
        return e.writer
    return doc.entry.service if doc.entry.service != "*" else (e.writer or None)


def event_entity(ev_kind: str, name: str, reg: Registry) -> str | None:
    if not name:
        return None
    if ev_kind == "Pod":
        return reg.resolve(name) or workload_of_pod(name)
    if ev_kind in ("ReplicaSet",):
        return reg.resolve(re.sub(r"-[a-z0-9]{6,10}$", "", name))
    return reg.resolve(name) or name


def streams(doc: SourceDoc, reg: Registry, profile: Profile) -> list[Stream]:
    out: list[Stream] = []
    for s in doc.series:
        ent = series_entity(doc, s, reg, profile)
        if ent:
            out.append(Stream("metric", ent, s.key, s.metric, s.role or profile.role_of(s.metric, s.unit), s.start, s.end))
    if doc.events:
        by: dict[str, list[LogEvent]] = {}
        for e in doc.events:
            w = writer_of(doc, e, reg)
            if w:
                by.setdefault(w, []).append(e)
        for w, evs in sorted(by.items()):
            out.append(Stream("logs", w, f"logs:{w}", start=evs[0].start, end=evs[-1].end))
    if doc.spans:
        by_s: dict[str, list[TraceSpan]] = {}
        for sp in doc.spans:
            ent = reg.resolve(sp.service) or sp.service
            by_s.setdefault(ent, []).append(sp)
        for ent, sps in sorted(by_s.items()):
            out.append(Stream("traces", ent, f"traces:{ent}", start=min(x.start for x in sps), end=max(x.end for x in sps)))
    if doc.k8s_events:
        by_e: dict[str, list] = {}
        for ev in doc.k8s_events:
            ent = event_entity(ev.object_kind, ev.object_name, reg)
            if ent:
                by_e.setdefault(ent, []).append(ev)
        for ent, evs in sorted(by_e.items()):
            out.append(Stream("events", ent, f"events:{ent}", start=min(x.start for x in evs), end=max(x.end for x in evs)))
    return out


# --- what records state: front matter, changes, snapshots, deployed versions ---------------------

def document_fact(doc: SourceDoc, reg: Registry) -> DocumentFact | None:
    f = doc.front
    if f is None:
        return None
    return DocumentFact(doc_id=f.doc_id, version=f.version, status=f.status,
                        service=reg.resolve(f.service) or f.service, applies_to_versions=f.applies_to_versions,
                        title=f.title)


def change_facts(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    out: list = []
    for ch in doc.changes:
        entity = reg.resolve(ch.service) or ch.service
        target = (reg.resolve(ch.target) or ch.target) if ch.target else None
        targets = tuple(dict.fromkeys(reg.resolve(x) or x for x in ch.targets))
        out.append(restated(ch, ChangeFact, type=profile.change_type(ch.type), entity=entity, target=target,
                            targets=targets, at=span(doc, ch.start, ch.end)))
    return out


def rollout_dates(doc: SourceDoc, reg: Registry) -> list:
    out = []
    for ev in doc.k8s_events:
        got = rollout_of(ev)
        if got:
            wl, h = got
            out.append(RolloutDateFact(workload=reg.resolve(wl) or wl, template_hash=h, ts=ev.ts,
                                       at=span(doc, ev.start, ev.end)))
    return out


def snapshot_fact(doc: SourceDoc, reg: Registry) -> SnapshotFact | None:
    if doc.kind != "config" or not doc.settings:
        return None
    rec = doc.record
    entity = reg.resolve(doc.about) or doc.about
    env = rec.environment if isinstance(rec, ServiceConfig) else doc.entry.environment
    version = (rec.version if isinstance(rec, ServiceConfig) else None) or doc.entry.version
    return SnapshotFact(entity=entity, environment=env, source_id=doc.id, version=version,
                        captured_at=doc.entry.captured_at, settings={s.key: s.value for s in doc.settings},
                        lines={s.key: (s.start, s.end) for s in doc.settings},
                        at=span(doc, min(s.start for s in doc.settings), max(s.end for s in doc.settings)))


def record_facts(doc: SourceDoc, reg: Registry) -> list:
    """Deployed versions, document mappings and owner verifications a record states."""
    rec = doc.record
    out: list = []
    whole = span(doc, 0, len(doc.text))
    if isinstance(rec, DeploymentMapping):
        svc = reg.resolve(rec.service) or rec.service
        out.append(DeployedFact(entity=svc, version=rec.deployed_version, how=f"deployment mapping {doc.id}", at=whole))
        out += [DocMappingFact(service=svc, deployed_version=rec.deployed_version, doc_id=d.doc_id, version=d.version,
                               applies_to=d.applies_to, at=whole) for d in rec.documents]
    elif isinstance(rec, OwnershipRecord):
        out += [VerificationFact(doc_id=v.doc_id, version=v.version, verified_by=v.verified_by,
                                 for_versions=v.for_versions, at=whole) for v in rec.verifications]
    elif isinstance(rec, ServiceConfig) and rec.version:
        out.append(DeployedFact(entity=reg.resolve(rec.service) or rec.service, version=rec.version,
                                how=f"config {doc.id}", at=whole))
    return out
