"""`investigator bench retrieval`: multi-hop retrieval quality and cost of each tool on one dataset.

Tools: ``bm25`` (BM25 alone), ``dense`` (MiniLM alone), ``basic`` (the product's basic tool:
dense + BM25 fused by reciprocal rank), ``graph`` (the product's graph tool: personalized
PageRank over the chunk <-> entity graph, walked chunks ranked by log PageRank + 5 x cosine),
and two rankings of the same graph for comparison: ``graph-ppr`` (PageRank alone) and
``graph+dense`` (reciprocal-rank fusion of PageRank and dense). Every tool returns 10 chunks
per question, so recall@2, @5 and @10 come from one ranked list.

The graph's analyzer is the incident extractor composed with the encyclopaedic one
(``tools.textentities``: passage titles and capitalised names of the corpus).
"""

from __future__ import annotations

import os
import platform
import resource
import time
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any

from state import stable_id
from tools.access import AccessSnapshot
from tools.benchdata import Dataset, Question
from tools.chunking import Chunk
from tools.embedding import Embedder
from tools.entities import EntityExtractor
from tools.graph.analyzer import ComposedAnalyzer
from tools.textentities import TextEntityExtractor
from tools.evaluation import mean, mrr, ndcg_at_k, percentile, recall_at_k
from tools.index import build_chunk_index
from tools.lexical import BM25
from tools.retrieval import SearchQuery

GROUP = "bench"
K = 10
TOOLS = ("bm25", "dense", "basic", "graph", "graph-ppr", "graph+dense")
GRAPH_RANKING = {"graph": "ppr+dense", "graph-ppr": "ppr", "graph+dense": "rrf"}


def passages_as_chunks(ds: Dataset) -> list[Chunk]:
    out = []
    for p in ds.corpus:
        text = f"{p.title}\n{p.text}"
        out.append(Chunk(id=p.id, source_id=p.id, kind="doc", environment="*", service="*", version="1",
                         revision=stable_id(text), status="current", trust="verified", title=p.title,
                         start=0, end=len(text), text=text))
    return out


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _BM25Tool:
    name = "bm25"

    def __init__(self, chunks: list[Chunk]) -> None:
        self.ids = [c.id for c in chunks]
        self.bm25 = BM25([c.text for c in chunks])

    def search(self, query: SearchQuery, access: AccessSnapshot) -> list[str]:
        scores = self.bm25.scores(query.text)
        order = sorted(range(len(self.ids)), key=lambda i: (-scores[i], i))[: query.k]
        return [self.ids[i] for i in order if scores[i] > 0]


def bench_analyzer(ds: Dataset) -> ComposedAnalyzer:
    """The incident extractor (it finds snake_case identifiers even with no gazetteer) composed
    with the encyclopaedic extractor of this corpus (variants of a name folded, `tools.resolution`)."""
    return ComposedAnalyzer(EntityExtractor({}), TextEntityExtractor.from_corpus(
        [p.title for p in ds.corpus], [f"{p.title}\n{p.text}" for p in ds.corpus]))


def open_tool(name: str, chunks: list[Chunk], index_path: Path, graph_dir: Path, embedder: Embedder,
              extractor: ComposedAnalyzer) -> Any:
    """The tool `name` over an index (and, for a graph tool, a graph) already built."""
    if name == "bm25":
        return _BM25Tool(chunks)
    if name in ("basic", "dense"):
        from tools.basic import BasicRetrieval

        return BasicRetrieval(index_path, embedder, lexical=name == "basic")
    if name in GRAPH_RANKING:
        from tools.graph.walk import GraphRetrieval

        return GraphRetrieval(index_path, graph_dir, embedder, extractor, ranking=GRAPH_RANKING[name])
    raise ValueError(f"unknown tool {name!r}")


def score(tool: Any, questions: Sequence[Question], access: AccessSnapshot,
          tick: Callable[[float], None] = lambda _ms: None) -> dict[str, Any]:
    """Recall@2/5/10, MRR, nDCG@5 and query latency of `tool` on `questions` (`tick` is told each
    query's milliseconds)."""
    latencies, r2, r5, r10, mrrs, ndcgs, channels = [], [], [], [], [], [], {}
    for q in questions:
        query = SearchQuery(text=q.question, environment="*", k=K)
        t2 = time.perf_counter()
        hits = tool.search(query, access)
        latencies.append((time.perf_counter() - t2) * 1000)
        ids = [h if isinstance(h, str) else h.source_id for h in hits]
        if hits and not isinstance(hits[0], str):
            channels[hits[0].channel] = channels.get(hits[0].channel, 0) + 1
        r2.append(recall_at_k(ids, q.supporting_ids, 2))
        r5.append(recall_at_k(ids, q.supporting_ids, 5))
        r10.append(recall_at_k(ids, q.supporting_ids, 10))
        mrrs.append(mrr(ids, q.supporting_ids))
        ndcgs.append(ndcg_at_k(ids, {s: 1.0 for s in q.supporting_ids}, 5))
        tick(latencies[-1])
    out: dict[str, Any] = {
        "recall@2": mean(r2), "recall@5": mean(r5), "recall@10": mean(r10), "mrr": mean(mrrs), "ndcg@5": mean(ndcgs),
        "query_ms_p50": round(percentile(latencies, 50) or 0, 2), "query_ms_p95": round(percentile(latencies, 95) or 0, 2),
    }
    if channels:
        out["first_hit_channel"] = channels
    return out


def run_retrieval_bench(ds: Dataset, embedder: Embedder, workdir: Path, tools: list[str],
                        progress=lambda _m: None) -> dict[str, Any]:  # noqa: ANN001
    chunks = passages_as_chunks(ds)
    access = AccessSnapshot(groups={c.source_id: (GROUP,) for c in chunks}, principal_groups=(GROUP,))
    index_path = workdir / "bench.duckdb"
    if index_path.exists():
        index_path.unlink()
    results: dict[str, Any] = {}
    t0 = time.perf_counter()
    info = build_chunk_index(chunks, index_path, embedder, stable_id(ds.name, len(chunks)), progress=progress)
    shared_build = time.perf_counter() - t0
    t_an = time.perf_counter()
    extractor = bench_analyzer(ds)
    analyzer_seconds = time.perf_counter() - t_an
    graph_seconds = 0.0
    graph_info: Any = None
    graph_dir = workdir / "graph"
    for name in tools:
        if name not in TOOLS:
            raise ValueError(f"unknown tool {name!r}")
        if name in GRAPH_RANKING:
            from tools.graph.casegraph import build_case_graph, graph_is_fresh

            t1 = time.perf_counter()
            if not graph_is_fresh(index_path, graph_dir, embedder, extractor):
                graph_info = build_case_graph(index_path, graph_dir, embedder, extractor, progress)
                graph_seconds = time.perf_counter() - t1 + analyzer_seconds
        t_load = time.perf_counter()
        tool = open_tool(name, chunks, index_path, graph_dir, embedder, extractor)
        # one index (and one graph) serves every tool but bm25; each tool pays its own load
        shared = 0.0 if name == "bm25" else shared_build + (graph_seconds if name in GRAPH_RANKING else 0.0)
        build = shared + time.perf_counter() - t_load
        progress(f"{name}: index ready in {build:.2f}s")
        scored = score(tool, ds.questions, access)
        channels = scored.pop("first_hit_channel", None)
        results[name] = {**scored, "build_seconds": round(build, 3), "peak_rss_mb_after_build": round(_peak_mb(), 1)}
        if channels:
            results[name]["first_hit_channel"] = channels
    out = {"dataset": ds.name, "passages": len(ds.corpus), "questions": len(ds.questions), "k": K,
           "embedder": embedder.name, "index_bytes": info.bytes, "index_build_seconds": round(shared_build, 3),
           "embedded": info.embedded, "machine": platform.platform(), "cpus": os.cpu_count(),
           "python": platform.python_version(), "tools": results}
    if graph_info is not None:
        out["graph_build"] = {"wall_seconds": round(graph_seconds, 3), "graphrag_seconds": graph_info.graphrag_seconds,
                              "analyzer_seconds": round(analyzer_seconds, 3), "embedded_texts": graph_info.embedded_texts,
                              "row_counts": graph_info.row_counts}
    return out


def to_markdown(res: dict[str, Any]) -> str:
    lines = [f"Dataset {res['dataset']}: {res['passages']} passages, {res['questions']} questions, embedder {res['embedder']}",
             "", "| tool | recall@2 | recall@5 | recall@10 | MRR | nDCG@5 | build s | peak RSS MB | query p50 ms "
             "| query p95 ms |", "|" + " --- |" * 10]
    for name, r in res["tools"].items():
        f = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
        lines.append(f"| {name} | {f(r['recall@2'])} | {f(r['recall@5'])} | {f(r.get('recall@10'))} | {f(r['mrr'])} "
                     f"| {f(r['ndcg@5'])} "
                     f"| {r['build_seconds']} | {r['peak_rss_mb_after_build']} | {r['query_ms_p50']} | {r['query_ms_p95']} |")
    return "\n".join(lines) + "\n"
