"""The basic tool: plain vector search over the chunks, fused by rank with a BM25 channel.

The access filter (tools.access.RowScope, shared with the graph tool) and the hard filters
make a mask *before* any score is computed: a chunk the principal cannot read is never
scored, ranked or returned.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from state.evidence import Hit
from tools.access import AccessSnapshot, RowScope
from tools.embedding import Embedder
from tools.index import open_index
from tools.lexical import BM25
from tools.retrieval import SearchQuery

RRF_K = 60


class ChunkTable:
    """The index's chunks in memory: metadata columns, texts and a vector matrix."""

    def __init__(self, index_path: Path) -> None:
        con = open_index(index_path)
        try:
            rows = con.execute(
                "SELECT chunk_id, source_id, kind, environment, start_, end_, text, vec, revision FROM chunks "
                "ORDER BY source_id, start_, chunk_id"
            ).fetchall()
        finally:
            con.close()
        self.ids = [r[0] for r in rows]
        self.source_ids = np.array([r[1] for r in rows], dtype=object)
        self.kinds = np.array([r[2] for r in rows], dtype=object)
        self.envs = np.array([r[3] for r in rows], dtype=object)
        self.starts = [r[4] for r in rows]
        self.ends = [r[5] for r in rows]
        self.texts = [r[6] for r in rows]
        self.revisions = [r[8] for r in rows]
        dim = len(rows[0][7]) if rows else 0
        self.vectors = np.array([r[7] for r in rows], dtype=np.float32).reshape(len(rows), dim)
        self.position = {cid: i for i, cid in enumerate(self.ids)}
        self.scope = RowScope(self.source_ids, self.envs)
        self.kind_values, self.kind_code = np.unique(self.kinds.astype(str), return_inverse=True) \
            if rows else (np.array([], dtype=str), np.array([], dtype=np.int64))

    def visible(self, query: SearchQuery, access: AccessSnapshot) -> np.ndarray:
        """Rows the principal may read now in the query's environment (or `*`): the shared access mask."""
        return self.scope.mask(access, query.environment)

    def mask(self, query: SearchQuery, access: AccessSnapshot) -> np.ndarray:
        """Visible rows that pass the query's kinds and exclusions, computed before any score."""
        m = self.visible(query, access).copy()
        if query.kinds:
            m &= np.isin(self.kind_values, list(query.kinds))[self.kind_code]
        for cid in query.exclude:
            i = self.position.get(cid)
            if i is not None:
                m[i] = False
        return m

    def hit(self, i: int, score: float, rank: int, channel: str, tool: str) -> Hit:
        return Hit(source_id=str(self.source_ids[i]), chunk_id=self.ids[i], start=self.starts[i], end=self.ends[i],
                   score=round(float(score), 6), rank=rank, channel=channel, tool=tool,
                   revision=self.revisions[i])


def masked_scores(vectors: np.ndarray, mask: np.ndarray, qv: np.ndarray) -> np.ndarray:
    """Scores of the allowed rows only, in row order.

    Rows are stored grouped by source, so an access mask is a few contiguous runs: each run is
    scored through a view (no copy of the matrix), and a masked-out row is never scored."""
    if mask.all():
        return vectors @ qv
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
    return np.concatenate([vectors[a:b] @ qv for a, b in zip(edges[::2], edges[1::2])]) \
        if edges.size else np.zeros(0, dtype=vectors.dtype)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best scores, best first, ties by index (argpartition, then a small sort)."""
    if scores.size <= k:
        cand = np.arange(scores.size)
    else:
        cand = np.argpartition(-scores, k - 1)[:k]
    return cand[np.lexsort((cand, -scores[cand]))]


def rrf(rankings: dict[str, list[int]], k: int = RRF_K) -> list[tuple[int, float, str]]:
    """Reciprocal-rank fusion: (row, fused score, channels that found it), best first."""
    scores: dict[int, float] = {}
    found: dict[int, list[str]] = {}
    for channel, rows in rankings.items():
        for rank, row in enumerate(rows):
            scores[row] = scores.get(row, 0.0) + 1.0 / (k + rank + 1)
            found.setdefault(row, []).append(channel)
    ordered = sorted(scores, key=lambda r: (-scores[r], r))
    return [(r, scores[r], "+".join(found[r])) for r in ordered]


class BasicRetrieval:
    """Dense (MiniLM) + lexical (BM25) retrieval over the shared chunk index."""

    name = "basic"

    def __init__(self, index_path: Path, embedder: Embedder, lexical: bool = True) -> None:
        self.table = ChunkTable(index_path)
        self.embedder = embedder
        self.bm25 = BM25(self.table.texts) if lexical else None

    def search(self, query: SearchQuery, access: AccessSnapshot) -> list[Hit]:
        mask = self.table.mask(query, access)
        rows = np.flatnonzero(mask)
        if rows.size == 0 or query.k <= 0:
            return []
        depth = max(query.k * 4, 20)
        qv = self.embedder.embed([query.text])[0]
        dense = masked_scores(self.table.vectors, mask, qv)
        rankings = {"dense": [int(rows[i]) for i in top_k(dense, depth)]}
        if self.bm25 is not None:
            lex = self.bm25.scores(query.text)[rows]
            order = [int(rows[i]) for i in top_k(lex, depth) if lex[i] > 0]
            if order:
                rankings["lexical"] = order
        fused = rrf(rankings)[: query.k]
        return [self.table.hit(r, s, rank, ch, self.name) for rank, (r, s, ch) in enumerate(fused, start=1)]
