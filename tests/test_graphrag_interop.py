"""Our GraphRAG index opens in graphrag's own tools, and a graphrag output folder can be the graph tool's index.

A full graphrag query needs a chat model (global search) and LanceDB vectors (local, DRIFT,
basic), neither of which exists offline: these tests stop at graphrag loading the settings,
reading the tables with its own readers, and assembling its global search and its context.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from state.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"
TABLES = ("documents", "text_units", "entities", "relationships", "communities", "community_reports")


def _fresh_root(index_root: Path, dst: Path) -> Path:
    """A private index root holding a copy of the session's chunk index (no graph)."""
    for case in index_root.iterdir():
        if (case / "basic.duckdb").exists():
            (dst / case.name).mkdir(parents=True)
            shutil.copy2(case / "basic.duckdb", dst / case.name / "basic.duckdb")
    return dst


@pytest.fixture(scope="module")
def built(tmp_path_factory, index_root, embedder):
    """The reference case's graph, built by our builder."""
    from investigator.config import Settings
    from investigator.runtime import Investigator

    root = _fresh_root(index_root, tmp_path_factory.mktemp("graph-root"))
    inv = Investigator(Settings(workspace=root / "ws", index_root=root), embedder=embedder, progress=lambda _m: None)
    info = inv.index_graph(REFERENCE)
    return Path(info.graph_dir), info


def test_graphrags_own_loader_and_table_readers_open_our_index(built, monkeypatch, tmp_path):
    from graphrag.config.load_config import load_config
    from graphrag.data_model.data_reader import DataReader
    from graphrag_storage import create_storage
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    graph_dir, info = built
    assert (graph_dir / "settings.yaml").is_file()
    moved = tmp_path / "elsewhere"
    shutil.copytree(graph_dir, moved)  # relative paths: the folder opens wherever it is
    monkeypatch.chdir(tmp_path)  # graphrag's loader changes the working directory; put it back afterwards
    config = load_config(moved)
    assert Path(config.output_storage.base_dir) == moved.resolve()
    assert config.table_provider.type == "parquet", "graphrag's stock provider, not one registered by us"
    reader = DataReader(create_table_provider(config.table_provider, storage=create_storage(config.output_storage)))
    frames = {t: asyncio.run(getattr(reader, t)()) for t in TABLES}
    assert {t: len(f) for t, f in frames.items() if t in info.row_counts} == info.row_counts
    assert frames["documents"]["human_readable_id"].tolist() == list(range(len(frames["documents"])))
    assert set(frames["text_units"]["document_id"]) <= set(frames["documents"]["id"])


def test_graphrags_global_search_assembles_over_our_index_with_the_registered_models(built, embedder):
    from graphrag.query.factory import get_global_search_engine
    from graphrag.query.indexer_adapters import read_indexer_communities, read_indexer_entities, read_indexer_reports
    from graphrag_llm.embedding import create_embedding

    from tools.graph import load_graph_tables
    from tools.graph.settings import load_settings

    graph_dir, _info = built
    cwd = os.getcwd()
    config = load_settings(graph_dir, embed=embedder.embed, analyze=lambda _t: [])
    assert os.getcwd() == cwd
    model = create_embedding(config.get_embedding_model_config("default_embedding_model"))
    assert len(model.embedding(input=["order-service latency"]).embeddings[0]) == embedder.dim
    t = load_graph_tables(graph_dir)
    engine = get_global_search_engine(
        config, read_indexer_reports(t.community_reports, t.communities, None),
        read_indexer_entities(t.entities, t.communities, None),
        read_indexer_communities(t.communities, t.community_reports), response_type="one paragraph")
    context = asyncio.run(engine.context_builder.build_context(query="why is order-service slow"))
    text = "\n".join(context.context_chunks)
    assert "id|title|occurrence|summary" in text
    assert any(title in text for title in t.community_reports["title"])


def _export(graph_dir: Path, dst: Path, *, hashed_ids: bool = False) -> Path:
    """A plain graphrag output folder: the tables only (optionally graphrag-style hashed document ids)."""
    dst.mkdir(parents=True)
    for t in TABLES:
        shutil.copy2(graph_dir / f"{t}.parquet", dst / f"{t}.parquet")
    if hashed_ids:
        for t, col in (("documents", "id"), ("text_units", "document_id")):
            df = pd.read_parquet(dst / f"{t}.parquet")
            df[col] = [hashlib.sha512(v.encode()).hexdigest() for v in df[col]]
            df.to_parquet(dst / f"{t}.parquet", index=False)
    return dst


@pytest.mark.parametrize("hashed_ids", [False, True], ids=["chunk-ids", "graphrag-hashed-ids"])
def test_an_exported_graphrag_output_becomes_the_graph_tool_index(built, index_root, embedder, tmp_path, monkeypatch,
                                                                  reference_run, hashed_ids):
    from investigator.config import Settings
    from investigator.runtime import Investigator
    from tools.graph import casegraph
    from tools.graph.external import imported_from

    graph_dir, info = built
    src = _export(graph_dir, tmp_path / "my-graphrag" / "output", hashed_ids=hashed_ids)
    root = _fresh_root(index_root, tmp_path / "root")
    log: list[str] = []
    inv = Investigator(Settings(workspace=tmp_path / "ws", index_root=root), embedder=embedder, progress=log.append)
    got = inv.import_graph(REFERENCE, tmp_path / "my-graphrag")  # a graphrag project root: its output/ is found
    assert got.row_counts == info.row_counts and got.documents == info.documents
    manifest = json.loads((inv.graph_dir(inv.validate(REFERENCE), REFERENCE) / "investigator_graph.json").read_text())
    assert manifest["import"]["by_text" if hashed_ids else "by_id"] == info.row_counts["text_units"]
    assert manifest["import"]["dropped"] == 0
    assert imported_from(inv.graph_dir(inv.validate(REFERENCE), REFERENCE)) == str(src.resolve())

    def no_build(*_a, **_k):
        raise AssertionError("the imported graph was replaced by a build")

    monkeypatch.setattr(casegraph, "build_case_graph", no_build)
    monkeypatch.setattr("tools.graph.build_case_graph", no_build, raising=False)
    report = inv.start(REFERENCE, retrieval="graph").report
    assert report.retrieval == "graph" and report.stop.kind == "evidence_ready"
    _inv, base, _out = reference_run
    assert {c.id: c.verdict for c in report.claims} == {c.id: c.verdict for c in base.report.claims}
    assert not any("building the GraphRAG index" in m for m in log)


def test_a_folder_without_graphrags_tables_is_refused_naming_what_is_missing(built, tmp_path):
    from tools.graph.external import check_output

    graph_dir, _info = built
    with pytest.raises(ConfigError, match=r"--graph-from .*: not a folder"):
        check_output(tmp_path / "nope")
    src = _export(graph_dir, tmp_path / "a")
    (src / "community_reports.parquet").unlink()
    with pytest.raises(ConfigError, match=r"community_reports\.parquet missing: expected graphrag's output tables"):
        check_output(src)
    src = _export(graph_dir, tmp_path / "b")
    pd.read_parquet(src / "text_units.parquet").drop(columns=["entity_ids"]).to_parquet(src / "text_units.parquet")
    with pytest.raises(ConfigError, match=r"text_units\.parquet: column\(s\) entity_ids missing"):
        check_output(src)


def test_an_index_of_other_documents_is_refused_and_nothing_is_installed(built, index_root, tmp_path):
    graph_dir, _info = built
    src = _export(graph_dir, tmp_path / "other")
    for t, cols in (("documents", ("id", "text")), ("text_units", ("document_id", "text"))):
        df = pd.read_parquet(src / f"{t}.parquet")
        for c in cols:
            df[c] = [f"another corpus {i}" for i in range(len(df))]
        df.to_parquet(src / f"{t}.parquet", index=False)
    root = _fresh_root(index_root, tmp_path / "root")
    env = {**os.environ, "INVESTIGATOR_INDEX_ROOT": str(root)}
    out = subprocess.run([sys.executable, "-m", "investigator.cli", "--home", str(tmp_path / "ws"), "index",
                          str(REFERENCE), "--graph-from", str(src)], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=600)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        f"error: --graph-from {src}: none of its 92 text units belongs to a chunk of this case's index: expected a "
        "graphrag index built from the case's chunks (documents whose id is a chunk id, or whose text is a chunk's text)")
    assert "Traceback" not in out.stderr
    case_dir = next(root.iterdir())
    kept = sorted(p.name for p in case_dir.iterdir() if p.name != ".lock")  # the folder's build lock stays
    assert kept == ["basic.duckdb"], "no graph folder, no staging leftovers"


def test_after_a_tombstone_the_imported_graph_is_imported_again_without_the_deleted_source(built, index_root, embedder,
                                                                                            tmp_path):
    from investigator.config import Settings
    from investigator.runtime import Investigator
    from tools.graph import load_graph_tables
    from tools.graph.external import imported_from
    from tools.index import open_index

    graph_dir, _info = built
    src = _export(graph_dir, tmp_path / "exported")
    root = _fresh_root(index_root, tmp_path / "root")
    log: list[str] = []
    inv = Investigator(Settings(workspace=tmp_path / "ws", index_root=root), embedder=embedder, progress=log.append)
    inv.import_graph(REFERENCE, src)
    case = inv.validate(REFERENCE)
    con = open_index(inv.index_path(case, REFERENCE))
    try:
        source, chunks = con.execute("SELECT source_id, count(*) FROM chunks WHERE kind = 'runbook' "
                                     "GROUP BY source_id ORDER BY source_id LIMIT 1").fetchone()
    finally:
        con.close()
    inv.delete_source(REFERENCE, source)
    mine = inv.graph_dir(case, REFERENCE)
    assert imported_from(mine) == str(src.resolve()), "still the user's graph, not one built from the case"
    assert any("importing" in m and "again" in m for m in log)
    manifest = json.loads((mine / "investigator_graph.json").read_text())
    assert manifest["import"]["dropped"] == chunks
    con = open_index(inv.index_path(case, REFERENCE))
    try:
        live = {r[0] for r in con.execute("SELECT chunk_id FROM chunks").fetchall()}
    finally:
        con.close()
    assert set(load_graph_tables(mine).text_units["document_id"]) <= live
