"""The crash-free contract of every public estimator (registry of test_common), both backends.

Interrupts are answered at an example boundary with the prefix model; malformed sparse
structures and overflowing values are rejected before any compiled loop runs; a failed
``fit`` leaves the fitted model untouched; a hyper-parameter change between
``partial_fit`` calls raises instead of being ignored; one estimator shared by threads
stays consistent, separate estimators in threads equal sequential fits.
"""

from __future__ import annotations

import gc
import signal
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from refsvm.core.stream import Interrupted

from .conftest import BACKENDS
from .test_common import CASES, IDS, REGISTRY, _data, _model_bytes

#: rows per stream so that one pass takes a noticeable time, by (family kind, backend)
_FAST = {"Perceptron", "PassiveAggressive", "ProximalPassiveAggressive", "OnlineLinearSVM"}


#: the linear learners are so fast that a pass is shorter than the input checks; they are
#: interrupted during a many-pass ``fit`` instead of a one-pass ``partial_fit``
_EPOCHS = {"Perceptron": "max_epochs", "PassiveAggressive": "n_epochs",
           "ProximalPassiveAggressive": "n_epochs", "OnlineLinearSVM": "n_epochs",
           "ReducedKernelPA": "n_epochs", "ProximalReducedKernelPA": "n_epochs"}
#: learners whose partial_fit is one exact chunk (POKER): an interrupt restores the model
#: from before the call
_CHUNK = {"POKER"}
#: one-pass learners whose step costs O(d): a long stream instead
_LONG = {"StreamSVM": 1_000_000, "StreamSVM-balls": 300_000}


def _stream(name, backend):
    if name in _EPOCHS:
        n = 100_000 if backend == "cython" else 5_000
        if "Reduced" in name and backend == "python":  # m~ kernel values per example
            n = 500
    elif name in _LONG:
        n = _LONG[name] if backend == "cython" else 20_000
    elif name == "IncrementalSVM":
        n = 2_000 if backend == "cython" else 300
    elif name == "POKER":  # the breakpoint loop runs in Python in both twins for now
        n = 300
    else:
        n = 4_000 if backend == "cython" else 1_000
    rng = np.random.RandomState(0)
    X = rng.randn(n, 3)
    y = np.where(X[:, 0] + 0.5 * rng.randn(n) > 0, 1.0, -1.0)
    return X, y


def _learn(name, backend, X, y, epochs=None):
    est = REGISTRY[name](backend)
    if name in _EPOCHS:
        return est.set_params(**{_EPOCHS[name]: epochs or 60}).fit(X, y)
    return est.partial_fit(X, y, classes=[-1.0, 1.0])


def _interrupted_call(name, backend, X, y, delay):
    """Learn under an alarm after ``delay`` s: (estimator, exception, seconds from the
    alarm to the answer).

    The alarm raises KeyboardInterrupt wherever it falls.  When the pass ends just before
    it, it can fall after the call returned but before the timer is cleared: that
    KeyboardInterrupt is caught here too (never left to end the test session), and the
    caller tells it from an interrupted check by the complete model it leaves."""
    fired = []

    def handler(signum, frame):
        fired.append(time.perf_counter())
        signal.default_int_handler(signum, frame)

    old = signal.signal(signal.SIGALRM, handler)
    est = REGISTRY[name](backend)
    # no collection while the alarm is armed: an interrupt that lands in a gc callback
    # (hypothesis installs one in a worker that ran its tests) is swallowed and reported
    # as unraisable, and the attempt is lost
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, delay)
            if name in _EPOCHS:
                est.set_params(**{_EPOCHS[name]: 60}).fit(X, y)
            else:
                est.partial_fit(X, y, classes=[-1.0, 1.0])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except KeyboardInterrupt as exc:
        return est, exc, time.perf_counter() - fired[0]
    finally:
        signal.signal(signal.SIGALRM, old)
        if collecting:
            gc.enable()
    return est, None, None


#: the python backend's interrupt tests that run in CI (an epoch learner, a kernel learner,
#: POKER's one-chunk call; 7-17 s each on 2 cores): ``--runslow`` runs every learner
_INTERRUPT_CI_PYTHON = {"Perceptron", "KernelPassiveAggressive", "POKER"}
_INTERRUPT_CASES = [
    pytest.param(n, b, id=i, marks=() if b != "python" or n in _INTERRUPT_CI_PYTHON
                 else pytest.mark.slow)
    for (n, b), i in zip(CASES, IDS)]


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
@pytest.mark.parametrize("name,backend", _INTERRUPT_CASES)
def test_interrupt_is_answered_at_an_example_boundary(name, backend):
    """An alarm in the middle of learning: answered within 0.5 s with Interrupted, and
    the model is the model of the stream up to that example, bit for bit."""
    X, y = _stream(name, backend)
    start = time.perf_counter()
    full = _learn(name, backend, X, y)
    total = time.perf_counter() - start
    delay = 0.5 * total
    for attempt in range(8):  # timing on a busy machine: move the alarm if needed
        est, exc, late = _interrupted_call(name, backend, X, y, delay)
        if isinstance(exc, Interrupted) and (exc.n_learned > 0 or name in _CHUNK):
            break
        if isinstance(exc, Interrupted):  # before the first example: in the set-up
            assert not hasattr(est, "classes_"), "an interrupted set-up left a model behind"
            delay *= 1.5
            continue
        if exc is not None and hasattr(est, "classes_") and np.array_equal(
                est.decision_function(X[:200]), full.decision_function(X[:200])):
            exc = None  # the alarm fell just after the pass: the complete model
        if exc is None:  # the pass ended before the alarm (the first run was slowed down)
            delay *= 0.5
        else:  # a plain KeyboardInterrupt: it arrived while X was checked
            assert not hasattr(est, "classes_"), "an interrupted check left a model behind"
            delay *= 1.5
    assert isinstance(exc, Interrupted), "the alarm never fell inside the pass"
    assert late < 0.5, f"answered {late:.3f} s after the alarm"
    if name in _CHUNK:  # one path-following run per call: the model before the call
        assert exc.n_learned == 0 and not hasattr(est, "classes_")
        return
    k = exc.n_learned
    assert 0 < k <= X.shape[0] and exc.n_total == X.shape[0]
    assert str(k) in str(exc)
    if name in _EPOCHS:  # e whole passes, then k examples of the next one
        e = exc.epoch
        prefix = _learn(name, backend, X, y, epochs=e) if e else None
        if prefix is None:
            prefix = REGISTRY[name](backend).partial_fit(X[:k], y[:k], classes=[-1.0, 1.0])
        else:
            prefix.partial_fit(X[:k], y[:k])
    else:
        prefix = REGISTRY[name](backend).partial_fit(X[:k], y[:k], classes=[-1.0, 1.0])
    Xt = X[:200]
    np.testing.assert_array_equal(est.decision_function(Xt), prefix.decision_function(Xt))


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_malformed_sparse_input_is_rejected_before_any_loop(name, backend):
    X, y = _data()
    est = REGISTRY[name](backend).fit(sp.csr_matrix(X), y)
    before = est.decision_function(sp.csr_matrix(X))
    d = X.shape[1]
    bad = [
        sp.csr_matrix(([1.0, 2.0], [0, 50_000_000], [0, 1, 2]), shape=(2, d)),
        sp.csr_matrix(([1.0, 2.0], [0, d], [0, 1, 2]), shape=(2, d)),
        sp.csr_matrix(([1.0, 2.0], [0, 1], [0, 2, 1]), shape=(2, d)),
    ]
    neg = sp.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, d))
    neg.indices[1] = -1
    bad.append(neg)
    for M in bad:
        with pytest.raises(ValueError, match="malformed"):
            est.partial_fit(M, ["pos", "neg"])
        with pytest.raises(ValueError, match="malformed"):
            est.decision_function(M)
    np.testing.assert_array_equal(est.decision_function(sp.csr_matrix(X)), before)


#: the estimators that accept any finite X, as scikit-learn's linear models do
#: (``_finite_input_only``): an overflow of their arithmetic is caught after the pass
_FINITE_ONLY = [(n, b) for n, b in CASES if REGISTRY[n](b)._finite_input_only]


@pytest.mark.parametrize("name,backend", [c for c in CASES if c not in _FINITE_ONLY],
                         ids=[i for c, i in zip(CASES, IDS) if c not in _FINITE_ONLY])
def test_values_whose_squares_overflow_are_rejected(name, backend):
    X, y = _data()
    big = X.copy()
    big[3, 1] = 1e160
    with pytest.raises(ValueError, match="overflow"):
        REGISTRY[name](backend).fit(big, y)


@pytest.mark.parametrize("name,backend", _FINITE_ONLY,
                         ids=[f"{n}-{b}" for n, b in _FINITE_ONLY])
@pytest.mark.parametrize("value", [1e160, 1e300, 1.7e308])
def test_finite_only_models_learn_huge_values_or_raise_on_overflow(name, backend, value):
    """The linear models accept any finite value; where their arithmetic overflows on it
    the call raises, naming the overflow, and the model is what it was; where it does not,
    the model is finite and the other twin learns the same one (or raises the same)."""
    X, y = _data()
    big = X.copy()
    big[3, 1] = value
    outcomes = []
    for b in (backend, "python" if backend == "cython" else "cython"):
        est = REGISTRY[name](b).fit(X, y)
        before = _model_bytes(est)
        try:
            est.partial_fit(big, y)
        except ValueError as exc:
            assert "overflowed" in str(exc), exc
            assert _model_bytes(est) == before
            outcomes.append(None)
            continue
        assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))
        outcomes.append((est.coef_, est.intercept_))
    assert (outcomes[0] is None) == (outcomes[1] is None)
    if outcomes[0] is not None:
        np.testing.assert_allclose(outcomes[0][0], outcomes[1][0], rtol=1e-8, atol=1e-300)


#: the estimators that evaluate a kernel (StreamSVM's linear form keeps w instead)
_KERNEL_CASES = [(n, b) for n, b in CASES
                 if "kernel" in REGISTRY[n](b).get_params() and n not in ("StreamSVM",
                                                                         "StreamSVM-balls")]


@pytest.mark.parametrize("name,backend", _KERNEL_CASES,
                         ids=[f"{n}-{b}" for n, b in _KERNEL_CASES])
def test_kernel_values_that_overflow_are_rejected(name, backend):
    """A polynomial kernel whose values overflow (found by fuzzing: OnlineRampSVM's
    compiled inner loop never ended on infinite kernel values; the reference raised
    OverflowError) is a ValueError before any pass, in fit, in a later partial_fit whose
    rows are larger, and in decision_function; the model stays as it was."""
    X, y = _data()
    poly = dict(kernel="poly", degree=40, gamma=10.0, coef0=1.0)
    with pytest.raises(ValueError, match="polynomial kernel .* overflow"):
        REGISTRY[name](backend).set_params(**poly).fit(X * 1e4, y)
    # (10 * 16 + 1)^3 is fine; rows 1e60 larger in a later call reach 1e362
    est = REGISTRY[name](backend).set_params(kernel="poly", degree=3, gamma=10.0, coef0=1.0)
    est.partial_fit(X[:40], y[:40], classes=["neg", "pos"])
    before = est.decision_function(X)
    big = X[40:] * 1e60
    with pytest.raises(ValueError, match="kernel values must stay below"):
        est.partial_fit(big, y[40:])
    with pytest.raises(ValueError, match="these rows and the training data"):
        est.decision_function(big)
    np.testing.assert_array_equal(est.decision_function(X), before)
    est.partial_fit(X[40:], y[40:])  # the model goes on from where it was


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_failed_fit_leaves_the_fitted_model_untouched(name, backend):
    X, y = _data()
    est = REGISTRY[name](backend).fit(X, y)
    before = est.decision_function(X)
    with pytest.raises(ValueError):
        est.fit(np.ones((2, 1)), ["pos", "pos"])
    assert est.n_features_in_ == X.shape[1]
    with pytest.raises(ValueError, match="features"):
        est.decision_function(np.ones((1, 1)))
    np.testing.assert_array_equal(est.decision_function(X), before)


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_changing_a_hyper_parameter_between_partial_fit_calls_raises(name, backend):
    X, y = _data()
    est = REGISTRY[name](backend).partial_fit(X[:30], y[:30], classes=["neg", "pos"])
    param = next(p for p in ("C", "lam", "eta0") if p in est.get_params())
    old = est.get_params()[param]
    est.set_params(**{param: old * 2})
    with pytest.raises(ValueError, match=f"{param} changed"):
        est.partial_fit(X[30:], y[30:])
    est.set_params(**{param: old}).partial_fit(X[30:], y[30:])


@pytest.mark.parametrize("name", list(REGISTRY))
def test_one_estimator_shared_by_threads_stays_consistent(name):
    X, y = _data(200)
    est = REGISTRY[name]("cython").partial_fit(X[:20], y[:20], classes=["neg", "pos"])
    errors = []

    def learn():
        try:
            for i in range(20, 200, 20):
                est.partial_fit(X[i:i + 20], y[i:i + 20])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def predict():
        try:
            for _ in range(30):
                assert np.all(np.isfinite(est.decision_function(X)))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=learn), threading.Thread(target=predict)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    alone = REGISTRY[name]("cython").partial_fit(X[:20], y[:20], classes=["neg", "pos"])
    for i in range(20, 200, 20):
        alone.partial_fit(X[i:i + 20], y[i:i + 20])
    np.testing.assert_array_equal(est.decision_function(X), alone.decision_function(X))


@pytest.mark.parametrize("backend", BACKENDS)
def test_separate_estimators_in_threads_equal_sequential_fits(backend):
    X, y = _data(150)
    names = list(REGISTRY)
    sequential = {n: REGISTRY[n](backend).fit(X, y).decision_function(X) for n in names}
    results = {}

    def work(n):
        results[n] = REGISTRY[n](backend).fit(X, y).decision_function(X)

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in names:
        np.testing.assert_array_equal(results[n], sequential[n], err_msg=n)


def test_n_reduced_beyond_the_bound_is_refused_before_allocating():
    """A reduced set whose m x m kernel matrix would exceed MAX_REDUCED_SET**2 doubles is
    refused with a ValueError naming n_reduced (capped at the data first)."""
    from refsvm import ReducedKernelPA
    from refsvm.linear.estimators import MAX_REDUCED_SET

    rng = np.random.RandomState(0)
    n = MAX_REDUCED_SET + 10
    X = rng.randn(n, 2)
    y = np.where(X[:, 0] > 0, 1, -1)
    for how in ("random", "first"):
        est = ReducedKernelPA(n_reduced=10**9, reduced_set=how, gamma=0.5, random_state=0)
        with pytest.raises(ValueError, match=r"n_reduced=1000000000 .*at most 16384 points"):
            est.fit(X, y)
        assert not hasattr(est, "classes_")
    with pytest.raises(ValueError, match="reduced_set: a reduced set of"):
        ReducedKernelPA(reduced_set=X[:MAX_REDUCED_SET + 1], gamma=0.5).fit(X[:50], y[:50])
    with pytest.warns(UserWarning, match="larger than the 50 examples"):
        small = ReducedKernelPA(n_reduced=10**9, gamma=0.5, random_state=0).fit(X[:50], y[:50])
    assert small.reduced_set_.shape[0] == 50


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("where,key,value", [
    ("data", "g", np.nan), ("data", "y", np.inf), ("data", "y", 1e308), ("data", "qdiag", -1.0),
    ("init_params", "gamma", np.inf), ("init_params", "min_gain", np.nan)])
def test_online_ramp_svm_states_that_never_returned_are_refused(backend, where, key, value,
                                                               tmp_path):
    """The tampered OnlineRampSVM states whose partial_fit never returned (and ignored
    Ctrl-C) are refused at load, naming the member."""
    import json

    import refsvm

    X, y = _data(80)
    path = tmp_path / "m.npz"
    REGISTRY["OnlineRampSVM"](backend).fit(X, y).save(path)
    z = dict(np.load(path))
    if where == "data":
        z[f"state0/{key}"] = z[f"state0/{key}"].copy()
        z[f"state0/{key}"][40 if key == "g" else 0] = value
    else:
        meta = json.loads(str(z["__meta__"][()]))
        meta["states"][0]["init_params"][key] = value
        z["__meta__"] = np.array(json.dumps(meta))
    with open(path, "wb") as fh:
        np.savez(fh, **z)
    with pytest.raises(ValueError, match=key):
        refsvm.load(path)
