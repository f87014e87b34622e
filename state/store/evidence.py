"""Evidence and the bridge entities found in it: what a run has established, keyed for idempotence.

Evidence is inserted once per deterministic key (a re-run after a crash adds nothing twice) and
only its status changes afterwards. Imports the tables, the core and `rows` (the order of evidence)
of this package; the evidence models are imported where a row is read back, so that `state.store`
stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlmodel import select

from state.errors import RunNotFound
from state.store.core import StoreCore
from state.store.rows import evidence_order
from state.store.tables import BridgeRow, EvidenceRow

if TYPE_CHECKING:
    from state.evidence import BridgeOccurrence, Evidence


class EvidenceStore(StoreCore):
    """A run's evidence (by key, by number, active or all) and its bridge occurrences."""

    def evidence_by_key(self, run_id: str, key: str) -> Evidence | None:
        with self._session() as s:
            row = s.exec(select(EvidenceRow).where(EvidenceRow.run_id == run_id, EvidenceRow.key == key)).first()
        return _evidence(row) if row else None

    def next_evidence_number(self, run_id: str, floor: int) -> int:
        with self._session() as s:
            ids = s.exec(select(EvidenceRow.evidence_id).where(EvidenceRow.run_id == run_id)).all()
        nums = [int(i[1:]) for i in ids if i[1:].isdigit()]
        return max([floor, *nums]) + 1

    def add_evidence(self, run_id: str, key: str, ev: Evidence) -> Evidence:
        """Insert unless evidence with the same key exists; returns the stored value."""
        with self._session() as s:
            row = s.exec(select(EvidenceRow).where(EvidenceRow.run_id == run_id, EvidenceRow.key == key)).first()
            if row is not None:
                return _evidence(row)
            s.add(EvidenceRow(run_id=run_id, evidence_id=ev.id, key=key, source_id=ev.source_id,
                              status=ev.status, round=ev.round, payload=ev.model_dump_json()))
        return ev

    def replace_evidence(self, run_id: str, ev: Evidence) -> None:
        with self._session() as s:
            row = s.get(EvidenceRow, (run_id, ev.id))
            if row is None:
                raise RunNotFound(f"no evidence {ev.id} in run {run_id}")
            row.payload, row.status = ev.model_dump_json(), ev.status
            s.add(row)

    def evidence(self, run_id: str, *, include_inactive: bool = False) -> list[Evidence]:
        with self._session() as s:
            q = select(EvidenceRow).where(EvidenceRow.run_id == run_id)
            if not include_inactive:
                q = q.where(EvidenceRow.status == "active")
            rows = list(s.exec(q))
        out = [_evidence(r) for r in rows]
        return sorted(out, key=evidence_order)

    def add_bridge(self, run_id: str, key: str, occ: BridgeOccurrence) -> None:
        with self._session() as s:
            if s.get(BridgeRow, (run_id, key)) is None:
                s.add(BridgeRow(run_id=run_id, key=key, entity=occ.entity, evidence_id=occ.evidence_id,
                                payload=occ.model_dump_json()))

    def bridges(self, run_id: str) -> list[BridgeOccurrence]:
        with self._session() as s:
            rows = list(s.exec(select(BridgeRow).where(BridgeRow.run_id == run_id).order_by(BridgeRow.key)))
        from state.evidence import BridgeOccurrence  # here: listing runs never loads the evidence models

        return [BridgeOccurrence.model_validate_json(r.payload) for r in rows]


def _evidence(row: EvidenceRow) -> Evidence:
    from state.evidence import Evidence  # here: listing runs never loads the evidence models

    return Evidence.model_validate_json(row.payload)
