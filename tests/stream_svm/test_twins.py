"""StreamSVM twins agree after every step (linear form dense and CSR, kernel forms,
lookahead 1 and 10), and share one persistence format."""

import pickle

import numpy as np
import pytest

from refsvm.core.kernels import get_row
from refsvm.stream_svm import _stream_svm as twin
from refsvm.stream_svm import stream_svm as ref

from ..conftest import assert_states_equal, sparse_stream, to_csr

CASES = [
    ("StreamSVMLinear", {}),
    ("StreamSVMKernel", {"kernel": "rbf", "gamma": 0.3}),
    ("StreamSVMKernel", {"kernel": "linear"}),
    ("StreamSVMKernel", {"kernel": "poly", "gamma": 0.2, "degree": 2, "coef0": 1.0}),
]


def _pair(name, kw, d, sparse, **extra):
    return (getattr(ref, name)(d, sparse, **kw, **extra),
            getattr(twin, name)(d, sparse, **kw, **extra))


@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] + "-" + c[1].get("kernel", "") for c in CASES])
@pytest.mark.parametrize("lookahead", [1, 10])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("C", [0.5, 20.0])
def test_twins_agree_after_every_step(name, kw, lookahead, sparse, C):
    X, y = sparse_stream(n=250, d=10, density=0.4, seed=3)
    X *= 2.0
    Xs = to_csr(X) if sparse else X
    a, b = _pair(name, kw, 10, sparse, C=C, lookahead=lookahead)
    for t in range(X.shape[0]):
        ca = a.step(get_row(Xs, t), y[t])
        cb = b.step(get_row(Xs, t), y[t])
        assert ca == cb, t
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where=f"step {t}")
    assert a.n_updates > 3
    np.testing.assert_allclose(b.decision_function(Xs), a.decision_function(Xs), rtol=1e-9,
                               atol=1e-10)
    assert a.flush() == b.flush()
    assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where="flush")


@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] + "-" + c[1].get("kernel", "") for c in CASES])
@pytest.mark.parametrize("lookahead", [1, 10])
@pytest.mark.parametrize("sparse", [False, True])
def test_twins_agree_after_every_step_with_the_bias(name, kw, lookahead, sparse):
    """fit_intercept (the constant coordinate; kernel k + 1): same checks, b included."""
    X, y = sparse_stream(n=200, d=10, density=0.4, seed=13)
    X = 2.0 * X + 1.0 * (X != 0)                  # off the origin
    Xs = to_csr(X) if sparse else X
    a, b = _pair(name, kw, 10, sparse, C=3.0, lookahead=lookahead, fit_intercept=True)
    for t in range(X.shape[0]):
        assert a.step(get_row(Xs, t), y[t]) == b.step(get_row(Xs, t), y[t]), t
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where=f"step {t}")
    assert a.get_state()["b"] != 0.0
    np.testing.assert_allclose(b.decision_function(Xs), a.decision_function(Xs), rtol=1e-9,
                               atol=1e-10)
    assert a.flush() == b.flush()
    assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where="flush")
    assert a.intercept == pytest.approx(b.intercept, rel=1e-9, abs=1e-11)
    # persistence carries b across the twins
    moved = getattr(ref, name)(**b.init_params())
    moved.load_state(b.save_state())
    assert_states_equal(b.get_state(), moved.get_state(), rtol=0, atol=0)


@pytest.mark.parametrize("name,kw", CASES[:2], ids=["linear-form", "rbf"])
@pytest.mark.parametrize("sparse", [False, True])
def test_run_equals_steps_and_printed_form(name, kw, sparse):
    X, y = sparse_stream(n=200, d=8, seed=4)
    Xs = to_csr(X) if sparse else X
    order = np.random.RandomState(0).permutation(200)
    for form in ("consistent", "printed"):
        a, b = _pair(name, kw, 8, sparse, C=2.0, form=form)
        assert a.run(Xs, y, order) == b.run(Xs, y, order)
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where=form)


@pytest.mark.parametrize("name,kw", CASES[:2], ids=["linear-form", "rbf"])
@pytest.mark.parametrize("sparse", [False, True])
def test_one_persistence_format_across_twins(name, kw, sparse):
    """A state saved mid-stream (buffer non-empty) by either twin loads into the other
    and continues as the uninterrupted run; pickling continues bit for bit."""
    X, y = sparse_stream(n=200, d=8, seed=5)
    Xs = to_csr(X) if sparse else X
    first, rest = np.arange(120), np.arange(120, 200)
    for src, dst in ((ref, twin), (twin, ref), (twin, twin), (ref, ref)):
        full = getattr(src, name)(8, sparse, C=3.0, lookahead=7, **kw)
        full.run(Xs, y, first)
        assert full.get_state()["buffer_ids"].shape[0] > 0      # saved mid-buffer
        moved = getattr(dst, name)(**full.init_params())
        moved.load_state(full.save_state())
        assert_states_equal(full.get_state(), moved.get_state(), rtol=0, atol=0)
        full.run(Xs, y, rest)
        moved.run(Xs, y, rest)
        assert_states_equal(full.get_state(), moved.get_state(), rtol=1e-9, atol=1e-11)
    st = getattr(twin, name)(8, sparse, C=3.0, lookahead=7, **kw)
    st.run(Xs, y, first)
    copy = pickle.loads(pickle.dumps(st))
    st.run(Xs, y, rest)
    copy.run(Xs, y, rest)
    assert_states_equal(st.get_state(), copy.get_state(), rtol=0, atol=0)


def test_flushed_copy_leaves_the_state_alone():
    X, y = sparse_stream(n=100, d=6, seed=6)
    for mod in (ref, twin):
        st = mod.StreamSVMLinear(6, False, C=1.0, lookahead=50)
        st.run(X, y, np.arange(100))
        before = st.get_state()
        assert before["buffer_ids"].shape[0] > 0
        f = st.decision_function(X)
        after = st.get_state()
        assert_states_equal(before, after, rtol=0, atol=0)
        g = st.flushed().center_function(X)
        np.testing.assert_array_equal(f, g)
        assert not np.allclose(f, st.center_function(X))
