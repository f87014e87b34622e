"""`investigator init`: an alert and a folder of material become a case that validates and runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from investigator.init import read_alert, scaffold
from state.errors import CaseError
from tools.detect import detect

ROOT = Path(__file__).resolve().parent.parent
MATERIAL = ROOT / "cases" / "ALR-20260819-204" / "sources"

PAYLOAD = {
    "version": "4", "groupKey": "{}:{alertname=\"ProfileApiLatencyHigh\"}", "status": "firing", "receiver": "oncall",
    "commonLabels": {"alertname": "ProfileApiLatencyHigh", "severity": "page"},
    "alerts": [{"status": "firing",
                "labels": {"alertname": "ProfileApiLatencyHigh", "service": "profile-api", "environment": "prod"},
                "annotations": {"summary": "profile-api p99 latency above 800 ms for 5m"},
                "startsAt": "2026-08-19T14:10:00Z", "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus:9090/graph?g0.expr=histogram_quantile%280.99%2C+x%29+%3E+0.8",
                "fingerprint": "a1b2c3d4"}]}


@pytest.fixture
def material(tmp_path) -> Path:
    dst = tmp_path / "material"
    shutil.copytree(MATERIAL, dst)
    return dst


def test_an_alertmanager_payload_gives_subject_window_and_rule(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(PAYLOAD))
    a = read_alert(tmp_path / "a.json")
    assert (a.environment, a.service, a.rule) == ("prod", "profile-api", "ProfileApiLatencyHigh")
    assert a.ends_at is None, "Alertmanager's 0001-01-01 means still firing"
    assert "histogram_quantile" in a.expression


def test_an_alert_without_a_fingerprint_is_named_by_rule_time_and_label_hash(tmp_path):
    one = {k: v for k, v in PAYLOAD["alerts"][0].items() if k != "fingerprint"}
    other = {**one, "labels": {**one["labels"], "service": "search-api"}}
    ids = []
    for i, alert in enumerate((one, other)):
        (tmp_path / f"{i}.json").write_text(json.dumps({**PAYLOAD, "alerts": [alert]}))
        ids.append(read_alert(tmp_path / f"{i}.json").id)
    assert ids[0].startswith("ProfileApiLatencyHigh-20260819T1410-")
    assert ids[0].count("ProfileApiLatencyHigh") == 1, "the rule is named once, not again as a stand-in fingerprint"
    assert ids[0] != ids[1], "two alerts of one rule and minute with other labels are two cases"


def test_a_plain_text_alert_is_read_too(tmp_path):
    (tmp_path / "a.txt").write_text("[FIRING] prod/checkout error rate 9 % since 2026-06-11T14:04:00+02:00\n")
    a = read_alert(tmp_path / "a.txt")
    assert (a.environment, a.service) == ("prod", "checkout") and a.fired_at.utcoffset().total_seconds() == 7200


@pytest.mark.parametrize("name, content, want", [
    ("a.log", '{"level":"error","ts":1777430091.1,"msg":"x"}\n', ("log", "json")),
    ("b.log", "ts=2026-04-29T02:34:51Z level=warn msg=x\nts=2026-04-29T02:34:52Z level=info msg=y\n", ("log", "logfmt")),
    ("c.txt", "NAME   READY STATUS  RESTARTS AGE IP  NODE\nweb-1  1/1   Running 0  1d  1.1 n1\n", ("kubernetes", "pods-wide")),
    ("d.json", '{"resourceSpans":[]}', ("trace", "otlp")),
    ("e.json", '{"status":"success","data":{"resultType":"matrix","result":[]}}', ("metric", "prometheus")),
    ("f.txt", "deployment.apps/web\nREVISION  CHANGE-CAUSE\n1         <none>\n", ("change", "rollout")),
    ("g.env", "DB_POOL=8\n", ("config", "env")),
    ("h.yaml", "services:\n  - name: web\n", ("catalog", "record")),
    ("i.csv.meta.yaml", "metric: x\n", None),
])
def test_each_file_kind_is_detected_from_its_content(tmp_path, name, content, want):
    assert detect(tmp_path / name, content) == want


def test_payload_and_folder_become_a_case_that_validates_runs_and_names_the_cause(tmp_path, material,
                                                                                 make_investigator):
    (tmp_path / "a.json").write_text(json.dumps(PAYLOAD))
    case = scaffold(tmp_path / "a.json", material, tmp_path / "case")
    assert (case / "case.yaml").exists() and (case / "sources.yaml").exists()
    r = make_investigator(workspace=tmp_path / "ws", shared_index=False).start(case).report
    causal = next(c for c in r.claims if c.kind == "causal_chain")
    assert causal.verdict == "confirmed", causal.missing
    assert (causal.root_cause.entity, causal.root_cause.change) == ("search-indexer", "DEP-20260819-0731")


def test_a_bad_alert_exits_2_and_writes_nothing(tmp_path, material):
    bad = {**PAYLOAD, "alerts": [{**PAYLOAD["alerts"][0], "labels": {"alertname": "x"}}]}
    (tmp_path / "a.json").write_text(json.dumps(bad))
    with pytest.raises(CaseError):
        scaffold(tmp_path / "a.json", material, tmp_path / "case")
    assert not (tmp_path / "case").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".init-")], "no half-written folder"
    proc = subprocess.run([sys.executable, "-m", "investigator.cli", "init", "--alert", str(tmp_path / "a.json"),
                           "--sources", str(material), "--out", str(tmp_path / "case")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "labels" in proc.stderr and not (tmp_path / "case").exists()


def test_a_grafana_csv_is_listed_without_a_generated_sidecar_and_local_times_are_named_not_guessed(
        tmp_path, material, capsys):
    """Grafana's CSV names its series, so init writes no sidecar over it; its browser-local times carry no
    zone, and with no timezone given init says which file needs one (its rows stay unread until then)."""
    import yaml

    from investigator.cli import main
    from investigator.init import initialise

    (material / "grafana").mkdir()
    (material / "grafana" / "search-indexer-cpu.csv").write_text(
        '"Time","search-indexer cpu"\n"2026-08-19 22:05:00",0.31\n"2026-08-19 22:06:00",0.92\n')
    (tmp_path / "a.json").write_text(json.dumps(PAYLOAD))
    got = initialise(tmp_path / "a.json", material, tmp_path / "case")
    entry = next(s for s in yaml.safe_load((got.case_dir / "sources.yaml").read_text())["sources"]
                 if s["path"].endswith("search-indexer-cpu.csv"))
    assert (entry["kind"], entry["format"]) == ("metric", "csv") and "timezone" not in entry
    assert not (got.case_dir / (entry["path"] + ".meta.yaml")).exists()
    assert got.zoneless == ("grafana/search-indexer-cpu.csv",)
    assert "grafana/search-indexer-cpu.csv" in (got.case_dir / "init-report.md").read_text()
    assert main(["init", "--alert", str(tmp_path / "a.json"), "--sources", str(material), "--out",
                 str(tmp_path / "case2")]) == 0
    assert "no time zone: grafana/search-indexer-cpu.csv" in capsys.readouterr().out
