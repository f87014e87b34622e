"""Build the graph index of a case from the shared DuckDB chunk index.

``build_case_graph(index_path, graph_dir, embedder, extractor)`` feeds every chunk of
the ``chunks`` table (tombstoned sources are already gone from it) to graphrag as one
document whose id is the chunk id, with the product's deterministic entity extractor
as the analyzer and the product's embedder for the vectors graphrag stores. Chunk
vectors already computed for the DuckDB index are reused (same embedder, same text).

The graph folder gets a manifest, ``investigator_graph.json``, naming the index it was
built from: the index's ``meta.fingerprint`` plus a digest of its chunk ids (which
changes on a tombstone even when the index meta does not). ``graph_fingerprint``
reads the first back, ``graph_is_fresh`` compares both with the index as it is now.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import time
import uuid
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from state import Frozen
from tools.embedding import Embedder
from tools.index import open_index

from .analyzer import EntityAnalyzer, analyzer_digest, canonical

CASE_MANIFEST = "investigator_graph.json"
GRAPH_MANIFEST = "graph_index.json"  # the wrapper's own manifest (see builder.py)
FORMAT = 1
Progress = Callable[[str], None]


class GraphBuildInfo(Frozen):
    """What one graph build produced, and from which index."""

    graph_dir: str
    index_path: str
    fingerprint: str | None
    """``meta.fingerprint`` of the DuckDB index the graph was built from."""
    chunks_digest: str
    """Digest of the sorted chunk ids fed to graphrag (changes with every tombstone)."""
    extractor_digest: str
    embedder: str
    dim: int
    chunks: int
    documents: int
    """graphrag documents: chunks minus merged duplicate texts."""
    merged_duplicates: tuple[tuple[str, str], ...] = ()
    """``(dropped chunk id, kept chunk id)`` for chunks with identical text."""
    row_counts: dict[str, int] = {}
    output_bytes: int = 0
    wall_seconds: float = 0.0
    graphrag_seconds: float = 0.0
    embedded_texts: int = 0
    """Texts embedded during the build (chunk texts come from the index's vectors)."""
    peak_rss_mib: float = 0.0
    """Peak resident set of the whole process so far (``ru_maxrss``), after the build."""
    graphrag_version: str = ""


def chunks_digest(chunk_ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(chunk_ids)).encode("utf-8")).hexdigest()[:16]


def extractor_digest(extractor: EntityAnalyzer) -> str:
    return analyzer_digest(extractor)


def _read_index(index_path: Path) -> tuple[list[tuple], str | None, str | None]:
    con = open_index(index_path)
    try:
        rows = con.execute(
            "SELECT chunk_id, kind, title, text, vec FROM chunks ORDER BY chunk_id"
        ).fetchall()
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()
    return rows, meta.get("fingerprint"), meta.get("embedder")


def _current_state(index_path: Path) -> tuple[str | None, str] | None:
    """(meta fingerprint, chunk-id digest) of the index now; None when there is none."""
    if not Path(index_path).exists():
        return None
    try:
        con = duckdb.connect(str(index_path), read_only=True)
    except duckdb.Error:
        return None
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        ids = [r[0] for r in con.execute("SELECT chunk_id FROM chunks").fetchall()]
    except duckdb.Error:
        return None
    finally:
        con.close()
    return (row[0] if row else None), chunks_digest(ids)


def build_case_graph(
    index_path: Path,
    graph_dir: Path,
    embedder: Embedder,
    extractor: EntityAnalyzer,
    progress: Progress = lambda _m: None,
    report_model: Any = None,
) -> GraphBuildInfo:
    """(Re)build the graph at ``graph_dir`` from the chunks of the index at ``index_path``.

    ``report_model`` (a graphrag ``ModelConfig``) swaps the offline extractive report
    writer for a real LLM; see ``tools.graph._models.llm_report_model``.

    The previous graph folder is replaced as a whole (nothing of a deleted source
    survives). Blocking; one build at a time per process (graphrag's loggers and
    workflow registry are process-wide).
    """
    t0 = time.perf_counter()
    index_path, graph_dir = Path(index_path), Path(graph_dir)
    rows, fingerprint, index_embedder = _read_index(index_path)
    rows = [r for r in rows if r[1] != "metric"]  # metric series are not text
    ids = [r[0] for r in rows]
    progress(f"graph: {len(rows)} chunks from {index_path.name}")

    cache: dict[str, np.ndarray] = {}
    if index_embedder == embedder.name:
        cache = {r[3]: np.asarray(r[4], dtype=np.float32) for r in rows if r[4] is not None}
    embedded = 0

    def embed(texts: list[str]) -> list[np.ndarray]:
        nonlocal embedded
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
            embedded += len(todo)
            for t, v in zip(todo, embedder.embed(todo), strict=True):
                cache[t] = np.asarray(v, dtype=np.float32)
        return [cache[t] for t in texts]

    base = dict(
        graph_dir=str(graph_dir.resolve()), index_path=str(index_path.resolve()), fingerprint=fingerprint,
        chunks_digest=chunks_digest(ids), extractor_digest=extractor_digest(extractor),
        embedder=embedder.name, dim=embedder.dim, chunks=len(rows), graphrag_version=version("graphrag"),
    )
    if rows:
        from .builder import build_graph_index

        progress(f"graph: running graphrag (fast pipeline, {embedder.name}, domain extractor)")
        stats = build_graph_index(
            [{"id": r[0], "title": r[2] or "", "text": r[3]} for r in rows],
            graph_dir, embed=embed, dim=embedder.dim, analyze=extractor.names, report_model=report_model,
            subject=lambda title: _subject(extractor, title),
        )
        info = GraphBuildInfo(
            **base, documents=len(rows) - len(stats.merged_duplicates),
            merged_duplicates=stats.merged_duplicates, row_counts=stats.row_counts,
            graphrag_seconds=stats.wall_seconds, embedded_texts=embedded, wall_seconds=0.0,
        )
    else:  # an index with no text chunks: an empty graph, still fresh for this index
        _empty_graph(graph_dir, embedder.dim)
        info = GraphBuildInfo(**base, documents=0)
    manifest = graph_dir / CASE_MANIFEST
    tmp = manifest.with_name(f".{CASE_MANIFEST}.{uuid.uuid4().hex[:8]}")
    info = info.model_copy(update={
        "output_bytes": sum(p.stat().st_size for p in graph_dir.rglob("*") if p.is_file()),
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    })
    tmp.write_text(json.dumps({"format": FORMAT, **info.model_dump(mode="json")}, indent=2), encoding="utf-8")
    tmp.replace(manifest)
    progress(f"graph built: {info.row_counts.get('entities', 0)} entities, "
             f"{info.row_counts.get('communities', 0)} communities, {info.wall_seconds}s")
    return info


def _subject(extractor: EntityAnalyzer, title: str) -> str | None:
    """The entity a chunk's title names as its subject, when the analyzer has one for it."""
    if not title:
        return None
    name = canonical(extractor, title)
    return name if name in extractor.names(title) else None


def _empty_graph(graph_dir: Path, dim: int) -> None:
    if graph_dir.exists():
        if any(graph_dir.iterdir()) and not (graph_dir / GRAPH_MANIFEST).exists():
            raise FileExistsError(f"{graph_dir} is not empty and holds no {GRAPH_MANIFEST}: not replacing it")
        shutil.rmtree(graph_dir)
    graph_dir.mkdir(parents=True)
    (graph_dir / GRAPH_MANIFEST).write_text(json.dumps({"dim": dim, "documents": 0}), encoding="utf-8")


def read_manifest(graph_dir: Path) -> dict | None:
    path = Path(graph_dir) / CASE_MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if data.get("format") == FORMAT else None


def graph_fingerprint(graph_dir: Path) -> str | None:
    """The index fingerprint the graph at ``graph_dir`` was built from; None if no graph."""
    data = read_manifest(graph_dir)
    return data.get("fingerprint") if data else None


def graph_is_fresh(index_path: Path, graph_dir: Path, embedder: Embedder | None = None,
                   extractor: EntityAnalyzer | None = None) -> bool:
    """True when the graph was built from exactly the index's current chunks (and, when
    given, with this embedder and an extractor of the same gazetteer)."""
    data = read_manifest(graph_dir)
    state = _current_state(index_path)
    if data is None or state is None:
        return False
    if (data.get("fingerprint"), data.get("chunks_digest")) != state:
        return False
    if embedder is not None and (data.get("embedder"), data.get("dim")) != (embedder.name, embedder.dim):
        return False
    return extractor is None or data.get("extractor_digest") == extractor_digest(extractor)
