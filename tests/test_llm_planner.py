"""The optional LLM planner: a scripted fake chat model, and a real HTTP endpoint on 127.0.0.1 (answering, refusing, hanging, garbled)."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from graphs.llm_planner import LLMPlanner, llm_planner, openai_compatible
from state.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


class Recording(FakeMessagesListChatModel):
    """Answers from a script and keeps every prompt it was shown."""

    prompts: list = []

    def invoke(self, messages, *a, **kw):
        self.prompts.append(messages)
        return super().invoke(messages, *a, **kw)


def test_a_scripted_model_steers_the_run_and_it_still_reaches_the_expected_verdicts(make_investigator, reference_run):
    model = Recording(responses=[AIMessage(content='{"choice": 1, "why": "first gap"}')] * 40, prompts=[])
    planner = LLMPlanner(model=model)
    r = make_investigator(planner=planner).start(REFERENCE).report
    _inv, base, _out = reference_run
    assert {c.id: c.verdict for c in r.claims} == {c.id: c.verdict for c in base.report.claims}
    assert planner.log and all(e["fallback"] in (None, "single") for e in planner.log)


def test_the_model_never_sees_source_text(make_investigator):
    model = Recording(responses=[AIMessage(content='{"choice": 2}')] * 40, prompts=[])
    make_investigator(planner=LLMPlanner(model=model)).start(REFERENCE)
    shown = "\n".join(m.content for p in model.prompts for m in p)
    assert model.prompts
    for fragment in ("In 2.4.0 the default", "Ignore previous instructions", "CANARY", "timed out after 2000 ms"):
        assert fragment not in shown


def test_an_unusable_answer_or_a_spent_token_budget_falls_back_to_the_deterministic_choice(make_investigator):
    model = Recording(responses=[AIMessage(content="let me think about it... no idea")] * 40, prompts=[])
    planner = LLMPlanner(model=model, token_budget=10_000)
    r = make_investigator(planner=planner).start(REFERENCE).report
    assert r.stop.kind == "evidence_ready"
    assert any(e["fallback"] == "unusable answer" for e in planner.log)
    spent = LLMPlanner(model=Recording(responses=[AIMessage(content='{"choice": 1}')] * 40, prompts=[]), token_budget=0)
    make_investigator(workspace=Path(make_investigator().settings.workspace).parent / "b", planner=spent).start(REFERENCE)
    assert all(e["fallback"] in ("budget", "single") for e in spent.log)


# --- recorded in the report, the checkpoint and the run row; endpoint failures; resume ---------------

needs_openai = pytest.mark.skipif(importlib.util.find_spec("langchain_openai") is None,
                                  reason="talking to an endpoint needs the llm extra: pip install -e '.[llm]'")


class Endpoint:
    """A real OpenAI-compatible HTTP endpoint on 127.0.0.1: answers `{"choice": 1}` with 60 tokens of
    usage (`ok`), a body that is not JSON (`garbage`), or nothing for 5 s (`hang`)."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode, self.calls, self.auth = mode, 0, set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.calls += 1
                outer.auth.add(self.headers.get("Authorization", ""))
                if outer.mode == "hang":
                    time.sleep(5)
                body = b"this is not json" if outer.mode == "garbage" else json.dumps({
                    "id": "c1", "object": "chat.completion", "created": 0, "model": "fake-planner",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant", "content": '{"choice": 1, "why": "the first gap decides most"}'}}],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (timeout)
                    pass

            def log_message(self, *_a) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "Endpoint":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_a) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed: connecting is refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_the_models_choices_and_token_use_are_in_the_report_and_the_checkpoint(make_investigator, tmp_path):
    from investigator.checkpoints import open_checkpointer
    from investigator.report_md import render_markdown
    from investigator.report_files import write_report

    answer = AIMessage(content='{"choice": 2, "why": "the second gap narrows the path"}',
                       usage_metadata={"input_tokens": 90, "output_tokens": 10, "total_tokens": 100})
    planner = LLMPlanner(model=Recording(responses=[answer] * 40, prompts=[]))
    inv = make_investigator(planner=planner)
    r = inv.start(REFERENCE).report
    p = r.planner
    assert p["kind"] == "llm" and p["model"] == "Recording" and p["endpoint"] is None
    asked = [c for c in p["choices"] if c["fallback"] is None]
    assert asked and all(c["choice"] == 2 and c["tokens"] == 100 and not c["tokens_estimated"] for c in asked)
    assert all(c["why"] == "the second gap narrows the path" for c in asked)
    assert p["model_chose"] == len(asked) and p["tokens"] == 100 * len(asked) == p["calls"] * 100
    assert [c["round"] for c in p["choices"]] == list(range(1, r.budgets["rounds_used"] + 1))
    md = render_markdown(r)
    assert "## Planner" in md and f"tokens {p['tokens']}" in md
    write_report(r, tmp_path / "out")
    assert json.loads((tmp_path / "out" / "report.json").read_text())["planner"]["tokens"] == p["tokens"]
    plans = [t["summary"] for t in r.timeline if t["node"] == "plan"]
    assert any("[model chose 2 of" in s for s in plans)
    with open_checkpointer(inv.settings) as saver:
        state = saver.get_tuple({"configurable": {"thread_id": r.run_id}}).checkpoint["channel_values"]
    assert state["planner"]["tokens"] == p["tokens"] and state["planner"]["asked"] == p["calls"]
    assert state["planner"]["last"]["offered"] == p["choices"][-1]["offered"]


@needs_openai
def test_a_refused_connection_falls_back_step_by_step_and_the_run_still_finishes(tmp_path, index_root, reference_run):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    env = {**os.environ, "INVESTIGATOR_INDEX_ROOT": str(index_root)}
    env.pop("INVESTIGATOR_CRASH_AT", None)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(tmp_path / "ws"), "run", str(REFERENCE),
                          "--out", str(tmp_path / "out"), "--planner", "llm", "--llm-url", url, "--llm-model", "m"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    p = report["planner"]
    assert report["status"] == "stopped" and report["stop"]["kind"] == "evidence_ready"
    assert p["kind"] == "llm" and p["endpoint"] == url and p["model"] == "m"
    assert p["fallbacks"]["endpoint"] == 3, "three failed calls in a row, then the endpoint is not asked again"
    assert p["fallbacks"].get("endpoint unavailable", 0) >= 1 and p["model_chose"] == 0
    assert all("Connection error" in e for e in p["errors"]) and sum(p["errors"].values()) == 3
    assert "Endpoint failures" in (tmp_path / "out" / "report.md").read_text()
    _inv, base, _out = reference_run
    assert {c["id"]: c["verdict"] for c in report["claims"]} == {c.id: c.verdict for c in base.report.claims}
    assert time.perf_counter() - t0 < 300


@needs_openai
@pytest.mark.parametrize("mode, error", [("hang", "Timeout"), ("garbage", "JSONDecodeError")])
def test_a_hanging_endpoint_or_a_body_that_is_not_json_is_a_named_fallback(make_investigator, mode, error):
    with Endpoint(mode) as ep:
        planner = llm_planner(ep.url, "m", timeout=1.0, max_failures=1)
        r = make_investigator(planner=planner).start(REFERENCE).report
    assert r.status == "stopped" and r.stop.kind == "evidence_ready"
    assert r.planner["fallbacks"]["endpoint"] == 1 and ep.calls >= 1
    (named,) = r.planner["errors"]
    assert error in named


@needs_openai
def test_a_resumed_llm_run_keeps_its_planner_rebuilt_from_the_run_row_and_never_stores_the_key(
        make_investigator, case_copy, monkeypatch):
    from tests.test_resume import _set_groups

    secret = "sk-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    _set_groups(case_copy, "order-service-prod-p95-latency", ["observability"])
    with Endpoint("ok") as ep:
        first = make_investigator(shared_index=False, planner=llm_planner(ep.url, "fake-planner", secret, token_budget=50_000))
        paused = first.start(case_copy).report
        assert paused.status == "awaiting_permission"
        before = ep.calls
        row = first.store.run(paused.run_id)
        assert row.planner == "llm" and json.loads(row.planner_json)["endpoint"] == ep.url
        later = make_investigator(shared_index=False)  # a fresh process: no planner given
        later.grant(paused.run_id, ["observability"])
        done = later.resume(paused.run_id).report
    assert done.stop.kind == "evidence_ready"
    assert ep.calls > before, "the resumed run asked the same endpoint again"
    assert ep.auth == {f"Bearer {secret}"}, "the key comes from the environment, on both sides of the resume"
    resumed = [c for c in done.planner["choices"] if c["round"] > paused.budgets["rounds_used"]]
    assert resumed and any(c["fallback"] is None for c in resumed)
    assert done.planner["tokens"] == 60 * done.planner["calls"] and done.planner["token_budget"] == 50_000
    ws = Path(later.settings.workspace)
    for f in ws.rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f"the API key was written to {f}"
    assert secret not in done.to_json()


def test_without_langchain_openai_the_llm_planner_is_a_one_line_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_openai", None)
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[llm\]'"):
        openai_compatible("http://127.0.0.1:9/v1", "m")


def test_planner_llm_without_its_endpoint_is_a_one_line_error(tmp_path):
    out = subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(tmp_path), "run", str(REFERENCE),
                          "--planner", "llm"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip() == "error: --planner llm needs --llm-url and --llm-model"
