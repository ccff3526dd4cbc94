"""The shared contract of every public estimator, on both backends (registry-driven).

A family that adds an estimator adds one line to ``REGISTRY``; every check below then
runs for it: scikit-learn's ``parametrize_with_checks``; declared parameter rules that
reject bad values by name; a failed ``partial_fit`` leaves the model exactly as it was;
pickling mid-stream and continuing equals the uninterrupted run bit for bit; dense and
CSR input give the same model; ``backend="cython"`` never falls back silently.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

import refsvm
from refsvm import _validation as V
from refsvm import ProximalReducedKernelPA, ReducedKernelPA, StreamSVM

from .conftest import BACKENDS

#: name -> factory(backend) with settings that learn something on 60 examples
REGISTRY = {
    "Perceptron": lambda b: refsvm.Perceptron(max_epochs=3, backend=b),
    "PassiveAggressive": lambda b: refsvm.PassiveAggressive(C=0.5, fit_intercept=True, backend=b),
    "ProximalPassiveAggressive": lambda b: refsvm.ProximalPassiveAggressive(C=0.5, backend=b),
    "OnlineLinearSVM": lambda b: refsvm.OnlineLinearSVM(lam=1e-2, batch_size=3, average=True,
                                                        project=True, backend=b),
    "KernelPassiveAggressive": lambda b: refsvm.KernelPassiveAggressive(gamma=0.5, backend=b),
    "OnlineRampSVM": lambda b: refsvm.OnlineRampSVM(C=2.0, gamma=0.5, backend=b),
    "IncrementalSVM": lambda b: refsvm.IncrementalSVM(C=1.0, gamma=0.5, backend=b),
    "ReducedKernelPA": lambda b: ReducedKernelPA(n_reduced=10, gamma=0.5, random_state=0,
                                                 backend=b),
    "ProximalReducedKernelPA": lambda b: ProximalReducedKernelPA(
        n_reduced=10, gamma=0.5, covariance="diagonal", random_state=0, backend=b),
    "ProximalReducedKernelPA-full": lambda b: ProximalReducedKernelPA(
        n_reduced=10, gamma=0.5, covariance="full", random_state=0, backend=b),
    "StreamSVM": lambda b: StreamSVM(C=1.0, backend=b),
    "StreamSVM-rbf-lookahead": lambda b: StreamSVM(C=1.0, kernel="rbf", gamma=0.5, lookahead=5,
                                                   backend=b),
    "StreamSVM-balls": lambda b: StreamSVM(C=1.0, n_balls=3, backend=b),
    "POKER": lambda b: refsvm.POKER(C=1.0, gamma=0.5, backend=b),
}

CASES = [(name, b) for name in REGISTRY for b in BACKENDS]
IDS = [f"{name}-{b}" for name, b in CASES]


def _data(n=60, seed=0, labels=("neg", "pos")):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    X[rng.rand(n, 4) < 0.3] = 0.0
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.randn(n) > 0, labels[1], labels[0])
    return X, y


def _model_bytes(est):
    return pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL)


@parametrize_with_checks([REGISTRY[name](b) for name, b in CASES])
def test_scikit_learn_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_declared_rules_reject_bad_values_by_name(name, backend):
    """Every declared hyper-parameter rule is enforced at fit, naming the parameter."""
    bad = {
        V.Positive: [0.0, -1.0, float("nan"), "1"],
        V.NonNegative: [-1.0, float("inf")],
        V.Finite: [float("nan"), "x"],
        V.Integer: [-1, 2.5, 2**40],
        V.Options: ["no-such-option"],
        V.Boolean: ["yes"],
        V.BooleanOrAuto: ["yes", "car"],
        V.GammaRule: [0.0, "wide"],
        V.RandomStateRule: [-1, "seed"],
        V.DeparturesRule: ["printed", {"no-such-departure": 1}],
    }
    X, y = _data()
    est = REGISTRY[name](backend)
    rules = est._all_parameter_rules()
    assert "backend" in rules
    checked = 0
    for param, rule in rules.items():
        for value in bad[type(rule)]:
            if isinstance(rule, V.Integer) and value == -1 and rule.minimum < 0:
                continue
            est = REGISTRY[name](backend).set_params(**{param: value})
            with pytest.raises(ValueError, match=param):
                est.fit(X, y)
            checked += 1
    assert checked >= len(rules)


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_failed_partial_fit_leaves_the_model_as_it_was(name, backend):
    X, y = _data()
    est = REGISTRY[name](backend).partial_fit(X[:30], y[:30], classes=["neg", "pos"])
    before = _model_bytes(est)
    f_before = est.decision_function(X)
    X_nan = X[30:].copy()
    X_nan[5, 1] = np.nan
    bad_batches = [
        (X_nan, y[30:], "NaN"),
        (X[30:, :3], y[30:], "features"),
        (X[30:], np.where(y[30:] == "pos", "other", "neg"), "labels"),
        (X[30:], y[30:-1], "inconsistent"),
    ]
    for Xb, yb, match in bad_batches:
        with pytest.raises(ValueError, match=match):
            est.partial_fit(Xb, yb)
        assert _model_bytes(est) == before, f"{match}: the model changed"
    np.testing.assert_array_equal(est.decision_function(X), f_before)
    est.partial_fit(X[30:], y[30:])  # and it still learns


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_first_call_needs_classes_and_two_classes(name, backend):
    X, y = _data()
    est = REGISTRY[name](backend)
    with pytest.raises(ValueError, match="classes"):
        est.partial_fit(X, y)
    assert not hasattr(est, "classes_")
    with pytest.raises(ValueError, match="class"):
        REGISTRY[name](backend).fit(X, np.full(X.shape[0], "pos"))


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_pickle_mid_stream_then_continue_equals_uninterrupted(name, backend, n_classes):
    X, y = _data(90)
    if n_classes == 3:
        y = np.where(X[:, 2] > 0.5, "mid", y)
    classes = np.unique(y)
    whole = REGISTRY[name](backend).partial_fit(X[:45], y[:45], classes=classes)
    resumed = pickle.loads(pickle.dumps(whole))
    whole.partial_fit(X[45:], y[45:])
    resumed.partial_fit(X[45:], y[45:])
    np.testing.assert_array_equal(resumed.decision_function(X), whole.decision_function(X))


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
def test_dense_and_csr_give_the_same_model(name, backend):
    X, y = _data()
    dense = REGISTRY[name](backend).fit(X, y)
    csr = REGISTRY[name](backend).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(csr.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_backends_give_the_same_model(name):
    X, y = _data()
    cy = REGISTRY[name]("cython").fit(X, y)
    py = REGISTRY[name]("python").fit(X, y)
    np.testing.assert_allclose(cy.decision_function(X), py.decision_function(X),
                               rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_cython_backend_never_falls_back(name, monkeypatch):
    X, y = _data()
    est = REGISTRY[name]("cython")
    monkeypatch.setattr(type(est), "_compiled", "refsvm._no_such_module")
    with pytest.raises(ImportError, match="backend='python'"):
        est.fit(X, y)


@pytest.mark.parametrize("name,backend", CASES, ids=IDS)
@pytest.mark.parametrize("load_into", BACKENDS)
def test_save_then_load_into_either_twin_and_continue(name, backend, load_into, tmp_path):
    """est.save / refsvm.load: no code runs on load; the loaded model continues exactly
    (bit for bit in the same twin, to rounding in the other)."""
    X, y = _data(90)
    whole = REGISTRY[name](backend).partial_fit(X[:45], y[:45], classes=["neg", "pos"])
    path = whole.save(tmp_path / "model.npz")
    with np.load(path, allow_pickle=False) as npz:  # plain arrays only
        assert "__meta__" in npz.files
    loaded = refsvm.load(path, backend=load_into)
    assert loaded.backend == load_into and type(loaded) is type(whole)
    np.testing.assert_allclose(loaded.decision_function(X), whole.decision_function(X),
                               rtol=0, atol=0)
    whole.partial_fit(X[45:], y[45:])
    loaded.partial_fit(X[45:], y[45:])
    if load_into == backend:
        np.testing.assert_array_equal(loaded.decision_function(X), whole.decision_function(X))
    else:
        np.testing.assert_allclose(loaded.decision_function(X), whole.decision_function(X),
                                   rtol=1e-9, atol=1e-10)


def test_load_refuses_foreign_and_future_files(tmp_path):
    import json

    X, y = _data()
    path = REGISTRY["PassiveAggressive"]("python").fit(X, y).save(tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(str(arrays["__meta__"][()]))
    for change, match in (({"format_version": 99}, "format 99"),
                          ({"estimator": "os.system"}, "unknown estimator")):
        arrays["__meta__"] = np.array(json.dumps({**meta, **change}))
        np.savez(tmp_path / "bad.npz", **arrays)
        with pytest.raises(ValueError, match=match):
            refsvm.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match="not a refsvm model"):
        refsvm.load(tmp_path / "other.npz")


#: the registered estimators with a kernel width ``gamma`` (every kernel estimator but
#: StreamSVM's linear forms)
_GAMMA_CASES = [n for n in REGISTRY
                if REGISTRY[n]("python").get_params().get("kernel", "linear") != "linear"]


@pytest.mark.parametrize("name", _GAMMA_CASES)
def test_gamma_scale_is_resolved_once_on_the_first_batch(name, monkeypatch):
    """gamma="scale" is resolved on the data that starts the model, once for all the
    one-vs-rest problems (one read of X, not one per class), and kept by later calls."""
    import refsvm._validation as V

    calls = []
    real = V.resolve_gamma

    def counting(gamma, X):
        calls.append(X.shape)
        return real(gamma, X)

    monkeypatch.setattr(V, "resolve_gamma", counting)
    X, y = _data(90, labels=("a", "b"))
    y = np.resize(np.array(["a", "b", "c"]), X.shape[0])  # three classes: three problems
    est = REGISTRY[name]("cython").set_params(gamma="scale")
    est.fit(X, y)
    assert len(calls) == 1
    expected = 1.0 / (X.shape[1] * X.var())
    assert est._gamma_ == pytest.approx(expected, rel=1e-12)
    est.partial_fit(2.0 * X, y)  # later batches keep the model's gamma
    assert len(calls) == 1 and est._gamma_ == pytest.approx(expected, rel=1e-12)
