"""GraphRAG's community-level view of a query, limited to what the principal may read.

graphrag's community report of community C was written from exactly C's
``text_unit_ids`` (the text-unit context of ``create_community_reports_text``;
a parent's report may fold in its sub-communities' reports, whose units are a subset).
So for one query, per community:

* every member unit is in the walk scope (readable, query environment or ``*``,
  still in the chunk index) and a report is stored (only communities whose units are all of
  one readership keep one, ``casegraph.single_readership``): graphrag's stored report is
  used as it is;
* some members are in scope, or no report is stored: the report is **rewritten** with the
  same extractive writer (``_models.write_extractive_report``) from the in-scope members'
  texts only;
* none is: the community is left out.

The kept reports go through graphrag's ``GlobalCommunityContext`` (global-search
context builder) together with entities cut down to the scope (their text units
restricted to scope units), so nothing derived from an unreadable or
out-of-environment source can reach the context text.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any, Protocol

import numpy as np
import pandas as pd

from state import Frozen
from tools.access import AccessSnapshot
from tools.basic import ChunkTable
from tools.retrieval import SearchQuery

from .analyzer import EntityAnalyzer


class WalkScope(Protocol):
    """A query's walk scope as the community view reads it: chunk rows and entity columns."""

    rows: np.ndarray
    ents: np.ndarray


class WalkedGraph(Protocol):
    """What the community view reads of the graph retrieval tool (`walk.GraphRetrieval`), so that
    this module depends on the tool's shape and not on its module (no import circle)."""

    table: ChunkTable
    extractor: EntityAnalyzer
    unit_rows: dict[str, list[int]]
    unit_text: dict[str, str]
    entity_titles: list[str]
    chunk_entities: list[list[int]]

    def _scope(self, query: SearchQuery, access: AccessSnapshot) -> WalkScope: ...

    def seeds(self, query: SearchQuery, scope: Any) -> list[str]: ...

    def _parquet(self, name: str, columns: list[str]) -> pd.DataFrame: ...


class CommunityView(Frozen):
    """One community report as the principal may see it."""

    community: int
    level: int
    title: str
    summary: str
    full_content: str
    entities: tuple[str, ...]
    """Member entities that are nodes of the query's scope."""
    chunk_ids: tuple[str, ...]
    """The scope chunks the report was written from."""
    source_ids: tuple[str, ...]
    rewritten: bool
    """True when some member units were out of scope and the report was rewritten."""


class CommunityContext(Frozen):
    """graphrag ``GlobalCommunityContext`` output over the kept reports."""

    text: str
    """The context string a global-search LLM call would have been given."""
    reports: tuple[CommunityView, ...]


def _run(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # inside a running loop
        return pool.submit(asyncio.run, coro).result()


def _full_content(title: str, summary: str, findings: list[tuple[str, str]]) -> str:
    """graphrag's text form of a report (``CommunityReportsExtractor._get_text_output``)."""
    sections = "\n\n".join(f"## {s}\n\n{e}" for s, e in findings)
    return f"# {title}\n\n{summary}\n\n{sections}"


def community_context(tool: WalkedGraph, query: SearchQuery, access: AccessSnapshot, *,
                      max_context_tokens: int = 4000, all_communities: bool = False) -> CommunityContext:
    """Community reports relevant to ``query`` (communities holding one of its seeds, or
    every in-scope community when it has none or ``all_communities``), scope-safe."""
    from graphrag.data_model.community_report import CommunityReport
    from graphrag.data_model.entity import Entity
    from graphrag.query.structured_search.global_search.community_context import GlobalCommunityContext
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from ._models import write_extractive_report
    from .builder import ENCODING

    scope = tool._scope(query, access)
    in_scope_rows = set(scope.rows.tolist())
    scope_units = {u for u, rows in tool.unit_rows.items() if any(r in in_scope_rows for r in rows)}
    scope_entities = {tool.entity_titles[e] for e in scope.ents}
    seeds = set(tool.seeds(query, scope))

    communities = tool._parquet("communities", ["community", "level", "entity_ids", "text_unit_ids"])
    reports = tool._parquet("community_reports", ["community", "title", "summary", "full_content", "rank"])
    entities = tool._parquet("entities", ["id", "title"])
    title_of = dict(zip(entities["id"], entities["title"], strict=True))
    stored = {int(r.community): r for r in reports.itertuples(index=False)}

    views: list[CommunityView] = []
    for c in communities.itertuples(index=False):
        units = list(c.text_unit_ids) if c.text_unit_ids is not None else []
        members = [title_of[e] for e in (c.entity_ids if c.entity_ids is not None else []) if e in title_of]
        visible = sorted(m for m in members if m in scope_entities)
        kept_units = [u for u in units if u in scope_units]
        if not kept_units or not visible:
            continue
        if seeds and not all_communities and not seeds & set(visible):
            continue
        rows = sorted({r for u in kept_units for r in tool.unit_rows[u] if r in in_scope_rows},
                      key=lambda r: tool.table.ids[r])
        complete = len(kept_units) == len(units) and int(c.community) in stored
        if complete:
            rep = stored[int(c.community)]
            title, summary, full = str(rep.title), str(rep.summary), str(rep.full_content)
        else:
            texts = [tool.unit_text[u] for u in kept_units]
            frame = pd.DataFrame({"id": range(len(texts)), "text": texts, "entity_degree": [0] * len(texts)})
            resp = write_extractive_report("-----SOURCES-----\n" + frame.to_csv(index=False), tool.extractor.names)
            title, summary = resp.title, resp.summary
            full = _full_content(title, summary, [(f.summary, f.explanation) for f in resp.findings])
        views.append(CommunityView(
            community=int(c.community), level=int(c.level), title=title, summary=summary, full_content=full,
            entities=tuple(visible), chunk_ids=tuple(tool.table.ids[r] for r in rows),
            source_ids=tuple(dict.fromkeys(str(tool.table.source_ids[r]) for r in rows)), rewritten=not complete))
    if not views:
        return CommunityContext(text="", reports=())

    comm_of: dict[str, list[str]] = {}
    for v in views:
        for e in v.entities:
            comm_of.setdefault(e, []).append(str(v.community))
    ent_units: dict[str, list[str]] = {}
    for u in scope_units:  # every owner of a unit has its text, so its first row will do
        for e in tool.chunk_entities[tool.unit_rows[u][0]]:
            ent_units.setdefault(tool.entity_titles[e], []).append(u)
    g_entities = [Entity(id=t, short_id=t, title=t, community_ids=comm_of.get(t, []),
                         text_unit_ids=sorted(set(ent_units.get(t, [])))) for t in sorted(scope_entities)]
    g_reports = [CommunityReport(id=str(v.community), short_id=str(v.community), title=v.title,
                                 community_id=str(v.community), summary=v.summary, full_content=v.full_content,
                                 rank=1.0) for v in views]
    builder = GlobalCommunityContext(community_reports=g_reports, communities=[], entities=g_entities,
                                     tokenizer=get_tokenizer(encoding_model=ENCODING))
    result = _run(builder.build_context(query.text, use_community_summary=False, shuffle_data=False,
                                        max_context_tokens=max_context_tokens))
    chunks = result.context_chunks
    text = chunks if isinstance(chunks, str) else "\n\n".join(chunks)
    return CommunityContext(text=text, reports=tuple(views))
