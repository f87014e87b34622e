"""The store read without the ORM (`state.store.Rows`) answers as `Store` does, on SQLite and PostgreSQL.

Every store is written through `Store` (the ORM) and read back through both; the two must agree
value for value, times included (aware, UTC). `Rows.add_grant` is the one write, and `Store`
must read it back as its own. The table and column names `Rows` uses are the SQLModel tables'.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest

from state.claims import ClaimDecision, StopReason
from state.errors import ConfigError, RunNotFound
from state.evidence import Evidence, ReadRecord, Scope, Span
from state.steps import DecideStep, PlanStep, ReadStep
from state.store import RunRecord, RunRow, Rows, Store
from state.store.names import TABLES

MINUTE = timedelta(seconds=60)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def url(request, tmp_path):
    return f"sqlite:///{tmp_path / 'store.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
def store(url):
    s = Store.from_url(url)
    yield s
    s.engine.dispose()


def _run(store: Store, run_id: str = "r1", **fields) -> RunRow:
    values = {"case_id": "CASE-1", "case_dir": "/cases/CASE-1", "retrieval": "basic", "principal_id": "sre-oncall-wang",
              "rounds_limit": 12, "reads_limit": 40, **fields}
    return store.create_run(RunRow(run_id=run_id, **values))


def _evidence(id_: str, round_: int = 1) -> Evidence:
    quote = "retry_timeout: 2000"
    return Evidence(id=id_, source_id="dependency-client-config-2.4", source_kind="doc", version="2.4",
                    revision="0123456789abcdef", span=Span(start=120, end=120 + len(quote), quote=quote),
                    trust="verified", scope=Scope(environment="prod", service="order-service"), round=round_)


def _filled(store: Store) -> None:
    """Two runs with everything a report reads: evidence (one revoked), reads, decisions, steps, grants."""
    _run(store, "r1")
    _run(store, "r2", status="awaiting_permission", planner="llm", planner_json='{"model": "m"}')
    store.acquire("r1", "worker-a", MINUTE)
    store.set_stop("r2", StopReason(kind="awaiting_permission", detail="needs dba", sources=("db-wait",),
                                    claims=("causal",), groups=("dba",)), "awaiting_permission")
    store.record_failure("r1", "worker-a", "boom", max_attempts=3)
    for i, r in ((10, 2), (2, 1), (1, 2), (3, 1)):
        store.add_evidence("r1", f"k{i}", _evidence(f"E{i}", r))
    store.replace_evidence("r1", _evidence("E3", 1).model_copy(update={"status": "revoked", "status_note": "gone"}))
    for seq, (src, outcome) in enumerate((("a", "ok"), ("b", "denied"), ("c", "failed"))):
        store.add_read("r1", f"read-{seq}", seq, ReadRecord(source_id=src, outcome=outcome))
    for round_, claim, state, verdict in ((1, "b_claim", "insufficient", "insufficient"),
                                          (2, "a_claim", "supported", "confirmed"), (3, "b_claim", "supported", "confirmed")):
        store.add_decision("r1", round_, ClaimDecision(claim_id=claim, state=state, verdict=verdict, rule="r"))
    store.add_step("r1", PlanStep(round=1, note="first"))
    store.add_step("r1", ReadStep(round=1))
    store.add_step("r1", DecideStep(round=1))
    store.add_grant("r2", by="ana", groups=["dba"], unlocks=["db-wait"], answers=["db-wait"])
    store.add_grant("r2", by="bo", groups=["netops", "dba"], unlocks=[], answers=[])


def test_the_names_rows_reads_are_the_sqlmodel_tables_and_columns():
    from sqlmodel import SQLModel

    import state.store.tables  # noqa: F401 - registers the tables

    declared = {t.name: tuple(c.name for c in t.columns) for t in SQLModel.metadata.sorted_tables
                if t.name.startswith("inv_")}
    assert declared == {t.name: t.columns for t in TABLES}


def test_a_run_record_has_the_run_rows_fields():
    assert tuple(RunRecord.model_fields) == tuple(RunRow.model_fields) == TABLES[0].columns


def test_every_read_agrees_with_the_store(store, url):
    _filled(store)
    rows = Rows.from_url(url)
    assert rows is not None
    assert [r.model_dump() for r in rows.runs()] == [r.model_dump() for r in store.runs()]
    for run_id in ("r1", "r2"):
        assert rows.run(run_id).model_dump() == store.run(run_id).model_dump()
        assert rows.evidence(run_id) == store.evidence(run_id)
        assert rows.evidence(run_id, include_inactive=True) == store.evidence(run_id, include_inactive=True)
        assert rows.reads(run_id) == store.reads(run_id)
        assert rows.decision_history(run_id) == store.decision_history(run_id)
        assert rows.decisions(run_id) == store.decisions(run_id)
        assert rows.steps(run_id) == store.steps(run_id)
        assert rows.grants(run_id) == store.grants(run_id)
    assert rows.has_run("r1") and not rows.has_run("nope")
    assert [e.id for e in rows.evidence("r1")] == ["E2", "E1", "E10"]
    for at in (rows.run("r1").created_at, rows.run("r1").lease_until, rows.steps("r1")[0].at, rows.grants("r2")[0].at):
        assert at is not None and at.utcoffset() == timedelta(0)


def test_a_grant_written_without_the_orm_is_read_back_by_the_store_as_its_own(store, url):
    _filled(store)
    before = store.run("r2")
    rows = Rows.from_url(url)
    assert rows is not None
    got = rows.add_grant("r2", by="cy", groups=["payments-team"], unlocks=["x", "a"], answers=["a"])
    assert (got.seq, got.by, got.groups, got.unlocks, got.answers) == (2, "cy", ("payments-team",), ("a", "x"), ("a",))
    assert store.grants("r2")[-1] == got
    after = store.run("r2")
    assert json.loads(after.grants) == ["dba", "netops", "payments-team"]
    assert after.updated_at > before.updated_at and after.updated_at == got.at
    assert store.runs()[0].run_id == "r2"


def test_a_grant_for_an_unknown_run_is_refused_and_nothing_is_written(store, url):
    _filled(store)
    rows = Rows.from_url(url)
    assert rows is not None
    with pytest.raises(RunNotFound, match="no run 'nope'"):
        rows.add_grant("nope", by="ana", groups=["dba"], unlocks=[], answers=[])
    assert store.grants("nope") == []


def test_an_unknown_run_is_run_not_found_with_the_stores_words(store, url):
    _run(store)
    rows = Rows.from_url(url)
    assert rows is not None
    with pytest.raises(RunNotFound) as orm:
        store.run("nope")
    with pytest.raises(RunNotFound) as light:
        rows.run("nope")
    assert str(light.value) == str(orm.value) == "no run 'nope' in the store"


def test_a_store_without_tables_is_prepared_by_the_orm_first_and_reads_empty(url):
    rows = Rows.from_url(url)
    assert rows is not None
    if rows.path is not None:
        sqlite3.connect(rows.path).close()  # the file exists, empty
    assert rows.runs() == []
    store = Store.from_url(url)
    try:
        assert store.runs() == []  # the tables are there now, as `Store` would have made them
    finally:
        store.engine.dispose()


def test_a_missing_sqlite_store_is_read_as_empty_and_not_created(tmp_path):
    path = tmp_path / "ws" / "investigator.db"
    rows = Rows.from_url(f"sqlite:///{path}")
    assert rows is not None
    assert rows.runs() == [] and not rows.has_run("r1")
    with pytest.raises(RunNotFound, match=r"\(the store .*investigator.db does not exist\)"):
        rows.run("r1")
    assert not path.exists() and not path.parent.exists()


def test_a_store_column_added_later_is_added_before_reading(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = Store.from_url(url)
    _run(store)
    store.engine.dispose()
    with sqlite3.connect(tmp_path / "old.db") as conn:  # a store from before `attempts` existed
        conn.execute("ALTER TABLE inv_run DROP COLUMN attempts")
    rows = Rows.from_url(url)
    assert rows is not None
    assert rows.run("r1").attempts is None


def test_a_file_that_is_not_a_database_is_the_stores_clear_error(tmp_path):
    path = tmp_path / "investigator.db"
    path.write_text("not a database")
    rows = Rows.from_url(f"sqlite:///{path}")
    assert rows is not None
    with pytest.raises(ConfigError, match="cannot open it as a SQLite database") as light:
        rows.runs()
    with pytest.raises(ConfigError) as orm:
        Store.from_url(f"sqlite:///{path}").runs()
    assert str(light.value) == str(orm.value)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///x.db?mode=ro&uri=true",
                                 "postgresql://u@h/db", "mysql://u@h/db"])
def test_stores_only_the_orm_reads_get_no_reader(url):
    assert Rows.from_url(url) is None


@pytest.mark.parametrize("url", ["sqlite:///relative/inv.db", "sqlite:////abs/inv.db", "sqlite+pysqlite:///a b/inv.db"])
def test_the_reader_finds_the_file_the_engine_opens(url):
    from state.store import sqlite_path

    rows = Rows.from_url(url)
    assert rows is not None and rows.path == sqlite_path(url)
