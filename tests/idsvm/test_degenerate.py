"""IncrementalSVM in degenerate situations, and numerical drift on a long stream.

Duplicates (same and opposite labels), lattice data with many ties and linearly
dependent margin vectors (singular Q_SS), streams that start with one class only,
examples landing exactly on the margin, the degenerate-join exchange, fully degenerate
problems (w ~ 0, a whole class on the margin: zero steps, singular pivots), and the
drift of g, h and the inverse over several thousand increments.
"""

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

from refsvm import IncrementalSVM
from refsvm.idsvm import incremental_svm as idsvm
from refsvm.datasets import make_checkerboard, make_two_gaussians

from ..conftest import BACKENDS
from .test_oracle import assert_kkt, assert_matches_svc, gram, make_state, svc


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel,C,kw", [("rbf", 1.0, {"gamma": 0.5}), ("linear", 2.0, {})])
def test_duplicates(backend, kernel, C, kw):
    X0, y0 = make_two_gaussians(50, random_state=6)
    y0 = y0.astype(float)
    # every example twice with its label, and 10 of them a third time with the other label
    X = np.vstack([X0, X0, X0[:10]])
    y = np.concatenate([y0, y0, -y0[:10]])
    order = np.random.RandomState(0).permutation(len(y))
    X, y = X[order], y[order]
    st = make_state(backend, 2, C, kernel, **kw)
    for i in range(len(y)):
        st.step(X[i], y[i])
        assert_kkt(st, X[: i + 1], y[: i + 1], kernel, kw, where=f"step {i}")
    m = assert_matches_svc(st, X, y, kernel, kw)
    np.testing.assert_allclose(st.decision_function(X), m.decision_function(X), atol=1e-4)
    # no two identical rows are ever margin vectors together (Q_SS stays regular)
    S = st.get_state()["S"]
    assert len({tuple(X[i]) for i in S}) == len(S)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_lattice_ties_and_dependent_margin_vectors(backend, kernel):
    """Integer lattice, many exact duplicates and ties; with the linear kernel Q_SS has
    rank <= 2, so at most three margin vectors (the bordered matrix stays regular)."""
    rng = np.random.RandomState(2)
    X = rng.randint(-2, 3, size=(90, 2)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.randn(90) > 0, 1.0, -1.0)
    kw = {"gamma": 0.5} if kernel == "rbf" else {}
    st = make_state(backend, 2, 1.0, kernel, **kw)
    for i in range(90):
        st.step(X[i], y[i])
        assert_kkt(st, X[: i + 1], y[: i + 1], kernel, kw, where=f"step {i}")
    if kernel == "linear":
        assert len(st.get_state()["S"]) <= 3
    m = svc(X, y, 1.0, kernel, **kw)
    np.testing.assert_allclose(st.decision_function(X), m.decision_function(X), atol=1e-4)
    assert st.check()["inverse_residual"] < 1e-10


@pytest.mark.parametrize("backend", BACKENDS)
def test_stream_starting_with_one_class(backend):
    X, y = make_two_gaussians(80, random_state=3)
    y = y.astype(float)
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    order = np.concatenate([pos[:15], neg[:3], pos[15:], neg[3:]])
    X, y = X[order], y[order]
    st = make_state(backend, 2, 1.0, "rbf", gamma=0.5)
    for i in range(len(y)):
        st.step(X[i], y[i])
        s = st.get_state()
        assert np.isfinite(s["b"])
        assert_kkt(st, X[: i + 1], y[: i + 1], "rbf", {"gamma": 0.5}, where=f"step {i}")
        if i < 15:
            # one class: nothing to separate; all alpha = 0 and every example exactly on
            # its margin (b = 1, the finite end of the KKT interval)
            assert np.all(s["alpha"] == 0) and len(s["S"]) == 0
            assert s["b"] == pytest.approx(1.0)
            assert np.all(st.decision_function(X[:20]) > 0)
        else:
            assert_matches_svc(st, X[: i + 1], y[: i + 1], "rbf", {"gamma": 0.5},
                               where=f"step {i}")
    # unlearning back to one class
    st.unlearn(np.flatnonzero(y < 0))
    s = st.get_state()
    # (up to round-off: the last positives may stay margin vectors with alpha ~ 1e-14)
    assert np.all(s["alpha"] <= 1e-10) and s["b"] == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_examples_exactly_on_the_margin(backend):
    # w = (1, 0), b = 0: margins x0 = +-1
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [2.0, 1.0], [-3.0, 0.5]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    st = make_state(backend, 2, 10.0, "linear")
    st.run(X, y, np.arange(4))
    before = st.get_state()
    np.testing.assert_allclose(before["alpha"][:2], [0.5, 0.5])
    assert before["b"] == pytest.approx(0.0, abs=1e-15)
    on_margin = np.array([[1.0, 5.0], [-1.0, -3.0], [1.0, -2.5]])
    ym = np.array([1.0, -1.0, 1.0])
    st.run(on_margin, ym, np.arange(3))
    after = st.get_state()
    assert np.all(after["status"][4:] == idsvm.REST)
    np.testing.assert_array_equal(after["alpha"][:4], before["alpha"])
    assert after["b"] == before["b"]
    Xa, ya = np.vstack([X, on_margin]), np.concatenate([y, ym])
    assert_kkt(st, Xa, ya, "linear")
    # a point just inside the margin moves the model, and exactly
    st.step(np.array([0.9, 0.0]), 1.0)
    Xb, yb = np.vstack([Xa, [[0.9, 0.0]]]), np.concatenate([ya, [1.0]])
    assert_kkt(st, Xb, yb, "linear")
    assert_matches_svc(st, Xb, yb, "linear")


def test_degenerate_join_goes_through_an_exchange():
    """A duplicate of a margin vector asked to join S has pivot kappa = 0: the
    reference exchanges it with its twin along a null direction of Q (the model, i.e.
    f, is unchanged), instead of making the bordered matrix singular."""
    X, y = make_two_gaussians(60, random_state=12)
    y = y.astype(float)
    st = idsvm.IncrementalSVMState(2, False, C=1.0, kernel="rbf", gamma=0.5)
    st.run(X, y, np.arange(60))
    s0 = st.get_state()
    m = s0["S"][0]
    st.step(X[m], y[m])                      # duplicate: lands on the margin -> R
    d = st.n - 1
    assert st.status[d] == idsvm.REST
    f_before = st.decision_function(X)
    st._join(d)                              # the degenerate join
    s1 = st.get_state()
    assert s1["n_exchanges"] == 1
    assert d in s1["S"] and m not in s1["S"]
    assert s1["alpha"][d] == pytest.approx(s0["alpha"][m], abs=1e-12)
    assert s1["alpha"][m] == 0.0
    np.testing.assert_allclose(st.decision_function(X), f_before, atol=1e-10)
    assert_kkt(st, np.vstack([X, X[m:m + 1]]), np.append(y, y[m]), "rbf", {"gamma": 0.5})
    assert st.check()["inverse_residual"] < 1e-10


def test_drift_on_a_long_stream():
    """4000 increments (compiled twin), the drift of the inverse probed every 100
    changes of S (and R recomputed when the probe finds it above DRIFT_REFRESH): the
    kept g, h and the inverse stay within round-off of a recomputation from scratch, and
    the end model equals SVC."""
    n = 4000
    X, y = make_two_gaussians(n, random_state=17)
    y = y.astype(float)
    st = make_state("cython", 2, 1.0, "rbf", gamma=0.5, refresh_every=100)
    st.run(X, y, np.arange(n))
    s = st.get_state()
    assert st.n_s_changes > 10 * 100            # the probe ran more than ten times
    assert st.refresh_inverse() < 1e-9          # the kept R against a fresh inverse
    sv = np.concatenate([s["S"], s["E"]])
    f = np.concatenate([rbf_kernel(X[i:i + 500], X[sv], gamma=0.5) @ (s["alpha"][sv] * y[sv])
                        for i in range(0, n, 500)]) + s["b"]
    g_drift = np.max(np.abs(y * f - 1.0 - s["g"]))
    h = abs(np.sum(y * s["alpha"]))
    print(f"g drift {g_drift:.2e}, h {h:.2e}, max inverse drift at refresh "
          f"{s['max_inverse_drift']:.2e}")
    assert g_drift < 1e-7
    assert h < 1e-7
    assert s["max_inverse_drift"] < 1e-3
    m = svc(X, y, 1.0, "rbf", gamma=0.5)
    assert abs(s["b"] - m.intercept_[0]) < 1e-5
    # KKT from the recomputed g
    a = s["alpha"]
    gg = y * f - 1.0
    viol = np.where(a <= 0, np.maximum(-gg, 0), np.where(a >= 1.0, np.maximum(gg, 0),
                                                         np.abs(gg)))
    assert viol.max() < 1e-7


def _data(kind, n, seed):
    from refsvm.datasets import make_checkerboard

    if kind == "gauss":
        X, y = make_two_gaussians(n, random_state=seed)
    elif kind == "checkerboard":
        X, y = make_checkerboard(n, random_state=seed)
    else:
        rng = np.random.RandomState(seed)
        X = rng.randint(-2, 3, size=(n, 3)).astype(float)
        y = np.where(X.sum(1) + rng.randn(n) > 0, 1, -1)
    return np.ascontiguousarray(X, dtype=float), y.astype(float)


@pytest.mark.parametrize("data", ["gauss", "checkerboard", "lattice"])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_grid_of_configurations_stays_optimal(kernel, C, data):
    """Learn, unlearn a third in two calls, exact LOO: KKT (Eq. 2) after each."""
    kw = {"rbf": {"gamma": 0.5}, "poly": {"gamma": 0.5, "degree": 2, "coef0": 1.0},
          "linear": {}}[kernel]
    X, y = _data(data, 120, 5)
    st = make_state("cython", X.shape[1], C, kernel, **kw)
    st.run(X, y, np.arange(120))
    assert_kkt(st, X, y, kernel, kw, tol=1e-7, where="learned")
    ids = np.random.RandomState(0).choice(120, 40, replace=False)
    st.unlearn(ids[:20])
    st.unlearn(ids[20:])
    keep = np.setdiff1d(np.arange(120), ids)

    class View:
        @staticmethod
        def get_state():
            s = st.get_state()
            return {**s, **{k: s[k][keep] for k in ("alpha", "g", "status")}}

    View.C = st.C
    assert_kkt(View, X[keep], y[keep], kernel, kw, tol=1e-7, where="unlearned")
    st.loo_decisions()
    assert_kkt(View, X[keep], y[keep], kernel, kw, tol=1e-7, where="after loo")


# ------------------------------------------------------------------ fully degenerate problems
# Checkerboard data without label noise under a linear or a homogeneous cubic kernel: the
# feature space has 2 or 4 dimensions (at most 3 or 5 independent margin vectors), the
# optimal w is close to 0 and a whole class can sit on the margin at once.  Increments
# then meet many exact ties (zero steps) and numerically singular pivots.

CUBIC = {"gamma": 1.0, "degree": 3, "coef0": 0.0}


def kkt_violation(st, X, y, kernel, kw):
    """The largest violation of Eq. 2, and drift of the kept g, over the learned examples,
    each relative to the magnitude of the terms g_i is summed from
    (sum_j alpha_j |K_ij| + |b| + 1), and |h| relative to max(sum alpha, C)."""
    s = st.get_state()
    act = np.flatnonzero(s["status"] >= 0)
    a, C, ya = s["alpha"][act], st.C, y[act]
    st_act = s["status"][act]
    assert np.all(a >= 0) and np.all(a <= C)
    assert np.all(a[st_act == idsvm.REST] == 0.0) and np.all(a[st_act == idsvm.ERROR] == C)
    K = gram(X[act], X[act], kernel, **kw)
    g = ya * (K @ (a * ya) + s["b"]) - 1.0
    scale = np.abs(K) @ a + abs(s["b"]) + 1.0
    viol = np.where(a <= 0, np.maximum(-g, 0), np.where(a >= C, np.maximum(g, 0), np.abs(g)))
    return max(float(np.max(viol / scale)), float(np.max(np.abs(g - s["g"][act]) / scale)),
               abs(float(a @ ya)) / max(float(a.sum()), C))


def _dual(model, X):
    """sum(alpha) - 1/2 alpha^T Q alpha from SVC-style support_ and dual_coef_ (= y alpha)."""
    coef = np.ravel(model.dual_coef_)
    K = polynomial_kernel(X[model.support_], **CUBIC)
    return float(np.abs(coef).sum() - 0.5 * coef @ K @ coef)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [21, 76])
def test_fully_degenerate_checkerboard_does_not_cycle(backend, seed):
    """The reproducer of issue 4: the compiled twin used to cycle through zero steps on
    these streams and give up ("too many adiabatic steps"); the least-index rule for tied
    events ends such cycles.  Both twins reach SVC's dual objective, KKT holds."""
    X, y = make_checkerboard(120, noise=0.0, random_state=seed)
    model = IncrementalSVM(C=0.1, kernel="poly", gamma=1.0, backend=backend).fit(X, y)
    # (at tol=1e-6 LIBSVM itself needs 4e7 iterations on seed 76; 1e-5 gives the
    # objective to ~1e-12 relative)
    m = SVC(C=0.1, kernel="poly", tol=1e-5, **CUBIC).fit(X, y)
    assert _dual(model, X) == pytest.approx(_dual(m, X), rel=1e-5)
    assert kkt_violation(model._states[0], X, y.astype(float), "poly", CUBIC) < 1e-8


@pytest.mark.parametrize("backend", BACKENDS)
def test_fully_degenerate_streams_stay_optimal(backend):
    """Stress over fully degenerate settings (linear and cubic kernels, four C, four
    seeds): learn 120 examples, then unlearn 5; KKT (Eq. 2) within 1e-8 relative after
    each.  Before the least-index rule and the re-solved doubtful pivots (issue 4),
    runs here cycled or ended with KKT violations up to 1e-2."""
    for kernel, kw in (("linear", {}), ("poly", CUBIC)):
        for C in (0.01, 0.1, 1.0, 10.0):
            for seed in (5, 21, 22, 28):
                where = f"{kernel}, C={C}, seed {seed}"
                X, y = make_checkerboard(120, noise=0.0, random_state=seed)
                y = y.astype(float)
                st = make_state(backend, 2, C, kernel, **kw)
                st.run(X, y, np.arange(120))
                assert kkt_violation(st, X, y, kernel, kw) < 1e-8, f"{where}: learned"
                st.unlearn(np.random.RandomState(seed).choice(120, 5, replace=False))
                assert kkt_violation(st, X, y, kernel, kw) < 1e-8, f"{where}: unlearned"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("degree", [2, 3])
def test_lattice_with_the_origin_under_a_homogeneous_polynomial_kernel(backend, degree):
    """Integer lattice in 3-D with three copies of x = 0 (k(0, x) = 0 for every x: an
    example that moves only the bias) and many other duplicates, under (x.z)^degree:
    rates and pivots that are exactly zero, duplicates that could replace each other
    forever by exchanges.  Learn, unlearn, exact LOO; KKT after each."""
    rng = np.random.RandomState(5)
    X = rng.randint(-2, 3, size=(150, 3)).astype(float)
    y = np.where(X.sum(1) + rng.randn(150) > 0, 1.0, -1.0)
    assert (X[[81, 125, 138]] == 0).all()
    kw = {"gamma": 1.0, "degree": degree, "coef0": 0.0}
    keep = np.setdiff1d(np.arange(150), np.arange(0, 150, 7))
    for C in (0.01, 1.0, 100.0):
        st = make_state(backend, 3, C, "poly", **kw)
        st.run(X, y, np.arange(150))
        assert kkt_violation(st, X, y, "poly", kw) < 1e-8, f"C={C}: learned"
        st.unlearn(np.arange(0, 150, 7))
        assert kkt_violation(st, X, y, "poly", kw) < 1e-8, f"C={C}: unlearned"
        f_loo = st.loo_decisions()
        assert f_loo.shape == keep.shape and np.all(np.isfinite(f_loo))
        assert kkt_violation(st, X, y, "poly", kw) < 1e-8, f"C={C}: after LOO"
