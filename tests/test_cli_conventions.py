"""The command line behaves like a well-made Unix tool, and the code follows the house's Python conventions.

Versioned, defaults in every help, global options anywhere, and the light commands (runs, show,
history, grant, schema, validate) start without the model, the indexes or the loop, each without
what it does not need (issue 22). Every package has an explicit public API, no layer imports
another's private names, and no module shadows a package.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import re
import sqlite3
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from investigator.cli import parser

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
PACKAGES = ("investigator", "graphs", "state", "tools")
# what a light command must not import, by what it is: the model, the indexes and the loop; the
# format parsers; the store's ORM; LangGraph's checkpointer (and LangChain under it); what access re-checks
LOOP = ("torch", "sentence_transformers", "onnxruntime", "graphrag", "lancedb", "numpy", "pyarrow", "networkx",
        "langgraph.graph", "langgraph.pregel", "litellm", "langchain_openai", "tools.index", "graphs.build")
PARSERS = ("tools.corpus", "tools.formats")
STORE = ("sqlalchemy", "sqlmodel")
CHECKPOINTS = ("langgraph", "langchain_core")
ACCESS = ("duckdb", "state.case", "tools")


def _cli(*args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run([sys.executable, *flags, "-m", "investigator.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _imported(stderr: str) -> set[str]:
    """Module names from `python -X importtime` output."""
    return {m.group(1) for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", stderr, re.M)}


def _subparsers(p: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    out = {}
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[f"{prefix}{name}"] = sub
                out.update(_subparsers(sub, f"{prefix}{name} "))
    return out


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A workspace whose store holds two runs of the reference case, one of them paused awaiting permission
    (written through the store, not the loop)."""
    from state.store import RunRow, Store

    home = tmp_path_factory.mktemp("home")
    store = Store.from_url(f"sqlite:///{home / 'investigator.db'}")
    for run_id, status in (("run-cli-1", "running"), ("run-cli-paused", "awaiting_permission")):
        store.create_run(RunRow(run_id=run_id, case_id="ALR-20260429-017", case_dir=str(REFERENCE), retrieval="basic",
                                principal_id="oncall", rounds_limit=8, reads_limit=20, status=status))
    return home


def test_version_prints_the_installed_package_version():
    out = _cli("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"investigator {version('investigator')}"


def test_every_help_shows_the_defaults(monkeypatch):
    monkeypatch.setenv("COLUMNS", "2000")  # no wrapping inside a default value
    for name, sub in {"": parser(), **_subparsers(parser())}.items():
        text = " ".join(sub.format_help().split())
        for action in sub._actions:
            if action.required or action.nargs == 0 or isinstance(action, argparse._SubParsersAction):
                continue  # required, or a flag (--force, --help, --version): no value to default
            if not action.option_strings and action.nargs not in ("*", "?"):
                continue  # a required positional has no default
            shown = " ".join(action.help.split())
            if action.default not in (None, argparse.SUPPRESS):
                assert f"{shown} (default: {action.default})" in text, f"{name} {action.dest}: default not shown"
            else:
                assert "(default: " in shown, f"{name} {action.dest}: help does not say what happens when omitted"


@pytest.mark.parametrize("argv", [["--home", "H", "--store", "S", "runs"], ["runs", "--home", "H", "--store", "S"],
                                  ["--home", "H", "runs", "--store", "S"]])
def test_global_options_are_accepted_before_and_after_the_command(argv):
    args = parser().parse_args(argv)
    assert (args.home, args.store, args.command) == ("H", "S", "runs")


def test_a_global_option_given_after_the_command_wins_over_one_before_it():
    assert parser().parse_args(["--home", "A", "show", "r", "--home", "B"]).home == "B"
    assert parser().parse_args(["bench", "retrieval", "--dataset", "d", "--home", "H"]).home == "H"


@pytest.mark.parametrize("order", ["before", "after"])
def test_runs_lists_the_workspace_given_before_or_after_the_command(home, order):
    argv = ["--home", str(home), "runs"] if order == "before" else ["runs", "--home", str(home)]
    out = _cli(*argv)
    assert out.returncode == 0, out.stderr
    assert "run-cli-1" in out.stdout and "ALR-20260429-017" in out.stdout


@pytest.mark.parametrize(("command", "code", "never"), [
    (["--version"], 0, (*LOOP, *PARSERS, *STORE, *CHECKPOINTS, *ACCESS, "pydantic")),
    # the store is read without the ORM (state.store.rows), the checkpoints without LangGraph
    (["runs"], 0, (*LOOP, *PARSERS, *STORE, *CHECKPOINTS, *ACCESS, "state.evidence", "state.steps", "state.claims")),
    (["show", "run-cli-1"], 0, (*LOOP, *PARSERS, *STORE, *CHECKPOINTS)),
    (["show", "run-cli-1", "--json"], 0, (*LOOP, *PARSERS, *STORE, *CHECKPOINTS)),
    (["history", "run-cli-1"], 0, (*LOOP, *PARSERS, *STORE, *CHECKPOINTS, *ACCESS)),
    # refused from the run's row alone (not paused): neither the case nor the manifest is read
    (["grant", "run-cli-1", "--group", "sre-oncall"], 3,
     (*LOOP, *PARSERS, *STORE, *CHECKPOINTS, *ACCESS, "state.evidence")),
    # refused after access is re-checked (the principal holds the group): the manifest without its parsers
    (["grant", "run-cli-paused", "--group", "sre-oncall"], 2, (*LOOP, *PARSERS, *STORE, *CHECKPOINTS)),
    (["schema"], 0, (*LOOP, *PARSERS, *STORE, *CHECKPOINTS, *ACCESS)),
    (["validate", str(REFERENCE)], 0, (*LOOP, *STORE, *CHECKPOINTS, "duckdb")),
], ids=lambda v: " ".join(v[:2]) if isinstance(v, list) else None)
def test_light_commands_import_only_what_they_need(home, command, code, never):
    out = _cli("--home", str(home), *command, importtime=True)
    assert out.returncode == code, out.stderr[-2000:]
    modules = _imported(out.stderr)
    assert "state.errors" in modules  # what the CLI imports first: the output was read
    wrong = sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in never))
    assert not wrong, f"{' '.join(command)} imported {wrong[:8]}"


@pytest.mark.parametrize("command", [["show", "run-cli-1"], ["grant", "run-cli-paused", "--group", "sre-oncall"]],
                         ids=" ".join)
def test_access_is_re_checked_from_the_tombstone_list_without_duckdb(home, tmp_path, command):
    """With the case indexed, `show` and a refused `grant` read the index's tombstones from its
    tombstone list (tools.tombstones), not with DuckDB; without a list, with DuckDB."""
    import duckdb

    from investigator.config import Settings
    from tools.tombstones import list_path, write_list

    ws = tmp_path / "ws"
    ws.mkdir()
    with sqlite3.connect(home / "investigator.db") as src, sqlite3.connect(ws / "investigator.db") as dst:
        src.backup(dst)  # the write-ahead log folded in
    index = Settings(workspace=ws).index_dir("ALR-20260429-017", REFERENCE) / "basic.duckdb"
    index.parent.mkdir(parents=True)
    con = duckdb.connect(str(index))
    con.execute("CREATE TABLE tombstones (source_id VARCHAR PRIMARY KEY, deleted_at TIMESTAMPTZ, reason VARCHAR)")
    con.close()
    assert write_list(index)
    for listed in (True, False):
        if not listed:
            list_path(index).unlink()
        out = _cli("--home", str(ws), *command, importtime=True)
        assert out.returncode in (0, 2), out.stderr[-2000:]
        assert ("duckdb" in _imported(out.stderr)) is not listed


def test_a_grant_that_writes_imports_neither_the_orm_nor_langgraph(tmp_path):
    from state.store import RunRow, Store

    store = Store.from_url(f"sqlite:///{tmp_path / 'investigator.db'}")
    store.create_run(RunRow(run_id="run-cli-paused", case_id="ALR-20260429-017", case_dir=str(REFERENCE),
                            retrieval="basic", principal_id="oncall", rounds_limit=8, reads_limit=20,
                            status="awaiting_permission"))
    store.engine.dispose()
    out = _cli("--home", str(tmp_path), "grant", "run-cli-paused", "--group", "order-team", "--by", "ana",
               importtime=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "granted order-team (by ana)" in out.stdout
    wrong = sorted(m for m in _imported(out.stderr) if any(m == n or m.startswith(f"{n}.") for n in
                                                           (*LOOP, *PARSERS, *STORE, *CHECKPOINTS)))
    assert not wrong, wrong[:8]
    assert Store.from_url(f"sqlite:///{tmp_path / 'investigator.db'}").grants("run-cli-paused")[0].groups == (
        "order-team",)


def test_show_on_the_light_path_prints_the_report_of_the_run(home):
    out = _cli("show", "run-cli-1", "--json", "--home", str(home))
    assert out.returncode == 0, out.stderr
    assert '"run_id": "run-cli-1"' in out.stdout and '"schema": "investigator/report@1"' in out.stdout


# Python conventions ------------------------------------------------------------------------------

def _package_dirs() -> list[Path]:
    return sorted(d for top in PACKAGES for d in [ROOT / top, *(ROOT / top).rglob("*")]
                  if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")))


def _dotted(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


@pytest.mark.parametrize("pkg", _package_dirs(), ids=_dotted)
def test_every_package_has_an_init_with_a_docstring_and_an_explicit_public_api(pkg):
    init = pkg / "__init__.py"
    assert init.exists(), f"{_dotted(pkg)} is a namespace package"
    tree = ast.parse(init.read_text())
    assert ast.get_docstring(tree), f"{_dotted(pkg)}/__init__.py has no docstring"
    assert any(isinstance(n, (ast.Assign, ast.AnnAssign)) and "__all__" in ast.unparse(n).split("=")[0]
               for n in tree.body), f"{_dotted(pkg)}/__init__.py has no __all__"


@pytest.mark.parametrize("name", ["investigator", "investigator.generator", "graphs", "state", "tools",
                                  "tools.formats", "tools.profile"])
def test_every_name_a_package_exports_exists(name):
    module = importlib.import_module(name)
    for export in module.__all__:
        assert getattr(module, export) is not None, f"{name}.{export}"


def _imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) for every `from module import name`, relative imports resolved."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = path.relative_to(ROOT).with_suffix("").parts[:-node.level] if node.level else ()
            module = ".".join([*base, *([node.module] if node.module else [])])
            out += [(node.lineno, module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, "") for a in node.names]
    return out


def _owner(module: str, name: str) -> str | None:
    """The package a private module or name belongs to (None when nothing imported is private)."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])  # a private module belongs to the package that holds it
    if name.startswith("_") and not name.startswith("__"):
        return ".".join(parts[:-1]) if (ROOT / Path(*parts)).with_suffix(".py").exists() else module
    return None


def test_no_package_imports_another_packages_private_names():
    allowed = {("tools.graph._tables", "graphrag_storage.tables.parquet_table", "_apply_transformer")}  # graphrag's
    wrong = []
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*.py"):
            here = _dotted(path.parent)
            for line, module, name in _imports(path):
                owner = _owner(module, name)
                if owner is None or here == owner or here.startswith(owner + "."):
                    continue
                if (_dotted(path), module, name) not in allowed:
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: from {module} import {name}")
    assert not wrong, "\n".join(wrong)


def test_no_module_shadows_a_top_level_package():
    shadows = [p.relative_to(ROOT) for top in (*PACKAGES, "tests") for p in (ROOT / top).rglob("*")
               if p.stem in PACKAGES and p.parent != ROOT and "__pycache__" not in p.parts]
    assert not shadows, shadows
    assert (ROOT / "graphs" / "loop_state.py").exists()
