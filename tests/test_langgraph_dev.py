"""LangGraph Studio / `langgraph dev` serve the investigation loop (langgraph.json → make_graph)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
LOOP = ["plan", "retrieve", "read", "update", "decide"]


def _verdicts(reference_run) -> dict[str, str]:
    _inv, base, _out = reference_run
    return {c.id: c.verdict for c in base.report.claims}


def _store(ws: Path):
    from investigator.config import Settings
    from state.store import Store

    return Store.from_url(Settings(workspace=ws).resolved_store_url)


def test_langgraph_json_names_the_factory_and_no_case_in_code():
    config = json.loads((ROOT / "langgraph.json").read_text())
    path, _, name = config["graphs"]["investigator"].partition(":")
    assert (ROOT / path).is_file() and name == "make_graph"
    assert config["env"]["INVESTIGATOR_STUDIO_CASE"] == "cases/ALR-20260429-017"
    assert "ALR-" not in (ROOT / path).read_text(), "the default case lives in langgraph.json, not in the code"


def test_the_factory_serves_the_loop_with_a_host_checkpointer_and_our_store(tmp_path, index_root, monkeypatch,
                                                                             reference_run):
    from langgraph.checkpoint.memory import InMemorySaver

    from investigator.langgraph_app import make_graph

    for var in ("INVESTIGATOR_CASE", "INVESTIGATOR_STUDIO_CASE", "INVESTIGATOR_STORE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("INVESTIGATOR_HOME", str(tmp_path / "ws"))
    monkeypatch.setenv("INVESTIGATOR_INDEX_ROOT", str(index_root))
    graph = make_graph({"configurable": {}})
    assert [n for n in graph.get_graph().nodes if not n.startswith("__")] == LOOP
    graph = graph.copy(update={"checkpointer": InMemorySaver()})  # what the platform does
    thread = str(uuid.uuid4())
    cfg = {"configurable": {"thread_id": thread}}
    nodes = [next(iter(u)) for u in graph.stream({"case_dir": str(REFERENCE)}, cfg, stream_mode="updates")]
    assert nodes == LOOP * (len(nodes) // len(LOOP))
    final = graph.get_state(cfg).values
    report = final["report"]
    assert final["run_id"] == report["run_id"] and report["run_id"].endswith(thread.replace("-", "")[-12:])
    assert report["stop"] == "evidence_ready" and report["verdicts"] == _verdicts(reference_run)
    assert json.loads(Path(report["files"][0]).read_text())["run_id"] == report["run_id"]
    store = _store(tmp_path / "ws")
    row = store.run(report["run_id"])
    assert row.status == "stopped" and row.owner is None and row.rounds_used == final["round"]
    assert len([e for e in store.evidence(report["run_id"]) if e.kind != "initial"]) > 0


def test_without_a_case_the_first_node_says_how_to_give_one(tmp_path, monkeypatch):
    from langgraph.checkpoint.memory import InMemorySaver

    from investigator.langgraph_app import make_graph
    from state.errors import ConfigError

    for var in ("INVESTIGATOR_CASE", "INVESTIGATOR_STUDIO_CASE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("INVESTIGATOR_HOME", str(tmp_path / "ws"))
    graph = make_graph({}).copy(update={"checkpointer": InMemorySaver()})
    with pytest.raises(ConfigError, match="no case: give case_dir"):
        graph.invoke({}, {"configurable": {"thread_id": "t1"}})


def _files_under(folder: Path) -> dict[str, tuple[int, int]] | None:
    """Every file under ``folder`` with its size and mtime; None when there is no such folder."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_repository_check_sees_a_new_or_changed_state_folder_and_ignores_an_old_one(tmp_path):
    # README's `langgraph dev` step, run in the checkout, leaves .langgraph_api/ there (gitignored):
    # the served test below compares before and after instead of failing on that folder
    state = tmp_path / ".langgraph_api"
    assert _files_under(state) is None
    state.mkdir()
    (state / ".langgraph_ops.pckl").write_bytes(b"old")
    before = _files_under(state)
    assert before == _files_under(state) and before is not None and list(before) == [".langgraph_ops.pckl"]
    (state / ".langgraph_checkpoint.1.pckl").write_bytes(b"new")
    assert _files_under(state) != before


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.slow
def test_langgraph_dev_serves_the_reference_case_offline_and_returns_the_verdicts(tmp_path, index_root, reference_run):
    # looked up, not imported: importing langgraph_runtime_inmem creates .langgraph_api/ in the working directory
    missing = [m for m in ("langgraph_cli", "langgraph_api", "langgraph_runtime_inmem", "langgraph_sdk")
               if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"langgraph-cli[inmem] is not installed ({', '.join(missing)} missing): pip install -e '.[studio]'")
    from langgraph_sdk import get_sync_client

    cli = Path(sys.executable).parent / "langgraph"
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("INVESTIGATOR_CASE", "INVESTIGATOR_STORE_URL", "INVESTIGATOR_CRASH_AT")}
    env.update(INVESTIGATOR_HOME=str(tmp_path / "ws"), INVESTIGATOR_INDEX_ROOT=str(index_root),
               LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false")
    # the shipped langgraph.json with its relative paths anchored at the repository, served from a
    # temporary folder: langgraph dev keeps its in-memory state in .langgraph_api/ of its working directory
    shipped = json.loads((ROOT / "langgraph.json").read_text())
    graph_path, _, factory = shipped["graphs"]["investigator"].partition(":")
    config = {**shipped, "dependencies": [str(ROOT / d) for d in shipped["dependencies"]],
              "graphs": {"investigator": f"{ROOT / graph_path}:{factory}"},
              "env": {**shipped["env"], "INVESTIGATOR_STUDIO_CASE": str(ROOT / shipped["env"]["INVESTIGATOR_STUDIO_CASE"])}}
    serve = tmp_path / "serve"
    serve.mkdir()
    (serve / "langgraph.json").write_text(json.dumps(config))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    # README's step leaves .langgraph_api/ in the checkout: the server must only not add to it
    repo_state = _files_under(ROOT / ".langgraph_api")
    log = (tmp_path / "dev.log").open("w")
    proc = subprocess.Popen([str(cli), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
                             "--config", str(serve / "langgraph.json")],
                            cwd=serve, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None, (tmp_path / "dev.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "langgraph dev did not come up"
            time.sleep(1)
        client = get_sync_client(url=url)
        assert [a["graph_id"] for a in client.assistants.search()] == ["investigator"]

        # the default case (langgraph.json's INVESTIGATOR_STUDIO_CASE), waited for
        thread = client.threads.create()["thread_id"]
        final = client.runs.wait(thread, "investigator", input={})
        report = final["report"]
        assert report["verdicts"] == _verdicts(reference_run) and report["stop"] == "evidence_ready"
        written = json.loads(Path(report["files"][0]).read_text())
        assert {c["id"]: c["verdict"] for c in written["claims"]} == report["verdicts"]
        store = _store(tmp_path / "ws")
        row = store.run(final["run_id"])
        assert row.status == "stopped" and row.owner is None and row.case_dir == str(REFERENCE)
        assert len(store.evidence(final["run_id"])) == len(written["evidence"]) > 1

        # a case given as a configurable value, streamed node by node over HTTP
        thread2 = client.threads.create()["thread_id"]
        parts = [p for p in client.runs.stream(thread2, "investigator", input={}, stream_mode="updates",
                                               config={"configurable": {"case_dir": str(REFERENCE), "retrieval": "basic"}})
                 if p.event == "updates"]
        nodes = [next(iter(p.data)) for p in parts]
        assert nodes == LOOP * (len(nodes) // len(LOOP)) and len(nodes) >= 2 * len(LOOP)
        assert parts[-1].data["decide"]["report"]["verdicts"] == _verdicts(reference_run)
        assert len(store.runs()) == 2
        assert _files_under(ROOT / ".langgraph_api") == repo_state, "the server wrote nothing into the repository"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def test_a_thread_paused_for_permission_continues_after_a_grant(tmp_path, monkeypatch, case_copy, embedder):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from investigator import langgraph_app
    from investigator.config import Settings
    from investigator.runtime import Investigator
    from tests.test_resume import _set_groups

    _set_groups(case_copy, "order-service-prod-p95-latency", ["observability"])
    monkeypatch.setenv("INVESTIGATOR_HOME", str(tmp_path / "ws"))
    monkeypatch.delenv("INVESTIGATOR_INDEX_ROOT", raising=False)
    monkeypatch.setattr(langgraph_app, "_INVESTIGATORS", {})
    graph = langgraph_app.make_graph({}).copy(update={"checkpointer": InMemorySaver()})
    cfg = {"configurable": {"thread_id": str(uuid.uuid4()), "case_dir": str(case_copy)}}
    graph.invoke({}, cfg)
    paused = graph.get_state(cfg)
    assert paused.interrupts and paused.interrupts[0].value["awaiting_permission"] == ["order-service-prod-p95-latency"]
    run_id = paused.values["run_id"]
    cli = Investigator(Settings.from_env(), embedder=embedder, progress=lambda _m: None)  # what `investigator grant` does
    assert cli.store.run(run_id).status == "awaiting_permission" and cli.store.run(run_id).owner is None
    cli.grant(run_id, ["observability"])
    graph.invoke(Command(resume={"granted": ["observability"]}), cfg)
    report = graph.get_state(cfg).values["report"]
    assert report["stop"] == "evidence_ready" and report["verdicts"]["symptom_window"] == "confirmed"
