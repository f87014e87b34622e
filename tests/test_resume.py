"""Pause for permission, revoke on resume, and crash-safety of checkpointed runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


def _set_groups(case_dir: Path, source_id: str, groups: list[str]) -> None:
    path = case_dir / "sources.yaml"
    data = yaml.safe_load(path.read_text())
    for s in data["sources"]:
        if s["id"] == source_id:
            s["groups"] = groups
            for key in ("path",):
                src = case_dir / s[key]
                meta = src.with_name(src.name + ".meta.yaml")
                if meta.exists():  # keep the sidecar's access list in agreement
                    m = yaml.safe_load(meta.read_text())
                    if "groups" in m:
                        m["groups"] = groups
                        meta.write_text(yaml.safe_dump(m, sort_keys=False))
                if src.suffix == ".md" and "\ngroups:" in src.read_text().split("\n---", 1)[0]:
                    head, body = src.read_text().split("\n---", 1)
                    head = "\n".join(f"groups: [{', '.join(groups)}]" if ln.startswith("groups:") else ln
                                     for ln in head.splitlines())
                    src.write_text(head + "\n---" + body)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_denied_source_pauses_the_run_and_a_grant_lets_resume_finish(make_investigator, case_copy):
    _set_groups(case_copy, "order-service-prod-p95-latency", ["observability"])
    inv = make_investigator(shared_index=False)
    paused = inv.start(case_copy).report
    assert paused.status == "awaiting_permission"
    assert paused.stop.kind == "awaiting_permission"
    assert paused.stop.sources == ("order-service-prod-p95-latency",)
    assert "symptom_window" in paused.stop.detail
    assert next(c for c in paused.claims if c.id == "symptom_window").verdict == "insufficient"

    inv.grant(paused.run_id, ["observability"])
    done = inv.resume(paused.run_id).report
    assert done.stop.kind == "evidence_ready"
    assert {c.id: c.verdict for c in done.claims}["symptom_window"] == "confirmed"
    assert done.reads["reused"] == sum(1 for e in paused.evidence if e.kind != "initial"), \
        "every observation read before the pause is reused, not read again"


def test_denied_without_asking_stops_permission_denied(make_investigator, case_copy):
    _set_groups(case_copy, "order-service-prod-p95-latency", ["observability"])
    data = yaml.safe_load((case_copy / "case.yaml").read_text())
    data["principal"]["may_request_access"] = False
    (case_copy / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    r = make_investigator(shared_index=False).start(case_copy).report
    assert r.stop.kind == "permission_denied" and r.status == "stopped"
    assert "order-service-prod-p95-latency" in r.stop.sources


def test_evidence_revoked_before_a_resume_is_withdrawn_and_its_claim_reopens(
        make_investigator, case_copy, capsys):
    messages: list[str] = []
    inv = make_investigator(shared_index=False, progress=messages.append)
    done = inv.start(case_copy).report
    causal = next(c for c in done.claims if c.id == "causal_attribution")
    assert causal.verdict == "confirmed"
    on_path = {e for h in causal.path for e in h.evidence_ids}
    hop_evidence = [e for e in done.evidence if e.source_id == "dependency-client-config-2.4" and e.id in on_path]
    assert hop_evidence, "the last hop rests on the 2.4 documentation"
    secret_quotes = [e.span.quote for e in hop_evidence]

    _set_groups(case_copy, "dependency-client-config-2.4", ["platform-clients-only"])
    after = inv.resume(done.run_id).report
    paused = done
    assert {e.id for e in hop_evidence} <= {x["id"] for x in after.revoked}
    assert all(x["status"] == "revoked" for x in after.revoked if x["source_id"] == "dependency-client-config-2.4")
    causal = next(c for c in after.claims if c.id == "causal_attribution")
    assert causal.root_cause is None or causal.root_cause.refined is None, "the refinement rested on the revoked doc"
    assert not ({e.id for e in hop_evidence} & {e for h in causal.path for e in h.evidence_ids})
    assert len(causal.history) >= 2, "history keeps the earlier decisions"
    shown = after.to_json() + "".join(s.model_dump_json() for s in inv.store.steps(paused.run_id)) + "\n".join(messages)
    shown += capsys.readouterr().err
    from investigator.report_md import render_markdown
    shown += render_markdown(after)
    for quote in secret_quotes:
        assert quote not in shown


def test_a_changed_source_is_re_anchored_on_resume(make_investigator, case_copy):
    inv = make_investigator(shared_index=False)
    paused = inv.start(case_copy).report
    doc_id = "dependency-client-config-2.4"
    assert any(e.source_id == doc_id for e in paused.evidence)
    doc = case_copy / "sources/docs/dependency-client-config-2.4.md"
    doc.write_text(doc.read_text().replace("# dependency-client configuration reference",
                                           "<!-- reviewed 2026-05-02 -->\n# dependency-client configuration reference", 1))
    after = inv.resume(paused.run_id).report
    text = doc.read_text()
    moved = [e for e in after.evidence if e.source_id == "dependency-client-config-2.4"]
    assert moved
    for e in moved:
        assert text[e.span.start:e.span.end] == e.span.quote
    assert after.stop.kind == "evidence_ready"
    read_before = [e for e in paused.evidence if e.kind != "initial"]
    assert after.reads["reused"] == len(read_before) - len([e for e in read_before if e.source_id == doc_id]), \
        "unchanged observations are reused; the changed source is re-anchored instead"


def _cli(home: Path, index_root: Path, *args: str, crash: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "INVESTIGATOR_INDEX_ROOT": str(index_root)}
    env.pop("INVESTIGATOR_CRASH_AT", None)
    if crash:
        env["INVESTIGATOR_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(home), *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


def _masked(path: Path) -> dict:
    data = json.loads(path.read_text())
    data.pop("generated_at")
    for ev in data["evidence"]:
        ev["read_at"] = None
    data["timeline"] = [{k: v for k, v in t.items() if k != "at"} for t in data["timeline"]
                        if t["node"] != "resume"]
    data["reads"].pop("reused", None)
    return data


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, index_root) -> dict:
    home = tmp_path_factory.mktemp("plain")
    proc = _cli(home, index_root, "run", str(REFERENCE), "--out", str(home / "out"))
    assert proc.returncode == 0, proc.stderr
    return _masked(home / "out" / "report.json")


NODES = ("plan", "retrieve", "read", "update", "decide")
# killed as a node finishes its work, and (":saved") after LangGraph stored its writes but before the
# checkpoint that follows them: a resume must not take the pending writes for a finished run
CRASH_POINTS = [f"{node}:{rnd}" for rnd in (1, 6) for node in NODES] + [f"{node}:1:saved" for node in NODES]


@pytest.mark.slow
@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_run_killed_at_any_node_resumes_to_the_uninterrupted_report(tmp_path, index_root, uninterrupted, point):
    home = tmp_path / "home"
    crashed = _cli(home, index_root, "run", str(REFERENCE), "--out", str(home / "out"), crash=point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert not (home / "out" / "report.json").exists()
    resumed = _cli(home, index_root, "resume", "run_0429_017", "--out", str(home / "out"))
    assert resumed.returncode == 0, resumed.stderr
    got = _masked(home / "out" / "report.json")
    assert got == uninterrupted
    ids = [e["id"] for e in got["evidence"]]
    assert len(ids) == len(set(ids))
