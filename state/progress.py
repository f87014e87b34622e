"""Progress of long steps, told as plain lines through the caller's `Progress` callback.

A step that may run for more than a couple of seconds (embedding chunks, a graph build stage,
parsing a large folder, evaluating cases) counts what it has done with a `Ticker`. The ticker says
nothing for the first `quiet` seconds, so quick steps stay silent; after that it says the count, the
share done and, once a rate is known, the time left. Lines get sparser as a step runs longer (at most
about one per `spacing` of the elapsed time), so a log of a ten-minute build holds a few dozen lines,
not hundreds. The final count is always said once a step has spoken at all.

A step that cannot count (one opaque call: a model encoding a batch, a library's pipeline stage)
passes `beat=True`: a background thread then says the same lines while the step runs, so a long
call is never silent; the count stays as far as the step could tell.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

Progress = Callable[[str], None]


def silent(_message: str) -> None:
    """A `Progress` that says nothing."""


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Ticker:
    """Counts of one long step: `advance` as work is done, `close` at the end (or use `with`)."""

    def __init__(self, say: Progress, what: str, total: int | None = None, unit: str = "", *,
                 quiet: float = 2.0, spacing: float = 0.2, beat: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.say, self.what, self.total, self.unit = say, what, total, unit
        self.quiet, self.spacing, self.clock = quiet, spacing, clock
        self.done = 0
        self.started = clock()
        self.last_said: float | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        if beat:
            self._beat = threading.Thread(target=self._beating, name=f"progress: {what}", daemon=True)
            self._beat.start()

    def _beating(self) -> None:
        while not self._stop.wait(0.25):
            self._maybe_say()

    def __enter__(self) -> Ticker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(said=exc[0] is None)

    def count(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if not self.done:  # an opaque call under way: what it works on, not a stuck 0 %
            return f"{self.total}{unit} under way" if self.total else "under way"
        if not self.total:
            return f"{self.done}{unit}"
        return f"{self.done}/{self.total}{unit} ({100 * self.done // self.total} %)"

    def line(self, now: float) -> str:
        elapsed = now - self.started
        text = f"{self.what}: {self.count()}, {duration(elapsed)}"
        if self.total and 0 < self.done < self.total:
            text += f", about {duration(elapsed * (self.total - self.done) / self.done)} left"
        return text

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
        self._maybe_say()

    def _maybe_say(self) -> None:
        with self._lock:
            now = self.clock()
            elapsed = now - self.started
            if elapsed < self.quiet or self._stop.is_set():
                return
            gap = max(self.quiet, self.spacing * elapsed)
            if self.last_said is None or now - self.last_said >= gap:
                self.last_said = now
                self.say(self.line(now))

    def close(self, said: bool = True) -> None:
        """Stop the heartbeat; the final count is said (unless `said` is False: the step failed)
        only when the step spoke before or ran past `quiet`."""
        with self._lock:
            if self._stop.is_set():
                return
            self._stop.set()
            now = self.clock()
            if said and (self.last_said is not None or now - self.started >= self.quiet):
                counted = f", {self.count()}" if self.done or self.total else ""  # nothing counted: just done
                self.say(f"{self.what}: done{counted} in {duration(now - self.started)}")
        if self._beat is not None and self._beat is not threading.current_thread():
            self._beat.join()
