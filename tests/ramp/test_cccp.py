"""Offline CCCP ramp SVM (refsvm.ramp.cccp): an independent QP oracle for its inner solver, the
CCCP stopping rule, and the fixed-point property of the online solution (OnlineSVMR)."""

import numpy as np
import pytest

import refsvm
from scipy.optimize import minimize

from refsvm.ramp import online_svmr as ramp
from refsvm.ramp.cccp import RowKernel, cccp_ramp, dual_objective, solve_hinge
from refsvm.datasets import make_two_gaussians

_ramp = pytest.importorskip("refsvm.ramp._online_svmr")


def gauss(n, seed):
    X, y = make_two_gaussians(n, random_state=seed)
    return np.ascontiguousarray(X), y.astype(np.float64)


def test_inner_hinge_solver_matches_lbfgsb():
    X, y = gauss(80, 0)
    C = 2.0
    K = RowKernel(X, "rbf", 0.5)
    q = K.diag()
    alpha, g = np.zeros(80), np.ones(80)
    solve_hinge(K, y, C, np.ones(80, bool), alpha, g, q, tol=1e-8)
    Kf = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    Q = np.outer(y, y) * Kf
    np.testing.assert_allclose(g, 1 - Q @ alpha, atol=1e-9)           # Eq. (15) bookkeeping
    res = minimize(lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1), np.zeros(80), jac=True,
                   method="L-BFGS-B", bounds=[(0, C)] * 80,
                   options=dict(ftol=1e-15, gtol=1e-12, maxiter=50000))
    assert dual_objective(alpha, g) >= -res.fun - 1e-9
    assert dual_objective(alpha, g) == pytest.approx(-res.fun, rel=1e-7)


def test_row_kernel_counts_and_cache():
    X, _ = gauss(50, 1)
    K = RowKernel(X, "rbf", 0.5)
    K.diag()
    K.row(3)
    K.row(3)
    K.row(7)
    assert K.n_evals == 50 * 3
    np.testing.assert_allclose(K.row(7), np.exp(-0.5 * ((X - X[7]) ** 2).sum(1)), rtol=1e-12)
    small = RowKernel(X, "rbf", 0.5, cache_mb=50 * 8 * 2 / 2**20)   # room for two rows
    for i in (0, 1, 2, 0):
        small.row(i)
    assert small.n_evals == 4 * 50                                   # row 0 was evicted


@pytest.mark.slow
def test_cccp_from_scratch_reaches_a_ramp_solution():
    X, y = gauss(300, 2)
    C, tol = 5.0, 1e-3
    r = cccp_ramp(X, y, C, gamma=0.5, tol=tol)
    assert r.converged and r.rounds >= 2
    assert np.array_equal(r.V, r.g <= 2.0)                           # Eq. (10) is stable
    assert np.all(r.alpha[~r.V] == 0)
    assert not ramp.violates_eq3(r.alpha[r.V], r.g[r.V], C, tol).any()   # Eq. (3) on V
    sv = r.alpha > 0
    assert np.all((r.g[sv] <= 2.0) & (r.g[sv] >= -tol))            # SVs inside the ramp
    # ramp loss beats the hinge SVM on the same data: fewer support vectors
    full = np.zeros(300)
    gg = np.ones(300)
    K = RowKernel(X, "rbf", 0.5)
    solve_hinge(K, y, C, np.ones(300, bool), full, gg, K.diag(), tol)
    assert sv.sum() < (full > 0).sum()


@pytest.mark.parametrize("mod,n,shrinking", [
    pytest.param(ramp, 150, False, id="python-as-printed"),
    pytest.param(ramp, 150, True, id="python-shrinking", marks=pytest.mark.slow),
    pytest.param(_ramp, 600, False, id="cython-as-printed"),
    pytest.param(_ramp, 600, True, id="cython-shrinking")])
def test_online_solution_is_a_cccp_fixed_point(mod, n, shrinking):
    """Warm-started from OnlineSVMR, one CCCP round keeps V, and (with the online gain rule
    off) keeps alpha; at a 1000x tighter inner tolerance f moves by less than the KKT slack."""
    X, y = gauss(n, 3)
    C, tol = 1.0, 1e-3
    # rewarm off: a pass that ends inside one of its hinge stretches holds a hinge solution
    s = mod.OnlineSVMR(2, False, C=C, gamma=0.5, tol=tol, min_gain=1e-14, shrinking=shrinking,
                       departures={"rewarm": 0.0})
    s.run(X, y, np.arange(n, dtype=np.intp))
    st = s.get_state()
    assert np.array_equal(st["I"], np.arange(n))
    assert (st["n_shrink_rounds"] > 0) == shrinking
    r = cccp_ramp(X, y, C, gamma=0.5, tol=tol, alpha0=st["alpha"], max_rounds=1)
    assert r.converged                                               # V' = V after the round
    assert np.array_equal(r.V, st["g"] <= 2.0)
    in_v = np.isin(np.arange(n), st["V"])
    extra = r.V & ~in_v          # in Eq. (10)'s V but not in the online V: alpha = 0 arrivals
    assert np.all(r.V[in_v]) and np.all(st["alpha"][extra] == 0)
    assert np.all((st["g"][extra] < 0) | np.isin(np.flatnonzero(extra), st["held"]))
    np.testing.assert_allclose(r.alpha, st["alpha"], atol=1e-12)
    tight = cccp_ramp(X, y, C, gamma=0.5, tol=1e-6, alpha0=st["alpha"], max_rounds=1)
    assert tight.converged and np.array_equal(tight.V, r.V)
    assert np.max(np.abs(tight.g - st["g"])) < 10 * tol
    d0, d1 = dual_objective(st["alpha"], st["g"]), dual_objective(tight.alpha, tight.g)
    assert 0 <= d1 - d0 <= 1e-5 * abs(d0)


@pytest.mark.parametrize("shrinking", [False, True], ids=["as-printed", "shrinking"])
def test_default_online_solution_is_a_cccp_fixed_point_up_to_the_gain_rule(shrinking):
    """With the paper's defaults (tol 1e-3, min_gain 1e-5) one CCCP round keeps V; f and the
    dual objective change only by the slack the gain rule leaves."""
    X, y = gauss(1000, 0)
    s = _ramp.OnlineSVMR(2, False, C=1.0, gamma=0.5, shrinking=shrinking,
                         departures={"rewarm": 0.0})          # (see above)
    s.run(X, y, np.arange(1000, dtype=np.intp))
    st = s.get_state()
    r = cccp_ramp(X, y, 1.0, gamma=0.5, tol=1e-3, alpha0=st["alpha"], max_rounds=1)
    assert r.converged and np.array_equal(r.V, st["g"] <= 2.0)
    assert np.max(np.abs(r.g - st["g"])) < 0.05
    d0, d1 = dual_objective(st["alpha"], st["g"]), dual_objective(r.alpha, r.g)
    assert 0 <= d1 - d0 <= 1e-4 * abs(d0)


def test_bad_input_is_a_clear_error():
    """The public refsvm.cccp_ramp checks its input as the estimators do (found by
    fuzzing: NaN, values whose squares overflow and a polynomial kernel that overflows
    were solved silently to alpha = 0); on good input it is the reference's solver."""
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        refsvm.cccp_ramp(bad, y, 1.0)
    with pytest.raises(ValueError, match="overflow"):
        refsvm.cccp_ramp(X * 1e160, y, 1.0)
    with pytest.raises(ValueError, match="polynomial kernel"):
        refsvm.cccp_ramp(X * 1e4, y, 1.0, kernel="poly", degree=40, gamma=10.0, coef0=1.0)
    with pytest.raises(ValueError, match="labels -1 and \\+1"):
        refsvm.cccp_ramp(X, (y > 0).astype(float), 1.0)
    with pytest.raises(ValueError, match="rows"):
        refsvm.cccp_ramp(X, y[:-1], 1.0)
    ok = refsvm.cccp_ramp(X, y, 1.0, gamma=0.5)
    np.testing.assert_array_equal(ok.alpha, cccp_ramp(X, y, 1.0, gamma=0.5).alpha)
