"""`investigator bench retrieval --pool FILE --pool FILE …`: every set's questions against one pooled index.

The files are pooled by `tools.benchpool` (question sets and distractor corpora; shared passages
merged, gold ids mapped), optionally subsampled to `size` passages with every gold passage kept.
One index (and one graph) is built over the pool, with the same configuration as the per-set
bench (`investigator.bench`); each tool then answers each set's questions. What is timed: the
build by stage (parse: reading and pooling the files; chunk; embed; write; entities and verify:
the index's own stages; graphrag import: loading the package, a constant; analyzer: the corpus
gazetteer of the graph's entity extractor; graph: the graphrag build, entity extraction included), each tool's load, and every query.
"""

from __future__ import annotations

import importlib
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from state import stable_id
from state.progress import Progress, Ticker, silent
from tools.access import AccessSnapshot
from tools.benchpool import Pool, load_source, pool
from tools.embedding import Embedder
from tools.evaluation import percentile
from tools.index import build_chunk_index
from tools.stages import StageClock

from investigator.bench import GRAPH_RANKING, GROUP, K, TOOLS, _peak_mb, bench_analyzer, open_tool, passages_as_chunks, score


def run_pooled_bench(paths: Sequence[Path], embedder: Embedder, workdir: Path, tools: Sequence[str],
                     size: int | None = None, seed: int = 0, progress: Progress = silent) -> dict[str, Any]:
    """Pool `paths`, build one index over the pool, score each tool on each set's questions."""
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        raise ValueError(f"unknown tool {unknown[0]!r}")
    clock = StageClock(progress, "pool")
    with clock.stage("parse"):
        pooled = pool([load_source(Path(p)) for p in paths], size, seed)
    progress(f"pool: {len(pooled.corpus)} passages ({pooled.gold} gold, {pooled.merged} merged duplicates), "
             + ", ".join(f"{n} {len(qs)} questions" for n, qs in pooled.sets.items()))
    whole = pooled.as_dataset()
    with clock.stage("chunk"):
        chunks = passages_as_chunks(whole)
    index_path, graph_dir = workdir / "pool.duckdb", workdir / "graph"
    info = build_chunk_index(chunks, index_path, embedder, stable_id(pooled.name, len(chunks)), progress=progress,
                             clock=clock)
    graph_info: Any = None
    extractor: Any = None
    if any(t in GRAPH_RANKING for t in tools):
        from tools.graph.casegraph import build_case_graph

        with clock.stage("graphrag import"):  # a constant (seconds), kept out of the graph stage's growth
            importlib.import_module("tools.graph.builder")

        with clock.stage("analyzer"):
            extractor = bench_analyzer(whole)
        with clock.stage("graph", beat=False):  # graphrag's stages report their own progress
            graph_info = build_case_graph(index_path, graph_dir, embedder, extractor, progress)
    build_wall = clock.elapsed()
    peak_build = _peak_mb()
    access = AccessSnapshot(groups={c.source_id: (GROUP,) for c in chunks}, principal_groups=(GROUP,))
    results = {name: _one_tool(name, pooled, chunks, index_path, graph_dir, embedder, extractor, access, progress)
               for name in tools}
    out: dict[str, Any] = {
        "mode": "pooled", "pool": _describe(pooled, paths, size), "k": K, "embedder": embedder.name,
        "index_bytes": info.bytes, "embedded": info.embedded, "build_wall_seconds": round(build_wall, 3),
        "stages": {n: t.model_dump() for n, t in clock.times().items()},
        "peak_rss_mb_after_build": round(peak_build, 1), "peak_rss_mb": round(_peak_mb(), 1),
        "machine": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
        "python": platform.python_version(), "tools": results,
    }
    if graph_info is not None:
        out["graph_build"] = {"wall_seconds": graph_info.wall_seconds, "graphrag_seconds": graph_info.graphrag_seconds,
                              "embedded_texts": graph_info.embedded_texts, "row_counts": graph_info.row_counts}
    return out


def _one_tool(name: str, pooled: Pool, chunks: list[Any], index_path: Path, graph_dir: Path, embedder: Embedder,
              extractor: Any, access: AccessSnapshot, progress: Progress) -> dict[str, Any]:
    t0 = time.perf_counter()
    tool = open_tool(name, chunks, index_path, graph_dir, embedder, extractor)
    load = time.perf_counter() - t0
    progress(f"{name}: loaded in {load:.2f}s")
    total = sum(len(qs) for qs in pooled.sets.values())
    latencies: list[float] = []

    def tick(ms: float) -> None:
        latencies.append(ms)
        ticker.advance()

    sets: dict[str, Any] = {}
    with Ticker(progress, f"{name}: questions", total=total, unit="questions") as ticker:
        for set_name, questions in pooled.sets.items():
            sets[set_name] = score(tool, questions, access, tick)
    return {"load_seconds": round(load, 3), "peak_rss_mb_after_load": round(_peak_mb(), 1),
            "query_ms_p50": round(percentile(latencies, 50) or 0, 2),
            "query_ms_p95": round(percentile(latencies, 95) or 0, 2), "sets": sets}


def _describe(pooled: Pool, paths: Sequence[Path], size: int | None) -> dict[str, Any]:
    return {"files": [str(p) for p in paths], "passages": len(pooled.corpus), "size_requested": size,
            "seed": pooled.seed, "read": pooled.read, "merged_duplicates": pooled.merged, "gold_passages": pooled.gold,
            "questions": {n: len(qs) for n, qs in pooled.sets.items()}}


def to_markdown(res: dict[str, Any]) -> str:
    """One row per set and tool: recall@2/5/10, MRR and query latency; then the build by stage."""
    p = res["pool"]
    lines = [f"Pool {' + '.join(p['read'])}: {p['passages']} passages ({p['gold_passages']} gold), "
             f"embedder {res['embedder']}", "",
             "| set | tool | recall@2 | recall@5 | recall@10 | MRR | query p50 ms | query p95 ms |",
             "|" + " --- |" * 8]
    for name, r in res["tools"].items():
        for set_name, s in r["sets"].items():
            lines.append(f"| {set_name} | {name} | {s['recall@2']:.3f} | {s['recall@5']:.3f} | {s['recall@10']:.3f} "
                         f"| {s['mrr']:.3f} | {s['query_ms_p50']} | {s['query_ms_p95']} |")
    stages = ", ".join(f"{n} {t['wall']:.2f}" for n, t in res["stages"].items())
    lines += ["", f"Build {res['build_wall_seconds']} s wall; by stage (s): {stages}. "
              f"Peak RSS {res['peak_rss_mb']} MB ({res['peak_rss_mb_after_build']} after the build)."]
    return "\n".join(lines) + "\n"
