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
from contextlib import contextmanager
from pathlib import Path

from graphs.build import build_graph
from graphs.deps import CrashPoint, Deps
from graphs.planner import DeterministicPlanner, Planner
from graphs.resume import recheck
from langgraph.types import Command
from investigator.checkpoints import open_checkpointer
from investigator.config import Settings
from investigator.failures import describe, store_error
from investigator.report import Report, build_report, write_report
from state._base import Frozen, content_hash
from state.case import Case, load_case
from state.errors import (
    ConfigError, Interrupted, InvestigatorError, RunFailed, RunStateError, StoreUnavailable,
)
from state.evidence import Evidence, Scope
from state.store import RunRow, Store
from tools.access import AccessPolicy
from tools.corpus import ParseContext, SourceDoc, load_manifest, load_sources
from tools.profile import load_profile
from tools.embedding import Embedder, MiniLMEmbedder
from tools.entities import EntityExtractor
from tools.index import (
    IndexInfo, build_index, corpus_fingerprint, index_fingerprint, pid_alive, reading, release_readers, remove_leftovers,
    tombstone, tombstoned,
)
from tools.observations import Observations
from tools.reader import FaultHook, Reader
from tools.retrieval import RetrievalTool

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


def parse_context(case: Case, case_dir: Path) -> ParseContext:
    return ParseContext(profile=load_profile(case.profile, where=str(Path(case_dir) / "case.yaml")),
                        year=case.window.start.year)


def load_case_and_sources(case_dir: Path) -> tuple[Case, list[SourceDoc], ParseContext]:
    """The case, its profile and its parsed sources; every problem is a CaseError."""
    case = load_case(case_dir)
    ctx = parse_context(case, case_dir)
    return case, load_sources(case_dir, load_manifest(case_dir), ctx), ctx


def validate_case(case_dir: Path) -> Case:
    """Validate `case.yaml`, the profile, the manifest and every source file; raises CaseError."""
    return load_case_and_sources(case_dir)[0]


class RunResult(Frozen):
    run_id: str
    report: Report
    seconds: float


class Investigator:
    """Public API: validate, index, run, resume, report. The CLI only wraps these."""

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None,
                 progress: Callable[[str], None] = _stderr, planner: Planner | None = None,
                 fault: FaultHook | None = None, crash: CrashPoint | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.embedder = embedder or MiniLMEmbedder()
        self.progress = progress
        self.planner = planner or DeterministicPlanner()
        self.fault = fault
        self.crash = crash
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:  # a SQLite file (and the workspace) appears with the first write, not a look-up
            self._store = Store.from_url(self.settings.resolved_store_url)
        return self._store

    # case and index ---------------------------------------------------------
    def validate(self, case_dir: Path) -> Case:
        return validate_case(case_dir)

    def index_path(self, case: Case) -> Path:
        return self.settings.index_dir(case.id) / "basic.duckdb"

    def _load(self, case_dir: Path) -> tuple[Case, list[SourceDoc]]:
        """The case and its parsed sources, validated once per public call."""
        case, docs, _ctx = load_case_and_sources(case_dir)
        return case, docs

    def index(self, case_dir: Path, *, force: bool = False) -> IndexInfo | None:
        """Build the shared chunk index when it is missing or stale; returns None when fresh."""
        case, docs = self._load(case_dir)
        return self._ensure_index(case, Path(case_dir), docs, force=force)

    def _ensure_index(self, case: Case, case_dir: Path, docs: list[SourceDoc], *,
                      force: bool = False) -> IndexInfo | None:
        path = self.index_path(case)
        remove_leftovers(path.parent)  # what a killed build left, even when the index in place is current
        if not force and index_fingerprint(path) == corpus_fingerprint(docs, tombstoned(path)):
            return None
        return build_index(case_dir, path, self.embedder, self.progress, docs=docs,
                           profile=parse_context(case, case_dir).profile)

    def graph_dir(self, case: Case) -> Path:
        return self.settings.index_dir(case.id) / "graph"

    def index_graph(self, case_dir: Path, *, force: bool = False):  # noqa: ANN201 - GraphBuildInfo | None
        """Build the GraphRAG index from the chunk index when missing or stale; None when fresh."""
        case, docs = self._load(case_dir)
        return self._ensure_graph(case, Path(case_dir), docs, EntityExtractor.from_sources(docs), force=force)

    def _ensure_graph(self, case: Case, case_dir: Path, docs: list[SourceDoc], extractor: EntityExtractor, *,
                      force: bool = False):  # noqa: ANN202 - GraphBuildInfo | None
        from tools.graph import build_case_graph, graph_is_fresh

        self._ensure_index(case, case_dir, docs)
        path, graph_dir = self.index_path(case), self.graph_dir(case)
        if not force and graph_is_fresh(path, graph_dir, self.embedder, extractor):
            return None
        self.progress(f"building the GraphRAG index of {case.id}")
        return build_case_graph(path, graph_dir, self.embedder, extractor, self.progress)

    def delete_source(self, case_dir: Path, source_id: str, reason: str = "deleted") -> None:
        """Tombstone a source: it is dropped from both indexes now and never recalled again."""
        case, docs = self._load(case_dir)
        case_dir = Path(case_dir)
        self._ensure_index(case, case_dir, docs)
        tombstone(self.index_path(case), source_id, reason)
        self._ensure_index(case, case_dir, docs, force=True)  # the fingerprint now excludes it
        if self.graph_dir(case).exists():
            self._ensure_graph(case, case_dir, docs, EntityExtractor.from_sources(docs))

    def retrieval(self, name: str, case: Case, case_dir: Path, docs: list[SourceDoc] | None = None,
                  extractor: EntityExtractor | None = None) -> RetrievalTool:
        """The named tool over the case's (fresh) indexes."""
        if name == "basic":
            from tools.basic import BasicRetrieval

            return BasicRetrieval(self.index_path(case), self.embedder)
        if name == "graph":
            from tools.graph import GraphRetrieval

            docs = docs if docs is not None else load_sources(case_dir)
            extractor = extractor or EntityExtractor.from_sources(docs)
            self._ensure_graph(case, Path(case_dir), docs, extractor)
            return GraphRetrieval(self.index_path(case), self.graph_dir(case), self.embedder, extractor)
        raise ConfigError(f"retrieval {name!r}: expected one of {', '.join(RETRIEVAL_TOOLS)}")

    # runs -------------------------------------------------------------------
    def _deps(self, case: Case, case_dir: Path, run: RunRow, retrieval: RetrievalTool,
              docs: list[SourceDoc] | None = None) -> Deps:
        path = self.index_path(case)
        policy = AccessPolicy(case_dir, case.principal, tuple(json.loads(run.grants)))

        def chunk_text(chunk_id: str) -> str | None:
            with reading(path) as con:
                row = con.execute("SELECT text FROM chunks WHERE chunk_id = ?", [chunk_id]).fetchone()
            return row[0] if row else None

        ttl = timedelta(seconds=self.settings.lease_seconds)

        def heartbeat() -> None:
            if not self.store.renew(run.run_id, self.worker_id, ttl):
                raise RunStateError(f"run {run.run_id!r}: lease lost to another worker; stopping here")

        ctx = parse_context(case, case_dir)
        docs = list(docs) if docs is not None else load_sources(case_dir, load_manifest(case_dir), ctx)
        registries: dict[str, EntityExtractor] = {}

        def registry() -> EntityExtractor:
            """Entity names and kinds from the sources the principal may read now (none from the others)."""
            access = policy.current()
            if access.watermark not in registries:
                registries.clear()
                registries[access.watermark] = EntityExtractor.from_sources(
                    [d for d in docs if access.can_read(d.id)], ctx.profile)
            return registries[access.watermark]

        return Deps(
            heartbeat=heartbeat,
            case=case, case_dir=Path(case_dir), run_id=run.run_id, store=self.store, retrieval=retrieval,
            observations=Observations(path), reader=Reader(case_dir, policy, fault=self.fault, ctx=ctx), policy=policy,
            profile=ctx.profile, registry=registry, chunk_text=chunk_text,
            planner=self.planner, progress=self.progress, crash=self.crash,
            deleted=lambda: frozenset(tombstoned(path)),
        )

    def _new_run_id(self, base: str) -> str:
        if not self.store.has_run(base):
            return base
        n = 2
        while self.store.has_run(f"{base}-{n}"):
            n += 1
        return f"{base}-{n}"

    def start(self, case_dir: Path, *, retrieval: str = "basic", run_id: str | None = None) -> RunResult:
        """Validate, index if needed, and run a new investigation to a stop reason."""
        case_dir = Path(case_dir)
        case, docs = self._load(case_dir)
        if retrieval not in RETRIEVAL_TOOLS:
            raise ConfigError(f"retrieval {retrieval!r}: expected one of {', '.join(RETRIEVAL_TOOLS)}")
        run_id = run_id or self._new_run_id(case.default_run_id)  # the store is checked before any index work
        if self.store.has_run(run_id):
            raise RunStateError(f"run {run_id!r} exists already: use `investigator resume {run_id}`")
        tool = self._prepare(case, case_dir, docs, retrieval)
        access = AccessPolicy(case_dir, case.principal).current()
        run = self.store.create_run(RunRow(  # held from the start: no worker picks it up before we drive it
            run_id=run_id, case_id=case.id, case_dir=str(case_dir.resolve()), retrieval=retrieval,
            principal_id=case.principal.id, rounds_limit=case.budgets.rounds, reads_limit=case.budgets.reads,
            watermark=access.watermark, owner=self.worker_id,
            lease_until=datetime.now(UTC) + timedelta(seconds=self.settings.lease_seconds)))

        def initial_evidence() -> None:
            for ie in case.initial_evidence:
                self.store.add_evidence(run_id, f"initial:{ie.id}", Evidence(
                    id=ie.id, kind="initial", source_id=f"case:{ie.origin}", source_kind="case", version=case.id,
                    revision=content_hash(ie.text), span=None, trust=ie.trust, text=ie.text,
                    scope=Scope(environment=case.subject.environment, service=case.subject.service),
                    claim_ids=(ie.claim,), watermark=access.watermark))
            self.progress(f"run {run_id}: {case.id} with {retrieval} retrieval as {case.principal.id}")

        return self._drive(run, fresh=True, loaded=(case, docs, tool), setup=initial_evidence)

    def resume(self, run_id: str) -> RunResult:
        """Continue a run from its last checkpoint after re-reading the current permissions
        (also a `failed`, `interrupted` or `quarantined` one: asking for it is trying it again)."""
        return self._drive(self.store.run(run_id), fresh=False)

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
                case, docs = self._load(case_dir)
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

    def history(self, run_id: str) -> list[dict]:
        """The run's checkpoints, oldest first: step, round, what the state held, and its size in bytes."""
        self.store.run(run_id)
        rows = []
        with open_checkpointer(self.settings) as saver:
            for tup in saver.list({"configurable": {"thread_id": run_id}}):
                values = tup.checkpoint.get("channel_values", {})
                gap = values.get("gap")
                stop = values.get("stop")
                _kind, blob = saver.serde.dumps_typed(tup.checkpoint)
                rows.append({
                    "step": tup.metadata.get("step"), "source": tup.metadata.get("source"),
                    "round": values.get("round"), "gap": f"{gap.action} → {gap.claim_id}" if gap else None,
                    "hits": len(values.get("hits") or []), "stop": stop.kind if stop else None,
                    "bytes": len(blob), "checkpoint_id": tup.config["configurable"]["checkpoint_id"],
                })
        return sorted(rows, key=lambda r: (r["step"] if r["step"] is not None else -2))

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

    def grant(self, run_id: str, groups: list[str]) -> RunRow:
        """Grant the run's principal more groups (answering `awaiting_permission`); `resume` continues."""
        run = self.store.run(run_id)
        granted = sorted(set(json.loads(run.grants)) | set(groups))
        return self.store.update_run(run_id, grants=json.dumps(granted))

    def report(self, run_id: str) -> Report:
        run = self.store.run(run_id)
        case = load_case(Path(run.case_dir))
        return build_report(case, run, self.store)

    def write(self, run_id: str, out: Path) -> list[Path]:
        return write_report(self.report(run_id), out)
