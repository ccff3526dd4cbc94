"""One estimator driven from two threads, and fork while a thread learns.

Every public read-out and method of every estimator takes the estimator's lock
(``refsvm.base.locked``, applied to each estimator class's public members by
``BaseOnlineClassifier.__init_subclass__``).  Each estimator of the registry, on both
backends, is driven by a learning thread (``partial_fit`` chunk after chunk) while a
second thread reads its read-outs, unlearns, or saves it; every value read must be
that of the model after some number of chunks learned in order (bit for bit), and so
must the final model.  A fork while a thread is inside ``partial_fit`` leaves the child
an estimator it can use (``os.register_at_fork``: the fork waits for the call under
way, and the child gets fresh locks).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import refsvm

from .conftest import BACKENDS
from .test_common import REGISTRY, _data

CASES = [(name, b) for name in REGISTRY for b in BACKENDS]
IDS = [f"{name}-{b}" for name, b in CASES]
#: read-outs tried on every estimator (those it has)
READ_OUTS = ("support_", "dual_coef_", "intercept_", "n_support_", "coef_",
             "support_vectors_", "n_kernel_evals_", "n_updates_")
N, CHUNK = 80, 10


def _chunks(X, y, size=CHUNK):
    return [(X[i:i + size], y[i:i + size]) for i in range(0, N, size)]


def _sequential(name, backend, X, y):
    """The decision values on X after each number of chunks (0 = after the first)."""
    est = REGISTRY[name](backend)
    out = []
    for k, (Xc, yc) in enumerate(_chunks(X, y)):
        est.partial_fit(Xc, yc, classes=["neg", "pos"] if k == 0 else None)
        out.append(est.decision_function(X))
    return est, out


def _is_one_of(values, models):
    return any(np.array_equal(values, m) for m in models)


def _run(*targets):
    errors = []

    def wrap(fn):
        def go():
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
        return go

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    assert not errors, repr(errors)


def _learner(name, backend):
    """The data, the sequential models, an estimator after the first chunk, and a thread
    body that learns the other chunks and then sets ``done``."""
    X, y = _data(N)
    _, models = _sequential(name, backend, X, y)
    est = REGISTRY[name](backend).partial_fit(X[:CHUNK], y[:CHUNK], classes=["neg", "pos"])
    done = threading.Event()

    def learn():
        try:
            for Xc, yc in _chunks(X, y)[1:]:
                est.partial_fit(Xc, yc)
        finally:
            done.set()

    return X, y, models, est, done, learn


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_learn_and_read_from_two_threads(name, backend):
    X, y, models, est, done, learn = _learner(name, backend)
    seen = []

    def read():
        while not done.is_set() or len(seen) < 3:
            f = est.decision_function(X)
            assert _is_one_of(f, models), "a read between two sequential models"
            seen.append(f)
            for attr in READ_OUTS:
                if hasattr(type(est), attr):
                    try:
                        value = getattr(est, attr)
                    except AttributeError:  # not defined for this configuration
                        continue
                    assert value is not None
            if hasattr(type(est), "dual_coef_"):
                coef, sv = est.dual_coef_, est.support_
                assert coef.ndim == 2 and sv.ndim == 1
            if done.is_set() and len(seen) >= 3:
                break

    _run(learn, read)
    np.testing.assert_array_equal(est.decision_function(X), models[-1])


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_learn_and_save_from_two_threads(name, backend, tmp_path):
    X, y, models, est, done, learn = _learner(name, backend)
    paths = []

    def save():
        k = 0
        while (not done.is_set() and k < 8) or k < 2:
            path = tmp_path / f"m{k}.npz"
            est.save(path)
            paths.append(path)
            k += 1
            done.wait(0.01)

    _run(learn, save)
    for path in paths:
        assert _is_one_of(refsvm.load(path).decision_function(X), models), path.name


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", [n for n in REGISTRY
                                  if hasattr(type(REGISTRY[n]("python")), "unlearn")])
def test_learn_and_unlearn_from_two_threads(name, backend):
    """Unlearning example 0 while chunks are learned: the model is the one of unlearning
    it after some number of chunks (exact models: equal to round-off)."""
    X, y = _data(N)
    chunks = _chunks(X, y, 2 * CHUNK)
    variants = []
    for k in range(len(chunks)):
        est = REGISTRY[name](backend)
        for j, (Xc, yc) in enumerate(chunks):
            est.partial_fit(Xc, yc, classes=["neg", "pos"] if j == 0 else None)
            if j == k:
                est.unlearn([0])
        variants.append(est.decision_function(X))
    est = REGISTRY[name](backend).partial_fit(*chunks[0], classes=["neg", "pos"])

    def learn():
        for Xc, yc in chunks[1:]:
            est.partial_fit(Xc, yc)

    def unlearn():
        time.sleep(0.001)
        est.unlearn([0])

    _run(learn, unlearn)
    f = est.decision_function(X)
    assert any(np.allclose(f, v, rtol=1e-7, atol=1e-7) for v in variants)
    if hasattr(type(est), "loo_decisions") and backend == "cython":  # (the reference: slow)
        _run(lambda: est.loo_decisions(), lambda: est.decision_function(X))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["IncrementalSVM", "POKER", "OnlineRampSVM", "Perceptron"])
def test_fork_while_another_thread_learns(name, backend):
    """The child of a fork taken while a thread is inside partial_fit can learn and
    predict (no lock held by a thread that does not exist in the child)."""
    rng = np.random.RandomState(0)
    n = 400 if backend == "cython" else 120
    X = rng.randn(n, 4)
    y = np.where(X[:, 0] + 0.3 * rng.randn(n) > 0, "pos", "neg")
    est = REGISTRY[name](backend).partial_fit(X[:20], y[:20], classes=["neg", "pos"])
    inside = threading.Event()

    def learn():
        inside.set()
        est.partial_fit(X[20:], y[20:])

    t = threading.Thread(target=learn)
    t.start()
    inside.wait()
    lock = est.__dict__["_lock"]
    for _ in range(2000):  # until the learning thread holds the lock
        if not lock.acquire(blocking=False):
            break
        lock.release()
        time.sleep(0.0005)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(60)
            est.partial_fit(X[:10], y[:10])
            est.decision_function(X[:5])
            code = 0
        finally:
            os._exit(code)
    t.join()
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child of the fork hung")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    est.partial_fit(X[:10], y[:10])  # and the parent's lock is free


def _blas_threads():
    from threadpoolctl import threadpool_info

    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_learning_calls_run_with_one_blas_thread():
    """fit, partial_fit and unlearn run with every BLAS library on one thread (OpenBLAS's
    spinning threads otherwise take the cores of other work: ``refsvm/_blas_threads.py``);
    predictions keep the user's count, and the count is restored after each call, also
    after an error."""
    from refsvm._blas_threads import one_blas_thread

    seen = []

    class Probe(refsvm.IncrementalSVM):
        def _encode(self, y):                     # inside fit and partial_fit
            seen.append(_blas_threads())
            return super()._encode(y)

        def _validate_X(self, X, reset):          # inside decision_function
            seen.append(_blas_threads())
            return super()._validate_X(X, reset)

    X, y = _data()
    before = _blas_threads()
    if not before or max(before) < 2:
        pytest.skip("no BLAS library with more than one thread here")
    est = Probe(C=1.0).fit(X, y)
    assert seen and all(set(s) == {1} for s in seen)
    assert _blas_threads() == before
    seen.clear()
    est.decision_function(X[:5])
    assert seen == [before]
    # restored after an error inside a learning call
    with pytest.raises(ValueError):
        est.partial_fit(X[:3, :1], y[:3])
    assert _blas_threads() == before
    with one_blas_thread():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
