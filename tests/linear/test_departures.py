"""The linear family's departures (refsvm.linear.departures): the paper form of both
twins after every step, the paper's guarantees in the paper form, the failures the
departures answer, bad settings, persistence."""

import pickle

import numpy as np
import pytest

from refsvm.core.kernels import get_row
from refsvm.core.stream import restore_state
from refsvm.linear import (_online_linear_svm, _passive_aggressive, _reduced_kernel_pa,
                           online_linear_svm, passive_aggressive, reduced_kernel_pa)
from refsvm.linear.departures import DEPARTURES
from refsvm.linear.estimators import (OnlineLinearSVM, PassiveAggressive, Perceptron,
                                      ProximalPassiveAggressive, ProximalReducedKernelPA,
                                      ReducedKernelPA)

from ..conftest import BACKENDS, assert_states_equal, sparse_stream, to_csr

TWINS = {
    "PerceptronState": (passive_aggressive, _passive_aggressive),
    "PAState": (passive_aggressive, _passive_aggressive),
    "PAmState": (passive_aggressive, _passive_aggressive),
    "PegasosState": (online_linear_svm, _online_linear_svm),
    "ReducedKernelPAState": (reduced_kernel_pa, _reduced_kernel_pa),
    "ReducedKernelPAmState": (reduced_kernel_pa, _reduced_kernel_pa),
}
CASES = [
    ("PerceptronState", {}),
    ("PAState", {"variant": 0, "fit_intercept": True}),
    ("PAmState", {"variant": 1, "C": 0.5, "gamma": 0.1, "fit_intercept": True}),
    ("PegasosState", {"lam": 0.01, "batch_size": 3, "project": True, "average": True}),
    ("ReducedKernelPAState", {"variant": 0, "gamma": 0.5}),
    ("ReducedKernelPAmState", {"variant": 1, "gamma": 0.5, "proximal_weight": 0.1}),
    ("ReducedKernelPAmState", {"variant": 0, "gamma": 0.5, "proximal_weight": 0.1,
                               "covariance": "full"}),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
PAPER = {name: d.paper for name, d in DEPARTURES.items()}
DEFAULT = {name: d.default for name, d in DEPARTURES.items()}
ESTIMATORS = [Perceptron, PassiveAggressive, ProximalPassiveAggressive, OnlineLinearSVM,
              ReducedKernelPA, ProximalReducedKernelPA]


def _make(name, kw, X, sparse, twin, departures="paper"):
    kw = dict(kw)
    if name.startswith("Reduced"):
        kw.update(reduced=to_csr(X[:12]) if sparse else X[:12].copy(), eps=1e-6)
    return getattr(TWINS[name][1 if twin else 0], name)(X.shape[1], sparse,
                                                        departures=departures, **kw)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_paper_form_twins_agree_after_every_step(name, kw, sparse):
    X, y = sparse_stream(n=160, d=6, density=0.6, seed=4)
    M = to_csr(X) if sparse else X
    ref, twin = (_make(name, kw, X, sparse, t) for t in (False, True))
    assert ref.departures == twin.departures == PAPER
    for t in range(X.shape[0]):
        changed = ref.step(get_row(M, t), y[t])
        assert twin.step(get_row(M, t), y[t]) == changed, f"step {t}"
        assert_states_equal(ref.get_state(), twin.get_state(), rtol=1e-9, atol=1e-11,
                            where=f"{name} step {t}")
    assert ref.n_updates > 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,kw", [
    ("PAState", {"variant": 0, "fit_intercept": True}),
    ("PAmState", {"variant": 0, "gamma": 0.1, "fit_intercept": True}),
    ("ReducedKernelPAState", {"variant": 0, "gamma": 0.5}),
    ("ReducedKernelPAmState", {"variant": 0, "gamma": 0.5, "proximal_weight": 0.1}),
], ids=["PA", "PAm", "RKPA", "RKPAm"])
def test_paper_form_meets_the_pa_guarantee(backend, name, kw):
    """PA / PAm / RKPA / RKPAm (the unclipped variants, paper form): every update solves
    its constraint exactly -- the new margin on the example is 1 (PAm: whenever α > 0,
    the closed form of Eq. 9 with the proximal step included)."""
    X, y = sparse_stream(n=120, d=6, density=0.7, seed=9)
    state = _make(name, kw, X, False, backend == "cython")
    checked = 0
    for t in range(X.shape[0]):
        before = state.get_state()
        if state.step(X[t], y[t]):
            after = state.get_state()
            margin = y[t] * state.decision_function(X[t:t + 1])[0]
            if name == "PAmState":
                phi, (wp, bp), w, gamma = X[t], state.proximal(), before["w"], kw["gamma"]
            elif name == "ReducedKernelPAmState":
                phi = state.feature_map.transform_rows(X[t:t + 1])[0]
                wp, bp = state.pa.proximal()
                w, gamma = before["z"], kw["proximal_weight"]
            if "PAm" in name:   # α = max(0, numer/sq): clipped, only the proximal step
                if 1.0 - y[t] * (phi @ w + before["b"]) - gamma * y[t] * (phi @ wp + bp) <= 0:
                    continue
            assert margin == pytest.approx(1.0, abs=1e-9), (t, after)
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("backend", BACKENDS)
def test_perceptron_paper_form_meets_novikoff(backend):
    """The Perceptron (the slides' lines, no departure): on separable data with margin
    γ and radius R, at most (2R/γ)² mistakes (bias as the weight of R), and fit stops."""
    rng = np.random.RandomState(3)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0.2, 1, -1)
    keep = np.abs(X[:, 0] + X[:, 1] - 0.2) / np.sqrt(2) > 0.1   # margin 0.1
    X, y = X[keep], y[keep]
    clf = Perceptron(max_epochs=200, departures="paper", backend=backend).fit(X, y)
    R = np.sqrt((X ** 2).sum(1).max())
    assert clf.score(X, y) == 1.0 and clf.n_epochs_ < 200
    assert clf.n_mistakes_ <= (2 * R / 0.1) ** 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_printed_variance_of_a_constant_feature(backend):
    """The failure ``variance_roundoff`` answers (its module's docstring): a feature
    constant within each class; the printed variance is a cancellation residue and the
    quasi-LDA weight on it is 1e15 and more; with the departure it is 0."""
    rng = np.random.RandomState(0)
    y = np.where(rng.rand(40) < 0.5, 1.0, -1.0)
    X = rng.randn(40, 3)
    X[:, 0] = np.where(y > 0, 0.1, -0.3)
    mod = TWINS["PAmState"][1 if backend == "cython" else 0]
    out = {}
    for deps in ("paper", None):
        state = mod.PAmState(3, variant=1, C=1.0, gamma=0.1, departures=deps)
        state.run(X, y, np.arange(40))
        out[deps] = (state.proximal()[0], np.linalg.norm(state.get_state()["w"]))
    assert abs(out["paper"][0][0]) > 1e12 and out["paper"][1] > 1e12
    assert out[None][0][0] == 0.0 and out[None][1] < 10


@pytest.mark.parametrize("backend", BACKENDS)
def test_rkpam_full_paper_form(backend):
    """The failure ``shrinkage`` answers: without the ridge the printed COV₊ + COV₋ has
    no inverse until (n₊ − 1) + (n₋ − 1) ≥ m̃ (no proximal model before), and then its
    inverse makes z large; the paper form refreshes at every example."""
    rng = np.random.RandomState(3)
    X = rng.uniform(-1, 1, size=(120, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    mod = TWINS["ReducedKernelPAmState"][1 if backend == "cython" else 0]
    norms = {}
    for deps in ("paper", None):
        state = mod.ReducedKernelPAmState(2, reduced=X[:10], gamma=1.5, eps=1e-8,
                                          proximal_weight=0.1, covariance="full",
                                          departures=deps)
        for t in range(120):
            state.step(X[t], y[t])
            s = state.get_state()
            if deps == "paper" and s["n_pos"] >= 2 and s["n_neg"] >= 2:
                if s["chol_n_pos"]:   # refreshed at this very example
                    assert (s["chol_n_pos"], s["chol_n_neg"]) == (s["n_pos"], s["n_neg"])
                    assert s["chol_mu"] == 0.0
                if s["n_pos"] + s["n_neg"] - 2 < 10:
                    assert s["chol_n_pos"] == 0
        norms[deps] = np.linalg.norm(state.get_state()["z"])
    assert norms["paper"] > 100 * norms[None]   # 1.6e4 against 25


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_bad_departures_raise_and_leave_the_model(Estimator, backend):
    X, y = sparse_stream(n=120, d=5, seed=2)
    kw = {"n_reduced": 10} if "Reduced" in Estimator.__name__ else {}
    clf = Estimator(backend=backend, **kw).partial_fit(X[:60], y[:60], classes=[-1, 1])
    before = pickle.dumps(clf)
    for bad, name in (({"nope": 1.0}, "nope"), ({"passive_rtol": -1.0}, "passive_rtol"),
                      ({"refresh_growth": 0.5}, "refresh_growth"),
                      ({"variance_roundoff": "x"}, "variance_roundoff"),
                      ("printed", "departures")):
        clf.set_params(departures=bad)
        with pytest.raises(ValueError, match=name):
            clf.partial_fit(X[60:], y[60:])
        with pytest.raises(ValueError, match=name):
            Estimator(backend=backend, departures=bad, **kw).fit(X, y)
    clf.set_params(departures=None)
    assert pickle.dumps(clf) == before


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_state_constructors_refuse_bad_departures(name, kw):
    X, _ = sparse_stream(n=20, d=6, seed=1)
    for twin in (False, True):
        with pytest.raises(ValueError, match="nope"):
            _make(name, kw, X, False, twin, departures={"nope": 1})
        with pytest.raises(ValueError, match="shrinkage"):
            _make(name, kw, X, False, twin, departures={"shrinkage": float("nan")})


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_save_load_keeps_the_departures(name, kw):
    """init_params holds the resolved departures: saved in one twin, the paper form
    resumes in the other (and in a pickle); a file without them loads as the defaults."""
    X, y = sparse_stream(n=120, d=6, density=0.6, seed=6)
    deps = {"base": "paper", "variance_roundoff": 1e-15}
    for src, dst in ((False, True), (True, False)):
        a = _make(name, kw, X, False, src, departures=deps)
        a.run(X[:60], y[:60], np.arange(60))
        params = a.init_params()
        assert params["departures"] == {**PAPER, "variance_roundoff": 1e-15}
        b = restore_state(getattr(TWINS[name][1 if dst else 0], name), params, a.save_state())
        c = pickle.loads(pickle.dumps(a))
        assert b.departures == c.departures == a.departures
        for s in (a, b, c):
            s.run(X[60:], y[60:], np.arange(60))
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11)
        assert_states_equal(a.get_state(), c.get_state(), rtol=0, atol=0)
        old = {k: v for k, v in params.items() if k != "departures"}
        if name.startswith("Reduced"):
            old["reduced"] = X[:12].copy()
        assert getattr(TWINS[name][1 if dst else 0], name)(**old).departures == DEFAULT


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_estimator_paper_form_in_both_backends(Estimator):
    """departures="paper" reaches both twins' states; the backends agree, and an
    estimator pickled in the paper form predicts the same after loading."""
    X, y = sparse_stream(n=150, d=5, seed=8)
    kw = {"n_reduced": 10, "random_state": 0} if "Reduced" in Estimator.__name__ else {}
    if Estimator is ProximalReducedKernelPA:   # the printed full inverse: test_rkpam_full_*
        kw["covariance"] = "diagonal"
    fits = [Estimator(backend=b, departures="paper", **kw).fit(X, y) for b in BACKENDS]
    for clf in fits:
        assert all(s.departures == PAPER for s in clf._states)
        back = pickle.loads(pickle.dumps(clf))
        assert back.departures == "paper"
        np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    np.testing.assert_allclose(fits[0].decision_function(X), fits[1].decision_function(X),
                               rtol=1e-8, atol=1e-10)
