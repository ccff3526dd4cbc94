"""Shared test helpers: both backends, twin comparison, data location."""

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

BACKENDS = ["cython", "python"]


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (long checks; skipped by default)")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` are skipped unless ``--runslow`` is given or the ``-m``
    expression names them (``-m slow``): the default run, which CI runs, stays short."""
    if config.getoption("--runslow") or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow (or -m slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
SHARED_DATA = Path(os.environ.get("REFSVM_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def assert_states_equal(ref, twin, rtol=1e-10, atol=1e-12, where=""):
    """Every entry of two get_state() dicts agrees (arrays to rtol, counters exactly)."""
    assert ref.keys() == twin.keys(), f"{where}: keys {sorted(ref)} != {sorted(twin)}"
    for key in ref:
        a, b = np.asarray(ref[key]), np.asarray(twin[key])
        if a.dtype.kind in "iub" and b.dtype.kind in "iub":
            np.testing.assert_array_equal(a, b, err_msg=f"{where}: {key}")
        else:
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=f"{where}: {key}")


def to_csr(X):
    """CSR in the canonical form the twins take (int32 sorted indices)."""
    M = sp.csr_matrix(X, dtype=np.float64)
    M.sort_indices()
    M.indices = M.indices.astype(np.int32)
    M.indptr = M.indptr.astype(np.int32)
    return M


def zero_rows_stream(seed):
    """A fuzzed degenerate stream (docs/fine_scheinberg.rst, "Fuzzing"): 5-59 rows of
    3-D Gaussians, about 30 % of them zero, random labels (the first two -1, +1), and
    C = 10^U(-2, 4) drawn after them.  Returns (X, y, C)."""
    rng = np.random.RandomState(seed)
    n = rng.randint(5, 60)
    X = rng.randn(n, 3)
    X[rng.rand(n) < 0.3] = 0.0
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    y[0], y[1] = -1.0, 1.0
    C = float(10.0 ** rng.uniform(-2, 4))
    return X, y, C


def assert_linear_dual_is_libsvm(X, y, C, support, coef, rtol=1e-9):
    """The dual objective sum|a| - a'Ka/2 of a model (``support_``, ``dual_coef_[0]``)
    with the linear kernel equals LIBSVM's (``SVC`` on the precomputed Gram matrix,
    tol 1e-12) to ``rtol`` (the objective is unique where b and alpha need not be)."""
    from sklearn.metrics.pairwise import linear_kernel
    from sklearn.svm import SVC

    K = linear_kernel(X)
    svc = SVC(C=C, kernel="precomputed", tol=1e-12).fit(K, y)

    def dual(sup, dc):
        a = np.zeros(X.shape[0])
        a[sup] = dc
        return np.sum(np.abs(a)) - 0.5 * a @ K @ a

    w = dual(svc.support_, svc.dual_coef_[0])
    assert abs(dual(support, coef) - w) <= rtol * max(1.0, abs(w)), (dual(support, coef), w)


def sparse_stream(n=300, d=12, density=0.4, seed=0, noise=0.3):
    """A small noisy linearly-structured stream with many zeros (so CSR and dense differ)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[rng.rand(n, d) > density] = 0.0
    w = rng.randn(d)
    y = np.sign(X @ w + noise * rng.randn(n))
    y[y == 0] = 1.0
    return X, y
