"""`investigator eval`: run cases with an `expected.yaml` under each retrieval tool and score them.

Per run: claim verdicts against the gold, false confirmations (a claim confirmed that the gold
does not confirm, and a causal claim confirmed with another root cause than the gold's), the
root cause (entity and change), whether an `insufficient` names what is missing, the stop
reason, evidence recall and precision against gold spans, citation validity, leaks of
unreadable text, rounds, reads and time. The summary breaks these down by tool, by cause kind,
by depth and by variant (from the generator's metadata when a case has it).

A change named in the gold by reference (`change_ref`, for changes from histories and
snapshot diffs) matches the documented id of that change (docs/case-format.md §5). A gold root
cause that names no change and is not `capacity` leaves the change unconstrained (the gold
could not name it); a `capacity` gold with no change wants none.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from investigator.manifests import manifest_now
from investigator.report import Report

from investigator.report_md import render_markdown
from state import Frozen, content_hash
from state.expected import Expected, load_expected
from state.progress import duration
from tools.corpus import read_text
from tools.evaluation import mean


class CaseScore(Frozen):
    case_id: str
    retrieval: str
    claims: int
    verdicts_correct: int
    false_confirmations: int
    wrong_root_confirmed: bool = False
    causal_verdict: str | None = None
    causal_expected: str | None = None
    root_expected: tuple[str | None, str | None, str | None] | None = None
    root_found: tuple[str | None, str | None, str | None] | None = None
    root_entity_ok: bool | None = None
    root_change_ok: bool | None = None
    insufficient_named: bool | None = None
    evidence_recall: float | None
    evidence_precision: float | None
    citations: int
    citations_valid: int
    leaks: int
    rounds: int
    reads: int
    root_round: int | None = None
    """The round by which every hop of the path to the root cause (the cause included) was read."""
    root_reads: int | None = None
    """The reads made up to and including `root_round`: what reaching the root cause cost."""
    stop: str
    stop_expected: str
    seconds: float
    verdicts: dict[str, str]
    expected_verdicts: dict[str, str]
    cause_kind: str = ""
    depth: int | None = None
    variant: str = ""
    error: str = ""
    contradictions: int = 0
    """Pairs of final verdicts of the run that contradict each other (graphs/rulebook/consistency.py); always 0."""

    @property
    def verdict_accuracy(self) -> float:
        return self.verdicts_correct / self.claims if self.claims else 0.0

    @property
    def root_ok(self) -> bool | None:
        if self.root_entity_ok is None:
            return None
        return bool(self.root_entity_ok and self.root_change_ok)

    @property
    def root_scored(self) -> bool | None:
        """What the root-cause accuracy counts for this case: None where the gold expects no confirmed
        cause (the case is scored on naming what is missing instead); else the right root, confirmed.
        Rows, progress lines and group figures all use this one definition, so they agree."""
        if self.causal_expected != "confirmed":
            return None
        return bool(self.root_ok) and self.causal_verdict == "confirmed"

    @property
    def root_mark(self) -> str:
        """The row's mark for `root_scored`: a right root the run did not confirm is not a ✓."""
        if self.root_scored is None:
            return ""
        if self.root_scored:
            return " ✓"
        return " ✗ (right, not confirmed)" if self.root_ok else " ✗"


def error_score(case_id: str, tool: str, expected: Expected, error: str) -> CaseScore:
    """The score of a run that ended in an error instead of a report: every verdict wrong, stop `error`."""
    return CaseScore(case_id=case_id, retrieval=tool, claims=len(expected.claims), verdicts_correct=0,
                     false_confirmations=0, evidence_recall=None, evidence_precision=None, citations=0,
                     citations_valid=0, leaks=0, rounds=0, reads=0, stop="error", stop_expected=expected.stop_reason,
                     seconds=0.0, verdicts={}, expected_verdicts={c: g.verdict for c, g in expected.claims.items()},
                     error=error)


def case_line(s: CaseScore) -> str:
    """One finished case, as `eval` prints it while the rest run (the same mark as its table row)."""
    root = {None: "-", True: "ok"}.get(s.root_scored, "right, not confirmed" if s.root_ok else "WRONG")
    return (f"{s.case_id} [{s.retrieval}]: {s.verdicts_correct}/{s.claims} verdicts, root {root}, stop {s.stop}"
            f"{' FALSE CONFIRMATION' if s.false_confirmations else ''}, {s.rounds} rounds, {s.reads} reads"
            f"{' ERROR ' + s.error if s.error else ''}")


def finished_counter(progress: Callable[[str], None], total: int,
                     clock: Callable[[], float] = time.monotonic) -> Callable[[str], None]:
    """`progress` for finished case runs: each line numbered out of `total`, with the time left once
    one has finished (the mean time per run so far, times the runs left)."""
    started, done = clock(), [0]

    def say(line: str) -> None:
        done[0] += 1
        left = total - done[0]
        eta = f", about {duration((clock() - started) / done[0] * left)} left" if 0 < left else ""
        progress(f"[{done[0]}/{total}{eta}] {line}")

    return say


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


def change_matches(found: str | None, expected: str | None, ref: dict[str, Any] | None) -> bool:
    """Does a reported change id name the gold change (by id, or by a history/snapshot reference)?"""
    if expected is not None:
        return found == expected
    if not ref:
        return found is None
    if found is None:
        return False
    fmt = ref.get("format")
    if fmt == "helm":
        return found.endswith(f"@helm-rev{ref.get('revision')}")
    if fmt == "argocd":
        return found.endswith(f"@argocd-{ref.get('history_id')}")
    if fmt == "rollout":
        return found.endswith(f"@rev{ref.get('revision')}")
    if fmt == "flags":
        return found.startswith(f"{ref.get('flag')}@") or found == ref.get("id")
    if fmt == "snapshot":
        return "@config:" in found and found.endswith(f"..{ref.get('source')}")
    return False


def _unspecified_change(kind: str | None, change: str | None, ref: dict[str, Any] | None) -> bool:
    """A gold root cause that names no change (by id or reference) and is not a cause without one
    (capacity, a third party's own failure: no change at all) does not constrain the change the run names."""
    return change is None and not ref and kind not in ("capacity", "external")


def _extra(expected: Expected, key: str) -> Any:
    return (expected.model_extra or {}).get(key)


def score(case_dir: Path, report: Report, expected: Expected, outputs: str, seconds: float) -> CaseScore:
    """Score one finished run against the case's gold answers."""
    got = {c.id: c.verdict for c in report.claims}
    want = {cid: g.verdict for cid, g in expected.claims.items()}
    evidence = [e for e in report.evidence if e.span is not None]
    gold = _gold_items(expected)
    found = [any(e.source_id == src and (quote in e.span.quote or bool(e.signals)) for e in evidence)
             for src, quote in gold]
    gold_sources = {src for src, _q in gold}
    cited = {i for c in report.claims for i in (*c.supporting, *c.opposing, *(e for h in c.path for e in h.evidence_ids))}
    cited_ev = [e for e in evidence if e.id in cited]
    manifest = {s.id: s for s in manifest_now(case_dir).sources}
    valid = 0
    texts: dict[str, str | None] = {}
    for e in evidence:
        entry = manifest.get(e.source_id)
        if e.source_id not in texts:
            try:
                texts[e.source_id] = read_text(case_dir, entry) if entry is not None else None
            except Exception:  # noqa: BLE001 - a source that no longer loads is an invalid citation
                texts[e.source_id] = None
        text = texts[e.source_id]
        if text is not None and text[e.span.start:e.span.end] == e.span.quote and \
                e.span.content_hash == content_hash(e.span.quote):
            valid += 1
    causal = next((c for c in report.claims if c.kind == "causal_chain"), None)
    causal_expected = want.get(causal.id) if causal else None
    rc = causal.root_cause if causal else None
    gold_rc = expected.root_cause
    ref = (gold_rc.model_extra or {}).get("change_ref") if gold_rc else None
    root_entity_ok = root_change_ok = None
    if gold_rc is not None and causal_expected in ("confirmed", "inferred"):
        root_entity_ok = rc is not None and rc.entity == gold_rc.entity
        root_change_ok = rc is not None and (_unspecified_change(gold_rc.kind, gold_rc.change, ref)
                                             or change_matches(rc.change, gold_rc.change, ref))
    false_conf = sum(got.get(c) == "confirmed" and v != "confirmed" for c, v in want.items())
    wrong_root = bool(causal and causal.verdict == "confirmed" and gold_rc is not None and causal_expected == "confirmed"
                      and not (root_entity_ok and root_change_ok))
    gen = _extra(expected, "generator") or {}
    return CaseScore(
        case_id=report.case_id, retrieval=report.retrieval, claims=len(want),
        verdicts_correct=sum(got.get(c) == v for c, v in want.items()),
        false_confirmations=false_conf + int(wrong_root), wrong_root_confirmed=wrong_root,
        causal_verdict=causal.verdict if causal else None, causal_expected=causal_expected,
        root_expected=(gold_rc.entity, gold_rc.kind, gold_rc.change or (json.dumps(ref) if ref else None)) if gold_rc else None,
        root_found=(rc.entity, rc.kind, rc.change) if rc else None,
        root_entity_ok=root_entity_ok, root_change_ok=root_change_ok,
        insufficient_named=(bool(causal.missing) if causal and causal.verdict == "insufficient" else None),
        evidence_recall=sum(found) / len(found) if found else None,
        evidence_precision=(sum(e.source_id in gold_sources for e in cited_ev) / len(cited_ev)) if cited_ev else None,
        citations=len(evidence), citations_valid=valid,
        leaks=sum(outputs.count(c) for c in expected.canaries),
        rounds=report.budgets["rounds_used"], reads=report.budgets["reads_used"],
        root_round=max((h.round for h in causal.path if h.round is not None), default=None) if rc and causal else None,
        root_reads=max((h.reads for h in causal.path if h.reads is not None), default=None) if rc and causal else None,
        stop=report.stop.kind if report.stop else report.status, stop_expected=expected.stop_reason,
        seconds=seconds, verdicts=got, expected_verdicts=want,
        cause_kind=str(gen.get("cause_kind") or (gold_rc.kind if gold_rc else "") or ""),
        depth=gen.get("depth") if gen else (len(gold_rc.path) - 1 if gold_rc and gold_rc.path else None),
        variant=str(gen.get("variant", "")),
    )


def evaluate(cases: list[Path], tools: list[str], make: Callable[[Path, Callable[[str], None]], object],
             progress: Callable[[str], None] = lambda _m: None, index_root: Path | None = None) -> list[CaseScore]:
    """Run every case under every tool (one workspace per case: both tools share its index) and score it.

    `index_root`: where the case indexes are kept between evaluations (default: a fresh temporary one
    per case, so nothing is reused)."""
    scores = []
    finished = finished_counter(progress, len(cases) * len(tools))
    for case_dir in cases:
        expected = load_expected(case_dir)
        if expected is None:
            continue
        with tempfile.TemporaryDirectory(prefix="inv-eval-") as tmp:
            for tool in tools:
                ws = Path(tmp) / tool
                log: list[str] = []
                inv = make(ws, log.append)
                inv.settings = inv.settings.model_copy(  # type: ignore[attr-defined]
                    update={"index_root": index_root or Path(tmp) / "index"})
                try:
                    result = inv.start(case_dir, retrieval=tool)  # type: ignore[attr-defined]
                except Exception as exc:  # noqa: BLE001 - a crash is a result to report, not a reason to stop
                    s = error_score(case_dir.name, tool, expected, f"{type(exc).__name__}: {exc}"[:300])
                    scores.append(s)
                    finished(f"{case_dir.name} [{tool}]: error {s.error}")
                    continue
                outputs = "\n".join([result.report.to_json(), render_markdown(result.report), store_text(ws), *log])
                s = score(case_dir, result.report, expected, outputs, result.seconds)
                store = getattr(inv, "store", None)
                if store is not None:
                    s = s.model_copy(update={"contradictions": len(run_contradictions(case_dir, store.decisions(result.run_id)))})
                finished(case_line(s))
                scores.append(s)
    return scores


def run_contradictions(case_dir: Path, decisions: dict) -> list[str]:
    """The one consistency check (graphs/rulebook/consistency.py) over the final verdicts of a run of a case."""
    from graphs.rulebook.consistency import contradictions
    from graphs.rulebook.hypotheses import read_blames
    from investigator.loading import load_case_folder
    from state.progress import silent

    loaded = load_case_folder(case_dir, silent)
    case, profile = loaded.case, loaded.profile
    return contradictions(case, profile, decisions, read_blames(case, loaded.registry, profile))


def _group(scores: list[CaseScore]) -> dict[str, Any]:
    suff = [s for s in scores if s.causal_expected == "confirmed"]
    insuff = [s for s in scores if s.causal_expected == "insufficient"]
    return {
        "cases": len(scores),
        "verdict_accuracy": sum(s.verdicts_correct for s in scores) / max(1, sum(s.claims for s in scores)),
        "false_confirmations": sum(s.false_confirmations for s in scores),
        "wrong_root_confirmed": sum(s.wrong_root_confirmed for s in scores),
        "root_cause_accuracy": (sum(bool(s.root_scored) for s in suff) / len(suff)) if suff else None,
        "root_entity_accuracy": (sum(bool(s.root_entity_ok) for s in suff) / len(suff)) if suff else None,
        "correct_insufficient": (sum(s.causal_verdict == "insufficient" and bool(s.insufficient_named) for s in insuff)
                                 / len(insuff)) if insuff else None,
        "causal_verdict_accuracy": sum(s.causal_verdict == s.causal_expected for s in scores) / max(1, len(scores)),
        "stop_match": sum(s.stop == s.stop_expected for s in scores) / max(1, len(scores)),
        "evidence_recall": mean(s.evidence_recall for s in scores),
        "citation_validity": sum(s.citations_valid for s in scores) / max(1, sum(s.citations for s in scores)),
        "leaks": sum(s.leaks for s in scores),
        "errors": sum(bool(s.error) for s in scores),
        "rounds_mean": mean(float(s.rounds) for s in scores),
        "reads_mean": mean(float(s.reads) for s in scores),
        "seconds_mean": mean(s.seconds for s in scores),
    }


def summary(scores: list[CaseScore]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tool in sorted({s.retrieval for s in scores}):
        mine = [s for s in scores if s.retrieval == tool]
        by = {name: defaultdict(list) for name in ("cause_kind", "depth", "variant")}
        for s in mine:
            for name in by:
                by[name][str(getattr(s, name) or "-")].append(s)
        confusion = Counter((s.stop_expected, s.stop) for s in mine)
        out[tool] = {**_group(mine),
                     **{f"by_{name}": {k: _group(v) for k, v in sorted(groups.items())} for name, groups in by.items()},
                     "stop_confusion": {f"{a} -> {b}": n for (a, b), n in sorted(confusion.items())}}
    return out


def to_json(scores: list[CaseScore]) -> str:
    return json.dumps({"schema": "investigator/eval@2", "overall": summary(scores),
                       "cases": [s.model_dump() | {"verdict_accuracy": s.verdict_accuracy, "root_ok": s.root_ok,
                                                   "root_scored": s.root_scored}
                                 for s in scores]}, indent=2, default=str)


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.0f} %"


def to_markdown(scores: list[CaseScore], per_case: bool | None = None) -> str:
    per_case = len(scores) <= 40 if per_case is None else per_case
    lines = ["# Evaluation", ""]
    if per_case:
        lines += ["| case | tool | verdicts | false conf. | root cause (found) | causal (expected) | stop (expected) "
                  "| rounds | reads | seconds |", "|" + " --- |" * 10]
        for s in scores:
            root = " / ".join(str(x) for x in s.root_found) if s.root_found else "—"
            lines.append(f"| {s.case_id} | {s.retrieval} | {s.verdicts_correct}/{s.claims} | {s.false_confirmations} "
                         f"| {root}{s.root_mark} "
                         f"| {s.causal_verdict} ({s.causal_expected}) | {s.stop} ({s.stop_expected}) | {s.rounds} "
                         f"| {s.reads} | {s.seconds:.1f} |")
        lines.append("")
    head = ("| group | cases | verdict acc. | false conf. | root cause acc. | correct insufficient | stop match "
            "| rounds | reads |")
    rule = "|" + " --- |" * 9

    def row(name: str, o: dict) -> str:
        return (f"| {name} | {o['cases']} | {_pct(o['verdict_accuracy'])} | {o['false_confirmations']} "
                f"| {_pct(o['root_cause_accuracy'])} | {_pct(o['correct_insufficient'])} | {_pct(o['stop_match'])} "
                f"| {o['rounds_mean'] or 0:.1f} | {o['reads_mean'] or 0:.1f} |")

    for tool, o in summary(scores).items():
        lines += [f"## {tool}", "", head, rule, row("all", o)]
        for name in ("cause_kind", "depth", "variant"):
            for k, g in o[f"by_{name}"].items():
                if k != "-":
                    lines.append(row(f"{name} {k}", g))
        lines += ["", f"citation validity {_pct(o['citation_validity'])}, leaks {o['leaks']}, errors {o['errors']}, "
                  f"evidence recall {_pct(o['evidence_recall'])}", "", "Stop reasons (expected -> got):", ""]
        lines += [f"- {k}: {n}" for k, n in o["stop_confusion"].items()]
        lines.append("")
    return "\n".join(lines) + "\n"


def expand(paths: list[Path]) -> list[Path]:
    """Case folders: a folder with `expected.yaml`, or every such folder under a folder, sorted."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if (p / "case.yaml").exists():
            out.append(p)
        else:
            out += sorted(q.parent for q in p.glob("*/expected.yaml"))
    return list(dict.fromkeys(out))
