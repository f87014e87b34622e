"""The authoritative investigation store: SQLModel tables on SQLite (default) or PostgreSQL.

Rows hold small indexed columns plus the frozen value as JSON, so the pydantic models stay
the contract and the tables stay simple. Every write is idempotent on a deterministic key:
re-running a step after a crash adds nothing twice.

Modules, each importing only those above it, the light modules below and `state`'s values:

```
engine    store URLs -> SQLAlchemy engines (SQLite WAL / read-only, PostgreSQL), URLs as printed
tables    the SQLModel tables (`RunRow`, `EvidenceRow`, ...), the table models apart from the API models
core      StoreCore: the engine, tables created on the first write, one session per call
runs      Runs: create, find, list, update runs; stop reasons
leases    Leases(Runs): one worker per run (acquire, renew, take over, release), claimable runs, failures
evidence  EvidenceStore: evidence by key and number, bridge occurrences
trail     Trail: reads, claim decision revisions, node steps
grants    Grants: recording and listing a run's grants
store     Store: all the parts in one object, the API the rest of the code calls
```

Beside them, the light modules, importing neither SQLAlchemy nor SQLModel (the light commands read
the store through these; `rows` imports `core` only to have the ORM prepare a store it finds
incomplete):

```
clock     utc_now(): every stored time
names     the tables' and columns' names, plain constants `tables` and `rows` share
location  where a store is (a SQLite file, a PostgreSQL conninfo) and how a read-only file is opened
rows      Rows: what `runs`, `show`, `history`, `grant` read and a grant's write, over DB-API;
          RunRecord, `Grant` (the API models of a run row and a grant row)
```

Names are imported on first use (PEP 562): `from state.store import Rows` imports no ORM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from state.lazy import lazy_exports

if TYPE_CHECKING:
    from state.store.engine import make_engine, shown_url, sqlite_path
    from state.store.leases import DRIVABLE
    from state.store.location import read_only_uri, sqlite_read_only
    from state.store.rows import Grant, RunRecord, Rows
    from state.store.store import Store
    from state.store.tables import BridgeRow, DecisionRow, EvidenceRow, GrantRow, ReadRow, RunRow, StepRow

__all__ = ["DRIVABLE", "BridgeRow", "DecisionRow", "EvidenceRow", "Grant", "GrantRow", "ReadRow", "RunRecord", "RunRow",
           "Rows", "StepRow", "Store", "make_engine", "read_only_uri", "shown_url", "sqlite_path", "sqlite_read_only"]

_EXPORTS = {"DRIVABLE": "leases", "Grant": "rows", "RunRecord": "rows", "Rows": "rows", "Store": "store",
            "make_engine": "engine", "shown_url": "engine", "sqlite_path": "engine", "read_only_uri": "location",
            "sqlite_read_only": "location", **dict.fromkeys(
                ("BridgeRow", "DecisionRow", "EvidenceRow", "GrantRow", "ReadRow", "RunRow", "StepRow"), "tables")}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
