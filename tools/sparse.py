"""A compressed-sparse-row matrix on NumPy alone: what BM25 and the graph walk need, no more.

It replaces ``scipy.sparse`` at run time (SciPy is ~140 MB of the runtime venv and was used
for two things: BM25's document x term weights in ``tools.lexical``, and the transition
blocks of the personalized-PageRank walk in ``tools.graph.walk``).

Every operation does SciPy's arithmetic in SciPy's order, so results are bit-identical to
``scipy.sparse`` (``tests/test_sparse.py`` compares them when SciPy is installed):

* building from (row, col, value) triplets sorts by (row, col) and sums the values given
  for one cell, as ``coo_array((data, (row, col))).tocsr()`` does. They are added in input
  order; SciPy adds three or more in the order of an unstable sort, so such a sum may
  differ in the last bit (two are the same sum either way; BM25 and the walk have none);
* ``matvec`` accumulates each row left to right in the common dtype, as ``csr_matvec``;
* ``row_sums`` is ``np.add.reduceat`` over each row, as ``csr_array.sum(axis=1)``;
  ``col_sums`` and ``sum_rows`` accumulate row by row, as SciPy's sums through a product
  with a vector of ones;
* scaling multiplies each stored value once (``W * v[None, :]`` in SciPy) and keeps
  explicit zeros, as SciPy does.

Column indices are kept sorted within each row, and stored zeros are kept unless
``eliminate_zeros`` drops them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

__all__ = ["CSR"]

_INDEX = np.int64


@dataclass(frozen=True, eq=False)
class CSR:
    """A ``shape[0] x shape[1]`` sparse matrix in compressed-sparse-row form.

    Row ``i`` holds ``data[indptr[i]:indptr[i + 1]]`` at the columns
    ``indices[indptr[i]:indptr[i + 1]]``, in increasing column order. Treat the arrays as
    read-only: every operation returns a new matrix.
    """

    data: NDArray
    """The stored values, row after row."""
    indices: NDArray[np.int64]
    """The column of each stored value."""
    indptr: NDArray[np.int64]
    """``shape[0] + 1`` offsets into ``data``/``indices``: where each row starts (and the last ends)."""
    shape: tuple[int, int]
    """(rows, columns)."""

    # ------------------------------------------------------------------ building
    @classmethod
    def empty(cls, shape: tuple[int, int], dtype: DTypeLike = np.float64) -> CSR:
        """An all-zero matrix of ``shape`` with nothing stored."""
        return cls(np.zeros(0, dtype=dtype), np.zeros(0, dtype=_INDEX), np.zeros(shape[0] + 1, dtype=_INDEX),
                   (int(shape[0]), int(shape[1])))

    @classmethod
    def from_coo(cls, data: ArrayLike, rows: ArrayLike, cols: ArrayLike, shape: tuple[int, int],
                 dtype: DTypeLike | None = None) -> CSR:
        """The matrix with ``data[k]`` at ``(rows[k], cols[k])``; values given twice for a cell are summed.

        ``dtype`` defaults to the dtype of ``data``. Stored zeros are kept, as in SciPy.
        """
        values = np.asarray(data, dtype=dtype)
        r = np.asarray(rows, dtype=_INDEX).ravel()
        c = np.asarray(cols, dtype=_INDEX).ravel()
        values = values.ravel()
        n_rows, n_cols = int(shape[0]), int(shape[1])
        if not (len(values) == len(r) == len(c)):
            raise ValueError(f"{len(values)} values for {len(r)} rows and {len(c)} columns")
        if len(r) and (r.min() < 0 or r.max() >= n_rows or c.min() < 0 or c.max() >= n_cols):
            raise ValueError(f"an index lies outside the shape {(n_rows, n_cols)}")
        order = np.lexsort((c, r))  # stable: duplicates stay in input order
        r, c, values = r[order], c[order], values[order]
        first = np.ones(len(r), dtype=bool)
        first[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
        summed = values[first]  # a lone value is kept as is (a -0.0 stays -0.0, as in SciPy)
        if not first.all():
            cell = np.cumsum(first) - 1
            np.add.at(summed, cell[~first], values[~first])  # left to right, in input order
        r, c = r[first], c[first]
        indptr = np.zeros(n_rows + 1, dtype=_INDEX)
        np.cumsum(np.bincount(r, minlength=n_rows), out=indptr[1:])
        return cls(summed, c, indptr, (n_rows, n_cols))

    # ------------------------------------------------------------------ shape and entries
    @property
    def nnz(self) -> int:
        """Number of stored values (explicit zeros included)."""
        return len(self.data)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the stored values."""
        return self.data.dtype

    def astype(self, dtype: DTypeLike) -> CSR:
        """The same matrix with its values converted to ``dtype``."""
        return CSR(self.data.astype(dtype), self.indices, self.indptr, self.shape)

    @cached_property
    def _row_ids(self) -> NDArray[np.int64]:
        ids = np.repeat(np.arange(self.shape[0], dtype=_INDEX), np.diff(self.indptr))
        ids.flags.writeable = False  # shared by every caller
        return ids

    def row_ids(self) -> NDArray[np.int64]:
        """The row of each stored value (the COO row array; computed once per matrix)."""
        return self._row_ids

    def get(self, i: int, j: int) -> float:
        """The value at ``(i, j)`` (0 when nothing is stored there)."""
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        k = lo + int(np.searchsorted(self.indices[lo:hi], j))
        return float(self.data[k]) if k < hi and self.indices[k] == j else 0.0

    def row_lists(self) -> list[list[int]]:
        """The columns stored in each row, as Python lists."""
        cols = self.indices.tolist()
        bounds = self.indptr.tolist()
        return [cols[bounds[i]:bounds[i + 1]] for i in range(self.shape[0])]

    def to_dense(self) -> NDArray:
        """The matrix as a dense array (for tests and small matrices)."""
        out = np.zeros(self.shape, dtype=self.dtype)
        np.add.at(out, (self.row_ids(), self.indices), self.data)
        return out

    def eliminate_zeros(self) -> CSR:
        """The same matrix without its stored zeros."""
        keep = self.data != 0
        if keep.all():
            return self
        indptr = np.zeros_like(self.indptr)
        np.cumsum(np.bincount(self.row_ids()[keep], minlength=self.shape[0]), out=indptr[1:])
        return CSR(self.data[keep], self.indices[keep], indptr, self.shape)

    # ------------------------------------------------------------------ slicing
    def take_rows(self, rows: ArrayLike) -> CSR:
        """The matrix of the given rows, in the given order (a row may be taken twice)."""
        rows = np.asarray(rows, dtype=_INDEX).ravel()
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        lengths = ends - starts
        indptr = np.zeros(len(rows) + 1, dtype=_INDEX)
        np.cumsum(lengths, out=indptr[1:])
        # position of every kept value in the old arrays: its row's old start + its offset in the row
        pos = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=_INDEX)
        return CSR(self.data[pos], self.indices[pos], indptr, (len(rows), self.shape[1]))

    def take_columns(self, cols: ArrayLike) -> CSR:
        """The matrix of the given columns, renumbered ``0..len(cols) - 1``.

        ``cols`` must be strictly increasing (a selection, not a permutation)."""
        cols = np.asarray(cols, dtype=_INDEX).ravel()
        if len(cols) > 1 and not (np.diff(cols) > 0).all():
            raise ValueError("take_columns needs strictly increasing columns")
        new = np.full(self.shape[1], -1, dtype=_INDEX)
        new[cols] = np.arange(len(cols), dtype=_INDEX)
        mapped = new[self.indices]
        keep = mapped >= 0
        indptr = np.zeros_like(self.indptr)
        np.cumsum(np.bincount(self.row_ids()[keep], minlength=self.shape[0]), out=indptr[1:])
        return CSR(self.data[keep], mapped[keep], indptr, (self.shape[0], len(cols)))

    def transpose(self) -> CSR:
        """The transpose, its columns sorted within each row."""
        order = np.argsort(self.indices, kind="stable")  # row order kept within each new row
        indptr = np.zeros(self.shape[1] + 1, dtype=_INDEX)
        np.cumsum(np.bincount(self.indices, minlength=self.shape[1]), out=indptr[1:])
        return CSR(self.data[order], self.row_ids()[order], indptr, (self.shape[1], self.shape[0]))

    @property
    def T(self) -> CSR:  # noqa: N802 - the usual name of a transpose
        """The transpose (``transpose()``)."""
        return self.transpose()

    # ------------------------------------------------------------------ arithmetic
    def matvec(self, x: ArrayLike) -> NDArray:
        """``self @ x`` for a vector ``x``: each row summed left to right in the common dtype."""
        x = np.asarray(x)
        if x.shape != (self.shape[1],):
            raise ValueError(f"a {self.shape} matrix times a vector of shape {x.shape}")
        dtype = np.result_type(self.data, x)
        y = np.zeros(self.shape[0], dtype=dtype)
        products = self.data.astype(dtype, copy=False) * x.astype(dtype, copy=False)[self.indices]
        np.add.at(y, self.row_ids(), products)  # unbuffered, in storage order: csr_matvec's order
        return y

    def __matmul__(self, x: ArrayLike) -> NDArray:
        return self.matvec(x)

    def row_sums(self) -> NDArray:
        """The sum of each row (0 for an empty row)."""
        out = np.zeros(self.shape[0], dtype=_sum_dtype(self.dtype))
        nonempty = np.flatnonzero(np.diff(self.indptr))
        if len(nonempty):
            out[nonempty] = np.add.reduceat(self.data, self.indptr[nonempty])
        return out

    def col_sums(self) -> NDArray:
        """The sum of each column (0 for an empty column), accumulated row by row."""
        out = np.zeros(self.shape[1], dtype=_sum_dtype(self.dtype))
        np.add.at(out, self.indices, self.data)
        return out

    def sum_rows(self, rows: ArrayLike) -> NDArray:
        """The sum of the given rows: a dense vector with one value per column, added in the order of ``rows``.

        For a matrix stored term x document this is the sum of a few term columns of the
        document x term matrix (BM25's query score)."""
        picked = self.take_rows(rows)
        out = np.zeros(self.shape[1], dtype=_sum_dtype(self.dtype))
        np.add.at(out, picked.indices, picked.data)
        return out

    def scale_columns(self, v: ArrayLike) -> CSR:
        """Column ``j`` times ``v[j]``: ``A * v[None, :]``, in the common dtype."""
        v = np.asarray(v)
        if v.shape != (self.shape[1],):
            raise ValueError(f"{self.shape[1]} columns scaled by a vector of shape {v.shape}")
        return CSR(self.data * v[self.indices], self.indices, self.indptr, self.shape)

    def scale_rows(self, v: ArrayLike) -> CSR:
        """Row ``i`` times ``v[i]``: ``A * v[:, None]``, in the common dtype."""
        v = np.asarray(v)
        if v.shape != (self.shape[0],):
            raise ValueError(f"{self.shape[0]} rows scaled by a vector of shape {v.shape}")
        return CSR(self.data * np.repeat(v, np.diff(self.indptr)), self.indices, self.indptr, self.shape)


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy's (and SciPy's) accumulator for a sum: small integers widen to the platform integer."""
    return np.zeros(0, dtype=dtype).sum().dtype
