"""The linear family: reference and compiled twin agree after every single example,
and share one persistence format."""

import pickle

import numpy as np
import pytest

from refsvm.core.kernels import get_row
from refsvm.linear import (_online_linear_svm, _passive_aggressive, online_linear_svm,
                           passive_aggressive)

from ..conftest import assert_states_equal, sparse_stream, to_csr

#: state class name -> (reference module, compiled twin)
TWINS = {
    "PerceptronState": (passive_aggressive, _passive_aggressive),
    "PAState": (passive_aggressive, _passive_aggressive),
    "PAmState": (passive_aggressive, _passive_aggressive),
    "PegasosState": (online_linear_svm, _online_linear_svm),
}

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
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _make(name, kw, d, sparse, twin):
    return getattr(TWINS[name][1 if twin else 0], name)(d, sparse, **kw)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_twins_agree_after_every_step(name, kw, sparse):
    X, y = sparse_stream(n=250, d=12, seed=3)
    X[17] = 0.0  # a zero example (PA/PA-I must skip it in both twins)
    M = to_csr(X) if sparse else X
    ref, twin = (_make(name, kw, X.shape[1], sparse, t) for t in (False, True))
    order = np.random.RandomState(5).permutation(X.shape[0])
    for step, i in enumerate(order):
        changed = ref.step(get_row(M, i), y[i])
        assert twin.step(get_row(M, i), y[i]) == changed, f"step {step}"
        assert_states_equal(ref.get_state(), twin.get_state(), where=f"{name} step {step}")
    assert ref.n_updates > 0  # the stream exercised the update branch
    assert ref.n_updates < ref.t or name == "PegasosState"  # ... and the passive one
    np.testing.assert_allclose(twin.decision_function(M), ref.decision_function(M),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_whole_stream_loop_equals_steps_and_dense_equals_csr(name, kw):
    X, y = sparse_stream(n=400, d=15, seed=4)
    order = np.arange(X.shape[0])[::-1].copy()
    stepped = _make(name, kw, X.shape[1], False, True)
    n_changed = sum(stepped.step(X[i], y[i]) for i in order)
    dense = _make(name, kw, X.shape[1], False, True)
    assert dense.run(X, y, order) == n_changed == stepped.n_updates
    csr = _make(name, kw, X.shape[1], True, True)
    csr.run(to_csr(X), y, order)
    ref = _make(name, kw, X.shape[1], True, False)
    assert ref.run(to_csr(X), y, order) == n_changed
    # run and step are the same loop: bit for bit
    for key, value in stepped.get_state().items():
        np.testing.assert_array_equal(dense.get_state()[key], value, err_msg=key)
    assert_states_equal(dense.get_state(), csr.get_state(), where="dense vs csr")
    assert_states_equal(ref.get_state(), csr.get_state(), where="reference run vs twin run")


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
@pytest.mark.parametrize("twin", [False, True], ids=["python", "cython"])
def test_pickle_resumes_bit_for_bit(name, kw, twin):
    """Pickling goes through init_params/save_state/load_state; the resumed state and the
    uninterrupted one stay equal bit for bit (the Pegasos twin keeps s and v apart)."""
    X, y = sparse_stream(n=120, d=5, seed=6)
    state = _make(name, kw, X.shape[1], False, twin)
    state.run(X, y, np.arange(60))
    back = pickle.loads(pickle.dumps(state))
    assert type(back) is type(state)
    state.run(X, y, np.arange(60, 120))
    back.run(X, y, np.arange(60, 120))
    for key, value in state.get_state().items():
        np.testing.assert_array_equal(back.get_state()[key], value, err_msg=key)
    np.testing.assert_array_equal(back.decision_function(X), state.decision_function(X))


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
@pytest.mark.parametrize("direction", ["python->cython", "cython->python"])
def test_state_saved_by_one_twin_loads_into_the_other(name, kw, direction):
    X, y = sparse_stream(n=200, d=8, seed=7)
    source_is_twin = direction.startswith("cython")
    source = _make(name, kw, X.shape[1], False, source_is_twin)
    source.run(X, y, np.arange(100))
    params, data = source.init_params(), source.save_state()
    other = getattr(TWINS[name][0 if source_is_twin else 1], name)(**params)
    assert sorted(other.save_state()) == sorted(data)  # one format for both twins
    other.load_state(data)
    assert_states_equal(source.get_state(), other.get_state(), rtol=1e-15, atol=1e-15)
    source.run(X, y, np.arange(100, 200))
    other.run(X, y, np.arange(100, 200))
    assert_states_equal(source.get_state(), other.get_state(), where=direction)
    assert other.n_updates > data["n_updates"]  # the continuation learned something


def test_state_attributes_carry_the_reference_names():
    for name, (reference, twin) in TWINS.items():
        ref, comp = getattr(reference, name)(3), getattr(twin, name)(3)
        public = {a for a in dir(ref) if not a.startswith("_")}
        missing = {a for a in public if not hasattr(comp, a)}
        assert not missing, f"{name}: the twin lacks {sorted(missing)}"
        assert not [a for a in dir(comp) if a.endswith("_") and not a.startswith("_")]
