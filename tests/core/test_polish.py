"""The polish of the exact active-set engine: the compiled core's (``_core.pxd``:
``snap_margin``, ``polish_add_column``, ``polish_newton``, ``margin_g``, driven by
``refsvm._core.polish_run``) and its reference (``refsvm.core.exactness``: ``snap_margin``,
``dot2_sum``, ``polish_newton``, ``margin_g``) on the same margin set and the same
alphas end with the same alpha, b and g, bit for bit, in both families' forms (C&P's:
the bias +b, the step by ``bordered_beta_sym``, clipped within the snap window, bounded;
POKER's: the bias -b, the step by rows, refused out of the box)."""

import numpy as np
import pytest

from refsvm.core import exactness as X
from refsvm.core.active_set import AT_C, AT_ZERO, GONE, IN_S

from .test_margin_set import _run_reference

_core = pytest.importorskip("refsvm._core")


def _state(seed, bias_sign, n=24, ns=5, ne=4, C=1e6, noise=1e-9):
    """A margin set of ``ns`` examples (their starts and grows as ops), ``ne`` error
    vectors, the rest at 0 (two examples gone), and (b, alpha_S) the solution of the
    bordered system (g_S = 0, y'alpha = 0) moved off it by ``noise`` relative.  The error
    vectors' alphas are 0.1 (the polish reads them only as terms of g; with them at the
    box's bound the solution of most draws leaves the box)."""
    rng = np.random.RandomState(seed)
    X_ = rng.randn(n, 3)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(y)
    K = np.exp(-3.0 * ((X_[:, None, :] - X_[None, :, :]) ** 2).sum(-1))
    ids = rng.permutation(n)
    S, E, gone = ids[:ns], ids[ns:ns + ne], ids[-2:]
    status = np.full(n, AT_ZERO, dtype=np.int8)
    status[S], status[E], status[gone] = IN_S, AT_C, GONE
    ops = [("rows", n), ("start", int(S[0]), K[S[0], S[0]], K[:, S[0]])]
    ops += [("grow", int(i), K[i, i], K[:, i]) for i in S[1:]]
    alpha = np.zeros(n)
    alpha[E] = 0.1
    # the bordered system: [[0, y_S'], [y_S, Q_SS]] [bias_sign b; alpha_S] = rhs
    M = np.zeros((ns + 1, ns + 1))
    M[0, 1:] = M[1:, 0] = y[S]
    M[1:, 1:] = np.outer(y[S], y[S]) * K[np.ix_(S, S)]
    rhs = np.concatenate([[-y[E] @ alpha[E]], 1.0 - y[S] * (K[np.ix_(S, E)] @ (alpha[E] * y[E]))])
    sol = np.linalg.solve(M, rhs)
    b = bias_sign * sol[0] * (1.0 + noise * rng.randn())
    alpha[S] = sol[1:] * (1.0 + noise * rng.randn(ns))
    return ops, y, K, alpha, b, status, C


def _reference_polish(ops, y, K, alpha, b, status, C, kscale, bias_sign, window, max_step,
                      snap):
    """The same operations on the reference's margin set (built as by
    ``test_margin_set``'s driver) and the core's Python pieces."""
    _, ms = _run_reference(ops, y)
    alpha = alpha.copy()
    if snap:
        X.snap_margin(ms, alpha, C, window)
    act = np.flatnonzero(status >= 0)
    E = np.flatnonzero(status == AT_C)
    pe, se = X.dot2_sum(alpha[E] * y[E], (K[act, j] for j in E), y[act])
    b, kept = X.polish_newton(ms, act, alpha, y, b, C, kscale, pe, se, bias_sign=bias_sign,
                              window=window, max_step=max_step)
    if snap:
        X.snap_margin(ms, alpha, C, window)
    g = np.zeros(y.size)
    g[act] = X.margin_g(ms, act, alpha, y, b, bias_sign, start=(pe, se))
    return alpha, b, g, kept


FORMS = {
    # C&P (IDSVM's twin): +b, bordered_beta_sym, the snap window, a bounded step
    "idsvm": dict(bias_sign=1.0, sym=True, snap=True, window=1e-6, max_step=1e3),
    # POKER: -b, the step by rows, refused out of the box, no snap
    "poker": dict(bias_sign=-1.0, sym=False, snap=False, window=None, max_step=np.inf),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("seed", range(6))
def test_compiled_and_reference_polish_agree_bit_for_bit(form, seed):
    f = FORMS[form]
    ops, y, K, alpha, b, status, C = _state(seed, f["bias_sign"])
    kscale = float(np.max(np.diag(K)))
    ref = _reference_polish(ops, y, K, alpha, b, status, C, kscale, f["bias_sign"],
                            f["window"], f["max_step"], f["snap"])
    out = _core.polish_run(ops, y, K, alpha, b, status, C, kscale, bias_sign=f["bias_sign"],
                           window=f["window"], max_step=f["max_step"], snap=f["snap"],
                           sym=f["sym"], error_code=AT_C)
    np.testing.assert_array_equal(out[0], ref[0])
    assert out[1] == ref[1]
    np.testing.assert_array_equal(out[2], ref[2])
    assert out[3] == ref[3]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_polish_mends_the_margin_set(form):
    # a state moved off its margins by 1e-9 relative: the step is kept (in range of the
    # box, small) and g_S and y'alpha come out far smaller than before
    f = FORMS[form]
    kept = 0
    for seed in range(6):
        ops, y, K, alpha, b, status, C = _state(seed, f["bias_sign"])
        S = np.flatnonzero(status == IN_S)
        if np.any(alpha[S] <= 0.0) or np.any(alpha[S] >= C):
            continue                                  # (a solution outside the box)
        kscale = float(np.max(np.diag(K)))
        a2, b2, g2, ok = _core.polish_run(ops, y, K, alpha, b, status, C, kscale,
                                          bias_sign=f["bias_sign"], window=f["window"],
                                          max_step=f["max_step"], snap=f["snap"],
                                          sym=f["sym"], error_code=AT_C)
        act = status >= 0
        coef = alpha * y
        g0 = y * (K[:, act] @ coef[act] + f["bias_sign"] * b) - 1.0
        assert ok
        kept += 1
        assert np.max(np.abs(g2[S])) < 1e-3 * np.max(np.abs(g0[S]))
        assert abs(y[act] @ a2[act]) < 1e-3 * max(abs(y[act] @ alpha[act]), 1e-300) + 1e-9
    assert kept >= 3


def test_a_step_out_of_the_box_is_refused():
    # POKER's form: with C just below the largest alpha_s of the solution the step leaves
    # the box; it is refused and nothing changes
    for seed in range(6):
        ops, y, K, alpha, b, status, C = _state(seed, -1.0)
        S = np.flatnonzero(status == IN_S)
        if np.all(alpha[S] > 0.0) and np.max(alpha[S]) < C:
            break
    C = float(np.max(alpha[S])) * (1.0 - 1e-6)
    kscale = float(np.max(np.diag(K)))
    a2, b2, g2, ok = _core.polish_run(ops, y, K, alpha, b, status, C, kscale, bias_sign=-1.0,
                                      sym=False, error_code=AT_C)
    ref = _reference_polish(ops, y, K, alpha, b, status, C, kscale, -1.0, None, np.inf, False)
    assert not ok and not ref[3]
    np.testing.assert_array_equal(a2, alpha)
    assert b2 == b
    np.testing.assert_array_equal(g2, ref[2])
