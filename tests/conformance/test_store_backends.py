"""Every store backend keeps the same promises (`state.store.Store` on SQLite and on PostgreSQL).

One suite, parametrised over a SQLite file and a PostgreSQL database of its own (the `pg_url`
fixture: created per test, dropped afterwards, the test skipped when no server answers on
127.0.0.1:5432). It pins the store's behaviour as its methods define it today: runs, leases,
evidence, steps and grants (and the reads and decisions beside them).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from state.claims import ClaimDecision, StopReason
from state.errors import RunNotFound
from state.evidence import Evidence, ReadRecord, Scope, Span
from state.steps import DecideStep, PlanStep, ReadStep, UpdateStep
from state.store import RunRow, Store

MINUTE = timedelta(seconds=60)
EXPIRED = timedelta(seconds=-1)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = Store.from_url(url)
    yield s
    s.engine.dispose()


def _run(store: Store, run_id: str = "r1", **fields) -> RunRow:
    values = {"case_id": "CASE-1", "case_dir": "/cases/CASE-1", "retrieval": "basic", "principal_id": "sre-oncall-wang",
              "rounds_limit": 12, "reads_limit": 40, **fields}
    return store.create_run(RunRow(run_id=run_id, **values))


def _evidence(id_: str, round_: int = 1, quote: str = "retry_timeout: 2000", start: int = 120, **kw) -> Evidence:
    return Evidence(id=id_, source_id="dependency-client-config-2.4", source_kind="doc", version="2.4",
                    revision="0123456789abcdef", span=Span(start=start, end=start + len(quote), quote=quote),
                    trust="verified", scope=Scope(environment="prod", service="order-service"), round=round_, **kw)


def _now() -> datetime:
    return datetime.now(timezone.utc)


# ----------------------------------------------------------------------------- runs


def test_a_created_run_reads_back_with_its_fields_and_defaults(store):
    _run(store)
    row = store.run("r1")
    assert (row.case_id, row.case_dir, row.retrieval, row.principal_id) == (
        "CASE-1", "/cases/CASE-1", "basic", "sre-oncall-wang")
    assert (row.rounds_limit, row.reads_limit, row.rounds_used, row.reads_used) == (12, 40, 0, 0)
    assert (row.status, row.stop_kind, row.owner, row.lease_until, row.grants, row.attempts) == (
        "running", None, None, None, "[]", 0)
    assert store.has_run("r1") and not store.has_run("r2")


def test_times_read_back_as_aware_utc(store):
    _run(store)
    store.acquire("r1", "worker-a", MINUTE)
    row = store.run("r1")
    for at in (row.created_at, row.updated_at, row.lease_until):
        assert at.utcoffset() == timedelta(0)
    assert abs(row.created_at - _now()) < MINUTE


def test_creating_a_run_twice_returns_the_first_row_unchanged(store):
    _run(store)
    again = _run(store, retrieval="graph", principal_id="someone-else")
    assert (again.retrieval, again.principal_id) == ("basic", "sre-oncall-wang")
    assert store.run("r1").retrieval == "basic" and len(store.runs()) == 1


def test_an_unknown_run_is_run_not_found(store):
    with pytest.raises(RunNotFound):
        store.run("nope")
    with pytest.raises(RunNotFound):
        store.update_run("nope", status="stopped")
    assert store.acquire("nope", "worker-a", MINUTE) is False


def test_runs_are_listed_most_recently_updated_first(store):
    for run_id in ("r1", "r2", "r3"):
        _run(store, run_id)
    store.update_run("r1", rounds_used=1)
    assert [r.run_id for r in store.runs()] == ["r1", "r3", "r2"]


def test_a_stop_is_recorded_with_its_status_and_reason(store):
    _run(store)
    stop = StopReason(kind="awaiting_permission", detail="needs dba", sources=("db-wait",), claims=("causal",),
                      groups=("dba",))
    store.set_stop("r1", stop, "awaiting_permission")
    row = store.run("r1")
    assert (row.status, row.stop_kind) == ("awaiting_permission", "awaiting_permission")
    assert StopReason.model_validate_json(row.stop_json) == stop
    store.set_stop("r1", None, "running")
    assert (store.run("r1").status, store.run("r1").stop_kind, store.run("r1").stop_json) == ("running", None, None)


def test_failures_count_up_to_quarantine_and_a_finished_run_keeps_its_status(store):
    _run(store)
    assert store.acquire("r1", "worker-a", MINUTE)
    assert store.record_failure("r1", "worker-b", "boom", max_attempts=2) is None, "only the holder records"
    first = store.record_failure("r1", "worker-a", "boom " * 200, max_attempts=2)
    assert (first.status, first.attempts, len(first.error)) == ("failed", 1, 500)
    assert store.record_failure("r1", "worker-a", "boom", max_attempts=2).status == "quarantined"
    _run(store, "r2")
    store.acquire("r2", "worker-a", MINUTE)
    store.set_stop("r2", StopReason(kind="evidence_ready"), "stopped")
    assert store.record_failure("r2", "worker-a", "late", max_attempts=1) is None
    assert store.run("r2").status == "stopped"


def test_an_interrupt_marks_only_a_running_run_its_holder_drives(store):
    _run(store)
    store.acquire("r1", "worker-a", MINUTE)
    assert not store.record_interrupt("r1", "worker-b", "SIGTERM")
    assert store.record_interrupt("r1", "worker-a", "SIGTERM")
    row = store.run("r1")
    assert (row.status, row.error) == ("interrupted", "SIGTERM")
    assert not store.record_interrupt("r1", "worker-a", "again"), "no longer running"


# ----------------------------------------------------------------------------- leases


def test_one_worker_holds_a_run_and_a_second_is_refused_while_the_lease_lasts(store):
    _run(store)
    assert store.acquire("r1", "worker-a", MINUTE)
    assert not store.acquire("r1", "worker-b", MINUTE)
    assert store.acquire("r1", "worker-a", MINUTE), "the holder may acquire again"
    row = store.run("r1")
    assert row.owner == "worker-a" and row.lease_until > _now()


def test_only_the_holder_renews(store):
    _run(store)
    store.acquire("r1", "worker-a", MINUTE)
    assert store.renew("r1", "worker-a", 2 * MINUTE)
    assert store.run("r1").lease_until > _now() + MINUTE
    assert not store.renew("r1", "worker-b", MINUTE)


def test_an_expired_lease_is_taken_over_and_the_old_holder_learns_it(store):
    _run(store)
    store.acquire("r1", "worker-a", EXPIRED)  # worker-a stopped renewing
    assert store.acquire("r1", "worker-b", MINUTE)
    assert store.run("r1").owner == "worker-b"
    assert not store.renew("r1", "worker-a", MINUTE)
    assert not store.acquire("r1", "worker-a", MINUTE)


def test_a_dead_holder_is_taken_over_at_once_but_only_while_it_holds(store):
    _run(store)
    store.acquire("r1", "worker-a", MINUTE)
    assert not store.take_over("r1", "worker-x", "worker-b", MINUTE), "worker-x does not hold it"
    assert store.take_over("r1", "worker-a", "worker-b", MINUTE)
    assert store.run("r1").owner == "worker-b"


def test_release_frees_the_run_only_for_its_holder(store):
    _run(store)
    store.acquire("r1", "worker-a", MINUTE)
    store.release("r1", "worker-b")
    assert store.run("r1").owner == "worker-a"
    store.release("r1", "worker-a")
    assert (store.run("r1").owner, store.run("r1").lease_until) == (None, None)
    assert store.acquire("r1", "worker-b", MINUTE)


def test_claimable_runs_are_drivable_unheld_ones_oldest_first(store):
    for run_id in ("held", "free", "expired", "stopped", "quarantined", "paused", "failed"):
        _run(store, run_id)
    store.acquire("held", "worker-a", MINUTE)
    store.acquire("expired", "worker-a", EXPIRED)
    store.update_run("stopped", status="stopped")
    store.update_run("quarantined", status="quarantined")
    store.update_run("paused", status="awaiting_permission")
    store.update_run("failed", status="failed")
    assert store.claimable() == ["free", "expired", "failed"]
    assert store.claimable(gone=lambda owner: owner == "worker-a") == ["held", "free", "expired", "failed"]


# ----------------------------------------------------------------------------- evidence


def test_evidence_reads_back_with_its_span(store):
    _run(store)
    ev = _evidence("E1")
    assert store.add_evidence("r1", "key-1", ev) == ev
    (back,) = store.evidence("r1")
    assert back == ev
    assert (back.span.start, back.span.end, back.span.quote, back.span.content_hash) == (
        120, 139, "retry_timeout: 2000", ev.span.content_hash)
    assert store.evidence_by_key("r1", "key-1") == ev and store.evidence_by_key("r1", "key-2") is None


def test_evidence_is_deduplicated_by_key_and_the_first_value_kept(store):
    _run(store)
    store.add_evidence("r1", "key-1", _evidence("E1"))
    kept = store.add_evidence("r1", "key-1", _evidence("E2", quote="something else"))
    assert kept.id == "E1" and [e.id for e in store.evidence("r1")] == ["E1"]


def test_evidence_ids_are_unique_within_a_run(store):
    from sqlalchemy.exc import IntegrityError

    _run(store)
    store.add_evidence("r1", "key-1", _evidence("E1"))
    with pytest.raises(IntegrityError):
        store.add_evidence("r1", "key-2", _evidence("E1"))
    assert store.next_evidence_number("r1", floor=0) == 2
    assert store.next_evidence_number("r1", floor=7) == 8


def test_evidence_is_ordered_by_round_then_number_and_kept_per_run(store):
    _run(store)
    _run(store, "r2")
    for id_, round_ in (("E10", 1), ("E1", 2), ("E2", 1)):
        store.add_evidence("r1", f"k-{id_}", _evidence(id_, round_))
    store.add_evidence("r2", "k-E3", _evidence("E3"))
    assert [e.id for e in store.evidence("r1")] == ["E2", "E10", "E1"]
    assert [e.id for e in store.evidence("r2")] == ["E3"]


def test_replaced_evidence_that_is_no_longer_active_is_shown_only_when_asked(store):
    _run(store)
    store.add_evidence("r1", "k", _evidence("E1"))
    revoked = _evidence("E1", status="revoked", status_note="source deleted (tombstone)")
    store.replace_evidence("r1", revoked)
    assert store.evidence("r1") == []
    assert store.evidence("r1", include_inactive=True) == [revoked]
    with pytest.raises(RunNotFound):
        store.replace_evidence("r1", _evidence("E9"))


# ----------------------------------------------------------------------------- steps, reads, decisions


def test_steps_read_back_in_the_order_they_were_appended(store):
    _run(store)
    steps = [PlanStep(round=1, note="first"), UpdateStep(round=1), ReadStep(round=1), PlanStep(round=2)]
    for step in steps:
        store.add_step("r1", step)
    logged = store.steps("r1")
    assert [x.step for x in logged] == steps
    assert [x.seq for x in logged] == [0, 1, 2, 3]
    assert all(abs(x.at - _now()) < MINUTE for x in logged)


def test_the_same_node_in_the_same_round_is_overwritten_in_place(store):
    _run(store)
    store.add_step("r1", PlanStep(round=1, note="first"))
    store.add_step("r1", UpdateStep(round=1))
    store.add_step("r1", PlanStep(round=1, note="re-run after a crash"))
    assert [(x.seq, x.step.node, getattr(x.step, "note", None)) for x in store.steps("r1")] == [
        (0, "plan", "re-run after a crash"), (1, "update", None)]


def test_a_decide_that_paused_the_run_stays_in_the_history_beside_the_one_after_the_resume(store):
    _run(store)
    paused = DecideStep(round=3, stop=StopReason(kind="awaiting_permission", sources=("db-wait",)))
    after = DecideStep(round=3, stop=StopReason(kind="evidence_ready"), resumed_after="grant")
    store.add_step("r1", paused)
    store.add_step("r1", after)
    store.add_step("r1", after)  # re-recorded after a crash: still once
    assert [x.step for x in store.steps("r1")] == [paused, after]


def test_reads_are_recorded_once_per_key_in_order(store):
    _run(store)
    assert store.add_read("r1", "k1", 1, ReadRecord(source_id="a", outcome="ok"))
    assert store.add_read("r1", "k2", 2, ReadRecord(source_id="b", outcome="denied"))
    assert not store.add_read("r1", "k1", 3, ReadRecord(source_id="c", outcome="ok"))
    assert store.reads("r1") == [(1, ReadRecord(source_id="a", outcome="ok")),
                                 (2, ReadRecord(source_id="b", outcome="denied"))]


def test_claim_decisions_keep_one_revision_per_round_and_every_earlier_round(store):
    _run(store)
    first = ClaimDecision(claim_id="c", state="insufficient", verdict="insufficient", rule="r", missing=("x",))
    redo = first.model_copy(update={"missing": ("y",)})
    later = ClaimDecision(claim_id="c", state="supported", verdict="confirmed", rule="r")
    assert store.add_decision("r1", 1, first)
    assert store.add_decision("r1", 1, redo), "the same round re-decided replaces its revision"
    assert store.add_decision("r1", 2, later) and not store.add_decision("r1", 2, later)
    assert store.decision_history("r1") == [(1, redo), (2, later)]
    assert store.decisions("r1") == {"c": later}


# ----------------------------------------------------------------------------- grants


def test_a_grant_reads_back_with_who_when_and_what_it_unlocked(store):
    _run(store)
    g = store.add_grant("r1", by="ana", groups=["security", "dba"], unlocks=["s2", "s1"], answers=["s1"])
    assert (g.seq, g.by, g.groups, g.unlocks, g.answers) == (0, "ana", ("dba", "security"), ("s1", "s2"), ("s1",))
    assert g.at.tzinfo is not None and abs(g.at - datetime.now(timezone.utc)) < MINUTE
    assert store.grants("r1") == [g.model_copy(update={"at": store.grants("r1")[0].at})]
    assert store.grants("r1")[0].at.tzinfo is not None


def test_grants_accumulate_in_order_and_add_their_groups_to_the_run(store):
    _run(store)
    store.add_grant("r1", by="ana", groups=["dba"], unlocks=["db-wait"], answers=["db-wait"])
    store.add_grant("r1", by="bo", groups=["security", "dba"], unlocks=[], answers=[])
    assert [(g.seq, g.by, g.groups) for g in store.grants("r1")] == [(0, "ana", ("dba",)), (1, "bo", ("dba", "security"))]
    assert json.loads(store.run("r1").grants) == ["dba", "security"]
    assert store.grants("r2") == []


def test_a_grant_for_an_unknown_run_is_refused_and_nothing_is_recorded(store):
    with pytest.raises(RunNotFound):
        store.add_grant("nope", by="ana", groups=["dba"], unlocks=[], answers=[])
    assert store.grants("nope") == []
