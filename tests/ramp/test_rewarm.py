"""The departure ``rewarm`` of OnlineSVMR (refsvm/ramp/departures/rewarm.py).

- the printed updates cascade on the noisy Checkerboard with a wide kernel: more
  unlearnings than arrivals (the failure the departure answers);
- with the departure the stream is learned in hinge stretches, with far fewer steps, and
  the model is as accurate; on a stream whose pass unlearns fewer than ``rewarm`` = 5 %
  of its arrivals nothing changes;
- both twins take the same path through the stretches, example by example, and the
  finishing step ends a stretch under way in both;
- the stretch is part of the saved state (pickle round trip mid-stretch; a state saved
  without it loads with the warm-up's bound; a bad value is refused naming it).
"""

import pickle

import numpy as np
import pytest

from refsvm import OnlineRampSVM
from refsvm._state_checks import check_state
from refsvm.core.kernels import get_row
from refsvm.datasets import make_checkerboard, make_two_gaussians
from refsvm.ramp import online_svmr as ramp

from .test_online_svmr import check_invariants, compare_states

_ramp = pytest.importorskip("refsvm.ramp._online_svmr")

#: the kernel width the estimator's gamma="scale" gives on the board (1 / (2 Var x))
GAMMA = 0.375


def ncheck(n, seed):
    X, y = make_checkerboard(n, noise=0.15, random_state=seed)
    return np.ascontiguousarray(X, dtype=np.float64), np.where(y > 0, 1.0, -1.0)


def learn(mod, X, y, **params):
    s = mod.OnlineSVMR(2, False, C=10.0, gamma=GAMMA, tol=1e-3, min_gain=3e-6,
                       max_non_sv=100, shrinking=True, keep_rows=True, fit_intercept=True,
                       stop="relative", warmup=200, **params)
    for t in range(y.shape[0]):
        s.step(X[t], y[t])
    return s


def test_the_printed_updates_cascade_and_the_stretches_end_it():
    X, y = ncheck(2000, 0)
    Xt, yt = make_checkerboard(4000, random_state=1)
    yt = np.where(yt > 0, 1.0, -1.0)
    printed = learn(_ramp, X, y, departures={"rewarm": 0.0})
    assert printed.hinge_until == 200
    assert printed.n_unlearned > printed.n_seen            # the cascade
    ours = learn(_ramp, X, y)
    assert ours.hinge_until >= ours.n_seen                 # a stretch under way
    assert ours.n_steps < printed.n_steps / 3
    ours.finish(1e-9)
    assert ours.outlier_bound == 2.0 and ours.hinge_until == 1999
    printed.finish(1e-9)
    acc = [np.mean(np.sign(s.decision_function(Xt)) == yt) for s in (printed, ours)]
    assert acc[1] > acc[0] - 0.01          # (10,000 examples: docs/defaults.rst's table)


def test_a_stream_that_does_not_cascade_is_unchanged():
    X, y = make_two_gaussians(1200, distance=3.0, random_state=3)
    X, y = np.ascontiguousarray(X), y.astype(np.float64)
    a = learn(_ramp, X, y)
    b = learn(_ramp, X, y, departures={"rewarm": 0.0})
    assert 0 < b.n_unlearned < 0.05 * b.n_seen             # the rule looked and held
    assert a.hinge_until == b.hinge_until == 200
    compare_states(a.get_state(), b.get_state(), "end", atol=0.0)


@pytest.mark.parametrize("seed,cap", [(0, 0), (1, 0), (0, 70)])
def test_twins_agree_through_the_stretches(seed, cap):
    """Both twins, example by example, with the rule made to fire early, then the
    finishing step ends the stretch.  The invariants are checked after every update that
    ran with the bound now in force (an update that starts a stretch ran with the bound 2,
    and until the stretch's first update I keeps the ramp's outliers outside V).  With
    ``rewarm_max`` no stretch is longer than it."""
    X, y = ncheck(420, seed)
    params = dict(C=10.0, gamma=GAMMA, tol=1e-3, min_gain=3e-6, max_non_sv=100,
                  shrinking=True, keep_rows=True, fit_intercept=True, stop="relative",
                  warmup=50, departures={"rewarm": 0.05, "rewarm_after": 60,
                                         "rewarm_max": cap})
    a = ramp.OnlineSVMR(2, False, **params)
    b = _ramp.OnlineSVMR(2, False, **params)
    marks, updates = set(), 0
    for t in range(y.shape[0]):
        x = get_row(X, t)
        assert a.step(x, y[t]) == b.step(x, y[t])
        sa = a.get_state()
        compare_states(sa, b.get_state(), f"example {t}", atol=1e-11)
        if a.n_updates > updates and sa["hinge_until"] in marks | {50}:
            check_invariants(sa, a, X[sa["I"]], 10.0, 1e-3, 3e-6, True, g_atol=1e-10)
        if sa["hinge_until"] not in marks and sa["hinge_until"] > 50:   # a stretch starts
            length = sa["hinge_until"] - a.n_seen
            assert length == (min(cap, 3 * a.n_seen) if cap else 3 * a.n_seen)
        marks.add(sa["hinge_until"])
        updates = a.n_updates
    assert len(marks) >= (5 if cap else 3)                 # the warm-up and the stretches
    assert a.hinge_until >= a.n_seen                       # one under way
    assert a.finish(1e-9) == b.finish(1e-9)
    compare_states(a.get_state(), b.get_state(), "after finish", atol=1e-11)
    assert a.outlier_bound == b.outlier_bound == 2.0


@pytest.mark.parametrize("mod", [ramp, _ramp], ids=["python", "cython"])
def test_a_stretch_survives_pickling(mod):
    X, y = ncheck(300, 2)
    params = dict(C=10.0, gamma=GAMMA, fit_intercept=True, warmup=50,
                  departures={"rewarm": 0.05, "rewarm_after": 60})
    s = mod.OnlineSVMR(2, False, **params)
    for t in range(200):
        s.step(X[t], y[t])
    assert s.hinge_until > s.n_seen
    c = pickle.loads(pickle.dumps(s))
    assert c.hinge_until == s.hinge_until
    for t in range(200, 300):
        assert s.step(X[t], y[t]) == c.step(X[t], y[t])
    compare_states(s.get_state(), c.get_state(), "after the round trip", atol=0.0)


@pytest.mark.parametrize("mod", [ramp, _ramp], ids=["python", "cython"])
def test_a_state_saved_without_the_stretch_loads_with_the_warmup(mod):
    X, y = ncheck(100, 3)
    s = mod.OnlineSVMR(2, False, C=1.0, gamma=GAMMA, warmup=40)
    for t in range(100):
        s.step(X[t], y[t])
    data = s.save_state()
    del data["hinge_until"]
    c = mod.OnlineSVMR(**s.init_params())
    c.load_state(data)
    assert c.hinge_until == 40


@pytest.mark.parametrize("bad", [-1, 1.5, True, "7"])
def test_a_bad_stretch_is_refused_naming_it(bad):
    X, y = ncheck(60, 4)
    s = _ramp.OnlineSVMR(2, False, C=1.0, gamma=GAMMA)
    for t in range(60):
        s.step(X[t], y[t])
    data = s.save_state()
    data["hinge_until"] = bad
    with pytest.raises(ValueError, match="hinge_until"):
        check_state("OnlineSVMR", s.init_params(), data)


def test_the_estimator_takes_the_settings_and_the_paper_form_turns_it_off():
    X, y = ncheck(700, 5)
    est = OnlineRampSVM(C=10.0, gamma=GAMMA, departures={"rewarm": 0.05,
                                                         "rewarm_after": 300}).fit(X, y)
    st = est._states[0]
    assert (st.rewarm, st.rewarm_after) == (0.05, 300)
    assert st.hinge_until == st.n_seen - 1                  # fit's finishing step ended it
    paper = OnlineRampSVM(C=10.0, gamma=GAMMA, departures="paper").fit(X[:100], y[:100])
    assert paper._states[0].rewarm == 0.0
    with pytest.raises(ValueError, match="rewarm"):
        OnlineRampSVM(departures={"rewarm": -1.0}).fit(X, y)


@pytest.mark.parametrize("growth", [2, 5])
@pytest.mark.parametrize("mod", [ramp, _ramp], ids=["python", "cython"])
def test_a_stretch_ends_at_growth_times_the_examples_seen(mod, growth):
    X, y = ncheck(300, 6)
    s = mod.OnlineSVMR(2, False, C=10.0, gamma=GAMMA, fit_intercept=True, warmup=50,
                       departures={"rewarm": 0.05, "rewarm_after": 60,
                                   "rewarm_growth": growth})
    for t in range(300):
        s.step(X[t], y[t])
        if s.hinge_until != 50:
            break
    assert s.hinge_until == growth * s.n_seen and s.n_seen >= 60
    with pytest.raises(ValueError, match="rewarm_growth"):
        mod.OnlineSVMR(2, departures={"rewarm_growth": 1})
