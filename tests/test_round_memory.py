"""One round memory per round: `Knowledge` is built again only when the evidence, the lookups and reads
logged or the access changed, and every node of the round reads the same one."""

from __future__ import annotations

from datetime import datetime, timezone

from graphs.round_memory import Basis, RoundMemo, RoundMemory
from state.steps import Logged, ReadStep

AT = datetime(2026, 4, 29, 10, 0, tzinfo=timezone.utc)
REGISTRY = object()


def _basis(evidence=("E1",), reads=1, watermark="w1", registry=REGISTRY, at=AT) -> Basis:
    log = tuple(Logged(seq=i, at=at, step=ReadStep(round=i + 1, new_evidence=(f"E{i}",))) for i in range(reads))
    return Basis(watermark=watermark, registry=registry, evidence=evidence, log=log)  # type: ignore[arg-type]


def _builder(built: list[Basis]):
    def build(b: Basis) -> RoundMemory:
        built.append(b)
        return RoundMemory(basis=b, knowledge=None, trace=None)  # type: ignore[arg-type]

    return build


def test_the_nodes_of_a_round_share_one_memory_while_nothing_it_was_built_from_changed():
    memo, built = RoundMemo(), []
    first = memo.get(_basis(), _builder(built))
    # the same evidence and search log read again by the next node: a step re-recorded later (another
    # time) with the same content is the same log
    assert memo.get(_basis(at=AT.replace(hour=11)), _builder(built)) is first
    assert len(built) == 1 and memo.builds == 1


def test_new_evidence_a_new_lookup_or_read_a_grant_or_a_new_registry_builds_it_again():
    memo, built = RoundMemo(), []
    memo.get(_basis(), _builder(built))
    for changed in (_basis(evidence=("E1", "E2")), _basis(evidence=("E1", "E2"), reads=2),
                    _basis(evidence=("E1", "E2"), reads=2, watermark="w2"),
                    _basis(evidence=("E1", "E2"), reads=2, watermark="w2", registry=object())):
        assert memo.get(changed, _builder(built)).basis is changed
    assert memo.builds == len(built) == 5


def test_evidence_changed_in_place_on_resume_builds_it_again():
    """A revocation or a re-anchoring keeps the number of rows and changes a row: compared by content."""
    memo, built = RoundMemo(), []
    memo.get(_basis(evidence=("E1", "E2")), _builder(built))
    memo.get(_basis(evidence=("E1", "E2'")), _builder(built))
    assert memo.builds == len(built) == 2


def test_a_run_of_the_reference_case_builds_knowledge_about_once_a_round(make_investigator, monkeypatch):
    """Plan, update and decide of a round (and the next plan) read one memory: a build for each round's
    reads, one for the first plan and one for the report's own reading of the changes — not three a round."""
    from graphs.rulebook.knowledge import Knowledge
    from tests.test_reference_case import REFERENCE

    calls: list[int] = []
    build = Knowledge.build.__func__  # type: ignore[attr-defined]

    def counted(cls, *a, **kw):
        calls.append(1)
        return build(cls, *a, **kw)

    monkeypatch.setattr(Knowledge, "build", classmethod(counted))
    report = make_investigator().start(REFERENCE).report
    rounds = report.budgets["rounds_used"]
    assert rounds > 3
    assert len(calls) <= rounds + 2, f"{len(calls)} builds in {rounds} rounds"
