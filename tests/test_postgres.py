"""The same store and checkpoints on PostgreSQL (skipped when no server answers on 127.0.0.1:5432)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"

pytestmark = pytest.mark.postgres


def test_a_whole_run_on_postgresql_matches_sqlite(pg_url, tmp_path, embedder, index_root, reference_run):
    from investigator.config import Settings
    from investigator.runtime import Investigator

    inv = Investigator(Settings(workspace=tmp_path, store_url=pg_url, index_root=index_root), embedder=embedder,
                       progress=lambda _m: None)
    r = inv.start(REFERENCE).report
    _inv, sqlite_result, _out = reference_run
    assert {c.id: c.verdict for c in r.claims} == {c.id: c.verdict for c in sqlite_result.report.claims}
    assert r.stop.kind == "evidence_ready"
    assert [e.id for e in r.evidence] == [e.id for e in sqlite_result.report.evidence]
    assert inv.store.runs()[0].run_id == r.run_id


def test_a_paused_run_resumes_from_postgresql_checkpoints(pg_url, tmp_path, embedder, case_copy):
    import yaml

    from investigator.config import Settings
    from investigator.runtime import Investigator

    manifest = yaml.safe_load((case_copy / "sources.yaml").read_text())
    for s in manifest["sources"]:
        if s["id"] == "order-service-prod-db-wait":
            s["groups"] = ["dba"]
            meta = case_copy / (s["path"] + ".meta.yaml")
            m = yaml.safe_load(meta.read_text())
            if "groups" in m:
                m["groups"] = ["dba"]
                meta.write_text(yaml.safe_dump(m))
    (case_copy / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    inv = Investigator(Settings(workspace=tmp_path, store_url=pg_url), embedder=embedder, progress=lambda _m: None)
    paused = inv.start(case_copy).report
    assert paused.status == "awaiting_permission", (paused.stop, [(c.id, c.verdict, c.missing) for c in paused.claims])
    inv.grant(paused.run_id, ["dba"])
    fresh = Investigator(Settings(workspace=tmp_path, store_url=pg_url), embedder=embedder, progress=lambda _m: None)
    done = fresh.resume(paused.run_id).report
    assert done.stop.kind == "evidence_ready"


@pytest.mark.slow
def test_a_killed_workers_run_is_finished_by_another_worker_without_duplicates(pg_url, tmp_path, index_root,
                                                                                embedder):
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from investigator.config import Settings
    from investigator.runtime import Investigator

    env = {**os.environ, "INVESTIGATOR_INDEX_ROOT": str(index_root), "INVESTIGATOR_LEASE_SECONDS": "4",
           "INVESTIGATOR_CRASH_AT": "read:3"}
    cli = [sys.executable, "-m", "investigator.cli", "--home", str(tmp_path / "a"), "--store", pg_url]
    dead = subprocess.run([*cli, "run", str(REFERENCE), "--out", str(tmp_path / "a" / "out")],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert dead.returncode == -signal.SIGKILL, dead.stderr

    worker = Investigator(Settings(workspace=tmp_path / "b", store_url=pg_url, index_root=index_root,
                                   lease_seconds=30), embedder=embedder, progress=lambda _m: None)
    held = worker.store.run("run_0429_017")
    assert held.owner and held.status == "running"
    time.sleep(max(0.0, (held.lease_until.replace(tzinfo=None) - _utcnow()).total_seconds()) + 0.5)
    assert worker.work(once=True) == ["run_0429_017"]
    report = worker.report("run_0429_017")
    assert report.stop.kind == "evidence_ready"
    ids = [e.id for e in report.evidence]
    assert len(ids) == len(set(ids))
    assert worker.store.run("run_0429_017").owner is None
    reads = worker.store.reads("run_0429_017")
    assert len(reads) == report.budgets["reads_used"] == len({json.dumps(r.model_dump()) + str(n) for n, r in reads})


def _utcnow():
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).replace(tzinfo=None)
