"""Read a built index: ``load_graph_tables`` (tables as pandas frames, list cells as lists).

Ids: ``text_units.document_id`` is the product's chunk id. Entity, relationship
and community ids are fresh uuids on every build (graphrag's ``uuid4``); entity
titles (the analyzer's names) are stable; provenance is ``text_unit_ids``.
"""

from __future__ import annotations

from . import _env  # noqa: F401  (must precede graphrag / litellm imports)

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .builder import TABLES


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
