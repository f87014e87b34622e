"""Commands that drive the loop: run, resume and work, with the progress line of each node update.

Imports `investigator.cli.common`; the runtime is imported inside the commands.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from investigator.cli.common import library


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


def _print_summary(report) -> None:  # noqa: ANN001
    for c in report.claims:
        print(f"  {c.id:<28} {c.verdict}")
    stop = report.stop
    print(f"  stop: {stop.kind if stop else report.status}" + (f" — {stop.detail}" if stop and stop.detail else ""))


def cmd_run(args: argparse.Namespace) -> int:
    from investigator.report_files import check_out_folder
    from investigator.runtime import RunResult

    out = Path(args.out) if args.out else None
    if out is not None:
        check_out_folder(out)  # before the investigation, not after it
    inv = library(args)
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
    inv = library(args)
    result = inv.resume(args.run_id)
    paths = inv.write(result.run_id, Path(args.out or f"out/{result.run_id}"))
    print(f"run {result.run_id} resumed and finished in {result.seconds}s; report: {', '.join(str(p) for p in paths)}")
    _print_summary(result.report)
    return 0


def cmd_work(args: argparse.Namespace) -> int:
    done = library(args).work(once=args.once, poll=args.poll)
    print(f"worker finished {len(done)} run(s): {', '.join(done) or '-'}")
    return 0
