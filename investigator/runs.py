"""Opening runs: a case loaded for a run, a new run row created held by its driver (with its
id and initial evidence), a run reopened for another drive, and whether a paused run may go on.

`Runs` is a frozen value; it may import `state/`, `tools/`, `graphs.planner` (what the row
records of the planner), `investigator.workspace`, `investigator.loading`, `investigator.manifests` and
`investigator.indexes`, nothing else of ours.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graphs.planner import Planner, planner_kind, planner_settings
from investigator.indexes import CaseIndexes, check_tool
from investigator.loading import load_case_folder
from investigator.manifests import ManifestOnDisk
from investigator.workspace import Workspace, _tombstones
from state import checked_name, content_hash
from state.case import Case, load_case
from state.claims import StopReason
from state.errors import RunStateError
from state.evidence import Evidence, Scope
from state.progress import Progress
from state.store import RunRow
from tools.access import AccessPolicy
from tools.corpus import SourceDoc
from tools.loaded import LoadedCase
from tools.retrieval import RetrievalTool


@dataclass(frozen=True)
class Opened:
    """A run ready to drive: its case loaded for this drive, its row and retrieval tool."""

    loaded: LoadedCase
    run: RunRow
    tool: RetrievalTool


@dataclass(frozen=True)
class Runs:
    """Run rows in `workspace`'s store, created and held by `worker_id`."""

    workspace: Workspace
    indexes: CaseIndexes
    planner: Planner
    worker_id: str
    progress: Progress

    def _record_left_out(self, run_id: str, aside: tuple[SourceDoc, ...]) -> None:
        """What this drive left out, for the report (a resume records it again: pages mend and break)."""
        self.workspace.store.set_left_out(run_id, [{"source_id": d.id, "path": str(d.entry.path),
                                                    "problem": d.set_aside or ""} for d in aside])

    def open(self, case_dir: Path, retrieval: str, run_id: str | None) -> Opened:
        """Validate the case, make its indexes fresh and create the run row with its initial evidence."""
        if run_id is not None:
            checked_name(run_id, "run_id")  # it becomes a folder name (the report's): a name, never a path
        store = self.workspace.store
        case_dir = Path(case_dir)
        loaded = load_case_folder(case_dir, self.progress)
        case = loaded.case
        check_tool(retrieval)
        if run_id is not None and store.has_run(run_id):  # a named run is checked before any index work
            raise RunStateError(f"run {run_id!r} exists already: use `investigator resume {run_id}`")
        tool = self.indexes.prepare(loaded, retrieval)
        access = AccessPolicy(ManifestOnDisk(case_dir), case.principal,
                              deleted=_tombstones(self.indexes.index_path(case, case_dir))).current()
        run = self._create_held(case, case_dir, retrieval, run_id, access.watermark)
        self._record_left_out(run.run_id, loaded.aside)
        for ie in case.initial_evidence:
            store.add_evidence(run.run_id, f"initial:{ie.id}", Evidence(
                id=ie.id, kind="initial", source_id=f"case:{ie.origin}", source_kind="case", version=case.id,
                revision=content_hash(ie.text), span=None, trust=ie.trust, text=ie.text,
                scope=Scope(environment=case.subject.environment, service=case.subject.service),
                claim_ids=(ie.claim,), watermark=access.watermark))
        kind = planner_kind(self.planner)
        self.progress(f"run {run.run_id}: {case.id} with {retrieval} retrieval as {case.principal.id}"
                      + (f", {kind} planner" if kind != "deterministic" else ""))
        return Opened(loaded=loaded, run=run, tool=tool)

    def reopen(self, run: RunRow) -> Opened:
        """The run's case loaded again for another drive, its indexes made fresh."""
        loaded = load_case_folder(Path(run.case_dir), self.progress)
        self._record_left_out(run.run_id, loaded.aside)
        tool = self.indexes.prepare(loaded, run.retrieval)
        return Opened(loaded=loaded, run=run, tool=tool)

    def _create_held(self, case: Case, case_dir: Path, retrieval: str, run_id: str | None,
                     watermark: str) -> RunRow:
        """Create the run row, held by this driver from the start (no worker picks it up first). A
        default id is numbered after the runs that exist when the row is written, so two first runs
        of one case (the second waited for the first's index build) get two runs."""
        store, kind = self.workspace.store, planner_kind(self.planner)
        for _ in range(1000):
            rid = run_id or self._new_run_id(case.default_run_id)
            run = store.create_run(RunRow(
                run_id=rid, case_id=case.id, case_dir=str(case_dir.resolve()), retrieval=retrieval,
                principal_id=case.principal.id, rounds_limit=case.budgets.rounds, reads_limit=case.budgets.reads,
                watermark=watermark, owner=self.worker_id,
                lease_until=datetime.now(UTC) + timedelta(seconds=self.workspace.settings.lease_seconds),
                planner=kind,
                planner_json=json.dumps(planner_settings(self.planner)) if kind != "deterministic" else None))
            if run.owner == self.worker_id:
                return run
            if run_id is not None:  # created by someone else meanwhile
                raise RunStateError(f"run {run_id!r} exists already: use `investigator resume {run_id}`")
        raise RunStateError(f"no free run id after {case.default_run_id!r}: name one with --run-id")

    def _new_run_id(self, base: str) -> str:
        store = self.workspace.store
        if not store.has_run(base):
            return base
        n = 2
        while store.has_run(f"{base}-{n}"):
            n += 1
        return f"{base}-{n}"

    def check_resumable(self, run: RunRow) -> None:
        """Raise RunStateError when a run paused `awaiting_permission` waits for sources none of
        which is readable yet (nothing is spent); any other run may be driven again."""
        if run.status != "awaiting_permission":
            return
        case_dir = Path(run.case_dir)
        stop = StopReason.model_validate_json(run.stop_json) if run.stop_json else None
        waiting = stop.sources if stop is not None else ()
        access = self.workspace.policy(load_case(case_dir), case_dir, run).current()
        if not waiting or any(access.can_read(s) or access.is_deleted(s) for s in waiting):
            return
        who = "; ".join(f"{s} (readable by {', '.join(access.unlocking_groups(s)) or 'no group'})" for s in waiting)
        first = next((g for s in waiting for g in access.unlocking_groups(s)), "GROUP")
        raise RunStateError(f"run {run.run_id!r} is still awaiting permission for {who}: nothing was resumed and no "
                            f"budget spent; `investigator grant {run.run_id} --group {first}` first")
