"""The kernel PA's departures: an empty table (refsvm.kernel_pa.departures).  The paper
form runs in both twins and agrees after every step; it meets PA's guarantee; a named
setting is an error that leaves a fitted estimator unchanged; persistence keeps the
(empty) settings."""

import pickle

import numpy as np
import pytest

from refsvm import KernelPassiveAggressive
from refsvm.core.kernels import get_row
from refsvm.core.stream import restore_state
from refsvm.datasets import make_checkerboard
from refsvm.kernel_pa import kernel_pa
from refsvm.kernel_pa.departures import DEPARTURES

from ..conftest import BACKENDS, assert_states_equal, to_csr

_kernel_pa = pytest.importorskip("refsvm.kernel_pa._kernel_pa")


def _stream(n=150, seed=0):
    X, y = make_checkerboard(n, noise=0.1, random_state=seed)
    return np.ascontiguousarray(X), y.astype(np.float64)


def test_the_table_is_empty():
    assert DEPARTURES == {}
    for mod in (kernel_pa, _kernel_pa):
        for deps in (None, "default", "paper", {"base": "paper"}):
            assert mod.KernelPA(2, departures=deps).departures == {}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_paper_form_twins_agree_after_every_step(sparse, variant):
    X, y = _stream()
    M = to_csr(X) if sparse else X
    a, b = (mod.KernelPA(2, sparse, C=0.5, variant=variant, gamma=2.0, departures="paper")
            for mod in (kernel_pa, _kernel_pa))
    for t in range(X.shape[0]):
        assert a.step(get_row(M, t), y[t]) == b.step(get_row(M, t), y[t]), t
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-10, atol=1e-12,
                            where=f"step {t}")
    assert 0 < a.n_updates < a.n_seen


@pytest.mark.parametrize("backend", BACKENDS)
def test_paper_form_meets_the_pa_guarantee(backend):
    """PA (the printed τ = ℓ/k(x, x)): after every update the margin on the example is 1."""
    X, y = _stream(n=100, seed=3)
    mod = _kernel_pa if backend == "cython" else kernel_pa
    state = mod.KernelPA(2, C=1.0, variant=0, gamma=2.0, departures="paper")
    updates = 0
    for t in range(X.shape[0]):
        if state.step(X[t], y[t]):
            assert y[t] * state.decision_function(X[t:t + 1])[0] == pytest.approx(1.0, abs=1e-9)
            updates += 1
    assert updates > 10


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_departures_raise_and_leave_the_model(backend):
    X, y = _stream()
    clf = KernelPassiveAggressive(gamma=2.0, backend=backend).partial_fit(
        X[:80], y[:80], classes=[-1.0, 1.0])
    before = pickle.dumps(clf)
    for bad, name in (({"consistent_xi2": False}, "consistent_xi2"), ("printed", "departures"),
                      ({"base": "other"}, "base")):
        clf.set_params(departures=bad)
        with pytest.raises(ValueError, match=name):
            clf.partial_fit(X[80:], y[80:])
        for mod in (kernel_pa, _kernel_pa):
            with pytest.raises(ValueError, match=name):
                mod.KernelPA(2, departures=bad)
    clf.set_params(departures=None)
    assert pickle.dumps(clf) == before
    paper = KernelPassiveAggressive(gamma=2.0, departures="paper", backend=backend).fit(X, y)
    default = KernelPassiveAggressive(gamma=2.0, backend=backend).fit(X, y)
    np.testing.assert_array_equal(paper.decision_function(X), default.decision_function(X))


def test_save_load_keeps_the_departures():
    X, y = _stream()
    for src, dst in ((kernel_pa, _kernel_pa), (_kernel_pa, kernel_pa)):
        a = src.KernelPA(2, C=0.5, gamma=2.0, departures="paper")
        a.run(X[:70], y[:70], np.arange(70))
        params = a.init_params()
        assert params["departures"] == {}
        b = restore_state(dst.KernelPA, params, a.save_state())
        old = {k: v for k, v in params.items() if k != "departures"}
        assert dst.KernelPA(**old).departures == {} and b.departures == {}
        a.run(X[70:], y[70:], np.arange(80))
        b.run(X[70:], y[70:], np.arange(80))
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-10, atol=1e-12)
