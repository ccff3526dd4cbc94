"""IncrementalSVM as a scikit-learn estimator: API checks, SVC-style attributes, bad input,
atomic partial_fit, unlearn argument checking, one-vs-rest."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

from refsvm.datasets import make_two_gaussians
from refsvm import IncrementalSVM

from ..conftest import BACKENDS, assert_linear_dual_is_libsvm, zero_rows_stream


def _data(n=120, seed=0):
    X, y = make_two_gaussians(n, random_state=seed)
    return X, np.where(y > 0, "pos", "neg")


def _snapshot(clf):
    return [copy.deepcopy(s.get_state()) for s in clf._states], clf.classes_.copy()


def _assert_unchanged(clf, before):
    states, classes = before
    np.testing.assert_array_equal(clf.classes_, classes)
    for s, old in zip(clf._states, states):
        new = s.get_state()
        for key in old:
            np.testing.assert_array_equal(np.asarray(new[key]), np.asarray(old[key]), err_msg=key)


@pytest.mark.parametrize("backend", BACKENDS)
def test_svc_attributes(backend):
    X, y = _data()
    clf = IncrementalSVM(C=1.0, gamma=0.5, backend=backend).fit(X, y)
    ref = SVC(C=1.0, gamma=0.5, tol=1e-10, shrinking=False).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, ref.classes_)
    o = np.argsort(ref.support_)        # SVC lists support vectors class by class
    np.testing.assert_array_equal(clf.support_, ref.support_[o])
    np.testing.assert_allclose(clf.support_vectors_, ref.support_vectors_[o])
    np.testing.assert_allclose(clf.dual_coef_, ref.dual_coef_[:, o], atol=1e-5)
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, atol=1e-5)
    np.testing.assert_array_equal(clf.n_support_, ref.n_support_)
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))
    assert clf.n_kernel_evals_ > 0
    assert clf.max_inverse_drift_ < 1e-6
    # SVC's formula holds with our attributes
    K = np.exp(-0.5 * ((X[:, None, :] - clf.support_vectors_[None]) ** 2).sum(-1))
    np.testing.assert_allclose(K @ clf.dual_coef_[0] + clf.intercept_[0],
                               clf.decision_function(X), atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_partial_fit_equals_fit_and_svc(backend):
    X, y = _data(150, 1)
    clf = IncrementalSVM(C=2.0, gamma=0.5, backend=backend)
    for start in range(0, 150, 37):
        clf.partial_fit(X[start:start + 37], y[start:start + 37], classes=["neg", "pos"])
        ref = SVC(C=2.0, gamma=0.5, tol=1e-10).fit(X[:start + 37], y[:start + 37])
        np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X),
                                   atol=1e-4)
    full = IncrementalSVM(C=2.0, gamma=0.5, backend=backend).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), full.decision_function(X), atol=1e-8)
    Xs = sp.csr_matrix(X)
    sparse = IncrementalSVM(C=2.0, gamma=0.5, backend=backend).fit(Xs, y)
    np.testing.assert_allclose(sparse.decision_function(Xs), full.decision_function(X),
                               atol=1e-8)
    assert sp.issparse(sparse.support_vectors_)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unlearn_and_loo_through_the_estimator(backend):
    X, y = _data(60, 2)
    clf = IncrementalSVM(C=1.0, gamma=0.5, backend=backend)
    clf.partial_fit(X[:30], y[:30], classes=["neg", "pos"])
    clf.partial_fit(X[30:], y[30:])
    # ids count across partial_fit calls
    clf.unlearn([3, 31, 59])
    keep = np.setdiff1d(np.arange(60), [3, 31, 59])
    ref = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X[keep], y[keep])
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(clf.support_, np.sort(keep[ref.support_]))
    ids, dec = clf.loo_decisions()
    np.testing.assert_array_equal(ids, keep)
    brute = [SVC(C=1.0, gamma=0.5, tol=1e-10).fit(np.delete(X[keep], j, 0), np.delete(
        y[keep], j)).decision_function(X[keep][j:j + 1])[0] for j in range(len(keep))]
    np.testing.assert_allclose(dec, brute, atol=1e-5)
    assert clf.loo_error(y[keep]) == np.mean(np.where(np.array(brute) > 0, "pos", "neg")
                                             != y[keep])


@pytest.mark.parametrize("backend", BACKENDS)
def test_multiclass_one_vs_rest(backend):
    rng = np.random.RandomState(0)
    X = np.vstack([rng.randn(30, 2) + c for c in ([0, 0], [3, 0], [0, 3])])
    y = np.repeat([0, 1, 2], 30)
    clf = IncrementalSVM(C=1.0, gamma=0.5, backend=backend).fit(X, y)
    assert clf.decision_function(X).shape == (90, 3)
    assert clf.score(X, y) >= 0.85
    for k in range(3):
        ref = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X, (y == k).astype(int))
        np.testing.assert_allclose(clf.decision_function(X)[:, k], ref.decision_function(X),
                                   atol=1e-5)
    clf.unlearn([0, 45])
    ids, dec = clf.loo_decisions()
    assert dec.shape == (88, 3) and ids.shape == (88,)
    assert clf.n_support_.sum() == clf.support_.shape[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params,match", [
    ({"C": 0.0}, "C must be"), ({"C": -1.0}, "C must be"), ({"C": np.nan}, "C must be"),
    ({"gamma": 0.0}, "gamma"), ({"gamma": -2.0}, "gamma"), ({"gamma": "wide"}, "gamma"),
    ({"kernel": "sigmoid"}, "kernel"), ({"degree": 0}, "degree"), ({"tol": -1.0}, "tol"),
    ({"refresh_every": -1}, "refresh_every"), ({"backend": "gpu"}, "backend"),
    ({"cache_size": -1.0}, "cache_size"),
])
def test_bad_parameters(backend, params, match):
    X, y = _data(20)
    kw = {"backend": backend, **params}
    with pytest.raises(ValueError, match=match):
        IncrementalSVM(**kw).fit(X, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_input_leaves_model_intact(backend):
    X, y = _data(40)
    clf = IncrementalSVM(gamma=0.5, backend=backend)
    with pytest.raises(ValueError, match="two classes"):
        clf.fit(X, np.full(40, "pos"))
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X, y, classes=["neg", "pos"])
    before = _snapshot(clf)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(bad, y)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.partial_fit(bad, y)
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(np.hstack([X, X]), y)
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X, np.where(y == "pos", "pos", "other"))
    with pytest.raises(ValueError):
        clf.partial_fit(X[:5], y[:4])
    with pytest.raises(ValueError, match="differs"):
        clf.partial_fit(X, y, classes=["neg", "pos", "x"])
    _assert_unchanged(clf, before)
    # bad unlearn ids: nothing is unlearned
    for ids, match in [([40], "out of range"), ([-1], "out of range"), ([1, 1], "repeated"),
                       ([[1, 2]], "1-D"), ([0.5], "integers"), (["a"], "integers")]:
        with pytest.raises(ValueError, match=match):
            clf.unlearn(ids)
        _assert_unchanged(clf, before)
    clf.unlearn([2])
    with pytest.raises(ValueError, match="already unlearned"):
        clf.unlearn([5, 2])
    assert clf._states[0].get_state()["status"][5] >= 0
    with pytest.raises(ValueError, match="labels"):
        clf.loo_error(y[:3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_pickle_and_unfitted(backend):
    from sklearn.exceptions import NotFittedError

    X, y = _data(50)
    clf = IncrementalSVM(gamma=0.5, backend=backend)
    with pytest.raises(NotFittedError):
        clf.unlearn([0])
    with pytest.raises(NotFittedError):
        clf.support_
    clf.fit(X, y)
    other = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(other.decision_function(X), clf.decision_function(X))
    other.partial_fit(X[:5], y[:5])
    clf.partial_fit(X[:5], y[:5])
    np.testing.assert_array_equal(other.decision_function(X), clf.decision_function(X))


# ---------------------------------------------------------------------- fit_method
_FIT_KERNELS = [dict(kernel="rbf", gamma=0.5), dict(kernel="linear"),
                dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0)]


def _svc_decision(X, y, Xt, C, kw):
    return SVC(C=C, tol=1e-10, **kw).fit(X, y).decision_function(Xt)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kw", _FIT_KERNELS, ids=["rbf", "linear", "poly"])
@pytest.mark.parametrize("C", [0.1, 10.0])
@pytest.mark.parametrize("method", ["libsvm", "selfinit"])
def test_batch_fit_is_the_incremental_fit_and_svc(backend, kw, C, method):
    """fit_method="libsvm" (the default), "selfinit" and "incremental" give the same exact
    SVM: SVC's decision function and support set, this family's KKT conditions and inverse
    (``check``) -- and the converted state is the one an incremental pass would keep."""
    rng = np.random.RandomState(3)
    X = rng.randn(90, 3)
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.6 * rng.randn(90) > 0, 1, -1)
    fast = IncrementalSVM(C=C, fit_method=method, backend=backend, **kw).fit(X, y)
    slow = IncrementalSVM(C=C, fit_method="incremental", backend=backend, **kw).fit(X, y)
    assert fast.fit_paths_ == [method] and slow.fit_paths_ == ["incremental"]
    ref = _svc_decision(X, y, X, C, kw)
    scale = 1.0 + np.max(np.abs(ref))
    # (LIBSVM stops ~4e-6 short of the optimum on the quadratic kernel at C = 10, even at
    # tol=1e-12; the two exact fits agree to 2e-10 there)
    np.testing.assert_allclose(fast.decision_function(X), ref,
                               atol=(1e-5 if kw["kernel"] == "poly" else 1e-6) * scale)
    np.testing.assert_allclose(fast.decision_function(X), slow.decision_function(X),
                               atol=1e-9 * scale)
    np.testing.assert_array_equal(fast.support_, slow.support_)
    a, b = fast._states[0].get_state(), slow._states[0].get_state()
    np.testing.assert_array_equal(a["status"], b["status"])
    np.testing.assert_allclose(a["alpha"], b["alpha"], atol=1e-9 * C)
    diag = fast._states[0].check()
    assert diag["kkt"] <= 1e-9 and diag["g_drift"] <= 1e-9 and diag["h_rel"] <= 1e-12
    assert diag["inverse_residual"] <= 1e-8


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sparse_input", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("method", ["libsvm", "selfinit"])
def test_after_a_batch_fit_learning_unlearning_and_loo_stay_exact(backend, sparse_input,
                                                                   method):
    """From the converted state, partial_fit (one example at a time), unlearn and
    leave-one-out are those of SVC trained on the corresponding examples."""
    rng = np.random.RandomState(5)
    X = rng.randn(130, 4)
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] + 0.4 * rng.randn(130) > 0, 1, -1)
    Xin = sp.csr_matrix(X) if sparse_input else X
    kw = dict(kernel="rbf", gamma=0.4)
    clf = IncrementalSVM(C=3.0, fit_method=method, backend=backend, **kw).fit(Xin[:90],
                                                                            y[:90])
    assert clf.fit_paths_ == [method]
    clf.partial_fit(Xin[90:], y[90:])
    ref = _svc_decision(X, y, X, 3.0, kw)
    np.testing.assert_allclose(clf.decision_function(Xin), ref, atol=1e-6 * (1 + abs(ref).max()))
    gone = list(range(0, 40, 3))
    clf.unlearn(gone)
    keep = np.setdiff1d(np.arange(130), gone)
    ref = _svc_decision(X[keep], y[keep], X, 3.0, kw)
    np.testing.assert_allclose(clf.decision_function(Xin), ref, atol=1e-6 * (1 + abs(ref).max()))
    ids, dec = clf.loo_decisions()
    np.testing.assert_array_equal(ids, keep)
    for i in clf.support_[:4]:
        rest = keep[keep != i]
        f = _svc_decision(X[rest], y[rest], X[[i]], 3.0, kw)
        np.testing.assert_allclose(dec[ids == i], f, atol=1e-6 * (1 + abs(f).max()))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["libsvm", "selfinit"])
def test_batch_fit_one_vs_rest_and_the_incremental_fallback(backend, method):
    """Three classes: one batch start per problem, the same model as the incremental
    fit; at C k_max above POLISH_CK every problem is learned example by example."""
    rng = np.random.RandomState(1)
    X = rng.randn(120, 2)
    y = np.digitize(X[:, 0] + 0.3 * rng.randn(120), [-0.5, 0.5])
    fast = IncrementalSVM(C=1.0, gamma=0.5, fit_method=method, backend=backend).fit(X, y)
    slow = IncrementalSVM(C=1.0, gamma=0.5, fit_method="incremental",
                          backend=backend).fit(X, y)
    assert fast.fit_paths_ == [method] * 3
    np.testing.assert_allclose(fast.decision_function(X), slow.decision_function(X),
                               atol=1e-9)
    big = IncrementalSVM(C=1e6, gamma=0.5, backend=backend).fit(X[:40], y[:40])
    assert big.fit_paths_ == ["incremental"] * 3


def test_a_selfinit_end_that_is_not_exact_is_refused():
    """IDSVM's start accepts an exact POKER end in the core's layout (after one
    refinement step) and refuses one whose g violates a KKT condition beyond EPS_KKT, or
    whose partition is not the layout's (a member of I_s outside S)."""
    from refsvm.idsvm.incremental_svm import IncrementalSVMState, state_arrays_from_optimum
    from refsvm.idsvm.state_format import load_optimum
    from refsvm.poker.poker import POKERState
    from refsvm.poker.storage import optimum_of

    rng = np.random.RandomState(2)
    X = rng.randn(60, 2)
    y = np.where(X[:, 0] + 0.5 * rng.randn(60) > 0, 1.0, -1.0)
    p = POKERState(2, False, C=1.0, kernel="rbf", gamma=0.5)
    p.self_init(X, y)
    data = optimum_of(p)
    assert state_arrays_from_optimum(data, 1.0, 2, False) is not None
    bad = dict(data, g=data["g"].copy())
    rest = np.flatnonzero(data["status"] == 0)
    bad["g"][rest[0]] = -1e-6                      # an example of R inside its margin
    assert state_arrays_from_optimum(bad, 1.0, 2, False) is None
    odd = dict(data, status=data["status"].copy())
    odd["status"][rest[0]] = 1                     # in I_s by its code, not in S
    assert state_arrays_from_optimum(odd, 1.0, 2, False) is None
    st = IncrementalSVMState(2, C=1.0, kernel="rbf", gamma=0.5)
    assert not load_optimum(st, bad) and st.get_state()["n_seen"] == 0
    assert load_optimum(st, data) and st.get_state()["n_seen"] == 60


@pytest.mark.parametrize("backend", BACKENDS)
def test_fit_learns_example_by_example_when_selfinit_cycles(backend):
    """Rows of zeros among 3-D rows, linear kernel, small C (a fuzzed stream): SelfInit's
    path cycles (CyclingError); fit then learns the examples one by one, exactly (the dual
    objective of LIBSVM on the same Gram matrix), instead of failing."""
    from refsvm.poker import poker as P

    X, y, C = zero_rows_stream(967)
    with pytest.raises(P.CyclingError):
        P.POKERState(3, C=C, kernel="linear").self_init(X, y)
    est = IncrementalSVM(C=C, kernel="linear", fit_method="selfinit",
                         backend=backend).fit(X, y)
    assert est.fit_paths_ == ["incremental"]
    assert_linear_dual_is_libsvm(X, y, C, est.support_, est.dual_coef_[0])
