"""Commands that score the investigator: eval (cases with gold answers), compare (graph vs basic), bench.

Imports `investigator.cli.common`; evaluation, comparison and the benchmark are imported inside
the commands.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from investigator.cli.common import library, workspace_factory


def cmd_eval(args: argparse.Namespace) -> int:
    from investigator.eval_parallel import evaluate_parallel
    from investigator.evaluate import evaluate, expand, to_json, to_markdown

    base = library(args)
    for given in map(Path, args.cases):
        if not given.is_dir():
            print(f"error: {given}: no such folder (expected a case folder or a folder of cases)", file=sys.stderr)
            return 2
        if (given / "case.yaml").exists() and not (given / "expected.yaml").exists():
            print(f"error: {given / 'expected.yaml'}: missing (eval scores a run against it)", file=sys.stderr)
            return 2
        if not expand([given]):
            print(f"error: {given}: no case folder with an expected.yaml in it", file=sys.stderr)
            return 2
    cases = expand([Path(c) for c in args.cases] or [Path("cases")])
    if not cases:
        print(f"error: no case folder with an expected.yaml in {', '.join(args.cases) or 'cases'}", file=sys.stderr)
        return 2
    tools = args.tool or ["basic", "graph"]
    keep = base.settings.index_root  # INVESTIGATOR_INDEX_ROOT: indexes reused between evaluations
    base.progress(f"eval: {len(cases)} case{'s' if len(cases) != 1 else ''} x {' and '.join(tools)}, "
                  f"{args.jobs} at a time; each finished run is said as it ends (a case's first run also "
                  f"builds its indexes)")
    if args.jobs > 1:
        scores = evaluate_parallel(cases, tools, args.jobs, progress=base.progress, index_root=keep)
    else:
        scores = evaluate(cases, tools, workspace_factory(base), progress=base.progress, index_root=keep)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval.json").write_text(to_json(scores))
    (out / "eval.md").write_text(to_markdown(scores))
    print(to_markdown(scores))
    bad = sum(s.false_confirmations + s.leaks for s in scores) + sum(s.citations - s.citations_valid for s in scores)
    return 1 if bad else 0


def cmd_compare(args: argparse.Namespace) -> int:
    from investigator.compare import compare, to_json, to_markdown

    base = library(args)
    base.index_graph(Path(args.case))
    res = compare(Path(args.case), workspace_factory(base), progress=base.progress)
    out = Path(args.out or f"out/compare-{res['case']}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(to_json(res))
    (out / "compare.md").write_text(to_markdown(res))
    print(to_markdown(res))
    return 0


def cmd_bench_retrieval(args: argparse.Namespace) -> int:
    import json
    import tempfile

    tools = args.tool or ["bm25", "dense", "basic", "graph", "graph-ppr", "graph+dense"]
    if args.pool_size is not None and not args.pool:
        print("error: --pool-size needs --pool", file=sys.stderr)
        return 2
    from tools.benchdata import load_dataset

    ds = None if args.pool else load_dataset(Path(args.dataset))
    inv = library(args)
    with tempfile.TemporaryDirectory(prefix="inv-bench-") as tmp:
        if ds is None:
            from investigator.bench_pooled import run_pooled_bench
            from investigator.bench_pooled import to_markdown as pooled_markdown

            res = run_pooled_bench([Path(p) for p in args.pool], inv.embedder, Path(tmp), tools,
                                   size=args.pool_size, seed=args.seed, progress=inv.progress)
            markdown = pooled_markdown(res)
        else:
            from investigator.bench import run_retrieval_bench, to_markdown

            res = run_retrieval_bench(ds, inv.embedder, Path(tmp), tools, inv.progress)
            markdown = to_markdown(res)
    res["command"] = " ".join(["investigator", "bench", "retrieval", *_bench_argv(args)])
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(res, indent=2))
    print(markdown)
    return 0


def _bench_argv(args: argparse.Namespace) -> list[str]:
    if not args.pool:
        return ["--dataset", args.dataset]
    argv = [a for p in args.pool for a in ("--pool", p)]
    if args.pool_size is not None:
        argv += ["--pool-size", str(args.pool_size), "--seed", str(args.seed)]
    return argv + [a for t in args.tool or () for a in ("--tool", t)]
