"""refsvm.core.exactness: g afresh, the balance, the KKT violation of a partition and the
Newton step of the polish, each on its own (both families' checks and polishes use them)."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from refsvm.core import exactness as X
from refsvm.core.active_set import AT_C, AT_ZERO, GONE, IN_S
from refsvm.core.bordered import bordered_beta, bordered_matrix, lu_inverse
from refsvm.core.kernels import Kernel, kernel_block


def _problem(seed, m=7, n=9, big=1e12):
    """Coefficients of order ``big`` that cancel, a kernel block, labels, a bias."""
    rng = np.random.default_rng(seed)
    coef = rng.normal(size=n) * big
    coef[n // 2:] = -coef[: n - n // 2] * (1.0 + rng.normal(size=n - n // 2) * 1e-12)
    K = rng.uniform(0.0, 1.0, size=(m, n))
    y = rng.choice([-1.0, 1.0], size=m)
    b = float(rng.normal() * big * 1e-3)
    return coef, K, y, b


def _exact_g(coef, K, y, b, bias_sign):
    """g_r = y_r (sum_j c_j K_rj + bias_sign b) - 1 in rationals."""
    out = []
    for r in range(K.shape[0]):
        f = sum(Fraction(c) * Fraction(k) for c, k in zip(coef, K[r]))
        out.append(Fraction(y[r]) * (f + Fraction(bias_sign) * Fraction(b)) - 1)
    return out


@pytest.mark.parametrize("bias_sign", [1.0, -1.0])
@pytest.mark.parametrize("seed", range(4))
def test_g_afresh_against_rationals(seed, bias_sign):
    coef, K, y, b = _problem(seed)
    exact = _exact_g(coef, K, y, b, bias_sign)
    ge = X.g_exact(coef, K, y, b, bias_sign=bias_sign)
    gd = X.g_dot2(coef, K, y, b, bias_sign=bias_sign)
    scale = np.abs(K) @ np.abs(coef) + abs(b) + 1.0
    for r in range(K.shape[0]):
        assert ge[r] == float(exact[r])                     # correctly rounded
        # Dot2: as if in twice the working precision, then rounded once
        assert abs(Fraction(float(gd[r])) - exact[r]) <= \
            abs(exact[r]) * 2.3e-16 + Fraction(scale[r]) * 1e-28
    # a plain sum of these cancelling terms is off by far more
    plain = y * (K @ coef + bias_sign * b) - 1.0
    assert max(abs(Fraction(float(plain[r])) - exact[r]) for r in range(K.shape[0])) > 1e-6


def test_g_dot2_continues_a_sum_and_takes_columns_one_by_one():
    coef, K, y, b = _problem(5)
    whole = X.g_dot2(coef, K, y, b)
    start = X.dot2_sum(coef[:4], (K[:, j] for j in range(4)), y)
    assert np.array_equal(X.g_dot2(coef[4:], K[:, 4:], y, b, start=start), whole)
    # without y: the factor per row left out, the zeros given
    p, s = X.dot2_sum(coef, K, start=(np.zeros(K.shape[0]), np.zeros(K.shape[0])))
    exact = [sum(Fraction(c) * Fraction(k) for c, k in zip(coef, K[r]))
             for r in range(K.shape[0])]
    for r in range(K.shape[0]):
        assert abs(Fraction(float(p[r] + s[r])) - exact[r]) <= \
            abs(exact[r]) * 2.3e-16 + Fraction(float(np.abs(K[r]) @ np.abs(coef))) * 1e-28


def test_g_exact_on_the_fixed_bias_path():
    coef, K, y, _ = _problem(6)
    rng = np.random.default_rng(6)
    p, d, u = rng.normal(size=K.shape[0]), rng.normal(size=K.shape[0]) * 1e6, 0.3
    g = X.g_exact(coef, K, y, fixed=(p, u, d))
    for r in range(K.shape[0]):
        f = sum(Fraction(c) * Fraction(k) for c, k in zip(coef, K[r]))
        assert g[r] == float(Fraction(y[r]) * f + Fraction(p[r]) + Fraction(u) * Fraction(d[r]))


def test_balance_sum2_and_exact():
    rng = np.random.default_rng(7)
    C = 1e12
    alpha = np.concatenate([np.full(6, C), rng.uniform(0, C, size=5)])
    y = np.array([1, -1, 1, -1, 1, -1, 1, 1, -1, -1, 1], dtype=float)
    exact = sum(Fraction(a) * Fraction(v) for a, v in zip(alpha, y))
    assert X.balance(y, alpha, exact=True) == float(exact)
    assert abs(Fraction(X.balance(y, alpha)) - exact) <= abs(exact) * 2.3e-16 + 1e-20
    # Sum2 adds left to right: ids ascending, as the compiled twins
    p = s = 0.0
    for t in (y * alpha).tolist():
        q = p + t
        v = q - p
        s += (p - (q - v)) + (t - v)
        p = q
    assert X.balance(y, alpha) == p + s
    assert X.balance(np.zeros(0), np.zeros(0)) == 0.0


def test_partition_violation_on_a_hand_made_partition():
    status = np.array([AT_ZERO, AT_ZERO, IN_S, IN_S, AT_C, AT_C, GONE])
    g = np.array([0.5, -0.25, 0.125, -2.0, -1.0, 0.75, 9.0])
    v = X.partition_violation(status, g)
    assert v.tolist() == [-0.5, 0.25, 0.125, 2.0, -1.0, 0.75, -np.inf]
    assert int(np.argmax(v)) == 3
    w = X.partition_violation(status, g, margin=False)
    assert w.tolist() == [-0.5, 0.25, -np.inf, -np.inf, -1.0, 0.75, -np.inf]
    # the partition the alphas imply (NaN counts as inside the box)
    C = 2.0
    alpha = np.array([0.0, -1e-3, 1.0, np.nan, 2.0, 3.0])
    assert X.partition_of(alpha, C).tolist() == [AT_ZERO, AT_ZERO, IN_S, IN_S, AT_C, AT_C]


def test_kkt_violation_with_the_box_on_a_hand_made_partition():
    C = 2.0
    status = np.array([AT_ZERO, AT_ZERO, IN_S, IN_S, AT_C, AT_C, GONE])
    g = np.array([0.5, -0.25, 0.125, 0.0, -1.0, 0.75, 9.0])
    alpha = np.array([0.0, 0.5, 1.0, 2.5, 2.0, 1.5, 0.0])
    v = X.kkt_violation(status, g, alpha, C)
    # rest: max(-g, 0) + |alpha|; margin: |g| and the box; errors: max(g, 0) + |alpha - C|
    assert v.tolist() == [0.0, 0.75, 0.125, 0.5, 0.0, 1.25, 0.0]
    other = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0])
    assert X.kkt_violation(status, g, alpha, C, other)[-1] == 4.0
    assert X.kkt_violation(np.array([GONE]), np.array([0.0]), np.array([-0.5]), C)[0] == 0.5


def _bordered_optimum(seed, ns=4, C=10.0):
    """A margin set S of an RBF kernel problem with alpha_S inside (0, C) and g_S = 0,
    y'alpha = 0 exactly in rationals up to round-off: the solution of the bordered
    system for random right-hand sides."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(ns, 3))
    K = Kernel("rbf", gamma=0.5)
    KS = np.array([[K.value(a, c) for c in Z] for a in Z])
    y = np.array([1.0, -1.0] * (ns // 2))
    M = bordered_matrix(y, KS, np.arange(ns))
    R = lu_inverse(M)
    # alpha_S and b solving M [b; alpha_S] = [0; 1] (g_S = 0, y'alpha = 0)
    sol = np.linalg.solve(M, np.concatenate(([0.0], np.ones(ns))))
    return y, KS, R, sol[1:], float(sol[0]), C


def _residual(y, KS, alpha, b):
    coef = alpha * y
    r0 = X.balance(y, alpha)
    return np.concatenate(([r0], X.g_dot2(coef, KS, y, b)))


def test_refine_reduces_the_residual_of_a_perturbed_optimum():
    y, KS, R, alpha, b, C = _bordered_optimum(0)
    assert np.all((alpha > 0) & (alpha < C))
    rng = np.random.default_rng(1)
    a1 = alpha + rng.normal(size=alpha.size) * 1e-6
    b1 = b + 1e-6
    r = _residual(y, KS, a1, b1)
    step = X.refine(lambda v: bordered_beta(R, v), r, a1, b1, C)
    assert step is not None
    a2, b2 = step
    r2 = _residual(y, KS, a2, b2)
    assert np.max(np.abs(r2)) < 1e-3 * np.max(np.abs(r))
    # POKER's sign: its bias is -b, and the same step moves it the other way
    a3, b3 = X.refine(lambda v: bordered_beta(R, v), r, a1, -b1, C, bias_sign=-1.0)
    assert np.array_equal(a3, a2) and b3 == -b2


def test_refine_refuses_steps_out_of_the_box_or_too_long():
    y, KS, R, alpha, b, C = _bordered_optimum(2)
    r = _residual(y, KS, alpha + 1e-3, b)            # a residual with a step of size
    solve = lambda v: bordered_beta(R, v)            # noqa: E731
    sol = solve(r)
    assert np.all(sol[1:] != 0.0)
    # alpha_s at the bound the step moves it past: the step leaves the box by |dalpha_s|
    edge = alpha.copy()
    edge[0] = 0.0 if sol[1] < 0 else C
    assert X.refine(solve, r, edge, b, C) is None
    assert X.refine(solve, r, edge, b, C, window=0.5 * abs(sol[1])) is None
    # within a window as wide as the step: clipped into the box, onto the bound
    new, nb = X.refine(solve, r, edge, b, C, window=2.0 * abs(sol[1]))
    assert new[0] == edge[0] and np.array_equal(new[1:], alpha[1:] + sol[2:])
    assert nb == b + sol[0]
    # a step longer than max_step is refused
    longest = float(np.max(np.abs(sol[1:])))
    assert X.refine(solve, r, alpha, b, C, max_step=0.5 * longest) is None
    assert X.refine(solve, r, alpha, b, C, max_step=longest) is not None


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kind", ["linear", "poly", "rbf"])
def test_kernel_block_against_the_counting_kernel(kind, sparse):
    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(6, 4)), rng.normal(size=(5, 4))
    B[0] = A[0] * (1 + 1e-9)                      # close points (direct distances)
    B[1] = A[1]
    k = Kernel(kind, gamma=0.7, degree=3, coef0=0.5)
    want = np.array([[k.value(a, c) for c in B] for a in A])
    a, c = (sp.csr_matrix(A), sp.csr_matrix(B)) if sparse else (A, B)
    got = kernel_block(a, c, kind, k.gamma, k.degree, k.coef0)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    clamped, scale = kernel_block(a, c, kind, k.gamma, k.degree, k.coef0, clamp=True,
                                  scale=True)
    assert np.all(np.abs(clamped - want) <= 1e-13 * scale)
    if kind == "rbf":
        # the direct sums give equal rows 1 exactly; the clamp gives 1 or a value within
        # the round-off of the norms
        assert got[1, 1] == 1.0
        assert clamped[1, 1] <= 1.0
    else:
        assert np.array_equal(clamped, got)
    assert math.isfinite(float(np.max(scale)))
