"""A workspace's runs, read from its store and checkpoints alone.

`Workspace` is the part of the public API that needs no embedding model, no index and no loop:
listing runs, a run's report, a run's checkpoint history. `Investigator` extends it, so both
answer these the same way; the CLI's `runs`, `show` and `history` use a bare `Workspace` and
start without importing torch, graphrag, duckdb or the LangGraph loop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from investigator.config import Settings
from investigator.report import Report, build_report
from state.case import load_case
from state.store import Store


class Workspace:
    """The store and checkpoints under `settings`; opened on first use."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            self.settings.workspace.mkdir(parents=True, exist_ok=True)
            self._store = Store.from_url(self.settings.resolved_store_url)
        return self._store

    def report(self, run_id: str) -> Report:
        """The run's report as of now, built from the store and the case file."""
        run = self.store.run(run_id)
        case = load_case(Path(run.case_dir))
        return build_report(case, run, self.store)

    def history(self, run_id: str) -> list[dict[str, Any]]:
        """The run's checkpoints, oldest first: step, round, what the state held, and its size in bytes."""
        from investigator.checkpoints import open_checkpointer  # the checkpointer is LangGraph's

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
