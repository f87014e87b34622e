"""Runs: one row per investigation, with its status, stop reason, budget use and grants.

Imports the tables and the core of this package.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from state.errors import RunNotFound
from state.store.core import StoreCore
from state.store.tables import RunRow, utc_now

if TYPE_CHECKING:  # a stop reason is passed in: `runs`, `history` and `grant` never import the claims
    from state.claims import StopReason


class Runs(StoreCore):
    """Creating, finding, listing and updating runs."""

    def create_run(self, row: RunRow) -> RunRow:
        """Insert the run; when a row with its id exists already (also one inserted by another
        process a moment before), that row is returned instead: compare its owner to know."""
        try:
            with self._session() as s:
                existing = s.get(RunRow, row.run_id)
                if existing is not None:
                    return existing
                s.add(row)
        except IntegrityError:
            return self.run(row.run_id)
        return row

    def run(self, run_id: str) -> RunRow:
        if self._absent():
            raise RunNotFound(f"no run {run_id!r} in the store (the store {self.path} does not exist)")
        with self._session() as s:
            row = s.get(RunRow, run_id)
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in the store")
        return row

    def has_run(self, run_id: str) -> bool:
        if self._absent():
            return False
        with self._session() as s:
            return s.get(RunRow, run_id) is not None

    def runs(self) -> list[RunRow]:
        if self._absent():
            return []
        with self._session() as s:
            return list(s.exec(select(RunRow).order_by(col(RunRow.updated_at).desc())))

    def update_run(self, run_id: str, **fields: Any) -> RunRow:
        with self._session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise RunNotFound(f"no run {run_id!r} in the store")
            for k, v in fields.items():
                setattr(row, k, v)
            row.updated_at = utc_now()
            s.add(row)
        return row

    def set_stop(self, run_id: str, stop: StopReason | None, status: str) -> None:
        self.update_run(
            run_id,
            status=status,
            stop_kind=stop.kind if stop else None,
            stop_json=stop.model_dump_json() if stop else None,
        )

    def set_left_out(self, run_id: str, left_out: list[dict[str, str]]) -> None:
        """Record which untrusted sources this drive of the run left out (see `RunRow.left_out`)."""
        with self.engine.begin() as conn:
            conn.execute(update(RunRow).where(col(RunRow.run_id) == run_id).values(left_out=json.dumps(left_out)))
