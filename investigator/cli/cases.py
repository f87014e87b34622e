"""Commands on case folders and their indexes: validate, init, collect, generate, index, delete.

Imports `investigator.cli.common`; the library modules each command calls are imported inside it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from investigator.cli.common import error, library


def cmd_validate(args: argparse.Namespace) -> int:
    from investigator.loading import check_collection, check_expected, load_case_and_all_sources

    case, docs, _ctx = load_case_and_all_sources(Path(args.case))
    check_collection(Path(args.case))
    check_expected(Path(args.case))
    aside = [d for d in docs if d.set_aside is not None]
    print(f"{args.case}: ok ({case.id}, {len(case.required_claims)} claims"
          + (f"; {len(aside)} untrusted source{'s' if len(aside) > 1 else ''} left out" if aside else "") + ")")
    for d in aside:
        print(f"  left out {d.id} ({Path(args.case) / d.entry.path}): {d.set_aside}", file=sys.stderr)
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    inv = library(args)
    info = inv.index(Path(args.case), force=args.force)
    print("basic index is up to date" if info is None else
          f"basic: {info.sources} sources, {info.chunks} chunks ({info.embedded} embedded) in {info.seconds}s, "
          f"{info.bytes} bytes at {info.path}\n  stages: {info.stage_summary()}")
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
    if library(args).delete_source(Path(args.case), args.source_id, args.reason):  # an unknown id is an error
        print(f"{args.source_id} tombstoned in {args.case}: dropped from both indexes, never recalled again")
    else:
        print(f"{args.source_id} was tombstoned in {args.case} already: nothing changed")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from investigator.init import initialise
    from state.errors import CaseProblems

    try:
        got = initialise(Path(args.alert), Path(args.sources), Path(args.out), group=args.group, force=args.force,
                         access=Path(args.access) if args.access else None,
                         inventory=Path(args.inventory) if args.inventory else None)
    except CaseProblems as exc:  # every problem found, one line each
        for p in exc.problems:
            error(str(p))
        return exc.exit_code
    for s in got.skipped:
        print(f"skipped: {s.path}: {s.reason}")
    if got.assumed:
        print(f"environment assumed (stated nowhere): {len(got.assumed)} files, listed in init-report.md")
    for z in got.zoneless:
        print(f"no time zone: {z}: its times carry none and none was given; set `timezone` on its entry in sources.yaml")
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

    paths = generate(args.seed, args.count, Path(args.out), variant=args.variant)
    print(f"{len(paths)} cases written to {args.out}")
    return 0
