"""The facts a read of one stream establishes (docs/deciding.md §1): a series' verdict against its
baseline, a writer's warning and error lines (with the names they blame and the versions they
carry), a service's spans, an object's Kubernetes warnings.

Each verdict is `tools.signals`' arithmetic over the points the source holds; each fact cites the
span of its onset (or of the first line or point read).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from state.facts import UPSTREAM, MentionFact, SignalFact, VersionSeenFact
from state.profile import Profile
from state.telemetry import SEVERITY_RANK, LogEvent, Series, TraceSpan
from tools.corpus import SourceDoc
from tools.derive import Registry, event_entity, span, writer_of
from tools.signals import DAY, Range, burst_verdict, bucketed, percentile, series_verdict


def capacity_of(series: Series) -> float | None:
    if series.capacity:
        return series.capacity
    unit = series.unit.strip().lower()
    return 100.0 if unit.split(" ", 1)[0] in ("%", "percent", "pct") else None


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


def mention_facts(doc: SourceDoc, entity: str, items: Sequence[tuple[datetime, str, str, int, int]],
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
            # the quote is the first of its most severe lines from the burst on: an error line naming it
            # says more of where the errors point than a warning before it
            burst = [items[i] for i in inside if items[i][0] >= v.onset] or [first]
            worst = max(SEVERITY_RANK.get(x[1], 0) for x in burst)
            at_item = next(x for x in burst if SEVERITY_RANK.get(x[1], 0) == worst)
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
