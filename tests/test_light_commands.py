"""`runs`, `show`, `history` and `grant` print the same bytes whether the store is read through the
ORM or without it (`state.store.Rows`, and a SQLite checkpointer read directly), on SQLite and on
PostgreSQL; and the path without the ORM never touches `Workspace.store` (nor, on SQLite, LangGraph's
checkpointer).

The store is the session's reference run (a real run, with its checkpoints), copied; beside it a
run paused awaiting permission (twice: one copy is granted by each path) and a run whose case now
denies the principal a source the report cites, so `show` must withhold that evidence either way.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml
from sqlmodel import Session, select

from investigator.cli import main
from investigator.workspace import Workspace
from state.claims import StopReason
from state.store import BridgeRow, DecisionRow, EvidenceRow, GrantRow, ReadRow, RunRow, StepRow, Store

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
TABLES = (RunRow, EvidenceRow, ReadRow, DecisionRow, StepRow, GrantRow, BridgeRow)


def _copy_run(src: Store, dst: Store, run_id: str, new_id: str | None = None, **run_fields) -> None:
    """Every row of a run, into another store (or the same one under another id)."""
    dst.create()
    with Session(src.engine) as s:
        rows = [r for t in TABLES for r in s.exec(select(t).where(t.run_id == run_id))]
    with Session(dst.engine) as s:
        for r in rows:
            values = {**r.model_dump(), "run_id": new_id or run_id}
            if isinstance(r, RunRow):
                values.update(run_fields)
            s.add(type(r)(**values))
        s.commit()


@pytest.fixture(scope="module")
def setting(tmp_path_factory, reference_run):
    """(workspace, the reference run's id, the source it cites that the `withheld` run's case denies)."""
    inv, result, _out = reference_run
    home = tmp_path_factory.mktemp("light-home")
    for name in ("investigator.db", "checkpoints.db"):  # a consistent copy, write-ahead log folded in
        with sqlite3.connect(inv.settings.workspace / name) as src, sqlite3.connect(home / name) as dst:
            src.backup(dst)
    case = tmp_path_factory.mktemp("denying") / "case"
    shutil.copytree(REFERENCE, case)
    store = Store.from_url(f"sqlite:///{home / 'investigator.db'}")
    cited = next(e.source_id for e in store.evidence(result.run_id) if e.kind == "read" and e.span)
    manifest = yaml.safe_load((case / "sources.yaml").read_text())
    for s in manifest["sources"]:
        if s["id"] == cited:
            s["groups"] = ["dba"]
    (case / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    stop = StopReason(kind="awaiting_permission", detail="needs payments-team", sources=(cited,),
                      claims=("causal_attribution",), groups=("payments-team",))
    for paused in ("paused-a", "paused-b"):
        _copy_run(store, store, result.run_id, paused, status="awaiting_permission", stop_kind=stop.kind,
                  stop_json=stop.model_dump_json())
    _copy_run(store, store, result.run_id, "withheld", case_dir=str(case))
    store.engine.dispose()
    return home, result.run_id, cited


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def where(request, setting, tmp_path):
    """(--home, --store) of a fresh copy of the setting on the backend."""
    home, _run, _cited = setting
    ws = tmp_path / "ws"
    shutil.copytree(home, ws)
    if request.param == "sqlite":
        return ws, None
    url = request.getfixturevalue("pg_url")
    src, dst = Store.from_url(f"sqlite:///{ws / 'investigator.db'}"), Store.from_url(url)
    for r in src.runs():
        _copy_run(src, dst, r.run_id)
    src.engine.dispose()
    dst.engine.dispose()
    return ws, url


def _cli(where, argv: list[str], *, light: bool, monkeypatch, capsys) -> tuple[int, str, str]:
    home, url = where
    with monkeypatch.context() as m:
        m.setattr(Workspace, "light_reads", light)
        if light:
            m.setattr(Workspace, "store", property(lambda _self: pytest.fail("the light path used the ORM store")))
        if light and url is None:  # a SQLite checkpointer is read without LangGraph
            m.setattr("investigator.checkpoints.open_checkpointer",
                      lambda _settings: pytest.fail("the light path used LangGraph's checkpointer"))
        code = main(["--home", str(home), *(["--store", url] if url else []), *argv])
    out, err = capsys.readouterr()
    return code, re.sub(r'"generated_at": "[^"]*"', '"generated_at": "…"', out), err


@pytest.mark.parametrize("argv", [
    ["runs"], ["show", "RUN"], ["show", "RUN", "--json"], ["show", "withheld"], ["show", "withheld", "--json"],
    ["show", "nope"], ["history", "RUN"], ["history", "paused-a"], ["history", "nope"],
    ["grant", "RUN", "--group", "sre-oncall"], ["grant", "paused-a", "--group", "sre-oncall"],
    ["grant", "paused-a", "--group", "no-such-group"], ["show", "paused-a"],
], ids=" ".join)
def test_a_read_prints_the_same_bytes_through_either_path(where, setting, argv, monkeypatch, capsys):
    _home, run_id, _cited = setting
    argv = [run_id if a == "RUN" else a for a in argv]
    orm = _cli(where, argv, light=False, monkeypatch=monkeypatch, capsys=capsys)
    light = _cli(where, argv, light=True, monkeypatch=monkeypatch, capsys=capsys)
    assert light == orm
    assert orm[1] or orm[0] != 0  # something was printed (or refused)


def test_history_of_a_finished_run_lists_its_checkpoints(where, setting, monkeypatch, capsys):
    _home, run_id, _cited = setting
    code, out, _err = _cli(where, ["history", run_id], light=True, monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0
    if where[1] is None:  # the copied checkpoints are SQLite's
        assert len(out.splitlines()) > 10 and "evidence_ready" in out


def test_a_grant_writes_the_same_through_either_path(where, monkeypatch, capsys):
    argv = ["--group", "payments-team", "--by", "ana"]
    orm = _cli(where, ["grant", "paused-a", *argv], light=False, monkeypatch=monkeypatch, capsys=capsys)
    light = _cli(where, ["grant", "paused-b", *argv], light=True, monkeypatch=monkeypatch, capsys=capsys)
    assert orm[0] == 0 and (light[0], light[1].replace("paused-b", "paused-a"), light[2]) == orm
    shown = [_cli(where, ["show", run, "--json"], light=False, monkeypatch=monkeypatch, capsys=capsys)[1]
             for run in ("paused-a", "paused-b")]
    masked = [re.sub(r'"at": "[^"]*"', '"at": "…"', s.replace("paused-b", "paused-a")) for s in shown]
    assert masked[0] == masked[1] and '"by": "ana"' in masked[0]


def test_show_withholds_a_source_the_principal_can_no_longer_read_on_the_light_path(where, setting, monkeypatch,
                                                                                    capsys):
    _home, run_id, cited = setting
    full = _cli(where, ["show", run_id, "--json"], light=True, monkeypatch=monkeypatch, capsys=capsys)
    denied = _cli(where, ["show", "withheld", "--json"], light=True, monkeypatch=monkeypatch, capsys=capsys)
    assert full[0] == denied[0] == 0
    before = [e for e in json.loads(full[1])["evidence"] if e["source_id"] == cited]
    after = [e for e in json.loads(denied[1])["evidence"] if e["source_id"] == cited]
    assert before and all(e["span"]["quote"] and not e["withheld"] for e in before)
    assert [e["id"] for e in after] == [e["id"] for e in before]
    assert all(e["withheld"] == "withheld: the source is no longer readable by the principal" for e in after)
    assert not any(e["text"] or e["span"] for e in after)
    quotes = [json.dumps(e["span"]["quote"], ensure_ascii=False)[1:-1] for e in before]
    assert all(q in full[1] for q in quotes) and not any(q in denied[1] for q in quotes)
