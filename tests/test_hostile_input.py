"""Input cannot hurt: a hostile or careless case folder, source file or command-line argument is
refused with one line naming the file, the field and what was expected (exit 2), never reads
outside the case folder, never quotes what the principal may not read, never runs away with time
or memory, and leaves nothing written behind."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from investigator.cli import main
from state.errors import CaseError, ConfigError

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
SECURITY_NOTE = "sources/notes/order-service-security-review-2026q2.md"  # groups: [security]
LINE = r"^error: (?P<file>[^\n]+?): (?P<field>[^\n:]+(?:\.[^\n:]+)*): (?P<expected>[^\n]+)$"


# --- helpers ---------------------------------------------------------------------------------

def cli(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """`investigator ARGV` in this process (fast): exit code, stdout, stderr. A traceback fails the test."""
    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as exc:  # argparse
                rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(old)
    return rc, out.getvalue(), err.getvalue()


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under root with its size and modification time, and every folder."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            # a folder counts by being there (a temporary file made and removed again changes its mtime)
            out[str(p.relative_to(root))] = (-1, -1) if name in dirnames else (st.st_size, st.st_mtime_ns)
    return out


def edit(case_dir: Path, name: str, change) -> None:
    path = case_dir / name
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def add_source(case_dir: Path, entry: dict, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        p = case_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
    edit(case_dir, "sources.yaml", lambda m: m["sources"].append({"groups": ["sre-oncall"], **entry}))


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """The working folder the CLI runs in, holding a private copy of the reference case at `case/`.

    It sits two folders deep in the test's own tmp folder, so a name that climbs out (`../../x`)
    still lands where `written_under` looks."""
    work = tmp_path / "a" / "b" / "work"
    shutil.copytree(REFERENCE, work / "case")
    return work


def written_under(sandbox: Path) -> Path:
    return sandbox.parents[2]


def refused(sandbox: Path, argv: list[str], *, file: str, field: str | None = None, expected: str = "",
            code: int = 2) -> str:
    """Run the CLI and check: exit `code`, one line naming file and field, nothing written anywhere."""
    before = tree(written_under(sandbox))
    rc, out, err = cli(argv, sandbox)
    assert rc == code, (rc, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    m = re.match(LINE, err.strip())
    assert m, err
    assert m["file"].endswith(file), err
    if field is not None:
        assert m["field"].startswith(field), err
    assert expected.lower() in m["expected"].lower(), err
    assert tree(written_under(sandbox)) == before, "nothing is written by a refused command"
    return err


# --- paths: a source is read only from inside its case folder ----------------------------------

def test_a_source_path_climbing_out_with_dotdot_is_refused(sandbox):
    edit(sandbox / "case", "sources.yaml", lambda m: m["sources"][0].update(path="../../../../etc/passwd"))
    err = refused(sandbox, ["validate", "case"], file="sources.yaml", field="sources.0.path", expected="no '..'")
    assert "root:" not in err


def test_an_absolute_source_path_is_refused(sandbox):
    edit(sandbox / "case", "sources.yaml", lambda m: m["sources"][0].update(path="/etc/passwd"))
    refused(sandbox, ["validate", "case"], file="sources.yaml", field="sources.0.path", expected="not absolute")


@pytest.mark.parametrize("path", ["C:/Windows/win.ini", "~/secrets.md", "sources/\x00nul.md", "sources//../../x.md"])
def test_other_path_tricks_are_refused(sandbox, path):
    edit(sandbox / "case", "sources.yaml", lambda m: m["sources"][0].update(path=path))
    refused(sandbox, ["validate", "case"], file="sources.yaml", field="sources.0.path")


def test_a_symlink_out_of_the_case_folder_is_refused_and_its_target_never_read(sandbox):
    outside = written_under(sandbox) / "outside.md"
    outside.write_text("---\ndoc_id: x\ntitle: CANARY-OUTSIDE\nversion: v1\nupdated_at: nope\n---\nCANARY-OUTSIDE\n")
    case = sandbox / "case"
    link = case / "sources/notes/link.md"
    link.symlink_to(outside)
    add_source(case, {"id": "linked", "path": "sources/notes/link.md", "kind": "note"}, {})
    err = refused(sandbox, ["validate", "case"], file="sources.yaml", field="sources[linked].path",
                  expected="inside the case folder")
    assert "CANARY" not in err


def test_a_folder_symlinked_out_of_the_case_is_refused(sandbox):
    elsewhere = written_under(sandbox) / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "n.md").write_text("---\ndoc_id: x\ntitle: t\nversion: v1\nupdated_at: 2026-01-01T00:00:00Z\n---\nx\n")
    case = sandbox / "case"
    (case / "sources" / "ext").symlink_to(elsewhere)
    add_source(case, {"id": "ext", "path": "sources/ext/n.md", "kind": "note"}, {})
    refused(sandbox, ["validate", "case"], file="sources.yaml", field="sources[ext].path", expected="inside")


def test_a_symlink_inside_the_case_folder_is_allowed(sandbox):
    case = sandbox / "case"
    (case / "sources/notes/alias.md").symlink_to(case / "sources/notes/oncall-handover-2026-04-29.md")
    add_source(case, {"id": "alias", "path": "sources/notes/alias.md", "kind": "note"}, {})
    rc, _out, err = cli(["validate", "case"], sandbox)
    assert rc == 0, err
    from tools.corpus import load_sources

    doc = next(d for d in load_sources(case) if d.id == "alias")
    assert doc.text == (case / "sources/notes/oncall-handover-2026-04-29.md").read_text()


def test_a_symlink_loop_is_a_clear_error(sandbox):
    case = sandbox / "case"
    (case / "sources/a.md").symlink_to(case / "sources/b.md")
    (case / "sources/b.md").symlink_to(case / "sources/a.md")
    add_source(case, {"id": "loop", "path": "sources/a.md", "kind": "note"}, {})
    refused(sandbox, ["validate", "case"], file="sources.yaml", field="sources[loop].path", expected="loop")


def test_a_pipe_in_the_case_folder_is_refused_without_blocking(sandbox):
    case = sandbox / "case"
    os.mkfifo(case / "sources/notes/pipe.md")
    add_source(case, {"id": "pipe", "path": "sources/notes/pipe.md", "kind": "note"}, {})
    t0 = time.monotonic()
    refused(sandbox, ["validate", "case"], file="pipe.md", field="path", expected="regular file")
    assert time.monotonic() - t0 < 10


# --- names: case ids and run ids become file names -------------------------------------------

@pytest.mark.parametrize("case_id", ["../../../x", "/tmp/x", ".hidden", "a/b", "x" * 129, "", "a b", "é"])
def test_a_case_id_that_is_not_a_name_is_refused_before_anything_is_written(sandbox, case_id):
    edit(sandbox / "case", "case.yaml", lambda c: c.update(id=case_id))
    refused(sandbox, ["--home", "home", "index", "case", "--tool", "basic"], file="case.yaml", field="id",
            expected="a name of letters")
    assert not (sandbox / "home").exists()


@pytest.mark.parametrize("run_id", ["../../x", "/tmp/x", "..", ".x", "a/b", "x" * 129])
def test_a_run_id_that_is_not_a_name_is_refused_by_the_cli_before_anything_is_written(sandbox, run_id):
    before = tree(written_under(sandbox))
    rc, _out, err = cli(["--home", "home", "run", "case", "--run-id", run_id], sandbox)
    assert rc == 2 and err.startswith("error: --run-id: a name of letters") and err.count("\n") == 1, err
    assert tree(written_under(sandbox)) == before


@pytest.mark.parametrize("command", [["resume"], ["show"], ["history"], ["grant", "--group", "g"]])
def test_a_run_id_argument_that_is_a_path_is_refused(sandbox, command):
    before = tree(written_under(sandbox))
    rc, _out, err = cli(["--home", "home", command[0], "../../x", *command[1:]], sandbox)
    assert rc == 2 and err.startswith("error: RUN_ID: ") and err.count("\n") == 1
    assert tree(written_under(sandbox)) == before


def test_a_run_id_in_case_yaml_that_is_a_path_is_refused(sandbox):
    edit(sandbox / "case", "case.yaml", lambda c: c.update(run_id="../../out-of-tree"))
    refused(sandbox, ["validate", "case"], file="case.yaml", field="run_id", expected="a name")


def test_the_library_refuses_a_run_id_that_is_a_path_before_indexing(sandbox, embedder):
    from investigator.config import Settings
    from investigator.runtime import Investigator

    inv = Investigator(Settings(workspace=sandbox / "ws"), embedder=embedder, progress=lambda _m: None)
    before = tree(written_under(sandbox))
    with pytest.raises(ConfigError, match=r"run_id: a name"):
        inv.start(sandbox / "case", run_id="../../escaped")
    assert tree(written_under(sandbox)) == before


def test_names_are_one_rule():
    from state._base import NAME_MAX, is_name

    assert all(is_name(n) for n in ["ALR-20260429-017", "run_0429_017", "a", "a.b-c_d", "9" * NAME_MAX])
    assert not any(is_name(n) for n in ["", ".a", "-a", "_a", "a/b", "a\\b", "..", "a b", "a\n", "9" * (NAME_MAX + 1),
                                        "ä", 7, None])


# --- sizes: capped before reading, configurable, with a clear error ------------------------------

def test_a_source_over_the_default_size_limit_is_refused_before_it_is_read(sandbox):
    case = sandbox / "case"
    big = case / "sources/notes/huge.md"
    with big.open("wb") as fh:  # 50 MB, sparse: refused from its size alone
        fh.truncate(50 * 1024 * 1024)
    add_source(case, {"id": "huge", "path": "sources/notes/huge.md", "kind": "note"}, {})
    t0 = time.monotonic()
    refused(sandbox, ["validate", "case"], file="huge.md", field="<file>", expected="at most 20 MB")
    assert time.monotonic() - t0 < 5


def test_the_source_size_limit_is_set_by_the_environment(sandbox, monkeypatch):
    monkeypatch.setenv("INVESTIGATOR_MAX_SOURCE_BYTES", "2KB")
    err = refused(sandbox, ["validate", "case"], file="", field="<file>", expected="at most 2 KB")
    assert "INVESTIGATOR_MAX_SOURCE_BYTES" in err
    monkeypatch.setenv("INVESTIGATOR_MAX_SOURCE_BYTES", "1MB")
    assert cli(["validate", "case"], sandbox)[0] == 0


@pytest.mark.parametrize("variable, value", [("INVESTIGATOR_MAX_CASE_BYTES", "50000"), ("INVESTIGATOR_MAX_SOURCES", "5")])
def test_the_case_size_and_source_count_limits_are_set_by_the_environment(sandbox, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    err = refused(sandbox, ["validate", "case"], file="sources.yaml", field="sources", expected="at most")
    assert variable in err


@pytest.mark.parametrize("value", ["lots", "-5", "0", "1.5MB", "1e9"])
def test_a_malformed_limit_in_the_environment_is_a_clear_error(sandbox, monkeypatch, value):
    monkeypatch.setenv("INVESTIGATOR_MAX_SOURCE_BYTES", value)
    rc, _out, err = cli(["validate", "case"], sandbox)
    assert rc == 2 and err.startswith("error: INVESTIGATOR_MAX_SOURCE_BYTES: ") and err.count("\n") == 1


def test_a_huge_case_yaml_is_refused_before_parsing(sandbox):
    path = sandbox / "case" / "case.yaml"
    path.write_text(path.read_text() + "\n# " + "x" * (5 * 1024 * 1024) + "\n")
    refused(sandbox, ["validate", "case"], file="case.yaml", field="<file>", expected="at most 4 MB")


@pytest.mark.parametrize("target", ["case.yaml", "config"])
def test_a_yaml_alias_bomb_is_refused_quickly(sandbox, target):
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))
    case = sandbox / "case"
    if target == "case.yaml":
        (case / "case.yaml").write_text((case / "case.yaml").read_text() + "profile:\n  " + bomb.replace("\n", "\n  "))
        file = "case.yaml"
    else:
        add_source(case, {"id": "bomb", "path": "sources/configs/bomb.yaml", "kind": "config", "format": "yaml"},
                   {"sources/configs/bomb.yaml": bomb})
        file = "bomb.yaml"
    t0 = time.monotonic()
    refused(sandbox, ["validate", "case"], file=file, field="line", expected="aliases that repeat at most")
    assert time.monotonic() - t0 < 5


def test_a_recursive_yaml_document_is_refused(sandbox):
    add_source(sandbox / "case", {"id": "rec", "path": "sources/configs/rec.yaml", "kind": "config", "format": "yaml"},
               {"sources/configs/rec.yaml": "a: &r [1, *r]\n"})
    refused(sandbox, ["validate", "case"], file="rec.yaml", field="line 1", expected="recursive")


def test_a_source_that_is_not_utf8_is_refused_naming_the_byte_and_a_byte_order_mark_is_dropped(sandbox):
    case = sandbox / "case"
    note = "---\ndoc_id: n\ntitle: N\nversion: v1\nupdated_at: 2026-04-20T09:00:00+08:00\n---\nA note.\n"
    add_source(case, {"id": "bom", "path": "sources/notes/bom.md", "kind": "note"},
               {"sources/notes/bom.md": b"\xef\xbb\xbf" + note.encode()})
    assert cli(["validate", "case"], sandbox)[0] == 0
    add_source(case, {"id": "u16", "path": "sources/logs/u16.log", "kind": "log"},
               {"sources/logs/u16.log": "2026-04-29T10:40:00+08:00 ERROR x\n".encode("utf-16")})
    refused(sandbox, ["validate", "case"], file="u16.log", field="<file>", expected="UTF-16")
    (case / "sources/logs/u16.log").write_bytes(b"2026-04-29T10:40:00+08:00 ERROR caf\xe9\n")
    refused(sandbox, ["validate", "case"], file="u16.log", field="<file>", expected="byte 35 is not")


# --- strictness: no duplicate keys or ids, strict types, ranges checked ------------------------

@pytest.mark.parametrize("file", ["case.yaml", "sources.yaml", SECURITY_NOTE,
                                  "sources/metrics/order-service-prod-p95-latency.csv.meta.yaml",
                                  "sources/changes/DEP-20260429-0412.yaml"])
def test_a_key_written_twice_is_refused_with_its_line(sandbox, file):
    path = sandbox / "case" / file
    text = path.read_text()
    if text.startswith("---\n"):  # front matter
        text = text.replace("---\n", "---\ntitle: first\n", 1)
    else:
        first = next(line for line in text.splitlines() if line and not line[0].isspace() and not line.startswith("#"))
        text = first + "\n" + text
    path.write_text(text)
    refused(sandbox, ["validate", "case"], file=file.rsplit("/", 1)[-1] + ("" if not text.startswith("---") else " (front matter)"),
            field="line ", expected="each key once")


@pytest.mark.parametrize("name, change, field", [
    ("sources.yaml", lambda m: m["sources"].append(dict(m["sources"][0])), "sources"),
    ("sources.yaml", lambda m: m["sources"].append({**m["sources"][1], "id": "other"}), "sources"),  # same path
    ("sources.yaml", lambda m: m["sources"].append({**m["sources"][1], "id": "other2",
                                                    "path": "./" + m["sources"][1]["path"]}), "sources"),
    ("case.yaml", lambda c: c["required_claims"].append(dict(c["required_claims"][0])), "required_claims"),
    ("case.yaml", lambda c: c["hypotheses"].append(dict(c["hypotheses"][0])), "hypotheses"),
    ("case.yaml", lambda c: c["initial_evidence"].append(dict(c["initial_evidence"][0])), "initial_evidence"),
])
def test_an_id_declared_twice_is_refused(sandbox, name, change, field):
    edit(sandbox / "case", name, change)
    refused(sandbox, ["validate", "case"], file=name, field=field, expected="once")


@pytest.mark.parametrize("change, field, expected", [
    (lambda c: c["window"].update(change_lookback=-1800), "window.change_lookback", "between"),
    (lambda c: c["window"].update(change_lookback="-30m"), "window.change_lookback", "duration"),
    (lambda c: c["window"].update(change_lookback="8d"), "window.change_lookback", "between 0 and 7d"),
    (lambda c: c["window"].update(baseline=0), "window.baseline", "between 1m"),
    (lambda c: c["window"].update(baseline="0m"), "window.baseline", "between 1m"),
    (lambda c: c["window"].update(baseline=10**30), "window.baseline", "between"),
    (lambda c: c["window"].update(baseline="99999999999999999999d"), "window.baseline", "duration"),
    (lambda c: c["window"].update(onset_lead="2h"), "window.onset_lead", "shorter than window.baseline"),
    (lambda c: (c["window"].pop("onset_lead", None), c["window"].update(baseline="5m")), "window.onset_lead",
     "shorter than window.baseline"),
    (lambda c: c["window"].update(onset_tolerance="2h"), "window.onset_tolerance", "between 0 and 1h"),
    (lambda c: c["window"].update(end=c["window"]["start"]), "window.end", "after window.start"),
    (lambda c: c["budgets"].update(rounds=0), "budgets.rounds", "greater than or equal to 1"),
    (lambda c: c["budgets"].update(rounds=10**12), "budgets.rounds", "less than or equal to 500"),
    (lambda c: c["budgets"].update(reads=-1), "budgets.reads", "greater than or equal to 1"),
    (lambda c: c["budgets"].update(reads_per_round=51), "budgets.reads_per_round", "less than or equal to 50"),
    (lambda c: c["required_claims"][3].update(max_hops=0), "required_claims.3.causal_chain.max_hops", "greater"),
    (lambda c: c["required_claims"][3].update(max_hops=9), "required_claims.3.causal_chain.max_hops", "less"),
    (lambda c: c["required_claims"][0].update(min_ratio=1), "required_claims.0.symptom.min_ratio", "greater than 1"),
    (lambda c: c["required_claims"][0].update(min_ratio=float("inf")), "required_claims.0.symptom.min_ratio", "finite"),
    (lambda c: c["required_claims"][0].update(min_ratio=float("nan")), "required_claims.0.symptom.min_ratio", "finite"),
    (lambda c: c["hypotheses"][0]["predicts"].update(min_ratio=-2), "hypotheses.0.predicts.min_ratio", "greater than 1"),
])
def test_out_of_range_values_are_refused(sandbox, change, field, expected):
    edit(sandbox / "case", "case.yaml", change)
    refused(sandbox, ["validate", "case"], file="case.yaml", field=field, expected=expected)


@pytest.mark.parametrize("change, field, expected", [
    (lambda c: c["budgets"].update(rounds=True), "budgets.rounds", "valid integer"),
    (lambda c: c["budgets"].update(reads="30"), "budgets.reads", "valid integer"),
    (lambda c: c["budgets"].update(rounds=3.0), "budgets.rounds", "valid integer"),
    (lambda c: c["required_claims"][3].update(max_hops=True), "required_claims.3.causal_chain.max_hops", "integer"),
    (lambda c: c["required_claims"][0].update(min_ratio=True), "required_claims.0.symptom.min_ratio", "number"),
    (lambda c: c["required_claims"][0].update(min_ratio="3"), "required_claims.0.symptom.min_ratio", "number"),
    (lambda c: c["principal"].update(may_request_access="yes"), "principal.may_request_access", "boolean"),
    (lambda c: c["principal"].update(may_request_access=1), "principal.may_request_access", "boolean"),
    (lambda c: c["required_claims"][3].update(requires_owner_verification="false"),
     "required_claims.3.causal_chain.requires_owner_verification", "boolean"),
    (lambda c: c["window"].update(change_lookback=True), "window.change_lookback", "duration"),
    (lambda c: c.update(id=17), "id", "string"),
    (lambda c: c.update(profile={"anomaly": {"persist": True}}), "profile.anomaly.persist", "integer"),
])
def test_a_value_of_the_wrong_type_is_refused_not_coerced(sandbox, change, field, expected):
    edit(sandbox / "case", "case.yaml", change)
    refused(sandbox, ["validate", "case"], file="case.yaml", field=field, expected=expected)


def test_a_profile_pattern_that_does_not_compile_is_refused(sandbox):
    edit(sandbox / "case", "case.yaml", lambda c: c.update(profile={"version_patterns": ["(unclosed"]}))
    refused(sandbox, ["validate", "case"], file="case.yaml", field="profile.version_patterns", expected="compiles")


@pytest.mark.parametrize("text, expected", [
    ("fired_at: 2026-13-45T10:00:00Z", "valid timestamp"),
    ("x: " + "9" * 5000, "valid int"),
])
def test_a_yaml_scalar_python_cannot_build_is_a_yaml_error_at_its_line(sandbox, text, expected):
    path = sandbox / "case" / "case.yaml"
    path.write_text(path.read_text() + "\n" + text + "\n")
    refused(sandbox, ["validate", "case"], file="case.yaml", field="line", expected=expected)


# --- errors never quote what the principal may not read ---------------------------------------

def _security_note(mod):
    def apply(case: Path) -> None:
        p = case / SECURITY_NOTE
        p.write_text(mod(p.read_text()))
    return apply


def _finance_csv(csv: str, meta: str):
    def apply(case: Path) -> None:
        add_source(case, {"id": "fin-costs", "path": "sources/metrics/fin.csv", "kind": "metric", "groups": ["finance"]},
                   {"sources/metrics/fin.csv": csv, "sources/metrics/fin.csv.meta.yaml": meta})
    return apply


def _finance_file(kind: str, fmt: str, name: str, content: str):
    def apply(case: Path) -> None:
        add_source(case, {"id": "fin-file", "path": f"sources/{name}", "kind": kind, "format": fmt, "groups": ["finance"]},
                   {f"sources/{name}": content})
    return apply


@pytest.mark.parametrize("setup, file", [
    (_security_note(lambda t: t.replace("updated_at:", "updated_at: CANARY-1\nx_updated_at:", 1)), "2026q2.md"),
    (_security_note(lambda t: re.sub(r"^status:.*$", "status: CANARY-STATUS", t, count=1, flags=re.MULTILINE)), "2026q2.md"),
    (_security_note(lambda t: t.replace("---\n", "---\nCANARY_KEY: 1\nCANARY_KEY: 2\n", 1)), "(front matter)"),
    (_security_note(lambda t: t.replace("---\n", "---\nx: !!python/object:CANARY {}\n", 1)), "(front matter)"),
    (_security_note(lambda t: t.replace("---\n", "---\nx: *CANARY\n", 1)), "(front matter)"),
    (_security_note(lambda t: t.replace("---\n", "---\nx: [CANARY\n", 1)), "(front matter)"),
    (_security_note(lambda t: "---\nCANARY-SCALAR\n---\n" + t), "2026q2.md"),
    (_finance_csv("ts,value\n", "metric: m\nrole: CANARY-ROLE\n"), "fin.csv.meta.yaml"),
    (_finance_csv("ts,value\n", "metric: m\ncapacity: CANARY-CAP\n"), "fin.csv.meta.yaml"),
    (_finance_csv("ts,value\n", "metric: m\nCANARY: 1\nCANARY: 2\n"), "fin.csv.meta.yaml"),
    (_finance_csv("CANARY,value\n1,2\n", "metric: m\n"), "fin.csv"),
    (_finance_csv('{"data": {"result": CANARY}}', "metric: m\n"), "fin.csv"),
    (_finance_file("change", "record", "c.yaml", "id: x\ntype: deployment\nservice: s\nenvironment: prod\n"
                   "started_at: CANARY-TIME\n"), "c.yaml"),
    (_finance_file("change", "record", "c2.yaml", "id: x\ntype: deployment\nservice: s\nenvironment: prod\n"
                   "started_at: 2026-04-29T10:00:00Z\nconfig_changes: [{key: k, CANARY_FIELD: 1}]\n"), "c2.yaml"),
    (_finance_file("change", "helm", "h.json", '[{"revision": CANARY}]'), "h.json"),
    (_finance_file("config", "record", "r.yaml", "service: s\nenvironment: e\nsettings: {7: CANARY}\n"), "r.yaml"),
    (_finance_file("config", "yaml", "y.yaml", "CANARY: 1\nCANARY: 2\n"), "y.yaml"),
    (_finance_file("config", "json", "j.json", '{"a": CANARY}'), "j.json"),
    (_finance_file("catalog", "record", "cat.yaml", "services:\n  - name: x\n    kind: CANARY-KIND\n"), "cat.yaml"),
    (_finance_file("mapping", "record", "m.yaml", "service: s\nenvironment: e\ndeployed_version: 1\ndocuments: CANARY\n"),
     "m.yaml"),
])
def test_an_error_in_an_unreadable_source_names_the_file_and_field_but_quotes_nothing(sandbox, setup, file):
    case = sandbox / "case"
    setup(case)
    principal = yaml.safe_load((case / "case.yaml").read_text())["principal"]["groups"]
    assert "security" not in principal and "finance" not in principal, "the principal cannot read these sources"
    err = refused(sandbox, ["validate", "case"], file=file)
    assert "CANARY" not in err


# --- a property-based fuzz of case.yaml and sources.yaml -------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

WEIRD_TEXT = st.sampled_from([
    "", " ", "../../../etc/passwd", "/etc/passwd", "..", ".", "~", "C:\\x", "a/b", "\x00", "\u202e", "é" * 200,
    "x" * 5000, "${HOME}", "{{ x }}", "'; DROP TABLE runs; --", "\n", "null", "true", "0x10", "1e400", "-30m", "30m",
    "2026-04-29T10:35:00", "2026-04-29T10:35:00+08:00", "prod/", "/svc", "*", "!!python/object:os.system",
])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, -1, 1, 2**63, -(2**63)]), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40), WEIRD_TEXT,
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=6)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _apply(data, path, op, value):
    """Mutate data at path: replace the value, drop it, duplicate a list item, or add a field beside it."""
    if not path:
        return value if op == "replace" else data
    parent = data
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if op == "replace":
        parent[last] = value
    elif op == "drop":
        del parent[last]
    elif op == "duplicate" and isinstance(parent, list):
        parent.append(parent[last])
    elif op == "add" and isinstance(parent, dict):
        parent[f"extra_{len(parent)}"] = value
    return data


BASE_CASE = yaml.safe_load((REFERENCE / "case.yaml").read_text())
BASE_MANIFEST = yaml.safe_load((REFERENCE / "sources.yaml").read_text())
# a small manifest: one source of each structured kind, the security-only note, a metric with its sidecar
FUZZ_SOURCES = ["order-service-runbook-v3", "order-service-security-review-2026q2", "order-service-prod-p95-latency",
                "DEP-20260429-0412", "service-catalog", "order-service-config-prod"]


@st.composite
def mutated_case(draw):
    import copy

    case = copy.deepcopy(BASE_CASE)
    manifest = copy.deepcopy(BASE_MANIFEST)
    manifest["sources"] = [s for s in manifest["sources"] if s["id"] in FUZZ_SOURCES] or manifest["sources"][:5]
    target = draw(st.sampled_from(["case.yaml", "sources.yaml"]))
    data = case if target == "case.yaml" else manifest
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = list(_paths(data))
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "replace", "drop", "duplicate", "add"]))
        try:
            data = _apply(data, path, op, draw(VALUES))
        except (KeyError, IndexError, TypeError):
            pass
    if target == "case.yaml":
        case = data
    else:
        manifest = data
    texts = {}
    for name, doc in (("case.yaml", case), ("sources.yaml", manifest)):
        texts[name] = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**6)
    if draw(st.booleans()) and draw(st.booleans()):  # a key written twice, at the top or nested
        name = target
        lines = texts[name].splitlines()
        keyed = [i for i, ln in enumerate(lines) if ":" in ln and not ln.lstrip().startswith("-")]
        if keyed:
            i = draw(st.sampled_from(keyed))
            lines.insert(i + 1, lines[i].split(":", 1)[0] + ": duplicated")
            texts[name] = "\n".join(lines) + "\n"
    return target, texts


def _fuzz_case_folder(root: Path, n: int, texts: dict[str, str]) -> Path:
    """A case folder whose sources are hard links to the reference's (fast; each example gets its own)."""
    case = root / f"c{n}"
    for entry in BASE_MANIFEST["sources"]:
        if entry["id"] in FUZZ_SOURCES:
            for src in (REFERENCE / entry["path"], REFERENCE / (entry["path"] + ".meta.yaml")):
                if src.exists():
                    dst = case / src.relative_to(REFERENCE)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    os.link(src, dst)
    case.mkdir(exist_ok=True)
    for name, text in texts.items():
        (case / name).write_text(text)
    return case


def test_the_fuzz_base_case_is_valid(tmp_path):
    import copy

    manifest = copy.deepcopy(BASE_MANIFEST)
    manifest["sources"] = [s for s in manifest["sources"] if s["id"] in FUZZ_SOURCES]
    assert len(manifest["sources"]) == len(FUZZ_SOURCES)
    case = _fuzz_case_folder(tmp_path, 0, {"case.yaml": (REFERENCE / "case.yaml").read_text(),
                                           "sources.yaml": yaml.safe_dump(manifest)})
    assert cli(["validate", str(case)], tmp_path)[0] == 0


def test_fuzzed_case_files_are_accepted_or_refused_cleanly_and_nothing_is_written(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    work = root / "cwd"
    work.mkdir()
    counter = iter(range(10**6))
    seen = {"accepted": 0, "refused": 0}

    @settings(max_examples=300, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated_case())
    def check(example):
        _target, texts = example
        case = _fuzz_case_folder(root, next(counter), texts)
        before = tree(root)
        rc, _out, err = cli(["--home", str(work / "home"), "validate", str(case)], work)
        assert rc in (0, 2), (rc, err)
        assert "Traceback" not in err
        if rc == 2:
            seen["refused"] += 1
            assert err.count("\n") == 1, err
            m = re.match(LINE, err.strip())
            assert m, err
            assert m["file"].startswith(str(case)), err  # a file of this case: case.yaml, sources.yaml or a source
            assert m["field"].strip(), err
        else:
            seen["accepted"] += 1
        assert tree(root) == before, "validate writes nothing"
        shutil.rmtree(case)

    check()
    assert seen["refused"] > 100 and seen["accepted"] > 5, seen  # the fuzz explores both sides


@pytest.mark.parametrize("mutation", [
    lambda c: c.update(id="../../../escape"),
    pytest.param(lambda c: c["budgets"].update(rounds=True), marks=pytest.mark.slow),
    pytest.param(lambda c: c["window"].update(baseline=10**30), marks=pytest.mark.slow),
])
def test_a_real_process_refuses_a_hostile_case_with_exit_2_and_one_line(sandbox, mutation):
    edit(sandbox / "case", "case.yaml", mutation)
    before = tree(written_under(sandbox))
    proc = subprocess.run([sys.executable, "-m", "investigator.cli", "--home", "home", "run", "case"],
                          capture_output=True, text=True, cwd=sandbox, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "case.yaml" in proc.stderr
    assert tree(written_under(sandbox)) == before


def test_case_errors_are_case_errors_in_the_library(sandbox):
    """The library raises CaseError (file, field, expected) for what the CLI prints."""
    from investigator.loading import validate_case

    edit(sandbox / "case", "case.yaml", lambda c: c["budgets"].update(rounds="many"))
    with pytest.raises(CaseError) as err:
        validate_case(sandbox / "case")
    assert err.value.file.endswith("case.yaml") and err.value.field == "budgets.rounds"


# --- the whole catalogue (bench/hostile/count.py counts the same) ----------------------------

KNOWN = {
    # `show` of an unknown run: RunNotFound (exit 3) is right, but Investigator.store creates the
    # workspace and an empty store first (investigator/runtime.py, not this part's to change)
    "x-show-unknown",
}


@pytest.mark.slow
def test_the_hostile_catalogue_gives_no_traceback_no_hang_no_leak_and_no_partial_state(tmp_path):
    sys.path.insert(0, str(ROOT))
    from bench.hostile.catalogue import CATALOGUE, run_all

    outcomes = run_all(tmp_path)
    assert len(outcomes) >= 100
    assert not [o.entry.id for o in outcomes if o.kind in ("traceback", "hung")]
    assert not [o.entry.id for o in outcomes if o.leak]
    unexpected = {o.entry.id: (o.kind, o.stderr.strip()[-200:]) for o in outcomes
                  if not o.as_expected and o.entry.id not in KNOWN}
    assert not unexpected
    assert {e.id for e in CATALOGUE} >= KNOWN
