"""scikit-learn compatibility and input validation of the linear estimators."""

import copy
import pickle

import numpy as np
import pytest

from refsvm import OnlineLinearSVM, PassiveAggressive, Perceptron, ProximalPassiveAggressive

from ..conftest import sparse_stream, to_csr

ESTIMATORS = [Perceptron, PassiveAggressive, ProximalPassiveAggressive, OnlineLinearSVM]


def _fitted_state(clf):
    return [copy.deepcopy(s.get_state()) for s in clf._states], clf.classes_.copy()


def _assert_unchanged(clf, before):
    states, classes = before
    np.testing.assert_array_equal(clf.classes_, classes)
    for s, old in zip(clf._states, states):
        new = s.get_state()
        for key in old:
            np.testing.assert_array_equal(np.asarray(new[key]), np.asarray(old[key]))


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_bad_partial_fit_leaves_model_intact(Estimator, backend):
    X, y = sparse_stream(n=100, d=6, seed=1)
    clf = Estimator(backend=backend).partial_fit(X[:50], y[:50], classes=[-1, 1])
    before = _fitted_state(clf)
    n_features = clf.n_features_in_

    bad = X[50:60].copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(bad, y[50:60])
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.partial_fit(bad, y[50:60])
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[50:60, :4], y[50:60])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X[50:60], np.where(y[50:60] > 0, 2, -1))
    with pytest.raises(ValueError, match="differs from the classes"):
        clf.partial_fit(X[50:60], y[50:60], classes=[-1, 1, 2])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.partial_fit(X[50:60], y[50:59])
    _assert_unchanged(clf, before)
    assert clf.n_features_in_ == n_features
    # the model still learns after the failures, as if they never happened
    clean = Estimator(backend=backend).partial_fit(X[:50], y[:50], classes=[-1, 1])
    clf.partial_fit(X[50:], y[50:])
    clean.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(clf.coef_, clean.coef_)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_first_partial_fit_needs_classes_and_failure_leaves_it_unfitted(Estimator, backend):
    X, y = sparse_stream(n=20, d=3)
    clf = Estimator(backend=backend)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        clf.partial_fit(X, y, classes=[1])
    assert not hasattr(clf, "classes_") and not hasattr(clf, "n_features_in_")


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_fit_with_one_class_is_an_error(Estimator, backend):
    X, _ = sparse_stream(n=20, d=3)
    with pytest.raises(ValueError, match="class"):
        Estimator(backend=backend).fit(X, np.ones(20))


@pytest.mark.parametrize(
    "Estimator,param,values",
    [
        (PassiveAggressive, "C", [0, -1.0, np.inf, "1"]),
        (ProximalPassiveAggressive, "C", [0, -0.5]),
        (ProximalPassiveAggressive, "gamma", [-0.1, np.nan]),
        (OnlineLinearSVM, "lam", [0, -1e-3, np.nan]),
        (OnlineLinearSVM, "batch_size", [0, 1.5]),
        (Perceptron, "eta0", [0, -1.0]),
        (Perceptron, "max_epochs", [0]),
        (PassiveAggressive, "variant", ["PA-III", 1]),
        (ProximalPassiveAggressive, "variant", ["PA-I"]),
        (PassiveAggressive, "backend", ["fortran"]),
    ],
)
def test_bad_hyper_parameters_are_named(Estimator, param, values):
    X, y = sparse_stream(n=20, d=3)
    for value in values:
        with pytest.raises(ValueError, match=param):
            Estimator(**{param: value}).fit(X, y)


def test_cython_backend_never_falls_back(monkeypatch):
    X, y = sparse_stream(n=20, d=3)
    monkeypatch.setattr(PassiveAggressive, "_compiled", "refsvm._no_such_module")
    with pytest.raises(ImportError, match="backend='cython' needs the compiled module"):
        PassiveAggressive(backend="cython").fit(X, y)
    PassiveAggressive(backend="python").fit(X, y)  # the reference needs no compiled code


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_backends_give_the_same_model_and_pickle(Estimator):
    X, y = sparse_stream(n=300, d=10, seed=4)
    M = to_csr(X)
    cy = Estimator(backend="cython", shuffle=True, random_state=3).fit(M, y)
    py = Estimator(backend="python", shuffle=True, random_state=3).fit(M, y)
    np.testing.assert_allclose(cy.coef_, py.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cy.intercept_, py.intercept_, rtol=1e-10, atol=1e-12)
    back = pickle.loads(pickle.dumps(cy))
    np.testing.assert_array_equal(back.decision_function(X), cy.decision_function(X))
    # dense input to a model fitted on CSR is accepted and gives the same scores
    np.testing.assert_allclose(cy.decision_function(X), cy.decision_function(M), rtol=1e-12)


# ---------------------------------------------------------------- the input check in the pass
# The linear estimators check X inside the compiled pass (StreamLearner.run_checked): a bad
# row anywhere in the batch, even the last, must give the message of the usual check and
# leave the model exactly as it was (issue 14).
def _bad_rows(X, where):
    """(matrix, message) pairs with one bad value in row ``where`` (any finite value is
    accepted: ``_finite_input_only``)."""
    out = []
    for value, match in ((np.nan, "NaN"), (-np.inf, "infinity"), (np.inf, "infinity")):
        B = X.copy()
        B[where, 1] = value
        out.append((B, match))
    return out


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("where", [0, 37, -1], ids=["first", "middle", "last"])
def test_bad_row_anywhere_in_the_pass_rolls_back(Estimator, backend, sparse, where):
    X, y = sparse_stream(n=200, d=6, seed=4)
    X[:, 1] = np.where(X[:, 1] == 0, 0.5, X[:, 1])  # the bad value replaces a stored entry
    clf = Estimator(backend=backend).partial_fit(X[:100], y[:100], classes=[-1, 1])
    before = _fitted_state(clf)
    for B, match in _bad_rows(X[100:], where):
        with pytest.raises(ValueError, match=match):
            clf.partial_fit(to_csr(B) if sparse else B, y[100:])
        _assert_unchanged(clf, before)
        with pytest.raises(ValueError, match=match):  # fit: left unfitted, as before
            fresh = Estimator(backend=backend)
            fresh.fit(to_csr(B) if sparse else B, y[100:])
        assert not hasattr(fresh, "classes_")
    # the largest finite values pass the row check, as scikit-learn's check_array passes
    # them: the call learns them, or raises because the arithmetic overflowed (the model
    # then unchanged), as the reference does
    for value in (-np.finfo(np.float64).max, 1e200):
        ok = X[100:].copy()
        ok[where, 1] = value
        ref = copy.deepcopy(clf).set_params(backend="python")
        try:
            clf.partial_fit(to_csr(ok) if sparse else ok, y[100:])
        except ValueError as exc:
            assert "overflowed" in str(exc)
            _assert_unchanged(clf, before)
            with pytest.raises(ValueError, match="overflowed"):
                ref.partial_fit(to_csr(ok) if sparse else ok, y[100:])
            continue
        ref.partial_fit(to_csr(ok) if sparse else ok, y[100:])
        np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-8, atol=1e-300)
        assert np.all(np.isfinite(clf.coef_))
        clf = Estimator(backend=backend).partial_fit(X[:100], y[:100], classes=[-1, 1])


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_bad_csr_index_in_the_pass_is_a_malformed_matrix(Estimator, backend):
    import scipy.sparse as sp

    X, y = sparse_stream(n=120, d=6, seed=5)
    M = to_csr(X)
    clf = Estimator(backend=backend).partial_fit(M[:60], y[:60], classes=[-1, 1])
    before = _fitted_state(clf)
    for bad_index in (6, -1, 2**31 - 1):
        B = M[60:].copy()
        B.indices = B.indices.copy()
        B.indices[-1] = bad_index  # the last stored entry of the last row
        B = sp.csr_matrix((B.data, B.indices, B.indptr), shape=B.shape)
        with pytest.raises(ValueError, match="malformed CSR matrix: an index is outside"):
            clf.partial_fit(B, y[60:])
        _assert_unchanged(clf, before)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_bad_x_is_reported_before_bad_labels(Estimator, backend):
    """With X and y both wrong, the error names X (as when X was checked first)."""
    X, y = sparse_stream(n=60, d=5, seed=6)
    X[7, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Estimator(backend=backend).fit(X, y + 0.5)  # continuous y
    clf = Estimator(backend=backend).partial_fit(X[8:30], y[8:30], classes=[-1, 1])
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(X, np.where(y > 0, 2, -1))  # a label outside classes


@pytest.mark.parametrize("Estimator", [PassiveAggressive, OnlineLinearSVM])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_partial_fit_makes_no_copy_of_X(Estimator, sparse):
    """C-contiguous float64 input (canonical CSR: float64, int32 sorted indices) is read
    where it is: the peak of new memory during the call is far below the size of X."""
    import tracemalloc

    rng = np.random.RandomState(0)
    X = rng.randn(20_000, 100)
    if sparse:
        X[rng.rand(*X.shape) < 0.7] = 0.0
        X = to_csr(X)
    y = np.where(rng.rand(20_000) < 0.5, -1.0, 1.0)
    clf = Estimator().partial_fit(X[:10], y[:10], classes=[-1.0, 1.0])
    size = X.data.nbytes if sparse else X.nbytes
    tracemalloc.start()
    try:
        clf.partial_fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size / 4, (peak, size)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_n_mistakes_is_the_prequential_count(Estimator, backend, sparse):
    """The count kept inside the step equals predict-then-learn one example at a time
    (refsvm.evaluate.progressive_validation), over partial_fit calls of any size, and
    adds up over the epochs of fit."""
    from refsvm.evaluate import progressive_validation

    X, y = sparse_stream(n=300, d=8, seed=4)
    y = np.where(np.random.RandomState(0).rand(300) < 0.15, -y, y)  # noise: mistakes go on
    X = to_csr(X) if sparse else X
    want = progressive_validation(Estimator(backend=backend), X, y, block=1)
    clf = Estimator(backend=backend).partial_fit(X[:1], y[:1], classes=[-1, 1])
    clf.partial_fit(X[1:120], y[1:120]).partial_fit(X[120:], y[120:])
    assert 40 < clf.n_mistakes_ == int(want.sum())
    # fit: every epoch's examples are predicted before their step
    epochs = {"max_epochs": 3} if Estimator is Perceptron else {"n_epochs": 3}
    fitted = Estimator(backend=backend, **epochs).fit(X, y)
    one = Estimator(backend=backend).partial_fit(X, y, classes=[-1, 1])
    assert fitted.n_mistakes_ > one.n_mistakes_ == int(want.sum())


def test_n_mistakes_sums_the_one_vs_rest_problems(backend):
    X, y = sparse_stream(n=200, d=6, seed=5)
    y3 = np.asarray(X[:, 0] > 0, int) + np.asarray(y > 0, int)
    clf = PassiveAggressive(backend=backend).fit(X, y3)
    assert clf.n_mistakes_ == sum(s.n_mistakes for s in clf._states) > 0


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_states_saved_before_the_mistake_count_still_load(Estimator, backend):
    X, y = sparse_stream(n=60, d=5, seed=6)
    clf = Estimator(backend=backend).partial_fit(X, y, classes=[-1, 1])
    state = clf._states[0]
    old = {k: v for k, v in state.save_state().items() if k != "n_mistakes"}
    fresh = type(state)(**state.init_params())
    fresh.load_state(old)
    assert fresh.n_mistakes == 0 and fresh.t == state.t > 0


def test_freeze_proximal_keeps_the_first_epochs_proximal_model(backend):
    """The slides build PAm's proximal model in epoch 1 and then freeze it: with
    freeze_proximal the class statistics after 3 epochs are those of epoch 1 (both
    through fit and through one partial_fit per epoch), and the model differs from the
    updating one from epoch 2 on."""
    X, y = sparse_stream(n=200, d=6, seed=7)
    kw = dict(variant="PAm-1", C=0.1, gamma=0.1, fit_intercept=True, backend=backend)
    one = ProximalPassiveAggressive(**kw).fit(X, y)
    frozen = ProximalPassiveAggressive(freeze_proximal=True, n_epochs=3, **kw).fit(X, y)
    moving = ProximalPassiveAggressive(n_epochs=3, **kw).fit(X, y)
    s1, sf, sm = (m._states[0].get_state() for m in (one, frozen, moving))
    for key in ("n_pos", "n_neg", "sum_pos", "sum_neg", "sumsq_pos", "sumsq_neg"):
        np.testing.assert_array_equal(sf[key], s1[key])
    assert sm["n_pos"] + sm["n_neg"] == 3 * 200 and sf["frozen"] and not sm["frozen"]
    assert not np.allclose(frozen.coef_, moving.coef_)
    stream = ProximalPassiveAggressive(freeze_proximal=True, **kw)
    for _ in range(3):
        stream.partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_array_equal(stream.coef_, frozen.coef_)
    np.testing.assert_array_equal(stream.intercept_, frozen.intercept_)


@pytest.mark.parametrize("call", ["fit", "partial_fit"])
def test_interrupt_after_an_overflow_does_not_keep_the_overflowed_model(backend, call,
                                                                       monkeypatch):
    """An interrupted call keeps the model of the stream up to the interruption -- unless
    the arithmetic overflowed before it: then the model is put back and the overflow is
    raised, as without the interrupt."""
    from refsvm.core.stream import Interrupted

    X, y = sparse_stream(n=80, d=5, seed=7)
    big = X.copy()
    big[10, 2] = 1e200  # Perceptron: R^2 overflows, then the bias
    clf = Perceptron(backend=backend, max_epochs=1).partial_fit(X, y, classes=[-1, 1])
    before = _fitted_state(clf)
    name = "_fit_states" if call == "fit" else "_learn"
    real = getattr(Perceptron, name)

    def learn_then_interrupt(self, *args):
        real(self, *args)
        raise Interrupted(big.shape[0], big.shape[0])

    monkeypatch.setattr(Perceptron, name, learn_then_interrupt)
    try:
        getattr(clf, call)(big, y)
    except ValueError as exc:
        assert "overflowed" in str(exc)
    except KeyboardInterrupt:  # (an Interrupted let through would end the test run)
        pytest.fail("the interrupted call kept a model whose arithmetic overflowed")
    else:
        pytest.fail("no error")
    _assert_unchanged(clf, before)
    # without the overflow the interrupted call keeps the prefix model, as before
    with pytest.raises(Interrupted):
        getattr(clf, call)(X, y)
    assert np.all(np.isfinite(clf.coef_))
