"""IncrementalSVM's departures from the printed method (``refsvm/idsvm/departures/``).

``departures="paper"`` runs Cauwenberghs & Poggio's increments as printed in both twins;
the twins agree after every step in that form as in the default one; the paper form meets
the paper's guarantee (the exact SVM of the examples learned) where it terminates, and on
a stream where it loses exactness the exactness check (a guard that stays on) rolls the
example back; settings are per state, checked, and survive save/load.
"""

import pickle

import numpy as np
import pytest

from refsvm import IncrementalSVM, load
from refsvm.core.departures import is_paper_form, resolve
from refsvm.datasets import make_two_gaussians
from refsvm.idsvm import incremental_svm as idsvm
from refsvm.idsvm.departures import DEPARTURES
from refsvm.idsvm.incremental_svm import ExactnessError

from ..conftest import BACKENDS, to_csr
from .test_oracle import assert_matches_svc
from .test_stress import _equal_models
from .test_twins import same

_idsvm = pytest.importorskip("refsvm.idsvm._incremental_svm")
MODULES = {"python": idsvm, "cython": _idsvm}


def _stream(n, seed):
    X, y = make_two_gaussians(n, random_state=seed)
    return X, y.astype(float)


def _noisy_stream(n, seed):
    """Uniform in [-2, 2]^2, a third positive at random: ~100 margin vectors, a bordered
    matrix of condition ~1e11 (tests/idsvm/test_stress.py)."""
    rng = np.random.RandomState(seed)
    return rng.uniform(-2, 2, (n, 2)), np.where(rng.rand(n) < 0.33, 1.0, -1.0)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("kernel,C,kw", [("rbf", 10.0, {"gamma": 0.5}), ("linear", 1.0, {})])
def test_paper_form_twins_agree_after_every_step(sparse, kernel, C, kw):
    X, y = _stream(120, 4)
    Xin = to_csr(X) if sparse else X
    a = idsvm.IncrementalSVMState(2, sparse, C=C, kernel=kernel, departures="paper", **kw)
    b = _idsvm.IncrementalSVMState(2, sparse, C=C, kernel=kernel, departures="paper", **kw)
    for i in range(120):
        assert a.run(Xin, y, [i]) == b.run(Xin, y, [i]), i
        same(a, b, f"step {i}")
    for ids in ([int(a.support_ids()[0])], [3, 50], [int(a.support_ids()[-1])]):
        a.unlearn(ids)
        b.unlearn(ids)
        same(a, b, f"unlearn {ids}")
    np.testing.assert_allclose(b.loo_decisions(), a.loo_decisions(), rtol=1e-9, atol=1e-9)
    same(a, b, "after loo")


@pytest.mark.parametrize("backend", BACKENDS)
def test_paper_form_runs_every_departure_off(backend):
    """The printed form in both twins: no correction of beta, no refresh or
    refactorisation of R, no repair, no column cache (so more kernel evaluations than the
    defaults, for the same model), and two states in one process with different settings."""
    X, y = _stream(150, 2)
    paper = MODULES[backend].IncrementalSVMState(2, C=10.0, gamma=0.5, refresh_every=5,
                                                 departures="paper")
    default = MODULES[backend].IncrementalSVMState(2, C=10.0, gamma=0.5, refresh_every=5)
    paper.run(X, y, range(150))
    default.run(X, y, range(150))
    assert is_paper_form(DEPARTURES, paper.departures)
    assert paper.departures == resolve(DEPARTURES, "paper")
    assert default.departures == resolve(DEPARTURES, None)
    s, d = paper.get_state(), default.get_state()
    assert s["n_refresh"] == 0 and s["n_repairs"] == 0 and s["n_pivot_refresh"] == 0
    assert not s["refined"] and s["cached"].size == 0
    assert d["n_refresh"] > 0 and d["cached"].size > 0
    assert s["n_kernel_evals"] > d["n_kernel_evals"]
    np.testing.assert_allclose(paper.decision_function(X), default.decision_function(X),
                               atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel,C,kw", [("rbf", 1.0, {"gamma": 0.5}), ("linear", 10.0, {}),
                                         ("poly", 0.5, {"gamma": 0.5, "degree": 2,
                                                        "coef0": 1.0})])
def test_paper_form_is_the_exact_svm(backend, kernel, C, kw):
    """The paper's guarantee where the printed form terminates: after the stream, after
    unlearning and after leave-one-out, the model is the SVM of the examples kept (LIBSVM
    at tight tolerance), and its own KKT conditions hold to round-off."""
    X, y = _stream(80, 7)
    st = MODULES[backend].IncrementalSVMState(2, C=C, kernel=kernel, departures="paper",
                                              **{"gamma": 0.5, "degree": 2, "coef0": 1.0,
                                                 **kw})
    st.run(X, y, range(80))
    assert_matches_svc(st, X, y, kernel, kw, where="learned")
    assert st.check()["kkt"] < 1e-9
    st.unlearn(range(10))
    keep = np.arange(10, 80)
    assert_matches_svc(st, X[keep], y[keep], kernel, kw, where="unlearned")
    before = st.decision_function(X)
    st.loo_decisions()
    np.testing.assert_allclose(st.decision_function(X), before, atol=1e-8)


@pytest.mark.parametrize("backend", [
    "cython", pytest.param("python", marks=pytest.mark.slow)])  # the reference: 30 s
def test_paper_form_losing_exactness_rolls_back(backend):
    """On the noisy stream the printed increments (beta = -R m, no refinement, no repair)
    lose exactness within a few hundred examples; the exactness check -- a guard, on in
    the paper form -- then raises ExactnessError and the example is rolled back: the
    state is the paper form's model of the examples before it."""
    n = 600 if backend == "cython" else 450
    X, y = _noisy_stream(n, 0)
    cls = MODULES[backend].IncrementalSVMState
    st = cls(2, C=10.0, gamma=0.5, departures="paper")
    for i in range(n):
        try:
            st.step(X[i], y[i])
        except ExactnessError as exc:
            assert exc.example == i and "rolled back" in str(exc)
            break
    else:
        pytest.skip("the printed form stayed exact on this stream")
    assert st.get_state()["n_seen"] == i and st.n_rollbacks == 1
    prefix = cls(2, C=10.0, gamma=0.5, departures="paper")
    prefix.run(X, y, range(i))
    _equal_models(st, prefix, "rolled back")
    # the defaults learn the same stream exactly
    default = cls(2, C=10.0, gamma=0.5)
    default.run(X, y, range(i + 1))
    assert default.n_rollbacks == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad,name", [({"bogus": 1}, "bogus"), ({"repair": -1}, "repair"),
                                      ({"kkt_tol": "tight"}, "kkt_tol"),
                                      ({"polish": 1}, "polish"), ("papers", "papers")])
def test_bad_departures_raise_and_leave_a_fitted_estimator_unchanged(backend, bad, name):
    X, y = _stream(60, 1)
    est = IncrementalSVM(C=1.0, gamma=0.5, backend=backend).fit(X[:40], y[:40])
    before = est.decision_function(X)
    state = est._states[0].save_state()
    est.set_params(departures=bad)
    for call in (lambda: est.partial_fit(X[40:], y[40:]), lambda: est.fit(X, y)):
        with pytest.raises(ValueError, match=name):
            call()
        np.testing.assert_array_equal(est.decision_function(X), before)
        after = est._states[0].save_state()
        np.testing.assert_array_equal(after["alpha"], state["alpha"])
    with pytest.raises(ValueError, match=name):
        MODULES[backend].IncrementalSVMState(2, departures=bad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_save_and_load_keep_the_departures(backend, tmp_path):
    X, y = _stream(60, 3)
    settings = {"base": "paper", "repair": 2, "kkt_tol": 1e-8}
    est = IncrementalSVM(C=1.0, gamma=0.5, departures=settings, backend=backend).fit(X, y)
    want = resolve(DEPARTURES, settings)
    assert est._states[0].departures == want
    est.save(tmp_path / "m.npz")
    for other in BACKENDS:
        back = load(tmp_path / "m.npz", backend=other)
        assert back.departures == settings and back._states[0].departures == want
        np.testing.assert_allclose(back.decision_function(X), est.decision_function(X),
                                   atol=1e-12)
    st = est._states[0]
    assert pickle.loads(pickle.dumps(st)).departures == want
    # a state saved without the parameter (an older file) resumes with the defaults
    params = {k: v for k, v in st.init_params().items() if k != "departures"}
    old = MODULES[backend].IncrementalSVMState(**params)
    old.load_state(st.save_state())
    assert old.departures == resolve(DEPARTURES, None)


def test_paper_form_fits_example_by_example():
    """``fit`` with the paper form learns example by example (the paper's method), not
    by the batch start of the defaults."""
    X, y = _stream(60, 5)
    assert IncrementalSVM(gamma=0.5).fit(X, y).fit_paths_ == ["libsvm"]
    paper = IncrementalSVM(gamma=0.5, departures="paper").fit(X, y)
    assert paper.fit_paths_ == ["incremental"]
    inc = IncrementalSVM(gamma=0.5, fit_method="incremental").fit(X, y)
    np.testing.assert_allclose(paper.decision_function(X), inc.decision_function(X),
                               atol=1e-8)


def test_the_docs_quote_each_statement_once():
    """Each code quote of docs/cauwenberghs_poggio.rst (the form tests/test_docs.py
    checks) occurs exactly once in its file, so that a quote locates its line."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = re.sub(r"\n\s+", " ", (root / "docs" / "cauwenberghs_poggio.rst").read_text())
    quotes = re.findall(r"``(refsvm/[\w/]+\.(?:pyx?|pxd))``: ``(.+?)``(?!`)", text)
    assert len(quotes) >= 20
    for path, code in quotes:
        assert (root / path).read_text(encoding="utf-8").count(code) == 1, (path, code)
    # the page points at the printed method and at every departure's unit
    for name in ("incremental_svm.py", "departures/refinement.py", "departures/repair.py",
                 "departures/exactness.py", "departures/rollback.py", "departures/polish.py",
                 "departures/drift_refresh.py"):
        assert any(path == f"refsvm/idsvm/{name}" for path, _ in quotes), name
