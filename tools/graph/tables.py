"""Read a built index: ``load_graph_tables`` and LLM-free ``local_context``.

Ids: ``text_units.document_id`` is the product's chunk id. Entity, relationship
and community ids are fresh uuids on every build (graphrag's ``uuid4``); entity
titles (the analyzer's names) are stable; provenance is ``text_unit_ids``.
"""

from __future__ import annotations

from . import _env  # noqa: F401  (must precede graphrag / litellm imports)

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from graphrag.config.embeddings import entity_description_embedding
from graphrag.data_model.text_unit import TextUnit
from graphrag.query.context_builder.entity_extraction import EntityVectorStoreKey
from graphrag.query.indexer_adapters import (
    read_indexer_entities,
    read_indexer_relationships,
    read_indexer_reports,
)
from graphrag.query.input.loaders.dfs import read_text_units
from graphrag.query.structured_search.local_search.mixed_context import (
    LocalSearchMixedContext,
)
from graphrag.tokenizer.get_tokenizer import get_tokenizer
from graphrag_llm.embedding import create_embedding
from graphrag_vectors import IndexSchema, VectorStoreConfig, create_vector_store

from ._models import EmbedFn, embedding_model_config
from .builder import ENCODING, MANIFEST, TABLES


@dataclass(frozen=True)
class GraphTables:
    """The index's tables (pandas; list cells are Python lists).

    text_units: id, human_readable_id, text, n_tokens, document_id (= our chunk
    id), entity_ids, relationship_ids, covariate_ids. entities: id,
    human_readable_id, title, type ("NOUN PHRASE"), description (extractive),
    text_unit_ids, frequency, degree. relationships: id, human_readable_id,
    source, target (entity titles), description (""), weight (PMI), combined_degree,
    text_unit_ids. communities: id, human_readable_id, community, level, parent,
    children, title, entity_ids, relationship_ids, text_unit_ids, period, size.
    community_reports: id, human_readable_id, community, level, parent, children,
    title, summary, full_content, rank, rating_explanation, findings
    ([{summary, explanation}]), full_content_json, period, size. documents: id,
    human_readable_id, title, text, text_unit_ids, creation_date, raw_data.
    """

    documents: pd.DataFrame
    text_units: pd.DataFrame
    entities: pd.DataFrame
    relationships: pd.DataFrame
    communities: pd.DataFrame
    community_reports: pd.DataFrame

    def document_ids(self, text_unit_ids: list[str]) -> list[str]:
        """Our chunk ids for graphrag text unit ids (order kept, unknown skipped)."""
        owner = dict(zip(self.text_units["id"], self.text_units["document_id"], strict=True))
        return [owner[t] for t in text_unit_ids if t in owner]


@dataclass(frozen=True)
class LocalContext:
    """``LocalSearchMixedContext.build_context`` output.

    ``records``: DataFrames keyed ``reports``, ``entities``, ``relationships``,
    ``sources`` (present when non-empty); ``sources`` has ``document_id``.
    ``text``: the context string an LLM would have been given.
    """

    text: str
    records: dict[str, pd.DataFrame]


def _listify(value: Any) -> Any:
    return value.tolist() if isinstance(value, np.ndarray) else value


def load_graph_tables(out_dir: str | Path) -> GraphTables:
    """Read the six parquet tables of an index built by ``build_graph_index``."""
    root = Path(out_dir)
    frames: dict[str, pd.DataFrame] = {}
    for name in TABLES:
        df = pd.read_parquet(root / f"{name}.parquet")
        for col in df.columns:
            if df[col].dtype == object and df[col].map(lambda v: isinstance(v, np.ndarray)).any():
                df[col] = df[col].map(_listify)
        frames[name] = df
    return GraphTables(**frames)


def open_local_search(
    out_dir: str | Path, embed: EmbedFn, community_level: int | None = None
) -> LocalSearchMixedContext:
    """A reusable graphrag ``LocalSearchMixedContext`` over the index in ``out_dir``.

    Query-to-entity mapping embeds the query with ``embed`` (must be the model
    used at build time) and searches the LanceDB ``entity_description`` table.
    """
    root = Path(out_dir).resolve()
    dim = int(json.loads((root / MANIFEST).read_text(encoding="utf-8"))["dim"])
    t = load_graph_tables(root)
    store = create_vector_store(
        VectorStoreConfig(type="lancedb", db_uri=str(root / "lancedb"), vector_size=dim),
        IndexSchema(index_name=entity_description_embedding, vector_size=dim),
    )
    store.connect()
    units: list[TextUnit] = read_text_units(
        t.text_units, covariates_col=None, attributes_cols=["document_id"]
    )
    return LocalSearchMixedContext(
        entities=read_indexer_entities(t.entities, t.communities, community_level),
        entity_text_embeddings=store,
        text_embedder=create_embedding(embedding_model_config(embed)),
        text_units=units,
        community_reports=read_indexer_reports(t.community_reports, t.communities, community_level),
        relationships=read_indexer_relationships(t.relationships),
        tokenizer=get_tokenizer(encoding_model=ENCODING),
        embedding_vectorstore_key=EntityVectorStoreKey.ID,
    )


def local_context(
    out_dir: str | Path,
    query: str,
    embed: EmbedFn,
    *,
    search: LocalSearchMixedContext | None = None,
    max_context_tokens: int = 8000,
    text_unit_prop: float = 0.5,
    community_prop: float = 0.25,
    top_k_entities: int = 10,
    top_k_relationships: int = 10,
) -> LocalContext:
    """graphrag local-search context for ``query``, without any LLM.

    Pass ``search`` (from ``open_local_search``) to avoid reloading per query.
    """
    builder = search or open_local_search(out_dir, embed)
    result = builder.build_context(
        query,
        max_context_tokens=max_context_tokens,
        text_unit_prop=text_unit_prop,
        community_prop=community_prop,
        top_k_mapped_entities=top_k_entities,
        top_k_relationships=top_k_relationships,
        include_entity_rank=True,
        include_relationship_weight=True,
    )
    chunks = result.context_chunks
    text = chunks if isinstance(chunks, str) else "\n\n".join(chunks)
    return LocalContext(text=text, records=dict(result.context_records))
