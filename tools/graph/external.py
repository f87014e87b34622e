"""Bring your own graphrag index: a graphrag output folder as a case's graph index.

``import_graph(src, graph_dir, index_path, embedder)`` checks that ``src`` holds the graphrag
tables the graph tool reads (``REQUIRED``: table files and columns), maps each text unit to a
chunk of the case's DuckDB index, and installs the result at ``graph_dir`` with the same
manifests a build writes, so ``GraphRetrieval`` walks it like its own graph.

A text unit belongs to a chunk when its ``document_id`` is a chunk id (an index our builder
wrote, or graphrag run over the case's chunks with their ids), or when its document's text,
or its own text, is exactly one chunk's text (graphrag's default document ids are hashes).
Units that belong to no chunk are dropped and counted; when none belongs, the folder was
built from other documents and is refused. Entities, relationships, communities and their
reports are kept as graphrag wrote them: the walk and the community view scope them per query
to readable chunks, as for a built graph. Entity titles are matched to the query's entity
names exactly, so an index whose extractor wrote other spellings (an LLM's upper-case titles)
links fewer seeds and falls back to the basic ranking more often.

The manifest records ``imported_from``; the runtime does not rebuild an imported graph while
the chunk index is unchanged, and imports it again from there when it changed (a tombstone).
``index --force`` replaces it with a graph built from the case.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
import uuid
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from state import Frozen
from state.errors import ConfigError
from tools.embedding import Embedder
from tools.index import open_index

from .casegraph import CASE_MANIFEST, FORMAT, GRAPH_MANIFEST, GraphBuildInfo, _current_state, read_manifest
from .settings import write_settings

REQUIRED: dict[str, tuple[str, ...]] = {
    "text_units": ("id", "document_id", "text", "entity_ids"),
    "entities": ("id", "title"),
    "communities": ("community", "level", "entity_ids", "text_unit_ids"),
    "community_reports": ("community", "title", "summary", "full_content", "rank"),
}
"""The tables (and their columns) the graph tool and its community view read."""
CARRIED = ("documents", "relationships")
"""Copied when present (graphrag's own tools read them)."""


class GraphImport(Frozen):
    """How an imported folder's text units were matched to the case's chunks."""

    origin: str
    units: int
    by_id: int
    """Units whose document id is a chunk id."""
    by_text: int
    """Units matched by their document's text or their own text."""
    dropped: int
    """Units that belong to no chunk of the case (dropped)."""


def output_dir(src: Path) -> Path:
    """The folder holding the tables: ``src`` itself, or a graphrag project's ``output/``."""
    src = Path(src)
    if not (src / "text_units.parquet").exists() and (src / "output" / "text_units.parquet").exists():
        return src / "output"
    return src


def check_output(src: Path) -> dict[str, int]:
    """Row counts of the required tables; a ConfigError naming the folder, the table or column, what was expected."""
    src = Path(src)
    where = f"--graph-from {src}"
    if not src.is_dir():
        raise ConfigError(f"{where}: not a folder: expected a graphrag output folder "
                          f"({', '.join(t + '.parquet' for t in REQUIRED)})")
    counts = {}
    for name, cols in REQUIRED.items():
        path = src / f"{name}.parquet"
        if not path.is_file():
            raise ConfigError(f"{where}: {name}.parquet missing: expected graphrag's output tables "
                              f"({', '.join(t + '.parquet' for t in REQUIRED)})")
        try:
            meta = pq.ParquetFile(path)
        except Exception as exc:  # any unreadable file is the same user error (re-raised as one)
            raise ConfigError(f"{where}: {name}.parquet: not a readable parquet table ({type(exc).__name__})") from exc
        missing = [c for c in cols if c not in meta.schema_arrow.names]
        if missing:
            raise ConfigError(f"{where}: {name}.parquet: column(s) {', '.join(missing)} missing: "
                              f"expected graphrag 3.x's {name} table ({', '.join(cols)})")
        counts[name] = meta.metadata.num_rows
    if counts["text_units"] == 0:
        raise ConfigError(f"{where}: text_units.parquet is empty: expected the text units the graph was built from")
    return counts


def imported_from(graph_dir: Path) -> str | None:
    """The folder an installed graph was imported from; None for a graph built from the case."""
    data = read_manifest(graph_dir)
    return data.get("imported_from") if data else None


def _chunks(index_path: Path) -> tuple[set[str], dict[str, list[str]]]:
    con = open_index(index_path)
    try:
        rows = con.execute("SELECT chunk_id, text FROM chunks ORDER BY chunk_id").fetchall()
    finally:
        con.close()
    by_text: dict[str, list[str]] = {}
    for cid, text in rows:
        by_text.setdefault(text, []).append(cid)
    return {r[0] for r in rows}, by_text


def import_graph(src: Path, graph_dir: Path, index_path: Path, embedder: Embedder,
                 progress: Callable[[str], None] = lambda _m: None) -> GraphBuildInfo:
    """Install the graphrag output at ``src`` as the graph of the chunk index at ``index_path``."""
    t0 = time.perf_counter()
    src = output_dir(Path(src)).resolve()
    graph_dir = Path(graph_dir)
    counts = check_output(src)
    state = _current_state(index_path)
    if state is None:
        raise ConfigError(f"--graph-from {src}: the case has no chunk index at {index_path}: index the case first")
    ids, by_text = _chunks(index_path)
    units = pd.read_parquet(src / "text_units.parquet")
    doc_text: dict[str, str] = {}
    if (src / "documents.parquet").exists():
        docs = pd.read_parquet(src / "documents.parquet", columns=["id", "text"])
        doc_text = dict(zip(docs["id"].astype(str), docs["text"], strict=True))
    merged: dict[str, str] = {}
    try:
        for dropped, kept in json.loads((src / GRAPH_MANIFEST).read_text(encoding="utf-8")).get("merged_duplicates", []):
            if dropped in ids and kept in ids:
                merged[dropped] = kept
    except (OSError, ValueError):
        pass
    owners: list[str | None] = []
    by_id = by_txt = 0
    for doc, text in zip(units["document_id"].astype(str), units["text"], strict=True):
        if doc in ids:
            owners.append(doc)
            by_id += 1
            continue
        same = by_text.get(doc_text.get(doc, "\0")) or by_text.get(text)
        if same:
            owners.append(same[0])
            merged.update({other: same[0] for other in same[1:]})
            by_txt += 1
        else:
            owners.append(None)
    kept_units = units.assign(document_id=owners)[[o is not None for o in owners]]
    if kept_units.empty:
        raise ConfigError(f"--graph-from {src}: none of its {len(units)} text units belongs to a chunk of this "
                          "case's index: expected a graphrag index built from the case's chunks (documents whose id "
                          "is a chunk id, or whose text is a chunk's text)")
    report = GraphImport(origin=str(src), units=len(units), by_id=by_id, by_text=by_txt,
                         dropped=len(units) - len(kept_units))
    if graph_dir.exists() and any(graph_dir.iterdir()) and not (graph_dir / GRAPH_MANIFEST).exists():
        raise ConfigError(f"{graph_dir} is not empty and holds no {GRAPH_MANIFEST}: not replacing it")
    staging = graph_dir.with_name(f".{graph_dir.name}.importing-{uuid.uuid4().hex[:8]}")
    staging.mkdir(parents=True)
    try:
        kept_units.to_parquet(staging / "text_units.parquet", index=False)
        for name in (*REQUIRED, *CARRIED):
            if name != "text_units" and (src / f"{name}.parquet").exists():
                shutil.copy2(src / f"{name}.parquet", staging / f"{name}.parquet")
        _number_documents(staging / "documents.parquet")
        digest = hashlib.sha256(b"".join(hashlib.sha256((src / f"{t}.parquet").read_bytes()).digest()
                                         for t in REQUIRED)).hexdigest()[:16]
        pairs = sorted([d, k] for d, k in merged.items())
        wrapper = {"graphrag": version("graphrag"), "dim": embedder.dim, "documents": len(set(kept_units["document_id"])),
                   "merged_duplicates": pairs, "imported_from": str(src)}
        (staging / GRAPH_MANIFEST).write_text(json.dumps(wrapper, indent=2), encoding="utf-8")
        write_settings(staging, dim=embedder.dim, chunk_size=1200, encoding="o200k_base")
        info = GraphBuildInfo(
            graph_dir=str(graph_dir.resolve()), index_path=str(Path(index_path).resolve()), fingerprint=state[0],
            chunks_digest=state[1], extractor_digest=f"imported:{digest}", embedder=embedder.name, dim=embedder.dim,
            chunks=len(ids), documents=wrapper["documents"], merged_duplicates=tuple(tuple(m) for m in pairs),
            row_counts={**counts, **{t: pq.ParquetFile(staging / f"{t}.parquet").metadata.num_rows
                                     for t in CARRIED if (staging / f"{t}.parquet").exists()},
                        "text_units": len(kept_units)},
            graphrag_version=version("graphrag"))
        info = info.model_copy(update={
            "output_bytes": sum(p.stat().st_size for p in staging.rglob("*") if p.is_file()),
            "wall_seconds": round(time.perf_counter() - t0, 3)})
        manifest = {"format": FORMAT, **info.model_dump(mode="json"), "imported_from": str(src),
                    "import": report.model_dump()}
        (staging / CASE_MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = graph_dir.with_name(f".{graph_dir.name}.old-{uuid.uuid4().hex[:8]}")
    if graph_dir.exists():
        graph_dir.rename(old)
    staging.rename(graph_dir)
    shutil.rmtree(old, ignore_errors=True)
    progress(f"graph imported from {src}: {report.by_id} text units by chunk id, {report.by_text} by text, "
             f"{report.dropped} dropped (no chunk of the case)")
    return info


def _number_documents(path: Path) -> None:
    """graphrag's DataReader casts documents.human_readable_id to int: number rows that have none."""
    if not path.exists():
        return
    docs = pd.read_parquet(path)
    if "human_readable_id" in docs.columns and docs["human_readable_id"].isna().any():
        docs["human_readable_id"] = range(len(docs))
        docs.to_parquet(path, index=False)
