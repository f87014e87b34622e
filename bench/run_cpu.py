"""CPU and wall time of whole runs of one case, indexes built beforehand (so only the loop is timed).

    python bench/run_cpu.py CASE_DIR [--tool basic|graph] [--repeat 5]

Prints one JSON line: the case, the tool and (CPU s, wall s) of each run, in one process with one
embedder. CPU time is the figure to compare between two trees on a busy machine (run each tree with
`PYTHONPATH=<tree>` from inside it); wall time is printed for completeness.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", type=Path)
    ap.add_argument("--tool", default="basic", choices=["basic", "graph"])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from investigator.config import Settings
    from investigator.runtime import Investigator
    from tools.embedding import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    with tempfile.TemporaryDirectory(prefix="run-cpu-") as tmp:
        root = Path(tmp)
        Investigator(Settings(workspace=root / "ws0", index_root=root), embedder=embedder,
                     progress=lambda _m: None).index(args.case)
        runs = []
        for i in range(args.repeat):
            inv = Investigator(Settings(workspace=root / f"ws{i + 1}", index_root=root), embedder=embedder,
                               progress=lambda _m: None)
            cpu, wall = time.process_time(), time.perf_counter()
            inv.start(args.case, retrieval=args.tool)
            runs.append((round(time.process_time() - cpu, 3), round(time.perf_counter() - wall, 3)))
    print(json.dumps({"case": args.case.name, "tool": args.tool, "cpu_wall": runs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
