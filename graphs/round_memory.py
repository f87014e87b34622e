"""One round's memory: what the evidence read establishes (`Knowledge`), the anomalous path traced from
it (`Trace`) and the search log they were built from, built once and read by every node of the round.

A memory is built again only when what it was built from changed: the active evidence (a read, a
revocation or a re-anchoring on resume), the lookups and reads of the step log, or the access (its
watermark, and with it the registry of names and kinds the loop may use). Plan, update and decide of
one round, and the plan of the next, read the same evidence under the same access: one build serves
them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphs.rulebook.knowledge import Knowledge
    from graphs.rulebook.path import Trace
    from state.evidence import Evidence
    from state.steps import Logged


@dataclass(frozen=True, eq=False)
class Basis:
    """What a round memory is built from."""

    watermark: str
    """The access watermark the memory was built under."""
    registry: object
    """The registry of names and kinds for that access (compared by identity: one object per access)."""
    evidence: tuple[Evidence, ...]
    """The run's active evidence, in store order."""
    log: tuple[Logged, ...]
    """The retrieve and read steps of the run (what `Searches` reads), in order."""

    def same(self, other: Basis) -> bool:
        """Whether a memory built from `other` holds for this basis too (the steps compared by content,
        not by when they were recorded)."""
        return (self.registry is other.registry and self.watermark == other.watermark
                and len(self.log) == len(other.log) and len(self.evidence) == len(other.evidence)
                and all(a.step == b.step for a, b in zip(self.log, other.log))
                and self.evidence == other.evidence)


@dataclass(frozen=True)
class RoundMemory:
    """What every node of a round reads: the knowledge, the path traced from it and its search log."""

    basis: Basis
    """What it was built from."""
    knowledge: Knowledge
    trace: Trace
    """The anomalous path from the subject (`causal_trace` of `knowledge`)."""

    @property
    def log(self) -> tuple[Logged, ...]:
        """The retrieve and read steps it was built from."""
        return self.basis.log


class RoundMemo:
    """The last round memory of one run, kept while what it was built from stays the same."""

    def __init__(self) -> None:
        self._last: RoundMemory | None = None
        self.builds = 0
        """How many memories were built (each one `Knowledge.build` and one trace)."""

    def get(self, basis: Basis, build: Callable[[Basis], RoundMemory]) -> RoundMemory:
        if self._last is None or not basis.same(self._last.basis):
            self._last = build(basis)
            self.builds += 1
        return self._last
