"""The departures of OnlineSVMR from the printed Algorithms 1-2 (``departures=``).

- the paper form (``departures="paper"``) of the reference and of the compiled twin agree
  after every example, dense and CSR, whatever the departure parameters say
  (``shrinking``, ``keep_rows``, ``stop``, ``warmup``, ``fit_intercept``);
- the paper form meets the paper's guarantee (invariants (a)-(c) of ALGORITHMS.md
  section 1, with V = {i in I : g_i <= 2} exactly after every update) where it ends, and
  raises where the printed steps 9-27 cycle for ever;
- an unknown departure or a bad setting is a ValueError naming it, for the states and the
  estimators, and leaves a fitted estimator unchanged;
- saving and loading (pickle) keeps the departures.
"""

import pickle

import numpy as np
import pytest

from refsvm import Greedy, OnlineASVMR, OnlineRampSVM, QueryAll
from refsvm.core.departures import is_paper_form, resolve
from refsvm.core.kernels import get_row
from refsvm.core.stream import restore_state
from refsvm.datasets import make_two_gaussians
from refsvm.ramp import online_svmr as ramp
from refsvm.ramp.departures import DEPARTURES

from ..conftest import to_csr as as_csr
from .test_online_svmr import (_close_pair_stream, _dup_stream, check_invariants,
                               compare_states, noisy_gauss)

_ramp = pytest.importorskip("refsvm.ramp._online_svmr")

#: every departure parameter of the state switched on: the paper form must override them
ALL_ON = dict(shrinking=True, keep_rows=True, stop="relative", warmup=20, fit_intercept=True)
STREAMS = {"gauss": lambda: noisy_gauss(160, 1), "duplicates": lambda: _dup_stream(60, 5),
           "close-pairs": lambda: _close_pair_stream(30, 5)}


def test_the_paper_form_turns_every_departure_off():
    paper = resolve(DEPARTURES, "paper")
    assert is_paper_form(DEPARTURES, paper)
    assert not is_paper_form(DEPARTURES, resolve(DEPARTURES, None))
    for mod in (ramp, _ramp):
        s = mod.OnlineSVMR(2, departures="paper", **ALL_ON)
        assert s.departures == paper
        assert (s.shrinking, s.keep_rows, s.stop, s.warmup, s.fit_intercept) == (
            False, False, "gain", 0, False)
        assert (s.singular_pairs, s.pair_eta, s.cycle_window, s.hold_out) == (False, 0.0, 0,
                                                                              False)
        d = mod.OnlineSVMR(2, **ALL_ON)
        assert (d.shrinking, d.keep_rows, d.stop, d.warmup, d.fit_intercept) == (
            True, True, "relative", 20, True)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("C", [1.0, 10.0])
@pytest.mark.parametrize("stream", list(STREAMS))
def test_paper_form_twins_agree_and_meet_the_invariants(stream, C, sparse):
    """The paper form of both twins, the same state after every example; the invariants
    (a)-(c) after every example, V = {g <= 2} exactly after every update (nothing held)."""
    X, y = STREAMS[stream]()
    XX = as_csr(X) if sparse else X
    params = dict(C=C, gamma=0.5, tol=1e-3, min_gain=1e-5, departures="paper", **ALL_ON)
    a = ramp.OnlineSVMR(2, sparse, **params)
    b = _ramp.OnlineSVMR(2, sparse, **params)
    updates = 0
    for t in range(y.shape[0]):
        x = get_row(XX, t)
        assert a.step(x, y[t]) == b.step(x, y[t])
        sa = a.get_state()
        compare_states(sa, b.get_state(), f"example {t}", atol=1e-12 * C)
        assert sa["held"].shape[0] == 0 and sa["parked"].shape[0] == 0
        check_invariants(sa, a, X[sa["I"]], C, 1e-3, 1e-5, a.n_updates > updates)
        updates = a.n_updates
    assert a.n_shrink_rounds == 0 and a.n_updates > 0
    assert a.finish(1e-9) == b.finish(1e-9) == 0           # no finishing step as printed
    compare_states(a.get_state(), b.get_state(), "after finish", atol=1e-12 * C)


@pytest.mark.parametrize("twin", [pytest.param(ramp, id="python", marks=pytest.mark.slow),
                                  pytest.param(_ramp, id="cython")])
def test_paper_form_cycles_on_the_gauss_stream(twin):
    """Gauss stream (seed 0), C = 1, gamma = 0.5: at arrival 956 the printed steps 9-27
    cycle for ever (example 249 leaves V and re-enters it); the paper form's guard raises
    after CCCP_ROUNDS_MAX rounds, the hold-out alone ends the update."""
    X, y = make_two_gaussians(5000, random_state=0)
    X, y = np.ascontiguousarray(X[:957]), y[:957].astype(np.float64)
    s = twin.OnlineSVMR(2, False, C=1.0, gamma=0.5, departures="paper")
    for t in range(956):
        s.step(X[t], y[t])
    with pytest.raises(RuntimeError, match="did not end after 1000 rounds at arrival 956"):
        s.step(X[956], y[956])
    assert s.n_cccp_rounds >= ramp.CCCP_ROUNDS_MAX


BAD = [({"pair_etaa": 0.1}, "pair_etaa"), ({"pair_eta": -1.0}, "pair_eta"),
       ({"hold_out": 1}, "hold_out"), ({"cycle_window": 65}, "cycle_window"),
       ({"base": "printed"}, "base"), ("printed", "departures")]


@pytest.mark.parametrize("departures,name", BAD)
def test_bad_departures_are_rejected_naming_them(departures, name):
    for mod in (ramp, _ramp):
        with pytest.raises(ValueError, match=name):
            mod.OnlineSVMR(2, departures=departures)
    for cls in (OnlineASVMR, QueryAll, Greedy):
        with pytest.raises(ValueError, match=name):
            cls(departures=departures)


@pytest.mark.parametrize("backend", ["cython", "python"])
@pytest.mark.parametrize("departures,name", BAD[:2])
def test_bad_departures_leave_a_fitted_estimator_unchanged(backend, departures, name):
    X, y = make_two_gaussians(120, random_state=2)
    est = OnlineRampSVM(C=1.0, gamma=0.5, backend=backend).fit(X, y)
    before = est.decision_function(X)
    state = est._states[0].get_state()
    est.set_params(departures=departures)
    for call in (lambda: est.fit(X, y), lambda: est.partial_fit(X, y)):
        with pytest.raises(ValueError, match=name):
            call()
        np.testing.assert_array_equal(est.decision_function(X), before)
        compare_states(state, est._states[0].get_state(), "after the refused call", atol=0.0)


@pytest.mark.parametrize("mod", [ramp, _ramp], ids=["python", "cython"])
def test_save_load_keeps_the_departures(mod):
    X, y = noisy_gauss(120, 3)
    departures = {"base": "paper", "hold_out": True, "pair_eta": 0.01, "cycle_window": 16}
    s = mod.OnlineSVMR(2, C=5.0, gamma=0.5, departures=departures, shrinking=True)
    for t in range(80):
        s.step(X[t], y[t])
    r = pickle.loads(pickle.dumps(s))
    assert r.departures == s.departures == resolve(DEPARTURES, departures)
    assert (r.pair_eta, r.cycle_window, r.hold_out, r.shrinking) == (0.01, 16, True, False)
    for t in range(80, 120):
        assert s.step(X[t], y[t]) == r.step(X[t], y[t])
    compare_states(s.get_state(), r.get_state(), "resumed", atol=0.0)
    # a file without departures loads as the defaults
    params = s.init_params()
    del params["departures"]
    old = restore_state(type(s), params, s.save_state())
    assert old.departures == resolve(DEPARTURES, None)


def test_estimator_paper_form_is_the_printed_state():
    """``OnlineRampSVM(departures="paper")`` runs the printed algorithm: its state equals the
    reference state's paper form over the same stream (no shrinking, parked rows, relative
    rule, warm-up, bias or finishing step, whatever the estimator's other parameters)."""
    X, y = make_two_gaussians(200, random_state=4)
    est = OnlineRampSVM(C=2.0, gamma=0.5, max_non_sv=None, departures="paper").fit(X, y)
    s = ramp.OnlineSVMR(2, C=2.0, gamma=0.5, min_gain=est.min_gain, departures="paper")
    for t in range(y.shape[0]):
        s.step(X[t], 1.0 if y[t] == est.classes_[1] else -1.0)
    compare_states(s.get_state(), est._states[0].get_state(), "estimator")
    assert est._states[0].departures == resolve(DEPARTURES, "paper")
    assert est.intercept_[0] == 0.0
    again = pickle.loads(pickle.dumps(est))
    assert again._states[0].departures == est._states[0].departures


def test_active_learners_take_the_departures():
    """The paper form of OnlineASVMR overrides the warm-up (which would query the first 50
    examples) and the bias: the same queries and model as without them."""
    X, y = make_two_gaussians(300, random_state=5)
    paper = OnlineASVMR(C=1.0, gamma=0.5, warmup=50, fit_intercept=True, departures="paper")
    plain = OnlineASVMR(C=1.0, gamma=0.5, departures="paper")
    curve = paper.run(X, y)
    assert np.array_equal(curve.queried, plain.run(X, y).queried)
    assert paper.state.departures == resolve(DEPARTURES, "paper") and paper.state.warmup == 0
    compare_states(paper.state.get_state(), plain.state.get_state(), "paper forms", atol=0.0)
    warm = OnlineASVMR(C=1.0, gamma=0.5, warmup=50).run(X, y)
    assert warm.queried[:50].tolist() == list(range(50))
