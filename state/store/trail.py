"""A run's trail: the reads it made, the claim decisions it revised and the steps its nodes took.

All three are append-only history: a read is recorded once, a decision appends a revision when it
changed, a step is overwritten only by a re-run of the same node in the same round (never a step
that paused the run). Imports the tables and the core of this package; the models of reads,
decisions and steps are imported where a row is written or read back, so that `state.store`
stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlmodel import col, select

from state.store.core import StoreCore
from state.store.tables import DecisionRow, ReadRow, StepRow

if TYPE_CHECKING:
    from state.claims import ClaimDecision
    from state.evidence import ReadRecord
    from state.steps import Logged, Step


class Trail(StoreCore):
    """Reads, decision revisions and node steps of a run, in the order they happened."""

    # reads ----------------------------------------------------------------
    def add_read(self, run_id: str, key: str, round_: int, read: ReadRecord) -> bool:
        """Record a read once; returns False when the key was already recorded."""
        with self._session() as s:
            if s.get(ReadRow, (run_id, key)) is not None:
                return False
            seq = len(s.exec(select(ReadRow.key).where(ReadRow.run_id == run_id)).all())
            s.add(ReadRow(run_id=run_id, key=key, seq=seq, round=round_, source_id=read.source_id,
                          outcome=read.outcome, payload=read.model_dump_json()))
        return True

    def reads(self, run_id: str) -> list[tuple[int, ReadRecord]]:
        with self._session() as s:
            rows = list(s.exec(select(ReadRow).where(ReadRow.run_id == run_id).order_by(col(ReadRow.seq))))
        from state.evidence import ReadRecord  # here, as in every read-back: `state.store` stays light

        return [(r.round, ReadRecord.model_validate_json(r.payload)) for r in rows]

    # decisions ------------------------------------------------------------
    def add_decision(self, run_id: str, round_: int, decision: ClaimDecision) -> bool:
        """Append a revision when the decision changed; history is never overwritten."""
        with self._session() as s:
            rows = list(s.exec(select(DecisionRow).where(
                DecisionRow.run_id == run_id, DecisionRow.claim_id == decision.claim_id
            ).order_by(col(DecisionRow.revision))))
            if rows and rows[-1].payload == decision.model_dump_json():
                return False
            if rows and rows[-1].round == round_ and round_ > 0:
                # the same round re-decided (a re-run after a crash): keep one revision per round
                rows[-1].payload, rows[-1].state, rows[-1].verdict = (
                    decision.model_dump_json(), decision.state, decision.verdict)
                s.add(rows[-1])
                return True
            s.add(DecisionRow(run_id=run_id, claim_id=decision.claim_id, revision=len(rows), round=round_,
                              state=decision.state, verdict=decision.verdict, payload=decision.model_dump_json()))
        return True

    def decisions(self, run_id: str) -> dict[str, ClaimDecision]:
        """The latest decision of each claim."""
        latest: dict[str, ClaimDecision] = {}
        for _round, d in self.decision_history(run_id):
            latest[d.claim_id] = d
        return latest

    def decision_history(self, run_id: str) -> list[tuple[int, ClaimDecision]]:
        with self._session() as s:
            rows = list(s.exec(select(DecisionRow).where(DecisionRow.run_id == run_id)
                               .order_by(col(DecisionRow.claim_id), col(DecisionRow.revision))))
        from state.claims import ClaimDecision

        return [(r.round, ClaimDecision.model_validate_json(r.payload)) for r in rows]

    # steps ----------------------------------------------------------------
    def add_step(self, run_id: str, step: Step) -> None:
        """Record a node's step; the same node in the same round overwrites (a re-run after a crash),
        except a step that paused the run: the pause is history, and what ran after the resume is
        recorded after it (under `decide+1`, `decide+2`…), so the timeline shows both."""
        from state.steps import STEP

        text = STEP.dump_json(step).decode()
        with self._session() as s:
            key: str = step.node
            n = 0
            row = s.get(StepRow, (run_id, step.round, key))
            while row is not None and _paused(row.payload) and row.payload != text:
                n += 1
                key = f"{step.node}+{n}"
                row = s.get(StepRow, (run_id, step.round, key))
            if row is not None:
                row.payload = text
                s.add(row)
                return
            seq = len(s.exec(select(StepRow.node).where(StepRow.run_id == run_id)).all())
            s.add(StepRow(run_id=run_id, round=step.round, node=key, seq=seq, payload=text))

    def steps(self, run_id: str) -> list[Logged]:
        with self._session() as s:
            rows = list(s.exec(select(StepRow).where(StepRow.run_id == run_id).order_by(col(StepRow.seq))))
        from state.steps import STEP, Logged

        return [Logged(seq=r.seq, at=r.at, step=STEP.validate_json(r.payload)) for r in rows]


def _paused(payload: str) -> bool:
    """A recorded step that paused its run (a decide that stopped `awaiting_permission`)."""
    from state.steps import STEP

    return '"awaiting_permission"' in payload and STEP.validate_json(payload).node == "decide"
