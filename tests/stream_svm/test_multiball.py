"""Multiple balls (Sec. 4.3): B = 1 is Algorithm 1; after every step each
point seen lies in one of the balls; after the final merge every point lies in the ball."""

import numpy as np
import pytest

from refsvm.core.kernels import Kernel, get_row
from refsvm.stream_svm import stream_svm as ref

from ..conftest import to_csr


def _stream(n=80, d=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.where(X[:, 0] + 0.5 * rng.randn(n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("bias", [False, True])
def test_one_ball_is_algorithm_1(bias):
    X, y = _stream(200, 4)
    a = ref.MultiBallStreamSVM(4, C=2.0, n_balls=1, kernel="rbf", gamma=0.3, fit_intercept=bias)
    b = ref.StreamSVMKernel(4, C=2.0, kernel="rbf", gamma=0.3, fit_intercept=bias)
    for t in range(200):
        assert a.step(X[t], y[t]) == b.step(X[t], y[t])
        assert abs(a.balls[0].R - b.radius) <= 1e-12 * b.radius
    ids, coef, _ = a.support()
    np.testing.assert_allclose(coef, b.support()[1], rtol=1e-12)
    np.testing.assert_array_equal(ids, b.support()[0])
    assert abs(a.intercept - b.intercept) <= 1e-12 and (b.intercept != 0.0) == bias
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-10,
                               atol=1e-12)


def test_merge_balls_closed_form():
    assert ref.merge_balls(1.0, 2.0, 0.5) == (0.0, 2.0)       # a contains b
    assert ref.merge_balls(1.0, 0.5, 2.0) == (1.0, 2.0)       # b contains a
    t, R = ref.merge_balls(4.0, 1.0, 0.0)                     # Alg. 1: β = ½(1 − R/d)
    assert R == 2.5 and t == 0.5 * (1 - 1.0 / 4.0)


def _distances(state, ball, X, y, seen, kern, C, one=0.0):
    ids = np.array([state.ids[m] for m in ball.members], dtype=int)
    alpha = np.array(ball.alpha)
    lam = np.zeros(seen)
    lam[ids] = alpha * y[ids]
    K = one + np.array([[kern.value(get_row(X, i), get_row(X, j)) for j in ids]
                        for i in range(seen)])
    kd = one + np.array([kern.value(get_row(X, i), get_row(X, i)) for i in range(seen)])
    f = K @ alpha
    wn = float(alpha @ K[ids] @ alpha)
    assert abs(wn - ball.wnorm2) <= 1e-9 * max(1.0, wn)
    assert abs(ball.xi2 - np.sum(lam ** 2) / C) <= 1e-12
    assert abs(lam.sum() - 1.0) < 1e-9 and np.all(lam >= 0)
    return np.sqrt(np.maximum(wn - 2 * y[:seen] * f + kd + ball.xi2 + (1 - 2 * lam) / C, 0.0))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("B", [2, 4])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_every_point_in_some_ball_after_every_step(kernel, B, sparse, bias):
    C = 2.0
    one = 1.0 if bias else 0.0
    X, y = _stream(50, 3, seed=B)
    Xs = to_csr(X) if sparse else X
    kern = Kernel(kernel, gamma=0.5)
    st = ref.MultiBallStreamSVM(3, sparse, C=C, n_balls=B, kernel=kernel, gamma=0.5,
                                fit_intercept=bias)
    for t in range(X.shape[0]):
        st.step(get_row(Xs, t), y[t])
        assert len(st.balls) <= B
        over = np.min([_distances(st, b, Xs, y, t + 1, kern, C, one) - b.R for b in st.balls],
                      axis=0)
        assert over.max() <= 1e-9, (t, over.max())
    st.flush()
    (ball,) = st.balls
    assert (_distances(st, ball, Xs, y, X.shape[0], kern, C, one) - ball.R).max() <= 1e-9


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("B", [2, 5])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_twins_agree_after_every_step(kernel, B, sparse, bias):
    from refsvm.stream_svm import _stream_svm as twin

    from ..conftest import assert_states_equal, sparse_stream

    X, y = sparse_stream(n=150, d=6, seed=B)
    Xs = to_csr(X) if sparse else X
    kw = dict(C=2.0, n_balls=B, kernel=kernel, gamma=0.4, fit_intercept=bias)
    a = ref.MultiBallStreamSVM(6, sparse, **kw)
    b = twin.MultiBallStreamSVM(6, sparse, **kw)
    for t in range(X.shape[0]):
        assert a.step(get_row(Xs, t), y[t]) == b.step(get_row(Xs, t), y[t])
        assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where=f"step {t}")
    np.testing.assert_allclose(b.decision_function(Xs), a.decision_function(Xs), rtol=1e-9,
                               atol=1e-11)
    assert abs(a.radius - b.radius) <= 1e-10 * a.radius
    assert abs(a.intercept - b.intercept) <= 1e-10
    # one persistence format: mid-stream state of either twin continues in the other
    for src, dst in ((a, twin.MultiBallStreamSVM), (b, ref.MultiBallStreamSVM)):
        moved = dst(**src.init_params())
        moved.load_state(src.save_state())
        assert_states_equal(src.get_state(), moved.get_state(), rtol=0, atol=0)
        np.testing.assert_allclose(moved.decision_function(Xs), a.decision_function(Xs),
                                   rtol=1e-9, atol=1e-11)
    assert a.flush() == b.flush()
    assert_states_equal(a.get_state(), b.get_state(), rtol=1e-9, atol=1e-11, where="flush")
