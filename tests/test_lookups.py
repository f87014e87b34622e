"""Structured lookups: what a lookup returns, and what it says it could not read.

A denied structured source (a log, a catalog, a change record) is *needed*: the run stops or
pauses on it. A sentence in a document is found like any document text, so an unreadable
document never stops a run by itself (docs/deciding.md §8).
"""

from __future__ import annotations

from investigator.config import Settings
from investigator.runtime import Investigator
from state.case import load_case
from investigator.manifests import ManifestOnDisk
from tools.access import AccessPolicy
from tools.corpus import load_manifest
from tools.observations import Observations

from conftest import REFERENCE


def _lookups(index_root, embedder):
    inv = Investigator(Settings(workspace=index_root / "ws", index_root=index_root), embedder=embedder,
                       progress=lambda _m: None)
    case = load_case(REFERENCE)
    return case, Observations(inv.index_path(case, REFERENCE))


def test_an_unreadable_document_stating_a_relation_is_neither_returned_nor_reported_denied(index_root, embedder):
    case, obs = _lookups(index_root, embedder)
    access = AccessPolicy(ManifestOnDisk(REFERENCE), case.principal).current()
    restricted = [s.id for s in load_manifest(REFERENCE).sources
                  if s.kind in ("note", "doc", "runbook", "postmortem") and not access.can_read(s.id)]
    assert restricted, "the reference case holds unreadable documents"
    subject = case.subject.service
    found = obs.relations(subject, case.subject.environment, access)
    assert not set(restricted) & set(found.denied)
    assert not set(restricted) & {h.source_id for h in found.hits}


def test_the_same_document_is_returned_once_the_principal_may_read_it(index_root, embedder):
    case, obs = _lookups(index_root, embedder)
    manifest = load_manifest(REFERENCE)
    everyone = tuple(sorted({g for s in manifest.sources for g in s.groups}))
    wide = AccessPolicy(ManifestOnDisk(REFERENCE), case.principal, extra_groups=everyone).current()
    narrow = AccessPolicy(ManifestOnDisk(REFERENCE), case.principal).current()
    subject = case.subject.service
    wide_ids = {h.source_id for h in obs.relations(subject, case.subject.environment, wide).hits}
    narrow_ids = {h.source_id for h in obs.relations(subject, case.subject.environment, narrow).hits}
    assert narrow_ids < wide_ids, "a readable document's stated relations are found"


def _indexed_copy(case_copy, embedder, tmp_path):
    """A case copy indexed in its own workspace: the investigator, the case, its lookups and the access."""
    inv = Investigator(Settings(workspace=tmp_path / "ws"), embedder=embedder, progress=lambda _m: None)
    inv.index(case_copy)
    case = load_case(case_copy)
    return inv, case, Observations(inv.index_path(case, case_copy)), AccessPolicy(ManifestOnDisk(case_copy), case.principal).current()


def test_a_lookup_after_a_tombstone_or_a_rebuild_sees_the_index_as_it_is_now(tmp_path, case_copy, embedder):
    """Lookups share one read-only connection per index; a delete or a rebuild is never hidden by it."""
    inv, case, obs, access = _indexed_copy(case_copy, embedder, tmp_path)
    env, subject = case.subject.environment, case.subject.service
    before = {h.source_id for h in obs.telemetry(subject, env, access).hits}
    gone = sorted(before)[0]
    inv.delete_source(case_copy, gone)
    after = {h.source_id for h in obs.telemetry(subject, env, access).hits}
    assert after == before - {gone}
    inv.index(case_copy, force=True)  # a rebuild swaps a new file in under the same path
    assert {h.source_id for h in obs.telemetry(subject, env, access).hits} == after


def _restricted_config_twin(case_copy, captured_at: str | None) -> str:
    """A copy of the subject's config snapshot that only another group may read."""
    import shutil

    import yaml

    manifest = yaml.safe_load((case_copy / "sources.yaml").read_text())
    case = load_case(case_copy)
    src = next(s for s in manifest["sources"] if s["kind"] == "config" and s.get("service") == case.subject.service
               and s.get("environment") == case.subject.environment)
    shutil.copyfile(case_copy / src["path"], case_copy / "sources" / "restricted-config.yaml")
    twin = {**src, "id": "restricted-config", "path": "sources/restricted-config.yaml", "groups": ["finance"]}
    twin.pop("captured_at", None)
    if captured_at:
        twin["captured_at"] = captured_at
    manifest["sources"].append(twin)
    (case_copy / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return twin["id"]


def _change_lookup(case_copy, embedder, tmp_path):
    _inv, case, obs, access = _indexed_copy(case_copy, embedder, tmp_path)
    w = case.window
    return obs.changes([case.subject.service], case.subject.environment, w.change_from, w.end, access)


def test_a_restricted_config_snapshot_with_no_capture_time_hides_no_change_in_the_window(tmp_path, case_copy, embedder):
    """A change between two snapshots is dated by the later one's capture time or by the deployment
    that installed it (a change record, found on its own): an unreadable undated copy decides nothing."""
    twin = _restricted_config_twin(case_copy, None)
    assert twin not in _change_lookup(case_copy, embedder, tmp_path).denied


def test_a_restricted_config_snapshot_captured_in_the_window_may_hide_a_change(tmp_path, case_copy, embedder):
    case = load_case(case_copy)
    inside = (case.window.change_from + (case.window.end - case.window.change_from) / 2).isoformat()
    twin = _restricted_config_twin(case_copy, inside)
    assert twin in _change_lookup(case_copy, embedder, tmp_path).denied


def test_a_change_ledger_that_writes_production_is_found_for_a_case_in_prod(tmp_path, case_copy, embedder):
    """Exports name one environment several ways (`prod`, `production`, `prd`, `live`); a shared
    ledger of every environment (`environment: "*"` in the manifest) keeps each line's own word.
    A change written for `production` is the subject's; one written for `staging` is not."""
    import json

    import yaml

    case = load_case(case_copy)
    assert case.subject.environment == "prod"
    when = case.window.change_from + (case.window.end - case.window.change_from) / 2
    line = {"push_id": "PUSH-77", "change_type": "config-only", "service": case.subject.service,
            "applied_at": when.isoformat(), "changes": {"someLimit": {"from": 10, "to": 1}}}
    (case_copy / "sources" / "pushes.jsonl").write_text(
        json.dumps({**line, "environment": "production"}) + "\n"
        + json.dumps({**line, "push_id": "PUSH-78", "environment": "staging"}) + "\n")
    manifest = yaml.safe_load((case_copy / "sources.yaml").read_text())
    groups = next(s for s in manifest["sources"] if s["kind"] == "change")["groups"]
    manifest["sources"].append({"id": "pushes", "path": "sources/pushes.jsonl", "kind": "change", "format": "ledger",
                                "environment": "*", "service": "*", "groups": groups})
    (case_copy / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    found = _change_lookup(case_copy, embedder, tmp_path)
    assert "pushes" in {h.source_id for h in found.hits}
