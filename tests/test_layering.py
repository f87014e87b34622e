"""The dependency direction state ← tools ← graphs ← investigator, and a runtime free of case names."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["state", "tools", "graphs", "investigator"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("layer", LAYERS)
def test_a_package_imports_only_the_layers_below_it(layer):
    forbidden = set(LAYERS[LAYERS.index(layer) + 1:])
    for path in (ROOT / layer).rglob("*.py"):
        wrong = _imports(path) & forbidden
        assert not wrong, f"{path.relative_to(ROOT)} imports {wrong} (upward)"


def _case_specific_names() -> set[str]:
    names = {"ALR-", "run_0429"}
    for case in (ROOT / "cases").iterdir():
        if (case / "case.yaml").exists():
            data = yaml.safe_load((case / "case.yaml").read_text())
            names.add(data["subject"].split("/", 1)[1])
            names.add(data["id"])
        exp = case / "expected.yaml"
        if exp.exists():
            for claim in yaml.safe_load(exp.read_text())["claims"].values():
                for hop in claim.get("bridge_path", []):
                    names.update({hop["from"], hop["to"]})
    return names


def test_the_runtime_names_no_case_service_key_or_alert():
    names = _case_specific_names()
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            text = path.read_text()
            found = sorted(n for n in names if n in text)
            assert not found, f"{path.relative_to(ROOT)} names case-specific {found}"


def _module_imports() -> dict[str, set[str]]:
    """Each module of ours -> the modules of ours it imports (anywhere in it, type-checking blocks
    and function bodies included; `from . import x` counts as importing the module `x`)."""
    mods: dict[str, Path] = {}
    for layer in LAYERS:
        for p in (ROOT / layer).rglob("*.py"):
            name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = p
    edges: dict[str, set[str]] = {}
    for name, p in mods.items():
        package = name if p.name == "__init__.py" else name.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in mods)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    out.add(sub if sub in mods else base)
        edges[name] = {m for m in out if m in mods and m != name}
    return edges


def test_no_module_imports_one_that_imports_it_back_even_for_type_checking():
    import networkx as nx

    graph = nx.DiGraph([(a, b) for a, targets in _module_imports().items() for b in targets])
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, f"import circles: {circles}"


def test_the_loop_reaches_the_composition_root_through_no_callback():
    """`Deps` carries values, tools and small named interfaces, never a bare callable: a closure
    built in `investigator/` would let a node call back up into the composition root, past the
    layer test. Each field's types are declared below `investigator/`; the one callable allowed is
    `progress`, the house's one-way line sink (`state.progress.Progress`, it returns nothing)."""
    import collections.abc
    import typing
    from dataclasses import fields

    from graphs.deps import Deps
    from state.progress import Progress

    hints = typing.get_type_hints(Deps)

    def parts(t: object) -> list[object]:
        args = typing.get_args(t)
        return [t] if not args or typing.get_origin(t) is collections.abc.Callable else [a for x in args for a in parts(x)]

    for f in fields(Deps):
        hint = hints[f.name]
        if f.name == "progress":
            assert hint == Progress, "progress is the one-way `state.progress.Progress` sink"
            continue
        for t in parts(hint):
            assert typing.get_origin(t) is not collections.abc.Callable and t is not collections.abc.Callable, (
                f"Deps.{f.name} is a plain callable ({hint}): give it a named interface (a Protocol in graphs/deps.py)")
            module = getattr(t, "__module__", "builtins").split(".")[0]
            assert module not in ("investigator",), f"Deps.{f.name}: {t} is declared in {module}/ (above graphs/)"


def _rulebook_order() -> list[str]:
    """The rule book's modules in the order of the table in its package docstring (docs/deciding.md's sections)."""
    import re

    import graphs.rulebook

    rows = [line for line in (graphs.rulebook.__doc__ or "").splitlines() if line.startswith("| `")]
    return [name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])]


def test_the_rule_book_reads_downwards_in_the_order_of_deciding_md():
    """Each module of graphs/rulebook/ imports only modules above it in the package's table, so a decision
    no longer calls back and forth between files."""
    order = _rulebook_order()
    files = {p.stem for p in (ROOT / "graphs" / "rulebook").glob("*.py")} - {"__init__"}
    assert sorted(order) == sorted(files), "every module of the rule book is in its table, once"
    edges = _module_imports()
    for i, name in enumerate(order):
        used = {m.rsplit(".", 1)[1] for m in edges[f"graphs.rulebook.{name}"] if m.startswith("graphs.rulebook.")}
        below = used - set(order[:i])
        assert not below, f"graphs/rulebook/{name}.py imports {sorted(below)}, listed below it"


def test_the_rule_book_keeps_its_modules_and_classes_small():
    for path in (ROOT / "graphs" / "rulebook").glob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 450, f"{path.name}: over 450 lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                assert size <= 200, f"{path.name}: class {node.name} is {size} lines"


MODULE_LINES = 450
CLASS_LINES = 200


def test_no_module_over_450_lines_and_no_class_over_200():
    too_big: list[str] = []
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            text = path.read_text()
            if (n := len(text.splitlines())) > MODULE_LINES:
                too_big.append(f"{rel}: {n} lines (at most {MODULE_LINES})")
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ClassDef):
                    size = (node.end_lineno or node.lineno) - node.lineno + 1
                    if size > CLASS_LINES:
                        too_big.append(f"{rel}: class {node.name} is {size} lines (at most {CLASS_LINES})")
    assert not too_big, "split by meaning:\n" + "\n".join(too_big)


MANIFEST_READERS = {"tools/manifest.py", "tools/corpus.py", "tools/index.py", "investigator/loading.py",
                    "investigator/manifests.py"}
"""Where `sources.yaml` is read: its parser, the two tools that parse a folder standalone when given no
sources (`load_sources`, `build_index`), the composition root's `LoadedCase` and the manifest of now."""
REGISTRY_BUILDERS = {"tools/entities.py", "tools/loaded.py", "tools/index.py"}
"""Where an entity registry is built: its class, the loaded case's (every source, or the readable ones),
and the index build's (the sources not tombstoned)."""


@pytest.mark.parametrize(("call", "allowed"), [("load_manifest", MANIFEST_READERS),
                                               ("from_sources", REGISTRY_BUILDERS)])
def test_a_run_reads_the_manifest_and_builds_registries_in_named_places_only(call, allowed):
    """Issue 20: the case is loaded once (`tools.loaded.LoadedCase`) and passed down; a node, the access
    policy, the read tool or a part of the runtime never reads `sources.yaml` or builds a registry itself."""
    found = set()
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and call in (getattr(node.func, "id", None),
                                                           getattr(node.func, "attr", None)):
                    found.add(path.relative_to(ROOT).as_posix())
    assert found <= allowed, f"{call}() called in {sorted(found - allowed)}"
    assert allowed - found <= {"tools/manifest.py", "tools/entities.py"}, "a place that no longer calls it leaves the list"


@pytest.mark.slow
def test_one_investigation_climbs_back_up_the_layers_at_most_three_times() -> None:
    """A run of the reference case, traced call by call (bench/climbs.py), calls up into a higher
    layer in at most three places: every value a node needs is handed down, not fetched from above."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "climbs.py"), "--json"], capture_output=True,
                         text=True, check=True, cwd=ROOT)
    found = json.loads(out.stdout)
    assert found["callees"] <= 3, found["climbs"]
