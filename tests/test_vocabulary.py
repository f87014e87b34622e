"""Every enumerated field is one of its vocabulary: a typo is refused at `validate` (exit 2) with
the allowed values in the message, never taken for a value that matches nothing.

Change types (claims, hypotheses, change records), source kinds and formats, metric roles,
claim kinds and directions, severity levels and roles in the profile."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import pytest
import yaml

from investigator.cli import main

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


@pytest.fixture
def case(tmp_path: Path) -> Path:
    dst = tmp_path / "case"
    shutil.copytree(REFERENCE, dst)
    return dst


def edit(case_dir: Path, name: str, change) -> None:
    path = case_dir / name
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def validate(case_dir: Path) -> tuple[int, str]:
    err = io.StringIO()
    old = Path.cwd()
    os.chdir(case_dir.parent)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = main(["validate", case_dir.name])
    finally:
        os.chdir(old)
    return rc, err.getvalue()


def refused(case_dir: Path, file: str, field: str, *allowed: str) -> str:
    rc, err = validate(case_dir)
    assert rc == 2, err
    head = f"{case_dir.name}/{file}: {field}"
    assert err.startswith("error: ") and head in err and err.count("\n") == 1, err
    for value in allowed:
        assert value in err, (value, err)
    return err


CHANGE_TYPES = ("deployment", "config_push", "feature_flag", "certificate", "dns", "rollback", "schema_migration",
                "infrastructure")


def test_a_change_type_typo_in_a_required_claim_is_refused_naming_the_types_there_are(case):
    edit(case, "case.yaml", lambda c: c["required_claims"][1].update(change_types=["deployment", "teleport"]))
    err = refused(case, "case.yaml", "required_claims.1.change_types.1", *CHANGE_TYPES)
    assert "'teleport'" in err


def test_a_change_type_spelled_as_the_profile_spells_it_is_accepted(case):
    edit(case, "case.yaml", lambda c: c["required_claims"][1].update(change_types=["release", "Config-Push", "flag"]))
    assert validate(case)[0] == 0


def test_a_change_type_the_case_profile_adds_is_accepted_and_one_it_does_not_is_refused(case):
    edit(case, "case.yaml", lambda c: (c["required_claims"][1].update(change_types=["quota_change"]),
                                       c.update(profile={"change_types": {"quota_change": ["quota"]}})))
    assert validate(case)[0] == 0
    edit(case, "case.yaml", lambda c: c["required_claims"][1].update(change_types=["quotas_change"]))
    refused(case, "case.yaml", "required_claims.1.change_types.0", "quota_change", "deployment")


def test_a_change_type_typo_in_a_hypothesis_blame_is_refused(case):
    def blame(c: dict) -> None:
        c["hypotheses"][0]["blames"] = {"entity": "order-service", "types": ["deploymnet"]}
    edit(case, "case.yaml", blame)
    refused(case, "case.yaml", "hypotheses.0.blames.types.0", *CHANGE_TYPES)


def test_an_unknown_type_in_a_change_record_is_refused_without_quoting_it(case):
    rec = case / "sources/changes/DEP-20260429-0412.yaml"
    rec.write_text(rec.read_text().replace("type: deployment", "type: CANARY-teleport", 1))
    err = refused(case, "sources/changes/DEP-20260429-0412.yaml", "type", *CHANGE_TYPES)
    assert "CANARY" not in err, "a record's value is content: never quoted"


def _as_ledger(case_dir: Path, *types: str) -> None:
    """The deployment record exported as a change ledger of several entries, one per type given."""
    rec = yaml.safe_load((case_dir / "sources/changes/DEP-20260429-0412.yaml").read_text())
    entries = [{**rec, "id": f"{rec['id']}-{n}", "type": t} for n, t in enumerate(types)]
    (case_dir / "sources/changes/DEP-20260429-0412.yaml").write_text(yaml.safe_dump({"entries": entries}))
    edit(case_dir, "sources.yaml", lambda m: next(s for s in m["sources"] if s["id"] == "DEP-20260429-0412")
         .update(format="ledger"))


def test_an_unknown_type_in_a_change_ledger_entry_is_refused_naming_the_entry_and_the_types(case):
    _as_ledger(case, "deployment", "CANARY-teleport")
    err = refused(case, "sources/changes/DEP-20260429-0412.yaml", "entry 2 (line", *CHANGE_TYPES)
    assert "CANARY" not in err, "an entry's value is content: never quoted"


def test_the_compound_types_export_tools_write_are_the_one_type_their_words_name(case):
    from tools.profile import default_profile

    p = default_profile()
    assert [p.change_type(t) for t in ("config-only", "Hotfix Release", "db-migration", "teleport", "config rollback")] \
        == ["config_push", "deployment", "schema_migration", "teleport", "config_rollback"]
    _as_ledger(case, "release", "config-only")
    assert validate(case)[0] == 0


@pytest.mark.parametrize("file, change, field, allowed", [
    ("sources.yaml", lambda m: m["sources"][0].update(kind="tweet"), "sources.0.kind", ("runbook", "metric", "catalog")),
    ("sources.yaml", lambda m: next(s for s in m["sources"] if s["kind"] == "log").update(format="csv"), "sources.",
     ("plain", "logfmt", "json", "syslog")),
    ("case.yaml", lambda c: c["required_claims"][0].update(direction="sideways"), "required_claims.0", ("up", "down")),
    ("case.yaml", lambda c: c["required_claims"][0].update(kind="vibes"), "required_claims.0", ("symptom",)),
    ("case.yaml", lambda c: c["required_claims"][1].update(scope="everywhere"), "required_claims.1",
     ("subject", "path")),
    ("case.yaml", lambda c: c["initial_evidence"][0].update(trust="trusted"), "initial_evidence.0.trust",
     ("unverified", "verified", "untrusted")),
])
def test_an_enumerated_field_of_the_case_or_manifest_out_of_its_vocabulary_is_refused(case, file, change, field, allowed):
    edit(case, file, change)
    refused(case, file, field, *allowed)


def test_a_metric_role_out_of_the_vocabulary_is_refused_in_a_sidecar(case):
    meta = case / "sources/metrics/order-service-prod-p95-latency.csv.meta.yaml"
    meta.write_text(meta.read_text() + "role: speed\n")
    refused(case, "sources/metrics/order-service-prod-p95-latency.csv.meta.yaml", "role",
            "latency", "errors", "saturation", "traffic", "availability")


@pytest.mark.parametrize("profile, field, allowed", [
    ({"metric_roles": {"speed": "fast"}}, "profile.metric_roles", ("latency", "availability")),
    ({"unit_roles": {"extend": {"speed": ["km/h"]}}}, "profile.unit_roles", ("latency", "traffic")),
    ({"severity": {"fatal": ["FATAL"]}}, "profile.severity", ("debug", "info", "warning", "error")),
    ({"numeric_levels": {70: "catastrophe"}}, "profile.numeric_levels", ("debug", "error")),
    ({"syslog_severity": {0: "emergency"}}, "profile.syslog_severity", ("warning",)),
    ({"change_types": {"Big Bang": ["bang"]}}, "profile.change_types", ("lower-case",)),
])
def test_a_profile_value_out_of_its_vocabulary_is_refused(case, profile, field, allowed):
    edit(case, "case.yaml", lambda c: c.update(profile=profile))
    refused(case, "case.yaml", field, *allowed)


def test_every_shipped_case_uses_only_known_change_types():
    for case_dir in sorted((ROOT / "cases").iterdir()):
        if (case_dir / "case.yaml").exists():
            assert validate(case_dir)[0] == 0, case_dir.name
