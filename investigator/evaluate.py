"""`investigator eval`: run cases with an `expected.yaml` under each retrieval tool and score them."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from investigator.report import Report, render_markdown
from state._base import Frozen
from state.expected import Expected, load_expected
from tools.corpus import load_manifest, load_source
from tools.evaluation import mean


class CaseScore(Frozen):
    case_id: str
    retrieval: str
    claims: int
    verdicts_correct: int
    false_confirmations: int
    evidence_recall: float | None
    evidence_precision: float | None
    citations: int
    citations_valid: int
    leaks: int
    rounds: int
    reads: int
    stop: str
    stop_expected: str
    seconds: float
    verdicts: dict[str, str]
    expected_verdicts: dict[str, str]

    @property
    def verdict_accuracy(self) -> float:
        return self.verdicts_correct / self.claims if self.claims else 0.0


def _gold_items(expected: Expected) -> list[tuple[str, str]]:
    items = []
    for claim in expected.claims.values():
        items += [(g.source, g.quote) for g in claim.evidence]
        items += [(h.source, h.quote) for h in claim.bridge_path]
    return list(dict.fromkeys(items))


def store_text(workspace: Path) -> str:
    """Every row of the run's SQLite store and checkpoints, as text (to look for leaks)."""
    blobs = []
    for db in (workspace / "investigator.db", workspace / "checkpoints.db"):
        if db.exists():
            con = sqlite3.connect(db)
            for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'"):
                blobs.append(json.dumps(con.execute(f"SELECT * FROM {table}").fetchall(), default=repr))
            con.close()
    return "\n".join(blobs)


def score(case_dir: Path, report: Report, expected: Expected, outputs: str, seconds: float) -> CaseScore:
    """Score one finished run against the case's gold answers."""
    got = {c.id: c.verdict for c in report.claims}
    want = {cid: g.verdict for cid, g in expected.claims.items()}
    evidence = [e for e in report.evidence if e.span is not None]
    gold = _gold_items(expected)
    found = [any(e.source_id == src and (e.kind == "metric" or quote in e.span.quote) for e in evidence)
             for src, quote in gold]
    gold_sources = {src for src, _q in gold}
    cited = {i for c in report.claims for i in (*c.supporting, *c.opposing, *(e for h in c.path for e in h.evidence_ids))}
    cited_ev = [e for e in evidence if e.id in cited]
    manifest = {s.id: s for s in load_manifest(case_dir).sources}
    valid = 0
    for e in evidence:
        entry = manifest.get(e.source_id)
        if entry is not None and load_source(case_dir, entry).text[e.span.start:e.span.end] == e.span.quote:
            valid += 1
    return CaseScore(
        case_id=report.case_id, retrieval=report.retrieval, claims=len(want),
        verdicts_correct=sum(got.get(c) == v for c, v in want.items()),
        false_confirmations=sum(got.get(c) == "confirmed" and v != "confirmed" for c, v in want.items()),
        evidence_recall=sum(found) / len(found) if found else None,
        evidence_precision=(sum(e.source_id in gold_sources for e in cited_ev) / len(cited_ev)) if cited_ev else None,
        citations=len(evidence), citations_valid=valid,
        leaks=sum(outputs.count(c) for c in expected.canaries),
        rounds=report.budgets["rounds_used"], reads=report.budgets["reads_used"],
        stop=report.stop.kind if report.stop else report.status, stop_expected=expected.stop_reason,
        seconds=seconds, verdicts=got, expected_verdicts=want,
    )


def evaluate(cases: list[Path], tools: list[str], make: Callable[[Path, Callable[[str], None]], object],
             progress: Callable[[str], None] = lambda _m: None) -> list[CaseScore]:
    """Run every case under every tool in a fresh workspace and score it."""
    scores = []
    for case_dir in cases:
        expected = load_expected(case_dir)
        if expected is None:
            continue
        for tool in tools:
            with tempfile.TemporaryDirectory(prefix="inv-eval-") as tmp:
                ws = Path(tmp)
                log: list[str] = []
                inv = make(ws, log.append)
                result = inv.start(case_dir, retrieval=tool)  # type: ignore[attr-defined]
                outputs = "\n".join([result.report.to_json(), render_markdown(result.report), store_text(ws), *log])
                s = score(case_dir, result.report, expected, outputs, result.seconds)
                progress(f"{s.case_id} [{tool}]: {s.verdicts_correct}/{s.claims} verdicts, stop {s.stop}, "
                         f"{s.rounds} rounds, {s.reads} reads")
                scores.append(s)
    return scores


def summary(scores: list[CaseScore]) -> dict:
    by_tool: dict[str, dict] = {}
    for tool in sorted({s.retrieval for s in scores}):
        mine = [s for s in scores if s.retrieval == tool]
        by_tool[tool] = {
            "cases": len(mine),
            "verdict_accuracy": sum(s.verdicts_correct for s in mine) / max(1, sum(s.claims for s in mine)),
            "false_confirmations": sum(s.false_confirmations for s in mine),
            "evidence_recall": mean(s.evidence_recall for s in mine),
            "evidence_precision": mean(s.evidence_precision for s in mine),
            "citation_validity": sum(s.citations_valid for s in mine) / max(1, sum(s.citations for s in mine)),
            "leaks": sum(s.leaks for s in mine),
            "stop_match": sum(s.stop == s.stop_expected for s in mine) / max(1, len(mine)),
            "rounds": sum(s.rounds for s in mine), "reads": sum(s.reads for s in mine),
        }
    return by_tool


def to_json(scores: list[CaseScore]) -> str:
    return json.dumps({"schema": "investigator/eval@1", "overall": summary(scores),
                       "cases": [s.model_dump() | {"verdict_accuracy": s.verdict_accuracy} for s in scores]},
                      indent=2)


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.0f} %"


def to_markdown(scores: list[CaseScore]) -> str:
    lines = ["# Evaluation", "", "| case | tool | verdicts | false conf. | evidence recall | evidence precision "
             "| citations valid | leaks | stop (expected) | rounds | reads | seconds |", "|" + " --- |" * 12]
    for s in scores:
        lines.append(f"| {s.case_id} | {s.retrieval} | {s.verdicts_correct}/{s.claims} | {s.false_confirmations} "
                     f"| {_pct(s.evidence_recall)} | {_pct(s.evidence_precision)} | {s.citations_valid}/{s.citations} "
                     f"| {s.leaks} | {s.stop} ({s.stop_expected}) | {s.rounds} | {s.reads} | {s.seconds:.1f} |")
    lines += ["", "## Overall", "", "| tool | verdict accuracy | false confirmations | evidence recall "
              "| citation validity | leaks | stop match | rounds | reads |", "|" + " --- |" * 9]
    for tool, o in summary(scores).items():
        lines.append(f"| {tool} | {_pct(o['verdict_accuracy'])} | {o['false_confirmations']} | {_pct(o['evidence_recall'])} "
                     f"| {_pct(o['citation_validity'])} | {o['leaks']} | {_pct(o['stop_match'])} | {o['rounds']} | {o['reads']} |")
    return "\n".join(lines) + "\n"
