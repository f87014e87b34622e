"""tools.sparse: a NumPy-only CSR matrix that gives SciPy's numbers, bit for bit.

The first tests need only NumPy (a dense array is the reference). The rest compare with
``scipy.sparse`` doing exactly what BM25 and the graph walk did with it before; SciPy is in
the ``dev`` extra, and those tests are skipped where it is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from tools.graph.walk import Scope
from tools.lexical import BM25, tokenize
from tools.sparse import CSR

try:
    import scipy.sparse as sp
except ImportError:  # the runtime venv: scipy is a dev tool only
    sp = None

needs_scipy = pytest.mark.skipif(sp is None, reason="scipy (the dev extra) is the reference these tests compare with")

SHAPES = [(0, 0), (0, 5), (5, 0), (1, 1), (3, 7), (7, 3), (40, 60), (200, 30)]
SEEDS = range(3)


def triplets(shape: tuple[int, int], seed: int, *, max_per_cell: int = 2, density: float = 0.2):
    """Random (values, rows, cols): some rows and columns left empty, cells given up to ``max_per_cell``
    times, in shuffled order, with a few stored zeros."""
    rng = np.random.default_rng(seed)
    m, n = shape
    if m == 0 or n == 0:
        return np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    live_rows = rng.choice(m, size=max(1, m - m // 4), replace=False)  # about a quarter of rows empty
    live_cols = rng.choice(n, size=max(1, n - n // 4), replace=False)
    k = max(1, int(density * m * n))
    rows = rng.choice(live_rows, size=k)
    cols = rng.choice(live_cols, size=k)
    cells = np.unique(np.stack([rows, cols], axis=1), axis=0)  # each cell once ...
    times = rng.integers(1, max_per_cell + 1, size=len(cells))  # ... then repeated up to max_per_cell times
    cells = np.repeat(cells, times, axis=0)
    cells = cells[rng.permutation(len(cells))]
    values = rng.random(len(cells)) * 10
    values[rng.random(len(cells)) < 0.05] = 0.0
    return values, cells[:, 0], cells[:, 1]


def dense_of(values, rows, cols, shape) -> np.ndarray:
    out = np.zeros(shape)
    np.add.at(out, (rows, cols), values)
    return out


def same_csr(mine: CSR, ref) -> None:
    """Same structure and the very same bits in every stored value."""
    assert mine.shape == ref.shape
    assert np.array_equal(mine.indptr, ref.indptr)
    assert np.array_equal(mine.indices, ref.indices)
    assert mine.dtype == ref.dtype
    assert np.array_equal(mine.data.view(np.uint8), ref.data.view(np.uint8))


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def scipy_of(mine: CSR):
    return sp.csr_array((mine.data, mine.indices, mine.indptr), shape=mine.shape)


# ---------------------------------------------------------------- against a dense array (NumPy only)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_a_matrix_built_from_triplets_holds_their_sums_with_sorted_columns(shape, seed):
    values, rows, cols = triplets(shape, seed, max_per_cell=3)
    m = CSR.from_coo(values, rows, cols, shape)
    assert m.shape == shape and len(m.indptr) == shape[0] + 1
    assert np.allclose(m.to_dense(), dense_of(values, rows, cols, shape))
    for r in m.row_lists():
        assert r == sorted(set(r))  # sorted, each column once
    assert m.nnz == len({(int(r), int(c)) for r, c in zip(rows, cols)})  # stored zeros are kept


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_products_sums_slices_and_transpose_agree_with_the_dense_matrix(shape, seed):
    values, rows, cols = triplets(shape, seed)
    m = CSR.from_coo(values, rows, cols, shape)
    a = m.to_dense()
    rng = np.random.default_rng(seed + 100)
    x, v_rows, v_cols = rng.random(shape[1]), rng.random(shape[0]), rng.random(shape[1])
    assert np.allclose(m @ x, a @ x)
    assert np.allclose(m.row_sums(), a.sum(axis=1)) and np.allclose(m.col_sums(), a.sum(axis=0))
    assert np.array_equal(m.T.to_dense(), a.T)
    assert np.array_equal(m.scale_columns(v_cols).to_dense(), a * v_cols[None, :])
    assert np.array_equal(m.scale_rows(v_rows).to_dense(), a * v_rows[:, None])
    picked_rows = rng.choice(shape[0], size=shape[0] // 2) if shape[0] else np.zeros(0, dtype=int)
    picked_cols = np.flatnonzero(rng.random(shape[1]) < 0.5)
    assert np.array_equal(m.take_rows(picked_rows).to_dense(), a[picked_rows])
    assert np.array_equal(m.take_columns(picked_cols).to_dense(), a[:, picked_cols])
    assert np.allclose(m.sum_rows(picked_rows), a[picked_rows].sum(axis=0))
    assert np.array_equal(m.eliminate_zeros().to_dense(), a) and (m.eliminate_zeros().data != 0).all()
    assert m.row_lists() == [sorted({int(c) for r, c in zip(rows, cols) if r == i}) for i in range(shape[0])]
    for i, j in zip(rows[:20], cols[:20]):
        assert m.get(int(i), int(j)) == a[i, j]


def test_a_cell_with_nothing_stored_reads_zero():
    m = CSR.from_coo([2.0, 3.0], [0, 1], [1, 0], (2, 3))
    assert (m.get(0, 0), m.get(0, 1), m.get(0, 2), m.get(1, 0)) == (0.0, 2.0, 0.0, 3.0)


def test_indices_outside_the_shape_and_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="outside"):
        CSR.from_coo([1.0], [2], [0], (2, 2))
    with pytest.raises(ValueError, match="outside"):
        CSR.from_coo([1.0], [0], [-1], (2, 2))
    with pytest.raises(ValueError, match="values"):
        CSR.from_coo([1.0, 2.0], [0], [0], (2, 2))
    with pytest.raises(ValueError, match="increasing"):
        CSR.from_coo([1.0], [0], [0], (1, 3)).take_columns([2, 0])
    with pytest.raises(ValueError):
        CSR.empty((2, 3)) @ np.zeros(2)


# ---------------------------------------------------------------- against scipy.sparse, bit for bit
@needs_scipy
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_building_is_scipys_coo_to_csr(shape, seed, dtype):
    values, rows, cols = triplets(shape, seed)  # at most two values per cell
    ref = sp.coo_array((values.astype(dtype), (rows, cols)), shape=shape).tocsr()
    same_csr(CSR.from_coo(values, rows, cols, shape, dtype=dtype), ref)


@needs_scipy
@pytest.mark.parametrize("seed", SEEDS)
def test_three_or_more_values_for_a_cell_are_scipys_sum_to_rounding_and_exact_when_the_sum_is(seed):
    shape = (30, 20)
    values, rows, cols = triplets(shape, seed, max_per_cell=6)
    ref = sp.coo_array((values, (rows, cols)), shape=shape).tocsr()
    mine = CSR.from_coo(values, rows, cols, shape)
    assert np.array_equal(mine.indices, ref.indices) and np.allclose(mine.data, ref.data, rtol=1e-15, atol=0)
    eighths = np.round(values * 8) / 8  # sums of eighths are exact in any order
    same_csr(CSR.from_coo(eighths, rows, cols, shape), sp.coo_array((eighths, (rows, cols)), shape=shape).tocsr())


@needs_scipy
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("mdtype", "xdtype"), [(np.float32, np.float32), (np.float64, np.float64),
                                                 (np.float32, np.float64)])
def test_matvec_is_scipys_product(shape, seed, mdtype, xdtype):
    mine = CSR.from_coo(*triplets(shape, seed), shape, dtype=mdtype)
    x = np.random.default_rng(seed).standard_normal(shape[1]).astype(xdtype)
    assert bits_equal(mine @ x, scipy_of(mine) @ x)


@needs_scipy
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_row_and_column_sums_are_scipys(shape, seed):
    mine = CSR.from_coo(*triplets(shape, seed), shape)
    ref = scipy_of(mine)
    assert bits_equal(mine.row_sums(), np.asarray(ref.sum(axis=1)).ravel())
    assert bits_equal(mine.col_sums(), np.asarray(ref.sum(axis=0)).ravel())


@needs_scipy
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_transpose_slices_row_lists_and_zero_elimination_are_scipys(shape, seed):
    values, rows, cols = triplets(shape, seed)
    mine = CSR.from_coo(values, rows, cols, shape)
    ref = scipy_of(mine)
    same_csr(mine.T, ref.T.tocsr())
    rng = np.random.default_rng(seed)
    picked_rows = rng.choice(shape[0], size=shape[0]) if shape[0] else np.zeros(0, dtype=int)  # repeats too
    picked_cols = np.flatnonzero(rng.random(shape[1]) < 0.6)
    same_csr(mine.take_rows(picked_rows), ref[picked_rows])
    same_csr(mine.take_columns(picked_cols), ref[:, picked_cols].tocsr())
    same_csr(mine.take_rows(picked_rows).take_columns(picked_cols), ref[picked_rows][:, picked_cols].tocsr())
    tidy = ref.copy()
    tidy.eliminate_zeros()
    same_csr(mine.eliminate_zeros(), tidy)
    assert mine.row_lists() == [ref.indices[ref.indptr[i]:ref.indptr[i + 1]].tolist() for i in range(shape[0])]
    coo = ref.tocoo()
    assert mine.row_ids().tolist() == coo.row.tolist()
    for i, j in zip(rows, cols):
        assert mine.get(int(i), int(j)) == float(ref[int(i), int(j)])


@needs_scipy
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_scaling_rows_and_columns_is_scipys_broadcast_product(shape, seed):
    mine = CSR.from_coo(*triplets(shape, seed), shape)
    ref = scipy_of(mine)
    rng = np.random.default_rng(seed)
    v_rows, v_cols = rng.random(shape[0]), rng.random(shape[1])
    same_csr(mine.scale_columns(v_cols), sp.csr_array(ref * v_cols[None, :]))
    same_csr(mine.scale_rows(v_rows), sp.csr_array(ref * v_rows[:, None]))


@needs_scipy
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", SEEDS)
def test_sum_of_rows_is_scipys_sum_of_csc_columns(shape, seed):
    """BM25's query: the document x term matrix stored by columns, a few columns summed (float32)."""
    values, rows, cols = triplets(shape, seed, max_per_cell=1)
    docs_terms = sp.csc_matrix((values, (rows, cols)), shape=shape, dtype=np.float32)
    terms_docs = CSR.from_coo(values, cols, rows, (shape[1], shape[0]), dtype=np.float32)
    picked = sorted(set(np.random.default_rng(seed).choice(shape[1], size=min(4, shape[1])).tolist()))
    ref = np.asarray(docs_terms[:, picked].sum(axis=1), dtype=np.float32).ravel()
    assert bits_equal(terms_docs.sum_rows(picked), ref)


# ---------------------------------------------------------------- the two users, against their SciPy versions
CORPUS = [
    "billing-api 4.19.0 raised queue_depth_max to 5000 after the deploy",
    "the billing-api pods restarted; queue depth alarms fired on billing-api",
    "Tekezé notes: nothing about queues",
    "the and of",  # only stopwords: an empty row
    "payments-gateway timeouts followed the billing-api deploy of 4.19.0",
    "",
    "queue_depth_max queue_depth_max queue_depth_max",
]


@needs_scipy
@pytest.mark.parametrize("query", ["billing-api deploy", "queue_depth_max", "tekeze", "nothing here", "4.19.0 queue",
                                   "the"])
def test_bm25_scores_are_those_of_its_scipy_version(query):
    bm25 = BM25(CORPUS)
    docs_terms = sp.csc_matrix(bm25.weights.T.to_dense())  # the same weights, stored as the SciPy version did
    cols = sorted({bm25.vocab[t] for t in tokenize(query) if t in bm25.vocab})
    ref = (np.asarray(docs_terms[:, cols].sum(axis=1), dtype=np.float32).ravel() if cols
           else np.zeros(len(CORPUS), dtype=np.float32))
    assert bits_equal(bm25.scores(query), ref)


def test_bm25_over_no_texts_scores_nothing():
    assert BM25([]).scores("anything").shape == (0,)


def walk_weights(rng: np.random.Generator, n_c: int, n_e: int, density: float,
                 dangling_every: int) -> tuple[CSR, np.ndarray]:
    """A random chunk x entity weight matrix of a walk (1 for a mention, 3 for a subject edge), every
    `dangling_every`-th chunk naming nothing; only entities some chunk names are kept (and returned)."""
    rows, cols = np.nonzero(rng.random((n_c, n_e)) < density)
    keep = rows % dangling_every != 0
    rows, cols = rows[keep], cols[keep]
    weights = np.where(rng.random(len(rows)) < 0.2, 3.0, 1.0)
    W = CSR.from_coo(weights, rows, cols, (n_c, n_e))
    ents = np.flatnonzero(W.col_sums() > 0)
    return W.take_columns(ents), ents


@needs_scipy
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("damping", [0.85, 0.5])
def test_the_walk_transition_blocks_are_those_of_its_scipy_version(seed, damping):
    """Chunk x entity weights (1 for a mention, 3 for a subject edge; a chunk may name none)."""
    rng = np.random.default_rng(seed)
    n_c, n_e = 50, 12
    W, ents = walk_weights(rng, n_c, n_e, density=0.15, dangling_every=7)
    to_c, to_e, dangling = Scope(np.arange(n_c), ents, W, W, np.ones(len(ents)), n_e).transition(damping)

    Ws = scipy_of(W)  # the SciPy version, as tools/graph/walk.py computed it
    deg_c = np.asarray(Ws.sum(axis=1)).ravel()
    deg_e = np.asarray(Ws.sum(axis=0)).ravel()
    inv_c = np.divide(1.0, deg_c, out=np.zeros_like(deg_c), where=deg_c > 0)
    ref_c = sp.csr_array(Ws * (damping / deg_e)[None, :], dtype=np.float32)
    ref_e = sp.csr_array(Ws.T * (damping * inv_c)[None, :], dtype=np.float32)
    same_csr(to_c, ref_c)
    same_csr(to_e, ref_e)
    assert dangling.tolist() == np.flatnonzero(deg_c == 0).tolist()
    x = rng.random(len(ents)).astype(np.float32)
    for _ in range(5):  # a few sweeps of the walk: the same bits every time
        y, y_ref = to_c @ x, ref_c @ x
        assert bits_equal(y, y_ref)
        x = to_e @ y
        assert bits_equal(x, ref_e @ y_ref)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("damping", [0.85, 0.5])
def test_the_walk_with_its_leaves_folded_in_reaches_the_fixed_point_of_the_whole_walk(seed, damping):
    """Most entities are named by one chunk only; folding them into their chunk (`Scope.leaves`)
    changes the work per sweep, not the answer: chunk and entity scores equal a direct solve of the
    personalized PageRank of the whole bipartite walk, dangling chunks included."""
    rng = np.random.default_rng(seed)
    n_c, n_e = 60, 40
    W, ents = walk_weights(rng, n_c, n_e, density=0.06, dangling_every=9)
    scope = Scope(np.arange(n_c), ents, W, W, np.bincount(W.indices, minlength=len(ents)).astype(float), n_e)
    leaves = scope.leaves(damping)
    assert len(leaves.leaf) >= 3 and len(leaves.joins) >= 3 and len(leaves.dangling) > 0  # the case it is about
    seeds = [int(leaves.leaf[0]), int(leaves.joins[0])]
    xc, xe = scope.pagerank(seeds, damping)

    # the whole walk as one dense column-stochastic matrix over [chunks, entities]; a dangling chunk
    # jumps to the personalization, as nx.pagerank does
    dense = W.to_dense()
    deg_c, deg_e = dense.sum(axis=1), dense.sum(axis=0)
    P = np.zeros((n_c + len(ents), n_c + len(ents)))
    P[:n_c, n_c:] = dense / deg_e[None, :]
    P[n_c:, :n_c] = (dense / np.where(deg_c > 0, deg_c, 1)[:, None]).T
    p = np.zeros(n_c + len(ents))
    for j in seeds:
        p[n_c + j] = 1.0 / scope.support[j]
    p /= p.sum()
    P[:, np.flatnonzero(deg_c == 0)] = p[:, None]
    x = np.linalg.solve(np.eye(len(p)) - damping * P, (1 - damping) * p)
    assert np.abs(xc - x[:n_c]).max() < 1e-6 and np.abs(xe - x[n_c:]).max() < 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_a_search_takes_the_same_first_k_as_a_full_sort_ties_included(seed):
    """The graph search sorts only the values that can reach its first k; ties on the score are
    broken by the cosine, then by the row, exactly as a sort of everything would."""
    from tools.graph.walk import _top

    rng = np.random.default_rng(seed)
    n = 500
    final = rng.integers(0, 20, n).astype(float)  # many ties
    dense = rng.integers(0, 5, n).astype(np.float32)
    rows = rng.permutation(n)
    for k in (1, 5, 10, 499, 500, 800):
        assert _top(final, dense, rows, k).tolist() == np.lexsort((rows, -dense, -final))[:k].tolist()
