"""Entity-resolution ablation of the graph tool on one multi-hop dev set, in one run.

    python bench/entity_resolution.py --dataset ../shared/bench/multihop-dev/musique-dev100.json \
        --out bench/results/entity-resolution-musique.json

One chunk index (the product's embedder) serves every row; each row builds its own graph
(graphrag, the product's build) with its analyzer and walks it with the product's
``GraphRetrieval``, 10 results per question. Rows: the analyzer before issue 21, then each
part of entity resolution alone (``tools.resolution`` alias folding and contained names,
lower-case concepts, hub damping), then all of them. Query time: every row's searches again,
interleaved question by question (``TIMING_ROUNDS``), so a busy machine slows every row alike.
``--markdown`` joins the JSON files of several sets into one table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TIMING_ROUNDS = 2
ROWS: dict[str, dict[str, Any]] = {
    "baseline": {"resolve": False, "concepts": False, "hub_damping": 0.0},
    "+alias folding": {"resolve": True, "concepts": False, "hub_damping": 0.0},
    "+concepts": {"resolve": False, "concepts": True, "hub_damping": 0.0},
    "+hub damping (0.5)": {"resolve": False, "concepts": False, "hub_damping": 0.5},
    "all": {"resolve": True, "concepts": True, "hub_damping": 0.5},
}


def run(dataset: Path, rows: list[str]) -> dict[str, Any]:
    import numpy as np

    from investigator.bench import GROUP, K, passages_as_chunks
    from state import stable_id
    from tools.access import AccessSnapshot
    from tools.benchdata import load_dataset
    from tools.embedding import MiniLMEmbedder
    from tools.entities import EntityExtractor
    from tools.evaluation import mean, mrr, percentile, recall_at_k
    from tools.graph.analyzer import ComposedAnalyzer
    from tools.graph.casegraph import build_case_graph
    from tools.graph.walk import GraphRetrieval
    from tools.index import build_chunk_index
    from tools.retrieval import SearchQuery
    from tools.textentities import TextEntityExtractor

    ds = load_dataset(dataset)
    embedder = MiniLMEmbedder()
    chunks = passages_as_chunks(ds)
    access = AccessSnapshot(groups={c.source_id: (GROUP,) for c in chunks}, principal_groups=(GROUP,))
    titles, texts = [p.title for p in ds.corpus], [f"{p.title}\n{p.text}" for p in ds.corpus]
    out: dict[str, Any] = {"dataset": ds.name, "passages": len(ds.corpus), "questions": len(ds.questions), "k": K,
                           "rows": {}}
    tools: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="inv-entres-") as tmp:
        index_path = Path(tmp) / "bench.duckdb"
        t0 = time.perf_counter()
        build_chunk_index(chunks, index_path, embedder, stable_id(ds.name, len(chunks)))
        out["index_build_seconds"] = round(time.perf_counter() - t0, 2)
        for name in rows:
            cfg = ROWS[name]
            t1 = time.perf_counter()
            text = TextEntityExtractor.from_corpus(titles, texts, resolve=cfg["resolve"], concepts=cfg["concepts"])
            analyzer = ComposedAnalyzer(EntityExtractor({}), text)
            analyzer_s = time.perf_counter() - t1
            graph_dir = Path(tmp) / f"graph-{stable_id(name)[:8]}"
            info = build_case_graph(index_path, graph_dir, embedder, analyzer)
            tool = GraphRetrieval(index_path, graph_dir, embedder, analyzer, hub_damping=cfg["hub_damping"])
            tools[name] = tool
            build_s = time.perf_counter() - t1
            r2, r5, r10, mrrs, lat = [], [], [], [], []
            for q in ds.questions:
                query = SearchQuery(text=q.question, environment="*", k=K)
                t2 = time.perf_counter()
                hits = tool.search(query, access)
                lat.append((time.perf_counter() - t2) * 1000)
                ids = [h.source_id for h in hits]
                r2.append(recall_at_k(ids, q.supporting_ids, 2))
                r5.append(recall_at_k(ids, q.supporting_ids, 5))
                r10.append(recall_at_k(ids, q.supporting_ids, 10))
                mrrs.append(mrr(ids, q.supporting_ids))
            out["rows"][name] = {
                **cfg, "recall@2": mean(r2), "recall@5": mean(r5), "recall@10": mean(r10), "mrr": mean(mrrs),
                "query_ms_p50": round(percentile(lat, 50) or 0, 2), "query_ms_p95": round(percentile(lat, 95) or 0, 2),
                "entities": info.row_counts.get("entities"), "aliases": len(text.aliases), "contained": len(text.parts),
                "concepts": len(text.concepts), "analyzer_seconds": round(analyzer_s, 2),
                "graph_build_seconds": round(build_s, 2), "question_latency_sum_ms": round(float(np.sum(lat)), 1)}
            print(name, {k: out["rows"][name][k] for k in ("recall@2", "recall@5", "recall@10", "query_ms_p50")},
                  flush=True)
        # query time of every row measured interleaved (question by question, rows in turn, two
        # rounds), so a busy machine slows every row alike; the per-row figures above are not
        timed: dict[str, list[float]] = {n: [] for n in tools}
        for _round in range(TIMING_ROUNDS):
            for q in ds.questions:
                query = SearchQuery(text=q.question, environment="*", k=K)
                for name, tool in tools.items():
                    t2 = time.perf_counter()
                    tool.search(query, access)
                    timed[name].append((time.perf_counter() - t2) * 1000)
        for name, lat in timed.items():
            out["rows"][name]["interleaved_query_ms_p50"] = round(percentile(lat, 50) or 0, 2)
            out["rows"][name]["interleaved_query_ms_p95"] = round(percentile(lat, 95) or 0, 2)
        out["timing_rounds"] = TIMING_ROUNDS
    return out


def markdown(files: list[Path]) -> str:
    sets = [json.loads(f.read_text()) for f in files]
    names = list(sets[0]["rows"])
    head = " | ".join(f"{s['dataset']} R@2 / R@5 / R@10 | p50 ms" for s in sets)
    lines = [f"| row | {head} |", "|" + " --- |" * (1 + 2 * len(sets))]
    for n in names:
        cells = []
        for s in sets:
            r = s["rows"].get(n)
            p50 = r.get("interleaved_query_ms_p50", r["query_ms_p50"]) if r else None
            cells.append("n/a | n/a" if r is None else
                         f"{100 * r['recall@2']:.1f} / {100 * r['recall@5']:.1f} / {100 * r['recall@10']:.1f} "
                         f"| {p50}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dataset", type=Path, help="a multihop@1 dev set")
    ap.add_argument("--out", type=Path, help="JSON file for the figures")
    ap.add_argument("--row", action="append", choices=list(ROWS), help="rows to run (default: all)")
    ap.add_argument("--markdown", type=Path, nargs="*", help="JSON files of earlier runs: print one table")
    args = ap.parse_args()
    if args.markdown:
        print(markdown(args.markdown))
        return 0
    res = run(args.dataset, args.row or list(ROWS))
    res["command"] = " ".join(["python", "bench/entity_resolution.py", *sys.argv[1:]])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
