"""A build times each of its stages, and a stage that runs long says so (tools/stages.py)."""

from __future__ import annotations

import time

from tools.stages import StageClock, StageTime, stage_summary


def test_a_build_stage_that_cannot_count_says_it_is_under_way_and_when_it_is_done():
    said: list[str] = []
    clock = StageClock(said.append, "index", quiet=0.2)
    with clock.stage("entities"):
        time.sleep(0.5)
    with clock.stage("verify"):
        pass
    assert said[0].startswith("index: entities: under way, ")
    assert said[-1].startswith("index: entities: done in "), "no count it never had"
    assert not any("verify" in line for line in said), "a quick stage says nothing"
    assert set(clock.times()) == {"entities", "verify"} and clock.times()["entities"].wall >= 0.5


def test_a_stage_entered_twice_adds_up_and_the_stages_sum_to_no_more_than_the_clock():
    clock = StageClock()
    for _ in range(2):
        with clock.stage("write", beat=False):
            time.sleep(0.05)
    time.sleep(0.05)  # between stages: counted by the clock, by no stage
    times = clock.times()
    assert list(times) == ["write"] and 0.1 <= times["write"].wall < clock.elapsed()


def test_the_summary_gives_wall_then_cpu_seconds_in_the_order_the_stages_ran():
    stages = {"parse": StageTime(wall=0.12, cpu=0.1), "embed": StageTime(wall=6.8, cpu=12.41)}
    assert stage_summary(stages) == "parse 0.12 s, embed 6.80 s; CPU parse 0.10 s, embed 12.41 s"
