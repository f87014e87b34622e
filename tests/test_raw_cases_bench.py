"""bench/raw_cases.py plays the pager and the access administrator: an exported incident's
alert table becomes an Alertmanager payload init reads, its manifest an access map."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import yaml

from investigator.access_map import AccessMap
from investigator.init import read_alert

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("raw_cases", ROOT / "bench" / "raw_cases.py")
assert _spec is not None and _spec.loader is not None
raw_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(raw_cases)

CASE_MD = """# Case X

## Alert

| field | value |
|---|---|
| alert id | INC-1 |
| rule | `checkout-5xx-ratio` — 5xx error ratio above 1 % for 3 consecutive minutes |
| fired at | 2026-04-29T10:41:00+02:00 |
| subject | `prod/checkout` (service `checkout`, environment `prod`) |
| severity | SEV-2 |
| alert text | "checkout 5xx ratio 12 % (baseline 0.2 %), threshold 1 %" |

## Investigating principal

| field | value |
|---|---|
| principal | `analyst` |
| groups | `eng`, `oncall` |
| may request more access during the run | no |

## Question
"""


def test_the_alert_table_becomes_a_payload_init_reads(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(raw_cases.alert_payload(CASE_MD)))
    a = read_alert(tmp_path / "a.json")
    assert (a.environment, a.service, a.rule) == ("prod", "checkout", "checkout-5xx-ratio")
    assert a.fired_at.isoformat() == "2026-04-29T10:41:00+02:00" and "12 %" in a.text


def test_the_manifest_becomes_an_access_map_with_the_principal():
    manifest = {"sources": [{"path": "logs/a.log", "allowed_groups": ["eng"]},
                            {"path": "security/n.md", "allowed_groups": ["secops"]}]}
    m = AccessMap.model_validate(yaml.safe_load(yaml.safe_dump(raw_cases.access_map(CASE_MD, manifest))))
    assert m.principal is not None and (m.principal.id, m.principal.groups) == ("analyst", ("eng", "oncall"))
    assert m.groups_for("security/n.md", ("x",)) == ("secops",) and m.groups_for("other.md", ("x",)) == ("x",)


def test_gold_claim_ids_are_renamed_to_inits_by_kind():
    expected = {"claims": {"sym": {"verdict": "confirmed"}, "ce": {"verdict": "refuted"}}}
    converted = {"required_claims": [{"id": "sym", "kind": "symptom"}, {"id": "ce", "kind": "counter_evidence"}]}
    init = {"required_claims": [{"id": "symptom", "kind": "symptom"}, {"id": "counter_evidence", "kind": "counter_evidence"}]}
    assert raw_cases._rename_expected(expected, converted, init)["claims"] == {
        "symptom": {"verdict": "confirmed"}, "counter_evidence": {"verdict": "refuted"}}
