"""``IncrementalSVM.fit``'s default start (``refsvm/_warm_start.py``): LIBSVM's solution made
exact by POKER's fixed- and adjustable-bias paths -- the same exact SVM as the incremental
pass, also where LIBSVM's solution splits mass between identical rows or its margin set
is singular, and the incremental pass where the start cannot end exactly."""

import numpy as np
import pytest
import scipy.sparse as sp

from refsvm import IncrementalSVM
from refsvm._exact_paths import SelfInitStalled, _StallWatch
from refsvm._warm_start import (PATH_LIMIT, RESIDUAL_LIMIT, _consolidate, _libsvm_solution,
                                _regular_part, libsvm_optimum)
from refsvm.datasets import make_gauss
from refsvm.poker.partition import BIAS, FIXED

from ..conftest import BACKENDS, assert_linear_dual_is_libsvm



def _params(C, kernel="rbf", gamma=0.5, n_features=2, sparse=False):
    return {"C": C, "kernel": kernel, "gamma": gamma, "degree": 3, "coef0": 0.0,
            "cache_size": 200.0, "n_features": n_features, "sparse": sparse}


def _duplicated(seed, n=80, copies=3):
    """Rows on a coarse grid, each drawn row repeated ``copies`` times (same label)."""
    rng = np.random.RandomState(seed)
    base = np.round(rng.randn(n, 2), 1)
    y = np.where(base[:, 0] + 0.8 * rng.randn(n) > 0, 1, -1)
    return np.repeat(base, copies, axis=0), np.repeat(y, copies)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sparse_input", [False, True], ids=["dense", "csr"])
def test_identical_rows_start_from_libsvm_and_stay_exact(backend, sparse_input):
    X, y = _duplicated(0)
    Xin = sp.csr_matrix(X) if sparse_input else X
    fast = IncrementalSVM(C=10.0, gamma=0.5, backend=backend).fit(Xin, y)
    slow = IncrementalSVM(C=10.0, gamma=0.5, fit_method="incremental",
                          backend=backend).fit(Xin, y)
    assert fast.fit_paths_ == ["libsvm"]
    np.testing.assert_allclose(fast.decision_function(Xin), slow.decision_function(Xin),
                               atol=1e-8)
    diag = fast._states[0].check()
    assert diag["kkt"] <= 1e-9 and diag["inverse_residual"] <= 1e-8
    # and it goes on exactly
    fast.partial_fit(Xin[:20], y[:20])
    slow.partial_fit(Xin[:20], y[:20])
    np.testing.assert_allclose(fast.decision_function(Xin), slow.decision_function(Xin),
                               atol=1e-8)


def test_consolidation_keeps_f_and_the_balance():
    """The total alpha of a group of identical rows of one label moves onto as few
    members as possible: some at C, at most one inside (0, C), the others 0; f and
    y'alpha do not change."""
    X, y = _duplicated(1, n=30, copies=4)
    C = 1.0
    rng = np.random.RandomState(2)
    alpha = np.where(rng.rand(y.size) < 0.5, rng.uniform(0.0, C, y.size), 0.0)
    out = _consolidate(X, y.astype(float), alpha, C)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(K @ (out * y), K @ (alpha * y), atol=1e-12)
    assert abs(out @ y - alpha @ y) <= 1e-12
    for g in range(30):
        members = out[4 * g: 4 * g + 4]
        assert np.sum((members > 0) & (members < C)) <= 1
        assert np.all((members >= 0) & (members <= C))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_singular_margin_set_is_made_regular(backend):
    """Linear kernel on two features with five points on each margin line: LIBSVM puts
    mass on more margin vectors than the bordered matrix has rank.  The start keeps a
    regular part of them (the others at a bound) and ends at LIBSVM's dual objective."""
    t = np.linspace(-2.0, 2.0, 5)
    X = np.vstack([np.c_[t, np.ones(5)], np.c_[t, -np.ones(5)],
                   np.c_[t + 0.1, 3.0 * np.ones(5)], np.c_[t - 0.1, -3.0 * np.ones(5)]])
    y = np.r_[np.ones(5), -np.ones(5), np.ones(5), -np.ones(5)]
    C = 0.5
    est = IncrementalSVM(C=C, kernel="linear", backend=backend).fit(X, y)
    assert est.fit_paths_ == ["libsvm"]
    assert_linear_dual_is_libsvm(X, y, C, est.support_, est.dual_coef_[0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("C", [1.0, 10.0])
def test_pure_label_noise_is_the_incremental_svm(backend, C):
    """Pure label noise on two features under a wide RBF kernel: a margin set of dozens
    whose bordered matrix is numerically singular.  Whether the start ends it (after
    making the margin set regular) or gives it up, ``fit`` is the incremental SVM."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-2.0, 2.0, (300, 2))
    y = np.where(rng.rand(300) < 0.33, 1, -1)
    fast = IncrementalSVM(C=C, gamma=0.5, backend=backend).fit(X, y)
    slow = IncrementalSVM(C=C, gamma=0.5, fit_method="incremental",
                          backend=backend).fit(X, y)
    assert fast.fit_paths_ in (["libsvm"], ["incremental"])
    np.testing.assert_allclose(fast.decision_function(X), slow.decision_function(X),
                               atol=1e-8 * C)
    if fast.fit_paths_ == ["libsvm"]:
        # KKT and the kept g at round-off (the end's refinement); the inverse as accurate
        # as the start's ill-conditioned margin set allows
        diag = fast._states[0].check()
        assert diag["kkt"] <= 1e-12 and diag["g_drift"] <= 1e-12
        assert diag["inverse_residual"] <= RESIDUAL_LIMIT


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_class_is_not_started(backend):
    X = np.random.RandomState(0).randn(10, 2)
    assert libsvm_optimum(backend, _params(1.0), X, np.ones(10)) is None


def test_regular_part_makes_up_the_dropped_margin_vectors():
    """LIBSVM's singular margin set (Gauss under gamma = 2): the dependent members go to
    their nearer bound and the kept part's alpha and b make up their move.  Every alpha
    stays in [0, C], the kept part is strictly inside with a regular bordered matrix (R
    its inverse), and g moves far less than with the dropped members moved alone."""
    X, y = make_gauss(2000, random_state=13)
    y = y.astype(float)
    C = 10.0
    alpha, b = _libsvm_solution(_params(C, gamma=2.0), X, y)
    alpha[alpha < 1e-10 * C] = 0.0
    alpha[alpha > C - 1e-10 * C] = C
    S = np.flatnonzero((alpha > 0.0) & (alpha < C))
    K = np.exp(-2.0 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    g_before = y * (K @ (alpha * y) - b) - 1.0
    new = alpha.copy()
    kept, KK, R, residual, b_new = _regular_part(np.ascontiguousarray(K[:, S]), S, y, new,
                                                 b, C)
    assert R is not None and residual <= RESIDUAL_LIMIT and 0 < kept.size < S.size
    assert np.all((new >= 0.0) & (new <= C))
    assert np.all((new[kept] > 0.0) & (new[kept] < C))
    out = S[~np.isin(S, kept)]
    assert np.all((new[out] == 0.0) | (new[out] == C))
    M = np.zeros((kept.size + 1, kept.size + 1))
    M[0, 1:] = M[1:, 0] = y[kept]
    M[1:, 1:] = KK[kept, : kept.size] * np.outer(y[kept], y[kept])
    np.testing.assert_allclose(M @ R, np.eye(kept.size + 1), atol=RESIDUAL_LIMIT)
    # the dropped members alone at their bound, nothing made up
    alone = alpha.copy()
    alone[out] = new[out]
    g_alone = y * (K @ (alone * y) - b) - 1.0
    g_after = y * (K @ (new * y) - b_new) - 1.0
    for part in (kept, slice(None)):
        shift = np.median(np.abs(g_after[part] - g_before[part]))
        assert shift < 0.1 * np.median(np.abs(g_alone[part] - g_before[part]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_narrow_kernel_on_gauss_starts_from_libsvm(backend):
    """Haykin's Gauss under gamma = 2: LIBSVM's margin set of hundreds is singular.  The
    start ends from it (the dropped members made up, no ties at u = 0) on the optimum;
    it used to cycle in zero-length exchanges and fall back to the incremental pass
    after 1,209 breakpoints (3,000 rows; the reference twin on 1,500 rows, in time)."""
    X, y = make_gauss(3000 if backend == "cython" else 1500, random_state=13)
    est = IncrementalSVM(C=1.0, gamma=2.0, backend=backend).fit(X, y)
    assert est.fit_paths_ == ["libsvm"]
    _assert_optimal(est, X, y, 1.0, 2.0)


def _assert_optimal(est, X, y, C, gamma):
    """The KKT conditions of the binary RBF SVM ``est``, from the kernel matrix."""
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    alpha = np.zeros(y.size)
    alpha[est.support_] = np.abs(est.dual_coef_[0])
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    g = yy * (K @ (alpha * yy) + est.intercept_[0]) - 1.0
    tol = 1e-9 * (1.0 + C)
    assert np.all(g[alpha == 0.0] >= -tol) and np.all(g[alpha == C] <= tol)
    assert np.all(np.abs(g[(alpha > 0.0) & (alpha < C)]) <= tol)
    assert abs(float(alpha @ yy)) <= 1e-9 * C


@pytest.mark.parametrize("backend", ["cython", pytest.param("python", marks=pytest.mark.slow)])
def test_the_start_forms_r_afresh_rarely_on_ill_conditioned_margin_sets(backend, monkeypatch):
    """Gauss under gamma = 8: margin sets of hundreds of nearly dependent members, where
    joins with small pivots and shrinks of ill-conditioned inverses are the rule.  With
    POKER's own refresh settings the start's path formed R afresh at half of its
    breakpoints (113 of 211 on 2,000 rows, the LU inverse most of the start's time; 8 of
    120 on 1,500 rows, the reference's size here); with ``START_DEPARTURES`` at under
    half as many (23, 2), and the fit still ends on the optimum."""
    import refsvm._warm_start as ws

    X, y = make_gauss(2000 if backend == "cython" else 1500, random_state=3)
    yy = np.where(y > 0, 1.0, -1.0)
    counts = {}
    for name, departures in (("poker", None), ("start", ws.START_DEPARTURES)):
        seen = []

        class Counting(_StallWatch):
            def __call__(self, state):
                seen.append((int(state.n_refresh), state.phase))
                super().__call__(state)

        monkeypatch.setattr(ws, "_StallWatch", Counting)
        assert libsvm_optimum(backend, _params(1.0, gamma=8.0), X, yy, departures) is not None
        counts[name] = (seen[-1][0], sum(p in (FIXED, BIAS) for _, p in seen))
    (fresh_poker, steps_poker), (fresh_start, steps_start) = counts["poker"], counts["start"]
    assert abs(steps_start - steps_poker) <= 0.05 * steps_poker      # the same path
    assert fresh_poker >= 5 and fresh_start <= 0.5 * fresh_poker
    est = IncrementalSVM(C=1.0, gamma=8.0, backend=backend).fit(X, y)
    assert est.fit_paths_ == ["libsvm"]
    _assert_optimal(est, X, y, 1.0, 8.0)


@pytest.mark.parametrize("data", ["gauss", "moons"])
def test_a_drifted_inverse_is_not_handed_on(data):
    """Gauss under gamma = 8, 4,000 rows, C = 10: with R formed afresh less often on the
    way, the start's path ended with an R whose residual was 0.15 and kept g 4e-9 off
    their values afresh, and IncrementalSVM took both over (its acceptance test reads
    the kept g).  On moons (gamma = 2, C = 10) POKER's own refresh settings ended with
    kept g 1e-9 off.  The start's end now forms a drifted R afresh and recomputes g,
    so the state holds the optimum and an inverse as accurate as a fresh one (1e-6 on
    Gauss's margin set of 882 members)."""
    from sklearn.datasets import make_moons

    if data == "gauss":
        (X, y), gamma = make_gauss(4000, random_state=3), 8.0
    else:
        (X, y), gamma = make_moons(3000, noise=0.3, random_state=0), 2.0
    est = IncrementalSVM(C=10.0, gamma=gamma).fit(X, y)
    assert est.fit_paths_ == ["libsvm"]
    _assert_optimal(est, X, y, 10.0, gamma)
    st = est._states[0].get_state()
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    yy, alpha, S = st["y"], st["alpha"], st["S_order"]      # R in joining order
    # the kept g against g afresh (the state's ids are the rows' order)
    g = yy * (K @ (alpha * yy) + st["b"]) - 1.0
    assert np.max(np.abs(st["g"] - g)) <= 1e-10
    M = np.zeros((S.size + 1, S.size + 1))
    M[0, 1:] = M[1:, 0] = yy[S]
    M[1:, 1:] = np.outer(yy[S], yy[S]) * K[np.ix_(S, S)]
    assert np.max(np.abs(M @ st["Rinv"] - np.eye(S.size + 1))) <= 1e-4


def test_selfinit_hands_on_no_end_off_the_optimum():
    """SelfInit's end on Gauss under gamma = 4 (2,000 rows, C = 10) failed POKER's own
    exactness check (a margin vector 7.3e-8 off g = 0, y'alpha 1.2e-7, against 1.1e-8
    allowed) and became IncrementalSVM's state all the same.  It is now refined from R
    afresh and handed on only when it passes (else the problem is learned example by
    example)."""
    X, y = make_gauss(2000, random_state=3)
    est = IncrementalSVM(C=10.0, gamma=4.0, fit_method="selfinit").fit(X, y)
    _assert_optimal(est, X, y, 10.0, 4.0)


class _Path:
    def __init__(self, phase):
        self.phase, self.u, self.tau, self.S = phase, 0.0, 0.0, []


def test_the_watch_limits_the_breakpoints_of_a_progressing_path():
    """A path that keeps progressing is still given up past ``limit`` watched breakpoints;
    the breakpoints of other paths (the end polish) are not counted."""
    watch = _StallWatch(limit=5)
    state = _Path(FIXED)
    for k in range(5):
        state.u = 0.1 * (k + 1)
        watch(state)
    other = _Path(phase=-1)
    for _ in range(10):
        watch(other)
    state.phase, state.tau = BIAS, 1.0
    with pytest.raises(SelfInitStalled, match="limit of 5"):
        watch(state)
    # no limit: only a stall ends it
    watch = _StallWatch()
    for k in range(1000):
        state.tau = 1.0 / (k + 2)
        watch(state)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pure_label_noise_gives_up_within_the_limit(backend):
    """Pure label noise, 1,000 examples: the start's paths would cross thousands of
    breakpoints (degenerate exchanges on a numerically singular margin set); the start
    is given up within ``PATH_LIMIT`` of them."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-2.0, 2.0, (1000, 2))
    y = np.where(rng.rand(1000) < 0.33, 1.0, -1.0)
    seen = []

    class Counting(_StallWatch):
        def __call__(self, state):
            seen.append(state.phase)
            super().__call__(state)

    import refsvm._warm_start as ws
    original = ws._StallWatch
    ws._StallWatch = Counting
    try:
        assert libsvm_optimum(backend, _params(10.0), X, y) is None
    finally:
        ws._StallWatch = original
    watched = sum(p in (FIXED, BIAS) for p in seen)
    assert watched <= int(PATH_LIMIT * 1000) + 100 + 1
