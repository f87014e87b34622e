"""Driving a run: the loop's dependencies for it, and the one path every drive takes.

`Driver.drive` holds the run, builds the loop over its case, starts it (a new run) or continues
it from its last checkpoint (after re-checking the evidence against the access of now), and
writes on the run whatever stops it early. `start`, `resume`, `stream` and the worker all take
it; it yields LangGraph's chunks when asked to stream, and the `RunResult` last.

It may import `state/`, `tools/`, `graphs/`, LangGraph and the parts beside it
(`investigator.{checkpoints, config, workspace, indexes, runs, worker}`); `investigator.runtime`
imports it, never the other way.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StreamMode

from graphs.build import build_graph
from graphs.deps import CrashPoint, Deps, IndexChunks, IndexTombstones, ReadableRegistry
from graphs.planner import DeterministicPlanner, Planner, planner_kind
from graphs.resume import recheck
from investigator.checkpoints import open_checkpointer
from investigator.indexes import CaseIndexes
from investigator.report import Report
from investigator.runs import Opened, Runs
from investigator.worker import Leases
from investigator.workspace import Workspace
from state import Frozen
from state.progress import Progress
from state.steps import PlanStep
from state.store import RunRow
from tools.index import release_readers
from tools.loaded import LoadedCase
from tools.observations import Observations
from tools.reader import FaultHook, Reader
from tools.retrieval import RetrievalTool


class RunResult(Frozen):
    run_id: str
    report: Report
    seconds: float


def recursion_limit(rounds: int) -> int:
    """LangGraph steps a loop of `rounds` rounds may take (five nodes a round, with room to spare)."""
    return rounds * 6 + 20


def loop_config(run_id: str, rounds: int) -> RunnableConfig:
    """The loop's LangGraph config: the run id is the thread; the recursion limit follows the budget."""
    return {"configurable": {"thread_id": run_id}, "recursion_limit": recursion_limit(rounds)}


def finish(chunks: Iterator[Any]) -> RunResult:
    """Drive to the end, chunks unread: the RunResult that comes last."""
    last = deque(chunks, maxlen=1)
    assert last and isinstance(last[0], RunResult)
    return last[0]


_FINISHED = object()
"""`_start_input`: the run had stopped, and nothing the re-check found reopens it."""


@dataclass(frozen=True)
class Driver:
    """Drives runs of `workspace` over the case indexes, holding them through `leases`."""

    workspace: Workspace
    indexes: CaseIndexes
    runs: Runs
    leases: Leases
    planner: Planner
    progress: Progress
    fault: FaultHook | None = None
    crash: CrashPoint | None = None

    def start(self, case_dir: Path, retrieval: str, run_id: str | None,
              stream_mode: StreamMode | list[StreamMode] | None = None) -> Iterator[Any]:
        """Open a new run of the case and drive it from its first round (see `drive`)."""
        opened = self.runs.open(case_dir, retrieval, run_id)
        yield from self.drive(opened.run, fresh=True, opened=opened, stream_mode=stream_mode)

    def resume(self, run_id: str) -> RunResult:
        """Drive a run again from its last checkpoint, unless it waits for a grant still missing."""
        run = self.workspace.store.run(run_id)
        self.runs.check_resumable(run)
        return finish(self.drive(run, fresh=False))

    def drive_claimed(self, run: RunRow) -> RunResult:
        """Drive a run the worker found free (a run set aside by a take-over stays aside)."""
        return finish(self.drive(run, fresh=False, asked=False))

    def drive(self, run: RunRow, *, fresh: bool, asked: bool = True, opened: Opened | None = None,
              stream_mode: StreamMode | list[StreamMode] | None = None) -> Iterator[Any]:
        """Hold the run and drive it to a stop; yields LangGraph's chunks in `stream_mode` (none
        when it is None), then the RunResult. `opened` is a run `Runs.open` just created (else
        the run's case is loaded again); `fresh` starts the loop from its first round; `asked`
        is False for the worker, which leaves a run quarantined by a take-over alone."""
        store = self.workspace.store
        with self._driving(run, asked=asked):
            if opened is None:
                opened = self.runs.reopen(run)
            t0 = time.perf_counter()
            deps = self.deps(opened.loaded, run, opened.tool)
            cfg = loop_config(run.run_id, opened.loaded.case.budgets.rounds)
            with open_checkpointer(self.workspace.settings) as saver:
                app = build_graph(deps, saver if self.crash is None else self.crash.watch(saver))
                start: Any = self._start_input(app, cfg, deps, fresh)
                if start is not _FINISHED:
                    store.update_run(run.run_id, status="running")
                    if stream_mode is None:
                        app.invoke(start, cfg, durability="sync")
                    else:
                        yield from app.stream(start, cfg, stream_mode=stream_mode, durability="sync")
            if start is _FINISHED:
                store.update_run(run.run_id, status="stopped", attempts=0, error=None)
            else:
                store.update_run(run.run_id, attempts=0, error=None)  # a clean drive: the failures in a row end
            result = RunResult(run_id=run.run_id, report=self.workspace.report(run.run_id),
                               seconds=round(time.perf_counter() - t0, 3))
        yield result  # the run released first: a caller that stops here leaves nothing held

    def _start_input(self, app: CompiledStateGraph, cfg: RunnableConfig, deps: Deps, fresh: bool) -> object:
        """What the loop is given: the first round, a grant's answer to its pause, None (go on from
        the last checkpoint), the reopened claims of a finished run, or `_FINISHED`."""
        snapshot = app.get_state(cfg)
        if fresh or not snapshot.values:
            return {"round": 0}
        check = recheck(deps, snapshot.values.get("round", 0))
        self.progress(f"resume {deps.run_id}: {check.reused} observations reused, "
                      f"{len(check.revoked)} revoked, {len(check.reanchored)} re-anchored, "
                      f"{len(check.stale)} stale; reopened: {', '.join(check.reopened) or 'none'}")
        if snapshot.interrupts:
            return Command(resume={"watermark": check.watermark})
        if snapshot.tasks:
            # killed mid-run: continue from the last checkpoint. Not `snapshot.next`: that leaves out a
            # task whose writes were saved before the kill, so a run killed in that gap looks finished
            return None
        if check.changed:
            return {"stop": None, "gap": None}  # finished, but the re-check reopened claims
        return _FINISHED

    @contextmanager
    def _driving(self, run: RunRow, *, asked: bool = True) -> Iterator[None]:
        """Hold the run while the body drives it; whatever stops the body early is written on the run:
        an error → `failed` (with the error, one more attempt; `quarantined` after `max_attempts` in a
        row), Ctrl-C/SIGTERM → `interrupted`; either way `resume` continues from the last checkpoint.
        The lease is released in every case (a generator closed early included)."""
        self.leases.hold(run, asked=asked)
        try:
            yield
        except KeyboardInterrupt as exc:
            self.leases.interrupted(run.run_id, exc)
            raise  # not reached: interrupted raises
        except Exception as exc:
            self.leases.failed(run.run_id, exc)
            raise
        finally:
            release_readers()
            self.leases.release(run.run_id)

    def deps(self, loaded: LoadedCase, run: RunRow, retrieval: RetrievalTool) -> Deps:
        """The loop's dependencies for one drive of the run, over the case loaded for it."""
        case, case_dir = loaded.case, loaded.case_dir
        path = self.indexes.index_path(case, case_dir)
        policy = self.workspace.policy(case, case_dir, run)
        return Deps(
            lease=self.leases.lease(run.run_id),
            loaded=loaded, run_id=run.run_id, store=self.workspace.store, retrieval=retrieval,
            observations=Observations(path), reader=Reader(case_dir, policy, fault=self.fault, ctx=loaded.ctx),
            policy=policy, registry=ReadableRegistry(loaded, policy), chunks=IndexChunks(path),
            planner=self._planner_for(run), progress=self.progress, crash=self.crash,
            tombstones=IndexTombstones(path),
        )

    def _planner_for(self, run: RunRow) -> Planner:
        """The planner the run was started with. An LLM run keeps its model on resume: the one this
        driver was given, else rebuilt from the run row (endpoint, model, budget; the API key
        from OPENAI_API_KEY), with the tokens its earlier steps spent counted against the budget."""
        if (run.planner or "deterministic") != "llm":
            return self.planner if planner_kind(self.planner) != "llm" else DeterministicPlanner()
        if planner_kind(self.planner) == "llm":
            planner = self.planner
        else:
            from graphs.llm_planner import rebuild

            planner = rebuild(json.loads(run.planner_json or "{}"), os.environ.get("OPENAI_API_KEY"), run.run_id)
        restore = getattr(planner, "restore", None)
        if restore is not None:
            restore([s.step for s in self.workspace.store.steps(run.run_id) if isinstance(s.step, PlanStep)])
        return planner
