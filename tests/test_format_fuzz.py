"""Parsers never raise on content: every format's parser, fed structured mutations of a real-shaped
sample (values of the wrong type, keys dropped or repeated, lines cut, swapped and garbled), either
reads the file or refuses it with a CaseError naming the file, the line or JSON path and what was
expected (exit 2) — never an internal error (exit 5), and never quoting the content.

Samples: tests/fixtures/formats (cut from the shipped and generated cases), and the formats tools
export (ledgers, ECS, CloudTrail, Route 53, cert-manager, migrations, Backstage, registries, chat),
written below in the shapes the tools write them (as tests/test_material_formats.py does).

A container that holds a format's records (`items`, `status.history`, `resourceSpans`, `Records` …)
in another shape, or a document with none of them, is refused naming its JSON path: a file is never
read as empty because its list was a number."""

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

import test_material_formats as tm  # the real-shaped samples of the tools' exports, written once
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
    ("ledger.yaml", "change", "ledger", "yaml"),
    ("push.yaml", "change", "ledger", "yaml"),
    ("unleash.json", "change", "ledger", "json"),
    ("flyway.json", "change", "ledger", "json"),
    ("ecs.json", "change", "ecs", "json"),
    ("trail.json", "change", "cloudtrail", "json"),
    ("r53.json", "change", "route53", "json"),
    ("certs.json", "change", "certificates", "json"),
    ("spinnaker.json", "change", "spinnaker", "json"),
    ("alembic.txt", "change", "migrations", "text"),
    ("sqitch.txt", "change", "migrations", "text"),
    ("flyway-info.txt", "change", "migrations", "text"),
    ("catalog-info.yaml", "catalog", "backstage", "yaml-docs"),
    ("registry.json", "catalog", "registry", "json"),
    ("lbs.yaml", "catalog", "registry", "yaml"),
    ("inc.json", "note", "chat", "json"),
]

# the formats tools export, as they write them (no fixture file: the text is here or in test_material_formats)
TOOL_SAMPLES = {
    "ledger.yaml": tm.LEDGER,
    "push.yaml": tm.PUSH,
    "unleash.json": tm.UNLEASH,
    "flyway.json": tm.FLYWAY,
    "ecs.json": json.dumps({"services": [{"serviceName": "checkout-prod", "deployments": [
        {"id": "ecs-svc/1234567890", "status": "PRIMARY", "taskDefinition":
         "arn:aws:ecs:eu-west-1:1:task-definition/checkout-prod:83", "createdAt": "2026-04-29T10:20:00.1+00:00",
         "updatedAt": "2026-04-29T10:31:00.2+00:00", "rolloutState": "COMPLETED"},
        {"id": "ecs-svc/1234500000", "status": "INACTIVE", "taskDefinition":
         "arn:aws:ecs:eu-west-1:1:task-definition/checkout-prod:82", "createdAt": "2026-04-28T09:00:00.1+00:00",
         "updatedAt": "2026-04-28T09:12:00.2+00:00", "rolloutState": "COMPLETED"}], "events": []}], "failures": []},
        indent=2),
    "trail.json": json.dumps({"Records": [
        {"eventVersion": "1.09", "eventTime": "2026-04-29T09:00:00Z", "eventSource": "elasticloadbalancing.amazonaws.com",
         "eventName": "DescribeListeners", "requestParameters": {}},
        {"eventVersion": "1.09", "eventTime": "2026-04-29T10:02:39Z", "eventSource": "elasticloadbalancing.amazonaws.com",
         "eventName": "ModifyListener", "eventID": "6f1a0c2e-1", "requestParameters": {
             "listenerArn": "arn:aws:elasticloadbalancing:eu-west-1:1:listener/app/web-lb/abc/def", "sslPolicy": "P2"},
         "responseElements": {"listeners": [{"sslPolicy": "P2", "previousSslPolicy": "P1"}]}}]}, indent=2),
    "r53.json": tm.ROUTE53,
    "certs.json": tm.CERTS,
    "spinnaker.json": tm.SPINNAKER,
    "alembic.txt": tm.ALEMBIC,
    "sqitch.txt": """On database db:pg:orders
Deploy 6c2f28d125aff1deea615f8de774599c6aea1e1b
Name:      add_index
Committer: A B <a@example.com>
Date:      2026-04-29 10:15:00 +0000

    Add an index on orders.created_at

Deploy 0b8d3a1f9e7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c
Name:      drop_column
Committer: A B <a@example.com>
Date:      2026-04-29 10:20:00 +0000

    Drop orders.legacy_flag
""",
    "flyway-info.txt": """+-----------+---------+-------------+------+---------------------+---------+
| Category  | Version | Description | Type | Installed On        | State   |
+-----------+---------+-------------+------+---------------------+---------+
| Versioned | 11      | add index   | SQL  | 2026-04-20 02:00:00 | Success |
| Versioned | 12      | drop column | SQL  | 2026-04-29 10:15:00 | Success |
+-----------+---------+-------------+------+---------------------+---------+
""",
    "catalog-info.yaml": tm.BACKSTAGE,
    "registry.json": tm.REGISTRY,
    "lbs.yaml": tm.LB_INVENTORY,
    "inc.json": tm.SLACK,
}


def sample(file: str) -> str:
    return TOOL_SAMPLES[file] if file in TOOL_SAMPLES else (FIXTURES / file).read_text()

CANARY = "CANARY-7f3a"
WEIRD = st.sampled_from([
    None, True, False, 0, -1, 1.5, 10**30, -(10**20), 1e300, float("inf"), "", " ", CANARY, f"{CANARY} 2026",
    "2026-13-45T99:99:99Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "NaN", "-Inf", "1e400", "\x00", "\u202e",
    "../../etc/passwd", "x" * 300, [], {}, [CANARY], {CANARY: CANARY}, [[[[[]]]]], {"a": {"b": {"c": [1, "2", None]}}},
])
TOKENS = st.sampled_from(["", CANARY, "-", ":", "=", "{", "[", "\"", "0", "-1", "99999999999999999999", "NaN", "1e400",
                          "2026-13-45T99:99:99Z", "<none>", "\t", "\x00", "é", "REVISION", "NAME", "Events:", "---"])


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated_value(draw, value):
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
def mutated_text(draw, text):
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


def _dump_yaml(value) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)


def _dump_yaml_docs(value) -> str:
    """Documents stay documents (`---` between them); a mutation that made the list something else is one."""
    return yaml.safe_dump_all(value, sort_keys=False, allow_unicode=True) if isinstance(value, list) else _dump_yaml(value)


def mutations(file: str, how: str) -> st.SearchStrategy[str]:
    text = sample(file)
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
    if how == "yaml-docs":
        return mutated_value(list(yaml.safe_load_all(text))).map(_dump_yaml_docs)
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
    assert sample(file)


def test_the_samples_are_read_as_they_are(tmp_path):
    """Every sample, unmutated, is a valid file of its format (else the fuzz starts from nothing)."""
    ctx = ParseContext(default_profile(), 2026)
    for file, kind, fmt, _how in SAMPLES:
        case = tmp_path / file.replace(".", "-")
        (case / "sources").mkdir(parents=True)
        (case / "sources" / file).write_text(sample(file))
        if fmt == "csv":
            (case / "sources" / (file + ".meta.yaml")).write_text((FIXTURES / (file + ".meta.yaml")).read_text())
        entry = SourceEntry(id="s", path=f"sources/{file}", kind=kind, format=fmt, groups=("g",), captured_at=CAPTURED,
                            service="svc", environment="prod")
        doc = load_source(case, entry, ctx)
        assert not doc.unparsed, (file, doc.unparsed[:2])
        assert doc.changes or doc.record or doc.spans or doc.series or doc.placements or doc.front or doc.settings \
            or doc.events or doc.k8s_events, f"{file}: nothing read"


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


# --- a container of another shape is refused, never read as empty ----------------------------

def _load(tmp_path: Path, kind: str, fmt: str, name: str, text: str):
    (tmp_path / "sources").mkdir(exist_ok=True)
    (tmp_path / "sources" / name).write_text(text)
    entry = SourceEntry(id="s", path=f"sources/{name}", kind=kind, format=fmt, groups=("finance",), service="svc",
                        environment="prod")
    return load_source(tmp_path, entry, ParseContext(default_profile(), 2026))


def _as_json(build):
    return lambda v: json.dumps(build(v))


def _as_yaml(build):
    return lambda v: _dump_yaml(build(v))


# (kind, format, file, the file around a wrong value, the value the audit found read as nothing, JSON path named)
WRONG_CONTAINERS = [
    ("kubernetes", "pods", "pods.json", _as_json(lambda v: {"kind": "List", "items": v}), 7, "items"),
    ("kubernetes", "events", "events.json", _as_json(lambda v: {"kind": "List", "items": v}), 7, "items"),
    ("change", "helm", "helm.json", _as_json(lambda v: {"x": v}), 1, "<document>"),
    ("change", "argocd", "argocd.json", _as_json(lambda v: {"status": {"history": v}}), 7, "status.history"),
    ("change", "ecs", "ecs.json", _as_json(lambda v: {"services": v}), 5, "services"),
    ("catalog", "registry", "registry.json", _as_json(lambda v: {"services": v}), "x", "services"),
    ("catalog", "registry", "registry.json", _as_json(lambda v: {"services": v}), 1.5, "services"),
    ("catalog", "auto", "registry.json", _as_json(lambda v: {"services": v}), 1.5, "services"),
    ("trace", "otlp", "otlp.json", _as_json(lambda v: {"resourceSpans": v}), 7, "resourceSpans"),
    ("trace", "jaeger", "jaeger.json", _as_json(lambda v: {"data": v}), 7, "data"),
    ("change", "ledger", "ledger.json", _as_json(lambda v: {"entries": v}), 7, "entries"),
    ("change", "ledger", "ledger.yaml", _as_yaml(lambda v: {"export_scope": "prod", "records": v}), 7, "records"),
    ("change", "cloudtrail", "trail.json", _as_json(lambda v: {"Records": v}), 7, "Records"),
    ("change", "route53", "r53.json", _as_json(lambda v: {"ChangeInfo": v, "ChangeBatch": {"Changes": []}}), 7,
     "ChangeInfo"),
    ("change", "route53", "r53.json", _as_json(lambda v: {"ChangeInfo": {"SubmittedAt": "2026-04-29T10:00:00Z"},
                                                          "ChangeBatch": {"Changes": v}}), 7, "ChangeBatch.Changes"),
    ("change", "certificates", "certs.json", _as_json(lambda v: {"apiVersion": "v1", "items": v}), 7, "items"),
    ("catalog", "backstage", "catalog-info.yaml",
     _as_yaml(lambda v: {"apiVersion": "backstage.io/v1alpha1", "kind": "Component", "metadata": v}), 7, "metadata.name"),
    ("note", "chat", "inc.json", _as_json(lambda v: {"messages": v}), 7, "messages"),
    ("change", "flags", "flags.yaml", _as_yaml(lambda v: {"events": v}), 7, "events"),
    ("metric", "prometheus", "prom.json", _as_json(lambda v: {"status": "success", "data": {"result": v}}), 7,
     "data.result"),
]


@pytest.mark.parametrize("value", ["audit", "canary"])
@pytest.mark.parametrize("kind, fmt, name, build, found, path", WRONG_CONTAINERS,
                         ids=[f"{w[1]}-{w[5]}" for w in WRONG_CONTAINERS])
def test_a_container_of_another_shape_is_refused_naming_its_path_and_shape_never_its_value(
        tmp_path, kind, fmt, name, build, found, path, value):
    with pytest.raises(CaseError) as caught:
        _load(tmp_path, kind, fmt, name, build(found if value == "audit" else CANARY))
    exc = caught.value
    assert exc.file.endswith(name) and exc.field.split(" (line")[0] == path, exc
    assert re.search(r"\b(list|object|mapping|tuple)\b", exc.expected), exc
    assert "a value in it is of another type" not in exc.expected and CANARY not in str(exc), exc


# a document that holds none of the containers its format reads its records from
NO_CONTAINER = [("change", "helm", "helm.json"), ("change", "argocd", "argocd.json"), ("change", "ecs", "ecs.json"),
                ("change", "ledger", "ledger.json"), ("change", "cloudtrail", "trail.json"),
                ("change", "route53", "r53.json"), ("change", "certificates", "certs.json"),
                ("change", "spinnaker", "spinnaker.json"), ("change", "migrations", "upgrade.json"),
                ("catalog", "registry", "registry.json"),
                ("trace", "otlp", "otlp.json"), ("trace", "jaeger", "jaeger.json"), ("note", "chat", "inc.json")]


@pytest.mark.parametrize("kind, fmt, name", NO_CONTAINER, ids=[n[1] for n in NO_CONTAINER])
def test_a_document_without_the_formats_container_is_refused_as_a_whole(tmp_path, kind, fmt, name):
    with pytest.raises(CaseError) as caught:
        _load(tmp_path, kind, fmt, name, json.dumps({CANARY: CANARY, "note": [CANARY]}))
    exc = caught.value
    assert exc.field == "<document> (line 1)" and CANARY not in str(exc), exc


@pytest.mark.parametrize("kind, fmt, name, text", [
    ("kubernetes", "pods", "pods.json", '{"kind": "List", "items": []}'),
    ("change", "helm", "helm.json", "[]"),
    ("change", "argocd", "argocd.json", '{"kind": "Application", "status": {"sync": {"status": "Synced"}}}'),
    ("change", "ecs", "ecs.json", '{"services": [], "failures": []}'),
    ("change", "ledger", "ledger.yaml", "entries: []\n"),
    ("change", "cloudtrail", "trail.json", '{"Records": []}'),
    ("change", "certificates", "certs.json", '{"apiVersion": "v1", "items": []}'),
    ("trace", "otlp", "otlp.json", '{"resourceSpans": []}'),
    ("trace", "jaeger", "jaeger.json", '{"data": [], "errors": null}'),
    ("catalog", "registry", "registry.json", '{"services": []}'),
])
def test_an_empty_container_of_the_right_shape_is_an_export_with_no_entries(tmp_path, kind, fmt, name, text):
    doc = _load(tmp_path, kind, fmt, name, text)
    assert not (doc.changes or doc.spans or doc.placements or doc.unparsed)


@pytest.mark.parametrize("fmt, name, build, path", [
    ("argocd", "argocd.json", lambda v: {"status": {"history": v}}, "status.history"),
    ("ecs", "ecs.json", lambda v: {"services": [{"serviceName": "web-prod", "deployments": v}]}, "services[0].deployments"),
    ("cloudtrail", "trail.json", lambda v: {"Records": v}, "Records"),
])
def test_a_wrong_container_fails_validate_with_exit_2_and_one_line_naming_it(tmp_path, fmt, name, build, path):
    rc, err = _validate_with(tmp_path, "change", fmt, name, json.dumps(build(CANARY)))
    assert rc == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert f"sources/{name}: {path} (line 1): " in err and "list" in err, err
    assert CANARY not in err
