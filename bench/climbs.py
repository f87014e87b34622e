"""How often one investigation calls back up the layers, measured on a real run.

    python bench/climbs.py [CASE_DIR] [--tool basic|graph] [--json]

The layers are `state` < `tools` < `graphs` < `investigator`: a module may import only from its own
layer and the ones below (tests/test_layering.py holds the imports to that). Imports are not the
whole story: a function handed down (a closure, a callback, an object of a class defined above) is
called from below without any import. This script sees those calls where they happen: it runs the
case as `investigator run` does (`Investigator.stream` to the end, then the report), with a profile
hook on every Python call, and records each call whose callee is defined in a higher layer than the
nearest project frame that made it. Frames of libraries in between (LangGraph calling a node,
pydantic calling a validator) are skipped over, so a call that goes down through a library and
comes back up is counted where it lands.

It prints each climbing edge once (caller -> callee, with how many times it ran) and the totals:
distinct edges, distinct callees ("places the walk climbs back up to") and calls. The index is built
before the hook is set, so only the investigation and its report are walked.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import CodeType, FrameType

LAYERS = {"state": 0, "tools": 1, "graphs": 2, "investigator": 3}
ROOT = Path(__file__).resolve().parent.parent


def _layer_of(code: CodeType, cache: dict[CodeType, tuple[int, str] | None]) -> tuple[int, str] | None:
    """(layer, module:function) of a function defined in the project's packages; None otherwise."""
    hit = cache.get(code, False)
    if hit is not False:
        return hit  # type: ignore[return-value]
    name: tuple[int, str] | None = None
    try:
        rel = Path(code.co_filename).resolve().relative_to(ROOT)
    except ValueError:
        rel = None
    if rel is not None and rel.parts and rel.parts[0] in LAYERS:
        module = ".".join(rel.with_suffix("").parts)
        name = (LAYERS[rel.parts[0]], f"{module}:{code.co_qualname}")
    cache[code] = name
    return name


def trace_run(case: Path, tool: str) -> Counter[tuple[str, str]]:
    from investigator.config import Settings
    from investigator.runtime import Investigator, RunResult
    from tools.embedding import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    climbs: Counter[tuple[str, str]] = Counter()
    cache: dict[CodeType, tuple[int, str] | None] = {}

    def hook(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        callee = _layer_of(frame.f_code, cache)
        if callee is None or frame.f_code.co_name == "<module>":  # a module body run by an import is no call
            return
        up = frame.f_back
        while up is not None:
            caller = _layer_of(up.f_code, cache)
            if caller is not None:
                if callee[0] > caller[0]:
                    climbs[(caller[1], callee[1])] += 1
                return
            up = up.f_back

    with tempfile.TemporaryDirectory(prefix="climbs-") as tmp:
        root = Path(tmp)
        Investigator(Settings(workspace=root / "ws0", index_root=root), embedder=embedder,
                     progress=lambda _m: None).index(case)
        inv = Investigator(Settings(workspace=root / "ws1", index_root=root), embedder=embedder,
                           progress=lambda _m: None)
        result = None
        sys.setprofile(hook)
        try:
            for item in inv.stream(case, retrieval=tool):
                if isinstance(item, RunResult):
                    result = item
            assert result is not None
            inv.report(result.run_id)
        finally:
            sys.setprofile(None)
    return climbs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", type=Path, nargs="?", default=ROOT / "cases" / "ALR-20260429-017")
    ap.add_argument("--tool", default="basic", choices=["basic", "graph"])
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args()
    climbs = trace_run(args.case, args.tool)
    callees = sorted({callee for _, callee in climbs})
    summary = {"case": args.case.name, "tool": args.tool, "edges": len(climbs), "callees": len(callees),
               "calls": sum(climbs.values()),
               "climbs": [{"caller": a, "callee": b, "calls": n} for (a, b), n in sorted(climbs.items())]}
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    for (a, b), n in sorted(climbs.items()):
        print(f"{n:>7}  {a}  ->  {b}")
    print(f"{args.case.name} ({args.tool}): {len(climbs)} climbing edges into {len(callees)} functions, "
          f"{sum(climbs.values())} calls")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
