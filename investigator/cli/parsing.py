"""The argument parser: every command, its options and help, in the order `--help` lists them.

Each command's handler lives in the module of its group (cases, investigate, records, scoring,
service); the parser only names it. Imports those modules, which import nothing heavy at module
level, so building the parser (and `--help`) stays quick.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from investigator.cli.cases import cmd_collect, cmd_delete, cmd_generate, cmd_index, cmd_init, cmd_validate
from investigator.cli.investigate import cmd_resume, cmd_run, cmd_work
from investigator.cli.records import cmd_grant, cmd_history, cmd_runs, cmd_schema, cmd_show
from investigator.cli.scoring import cmd_bench_retrieval, cmd_compare, cmd_eval
from investigator.cli.service import _host, _port, cmd_serve, cmd_worker


Command = Callable[..., argparse.ArgumentParser]
"""`command(name, summary, func, **defaults)`: adds a command with the global options and its handler."""


def parser() -> argparse.ArgumentParser:
    """The `investigator` parser; each command sets `func` (its handler) and, for store-only ones, `store_only`."""
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

    # the groups in the order `--help` lists their commands
    for add in (_case_checks, _investigation, _case_writers, _bench, _run_records, _service):
        add(command)
    return p


def _case_checks(command: Command) -> None:
    """`validate`, `index`, `delete`: a case folder checked and indexed."""
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


def _investigation(command: Command) -> None:
    """`run`, `resume`, `compare`, `eval`: investigations."""
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


def _case_writers(command: Command) -> None:
    """`init`, `collect`, `generate`: case folders written."""
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
    s.add_argument("--variant", help="force every case to one variant (e.g. hop_in_prose: the decisive hop only in a "
                                     "runbook, design notes or a chat export) (default: the usual mix of variants)")


def _bench(command: Command) -> None:
    """`bench retrieval`: figures."""
    s = command("bench", "benchmarks that print figures", None)
    bench = s.add_subparsers(dest="bench", required=True, metavar="BENCHMARK", help="which benchmark")
    b = bench.add_parser("retrieval", help="recall@2/@5, MRR, nDCG@5, build and query cost per tool on a multi-hop set",
                         description="recall@2/@5, MRR, nDCG@5, build and query cost per tool on a multi-hop set",
                         formatter_class=_HelpFormatter)
    _global_options(b, top=False)
    which = b.add_mutually_exclusive_group(required=True)
    which.add_argument("--dataset", help="JSON dataset (native, MuSiQue, HotpotQA or 2Wiki layout), its questions "
                       "asked against its own corpus (default: none; give --dataset or --pool)")
    which.add_argument("--pool", action="append", metavar="FILE",
                       help="pooled mode, repeatable: question sets and distractor corpora (a list of {title, text}) "
                       "merged into one index that every set's questions are asked against (default: none)")
    b.add_argument("--pool-size", type=int, metavar="N", help="with --pool: keep every gold passage and a seeded "
                   "sample of the others, N passages in all (default: the whole pool)")
    b.add_argument("--seed", type=int, default=0, help="with --pool-size: seed of the sample")
    b.add_argument("--tool", action="append", choices=["bm25", "dense", "basic", "graph", "graph-ppr", "graph+dense"],
                   help="tool, repeatable (default: all of bm25, dense, basic, graph, graph-ppr, graph+dense)")
    b.add_argument("--out", help="write the figures as JSON here, e.g. bench/results/retrieval-NAME.json "
                   "(default: print only)")
    b.set_defaults(func=cmd_bench_retrieval)


def _run_records(command: Command) -> None:
    """`grant`, `show`, `history`, `work`, `runs`, `schema`: runs in the store (all but `work` and `schema` store-only)."""
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


def _service(command: Command) -> None:
    """`serve`, `worker`: the HTTP service and its queue."""
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
