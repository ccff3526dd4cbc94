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

from ..conftest import BACKENDS


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
