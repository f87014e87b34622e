"""The authoritative investigation store: SQLModel tables on SQLite (default) or PostgreSQL.

Rows hold small indexed columns plus the frozen value as JSON, so the pydantic models stay
the contract and the tables stay simple. Every write is idempotent on a deterministic key:
re-running a step after a crash adds nothing twice.

Modules, each importing only those above it (and `state`'s values):

```
engine    store URLs -> SQLAlchemy engines (SQLite WAL / read-only, PostgreSQL), URLs as printed
tables    the SQLModel tables (`RunRow`, `EvidenceRow`, ...), the table models apart from the API models
core      StoreCore: the engine, tables created on the first write, one session per call
runs      Runs: create, find, list, update runs; stop reasons
leases    Leases(Runs): one worker per run (acquire, renew, take over, release), claimable runs, failures
evidence  EvidenceStore: evidence by key and number, bridge occurrences
trail     Trail: reads, claim decision revisions, node steps
grants    Grants and `Grant` (the API model of a grant row)
store     Store: all the parts in one object, the API the rest of the code calls
```
"""

from __future__ import annotations

from state.store.engine import make_engine, read_only_uri, shown_url, sqlite_path, sqlite_read_only
from state.store.grants import Grant
from state.store.leases import DRIVABLE
from state.store.store import Store
from state.store.tables import BridgeRow, DecisionRow, EvidenceRow, GrantRow, ReadRow, RunRow, StepRow

__all__ = ["DRIVABLE", "BridgeRow", "DecisionRow", "EvidenceRow", "Grant", "GrantRow", "ReadRow", "RunRow", "StepRow",
           "Store", "make_engine", "read_only_uri", "shown_url", "sqlite_path", "sqlite_read_only"]
