"""Faults: nothing left `running`, one line per operator mistake, a run that keeps failing set aside.

Each test is one way a run or a command used to end in a traceback or a run stuck at
`running`: a source that breaks under a running investigation, metric values at the edges,
an unexpected error, a worker killed or interrupted, a store, workspace or environment value
that is wrong, a reader that goes away. Users meet these through the command line, so the
command-line tests run real processes (and send them real signals).
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphs.planner import DeterministicPlanner
from state.errors import RunFailed

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
P95 = "order-service-prod-p95-latency"
P95_CSV = Path("sources/metrics/order-service-prod-p95-latency.csv")
ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
CANARY = "CANARY-7f3a source text that must never reach the store or the terminal"


def _cli(home: Path, *args: str, env: dict | None = None, index_root: Path | None = None,
         store: str | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_")}
    if index_root is not None:
        full["INVESTIGATOR_INDEX_ROOT"] = str(index_root)
    full.update(env or {})
    cmd = [sys.executable, "-m", "investigator.cli", "--home", str(home), *(["--store", store] if store else []), *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=full, timeout=600, check=False)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The command failed with exactly one `error:` line, the last one on stderr, and no traceback."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], proc.stderr
    return errors[0]


def _status(home: Path, run_id: str, store: str | None = None):  # -> RunRow
    from state.store import Store

    return Store.from_url(store or f"sqlite:///{(home / 'investigator.db').resolve()}").run(run_id)


# --- a source that breaks while a run reads it -------------------------------------------------

def _lose_permission(path: Path) -> None:
    path.chmod(0)


FAULTS = {
    "turns_non_utf8": lambda p: p.write_bytes(b"\xff\xfe\x00" + p.read_bytes()),
    "becomes_a_folder": lambda p: (p.unlink(), p.mkdir()),
    "loses_its_read_permission": _lose_permission,
    "is_deleted": lambda p: p.unlink(),
}


class BreakOnFirstRead:
    """A fault hook: the first time the run reads the symptom's metric, the file changes under it."""

    def __init__(self, path: Path, fault: str) -> None:
        self.path, self.fault, self.done = path, fault, False

    def __call__(self, source_id: str) -> None:
        if source_id != P95:
            return
        if not self.done:
            self.done = True
            FAULTS[self.fault](self.path)
        if self.fault == "loses_its_read_permission" and os.geteuid() == 0:
            # root reads a mode-000 file anyway: raise what open() raises for everybody else
            raise PermissionError(errno.EACCES, "Permission denied", str(self.path))


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_source_that_breaks_mid_run_is_a_failed_read_and_the_run_stops_source_failure_with_a_report(
        make_investigator, case_copy, fault):
    hook = BreakOnFirstRead(case_copy / P95_CSV, fault)
    inv = make_investigator(fault=hook)
    report = inv.start(case_copy).report
    assert hook.done, "the fault happened while the run was reading"
    assert report.stop.kind == "source_failure" and P95 in report.stop.sources
    assert P95 in report.reads["failed"]
    verdicts = {c.id: c.verdict for c in report.claims}
    assert verdicts["symptom_window"] == "insufficient"
    assert verdicts["causal_attribution"] != "confirmed", "never sure of a cause whose symptom could not be read"
    symptom = next(c for c in report.claims if c.id == "symptom_window")
    assert any("failed" in m for m in symptom.missing)
    row = inv.store.run(report.run_id)
    assert (row.status, row.owner, row.error) == ("stopped", None, None)
    if fault == "loses_its_read_permission":
        (case_copy / P95_CSV).chmod(0o644)


# --- metric values at the edges ------------------------------------------------------------------

def _edit_series(case_dir: Path, name: str, value) -> None:  # value(ts, v) -> new value, or None for a gap
    path = case_dir / "sources" / "metrics" / f"{name}.csv"
    lines = path.read_text().splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        ts, v = line.split(",")
        new = value(ts, v)
        if new is not None:
            out.append(f"{ts},{new}")
    path.write_text("\n".join(out) + "\n")


def test_metric_edge_cases_are_decided_by_rule_and_never_crash_a_run(make_investigator, case_copy):
    """deciding.md §3: non-finite points and gaps are skipped; a series flat at zero stays normal;
    a series with no finite point cannot decide anything (never anomalous)."""
    # the symptom: an inf and a NaN point inside the window and a five-minute gap
    _edit_series(case_copy, P95, lambda ts, v: "inf" if "T10:40" in ts else "NaN" if "T10:42" in ts
                 else None if "10:45" <= ts[11:16] <= "10:49" else v)
    # the competing hypothesis's metric: a zero baseline that stays zero
    _edit_series(case_copy, "order-service-prod-db-wait", lambda ts, v: "0")
    # a dependency's metric: not one finite value
    _edit_series(case_copy, "inventory-service-prod-p95-latency", lambda ts, v: "+Inf")
    # cpu: -inf all through the baseline
    _edit_series(case_copy, "order-service-prod-cpu", lambda ts, v: "-inf" if ts < "2026-04-29T10:00" else v)
    inv = make_investigator(shared_index=False)
    report = inv.start(case_copy).report
    verdicts = {c.id: c.verdict for c in report.claims}
    assert verdicts["symptom_window"] == "confirmed", "the rise stands without the skipped points"
    assert verdicts["pool_exhaustion_check"] == "refuted", "a series flat at zero did not move"
    assert report.stop is not None
    assert inv.store.run(report.run_id).status == "stopped"
    data = json.loads(report.to_json())
    assert "Infinity" not in report.to_json() and "NaN" not in report.to_json()
    assert data["run_id"] == report.run_id


def test_a_zero_baseline_gives_no_ratio_and_the_threshold_floor_decides():
    from state.profile import AnomalyParams
    from tools.signals import Range, series_verdict

    t0 = datetime(2026, 4, 29, 9, 30, tzinfo=UTC)
    rng = Range(t0, t0 + timedelta(minutes=55), t0 + timedelta(minutes=80))
    flat = [(t0 + timedelta(minutes=i), 0.0) for i in range(80)]
    v = series_verdict(flat, rng, AnomalyParams())
    assert v.decidable and not v.anomalous and v.ratio == 0.0
    rises = [(t, 0.0 if i < 60 else 4.0) for i, (t, _v) in enumerate(flat)]
    v = series_verdict(rises, rng, AnomalyParams(), ("up",), 2.0)
    assert v.anomalous and v.baseline == 0.0 and math.isinf(v.ratio) and v.delta == 4.0
    none_finite = [(t, math.inf) for t, _v in flat]
    v = series_verdict(none_finite, rng, AnomalyParams())
    assert not v.decidable and not v.anomalous and v.note == "no point in the window"
    huge = [(t, 1e308 if i < 60 else -1e308) for i, (t, _v) in enumerate(flat)]
    v = series_verdict(huge, rng, AnomalyParams())
    assert v.anomalous and v.direction == "down" and v.delta == -math.inf


def test_infinite_figures_of_a_signal_are_stored_and_reported_as_empty_never_as_infinity():
    from state.facts import SignalFact

    fact = SignalFact(entity="svc", signal="metric", name="m", anomalous=True, baseline=0.0, ratio=math.inf,
                      delta=-math.inf, points=())
    data = json.loads(fact.model_dump_json())
    assert data["ratio"] is None and data["delta"] is None and data["baseline"] == 0.0


# --- an unexpected error: failed, recorded, resumable; quarantined when it keeps failing ----------

class ExplodingPlanner(DeterministicPlanner):
    """A planner with a bug: raises (quoting source text in its message) on its `at`-th call."""

    def __init__(self, at: int = 3, every: bool = False) -> None:
        self.at, self.every, self.calls = at, every, 0

    def next_gap(self, case, decisions, k, t, done):
        self.calls += 1
        if self.calls == self.at or (self.every and self.calls >= self.at):
            raise RuntimeError(f"cannot plan around {CANARY}")
        return super().next_gap(case, decisions, k, t, done)


def test_an_unexpected_error_marks_the_run_failed_with_one_line_and_resume_finishes_it(make_investigator, capsys):
    from investigator.cli import main

    inv = make_investigator(planner=ExplodingPlanner(at=3))
    with pytest.raises(RunFailed) as err:
        inv.start(REFERENCE)
    assert "RuntimeError" in str(err.value) and CANARY not in str(err.value)
    row = inv.store.run("run_0429_017")
    assert row.status == "failed" and row.attempts == 1 and row.owner is None
    assert row.error.startswith("RuntimeError at graphs/") and "\n" not in row.error and CANARY not in row.error

    assert main(["--home", str(inv.settings.workspace), "runs"]) == 0
    listed = capsys.readouterr().out
    assert "failed" in listed and "RuntimeError" in listed and CANARY not in listed

    done = make_investigator().resume("run_0429_017")
    assert done.report.stop.kind == "evidence_ready"
    row = inv.store.run("run_0429_017")
    assert (row.status, row.attempts, row.error, row.owner) == ("stopped", 0, None, None)


def test_a_run_that_fails_three_times_in_a_row_is_quarantined_and_work_leaves_it_alone(make_investigator):
    broken = ExplodingPlanner(at=1, every=True)
    inv = make_investigator(planner=broken)
    for attempt in (1, 2, 3):
        with pytest.raises(RunFailed):
            inv.start(REFERENCE) if attempt == 1 else inv.resume("run_0429_017")
        row = inv.store.run("run_0429_017")
        assert row.attempts == attempt and row.status == ("quarantined" if attempt == 3 else "failed")
    calls = broken.calls
    assert inv.work(once=True) == [], "a quarantined run is not picked up"
    assert broken.calls == calls and inv.store.run("run_0429_017").attempts == 3
    assert make_investigator().resume("run_0429_017").report.stop.kind == "evidence_ready", \
        "asking for it by name still tries it"


def _work_queue_with_a_run_that_keeps_failing(tmp_path: Path, index_root: Path, store: str | None,
                                              make_investigator) -> None:
    """Crashed runs, one of which can no longer load its case. `work --once` finishes the others,
    records the failure, and after three failed attempts in a row sets the broken one aside."""
    home = tmp_path / "home"
    broken_case = tmp_path / "broken"
    shutil.copytree(REFERENCE, broken_case)
    a = _cli(home, "run", str(broken_case), "--run-id", "broken", env={"INVESTIGATOR_CRASH_AT": "plan:1"},
             index_root=index_root, store=store)
    assert a.returncode == -signal.SIGKILL, a.stderr
    csv = broken_case / P95_CSV
    csv.write_bytes(b"\xff\xfe" + csv.read_bytes())  # the case no longer loads: every resume fails
    b = _cli(home, "run", str(REFERENCE), "--run-id", "healthy", "--out", str(tmp_path / "out"),
             env={"INVESTIGATOR_CRASH_AT": "read:2"}, index_root=index_root, store=store)
    assert b.returncode == -signal.SIGKILL, b.stderr

    first = _cli(home, "work", "--once", index_root=index_root, store=store)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    assert "finished 1 run(s): healthy" in first.stdout
    assert _status(home, "healthy", store).status == "stopped"
    row = _status(home, "broken", store)
    # its killed worker was one failed attempt, the case that no longer loads another
    assert row.status == "failed" and row.attempts == 2 and "UTF-8" in row.error and row.owner is None

    worker = make_investigator(workspace=home)
    if store:
        worker = type(worker)(worker.settings.model_copy(update={"store_url": store}), embedder=worker.embedder,
                              progress=lambda _m: None)
    assert worker.work(once=True) == []
    row = worker.store.run("broken")
    assert row.status == "quarantined" and row.attempts == 3

    c = _cli(home, "run", str(REFERENCE), "--run-id", "healthy-2", "--out", str(tmp_path / "out2"),
             env={"INVESTIGATOR_CRASH_AT": "retrieve:2"}, index_root=index_root, store=store)
    assert c.returncode == -signal.SIGKILL, c.stderr
    assert worker.work(once=True) == ["healthy-2"], "the queue moves on"
    assert worker.store.run("broken").attempts == 3, "set aside: not tried again"
    assert {r.run_id: r.status for r in worker.store.runs()} == {
        "broken": "quarantined", "healthy": "stopped", "healthy-2": "stopped"}


@pytest.mark.slow
def test_work_finishes_the_queue_when_one_run_keeps_failing(tmp_path, index_root, make_investigator):
    _work_queue_with_a_run_that_keeps_failing(tmp_path, index_root, None, make_investigator)


@pytest.mark.slow
@pytest.mark.postgres
def test_work_finishes_the_queue_when_one_run_keeps_failing_on_postgresql(tmp_path, index_root, pg_url,
                                                                           make_investigator):
    _work_queue_with_a_run_that_keeps_failing(tmp_path, index_root, pg_url, make_investigator)


def test_work_takes_over_a_run_whose_local_worker_died_at_once(tmp_path, index_root):
    home = tmp_path / "home"
    crashed = _cli(home, "run", str(REFERENCE), "--out", str(tmp_path / "out"),
                   env={"INVESTIGATOR_CRASH_AT": "retrieve:3"}, index_root=index_root)
    assert crashed.returncode == -signal.SIGKILL
    held = _status(home, "run_0429_017")
    assert held.status == "running" and held.lease_until is not None
    started = datetime.now(UTC)
    work = _cli(home, "work", "--once", index_root=index_root)  # the lease (60 s) has not run out
    assert work.returncode == 0 and "finished 1 run(s): run_0429_017" in work.stdout, work.stderr
    assert (datetime.now(UTC) - started).total_seconds() < 60
    assert _status(home, "run_0429_017").status == "stopped"


# --- interrupts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130),
                                       pytest.param(signal.SIGTERM, 143, marks=pytest.mark.slow)])
def test_an_interrupted_run_exits_with_one_line_and_is_left_interrupted_and_resumable(tmp_path, index_root, sig, code):
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_")}
    env["INVESTIGATOR_INDEX_ROOT"] = str(index_root)
    proc = subprocess.Popen([sys.executable, "-m", "investigator.cli", "--home", str(home), "run", str(REFERENCE),
                             "--out", str(home / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "round 3:" in line:  # mid-run: freeze it, so the signal lands before it can finish
            proc.send_signal(signal.SIGSTOP)
            proc.send_signal(sig)
            proc.send_signal(signal.SIGCONT)
            break
    seen += proc.stderr.readlines()
    proc.stdout.read()
    assert proc.wait(timeout=120) == code, "".join(seen)
    stopped = subprocess.CompletedProcess(proc.args, code, "", "".join(seen))
    assert "resume run_0429_017" in _one_error_line(stopped)
    row = _status(home, "run_0429_017")
    assert row.status == "interrupted" and row.owner is None and row.attempts == 0
    assert not (home / "out" / "report.json").exists()
    resumed = _cli(home, "resume", "run_0429_017", "--out", str(home / "out"), index_root=index_root)
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((home / "out" / "report.json").read_text())
    assert report["stop"]["kind"] == "evidence_ready"
    ids = [e["id"] for e in report["evidence"]]
    assert len(ids) == len(set(ids))


# --- operator mistakes: one line, a documented exit code, nothing created -------------------------

@pytest.mark.postgres
def test_a_store_url_naming_a_missing_postgresql_database_is_one_line_exit_4(tmp_path):
    psycopg = pytest.importorskip("psycopg")
    try:
        psycopg.connect(ADMIN, connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/inv_missing_{uuid.uuid4().hex[:8]}"
    for args in (["runs"], ["work", "--once"], ["show", "some-run"]):
        proc = _cli(tmp_path / "home", *args, store=url)
        assert proc.returncode == 4
        assert "does not exist" in _one_error_line(proc)


def test_a_database_drivers_own_error_names_its_reason_as_the_orms_does():
    import sqlite3

    from investigator.failures import describe

    said = describe(sqlite3.OperationalError("attempt to write a readonly database\nsecond line"))
    assert said == "OperationalError (attempt to write a readonly database)"


def _file(tmp_path: Path) -> Path:
    f = tmp_path / "a-file"
    f.write_text("not a folder\n")
    return f


MISTAKES = {
    "home_is_a_file": (lambda t: (["--home", str(_file(t)), "runs"], {}), 2, "expected a folder"),
    "sqlite_store_is_a_folder": (lambda t: (["--store", f"sqlite:///{t}", "runs"], {}), 2, "found a folder"),
    "sqlite_store_under_a_file": (lambda t: (["--store", f"sqlite:///{_file(t)}/x.db", "run", str(REFERENCE)], {}),
                                  2, "cannot create the folder"),
    "sqlite_store_not_a_database": (lambda t: (["--store", f"sqlite:///{_file(t)}", "runs"], {}), 2,
                                    "cannot open it as a SQLite database"),
    "unknown_store_kind": (lambda t: (["--store", "mysql://db/inv", "runs"], {}), 2, "expected sqlite"),
    "lease_not_a_number": (lambda t: (["runs"], {"INVESTIGATOR_LEASE_SECONDS": "abc"}), 2,
                           "INVESTIGATOR_LEASE_SECONDS='abc'"),
    "lease_negative": (lambda t: (["work", "--once"], {"INVESTIGATOR_LEASE_SECONDS": "-5"}), 2,
                       "INVESTIGATOR_LEASE_SECONDS"),
    "attempts_zero": (lambda t: (["runs"], {"INVESTIGATOR_MAX_ATTEMPTS": "0"}), 2, "INVESTIGATOR_MAX_ATTEMPTS"),
    "max_sources_not_a_number": (lambda t: (["validate", str(REFERENCE)], {"INVESTIGATOR_MAX_SOURCES": "many"}),
                                 2, "INVESTIGATOR_MAX_SOURCES"),
    "crash_point_garbled": (lambda t: (["runs"], {"INVESTIGATOR_CRASH_AT": "read:six"}), 2, "INVESTIGATOR_CRASH_AT"),
    "crash_point_unknown_moment": (lambda t: (["runs"], {"INVESTIGATOR_CRASH_AT": "read:2:later"}), 2,
                                   "NODE:ROUND[:work|saved]"),
    "home_from_environment_is_a_file": (lambda t: (["runs"], {"INVESTIGATOR_HOME": str(_file(t))}), 2,
                                        "INVESTIGATOR_HOME"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_an_operator_mistake_is_one_line_and_a_documented_exit_code(tmp_path, mistake):
    make, code, says = MISTAKES[mistake]
    args, env = make(tmp_path)
    full = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_")}
    full.update(env)
    if "--home" not in args and "INVESTIGATOR_HOME" not in env:
        args = ["--home", str(tmp_path / "home"), *args]
    proc = subprocess.run([sys.executable, "-m", "investigator.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env=full, timeout=300, check=False)
    assert proc.returncode == code, proc.stderr
    assert says in _one_error_line(proc)


@pytest.mark.parametrize("value", ["20MB", "5000000", "512kb"])
def test_a_size_limit_written_with_a_unit_is_accepted_by_every_check(tmp_path, value):
    # the up-front environment check and the case loader read the same variable one way
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_")}
    env["INVESTIGATOR_MAX_SOURCE_BYTES"] = value
    proc = subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(tmp_path / "home"), "validate",
                           str(REFERENCE)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("command", [["show", "no-such-run"], ["history", "no-such-run"],
                                     ["resume", "no-such-run"], ["grant", "no-such-run", "--group", "dba"]])
def test_looking_up_an_unknown_run_creates_no_store_and_no_workspace(tmp_path, command):
    home = tmp_path / "home"
    proc = _cli(home, *command)
    assert proc.returncode == 3
    assert "no run 'no-such-run'" in _one_error_line(proc)
    assert not home.exists(), sorted(p.name for p in home.rglob("*"))


def test_a_reader_that_goes_away_ends_the_listing_quietly(tmp_path, make_investigator):
    make_investigator(workspace=tmp_path / "home").start(REFERENCE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_")}
    proc = subprocess.Popen([sys.executable, "-m", "investigator.cli", "--home", str(tmp_path / "home"), "runs"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    proc.stdout.close()  # `investigator runs | head -0`: the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == "", err


def test_a_killed_worker_not_yet_reaped_counts_as_gone():
    """A SIGKILLed process stays a zombie until reaped (in a container, for a while): its lease and
    locks are free to take over at once."""
    import signal
    import subprocess
    import sys
    import time

    from tools.builds import pid_alive

    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert pid_alive(p.pid)
        os.kill(p.pid, signal.SIGKILL)
        time.sleep(0.5)  # dead, not reaped: a zombie
        assert not pid_alive(p.pid)
    finally:
        p.wait(10)
