"""A case folder is validated with errors that name the file, the field and the expectation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from state.case import load_case
from state.errors import CaseError
from tools.corpus import load_manifest, load_sources

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


def test_every_shipped_case_validates():
    for case_dir in sorted((ROOT / "cases").iterdir()):
        if (case_dir / "case.yaml").exists():
            case = load_case(case_dir)
            docs = load_sources(case_dir, load_manifest(case_dir))
            assert case.required_claims and docs


def test_the_reference_case_has_the_sources_an_investigation_needs():
    docs = load_sources(REFERENCE)
    kinds = {d.kind for d in docs}
    assert len(docs) >= 30
    assert kinds >= {"runbook", "postmortem", "doc", "change", "metric", "log", "config", "mapping", "ownership", "catalog"}
    case = load_case(REFERENCE)
    assert any(not (set(d.entry.groups) & set(case.principal.groups)) for d in docs), "an unreadable source exists"
    e12 = next(e for e in case.initial_evidence if e.id == "E12")
    assert e12.trust == "unverified"


def _edit(case_dir: Path, name: str, change) -> None:
    path = case_dir / name
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.parametrize("name, change, field, expected", [
    ("case.yaml", lambda d: d["window"].update(start="2026-04-29T10:35:00"), "window.start", "UTC offset"),
    ("case.yaml", lambda d: d.update(subject="order"), "subject", "env/service"),
    ("case.yaml", lambda d: d["budgets"].update(rounds=0), "budgets.rounds", "greater than or equal to 1"),
    ("case.yaml", lambda d: d["required_claims"][0].update(kind="vibes"), "required_claims.0", "tag"),
    ("case.yaml", lambda d: d["required_claims"][3].update(competitors=["nope"]), "<document>", "nope"),
    ("sources.yaml", lambda d: d["sources"][0].update(kind="tweet"), "sources.0.kind", "runbook"),
    ("sources.yaml", lambda d: d["sources"][0].pop("groups"), "sources.0.groups", "required"),
])
def test_a_malformed_case_names_file_field_and_expectation(case_copy, name, change, field, expected):
    _edit(case_copy, name, change)
    with pytest.raises(CaseError) as err:
        load_case(case_copy)
        load_sources(case_copy)
    assert err.value.file.endswith(name)
    assert err.value.field.startswith(field) or field == "<document>"
    assert expected.lower() in str(err.value).lower()


def test_front_matter_groups_must_agree_with_the_manifest(case_copy):
    path = case_copy / "sources/runbooks/order-service-runbook-v3.md"
    text = path.read_text()
    path.write_text(text.replace("---\n", "---\ngroups: [everyone]\n", 1) if "groups:" not in text.split("---")[1]
                    else text.replace("groups: [", "groups: [everyone, ", 1))
    with pytest.raises(CaseError, match="groups"):
        load_sources(case_copy)


def test_a_log_line_without_a_timestamp_is_kept_as_unparsed_text_with_its_offsets(case_copy):
    path = next((case_copy / "sources/logs").glob("*.log"))
    text = path.read_text()
    path.write_text("no timestamp here\n" + text)
    doc = next(d for d in load_sources(case_copy) if d.kind == "log")
    bad = doc.unparsed[0]
    assert doc.text[bad.start:bad.end] == "no timestamp here" and "timestamp" in bad.reason
    assert len(doc.events) == len(text.strip().splitlines()), "every other line is still an event"


def test_the_cli_exits_2_and_writes_nothing_for_a_bad_case(case_copy, tmp_path):
    _edit(case_copy, "case.yaml", lambda d: d["window"].update(end="yesterday"))
    home, out = tmp_path / "home", tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(home), "run", str(case_copy),
                           "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "case.yaml" in proc.stderr and "window.end" in proc.stderr
    assert not out.exists() and not home.exists()


WIKI = "sources/notes/wiki-order-service-latency-tips.md"  # trust: untrusted (anyone may edit it)


def test_an_editable_page_with_broken_front_matter_is_left_out_and_the_case_goes_on(case_copy):
    """Anyone may edit an untrusted page: one broken edit must not stop every investigation of the
    service. The page is left out (named, with its problem) and nothing of it is indexed."""
    from tools.corpus import set_aside_sources

    path = case_copy / WIKI
    path.write_text(path.read_text().replace("---\n", "---\nstatus: [broken\n", 1))
    load_case(case_copy)
    ids = {d.id for d in load_sources(case_copy)}
    assert "wiki-order-service-latency-tips" not in ids and len(ids) >= 30
    aside = set_aside_sources(case_copy)
    assert [d.id for d in aside] == ["wiki-order-service-latency-tips"] and "front matter" in (aside[0].set_aside or "")
    got = subprocess.run([sys.executable, "-m", "investigator.cli", "validate", str(case_copy)],
                         capture_output=True, text=True, cwd=ROOT)
    assert got.returncode == 0, got.stderr
    assert "1 untrusted source left out" in got.stdout and WIKI.rsplit("/", 1)[-1] in got.stderr


def test_a_run_names_the_page_it_left_out_in_its_report(case_copy, make_investigator):
    """Whoever reads the answer learns that a page was not considered, and why, without rerunning
    `validate`: report.json, report.md and report.html name it with its problem; nothing of it is cited."""
    from investigator.report import Report
    from investigator.report_md import render_markdown
    from investigator.report_html import render_html

    path = case_copy / WIKI
    path.write_text(path.read_text().replace("---\n", "---\nstatus: [broken\n", 1))
    result = make_investigator().start(case_copy)
    r = Report.model_validate_json(result.report.to_json())
    assert [(x.source_id, x.path) for x in r.left_out] == [("wiki-order-service-latency-tips", WIKI)]
    assert "front matter" in r.left_out[0].problem
    assert all(e.source_id != "wiki-order-service-latency-tips" for e in r.evidence)
    assert "## Left out of the case" in render_markdown(r) and "Left out of the case" in render_html(r)


def test_a_verified_page_with_broken_front_matter_still_stops_the_case(case_copy):
    path = case_copy / "sources/runbooks/order-service-runbook-v3.md"
    path.write_text(path.read_text().replace("---\n", "---\nstatus: [broken\n", 1))
    with pytest.raises(CaseError, match="front matter"):
        load_sources(case_copy)
