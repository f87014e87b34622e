"""graphrag's Parquet tables with a faster row iterator (table provider ``investigator-parquet``).

graphrag 3.3 streams its tables row by row: ``ParquetTable`` yields
``row.to_dict()`` for every row of ``DataFrame.iterrows()``, which builds one pandas Series
per row (~0.3 ms). ``finalize_graph``, ``create_final_text_units`` and the community
reports iterate entities, relationships and text units several times, so at a few
thousand passages that iteration was most of a build. This provider is graphrag's own
``ParquetTableProvider`` whose tables iterate ``DataFrame.to_dict("records")`` instead:
the same dicts (native Python scalars, list cells as arrays), the same files written.
It is registered with graphrag_storage's factory (process-wide, idempotent) and selected
by ``table_provider.type`` in the build's config.
"""

from __future__ import annotations

from . import _env  # noqa: F401  (must precede graphrag / litellm imports)

from collections.abc import AsyncIterator
from io import BytesIO
from typing import Any

import pandas as pd
from graphrag_storage.tables.parquet_table import ParquetTable, _apply_transformer
from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider
from graphrag_storage.tables.table import RowTransformer, Table
from graphrag_storage.tables.table_provider_factory import register_table_provider, table_provider_factory

TABLE_TYPE = "investigator-parquet"


class RecordsParquetTable(ParquetTable):
    """``ParquetTable`` iterating records instead of ``iterrows``."""

    async def _aiter_impl(self) -> AsyncIterator[Any]:
        if self._df is None:
            if await self._storage.has(self._file_key):
                self._df = pd.read_parquet(BytesIO(await self._storage.get(self._file_key, as_bytes=True)))
            else:
                self._df = pd.DataFrame()
        for row in self._df.to_dict("records"):
            yield _apply_transformer(self._transformer, row)


class RecordsParquetTableProvider(ParquetTableProvider):
    """``ParquetTableProvider`` whose tables are ``RecordsParquetTable``."""

    def open(self, table_name: str, transformer: RowTransformer | None = None, truncate: bool = True) -> Table:
        return RecordsParquetTable(self._storage, table_name, transformer, truncate=truncate)

    def child(self, name: str | None) -> "RecordsParquetTableProvider":
        return self if name is None else RecordsParquetTableProvider(storage=self._storage.child(name))


def register_tables() -> None:
    """Register the provider type with graphrag_storage (idempotent)."""
    if TABLE_TYPE not in table_provider_factory:
        register_table_provider(TABLE_TYPE, RecordsParquetTableProvider)
