"""The CLI is thin and documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from investigator.cli import parser

ROOT = Path(__file__).resolve().parent.parent


def test_every_command_and_option_has_help_text():
    p = parser()
    sub = next(a for a in p._actions if a.dest == "command")
    for name, cmd in sub.choices.items():
        assert cmd.description or sub._choices_actions, name
        for action in cmd._actions:
            if action.dest != "help":
                assert action.help, f"{name} {action.dest} has no help"
    assert all(a.help for a in sub._choices_actions)


def test_help_starts_without_importing_the_heavy_stack():
    code = "import sys, investigator.cli; print(any(m.startswith(('torch','graphrag','sentence_transformers')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_validate_reports_ok_for_the_reference_case():
    out = subprocess.run([sys.executable, "-m", "investigator.cli", "validate", "cases/ALR-20260429-017"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and "ok" in out.stdout


def test_validate_refuses_a_gold_root_cause_kind_no_run_can_name(tmp_path):
    """A typo in `expected.yaml` (a kind deciding.md §9 does not have) would make every run of the case
    score as wrong: `validate` names the file, the field and what was expected, and exits 2."""
    import shutil

    case = tmp_path / "case"
    shutil.copytree(ROOT / "cases" / "ALR-20260429-017", case)
    gold = (case / "expected.yaml").read_text()
    assert "kind: deployment" in gold
    (case / "expected.yaml").write_text(gold.replace("kind: deployment", "kind: deploy-ment", 1))
    out = subprocess.run([sys.executable, "-m", "investigator.cli", "validate", str(case)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "expected.yaml" in out.stderr and "root_cause.kind" in out.stderr and "external" in out.stderr, out.stderr
