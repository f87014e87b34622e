"""Performance figures (printed and kept as JSON), never timed assertions.

    .venv/bin/python bench/perf.py vector                 # basic vector search vs a NumPy brute-force floor
    .venv/bin/python bench/perf.py investigation          # whole reference investigation, both tools, warm
    .venv/bin/python bench/perf.py checkpoint             # per-step cost with and without the checkpointer
    .venv/bin/python bench/perf.py scale --sizes 1000 3000 9000   # index build and query growth, both tools
    .venv/bin/python bench/perf.py embedding              # MiniLM runtimes: passages/s and dense recall, same run
    .venv/bin/python bench/perf.py retrieval              # every tool on the three public multi-hop dev sets
    .venv/bin/python bench/perf.py wikiscale --sizes 1000 6000 20000 50000   # graph build and query growth
    .venv/bin/python bench/perf.py pathsearch --sizes 50 100 200 400         # causal trace on dense cases
    .venv/bin/python bench/perf.py all

Each writes bench/results/<name>.json with the machine, versions and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from state import stable_id  # noqa: E402
from tools.access import AccessSnapshot  # noqa: E402
from tools.chunking import Chunk  # noqa: E402
from tools.retrieval import SearchQuery  # noqa: E402

REFERENCE = ROOT / "cases" / "ALR-20260429-017"
RESULTS = ROOT / "bench" / "results"
MULTIHOP = Path(os.environ.get("INVESTIGATOR_MULTIHOP_DIR", ROOT.parent / "shared" / "bench" / "multihop-dev"))
MULTIHOP_SETS = ("musique-dev100", "2wiki-dev100", "hotpotqa-dev100")


def _machine() -> dict:
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "versions": {p: _version(p) for p in ("numpy", "duckdb", "langgraph", "graphrag", "torch",
                                                   "sentence-transformers", "networkx", "scipy", "onnxruntime")}}


def _version(package: str) -> str | None:
    try:
        return version(package)
    except Exception:  # noqa: BLE001 - an optional package that is not installed
        return None


def _save(name: str, data: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {"benchmark": name, "command": " ".join(["python", *sys.argv]), "machine": _machine(), **data}
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2))
    print(json.dumps({k: v for k, v in data.items() if k != "machine"}, indent=2))


class FixedEmbedder:
    """Random unit vectors by text hash: isolates search cost from model cost."""

    name = "fixed-random"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.stack([np.random.default_rng(int(stable_id(t), 16) % 2**32).standard_normal(self.dim) for t in texts])
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def synthetic_chunks(n: int, seed: int = 7) -> list[Chunk]:
    """Incident-like passages from templates, with services, clients, keys and versions."""
    rng = random.Random(seed)
    services = [f"svc-{i:03d}" for i in range(max(10, n // 50))]
    clients = [f"client-{i:02d}" for i in range(max(5, n // 200))]
    keys = [f"key_{i:03d}_timeout" for i in range(max(10, n // 40))]
    templates = [
        "{s} calls {t} through {c}; when {k} is too high requests queue and latency rises.",
        "Runbook for {s}: if p95 latency is high check {c} retries and the value of `{k}`.",
        "{c} {v} changed the default of `{k}` used by {s} and {t}.",
        "Postmortem: {s} saw errors after {c} was upgraded to {v}; `{k}` was raised by the release.",
    ]
    out = []
    for i in range(n):
        s, t = rng.sample(services, 2)
        text = rng.choice(templates).format(s=s, t=t, c=rng.choice(clients), k=rng.choice(keys),
                                            v=f"{rng.randint(1, 5)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}")
        out.append(Chunk(id=f"c{i:06d}", source_id=f"doc-{i // 4:05d}", kind="doc", environment="*", service=s,
                         version="1", revision=stable_id(text), status="current", trust="verified", title=s,
                         start=0, end=len(text), text=text))
    return out


def _access(chunks: list[Chunk]) -> AccessSnapshot:
    return AccessSnapshot(groups={c.source_id: ("g",) for c in chunks}, principal_groups=("g",))


def bench_vector(n: int = 100_000, queries: int = 50) -> None:
    from tools.basic import BasicRetrieval, top_k
    from tools.index import build_chunk_index

    emb = FixedEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        chunks = synthetic_chunks(n)
        t0 = time.perf_counter()
        build_chunk_index(chunks, Path(tmp) / "v.duckdb", emb, "bench")
        build_s = time.perf_counter() - t0
        tool = BasicRetrieval(Path(tmp) / "v.duckdb", emb, lexical=False)
        access = _access(chunks)
        vecs = tool.table.vectors
        qtexts = [f"query {i}" for i in range(queries)]
        qvecs = emb.embed(qtexts)
        ours, floor, floor_batched = [], [], []
        for text, qv in zip(qtexts, qvecs):
            q = SearchQuery(text=text, environment="prod", k=10)
            t = time.perf_counter()
            tool.search(q, access)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            top_k(vecs @ qv, 10)
            floor.append(time.perf_counter() - t)
        t = time.perf_counter()
        scores = qvecs @ vecs.T
        for row in scores:
            top_k(row, 10)
        floor_batched = (time.perf_counter() - t) / queries
        # the query embedding is a fixed-cost model call in both: measure it apart
        t = time.perf_counter()
        for text in qtexts:
            emb.embed([text])
        embed_ms = (time.perf_counter() - t) / queries * 1000
    p50 = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    _save("vector", {"vectors": n, "dim": 384, "index_build_seconds": round(build_s, 2),
                     "basic_search_ms_p50": round(p50(ours), 3), "numpy_floor_ms_p50": round(p50(floor), 3),
                     "numpy_floor_batched_ms": round(floor_batched * 1000, 3),
                     "fake_query_embedding_ms": round(embed_ms, 3),
                     "ratio_search_to_floor": round(p50(ours) / p50(floor), 2),
                     "ratio_search_minus_embedding_to_floor": round((p50(ours) - embed_ms) / p50(floor), 2)})


def _investigator(ws: Path, index_root: Path, embedder=None):  # noqa: ANN001, ANN202
    from investigator.config import Settings
    from investigator.runtime import Investigator

    return Investigator(Settings(workspace=ws, index_root=index_root), embedder=embedder, progress=lambda _m: None)


def bench_investigation(repeats: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = _investigator(root / "base", root / "idx")
        t = time.perf_counter()
        base.index(REFERENCE)
        basic_build = time.perf_counter() - t
        t = time.perf_counter()
        base.index_graph(REFERENCE)
        graph_build = time.perf_counter() - t
        out = {"basic_index_build_seconds": round(basic_build, 2), "graph_index_build_seconds": round(graph_build, 2)}
        for tool in ("basic", "graph"):
            times, rounds, reads = [], 0, 0
            for i in range(repeats):
                inv = _investigator(root / f"{tool}{i}", root / "idx", base.embedder)
                r = inv.start(REFERENCE, retrieval=tool)
                times.append(r.seconds)
                rounds, reads = r.report.budgets["rounds_used"], r.report.budgets["reads_used"]
            out[tool] = {"median_seconds": round(statistics.median(times), 3), "runs": [round(x, 3) for x in times],
                         "rounds": rounds, "reads": reads}
    _save("investigation", out)


def bench_checkpoint(repeats: int = 5) -> None:
    from graphs.build import build_graph
    from investigator.checkpoints import open_checkpointer
    from investigator.loading import load_case_folder

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = _investigator(root / "base", root / "idx")
        base.index(REFERENCE)
        base.embedder.embed(["warm"])
        with_cp, without, sizes, steps = [], [], [], 0
        for i in range(repeats):
            for mode in ("with", "without"):
                inv = _investigator(root / f"{mode}{i}", root / "idx", base.embedder)
                case = inv.validate(REFERENCE)
                tool = inv.retrieval("basic", REFERENCE)
                from state.store import RunRow
                row = inv.store.create_run(RunRow(run_id=f"r{i}", case_id=case.id, case_dir=str(REFERENCE),
                                                  retrieval="basic", principal_id=case.principal.id,
                                                  rounds_limit=case.budgets.rounds, reads_limit=case.budgets.reads))
                deps = inv.driver.deps(load_case_folder(REFERENCE, inv.progress), row, tool)
                cfg = {"configurable": {"thread_id": row.run_id}, "recursion_limit": 200}
                if mode == "with":
                    with open_checkpointer(inv.settings) as saver:
                        t = time.perf_counter()
                        build_graph(deps, saver).invoke({"round": 0}, cfg, durability="sync")
                        with_cp.append(time.perf_counter() - t)
                        hist = list(saver.list(cfg))
                        steps = len(hist)
                        sizes += [len(saver.serde.dumps_typed(h.checkpoint)[1]) for h in hist]
                else:
                    t = time.perf_counter()
                    build_graph(deps, None).invoke({"round": 0}, cfg)
                    without.append(time.perf_counter() - t)
    w, wo = statistics.median(with_cp), statistics.median(without)
    _save("checkpoint", {"checkpoints_per_run": steps, "checkpoint_bytes_median": int(statistics.median(sizes)),
                         "checkpoint_bytes_max": max(sizes), "run_seconds_with_checkpointer": round(w, 3),
                         "run_seconds_without": round(wo, 3), "ratio_with_to_without": round(w / wo, 3),
                         "overhead_ms_per_checkpoint": round((w - wo) / steps * 1000, 3)})


def bench_resume() -> None:
    import shutil
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {**os.environ, "INVESTIGATOR_INDEX_ROOT": str(root / "idx")}
        cli = [sys.executable, "-m", "investigator.cli", "--home"]
        subprocess.run([*cli, str(root / "warm"), "index", str(REFERENCE), "--tool", "basic"], env=env, check=True,
                       capture_output=True, cwd=ROOT)
        latencies = []
        for i in range(3):
            home = root / f"h{i}"
            subprocess.run([*cli, str(home), "run", str(REFERENCE), "--out", str(home / "o")], cwd=ROOT,
                           env={**env, "INVESTIGATOR_CRASH_AT": "read:6"}, capture_output=True)
            t = time.perf_counter()
            subprocess.run([*cli, str(home), "resume", "run_0429_017", "--out", str(home / "o")], cwd=ROOT, env=env,
                           check=True, capture_output=True)
            latencies.append(time.perf_counter() - t)
            shutil.rmtree(home)
    _save("resume", {"kill_point": "read:6", "resume_to_finish_seconds": [round(x, 2) for x in latencies],
                     "median_seconds": round(statistics.median(latencies), 2),
                     "note": "a new process: imports and model load included"})


def bench_scale(sizes: list[int], queries: int = 30) -> None:
    from tools.basic import BasicRetrieval
    from tools.embedding import MiniLMEmbedder
    from tools.entities import EntityExtractor
    from tools.graph import GraphRetrieval, build_case_graph
    from tools.index import build_chunk_index

    emb = MiniLMEmbedder()
    emb.embed(["warm"])
    rows = []
    for n in sizes:
        chunks = synthetic_chunks(n)
        names = {c.service: "service" for c in chunks}
        extractor = EntityExtractor({**names, **{w: "component" for c in chunks for w in c.text.split() if w.startswith("client-")}})
        with tempfile.TemporaryDirectory() as tmp:
            idx = Path(tmp) / "i.duckdb"
            t = time.perf_counter()
            build_chunk_index(chunks, idx, emb, f"scale-{n}")
            basic_build = time.perf_counter() - t
            t = time.perf_counter()
            info = build_case_graph(idx, Path(tmp) / "g", emb, extractor)
            graph_build = time.perf_counter() - t
            access = _access(chunks)
            qs = [SearchQuery(text=f"{c.service} latency retries", environment="*", seeds=(c.service,), k=5)
                  for c in random.Random(1).sample(chunks, queries)]
            lat = {}
            for name, tool in (("basic", BasicRetrieval(idx, emb)), ("graph", GraphRetrieval(idx, Path(tmp) / "g", emb, extractor))):
                ts = []
                for q in qs:
                    t = time.perf_counter()
                    tool.search(q, access)
                    ts.append(time.perf_counter() - t)
                lat[name] = round(statistics.median(ts) * 1000, 2)
            rows.append({"chunks": n, "basic_build_s": round(basic_build, 2), "graph_build_s": round(graph_build, 2),
                         "graph_rss_mib": info.peak_rss_mib, "basic_query_ms_p50": lat["basic"],
                         "graph_query_ms_p50": lat["graph"],
                         "basic_build_ms_per_chunk": round(basic_build / n * 1000, 3),
                         "graph_build_ms_per_chunk": round(graph_build / n * 1000, 3)})
            print(rows[-1], flush=True)
    _save("scale", {"rows": rows})


def _multihop(name: str):  # noqa: ANN202
    from tools.benchdata import load_dataset

    return load_dataset(MULTIHOP / f"{name}.json")


def _rss_mib() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def bench_embedding(rounds: int = 2) -> None:
    """Passages per second of each MiniLM runtime on the same texts in the same process,
    interleaved (the machine is shared, so ratios are what to read), and recall@5 of plain
    dense retrieval with each runtime's vectors on the three dev sets."""
    from tools.embedding import SentenceTransformerEmbedder
    from tools.evaluation import mean, recall_at_k
    from tools.onnx_embedding import OnnxMiniLMEmbedder

    sets = {n: _multihop(n) for n in MULTIHOP_SETS}
    texts = [f"{p.title}\n{p.text}" for ds in sets.values() for p in ds.corpus]
    runtimes = {
        "sentence-transformers (torch, batch 32)": SentenceTransformerEmbedder(),
        "onnx fp32, length-sorted": OnnxMiniLMEmbedder("fp32"),
        "onnx fp32, input order": OnnxMiniLMEmbedder("fp32", sort_by_length=False),
        "onnx int8, length-sorted": OnnxMiniLMEmbedder("int8"),
        "onnx int8, input order": OnnxMiniLMEmbedder("int8", sort_by_length=False),
    }
    for emb in runtimes.values():
        emb.embed(["warm up"])
    seconds: dict[str, list[float]] = {n: [] for n in runtimes}
    vectors: dict[str, np.ndarray] = {}
    sample = texts[::3]  # a third of the passages per timed round, every runtime on the same texts
    for _ in range(rounds):
        for name, emb in runtimes.items():
            t = time.perf_counter()
            emb.embed(sample)
            seconds[name].append(time.perf_counter() - t)
            print(f"{name}: {len(sample) / seconds[name][-1]:.1f} passages/s", flush=True)
    quality = {}
    for name in ("sentence-transformers (torch, batch 32)", "onnx fp32, length-sorted", "onnx int8, length-sorted"):
        vectors[name] = runtimes[name].embed(texts)
        at, quality[name] = 0, {}
        for set_name, ds in sets.items():
            v = vectors[name][at:at + len(ds.corpus)]
            at += len(ds.corpus)
            q = runtimes[name].embed([x.question for x in ds.questions])
            ids = [p.id for p in ds.corpus]
            r5 = [recall_at_k([ids[i] for i in np.argsort(-(v @ qv), kind="stable")[:5]], x.supporting_ids, 5)
                  for qv, x in zip(q, ds.questions, strict=True)]
            quality[name][set_name] = round(mean(r5), 4)
    ref = vectors["sentence-transformers (torch, batch 32)"]
    base = statistics.median(seconds["sentence-transformers (torch, batch 32)"])
    rows = {name: {"passages_per_second": round(len(sample) / statistics.median(ts), 1),
                   "speedup_vs_sentence_transformers": round(base / statistics.median(ts), 2),
                   "seconds": [round(x, 2) for x in ts]} for name, ts in seconds.items()}
    for name in quality:
        cos = (vectors[name] * ref).sum(axis=1)
        rows[name]["dense_recall@5"] = quality[name]
        rows[name]["cosine_to_sentence_transformers"] = {"min": round(float(cos.min()), 4),
                                                         "mean": round(float(cos.mean()), 5)}
    _save("embedding", {"passages_timed": len(sample), "rounds": rounds, "corpus": list(MULTIHOP_SETS),
                        "runtimes": rows})


def bench_retrieval() -> None:
    """``investigator bench retrieval`` with every tool on each dev set: one JSON per set."""
    from investigator.bench import TOOLS, run_retrieval_bench, to_markdown
    from tools.embedding import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.embed(["warm up"])
    for name in MULTIHOP_SETS:
        with tempfile.TemporaryDirectory(prefix="inv-bench-") as tmp:
            res = run_retrieval_bench(_multihop(name), emb, Path(tmp), list(TOOLS), progress=print)
        res["command"] = "python bench/perf.py retrieval"
        res["versions"] = _machine()["versions"]
        (RESULTS / f"retrieval-{name}.json").write_text(json.dumps(res, indent=2))
        print(to_markdown(res), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["vector", "investigation", "checkpoint", "resume", "scale", "embedding",
                                    "retrieval", "wikiscale", "pathsearch", "all"])
    p.add_argument("--sizes", type=int, nargs="+", default=None)
    a = p.parse_args()
    if a.what in ("vector", "all"):
        bench_vector()
    if a.what in ("investigation", "all"):
        bench_investigation()
    if a.what in ("checkpoint", "all"):
        bench_checkpoint()
    if a.what in ("resume", "all"):
        bench_resume()
    if a.what in ("scale", "all"):
        bench_scale(a.sizes or [1000, 3000, 9000])
    if a.what in ("embedding", "all"):
        bench_embedding()
    if a.what in ("retrieval", "all"):
        bench_retrieval()
    if a.what in ("wikiscale", "all"):
        from wikiscale import bench_wikiscale

        bench_wikiscale(a.sizes or [1000, 6000, 20000, 50000], _save)
    if a.what in ("pathsearch", "all"):
        from pathsearch import bench_pathsearch

        bench_pathsearch(a.sizes or [50, 100, 200, 400], _save)


if __name__ == "__main__":
    main()
