"""Structured lookups: what a lookup returns, and what it says it could not read.

A denied structured source (a log, a catalog, a change record) is *needed*: the run stops or
pauses on it. A sentence in a document is found like any document text, so an unreadable
document never stops a run by itself (docs/deciding.md §8).
"""

from __future__ import annotations

from investigator.config import Settings
from investigator.runtime import Investigator
from state.case import load_case
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
    access = AccessPolicy(REFERENCE, case.principal).current()
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
    wide = AccessPolicy(REFERENCE, case.principal, extra_groups=everyone).current()
    narrow = AccessPolicy(REFERENCE, case.principal).current()
    subject = case.subject.service
    wide_ids = {h.source_id for h in obs.relations(subject, case.subject.environment, wide).hits}
    narrow_ids = {h.source_id for h in obs.relations(subject, case.subject.environment, narrow).hits}
    assert narrow_ids < wide_ids, "a readable document's stated relations are found"


def test_a_lookup_after_a_tombstone_or_a_rebuild_sees_the_index_as_it_is_now(tmp_path, case_copy, embedder):
    """Lookups share one read-only connection per index; a delete or a rebuild is never hidden by it."""
    inv = Investigator(Settings(workspace=tmp_path / "ws"), embedder=embedder, progress=lambda _m: None)
    inv.index(case_copy)
    case = load_case(case_copy)
    obs = Observations(inv.index_path(case, case_copy))
    access = AccessPolicy(case_copy, case.principal).current()
    env, subject = case.subject.environment, case.subject.service
    before = {h.source_id for h in obs.telemetry(subject, env, access).hits}
    gone = sorted(before)[0]
    inv.delete_source(case_copy, gone)
    after = {h.source_id for h in obs.telemetry(subject, env, access).hits}
    assert after == before - {gone}
    inv.index(case_copy, force=True)  # a rebuild swaps a new file in under the same path
    assert {h.source_id for h in obs.telemetry(subject, env, access).hits} == after
