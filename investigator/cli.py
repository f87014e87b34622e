"""`investigator`: a thin command line over the library API (one command, one call)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from state.errors import InvestigatorError

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _inv(args: argparse.Namespace):  # noqa: ANN202 - an Investigator, or a Workspace for store-only commands
    """The library object a command wraps, imported only now so that `--help` starts at once.

    Commands marked `store_only` by the parser (runs, show, history, grant) get a bare `Workspace`: the
    store and checkpoints, without the embedding model, the indexes or the loop.
    """
    from investigator.config import Settings

    settings = Settings.from_env(args.home, args.store)  # a bad option or value fails before the heavy imports
    if getattr(args, "store_only", False):
        from investigator.workspace import Workspace

        return Workspace(settings)
    from graphs.deps import CrashPoint
    from investigator.runtime import Investigator

    # fault injection for crash tests: INVESTIGATOR_CRASH_AT=node:round kills the process there
    crash = CrashPoint.from_env(os.environ.get("INVESTIGATOR_CRASH_AT"))
    return Investigator(settings, crash=crash)


def cmd_validate(args: argparse.Namespace) -> int:
    from investigator.loading import check_collection, load_case_and_all_sources

    case, docs, _ctx = load_case_and_all_sources(Path(args.case))
    check_collection(Path(args.case))
    aside = [d for d in docs if d.set_aside is not None]
    print(f"{args.case}: ok ({case.id}, {len(case.required_claims)} claims"
          + (f"; {len(aside)} untrusted source{'s' if len(aside) > 1 else ''} left out" if aside else "") + ")")
    for d in aside:
        print(f"  left out {d.id} ({Path(args.case) / d.entry.path}): {d.set_aside}", file=sys.stderr)
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    inv = _inv(args)
    info = inv.index(Path(args.case), force=args.force)
    print("basic index is up to date" if info is None else
          f"basic: {info.sources} sources, {info.chunks} chunks ({info.embedded} embedded) in {info.seconds}s, "
          f"{info.bytes} bytes at {info.path}")
    if args.graph_from:
        g = inv.import_graph(Path(args.case), Path(args.graph_from))
        print(f"graph: imported {args.graph_from}: {g.row_counts.get('entities', 0)} entities, "
              f"{g.row_counts.get('communities', 0)} communities over {g.documents} chunks of the case")
        return 0
    if args.tool in ("graph", "all"):
        g = inv.index_graph(Path(args.case), force=args.force)
        print("graph index is up to date" if g is None else
              f"graph: {g.row_counts.get('entities', 0)} entities, {g.row_counts.get('relationships', 0)} relationships, "
              f"{g.row_counts.get('communities', 0)} communities in {g.wall_seconds}s, {g.output_bytes} bytes")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    if _inv(args).delete_source(Path(args.case), args.source_id, args.reason):  # an unknown id is an error
        print(f"{args.source_id} tombstoned in {args.case}: dropped from both indexes, never recalled again")
    else:
        print(f"{args.source_id} was tombstoned in {args.case} already: nothing changed")
    return 0


def _print_summary(report) -> None:  # noqa: ANN001
    for c in report.claims:
        print(f"  {c.id:<28} {c.verdict}")
    stop = report.stop
    print(f"  stop: {stop.kind if stop else report.status}" + (f" — {stop.detail}" if stop and stop.detail else ""))


def update_line(chunk: dict, round_: int) -> tuple[str, int]:
    """One line for one node update of `Investigator.stream` (and the round it belongs to)."""
    (node, upd), = chunk.items()
    upd = upd or {}
    if node == "__interrupt__":
        value = upd[0].value if upd else {}
        return f"r{round_} paused: awaiting permission for {', '.join(value.get('awaiting_permission', []))}", round_
    if node == "plan":
        round_ = upd.get("round", round_)
        gap = upd.get("gap")
        what = f"{gap.action} → {gap.claim_id}" if gap is not None else "nothing left to try"
        last = (upd.get("planner") or {}).get("last")
        if last:
            what += f" (model chose {last['choice']} of {last['offered']})" if last["fallback"] is None else \
                f" (deterministic: {last['fallback']})"
    elif node == "retrieve":
        what = f"{len(upd.get('hits', []))} candidate(s)"
    elif node == "read":
        new = upd.get("new_evidence", [])
        what = f"{len(new)} new evidence" + (f": {', '.join(new)}" if new else "")
    elif node == "decide":
        stop = upd.get("stop")
        what = f"stop: {stop.kind}" if stop is not None else "continue"
    else:
        what = "claims re-decided" if node == "update" else ", ".join(upd)
    return f"r{round_:<2} {node:<8} {what}", round_


def cmd_run(args: argparse.Namespace) -> int:
    from investigator.report_files import check_out_folder
    from investigator.runtime import RunResult

    out = Path(args.out) if args.out else None
    if out is not None:
        check_out_folder(out)  # before the investigation, not after it
    inv = _inv(args)
    if args.planner == "llm":
        from graphs.llm_planner import llm_planner
        from state.errors import ConfigError

        if not (args.llm_url and args.llm_model):
            raise ConfigError("--planner llm needs --llm-url and --llm-model")
        inv.planner = llm_planner(args.llm_url, args.llm_model, os.environ.get("OPENAI_API_KEY"),
                                  token_budget=args.llm_tokens, timeout=args.llm_timeout)
    result, round_ = None, 0
    for item in inv.stream(Path(args.case), retrieval=args.retrieval, run_id=args.run_id):
        if isinstance(item, RunResult):
            result = item
        else:
            line, round_ = update_line(item, round_)
            print(f"[investigator] {line}", file=sys.stderr, flush=True)
    assert result is not None
    paths = inv.write(result.run_id, out or Path(f"out/{result.run_id}"))
    print(f"run {result.run_id} finished in {result.seconds}s; report: {', '.join(str(p) for p in paths)}")
    _print_summary(result.report)
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from investigator.report_files import check_out_folder

    if args.out:
        check_out_folder(Path(args.out))
    inv = _inv(args)
    result = inv.resume(args.run_id)
    paths = inv.write(result.run_id, Path(args.out or f"out/{result.run_id}"))
    print(f"run {result.run_id} resumed and finished in {result.seconds}s; report: {', '.join(str(p) for p in paths)}")
    _print_summary(result.report)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from investigator.evaluate import evaluate, evaluate_parallel, expand, to_json, to_markdown

    base = _inv(args)
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
        scores = evaluate(cases, tools, _workspace_factory(base), progress=base.progress, index_root=keep)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval.json").write_text(to_json(scores))
    (out / "eval.md").write_text(to_markdown(scores))
    print(to_markdown(scores))
    bad = sum(s.false_confirmations + s.leaks for s in scores) + sum(s.citations - s.citations_valid for s in scores)
    return 1 if bad else 0


def cmd_init(args: argparse.Namespace) -> int:
    from investigator.init import initialise
    from state.errors import CaseProblems

    try:
        got = initialise(Path(args.alert), Path(args.sources), Path(args.out), group=args.group, force=args.force,
                         access=Path(args.access) if args.access else None,
                         inventory=Path(args.inventory) if args.inventory else None)
    except CaseProblems as exc:  # every problem found, one line each
        for p in exc.problems:
            _error(str(p))
        return exc.exit_code
    for s in got.skipped:
        print(f"skipped: {s.path}: {s.reason}")
    if got.assumed:
        print(f"environment assumed (stated nowhere): {len(got.assumed)} files, listed in init-report.md")
    out = got.case_dir
    review = "" if args.access else f"; review the access groups in {out / 'sources.yaml'}"
    print(f"{out}: case written and validated ({got.sources} sources, {len(got.skipped)} files skipped, "
          f"see {out / 'init-report.md'}){review}")
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
    from investigator.collect import collect

    if not (args.prometheus or args.git or args.kubeconfig or args.sources):
        from state.errors import ConfigError

        raise ConfigError("collect needs something to collect from: --prometheus URL, --git REPO, --kubeconfig FILE "
                          "or --sources DIR")
    got = collect(Path(args.alert), Path(args.out), prometheus=args.prometheus, git=args.git,
                  kubeconfig=Path(args.kubeconfig) if args.kubeconfig else None,
                  sources=Path(args.sources) if args.sources else None,
                  access=Path(args.access) if args.access else None, group=args.group,
                  profile=Path(args.profile) if args.profile else None, force=args.force,
                  progress=lambda line: print(f"[collect] {line}", file=sys.stderr, flush=True))
    c = got.collection
    for f in c.failed():
        print(f"failed: {f.collector}: {f.what}: {f.error}")
    for s in got.init.skipped:
        print(f"skipped: {s.path}: {s.reason}")
    ok = sum(f.status == "ok" for f in c.fetched)
    print(f"{got.case_dir}: case written and validated ({got.init.sources} sources, {ok} fetched, "
          f"{len(c.failed())} failed, services {', '.join(c.services)}; provenance in "
          f"{got.case_dir / 'collection.yaml'})")
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
    inv = _inv(args)
    g = inv.grant(args.run_id, args.group, by=args.by)
    waiting = [d.source_id for d in inv.report(args.run_id).denied]
    print(f"run {args.run_id}: granted {', '.join(g.groups)} (by {g.by}); unlocks {', '.join(g.unlocks) or 'nothing'}")
    if g.answers:
        print(f"  readable now: {', '.join(g.answers)}; `investigator resume {args.run_id}` continues")
    else:
        print(f"  the run still waits for {', '.join(waiting) or 'nothing'}: this grant unlocks none of it, "
              f"so `resume` stays paused")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from investigator.report_md import render_markdown

    report = _inv(args).report(args.run_id)  # access re-checked now: unreadable evidence is withheld
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
    print(f"{'run':<24} {'status':<20} {'stop':<18} {'case':<22} {'tool':<6} {'updated':<19} held by / last error")
    for r in rows:
        why = f"{r.owner or '-'}" + (f"  {r.error} (attempts {r.attempts or 0})"
                                      if r.error and r.status in ("failed", "quarantined", "interrupted") else "")
        print(f"{r.run_id:<24} {r.status:<20} {r.stop_kind or '-':<18} {r.case_id:<22} {r.retrieval:<6} "
              f"{r.updated_at:%Y-%m-%d %H:%M:%S} {why}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from investigator.report import report_json_schema

    text = json.dumps(report_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends "(default: X)" to an option's help unless it has none or the help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or action.default is False or "(default" in text:
            return text
        return super()._get_help_string(action)


class _VersionAction(argparse.Action):
    """--version: the installed package's version, looked up only when asked (not for every start)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 help: str = "print the version and exit") -> None:  # noqa: A002 - argparse's keyword
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from investigator import __version__

        print(f"{parser.prog} {__version__}")
        parser.exit()


def _global_options(p: argparse.ArgumentParser, *, top: bool) -> None:
    """--home and --store, accepted before the command and after it (there, they win)."""
    unset = None if top else argparse.SUPPRESS  # a command's parser must not reset a value given before it
    p.add_argument("--home", default=unset, help="workspace folder for the store, checkpoints and indexes "
                   "(default: $INVESTIGATOR_HOME, else .investigator)")
    p.add_argument("--store", default=unset, help="store URL: sqlite:///file.db or postgresql+psycopg://… "
                   "(default: $INVESTIGATOR_STORE_URL, else sqlite:///HOME/investigator.db)")


def _service_settings(args: argparse.Namespace):  # noqa: ANN202 - imported lazily so --help starts at once
    from investigator.service.settings import load_settings

    return load_settings(Path(args.config) if args.config else None, home=args.home, store=args.store,
                         broker=args.broker).check()


def _port(text: str) -> int:
    """A TCP port: 1..65535 (uvicorn would bind 70000 mod 65536 while printing 70000)."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port number from 1 to 65535 (got {text!r})")
    return int(text)


def _host(text: str) -> str:
    """An IP address (v4 or v6) or a host name of letters, digits, '-' and '.' (RFC 1123)."""
    import ipaddress
    import re

    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    label = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
    if len(text) <= 253 and not re.fullmatch(r"[\d.]+", text) and re.fullmatch(rf"{label}(\.{label})*\.?", text):
        return text
    raise argparse.ArgumentTypeError(f"an IP address or a host name, e.g. 127.0.0.1, 0.0.0.0 or localhost (got {text!r})")


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
    p = argparse.ArgumentParser(prog="investigator", description="Agentic multi-hop investigation of incident alerts.",
                                formatter_class=_HelpFormatter)
    p.add_argument("--version", action=_VersionAction)
    _global_options(p, top=True)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, func: Callable[[argparse.Namespace], int] | None,
                **defaults: object) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=summary, description=summary, formatter_class=_HelpFormatter)
        _global_options(s, top=False)
        if func is not None:
            s.set_defaults(func=func, **defaults)
        return s

    s = command("validate", "check a case folder and report the first problem (file, field, expected)", cmd_validate)
    s.add_argument("case", help="case folder, e.g. cases/<case-id>")

    s = command("index", "build the case's retrieval index (skipped when up to date)", cmd_index)
    s.add_argument("case", help="case folder")
    s.add_argument("--force", action="store_true", help="rebuild even when the index is up to date")
    s.add_argument("--tool", default="all", choices=["basic", "graph", "all"], help="which index to build")
    s.add_argument("--graph-from", metavar="DIR", help="use this graphrag output folder (built from the case's chunks) "
                   "as the graph index instead of building one (default: build it)")

    s = command("delete", "tombstone a source: removed from both indexes and never recalled again "
                "(an id the manifest does not name is an error)", cmd_delete)
    s.add_argument("case", help="case folder")
    s.add_argument("source_id", help="manifest id of the source to delete")
    s.add_argument("--reason", default="deleted", help="why (kept with the tombstone)")

    s = command("run", "investigate a case and write report.md, report.json and report.html", cmd_run)
    s.add_argument("case", help="case folder")
    s.add_argument("--retrieval", default="basic", choices=["basic", "graph"], help="document retrieval tool")
    s.add_argument("--run-id", help="run id (default: the case's run_id, numbered if taken)")
    s.add_argument("--out", help="report folder (default: out/RUN_ID)")
    s.add_argument("--planner", default="deterministic", choices=["deterministic", "llm"],
                   help="who picks the next action (llm: a chat model chooses among the deterministic candidates)")
    s.add_argument("--llm-url", help="OpenAI-compatible endpoint for --planner llm (default: none; required then)")
    s.add_argument("--llm-model", help="model name for --planner llm (default: none; required then)")
    s.add_argument("--llm-tokens", type=int,
                   help="token budget of the LLM planner, after which it plans deterministically (default: no limit)")
    s.add_argument("--llm-timeout", type=float, help="seconds one LLM call may take before that step plans "
                   "deterministically (default: 30)")

    s = command("resume", "continue a paused or crashed run after re-checking permissions and tombstones "
                "(a run awaiting permission stays paused until a grant unlocks what it waits for)", cmd_resume)
    s.add_argument("run_id", help="the run to continue")
    s.add_argument("--out", help="report folder (default: out/RUN_ID)")

    s = command("compare", "run one case with graph and basic retrieval and print them side by side", cmd_compare)
    s.add_argument("case", help="case folder")
    s.add_argument("--out", help="folder for compare.json and compare.md (default: out/compare-CASE)")

    s = command("eval", "run cases with expected.yaml under each tool and score verdicts, evidence, leaks", cmd_eval)
    s.add_argument("cases", nargs="*", help="case folders (default: every cases/*/ with an expected.yaml)")
    s.add_argument("--tool", action="append", choices=["basic", "graph"],
                   help="retrieval tool, repeatable (default: basic and graph)")
    s.add_argument("--out", default="out/eval", help="folder for eval.json and eval.md")
    s.add_argument("--jobs", type=int, default=1, help="cases evaluated in parallel processes")

    s = command("init", "write a case folder from an alert (Alertmanager JSON or text) and a folder of files", cmd_init)
    s.add_argument("--alert", required=True, help="Alertmanager webhook payload, one alert object, or a text file")
    s.add_argument("--sources", required=True, help="folder of material (logs, metrics, traces, kubectl output, ...)")
    s.add_argument("--out", required=True, help="the case folder to write (must not exist unless --force)")
    s.add_argument("--group", default="sre-oncall", help="default access group for every source")
    s.add_argument("--access", metavar="MAP", help="access map (YAML): the principal, and path globs -> groups "
                   "(first match wins; docs/case-format.md §8) (default: none; every source gets --group)")
    s.add_argument("--inventory", metavar="FILE", help="a list of the material's files with their service, "
                   "environment, timezone, metric, unit (default: none, or one found among the material)")
    s.add_argument("--force", action="store_true", help="replace an existing folder")

    s = command("collect", "write a case folder from an alert and material fetched live: Prometheus range queries, "
                "a GitOps repository's commits and config, Kubernetes objects", cmd_collect)
    s.add_argument("alert", help="Alertmanager webhook payload, one alert object, or a text file")
    s.add_argument("--out", required=True, help="the case folder to write (must not exist unless --force)")
    s.add_argument("--prometheus", metavar="URL", help="Prometheus base URL, e.g. http://127.0.0.1:9090 "
                   "(default: none; no metrics collected)")
    s.add_argument("--git", metavar="REPO", help="GitOps repository: a local folder or a URL git can clone "
                   "(default: none; no changes or configs collected)")
    s.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig for events, pods and rollout histories "
                   "(default: none; Kubernetes skipped)")
    s.add_argument("--sources", metavar="DIR", help="a folder of other material to add, as init takes it "
                   "(default: none)")
    s.add_argument("--access", metavar="MAP", help="access map (YAML, as for init); globs are relative to the "
                   "collection: prometheus/**, git/**, kubernetes/**, material/** (default: every source gets --group)")
    s.add_argument("--group", default="sre-oncall", help="default access group for every source")
    s.add_argument("--profile", metavar="FILE", help="collection profile: PromQL templates, git path templates, "
                   "timeouts (default: tools/collect/default.yaml)")
    s.add_argument("--force", action="store_true", help="replace an existing case folder")

    s = command("generate", "write seeded synthetic incident cases with their gold answers", cmd_generate)
    s.add_argument("--seed", type=int, default=1, help="random seed: the same seed gives the same cases")
    s.add_argument("--count", type=int, default=30, help="number of cases")
    s.add_argument("--out", required=True, help="folder to write the case folders into")

    s = command("bench", "benchmarks that print figures", None)
    bench = s.add_subparsers(dest="bench", required=True, metavar="BENCHMARK", help="which benchmark")
    b = bench.add_parser("retrieval", help="recall@2/@5, MRR, nDCG@5, build and query cost per tool on a multi-hop set",
                         description="recall@2/@5, MRR, nDCG@5, build and query cost per tool on a multi-hop set",
                         formatter_class=_HelpFormatter)
    _global_options(b, top=False)
    b.add_argument("--dataset", required=True, help="JSON dataset (native, MuSiQue, HotpotQA or 2Wiki layout)")
    b.add_argument("--tool", action="append", choices=["bm25", "dense", "basic", "graph", "graph-ppr", "graph+dense"],
                   help="tool, repeatable (default: all of bm25, dense, basic, graph, graph-ppr, graph+dense)")
    b.add_argument("--out", help="write the figures as JSON here, e.g. bench/results/retrieval-NAME.json "
                   "(default: print only)")
    b.set_defaults(func=cmd_bench_retrieval)

    s = command("grant", "grant a paused run's principal a group, answering awaiting_permission "
                "(refused for a run not paused, or a group no source names)", cmd_grant, store_only=True)
    s.add_argument("run_id", help="the paused run")
    s.add_argument("--group", action="append", required=True,
                   help="group to grant (repeatable; one of the groups named in the case's sources.yaml)")
    s.add_argument("--by", help="who grants it, kept with the grant (default: the current login name)")

    s = command("show", "print the report of a run (Markdown, or JSON with --json); evidence the principal "
                "can no longer read is withheld", cmd_show, store_only=True)
    s.add_argument("run_id", help="the run to show")
    s.add_argument("--json", action="store_true", help="print the JSON report (as report.json)")

    s = command("history", "a run's checkpoints, step by step, with their size", cmd_history, store_only=True)
    s.add_argument("run_id", help="the run")

    s = command("work", "a worker: resume every run nobody holds (crashed or orphaned), then wait for more", cmd_work)
    s.add_argument("--once", action="store_true", help="drive what is claimable now, then exit")
    s.add_argument("--poll", type=float, default=2.0, help="seconds between looks for claimable runs")

    command("runs", "list runs with status, stop reason, case, tool and last update", cmd_runs, store_only=True)

    s = command("schema", "print the JSON Schema of report.json (docs/report.schema.json is this output)", cmd_schema)
    s.add_argument("--out", help="write it to this file (default: standard output)")

    s = command("serve", "HTTP service: Alertmanager webhooks in, one investigation per distinct alert, "
                "JSON API and pages (default: SQLite queue and one in-process worker)", cmd_serve)
    s.add_argument("--config", help="service settings (YAML: sources, store, broker, group, dedupe); "
                                    "INVESTIGATOR_* variables otherwise (default: none)")
    s.add_argument("--broker", help="queue URL: amqp://… (RabbitMQ) or redis://… (default: a SQLite file in --home)")
    s.add_argument("--host", default="127.0.0.1", type=_host, help="address to listen on (an IP address or a host name)")
    s.add_argument("--port", type=_port, default=8080, help="port (1..65535)")
    s.add_argument("--no-worker", action="store_true", help="do not run the in-process worker (run `investigator worker`)")
    s.add_argument("--log-level", default="warning", help="uvicorn log level")

    s = command("worker", "a queue worker for `serve`: investigates queued alerts (Celery, prefork)", cmd_worker)
    s.add_argument("--config", help="the same service settings as `serve` (default: none)")
    s.add_argument("--broker", help="queue URL, the same as `serve` (default: a SQLite file in --home)")
    s.add_argument("--concurrency", type=int, default=1, help="worker processes")
    s.add_argument("--name", help="worker name (default: investigator-PID@HOST)")
    s.add_argument("--log-level", default="info", help="log level")
    return p


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool cut off by `| head`


def _terminate(signum: int, _frame: object) -> None:
    from state.errors import Interrupted

    raise Interrupted("terminated", signum)


def _error(text: str) -> None:
    try:
        print(f"error: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run one command. Every failure is one line on stderr and an exit code (README, Exit codes);
    INVESTIGATOR_TRACEBACK=1 shows the traceback of an unexpected one."""
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        from investigator.config import check_environment

        check_environment()
        if getattr(args, "run_id", None) is not None:  # run ids become folder names: names, never paths
            from state import checked_name

            checked_name(args.run_id, "--run-id" if args.command == "run" else "RUN_ID")
        code = args.func(args)
        sys.stdout.flush()  # here, so a reader that went away is seen by the handler below
        return code
    except InvestigatorError as exc:
        from investigator.failures import describe

        _error(describe(exc))
        return exc.exit_code
    except KeyboardInterrupt as exc:
        _error(str(exc) if str(exc) else "interrupted")
        return 128 + getattr(exc, "signum", signal.SIGINT)
    except BrokenPipeError:
        # the reader went away (`investigator runs | head -1`): stop quietly, and keep Python
        # from complaining when it flushes stdout on the way out
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # noqa: BLE001 - the last resort: any failure becomes one line and an exit code
        from investigator.failures import describe, redacted_traceback, store_error

        if os.environ.get("INVESTIGATOR_TRACEBACK"):  # the frames, never a value from a source
            try:
                sys.stderr.write(redacted_traceback(exc))
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
        else:
            _error(describe(exc) + " (INVESTIGATOR_TRACEBACK=1 shows the traceback)")
        return 4 if store_error(exc) else 5


if __name__ == "__main__":
    sys.exit(main())
