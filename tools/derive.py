"""From a parsed source to typed facts: relations, signals, changes, placements, statements.

The same functions serve ingestion (which readable source can answer which lookup) and the
read step (what a read-back span establishes). Every fact carries the exact span of the
source that states it. Relations come only from structure or from one sentence that states
them (docs/deciding.md §2); names are resolved by the entity registry passed in.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from datetime import datetime

from state import yamlio
from state.facts import (
    UPSTREAM,
    ChangeFact, DeployedFact, DocMappingFact, DocumentFact, EntityFact, InjectionFact, MentionFact, PlacementFact,
    RelationFact, RolloutDateFact, SignalFact, SnapshotFact, StatementFact, VerificationFact, VersionSeenFact,
)
from state.profile import Profile
from state.sources import PROSE_KINDS, Catalog, DeploymentMapping, OwnershipRecord, ServiceConfig
from state.span import Span
from state.telemetry import SEVERITY_RANK, LogEvent, Series, TraceSpan
from tools.corpus import SourceDoc
from tools.entities import EntityExtractor
from tools.formats import catalogs as fcatalogs
from tools.formats.k8s import rollout_of, workload_of_pod
from tools.signals import DAY, Range, burst_verdict, bucketed, percentile, series_verdict

DERIVATION = "2026-12-02.3"
"""Changes whenever what a source yields (streams, relations, changes, their entities) changes:
part of every index fingerprint, so an index built by an older runtime is rebuilt, not trusted."""

Registry = EntityExtractor
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n|\n(?=\s*[|#*-])|(?<=[。！？])")
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


def capacity_of(series: Series) -> float | None:
    if series.capacity:
        return series.capacity
    unit = series.unit.strip().lower()
    return 100.0 if unit.split(" ", 1)[0] in ("%", "percent", "pct") else None


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


# --- signals at read time ----------------------------------------------------------------------

def _directions(role: str | None, wanted: str | None) -> tuple[str, ...]:
    if wanted in ("up", "down"):
        return (wanted,)
    if role in ("latency", "errors", "saturation"):
        return ("up",)
    if role == "availability":
        return ("down",)
    return ("up", "down")


def _r(x: float | None) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return x if isinstance(x, float) and math.isinf(x) else round(float(x), 6)


def series_facts(doc: SourceDoc, s: Series, entity: str, profile: Profile, rng: Range,
                 direction: str | None = None, min_ratio: float | None = None) -> SignalFact:
    role = s.role or profile.role_of(s.metric, s.unit)
    pts = [(p.ts, p.value) for p in s.points]
    absent = _absent_before(doc, s, role, profile, rng)
    v = series_verdict(absent + pts, rng, profile.anomaly, _directions(role, direction), min_ratio, capacity_of(s))
    # a day earlier too: a baseline from the same hours the day before is re-decided from the kept points
    kept = tuple((t, x) for t, x in absent + pts if rng.baseline_from - DAY <= t <= rng.end and math.isfinite(x))
    at = None
    onset_index = v.onset_index - len(absent) if v.onset_index is not None else None
    if onset_index is not None and onset_index >= 0:
        p = s.points[onset_index]
        at = span(doc, p.start, p.end)
    if absent and v.decidable:
        v = replace(v, note=(v.note + "; " if v.note else "") + f"no point before {pts[0][0]:%H:%M:%S} while the "
                                                                  f"export covers the baseline: taken as 0 (it did not run)")
    return SignalFact(entity=entity, signal="metric", name=s.metric, role=role, unit=s.unit, direction=v.direction,
                      anomalous=v.anomalous, decidable=v.decidable, onset=v.onset, recovered_at=v.recovered,
                      baseline=_r(v.baseline), level=_r(v.level), peak=_r(v.peak), ratio=_r(v.ratio),
                      delta=_r(v.delta), count=v.count, series=s.key, note=v.note, points=kept,
                      capacity=capacity_of(s), at=at)


def _absent_before(doc: SourceDoc, s: Series, role: str | None, profile: Profile,
                   rng: Range) -> list[tuple[datetime, float]]:
    """Zero points for the baseline of a load series that starts late in an export whose other series
    cover the baseline: a pod that did not run yet uses nothing (Prometheus returns no series for
    it), so its absence is a zero, not a gap. Only for resource use and traffic."""
    if role not in ("saturation", "traffic") or not s.points:
        return []
    first = s.points[0].ts
    if first < rng.search_from:
        return []
    need = profile.anomaly.min_baseline_points
    for other in doc.series:
        if other is s:
            continue
        base = [p.ts for p in other.points if rng.baseline_from <= p.ts < rng.search_from]
        if len(base) >= need:
            return [(t, 0.0) for t in base]
    return []


def _bad(e: LogEvent) -> bool:
    return SEVERITY_RANK[e.severity] >= SEVERITY_RANK["warning"]


def mention_facts(doc: SourceDoc, entity: str, items: list[tuple[datetime, str, str, int, int]],
                  all_times: list[datetime], reg: Registry, profile: Profile, rng: Range,
                  limit: int = 40) -> list[MentionFact]:
    """Names stated by bad events of `entity`: (ts, severity, text, start, end) each, any time.

    A name counts as part of the anomaly when the bad lines naming it burst in the search
    range against their own baseline (`all_times`: every event of the stream, for coverage)."""
    named: dict[str, list[int]] = {}
    kinds: dict[str, str] = {}
    upstream = profile.upstream_phrase_re
    for i, (_ts, _sev, text, _s, _e) in enumerate(items):
        said = [m for m in reg.mentions(text) if m.name != entity]
        for m in said:
            named.setdefault(m.name, []).append(i)
            kinds.setdefault(m.name, m.kind)
        if not said and upstream.search(text):
            # blames what lies below without naming it: not an internal failure
            named.setdefault(UPSTREAM, []).append(i)
            kinds.setdefault(UPSTREAM, "upstream")
    out: list[MentionFact] = []
    for name, idx in named.items():
        inside = [i for i in idx if rng.search_from <= items[i][0] <= rng.end]
        if not inside:
            continue
        times = sorted([*all_times])
        flagged = set(items[i][0] for i in idx)
        v = burst_verdict(times, [t in flagged for t in times], rng, profile.anomaly)
        first = items[inside[0]]
        at_item = first
        if v.anomalous and v.onset is not None:
            at_item = next((items[i] for i in inside if items[i][0] >= v.onset), first)
        out.append(MentionFact(entity=entity, name=name, name_kind=kinds[name], ts=v.onset if v.anomalous else first[0],
                               severity=at_item[1], anomalous=v.anomalous, at=span(doc, at_item[3], at_item[4])))
    out.sort(key=lambda m: (not m.anomalous, m.ts, m.name))
    return out[:limit]


def log_facts(doc: SourceDoc, entity: str, reg: Registry, profile: Profile, rng: Range) -> list:
    evs = [e for e in doc.events if writer_of(doc, e, reg) == entity]
    if not evs:
        return []
    v = burst_verdict([e.ts for e in evs], [_bad(e) for e in evs], rng, profile.anomaly)
    at = span(doc, evs[v.onset_index].start, evs[v.onset_index].end) if v.onset_index is not None else \
        span(doc, evs[0].start, evs[0].end)
    sig = SignalFact(entity=entity, signal="logs", name="warning/error lines", role="errors", unit="lines/min",
                     direction="up" if v.anomalous else None, anomalous=v.anomalous, decidable=v.decidable,
                     onset=v.onset, baseline=_r(v.baseline_rate), level=_r(v.window_rate),
                     ratio=_r(v.window_rate / v.baseline_rate) if v.baseline_rate else None, count=v.count,
                     series=f"logs:{entity}", note=v.note, at=at)
    bad = [(e.ts, e.severity, doc.text[e.start:e.end], e.start, e.end) for e in evs if _bad(e)]
    return [sig, *mention_facts(doc, entity, bad, [e.ts for e in evs], reg, profile, rng),
            *version_facts(doc, entity, evs, profile, rng)]


def version_facts(doc: SourceDoc, entity: str, evs: list[LogEvent], profile: Profile, rng: Range) -> list:
    """The versions the entity's lines in the search range carry, with how many bad lines carry each."""
    fields = {f.lower() for f in profile.version_fields}
    seen: dict[str, list[LogEvent]] = {}
    for e in evs:
        if not rng.search_from <= e.ts <= rng.end:
            continue
        v = next((str(val) for key, val in e.fields.items() if key.lower() in fields and str(val).strip()), None)
        if v:
            seen.setdefault(v.strip(), []).append(e)
    out = []
    for v, items in sorted(seen.items()):
        bad = [e for e in items if _bad(e)]
        first = bad[0] if bad else items[0]
        out.append(VersionSeenFact(entity=entity, version=v, lines=len(items), bad=len(bad),
                                   first_bad=bad[0].ts if bad else None, at=span(doc, first.start, first.end)))
    return out


def trace_facts(doc: SourceDoc, entity: str, reg: Registry, profile: Profile, rng: Range) -> list:
    sps = sorted((s for s in doc.spans if (reg.resolve(s.service) or s.service) == entity), key=lambda s: s.start_ts)
    if not sps:
        return []
    entry = [s for s in sps if s.kind in ("server", "consumer")] or sps
    step = _span_step(entry, profile, rng)
    out: list = []
    for name, role, values, agg in (
            ("span p95 duration", "latency", [s.duration_ms for s in entry], lambda xs: percentile(xs, 95)),
            ("span error share", "errors", [1.0 if s.error else 0.0 for s in entry], lambda xs: sum(xs) / len(xs))):
        buckets = bucketed([s.start_ts for s in entry], values, step, agg)
        pts = [(t, v) for t, v, _i in buckets]
        v = series_verdict(pts, rng, profile.anomaly, ("up",))
        at = None
        if v.onset_index is not None:
            first = entry[buckets[v.onset_index][2]]
            at = span(doc, first.start, first.end)
        kept = tuple((t, x) for t, x in pts if rng.baseline_from <= t <= rng.end and math.isfinite(x))
        out.append(SignalFact(entity=entity, signal="traces", name=name, role=role, unit="ms" if role == "latency" else "share",
                              direction=v.direction, anomalous=v.anomalous, decidable=v.decidable, onset=v.onset,
                              recovered_at=v.recovered, baseline=_r(v.baseline), level=_r(v.level), peak=_r(v.peak),
                              ratio=_r(v.ratio), delta=_r(v.delta), count=v.count, series=f"traces:{entity}:{role}",
                              note=v.note, points=kept, at=at))
    errs = [(s.start_ts, "error", " ".join([s.name, *s.attributes.values()]), s.start, s.end) for s in sps if s.error]
    return [*out, *mention_facts(doc, entity, errs, [s.start_ts for s in sps], reg, profile, rng)]


def _span_step(spans: list[TraceSpan], profile: Profile, rng: Range) -> float:
    """The bucket width for a span series: the profile's, widened (at most tenfold) until a bucket
    holds `min_bucket_spans` spans on average: onset precision follows sample density."""
    base = profile.anomaly.span_bucket
    inside = [s for s in spans if rng.baseline_from <= s.start_ts <= rng.end]
    minutes = max((rng.end - rng.baseline_from).total_seconds() / base, 1.0)
    per_bucket = len(inside) / minutes
    want = profile.anomaly.min_bucket_spans
    if per_bucket >= want or not inside:
        return base
    return base * min(10, math.ceil(want / max(per_bucket, 1e-9)))


def event_facts(doc: SourceDoc, entity: str, reg: Registry, profile: Profile, rng: Range) -> list:
    reasons = {r.lower() for r in (*profile.k8s_warning_reasons, *profile.k8s_node_conditions)}
    evs = sorted((e for e in doc.k8s_events if event_entity(e.object_kind, e.object_name, reg) == entity),
                 key=lambda e: e.ts)
    warn = [e for e in evs if e.type in ("Warning", "Condition") and e.reason.lower() in reasons]
    in_search = [e for e in warn if rng.search_from <= e.ts <= rng.end]
    base = [e for e in warn if rng.baseline_from <= e.ts < rng.search_from]
    base_reasons = {e.reason for e in base}
    fresh = [e for e in in_search if e.reason not in base_reasons]
    first = fresh[0] if fresh else (in_search[0] if in_search else (evs[0] if evs else None))
    if first is None:
        return []
    sig = SignalFact(entity=entity, signal="events", name=first.reason if fresh else "warning events", role="errors",
                     unit="events", direction="up" if fresh else None, anomalous=bool(fresh), decidable=True,
                     onset=first.ts if fresh else None, count=len(in_search), series=f"events:{entity}",
                     note="" if fresh else ("the same warnings occur in the baseline" if in_search else "no warning event"),
                     at=span(doc, first.start, first.end))
    bad = [(e.ts, "warning", f"{e.reason} {e.message}", e.start, e.end) for e in warn]
    return [sig, *mention_facts(doc, entity, bad, [e.ts for e in evs], reg, profile, rng)]


def signal_facts(doc: SourceDoc, stream_key: str, entity: str, reg: Registry, profile: Profile, rng: Range,
                 metric: str | None = None, direction: str | None = None, min_ratio: float | None = None) -> list:
    """The facts a read of one stream (a series key, `logs:W`, `traces:S`, `events:E`) establishes."""
    if stream_key.startswith("logs:"):
        return log_facts(doc, entity, reg, profile, rng)
    if stream_key.startswith("traces:"):
        return trace_facts(doc, entity, reg, profile, rng)
    if stream_key.startswith("events:"):
        return event_facts(doc, entity, reg, profile, rng)
    out = []
    for s in doc.series:
        if s.key == stream_key and (metric is None or s.metric == metric):
            out.append(series_facts(doc, s, entity, profile, rng, direction, min_ratio))
    return out


# --- relations ---------------------------------------------------------------------------------

def _rel(a: str | None, b: str | None, kind: str, via: str, env: str, at: Span | None) -> RelationFact | None:
    if not a or not b or a == b:
        return None
    return RelationFact(source=a, target=b, relation=kind, via=via, environment=env, at=at)


def catalog_relations(doc: SourceDoc, reg: Registry) -> list:
    cat = doc.record
    if not isinstance(cat, Catalog):
        return []
    if doc.format in fcatalogs.FORMATS:  # a tool's own shape: the parser knows each entry's offsets
        nodes: list = [yamlio.Node(None, s, e) for s, e in fcatalogs.parse(doc.text, doc.format)[1]]
        comp_nodes: list = []
    else:
        root = yamlio.spans(doc.text)
        nodes = root.get("services").items() if root is not None and root.get("services") is not None else []
        comp_nodes = root.get("components").items() if root is not None and root.get("components") is not None else []
    out: list = []
    for svc, node in zip(cat.services, nodes):
        at = span(doc, node.start, node.end)
        env = svc.environment
        name = reg.resolve(svc.name) or svc.name
        out.append(EntityFact(name=name, entity_kind=svc.kind, aliases=svc.aliases, at=at))
        for dep in svc.depends_on:
            if r := _rel(name, reg.resolve(dep) or dep, "depends_on", "catalog depends_on", env, at):
                out.append(r)
        for n in svc.runs_on:
            if r := _rel(name, reg.resolve(n) or n, "runs_on", "catalog runs_on", env, at):
                out.append(r)
    for comp, node in zip(cat.components, comp_nodes):
        at = span(doc, node.start, node.end)
        name = reg.resolve(comp.name) or comp.name
        out.append(EntityFact(name=name, entity_kind="component", at=at))
        for t in comp.talks_to:
            if r := _rel(name, reg.resolve(t) or t, "talks_to", "catalog talks_to", "*", at):
                out.append(r)
    return out


def config_relations(doc: SourceDoc, reg: Registry) -> list:
    owner = reg.resolve(doc.about) or doc.about
    if not owner or owner == "*":
        return []
    env = doc.entry.environment
    out: list = []
    seen: set[tuple[str, str]] = set()
    for s in doc.settings:
        at = span(doc, s.start, s.end)
        for target in reg.entities_in_value(s.value):
            if (target, "configured") not in seen and (r := _rel(owner, target, "configured", f"config key {s.key}", env, at)):
                seen.add((target, "configured"))
                out.append(r)
        head = re.split(r"[.:/]", s.key, maxsplit=1)[0] if re.search(r"[.:/]", s.key) else None
        comp = reg.resolve(head) if head else None
        if comp and reg.kinds.get(comp) == "component" and (comp, "uses") not in seen:
            if r := _rel(owner, comp, "uses", f"config key prefix {head}.", env, at):
                seen.add((comp, "uses"))
                out.append(r)
    return out


def change_relations(doc: SourceDoc, reg: Registry) -> list:
    out: list = []
    for ch in doc.changes:
        svc = reg.resolve(ch.service) or ch.service
        at = span(doc, ch.start, ch.end)
        for dc in ch.dependency_changes:
            if r := _rel(svc, reg.resolve(dc.name) or dc.name, "uses", "change record dependency_changes",
                         ch.environment, at):
                out.append(r)
    return out


def trace_relations(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    by_id = {(s.trace_id, s.span_id): s for s in doc.spans}
    out: dict[tuple[str, str], RelationFact] = {}
    env = doc.entry.environment
    peer_fields = {f.lower() for f in profile.relation_fields}
    for s in doc.spans:
        me = reg.resolve(s.service) or s.service
        parent = by_id.get((s.trace_id, s.parent_id)) if s.parent_id else None
        if parent is not None:
            p = reg.resolve(parent.service) or parent.service
            if p != me and (p, me) not in out and (r := _rel(p, me, "calls", "trace child span", env, span(doc, s.start, s.end))):
                out[(p, me)] = r
        for k, v in s.attributes.items():
            if k.lower() in peer_fields:
                tgt = reg.resolve(v) or next(iter(reg.entities_in_value(v)), None)
                if tgt and (me, tgt) not in out and (r := _rel(me, tgt, "calls", f"span attribute {k}", env,
                                                                 span(doc, s.start, s.end))):
                    out[(me, tgt)] = r
    return list(out.values())


def log_relations(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    out: dict[tuple[str, str], RelationFact] = {}
    env = doc.entry.environment
    peer_fields = {f.lower() for f in profile.relation_fields}
    phrase = profile.relation_phrase_re
    for e in doc.events:
        me = writer_of(doc, e, reg)
        if not me:
            continue
        for k, v in e.fields.items():
            if k.lower() in peer_fields and k != "@after_level":
                tgt = reg.resolve(v) or next(iter(reg.entities_in_value(v)), None)
                if tgt and tgt != me and (me, tgt) not in out:
                    out[(me, tgt)] = _rel(me, tgt, "calls", f"log field {k}", env, span(doc, e.start, e.end))  # type: ignore[assignment]
        text = doc.text[e.start:e.end]
        for m in phrase.finditer(text):
            after = text[m.end():m.end() + 80]
            ments = [x for x in reg.mentions(after) if x.kind in ENTITY_KINDS and x.start <= 30]
            if ments:
                tgt = ments[0].name
                if tgt != me and (me, tgt) not in out:
                    out[(me, tgt)] = _rel(me, tgt, "calls", f"log phrase '{m.group(0).strip()}'", env,  # type: ignore[assignment]
                                          span(doc, e.start, e.end))
    return [r for r in out.values() if r is not None]


def stated_by(doc: SourceDoc, signal: str, entity: str, reg: Registry, profile: Profile) -> list:
    """The relations an entity's own log lines (`logs`) or spans (`traces`) state, with it as the caller."""
    if signal == "logs":
        rels = log_relations(doc, reg, profile)
    elif signal == "traces":
        rels = trace_relations(doc, reg, profile)
    else:
        return []
    return [r for r in rels if r.source == entity]


def placement_facts(doc: SourceDoc, reg: Registry) -> list:
    out: list = []
    env = doc.entry.environment
    for p in doc.placements:
        wl = reg.resolve(p.pod) or reg.resolve(p.workload) or p.workload or workload_of_pod(p.pod, p.template_hash)
        if not wl or not p.node:
            continue
        node = reg.resolve(p.node) or p.node
        at = span(doc, p.start, p.end)
        out.append(PlacementFact(workload=wl, node=node, pod=p.pod, at=at))
        if r := _rel(wl, node, "runs_on", "pod placement", env, at):
            out.append(r)
    return out


def sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    pos = start
    for m in _SENTENCE.finditer(text, start, end):
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = m.end()
    if pos < end:
        out.append((pos, end))
    return [(s, e) for s, e in (yamlio.trim(text, a, b) for a, b in out) if e > s]


def prose_facts(doc: SourceDoc, start: int, end: int, reg: Registry, profile: Profile) -> list:
    """Statements in a prose span: relations stated in one sentence, changes of keys, injected instructions."""
    out: list = []
    about = reg.resolve(doc.about) or doc.about
    env = doc.entry.environment
    seen_rel: set[tuple[str, str]] = set()
    for s, e in sentences(doc.text, start, end):
        sent = doc.text[s:e]
        ments = reg.mentions(sent, offset=s)
        ents = [m for m in ments if m.kind in ENTITY_KINDS]
        for m in profile.relation_phrase_re.finditer(sent):
            # the sentence's first entity is its subject: "A calls B", "A reaches B through C"
            before = [x for x in ents if x.end - s <= m.start()]
            after = [x for x in ents if x.start - s >= m.end()]
            if before and after:
                a, b = before[0].name, after[0].name
                if a != b and (a, b) not in seen_rel and (r := _rel(a, b, "stated", f"sentence '{m.group(0).strip()}'",
                                                                    env, span(doc, s, e))):
                    seen_rel.add((a, b))
                    out.append(r)
        keys = [m for m in ments if m.kind == "config_key"]
        change = profile.change_phrase_re.search(sent)
        if keys and change:
            versions = tuple(dict.fromkeys(v.group(0) for v in profile.version_re.finditer(sent)))
            for k in dict.fromkeys(m.name for m in keys):
                out.append(StatementFact(about=about, key=k, versions=versions, phrase=change.group(0),
                                         at=span(doc, s, e)))
        inj = profile.injection_re.search(sent)
        if inj:
            out.append(InjectionFact(phrase=inj.group(0), at=span(doc, s, e)))
    return out


def document_fact(doc: SourceDoc, reg: Registry) -> DocumentFact | None:
    f = doc.front
    if f is None:
        return None
    return DocumentFact(doc_id=f.doc_id, version=f.version, status=f.status,
                        service=reg.resolve(f.service) or f.service, applies_to_versions=f.applies_to_versions,
                        title=f.title)


# --- changes, snapshots, deployed versions -----------------------------------------------------

def change_facts(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    out: list = []
    for ch in doc.changes:
        entity = reg.resolve(ch.service) or ch.service
        target = (reg.resolve(ch.target) or ch.target) if ch.target else None
        targets = tuple(dict.fromkeys(reg.resolve(x) or x for x in ch.targets))
        out.append(ChangeFact(
            id=ch.id, type=profile.change_type(ch.type), entity=entity, target=target, targets=targets,
            environment=ch.environment,
            started_at=ch.started_at, completed_at=ch.completed_at, version_from=ch.version_from,
            version_to=ch.version_to, summary=ch.summary, config_changes=ch.config_changes,
            dependency_changes=ch.dependency_changes, flag=ch.flag, rollback_of=ch.rollback_of, revision=ch.revision,
            template_hash=ch.template_hash, at=span(doc, ch.start, ch.end)))
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


def relations_of(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    """Every relation (and entity kind) a whole source states, for ingestion and structured reads."""
    if doc.kind == "catalog":
        return catalog_relations(doc, reg)
    if doc.kind == "config":
        return config_relations(doc, reg)
    if doc.kind == "change":
        return change_relations(doc, reg)
    if doc.kind == "trace":
        return trace_relations(doc, reg, profile)
    if doc.kind == "log":
        return log_relations(doc, reg, profile)
    if doc.kind == "kubernetes":
        return placement_facts(doc, reg)
    if doc.kind in PROSE_KINDS:
        return [f for f in prose_facts(doc, doc.body_start, len(doc.text), reg, profile) if f.kind == "relation"]
    return []
