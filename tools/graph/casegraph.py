"""Build the graph index of a case from the shared DuckDB chunk index.

``build_case_graph(index_path, graph_dir, embedder, extractor)`` feeds every chunk of
the ``chunks`` table (tombstoned sources are already gone from it) to graphrag as one
document whose id is the chunk id, with the product's deterministic entity extractor
as the analyzer and the product's embedder for the vectors graphrag stores. Chunk
vectors already computed for the DuckDB index are reused (same embedder, same text).

The graph folder gets a manifest, ``investigator_graph.json``, naming the index it was
built from: the index's ``meta.fingerprint`` plus a digest of its chunk ids (which
changes on a tombstone even when the index meta does not), and the digests of the
extractor and of the sources' readerships. ``graph_fingerprint`` reads the first back,
``graph_is_fresh`` compares them with the index and the case as they are now.

Stored summaries (community reports, entity descriptions) are made single-readership
(``single_readership``) and the manifest is written in the build folder before it is swapped
in, so a graph in place is always whole, and never stores a summary that mixes text of
sources readable by different principals.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from state import Frozen, stable_id
from state.progress import Progress, Ticker, silent
from tools.embedding import Embedder
from tools.index import open_index

from ._swap import staging_dir, swap_in
from .analyzer import EntityAnalyzer, analyzer_digest, canonical

CASE_MANIFEST = "investigator_graph.json"
GRAPH_MANIFEST = "graph_index.json"  # the wrapper's own manifest (see builder.py)
FORMAT = 2


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
    readerships_digest: str | None = None
    """Digest of the source -> readership mapping the summaries were partitioned by (None: one)."""
    reports_withheld: int = 0
    """Community reports not stored because their community spans readerships."""
    descriptions_withheld: int = 0
    """Entity descriptions left empty because the entity is named in several readerships."""


def chunks_digest(chunk_ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(chunk_ids)).encode("utf-8")).hexdigest()[:16]


def extractor_digest(extractor: EntityAnalyzer) -> str:
    return analyzer_digest(extractor)


def _read_index(index_path: Path) -> tuple[list[tuple], str | None, str | None]:
    con = open_index(index_path)
    try:
        rows = con.execute(
            "SELECT chunk_id, kind, title, text, vec, source_id FROM chunks ORDER BY chunk_id"
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


def readerships(docs: Iterable[Any]) -> dict[str, str]:
    """Source id -> its readership: the environment it is scoped to and the exact set of groups
    allowed to read it (``SourceDoc``s or manifest entries). Two sources of one readership are
    readable by exactly the same principals in exactly the same queries."""
    out: dict[str, str] = {}
    for d in docs:
        entry = getattr(d, "entry", d)
        out[str(entry.id)] = f"{entry.environment}: {', '.join(sorted(set(entry.groups)))}"
    return out


def readerships_digest(readers: Mapping[str, str] | None) -> str | None:
    return None if readers is None else stable_id(sorted(readers.items()))


def build_case_graph(
    index_path: Path,
    graph_dir: Path,
    embedder: Embedder,
    extractor: EntityAnalyzer,
    progress: Progress = silent,
    report_model: Any = None,
    readerships: Mapping[str, str] | None = None,
) -> GraphBuildInfo:
    """(Re)build the graph at ``graph_dir`` from the chunks of the index at ``index_path``.

    ``report_model`` (a graphrag ``ModelConfig``) swaps the offline extractive report
    writer for a real LLM; see ``tools.graph._models.llm_report_model``.

    ``readerships`` (source id -> readership, see ``readerships()``): every stored summary
    (community report, entity description) is derived from text of one readership only, so
    whoever may read all its inputs may see it; a community or entity that spans readerships
    keeps no stored summary (the community view writes one per query from the units in
    scope). None: every source has one readership (a corpus everyone reads, e.g. a benchmark).
    A source missing from the mapping is a readership of its own.

    The previous graph folder is replaced as a whole (nothing of a deleted source
    survives), in one swap after the build and its manifest are complete. Blocking; one
    build at a time per process (graphrag's loggers and workflow registry are process-wide).
    """
    t0 = time.perf_counter()
    index_path, graph_dir = Path(index_path), Path(graph_dir)
    rows, fingerprint, index_embedder = _read_index(index_path)
    rows = [r for r in rows if r[1] != "metric"]  # metric series are not text
    ids = [r[0] for r in rows]
    progress(f"graph: {len(rows)} chunks from {index_path.name}")
    reader_of = {r[0]: (readerships.get(r[5], f"source {r[5]}") if readerships is not None else "everyone")
                 for r in rows}

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
        readerships_digest=readerships_digest(readerships),
        embedder=embedder.name, dim=embedder.dim, chunks=len(rows), graphrag_version=version("graphrag"),
    )
    built: list[GraphBuildInfo] = []

    def finish(folder: Path, info: GraphBuildInfo) -> None:
        """Make the finished folder's summaries single-readership and write the manifest into it."""
        wrapper = json.loads((folder / GRAPH_MANIFEST).read_text(encoding="utf-8"))
        merged = tuple(tuple(m) for m in wrapper.get("merged_duplicates", []))
        withheld = single_readership(folder, reader_of, extractor.names, merged)
        info = info.model_copy(update={
            "documents": info.chunks - len(merged), "merged_duplicates": merged,
            **withheld,
            "row_counts": {t: _rows(folder / f"{t}.parquet") for t in TABLE_NAMES},
            "output_bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
            "wall_seconds": round(time.perf_counter() - t0, 3),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        })
        (folder / CASE_MANIFEST).write_text(json.dumps({"format": FORMAT, **info.model_dump(mode="json")},
                                                      indent=2), encoding="utf-8")
        built.append(info)

    if rows:
        with Ticker(progress, "graph: loading graphrag", beat=True):  # its import alone takes seconds
            from .builder import build_graph_index

        progress(f"graph: running graphrag (fast pipeline, {embedder.name}, domain extractor)")
        started = time.perf_counter()
        build_graph_index(
            [{"id": r[0], "title": r[2] or "", "text": r[3]} for r in rows],
            graph_dir, embed=embed, dim=embedder.dim, analyze=extractor.names, report_model=report_model,
            subject=lambda title: _subject(extractor, title), progress=progress,
            finish=lambda folder: finish(folder, GraphBuildInfo(
                **base, documents=0, graphrag_seconds=round(time.perf_counter() - started, 3),
                embedded_texts=embedded)),
        )
    else:  # an index with no text chunks: an empty graph, still fresh for this index
        _empty_graph(graph_dir, embedder.dim, lambda folder: finish(folder, GraphBuildInfo(**base, documents=0)))
    info = built[0]
    progress(f"graph built: {info.row_counts.get('entities', 0)} entities, "
             f"{info.row_counts.get('communities', 0)} communities, {info.wall_seconds}s")
    return info


TABLE_NAMES = ("documents", "text_units", "entities", "relationships", "communities", "community_reports")


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows if path.exists() else 0


def single_readership(folder: Path, reader_of: Mapping[str, str], analyze: Callable[[str], list[str]],
                      merged: tuple[tuple[str, ...], ...] = ()) -> dict[str, int]:
    """Keep only summaries derived from one readership in the graph tables in ``folder``.

    A text unit belongs to the readerships of the chunks that hold its text (one, or more for
    merged duplicates). A community report is kept when one readership holds every unit of its
    community (a parent's units include its children's, so the sub-reports it folds in are
    covered too); an entity's description is rewritten from the sentences of one readership
    that holds every unit naming it, and is empty when none does. Returns how many reports and
    descriptions were withheld."""
    import pandas as pd

    from ._extract import describe_entities

    withheld = {"reports_withheld": 0, "descriptions_withheld": 0}
    if not (folder / "text_units.parquet").exists():
        return withheld  # an empty graph
    units = pd.read_parquet(folder / "text_units.parquet", columns=["id", "document_id", "text"])
    owners: dict[str, list[str]] = {str(d): [str(d)] for d in units["document_id"]}
    for dropped, kept in merged:
        owners.setdefault(str(kept), [str(kept)]).append(str(dropped))
    unit_readers = {str(u): {reader_of.get(c, f"chunk {c}") for c in owners[str(d)]}
                    for u, d in zip(units["id"], units["document_id"], strict=True)}

    def common(unit_ids: Any) -> str | None:
        """The readership that holds every one of these units (None: there is none)."""
        sets = [unit_readers.get(str(u), set()) for u in ([] if unit_ids is None else list(unit_ids))]
        shared = set.intersection(*sets) if sets else set()
        return min(shared) if shared else None

    if len({r for rs in unit_readers.values() for r in rs}) <= 1:
        return withheld  # one readership: nothing can mix

    communities = pd.read_parquet(folder / "communities.parquet", columns=["community", "text_unit_ids"])
    single = {int(c) for c, u in zip(communities["community"], communities["text_unit_ids"], strict=True)
              if common(u) is not None}
    reports_path = folder / "community_reports.parquet"
    reports = pd.read_parquet(reports_path)
    keep = reports["community"].astype(int).isin(single)
    withheld["reports_withheld"] = int((~keep).sum())
    reports[keep].reset_index(drop=True).to_parquet(reports_path)

    entities_path = folder / "entities.parquet"
    entities = pd.read_parquet(entities_path)
    reader_units: dict[str, list[str]] = {}
    for text, rs in zip(units["text"], (unit_readers[str(u)] for u in units["id"]), strict=True):
        for r in rs:
            reader_units.setdefault(r, []).append(str(text))
    titles = set(entities["title"].astype(str))
    per_reader = {r: describe_entities(analyze, texts, titles) for r, texts in sorted(reader_units.items())}
    descriptions = []
    for title, unit_ids in zip(entities["title"], entities["text_unit_ids"], strict=True):
        r = common(unit_ids)
        descriptions.append(per_reader[r].get(str(title), "") if r is not None else "")
    withheld["descriptions_withheld"] = sum(
        1 for d, old in zip(descriptions, entities["description"], strict=True) if not d and old)
    entities["description"] = descriptions
    entities.to_parquet(entities_path)
    return withheld


def _subject(extractor: EntityAnalyzer, title: str) -> str | None:
    """The entity a chunk's title names as its subject, when the analyzer has one for it."""
    if not title:
        return None
    name = canonical(extractor, title)
    return name if name in extractor.names(title) else None


def _empty_graph(graph_dir: Path, dim: int, finish: Callable[[Path], None]) -> None:
    if graph_dir.exists() and any(graph_dir.iterdir()) and not (graph_dir / GRAPH_MANIFEST).exists():
        raise FileExistsError(f"{graph_dir} is not empty and holds no {GRAPH_MANIFEST}: not replacing it")
    staging = staging_dir(graph_dir)
    try:
        (staging / GRAPH_MANIFEST).write_text(json.dumps({"dim": dim, "documents": 0}), encoding="utf-8")
        finish(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, graph_dir)


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
                   extractor: EntityAnalyzer | None = None, readerships: Mapping[str, str] | None = None) -> bool:
    """True when the graph was built from exactly the index's current chunks (and, when
    given, with this embedder, an extractor of the same gazetteer and the same readerships:
    a changed group or environment in the manifest re-partitions its summaries)."""
    data = read_manifest(graph_dir)
    state = _current_state(index_path)
    if data is None or state is None:
        return False
    if (data.get("fingerprint"), data.get("chunks_digest")) != state:
        return False
    if embedder is not None and (data.get("embedder"), data.get("dim")) != (embedder.name, embedder.dim):
        return False
    if readerships is not None and data.get("readerships_digest") != readerships_digest(readerships):
        return False
    return extractor is None or data.get("extractor_digest") == extractor_digest(extractor)
