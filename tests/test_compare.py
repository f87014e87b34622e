"""graph vs basic on the same case, principal and budgets."""

from __future__ import annotations

from pathlib import Path

from investigator.compare import compare, to_markdown

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


def test_compare_runs_both_tools_and_reports_rounds_reads_recall_and_index_cost(make_investigator, tmp_path):
    base = make_investigator(workspace=tmp_path / "base")
    base.index_graph(REFERENCE)

    def make(ws, log):
        return make_investigator(workspace=ws, progress=log)

    res = compare(REFERENCE, make)
    assert set(res["tools"]) == {"basic", "graph"}
    for tool, row in res["tools"].items():
        assert row["verdicts"] == res["expected"], tool
        assert row["stop"] == "evidence_ready" and row["false_confirmations"] == 0 and row["leaks"] == 0
        assert row["rounds"] > 0 and row["reads"] > 0 and row["evidence_recall"] > 0
        assert row["index"]["bytes"] > 0
    md = to_markdown(res)
    assert "| rounds |" in md and "| evidence recall |" in md
