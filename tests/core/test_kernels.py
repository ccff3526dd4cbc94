"""Kernels: reference vs compiled twin vs scikit-learn's pairwise kernels; counting; row store."""

import pickle

import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from refsvm._core import CKernel, RowStore
from refsvm.core.kernels import Kernel, get_row

from ..conftest import to_csr

SKLEARN = {
    "linear": lambda A, B, g, d, c: linear_kernel(A, B),
    "rbf": lambda A, B, g, d, c: rbf_kernel(A, B, gamma=g),
    "poly": lambda A, B, g, d, c: polynomial_kernel(A, B, degree=d, gamma=g, coef0=c),
}


@pytest.fixture
def data():
    rng = np.random.RandomState(1)
    X = rng.randn(25, 6)
    X[rng.rand(25, 6) < 0.5] = 0.0
    X[3] = 0.0  # an all-zero row
    return X


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_twins_match_sklearn(kind, sparse, data):
    gamma, degree, coef0 = 0.7, 3, 0.5
    M = to_csr(data) if sparse else data
    expected = SKLEARN[kind](data, data, gamma, degree, coef0)
    ref = Kernel(kind, gamma, degree, coef0)
    twin = CKernel(kind, gamma, degree, coef0)
    store = RowStore(data.shape[1], sparse)
    for i in range(data.shape[0]):
        store.append(M, i)
    rows = [get_row(M, i) for i in range(data.shape[0])]
    for j in range(data.shape[0]):
        x = get_row(M, j)
        np.testing.assert_allclose(ref.row(rows, x), expected[:, j], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(twin.row(store, x), expected[:, j], rtol=1e-12, atol=1e-12)
        assert twin(rows[0], x) == pytest.approx(ref(rows[0], x), rel=1e-12, abs=1e-14)
    n = data.shape[0]
    assert ref.n_evals == n * n + n
    assert twin.n_evals == n * n + n


def test_unknown_kernel_is_rejected():
    with pytest.raises(ValueError, match="unknown kernel"):
        Kernel("sigmoid")
    with pytest.raises(ValueError, match="unknown kernel"):
        CKernel("sigmoid")


@pytest.mark.parametrize("sparse", [False, True])
def test_row_store_keep_and_pickle(sparse, data):
    M = to_csr(data) if sparse else data
    store = RowStore(data.shape[1], sparse)
    for i in range(data.shape[0]):
        store.append(M, i)
    assert len(store) == data.shape[0]
    keep = [0, 3, 4, 10, 24]
    store.keep_rows(keep)
    got = store.to_matrix()
    got = got.toarray() if sparse else got
    np.testing.assert_array_equal(got, data[keep])
    # growth after compaction still appends at the end
    store.append(M, 7)
    back = pickle.loads(pickle.dumps(store))
    got = back.to_matrix()
    got = got.toarray() if sparse else got
    np.testing.assert_array_equal(got, data[keep + [7]])


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_many_equals_one_by_one(kind, sparse, data):
    """The core's kernel_many (four stored rows at a time on dense rows) gives k_rows's
    values bit for bit and counts one evaluation per value."""
    M = to_csr(data) if sparse else data
    store = RowStore(data.shape[1], sparse)
    for i in range(data.shape[0]):
        store.append(M, i)
    twin = CKernel(kind, 0.7, 3, 0.5)
    rng = np.random.RandomState(1)
    for z in (0, 3, 24):
        for m in (0, 1, 3, 4, 7, 25):
            pos = rng.randint(0, data.shape[0], size=m)
            before = twin.n_evals
            many = twin.rows_pairs(store, z, pos)
            assert twin.n_evals == before + m
            one = twin.rows_pairs(store, z, pos, many=False)
            np.testing.assert_array_equal(many, one)
            if m:
                expected = SKLEARN[kind](data[pos], data[z:z + 1], 0.7, 3, 0.5).ravel()
                np.testing.assert_allclose(many, expected, rtol=1e-12, atol=1e-12)


def _awkward_csr(rng, n=40, d=30):
    """CSR rows of mixed scales (1e-8 .. 1e7), an empty row, duplicates, one-entry rows."""
    X = rng.randn(n, d) * 10.0 ** rng.randint(-8, 8, size=(n, d))
    X[rng.rand(n, d) < 0.7] = 0.0
    X[5] = 0.0
    X[7] = X[6]
    X[9] = 0.0
    X[9, 3] = 2.5
    return to_csr(X)


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
def test_sparse_kernel_twin_equals_reference_bit_for_bit(kind):
    """CSR rows: the reference's ``Kernel`` and the twin (one pair at a time, and
    ``kernel_many``'s gather four rows at a time) give the same bits; equal rows give an
    RBF value of exactly 1 (the squared distance from the norms is exactly 0)."""
    rng = np.random.RandomState(3)
    M = _awkward_csr(rng)
    n = M.shape[0]
    ref = Kernel(kind, 1e-3, 2, 0.5)
    twin = CKernel(kind, 1e-3, 2, 0.5)
    store = RowStore(M.shape[1], True)
    for i in range(n):
        store.append(M, i)
    rows = [get_row(M, i) for i in range(n)]
    pos = np.arange(n)
    for z in range(n):
        expected = np.array([ref.value(rows[i], rows[z]) for i in range(n)])
        np.testing.assert_array_equal(twin.rows_pairs(store, z, pos), expected)
        np.testing.assert_array_equal(twin.rows_pairs(store, z, pos, many=False), expected)
        np.testing.assert_array_equal(twin.row(store, rows[z]), expected)
    if kind == "rbf":
        assert twin.rows_pairs(store, 6, [7, 6])[0] == 1.0
        assert ref.value(rows[6], rows[7]) == 1.0


def test_sparse_kernel_many_fallbacks_and_compaction_keep_the_values():
    """More features than 64 per requested row (no scatter buffer: the merge) and a store
    compacted by ``keep_rows`` (the kept squared norms move with their rows) give the
    values of a freshly built store, bit for bit."""
    rng = np.random.RandomState(4)
    M = _awkward_csr(rng, n=12, d=2000)
    twin = CKernel("rbf", 1e-4)
    store = RowStore(M.shape[1], True)
    for i in range(M.shape[0]):
        store.append(M, i)
    one = twin.rows_pairs(store, 0, np.arange(12), many=False)
    np.testing.assert_array_equal(twin.rows_pairs(store, 0, np.arange(12)), one)  # 2000 > 64*12
    keep = [0, 2, 3, 6, 7, 11]
    store.keep_rows(keep)
    fresh = RowStore(M.shape[1], True)
    for i in keep:
        fresh.append(M, i)
    for z in range(len(keep)):
        np.testing.assert_array_equal(twin.rows_pairs(store, z, np.arange(len(keep))),
                                      twin.rows_pairs(fresh, z, np.arange(len(keep)), many=False))


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("d", [8, 20])
def test_expansion_equals_the_pairwise_sum(kind, sparse, d):
    """``RowStore.expansion`` (the decision functions' kernel sum: one
    ``kernel_row_many`` call per row) equals the reference's sum over the non-zero
    coefficients, left to right, bit for bit, and counts no evaluation; a dense X of the
    wrong width is refused."""
    rng = np.random.RandomState(5)
    M = _awkward_csr(rng, n=30, d=d)
    if not sparse:
        M = M.toarray()
    coef = rng.randn(30)
    coef[[1, 4, 9]] = 0.0
    ref = Kernel(kind, 0.01, 2, 1.0)
    twin = CKernel(kind, 0.01, 2, 1.0)
    store = RowStore(d, sparse)
    for i in range(30):
        store.append(M, i)
    got = store.expansion(twin, coef, M)
    assert twin.n_evals == 0
    if not sparse:
        with pytest.raises(ValueError, match="features"):
            store.expansion(twin, coef, np.zeros((2, d + 1)))
    rows = [get_row(M, i) for i in range(30)]
    for r in range(30):
        f = 0.0
        for j in range(30):
            if coef[j] != 0.0:
                f += coef[j] * ref.value(rows[j], rows[r])
        assert got[r] == f


@pytest.mark.parametrize("d", [2, 8, 9, 40])
@pytest.mark.parametrize("sparse", [False, True])
def test_rbf_close_pairs_far_from_the_origin(d, sparse):
    """Pairs 1e-7 .. 1 apart around a centre at distance 1e3 from the origin: where the
    norms' form would lose the distance to round-off, the direct sum is taken (twins and
    reference alike, dense and CSR alike, one by one and four at a time: the same bits),
    and the kernel values stay as accurate as the direct sum's."""
    rng = np.random.RandomState(d)
    centre = rng.randn(d)
    centre *= 1e3 / np.linalg.norm(centre)
    steps = 10.0 ** rng.uniform(-7, 0, size=30)
    X = centre + steps[:, None] * rng.randn(30, d) / np.sqrt(d)
    X[::5] = rng.randn(6, d)                       # and some points near the origin
    M = to_csr(X) if sparse else X
    gamma = 0.3
    ref = Kernel("rbf", gamma)
    twin = CKernel("rbf", gamma)
    store = RowStore(d, sparse)
    for i in range(30):
        store.append(M, i)
    rows = [get_row(M, i) for i in range(30)]
    exact = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    for z in range(30):
        many = twin.rows_pairs(store, z, np.arange(30))
        np.testing.assert_array_equal(many, twin.rows_pairs(store, z, np.arange(30),
                                                            many=False))
        np.testing.assert_array_equal(many, [ref.value(rows[i], rows[z]) for i in range(30)])
        np.testing.assert_allclose(many, exact[:, z], rtol=1e-13, atol=1e-15)
    if sparse:
        dense = RowStore(d, False)
        for i in range(30):
            dense.append(X, i)
        np.testing.assert_array_equal(twin.rows_pairs(store, 3, np.arange(30)),
                                      twin.rows_pairs(dense, 3, np.arange(30)))


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("d", [3, 8, 30])
def test_kernel_row_many_equals_one_by_one(kind, sparse, d):
    """``kernel_row_many`` (every stored row against one arrival, in one call: the
    score of a kernel expansion) gives ``k_row_csr`` / ``k_row_dense``'s values bit for
    bit and counts one evaluation per row, for 0 .. 13 stored rows, close pairs included."""
    rng = np.random.RandomState(d)
    X = rng.randn(14, d) * 3.0
    X[rng.rand(14, d) < 0.4] = 0.0
    X[5] = X[4] + 1e-6
    M = to_csr(X) if sparse else X
    twin = CKernel(kind, 0.2, 2, 1.0)
    for n in (0, 1, 3, 4, 5, 13):
        store = RowStore(d, sparse)
        for i in range(n):
            store.append(M, i)
        for z in (4, 13):
            x = get_row(M, z)
            before = twin.n_evals
            many = twin.row(store, x, many=True)
            assert twin.n_evals == before + n
            np.testing.assert_array_equal(many, twin.row(store, x))
    with pytest.raises(ValueError, match="features"):
        twin.row(RowStore(d, False), np.zeros(d + 1))


def test_csr_rows_beyond_the_store_width_reach_no_buffer():
    """A CSR row whose indices exceed the store's n_features (malformed input given to
    the core directly) never indexes the gather's buffer: the merge is used, the values
    are those of one by one, and nothing crashes."""
    import scipy.sparse as sp

    wide = sp.csr_matrix(np.arange(1.0, 41.0).reshape(5, 8) * (np.arange(8) % 3 == 0))
    wide.indices = wide.indices.astype(np.int32)
    for where in ("stored", "arrival"):
        store = RowStore(4, True)               # narrower than the rows' indices (0 .. 7)
        narrow = sp.csr_matrix(np.ones((5, 4)))
        narrow.indices = narrow.indices.astype(np.int32)
        M = wide if where == "stored" else narrow
        for i in range(5):
            store.append(M, i)
        twin = CKernel("rbf", 0.01)
        one = twin.rows_pairs(store, 0, np.arange(5), many=False)
        np.testing.assert_array_equal(twin.rows_pairs(store, 0, np.arange(5)), one)
        x = get_row(wide, 2)
        np.testing.assert_array_equal(twin.row(store, x, many=True), twin.row(store, x))


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
def test_sparse_kernel_many4_equals_one_row_at_a_time(kind):
    """``kernel_many4`` (the inner products of four stored rows z in one pass over the
    other rows, a block of new examples against the support vectors) gives ``kernel_many``'s
    bits for each z and counts 4 m evaluations; with too few rows or too many features
    for the scatter buffer it falls back to the same values."""
    rng = np.random.RandomState(5)
    M = _awkward_csr(rng)
    n = M.shape[0]
    twin = CKernel(kind, 1e-3, 2, 0.5)
    store = RowStore(M.shape[1], True)
    for i in range(n):
        store.append(M, i)
    for z in ([0, 1, 2, 3], [5, 6, 7, 9], [9, 9, 4, 5]):
        for pos in (np.arange(n), rng.permutation(n)[: n // 2], np.arange(3), []):
            n0 = twin.n_evals
            block = twin.rows_pairs4(store, z, pos)
            assert twin.n_evals - n0 == 4 * len(pos)
            for r in range(4):
                np.testing.assert_array_equal(block[r], twin.rows_pairs(store, z[r], pos))
    W = _awkward_csr(rng, n=12, d=2000)          # 2000 > 64 * 12: no scatter buffer
    wide = RowStore(W.shape[1], True)
    for i in range(12):
        wide.append(W, i)
    block = twin.rows_pairs4(wide, [0, 3, 5, 11], np.arange(12))
    for r, z in enumerate([0, 3, 5, 11]):
        np.testing.assert_array_equal(block[r], twin.rows_pairs(wide, z, np.arange(12),
                                                                many=False))
    with pytest.raises(ValueError):
        twin.rows_pairs4(store, [0, 1, 2], np.arange(n))
    with pytest.raises(IndexError):
        twin.rows_pairs4(store, [0, 1, 2, n], np.arange(n))


@pytest.mark.parametrize("kind", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("d", [5, 9, 40, 257])
def test_dense_kernel_many4_equals_one_row_at_a_time(kind, d):
    """Dense ``kernel_many4`` (more than 8 features: the four z's inner products with each
    stored row in one pass, four rows in flight, ``refsvm_dots4x``) gives ``kernel_many``'s
    bits and ``k_rows``' one at a time, for every tail length of the rows (1-3 left over),
    repeated z, close rows (the direct sum of ``_dense_dist``) and values of mixed scale;
    with at most 8 features it is four ``kernel_many`` calls."""
    rng = np.random.RandomState(d)
    X = rng.randn(31, d) * 10.0 ** rng.randint(-3, 4, size=(31, d))
    X[7] = X[3] + 1e-9                                  # close to row 3
    twin = CKernel(kind, 0.3 / d, 2, 0.5)
    store = RowStore(d, False)
    for i in range(31):
        store.append(X, i)
    for z in ([1, 2, 3, 30], [3, 7, 7, 0]):
        for pos in (np.arange(31), rng.permutation(31)[:14], np.arange(1), np.arange(2),
                    np.arange(3), np.arange(5), []):
            n0 = twin.n_evals
            block = twin.rows_pairs4(store, z, pos)
            assert twin.n_evals - n0 == 4 * len(pos)
            for r in range(4):
                np.testing.assert_array_equal(block[r], twin.rows_pairs(store, z[r], pos))
                np.testing.assert_array_equal(
                    block[r], twin.rows_pairs(store, z[r], pos, many=False))