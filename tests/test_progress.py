"""Long steps tell their progress; quick ones say nothing (state/progress.py)."""

from __future__ import annotations

import threading
import time

from state.progress import Ticker, duration


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_step_quicker_than_two_seconds_says_nothing_at_all():
    said: list[str] = []
    clock = Clock()
    with Ticker(said.append, "embedding", total=50, unit="chunks", clock=clock) as t:
        for _ in range(50):
            clock.now += 0.03
            t.advance()
    assert said == []


def test_a_long_step_says_its_count_share_and_time_left_and_then_its_final_count():
    said: list[str] = []
    clock = Clock()
    with Ticker(said.append, "embedding", total=300, unit="chunks", clock=clock) as t:
        for _ in range(300):
            clock.now += 0.1
            t.advance()
    assert said[0] == "embedding: 20/300 chunks (6 %), 2 s, about 28 s left"
    assert said[-1] == "embedding: done, 300/300 chunks (100 %) in 30 s"
    assert all("left" in line for line in said[:-1])


def test_lines_get_sparser_as_a_step_runs_longer_so_a_long_log_stays_short():
    said: list[str] = []
    clock = Clock()
    with Ticker(said.append, "graph stage", total=36_000, clock=clock) as t:
        for _ in range(36_000):  # ten minutes, one item every 1/60 s
            clock.now += 1 / 60
            t.advance()
    assert 10 <= len(said) <= 30


def test_an_opaque_call_is_not_silent_a_heartbeat_speaks_while_it_runs():
    said: list[str] = []
    with Ticker(said.append, "embedding", total=309, unit="chunks", quiet=0.2, beat=True) as t:
        time.sleep(0.8)  # one blocking call that cannot count
        t.advance(309)
    assert said[0].startswith("embedding: 309 chunks under way, ")
    assert said[-1].startswith("embedding: done, 309/309 chunks (100 %) in ")
    assert not any(th.name == "progress: embedding" for th in threading.enumerate())


def test_a_failed_step_stops_its_heartbeat_without_claiming_it_is_done():
    said: list[str] = []
    try:
        with Ticker(said.append, "parsing", total=10, quiet=0.0, beat=True):
            time.sleep(0.3)
            raise RuntimeError("bad file")
    except RuntimeError:
        pass
    assert said and not any("done" in line for line in said)
    assert not any(th.name == "progress: parsing" for th in threading.enumerate())


def test_durations_read_as_a_person_would_say_them():
    assert [duration(s) for s in (0.4, 59, 61, 3725)] == ["0 s", "59 s", "1 min 01 s", "1 h 02 min"]
