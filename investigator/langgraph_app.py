"""The investigation loop for LangGraph Studio and `langgraph dev` (langgraph.json → `make_graph`).

`make_graph(config)` is a graph factory: the platform calls it with each run's config and
supplies the checkpointer and the thread. It compiles the CLI's loop (`graphs.build.loop_graph`)
with each node bound, when it runs, to the investigation of its thread. The factory itself
does no I/O (the platform calls it on its event loop, also just to draw the graph).

Where things land:

* the loop's store-side effects — the run row, evidence, reads, decisions, the step log, the
  lease — go to our store as with the CLI: the workspace `INVESTIGATOR_HOME` (or
  `INVESTIGATOR_STORE_URL`), so `investigator runs / show / history` see Studio runs;
* the checkpoints are the platform's (in memory under `langgraph dev`);
* when the loop stops, the final state carries `report`: status, stop reason, the verdict of
  every claim and the paths of report.json / .md / .html, written to
  `<workspace>/reports/<run id>/`.

Which case and tool: the input (`{"case_dir": ..., "retrieval": ...}`), else the configurable
values of the same names, else `INVESTIGATOR_CASE` / `INVESTIGATOR_RETRIEVAL`, else
`INVESTIGATOR_STUDIO_CASE` (langgraph.json sets it to the shipped reference case) and `basic`.
A relative case folder is taken from the server's working directory. One thread is one run:
its id is the case's run id, `-`, the last 12 hex digits of the thread id; another input on
the same thread continues that run (it drives the run through the same `Investigator` helpers
as `start` and `resume`). After `awaiting_permission`, grant with
`investigator grant RUN_ID --group G` and resume the thread (Studio's Continue, or
`Command(resume=...)`): the grant is seen and the run's evidence re-checked as `resume` does.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from graphs import nodes
from graphs.build import loop_graph
from graphs.deps import Deps
from graphs.loop_state import LoopState
from graphs.resume import recheck
from investigator.config import Settings
from investigator.driver import recursion_limit
from investigator.loading import load_case_folder
from investigator.runtime import RETRIEVAL_TOOLS, Investigator
from state.case import Budgets, load_case
from state.errors import ConfigError, RunStateError
from state.store import RunRow

MAX_ROUNDS = next(m.le for m in Budgets.model_fields["rounds"].metadata if getattr(m, "le", None) is not None)
RECURSION_LIMIT = recursion_limit(MAX_ROUNDS)
"""The platform's default (25 steps) is five rounds; the case budget is what bounds the loop."""


class StudioInput(TypedDict, total=False):
    """What a run may be given (Studio's input form); both optional."""

    case_dir: str
    """The case folder (else configurable `case_dir`, INVESTIGATOR_CASE, INVESTIGATOR_STUDIO_CASE)."""
    retrieval: str
    """`basic` or `graph` (else configurable `retrieval`, INVESTIGATOR_RETRIEVAL, `basic`)."""


class StudioState(LoopState, StudioInput, total=False):
    run_id: str
    """Our run id (the store's), set by the first plan."""
    report: dict
    """Set when the loop stops: run_id, status, stop, detail, verdicts {claim: verdict}, files."""


@dataclass
class _Bound:
    """One thread's investigation: the run in our store and the loop's dependencies for it."""

    inv: Investigator
    run_id: str
    deps: Deps
    grants: str
    held: bool = False

    def hold(self) -> None:
        if not self.held:
            self.inv.leases.hold(self.inv.store.run(self.run_id))
            self.held = True

    def release(self) -> None:
        if self.held:
            self.inv.store.release(self.run_id, self.inv.worker_id)
            self.held = False

    def finish(self) -> dict[str, Any]:
        """Write the report to the workspace and describe it for the final state."""
        report = self.inv.report(self.run_id)
        files = self.inv.write(self.run_id, self.inv.settings.workspace / "reports" / self.run_id)
        self.release()
        return {"run_id": self.run_id, "status": report.status, "stop": report.stop.kind if report.stop else None,
                "detail": report.stop.detail if report.stop else "",
                "verdicts": {c.id: c.verdict for c in report.claims}, "files": [str(p.resolve()) for p in files]}


_LOCK = threading.Lock()
_INVESTIGATORS: dict[str, Investigator] = {}
_BOUND: dict[str, _Bound] = {}
_THREADS: dict[str, str] = {}


def _investigator() -> Investigator:
    """One Investigator per workspace and store in this server process (the embedder loads once)."""
    settings = Settings.from_env()
    key = f"{settings.workspace.resolve()}|{settings.resolved_store_url}"
    if key not in _INVESTIGATORS:
        _INVESTIGATORS[key] = Investigator(settings)
    return _INVESTIGATORS[key]


def thread_tag(thread: str) -> str:
    """The thread's part of a run id: its last 12 hex digits (the random part of a UUID v4 or v7;
    the platform's v7 ids share their leading, time-ordered digits)."""
    return thread.replace("-", "")[-12:]


def _choice(state: StudioState, config: RunnableConfig, key: str, env: tuple[str, ...], default: str | None) -> str | None:
    conf = (config or {}).get("configurable") or {}
    value = state.get(key) or conf.get(key) or next((os.environ[e] for e in env if os.environ.get(e)), None) or default
    return None if value is None else str(value)


def _bind_run(state: StudioState, config: RunnableConfig) -> _Bound:
    """The investigation of this thread: created on its first node, re-attached after a restart or a grant."""
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    if not thread:
        raise ConfigError("the investigation graph needs a thread (configurable thread_id): one thread is one run")
    case_dir = _choice(state, config, "case_dir", ("INVESTIGATOR_CASE", "INVESTIGATOR_STUDIO_CASE"), None)
    if not case_dir:
        raise ConfigError("no case: give case_dir in the input or the configurable values, or set INVESTIGATOR_CASE")
    retrieval = _choice(state, config, "retrieval", ("INVESTIGATOR_RETRIEVAL",), "basic")
    if retrieval not in RETRIEVAL_TOOLS:
        raise ConfigError(f"retrieval {retrieval!r}: expected one of {', '.join(RETRIEVAL_TOOLS)}")
    with _LOCK:
        inv = _investigator()
        run_id = _THREADS.get(str(thread))
        if run_id is None:
            run_id = f"{load_case(Path(case_dir)).default_run_id}-{thread_tag(str(thread))}"
        row = inv.store.run(run_id) if inv.store.has_run(run_id) else None
        if row is not None and Path(row.case_dir) != Path(case_dir).resolve():
            raise RunStateError(f"thread {thread} is run {run_id!r} of {row.case_dir}, not of {case_dir}: use a new thread")
        bound = _BOUND.get(run_id)
        if bound is None or row is None or row.grants != bound.grants:
            bound = _open(inv, Path(case_dir), retrieval, run_id, row, state)
            _BOUND[run_id], _THREADS[str(thread)] = bound, run_id
    bound.hold()
    return bound


def _open(inv: Investigator, case_dir: Path, retrieval: str, run_id: str, row: RunRow | None,
          state: StudioState) -> _Bound:
    if row is None:
        opened = inv.runs.open(case_dir, retrieval, run_id)
        deps = inv.driver.deps(opened.loaded, opened.run, opened.tool)
        return _Bound(inv=inv, run_id=run_id, deps=deps, grants=opened.run.grants)
    loaded = load_case_folder(case_dir, inv.progress)
    deps = inv.driver.deps(loaded, row, inv.indexes.prepare(loaded, row.retrieval))
    bound = _Bound(inv=inv, run_id=run_id, deps=deps, grants=row.grants)
    if state.get("round"):  # the run has history: re-check it against the current access, as `resume` does
        bound.hold()
        check = recheck(deps, state.get("round", 0))
        inv.progress(f"resume {run_id}: {check.reused} observations reused, {len(check.revoked)} revoked, "
                     f"{len(check.reanchored)} re-anchored, {len(check.stale)} stale")
    return bound


def _node(name: str) -> Callable[..., dict[str, Any]]:
    fn = getattr(nodes, name)

    def node(state: StudioState, config: RunnableConfig) -> dict[str, Any]:
        bound = _bind_run(state, config)
        try:
            out = dict(fn(state, deps=bound.deps) or {})
        except BaseException:  # a pause for permission (GraphBubbleUp) or a failure: let go of the run
            bound.release()
            raise
        if name == "plan":
            out["run_id"] = bound.run_id
        if name == "decide" and out.get("stop") is not None:
            out["report"] = bound.finish()
        return out

    node.__name__ = name
    return node


def make_graph(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """The loop as the platform runs it (langgraph.json: `./investigator/langgraph_app.py:make_graph`)."""
    graph = loop_graph(_node, StudioState, input_schema=StudioInput).compile(name="investigator")
    return graph.with_config(recursion_limit=RECURSION_LIMIT)
