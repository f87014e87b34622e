"""Everything a loop node needs, passed in once when the graph is built."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graphs.planner import DeterministicPlanner, Planner
from state.case import Case
from state.profile import Profile
from state.store import Store
from tools.access import AccessPolicy
from tools.entities import EntityExtractor
from tools.observations import Observations
from tools.reader import Reader
from tools.retrieval import RetrievalTool


@dataclass(frozen=True)
class CrashPoint:
    """Fault injection: SIGKILL this process after `node` finishes its work in `round`."""

    node: str
    round: int

    @classmethod
    def from_env(cls, value: str | None) -> "CrashPoint | None":
        if not value:
            return None
        node, _, rnd = value.partition(":")
        return cls(node=node, round=int(rnd or 1))

    def maybe_kill(self, node: str, round_: int) -> None:
        if node == self.node and round_ == self.round:
            os.kill(os.getpid(), signal.SIGKILL)


@dataclass(frozen=True)
class Deps:
    case: Case
    case_dir: Path
    run_id: str
    store: Store
    retrieval: RetrievalTool
    observations: Observations
    reader: Reader
    policy: AccessPolicy
    profile: Profile
    registry: Callable[[], EntityExtractor]
    """The entity registry of the sources the principal may read now (rebuilt when access changes)."""
    chunk_text: Callable[[str], str | None]
    """Indexed text of a chunk id, to re-anchor a span in a changed source."""
    planner: Planner = field(default_factory=DeterministicPlanner)
    progress: Callable[[str], None] = lambda _msg: None
    crash: CrashPoint | None = None
    heartbeat: Callable[[], None] = lambda: None
    """Called after every node: renews the worker's lease on the run (raises when it was lost)."""
    deleted: Callable[[], frozenset[str]] = lambda: frozenset()
    """Source ids tombstoned in the case index (never read or shown again)."""
