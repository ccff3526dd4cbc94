"""POKER's departures from the printed method, chosen per state through ``departures``:
the paper form in both twins (the same numbers after every breakpoint, the paper's
guarantee where it ends), each departure reached by its setting, bad settings refused,
the settings kept by persistence."""

import pickle

import numpy as np
import pytest

from refsvm.core.departures import resolve
from refsvm.poker import poker as P
from refsvm.poker.departures import DEPARTURES
from refsvm.poker.estimators import POKER

from ..conftest import BACKENDS, assert_states_equal, to_csr
from ._oracle import KERNELS, assert_equals_svc, gram, state_kwargs, two_blobs

T = pytest.importorskip("refsvm.poker._poker", reason="compiled twin not built")

#: every departure switched off on its own (the rest at their defaults)
_ONE_OFF = [{name: DEPARTURES[name].paper} for name, d in DEPARTURES.items()
            if d.paper != d.default]


def _states_after_every_breakpoint(module, X, y, C, kp, how, sparse, departures, K=None):
    """The states of ``module``'s POKERState after every breakpoint of AltPOKER in chunks
    of ``how`` (or SelfInit), the KKT conditions checked at each against ``K``."""
    st = module.POKERState(X.shape[1], sparse, C=C, departures=departures, **state_kwargs(kp))
    log = []

    def hook(s):
        log.append(s.get_state())
        if K is not None:
            r = s.check(K)
            assert max(r["kkt"], r["g_drift"], r["balance"]) <= 1e-8 * max(1.0, C), r

    st.breakpoint_hook = hook
    Xs = to_csr(X) if sparse else X
    if how == "self":
        st.self_init(Xs, y)
    else:
        for s in range(0, X.shape[0], how):
            st.add_chunk(Xs[s:s + how], y[s:s + how])
    log.append(st.get_state())
    return st, log


#: the printed method, and on the linear kernel (where the adjustable-bias path leaves
#: more margin vectors than the rank of Q_ss, so that Eq. 3 divides by R_00 = 0) the
#: printed method with that one departure
_PAPER = [("rbf", "paper"), ("poly", "paper"),
          ("linear", {"base": "paper", "regularise_fixed": True})]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kname, departures", _PAPER, ids=[k for k, _ in _PAPER])
@pytest.mark.parametrize("how", [1, 7, "self"])
def test_paper_form_twins_agree_after_every_breakpoint(kname, departures, how, sparse):
    """``departures="paper"``: Fig. 1 and SelfInit as printed in both twins, the same
    states after every breakpoint (dense and CSR), the KKT conditions of the system
    followed at each (checked in the twin)."""
    X, y = two_blobs(n=50, d=4, seed=21)
    X[np.abs(X) < 0.3] = 0.0
    kp = KERNELS[kname]
    K = gram(X, X, **kp)
    ref, a = _states_after_every_breakpoint(P, X, y, 3.0, kp, how, sparse, departures)
    twin, b = _states_after_every_breakpoint(T, X, y, 3.0, kp, how, sparse, departures, K)
    assert ref.departures == twin.departures == resolve(DEPARTURES, departures)
    assert len(a) == len(b) > 1
    for r, (sa, sb) in enumerate(zip(a, b)):
        assert_states_equal(sa, sb, rtol=1e-9, atol=1e-11, where=f"breakpoint {r}")


@pytest.mark.parametrize("module", [P, T], ids=["reference", "twin"])
@pytest.mark.parametrize("kname, C", [("rbf", 1.0), ("rbf", 30.0), ("poly", 2.0)])
@pytest.mark.parametrize("chunk", [1, 10])
def test_paper_form_is_the_svm_after_every_chunk(module, kname, C, chunk):
    """The paper's guarantee: after every chunk of AltPOKER as printed the model is the
    exact SVM of the examples so far (LIBSVM's at a tight tolerance)."""
    X, y = two_blobs(n=60, d=3, seed=5)
    kp = KERNELS[kname]
    st = module.POKERState(3, C=C, departures="paper", **state_kwargs(kp))
    for s in range(0, 60, chunk):
        st.add_chunk(X[s:s + chunk], y[s:s + chunk])
        n = s + chunk
        if n >= 10 and len(set(y[:n])) == 2 and n % 20 == 0:
            assert_equals_svc(st.alpha[:n], st.b, X[:n], y[:n], C, kp, where=f"n={n}")
    r = st.check()
    assert max(r["kkt"], r["balance"], r["g_drift"]) <= 1e-8 * max(1.0, C), r


@pytest.mark.parametrize("departures", _ONE_OFF, ids=lambda d: next(iter(d)))
def test_each_departure_off_twins_agree(departures):
    """Each departure switched off on its own reaches its path in both twins (the joint
    increment is refused when off; the rest change nothing in the model here but the
    counts), then the decrement: the twins agree after every breakpoint."""
    X, y = two_blobs(n=40, d=3, seed=8)
    kp = KERNELS["rbf"]
    K = gram(X, X, **kp)
    ref, a = _states_after_every_breakpoint(P, X, y, 2.0, kp, 6, False, departures)
    twin, b = _states_after_every_breakpoint(T, X, y, 2.0, kp, 6, False, departures, K)
    for st, log in ((ref, a), (twin, b)):
        st.unlearn(np.arange(0, 40, 5))
        log.append(st.get_state())
    assert len(a) == len(b)
    for r, (sa, sb) in enumerate(zip(a, b)):
        assert_states_equal(sa, sb, rtol=1e-9, atol=1e-11, where=f"breakpoint {r}")
    name = next(iter(departures))
    for st in (ref, twin):
        if name == "joint_increment":
            with pytest.raises(ValueError, match="joint_increment"):
                st.add_chunk(X[:2] + 0.01, y[:2], joint=True)


@pytest.mark.parametrize("module", [P, T], ids=["reference", "twin"])
def test_settings_are_per_state(module):
    """Two states in one process with different settings: the column cache off costs
    kernel evaluations and changes no number; the defaults are untouched by it."""
    X, y = two_blobs(n=80, d=3, seed=3)
    a = module.POKERState(3, C=5.0, gamma=0.5)
    b = module.POKERState(3, C=5.0, gamma=0.5, departures={"column_cache": False})
    for s in range(0, 80, 10):
        a.add_chunk(X[s:s + 10], y[s:s + 10])
        b.add_chunk(X[s:s + 10], y[s:s + 10])
    sa, sb = a.get_state(), b.get_state()
    assert sb["n_kernel_evals"] > sa["n_kernel_evals"]
    for key in ("alpha", "g", "b", "S_order", "n_iterations"):
        np.testing.assert_array_equal(sa[key], sb[key])
    assert len(a.cache) > 0 and len(b.cache) == 0
    assert a.departures["column_cache"] and not b.departures["column_cache"]


@pytest.mark.parametrize("bad, name", [({"no_such_thing": True}, "no_such_thing"),
                                       ({"refresh": 1}, "refresh"),
                                       ({"polish_ck": -1.0}, "polish_ck"),
                                       ({"base": "fast"}, "base"), ("fast", "fast")])
@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_departures_raise_and_keep_the_model(backend, bad, name):
    X, y = two_blobs(n=40, d=3, seed=2)
    with pytest.raises(ValueError, match=name):
        P.POKERState(3, departures=bad)
    est = POKER(gamma=0.5, backend=backend).fit(X[:30], y[:30])
    before = est.decision_function(X)
    state = est._states[0].get_state()
    est.set_params(departures=bad)
    with pytest.raises(ValueError, match=name):
        est.partial_fit(X[30:], y[30:])
    np.testing.assert_array_equal(est.decision_function(X), before)
    assert_states_equal(est._states[0].get_state(), state, rtol=0, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_save_load_keeps_the_departures(backend):
    """A state saved in one twin resumes with its departures in either; a file without
    them loads as the defaults."""
    from refsvm.core.stream import restore_state

    X, y = two_blobs(n=40, d=3, seed=4)
    dep = {"base": "paper", "column_cache": True}
    est = POKER(gamma=0.5, departures=dep, backend=backend).fit(X[:20], y[:20])
    est2 = pickle.loads(pickle.dumps(est))
    assert est2._states[0].departures == resolve(DEPARTURES, dep)
    st = est._states[0]
    for module in (P, T):
        other = restore_state(module.POKERState, st.init_params(), st.save_state())
        assert other.departures == st.departures
        other.add_chunk(X[20:], y[20:])
        st2 = restore_state(type(st), st.init_params(), st.save_state())
        st2.add_chunk(X[20:], y[20:])
        assert_states_equal(other.get_state(), st2.get_state(), rtol=1e-9, atol=1e-11)
    params = st.init_params()
    del params["departures"]
    assert type(st)(**params).departures == resolve(DEPARTURES, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_estimator_paper_form(backend):
    """``POKER(departures="paper")``: ``partial_fit`` runs AltPOKER (Fig. 1) whatever
    ``increment`` says, and the model is LIBSVM's; ``unlearn`` runs with every departure
    off and gives the model of the defaults."""
    X, y = two_blobs(n=60, d=3, seed=9)
    est = POKER(gamma=0.5, C=2.0, departures="paper", backend=backend)
    alt = POKER(gamma=0.5, C=2.0, increment="altpoker", backend=backend)
    for s in range(0, 60, 15):
        est.partial_fit(X[s:s + 15], y[s:s + 15], classes=[-1.0, 1.0])
        alt.partial_fit(X[s:s + 15], y[s:s + 15], classes=[-1.0, 1.0])
    assert est.n_iterations_ == alt.n_iterations_
    np.testing.assert_allclose(est.decision_function(X), alt.decision_function(X), atol=1e-9)
    st = est._states[0]
    assert_equals_svc(st.alpha[:60], st.b, X, y, 2.0, KERNELS["rbf"])
    est.unlearn([0, 1, 30])
    alt.unlearn([0, 1, 30])
    assert est._states[0].departures["refresh"] is False
    np.testing.assert_allclose(est.decision_function(X), alt.decision_function(X), atol=1e-8)
