#!/usr/bin/env python3
"""Metric-based root-cause baselines (PyRCA, CIRCA) on case folders, side by side.

    bash bench/baselines/setup.sh
    bench/baselines/.venv/bin/python bench/baselines/run_baselines.py --cases cases \
        [--cases DIR2 ...] [--out bench/results/rca-baselines.json]

For every case folder (a folder with case.yaml) whose expected.yaml names a
`root_cause.entity` (or that the --gold-file names), it builds the per-entity metric matrix
and the call graph (bench/baselines/loader.py), runs each method in its own process with a
time limit, maps the metric ranking to an entity ranking (an entity ranks where its best
metric ranks) and scores top-1 / top-3 entity accuracy, overall, per cause kind and per
depth. A failure is recorded with its reason and counts as a miss; so does a case whose
root entity has no metric. Writes the JSON and a Markdown table next to it (.md).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shlex
import statistics
import sys
import time
import traceback
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

os.environ.setdefault("TQDM_DISABLE", "1")   # pgmpy's and RCD's progress bars

import logging  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

import loader  # noqa: E402

DEFAULT_OUT = ROOT / "bench" / "results" / "rca-baselines.json"
DEFAULT_GOLD = HERE / "shipped-gold.yaml"


def _versions() -> dict:
    out = {}
    for p in ("sfr-pyrca", "circa-clue", "numpy", "pandas", "scipy", "scikit-learn", "networkx"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = None
    return out


# --------------------------------------------------------------------------- one method, own process

def _child(conn, name: str, problem) -> None:
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    import methods

    t0 = time.perf_counter()
    try:
        out = methods.run(name, problem)
        out["status"] = "ok"
    except BaseException as exc:  # noqa: BLE001 -- any failure is recorded, never hidden
        tb = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        out = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"[:600], "where": where}
    out["seconds"] = round(time.perf_counter() - t0, 3)
    conn.send(out)
    conn.close()


def run_method(name: str, problem, timeout: float) -> dict:
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    t0 = time.perf_counter()
    proc = ctx.Process(target=_child, args=(child, name, problem), daemon=True)
    proc.start()
    child.close()
    out = None
    if parent.poll(timeout):
        try:
            out = parent.recv()
        except EOFError:
            out = None
    proc.join(5)
    if proc.is_alive():
        proc.kill()
        proc.join()
    if out is None:
        elapsed = round(time.perf_counter() - t0, 3)
        if elapsed >= timeout:
            return {"status": "timeout", "error": f"no result within {timeout:g} s", "seconds": elapsed}
        return {"status": "failed", "error": f"process died (exit code {proc.exitcode})", "seconds": elapsed}
    return out


# --------------------------------------------------------------------------- one case

def entity_ranking(metric_ranking: list, entity_of: dict) -> list[str]:
    out: list[str] = []
    for name, _score in metric_ranking:
        ent = entity_of.get(name)
        if ent is None and "|" in str(name):
            ent = str(name).split("|", 1)[0]
        if ent is not None and ent not in out:
            out.append(ent)
    return out


def build_problem(case: "loader.Case", seed: int):
    import pandas as pd

    import methods

    names = [c["name"] for c in case.columns]
    df = pd.DataFrame(case.values, columns=names,
                      index=pd.to_datetime(case.grid.astype("int64"), unit="s", utc=True))
    keep = [i for i, n in enumerate(names) if np.ptp(case.values[:, i]) > 0]
    dropped = [names[i] for i in range(len(names)) if i not in keep]
    cols = [case.columns[i] for i in keep]
    df = df[[names[i] for i in keep]]
    deps = [(a, b) for a, b, _ in case.dependencies]
    problem = methods.Problem(case_id=case.case_id, df=df, n_baseline=case.n_baseline, columns=cols,
                              entity_deps=deps, subject=case.subject, seed=seed)
    return problem, dropped


def run_case(case_dir: Path, names: list[str], args, gold_override: dict) -> dict:
    rec: dict = {"case": case_dir.name, "dir": str(case_dir)}
    try:
        case = loader.load_case(case_dir, respect_access=not args.ignore_access,
                                trace_metrics=not args.no_trace_metrics, gold_override=gold_override)
    except (loader.CaseError, OSError, ValueError) as exc:
        rec.update(status="unreadable", error=str(exc), scored=False)
        return rec
    rec.update(case=case.case_id, scored=case.scored, gold=case.gold, data=case.to_summary())
    if not case.scored and not args.all:
        rec["status"] = "skipped: no root_cause in expected.yaml"
        return rec
    problem, dropped = build_problem(case, args.seed)
    rec["data"]["constant_columns_dropped"] = dropped
    usable_entities = sorted({c["entity"] for c in problem.columns})
    rec["data"]["usable_metric_entities"] = usable_entities
    gold_entity = case.gold["entity"] if case.scored else None
    rec["root_has_metrics"] = (gold_entity in usable_entities) if case.scored else None
    rec["methods"] = {}
    if problem.df.shape[1] == 0:
        for n in names:
            rec["methods"][n] = {"status": "failed", "error": "no usable metric column", "seconds": 0.0}
        return _score_case(rec, gold_entity, args)
    if problem.n_baseline < 3 or len(problem.df) - problem.n_baseline < 2:
        for n in names:
            rec["methods"][n] = {"status": "failed", "seconds": 0.0, "error":
                                 f"too few rows: {problem.n_baseline} baseline, "
                                 f"{len(problem.df) - problem.n_baseline} window"}
        return _score_case(rec, gold_entity, args)
    try:
        import methods

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            methods.detect_anomalies(problem)
        rec["anomalous_metrics"] = problem.anomalies
        rec["anomalies_from"] = problem.anomalies_from
    except Exception as exc:  # noqa: BLE001
        rec["anomalies_error"] = f"{type(exc).__name__}: {exc}"
        problem.anomalies = [c["name"] for c in problem.columns if c["entity"] == case.subject]
        problem.anomalies_from = "detector failed; the subject's metrics"
    entity_of = {c["name"]: c["entity"] for c in problem.columns}
    for n in names:
        out = run_method(n, problem, args.timeout)
        if out.get("status") == "ok":
            ranking = out.pop("metric_ranking")
            out["entity_ranking"] = entity_ranking(ranking, entity_of)
            out["metric_ranking"] = [[m, s] for m, s in ranking[: args.keep_metrics]]
            if not out["entity_ranking"]:
                out["note_empty"] = "the method returned no candidate"
        rec["methods"][n] = out
    return _score_case(rec, gold_entity, args)


def _score_case(rec: dict, gold_entity: str | None, args) -> dict:
    rec["status"] = "ran"
    if gold_entity is None:
        return rec
    for out in rec["methods"].values():
        ranking = out.get("entity_ranking") or []
        out["rank"] = ranking.index(gold_entity) + 1 if gold_entity in ranking else None
        out["top1"] = out["rank"] == 1
        out["top3"] = out["rank"] is not None and out["rank"] <= 3
    return rec


# --------------------------------------------------------------------------- external rankings

def load_external(spec: str, case_ids: set[str]) -> tuple[str, dict[str, list[str]]]:
    """NAME=FILE: JSON {case_id: entity | [entities] | {"entity"|"root_cause"|"ranking": ...}}."""
    name, _, path = spec.partition("=")
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    for cid, v in data.items():
        if isinstance(v, dict):
            v = v.get("ranking") or v.get("entity") or (v.get("root_cause") or {}).get("entity")
        if isinstance(v, str):
            v = [v]
        out[str(cid)] = [str(x) for x in (v or [])]
    return name, out


# --------------------------------------------------------------------------- summary

def _acc(rows: list[dict]) -> dict:
    n = len(rows)
    h1 = sum(1 for r in rows if r.get("top1"))
    h3 = sum(1 for r in rows if r.get("top3"))
    secs = [r["seconds"] for r in rows if isinstance(r.get("seconds"), (int, float))]
    return {"n": n, "top1": round(h1 / n, 4) if n else None, "top3": round(h3 / n, 4) if n else None,
            "hits1": h1, "hits3": h3,
            "failed": sum(1 for r in rows if r.get("status") == "failed"),
            "timeout": sum(1 for r in rows if r.get("status") == "timeout"),
            "mean_seconds": round(statistics.fmean(secs), 3) if secs else None,
            "median_seconds": round(statistics.median(secs), 3) if secs else None}


def summarize(records: list[dict], names: list[str]) -> dict:
    scored = [r for r in records if r.get("scored") and r.get("status") == "ran"]
    summary: dict = {"cases_found": len(records), "cases_scored": len(scored),
                     "cases_unscored": sum(1 for r in records if not r.get("scored")),
                     "cases_unreadable": sum(1 for r in records if r.get("status") == "unreadable"),
                     "root_without_metrics": sum(1 for r in scored if not r.get("root_has_metrics")),
                     "methods": {}}
    for n in names:
        rows = [r["methods"][n] for r in scored if n in r.get("methods", {})]
        by_kind: dict[str, list] = {}
        by_depth: dict[str, list] = {}
        for r in scored:
            if n not in r.get("methods", {}):
                continue
            g = r.get("gold") or {}
            by_kind.setdefault(str(g.get("cause_kind") or "unknown"), []).append(r["methods"][n])
            by_depth.setdefault(str(g.get("depth") if g.get("depth") is not None else "unknown"),
                                []).append(r["methods"][n])
        reasons: dict[str, int] = {}
        for row in rows:
            if row.get("status") in ("failed", "timeout"):
                key = row.get("error", "")[:160]
                reasons[key] = reasons.get(key, 0) + 1
        summary["methods"][n] = {"overall": _acc(rows),
                                 "by_cause_kind": {k: _acc(v) for k, v in sorted(by_kind.items())},
                                 "by_depth": {k: _acc(v) for k, v in sorted(by_depth.items(), key=_depth_key)},
                                 "failure_reasons": reasons}
    return summary


def _depth_key(item):
    k = item[0]
    return (0, int(k)) if str(k).isdigit() else (1, str(k))


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def markdown(result: dict) -> str:
    s = result["summary"]
    names = list(s["methods"])
    desc = result["methods"]
    lines = [
        "# Metric-based root-cause baselines (PyRCA, CIRCA)", "",
        f"Command: `{result['command']}`  ",
        f"Cases: {s['cases_found']} found, **{s['cases_scored']} scored** "
        f"(unscored: {s['cases_unscored']}, unreadable: {s['cases_unreadable']}); "
        f"root entity without any usable metric: **{s['root_without_metrics']}** "
        "(a miss for every method).  ",
        "Accuracy is over all scored cases; a method that failed or timed out on a case "
        "counts as a miss there. Seconds are per case and method (its own process).", "",
        "| method | n | top-1 | top-3 | failed | timeout | s/case (mean) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n in names:
        o = s["methods"][n]["overall"]
        label = f"{n} — {desc.get(n, '')}" if desc.get(n) else n
        lines.append(f"| {label} | {o['n']} | {_pct(o['top1'])} ({o['hits1']}) | {_pct(o['top3'])} "
                     f"({o['hits3']}) | {o['failed']} | {o['timeout']} | "
                     f"{'–' if o['mean_seconds'] is None else o['mean_seconds']} |")
    for title, key in (("cause kind", "by_cause_kind"), ("depth", "by_depth")):
        groups: list[str] = []
        for n in names:
            for g in s["methods"][n][key]:
                if g not in groups:
                    groups.append(g)
        if not groups:
            continue
        lines += ["", f"## By {title} (top-1 / top-3)", "",
                  f"| method | " + " | ".join(f"{g} (n={s['methods'][names[0]][key].get(g, {}).get('n', 0)})"
                                              for g in groups) + " |",
                  "| --- |" + " ---: |" * len(groups)]
        for n in names:
            cells = []
            for g in groups:
                a = s["methods"][n][key].get(g)
                cells.append("–" if not a else f"{_pct(a['top1'])} / {_pct(a['top3'])}")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
    scored = [r for r in result["cases"] if r.get("scored") and r.get("status") == "ran"]
    if scored and len(scored) <= 60:
        lines += ["", "## Per case (rank of the root entity; – = not ranked, ✗ = failed)", "",
                  "| case | root | kind | depth | metrics? | " + " | ".join(names) + " |",
                  "| --- | --- | --- | --- | --- |" + " ---: |" * len(names)]
        for r in scored:
            g = r["gold"]
            cells = []
            for n in names:
                m = r["methods"].get(n, {})
                cells.append("✗" if m.get("status") in ("failed", "timeout") else
                             (str(m.get("rank")) if m.get("rank") else "–"))
            lines.append(f"| {r['case']} | {g['entity']} | {g.get('cause_kind') or '?'} | "
                         f"{g.get('depth') if g.get('depth') is not None else '?'} | "
                         f"{'yes' if r.get('root_has_metrics') else 'no'} | " + " | ".join(cells) + " |")
    fails = {n: s["methods"][n]["failure_reasons"] for n in names if s["methods"][n]["failure_reasons"]}
    if fails:
        lines += ["", "## Failures", ""]
        for n, reasons in fails.items():
            for reason, cnt in sorted(reasons.items(), key=lambda x: -x[1]):
                lines.append(f"- {n}: {cnt} × `{reason}`")
    gold_notes = sorted({r["gold"].get("source") for r in scored if r.get("gold")})
    lines += ["", "Gold root entity from: " + "; ".join(str(g) for g in gold_notes) + ".",
              "", f"Versions: {json.dumps(result['versions'])}", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", action="append", required=True,
                    help="a case folder or a folder holding case folders (repeatable)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--methods", default=None, help="comma-separated subset of: "
                    "pyrca_rw@call,pyrca_rw@struct,pyrca_rw_all@call,pyrca_rw_all@struct,pyrca_rcd,"
                    "pyrca_bn@call,pyrca_bn@struct,circa@call,circa@struct,nsigma")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per method and case")
    ap.add_argument("--jobs", type=int, default=1,
                    help="cases run at once (each method still in its own process); the machine "
                         "has 2 cores, and seconds per case are measured under that load")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="at most this many cases")
    ap.add_argument("--gold-file", default=str(DEFAULT_GOLD),
                    help="YAML {case_id: {entity, kind, path, gold_source}} used only for cases "
                         "whose expected.yaml has no root_cause ('' to disable)")
    ap.add_argument("--all", action="store_true", help="also run unscored cases (rankings only)")
    ap.add_argument("--ignore-access", action="store_true",
                    help="use sources the case's principal cannot read, too")
    ap.add_argument("--no-trace-metrics", action="store_true",
                    help="do not derive per-minute span p95 / error share from traces")
    ap.add_argument("--keep-metrics", type=int, default=10, help="metric ranking entries kept per method")
    ap.add_argument("--compare", action="append", default=[],
                    help="NAME=FILE: another system's answers ({case_id: entity or [ranking]}) "
                         "scored in the same table")
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)   # PyRCA's INFO lines on every detector call

    import methods

    names = list(methods.METHODS) if not args.methods else [m.strip() for m in args.methods.split(",")]
    unknown = [n for n in names if n not in methods.METHODS]
    if unknown:
        ap.error(f"unknown methods: {unknown}")
    gold_override = {}
    if args.gold_file and Path(args.gold_file).is_file():
        gold_override = yaml.safe_load(Path(args.gold_file).read_text(encoding="utf-8")) or {}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        methods.preload()
    case_dirs = loader.find_cases(args.cases)
    if args.limit:
        case_dirs = case_dirs[: args.limit]
    t_all = time.perf_counter()
    done = 0

    def report(rec: dict, secs: float) -> None:
        nonlocal done
        done += 1
        ms = rec.get("methods", {})
        brief = " ".join(f"{n}={'✗' if m.get('status') != 'ok' else (m.get('rank') or '-')}"
                         for n, m in ms.items())
        print(f"[{done}/{len(case_dirs)}] {rec['case']}: {rec.get('status')} "
              f"gold={(rec.get('gold') or {}).get('entity')} {brief} ({secs:.1f} s)", flush=True)

    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        by_index: dict[int, dict] = {}
        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("fork")) as ex:
            futs = {ex.submit(_timed_case, d, names, args, gold_override): i for i, d in enumerate(case_dirs)}
            for fut in as_completed(futs):
                rec, secs = fut.result()
                by_index[futs[fut]] = rec
                report(rec, secs)
        records = [by_index[i] for i in range(len(case_dirs))]
    else:
        records = []
        for d in case_dirs:
            rec, secs = _timed_case(d, names, args, gold_override)
            records.append(rec)
            report(rec, secs)

    all_names = list(names)
    descriptions = {n: methods.DESCRIPTIONS.get(n, "") for n in names}
    for spec in args.compare:
        cname, answers = load_external(spec, {r["case"] for r in records})
        all_names.append(cname)
        descriptions[cname] = f"external answers from {spec.partition('=')[2]}"
        for r in records:
            if r.get("status") != "ran":
                continue
            if r["case"] in answers:
                ranking = answers[r["case"]]
                r["methods"][cname] = {"status": "ok", "entity_ranking": ranking, "external": True}
            else:
                r["methods"][cname] = {"status": "failed", "error": "no answer for this case"}
            if r.get("scored"):
                _score_case(r, r["gold"]["entity"], args)

    result = {
        "benchmark": "rca-baselines",
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count()},
        "versions": _versions(),
        "settings": {"timeout_s": args.timeout, "jobs": args.jobs, "seed": args.seed, "respect_access": not args.ignore_access,
                     "trace_metrics": not args.no_trace_metrics, "grid_step_s": loader.STEP},
        "methods": descriptions,
        "seconds_total": round(time.perf_counter() - t_all, 2),
        "summary": summarize(records, all_names),
        "cases": records,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=_json_default), encoding="utf-8")
    md = out.with_suffix(".md")
    md.write_text(markdown(result), encoding="utf-8")
    print(f"wrote {out} and {md}")
    return 0


def _timed_case(d: Path, names: list[str], args, gold_override: dict) -> tuple[dict, float]:
    t0 = time.perf_counter()
    rec = run_case(d, names, args, gold_override)
    return rec, time.perf_counter() - t0


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)


if __name__ == "__main__":
    sys.exit(main())
