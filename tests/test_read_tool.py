"""The read tool: exact spans of the current version, permission at read time, distinct outcomes."""

from __future__ import annotations

from pathlib import Path

import yaml

from state.case import load_case
from state.errors import SourceUnavailable
from investigator.manifests import ManifestOnDisk
from tools.access import AccessPolicy
from tools.reader import Reader, RetryPolicy

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
FAST = RetryPolicy(attempts=3, wait_initial=0.0, wait_max=0.0)


def _reader(case_dir: Path, fault=None) -> Reader:
    case = load_case(case_dir)
    return Reader(case_dir, AccessPolicy(ManifestOnDisk(case_dir), case.principal), retry=FAST, fault=fault)


def test_a_readable_source_is_read_back_as_it_is_now():
    r = _reader(REFERENCE).read("order-service-runbook-v3")
    assert r.record.outcome == "ok" and r.doc is not None
    assert r.record.version == "v3" and r.watermark.startswith("acl-")


def test_an_unreadable_source_is_denied_and_never_retried():
    calls = []
    r = _reader(REFERENCE, fault=calls.append).read("order-service-security-review-2026q2")
    assert r.record.outcome == "denied" and r.doc is None
    assert r.record.attempts == 1 and len(calls) == 1
    assert "CANARY" not in r.record.detail


def test_an_unknown_source_is_not_found():
    assert _reader(REFERENCE).read("no-such-source").record.outcome == "not_found"


def test_a_transient_fault_is_retried_then_succeeds():
    failures = iter([True, True, False])

    def flaky(source_id: str) -> None:
        if next(failures):
            raise SourceUnavailable(source_id, "connection reset")

    r = _reader(REFERENCE, fault=flaky).read("order-service-runbook-v3")
    assert r.record.outcome == "ok" and r.record.attempts == 3


def test_a_source_that_keeps_failing_ends_failed_after_bounded_retries():
    def down(source_id: str) -> None:
        raise SourceUnavailable(source_id, "503 from the docs backend")

    r = _reader(REFERENCE, fault=down).read("order-service-runbook-v3")
    assert r.record.outcome == "failed" and r.record.attempts == FAST.attempts
    assert "503" in r.record.detail


def test_a_revocation_takes_effect_at_the_next_read(case_copy):
    reader = _reader(case_copy)
    assert reader.read("order-service-runbook-v3").record.outcome == "ok"
    manifest = yaml.safe_load((case_copy / "sources.yaml").read_text())
    for s in manifest["sources"]:
        if s["id"] == "order-service-runbook-v3":
            s["groups"] = ["nobody"]
    (case_copy / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    text = (case_copy / "sources/runbooks/order-service-runbook-v3.md").read_text()
    if "\ngroups:" in text.split("\n---", 1)[0]:
        head, body = text.split("\n---", 1)
        head = "\n".join("groups: [nobody]" if ln.startswith("groups:") else ln for ln in head.splitlines())
        (case_copy / "sources/runbooks/order-service-runbook-v3.md").write_text(head + "\n---" + body)
    assert reader.read("order-service-runbook-v3").record.outcome == "denied"


def test_a_failing_source_ends_the_run_source_failure_when_nothing_else_can_help(make_investigator):
    def metrics_down(source_id: str) -> None:
        if source_id == "order-service-prod-p95-latency":
            raise SourceUnavailable(source_id, "metrics backend timeout")

    r = make_investigator(fault=metrics_down).start(REFERENCE).report
    assert r.stop.kind == "source_failure"
    assert "order-service-prod-p95-latency" in r.stop.sources
    assert "order-service-prod-p95-latency" in r.reads["failed"]
    symptom = next(c for c in r.claims if c.id == "symptom_window")
    assert symptom.verdict == "insufficient" and "failed" in symptom.missing[0]


def test_a_source_edited_between_two_reads_is_read_as_it_is_now(case_copy):
    """Reads are served from a parse cache keyed by the file's content: an edit is never missed."""
    reader = _reader(case_copy)
    first = reader.read("order-service-prod-p95-latency").doc
    assert first is not None and reader.read("order-service-prod-p95-latency").doc is first, "same text, one parse"
    csv = case_copy / "sources/metrics/order-service-prod-p95-latency.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines[:-1]) + "\n")
    second = reader.read("order-service-prod-p95-latency").doc
    assert second is not None and second.revision != first.revision
    assert len(second.series[0].points) == len(first.series[0].points) - 1


def test_a_changed_metric_sidecar_is_parsed_again(case_copy):
    reader = _reader(case_copy)
    first = reader.read("order-service-prod-p95-latency").doc
    side = case_copy / "sources/metrics/order-service-prod-p95-latency.csv.meta.yaml"
    meta = yaml.safe_load(side.read_text())
    meta["unit"] = "s" if meta.get("unit") != "s" else "ms"
    side.write_text(yaml.safe_dump(meta))
    second = reader.read("order-service-prod-p95-latency").doc
    assert first.meta.unit != second.meta.unit == meta["unit"]
