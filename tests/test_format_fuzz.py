"""Parsers never raise on content: every format's parser, fed structured mutations of a real-shaped
sample (values of the wrong type, keys dropped or repeated, lines cut, swapped and garbled), either
reads the file or refuses it with a CaseError naming the file, the line or JSON path and what was
expected (exit 2) — never an internal error (exit 5), and never quoting the content.

Samples: tests/fixtures/formats (cut from the shipped and generated cases)."""

from __future__ import annotations

import copy
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from state.errors import CaseError
from state.sources import SourceEntry
from tools.corpus import ParseContext, load_source
from tools.profile import default_profile

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "formats"
CAPTURED = datetime(2026, 8, 19, 14, 20, tzinfo=timezone.utc)

# (file, kind, format, how it is mutated)
SAMPLES = [
    ("pods.json", "kubernetes", "pods", "json"),
    ("events.json", "kubernetes", "events", "json"),
    ("pods-wide.txt", "kubernetes", "pods-wide", "text"),
    ("describe.txt", "kubernetes", "describe", "text"),
    ("helm.json", "change", "helm", "json"),
    ("argocd.json", "change", "argocd", "json"),
    ("flags.jsonl", "change", "flags", "jsonl"),
    ("flags.yaml", "change", "flags", "yaml"),
    ("change.yaml", "change", "record", "yaml"),
    ("rollout.txt", "change", "rollout", "text"),
    ("config-record.yaml", "config", "record", "yaml"),
    ("config.yaml", "config", "yaml", "yaml"),
    ("config.json", "config", "json", "json"),
    ("config.env", "config", "env", "text"),
    ("config.properties", "config", "properties", "text"),
    ("configmap.yaml", "config", "configmap", "yaml"),
    ("mapping.yaml", "mapping", "record", "yaml"),
    ("ownership.yaml", "ownership", "record", "yaml"),
    ("catalog.yaml", "catalog", "record", "yaml"),
    ("prometheus.json", "metric", "prometheus", "json"),
    ("metric.csv", "metric", "csv", "text"),
    ("otlp.jsonl", "trace", "otlp", "jsonl"),
    ("jaeger.json", "trace", "jaeger", "json"),
    ("log.jsonl", "log", "json", "jsonl"),
    ("logfmt.log", "log", "logfmt", "text"),
    ("plain.log", "log", "plain", "text"),
    ("syslog.log", "log", "syslog", "text"),
    ("note.md", "note", "markdown", "front"),
]

CANARY = "CANARY-7f3a"
WEIRD = st.sampled_from([
    None, True, False, 0, -1, 1.5, 10**30, -(10**20), 1e300, float("inf"), "", " ", CANARY, f"{CANARY} 2026",
    "2026-13-45T99:99:99Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "NaN", "-Inf", "1e400", "\x00", "\u202e",
    "../../etc/passwd", "x" * 300, [], {}, [CANARY], {CANARY: CANARY}, [[[[[]]]]], {"a": {"b": {"c": [1, "2", None]}}},
])
TOKENS = st.sampled_from(["", CANARY, "-", ":", "=", "{", "[", "\"", "0", "-1", "99999999999999999999", "NaN", "1e400",
                          "2026-13-45T99:99:99Z", "<none>", "\t", "\x00", "é", "REVISION", "NAME", "Events:", "---"])


def _paths(node, prefix=()):  # noqa: ANN001, ANN202
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated_value(draw, value):  # noqa: ANN001, ANN201
    """1–3 edits at random places of a JSON/YAML value: replace, drop, duplicate, add a key."""
    data = copy.deepcopy(value)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_paths(data))))
        op = draw(st.sampled_from(["replace", "replace", "replace", "drop", "duplicate", "add"]))
        new = copy.deepcopy(draw(WEIRD))  # sampled values are shared objects: a copy, or a cycle
        if not path:
            data = new if op == "replace" else data
            continue
        parent = data
        for p in path[:-1]:
            parent = parent[p]
        last = path[-1]
        if op == "replace":
            parent[last] = new
        elif op == "drop":
            del parent[last]
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        elif op == "add" and isinstance(parent, dict):
            parent[CANARY] = new
    return data


@st.composite
def mutated_text(draw, text):  # noqa: ANN001, ANN201
    """1–3 line edits: drop, duplicate, swap, cut, or put a token in place of a word or character."""
    lines = text.splitlines(keepends=True) or [""]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "duplicate", "swap", "cut", "token", "token", "char"]))
        if op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == "token":
            words = re.split(r"(\s+|[=:,\"])", lines[i])
            k = draw(st.integers(0, max(0, len(words) - 1)))
            words[k] = draw(TOKENS)
            lines[i] = "".join(words)
        else:
            k = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:k] + draw(TOKENS) + lines[i][k:]
    return "".join(lines)


def _dump_yaml(value) -> str:  # noqa: ANN001
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)


def mutations(file: str, how: str) -> st.SearchStrategy[str]:
    text = (FIXTURES / file).read_text()
    if how == "json":
        return mutated_value(json.loads(text)).map(lambda v: json.dumps(v, allow_nan=True))
    if how == "jsonl":
        docs = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
        return mutated_value(docs).map(lambda v: "\n".join(json.dumps(d, allow_nan=True) for d in v)
                                       if isinstance(v, list) else json.dumps(v, allow_nan=True))
    if how == "yaml":
        docs = list(yaml.safe_load_all(text))
        value = docs if len(docs) > 1 else docs[0]
        return mutated_value(value).map(_dump_yaml)
    if how == "front":
        front, body = text.split("---\n", 2)[1:]
        return mutated_value(yaml.safe_load(front)).map(lambda v: f"---\n{_dump_yaml(v)}---\n{body}")
    return mutated_text(text)


@pytest.mark.parametrize("file, kind, fmt, how", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_a_mutated_file_is_read_or_refused_cleanly(tmp_path, file, kind, fmt, how):
    case = tmp_path / "case"
    (case / "sources").mkdir(parents=True)
    if kind == "metric" and fmt == "csv":
        (case / "sources" / (file + ".meta.yaml")).write_text((FIXTURES / (file + ".meta.yaml")).read_text())
    ctx = ParseContext(default_profile(), 2026)
    seen = {"read": 0, "refused": 0}

    @settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "80")), deadline=None,
              derandomize=not os.environ.get("FUZZ_RANDOM"), database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutations(file, how), st.sampled_from([fmt, fmt, "auto"]))
    def check(text: str, given_format: str) -> None:
        path = case / "sources" / file
        path.write_text(text)
        entry = SourceEntry(id="s", path=f"sources/{file}", kind=kind, format=given_format, groups=("finance",),
                            captured_at=CAPTURED, service="svc", environment="prod")
        try:
            load_source(case, entry, ctx)
            seen["read"] += 1
        except CaseError as exc:
            seen["refused"] += 1
            assert exc.file.endswith((file, file + ".meta.yaml", "sources.yaml")) or "(front matter)" in exc.file, exc
            assert exc.field.strip() and exc.expected.strip(), exc
            assert ":" not in exc.field, exc  # one `file: field: expected` line
            assert CANARY not in str(exc), exc
            assert "a value in it is of another type" not in exc.expected, "a parser let a shape error through"

    check()
    assert seen["read"] + seen["refused"] > 0
    assert (FIXTURES / file).exists()


def test_the_samples_are_read_as_they_are(tmp_path):
    """Every sample, unmutated, is a valid file of its format (else the fuzz starts from nothing)."""
    ctx = ParseContext(default_profile(), 2026)
    for file, kind, fmt, _how in SAMPLES:
        case = tmp_path / file.replace(".", "-")
        (case / "sources").mkdir(parents=True)
        (case / "sources" / file).write_text((FIXTURES / file).read_text())
        if fmt == "csv":
            (case / "sources" / (file + ".meta.yaml")).write_text((FIXTURES / (file + ".meta.yaml")).read_text())
        entry = SourceEntry(id="s", path=f"sources/{file}", kind=kind, format=fmt, groups=("g",), captured_at=CAPTURED,
                            service="svc", environment="prod")
        doc = load_source(case, entry, ctx)
        assert not doc.unparsed, (file, doc.unparsed[:2])


# --- the two the issue found, through the command line ---------------------------------------

def _validate_with(tmp_path: Path, kind: str, fmt: str, name: str, content: str) -> tuple[int, str]:
    import contextlib
    import io
    import shutil

    from investigator.cli import main

    case = tmp_path / "case"
    shutil.copytree(Path(__file__).resolve().parent.parent / "cases" / "ALR-20260429-017", case)
    (case / "sources" / name).write_text(content)
    manifest = yaml.safe_load((case / "sources.yaml").read_text())
    manifest["sources"].append({"id": "fin", "path": f"sources/{name}", "kind": kind, "format": fmt,
                                "groups": ["finance"]})  # a source the principal cannot read
    (case / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(["validate", str(case)])
    return rc, err.getvalue()


@pytest.mark.parametrize("labels", ['["CANARY"]', '"CANARY"', "7"])
def test_malformed_kubectl_pods_json_is_refused_naming_the_file_and_json_path(tmp_path, labels):
    pods = ('{"kind": "List", "items": [{"metadata": {"name": "web-7f6d4c8b95-h8zkt"}, "spec": {"nodeName": "n1"}},\n'
            f' {{"metadata": {{"name": "web-7f6d4c8b95-abcde", "labels": {labels}}}}}]}}\n')
    rc, err = _validate_with(tmp_path, "kubernetes", "pods", "pods.json", pods)
    assert rc == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "sources/pods.json: items[1] (line 2): a pod object" in err, err
    assert "CANARY" not in err


@pytest.mark.parametrize("revision", ['"CANARY"', "[1]", "{}"])
def test_malformed_helm_history_json_is_refused_naming_the_file(tmp_path, revision):
    helm = ('[{"revision": 1, "updated": "2026-04-29T10:00:00Z", "chart": "c-1", "status": "superseded"},\n'
            f' {{"revision": {revision}, "updated": "2026-04-29T10:30:00Z", "chart": "c-2", "status": "deployed"}}]\n')
    rc, err = _validate_with(tmp_path, "change", "helm", "helm.json", helm)
    assert rc == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "sources/helm.json: " in err and "Helm revision" in err and "whole number" in err, err
    assert "CANARY" not in err
