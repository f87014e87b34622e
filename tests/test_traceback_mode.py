"""`INVESTIGATOR_TRACEBACK=1` shows where an unexpected error came from, never what a source holds.

Every unexpected error's one-line message recommends it, so it is what a user pastes into a ticket:
it shows the frames (file, line, function, that line of code) and the exception types, and leaves
out exception messages that may quote a source, notes, and locals. A canary sits in a source the
principal cannot read; a parser bug (simulated) raises with that source's text in its message."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from investigator.cli import main

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
CANARY = "CANARY-9b1e-finance-only"
PODS = ('{"kind": "List", "items": [{"metadata": {"name": "web-7f6d4c8b95-h8zkt", "annotations": {"secret": "'
        + CANARY + '"}}, "spec": {"nodeName": "n1"}}]}\n')


@pytest.fixture
def case(tmp_path: Path) -> Path:
    dst = tmp_path / "case"
    shutil.copytree(REFERENCE, dst)
    (dst / "sources" / "pods.json").write_text(PODS)
    manifest = yaml.safe_load((dst / "sources.yaml").read_text())
    manifest["sources"].append({"id": "fin-pods", "path": "sources/pods.json", "kind": "kubernetes", "format": "pods",
                                "groups": ["finance"]})
    (dst / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    assert "finance" not in yaml.safe_load((dst / "case.yaml").read_text())["principal"]["groups"]
    return dst


def _buggy_parser(text: str):
    secret = text  # a local holding the content
    try:
        raise KeyError(secret)
    except KeyError as inner:
        err = RuntimeError(f"could not parse {secret!r}")
        err.add_note(f"while reading {secret}")
        raise err from inner


def run(case: Path, monkeypatch, traceback_mode: bool) -> tuple[int, str]:
    import tools.formats.k8s as k8s

    monkeypatch.setattr(k8s, "parse_pods_json", _buggy_parser)
    if traceback_mode:
        monkeypatch.setenv("INVESTIGATOR_TRACEBACK", "1")
    else:
        monkeypatch.delenv("INVESTIGATOR_TRACEBACK", raising=False)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(["validate", str(case)])
    return rc, err.getvalue()


def test_an_internal_error_is_one_line_naming_the_type_and_place_without_the_source(case, monkeypatch):
    rc, err = run(case, monkeypatch, traceback_mode=False)
    assert rc == 5
    assert err.count("\n") == 1 and "RuntimeError" in err and "INVESTIGATOR_TRACEBACK=1" in err
    assert CANARY not in err


def test_traceback_mode_shows_the_frames_and_types_but_no_source_value(case, monkeypatch):
    rc, err = run(case, monkeypatch, traceback_mode=True)
    assert rc == 5
    assert err.count("Traceback (most recent call last):") == 2, err  # the cause and the error
    assert "test_traceback_mode.py" in err and "in _buggy_parser" in err and "tools/corpus.py" in err
    assert "KeyError" in err and "RuntimeError" in err and "direct cause" in err
    assert CANARY not in err, err  # not in messages, notes or locals
    assert "secret" in err  # the code lines are shown (`raise KeyError(secret)`): names, not values


def test_traceback_mode_keeps_the_runtimes_own_messages(tmp_path, monkeypatch):
    """A CaseError never quotes a source: its message is as useful in traceback mode as without."""
    monkeypatch.setenv("INVESTIGATOR_TRACEBACK", "1")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(["validate", str(tmp_path / "nowhere")])
    assert rc == 2 and err.getvalue().startswith("error: ") and "the file to exist" in err.getvalue()


def test_a_real_process_in_traceback_mode_prints_no_canary(case):
    """The same through a real process: nothing is printed by Python's own handler either."""
    code = ("import sys, tools.formats.k8s as k\n"
            "def bad(text):\n    raise ValueError('bad pods: ' + text)\n"
            "k.parse_pods_json = bad\n"
            "import tools.corpus\n"
            "tools.corpus._PARSERS['kubernetes'].__globals__['fk8s'].parse_pods_json = bad\n"
            "from investigator.cli import main\n"
            "sys.exit(main(['validate', sys.argv[1]]))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(case)], capture_output=True, text=True, cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
                               "INVESTIGATOR_TRACEBACK": "1"}, timeout=120, check=False)
    assert CANARY not in proc.stderr + proc.stdout, proc.stderr
    assert proc.returncode == 2, proc.stderr  # a ValueError while parsing is the file's shape: refused, named
    assert "sources/pods.json" in proc.stderr
