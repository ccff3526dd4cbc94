"""StreamSVM's departures (refsvm.stream_svm.departures): the paper form in both twins
after every step, the printed lines by hand, the guarantee of Alg. 2 line 7 in the paper
form, the failure the departure answers, bad settings, persistence."""

import pickle

import numpy as np
import pytest

from refsvm.core.kernels import get_row
from refsvm.core.stream import restore_state
from refsvm.stream_svm import _stream_svm as twin
from refsvm.stream_svm import stream_svm as ref
from refsvm.stream_svm.departures import DEPARTURES
from refsvm.stream_svm.estimators import StreamSVM

from ..conftest import BACKENDS, assert_states_equal, sparse_stream, to_csr

CASES = [("StreamSVMLinear", {}), ("StreamSVMKernel", {"kernel": "rbf", "gamma": 0.3})]


def _gaussians(n=200, seed=0):
    rng = np.random.RandomState(seed)
    y = np.where(rng.rand(n) < 0.5, 1.0, -1.0)
    return rng.randn(n, 2) + np.outer(y, [1.0, 0.0]), y


def _worst_outside(state, X, y, seen, C):
    """max over the points seen of (distance to the center − R), in the augmented space
    (linear form: the point's own e-part counted through its λ)."""
    st = state.get_state()
    lam = np.zeros(seen)
    lam[st["support"]] = st["coef"] * y[st["support"]]
    d2 = ((st["w"] - y[:seen, None] * X[:seen]) ** 2).sum(1) + st["xi2"] + (1 - 2 * lam) / C
    return float(np.max(np.sqrt(np.maximum(d2, 0.0)) - st["R"]))


@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("lookahead", [1, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_paper_form_twins_agree_after_every_step(name, kw, lookahead, sparse):
    X, y = sparse_stream(n=150, d=8, density=0.5, seed=5)
    Xs = to_csr(X) if sparse else X
    a = getattr(ref, name)(8, sparse, C=3.0, lookahead=lookahead, departures="paper", **kw)
    b = getattr(twin, name)(8, sparse, C=3.0, lookahead=lookahead, departures="paper", **kw)
    assert a.form == b.form == "printed" and a.departures == b.departures
    for t in range(X.shape[0]):
        assert a.step(get_row(Xs, t), y[t]) == b.step(get_row(Xs, t), y[t]), t
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where=f"step {t}")
    assert a.n_updates > 3
    assert a.flush() == b.flush()
    assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where="flush")


@pytest.mark.parametrize("backend", BACKENDS)
def test_paper_form_is_the_printed_lines(backend):
    """Algorithm 1 lines 3-10 replayed by hand (C = 4): the paper form follows them after
    every step; R never shrinks and the center stays a convex combination."""
    X, y = _gaussians(n=80)
    C = 4.0
    state = (ref if backend == "python" else twin).StreamSVMLinear(2, C=C, departures="paper")
    w, R, xi2, M = y[0] * X[0], 0.0, 1.0, 1                    # line 3
    state.step(X[0], y[0])
    for n in range(1, X.shape[0]):
        d = np.sqrt(np.sum((w - y[n] * X[n]) ** 2) + xi2 + 1.0 / C)      # line 5
        if d >= R:                                                         # line 6
            w = w + 0.5 * (1 - R / d) * (y[n] * X[n] - w)                  # line 7
            R = R + 0.5 * (d - R)                                          # line 8
            xi2 = xi2 * (1 - 0.5 * (1 - R / d)) ** 2 + (0.5 * (1 - R / d)) ** 2   # line 9
            M = M + 1                                                      # line 10
        R_before = state.radius
        state.step(X[n], y[n])
        st = state.get_state()
        assert st["n_updates"] == M and st["R"] >= R_before
        np.testing.assert_allclose([st["R"], st["xi2"]], [R, xi2], rtol=1e-12)
        np.testing.assert_allclose(st["w"], w, rtol=1e-11, atol=1e-13)
        lam = st["coef"] * y[st["support"]]
        assert np.all(lam >= 0) and abs(lam.sum() - 1.0) < 1e-12


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("C", [0.5, 4.0])
def test_paper_form_lookahead_encloses_the_ball_and_the_buffer(backend, C):
    """Alg. 2 line 7 in the paper form (ξ² = 1 from line 1): the new ball encloses every
    point of S, and the radius does not shrink."""
    X, y = _gaussians(n=40, seed=2)
    state = (ref if backend == "python" else twin).StreamSVMLinear(2, C=C, lookahead=100,
                                                                   departures="paper")
    state.run(np.ascontiguousarray(X), y, np.arange(40))
    assert state.n_buffered == 39 and state.get_state()["xi2"] == 1.0
    R0 = state.radius
    state.flush()
    assert state.radius >= R0 and state.n_updates == 40
    st = state.get_state()
    lam = np.zeros(40)
    lam[st["support"]] = st["coef"] * y[st["support"]]
    d2 = ((st["w"] - y[1:, None] * X[1:]) ** 2).sum(1) + st["xi2"] + (1 - 2 * lam[1:]) / C
    assert np.max(np.sqrt(d2)) <= st["R"] * (1 + 1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_printed_ball_leaves_points_outside(backend):
    """The failure ``consistent_xi2`` answers (its module's docstring): the printed lines
    3 and 9 leave points the ball has accepted outside it; the departure does not."""
    X, y = _gaussians()
    mod = ref if backend == "python" else twin
    for C, printed_out in ((1.0, 0.04), (4.0, 0.8)):
        worst = {}
        for deps in ("paper", None):
            state = mod.StreamSVMLinear(2, C=C, departures=deps)
            worst[deps] = -np.inf
            for i in range(X.shape[0]):
                state.step(X[i], y[i])
                worst[deps] = max(worst[deps], _worst_outside(state, X, y, i + 1, C))
        assert worst["paper"] > printed_out, (C, worst)
        assert worst[None] < 1e-12, (C, worst)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_departures_raise_and_leave_the_model(backend):
    X, y = _gaussians()
    clf = StreamSVM(C=2.0, backend=backend).partial_fit(X[:100], y[:100], classes=[-1, 1])
    before = pickle.dumps(clf)
    for bad, name in (({"nope": True}, "nope"), ({"consistent_xi2": 1}, "consistent_xi2"),
                      ("printed", "departures"), ({"base": "other"}, "base")):
        clf.set_params(departures=bad)
        with pytest.raises(ValueError, match=name):
            clf.partial_fit(X[100:], y[100:])
        for mod in (ref, twin):
            with pytest.raises(ValueError, match=name):
                mod.StreamSVMLinear(2, departures=bad)
    clf.set_params(departures=None)
    assert pickle.dumps(clf) == before
    with pytest.raises(ValueError, match="n_balls"):
        StreamSVM(n_balls=2, departures="paper", backend=backend).fit(X, y)
    for mod in (ref, twin):
        with pytest.raises(ValueError, match="consistent_xi2"):
            mod.MultiBallStreamSVM(2, departures="paper")


@pytest.mark.parametrize("name,kw", CASES, ids=[c[0] for c in CASES])
def test_save_load_keeps_the_departures(name, kw):
    """init_params holds the resolved departures: a state saved in one twin resumes in
    the other in the paper form; a file without them loads as the defaults."""
    X, y = _gaussians(n=60)
    X = np.ascontiguousarray(X)
    for src, dst in ((ref, twin), (twin, ref)):
        a = getattr(src, name)(2, C=2.0, lookahead=3, departures="paper", **kw)
        a.run(X[:30], y[:30], np.arange(30))
        params = a.init_params()
        assert params["departures"] == {"consistent_xi2": False}
        b = restore_state(getattr(dst, name), params, a.save_state())
        c = pickle.loads(pickle.dumps(a))
        assert b.departures == c.departures == a.departures and b.form == "printed"
        for s in (a, b, c):
            s.run(X[30:], y[30:], np.arange(30))
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11)
        assert_states_equal(a.get_state(), c.get_state(), rtol=0, atol=0)
        old = {k: v for k, v in params.items() if k not in ("departures", "form")}
        assert getattr(dst, name)(**old).departures == {
            k: d.default for k, d in DEPARTURES.items()}
