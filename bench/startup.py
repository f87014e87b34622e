"""Cold start of the CLI's light commands: median wall and CPU (user+sys) seconds of N fresh processes.

    python bench/startup.py --home WORKSPACE --run RUN_ID [--paused RUN_ID] [--tree DIR [--tree DIR]]
                            [--case DIR] [--repeat 5]

`--tree` is a source tree to run (default: this one), so an older commit exported with
`git archive` can be timed the same way. Given twice, the two trees take turns process by
process (before, after, before, after, ...), so a load that comes and goes on a shared machine
weighs on both alike, and their medians are printed side by side. CPU time is the figure to
compare on a shared machine: wall time grows with the load, CPU time much less.

Each process finds its bytecode cached, as an installed package does: the processes write it to
a temporary folder (`PYTHONPYCACHEPREFIX`, never into the trees) in one untimed run per command
and tree, even where `PYTHONDONTWRITEBYTECODE` is set.

`--run` is a finished run (its `grant` is refused from the run's row alone); `--paused`, a run
awaiting permission whose principal holds `sre-oncall`, times `grant` refused after the case,
the manifest and the tombstones are read (nothing is written either way). `--grant-group G`
also times the grant that writes (G is a group the paused run waits for): each of those
processes gets its own copy of the workspace (its indexes linked, not copied), made before its
clock starts.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def once(tree: Path, argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and exit code of one fresh process.

    A `{home}` in argv is a fresh copy of the workspace `env["STARTUP_HOME"]`, made untimed; its
    `index` folder is a link to the workspace's (a grant writes only the store, and a copied index
    is another file, whose tombstone list no longer describes it: tools/tombstones.py)."""
    copy = None
    if "{home}" in argv:
        copy = tempfile.mkdtemp(prefix="startup-home-")
        home = Path(env["STARTUP_HOME"])
        shutil.copytree(home, copy, dirs_exist_ok=True,
                        ignore=lambda folder, names: ["index"] if Path(folder) == home and "index" in names else [])
        if (home / "index").is_dir():
            os.symlink(home / "index", Path(copy) / "index")
        argv = [copy if a == "{home}" else a for a in argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    rc = subprocess.run([sys.executable, "-m", "investigator.cli", *argv], cwd=tree, capture_output=True,
                        env={**env, "PYTHONPATH": str(tree)}).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if copy:
        shutil.rmtree(copy, ignore_errors=True)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, rc


def measure(trees: list[Path], argv: list[str], repeat: int, env: dict[str, str]) -> list[tuple[float, float, int]]:
    """Median wall and CPU seconds, and the last exit code, per tree; the trees take turns."""
    for tree in trees:
        once(tree, argv, env)  # untimed: writes the bytecode cache
    walls: list[list[float]] = [[] for _ in trees]
    cpus: list[list[float]] = [[] for _ in trees]
    rcs = [0] * len(trees)
    for _ in range(repeat):
        for i, tree in enumerate(trees):
            wall, cpu, rcs[i] = once(tree, argv, env)
            walls[i].append(wall)
            cpus[i].append(cpu)
    return [(statistics.median(w), statistics.median(c), rc) for w, c, rc in zip(walls, cpus, rcs)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--home", required=True, help="a workspace with at least one run")
    p.add_argument("--run", required=True, help="a finished run in that workspace")
    p.add_argument("--paused", help="a run awaiting permission in that workspace (default: grant of --run only)")
    p.add_argument("--grant-group", help="a group --paused waits for: also time the grant that writes it")
    p.add_argument("--tree", action="append", help="source tree to time; twice to compare two (default: this one)")
    p.add_argument("--repeat", type=int, default=5, help="processes per command and tree")
    p.add_argument("--case", default=str(HERE / "cases" / "ALR-20260429-017"), help="the case `validate` checks")
    args = p.parse_args()
    trees = [Path(t).resolve() for t in args.tree or [HERE]]
    if len(trees) > 2:
        p.error("--tree: at most two trees")
    home = str(Path(args.home).resolve())
    commands = [["--help"], ["--version"], ["runs"], ["show", args.run], ["show", args.run, "--json"],
                ["history", args.run], ["grant", args.run, "--group", "sre-oncall"]]
    if args.paused:
        commands.append(["grant", args.paused, "--group", "sre-oncall"])
    if args.paused and args.grant_group:
        commands.append(["grant", args.paused, "--group", args.grant_group])
    commands.append(["validate", str(Path(args.case).resolve())])
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.repeat} runs each, median")
    for i, tree in enumerate(trees):
        print(f"tree {i + 1}: {tree}")
    with tempfile.TemporaryDirectory(prefix="startup-pyc-") as pyc:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        env["STARTUP_HOME"] = home
        for cmd in commands:
            writes = cmd[0] == "grant" and cmd[1] == args.paused and cmd[-1] == args.grant_group
            got = measure(trees, ["--home", "{home}" if writes else home, *cmd], args.repeat, env)
            shown = " ".join(cmd).replace(str(Path(args.case).resolve()), Path(args.case).name)
            cells = "   ".join(f"wall {w:5.2f} s  cpu {c:5.2f} s  (exit {rc})" for w, c, rc in got)
            print(f"{shown:<34} {cells}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
