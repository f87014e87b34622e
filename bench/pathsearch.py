"""Path search on dense cases: time and memory of the causal trace, against path enumeration.

    .venv/bin/python bench/perf.py pathsearch --sizes 50 100 200 400

Each case has N entities, each depending on ten others (a catalog), every third one anomalous
with an onset a little earlier than the one before; every entity's telemetry, relations,
changes and placement were looked up. The figure is the trace (best-first over stated
relations, each entity expanded once) plus the cause at its root, as the decider runs them:
wall time (median of 5), peak Python allocation (tracemalloc) and the relations looked at.
For scale, the number of simple paths of at most `max_hops` hops from the subject that an
enumeration would walk is counted with networkx, capped at 2 million.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
import tracemalloc
from itertools import islice
from pathlib import Path

import networkx as nx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from rulesworld import World, case, dep, flat, rise  # noqa: E402  (the rules' own test world)

import graphs.rulebook.path as path  # noqa: E402
import graphs.rulebook.root as root  # noqa: E402
from graphs.rulebook.cause import cause_at  # noqa: E402

ENUMERATION_CAP = 2_000_000


def dense_world(n: int, fan_out: int = 10, seed: int = 7) -> tuple[World, list[tuple[str, str]]]:
    rnd = random.Random(seed)
    ents = [f"e{i}" for i in range(n)]
    w = World(case("e0"))
    edges = []
    for i, e in enumerate(ents):
        w.read(rise(e, onset_min=-0.01 * i) if i % 3 == 0 else flat(e))
        peers = [x for x in rnd.sample(ents, fan_out) if x != e]
        edges += [(e, x) for x in peers]
        w.read(*[dep(e, x) for x in peers], source_kind="catalog")
    w.everything_looked(*ents)
    return w, edges


def one(n: int, max_hops: int = 8) -> dict:
    w, edges = dense_world(n)
    k = w.knowledge()
    calls = {"n": 0}
    real = path.entity_state

    def counting(kk, e, caller=None):  # noqa: ANN001, ANN202
        calls["n"] += 1
        return real(kk, e, caller)

    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        t = root.trace(k, "e0", max_hops)
        cause_at(k, t)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    path.entity_state = root.entity_state = counting  # where the path and its root look states up
    try:
        t = root.trace(k, "e0", max_hops)
        cause_at(k, t)
    finally:
        path.entity_state = root.entity_state = real
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    g = nx.DiGraph(edges)
    paths = sum(1 for _ in islice(nx.all_simple_paths(g, "e0", [x for x in g if x != "e0"], cutoff=6),
                                  ENUMERATION_CAP))
    return {"entities": n, "relations": len(edges), "max_hops": max_hops,
            "trace_ms_median": round(statistics.median(times) * 1000, 2),
            "peak_alloc_kib": round(peak / 1024, 1), "entity_states_computed": calls["n"],
            "trace_nodes": len(t.nodes), "root": t.root, "path_len": len(t.path()),
            "simple_paths_up_to_6_hops": paths if paths < ENUMERATION_CAP else f">={ENUMERATION_CAP}"}


def bench_pathsearch(sizes: list[int], save) -> None:  # noqa: ANN001
    rows = []
    for n in sizes:
        r = one(n)
        rows.append(r)
        print(r, flush=True)
    save("pathsearch", {"rows": rows, "note": __doc__.strip().splitlines()[0]})
