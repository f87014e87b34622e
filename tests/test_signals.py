"""Anomaly and onset of one signal (docs/deciding.md §3), as pure functions of points and a window."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from state.profile import AnomalyParams
from tools.signals import Range, burst_verdict, series_verdict

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=timezone.utc)  # window start
RNG = Range(baseline_from=T0 - timedelta(minutes=30), search_from=T0 - timedelta(minutes=10), end=T0 + timedelta(minutes=20))
P = AnomalyParams()


def series(values: list[float], start_min: int = -30) -> list[tuple[datetime, float]]:
    return [(T0 + timedelta(minutes=start_min + i), v) for i, v in enumerate(values)]


def test_a_sustained_rise_is_anomalous_and_its_onset_is_the_first_point_of_the_crossing():
    pts = series([100.0] * 25 + [101, 99] + [400.0] * 20)  # rises at minute -3
    v = series_verdict(pts, RNG, P, ("up",))
    assert v.anomalous and v.direction == "up"
    assert v.onset == T0 - timedelta(minutes=3)
    assert v.baseline == 100 and v.level == 400 and v.delta == 300


def test_a_single_spike_is_not_an_anomaly():
    pts = series([100.0] * 30 + [900] + [100.0] * 19)
    assert not series_verdict(pts, RNG, P, ("up",)).anomalous


def test_a_flat_series_is_decided_normal():
    v = series_verdict(series([100.0] * 50), RNG, P, ("up", "down"))
    assert v.decidable and not v.anomalous


def test_a_series_at_zero_that_becomes_non_zero_rises():
    v = series_verdict(series([0.0] * 30 + [3.0] * 20), RNG, P, ("up",))
    assert v.anomalous and math.isinf(v.ratio)


def test_non_finite_values_and_gaps_are_skipped_not_fatal():
    vals = [100.0] * 20 + [math.nan, math.inf] + [100.0] * 8 + [float("-inf")] + [300.0] * 19
    v = series_verdict(series(vals), RNG, P, ("up",))
    assert v.anomalous and v.onset == T0 + timedelta(minutes=1)
    gappy = [p for i, p in enumerate(series([100.0] * 30 + [300.0] * 20)) if i % 3]
    assert series_verdict(gappy, RNG, P, ("up",)).anomalous


def test_a_thin_baseline_cannot_decide_and_is_never_anomalous():
    v = series_verdict(series([100.0, 100.0] + [900.0] * 20, start_min=-12), RNG, P, ("up",))
    assert not v.decidable and not v.anomalous and "baseline" in v.note


def test_a_drop_is_seen_only_in_the_down_direction():
    pts = series([99.5] * 30 + [40.0] * 20)
    assert series_verdict(pts, RNG, P, ("down",)).anomalous
    assert not series_verdict(pts, RNG, P, ("up",)).anomalous


def test_a_saturation_series_at_capacity_is_anomalous_even_when_the_ratio_is_small():
    pts = series([88 + i * 0.2 for i in range(30)] + [99.8] * 20)
    assert not series_verdict(pts, RNG, P, ("up",)).anomalous
    assert series_verdict(pts, RNG, P, ("up",), capacity=100.0).anomalous


@pytest.mark.parametrize("ratio, anomalous", [(1.5, True), (3.0, False)])
def test_a_claim_may_ask_for_its_own_ratio(ratio, anomalous):
    pts = series([100.0] * 30 + [200.0] * 20)
    assert series_verdict(pts, RNG, P, ("up",), min_ratio=ratio).anomalous is anomalous


def test_recovery_after_the_onset_is_reported():
    v = series_verdict(series([100.0] * 30 + [400.0] * 8 + [100.0] * 12), RNG, P, ("up",))
    assert v.anomalous and v.recovered == T0 + timedelta(minutes=8)


def _lines(minutes: list[float], bad: set[int]) -> tuple[list[datetime], list[bool]]:
    times = [T0 + timedelta(minutes=m) for m in minutes]
    return times, [i in bad for i in range(len(times))]


def test_a_burst_of_warning_lines_is_anomalous_from_its_first_line():
    minutes = [m / 2 for m in range(-60, 40)]  # a line every 30 s
    bad = {i for i, m in enumerate(minutes) if m >= 2.25}
    v = burst_verdict(*_lines(minutes, bad), RNG, P)
    assert v.anomalous and v.onset == T0 + timedelta(minutes=2.5)


def test_warnings_at_their_usual_rate_are_no_burst():
    minutes = [m / 2 for m in range(-60, 40)]
    bad = {i for i in range(len(minutes)) if i % 10 == 0}
    assert not burst_verdict(*_lines(minutes, bad), RNG, P).anomalous


def test_a_log_with_no_line_in_the_baseline_cannot_tell_a_burst():
    minutes = [m / 2 for m in range(0, 40)]
    v = burst_verdict(*_lines(minutes, set(range(40))), RNG, P)
    assert not v.decidable and not v.anomalous


# --- material exported for the incident only (no data before the window) ---------------------------

def test_an_export_that_starts_at_the_window_is_decided_against_the_quiet_stretch_it_starts_with():
    v = series_verdict(series([100.0] * 8 + [450.0] * 12, start_min=-8), RNG, P, ("up",))
    assert v.decidable and v.anomalous and v.onset == T0
    assert "quiet stretch" in v.note and v.baseline == 100


def test_an_export_already_elevated_from_its_first_point_stays_undecidable_never_normal():
    v = series_verdict(series([450.0] * 20, start_min=-5), RNG, P, ("up",))
    assert not v.decidable and not v.anomalous


def test_an_export_flat_throughout_with_nothing_before_the_window_says_nothing():
    v = series_verdict(series([100.0] * 20, start_min=-5), RNG, P, ("up", "down"))
    assert not v.decidable


def test_the_same_hours_a_day_earlier_are_a_baseline_when_nothing_precedes_the_window():
    day = [(t - timedelta(days=1), 100.0) for t, _v in series([0.0] * 30)]
    v = series_verdict(day + series([100.0, 100.0, 420.0, 430.0] + [440.0] * 16, start_min=-6), RNG, P, ("up",))
    assert v.anomalous and "a day earlier" in v.note


def test_a_log_exported_from_the_window_on_bursts_against_its_quiet_first_minutes():
    quiet = [m / 2 for m in range(-20, 0)]          # one info line every 30 s from minute -10
    loud = [m / 6 for m in range(0, 60)]            # six lines a minute from the window start
    times = [T0 + timedelta(minutes=m) for m in quiet + loud]
    bad = [False] * len(quiet) + [True] * len(loud)
    v = burst_verdict(times, bad, RNG, P)
    assert v.anomalous and v.onset == T0


def test_a_counter_that_idles_at_zero_and_ticks_now_and_then_departs_only_when_it_leaves_its_usual_levels():
    """Error counters sit at 0 with a 0.02 tick in a third of the points: the median's spread is 0, yet a
    run of ticks is the usual noise. The onset is where the counter leaves what the baseline held."""
    ticks = [0.02 if i % 3 == 0 else 0.0 for i in range(20)]
    pts = series(ticks + [0.02, 0.02, 0.02, 0.0, 0.0, 0.02, 0.0] + [11.4, 23.4, 38.9] + [36.0] * 17)
    v = series_verdict(pts, RNG, P, ("up",))
    assert v.anomalous and v.onset == T0 - timedelta(minutes=3), v.onset
    quiet = series(ticks + [0.02, 0.02, 0.02, 0.0, 0.0, 0.02] + [0.0, 0.02] * 12)
    assert not series_verdict(quiet, RNG, P, ("up",)).anomalous
    zero = series([0.0] * 20 + [0.0] * 7 + [0.02] * 23)  # a baseline at exactly zero: any sustained tick departs
    assert series_verdict(zero, RNG, P, ("up",)).anomalous
