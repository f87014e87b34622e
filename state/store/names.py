"""The store's table and column names as plain constants, so that a reader without the ORM
(`state.store.rows`) and the SQLModel tables (`state.store.tables`) name the same tables.

`tables` takes each `__tablename__` from here, and a test checks that every `inv_*` table of
`SQLModel.metadata` has exactly these columns, in this order. Imports nothing.
"""

from __future__ import annotations

from typing import NamedTuple


class Table(NamedTuple):
    """One table: its name and its columns in declaration order."""

    name: str
    columns: tuple[str, ...]

    @property
    def select(self) -> str:
        """`SELECT <every column> FROM <table>`, the start of a query that reads whole rows."""
        return f"SELECT {', '.join(_quoted(c) for c in self.columns)} FROM {self.name}"


def _quoted(column: str) -> str:
    return f'"{column}"'


RUN = Table("inv_run", (
    "run_id", "case_id", "case_dir", "retrieval", "principal_id", "status", "stop_kind", "stop_json", "rounds_limit",
    "reads_limit", "rounds_used", "reads_used", "watermark", "grants", "owner", "lease_until", "planner",
    "planner_json", "error", "left_out", "attempts", "created_at", "updated_at"))
EVIDENCE = Table("inv_evidence", ("run_id", "evidence_id", "key", "source_id", "status", "round", "payload"))
READ = Table("inv_read", ("run_id", "key", "seq", "round", "source_id", "outcome", "payload"))
DECISION = Table("inv_claim_decision", ("run_id", "claim_id", "revision", "round", "state", "verdict", "payload"))
STEP = Table("inv_step", ("run_id", "round", "node", "seq", "payload", "at"))
GRANT = Table("inv_grant", ("run_id", "seq", "by", "groups", "unlocks", "answers", "at"))
BRIDGE = Table("inv_bridge", ("run_id", "key", "entity", "evidence_id", "payload"))

TABLES = (RUN, EVIDENCE, READ, DECISION, STEP, GRANT, BRIDGE)
"""Every table of the store."""
