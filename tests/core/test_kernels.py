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
