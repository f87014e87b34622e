"""A workspace's runs, read from its store and checkpoints alone.

`Workspace` is the part of the public API that needs no embedding model, no index and no loop:
listing runs, a run's report, a run's checkpoint history, a grant. `Investigator` extends it, so
both answer these the same way; the CLI's `runs`, `show`, `history` and `grant` use a bare
`Workspace` and start without importing torch, graphrag or the LangGraph loop. What each needs
beyond the store is imported where it is used: the case, the manifest and the index's tombstones
(DuckDB) only where access is re-checked (`show`, a grant of a paused run), and for `history` the
SQLite checkpointer's file read directly (`checkpoint_rows`), or LangGraph's checkpointer (a
PostgreSQL one). The store is read without the ORM (`reader`, `state.store.Rows`).
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from investigator.config import Settings
from state.errors import ConfigError, RunStateError

if TYPE_CHECKING:  # access is re-checked by `show`, `grant` and the runtime only: `runs` and `history` stay light
    from investigator.report import Report
    from state.case import Case
    from state.store import Grant, Rows, Store
    from state.store.rows import AnyRun
    from tools.access import AccessPolicy, AccessSnapshot


def _who() -> str:
    """The account giving a grant when the caller names nobody."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment
        return f"uid {os.getuid()}"


def _tombstones(path: Path) -> Callable[[], frozenset[str]]:
    """The index's tombstones, read again only when the index file changed (a tombstone rewrites
    it, a rebuild replaces it): access is checked on every lookup and read, a connection is not.
    A file whose state cannot be pinned (missing, or with a write-ahead log) is read every time."""
    from tools.tombstones import index_state, tombstoned

    seen: list[object] = [None, frozenset()]

    def current() -> frozenset[str]:
        key = index_state(path)
        if key is None or key != seen[0]:
            seen[:] = [key, frozenset(tombstoned(path))]
        return seen[1]  # type: ignore[return-value]

    return current


def index_path(settings: Settings, case: Case, case_dir: Path) -> Path:
    """The chunk index of a case folder under `settings`."""
    return settings.index_dir(case.id, case_dir) / "basic.duckdb"


class Workspace:
    """The store and checkpoints under `settings`; the store opened on first use (or one given,
    already open, to share it).

    A bare workspace reads runs, reports and grants through `reader`, the store without the ORM
    (`state.store.Rows`), so that the light commands never import SQLAlchemy; `store` is the ORM's."""

    light_reads = True
    """Read through `Rows` when the store URL allows it (False: through the ORM `store`, as the runtime does)."""

    def __init__(self, settings: Settings | None = None, *, store: Store | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self._store: Store | None = store
        self._rows: Rows | None = None

    @property
    def store(self) -> Store:
        if self._store is None:  # a SQLite file (and the workspace) appears with the first write, not a look-up
            from state.store import Store

            self._store = Store.from_url(self.settings.resolved_store_url)
        return self._store

    @property
    def reader(self) -> Store | Rows:
        """What the reads of runs, reports and grants go through: the store without the ORM for a bare
        workspace over a SQLite file or PostgreSQL, else (a store given, another URL) the ORM store."""
        if self._store is not None or not self.light_reads:
            return self.store
        if self._rows is None:
            from state.store.rows import Rows

            self._rows = Rows.from_url(self.settings.resolved_store_url)
            if self._rows is None:
                return self.store
        return self._rows

    def index_path(self, case: Case, case_dir: Path) -> Path:
        return index_path(self.settings, case, case_dir)

    def policy(self, case: Case, case_dir: Path, run: AnyRun) -> AccessPolicy:
        """The run principal's access now: its groups and grants, the manifest and the tombstones as they are."""
        from investigator.manifests import ManifestOnDisk
        from tools.access import AccessPolicy

        return AccessPolicy(ManifestOnDisk(case_dir), case.principal, tuple(json.loads(run.grants)),
                            deleted=_tombstones(self.index_path(case, case_dir)))

    def access_now(self, run_id: str) -> AccessSnapshot:
        """What the run's principal may read now (groups, grants, manifest and tombstones as they are)."""
        from state.case import load_case

        run = self.reader.run(run_id)
        case_dir = Path(run.case_dir)
        return self.policy(load_case(case_dir), case_dir, run).current()

    def report(self, run_id: str) -> Report:
        """The run's report under the access of now: evidence of a source the principal can no
        longer read (or that was deleted) is withheld and marked, never printed."""
        from investigator.report import build_report
        from state.case import load_case

        reader = self.reader
        run = reader.run(run_id)
        case_dir = Path(run.case_dir)
        case = load_case(case_dir)
        access = self.policy(case, case_dir, run).current()
        return build_report(case, run, reader, access=access)

    def grant(self, run_id: str, groups: list[str], by: str | None = None) -> Grant:
        """Grant a paused run's principal more groups (answering `awaiting_permission`); `resume` continues.

        Refused (nothing written) when the run is not paused for permission (RunStateError), or a
        group is not named by any source of the case's manifest or the principal holds it already
        (ConfigError). The grant is stored with who gave it, when, and what it unlocked."""
        reader = self.reader
        run = reader.run(run_id)
        if run.status != "awaiting_permission":  # refused from the run's row alone, before the case is read
            why = f"{run.status}" + (f" ({run.stop_kind})" if run.stop_kind else "")
            raise RunStateError(f"run {run_id!r} is {why}: a grant answers a run paused awaiting_permission only")
        from state.case import load_case
        from state.claims import StopReason
        from investigator.manifests import manifest_now
        from tools.access import known_groups, snapshot

        case_dir = Path(run.case_dir)
        case = load_case(case_dir)
        manifest = manifest_now(case_dir)
        known = known_groups(manifest)
        unknown = sorted(set(groups) - known)
        if unknown or not groups:
            raise ConfigError(f"group {', '.join(unknown) or '(none)'}: no source in {case_dir / 'sources.yaml'} names "
                              f"it (expected one of {', '.join(sorted(known))})")
        before = self.policy(case, case_dir, run).current()
        new = sorted(set(groups) - set(before.principal_groups))
        if not new:
            raise ConfigError(f"run {run_id!r}: the principal {case.principal.id} holds {', '.join(sorted(groups))} "
                              f"already; nothing to grant")
        after = snapshot(manifest, case.principal, (*before.principal_groups, *new), before.deleted)
        stop = StopReason.model_validate_json(run.stop_json) if run.stop_json else None
        return reader.add_grant(
            run_id, by=by or _who(), groups=new, unlocks=sorted(after.readable() - before.readable()),
            answers=[s for s in (stop.sources if stop else ()) if after.can_read(s)])

    def history(self, run_id: str) -> list[dict[str, Any]]:
        """The run's checkpoints, oldest first: step, round, what the state held, and its size in bytes."""
        self.reader.run(run_id)
        if self.light_reads and not self.settings.resolved_store_url.startswith("postgresql"):  # SQLite: read directly
            from investigator.checkpoint_rows import history_rows

            light = history_rows(self.settings.checkpoint_path, run_id)
            if light is not None:
                return light
        from investigator.checkpoints import open_checkpointer  # the checkpointer is LangGraph's

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
