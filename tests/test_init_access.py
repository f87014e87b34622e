"""`investigator init --access MAP`: groups from path globs, the principal from the map; the
environment where the material states it; skipped files reported; front-matter problems at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from investigator.access_map import glob_matches, read_access_map
from investigator.cli import main
from investigator.init import initialise
from state.errors import CaseError, CaseProblems

ALERT = {"version": "4", "status": "firing", "alerts": [{
    "status": "firing", "labels": {"alertname": "CheckoutErrors", "service": "checkout", "environment": "prod"},
    "annotations": {"summary": "checkout 5xx 12 %"}, "startsAt": "2026-04-29T10:41:00Z",
    "endsAt": "0001-01-01T00:00:00Z"}]}

LOG = "".join(f'{{"level":"error","ts":"2026-04-29T10:{m:02d}:00Z","msg":"upstream timeout","service":"checkout"}}\n'
              for m in range(20, 50))
RUNBOOK = """---
doc_id: RB-1
title: checkout runbook
version: 3
service: checkout
environment: prod
updated_at: 2026-04-01T00:00:00Z
status: current
applies_to_versions: '>=4.0.0'
---
Restart the pods.
"""


@pytest.fixture
def material(tmp_path) -> Path:
    m = tmp_path / "material"
    (m / "logs").mkdir(parents=True)
    (m / "security").mkdir()
    (m / "logs" / "checkout.prod.jsonl").write_text(LOG)
    (m / "security" / "note.md").write_text(RUNBOOK.replace("RB-1", "SEC-1"))
    (m / "runbook.md").write_text(RUNBOOK)
    (m / "image.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "alert.json").write_text(json.dumps(ALERT))
    (tmp_path / "access.yaml").write_text(yaml.safe_dump({
        "principal": {"id": "analyst", "groups": ["sre", "eng"], "may_request_access": True},
        "access": [{"glob": "security/*", "groups": ["secops"]}, {"glob": "**/*.jsonl", "groups": ["sre"]}],
        "default_groups": ["eng"]}))
    return m


def _sources(case: Path) -> dict[str, dict]:
    return {Path(s["path"]).name: s for s in yaml.safe_load((case / "sources.yaml").read_text())["sources"]}


def test_groups_come_from_the_first_matching_glob_and_the_principal_from_the_map(tmp_path, material):
    got = initialise(tmp_path / "alert.json", material, tmp_path / "case", access=tmp_path / "access.yaml")
    src = _sources(got.case_dir)
    assert src["note.md"]["groups"] == ["secops"]
    assert src["checkout.prod.jsonl"]["groups"] == ["sre"]
    assert src["runbook.md"]["groups"] == ["eng"], "no glob matches: the map's default groups"
    case = yaml.safe_load((got.case_dir / "case.yaml").read_text())
    assert case["principal"] == {"id": "analyst", "groups": ["sre", "eng"], "may_request_access": True}
    assert {c["kind"] for c in case["required_claims"]} == {"symptom", "change_in_window", "counter_evidence",
                                                             "causal_chain"}
    assert [s.path for s in got.skipped] == ["image.bin"] and got.skipped[0].reason
    assert "image.bin" in (got.case_dir / "init-report.md").read_text()


def test_environment_and_service_come_from_the_material(tmp_path, material):
    src = _sources(initialise(tmp_path / "alert.json", material, tmp_path / "case").case_dir)
    assert src["checkout.prod.jsonl"]["environment"] == "prod" and src["checkout.prod.jsonl"]["service"] == "checkout"


def _argocd_app(app: str, workloads: list[str]) -> str:
    return json.dumps({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                       "metadata": {"name": app, "namespace": "argocd"},
                       "spec": {"destination": {"namespace": "batch"}},
                       "status": {"history": [{"id": 12, "revision": "9f1c2e", "deployedAt": "2026-04-29T10:30:02Z",
                                               "deployStartedAt": "2026-04-29T10:30:00Z"}],
                                  "operationState": {"phase": "Succeeded", "syncResult": {"resources": [
                                      {"kind": "Deployment", "name": w, "namespace": "batch"} for w in workloads]}}}},
                      indent=2)


def test_a_gitops_application_is_about_the_workload_it_deploys_not_its_own_name(tmp_path, material):
    """An Argo CD app called `reports-nightly` that syncs Deployment `report-builder`: its history
    is the workload's changes, as an on-call engineer reads it, with no inventory to say so."""
    (material / "changes").mkdir()
    (material / "changes" / "argocd-app-reports-nightly-prod.json").write_text(
        _argocd_app("reports-nightly-prod", ["report-builder"]))
    (material / "changes" / "argocd-app-two-prod.json").write_text(_argocd_app("two-prod", ["alpha", "beta"]))
    src = _sources(initialise(tmp_path / "alert.json", material, tmp_path / "case").case_dir)
    assert src["argocd-app-reports-nightly-prod.json"]["service"] == "report-builder"
    assert src["argocd-app-two-prod.json"]["service"] == "two", "several workloads: the file's own name stays"


def test_globs_are_shell_style_over_the_relative_path():
    assert glob_matches("logs/a.jsonl", "**/*.jsonl") and glob_matches("a.jsonl", "**/*.jsonl")
    assert glob_matches("security/x/note.md", "security/**") and not glob_matches("security/x/note.md", "security/*")
    assert glob_matches("deep/dir/note.md", "note.md"), "a glob without / matches the file name anywhere"


def test_a_bad_access_map_names_the_file_and_field(tmp_path):
    p = tmp_path / "access.yaml"
    p.write_text("access:\n  - {glob: 'a/*'}\n")
    with pytest.raises(CaseError) as e:
        read_access_map(p)
    assert (e.value.file, e.value.field) == (str(p), "access.0.groups")


def test_every_front_matter_problem_is_reported_at_once_with_exit_code_2(tmp_path, material, capsys):
    (material / "runbook.md").write_text(RUNBOOK.replace("title: checkout runbook\n", "").replace(
        "updated_at: 2026-04-01T00:00:00Z\n", ""))
    (material / "security" / "note.md").write_text(RUNBOOK.replace("status: current", "status: maybe"))
    with pytest.raises(CaseProblems) as e:
        initialise(tmp_path / "alert.json", material, tmp_path / "case")
    assert len(e.value.problems) == 3 and not (tmp_path / "case").exists()
    code = main(["init", "--alert", str(tmp_path / "alert.json"), "--sources", str(material), "--out",
                 str(tmp_path / "case")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("error: ") == 3 and "front matter.title" in err and "front matter.status" in err


def test_the_cli_lists_skipped_files_and_takes_the_map(tmp_path, material, capsys):
    code = main(["init", "--alert", str(tmp_path / "alert.json"), "--sources", str(material), "--out",
                 str(tmp_path / "case"), "--access", str(tmp_path / "access.yaml")])
    out = capsys.readouterr().out
    assert code == 0 and "skipped: image.bin" in out and "review the access groups" not in out


def test_an_inventory_scopes_what_the_content_does_not_say(tmp_path, material):
    (material / "metrics").mkdir()
    (material / "metrics" / "pool.waiting.csv").write_text("ts,value\n2026-04-29T10:40:00Z,3\n2026-04-29T10:41:00Z,9\n")
    inv = tmp_path / "index.yaml"
    inv.write_text(yaml.safe_dump({"sources": [
        {"path": "metrics/pool.waiting.csv", "service": "orders-db", "environment": "production",
         "metric": "pool_client_waiting", "unit": "clients", "timezone": "UTC"},
        {"path": "runbook.md", "service": "all", "environment": "all"}]}))
    got = initialise(tmp_path / "alert.json", material, tmp_path / "case", inventory=inv)
    src = _sources(got.case_dir)["pool.waiting.csv"]
    assert (src["service"], src["environment"], src["timezone"]) == ("orders-db", "prod", "Z")
    meta = yaml.safe_load((got.case_dir / src["path"]).with_name("pool.waiting.csv.meta.yaml").read_text())
    assert (meta["metric"], meta["unit"]) == ("pool_client_waiting", "clients")


def test_an_inventory_among_the_material_is_read_and_not_listed(tmp_path, material):
    (material / "index.json").write_text(json.dumps([
        {"path": "logs/checkout.prod.jsonl", "service": "checkout-api", "environment": "prod"},
        {"path": "runbook.md", "service": "checkout", "environment": "prod"},
        {"path": "security/note.md", "service": "checkout", "environment": "prod"}]))
    got = initialise(tmp_path / "alert.json", material, tmp_path / "case")
    src = _sources(got.case_dir)
    assert "index.json" not in src and any(s.path == "index.json" for s in got.skipped)
    assert src["checkout.prod.jsonl"]["service"] == "checkout-api"


@pytest.mark.parametrize("summary, expr, want", [
    ("checkout 5xx ratio above 3 %", "", "up"),
    ("checkout success rate below 99 %", "", "down"),
    ("", "sum(rate(ok[5m])) / sum(rate(all[5m])) < 0.99", "down"),
    ("", "histogram_quantile(0.99, x) > 0.8", "up"),
])
def test_the_symptom_direction_comes_from_the_alert(summary, expr, want):
    from datetime import datetime, timezone

    from investigator.init import AlertInfo, _direction

    a = AlertInfo(id="a", rule="r", fired_at=datetime(2026, 4, 29, tzinfo=timezone.utc), text=summary or "r",
                  environment="prod", service="checkout", expression=expr)
    assert _direction(a) == want


def test_telemetry_stating_no_environment_is_taken_to_be_the_alerts_and_reported(tmp_path, material):
    (material / "logs" / "payments.log").write_text("2026-04-29T10:40:00Z ERROR payments pool exhausted\n")
    got = initialise(tmp_path / "alert.json", material, tmp_path / "case")
    src = _sources(got.case_dir)
    assert src["payments.log"]["environment"] == "prod" and got.assumed == ("logs/payments.log",)
    assert "logs/payments.log" in (got.case_dir / "init-report.md").read_text()
