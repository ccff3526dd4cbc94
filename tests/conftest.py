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


def sparse_stream(n=300, d=12, density=0.4, seed=0, noise=0.3):
    """A small noisy linearly-structured stream with many zeros (so CSR and dense differ)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[rng.rand(n, d) > density] = 0.0
    w = rng.randn(d)
    y = np.sign(X @ w + noise * rng.randn(n))
    y[y == 0] = 1.0
    return X, y
