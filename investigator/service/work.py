"""One investigation for one ledger row: init the case, start or resume the run, write the report.

Every step can be repeated after a kill without doing anything twice:
  - the case folder is written atomically by `init` and reused once it exists;
  - a run that exists is resumed (from its LangGraph checkpoint), never started again;
  - evidence, reads and decisions are idempotent by key in the store;
  - the run's lease lets one worker drive it at a time (a dead local holder is taken over);
  - a finished row is left alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from investigator.collect import collect
from investigator.init import scaffold
from investigator.runtime import Investigator
from investigator.service.ledger import AlertRow, Ledger
from investigator.service.settings import ServiceSettings
from state.case import load_case
from state.errors import RunStateError


class RunBusy(RunStateError):
    """Another live worker holds the run's lease: the engine retries the job later."""


class Work:
    def __init__(self, settings: ServiceSettings, inv: Investigator, ledger: Ledger,
                 progress: Callable[[str], None] | None = None) -> None:
        self.settings, self.inv, self.ledger = settings, inv, ledger
        self.progress = progress or inv.progress

    def case_dir(self, run_id: str) -> Path:
        return self.settings.service_dir / "cases" / run_id

    def report_dir(self, run_id: str) -> Path:
        return self.settings.service_dir / "reports" / run_id

    def investigate(self, key: str, worker: str) -> AlertRow:
        """Drive the alert's run to a stop reason and write its report; returns the finished row."""
        row = self.ledger.get(key)
        if row.state in ("done", "failed"):
            return row  # a redelivery after the job finished: nothing is done twice
        row = self.ledger.begin(key, worker)
        if self.inv.store.has_run(row.run_id):
            self.progress(f"{row.run_id}: resuming (attempt {row.attempts})")
            try:
                self.inv.resume(row.run_id)
            except RunStateError as exc:
                if "is held by" in str(exc):
                    raise RunBusy(str(exc)) from None
                raise
        else:
            case_dir = self._case(row)
            self._seeded_index(case_dir, row.root)
            try:
                self.inv.start(case_dir, retrieval=self.settings.retrieval, run_id=row.run_id)
            except RunStateError as exc:  # started meanwhile by a redelivered copy of this job
                raise RunBusy(str(exc)) from None
        self.inv.write(row.run_id, self.report_dir(row.run_id))
        self.ledger.finish(key, worker)
        return self.ledger.get(key)

    def _case(self, row: AlertRow) -> Path:
        out = self.case_dir(row.run_id)
        if (out / "case.yaml").exists():
            return out  # init writes atomically: a folder in place is whole
        _name, material = self.settings.root_for(row.label_map())
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".alert-", dir=out.parent) as tmp:
            alert = Path(tmp) / "alert.json"
            alert.write_text(row.payload)
            staged = Path(tmp) / "case"
            c = self.settings.collect
            if c.configured:  # fetched live, with the folder of material (if any) beside it
                got = collect(alert, staged, prometheus=c.prometheus, git=c.git, kubeconfig=c.kubeconfig,
                              sources=material, access=c.access, group=self.settings.group, profile=c.profile)
                for f in got.collection.failed():
                    self.progress(f"{row.run_id}: collect: {f.collector}: {f.what}: failed: {f.error}")
            elif material is not None:
                scaffold(alert, material, staged, group=self.settings.group)
            try:
                staged.rename(out)
            except OSError:
                if not (out / "case.yaml").exists():  # not a concurrent copy that won the rename
                    raise
        return out

    def _seeded_index(self, case_dir: Path, root: str) -> None:
        """Alerts on the same unchanged material share the index work: the first case's index is kept as
        a seed and copied for the next; the runtime still checks it against the case's sources (by
        content) and rebuilds it, from its embedding cache, when they differ."""
        case = load_case(case_dir)
        target = self.inv.index_path(case, case_dir)
        seeds = self.settings.service_dir / "seeds"
        seed = seeds / f"{root}-{case.window.start.year}.duckdb"
        if seed.exists() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.parent / f".seed-{os.getpid()}.tmp"
            shutil.copyfile(seed, tmp)
            os.replace(tmp, target)
        built = self.inv.index(case_dir)
        if built is not None or not seed.exists():  # the first, or the material changed: the seed follows
            seeds.mkdir(parents=True, exist_ok=True)
            tmp = seeds / f".{seed.name}.{os.getpid()}.tmp"
            shutil.copyfile(target, tmp)
            os.replace(tmp, seed)
