"""Commands that read (or, for `grant`, answer) what the store holds: runs, show, history, grant, schema.

The parser marks runs, show, history and grant `store_only`: they get a bare workspace (the store
and the checkpoints), never the model, the indexes or the loop. Imports `investigator.cli.common`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from investigator.cli.common import library


def cmd_runs(args: argparse.Namespace) -> int:
    rows = library(args).reader.runs()
    print(f"{'run':<24} {'status':<20} {'stop':<18} {'case':<22} {'tool':<6} {'updated':<19} held by / last error")
    for r in rows:
        why = f"{r.owner or '-'}" + (f"  {r.error} (attempts {r.attempts or 0})"
                                      if r.error and r.status in ("failed", "quarantined", "interrupted") else "")
        print(f"{r.run_id:<24} {r.status:<20} {r.stop_kind or '-':<18} {r.case_id:<22} {r.retrieval:<6} "
              f"{r.updated_at:%Y-%m-%d %H:%M:%S} {why}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from investigator.report_md import render_markdown

    report = library(args).report(args.run_id)  # access re-checked now: unreadable evidence is withheld
    print(report.to_json() if args.json else render_markdown(report))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    rows = library(args).history(args.run_id)
    print(f"{'step':>4} {'round':>5} {'source':<6} {'gap':<40} {'hits':>4} {'stop':<18} {'bytes':>7}")
    for r in rows:
        print(f"{r['step'] if r['step'] is not None else '-':>4} {r['round'] if r['round'] is not None else '-':>5} "
              f"{r['source'] or '':<6} {r['gap'] or '-':<40} {r['hits']:>4} {r['stop'] or '-':<18} {r['bytes']:>7}")
    return 0


def cmd_grant(args: argparse.Namespace) -> int:
    inv = library(args)
    g = inv.grant(args.run_id, args.group, by=args.by)
    print(f"run {args.run_id}: granted {', '.join(g.groups)} (by {g.by}); unlocks {', '.join(g.unlocks) or 'nothing'}")
    if g.answers:
        print(f"  readable now: {', '.join(g.answers)}; `investigator resume {args.run_id}` continues")
    else:  # what it still waits for, under the access of now (the report, built only for this line)
        waiting = [d.source_id for d in inv.report(args.run_id).denied]
        print(f"  the run still waits for {', '.join(waiting) or 'nothing'}: this grant unlocks none of it, "
              f"so `resume` stays paused")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from investigator.report_model import report_json_schema  # the model alone: no store, no case

    text = json.dumps(report_json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
