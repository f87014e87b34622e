"""Anomaly and onset of one signal against its baseline: pure functions of points and a window.

The rules of docs/deciding.md §3. A series is anomalous when, in the search range
`[start − onset_lead, end]`, a value crosses the threshold and stays beyond it (at least
`persist_min` of the next `persist` points); the onset is the first point of that crossing.
A log stream is anomalous on a burst of warning/error lines well above its baseline rate.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from state.profile import AnomalyParams

Direction = str  # "up" | "down"


@dataclass(frozen=True)
class Range:
    """The baseline and search range of a case window."""

    baseline_from: datetime
    search_from: datetime
    end: datetime

    @classmethod
    def of(cls, window) -> "Range":  # noqa: ANN001 - state.case.Window
        return cls(window.baseline_from, window.search_from, window.end)


@dataclass(frozen=True)
class SeriesVerdict:
    anomalous: bool
    decidable: bool
    direction: str | None
    onset_index: int | None
    """Index into the given points of the onset (or of the peak when not anomalous)."""
    onset: datetime | None
    baseline: float | None
    level: float | None
    peak: float | None
    ratio: float | None
    delta: float | None
    count: int
    note: str = ""
    recovered: datetime | None = None
    """When the series came back inside its threshold for `persist` points after the onset."""


def _finite(v: float) -> bool:
    return not (math.isnan(v) or math.isinf(v))


def _ratio(level: float, base: float) -> float:
    if base == 0:
        return math.inf if level > 0 else (0.0 if level == 0 else -math.inf)
    return level / base


def series_verdict(points: Sequence[tuple[datetime, float]], rng: Range, params: AnomalyParams,
                   directions: tuple[str, ...] = ("up", "down"), min_ratio: float | None = None,
                   capacity: float | None = None) -> SeriesVerdict:
    """Is the series anomalous in one of `directions`, and since when? Non-finite points are skipped."""
    r = min_ratio or params.min_ratio
    idx = [i for i, (_t, v) in enumerate(points) if _finite(v)]
    base = [points[i][1] for i in idx if rng.baseline_from <= points[i][0] < rng.search_from]
    search = [i for i in idx if rng.search_from <= points[i][0] <= rng.end]
    if not search:
        return SeriesVerdict(False, False, None, None, None, None, None, None, None, None, 0,
                             "no point in the window")
    note = ""
    if len(base) < params.min_baseline_points:
        # material exported for the incident only: compare with the same hours a day earlier, else with
        # the quiet stretch the export starts with (only when the series departs from it)
        day = [points[i][1] for i in idx if rng.baseline_from - DAY <= points[i][0] < rng.search_from - DAY]
        if len(day) >= params.min_baseline_points:
            base, note = day, "baseline: the same hours a day earlier (none before the window)"
        else:
            lead = _quiet_stretch(points, search, params, min_ratio)
            if lead is None:
                peak_i = max(search, key=lambda i: points[i][1])
                return SeriesVerdict(False, False, None, peak_i, None, None, None, points[peak_i][1], None, None,
                                     len(search), f"{len(base)} baseline points (at least "
                                                  f"{params.min_baseline_points} needed)")
            n = lead
            base = [points[i][1] for i in search[:n]]
            note = (f"baseline: the quiet stretch the export starts with ({points[search[0]][0]:%H:%M}–"
                    f"{points[search[n - 1]][0]:%H:%M}); no data before the window")
            search = search[n:]
    median = statistics.median(base)
    mad = statistics.median(abs(v - median) for v in base)
    sigma = 1.4826 * mad
    up_thr = median + max(abs(median) * (r - 1), params.mad_z * sigma, params.floor)
    down_thr = median - max(abs(median) * (1 - 1 / r), params.mad_z * sigma, params.floor)
    # a level the baseline itself held in a tenth of its points is usual, never a departure: a counter that
    # idles at zero and ticks now and then has no spread by the median's measure (MAD 0), and every tick
    # would otherwise cross
    up_thr = max(up_thr, percentile(base, USUAL))
    down_thr = min(down_thr, percentile(base, 100 - USUAL))
    sat = capacity * params.saturation_level if capacity else None
    values = [points[i][1] for i in search]

    def crosses(v: float, d: str) -> bool:
        if d == "up":
            return v > up_thr or (sat is not None and median < sat and v >= sat)
        return v < down_thr

    best: tuple[int, str] | None = None
    for d in directions:
        for j in range(len(values)):
            if not crosses(values[j], d):
                continue
            window_ = values[j:j + params.persist]
            need = min(params.persist_min, len(window_)) if len(window_) >= params.persist else len(window_)
            if sum(crosses(v, d) for v in window_) >= need:
                if best is None or j < best[0]:
                    best = (j, d)
                break
    if best is None:
        peak_j = max(range(len(values)), key=lambda j: (abs(values[j] - median), -j))
        level = statistics.median(values)
        return SeriesVerdict(False, True, None, search[peak_j], None, median, level, values[peak_j],
                             round(_ratio(values[peak_j], median), 4), round(values[peak_j] - median, 6), len(values),
                             note)
    j, d = best
    after = values[j:]
    level = statistics.median(after)
    peak = max(after) if d == "up" else min(after)
    recovered = None
    tail = [i for i in idx if points[i][0] > points[search[j]][0]]
    for k in range(len(tail) - params.persist + 1):
        if not any(crosses(points[i][1], d) for i in tail[k:k + params.persist]):
            recovered = points[tail[k]][0]
            break
    return SeriesVerdict(True, True, d, search[j], points[search[j]][0], median, level, peak,
                         round(_ratio(level, median), 4), round(level - median, 6), len(values), note, recovered)


DAY = timedelta(days=1)
USUAL = 90
"""Percentile of the baseline below which (above which, for a drop: 100 − USUAL) no level departs."""


def _quiet_stretch(points: Sequence[tuple[datetime, float]], search: list[int], params: AnomalyParams,
                   min_ratio: float | None) -> int | None:
    """How many leading points of the search range form a quiet stretch the series then departs
    from (up or down, sustained): a baseline for an export that starts at the window. None when there
    is no such stretch — a series already elevated from its first point, or flat throughout, says
    nothing without a baseline from before."""
    r = min_ratio or params.min_ratio
    need = params.min_baseline_points
    if len(search) < need + params.persist:
        return None
    n = need
    while n < len(search) - params.persist + 1:
        base = [points[i][1] for i in search[:n]]
        median = statistics.median(base)
        sigma = 1.4826 * statistics.median(abs(v - median) for v in base)
        up = median + max(abs(median) * (r - 1), params.mad_z * sigma, params.floor)
        down = median - max(abs(median) * (1 - 1 / r), params.mad_z * sigma, params.floor)
        window_ = [points[i][1] for i in search[n:n + params.persist]]
        if sum(v > up for v in window_) >= params.persist_min or sum(v < down for v in window_) >= params.persist_min:
            return n
        n += 1
    return None


@dataclass(frozen=True)
class BurstVerdict:
    anomalous: bool
    decidable: bool
    onset_index: int | None
    onset: datetime | None
    baseline_rate: float | None
    """Warning/error lines per minute in the baseline."""
    window_rate: float
    count: int
    note: str = ""


def burst_verdict(times: Sequence[datetime], bad: Sequence[bool], rng: Range, params: AnomalyParams) -> BurstVerdict:
    """A burst of bad (warning/error) events in the search range, against the baseline rate.

    Bad events are counted per minute over the time the stream covers (its first to last
    event, any severity) and decided like a metric series: the burst starts at the first
    minute whose count crosses the baseline threshold and stays above it; it also needs at
    least `log_burst_min` bad events within `log_burst_span` of its onset. A stream with no
    event at all in the baseline range cannot tell a burst from its usual level."""
    covered = any(rng.baseline_from <= t < rng.search_from for t in times)
    base_minutes = max((rng.search_from - rng.baseline_from).total_seconds() / 60, 1e-9)
    base_bad = sum(1 for t, b in zip(times, bad) if b and rng.baseline_from <= t < rng.search_from)
    base_rate = base_bad / base_minutes
    search = [i for i, (t, b) in enumerate(zip(times, bad)) if b and rng.search_from <= t <= rng.end]
    win_minutes = max((rng.end - rng.search_from).total_seconds() / 60, 1e-9)
    rate = len(search) / win_minutes
    if not covered and not any(t >= rng.search_from for t in times):
        return BurstVerdict(False, False, search[0] if search else None, None, None, rate, len(search),
                            "the stream has no line in the baseline period")
    # a stream exported for the incident only (no line before the window) is decided against the
    # quiet minutes it starts with, by the same rule as a series (`series_verdict`)
    first = max(min(times), rng.baseline_from)
    last = min(max(times), rng.end)
    step = timedelta(minutes=1)
    n = int((last - first) / step) + 1
    counts = [0] * n
    first_in: dict[int, int] = {}
    for i, (t, b) in enumerate(zip(times, bad)):
        if b and first <= t <= last:
            k = int((t - first) / step)
            counts[k] += 1
            first_in.setdefault(k, i)
    pts = [(first + k * step, float(c)) for k, c in enumerate(counts)]
    v = series_verdict(pts, rng, params, ("up",), params.log_burst_ratio)
    if not covered and not v.anomalous:
        return BurstVerdict(False, False, search[0] if search else None, None, None, rate, len(search),
                            "the stream has no line in the baseline period")
    span = timedelta(seconds=params.log_burst_span)
    if v.anomalous and v.onset_index is not None:
        k = v.onset_index
        # the onset minute's first bad line (the minute crossed, so it holds one)
        i = first_in.get(k)
        if i is not None and sum(1 for x in search if times[i] <= times[x] <= times[i] + span) >= params.log_burst_min:
            return BurstVerdict(True, True, i, times[i], base_rate, rate, len(search))
    return BurstVerdict(False, v.decidable, search[0] if search else None, None, base_rate, rate, len(search), v.note)


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    k = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k]


def bucketed(times: Sequence[datetime], values: Sequence[float], seconds: float,
             agg) -> list[tuple[datetime, float, int]]:  # noqa: ANN001 - a function of a list of floats
    """(bucket start, aggregate, index of the bucket's first item) per non-empty bucket, in time order."""
    if not times:
        return []
    step = timedelta(seconds=seconds)
    origin = min(times)
    buckets: dict[int, list[int]] = {}
    for i, t in enumerate(times):
        buckets.setdefault(int((t - origin) / step), []).append(i)
    out = []
    for b in sorted(buckets):
        items = buckets[b]
        out.append((origin + b * step, agg([values[i] for i in items]), items[0]))
    return out
