"""Where a build's time goes: wall and CPU seconds per named stage.

A `StageClock` is started when a build starts (before its sources are parsed, when the build
parses them) and times each stage the build enters; a stage entered twice adds up. CPU seconds
are the whole process's (every thread, the embedding runtime's too), so a stage that keeps both
cores busy shows about twice its wall time. A stage with no count of its own says that it is
under way once it has run for two seconds (`state.progress.Ticker`), so no stage of a build is
silent for long.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from state import Frozen
from state.progress import Progress, Ticker, silent


class StageTime(Frozen):
    """The time one stage of a build took."""

    wall: float
    """Seconds elapsed on the wall clock while in the stage."""
    cpu: float
    """CPU seconds the process (all its threads) spent in the stage."""


def stage_summary(stages: dict[str, StageTime]) -> str:
    """`parse 0.12 s, …, embed 6.80 s; CPU parse 0.10 s, …, embed 12.41 s`, stages in the order they ran."""
    if not stages:
        return "no stages timed"
    return "; CPU ".join(", ".join(f"{name} {getattr(t, which):.2f} s" for name, t in stages.items())
                         for which in ("wall", "cpu"))


class StageClock:
    """Times the stages of one build, in the order they are first entered."""

    def __init__(self, progress: Progress = silent, what: str = "index", *, quiet: float = 2.0,
                 wall: Callable[[], float] = time.perf_counter,
                 cpu: Callable[[], float] = time.process_time) -> None:
        self.progress, self.what, self.quiet = progress, what, quiet
        self._wall, self._cpu = wall, cpu
        self.started = wall()
        self._spent: dict[str, tuple[float, float]] = {}

    @contextmanager
    def stage(self, name: str, *, beat: bool = True) -> Iterator[None]:
        """Time `name` while the block runs. `beat`: say it is under way once it has run for
        `quiet` seconds (False for a stage that reports its own counts)."""
        wall0, cpu0 = self._wall(), self._cpu()
        try:
            if beat:
                with Ticker(self.progress, f"{self.what}: {name}", quiet=self.quiet, beat=True):
                    yield
            else:
                yield
        finally:
            w, c = self._spent.get(name, (0.0, 0.0))
            self._spent[name] = (w + self._wall() - wall0, c + self._cpu() - cpu0)

    def elapsed(self) -> float:
        """Wall seconds since the clock started (the whole build, stages and what lies between)."""
        return self._wall() - self.started

    def times(self) -> dict[str, StageTime]:
        return {name: StageTime(wall=round(w, 3), cpu=round(c, 3)) for name, (w, c) in self._spent.items()}
