"""The linear family: reference and compiled twin agree after every single example."""

import pickle

import numpy as np
import pytest

from refsvm.linear import _linear as _core, linear
from refsvm.core.kernels import get_row

from .conftest import assert_states_equal, sparse_stream, to_csr

CASES = [
    ("PerceptronState", {}),
    ("PerceptronState", {"eta": 0.1}),
    ("PAState", {"variant": 0}),
    ("PAState", {"variant": 1, "C": 0.2}),
    ("PAState", {"variant": 1, "C": 5.0, "fit_intercept": True}),
    ("PAState", {"variant": 2, "C": 0.5}),
    ("PAmState", {"variant": 0, "gamma": 0.05}),
    ("PAmState", {"variant": 1, "C": 0.5, "gamma": 0.1, "fit_intercept": True}),
    ("PAmState", {"variant": 2, "C": 1.0, "gamma": 0.2}),
    ("PegasosState", {"lam": 0.01}),
    ("PegasosState", {"lam": 0.05, "project": True, "fit_intercept": True}),
    ("PegasosState", {"lam": 0.01, "average": True}),
    ("PegasosState", {"lam": 0.01, "batch_size": 7, "project": True, "average": True,
                      "fit_intercept": True}),
]


def _pair(name, kw, d, sparse):
    return getattr(linear, name)(d, sparse, **kw), getattr(_core, name)(d, sparse, **kw)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_twins_agree_after_every_step(name, kw, sparse):
    X, y = sparse_stream(n=250, d=12, seed=3)
    X[17] = 0.0  # a zero example (PA/PA-I must skip it in both twins)
    M = to_csr(X) if sparse else X
    ref, twin = _pair(name, kw, X.shape[1], sparse)
    order = np.random.RandomState(5).permutation(X.shape[0])
    for step, i in enumerate(order):
        ref.step(get_row(M, i), y[i])
        twin.step(get_row(M, i), y[i])
        assert_states_equal(ref.get_state(), twin.get_state(), where=f"{name} step {step}")
    assert ref.n_updates > 0  # the stream exercised the update branch
    assert ref.n_updates < ref.t or name == "PegasosState"  # ... and the passive one
    np.testing.assert_allclose(twin.decision_function(M), ref.decision_function(M),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_whole_stream_loop_equals_steps_and_dense_equals_csr(name, kw):
    X, y = sparse_stream(n=400, d=15, seed=4)
    order = np.arange(X.shape[0])[::-1].copy()
    stepped = getattr(_core, name)(X.shape[1], False, **kw)
    for i in order:
        stepped.step(X[i], y[i])
    dense = getattr(_core, name)(X.shape[1], False, **kw)
    dense.run(X, y, order)
    csr = getattr(_core, name)(X.shape[1], True, **kw)
    csr.run(to_csr(X), y, order)
    ref = getattr(linear, name)(X.shape[1], True, **kw)
    ref.run(to_csr(X), y, order)
    assert_states_equal(stepped.get_state(), dense.get_state(), rtol=1e-13, atol=1e-14)
    assert_states_equal(dense.get_state(), csr.get_state(), where="dense vs csr")
    assert_states_equal(ref.get_state(), csr.get_state(), where="reference run vs twin run")


@pytest.mark.parametrize("name,kw", CASES[::3])
def test_twin_state_pickles(name, kw):
    X, y = sparse_stream(n=60, d=5, seed=6)
    twin = getattr(_core, name)(X.shape[1], False, **kw)
    twin.run(X, y, np.arange(30))
    back = pickle.loads(pickle.dumps(twin))
    assert_states_equal(twin.get_state(), back.get_state(), rtol=1e-15, atol=0)
    twin.run(X, y, np.arange(30, 60))
    back.run(X, y, np.arange(30, 60))
    assert_states_equal(twin.get_state(), back.get_state(), rtol=1e-12, atol=1e-14)
