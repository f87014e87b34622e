"""Graph and basic tool cost on synthetic encyclopaedic corpora of growing size.

Passages are generated from templates (a title entity with an optional disambiguator, a
nationality, a place, three to eight other entities of a Zipf-distributed pool, years), so the
entity density (~8 names, ~100 tokens per passage) resembles the public multi-hop sets. What is
measured: the shared index build (passage vectors: hashed, to keep model time out of it),
graph build (graphrag + our analyzer), tool load, and query latency with the real MiniLM
model loaded (the query embedding is part of every search).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

FIRST = ("Anna Pavel Maria Jonas Elena Tomas Sofia Marek Ines Karl Lucia Omar Hana Ivan Clara Felix Nadia "
         "Bruno Mira Oskar Lena Viktor Alma Hugo Petra Emil Zora Anton Greta Leon").split()
SYLL = "ka ri to men sa lo vi da ne ru bo li ta sen mar kov ber gan dor wel fin hal ost tre".split()
NATIONS = ("French German Italian Spanish Polish Czech Dutch Swedish Danish Finnish Greek Hungarian Austrian "
           "Belgian Irish Scottish Welsh Norwegian Portuguese Romanian").split()
ROLES = "film director|composer|painter|footballer|novelist|architect|politician|actress|chemist|singer".split("|")
KINDS = ("film", "album", "novel", "river", "village", "club")


def _word(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(SYLL) for _ in range(n)).capitalize()


def wiki_passages(n: int, seed: int = 11) -> list[tuple[str, str, str]]:
    """(id, title, text) for n synthetic passages."""
    rng = random.Random(seed)
    pool = []
    for i in range(max(50, int(n * 0.9))):
        if i % 3 == 0:
            pool.append(f"{rng.choice(FIRST)} {_word(rng, 3)}")
        elif i % 3 == 1:
            pool.append(f"{_word(rng, 2)} {_word(rng, 2)}")
        else:
            pool.append(f"The {_word(rng, 2)} {_word(rng, 3)}")
    weights = np.array([1.0 / (r + 10) for r in range(len(pool))])
    weights /= weights.sum()
    nprng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        subject = pool[i % len(pool)]
        title = subject if rng.random() < 0.7 else f"{subject} ({rng.choice(KINDS)})"
        others = [pool[j] for j in nprng.choice(len(pool), size=rng.randint(3, 8), p=weights)]
        y1, y2 = rng.randint(1850, 1990), rng.randint(1900, 2020)
        sentences = [f"{subject} ({y1} - {y2}) was a {rng.choice(NATIONS)} {rng.choice(ROLES)} born in "
                     f"{others[0]}."]
        sentences += [f"In {rng.randint(1900, 2020)}, {subject} worked with {o} on a project about "
                      f"{rng.choice(['the war', 'rivers', 'music', 'the city', 'trade'])}." for o in others[1:-1]]
        sentences.append(f"Later works were produced by {others[-1]} and shown at the {rng.choice(NATIONS)} "
                         f"festival.")
        out.append((f"w{i:06d}", title, " ".join(sentences)))
    return out


class QueryModelEmbedder:
    """Passages: hashed unit vectors (no model time in the index build); single texts (queries):
    the real MiniLM model, so a search pays for its query embedding as in the product."""

    dim = 384

    def __init__(self, model) -> None:  # noqa: ANN001
        self.model = model
        self.name = f"hashed+{model.name}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1:
            return self.model.embed(texts)
        rng = np.random.default_rng(len(texts))
        v = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def bench_wikiscale(sizes: list[int], save, queries: int = 40) -> None:  # noqa: ANN001
    from investigator.bench import bench_analyzer, passages_as_chunks
    from tools.access import AccessSnapshot
    from tools.basic import BasicRetrieval
    from tools.benchdata import Dataset, Passage, Question
    from tools.embedding import MiniLMEmbedder
    from tools.graph.casegraph import build_case_graph
    from tools.graph.walk import GraphRetrieval
    from tools.index import build_chunk_index
    from tools.retrieval import SearchQuery

    model = MiniLMEmbedder()
    model.embed(["warm up"])
    emb = QueryModelEmbedder(model)
    rows = []
    for n in sizes:
        passages = wiki_passages(n)
        rng = random.Random(n)
        picks = rng.sample(passages, queries)
        qs = tuple(Question(id=f"q{i}", question=f"Where was the {t.split(' (')[0]} collaborator born?",
                            supporting_ids=(pid,)) for i, (pid, t, _x) in enumerate(picks))
        ds = Dataset(name=f"wiki-{n}", corpus=tuple(Passage(id=i, title=t, text=x) for i, t, x in passages),
                     questions=qs)
        chunks = passages_as_chunks(ds)
        access = AccessSnapshot(groups={c.source_id: ("g",) for c in chunks}, principal_groups=("g",))
        with tempfile.TemporaryDirectory() as tmp:
            idx, gdir = Path(tmp) / "i.duckdb", Path(tmp) / "g"
            t = time.perf_counter()
            build_chunk_index(chunks, idx, emb, f"wiki-{n}")
            index_s = time.perf_counter() - t
            t = time.perf_counter()
            analyzer = bench_analyzer(ds)
            analyzer_s = time.perf_counter() - t
            t = time.perf_counter()
            info = build_case_graph(idx, gdir, emb, analyzer)
            graph_s = time.perf_counter() - t
            t = time.perf_counter()
            graph = GraphRetrieval(idx, gdir, emb, analyzer)
            graph_load = time.perf_counter() - t
            t = time.perf_counter()
            basic = BasicRetrieval(idx, emb)
            basic_load = time.perf_counter() - t
            lat: dict[str, list[float]] = {"basic": [], "graph": []}
            for q in qs:
                query = SearchQuery(text=q.question, environment="*", k=10)
                for name, tool in (("basic", basic), ("graph", graph)):
                    t = time.perf_counter()
                    tool.search(query, access)
                    lat[name].append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            for q in qs:
                model.embed([q.question])
            embed_ms = (time.perf_counter() - t) / len(qs) * 1000
            pct = lambda xs, p: round(float(np.percentile(xs, p)), 2)  # noqa: E731
            rows.append({"passages": n, "entities": info.row_counts.get("entities"),
                         "relationships": info.row_counts.get("relationships"),
                         "communities": info.row_counts.get("communities"),
                         "index_build_s_hashed_vectors": round(index_s, 2), "analyzer_s": round(analyzer_s, 2),
                         "graph_build_s": round(graph_s, 2), "graphrag_s": info.graphrag_seconds,
                         "graph_load_s": round(graph_load, 2), "basic_load_s": round(basic_load, 2),
                         "query_embedding_ms": round(embed_ms, 2),
                         "basic_query_ms_p50": pct(lat["basic"], 50), "basic_query_ms_p95": pct(lat["basic"], 95),
                         "graph_query_ms_p50": pct(lat["graph"], 50), "graph_query_ms_p95": pct(lat["graph"], 95),
                         "peak_rss_mib": info.peak_rss_mib,
                         "graph_query_ms_p50_minus_embedding": round(statistics.median(lat["graph"]) - embed_ms, 2)})
            print(rows[-1], flush=True)
    save("wikiscale", {"embedder": f"passages hashed, queries {model.name} ({model.runtime})", "rows": rows})
