"""Where results go: `run --out` is checked before the investigation starts; a workspace that cannot be
written is still read (`runs`, `show`, `history`); report.md carries case text as text, never raw HTML;
a paused run's pause stays in its timeline after it resumes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
PAUSES = ROOT / "cases" / "INC-20261103-058"  # awaiting_permission for DNS-20261103-0042, readable by netops
SETPRIV = shutil.which("setpriv")


def cli(cwd: Path, *args: str, index_root: Path | None = None, read_only: bool = False,
        ) -> subprocess.CompletedProcess:
    """The CLI in a real process; `read_only`: without the capabilities that let root write anything."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    if index_root is not None:
        env["INVESTIGATOR_INDEX_ROOT"] = str(index_root)
    prefix = [SETPRIV, "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search,-fowner"] \
        if read_only and os.geteuid() == 0 else []
    return subprocess.run([*prefix, sys.executable, "-m", "investigator.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600, check=False)


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


# --- run --out ---------------------------------------------------------------------------------

@pytest.mark.parametrize("out, says", [
    ("a-file", "--out: a folder to write the report into (a-file is a file)"),
    ("a-file/report", "--out: a folder that can be created"),
    ("/proc/no/such", "--out: a folder that can be created (/proc is not writable)"),
])
def test_run_out_that_cannot_hold_the_report_is_refused_before_the_investigation_starts(tmp_path, out, says):
    shutil.copytree(REFERENCE, tmp_path / "case")
    (tmp_path / "a-file").write_text("not a folder")
    before = tree(tmp_path)
    t0 = time.monotonic()
    proc = cli(tmp_path, "--home", "home", "run", "case", "--out", out)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {says}"] or says in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "[investigator]" not in proc.stderr, "no round ran"
    assert tree(tmp_path) == before, "nothing written: no store, no index, no report"
    assert time.monotonic() - t0 < 60


def test_resume_out_that_is_a_file_is_refused_before_resuming(tmp_path):
    (tmp_path / "a-file").write_text("x")
    proc = cli(tmp_path, "--home", "home", "resume", "some-run", "--out", "a-file")
    assert proc.returncode == 2 and "--out: a folder to write the report into" in proc.stderr, proc.stderr
    assert not (tmp_path / "home").exists()


# --- a read-only workspace ----------------------------------------------------------------------

def _read_only(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        mode = p.lstat().st_mode
        if not stat.S_ISLNK(mode):
            p.chmod(stat.S_IMODE(mode) & ~0o222)


def _writable(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(stat.S_IMODE(p.lstat().st_mode) | 0o200)


@pytest.mark.skipif(os.geteuid() == 0 and SETPRIV is None, reason="root writes anything without setpriv to drop that")
def test_a_read_only_workspace_still_lists_shows_and_tells_the_history_of_its_runs(make_investigator, index_root,
                                                                                   tmp_path):
    ws = tmp_path / "ws"
    case = tmp_path / "case"
    shutil.copytree(REFERENCE, case)
    inv = make_investigator(workspace=ws)
    run_id = inv.start(case).run_id
    inv.store.engine.dispose()  # the writer closes the store, as a finished process does
    _read_only(ws)
    _read_only(case)
    try:
        before = {p: p.stat().st_mtime_ns for p in ws.rglob("*")}
        probe = cli(tmp_path, "--home", str(ws), "runs", read_only=True)
        runs = cli(tmp_path, "--home", str(ws), "runs", index_root=index_root, read_only=True)
        show = cli(tmp_path, "--home", str(ws), "show", run_id, index_root=index_root, read_only=True)
        history = cli(tmp_path, "--home", str(ws), "history", run_id, index_root=index_root, read_only=True)
        missing = cli(tmp_path, "--home", str(ws), "show", "no-such-run", read_only=True)
        write = cli(tmp_path, "--home", str(ws), "grant", run_id, "--group", "x", index_root=index_root,
                    read_only=True)
    finally:
        _writable(ws)
        _writable(case)
    assert probe.returncode == 0, probe.stderr
    assert runs.returncode == 0 and run_id in runs.stdout, runs.stderr
    assert show.returncode == 0 and "## Claims" in show.stdout, show.stderr
    assert history.returncode == 0 and "evidence_ready" in history.stdout, history.stderr
    assert missing.returncode == 3 and "no run 'no-such-run'" in missing.stderr
    assert write.returncode != 0 and "Traceback" not in write.stderr and write.stderr.count("\n") == 1, write.stderr
    assert {p: p.stat().st_mtime_ns for p in ws.rglob("*")} == before, "reading wrote nothing"


# --- report.md ----------------------------------------------------------------------------------

def test_report_md_carries_raw_html_from_case_text_as_text(make_investigator, tmp_path):
    import yaml

    from investigator.report_md import render_markdown

    case = tmp_path / "case"
    shutil.copytree(REFERENCE, case)
    data = yaml.safe_load((case / "case.yaml").read_text())
    data["title"] = "Latency <script>alert(1)</script>"
    data["question"] = "Why <img src=x onerror=alert(2)>?"
    data["required_claims"][0]["statement"] = "p95 <iframe src=//evil> rose"
    (case / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    md = render_markdown(make_investigator(workspace=tmp_path / "ws").start(case).report)
    for tag in ("<script", "<img", "<iframe"):
        assert tag not in md
    assert "&lt;script>alert(1)&lt;/script>" in md and "&lt;img src=x onerror=alert(2)>" in md
    assert "<" not in md, "report.md has no raw HTML at all"


# --- a paused run's timeline ----------------------------------------------------------------------

def test_a_paused_runs_pause_stays_in_the_timeline_after_it_resumes(make_investigator, tmp_path):
    inv = make_investigator(workspace=tmp_path / "ws")
    paused = inv.start(PAUSES).report
    assert paused.status == "awaiting_permission"
    pause = [t for t in paused.timeline if t["node"] == "decide"][-1]
    assert pause["summary"] == "stop: awaiting_permission"
    inv.grant(paused.run_id, ["netops"], by="alice")
    done = inv.resume(paused.run_id).report
    assert done.stop.kind == "evidence_ready"
    rows = [(t["round"], t["node"], t["summary"]) for t in done.timeline]
    at = rows.index((pause["round"], "decide", "stop: awaiting_permission"))
    after = [node for _r, node, _s in rows[at + 1:at + 4]]
    assert after[:2] == ["grant", "resume"], rows[at:at + 4]
    assert rows[-1][1:] == ("decide", "stop: evidence_ready")
