"""The claim rules end to end on a small case written here, in another domain: each can fail.

The case: prod/queue-api lags after a release that bumped broker-client 3.0 → 3.1 (its
warning lines name broker-client), whose 3.1 documentation says the default `ack_timeout`
changed. Variants flip one fact each.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

W0 = "2026-07-01T09:00:00+00:00"


def _series(start_min: int, values: list[float]) -> str:
    lines = ["ts,value"]
    for i, v in enumerate(values):
        m = start_min + i
        lines.append(f"2026-07-01T{8 + m // 60:02d}:{m % 60:02d}:00+00:00,{v}")
    return "\n".join(lines) + "\n"


def write_case(root: Path, *, doc_status="current", doc_trust="verified", doc_applies="3.1.*",
               with_change=True, cpu_rises=False, lag_rises=True, log_names_client=True, second_key=False,
               timeout_gauge=False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "case.yaml").write_text(yaml.safe_dump({
        "format": "investigator/case@1", "id": "T-1", "run_id": "t1", "title": "queue lag",
        "alert": {"id": "T-1", "rule": "lag", "fired_at": "2026-07-01T09:05:00+00:00", "text": "queue-api lag high"},
        "question": "Why does queue-api lag?", "subject": "prod/queue-api",
        "window": {"start": W0, "end": "2026-07-01T09:20:00+00:00", "change_lookback": "30m", "baseline": "30m"},
        "principal": {"id": "op", "groups": ["ops"], "may_request_access": False},
        "budgets": {"rounds": 12, "reads": 40, "reads_per_round": 3},
        "hypotheses": [{"id": "h_cpu", "statement": "CPU saturation", "mentioned_by": ["cpu"],
                        "predicts": {"metric": "cpu_pct", "direction": "up", "min_ratio": 1.5}}],
        "required_claims": [
            {"id": "symptom", "kind": "metric_shift", "statement": "lag rose", "metric": "lag_ms", "min_ratio": 3},
            {"id": "change", "kind": "change_in_window", "statement": "something changed"},
            {"id": "cause", "kind": "causal_chain", "statement": "the change caused it", "competitors": ["h_cpu"]},
        ],
    }, sort_keys=False))
    src = root / "sources"
    src.mkdir(exist_ok=True)
    base, hot = [20.0] * 30, [20.0] * 5 + [400.0] * 16
    files = {
        "lag.csv": _series(30, base + (hot if lag_rises else [21.0] * 21)),
        "cpu.csv": _series(30, [40.0] * 30 + ([90.0] * 21 if cpu_rises else [41.0] * 21)),
        "queue.log": "".join(
            f"2026-07-01T08:{m:02d}:00+00:00 INFO queue-api consumed batch of 50 messages\n" for m in range(30, 60))
        + "".join(f"2026-07-01T09:{m:02d}:00+00:00 WARN queue-api "
                  f"{'[broker-client] ' if log_names_client else ''}publish to orders timed out after 30 s\n"
                  for m in range(1, 19)),
        "broker-client-3.1.md": (
            "---\ndoc_id: broker-client-docs\ntitle: broker-client 3.1\nversion: \"3.1\"\nservice: broker-client\n"
            f"environment: \"*\"\nupdated_at: 2026-06-01T00:00:00+00:00\nstatus: {doc_status}\n"
            f"applies_to_versions: [\"{doc_applies}\"]\n---\n\n# broker-client 3.1\n\n"
            "In 3.1 the default `ack_timeout` changed from 1 s to 30 s per publish.\n"
            + ("\nIn 3.1 the default `linger_ms` changed from 0 to 5.\n" if second_key else "")),
        "catalog.yaml": "services:\n  - {name: queue-api, environment: prod, depends_on: [broker-client]}\n"
                        "components:\n  - {name: broker-client, kind: client}\n",
    }
    if with_change:
        files["DEP-1.yaml"] = ("id: DEP-1\ntype: deployment\nservice: queue-api\nenvironment: prod\n"
                               "started_at: 2026-07-01T08:50:00+00:00\ncompleted_at: 2026-07-01T08:55:00+00:00\n"
                               "version_from: 1.0.0\nversion_to: 1.1.0\n"
                               "dependency_changes:\n  - {name: broker-client, from: 3.0.2, to: 3.1.0}\n")
    if timeout_gauge:
        files["ack.csv"] = _series(30, [1.0] * 34 + [30.0] * 17)
    for name, text in files.items():
        (src / name).write_text(text)
    for name, metric in (("lag.csv", "lag_ms"), ("cpu.csv", "cpu_pct"), ("ack.csv", "broker_client_ack_timeout_seconds")):
        if name not in files:
            continue
        (src / f"{name}.meta.yaml").write_text(f"metric: {metric}\nservice: queue-api\nenvironment: prod\nunit: x\n")
    sources = [
        {"id": "lag", "path": "sources/lag.csv", "kind": "metric", "environment": "prod", "service": "queue-api"},
        {"id": "cpu", "path": "sources/cpu.csv", "kind": "metric", "environment": "prod", "service": "queue-api"},
        {"id": "log", "path": "sources/queue.log", "kind": "log", "environment": "prod", "service": "queue-api"},
        {"id": "bc-docs-3.1", "path": "sources/broker-client-3.1.md", "kind": "doc", "service": "broker-client",
         "trust": doc_trust},
        {"id": "catalog", "path": "sources/catalog.yaml", "kind": "catalog"},
    ]
    if timeout_gauge:
        sources.append({"id": "ack", "path": "sources/ack.csv", "kind": "metric", "environment": "prod",
                        "service": "queue-api"})
    if with_change:
        sources.append({"id": "DEP-1", "path": "sources/DEP-1.yaml", "kind": "change", "environment": "prod",
                        "service": "queue-api"})
    for s in sources:
        s["groups"] = ["ops"]
    (root / "sources.yaml").write_text(yaml.safe_dump({"format": "investigator/sources@1", "sources": sources},
                                                      sort_keys=False))
    return root


@pytest.fixture
def run(tmp_path, make_investigator):
    def go(**variant):
        case = write_case(tmp_path / "case", **variant)
        inv = make_investigator(workspace=tmp_path / "ws", shared_index=False)
        return {c.id: c for c in inv.start(case).report.claims}, inv

    return go


def test_the_whole_chain_is_confirmed_when_every_fact_holds(run):
    claims, _ = run()
    assert {k: c.verdict for k, c in claims.items()} == {"symptom": "confirmed", "change": "confirmed",
                                                          "cause": "confirmed"}
    cause = claims["cause"]
    assert [(h.source, h.target) for h in cause.path] == [("queue-api", "broker-client"),
                                                         ("broker-client", "ack_timeout")]
    rc = cause.root_cause
    assert (rc.entity, rc.kind, rc.change, rc.element, rc.refined) == ("queue-api", "deployment", "DEP-1",
                                                                      "broker-client", "ack_timeout")


@pytest.mark.parametrize("variant", [{"doc_status": "historical"}, {"doc_trust": "untrusted"}, {"doc_applies": "3.0.*"}])
def test_a_document_that_does_not_apply_never_refines_the_cause(run, variant):
    claims, _ = run(**variant)
    rc = claims["cause"].root_cause
    assert rc is not None and rc.change == "DEP-1" and rc.refined is None
    assert all(h.target != "ack_timeout" for h in claims["cause"].path)


def test_two_stated_changes_of_the_library_leave_the_element_open_until_a_series_named_after_one_moved(run):
    """The release notes state two changed defaults and no line names either: the documents alone
    do not pick one. A gauge of the subject named after one of them that departed does."""
    claims, _ = run(second_key=True)
    rc = claims["cause"].root_cause
    assert rc is not None and rc.refined is None and claims["cause"].verdict == "inferred"
    claims, _ = run(second_key=True, timeout_gauge=True)
    rc = claims["cause"].root_cause
    assert rc is not None and rc.refined == "ack_timeout", claims["cause"].rule
    assert claims["cause"].verdict == "confirmed"


def test_without_a_line_naming_what_changed_a_cause_at_the_subject_is_only_inferred(run):
    claims, _ = run(log_names_client=False)
    cause = claims["cause"]
    assert cause.verdict == "inferred" and cause.root_cause.change == "DEP-1"
    assert any("naming what it changed" in m for m in cause.missing), cause.missing


def test_no_change_in_the_window_refutes_the_change_and_leaves_the_cause_insufficient(run):
    claims, _ = run(with_change=False)
    assert claims["change"].verdict == "refuted"
    assert claims["cause"].verdict == "insufficient" and claims["cause"].missing


def test_a_competing_hypothesis_that_holds_keeps_the_cause_from_being_confirmed(run):
    claims, _ = run(cpu_rises=True)
    cause = claims["cause"]
    assert cause.verdict == "inferred" and cause.state == "conflicted"
    assert any("h_cpu" in c for c in cause.conflicts)


def test_a_flat_series_refutes_the_symptom(run):
    claims, _ = run(lag_rises=False)
    assert claims["symptom"].verdict == "refuted"
