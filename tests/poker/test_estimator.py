"""The POKER estimator: SVC's model through fit, partial_fit chunks, selection and unlearn;
bad input rejected with the model unchanged; scikit-learn's estimator checks."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

from refsvm.poker.estimators import POKER

from ..conftest import BACKENDS, assert_linear_dual_is_libsvm, to_csr, zero_rows_stream
from ._oracle import two_blobs


def _data(n=80, seed=0):
    X, y = two_blobs(n=n, d=3, seed=seed)
    return X, np.where(y > 0, "pos", "neg")


def _assert_like_svc(est, svc, X):
    np.testing.assert_allclose(est.decision_function(X), svc.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(est.support_, np.sort(svc.support_))
    order = np.argsort(svc.support_)
    np.testing.assert_allclose(est.dual_coef_, svc.dual_coef_[:, order], atol=1e-4)  # LIBSVM tol
    np.testing.assert_allclose(est.intercept_, svc.intercept_, atol=1e-6)
    np.testing.assert_array_equal(est.n_support_, svc.n_support_)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_fit_is_svc(backend, kernel):
    X, y = _data()
    kw = dict(C=2.0, kernel=kernel, gamma=0.3, coef0=1.0)
    est = POKER(backend=backend, **kw).fit(X, y)
    svc = SVC(tol=1e-10, **kw).fit(X, y)
    _assert_like_svc(est, svc, X)
    assert est.n_iterations_ > 0 and est.n_kernel_evals_ > 0
    np.testing.assert_array_equal(est.predict(X), svc.predict(X))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("chunk", [1, 7, 50, 80])
@pytest.mark.parametrize("increment", ["joint", "altpoker"])
def test_partial_fit_chunks_are_svc(backend, chunk, increment):
    X, y = _data()
    est = POKER(C=1.0, gamma=0.5, increment=increment, backend=backend)
    for start in range(0, 80, chunk):
        stop = min(80, start + chunk)
        est.partial_fit(X[start:stop], y[start:stop], classes=["neg", "pos"])
        if len(np.unique(y[:stop])) == 2 and (stop % 20 == 0 or stop == 80):
            _assert_like_svc(est, SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X[:stop], y[:stop]),
                             X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_csr_equals_dense(backend):
    X, y = _data()
    X[np.abs(X) < 0.4] = 0.0
    a = POKER(gamma=0.5, backend=backend).fit(X, y)
    b = POKER(gamma=0.5, backend=backend).fit(to_csr(X), y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(to_csr(X)),
                               atol=1e-10)
    assert sp.issparse(b.support_vectors_)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("selection", ["cls2w", "maxslk", "cls2w+dobj", "maxslk+dobj"])
def test_selection_fit_is_svc(backend, selection):
    X, y = _data(n=60, seed=3)
    est = POKER(C=1.0, gamma=0.5, selection=selection, chunk_size=3, n_candidates=4,
                backend=backend).fit(X, y)
    _assert_like_svc(est, SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X, y), X)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unlearn_is_svc_without_them(backend):
    X, y = _data()
    est = POKER(C=1.0, gamma=0.5, backend=backend).fit(X, y)
    gone = np.concatenate([est.support_[:5], [0, 1, 2]])
    gone = np.unique(gone)
    est.unlearn(gone)
    keep = np.setdiff1d(np.arange(80), gone)
    svc = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X[keep], y[keep])
    np.testing.assert_allclose(est.decision_function(X), svc.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(est.support_, np.sort(keep[svc.support_]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unlearn_rejects_bad_ids_and_keeps_the_model(backend):
    X, y = _data()
    est = POKER(gamma=0.5, backend=backend).fit(X, y)
    est.unlearn([3])
    before = pickle.dumps(est._states)
    for bad, msg in [([80], "out of range"), ([-1], "out of range"), ([4, 4], "repeated"),
                     ([3], "already unlearned"), ([[1, 2]], "1-D"), ([1.5], "integers")]:
        with pytest.raises(ValueError, match=msg):
            est.unlearn(bad)
        assert pickle.dumps(est._states) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_failed_partial_fit_leaves_the_model(backend):
    X, y = _data()
    est = POKER(gamma=0.5, backend=backend).partial_fit(X[:40], y[:40], classes=["neg", "pos"])
    before = pickle.dumps(est._states)
    with pytest.raises(ValueError):
        est.partial_fit(X[40:], np.where(y[40:] == "pos", "other", "neg"))
    with pytest.raises(ValueError):
        est.partial_fit(X[40:, :2], y[40:])
    bad = X[40:].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError):
        est.partial_fit(bad, y[40:])
    assert pickle.dumps(est._states) == before
    with pytest.raises(ValueError, match="C"):
        POKER(C=-1.0, backend=backend).fit(X, y)
    with pytest.raises(ValueError, match="selection"):
        POKER(selection="best", backend=backend).fit(X, y)
    with pytest.raises(ValueError, match="increment"):
        POKER(increment="fixed", backend=backend).partial_fit(X, y, classes=["neg", "pos"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_multiclass_one_vs_rest(backend):
    rng = np.random.RandomState(0)
    X = np.vstack([rng.randn(25, 2) + c for c in ([0, 0], [3, 0], [0, 3])])
    y = np.repeat([0, 1, 2], 25)
    est = POKER(C=1.0, gamma=0.5, backend=backend).fit(X, y)
    assert est.decision_function(X).shape == (75, 3)
    assert (est.predict(X) == y).mean() > 0.9
    for k in range(3):
        yk = np.where(y == k, 1, 0)
        svc = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X, yk)
        np.testing.assert_allclose(est.decision_function(X)[:, k], svc.decision_function(X),
                                   atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_failure_inside_a_chunk_puts_the_model_back(backend):
    """A chunk that fails half-way (here: in the middle of its path) leaves the model of
    before the call, and learning the chunk again gives the uninterrupted model."""
    X, y = _data(n=90)
    est = POKER(C=1.0, gamma=0.5, backend=backend).partial_fit(X[:40], y[:40],
                                                                classes=["neg", "pos"])
    before = pickle.dumps(est._states)
    seen = []

    def fail(state):
        seen.append(1)
        if len(seen) == 5:
            raise RuntimeError("boom")

    est._states[0].breakpoint_hook = fail
    with pytest.raises(RuntimeError, match="boom"):
        est.partial_fit(X[40:70], y[40:70])
    assert pickle.dumps(est._states) == before
    est.partial_fit(X[40:70], y[40:70]).partial_fit(X[70:], y[70:])
    ref = POKER(C=1.0, gamma=0.5, backend=backend)
    for s, t in ((0, 40), (40, 70), (70, 90)):
        ref.partial_fit(X[s:t], y[s:t], classes=["neg", "pos"])
    np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
    assert est.n_kernel_evals_ == ref.n_kernel_evals_
    assert est.n_iterations_ == ref.n_iterations_


@pytest.mark.parametrize("backend", BACKENDS)
def test_increments_reach_the_same_model_by_fewer_breakpoints(backend):
    """The joint increment and AltPOKER end at the same exact SVM after every chunk;
    on overlapping classes the joint path passes fewer breakpoints (one path with b
    adjustable instead of the fixed-bias path and the bias path)."""
    rng = np.random.RandomState(3)
    X = np.vstack([rng.randn(120, 2), 2.0 * rng.randn(120, 2) + [2.0, 0.0]])
    y = np.repeat(["neg", "pos"], 120)
    order = rng.permutation(240)
    X, y = X[order], y[order]
    joint = POKER(C=1.0, gamma=0.5, backend=backend)
    alt = POKER(C=1.0, gamma=0.5, increment="altpoker", backend=backend)
    for start in range(0, 240, 40):
        for est in (joint, alt):
            est.partial_fit(X[start:start + 40], y[start:start + 40], classes=["neg", "pos"])
        np.testing.assert_allclose(joint.decision_function(X), alt.decision_function(X),
                                   atol=1e-8)
        np.testing.assert_array_equal(joint.support_, alt.support_)
    assert joint.n_iterations_ < alt.n_iterations_


@pytest.mark.parametrize("backend", BACKENDS)
def test_failed_chunks_are_learned_by_altpoker_then_by_incremental_svm(backend):
    """A fuzzed stream (rows of zeros among 3-D rows, linear kernel, C = 0.01, chunks of
    2): one chunk the joint increment ends off the optimum (JointIncrementError) is learned
    again by AltPOKER; a later one on which both POKER paths cycle is learned by
    IncrementalSVM's path from the model before it, and its end carried back into
    POKER's state.  KKT, y'alpha and a fresh g after every call, LIBSVM's dual at the end,
    the model then going on with POKER's own paths."""
    from refsvm.poker.poker import JointIncrementError

    X, y, C = zero_rows_stream(997)
    module = POKER(backend=backend)._module()
    st = module.POKERState(3, C=C, kernel="linear", gamma=0.5)
    with pytest.raises(JointIncrementError, match="y'alpha"):
        for s in range(0, 20, 2):
            st.add_chunk(X[s:s + 2], y[s:s + 2], joint=True)
    est = POKER(C=C, kernel="linear", gamma=0.5, backend=backend)
    calls = []
    learn = est._learn
    est._learn = lambda *a: (calls.append(est._fallback), learn(*a))[1]
    for s in range(0, X.shape[0], 2):
        est.partial_fit(X[s:s + 2], y[s:s + 2], classes=[-1.0, 1.0])
        r = est._states[0].check()
        assert max(r["kkt"], r["balance"], r["g_drift"]) <= 1e-8 * max(1.0, C), (s, r)
    assert est._fallback is None
    assert calls.count("altpoker") >= 2 and calls.count("incremental") == 1, calls
    k = calls.index("incremental")
    assert calls[k - 1] == "altpoker"                # the rung below it failed first
    assert_linear_dual_is_libsvm(X, y, C, est.support_, est.dual_coef_[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_selfinit_off_the_optimum_is_learned_by_incremental_svm(backend):
    """A fuzzed stream (rows of zeros among 3-D rows, linear kernel, C = 84.2) on which
    SelfInit's path ends with y'alpha = 0 lost (a singular active set reached by
    round-off): the state raises PathError, where it returned a wrong model before;
    POKER.fit then learns that problem by IncrementalSVM's path (``fit_paths_``), exactly,
    and the model goes on by POKER's chunks."""
    from refsvm import IncrementalSVM
    from refsvm.poker.poker import PathError

    X, y, C = zero_rows_stream(1117)
    module = POKER(backend=backend)._module()
    with pytest.raises(PathError, match="SelfInit ended with y'alpha"):
        module.POKERState(3, C=C, kernel="linear").self_init(X, y)
    est = POKER(C=C, kernel="linear", backend=backend).fit(X, y)
    assert est.fit_paths_ == ["incremental"]
    assert_linear_dual_is_libsvm(X, y, C, est.support_, est.dual_coef_[0])
    r = est._states[0].check()
    assert max(r["kkt"], r["balance"], r["g_drift"]) <= 1e-8 * max(1.0, C), r
    ids = IncrementalSVM(C=C, kernel="linear", fit_method="selfinit", backend=backend).fit(X, y)
    assert ids.fit_paths_ == ["incremental"]
    np.testing.assert_allclose(est.decision_function(X), ids.decision_function(X), atol=1e-9)
    # IncrementalSVM's default start, from LIBSVM's solution, ends this problem exactly
    lib = IncrementalSVM(C=C, kernel="linear", backend=backend).fit(X, y)
    assert lib.fit_paths_ == ["libsvm"]
    np.testing.assert_allclose(est.decision_function(X), lib.decision_function(X), atol=1e-9)
    X2, y2, _ = zero_rows_stream(5)
    est.partial_fit(X2[:10], y2[:10])
    Xa, ya = np.vstack([X, X2[:10]]), np.concatenate([y, y2[:10]])
    assert_linear_dual_is_libsvm(Xa, ya, C, est.support_, est.dual_coef_[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_degenerate_fuzz_streams_are_all_learned(backend):
    """Eight fuzzed streams (rows of zeros, linear kernel) on which SelfInit cycles or ends
    off the optimum (docs/fine_scheinberg.rst, "Fuzzing"): ``fit`` learns every one by
    IncrementalSVM's path and ``partial_fit`` in chunks of 3 by POKER's, exact (KKT,
    y'alpha, a fresh g; LIBSVM's dual)."""
    for seed in (10, 11, 27, 46, 63, 108, 142, 233):
        X, y, C = zero_rows_stream(seed)
        est = POKER(C=C, kernel="linear", backend=backend).fit(X, y)
        assert est.fit_paths_ == ["incremental"], seed
        inc = POKER(C=C, kernel="linear", backend=backend)
        for s in range(0, X.shape[0], 3):
            inc.partial_fit(X[s:s + 3], y[s:s + 3], classes=[-1.0, 1.0])
        for model in (est, inc):
            r = model._states[0].check()
            assert max(r["kkt"], r["balance"], r["g_drift"]) <= 1e-7 * max(1.0, C), (seed, r)
            assert_linear_dual_is_libsvm(X, y, C, model.support_, model.dual_coef_[0],
                                         rtol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unlearn_cycling_is_done_by_incremental_svm_and_atomic(backend):
    """Fuzzed streams (rows of zeros, linear kernel) on which POKER's decrement cycles:
    ``unlearn`` removes the ids by IncrementalSVM's path from the model before the call
    (LIBSVM's dual of the rest, KKT); a call that fails leaves the model as it was."""
    for seed in (86, 130, 171, 390):
        X, y, C = zero_rows_stream(seed)
        est = POKER(C=C, kernel="linear", backend=backend)
        est.partial_fit(X[:10], y[:10], classes=[-1.0, 1.0])
        calls = []
        by_inc = est._by_incremental_svm
        est._by_incremental_svm = lambda *a, **k: (calls.append(k), by_inc(*a, **k))[1]
        est.unlearn([1, 4, 7])
        assert len(calls) == 1 and list(calls[0]["unlearn"]) == [1, 4, 7], (seed, calls)
        del est._by_incremental_svm
        keep = np.setdiff1d(np.arange(10), [1, 4, 7])
        r = est._states[0].check()
        assert max(r["kkt"], r["balance"], r["g_drift"]) <= 1e-8 * max(1.0, C), (seed, r)
        assert_linear_dual_is_libsvm(X[keep], y[keep], C, np.searchsorted(keep, est.support_),
                                     est.dual_coef_[0])
        est.partial_fit(X[10:], y[10:])              # and on by POKER's own paths
    X, y, C = zero_rows_stream(86)
    est = POKER(C=C, kernel="linear", backend=backend).fit(X[:10], y[:10])
    before = est._states[0].get_state()
    est._by_incremental_svm = lambda *a, **k: 1 / 0
    with pytest.raises(ZeroDivisionError):
        est.unlearn([1, 4, 7])
    after = est._states[0].get_state()
    for key in before:
        np.testing.assert_array_equal(np.asarray(after[key]), np.asarray(before[key]), key)
