"""`investigator`: a thin command line over the library API (one command, one call)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from state.errors import InvestigatorError

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _inv(args: argparse.Namespace):  # noqa: ANN202 - imported lazily so --help starts at once
    from graphs.deps import CrashPoint
    from investigator.config import Settings
    from investigator.runtime import Investigator

    # fault injection for crash tests: INVESTIGATOR_CRASH_AT=node:round kills the process there
    crash = CrashPoint.from_env(os.environ.get("INVESTIGATOR_CRASH_AT"))
    return Investigator(Settings.from_env(args.home, args.store), crash=crash)


def cmd_validate(args: argparse.Namespace) -> int:
    from investigator.runtime import validate_case

    case = validate_case(Path(args.case))
    print(f"{args.case}: ok ({case.id}, {len(case.required_claims)} claims)")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    inv = _inv(args)
    info = inv.index(Path(args.case), force=args.force)
    print("basic index is up to date" if info is None else
          f"basic: {info.sources} sources, {info.chunks} chunks ({info.embedded} embedded) in {info.seconds}s, "
          f"{info.bytes} bytes at {info.path}")
    if args.tool in ("graph", "all"):
        g = inv.index_graph(Path(args.case), force=args.force)
        print("graph index is up to date" if g is None else
              f"graph: {g.row_counts.get('entities', 0)} entities, {g.row_counts.get('relationships', 0)} relationships, "
              f"{g.row_counts.get('communities', 0)} communities in {g.wall_seconds}s, {g.output_bytes} bytes")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    _inv(args).delete_source(Path(args.case), args.source_id, args.reason)
    print(f"{args.source_id} tombstoned in {args.case}: dropped from both indexes, never recalled again")
    return 0


def _print_summary(report) -> None:  # noqa: ANN001
    for c in report.claims:
        print(f"  {c.id:<28} {c.verdict}")
    stop = report.stop
    print(f"  stop: {stop.kind if stop else report.status}" + (f" — {stop.detail}" if stop and stop.detail else ""))


def cmd_run(args: argparse.Namespace) -> int:
    inv = _inv(args)
    if args.planner == "llm":
        from graphs.llm_planner import LLMPlanner, openai_compatible

        if not (args.llm_url and args.llm_model):
            print("error: --planner llm needs --llm-url and --llm-model", file=sys.stderr)
            return 2
        inv.planner = LLMPlanner(model=openai_compatible(args.llm_url, args.llm_model, os.environ.get("OPENAI_API_KEY")),
                                 token_budget=args.llm_tokens)
    result = inv.start(Path(args.case), retrieval=args.retrieval, run_id=args.run_id)
    paths = inv.write(result.run_id, Path(args.out or f"out/{result.run_id}"))
    print(f"run {result.run_id} finished in {result.seconds}s; report: {', '.join(str(p) for p in paths)}")
    _print_summary(result.report)
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    inv = _inv(args)
    result = inv.resume(args.run_id)
    paths = inv.write(result.run_id, Path(args.out or f"out/{result.run_id}"))
    print(f"run {result.run_id} resumed and finished in {result.seconds}s; report: {', '.join(str(p) for p in paths)}")
    _print_summary(result.report)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from investigator.evaluate import evaluate, evaluate_parallel, expand, to_json, to_markdown

    base = _inv(args)
    cases = expand([Path(c) for c in args.cases] or [Path("cases")])
    if not cases:
        print(f"error: no case folder with an expected.yaml in {', '.join(args.cases) or 'cases'}", file=sys.stderr)
        return 2
    tools = args.tool or ["basic", "graph"]
    if args.jobs > 1:
        scores = evaluate_parallel(cases, tools, args.jobs, progress=base.progress)
    else:
        scores = evaluate(cases, tools, _workspace_factory(base), progress=base.progress)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval.json").write_text(to_json(scores))
    (out / "eval.md").write_text(to_markdown(scores))
    print(to_markdown(scores))
    bad = sum(s.false_confirmations + s.leaks for s in scores) + sum(s.citations - s.citations_valid for s in scores)
    return 1 if bad else 0


def cmd_init(args: argparse.Namespace) -> int:
    from investigator.init import scaffold

    out = scaffold(Path(args.alert), Path(args.sources), Path(args.out), group=args.group, force=args.force)
    print(f"{out}: case written and validated; review the access groups in {out / 'sources.yaml'}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from investigator.generator import generate

    paths = generate(args.seed, args.count, Path(args.out))
    print(f"{len(paths)} cases written to {args.out}")
    return 0


def cmd_bench_retrieval(args: argparse.Namespace) -> int:
    import json
    import tempfile

    from investigator.bench import run_retrieval_bench, to_markdown
    from tools.benchdata import load_dataset

    ds = load_dataset(Path(args.dataset))
    inv = _inv(args)
    with tempfile.TemporaryDirectory(prefix="inv-bench-") as tmp:
        res = run_retrieval_bench(ds, inv.embedder, Path(tmp), args.tool or ["bm25", "dense", "basic", "graph", "graph-ppr", "graph+dense"], inv.progress)
    res["command"] = " ".join(["investigator", "bench", "retrieval", "--dataset", args.dataset])
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(res, indent=2))
    print(to_markdown(res))
    return 0


def _workspace_factory(base):  # noqa: ANN001, ANN202 - fresh workspaces over the caller's indexes
    from investigator.config import Settings
    from investigator.runtime import Investigator

    index_root = base.settings.index_root or base.settings.workspace / "index"

    def make(ws: Path, log):  # noqa: ANN001, ANN202
        return Investigator(Settings(workspace=ws, index_root=index_root), embedder=base.embedder, progress=log)

    return make


def cmd_compare(args: argparse.Namespace) -> int:
    from investigator.compare import compare, to_json, to_markdown

    base = _inv(args)
    base.index_graph(Path(args.case))
    res = compare(Path(args.case), _workspace_factory(base), progress=base.progress)
    out = Path(args.out or f"out/compare-{res['case']}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(to_json(res))
    (out / "compare.md").write_text(to_markdown(res))
    print(to_markdown(res))
    return 0


def cmd_grant(args: argparse.Namespace) -> int:
    run = _inv(args).grant(args.run_id, args.group)
    print(f"run {run.run_id}: principal now also holds {run.grants}; `investigator resume {run.run_id}` continues")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from investigator.report import render_markdown

    report = _inv(args).report(args.run_id)
    print(report.to_json() if args.json else render_markdown(report))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    rows = _inv(args).history(args.run_id)
    print(f"{'step':>4} {'round':>5} {'source':<6} {'gap':<40} {'hits':>4} {'stop':<18} {'bytes':>7}")
    for r in rows:
        print(f"{r['step'] if r['step'] is not None else '-':>4} {r['round'] if r['round'] is not None else '-':>5} "
              f"{r['source'] or '':<6} {r['gap'] or '-':<40} {r['hits']:>4} {r['stop'] or '-':<18} {r['bytes']:>7}")
    return 0


def cmd_work(args: argparse.Namespace) -> int:
    done = _inv(args).work(once=args.once, poll=args.poll)
    print(f"worker finished {len(done)} run(s): {', '.join(done) or '-'}")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    rows = _inv(args).store.runs()
    print(f"{'run':<24} {'status':<20} {'stop':<18} {'case':<22} {'tool':<6} {'updated':<19} held by")
    for r in rows:
        print(f"{r.run_id:<24} {r.status:<20} {r.stop_kind or '-':<18} {r.case_id:<22} {r.retrieval:<6} "
              f"{r.updated_at:%Y-%m-%d %H:%M:%S} {r.owner or '-'}")
    return 0


def _service_settings(args: argparse.Namespace):  # noqa: ANN202 - imported lazily so --help starts at once
    from investigator.service.settings import load_settings

    return load_settings(Path(args.config) if args.config else None, home=args.home, store=args.store,
                         broker=args.broker).check()


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from investigator.service.app import create_app

    settings = _service_settings(args)
    app = create_app(settings, in_process_worker=False if args.no_worker else None)
    print(f"serving on http://{args.host}:{args.port} (store {settings.store_url.split('://', 1)[0]}, queue "
          f"{settings.broker_url.split('://', 1)[0]}{', in-process worker' if settings.local_queue and not args.no_worker else ''})",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from investigator.service.queue import run_worker

    return run_worker(_service_settings(args), concurrency=args.concurrency, name=args.name,
                      loglevel=args.log_level.upper())


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="investigator", description="Agentic multi-hop investigation of incident alerts.")
    p.add_argument("--home", help="workspace folder for the store, checkpoints and indexes (default .investigator)")
    p.add_argument("--store", help="store URL: sqlite:///file.db (default) or postgresql+psycopg://…")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("validate", help="check a case folder and report the first problem (file, field, expected)")
    s.add_argument("case", help="case folder, e.g. cases/<case-id>")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("index", help="build the case's retrieval index (skipped when up to date)")
    s.add_argument("case", help="case folder")
    s.add_argument("--force", action="store_true", help="rebuild even when the index is up to date")
    s.add_argument("--tool", default="all", choices=["basic", "graph", "all"], help="which index to build (default all)")
    s.set_defaults(func=cmd_index)

    s = sub.add_parser("delete", help="tombstone a source: removed from both indexes and never recalled again")
    s.add_argument("case", help="case folder")
    s.add_argument("source_id", help="manifest id of the source to delete")
    s.add_argument("--reason", default="deleted", help="why (kept with the tombstone)")
    s.set_defaults(func=cmd_delete)

    s = sub.add_parser("run", help="investigate a case and write report.md and report.json")
    s.add_argument("case", help="case folder")
    s.add_argument("--retrieval", default="basic", choices=["basic", "graph"], help="document retrieval tool")
    s.add_argument("--run-id", help="run id (default: the case's run_id, numbered if taken)")
    s.add_argument("--out", help="report folder (default out/RUN_ID)")
    s.add_argument("--planner", default="deterministic", choices=["deterministic", "llm"],
                   help="who picks the next action (llm: a chat model chooses among the deterministic candidates)")
    s.add_argument("--llm-url", help="OpenAI-compatible endpoint for --planner llm")
    s.add_argument("--llm-model", help="model name for --planner llm")
    s.add_argument("--llm-tokens", type=int, help="token budget of the LLM planner (then it plans deterministically)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("resume", help="continue a paused or crashed run after re-checking permissions")
    s.add_argument("run_id", help="the run to continue")
    s.add_argument("--out", help="report folder (default out/RUN_ID)")
    s.set_defaults(func=cmd_resume)

    s = sub.add_parser("compare", help="run one case with graph and basic retrieval and print them side by side")
    s.add_argument("case", help="case folder")
    s.add_argument("--out", help="folder for compare.json and compare.md (default out/compare-CASE)")
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("eval", help="run cases with expected.yaml under each tool and score verdicts, evidence, leaks")
    s.add_argument("cases", nargs="*", help="case folders (default: every cases/*/ with an expected.yaml)")
    s.add_argument("--tool", action="append", choices=["basic", "graph"], help="retrieval tool (repeatable; default both)")
    s.add_argument("--out", default="out/eval", help="folder for eval.json and eval.md (default out/eval)")
    s.add_argument("--jobs", type=int, default=1, help="cases evaluated in parallel processes (default 1)")
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("init", help="write a case folder from an alert (Alertmanager JSON or text) and a folder of files")
    s.add_argument("--alert", required=True, help="Alertmanager webhook payload, one alert object, or a text file")
    s.add_argument("--sources", required=True, help="folder of material (logs, metrics, traces, kubectl output, ...)")
    s.add_argument("--out", required=True, help="the case folder to write (must not exist unless --force)")
    s.add_argument("--group", default="sre-oncall", help="default access group for every source (default sre-oncall)")
    s.add_argument("--force", action="store_true", help="replace an existing folder")
    s.set_defaults(func=cmd_init)

    s = sub.add_parser("generate", help="write seeded synthetic incident cases with their gold answers")
    s.add_argument("--seed", type=int, default=1, help="random seed (default 1): the same seed gives the same cases")
    s.add_argument("--count", type=int, default=30, help="number of cases (default 30)")
    s.add_argument("--out", required=True, help="folder to write the case folders into")
    s.set_defaults(func=cmd_generate)

    s = sub.add_parser("bench", help="benchmarks that print figures")
    bench = s.add_subparsers(dest="bench", required=True, help="which benchmark")
    b = bench.add_parser("retrieval", help="recall@2/@5, MRR, nDCG@5, build and query cost per tool on a multi-hop set")
    b.add_argument("--dataset", required=True, help="JSON dataset (native, MuSiQue, HotpotQA or 2Wiki layout)")
    b.add_argument("--tool", action="append", choices=["bm25", "dense", "basic", "graph", "graph-ppr", "graph+dense"],
                   help="tool (repeatable; default all: bm25, dense, basic, graph, graph-ppr, graph+dense)")
    b.add_argument("--out", help="write the figures as JSON here (e.g. bench/results/retrieval-NAME.json)")
    b.set_defaults(func=cmd_bench_retrieval)

    s = sub.add_parser("grant", help="grant a paused run's principal a group, answering awaiting_permission")
    s.add_argument("run_id", help="the paused run")
    s.add_argument("--group", action="append", required=True, help="group to grant (repeatable)")
    s.set_defaults(func=cmd_grant)

    s = sub.add_parser("show", help="print the report of a run (Markdown, or JSON with --json)")
    s.add_argument("run_id", help="the run to show")
    s.add_argument("--json", action="store_true", help="print the JSON report")
    s.set_defaults(func=cmd_show)

    s = sub.add_parser("history", help="a run's checkpoints, step by step, with their size")
    s.add_argument("run_id", help="the run")
    s.set_defaults(func=cmd_history)

    s = sub.add_parser("work", help="a worker: resume every run nobody holds (crashed or orphaned), then wait for more")
    s.add_argument("--once", action="store_true", help="drive what is claimable now, then exit")
    s.add_argument("--poll", type=float, default=2.0, help="seconds between looks for claimable runs")
    s.set_defaults(func=cmd_work)

    s = sub.add_parser("runs", help="list runs with status, stop reason, case, tool and last update")
    s.set_defaults(func=cmd_runs)
    s = sub.add_parser("serve", help="HTTP service: Alertmanager webhooks in, one investigation per distinct alert, "
                                     "JSON API and pages (default: SQLite queue and one in-process worker)")
    s.add_argument("--config", help="service settings (YAML: sources, store, broker, group, dedupe); "
                                    "INVESTIGATOR_* variables otherwise")
    s.add_argument("--broker", help="queue URL: amqp://… (RabbitMQ) or redis://… (default: a SQLite file in --home)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    s.add_argument("--no-worker", action="store_true", help="do not run the in-process worker (run `investigator worker`)")
    s.add_argument("--log-level", default="warning", help="uvicorn log level (default warning)")
    s.set_defaults(func=cmd_serve)

    s = sub.add_parser("worker", help="a queue worker for `serve`: investigates queued alerts (Celery, prefork)")
    s.add_argument("--config", help="the same service settings as `serve`")
    s.add_argument("--broker", help="queue URL (the same as `serve`)")
    s.add_argument("--concurrency", type=int, default=1, help="worker processes (default 1)")
    s.add_argument("--name", help="worker name (default investigator-PID@HOST)")
    s.add_argument("--log-level", default="info", help="log level (default info)")
    s.set_defaults(func=cmd_worker)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except InvestigatorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
