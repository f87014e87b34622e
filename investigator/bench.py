"""`investigator bench retrieval`: multi-hop retrieval quality and cost of each tool on one dataset."""

from __future__ import annotations

import platform
import resource
import time
from pathlib import Path
from typing import Any

from state._base import stable_id
from tools.access import AccessSnapshot
from tools.benchdata import Dataset
from tools.chunking import Chunk
from tools.embedding import Embedder
from tools.entities import EntityExtractor
from tools.evaluation import mean, mrr, ndcg_at_k, percentile, recall_at_k
from tools.index import build_chunk_index
from tools.lexical import BM25
from tools.retrieval import SearchQuery

GROUP = "bench"


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
    extractor = EntityExtractor({p.title: "title" for p in ds.corpus})
    graph_seconds = 0.0
    for name in tools:
        t1 = time.perf_counter()
        if name == "bm25":
            tool: Any = _BM25Tool(chunks)
            build = time.perf_counter() - t1
        elif name == "basic":
            from tools.basic import BasicRetrieval

            tool = BasicRetrieval(index_path, embedder)
            build = shared_build + time.perf_counter() - t1
        elif name in ("graph", "graph+dense"):
            from tools.graph.casegraph import build_case_graph, graph_is_fresh
            from tools.graph.walk import GraphRetrieval

            graph_dir = workdir / "graph"
            if not graph_is_fresh(index_path, graph_dir, embedder, extractor):
                build_case_graph(index_path, graph_dir, embedder, extractor, progress)
                graph_seconds = time.perf_counter() - t1
            tool = GraphRetrieval(index_path, graph_dir, embedder, extractor, fuse_dense=name == "graph+dense")
            build = shared_build + graph_seconds  # one graph index serves both rankings
        else:
            raise ValueError(f"unknown tool {name!r}")
        progress(f"{name}: index ready in {build:.2f}s")
        latencies, r2, r5, mrrs, ndcgs = [], [], [], [], []
        for q in ds.questions:
            query = SearchQuery(text=q.question, environment="*", seeds=tuple(extractor.names(q.question)), k=5)
            t2 = time.perf_counter()
            hits = tool.search(query, access)
            latencies.append((time.perf_counter() - t2) * 1000)
            ids = [h if isinstance(h, str) else h.source_id for h in hits]
            r2.append(recall_at_k(ids, q.supporting_ids, 2))
            r5.append(recall_at_k(ids, q.supporting_ids, 5))
            mrrs.append(mrr(ids, q.supporting_ids))
            ndcgs.append(ndcg_at_k(ids, {s: 1.0 for s in q.supporting_ids}, 5))
        results[name] = {
            "recall@2": mean(r2), "recall@5": mean(r5), "mrr": mean(mrrs), "ndcg@5": mean(ndcgs),
            "build_seconds": round(build, 3), "peak_rss_mb_after_build": round(_peak_mb(), 1),
            "query_ms_p50": round(percentile(latencies, 50) or 0, 2), "query_ms_p95": round(percentile(latencies, 95) or 0, 2),
        }
    return {"dataset": ds.name, "passages": len(ds.corpus), "questions": len(ds.questions),
            "embedder": embedder.name, "index_bytes": info.bytes, "machine": platform.platform(),
            "python": platform.python_version(), "tools": results}


def to_markdown(res: dict[str, Any]) -> str:
    lines = [f"Dataset {res['dataset']}: {res['passages']} passages, {res['questions']} questions, embedder {res['embedder']}",
             "", "| tool | recall@2 | recall@5 | MRR | nDCG@5 | build s | peak RSS MB | query p50 ms | query p95 ms |",
             "|" + " --- |" * 9]
    for name, r in res["tools"].items():
        f = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
        lines.append(f"| {name} | {f(r['recall@2'])} | {f(r['recall@5'])} | {f(r['mrr'])} | {f(r['ndcg@5'])} "
                     f"| {r['build_seconds']} | {r['peak_rss_mb_after_build']} | {r['query_ms_p50']} | {r['query_ms_p95']} |")
    return "\n".join(lines) + "\n"
