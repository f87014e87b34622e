"""Cold start of the CLI's light commands: median wall and CPU (user+sys) seconds of N fresh processes.

    python bench/startup.py --home WORKSPACE --run RUN_ID [--tree DIR] [--case DIR] [--repeat 5]

`--tree` is a source tree to run (default: this one), so an older commit exported with
`git archive` can be timed the same way. CPU time is the figure to compare on a shared machine:
wall time grows with the load, CPU time much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def measure(tree: Path, argv: list[str], repeat: int) -> tuple[float, float, int]:
    walls, cpus, rc = [], [], 0
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        rc = subprocess.run([sys.executable, "-m", "investigator.cli", *argv], cwd=tree, env=env,
                            capture_output=True).returncode
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus), rc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--home", required=True, help="a workspace with at least one run")
    p.add_argument("--run", required=True, help="a run id in that workspace")
    p.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent), help="source tree to time")
    p.add_argument("--repeat", type=int, default=5, help="processes per command")
    p.add_argument("--case", default=str(Path(__file__).resolve().parent.parent / "cases" / "ALR-20260429-017"),
                   help="the case `validate` checks")
    args = p.parse_args()
    home = str(Path(args.home).resolve())
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.repeat} runs each, median")
    for cmd in (["--help"], ["--version"], ["runs"], ["show", args.run], ["show", args.run, "--json"],
                ["history", args.run], ["grant", args.run, "--group", "sre-oncall"],
                ["validate", str(Path(args.case).resolve())]):
        wall, cpu, rc = measure(Path(args.tree), ["--home", home, *cmd], args.repeat)
        print(f"{' '.join(cmd):<28} wall {wall:5.2f} s  cpu {cpu:5.2f} s  (exit {rc})")


if __name__ == "__main__":
    main()
