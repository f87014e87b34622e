"""`Investigator.stream`: the loop's node updates as they happen, ending with the report."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from investigator.runtime import RunResult

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
LOOP = ["plan", "retrieve", "read", "update", "decide"]


def test_stream_yields_every_node_update_in_loop_order_and_ends_with_the_report(make_investigator, reference_run):
    items = list(make_investigator().stream(REFERENCE, retrieval="basic"))
    *updates, last = items
    assert isinstance(last, RunResult), "the last item is the run's result with its report"
    assert all(isinstance(u, dict) and len(u) == 1 for u in updates), "stream_mode='updates': one {node: update} each"
    nodes = [next(iter(u)) for u in updates]
    rounds = len(nodes) // len(LOOP)
    assert nodes == LOOP * rounds, "every round is plan → retrieve → read → update → decide"
    assert [u["plan"]["round"] for u in updates if "plan" in u] == list(range(1, rounds + 1))
    assert updates[-1]["decide"]["stop"].kind == "evidence_ready"
    assert rounds == last.report.budgets["rounds_used"]
    _inv, base, _out = reference_run
    assert {c.id: c.verdict for c in last.report.claims} == {c.id: c.verdict for c in base.report.claims}, \
        "streaming changes nothing about the verdicts"


def test_any_langgraph_stream_mode_passes_through(make_investigator):
    items = list(make_investigator().stream(REFERENCE, stream_mode=["updates", "values"]))
    *chunks, last = items
    assert isinstance(last, RunResult)
    modes = {mode for mode, _chunk in chunks}
    assert modes == {"updates", "values"}
    values = [chunk for mode, chunk in chunks if mode == "values"]
    assert values[-1]["stop"].kind == "evidence_ready" and values[-1]["round"] == last.report.budgets["rounds_used"]


def test_closing_the_stream_early_releases_the_run_and_resume_finishes_it(make_investigator, reference_run):
    inv = make_investigator()
    gen = inv.stream(REFERENCE)
    seen = []
    for update in gen:
        seen.append(update)
        if "decide" in update and len(seen) >= 2 * len(LOOP):
            break
    gen.close()
    run_id = inv.store.runs()[0].run_id
    row = inv.store.run(run_id)
    assert row.owner is None, "the lease is released when the consumer stops"
    assert row.status == "running" and row.rounds_used == 2
    done = inv.resume(run_id).report
    _inv, base, _out = reference_run
    assert done.stop.kind == "evidence_ready"
    assert {c.id: c.verdict for c in done.claims} == {c.id: c.verdict for c in base.report.claims}


def test_cli_run_prints_one_progress_line_per_node_update(tmp_path, index_root):
    env = {**os.environ, "INVESTIGATOR_INDEX_ROOT": str(index_root)}
    env.pop("INVESTIGATOR_CRASH_AT", None)
    out = subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(tmp_path / "ws"), "run",
                          str(REFERENCE), "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [m.groups() for m in re.finditer(r"^\[investigator\] r(\d+)\s+(\w+)\s+(.*)$", out.stderr, re.M)]
    nodes = [n for _r, n, _what in lines]
    rounds = len(nodes) // len(LOOP)
    assert rounds > 1 and nodes == LOOP * rounds
    assert lines[-1][1:] == ("decide", "stop: evidence_ready")
    assert "Traceback" not in out.stderr
    assert "causal_attribution           confirmed" in out.stdout
