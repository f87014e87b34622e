"""Everything a loop node needs, passed in once when the graph is built.

A node reaches the world only through these fields: values (the case loaded once for the drive:
its manifest, profile and sources), tools (retrieval, observations, the reader, the access
policy, the store) and four small interfaces (`Registry`, `ChunkTexts`, `Lease`, `Tombstones`)
whose implementations here need nothing above `graphs/`. The composition root (`investigator/`) picks
and builds them; a node never calls back into it. `progress` is the house's one-way line sink
(`state.progress.Progress`): it returns nothing. `memo` holds the run's last round memory
(`graphs.round_memory`), so the nodes of a round build it once.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from graphs.planner import DeterministicPlanner, Planner
from graphs.round_memory import RoundMemo
from state.case import Case
from state.errors import ConfigError, RunStateError
from state.profile import Profile
from state.progress import Progress, silent
from state.store import Store
from tools.access import AccessPolicy
from tools.entities import EntityExtractor
from tools.loaded import LoadedCase
from tools.observations import Observations
from tools.reader import Reader
from tools.retrieval import RetrievalTool


@dataclass
class CrashPoint:
    """Fault injection: SIGKILL this process at `node` in `round`.

    `after="work"` kills as the node finishes its work, before LangGraph saved what it returns;
    `after="saved"` kills once the checkpointer stored the node's writes, before the checkpoint
    that follows them (a real kill can land in that gap: the node's writes are pending then).
    """

    node: str
    round: int
    after: str = "work"
    _armed: bool = field(default=False, init=False, repr=False)

    AFTER = ("work", "saved")

    def __post_init__(self) -> None:
        if self.after not in self.AFTER:
            raise ConfigError(f"crash point {self.node}:{self.round}:{self.after}: expected one of {', '.join(self.AFTER)} "
                              "after the round")

    @classmethod
    def from_env(cls, value: str | None) -> "CrashPoint | None":
        """`node:round[:work|saved]` (INVESTIGATOR_CRASH_AT), or None when unset."""
        if not value:
            return None
        node, _, rest = value.partition(":")
        rnd, _, after = rest.partition(":")
        return cls(node=node, round=int(rnd or 1), after=after or "work")

    def maybe_kill(self, node: str, round_: int) -> None:
        if node == self.node and round_ == self.round:
            if self.after == "saved":
                self._armed = True  # the checkpointer's next stored writes are this node's
            else:
                os.kill(os.getpid(), signal.SIGKILL)

    def watch(self, saver: Any) -> Any:
        """`saver`, killing the process right after it stored the armed node's writes (`after="saved"`)."""
        if self.after != "saved":
            return saver
        put_writes = saver.put_writes

        def stored_then_killed(config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            put_writes(config, writes, task_id, task_path)
            if self._armed:
                os.kill(os.getpid(), signal.SIGKILL)

        saver.put_writes = stored_then_killed
        return saver


class Registry(Protocol):
    """Entity names and kinds the loop may use now."""

    def current(self) -> EntityExtractor:
        """The registry of the sources the principal may read now (rebuilt when access changes)."""
        ...


class ChunkTexts(Protocol):
    def text(self, chunk_id: str) -> str | None:
        """The indexed text of a chunk id (to re-anchor a span in a changed source); None when unknown."""
        ...


class Lease(Protocol):
    def renew(self) -> None:
        """Renew the driver's hold on the run; raises RunStateError when it was lost."""
        ...


class Tombstones(Protocol):
    def current(self) -> frozenset[str]:
        """Source ids deleted from the case index (never read or shown again)."""
        ...


class ReadableRegistry:
    """`Registry` over the case's sources: built from those the policy lets the principal read,
    kept while the access watermark stays the same."""

    def __init__(self, loaded: LoadedCase, policy: AccessPolicy) -> None:
        self._loaded, self._policy = loaded, policy
        self._built: dict[str, EntityExtractor] = {}

    def current(self) -> EntityExtractor:
        access = self._policy.current()
        if access.watermark not in self._built:
            self._built.clear()
            self._built[access.watermark] = self._loaded.readable_registry(access)
        return self._built[access.watermark]


@dataclass(frozen=True)
class IndexChunks:
    """`ChunkTexts` read from the case's chunk index."""

    index_path: Path

    def text(self, chunk_id: str) -> str | None:
        from tools.index import reading

        with reading(self.index_path) as con:
            row = con.execute("SELECT text FROM chunks WHERE chunk_id = ?", [chunk_id]).fetchone()
        return row[0] if row else None


@dataclass(frozen=True)
class IndexTombstones:
    """`Tombstones` read from the case's chunk index on every call."""

    index_path: Path

    def current(self) -> frozenset[str]:
        from tools.tombstones import tombstoned

        return frozenset(tombstoned(self.index_path))


@dataclass(frozen=True)
class StoreLease:
    """`Lease` on a run row of the store, held by `owner` for `ttl` from each renewal."""

    store: Store
    run_id: str
    owner: str
    ttl: timedelta

    def renew(self) -> None:
        if not self.store.renew(self.run_id, self.owner, self.ttl):
            raise RunStateError(f"run {self.run_id!r}: lease lost to another worker; stopping here")


@dataclass(frozen=True)
class NoLease:
    """`Lease` of a loop that holds nothing (tests, tools driving nodes by hand)."""

    def renew(self) -> None:
        return None


@dataclass(frozen=True)
class NoTombstones:
    """`Tombstones` of a case without an index."""

    def current(self) -> frozenset[str]:
        return frozenset()


@dataclass(frozen=True)
class Deps:
    loaded: LoadedCase
    """The case, its manifest, profile and sources, loaded once for this drive."""
    run_id: str
    store: Store
    retrieval: RetrievalTool
    observations: Observations
    reader: Reader
    policy: AccessPolicy
    registry: Registry
    """The entity registry of the sources the principal may read now."""
    chunks: ChunkTexts
    """Indexed text of a chunk id, to re-anchor a span in a changed source."""
    planner: Planner = field(default_factory=DeterministicPlanner)
    progress: Progress = silent
    crash: CrashPoint | None = None
    lease: Lease = field(default_factory=NoLease)
    """Renewed after every node (raises when the run was lost to another worker)."""
    tombstones: Tombstones = field(default_factory=NoTombstones)
    """Source ids tombstoned in the case index (never read or shown again)."""
    memo: RoundMemo = field(default_factory=RoundMemo, compare=False)
    """The run's last round memory, read by every node until the evidence, the search log or the access changes."""

    @property
    def case(self) -> Case:
        return self.loaded.case

    @property
    def case_dir(self) -> Path:
        return self.loaded.case_dir

    @property
    def profile(self) -> Profile:
        return self.loaded.profile
