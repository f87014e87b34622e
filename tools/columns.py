"""Arrow columns built straight from Python values and NumPy buffers, for bulk inserts into DuckDB.

pyarrow's own conversion (`pa.array`, `pa.table` of lists) imports pandas the first time it
runs, to check whether it was handed a pandas object: about 0.4 s of CPU and 0.6 s on the wall
of every process that builds an index, for nothing. These build the same values from buffers,
which never looks for pandas. DuckDB casts each column to the type of the table it is inserted
into, so a `large_string` column fills a VARCHAR one as a `string` column would.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _validity(valid: list[bool]) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap of a column (None when every value is there) and its null count."""
    nulls = len(valid) - sum(valid)
    if not nulls:
        return None, 0
    return pa.py_buffer(np.packbits(np.array(valid, dtype=np.uint8), bitorder="little")), nulls


def strings(values: Sequence[str | None]) -> pa.Array:
    """UTF-8 strings; None is a null."""
    data = [v.encode() if v is not None else b"" for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    mask, nulls = _validity([v is not None for v in values])
    return pa.Array.from_buffers(pa.large_string(), len(data), [mask, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))],
                                 null_count=nulls)


def int32s(values: Sequence[int]) -> pa.Array:
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(np.array(values, dtype=np.int32))])


def timestamps(values: Sequence[datetime | None]) -> pa.Array:
    """Microseconds since the epoch, UTC; None is a null and a naive time is read as UTC (as pyarrow does)."""
    us = np.fromiter(((_utc(v) - _EPOCH) // _MICROSECOND if v is not None else 0 for v in values),
                     dtype=np.int64, count=len(values))
    mask, nulls = _validity([v is not None for v in values])
    return pa.Array.from_buffers(pa.timestamp("us", tz="UTC"), len(values), [mask, pa.py_buffer(us)],
                                 null_count=nulls)


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def vectors(mat: np.ndarray, dim: int) -> pa.Array:
    """Rows of `mat` as fixed-size lists of `dim` float32 values."""
    flat = np.ascontiguousarray(mat, dtype=np.float32).reshape(-1)
    values = pa.Array.from_buffers(pa.float32(), flat.size, [None, pa.py_buffer(flat)])
    return pa.FixedSizeListArray.from_arrays(values, dim)


def table(columns: dict[str, pa.Array]) -> pa.Table:
    return pa.Table.from_arrays(list(columns.values()), names=list(columns))
