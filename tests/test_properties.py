"""Property-based tests (hypothesis) over every registered estimator's state classes.

Random small streams built to hit the degenerate cases — points on a 3 × 3 grid (exact
duplicates, equal rows, tied distances), runs of one class, the same point with both
labels — with C and the kernel width spread over four decades.  After every step the two
twins agree, their decisions are finite, and a state that can check its own optimality
conditions (``check()``) passes it.  The CI profile is bounded; set
``REFSVM_HYPOTHESIS_PROFILE=long`` for a longer local run.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .conftest import assert_states_equal  # noqa: E402
from .test_common import REGISTRY  # noqa: E402

settings.register_profile("ci", max_examples=25, deadline=None, database=None,
                          derandomize=True, suppress_health_check=list(HealthCheck))
settings.register_profile("long", max_examples=500, deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("REFSVM_HYPOTHESIS_PROFILE", "ci"))

#: C-like and width-like parameters each estimator takes
_C = {"Perceptron": "eta0", "OnlineLinearSVM": "lam"}
_WIDTH = {"KernelPassiveAggressive", "OnlineRampSVM", "IncrementalSVM"}


@st.composite
def streams(draw):
    n = draw(st.integers(min_value=1, max_value=24))
    grid = st.sampled_from([-1.0, 0.0, 1.0])
    X = np.array(draw(st.lists(st.tuples(grid, grid), min_size=n, max_size=n)), dtype=float)
    runs = draw(st.lists(st.tuples(st.sampled_from([-1.0, 1.0]), st.integers(1, 6)),
                         min_size=1, max_size=n))
    y = np.concatenate([np.full(k, lab) for lab, k in runs])[:n]
    y = np.resize(y, n)
    if n >= 2 and draw(st.booleans()):  # the same point with both labels
        X[-1], y[-1] = X[-2], -y[-2]
    return X, y


def _twin_states(name, X, c, width):
    """The reference and compiled states of a registered estimator with its C-like
    parameter ``c`` and kernel width ``width`` (hypothesis rejects a stream whose reduced
    set could not be built: the first distinct examples of the stream)."""
    if "Reduced" in name:
        assume(np.unique(X, axis=0).shape[0] >= 2)
    states = []
    for backend in ("python", "cython"):
        est = REGISTRY[name](backend).set_params(**{_C.get(name, "C"): c})
        if name in _WIDTH:
            est.set_params(gamma=width)
        if "Reduced" in name:
            est.set_params(gamma=width, n_reduced=2)
        est._check_params()
        states.append(est._make_state(X.shape[1], False, X))
    return states


@pytest.mark.parametrize("name", list(REGISTRY))
@given(data=streams(), c=st.sampled_from([0.01, 1.0, 100.0]),
       width=st.sampled_from([0.1, 1.0, 10.0]))
def test_twins_agree_after_every_step_on_degenerate_streams(name, data, c, width):
    X, y = data
    ref, twin = _twin_states(name, X, c, width)
    for t in range(X.shape[0]):
        ref.step(X[t], y[t])
        twin.step(X[t], y[t])
        where = f"{name} C={c} width={width} step {t}"
        assert_states_equal(ref.get_state(), twin.get_state(), rtol=1e-8,
                            atol=1e-9 * max(1.0, c), where=where)
        f = np.asarray(twin.decision_function(X))
        assert np.all(np.isfinite(f)), where
        if hasattr(ref, "check"):
            report = ref.check()
            if isinstance(report, dict):
                for key, value in report.items():
                    assert value <= 1e-6 * max(1.0, c), f"{where}: {key} = {value}"


def test_rkpam_twins_agree_on_a_repeated_point():
    X = np.array([[1.0, -1.0], [-1.0, -1.0], [-1.0, 0.0], [-1.0, 1.0], [-1.0, 1.0]])
    y = -np.ones(5)
    states = []
    for backend in ("python", "cython"):
        est = REGISTRY["ProximalReducedKernelPA"](backend).set_params(C=1.0, gamma=0.1,
                                                                       n_reduced=2)
        states.append(est._make_state(2, False, X))
    for t in range(5):
        for state in states:
            state.step(X[t], y[t])
    assert states[0].get_state()["n_updates"] == states[1].get_state()["n_updates"]


#: check() keys and their tolerance at any C (c: C, n: examples, mass: Σ|α_j| k_max, the
#: magnitude of the sums g_i = Σ_j α_j y_j K_ij + y_i b - 1 is made of): g drift, KKT
#: residual and balance are in margin units, 1e-6 above the round-off floor of those sums
#: (32 eps mass: at C = 1e12 with α of order C, float64 holds α only to an ulp of C, 1.2e-4,
#: and a path of exact steps ends a few ulps off — IncrementalSVM 10 eps mass, POKER under
#: 0.1 eps mass — while the defects this test found were 1e3 eps mass and more); Σ y α relative to
#: C · n; the inverse residual is dimensionless
_EPS = np.finfo(np.float64).eps
_CHECK_TOL = {"g_drift": lambda c, n, mass: 1e-6 + 32 * _EPS * mass,
              # POKER's KKT residual and balance, read from its exactly recomputed g
              "kkt": lambda c, n, mass: 1e-6 + 32 * _EPS * mass,
              "balance": lambda c, n, mass: 1e-6 + 32 * _EPS * mass,
              "h": lambda c, n, mass: 1e-9 * c * max(n, 1),
              "inverse_residual": lambda c, n, mass: 1e-6}


def _alpha_mass(state, X):
    """Σ|α_j| · max(1, max ||x||^2): the scale of the sums in g (0 without an alpha)."""
    alpha = state.get("alpha")
    if alpha is None:
        return 0.0
    kmax = max(1.0, float(np.max(np.sum(np.asarray(X, dtype=float) ** 2, axis=1))))
    return float(np.sum(np.abs(np.asarray(alpha, dtype=float)))) * kmax


def _assert_close_scaled(ref, twin, where):
    """Twins agree to rtol 1e-8 with an absolute floor relative to each array's magnitude
    (at C = 1e12 the coefficients are of order C)."""
    assert ref.keys() == twin.keys(), where
    for key in ref:
        a, b = np.asarray(ref[key]), np.asarray(twin[key])
        if a.dtype.kind in "iub" and b.dtype.kind in "iub":
            np.testing.assert_array_equal(a, b, err_msg=f"{where}: {key}")
        else:
            scale = float(np.max(np.abs(a))) if a.size else 1.0
            np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-9 * max(1.0, scale),
                                       err_msg=f"{where}: {key}")


#: found by the test below when it was written (2026-11-23); the owner of a family removes
#: its entry when fixed (strict: a fixed family fails here until its entry is removed)
_EXTREME_C_KNOWN = {}


#: streams on which the census of 300 random degenerate streams (2-9 grid points, random
#: labels, C in {1e6, 1e12}) found IncrementalSVM's g off by more than the floor above at
#: C = 1e12 (16 of its steps, worst 28x the floor: ~900 eps mass, 0.81 in margin units)
#: before IDSVM got POKER's end-of-operation polish (``_polish``; the census's worst is now
#: 0.01x the floor, tests/idsvm/test_stress.py); POKER's worst is 0.17x the floor
_IDSVM_FLOOR_MISSES = [
    ([[1, 0], [0, -1], [0, 1], [1, 0], [0, -1], [0, -1], [0, 1]], [-1, -1, 1, -1, 1, 1, -1]),
    ([[-1, 0], [1, -1], [1, 1], [-1, 0], [-1, 0]], [1, -1, -1, 1, -1]),
    ([[0, -1], [1, 1], [1, 0], [0, 1], [0, 1], [1, -1]], [-1, 1, 1, -1, 1, -1]),
]


@pytest.mark.parametrize("case", range(len(_IDSVM_FLOOR_MISSES)))
def test_incremental_svm_round_off_floor_at_c_1e12(case):
    X, y = (np.asarray(a, dtype=float) for a in _IDSVM_FLOOR_MISSES[case])
    for state in _twin_states("IncrementalSVM", X, 1e12, 1.0):
        for t in range(X.shape[0]):
            state.step(X[t], y[t])
            mass = _alpha_mass(state.get_state(), X)
            drift = state.check()["g_drift"]
            assert drift <= _CHECK_TOL["g_drift"](1e12, t + 1, mass), (t, drift, mass)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=_EXTREME_C_KNOWN[n]))
    if n in _EXTREME_C_KNOWN else n for n in REGISTRY])
@settings(max_examples=10)
@given(data=streams(), c=st.sampled_from([1e6, 1e12]), width=st.sampled_from([0.1, 1.0]))
def test_extreme_c_on_degenerate_streams(name, data, c, width):
    """C up to 1e12 (issue 15 items 3, 4, 8): every step ends (a step count proportional to
    C would hang: the alarm turns that into a failure), the twins agree, decisions are
    finite and the optimality checks hold with tolerances that do not grow with C."""
    import signal

    X, y = data
    # OnlineLinearSVM's regularisation is lam = 1 / C
    ref, twin = _twin_states(name, X, 1.0 / c if _C.get(name) == "lam" else c, width)

    def hung(signum, frame):
        raise AssertionError(f"{name} C={c}: a stream of {len(y)} examples did not end in 60 s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        for t in range(X.shape[0]):
            ref.step(X[t], y[t])
            twin.step(X[t], y[t])
            where = f"{name} C={c:g} width={width} step {t}"
            _assert_close_scaled(ref.get_state(), twin.get_state(), where)
            assert np.all(np.isfinite(np.asarray(twin.decision_function(X)))), where
            if hasattr(ref, "check"):
                report = ref.check()
                if isinstance(report, dict):
                    mass = _alpha_mass(ref.get_state(), X)
                    for k, v in report.items():
                        tol = _CHECK_TOL.get(k, lambda c, n, mass: 1e-6)(c, t + 1, mass)
                        assert v <= tol, f"{where}: {k} = {v} > {tol}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
