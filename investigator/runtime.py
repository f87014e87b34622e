"""The composition root: builds the tools and the loop for a case and runs, resumes, reports."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphs.build import build_graph
from graphs.deps import CrashPoint, Deps, IndexChunks, IndexTombstones, ReadableRegistry, StoreLease
from graphs.planner import DeterministicPlanner, Planner, planner_kind, planner_settings
from graphs.resume import recheck
from langgraph.types import Command
from investigator.checkpoints import open_checkpointer
from investigator.config import Settings
from investigator.failures import describe, store_error
from investigator.loading import (
    load_case_and_all_sources, parse_context, validate_case,
)
from investigator.report import Report
from investigator.report_files import write_report
from investigator.workspace import Workspace, _tombstones
from state import Frozen, checked_name, content_hash
from state.case import Case, load_case
from state.claims import StopReason
from state.errors import (
    ConfigError, Interrupted, InvestigatorError, RunFailed, RunStateError, StoreUnavailable,
)
from state.evidence import Evidence, Scope
from state.steps import PlanStep
from state.store import RunRow
from tools.access import AccessPolicy
from tools.corpus import SourceDoc, load_manifest, load_sources
from tools.embedding import Embedder, MiniLMEmbedder
from tools.entities import EntityExtractor
from tools.index import (
    IndexInfo, build_index, build_lock, corpus_fingerprint, index_meta, pid_alive, release_readers,
    remove_leftovers, tombstone, tombstoned,
)
from tools.observations import Observations
from tools.reader import FaultHook, Reader
from tools.retrieval import RetrievalTool

if TYPE_CHECKING:
    from tools.graph.casegraph import GraphBuildInfo

RETRIEVAL_TOOLS = ("basic", "graph")


def _stderr(msg: str) -> None:
    try:
        print(f"[investigator] {msg}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed or a broken pipe: progress is not worth a failed run
        pass


def _dead_local_worker(owner: str) -> bool:
    """A lease holder on this host whose process is gone (a worker elsewhere is waited out)."""
    host, _, rest = owner.partition(":")
    pid = rest.split(":", 1)[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return not pid_alive(int(pid))


class RunResult(Frozen):
    run_id: str
    report: Report
    seconds: float


class Investigator(Workspace):
    """Public API: validate, index, run, resume, report. The CLI only wraps these."""

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None,
                 progress: Callable[[str], None] = _stderr, planner: Planner | None = None,
                 fault: FaultHook | None = None, crash: CrashPoint | None = None) -> None:
        super().__init__(settings)
        self.embedder = embedder or MiniLMEmbedder()
        self.progress = progress
        self.planner = planner or DeterministicPlanner()
        self.fault = fault
        self.crash = crash
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"

    # case and index ---------------------------------------------------------
    def validate(self, case_dir: Path) -> Case:
        return validate_case(case_dir)

    def _load(self, case_dir: Path) -> tuple[Case, list[SourceDoc]]:
        """The case and its parsed sources, validated once per public call."""
        case, docs, _aside = self._load_all(case_dir)
        return case, docs

    def _load_all(self, case_dir: Path) -> tuple[Case, list[SourceDoc], list[SourceDoc]]:
        """The case, the sources it reads, and the untrusted ones left out (named on progress)."""
        case, docs, _ctx = load_case_and_all_sources(case_dir)
        aside = [d for d in docs if d.set_aside is not None]
        for d in aside:
            self.progress(f"left out untrusted source {d.id} ({d.entry.path}): {d.set_aside}")
        return case, [d for d in docs if d.set_aside is None], aside

    def _record_left_out(self, run_id: str, aside: list[SourceDoc]) -> None:
        """What this drive left out, for the report (a resume records it again: pages mend and break)."""
        self.store.set_left_out(run_id, [{"source_id": d.id, "path": str(d.entry.path), "problem": d.set_aside or ""}
                                         for d in aside])

    def index(self, case_dir: Path, *, force: bool = False) -> IndexInfo | None:
        """Build the shared chunk index when it is missing or stale; returns None when fresh."""
        case, docs = self._load(case_dir)
        return self._ensure_index(case, Path(case_dir), docs, force=force)

    def _building(self, case: Case, case_dir: Path, what: str) -> AbstractContextManager[None]:
        """The case folder's build lock: one process checks and builds its indexes at a time."""
        return build_lock(self.settings.index_dir(case.id, case_dir), self.progress, f"{what} of {case.id}")

    def _ensure_index(self, case: Case, case_dir: Path, docs: list[SourceDoc], *,
                      force: bool = False) -> IndexInfo | None:
        path = self.index_path(case, case_dir)
        profile = parse_context(case, case_dir).profile
        with self._building(case, case_dir, "the index"):
            gone = remove_leftovers(path.parent)  # what a killed build left, even when the index in place is current
            if gone:
                self.progress(f"removed what killed builds left in {path.parent}: {', '.join(gone)}")
            meta = index_meta(path) or {}
            if (not force and meta.get("embedder") == self.embedder.name
                    and meta.get("fingerprint") == corpus_fingerprint(docs, tombstoned(path), profile)):
                return None
            return build_index(case_dir, path, self.embedder, self.progress, docs=docs, profile=profile,
                               vectors_from=self._sibling_indexes(case, path))

    @staticmethod
    def _sibling_indexes(case: Case, path: Path) -> list[Path]:
        """Indexes of other folders with the same case id (copies, checkouts): their cached
        vectors are reused, never their chunks."""
        return sorted(p for p in path.parent.parent.glob(f"{case.id}-*/{path.name}") if p != path)

    def graph_dir(self, case: Case, case_dir: Path) -> Path:
        return self.settings.index_dir(case.id, case_dir) / "graph"

    def index_graph(self, case_dir: Path, *, force: bool = False) -> GraphBuildInfo | None:
        """Build the GraphRAG index from the chunk index when missing or stale; None when fresh."""
        case, docs = self._load(case_dir)
        extractor = EntityExtractor.from_sources(docs, parse_context(case, Path(case_dir)).profile)
        return self._ensure_graph(case, Path(case_dir), docs, extractor, force=force)

    def _ensure_graph(self, case: Case, case_dir: Path, docs: list[SourceDoc], extractor: EntityExtractor, *,
                      force: bool = False) -> GraphBuildInfo | None:
        from tools.graph import build_case_graph, graph_is_fresh, readerships
        from tools.graph.external import import_graph, imported_from

        with self._building(case, case_dir, "the GraphRAG index"):
            self._ensure_index(case, case_dir, docs)
            path, graph_dir = self.index_path(case, case_dir), self.graph_dir(case, case_dir)
            origin = imported_from(graph_dir)
            if origin is not None and not force:  # a graph the user brought is kept; re-imported when the chunks changed
                if graph_is_fresh(path, graph_dir):
                    return None
                if Path(origin).is_dir():
                    self.progress(f"the chunk index of {case.id} changed since its graph was imported: "
                                  f"importing {origin} again")
                    return import_graph(Path(origin), graph_dir, path, self.embedder, self.progress)
                self.progress(f"{origin}, the imported graph of {case.id}, is gone: building the graph from the case")
            readers = readerships(docs)
            if not force and graph_is_fresh(path, graph_dir, self.embedder, extractor, readers):
                return None
            self.progress(f"building the GraphRAG index of {case.id}")
            return build_case_graph(path, graph_dir, self.embedder, extractor, self.progress, readerships=readers)

    def import_graph(self, case_dir: Path, src: Path) -> GraphBuildInfo:
        """Use a graphrag output folder (built from the case's chunks) as the case's graph index."""
        from tools.graph.external import import_graph

        case, docs = self._load(case_dir)
        case_dir = Path(case_dir)
        with self._building(case, case_dir, "the GraphRAG index"):
            self._ensure_index(case, case_dir, docs)
            return import_graph(Path(src), self.graph_dir(case, case_dir), self.index_path(case, case_dir),
                                self.embedder, self.progress)

    def delete_source(self, case_dir: Path, source_id: str, reason: str = "deleted") -> bool:
        """Tombstone a source: it is dropped from both indexes now and never recalled again.

        Returns False when it was tombstoned already (nothing changes). A source id the manifest
        does not name is a ConfigError, and nothing is written."""
        case, docs = self._load(case_dir)
        case_dir = Path(case_dir)
        with self._building(case, case_dir, "the index"):
            if source_id in tombstoned(self.index_path(case, case_dir)):
                return False
            if source_id not in {d.id for d in docs}:
                known = sorted(d.id for d in docs)
                raise ConfigError(f"{case_dir / 'sources.yaml'}: sources: no source with id {source_id!r} "
                                  f"(expected one of {', '.join(known[:12])}{', …' if len(known) > 12 else ''})")
            self._ensure_index(case, case_dir, docs)
            tombstone(self.index_path(case, case_dir), source_id, reason)
            self._ensure_index(case, case_dir, docs, force=True)  # the fingerprint now excludes it
            if self.graph_dir(case, case_dir).exists():
                self._ensure_graph(case, case_dir, docs,
                                   EntityExtractor.from_sources(docs, parse_context(case, case_dir).profile))
        return True

    def retrieval(self, name: str, case: Case, case_dir: Path, docs: list[SourceDoc] | None = None,
                  extractor: EntityExtractor | None = None) -> RetrievalTool:
        """The named tool over the case's (fresh) indexes."""
        if name == "basic":
            from tools.basic import BasicRetrieval

            return BasicRetrieval(self.index_path(case, case_dir), self.embedder)
        if name == "graph":
            from tools.graph import GraphRetrieval

            docs = docs if docs is not None else load_sources(case_dir)
            extractor = extractor or EntityExtractor.from_sources(docs)
            self._ensure_graph(case, Path(case_dir), docs, extractor)
            return GraphRetrieval(self.index_path(case, case_dir), self.graph_dir(case, case_dir), self.embedder,
                                  extractor)
        raise ConfigError(f"retrieval {name!r}: expected one of {', '.join(RETRIEVAL_TOOLS)}")

    # runs -------------------------------------------------------------------
    def _deps(self, case: Case, case_dir: Path, run: RunRow, retrieval: RetrievalTool,
              docs: list[SourceDoc] | None = None) -> Deps:
        path = self.index_path(case, case_dir)
        policy = self._policy(case, case_dir, run)
        ctx = parse_context(case, case_dir)
        docs = list(docs) if docs is not None else load_sources(case_dir, load_manifest(case_dir), ctx)
        return Deps(
            lease=StoreLease(self.store, run.run_id, self.worker_id, timedelta(seconds=self.settings.lease_seconds)),
            case=case, case_dir=Path(case_dir), run_id=run.run_id, store=self.store, retrieval=retrieval,
            observations=Observations(path), reader=Reader(case_dir, policy, fault=self.fault, ctx=ctx), policy=policy,
            profile=ctx.profile, registry=ReadableRegistry(docs, policy, ctx.profile), chunks=IndexChunks(path),
            planner=self._planner_for(run), progress=self.progress, crash=self.crash,
            tombstones=IndexTombstones(path),
        )

    def _planner_for(self, run: RunRow) -> Planner:
        """The planner the run was started with. An LLM run keeps its model on resume: the one this
        Investigator was given, else rebuilt from the run row (endpoint, model, budget; the API key
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
            restore([s.step for s in self.store.steps(run.run_id) if isinstance(s.step, PlanStep)])
        return planner

    def _new_run_id(self, base: str) -> str:
        if not self.store.has_run(base):
            return base
        n = 2
        while self.store.has_run(f"{base}-{n}"):
            n += 1
        return f"{base}-{n}"

    def start(self, case_dir: Path, *, retrieval: str = "basic", run_id: str | None = None) -> RunResult:
        """Validate, index if needed, and run a new investigation to a stop reason."""
        case, _case_dir, run, tool, docs = self._open_run(case_dir, retrieval, run_id)
        return self._drive(run, fresh=True, loaded=(case, docs, tool))

    def _open_run(self, case_dir: Path, retrieval: str, run_id: str | None,
                  ) -> tuple[Case, Path, RunRow, RetrievalTool, list[SourceDoc]]:
        """Validate the case, make its indexes fresh and create the run row with its initial evidence."""
        if run_id is not None:
            checked_name(run_id, "run_id")  # it becomes a folder name (the report's): a name, never a path
        case_dir = Path(case_dir)
        case, docs, aside = self._load_all(case_dir)
        if retrieval not in RETRIEVAL_TOOLS:
            raise ConfigError(f"retrieval {retrieval!r}: expected one of {', '.join(RETRIEVAL_TOOLS)}")
        if run_id is not None and self.store.has_run(run_id):  # a named run is checked before any index work
            raise RunStateError(f"run {run_id!r} exists already: use `investigator resume {run_id}`")
        tool = self._prepare(case, case_dir, docs, retrieval)
        access = AccessPolicy(case_dir, case.principal, deleted=_tombstones(self.index_path(case, case_dir))).current()
        run = self._create_held(case, case_dir, retrieval, run_id, access.watermark)
        run_id = run.run_id
        self._record_left_out(run_id, aside)
        for ie in case.initial_evidence:
            self.store.add_evidence(run_id, f"initial:{ie.id}", Evidence(
                id=ie.id, kind="initial", source_id=f"case:{ie.origin}", source_kind="case", version=case.id,
                revision=content_hash(ie.text), span=None, trust=ie.trust, text=ie.text,
                scope=Scope(environment=case.subject.environment, service=case.subject.service),
                claim_ids=(ie.claim,), watermark=access.watermark))
        self.progress(f"run {run_id}: {case.id} with {retrieval} retrieval as {case.principal.id}"
                      + (f", {planner_kind(self.planner)} planner" if planner_kind(self.planner) != "deterministic" else ""))
        return case, case_dir, run, tool, docs

    def _create_held(self, case: Case, case_dir: Path, retrieval: str, run_id: str | None,
                     watermark: str) -> RunRow:
        """Create the run row, held by this driver from the start (no worker picks it up first). A
        default id is numbered after the runs that exist when the row is written, so two first runs
        of one case (the second waited for the first's index build) get two runs."""
        for _ in range(1000):
            rid = run_id or self._new_run_id(case.default_run_id)
            run = self.store.create_run(RunRow(
                run_id=rid, case_id=case.id, case_dir=str(case_dir.resolve()), retrieval=retrieval,
                principal_id=case.principal.id, rounds_limit=case.budgets.rounds, reads_limit=case.budgets.reads,
                watermark=watermark, owner=self.worker_id,
                lease_until=datetime.now(UTC) + timedelta(seconds=self.settings.lease_seconds),
                planner=planner_kind(self.planner),
                planner_json=json.dumps(planner_settings(self.planner))
                if planner_kind(self.planner) != "deterministic" else None))
            if run.owner == self.worker_id:
                return run
            if run_id is not None:  # created by someone else meanwhile
                raise RunStateError(f"run {run_id!r} exists already: use `investigator resume {run_id}`")
        raise RunStateError(f"no free run id after {case.default_run_id!r}: name one with --run-id")

    def resume(self, run_id: str) -> RunResult:
        """Continue a run from its last checkpoint after re-reading the current permissions.

        A run paused `awaiting_permission` continues only when something it waits for became
        readable (a grant, or the manifest); otherwise RunStateError, and nothing is spent
        (also a `failed`, `interrupted` or `quarantined` one: asking for it is trying it again)."""
        run = self.store.run(run_id)
        if run.status == "awaiting_permission":
            case_dir = Path(run.case_dir)
            self._still_paused(load_case(case_dir), case_dir, run)
        return self._drive(run, fresh=False)

    def _prepare(self, case: Case, case_dir: Path, docs: list[SourceDoc], retrieval: str) -> RetrievalTool:
        """Fresh indexes and the tool, from sources parsed once."""
        self._ensure_index(case, case_dir, docs)
        extractor = EntityExtractor.from_sources(docs, parse_context(case, case_dir).profile)
        return self.retrieval(retrieval, case, case_dir, docs, extractor)

    def _drive(self, run: RunRow, *, fresh: bool, asked: bool = True,
               loaded: tuple[Case, list[SourceDoc], RetrievalTool] | None = None,
               setup: Callable[[], None] | None = None) -> RunResult:
        """Hold the run and drive it to a stop (see `_driving` for what an early stop leaves)."""
        with self._driving(run, asked=asked):
            case_dir = Path(run.case_dir)
            if loaded is None:
                case, docs, aside = self._load_all(case_dir)
                self._record_left_out(run.run_id, aside)
                tool = self._prepare(case, case_dir, docs, run.retrieval)
            else:
                case, docs, tool = loaded
            if setup is not None:
                setup()
            return self._drive_held(case, case_dir, run, tool, docs, fresh=fresh, t0=time.perf_counter())

    @contextmanager
    def _driving(self, run: RunRow, *, asked: bool = True) -> Iterator[None]:
        """Hold the run while the body drives it; whatever stops the body early is written on the run:
        an error → `failed` (with the error, one more attempt; `quarantined` after `max_attempts` in a
        row), Ctrl-C/SIGTERM → `interrupted`; either way `resume` continues from the last checkpoint.
        The lease is released in every case (a generator closed early included)."""
        self._hold(run, asked=asked)
        try:
            yield
        except KeyboardInterrupt as exc:
            self._interrupted(run.run_id, exc)
            raise  # not reached: _interrupted raises
        except Exception as exc:
            self._failed(run.run_id, exc)
            raise
        finally:
            release_readers()
            try:
                self.store.release(run.run_id, self.worker_id)
            except Exception as exc:  # noqa: BLE001 - the store is gone; the lease runs out by itself
                self.progress(f"run {run.run_id}: could not release it ({describe(exc)}); "
                              f"its lease ends in {self.settings.lease_seconds:g} s")

    def _hold(self, run: RunRow, *, asked: bool = True) -> None:
        """Take the run's lease (or take it over from a dead worker on this host); a driver that
        vanished mid-run counts as a failed attempt, so a run that kills its worker is set aside too."""
        ttl = timedelta(seconds=self.settings.lease_seconds)
        before = self.store.run(run.run_id)
        if self.store.acquire(run.run_id, self.worker_id, ttl):
            vanished = before.owner if before.owner not in (None, self.worker_id) else None
        else:
            held = self.store.run(run.run_id)
            if not (held.owner and _dead_local_worker(held.owner)
                    and self.store.take_over(run.run_id, held.owner, self.worker_id, ttl)):
                raise RunStateError(f"run {run.run_id!r} is held by {held.owner} until {held.lease_until}")
            vanished = held.owner
        if vanished and before.status == "running":
            row = self.store.record_failure(run.run_id, self.worker_id,
                                            f"the worker {vanished} stopped while driving it (killed or lost)",
                                            self.settings.max_attempts)
            self.progress(f"run {run.run_id}: taken over from {vanished}, which stopped while driving it"
                          + (f" (attempt {row.attempts} of {self.settings.max_attempts})" if row else ""))
            if row is not None and row.status == "quarantined" and not asked:
                self.store.release(run.run_id, self.worker_id)
                raise RunStateError(f"run {run.run_id!r} set aside (quarantined) after {row.attempts} failed "
                                    f"attempts: {row.error}; `investigator resume {run.run_id}` tries it again")

    def _failed(self, run_id: str, exc: Exception) -> None:
        """Record an error that stopped a drive; re-raise it as one clear line (RunFailed for a foreign one)."""
        line = describe(exc)
        try:
            row = self.store.record_failure(run_id, self.worker_id, line, self.settings.max_attempts)
        except Exception:  # noqa: BLE001 - the store itself failed: nothing more can be written
            row = None
        if row is None:  # the lease was lost to another worker (theirs now), or the store is unreachable
            if isinstance(exc, InvestigatorError):
                return
            if store_error(exc):
                raise StoreUnavailable(f"run {run_id!r}: the store stopped answering ({line}); the run stays held "
                                       f"until its lease ends, then `resume` or a worker continues it") from exc
            raise RunFailed(f"run {run_id!r} stopped: {line}") from exc
        where = (f"recorded as {row.status} (attempt {row.attempts} of {self.settings.max_attempts}"
                 + ("; `work` sets it aside" if row.status == "quarantined" else "")
                 + f"); `investigator resume {run_id}` retries it")
        if isinstance(exc, InvestigatorError):
            exc.add_note(f"— run {run_id!r} {where}")
            return
        raise RunFailed(f"run {run_id!r} failed: {line}; {where}") from exc

    def _interrupted(self, run_id: str, exc: KeyboardInterrupt) -> None:
        signum = getattr(exc, "signum", signal.SIGINT)
        name = signal.Signals(signum).name
        try:
            self.store.record_interrupt(run_id, self.worker_id, f"interrupted by {name}")
        except Exception as err:  # noqa: BLE001 - the lease runs out by itself
            self.progress(f"run {run_id}: could not record the interrupt ({describe(err)})")
        raise Interrupted(f"run {run_id!r} interrupted ({name}); `investigator resume {run_id}` continues it "
                          f"from its last checkpoint", signum) from exc

    def _drive_held(self, case: Case, case_dir: Path, run: RunRow, tool: RetrievalTool,
                    docs: list[SourceDoc], *, fresh: bool, t0: float) -> RunResult:
        deps = self._deps(case, case_dir, run, tool, docs)
        cfg = {"configurable": {"thread_id": run.run_id}, "recursion_limit": case.budgets.rounds * 6 + 20}
        with open_checkpointer(self.settings) as saver:
            app = build_graph(deps, saver)
            snapshot = app.get_state(cfg)
            if fresh or not snapshot.values:
                start: object = {"round": 0}
            else:
                check = recheck(deps, snapshot.values.get("round", 0))
                self.progress(f"resume {run.run_id}: {check.reused} observations reused, "
                              f"{len(check.revoked)} revoked, {len(check.reanchored)} re-anchored, "
                              f"{len(check.stale)} stale; reopened: {', '.join(check.reopened) or 'none'}")
                if snapshot.interrupts:
                    start = Command(resume={"watermark": check.watermark})
                elif snapshot.next:
                    start = None  # crashed or killed mid-run: continue from the last checkpoint
                elif check.changed:
                    start = {"stop": None, "gap": None}  # finished, but the re-check reopened claims
                else:
                    self.store.update_run(run.run_id, status="stopped", attempts=0, error=None)
                    return RunResult(run_id=run.run_id, report=self.report(run.run_id),
                                     seconds=round(time.perf_counter() - t0, 3))
            self.store.update_run(run.run_id, status="running")
            app.invoke(start, cfg, durability="sync")
        self.store.update_run(run.run_id, attempts=0, error=None)  # a clean drive: the failures in a row end
        return RunResult(run_id=run.run_id, report=self.report(run.run_id), seconds=round(time.perf_counter() - t0, 3))

    def stream(self, case_dir: Path, *, retrieval: str = "basic", run_id: str | None = None,
               stream_mode: str | list[str] = "updates") -> Iterator[Any]:
        """Run a new investigation like `start`, yielding as the loop goes.

        Yields LangGraph's own stream chunks (`stream_mode` is any of its modes, or a list of
        them, then chunks are `(mode, chunk)` pairs): with `"updates"`, one `{node: update}` per
        node that finished (and `{"__interrupt__": ...}` when the run pauses for permission).
        The last item is the `RunResult` with the report. Closing the generator early releases
        the run; it stays resumable from its last checkpoint."""
        case, case_dir, run, tool, docs = self._open_run(case_dir, retrieval, run_id)
        t0 = time.perf_counter()
        with self._driving(run):  # an error is recorded (failed), Ctrl-C leaves it interrupted, the lease released
            deps = self._deps(case, case_dir, run, tool, docs)
            with open_checkpointer(self.settings) as saver:
                app = build_graph(deps, saver)
                self.store.update_run(run.run_id, status="running")
                yield from app.stream({"round": 0}, self._loop_config(case, run), stream_mode=stream_mode,
                                      durability="sync")
            self.store.update_run(run.run_id, attempts=0, error=None)  # a clean drive: the failures in a row end
        yield RunResult(run_id=run.run_id, report=self.report(run.run_id), seconds=round(time.perf_counter() - t0, 3))

    @staticmethod
    def _loop_config(case: Case, run: RunRow) -> dict[str, Any]:
        """The loop's LangGraph config: the run id is the thread; the recursion limit follows the budget."""
        return {"configurable": {"thread_id": run.run_id}, "recursion_limit": case.budgets.rounds * 6 + 20}

    def work(self, *, once: bool = False, poll: float = 2.0, stop_after: float | None = None) -> list[str]:
        """Drive runs nobody holds (new, crashed, interrupted, failed, or whose worker died) until none
        is left. A run that fails is recorded and skipped (the others go on); after `max_attempts`
        failures in a row it is quarantined and no longer picked up."""
        done: list[str] = []
        started = time.monotonic()
        while True:
            # free, expired, or held by a worker on this host that is gone (taken over at once)
            for run_id in self.store.claimable(_dead_local_worker):
                try:
                    self._drive(self.store.run(run_id), fresh=False, asked=False)
                    done.append(run_id)
                except RunStateError as exc:  # taken by another worker meanwhile, set aside, or nothing to do
                    self.progress(str(exc))
                except Exception as exc:  # recorded on the run; the queue moves on
                    if isinstance(exc, StoreUnavailable) or store_error(exc):
                        raise  # the store itself is gone: no run can be driven
                    self.progress(describe(exc))
            if once or (stop_after is not None and time.monotonic() - started > stop_after):
                return done
            time.sleep(poll)

    def _still_paused(self, case: Case, case_dir: Path, run: RunRow) -> None:
        """Raise RunStateError when none of the sources a paused run waits for is readable yet."""
        stop = StopReason.model_validate_json(run.stop_json) if run.stop_json else None
        waiting = stop.sources if stop is not None else ()
        access = self._policy(case, case_dir, run).current()
        if not waiting or any(access.can_read(s) or access.is_deleted(s) for s in waiting):
            return
        who = "; ".join(f"{s} (readable by {', '.join(access.unlocking_groups(s)) or 'no group'})" for s in waiting)
        first = next((g for s in waiting for g in access.unlocking_groups(s)), "GROUP")
        raise RunStateError(f"run {run.run_id!r} is still awaiting permission for {who}: nothing was resumed and no "
                            f"budget spent; `investigator grant {run.run_id} --group {first}` first")

    def write(self, run_id: str, out: Path) -> list[Path]:
        return write_report(self.report(run_id), out)
