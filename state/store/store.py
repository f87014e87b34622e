"""`Store`, the one object the rest of the code reads and writes an investigation store through.

It is the sum of the parts, each a small class over the shared `StoreCore` (engine, tables,
sessions): runs and their leases, evidence and bridges, the trail of reads, decisions and steps,
and grants. The parts share nothing but the core, so each can be read (and tested) on its own.
Imports the parts of this package.
"""

from __future__ import annotations

from state.store.evidence import EvidenceStore
from state.store.grants import Grants
from state.store.leases import Leases
from state.store.trail import Trail


class Store(Leases, EvidenceStore, Trail, Grants):
    """Reads and writes one investigation store. The engine is passed in (`Store(engine, path)`), or
    made from a URL (`Store.from_url("sqlite:///…")`, `Store.from_url("postgresql+psycopg://…")`).

    A SQLite store whose file does not exist yet is created (with its folder) by the first
    write, never by a look-up: asking for an unknown run leaves nothing behind."""
