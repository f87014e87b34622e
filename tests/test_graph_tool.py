"""The graph retrieval tool over a real graphrag index of the reference case.

One index and one graph per module (graphrag's build takes seconds); the delete test
works on a copy of the index and builds its own graph.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import networkx as nx
import pytest
import yaml

from state.case import Principal
from tools.access import AccessSnapshot, snapshot
from tools.corpus import load_manifest, load_sources
from tools.entities import EntityExtractor
from tools.retrieval import SearchQuery

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
RESTRICTED = "order-service-security-review-2026q2"
CANARY = "CANARY-7Q2X-ORDER-SEC"
RESTRICTED_MARKERS = (CANARY, "SR-0419", "reservation_token", "stock_adjustments", "m.okafor")
STAGING_ONLY = ("inventory_slow_ms",)  # named only by the staging config


@pytest.fixture(scope="module")
def index_path(tmp_path_factory, embedder) -> Path:
    from tools.index import build_index

    path = tmp_path_factory.mktemp("graph-index") / "basic.duckdb"
    build_index(REFERENCE, path, embedder)
    return path


@pytest.fixture(scope="module")
def extractor() -> EntityExtractor:
    return EntityExtractor.from_sources(load_sources(REFERENCE))


@pytest.fixture(scope="module")
def built(index_path, tmp_path_factory, embedder, extractor):
    from tools.graph import build_case_graph

    graph_dir = tmp_path_factory.mktemp("graph") / "graph"
    info = build_case_graph(index_path, graph_dir, embedder, extractor)
    return graph_dir, info


@pytest.fixture(scope="module")
def tool(index_path, built, embedder, extractor):
    from tools.graph import GraphRetrieval

    return GraphRetrieval(index_path, built[0], embedder, extractor)


@pytest.fixture(scope="module")
def access() -> AccessSnapshot:
    principal = Principal.model_validate(yaml.safe_load((REFERENCE / "case.yaml").read_text())["principal"])
    return snapshot(load_manifest(REFERENCE), principal)


@pytest.fixture(scope="module")
def security_access() -> AccessSnapshot:
    return snapshot(load_manifest(REFERENCE), Principal(id="sec-reviewer", groups=("sre-oncall", "security")))


@pytest.fixture(scope="module")
def sources():
    return {d.id: d for d in load_sources(REFERENCE)}


def _text(tool, chunk_id: str) -> str:
    return tool.table.texts[tool.table.position[chunk_id]]


def _env(tool, chunk_id: str) -> str:
    return str(tool.table.envs[tool.table.position[chunk_id]])


# ----------------------------------------------------------------------------- build


def test_build_records_figures_and_the_index_it_came_from(index_path, built, tool):
    import pandas as pd

    from tools.graph import graph_fingerprint, graph_is_fresh
    from tools.index import index_fingerprint

    graph_dir, info = built
    assert info.chunks == len(tool.table.ids) and info.documents == info.chunks
    assert info.row_counts["text_units"] == info.chunks
    assert info.row_counts["entities"] > 10 and info.row_counts["community_reports"] > 0
    assert info.wall_seconds > 0 and info.output_bytes > 0 and info.peak_rss_mib > 0
    assert graph_fingerprint(graph_dir) == index_fingerprint(index_path) == info.fingerprint
    assert graph_is_fresh(index_path, graph_dir)
    units = pd.read_parquet(graph_dir / "text_units.parquet", columns=["document_id"])
    assert sorted(units["document_id"]) == sorted(tool.table.ids)  # one chunk = one text unit, our ids


def test_graph_entities_are_the_domain_extractors_names(built, tool, extractor):
    import pandas as pd

    graph_dir, _ = built
    units = pd.read_parquet(graph_dir / "text_units.parquet", columns=["document_id", "entity_ids"])
    ents = pd.read_parquet(graph_dir / "entities.parquet", columns=["id", "title"])
    title = dict(zip(ents["id"], ents["title"]))
    for doc, ids in zip(units["document_id"], units["entity_ids"]):
        assert {title[i] for i in (ids if ids is not None else [])} == set(extractor.names(_text(tool, doc)))


# ----------------------------------------------------------------------------- ranking


def test_a_dependency_client_query_finds_the_2_4_doc_that_names_retry_timeout(tool, access, sources):
    q = SearchQuery(text="dependency-client retry timeout default changed", environment="prod",
                    seeds=("dependency-client",), k=5)
    hits = tool.search(q, access)
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert {h.tool for h in hits} == {"graph"} and {h.channel for h in hits} == {"ppr"}
    assert any(h.source_id == "dependency-client-config-2.4" and "retry_timeout" in _text(tool, h.chunk_id)
               for h in hits)
    for h in hits:  # spans and revisions come from the chunk index and slice back to the source
        doc = sources[h.source_id]
        assert doc.text[h.start:h.end] == _text(tool, h.chunk_id) and h.revision == doc.revision


def test_the_walk_reaches_a_chunk_two_hops_from_its_seed(tool, access, extractor):
    q = SearchQuery(text="why did the latency rise", environment="prod", seeds=("order-service",),
                    kinds=("doc",), k=3)
    hits = tool.search(q, access)
    assert hits and hits[0].channel == "ppr"
    top = _text(tool, hits[0].chunk_id)
    assert hits[0].source_id.startswith("dependency-client-config")
    assert "order-service" not in extractor.names(top)  # not one hop: no shared entity with the seed
    # in the walk graph the hit is two chunk-hops away: seed -> chunk -> entity -> hit
    g = tool.walk_graph(q, access)
    path = nx.shortest_path(g, ("entity", "order-service"), ("chunk", hits[0].chunk_id))
    assert len(path) == 4  # entity, chunk, entity, chunk
    middle = path[2][1]
    bridges = {b.entity: b for b in tool.bridge_entities(q, access)}
    assert bridges[middle].hops == 1 and bridges[middle].seed == "order-service"
    assert middle in extractor.names(top) or middle == tool.subjects[tool.table.position[hits[0].chunk_id]]
    for b in bridges.values():  # every hop is read back from chunks naming both of its ends
        assert len(b.path) == b.hops
        for hop in b.path:
            assert hop.chunk_ids
            for cid in hop.chunk_ids:
                names = extractor.names(_text(tool, cid))
                assert hop.source in names and hop.target in names


def test_no_linked_seed_falls_back_to_the_basic_ranking_and_filters_still_hold(tool, access):
    q = SearchQuery(text="how to roll back a bad release safely", environment="prod", k=4)
    hits = tool.search(q, access)
    assert len(hits) == 4 and {h.channel for h in hits} == {"fallback"}
    first = tool.search(SearchQuery(text="dependency-client retry", environment="prod",
                                    seeds=("dependency-client",), kinds=("doc", "runbook"), k=5), access)
    excl = tuple(h.chunk_id for h in first[:2])
    again = tool.search(SearchQuery(text="dependency-client retry", environment="prod",
                                    seeds=("dependency-client",), kinds=("doc", "runbook"), exclude=excl, k=5),
                        access)
    assert not {h.chunk_id for h in again} & set(excl)
    for h in first + again:
        pos = tool.table.position[h.chunk_id]
        assert tool.table.kinds[pos] in ("doc", "runbook") and _env(tool, h.chunk_id) in ("prod", "*")
        assert access.can_read(h.source_id)


# ----------------------------------------------------------------------------- access


QUERIES = [
    SearchQuery(text="security review of the reservation call path", environment="prod", k=8),
    SearchQuery(text="reservation token in upstream URL", environment="prod", seeds=("reservation_token",), k=8),
    SearchQuery(text="service account write access", environment="prod", seeds=("stock_adjustments",), k=8),
    SearchQuery(text="order-service latency", environment="prod", seeds=("order-service",), k=8),
    SearchQuery(text="dependency-client 2.4.0", environment="prod", seeds=("dependency-client",),
                kinds=("note",), k=8),
]


def _restricted_leaks(tool, acc) -> list[str]:
    leaks = []
    for q in QUERIES:
        for h in tool.search(q, acc):
            if h.source_id == RESTRICTED or CANARY in _text(tool, h.chunk_id):
                leaks.append(f"hit {h.chunk_id}")
        for b in tool.bridge_entities(q, acc):
            if any(m in b.entity for m in RESTRICTED_MARKERS):
                leaks.append(f"bridge entity {b.entity}")
            for hop in b.path:
                if RESTRICTED in hop.source_ids:
                    leaks.append(f"bridge hop {hop.source}->{hop.target}")
        g = tool.walk_graph(q, acc)
        leaks += [f"node {n}" for n, d in g.nodes(data=True) if d.get("source_id") == RESTRICTED]
        leaks += [f"node {n}" for n in g.nodes if n[0] == "entity" and n[1] in RESTRICTED_MARKERS]
    for q in (QUERIES[3], SearchQuery(text="everything", environment="prod")):
        cc = tool.community_context(q, acc, all_communities=True)
        leaks += [f"community text {m}" for m in RESTRICTED_MARKERS if m in cc.text]
        leaks += [f"community {v.community}" for v in cc.reports if RESTRICTED in v.source_ids
                  or any(m in v.full_content for m in RESTRICTED_MARKERS)]
    return leaks


def test_the_principal_never_sees_the_security_review_through_the_graph(tool, access, security_access):
    assert not access.can_read(RESTRICTED)
    assert _restricted_leaks(tool, access) == []
    # the same checks find it for a reader of the security group: the filter is what hides it
    assert security_access.can_read(RESTRICTED)
    hits = tool.search(QUERIES[1], security_access)
    assert hits[0].source_id == RESTRICTED and hits[0].channel == "ppr"
    assert len(_restricted_leaks(tool, security_access)) > 3


def test_an_entity_seen_only_in_unreadable_text_is_no_node(tool, access, security_access):
    q = QUERIES[2]
    assert ("entity", "stock_adjustments") not in tool.walk_graph(q, access)
    assert {h.channel for h in tool.search(q, access)} == {"fallback"}
    assert tool.bridge_entities(q, access) == []
    assert ("entity", "stock_adjustments") in tool.walk_graph(q, security_access)


# ----------------------------------------------------------------------------- scope


def test_a_staging_only_entity_never_bridges_into_a_prod_query(tool, access):
    for name in STAGING_ONLY:
        q = SearchQuery(text=f"{name} setting", environment="prod", seeds=(name,), k=5)
        hits = tool.search(q, access)
        assert {h.channel for h in hits} == {"fallback"}
        assert all(_env(tool, h.chunk_id) in ("prod", "*") for h in hits)
        assert tool.bridge_entities(q, access) == []
        assert ("entity", name) not in tool.walk_graph(q, access)
    # a prod walk from the subject never passes through staging text
    q = SearchQuery(text="latency", environment="prod", seeds=("order-service",), k=10)
    bridges = tool.bridge_entities(q, access)
    assert bridges and not {b.entity for b in bridges} & set(STAGING_ONLY)
    for b in bridges:
        for hop in b.path:
            assert all(_env(tool, c) in ("prod", "*") for c in hop.chunk_ids), (b.entity, hop)
    assert all(_env(tool, h.chunk_id) in ("prod", "*") for h in tool.search(q, access))
    # the same seed in a staging query does link (so the checks above can fail)
    staged = tool.search(SearchQuery(text="slow inventory", environment="staging", seeds=(STAGING_ONLY[0],), k=3),
                         access)
    assert staged[0].channel == "ppr" and staged[0].source_id == "order-service-config-staging"


# ----------------------------------------------------------------------------- deletion


def test_a_tombstoned_source_is_recalled_by_neither_tool(index_path, built, tmp_path, embedder, extractor, access):
    from tools.basic import BasicRetrieval
    from tools.graph import GraphRetrieval, build_case_graph, graph_is_fresh
    from tools.index import tombstone

    gone = "dependency-client-config-2.4"
    path, graph_dir = tmp_path / "basic.duckdb", tmp_path / "graph"
    shutil.copy(index_path, path)  # private copies of the module's index and graph
    shutil.copytree(built[0], graph_dir)
    q = SearchQuery(text="dependency-client 2.4.0 changed the default retry_timeout to 2000 ms per attempt",
                    environment="prod", seeds=("dependency-client", "retry_timeout"), kinds=("doc",), k=3)

    def recalled() -> dict[str, bool]:
        graph = GraphRetrieval(path, graph_dir, embedder, extractor)
        basic = BasicRetrieval(path, embedder)
        return {"graph": any(h.source_id == gone for h in graph.search(q, access)),
                "basic": any(h.source_id == gone for h in basic.search(q, access)),
                "bridges": any(gone in hop.source_ids for b in graph.bridge_entities(q, access) for hop in b.path),
                "communities": any(gone in v.source_ids
                                   for v in graph.community_context(q, access, all_communities=True).reports)}

    assert recalled() == {"graph": True, "basic": True, "bridges": True, "communities": True}
    tombstone(path, gone)
    assert not graph_is_fresh(path, graph_dir)  # the chunk set changed: the graph is stale
    assert not any(recalled().values())  # and even the stale graph never recalls it
    build_case_graph(path, graph_dir, embedder, extractor)
    assert graph_is_fresh(path, graph_dir)
    assert not any(recalled().values())
    import pandas as pd

    units = pd.read_parquet(graph_dir / "text_units.parquet", columns=["text"])
    assert not any("In 2.4.0 the default `retry_timeout` changed" in t for t in units["text"])


def test_a_missing_graph_is_an_index_error_not_an_empty_answer(index_path, tmp_path, embedder, extractor):
    from state.errors import IndexMissing
    from tools.graph import GraphRetrieval, graph_fingerprint, graph_is_fresh

    assert graph_fingerprint(tmp_path / "none") is None and not graph_is_fresh(index_path, tmp_path / "none")
    with pytest.raises(IndexMissing):
        GraphRetrieval(index_path, tmp_path / "none", embedder, extractor)


def test_the_sparse_power_iteration_is_networkx_personalized_pagerank(tool, access):
    q = SearchQuery(text="inventory-service timeouts", environment="prod", seeds=("dependency-client",), k=5)
    scope = tool._scope(q, access)
    seeds = tool.seeds(q, scope)
    assert seeds == ["dependency-client", "inventory-service"]
    xc, xe = tool._ppr(scope, seeds)
    g = tool.walk_graph(q, access)
    support = {s: sum(1 for n in g[("entity", s)] if g[("entity", s)][n]["mention"]) for s in seeds}
    ref = nx.pagerank(g, alpha=tool.damping, weight="weight", tol=1e-12, max_iter=1000,
                      personalization={("entity", s): 1 / support[s] for s in seeds})
    for i, r in enumerate(scope.rows.tolist()):
        assert xc[i] == pytest.approx(ref[("chunk", tool.table.ids[r])], abs=1e-5)
    for j, e in enumerate(scope.ents.tolist()):
        assert xe[j] == pytest.approx(ref[("entity", tool.entity_titles[e])], abs=1e-5)


def test_hub_damping_weighs_a_mention_down_by_how_many_scope_chunks_name_the_entity(
        index_path, built, embedder, extractor, tool, access):
    from tools.graph import GraphRetrieval

    damped = GraphRetrieval(index_path, built[0], embedder, extractor, hub_damping=0.5)
    q = SearchQuery(text="inventory-service timeouts", environment="prod", seeds=("dependency-client",), k=5)
    plain_g, damped_g = tool.walk_graph(q, access), damped.walk_graph(q, access)
    for u, v, d in plain_g.edges(data=True):
        entity = u if u[0] == "entity" else v
        support = sum(1 for n in plain_g[entity] if plain_g[entity][n]["mention"])
        assert damped_g[u][v]["weight"] == pytest.approx(d["weight"] * support ** -0.5)
    # still personalized PageRank, on the damped weights
    scope = damped._scope(q, access)
    seeds = damped.seeds(q, scope)
    xc, _ = damped._ppr(scope, seeds)
    ref = nx.pagerank(damped_g, alpha=damped.damping, weight="weight", tol=1e-12, max_iter=1000,
                      personalization={("entity", s): 1 / scope.support[scope.col(damped.entity_index[s])]
                                       for s in seeds})
    for i, r in enumerate(scope.rows.tolist()):
        assert xc[i] == pytest.approx(ref[("chunk", damped.table.ids[r])], abs=1e-5)


def test_a_real_llm_can_write_the_community_reports_instead(tmp_path):
    """The report model is swappable: a scripted fake stands in for an OpenAI-compatible LLM."""
    import json as _json

    from graphrag_llm.completion import LLMCompletion, register_completion
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.utils import create_completion_response

    from state.case import load_case
    from tools.embedding import MiniLMEmbedder
    from tools.entities import EntityExtractor
    from tools.graph import build_case_graph, load_graph_tables
    from tools.index import build_index

    prompts: list[str] = []

    class ScriptedReports(LLMCompletion):
        def __init__(self, *, model_config, tokenizer, metrics_store, **_):
            self._tokenizer, self._metrics_store = tokenizer, metrics_store

        @property
        def metrics_store(self):
            return self._metrics_store

        @property
        def tokenizer(self):
            return self._tokenizer

        def completion(self, /, **kwargs):
            from graphrag.index.operations.summarize_communities.community_reports_extractor import (
                CommunityReportResponse,
            )
            prompts.append(str(kwargs["messages"]))
            report = CommunityReportResponse(title="SCRIPTED REPORT", summary="scripted", findings=[],
                                             rating=1.0, rating_explanation="scripted")
            resp = create_completion_response(_json.dumps(report.model_dump()))
            resp.formatted_response = report
            return resp

        async def completion_async(self, /, **kwargs):
            return self.completion(**kwargs)

    register_completion("scripted-reports", ScriptedReports)
    emb = MiniLMEmbedder()
    case_dir = ROOT / "cases" / "ALR-20260429-017"
    idx = tmp_path / "i.duckdb"
    build_index(case_dir, idx, emb)
    from tools.corpus import load_sources
    extractor = EntityExtractor.from_sources(load_sources(case_dir))
    load_case(case_dir)
    build_case_graph(idx, tmp_path / "g", emb, extractor,
                     report_model=ModelConfig(type="scripted-reports", model_provider="local", model="scripted"))
    reports = load_graph_tables(tmp_path / "g").community_reports
    assert len(reports) > 0 and set(reports["title"]) == {"SCRIPTED REPORT"}
    assert prompts and "community" in prompts[0].lower(), "the real LLM gets graphrag's own report prompt"


# ----------------------------------------------------------------------------- encyclopaedic text


@pytest.fixture(scope="module")
def wiki(tmp_path_factory, embedder):
    """The multi-hop fixture as a graph with the general-text extractor composed with the incident one."""
    from investigator.bench import bench_analyzer, passages_as_chunks
    from tools.benchdata import load_dataset
    from tools.graph import GraphRetrieval, build_case_graph
    from tools.index import build_chunk_index

    ds = load_dataset(ROOT / "tests" / "fixtures" / "multihop_small.json")
    root = tmp_path_factory.mktemp("wiki")
    chunks = passages_as_chunks(ds)
    build_chunk_index(chunks, root / "i.duckdb", embedder, "wiki")
    analyzer = bench_analyzer(ds)
    info = build_case_graph(root / "i.duckdb", root / "g", embedder, analyzer)
    tool = GraphRetrieval(root / "i.duckdb", root / "g", embedder, analyzer)
    access = AccessSnapshot(groups={c.source_id: ("g",) for c in chunks}, principal_groups=("g",))
    return ds, analyzer, info, tool, access, root / "g"


def test_a_title_cased_question_seeds_the_walk_and_reaches_the_second_hop(wiki):
    ds, analyzer, _info, tool, access, _g = wiki
    q = SearchQuery(text="In Which Town Was The Designer Of The Veltra Bridge Born?", environment="*", k=3)
    assert tool.seeds(q, tool._scope(q, access)) == ["veltra bridge"]
    hits = tool.search(q, access)
    assert {h.channel for h in hits} == {"ppr"}
    assert {"veltra-bridge", "maren-holt"} <= {h.source_id for h in hits[:2]}  # both hops in the top two


def test_the_build_embeds_nothing_and_relates_a_passage_subject_to_what_it_mentions(wiki):
    from tools.graph import load_graph_tables

    _ds, analyzer, info, tool, _access, graph_dir = wiki
    assert info.embedded_texts == 0  # chunk vectors come from the index; nothing else is embedded
    assert not (graph_dir / "lancedb").exists()
    t = load_graph_tables(graph_dir)
    subject = {u: analyzer.canonical(title) for u, title in zip(
        t.text_units["id"], t.text_units["document_id"].map(dict(zip(t.documents["id"], t.documents["title"]))))}
    assert len(t.relationships) > 0
    for r in t.relationships.itertuples():
        for u in r.text_unit_ids:  # every edge is a star edge of its passage's subject
            assert subject[u] in (r.source, r.target)


def test_a_question_with_no_known_entity_gets_the_basic_ranking(wiki):
    _ds, _analyzer, _info, tool, access, _g = wiki
    q = SearchQuery(text="which structural engineer studied chemistry", environment="*", k=4)
    hits = tool.search(q, access)
    assert len(hits) == 4 and {h.channel for h in hits} == {"fallback"}


def test_negative_pmi_weights_never_reach_the_community_detection():
    """graphrag's PMI weights can be negative; graspologic's Leiden segfaults on them (seen on a generated case)."""
    import pandas as pd

    from tools.graph._extract import MIN_WEIGHT, positive_weights

    rel = pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"], "weight": [-0.04, 0.2], "text_unit_ids": [["u"], ["v"]]})
    out = positive_weights(rel)
    assert list(out["weight"]) == [MIN_WEIGHT, 0.2] and list(rel["weight"]) == [-0.04, 0.2]
