"""The departure ``steep_ties`` (refsvm/idsvm/departures/steep_ties.py): the choice among
events tied at a zero-length step once a run of them is long.

The stream: examples of one class first (with S empty every one of them has the same g,
so the first example of the other class finds all of them tied at t = 0), ordered by
their distance from that example, farthest first.  Under the least-index rule alone the
increment of that example takes more zero-length steps than the step budget allows and
``partial_fit`` fails; with the departure it ends exact.
"""

import numpy as np
import pytest

from refsvm import IncrementalSVM
from refsvm.datasets import make_checkerboard, make_two_gaussians
from refsvm.idsvm import incremental_svm as idsvm
from refsvm.idsvm.departures.exactness import ExactnessError
from refsvm.idsvm.departures.steep_ties import steepest_tie

from ..conftest import BACKENDS, assert_states_equal
from .test_oracle import assert_kkt, assert_matches_svc, make_state
from .test_twins import exact_kernels  # noqa: F401 - a fixture

_idsvm = pytest.importorskip("refsvm.idsvm._incremental_svm")

RBF = {"gamma": 0.5}


def one_class_far_to_near(k, seed):
    """k examples of class -1 uniform on [-2, 2]^2, farthest from the last first, then
    one example of class +1."""
    rng = np.random.RandomState(seed)
    Xn, xc = rng.uniform(-2, 2, (k, 2)), rng.uniform(-2, 2, (1, 2))
    order = np.argsort(-np.sum((Xn - xc) ** 2, axis=1), kind="stable")
    return np.vstack([Xn[order], xc]), np.r_[-np.ones(k), 1.0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_a_long_zero_run_ends_exact(backend, seed):
    X, y = one_class_far_to_near(100, seed)
    st = make_state(backend, 2, 1.0, "rbf", **RBF)
    st.run(X, y, range(len(y)))
    assert_kkt(st, X, y, "rbf", RBF)
    assert_matches_svc(st, X, y, "rbf", RBF)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_least_index_rule_alone_runs_out_of_steps(backend):
    """The same stream under the printed rule: the budget runs out, the example is rolled
    back (the failure the departure answers; if this passes without the departure, the
    stream no longer shows it)."""
    X, y = one_class_far_to_near(100, 0)
    model = IncrementalSVM(C=1.0, gamma=0.5, backend=backend,
                           departures={"steep_ties": 0})
    with pytest.raises(ExactnessError, match="step budget"):
        model.partial_fit(X, y, classes=[-1, 1])
    assert model._states[0].get_state()["n_seen"] == 100          # the model before it
    fixed = IncrementalSVM(C=1.0, gamma=0.5, backend=backend).partial_fit(
        X, y, classes=[-1, 1])
    assert_kkt(fixed._states[0], X, y, "rbf", RBF)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("steep_ties", [pytest.param(0, marks=pytest.mark.slow), 64])
def test_two_gaussians_one_class_first(backend, steep_ties):
    """Two Gaussians (400 examples), the class -1 first, each class farthest first from
    one example: the printed rule runs out of steps at the first example of +1, the
    default ends exact."""
    X, y = make_two_gaussians(400, random_state=2)
    y = np.where(y > 0, 1.0, -1.0)
    c = X[np.random.RandomState(102).randint(400)]
    order = np.lexsort((-np.sum((X - c) ** 2, axis=1), y))
    X, y = X[order], y[order]
    model = IncrementalSVM(C=1.0, gamma=0.5, backend=backend,
                           departures={"steep_ties": steep_ties})
    if steep_ties == 0:
        with pytest.raises(ExactnessError, match="step budget"):
            model.partial_fit(X, y, classes=[-1, 1])
        return
    model.partial_fit(X, y, classes=[-1, 1])
    assert_kkt(model._states[0], X, y, "rbf", RBF)


@pytest.mark.parametrize("backend", BACKENDS)
def test_short_runs_choose_as_the_least_index_rule(backend):
    """Streams whose zero-length runs stay below the threshold (two Gaussians; the
    degenerate checkerboard, with its own runs of ties) give the same state, bit for
    bit, as the least-index rule alone."""
    for X, y, kernel, kw, C in (
            (*make_two_gaussians(200, random_state=1), "rbf", RBF, 1.0),
            (*make_checkerboard(120, noise=0.0, random_state=21), "poly",
             {"gamma": 1.0, "degree": 3, "coef0": 0.0}, 0.1)):
        y = y.astype(float)
        a = make_state(backend, 2, C, kernel, **kw)
        b = make_state(backend, 2, C, kernel, departures={"steep_ties": 0}, **kw)
        a.run(X, y, range(len(y)))
        b.run(X, y, range(len(y)))
        assert_states_equal(a.get_state(), b.get_state(), rtol=0, atol=0, where=kernel)


@pytest.mark.parametrize("threshold", [1, 64])
def test_twins_bit_identical_under_the_rate_rule(exact_kernels, threshold):  # noqa: F811
    """The rate rule choosing (from the first zero-length step, and from the default
    threshold), and the least-index rule again after the span: both twins take the same
    path, bit for bit, learning, unlearning and LOO."""
    X, y = one_class_far_to_near(100, 0)
    dep = {"steep_ties": threshold}
    a = idsvm.IncrementalSVMState(2, False, C=1.0, kernel="rbf", departures=dep, **RBF)
    b = _idsvm.IncrementalSVMState(2, False, C=1.0, kernel="rbf", departures=dep, **RBF)
    for i in range(len(y)):
        a.step(X[i], y[i])
        b.step(X[i], y[i])
        assert_states_equal(a.get_state(), b.get_state(), rtol=0, atol=0, where=f"step {i}")
    assert_kkt(a, X, y, "rbf", RBF)
    a.unlearn([3, 50, 100])
    b.unlearn([3, 50, 100])
    np.testing.assert_array_equal(b.loo_decisions(), a.loo_decisions())
    assert_states_equal(a.get_state(), b.get_state(), rtol=0, atol=0, where="end")


def test_steepest_tie_order():
    """The rule itself: a tied priority event first; else the tied margin vector of the
    smallest window (the fastest rate), the least id on equal windows; candidates only
    when no margin vector is tied; nothing tied, nothing chosen."""
    own = [(0.5, 0, 9, 0.0)]
    leaves = [(0.0, 3, 7, 2e-12), (0.0, 3, 4, 1e-12), (0.0, 3, 2, 1e-12), (1.0, 3, 1, 0.0)]
    ts, ws = np.array([0.0, 0.0]), np.array([1e-15, 1e-12])
    ids, kinds = np.array([0, 5]), np.array([4, 4])
    assert steepest_tie(own, leaves, ts, ws, ids, kinds, 0.5) == (0, 9)
    assert steepest_tie(own, leaves, ts, ws, ids, kinds, 0.0) == (3, 2)
    assert steepest_tie(own, leaves[3:], ts, ws, ids, kinds, 0.0) == (4, 0)
    assert steepest_tie([], [], ts[1:], ws[1:], ids[1:], kinds[1:], 0.0) == (4, 5)
    assert steepest_tie([], [], np.array([1.0]), np.array([0.0]), ids[:1], kinds[:1],
                        0.0) == (-1, -1)
