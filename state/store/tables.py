"""The store's SQLModel tables: small indexed columns plus the frozen value as JSON in `payload`.

The pydantic models stay the contract; a table only keys and indexes them. Every `inv_*` table
is declared here, so that importing this module registers all of them on `SQLModel.metadata`
before the store creates them. Table names come from `names`, which the reader without the
ORM (`rows`) shares. Imports SQLModel, `names` and `clock` only.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from state.store.names import BRIDGE, DECISION, EVIDENCE, GRANT, READ, RUN, STEP
from state.store.clock import utc_now


class RunRow(SQLModel, table=True):
    __tablename__ = RUN.name
    run_id: str = Field(primary_key=True)
    case_id: str
    case_dir: str
    retrieval: str
    principal_id: str
    status: str = "running"
    """running | stopped | awaiting_permission | interrupted (Ctrl-C, SIGTERM) | failed (an
    unexpected error; `error` says which) | quarantined (failed `max_attempts` times in a row:
    `work` sets it aside, `resume` still tries it)"""
    stop_kind: str | None = None
    stop_json: str | None = None
    rounds_limit: int
    reads_limit: int
    rounds_used: int = 0
    reads_used: int = 0
    watermark: str = ""
    grants: str = "[]"
    """JSON list of groups granted to the principal for this run (pause-for-permission)."""
    owner: str | None = None
    """The worker holding the run; nobody else drives it while the lease lasts."""
    lease_until: datetime | None = None
    planner: str | None = None
    """Who picked the actions: `deterministic` (also when None) or `llm`; a resume rebuilds the same."""
    planner_json: str | None = None
    """The LLM planner's endpoint, model, token budget and timeout as JSON (never an API key)."""
    error: str | None = None
    """The last error that stopped a drive of the run (one line, never source text)."""
    left_out: str | None = None
    """JSON list of `{source_id, path, problem}`: untrusted sources whose content could not be read
    when the run was last driven, left out of the case (their text was never read)."""
    attempts: int | None = 0
    """Drives in a row that ended in an error or whose worker vanished (reset by a clean drive)."""
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)


class EvidenceRow(SQLModel, table=True):
    __tablename__ = EVIDENCE.name
    run_id: str = Field(primary_key=True)
    evidence_id: str = Field(primary_key=True)
    key: str = Field(index=True)
    source_id: str = Field(index=True)
    status: str = "active"
    round: int = 0
    payload: str


class ReadRow(SQLModel, table=True):
    __tablename__ = READ.name
    run_id: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    seq: int
    round: int
    source_id: str
    outcome: str
    payload: str


class DecisionRow(SQLModel, table=True):
    __tablename__ = DECISION.name
    run_id: str = Field(primary_key=True)
    claim_id: str = Field(primary_key=True)
    revision: int = Field(primary_key=True)
    round: int
    state: str
    verdict: str
    payload: str


class StepRow(SQLModel, table=True):
    __tablename__ = STEP.name
    run_id: str = Field(primary_key=True)
    round: int = Field(primary_key=True)
    node: str = Field(primary_key=True)
    seq: int
    payload: str
    at: datetime = Field(default_factory=utc_now)


class GrantRow(SQLModel, table=True):
    """One permission grant answering a paused run: who, when, which groups, what it unlocked."""

    __tablename__ = GRANT.name
    run_id: str = Field(primary_key=True)
    seq: int = Field(primary_key=True)
    by: str
    groups: str
    """JSON list of the groups granted."""
    unlocks: str = "[]"
    """JSON list of the sources the principal could read only after this grant."""
    answers: str = "[]"
    """JSON list of the paused run's denied sources this grant made readable."""
    at: datetime = Field(default_factory=utc_now)


class BridgeRow(SQLModel, table=True):
    __tablename__ = BRIDGE.name
    run_id: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    entity: str = Field(index=True)
    evidence_id: str
    payload: str
