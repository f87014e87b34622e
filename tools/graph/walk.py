"""The ``graph`` retrieval tool: personalized PageRank over a text-unit <-> entity graph.

Built from the graphrag index of ``casegraph.build_case_graph``: every graphrag text
unit is one chunk of the DuckDB index (``text_units.document_id``), and
``text_units.entity_ids`` says which entities (names from the product's extractor) it
mentions. At load time networkx holds the bipartite graph chunk -- entity (a mention
edge, weight 1; a chunk's edge to its own subject -- its ``service`` when that is an
entity, else its source ``title`` when that is one -- weight ``subject_weight``, added even
when the chunk does not name it). It is exported once to sparse matrices (``tools.sparse``).

Per query, before anything is scored:

* the **walk scope** is the chunks the principal may read (``access.readable()``) in the
  query's environment or ``*``, and present in the current chunk index. Only their
  entity mentions make entity nodes, so an entity seen only in unreadable (or
  out-of-environment) text is not a node, and the same name seen in another
  environment is not a bridge: the per-query graph is rebuilt from the scope.
* the **candidates** are the scope chunks of the asked kinds, minus ``query.exclude``.
  Scope chunks of other kinds, and already-read chunks, may carry the walk (they are
  readable and in scope) but are never returned.

Ranking: seeds are ``query.seeds`` plus the analyzer's names of ``query.text`` that are
entity nodes, each weighted 1 / (scope chunks
mentioning it), so a rare entity counts for more than a common one; PageRank personalised
on them (damping 0.85) runs as a sparse block iteration on the scope's transition matrix,
with the entities that only one chunk names folded into that chunk (``Scope.leaves``: the
same fixed point, so the same numbers as ``nx.pagerank`` on ``walk_graph``, for a third of
the work per sweep). The walked
candidates (PageRank score > 0) are ranked by ``log(PageRank) + DENSE_WEIGHT * cosine``:
the walk says which chunks are connected to the question's entities, the dense
similarity which of them answer it (a product of the two, not a rank fusion, so a chunk
the walk never reached cannot enter; ``ranking="ppr"`` ranks by PageRank alone,
``ranking="rrf"`` by reciprocal-rank fusion of both). With no linked seed, the ranking is
the basic tool's: dense and BM25 fused by reciprocal rank (``fallback``), which also fills
the list when the walk reaches fewer than ``k`` candidates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np
import pandas as pd

from state.errors import IndexMissing
from state.evidence import Hit
from tools.access import AccessSnapshot
from tools.basic import ChunkTable, masked_scores, rrf, top_k
from tools.embedding import Embedder
from tools.index import open_index
from tools.lexical import BM25
from tools.retrieval import SearchQuery
from tools.sparse import CSR

from .analyzer import EntityAnalyzer, canonical
from .bridges import GraphBridge, bridge_entities
from .casegraph import CASE_MANIFEST, read_manifest

DAMPING = 0.85
SUBJECT_WEIGHT = 3.0
HUB_DAMPING = 0.0
"""Off: damping hubs moved recall by a point either way on three multi-hop sets (NOTES.md)."""
DENSE_WEIGHT = 5.0
"""Weight of the cosine next to log(PageRank) in the default ranking (one setting for every
corpus; measured on three public multi-hop sets, see NOTES.md)."""
Ranking = Literal["ppr+dense", "ppr", "rrf"]
TOL = 1e-5  # L1 change per sweep; the top 10 equalled a 1e-12 solve on all MuSiQue questions even at 1e-4
MAX_ITER = 200


@dataclass(frozen=True)
class _Leaves:
    """The scope's walk with its leaf entities folded in (``Scope.leaves``)."""

    joins: np.ndarray  # scope entity columns linked to two or more chunks (iterated)
    leaf: np.ndarray  # scope entity columns linked to one chunk (solved exactly)
    to_c: CSR  # joining entity -> chunk
    to_e: CSR  # chunk -> joining entity
    to_leaf: CSR  # chunk -> leaf entity (the leaves' own scores, at the end)
    from_leaf: CSR  # leaf entity -> its chunk (where a leaf's restart mass lands)
    keep: np.ndarray  # 1 / (1 - s_c), s_c the share of chunk c's score that goes out and back through its leaves
    dangling: np.ndarray  # chunks that link to no entity


class Scope:
    """The per-query walk graph: scope chunks x their entities, as sparse matrices."""

    def __init__(self, rows: np.ndarray, ents: np.ndarray, weights: CSR, mentions: CSR,
                 support: np.ndarray, n_entities: int) -> None:
        self.rows = rows  # chunk rows (ChunkTable positions) in scope
        self.ents = ents  # entity columns with a mention in scope
        self.W = weights  # len(rows) x len(ents), edge weights
        self.M = mentions  # same shape, 1 where the chunk text names the entity
        self.support = support  # scope chunks naming each entity
        self._col = np.full(n_entities, -1, dtype=np.int64)
        self._col[ents] = np.arange(len(ents))

    def col(self, entity: int) -> int:
        """Column of a global entity index in this scope, -1 when it is not a node."""
        return int(self._col[entity])

    def transition(self, damping: float) -> tuple[CSR, CSR, np.ndarray]:
        """(entity -> chunk, chunk -> entity, dangling chunks), both blocks times ``damping``.

        Column-stochastic blocks of the bipartite walk (a dangling chunk, one that names no
        entity, has an empty column). Built once per scope and damping: a query only pays
        for the iteration."""
        if getattr(self, "_transition_key", None) != damping:
            W = self.W
            deg_c = W.row_sums()
            deg_e = W.col_sums()  # > 0: every scope entity has a mention
            inv_c = np.divide(1.0, deg_c, out=np.zeros_like(deg_c), where=deg_c > 0)
            # float32: the iteration is memory-bound, and 1e-7 relative is far below TOL
            to_c = W.scale_columns(damping / deg_e).astype(np.float32)  # entity j -> chunk i
            to_e = W.T.scale_columns(damping * inv_c).astype(np.float32)  # chunk i -> entity j
            self._transition = (to_c, to_e, np.flatnonzero(deg_c == 0))
            self._transition_key = damping
        return self._transition

    def leaves(self, damping: float) -> "_Leaves":
        """The walk with its leaf entities folded into their chunks (built once per scope and damping).

        A leaf is an entity that one scope chunk links to (in a text corpus, most of them: a name
        said once). The walk from chunk c into a leaf comes back to c and nowhere else, so the leaf
        block of the fixed point is solved exactly: c keeps the share ``s_c`` of its own score that
        goes out and back through its leaves (a self-loop), and the leaves' restart mass reaches c
        directly (``q``). What is iterated is the chunk block and the entities that join two or more
        chunks. The fixed point is the same (tests/test_sparse.py checks it against a direct solve,
        tests/test_graph_tool.py against networkx); each sweep touches the joining entities only.
        In the pooled multi-hop corpus (9,238 passages) 79 % of the entities are leaves and a sweep
        reads 53k stored values instead of 94k; a query's walk took 6.9 ms instead of 16.6."""
        if getattr(self, "_leaves_key", None) != damping:
            to_c, to_e, dangling = self.transition(damping)
            links = np.bincount(self.W.indices, minlength=self.W.shape[1])  # scope chunks linked to each entity
            joins, leaf = np.flatnonzero(links > 1), np.flatnonzero(links == 1)
            from_leaf, to_leaf = to_c.take_columns(leaf), to_e.take_rows(leaf)
            back = np.zeros(len(leaf))  # leaf j -> its one chunk: one stored value per row
            back[to_leaf.row_ids()] = to_leaf.data
            out_and_back = np.zeros(self.W.shape[0])  # s_c: chunk c -> a leaf of c -> c
            np.add.at(out_and_back, from_leaf.row_ids(), from_leaf.data.astype(np.float64) * back[from_leaf.indices])
            self._leaves = _Leaves(joins, leaf, to_c.take_columns(joins), to_e.take_rows(joins), to_leaf,
                                   from_leaf, (1.0 / (1.0 - out_and_back)).astype(np.float32), dangling)
            self._leaves_key = damping
        return self._leaves

    def pagerank(self, seeds: list[int], damping: float) -> tuple[np.ndarray, np.ndarray]:
        """Personalized PageRank on the bipartite scope graph: (chunk scores, entity scores).

        ``seeds``: entity columns, each weighted 1 / (scope chunks naming it)."""
        n_c, n_e = self.W.shape
        if n_c == 0 or n_e == 0:
            return np.zeros(n_c), np.zeros(n_e)
        xc, p, r = self._solve(seeds, damping)
        f = self.leaves(damping)
        entities = np.zeros(n_e, dtype=np.float32)
        entities[f.joins] = f.to_e @ xc + r * p[f.joins]
        entities[f.leaf] = f.to_leaf @ xc + r * p[f.leaf]
        return xc.astype(np.float64), entities.astype(np.float64)

    def chunk_pagerank(self, seeds: list[int], damping: float) -> np.ndarray:
        """The chunk scores of `pagerank` alone (what a search ranks by), without the entities' pass."""
        if 0 in self.W.shape:
            return np.zeros(self.W.shape[0])
        return self._solve(seeds, damping)[0].astype(np.float64)

    def _solve(self, seeds: list[int], damping: float) -> tuple[np.ndarray, np.ndarray, float]:
        """(chunk scores, the personalization over all scope entities, the restart weight at the end)."""
        p = np.zeros(self.W.shape[1])
        for j in seeds:
            p[j] = 1.0 / self.support[j]
        p /= p.sum()
        a = damping
        f = self.leaves(a)
        p = p.astype(np.float32)
        p_joins, q = p[f.joins], f.from_leaf @ p[f.leaf]
        # Block Gauss-Seidel on the fixed point x = aPx + (a * dangling mass + 1 - a) p, leaves folded
        # in (`leaves`): joining entities from the current chunks, then chunks from those entities,
        # their own out-and-back share solved exactly. The error shrinks by about a^2 per sweep.
        xe = p_joins.copy()
        xc = (f.to_c @ xe + (1.0 - a) * q) * f.keep
        for _ in range(MAX_ITER):
            r = a * xc[f.dangling].sum() + 1.0 - a
            xe_new = f.to_e @ xc + r * p_joins
            xc_new = (f.to_c @ xe_new + r * q) * f.keep
            err = np.abs(xe_new - xe).sum() + np.abs(xc_new - xc).sum()
            xe, xc = xe_new, xc_new
            if err < TOL:
                break
        return xc, p, float(a * xc[f.dangling].sum() + 1.0 - a)

    def as_networkx(self, ids: list[str], source_ids: Any, entity_titles: list[str]) -> nx.Graph:
        """This walk graph as networkx (the matrices PageRank runs on), named by chunk id and entity.

        Nodes ``("chunk", chunk_id)`` with ``source_id``, and ``("entity", name)``;
        edges carry ``weight`` and ``mention`` (0 for a subject edge)."""
        g = nx.Graph()
        for r in self.rows.tolist():
            g.add_node(("chunk", ids[r]), source_id=str(source_ids[r]))
        g.add_nodes_from(("entity", entity_titles[e]) for e in self.ents.tolist())
        W, M = self.W, self.M
        for i, j, w in zip(W.row_ids().tolist(), W.indices.tolist(), W.data.tolist(), strict=True):
            g.add_edge(("chunk", ids[self.rows[i]]), ("entity", entity_titles[self.ents[j]]),
                       weight=w, mention=M.get(i, j))
        return g


def _top(final: np.ndarray, dense: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k best by (final desc, dense desc, row asc): the order a full lexsort gives,
    sorting only the values that can be in the first k (every value tied with the k-th is kept)."""
    if len(final) > k > 0:
        cut = np.partition(final, len(final) - k)[len(final) - k]
        among = np.flatnonzero(final >= cut)
        return among[np.lexsort((rows[among], -dense[among], -final[among]))][:k]
    return np.lexsort((rows, -dense, -final))[:k]


def _biadjacency(g: nx.Graph, rows: list[Any], cols: list[Any], attr: str) -> CSR:
    """The ``rows`` x ``cols`` matrix of edge attribute ``attr`` (1 when an edge lacks it), float64.

    ``nx.bipartite.biadjacency_matrix`` without SciPy: the same triplets in the same order."""
    row_of = {n: i for i, n in enumerate(rows)}
    col_of = {n: j for j, n in enumerate(cols)}
    triplets = [(row_of[u], col_of[v], d.get(attr, 1)) for u, v, d in g.edges(rows, data=True)
                if u in row_of and v in col_of]
    r, c, w = zip(*triplets, strict=True) if triplets else ((), (), ())
    return CSR.from_coo(np.array(w, dtype=np.float64), r, c, (len(rows), len(cols)))


def _fallback(bm25: BM25, query: SearchQuery, candidates: np.ndarray, dense: np.ndarray, taken: set[int],
              k: int) -> list[tuple[int, float, str]]:
    """The basic tool's ranking (dense + BM25, reciprocal rank) over the candidates not yet taken."""
    allowed = candidates.copy()
    allowed[list(taken)] = False
    rows = np.flatnonzero(allowed)
    if rows.size == 0 or k <= 0:
        return []
    depth = max(k * 4, 20)
    rankings = {"dense": [int(rows[i]) for i in top_k(dense[rows], depth)]}
    lex = bm25.scores(query.text)[rows]
    lexical = [int(rows[i]) for i in top_k(lex, depth) if lex[i] > 0]
    if lexical:
        rankings["lexical"] = lexical
    return [(r, s, "fallback") for r, s, _ch in rrf(rankings)[:k]]


class GraphRetrieval:
    """Graph retrieval over the shared chunk index and its graphrag graph."""

    name = "graph"

    def __init__(self, index_path: Path, graph_dir: Path, embedder: Embedder, extractor: EntityAnalyzer,
                 *, subject_weight: float = SUBJECT_WEIGHT, damping: float = DAMPING,
                 ranking: Ranking = "ppr+dense", dense_weight: float = DENSE_WEIGHT,
                 fuse_dense: bool = False, hub_damping: float = HUB_DAMPING) -> None:
        """``extractor``: any ``EntityAnalyzer`` (the one the graph was built with).
        ``ranking``: how walked chunks are ordered (see the module docstring);
        ``fuse_dense=True`` is the older spelling of ``ranking="rrf"``; ``hub_damping``: a
        chunk's edge to an entity named by ``n`` scope chunks weighs ``n ** -hub_damping`` as
        much (0: every mention alike), so a walk leaves a chunk less through a hub."""
        self.index_path = Path(index_path)
        self.graph_dir = Path(graph_dir)
        self.embedder = embedder
        self.extractor = extractor
        self.subject_weight = subject_weight
        self.ranking: Ranking = "rrf" if fuse_dense else ranking
        self.dense_weight = dense_weight
        self.damping = damping
        self.hub_damping = hub_damping
        self.manifest = read_manifest(self.graph_dir)
        if self.manifest is None:
            raise IndexMissing(f"no graph at {self.graph_dir} ({CASE_MANIFEST} missing): build it first")
        self.table = ChunkTable(self.index_path)
        con = open_index(self.index_path)
        try:
            meta = {r[0]: (r[1], r[2]) for r in con.execute("SELECT chunk_id, service, title FROM chunks").fetchall()}
        finally:
            con.close()
        self._scope_mask: np.ndarray | None = None
        self._scope_cache: Scope | None = None
        self.services = [meta.get(cid, (None, None))[0] for cid in self.table.ids]
        self.titles = [meta.get(cid, (None, None))[1] for cid in self.table.ids]
        self.bm25 = BM25(self.table.texts)
        self._load_graph()

    # ------------------------------------------------------------------ loading
    def _parquet(self, name: str, columns: list[str]) -> pd.DataFrame:
        path = self.graph_dir / f"{name}.parquet"
        if not path.exists():
            return pd.DataFrame({c: [] for c in columns})
        return pd.read_parquet(path, columns=columns)

    def _load_graph(self) -> None:
        units = self._parquet("text_units", ["id", "document_id", "text", "entity_ids"])
        entities = self._parquet("entities", ["id", "title"])
        title_of = dict(zip(entities["id"], entities["title"], strict=True))
        # graphrag text unit -> every chunk with that text (duplicates were merged at build)
        owners: dict[str, list[str]] = {u: [d] for u, d in zip(units["id"], units["document_id"], strict=True)}
        unit_of_doc = {d: u for u, d in zip(units["id"], units["document_id"], strict=True)}
        for dropped, kept in self.manifest.get("merged_duplicates", []):
            if kept in unit_of_doc:
                owners[unit_of_doc[kept]].append(dropped)
        self.unit_text = dict(zip(units["id"], units["text"], strict=True))
        # unit -> present chunk rows (a chunk tombstoned since the build has no row)
        pos = self.table.position
        self.unit_rows = {u: [pos[c] for c in cs if c in pos] for u, cs in owners.items()}

        self.entity_titles: list[str] = sorted(set(title_of.values()))
        self.entity_index = {t: j for j, t in enumerate(self.entity_titles)}
        # a chunk's subject: its service when that is an entity, else its source title when that is one
        self.subjects: list[str | None] = [
            next((e for e in (canonical(self.extractor, s) for s in (svc, title) if s and s != "*")
                  if e in self.entity_index), None)
            for svc, title in zip(self.services, self.titles, strict=True)]
        g = nx.Graph()
        chunk_nodes = [("c", i) for i in range(len(self.table.ids))]
        entity_nodes = [("e", t) for t in self.entity_titles]
        g.add_nodes_from(chunk_nodes, bipartite=0)
        g.add_nodes_from(entity_nodes, bipartite=1)
        for u, ids in zip(units["id"], units["entity_ids"], strict=True):
            for i in self.unit_rows.get(u, []):
                for eid in ([] if ids is None else list(ids)):
                    t = title_of.get(eid)
                    if t is None:
                        continue
                    w = self.subject_weight if t == self.subjects[i] else 1.0
                    g.add_edge(("c", i), ("e", t), weight=w, mention=1.0)
        for i, subject in enumerate(self.subjects):
            if subject is not None and not g.has_edge(("c", i), ("e", subject)):
                g.add_edge(("c", i), ("e", subject), weight=self.subject_weight, mention=0.0)
        self.graph = g
        self.W = _biadjacency(g, chunk_nodes, entity_nodes, "weight")
        self.M = _biadjacency(g, chunk_nodes, entity_nodes, "mention").eliminate_zeros()
        self.chunk_entities = self.M.row_lists()  # chunk row -> entity columns its text names

    # ------------------------------------------------------------------ scope
    def masks(self, query: SearchQuery, access: AccessSnapshot) -> tuple[np.ndarray, np.ndarray]:
        """(scope, candidates) over the chunk rows, from one look at the access rules.

        scope: readable chunks of the query's environment or ``*`` (what the walk may
        use); candidates: scope chunks of ``query.kinds`` (when given) not in
        ``query.exclude`` (what may be returned). Both come from ``ChunkTable``, whose
        access mask is ``tools.access.RowScope``: one rule for both tools.
        """
        scope = self.table.visible(query, access)  # the access mask shared with the basic tool
        if scope is not self._scope_mask:  # recomputed only when access or environment changed
            self._scope_mask, self._scope_cache = scope, None
        return scope, self.table.mask(query, access)

    def scope_mask(self, query: SearchQuery, access: AccessSnapshot) -> np.ndarray:
        """Readable chunks of the query's environment (or ``*``): what the walk may use."""
        return self.masks(query, access)[0]

    def _scope(self, query: SearchQuery, access: AccessSnapshot, mask: np.ndarray | None = None) -> Scope:
        if mask is None:
            mask = self.scope_mask(query, access)
        if mask is self._scope_mask and self._scope_cache is not None:
            return self._scope_cache
        rows = np.flatnonzero(mask)
        M = self.M.take_rows(rows)
        support = M.col_sums()
        ents = np.flatnonzero(support > 0)
        W = self.W.take_rows(rows).take_columns(ents)
        if self.hub_damping:
            W = W.scale_columns(support[ents] ** -self.hub_damping)
        scope = Scope(rows, ents, W, M.take_columns(ents), support[ents], len(self.entity_titles))
        if mask is self._scope_mask:
            self._scope_cache = scope
        return scope

    def walk_graph(self, query: SearchQuery, access: AccessSnapshot) -> nx.Graph:
        """The query's walk graph as networkx (``Scope.as_networkx``), for inspection."""
        return self._scope(query, access).as_networkx(self.table.ids, self.table.source_ids, self.entity_titles)

    def seeds(self, query: SearchQuery, scope: Scope) -> list[str]:
        """The query's entities that are nodes of its walk graph, in order."""
        names = dict.fromkeys([*query.seeds, *self.extractor.names(query.text)])
        return [n for n in names if n in self.entity_index and scope.col(self.entity_index[n]) >= 0]

    def _ppr(self, scope: Scope, seeds: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Personalized PageRank on the bipartite scope graph: (chunk scores, entity scores)."""
        return scope.pagerank(self._columns(scope, seeds), self.damping)

    def _columns(self, scope: Scope, seeds: list[str]) -> list[int]:
        """The scope columns of seed entity names (`seeds` gives only names that are nodes)."""
        return [scope.col(self.entity_index[x]) for x in seeds]

    # ------------------------------------------------------------------ search
    def search(self, query: SearchQuery, access: AccessSnapshot) -> list[Hit]:
        scope_mask, candidates = self.masks(query, access)  # before anything is scored
        if not candidates.any() or query.k <= 0:
            return []
        scope = self._scope(query, access, scope_mask)
        seeds = self.seeds(query, scope)
        qv = self.embedder.embed([query.text])[0]
        dense = np.full(len(candidates), -np.inf, dtype=np.float32)
        dense[candidates] = masked_scores(self.table.vectors, candidates, qv)  # only allowed rows are scored
        ranked: list[tuple[int, float, str]] = []
        if seeds:
            xc = scope.chunk_pagerank(self._columns(scope, seeds), self.damping)
            keep = (xc > 0) & candidates[scope.rows]
            rows, score = scope.rows[keep], xc[keep]
            # rows follow chunk-id order (ChunkTable sorts by id): the last tie-break is the id
            if self.ranking == "rrf":
                ppr_rank = np.empty(len(rows))
                ppr_rank[np.lexsort((rows, -np.round(score, 12)))] = np.arange(len(rows))
                den_rank = np.empty(len(rows))
                den_rank[np.lexsort((rows, -dense[rows]))] = np.arange(len(rows))
                final = 1.0 / (60 + ppr_rank) + 1.0 / (60 + den_rank)
            elif self.ranking == "ppr":
                final = np.round(score, 12)
            else:  # PageRank as a prior over the walked chunks, the cosine as their likelihood
                final = np.log(score) + self.dense_weight * dense[rows]
            order = _top(final, dense[rows], rows, query.k)
            ranked = [(int(rows[i]), float(final[i]), "ppr") for i in order]
        if len(ranked) < query.k:
            ranked += _fallback(self.bm25, query, candidates, dense, {r for r, _, _ in ranked}, query.k - len(ranked))
        return [self._hit(r, s, rank, ch) for rank, (r, s, ch) in enumerate(ranked, start=1)]

    def _hit(self, i: int, score: float, rank: int, channel: str) -> Hit:
        t = self.table
        return Hit(source_id=str(t.source_ids[i]), chunk_id=t.ids[i], start=t.starts[i], end=t.ends[i],
                   score=round(float(score), 8), rank=rank, channel=channel, tool=self.name,
                   revision=t.revisions[i])

    # ------------------------------------------------------------------ bridges
    def bridge_entities(self, query: SearchQuery, access: AccessSnapshot, max_hops: int = 3,
                        limit: int | None = 50, chunks_per_hop: int = 20) -> list[GraphBridge]:
        """Entities reached from the seeds through chunks that name two entities together (``bridges.py``)."""
        return bridge_entities(self, query, access, max_hops, limit, chunks_per_hop)

    # ------------------------------------------------------------------ communities
    def community_context(self, query: SearchQuery, access: AccessSnapshot, **kwargs: Any):  # noqa: ANN201
        """GraphRAG's community-level view of the query's scope (see ``community.py``)."""
        from .community import community_context

        return community_context(self, query, access, **kwargs)

    def describe(self) -> dict[str, Any]:
        """Sizes of the loaded graph (for logs and benchmarks)."""
        return {"chunks": len(self.table.ids), "entities": len(self.entity_titles),
                "edges": self.graph.number_of_edges(), "manifest": json.loads(json.dumps(self.manifest))}
