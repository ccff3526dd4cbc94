"""Benchmarks of the linear family.

    python -m pytest benchmarks/bench_linear.py --benchmark-only -q

1. Per-example update cost, compiled twin vs reference (``state.run`` on the same
   stream and order; target: twin >= 50x faster).
2. One pass of our compiled PA-I and OnlineLinearSVM vs scikit-learn's
   ``SGDClassifier`` (pa1 / hinge, ``max_iter=1``) through ``fit``, on a dense
   200,000 x 100 stream and a sparse stream (100,000 features, ~1 % density);
   target: at least as fast as scikit-learn.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from refsvm import OnlineLinearSVM, PassiveAggressive
from refsvm.linear import _online_linear_svm, _passive_aggressive, online_linear_svm, passive_aggressive

PA = (passive_aggressive, _passive_aggressive)
SVM = (online_linear_svm, _online_linear_svm)
#: name -> ((reference module, twin module), state class, parameters)
STATES = {
    "Perceptron": (PA, "PerceptronState", {}),
    "PA-I": (PA, "PAState", {"variant": 1, "C": 0.1}),
    "PAm-1": (PA, "PAmState", {"variant": 1, "C": 0.1, "gamma": 0.01}),
    "Pegasos": (SVM, "PegasosState", {"lam": 1e-3}),
    "Pegasos+proj+avg": (SVM, "PegasosState", {"lam": 1e-3, "project": True, "average": True}),
}


def _stream(n, d, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.where(X @ rng.randn(d) + 0.5 * rng.randn(n) > 0, 1.0, -1.0)
    return X, y


@pytest.fixture(scope="module")
def small_stream():
    return _stream(5000, 50)


@pytest.mark.parametrize("twin", ["python", "cython"])
@pytest.mark.parametrize("algo", list(STATES))
def test_twin_vs_reference(benchmark, record, small_stream, algo, twin):
    X, y = small_stream
    modules, name, kw = STATES[algo]
    module = modules[0] if twin == "python" else modules[1]
    order = np.arange(X.shape[0])
    benchmark.group = f"linear twin vs reference: {algo}"

    def run():
        getattr(module, name)(X.shape[1], False, **kw).run(X, y, order)

    benchmark.pedantic(run, rounds=3 if twin == "python" else 20, iterations=1)
    record(benchmark.group, twin, benchmark,
           us_per_example=round(benchmark.stats.stats.min / X.shape[0] * 1e6, 3))


@pytest.fixture(scope="module")
def dense_stream():
    return _stream(200_000, 100, seed=1)


@pytest.fixture(scope="module")
def sparse_stream():
    rng = np.random.RandomState(2)
    n, d = 20_000, 100_000
    X = sp.random(n, d, density=0.01, format="csr", random_state=rng, dtype=np.float64)
    X.data = rng.randn(X.data.shape[0])
    X.indices = X.indices.astype(np.int32)
    w = rng.randn(d)
    y = np.where(X @ w > 0, 1.0, -1.0)
    return X, y


CONTENDERS = {
    "PA-I": (
        lambda: PassiveAggressive(variant="PA-I", C=0.1),
        lambda: SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=0.1,
                              fit_intercept=False, shuffle=False, max_iter=1, tol=None),
    ),
    "OnlineLinearSVM": (
        lambda: OnlineLinearSVM(lam=1e-4),
        lambda: SGDClassifier(loss="hinge", penalty="l2", alpha=1e-4, learning_rate="optimal",
                              fit_intercept=False, shuffle=False, max_iter=1, tol=None),
    ),
}


@pytest.mark.parametrize("who", ["refsvm", "sklearn"])
@pytest.mark.parametrize("algo", list(CONTENDERS))
@pytest.mark.parametrize("data", ["dense 200000x100", "sparse 20000x100000 1%"])
def test_single_pass_vs_sklearn(benchmark, record, dense_stream, sparse_stream, algo, who, data):
    X, y = dense_stream if data.startswith("dense") else sparse_stream
    make = CONTENDERS[algo][0 if who == "refsvm" else 1]
    benchmark.group = f"single pass {algo}, {data}"

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return make().fit(X, y)

    clf = benchmark.pedantic(fit, rounds=5, iterations=1)
    record(benchmark.group, who, benchmark, train_acc=round(clf.score(X, y), 4))
