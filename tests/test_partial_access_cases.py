"""Partial access on every shipped case (docs/deciding.md §8), end to end (slow).

Someone in another group can always add material about a service: a finance-only copy of its
latency series, a log export kept by security, a ConfigMap or `.env` only its team may read. Such a source is *about* the subject or about an
entity off the path; the readable material decides without it. Adding it must change no verdict, no root cause and no stop reason,
and none of its text may reach the report. (Where the subject is itself the root, its own signals
are the root's and a cause chosen by timing waits for them: §8; those cases are skipped.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from state.expected import load_expected

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CONFIRMED = [p.parent for p in sorted((ROOT / "cases").glob("*/expected.yaml"))
             if (load_expected(p.parent).root_cause is not None)]
RESTRICTED = "finance-controllers"
COPIED_KINDS = {"metric", "log", "trace", "events", "config"}
CANARY = "CANARY-RESTRICTED-COPY-7Q2"
COPIES = 5
"""Restricted copies of each source, each a source of its own (five groups' exports of the same data)."""


def _restricted_copies(case_dir: Path, dst: Path, *, of_root: bool = False) -> int:
    """Copy the case, adding a restricted twin of every telemetry and config source about the subject
    (when the subject is not the root) or about an entity off the expected path — or, `of_root`, of
    every log and config of the root cause's entity. Returns how many were added."""
    shutil.copytree(case_dir, dst)
    expected = load_expected(case_dir)
    assert expected.root_cause is not None
    path = list(expected.root_cause.path or [])
    on_path_below = set(path[1:]) | {expected.root_cause.entity}
    manifest = yaml.safe_load((dst / "sources.yaml").read_text(encoding="utf-8"))
    added = []
    for s in manifest["sources"]:
        if of_root:
            if s.get("kind") not in ("log", "config") or s.get("service") != expected.root_cause.entity:
                continue
        elif s.get("kind") not in COPIED_KINDS or s.get("service") in on_path_below:
            continue
        src = dst / s["path"]
        if not src.is_file():
            continue
        for n in range(COPIES):
            rel = Path("sources") / f"restricted-{n}" / Path(s["path"]).name
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst / rel)
            for side in src.parent.glob(src.name + ".*"):  # sidecars (units, series metadata) go along
                if side.suffix in (".yaml", ".yml", ".json") and side.name != src.name:
                    shutil.copyfile(side, (dst / rel).parent / side.name)
            twin = {**s, "id": f"restricted-{n}-{s['id']}", "path": rel.as_posix(), "groups": [RESTRICTED]}
            if s.get("kind") == "config":
                # a restricted copy of a ConfigMap or .env, with no capture time: it cannot date a change
                twin.pop("captured_at", None)
            added.append(twin)
    manifest["sources"] = [*manifest["sources"], *added]
    (dst / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return len(added)


@pytest.fixture(scope="module")
def investigator(tmp_path_factory, embedder):
    from investigator.config import Settings
    from investigator.runtime import Investigator

    ws = tmp_path_factory.mktemp("partial-access")
    return Investigator(Settings(workspace=ws), embedder=embedder, progress=lambda _m: None)


def test_the_shipped_cases_give_restricted_sources_to_copy(tmp_path):
    added = [_restricted_copies(c, tmp_path / c.name) for c in CONFIRMED]
    assert sum(n > 0 for n in added) >= 5 and sum(added) >= 200


@pytest.mark.parametrize("case_dir", CONFIRMED, ids=lambda p: p.name)
def test_restricted_telemetry_about_the_subject_or_off_the_path_changes_no_verdict(case_dir, investigator, tmp_path):
    twin = tmp_path / case_dir.name
    if not _restricted_copies(case_dir, twin):
        pytest.skip("the subject is the root here: its own signals are the root's (decisive by §8)")
    for f in (twin / "sources").glob("restricted-*/*"):
        if f.suffix in (".log", ".env", ".txt"):
            f.write_text(f.read_text(encoding="utf-8") + f"\n# {CANARY}\n", encoding="utf-8")

    plain = investigator.start(case_dir).report
    guarded = investigator.start(twin).report

    assert {c.id: c.verdict for c in guarded.claims} == {c.id: c.verdict for c in plain.claims}, \
        ([c.missing for c in guarded.claims if c.verdict == "insufficient"], guarded.stop)
    assert guarded.stop.kind == plain.stop.kind
    before = next(c for c in plain.claims if c.kind == "causal_chain").root_cause
    after = next(c for c in guarded.claims if c.kind == "causal_chain").root_cause
    assert before is not None and after is not None
    assert (after.entity, after.change, after.kind) == (before.entity, before.change, before.kind)
    assert CANARY not in guarded.model_dump_json()


@pytest.mark.parametrize("case_dir", CONFIRMED, ids=lambda p: p.name)
def test_restricted_copies_of_the_roots_own_lines_and_config_change_nothing_once_the_anomaly_names_the_change(
        case_dir, investigator, tmp_path):
    """The root's log or `.env` exported again by a team the principal is not in: its lines might
    say more, which matters while the cause is chosen by timing — not once the readable anomaly
    itself names what the change changed (docs/deciding.md §8)."""
    plain = investigator.start(case_dir).report
    cause = next(c for c in plain.claims if c.kind == "causal_chain").root_cause
    assert cause is not None
    if cause.change is None or not cause.element:
        pytest.skip("the cause is not named by the anomaly here: the root's own lines are decisive (§8)")
    twin = tmp_path / case_dir.name
    if not _restricted_copies(case_dir, twin, of_root=True):
        pytest.skip("no log or config of the root's entity to copy")
    guarded = investigator.start(twin).report
    assert {c.id: c.verdict for c in guarded.claims} == {c.id: c.verdict for c in plain.claims}, \
        ([c.missing for c in guarded.claims if c.verdict == "insufficient"], guarded.stop)
    assert guarded.stop.kind == plain.stop.kind
    after = next(c for c in guarded.claims if c.kind == "causal_chain").root_cause
    assert after is not None and (after.entity, after.change, after.kind) == (cause.entity, cause.change, cause.kind)
