"""A killed `index --force` never leaves an index that looks up to date and is not.

The build writes a fresh file next to the index, checks it against the parsed sources and
swaps it in with one rename. A SIGKILL at any point of that leaves either the previous
complete index or none; the next `index` then rebuilds (or finds the previous one current),
and the run that follows gets the case's expected verdicts.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from state.expected import load_expected

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"

pytestmark = pytest.mark.slow

KILL_POINTS = [f"index:{n}" for n in range(1, 10)]


def _cli(home: Path, *args: str, crash: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("INVESTIGATOR_CRASH_AT", "INVESTIGATOR_INDEX_ROOT")}
    if crash:
        env["INVESTIGATOR_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(home), *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


def _index_file(home: Path) -> Path:
    found = sorted(home.rglob("basic.duckdb"))
    assert len(found) <= 1, found
    return found[0] if found else home / "missing.duckdb"


def _counts(path: Path) -> tuple[int, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return (con.execute("SELECT count(*) FROM chunks").fetchone()[0],
                con.execute("SELECT count(*) FROM sources").fetchone()[0])
    finally:
        con.close()


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("whole")
    assert _cli(home, "index", str(REFERENCE)).returncode == 0
    return home


@pytest.fixture(scope="module")
def complete(whole) -> tuple[int, int]:
    return _counts(_index_file(whole))


@pytest.mark.parametrize("point", KILL_POINTS)
def test_an_index_build_killed_at_any_point_is_rebuilt_or_whole(tmp_path, whole, complete, point):
    home = tmp_path / "home"
    shutil.copytree(whole, home)
    killed = _cli(home, "index", str(REFERENCE), "--force", crash=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = _index_file(home)
    if left.exists():
        assert _counts(left) == complete, "what is left in place is a whole index, never a partial one"
    again = _cli(home, "index", str(REFERENCE))
    assert again.returncode == 0, again.stderr
    assert _counts(_index_file(home)) == complete
    assert not list(_index_file(home).parent.glob(".build-*")), "a dead build's files are removed"


def test_after_a_killed_rebuild_the_run_gets_the_expected_verdicts(tmp_path, whole):
    home = tmp_path / "home"
    shutil.copytree(whole, home)
    assert _cli(home, "index", str(REFERENCE), "--force", crash="index:4").returncode == -signal.SIGKILL
    run = _cli(home, "run", str(REFERENCE), "--out", str(home / "out"))
    assert run.returncode == 0, run.stderr
    got = {c["id"]: c["verdict"] for c in json.loads((home / "out" / "report.json").read_text())["claims"]}
    assert got == {cid: g.verdict for cid, g in load_expected(REFERENCE).claims.items()}
