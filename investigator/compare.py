"""`investigator compare`: the same case, principal and budgets under graph and basic retrieval."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from investigator.evaluate import score
from investigator.report_md import render_markdown
from state.expected import load_expected
from tools.index import last_build


def compare(case_dir: Path, make: Callable[[Path, Callable[[str], None]], Any], tools: tuple[str, ...] = ("basic", "graph"),
            progress: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    """Run the case once per tool, each in a fresh workspace over the shared indexes."""
    expected = load_expected(case_dir)
    rows: dict[str, Any] = {}
    warm = make(Path(tempfile.gettempdir()), lambda _m: None)
    warm.embedder.embed(["warm up"])  # the model load is charged to neither tool
    case_id = ""
    for tool in tools:
        with tempfile.TemporaryDirectory(prefix=f"inv-compare-{tool}-") as tmp:
            log: list[str] = []
            inv = make(Path(tmp), log.append)
            result = inv.start(case_dir, retrieval=tool)
            r = result.report
            case_id = r.case_id
            row: dict[str, Any] = {
                "verdicts": {c.id: c.verdict for c in r.claims}, "stop": r.stop.kind if r.stop else r.status,
                "rounds": r.budgets["rounds_used"], "reads": r.budgets["reads_used"], "seconds": result.seconds,
                "evidence_recall": None, "verdicts_correct": None,
            }
            if expected is not None:
                s = score(case_dir, r, expected, r.to_json() + render_markdown(r) + "\n".join(log), result.seconds)
                row.update(evidence_recall=s.evidence_recall, verdicts_correct=f"{s.verdicts_correct}/{s.claims}",
                           false_confirmations=s.false_confirmations, leaks=s.leaks)
            case = inv.validate(case_dir)
            if tool == "basic":
                info = last_build(inv.index_path(case, case_dir))
                row["index"] = {"seconds": info.seconds if info else None, "bytes": info.bytes if info else None}
            else:
                from tools.graph.casegraph import read_manifest

                m = read_manifest(inv.graph_dir(case, case_dir)) or {}
                base = last_build(inv.index_path(case, case_dir))
                row["index"] = {"seconds": round((m.get("wall_seconds") or 0) + (base.seconds if base else 0), 3),
                                "bytes": (m.get("output_bytes") or 0) + (base.bytes if base else 0)}
            rows[tool] = row
            progress(f"{tool}: {row['stop']} in {row['rounds']} rounds, {row['reads']} reads")
    return {"schema": "investigator/compare@1", "case": case_id, "tools": rows,
            "expected": {cid: g.verdict for cid, g in expected.claims.items()} if expected else None}


def to_markdown(res: dict[str, Any]) -> str:
    tools = list(res["tools"])
    rows = res["tools"]
    lines = [f"# Compare: {res['case']}", "", "| | " + " | ".join(tools) + (" | expected |" if res["expected"] else " |"),
             "|" + " --- |" * (len(tools) + 1 + (1 if res["expected"] else 0))]
    claims = list(next(iter(rows.values()))["verdicts"])
    for c in claims:
        exp = f" | {res['expected'].get(c, '')}" if res["expected"] else ""
        lines.append(f"| `{c}` | " + " | ".join(rows[t]["verdicts"][c] for t in tools) + exp + " |")

    def line(label: str, fn: Callable[[dict], str]) -> str:
        return f"| {label} | " + " | ".join(fn(rows[t]) for t in tools) + (" | |" if res["expected"] else " |")

    pct = lambda v: "n/a" if v is None else f"{100 * v:.0f} %"  # noqa: E731
    lines += [line("stop reason", lambda r: r["stop"]), line("rounds", lambda r: str(r["rounds"])),
              line("reads", lambda r: str(r["reads"])), line("evidence recall", lambda r: pct(r["evidence_recall"])),
              line("wall time (s)", lambda r: f"{r['seconds']:.2f}"),
              line("index build (s)", lambda r: str(r["index"]["seconds"])),
              line("index size (KB)", lambda r: str(round((r["index"]["bytes"] or 0) / 1024)))]
    return "\n".join(lines) + "\n"


def to_json(res: dict[str, Any]) -> str:
    return json.dumps(res, indent=2)
