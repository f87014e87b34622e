"""Every retrieval tool (`tools.retrieval.RetrievalTool`) keeps the same promises.

One suite, parametrised over the basic and the graph tool, both built the way a run builds
them (`CaseIndexes.prepare`) over one small case: twelve sources of the reference case, two
of which the case's principal (group `sre-oncall`) may not read — a security review (`security`)
and a cost note (`finance`). The indexes are built once per session; a rebuild and a copy with
the unreadable sources deleted (the oracle for "ranked over the readable sources only") are
built once too, beside them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from state import content_hash, stable_id
from state.case import Principal
from investigator.manifests import ManifestOnDisk
from tools.access import AccessPolicy, AccessSnapshot, known_groups, snapshot
from tools.corpus import load_manifest
from tools.retrieval import RetrievalTool, SearchQuery

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
TOOLS = ("basic", "graph")

SECURITY = "order-service-security-review-2026q2"  # groups: [security]
FINANCE = "order-platform-capacity-cost-q2"  # groups: [finance]
UNREADABLE = (SECURITY, FINANCE)
KEPT = {
    "order-service-runbook-v2", "order-service-runbook-v3", "dependency-client-config-2.3",
    "dependency-client-config-2.4", "oncall-handover-2026-04-29", SECURITY, FINANCE, "DEP-20260429-0412",
    "DEP-20260429-0409", "order-service-config-prod", "order-service-config-staging", "service-catalog",
}
QUERIES = (
    "dependency-client retry_timeout default changed",
    "order-service security review reservation_token",
    "order platform capacity cost budget q2",
    "inventory-service latency timeout",
    "rollback deployment order-service",
    "latency rose after the change",
)
"""Questions an investigation asks; the second and third are answered best by the unreadable sources, the
last names no entity (the graph tool falls back to the basic tool's ranking)."""
SHIFTED_BY_UNREADABLE_TEXT = {
    ("basic", QUERIES[0]), ("basic", QUERIES[3]), ("basic", QUERIES[5]), ("graph", QUERIES[5]),
}
"""Known bug: the BM25 channel (tools.lexical.BM25, built over every chunk of the index in BasicRetrieval and
in GraphRetrieval's fallback) takes its IDF and average length from unreadable chunks too, so for these
queries the readable chunks are ranked differently than over the readable sources alone (with the lexical
channel off, every query agrees).

Taking BM25's statistics over the readable rows only fixes this (tried at 5c857fe), but then the reference
case with a verified decoy note (tests/test_permissions.py::test_a_verified_note_naming_a_decoy_key_cannot_
confirm_it...) reads the decoy before the true changelog and confirms the decoy's key: the decoy test passes
only because retrieval happens to read both documents before the causal claim is decided. The fix waits for
the decider rule that keeps a changed element read from documents unconfirmed while a readable document
applying to the same change is unread."""


@dataclass
class Built:
    """A case folder, the path of its chunk index and both tools over it."""

    case_dir: Path
    index: Path
    tools: dict[str, RetrievalTool]

    def chunks(self) -> dict[str, tuple[str, str, str]]:
        """chunk id -> (text, environment, kind), read from the index as the read step reads it."""
        from tools.index import open_index

        con = open_index(self.index)
        try:
            rows = con.execute("SELECT chunk_id, text, environment, kind FROM chunks").fetchall()
        finally:
            con.close()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}


def _small_case(dst: Path) -> Path:
    shutil.copytree(REFERENCE, dst)
    manifest = yaml.safe_load((dst / "sources.yaml").read_text())
    manifest["sources"] = [s for s in manifest["sources"] if s["id"] in KEPT]
    (dst / "sources.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return dst


def _build(case_dir: Path, index_root: Path, embedder, delete: tuple[str, ...] = ()) -> Built:
    from investigator.config import Settings
    from investigator.loading import load_case_folder
    from investigator.runtime import Investigator

    inv = Investigator(Settings(workspace=index_root / "ws", index_root=index_root), embedder=embedder,
                       progress=lambda _m: None)
    for source_id in delete:
        assert inv.delete_source(case_dir, source_id)
    loaded = load_case_folder(case_dir, lambda _m: None)
    tools = {name: inv.indexes.prepare(loaded, name) for name in TOOLS}  # the runtime's own composition
    return Built(case_dir, inv.index_path(loaded.case, case_dir), tools)


@pytest.fixture(scope="session")
def small_case(tmp_path_factory) -> Path:
    return _small_case(tmp_path_factory.mktemp("conformance") / "case")


@pytest.fixture(scope="session")
def built(small_case, tmp_path_factory, embedder) -> Built:
    return _build(small_case, tmp_path_factory.mktemp("conformance-index"), embedder)


@pytest.fixture(scope="session")
def rebuilt_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("conformance-rebuild")


@pytest.fixture(scope="session")
def rebuilt(small_case, rebuilt_root, embedder, built) -> Built:
    """The same case folder indexed again from scratch (embeddings computed again) in another index root."""
    return _build(small_case, rebuilt_root, embedder)


@pytest.fixture(scope="session")
def readable_only(tmp_path_factory, rebuilt_root, embedder, rebuilt) -> Built:
    """A copy of the case with the unreadable sources deleted (tombstoned): nothing but what the principal
    may read is indexed. Built beside `rebuilt`, so it reuses its vectors."""
    copy = _small_case(tmp_path_factory.mktemp("conformance-readable") / "case")
    return _build(copy, rebuilt_root, embedder, delete=UNREADABLE)


@pytest.fixture(params=TOOLS)
def name(request) -> str:
    return request.param


@pytest.fixture
def tool(built, name) -> RetrievalTool:
    return built.tools[name]


def principal_of(b: Built) -> Principal:
    from state.case import load_case

    return load_case(b.case_dir).principal


def _principal_access(b: Built) -> AccessSnapshot:
    """The case principal's access now, tombstones included, as a run computes it."""
    from tools.tombstones import tombstoned

    return AccessPolicy(ManifestOnDisk(b.case_dir), principal_of(b), deleted=lambda: tombstoned(b.index)).current()


def _everyone(b: Built) -> AccessSnapshot:
    """A principal in every group the manifest names (no tombstone known to it)."""
    manifest = load_manifest(b.case_dir)
    return snapshot(manifest, Principal(id="auditor", groups=tuple(sorted(known_groups(manifest)))))


def _ids(hits) -> list[str]:
    return [h.chunk_id for h in hits]


def _q(text: str, k: int = 5, **kw) -> SearchQuery:
    return SearchQuery(text=text, environment="prod", k=k, **kw)


# ----------------------------------------------------------------------------- access


def test_a_source_the_principal_cannot_read_is_never_returned(tool, built):
    everyone, principal = _everyone(built), _principal_access(built)
    reached = {h.source_id for q in QUERIES for h in tool.search(_q(q), everyone)}
    assert set(UNREADABLE) <= reached, "precondition: these queries reach the restricted sources when allowed"
    for q in QUERIES:
        assert not {h.source_id for h in tool.search(_q(q, k=100), principal)} & set(UNREADABLE), q


@pytest.mark.parametrize("query", QUERIES)
def test_top_k_of_a_restricted_principal_is_top_k_over_the_readable_sources_only(request, name, built, readable_only,
                                                                                 query):
    """An unreadable source takes no slot and moves nothing: the ranking is the one a corpus without it gives."""
    if (name, query) in SHIFTED_BY_UNREADABLE_TEXT:
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "BM25's IDF and average chunk length are computed over every chunk of the index, unreadable ones "
            "included, so text the principal may not read reorders the readable hits (see SHIFTED_BY_UNREADABLE_TEXT)")))
    restricted, oracle = _principal_access(built), _principal_access(readable_only)
    assert _ids(built.tools[name].search(_q(query), restricted)) == _ids(readable_only.tools[name].search(_q(query), oracle))


def test_a_tombstoned_source_is_never_returned(tool, built):
    principal = _principal_access(built)
    query = _q("dependency-client retry_timeout default changed", k=100)
    victim = tool.search(query, principal)[0].source_id
    gone = AccessPolicy(ManifestOnDisk(built.case_dir), principal_of(built), deleted=lambda: {victim}).current()
    for q in QUERIES:
        assert victim not in {h.source_id for h in tool.search(_q(q, k=100), gone)}, q


def test_a_deleted_source_is_gone_from_the_index_whatever_the_access(name, readable_only):
    """After `delete`, even a principal in every group, with no tombstone in its snapshot, never gets it."""
    everyone = _everyone(readable_only)
    for q in QUERIES:
        assert not {h.source_id for h in readable_only.tools[name].search(_q(q, k=100), everyone)} & set(UNREADABLE), q


# ----------------------------------------------------------------------------- provenance and ids


def test_every_hit_cites_an_exact_span_of_the_source_file_as_it_is_on_disk(tool, built):
    manifest = {s.id: s for s in load_manifest(built.case_dir).sources}
    chunks = built.chunks()
    for q in QUERIES:
        hits = tool.search(_q(q, k=10), _principal_access(built))
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1)), q
        for h in hits:
            file_text = (built.case_dir / manifest[h.source_id].path).read_text(encoding="utf-8")
            assert h.tool == tool.name
            assert h.revision == content_hash(file_text), "the revision is the hash of the file cited"
            assert 0 <= h.start < h.end <= len(file_text)
            assert file_text[h.start:h.end] == chunks[h.chunk_id][0], "the span slices the file to the chunk's text"
            assert h.chunk_id == stable_id(h.source_id, h.revision, h.start, h.end), "the id is a content hash"


def test_the_same_search_twice_gives_the_same_hits_in_the_same_order(tool, built):
    access = _principal_access(built)
    for q in QUERIES:
        assert tool.search(_q(q), access) == tool.search(_q(q), access), q


def test_ids_and_order_survive_a_rebuild_of_the_indexes(name, built, rebuilt):
    for q in QUERIES:
        before = built.tools[name].search(_q(q), _principal_access(built))
        after = rebuilt.tools[name].search(_q(q), _principal_access(rebuilt))
        assert _ids(before) == _ids(after), q
        assert [h.score for h in before] == pytest.approx([h.score for h in after], abs=1e-4), q


# ----------------------------------------------------------------------------- queries and k


def _candidates(tool: RetrievalTool, access: AccessSnapshot) -> int:
    """How many chunks the principal could be given in prod (a k larger than the corpus returns them all)."""
    return len(tool.search(_q("order-service", k=10_000), access))


@pytest.mark.parametrize("text", ["", "   \n\t "], ids=["empty", "whitespace"])
def test_an_empty_or_blank_query_is_answered_like_any_other(tool, built, text):
    """Pinned current behaviour (the protocol says nothing of it): no error, up to k readable hits, the same
    every time. Not an empty list: a blank query still ranks by the dense channel alone."""
    access = _principal_access(built)
    hits = tool.search(_q(text, k=4), access)
    assert len(hits) == 4
    assert all(access.can_read(h.source_id) for h in hits)
    assert tool.search(_q(text, k=4), access) == hits


def test_a_200_kb_query_returns_at_most_k_readable_hits(tool, built):
    access = _principal_access(built)
    huge = ("order-service dependency-client retry_timeout reservation_token budget " * 3000)[:200_000]
    hits = tool.search(_q(huge, k=5), access)
    assert 0 < len(hits) <= 5
    assert all(access.can_read(h.source_id) for h in hits)


@pytest.mark.parametrize("k", [0, 1, 3, 7, 10_000])
def test_k_bounds_the_hits_and_unreadable_chunks_take_no_slot(tool, built, k):
    access = _principal_access(built)
    n = _candidates(tool, access)
    assert 7 < n < 10_000, "precondition: the case has more readable prod chunks than the small k's"
    hits = tool.search(_q("order-service security review budget", k=k), access)
    assert len(hits) == min(k, n)
    assert len({h.chunk_id for h in hits}) == len(hits), "no chunk twice"


def test_a_negative_k_returns_no_hit(tool, built):
    assert tool.search(_q("order-service", k=-1), _principal_access(built)) == []


# ----------------------------------------------------------------------------- hard filters (SearchQuery)


def test_only_chunks_of_the_query_environment_or_every_environment_are_returned(tool, built):
    chunks = built.chunks()
    for env in ("prod", "staging"):
        hits = tool.search(SearchQuery(text="order-service config timeout", environment=env, k=100),
                           _principal_access(built))
        assert hits and {chunks[h.chunk_id][1] for h in hits} <= {env, "*"}, env


def test_only_the_asked_kinds_are_returned(tool, built):
    chunks = built.chunks()
    hits = tool.search(_q("order-service timeout", k=100, kinds=("runbook", "change")), _principal_access(built))
    assert hits and {chunks[h.chunk_id][2] for h in hits} <= {"runbook", "change"}


def test_excluded_chunks_are_not_returned_again(tool, built):
    access = _principal_access(built)
    first = tool.search(_q(QUERIES[0], k=3), access)
    again = tool.search(_q(QUERIES[0], k=3, exclude=tuple(_ids(first))), access)
    assert len(again) == 3 and not set(_ids(again)) & set(_ids(first))
