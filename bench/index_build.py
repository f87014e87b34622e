"""A fresh chunk index of one case folder, built N times in new processes: wall and CPU seconds of
the whole `investigator index --tool basic`, the build's own time per stage (wall and CPU), and
the load average before each build.

    python bench/index_build.py CASE_DIR [--repeat 3] [--tree DIR] [--out FILE.json]

Each build gets a new workspace and index root, so nothing is reused (no index, no cached
vector). `--tree` is a source tree to run (default: this one), so an older commit exported with
`git archive` can be timed the same way. On a shared machine compare CPU seconds: wall time
grows with the load, CPU time much less (but the two-threaded embedding waits on a busy core).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_once(tree: Path, case_dir: Path) -> dict:
    """One fresh build in a new process: its wall, CPU, load before it and the stages it reported."""
    with tempfile.TemporaryDirectory(prefix="index-build-") as home:
        env = {k: v for k, v in os.environ.items() if k not in ("INVESTIGATOR_INDEX_ROOT", "INVESTIGATOR_HOME")}
        env["PYTHONPATH"] = str(tree)
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "investigator.cli", "index", "--tool", "basic", "--home", home,
                        str(case_dir)], cwd=tree, env=env, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        info = json.loads(next(Path(home).glob("index/*/basic.info.json")).read_text())
    return {"load": round(load, 2), "wall": round(wall, 2),
            "cpu": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
            "build": info["seconds"], "chunks": info["chunks"], "embedded": info["embedded"],
            "stages": info.get("stages", {})}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("case", type=Path, help="case folder")
    p.add_argument("--repeat", type=int, default=3, help="fresh builds")
    p.add_argument("--tree", type=Path, default=ROOT, help="source tree to time")
    p.add_argument("--out", type=Path, default=None, help="also write the runs as JSON here")
    args = p.parse_args()
    runs = [build_once(args.tree.resolve(), args.case.resolve()) for _ in range(args.repeat)]
    print(f"{os.cpu_count()} cores; {runs[0]['chunks']} chunks, {runs[0]['embedded']} embedded; seconds")
    stages = list(runs[0]["stages"])
    print(f"{'load':>5} {'wall':>6} {'cpu':>6} {'build':>6}  " + "  ".join(f"{s:>15}" for s in stages))
    for r in runs:
        cells = [f"{r['stages'][s]['wall']:6.2f}/{r['stages'][s]['cpu']:<6.2f}"[:15].rjust(15) for s in stages]
        print(f"{r['load']:5.1f} {r['wall']:6.2f} {r['cpu']:6.2f} {r['build']:6.2f}  " + "  ".join(cells))
    print(f"median wall {statistics.median(r['wall'] for r in runs):.2f} s, "
          f"CPU {statistics.median(r['cpu'] for r in runs):.2f} s (stage cells: wall/CPU)")
    if args.out:
        args.out.write_text(json.dumps({"command": " ".join(["python", *sys.argv]), "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
