"""Symptoms from whatever telemetry a case has: a subject seen only through its traces.

The vendor-certificate case (written blind, INC-20260902-077) has the subject's 5xx ratio as a
metric and its spans as OTLP traces. With every metric of the subject removed, the symptom
must still be decided, from the spans alone, and cited from the trace file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from investigator.config import Settings
from investigator.runtime import Investigator
from tools.corpus import load_manifest, load_source

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "cases" / "INC-20260902-077"

pytestmark = pytest.mark.slow


def _traces_only(dst: Path) -> Path:
    shutil.copytree(CASE, dst)
    case = yaml.safe_load((dst / "case.yaml").read_text())
    subject = case["subject"].split("/", 1)[1]
    manifest = yaml.safe_load((dst / "sources.yaml").read_text())
    gone = [s for s in manifest["sources"] if s["kind"] == "metric" and s.get("service") == subject]
    assert gone, "the case has metrics of the subject to take away"
    manifest["sources"] = [s for s in manifest["sources"] if s not in gone]
    (dst / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True))
    dropped = {c["id"] for c in case["required_claims"] if c["kind"] == "symptom" and c.get("signal") == "metric"}
    case["required_claims"] = [c for c in case["required_claims"] if c["id"] not in dropped]
    for item in case.get("initial_evidence", []):  # the alert's own figure now stands for the traces' symptom
        if item.get("claim") in dropped:
            item["claim"] = "symptom_traces"
    (dst / "case.yaml").write_text(yaml.safe_dump(case, sort_keys=False, allow_unicode=True))
    (dst / "expected.yaml").unlink()
    return dst


def test_a_symptom_seen_only_in_traces_is_confirmed_from_the_spans(tmp_path, embedder):
    case_dir = _traces_only(tmp_path / "case")
    inv = Investigator(Settings(workspace=tmp_path / "ws"), embedder=embedder, progress=lambda _m: None)
    result = inv.start(case_dir)
    claims = {c.id: c for c in result.report.claims}
    symptom = claims["symptom_traces"]
    assert symptom.verdict == "confirmed"
    manifest = {s.id: s for s in load_manifest(case_dir).sources}
    evidence = {e.id: e for e in result.report.evidence}
    cited = [evidence[i] for i in symptom.supporting if evidence[i].kind == "read"]  # not the alert's own figure
    assert cited and {e.source_kind for e in cited} == {"trace"}
    for e in cited:
        text = load_source(case_dir, manifest[e.source_id]).text
        assert e.span is not None and text[e.span.start:e.span.end] == e.span.quote
