"""StreamSVM at any C (issue 15 items 4 and 8): duplicates with opposite labels and huge C
end in O(1) work per example; property tests over degenerate streams with C from 1e-12 to
1e12, with and without the bias: twins agree and the invariants hold after every step."""

import time

import numpy as np
import pytest

from refsvm.core.kernels import Kernel
from refsvm.stream_svm import _stream_svm as twin
from refsvm.stream_svm import stream_svm as ref

from ..conftest import BACKENDS
from .test_stream_svm import _check_invariants, _module


def _make(backend, case, C, lookahead, bias=False):
    mod = _module(backend)
    if case == "linear-form":
        return mod.StreamSVMLinear(2, False, C=C, lookahead=lookahead, fit_intercept=bias)
    return mod.StreamSVMKernel(2, False, C=C, lookahead=lookahead, kernel="rbf", gamma=1.0,
                               fit_intercept=bias)


def _kernel(case):
    return Kernel("linear") if case == "linear-form" else Kernel("rbf", gamma=1.0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["linear-form", "rbf"])
@pytest.mark.parametrize("lookahead", [1, 10])
def test_duplicates_with_opposite_labels_end_in_constant_work(backend, case, lookahead):
    """One point, its label flipping at every example (OnlineRampSVM took C + 1 steps on
    this): for C from 1 to 1e16 every example is one closed-form step (L = 1) or waits for a
    flush whose solver steps do not grow with C; the ball encloses every point."""
    n = 200
    X = np.tile([[0.3, -0.2]], (n, 1))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    steps, seconds = {}, {}
    for C in (1.0, 1e6, 1e12, 1e16):
        state = _make(backend, case, C, lookahead)
        start = time.perf_counter()
        state.run(X, y, np.arange(n))
        state.flush()
        seconds[C] = time.perf_counter() - start
        steps[C] = state.n_solver_steps
        assert state.n_updates <= n
        assert steps[C] <= 8 * n, (C, steps[C])          # O(1) solver steps per example
        _check_invariants(state, X, y, n, _kernel(case), C, f"C={C:g}")
        if C >= 1e12:   # the e-parts vanish: the MEB of {φ(x), −φ(x)} is the origin
            assert state.radius == pytest.approx(np.sqrt(_kernel(case).value(X[0], X[0])),
                                                 rel=1e-6)
    if lookahead == 1:
        assert all(s == 0 for s in steps.values())
    assert steps[1e16] <= 3 * steps[1.0] + 50, steps
    assert max(seconds.values()) < 5.0, seconds


@pytest.mark.parametrize("backend", BACKENDS)
def test_lookahead_solver_on_near_singular_gram_matrices(backend):
    """The ball and points that are duplicates up to their e-parts (C up to 1e16): the
    solver always returns a feasible μ, a ball that encloses everything, a bounded number
    of steps, and a radius no worse than the best single-coordinate answer."""
    solve = _module(backend).enclosing_ball
    rng = np.random.RandomState(7)
    for trial in range(60):
        C = 10.0 ** rng.choice([0, 6, 9, 12, 16])
        L = rng.randint(2, 12)
        P = rng.randn(L + 1, 3)
        k = rng.randint(1, L + 1)
        P[k:] = P[k] + rng.choice([0.0, 1e-9]) * rng.randn(L + 1 - k, 3)
        P[1:] *= rng.choice([-1.0, 1.0], size=(L, 1))    # opposite labels too
        G = P @ P.T
        G[1:, 1:] += np.eye(L) / C
        G[0, 0] += rng.rand() / C
        d = np.sqrt(np.maximum(G[0, 0] - 2 * G[0, 1:] + np.diag(G)[1:], 0))
        R = rng.rand() * d.max()
        stats = [0]
        mu, r = solve(G, R, stats=stats)
        mu = np.asarray(mu)
        assert np.all(mu >= 0) and abs(mu.sum() - 1) < 1e-12, trial
        assert ref.ball_distances(G, mu, R).max() <= r * (1 + 1e-12), trial
        assert r >= R * (1 - 1e-15)
        assert r <= max(d.max(), R) * (1 + 1e-12)          # never worse than B(c_0, max d)
        assert stats[0] <= 100 * (20 * (L + 1) + 20)


# ------------------------------------------------------------------ property tests
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _streams(draw):
    """Points of a 3 x 3 grid (duplicates, equal rows), runs of one class, the same point
    with both labels."""
    n = draw(st.integers(min_value=1, max_value=20))
    grid = st.sampled_from([-1.0, 0.0, 1.0])
    X = np.array(draw(st.lists(st.tuples(grid, grid), min_size=n, max_size=n)), dtype=float)
    y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    if n >= 2 and draw(st.booleans()):
        X[-1], y[-1] = X[-2], -y[-2]
    return X, y


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(data=_streams(), c=st.sampled_from([1e-12, 1e-3, 1.0, 1e3, 1e12]),
       case=st.sampled_from(["linear-form", "rbf"]), lookahead=st.sampled_from([1, 3]),
       bias=st.booleans())
def test_any_c_twins_agree_and_invariants_hold_after_every_step(data, c, case, lookahead, bias):
    X, y = data
    a = _make("python", case, c, lookahead, bias)
    b = _make("cython", case, c, lookahead, bias)
    assert isinstance(b, (twin.StreamSVMLinear, twin.StreamSVMKernel))
    R_prev = 0.0
    for t in range(X.shape[0]):
        assert a.step(X[t], y[t]) == b.step(X[t], y[t]), t
        sa, sb = a.get_state(), b.get_state()
        for key in sa:
            va, vb = np.asarray(sa[key], dtype=float), np.asarray(sb[key], dtype=float)
            scale = float(np.max(np.abs(va))) if va.size else 1.0
            np.testing.assert_allclose(vb, va, rtol=1e-8, atol=1e-9 * max(1.0, scale),
                                       err_msg=f"C={c:g} step {t}: {key}")
        assert a.radius >= R_prev * (1 - 1e-15)
        R_prev = a.radius
        assert np.all(np.isfinite(b.decision_function(X)))
        _check_invariants(a, X, y, t + 1, _kernel(case), c, f"C={c:g} step {t}",
                          one=1.0 if bias else 0.0)
    a.flush()
    b.flush()
    _check_invariants(a, X, y, X.shape[0], _kernel(case), c, f"C={c:g} flush",
                      one=1.0 if bias else 0.0)
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), rtol=1e-8,
                               atol=1e-9 * max(1.0, float(np.max(np.abs(a.decision_function(X))))))
