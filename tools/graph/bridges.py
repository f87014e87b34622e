"""Bridge entities of a query: the entities its seeds reach through chunks that name two entities
together, with the chunks and sources of every hop, so that each hop can be read back.

A view of the graph retrieval tool (`walk.GraphRetrieval.bridge_entities`), read through the
`BridgeWalk` shape so that this module does not import the tool's module (no import circle).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

import numpy as np

from state import Frozen
from tools.access import AccessSnapshot
from tools.basic import ChunkTable
from tools.retrieval import SearchQuery

from .analyzer import EntityAnalyzer


class BridgeWalk(Protocol):
    """What the bridges read of the graph retrieval tool: its walk scope, seeds and PageRank."""

    table: ChunkTable
    extractor: EntityAnalyzer
    entity_titles: list[str]
    entity_index: dict[str, int]

    def _scope(self, query: SearchQuery, access: AccessSnapshot) -> Any: ...

    def seeds(self, query: SearchQuery, scope: Any) -> list[str]: ...

    def _ppr(self, scope: Any, seeds: list[str]) -> tuple[np.ndarray, np.ndarray]: ...


class BridgeHop(Frozen):
    """One hop of a bridge path: two entities named together in readable chunks."""

    source: str
    target: str
    chunk_ids: tuple[str, ...]
    """Scope chunks whose text names both entities, best PageRank first."""
    source_ids: tuple[str, ...]


class GraphBridge(Frozen):
    """An entity reached from the query's seeds, with the provenance of every hop."""

    entity: str
    kind: str
    hops: int
    score: float
    """Its personalized PageRank score for this query."""
    seed: str
    path: tuple[BridgeHop, ...]


def bridge_entities(tool: BridgeWalk, query: SearchQuery, access: AccessSnapshot, max_hops: int = 3,
                    limit: int | None = 50, chunks_per_hop: int = 20) -> list[GraphBridge]:
    """Entities reached from the seeds through chunks that name two entities together.

    Breadth-first over the scope's mention edges (subject edges are metadata, not
    text, so they never make a hop); the predecessor of an entity is the
    best-scored entity of the previous hop that shares a chunk with it. Every hop
    lists the scope chunks (and sources) that name both its ends, so it can be read
    back. Best first: fewer hops, then PageRank score, then name; at most ``limit``
    bridges and ``chunks_per_hop`` chunks per hop (best PageRank first).
    """
    scope = tool._scope(query, access)
    seeds = tool.seeds(query, scope)
    if not seeds:
        return []
    xc, xe = tool._ppr(scope, seeds)
    ents_of = scope.M.row_lists()  # scope chunk -> entity columns it names
    chunks_of = scope.M.T.row_lists()  # entity column -> scope chunks naming it
    names = [tool.entity_titles[e] for e in scope.ents]
    better = lambda j: (-xe[j], names[j])  # noqa: E731
    hops = {scope.col(tool.entity_index[s]): 0 for s in seeds}
    origin = {j: j for j in hops}
    prev: dict[int, int] = {}
    frontier = deque(hops)
    while frontier:
        j = frontier.popleft()
        if hops[j] >= max_hops:
            continue
        neigh = {k for c in chunks_of[j] for k in ents_of[c]} - hops.keys()
        for k in sorted(neigh, key=better):
            hops[k] = hops[j] + 1
            frontier.append(k)
    for k in sorted(hops, key=lambda k: hops[k]):  # predecessors: best entity one hop closer
        if hops[k] > 0:
            closer = {j for c in chunks_of[k] for j in ents_of[c] if hops.get(j) == hops[k] - 1}
            prev[k] = min(closer, key=better)
            origin[k] = origin[prev[k]]
    reached = sorted((k for k, h in hops.items() if h > 0),
                     key=lambda k: (hops[k], -round(float(xe[k]), 8), names[k]))
    out: list[GraphBridge] = []
    for k in reached if limit is None else reached[:limit]:
        h = hops[k]
        path: list[BridgeHop] = []
        cur = k
        while hops[cur] > 0:
            p = prev[cur]
            both = set(chunks_of[p]) & set(chunks_of[cur])
            best = sorted(both, key=lambda c: (-xc[c], tool.table.ids[scope.rows[c]]))[:chunks_per_hop]
            rows = [int(scope.rows[c]) for c in best]
            path.append(BridgeHop(
                source=names[p], target=names[cur], chunk_ids=tuple(tool.table.ids[r] for r in rows),
                source_ids=tuple(dict.fromkeys(str(tool.table.source_ids[r]) for r in rows))))
            cur = p
        out.append(GraphBridge(entity=names[k], kind=tool.extractor.kind_of(names[k]), hops=h,
                               score=round(float(xe[k]), 8), seed=names[origin[k]], path=tuple(reversed(path))))
    return out
