"""Permission grants answering paused runs (`Grant`, the API model a grant is read back as, is `rows`').

Recording a grant also adds its groups to the run's, in the same transaction. Imports the
tables, the core and `rows` of this package.
"""

from __future__ import annotations

import json

from sqlmodel import col, select

from state.errors import RunNotFound
from state.store.core import StoreCore
from state.store.rows import Grant, grant_of
from state.store.tables import GrantRow, RunRow, utc_now


class Grants(StoreCore):
    """Recording and listing a run's grants."""

    def add_grant(self, run_id: str, *, by: str, groups: list[str], unlocks: list[str], answers: list[str]) -> Grant:
        """Record a grant and add its groups to the run's, in one transaction."""
        with self._session() as s:
            run = s.get(RunRow, run_id)
            if run is None:
                raise RunNotFound(f"no run {run_id!r} in the store")
            seq = len(s.exec(select(GrantRow.seq).where(GrantRow.run_id == run_id)).all())
            row = GrantRow(run_id=run_id, seq=seq, by=by, groups=json.dumps(sorted(groups)),
                           unlocks=json.dumps(sorted(unlocks)), answers=json.dumps(sorted(answers)))
            s.add(row)
            run.grants = json.dumps(sorted(set(json.loads(run.grants)) | set(groups)))
            run.updated_at = utc_now()
            s.add(run)
        return _grant(row)

    def grants(self, run_id: str) -> list[Grant]:
        with self._session() as s:
            rows = list(s.exec(select(GrantRow).where(GrantRow.run_id == run_id).order_by(col(GrantRow.seq))))
        return [_grant(r) for r in rows]


def _grant(row: GrantRow) -> Grant:
    return grant_of(row.seq, row.by, row.groups, row.unlocks, row.answers, row.at)
