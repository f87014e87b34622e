"""The metric-based root-cause baselines, called through the libraries' own APIs.

Every method gets the same `Problem`: the aligned metric matrix (one column per
(entity, metric), a minute grid over baseline + window), the split between the normal
(baseline) and abnormal (window) rows, the entity call graph, and the anomalous metrics
found by PyRCA's own statistical detector. The graph-based methods run on each of two
metric-level graphs made from the same call graph:

* `call` -- the call graph lifted: every metric of a dependency -> every metric of its
  dependents (a dependency's fault reaches its dependents), metric-less entities bridged;
* `struct` -- CIRCA's structural graph: CIRCA's own StructuralGraph over the call graph,
  each metric mapped to a golden signal by its role (T/S/L/E), with CIRCA's assumptions.

Each returns a metric ranking, best first, with the library's score where it gives one;
the runner maps it to entities.

Runs in bench/baselines/.venv (see setup.sh): PyRCA (sfr-pyrca 1.0.1) and CIRCA
(circa-clue 0.1.1) need NumPy < 2 and scikit-learn < 1.2.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import pandas as pd
import yaml

# CIRCA's structural-graph assumptions among the four golden signals, as in its own test
# configuration (tests/alg/sgraph/index.yml of the CIRCA repository) and its KDD '22 paper:
# within a component T -> S -> L -> E (and T -> L, T -> E, S -> E); a callee's traffic is
# caused by its callers' traffic; a callee's latency and errors reach its callers.
CIRCA_TYPES = ["T", "S", "L", "E"]
CIRCA_ASSUMPTIONS = {
    "graph": {"T": ["S", "L", "E"], "S": ["L", "E"], "L": ["E"]},
    "parents": {"T": ["T"]},
    "children": {"L": ["L"], "E": ["E"]},
    "descendents": {"E": ["E"]},
    "ancestors": {},
}
ROLE_TO_CIRCA = {"traffic": "T", "saturation": "S", "latency": "L", "errors": "E", "availability": "E"}


@dataclass
class Problem:
    case_id: str
    df: pd.DataFrame                    # all rows (baseline + window), usable columns only
    n_baseline: int
    columns: list[dict]                 # loader column dicts, same order as df.columns
    entity_deps: list[tuple[str, str]]  # (dependent, dependency) between all known entities
    subject: str
    seed: int = 0
    anomalies: list[str] = field(default_factory=list)
    anomalies_from: str = ""

    @property
    def normal(self) -> pd.DataFrame:
        return self.df.iloc[: self.n_baseline]

    @property
    def abnormal(self) -> pd.DataFrame:
        return self.df.iloc[self.n_baseline:]

    def entity_of(self) -> dict[str, str]:
        return {c["name"]: c["entity"] for c in self.columns}


# --------------------------------------------------------------------------- inputs

def lifted_entity_edges(problem: Problem) -> list[tuple[str, str]]:
    """Cause -> effect between entities that have metrics.

    The call graph says "A depends on B"; a fault of B reaches A, so B -> A. Entities
    without metrics (a client library, a proxy) are bridged: B -> (client) -> A gives B -> A.
    """
    g = nx.DiGraph()
    g.add_edges_from((b, a) for a, b in problem.entity_deps)
    with_metrics = {c["entity"] for c in problem.columns}
    edges = set()
    for src in with_metrics:
        if src not in g:
            continue
        stack, seen = list(g.successors(src)), set()
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in with_metrics:
                if n != src:
                    edges.add((src, n))
                continue
            stack.extend(g.successors(n))
    return sorted(edges)


def lifted_metric_graph(problem: Problem) -> nx.DiGraph:
    """Every metric of a cause entity -> every metric of its effect entity; no edges inside
    an entity (the call graph says nothing about them)."""
    by_entity: dict[str, list[str]] = {}
    for c in problem.columns:
        by_entity.setdefault(c["entity"], []).append(c["name"])
    g = nx.DiGraph()
    g.add_nodes_from(problem.df.columns)
    for cause, effect in lifted_entity_edges(problem):
        for m1 in by_entity.get(cause, []):
            for m2 in by_entity.get(effect, []):
                g.add_edge(m1, m2)
    return g


def adjacency(g: nx.DiGraph, order: list[str]) -> pd.DataFrame:
    """PyRCA's graph format: adjacency matrix, row = cause, column = effect."""
    return nx.to_pandas_adjacency(g, nodelist=order, dtype=int)


def break_cycles(g: nx.DiGraph) -> tuple[nx.DiGraph, list[tuple[str, str]]]:
    g = g.copy()
    removed = []
    while True:
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            return g, removed
        u, v = cycle[-1][:2]
        g.remove_edge(u, v)
        removed.append((u, v))


def detect_anomalies(problem: Problem) -> None:
    """PyRCA's StatsDetector (defaults: 4 sigma, window 3, threshold 0.5), trained on the
    baseline and run on the window. Without any finding, the subject's own metrics stand in
    (the alert asserts them)."""
    from pyrca.outliers.stats import StatsDetector, StatsDetectorConfig

    det = StatsDetector(StatsDetectorConfig())
    det.train(problem.normal)
    found = list(det.predict(problem.abnormal).anomalous_metrics)
    if found:
        problem.anomalies, problem.anomalies_from = found, "pyrca StatsDetector (baseline -> window)"
    else:
        subj = [c["name"] for c in problem.columns if c["entity"] == problem.subject]
        problem.anomalies = subj
        problem.anomalies_from = "none detected; the subject's metrics (the alert)"


def structural_metric_graph(problem: Problem) -> nx.DiGraph:
    """CIRCA's structural graph over the same call graph: CIRCA's own StructuralGraph, given
    every entity as a component with its callees (its dependencies, placement included) and
    every metric mapped to a golden-signal meta variable by its `role` (traffic T,
    saturation S, latency L, errors/availability E); assumptions as in CIRCA (above).
    Unlike the lifted graph it lets traffic flow from callers to callees, so a noisy
    consumer's traffic can explain a shared dependency's saturation."""
    from circa.graph.structural import StructuralGraph

    callees: dict[str, set[str]] = {}
    for a, b in problem.entity_deps:
        callees.setdefault(a, set()).add(b)
    entities = sorted({a for a, _ in problem.entity_deps} | {b for _, b in problem.entity_deps}
                      | {c["entity"] for c in problem.columns})
    mappings: dict[str, dict[str, list]] = {}
    for c in problem.columns:
        mappings.setdefault(c["entity"], {})[c["metric"]] = [
            {"type": ROLE_TO_CIRCA.get(c["role"], "S"), "component": c["entity"]}]
    config = {"types": CIRCA_TYPES, "assumptions": CIRCA_ASSUMPTIONS,
              "components": [{"name": e,
                              "dependencies": {e: sorted(callees[e])} if callees.get(e) else {},
                              "mappings": mappings.get(e, {})} for e in entities]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as fh:
        yaml.safe_dump(config, fh)
        path = fh.name
    try:
        sg = StructuralGraph(filename=path)
    finally:
        os.unlink(path)
    mask: dict[str, set[str]] = {}
    for c in problem.columns:
        mask.setdefault(c["entity"], set()).add(c["metric"])
    ng = sg.visit(mask)
    g = nx.DiGraph()
    g.add_nodes_from(problem.df.columns)
    g.add_edges_from((f"{a.entity}|{a.metric}", f"{b.entity}|{b.metric}") for a, b in ng.edges)
    return g


GRAPHS = {"call": lifted_metric_graph, "struct": structural_metric_graph}


# --------------------------------------------------------------------------- PyRCA

def _guard_dead_ends(model) -> list[str]:
    """PyRCA normalises each node's outgoing weights (w / sum(w)); a node whose weights are
    all 0 -- an anomalous metric with no edge (its self-weight is 0 by design), or one whose
    neighbours are all uncorrelated -- gets NaN probabilities and `np.random.choice` raises
    `ValueError: probabilities contain NaN`. Such a node keeps the walker where it is."""
    dead: list[str] = []
    build = model._build_weighted_graph

    def build_guarded(df, anomalies, rho):
        g = build(df, anomalies, rho)
        for m, entry in g.items():
            if not np.all(np.isfinite(entry["probs"])):
                entry["nodes"], entry["weights"], entry["probs"] = [m], [1.0], np.array([1.0])
                dead.append(m)
        return g

    model._build_weighted_graph = build_guarded
    return dead


def pyrca_random_walk(problem: Problem, graph: str) -> dict:
    from pyrca.analyzers.random_walk import RandomWalk, RandomWalkConfig

    g = GRAPHS[graph](problem)
    model = RandomWalk(RandomWalkConfig(graph=adjacency(g, list(problem.df.columns))))
    # The explanation paths PyRCA adds to its result enumerate every path from each root to
    # each anomaly (exponential in a dense graph: minutes on 25 entities); the ranking does
    # not use them, so they are not computed.
    model._get_root_cause_paths = lambda root, anomaly, scores: []
    dead = _guard_dead_ends(model)
    res = model.find_root_causes(problem.anomalies, problem.df, random_seed=problem.seed)
    ranking = [(str(n), float(s)) for n, s in res.root_cause_nodes]
    return {"metric_ranking": ranking, "info": {"graph_edges": g.number_of_edges(),
                                                "anomalies": problem.anomalies, "dead_ends": dead}}


def pyrca_random_walk_all(problem: Problem, graph: str) -> dict:
    """The same walk, every metric ranked by its visit frequency (the scores PyRCA computes
    before keeping only parentless nodes), through the analyzer's own methods."""
    from pyrca.analyzers.random_walk import RandomWalk, RandomWalkConfig

    g = GRAPHS[graph](problem)
    cfg = RandomWalkConfig(graph=adjacency(g, list(problem.df.columns)))
    model = RandomWalk(cfg)
    dead = _guard_dead_ends(model)
    wg = model._build_weighted_graph(problem.df, problem.anomalies, cfg.rho)
    merged: dict[str, int] = {}
    for a in problem.anomalies:
        for k, v in model._random_walk(wg, a, cfg.num_steps, cfg.num_repeats,
                                       random_seed=problem.seed).items():
            merged[k] = merged.get(k, 0) + v
    total = sum(merged.values()) or 1
    ranking = sorted(((m, merged.get(m, 0) / total) for m in problem.df.columns),
                     key=lambda x: -x[1])
    return {"metric_ranking": ranking, "info": {"graph_edges": g.number_of_edges(),
                                                "anomalies": problem.anomalies, "dead_ends": dead}}


def pyrca_rcd(problem: Problem, graph: str | None = None) -> dict:
    from pyrca.analyzers.rcd import RCD, RCDConfig

    np.random.seed(problem.seed)
    k = problem.df.shape[1]
    model = RCD(RCDConfig(k=k))   # defaults otherwise: chi-square, 5 bins, gamma 5, localized
    res = model.find_root_causes(problem.normal.copy(), problem.abnormal.copy())
    ranking = [(str(n), None) for n, _ in res.root_cause_nodes]
    return {"metric_ranking": ranking, "info": {"k": k, "returned": len(ranking)}}


MAX_BN_PARENTS = 16


def pyrca_bayesian(problem: Problem, graph: str) -> dict:
    from pyrca.analyzers.bayesian import BayesianNetwork, BayesianNetworkConfig

    g, removed = break_cycles(GRAPHS[graph](problem))
    max_in = max((d for _, d in g.in_degree()), default=0)
    if max_in > MAX_BN_PARENTS:
        raise RuntimeError(f"a metric has {max_in} parents in the graph; its CPD would have "
                           f"2^{max_in} columns (limit {MAX_BN_PARENTS})")
    model = BayesianNetwork(BayesianNetworkConfig(graph=adjacency(g, list(problem.df.columns))))
    # PyRCA builds the network from the edges only; metrics without any edge are added as
    # nodes so that they can be fitted and proposed as roots like the others.
    model.bayesian_model.add_nodes_from([m for m in problem.df.columns if g.degree(m) == 0])
    # pgmpy takes a variable's states from the data: a metric never labelled anomalous gets
    # a one-state CPD and PyRCA's own check (`cardinality ... should be = 2`) fails. PyRCA
    # assumes long training data where every metric shows both states; here the states are
    # declared binary, which changes nothing else.
    fit = model.bayesian_model.fit

    def fit_binary(data, estimator=None, **kw):
        kw["state_names"] = {c: [0, 1] for c in data.columns}
        return fit(data, estimator=estimator, **kw)

    model.bayesian_model.fit = fit_binary
    # Trained on the whole span with PyRCA's default labelling (thresholds estimated from the
    # data itself): the baseline alone has hardly an anomalous label to learn from, and
    # train()'s `detector=` path is unusable (it subscripts a DetectionResults dataclass).
    model.train(problem.df)
    res = model.find_root_causes(problem.anomalies)
    ranking = []
    for n, s in res.root_cause_nodes:
        name = str(n)
        ranking.append((name[5:] if name.startswith("ROOT_") else name, float(s)))
    return {"metric_ranking": ranking, "info": {
        "graph_edges": g.number_of_edges(), "cycle_edges_removed": [list(e) for e in removed],
        "anomalies": problem.anomalies}}


# --------------------------------------------------------------------------- CIRCA

def _circa_case(problem: Problem):
    from circa.model.case import CaseData
    from circa.model.data_loader import MemoryDataLoader
    from circa.model.graph import Node

    t = (problem.df.index.asi8 // 10**9).astype(float) if isinstance(
        problem.df.index, pd.DatetimeIndex) else np.arange(len(problem.df), dtype=float) * 60
    data: dict[str, dict[str, list]] = {}
    for c in problem.columns:
        data.setdefault(c["entity"], {})[c["metric"]] = list(zip(t.tolist(), problem.df[c["name"]].tolist()))
    n, nb = len(problem.df), problem.n_baseline
    subj = [c for c in problem.columns if c["entity"] == problem.subject] or problem.columns
    sli = Node(subj[0]["entity"], subj[0]["metric"])
    # train = the baseline rows (before start - onset_lead), test = the rest (CIRCA: train_window = lookup -
    # detect + 1, test_window = detect; data from detect_time - lookup to detect_time)
    case = CaseData(data_loader=MemoryDataLoader(data), sli=sli, detect_time=float(t[-1]),
                    lookup_window=n - 1, detect_window=n - nb)
    return case, float(t[-1])


def _circa_rank(model, case, current) -> list[tuple[str, float]]:
    ranks = model.analyze(data=case, current=current)
    return [(f"{node.entity}|{node.metric}", float(score.score)) for node, score in ranks]


def circa_rht_da(problem: Problem, graph: str) -> dict:
    """CIRCA's regression-based hypothesis testing + descendant adjustment (RHT-DA, with
    CIRCA's own settings: linear ANM regressor, tau_max 0, DA threshold 3) on the graph."""
    from circa.alg.ci import DAScorer, RHTScorer
    from circa.alg.common import Model
    from circa.graph.common import StaticGraphFactory
    from circa.model.graph import MemoryGraph, Node

    g = GRAPHS[graph](problem)
    name2node = {c["name"]: Node(c["entity"], c["metric"]) for c in problem.columns}
    ng = nx.DiGraph()
    ng.add_nodes_from(name2node.values())
    ng.add_edges_from((name2node[a], name2node[b]) for a, b in g.edges)
    model = Model(graph_factory=StaticGraphFactory(MemoryGraph(ng)),
                  scorers=[RHTScorer(), DAScorer(threshold=3)])
    case, current = _circa_case(problem)
    return {"metric_ranking": _circa_rank(model, case, current),
            "info": {"graph_edges": ng.number_of_edges()}}


def circa_nsigma(problem: Problem, graph: str | None = None) -> dict:
    """Reference without any graph: CIRCA's NSigmaScorer (max |z| of the window against the
    baseline)."""
    from circa.alg.common import Model, NSigmaScorer
    from circa.graph.common import EmptyGraphFactory

    model = Model(graph_factory=EmptyGraphFactory(), scorers=[NSigmaScorer()])
    case, current = _circa_case(problem)
    return {"metric_ranking": _circa_rank(model, case, current), "info": {}}


# name -> (function, graph)
METHODS = {
    "pyrca_rw@call": (pyrca_random_walk, "call"),
    "pyrca_rw@struct": (pyrca_random_walk, "struct"),
    "pyrca_rw_all@call": (pyrca_random_walk_all, "call"),
    "pyrca_rw_all@struct": (pyrca_random_walk_all, "struct"),
    "pyrca_rcd": (pyrca_rcd, None),
    "pyrca_bn@call": (pyrca_bayesian, "call"),
    "pyrca_bn@struct": (pyrca_bayesian, "struct"),
    "circa@call": (circa_rht_da, "call"),
    "circa@struct": (circa_rht_da, "struct"),
    "nsigma": (circa_nsigma, None),
}

DESCRIPTIONS = {
    "pyrca_rw@call": "PyRCA RandomWalk, lifted call graph (its output: parentless metrics, at most 4)",
    "pyrca_rw@struct": "PyRCA RandomWalk, structural graph (same output rule)",
    "pyrca_rw_all@call": "PyRCA RandomWalk, every metric ranked by visit frequency, lifted call graph",
    "pyrca_rw_all@struct": "PyRCA RandomWalk, every metric ranked by visit frequency, structural graph",
    "pyrca_rcd": "PyRCA RCD (learns its own graph from baseline vs window)",
    "pyrca_bn@call": "PyRCA BayesianNetwork, lifted call graph (roots: parentless metrics)",
    "pyrca_bn@struct": "PyRCA BayesianNetwork, structural graph (roots: parentless metrics)",
    "circa@call": "CIRCA RHT + DA, lifted call graph",
    "circa@struct": "CIRCA RHT + DA, CIRCA's structural graph (as in its paper)",
    "nsigma": "reference: n-sigma, no graph (CIRCA NSigmaScorer)",
}


def preload() -> None:
    """Import the libraries once in the parent, so that each method's forked process has them."""
    import circa.alg.ci  # noqa: F401
    import circa.alg.common  # noqa: F401
    import circa.graph.common  # noqa: F401
    import circa.graph.structural  # noqa: F401
    import circa.model.data_loader  # noqa: F401
    import pyrca.analyzers.bayesian  # noqa: F401
    import pyrca.analyzers.random_walk  # noqa: F401
    import pyrca.analyzers.rcd  # noqa: F401
    import pyrca.outliers.stats  # noqa: F401


def run(name: str, problem: Problem) -> dict:
    fn, graph = METHODS[name]
    return fn(problem, graph)
