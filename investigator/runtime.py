"""The composition root: `Investigator`, the public API the CLI, the service and Studio call.

It holds what a caller chooses (settings, embedding model, progress sink, planner, fault and
crash hooks) and hands every call to one of its parts, built from those choices as they are at
the call (`eval` swaps the settings and `run --planner llm` the planner after construction):

* `indexes` (`investigator.indexes.CaseIndexes`): a case's chunk and graph indexes, the retrieval tool;
* `runs` (`investigator.runs.Runs`): new run rows, a run reopened, whether a paused run may go on;
* `leases` (`investigator.worker.Leases`): holding runs, take-overs, what an early stop leaves;
* `driver` (`investigator.driver.Driver`): the loop's dependencies and the one drive path.

The read side (runs, reports, history, grants) is `Workspace`'s, which this extends.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from graphs.deps import CrashPoint
from graphs.planner import DeterministicPlanner, Planner
from investigator.config import Settings
from investigator.driver import Driver, RunResult, finish
from investigator.indexes import RETRIEVAL_TOOLS, CaseIndexes
from investigator.loading import load_case_folder, validate_case
from investigator.report_files import write_report
from investigator.runs import Runs
from investigator.worker import Leases, new_worker_id, work
from investigator.workspace import Workspace
from state.case import Case
from state.progress import Progress
from tools.embedding import Embedder, MiniLMEmbedder
from tools.index import IndexInfo
from tools.reader import FaultHook
from tools.retrieval import RetrievalTool

if TYPE_CHECKING:
    from tools.graph.casegraph import GraphBuildInfo

__all__ = ["RETRIEVAL_TOOLS", "Investigator", "RunResult"]


def _stderr(msg: str) -> None:
    try:
        print(f"[investigator] {msg}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed or a broken pipe: progress is not worth a failed run
        pass


class Investigator(Workspace):
    """Public API: validate, index, run, resume, report. The CLI only wraps these."""

    light_reads = False  # the loop has the ORM store open already: reports are read through it

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None,
                 progress: Progress = _stderr, planner: Planner | None = None,
                 fault: FaultHook | None = None, crash: CrashPoint | None = None) -> None:
        super().__init__(settings)
        self.embedder = embedder or MiniLMEmbedder()
        self.progress = progress
        self.planner = planner or DeterministicPlanner()
        self.fault = fault
        self.crash = crash
        self.worker_id = new_worker_id()

    # the parts ---------------------------------------------------------------
    @property
    def indexes(self) -> CaseIndexes:
        return CaseIndexes(settings=self.settings, embedder=self.embedder, progress=self.progress)

    @property
    def leases(self) -> Leases:
        return Leases(store=self.store, settings=self.settings, worker_id=self.worker_id, progress=self.progress)

    @property
    def runs(self) -> Runs:
        return Runs(workspace=self._workspace(), indexes=self.indexes, planner=self.planner,
                    worker_id=self.worker_id, progress=self.progress)

    @property
    def driver(self) -> Driver:
        return Driver(workspace=self._workspace(), indexes=self.indexes, runs=self.runs, leases=self.leases,
                      planner=self.planner, progress=self.progress, fault=self.fault, crash=self.crash)

    def _workspace(self) -> Workspace:
        """The read side the parts use: these settings over this store (never this front itself)."""
        return Workspace(self.settings, store=self.store)

    # case and index ----------------------------------------------------------
    def validate(self, case_dir: Path) -> Case:
        return validate_case(case_dir)

    def index(self, case_dir: Path, *, force: bool = False) -> IndexInfo | None:
        """Build the shared chunk index when it is missing or stale; returns None when fresh."""
        return self.indexes.index(case_dir, force=force)

    def graph_dir(self, case: Case, case_dir: Path) -> Path:
        return self.indexes.graph_dir(case, case_dir)

    def index_graph(self, case_dir: Path, *, force: bool = False) -> GraphBuildInfo | None:
        """Build the GraphRAG index from the chunk index when missing or stale; None when fresh."""
        return self.indexes.index_graph(case_dir, force=force)

    def import_graph(self, case_dir: Path, src: Path) -> GraphBuildInfo:
        """Use a graphrag output folder (built from the case's chunks) as the case's graph index."""
        return self.indexes.import_graph(case_dir, src)

    def delete_source(self, case_dir: Path, source_id: str, reason: str = "deleted") -> bool:
        """Tombstone a source: it is dropped from both indexes now and never recalled again.

        Returns False when it was tombstoned already (nothing changes). A source id the manifest
        does not name is a ConfigError, and nothing is written."""
        return self.indexes.delete_source(case_dir, source_id, reason)

    def retrieval(self, name: str, case_dir: Path) -> RetrievalTool:
        """The named tool over the case's (fresh) indexes."""
        return self.indexes.retrieval(name, load_case_folder(case_dir, self.progress))

    # runs --------------------------------------------------------------------
    def start(self, case_dir: Path, *, retrieval: str = "basic", run_id: str | None = None) -> RunResult:
        """Validate, index if needed, and run a new investigation to a stop reason."""
        return finish(self.driver.start(case_dir, retrieval, run_id))

    def resume(self, run_id: str) -> RunResult:
        """Continue a run from its last checkpoint after re-reading the current permissions.

        A run paused `awaiting_permission` continues only when something it waits for became
        readable (a grant, or the manifest); otherwise RunStateError, and nothing is spent
        (also a `failed`, `interrupted` or `quarantined` one: asking for it is trying it again)."""
        return self.driver.resume(run_id)

    def stream(self, case_dir: Path, *, retrieval: str = "basic", run_id: str | None = None,
               stream_mode: str | list[str] = "updates") -> Iterator[Any]:
        """Run a new investigation like `start`, yielding as the loop goes.

        Yields LangGraph's own stream chunks (`stream_mode` is any of its modes, or a list of
        them, then chunks are `(mode, chunk)` pairs): with `"updates"`, one `{node: update}` per
        node that finished (and `{"__interrupt__": ...}` when the run pauses for permission).
        The last item is the `RunResult` with the report. Closing the generator early releases
        the run; it stays resumable from its last checkpoint."""
        yield from self.driver.start(case_dir, retrieval, run_id, stream_mode=cast(Any, stream_mode))

    def work(self, *, once: bool = False, poll: float = 2.0, stop_after: float | None = None) -> list[str]:
        """Drive runs nobody holds (new, crashed, interrupted, failed, or whose worker died) until none
        is left. A run that fails is recorded and skipped (the others go on); after `max_attempts`
        failures in a row it is quarantined and no longer picked up."""
        return work(self.store, self.driver.drive_claimed, self.progress, once=once, poll=poll, stop_after=stop_after)

    def write(self, run_id: str, out: Path) -> list[Path]:
        return write_report(self.report(run_id), out)
