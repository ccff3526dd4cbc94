"""The linear family against external oracles and the properties the papers state."""

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import SGDClassifier
from sklearn.svm import LinearSVC

from refsvm import OnlineLinearSVM, PassiveAggressive, Perceptron, ProximalPassiveAggressive
from refsvm.linear import _online_linear_svm, _passive_aggressive, online_linear_svm, passive_aggressive
from refsvm.core.kernels import get_row

from ..conftest import sparse_stream, to_csr


def sklearn_pa(rate, C):
    """scikit-learn's passive-aggressive learner with aggressiveness C, one ordered pass:
    ``SGDClassifier(learning_rate="pa1"|"pa2", eta0=C)`` from 1.8 on; before 1.8 that
    SGDClassifier ignores eta0 (C stays 1), and ``PassiveAggressiveClassifier(C=C)`` is it."""
    kw = dict(fit_intercept=False, shuffle=False, max_iter=1, tol=None)
    if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) >= (1, 8):
        return SGDClassifier(loss="hinge", penalty=None, learning_rate=rate, eta0=C, **kw)
    from sklearn.linear_model import PassiveAggressiveClassifier
    return PassiveAggressiveClassifier(
        C=C, loss="hinge" if rate == "pa1" else "squared_hinge", **kw)


@pytest.mark.parametrize("variant,rate", [("PA-I", "pa1"), ("PA-II", "pa2")])
@pytest.mark.parametrize("C", [0.01, 0.5, 10.0])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_pa_equals_sklearn_sgd_passive_aggressive(variant, rate, C, sparse, backend):
    X, y = sparse_stream(n=500, d=20, seed=11, noise=1.0)
    M = to_csr(X) if sparse else X
    ours = PassiveAggressive(variant=variant, C=C, fit_intercept=False, backend=backend).fit(M, y)
    sk = sklearn_pa(rate, C).fit(M, y)
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-10, atol=1e-12)
    assert ours.intercept_[0] == 0.0


def test_perceptron_stops_on_an_epoch_without_mistakes(backend):
    rng = np.random.RandomState(2)
    X = rng.randn(300, 5) + 3.0  # off-centre: the bias matters
    w = rng.randn(5)
    score = (X - 3.0) @ w
    keep = np.abs(score) > 0.5  # a margin: separable, so the Perceptron terminates
    X, y = X[keep], np.sign(score[keep])
    clf = Perceptron(max_epochs=500, backend=backend).fit(X, y)
    assert clf.n_epochs_ < 500
    margins = y * (X @ clf.coef_[0] + clf.intercept_[0])
    assert np.all(margins > 0)
    assert clf.score(X, y) == 1.0


def _pegasos_objective(w, b, X, y, lam):
    m = y * (X @ w + b)
    return 0.5 * lam * (w @ w + b * b) + np.mean(np.maximum(0.0, 1.0 - m))


@pytest.mark.parametrize("module", [online_linear_svm, _online_linear_svm],
                         ids=["python", "cython"])
@pytest.mark.parametrize("project", [False, True])
def test_pegasos_objective_decreases_on_average(module, project):
    X, y = sparse_stream(n=2000, d=10, seed=8, noise=0.5, density=1.0)
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # Bagnell: unit-norm inputs
    lam = 0.01
    state = module.PegasosState(X.shape[1], False, lam=lam, project=project)
    objectives = []
    for i in range(X.shape[0]):
        state.step(X[i], y[i])
        if project:  # lines 10–12 keep w inside the ball of radius 1/√λ, at every step
            assert state.w @ state.w <= (1.0 / lam) * (1 + 1e-12)
        if i % 20 == 19:
            objectives.append(_pegasos_objective(state.w, state.b, X, y, lam))
    objectives = np.array(objectives)
    half = len(objectives) // 2
    assert objectives[half:].mean() < objectives[:half].mean()
    windows = [w.mean() for w in np.array_split(objectives, 5)]
    assert windows[-1] < windows[0] and windows[1] < windows[0], windows
    # and it approaches the batch optimum (LinearSVC solves the same problem with C = 1/(λn))
    svc = LinearSVC(loss="hinge", C=1.0 / (lam * X.shape[0]), fit_intercept=False,
                    tol=1e-8, max_iter=100000, dual=True).fit(X, y)
    best = _pegasos_objective(svc.coef_[0], 0.0, X, y, lam)
    assert objectives[-1] <= best * 1.10
    assert objectives[-1] >= best * (1 - 1e-6)


def test_projection_is_what_keeps_the_norm_bounded():
    """Without projection the first step jumps to ||w|| = 1/λ·||x|| > 1/√λ; with it, never."""
    X, y = sparse_stream(n=50, d=6, seed=9, density=1.0)
    lam = 0.01
    free = _online_linear_svm.PegasosState(6, False, lam=lam, project=False)
    free.step(X[0], y[0])
    assert free.w @ free.w > 1.0 / lam
    held = _online_linear_svm.PegasosState(6, False, lam=lam, project=True)
    held.step(X[0], y[0])
    assert held.w @ held.w == pytest.approx(1.0 / lam, rel=1e-12)


def test_averaged_iterate_is_the_mean_of_all_iterates():
    X, y = sparse_stream(n=200, d=6, seed=10, density=1.0)
    state = online_linear_svm.PegasosState(6, False, lam=0.1, average=True, batch_size=3)
    iterates = []
    for i in range(X.shape[0]):
        before = state.n_steps
        state.step(X[i], y[i])
        if state.n_steps > before:
            iterates.append(state.w.copy())
    np.testing.assert_allclose(state.w_avg, np.mean(iterates, axis=0), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("module", [passive_aggressive, _passive_aggressive],
                         ids=["python", "cython"])
def test_quasi_lda_proximal_direction(module):
    X, y = sparse_stream(n=120, d=7, seed=12, density=0.7)
    X[:, 6] = 2.5  # constant feature: zero pooled variance, so (w_p)_6 = 0
    state = module.PAmState(7, False, variant=1, gamma=0.1, fit_intercept=True)
    state.run(X, y, np.arange(X.shape[0]))
    wp, bp = state.proximal()
    P, N = X[y > 0], X[y < 0]
    expected = np.zeros(7)
    denom = P.var(axis=0, ddof=1) + N.var(axis=0, ddof=1)
    expected[:6] = (P.mean(0) - N.mean(0))[:6] / denom[:6]
    np.testing.assert_allclose(wp, expected, rtol=1e-9, atol=1e-9)
    assert bp == pytest.approx(-0.5 * expected @ (P.mean(0) + N.mean(0)), rel=1e-9)


@pytest.mark.parametrize("module", [passive_aggressive, _passive_aggressive],
                         ids=["python", "cython"])
@pytest.mark.parametrize("value", [0.1, 0.7, -0.8366600265340756, 1 / 3])
def test_a_constant_feature_gets_no_proximal_weight_at_any_step(module, value):
    """A feature constant so far (a standardised binary feature early in a stream) has
    variance 0, but the slides' formula computes Σx²/(n−1) − n/(n−1)m² as a residue of
    up to 2e-16 for these values: (m₊ − m₋)/s then was 1e15, and PAm's model (adding γw_p
    on every update) reached coefficients of 4e13 on dna (test accuracy 0.31, PA 0.92).
    The variance within its rounding error bound is 0, at every step."""
    rng = np.random.RandomState(5)
    X = rng.randn(300, 4)
    X[:, 3] = value
    y = np.where(X[:, 0] + 0.3 * rng.randn(300) > 0, 1.0, -1.0)
    state = module.PAmState(4, False, variant=1, gamma=0.1, fit_intercept=True)
    for i in range(X.shape[0]):
        state.step(X[i], y[i])
        wp, _ = state.proximal()
        assert wp[3] == 0.0, (i, wp)
    assert np.all(np.abs(state.w) < 50), state.w


@pytest.mark.parametrize("variant", ["PAm", "PAm-1", "PAm-2"])
def test_pam_with_gamma_zero_is_pa(variant, backend):
    X, y = sparse_stream(n=300, d=9, seed=13)
    pam = ProximalPassiveAggressive(variant=variant, gamma=0.0, C=0.7, backend=backend).fit(X, y)
    pa = PassiveAggressive(variant=variant.replace("PAm", "PA").replace("-1", "-I")
                           .replace("-2", "-II"), C=0.7, backend=backend).fit(X, y)
    np.testing.assert_allclose(pam.coef_, pa.coef_, rtol=1e-12, atol=1e-14)


def test_pam_alpha_is_clipped_at_zero():
    """A huge γ pushes the raw α_t negative; the update must still not move against y x."""
    X, y = sparse_stream(n=200, d=5, seed=14)
    state = passive_aggressive.PAmState(5, False, variant=0, gamma=50.0)
    for i in range(X.shape[0]):
        w_before = state.w.copy()
        updated = state.n_updates
        state.step(X[i], y[i])
        if state.n_updates > updated:
            wp, _ = state.proximal()
            alpha_y_x = state.w - w_before - state.gamma * wp
            # α_t y_t x_t with α_t >= 0: the residual points along y x, never against it
            assert alpha_y_x @ (y[i] * X[i]) >= -1e-9


def test_multiclass_one_vs_rest(backend):
    rng = np.random.RandomState(0)
    centers = np.array([[0, 4], [4, 0], [-4, -4]])
    labels = rng.randint(0, 3, 600)
    X = centers[labels] + rng.randn(600, 2)
    y = np.array(["a", "b", "c"])[labels]
    for clf in [Perceptron(backend=backend), PassiveAggressive(fit_intercept=True, backend=backend),
                OnlineLinearSVM(lam=1e-3, fit_intercept=True, backend=backend)]:
        clf.fit(X, y)
        assert clf.decision_function(X).shape == (600, 3)
        assert clf.coef_.shape == (3, 2)
        assert clf.score(X, y) > 0.9


def test_fit_one_pass_equals_streamed_partial_fit(backend):
    X, y = sparse_stream(n=200, d=8, seed=15)
    for make in [lambda: PassiveAggressive(variant="PA-II", backend=backend),
                 lambda: ProximalPassiveAggressive(backend=backend, fit_intercept=True),
                 lambda: OnlineLinearSVM(lam=0.01, backend=backend)]:
        whole = make().fit(X, y)
        streamed = make()
        for start in range(0, 200, 10):
            streamed.partial_fit(X[start:start + 10], y[start:start + 10], classes=[-1, 1])
        np.testing.assert_allclose(streamed.coef_, whole.coef_, rtol=1e-12, atol=1e-14)
