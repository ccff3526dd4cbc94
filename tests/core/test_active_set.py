"""refsvm.core.active_set: the partition codes and the sums in doubled precision."""

import math
from fractions import Fraction

import numpy as np

from refsvm.core import active_set as A


def test_the_partition_codes_are_both_families():
    from refsvm.idsvm import constants as idsvm
    from refsvm.poker import partition as poker

    assert (idsvm.REST, idsvm.MARGIN, idsvm.ERROR, idsvm.GONE) == (A.AT_ZERO, A.IN_S, A.AT_C, A.GONE)
    assert (poker.I_O, poker.I_S, poker.I_C, poker.GONE) == (A.AT_ZERO, A.IN_S, A.AT_C, A.GONE)
    assert A.GONE < 0 <= min(A.AT_ZERO, A.IN_S, A.AT_C)


def test_two_sum_and_two_product_are_error_free():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=200) * 1e6, rng.normal(size=200)
    s, e = A.two_sum(a, b)
    p, f = A.two_product(a, b)
    for i in range(a.size):
        assert Fraction(s[i]) + Fraction(e[i]) == Fraction(a[i]) + Fraction(b[i])
        assert Fraction(p[i]) + Fraction(f[i]) == Fraction(a[i]) * Fraction(b[i])


def test_dot2_and_exact_sum_against_exact_rationals():
    rng = np.random.default_rng(1)
    a = rng.normal(size=50) * 1e12
    b = rng.normal(size=50)
    a = np.append(a, -a[:25])                   # terms that cancel
    b = np.append(b, b[:25])
    exact = sum(Fraction(x) * Fraction(y) for x, y in zip(a, b))
    p = s = np.zeros(1)
    for x, y in zip(a, b):
        p, s = A.dot2_add(p, s, np.array([x]), np.array([y]))
    assert abs(Fraction(float(p[0] + s[0])) - exact) <= abs(exact) * 4e-16 + 1e-300
    assert A.exact_sum(a, b, 1.0, [1.0]) == float(exact + 1)
    assert A.exact_sum(a, b, -1.0, []) == float(-exact)


def test_neumaier_add_keeps_cancelling_terms():
    terms = [1e16, 1.0, -1e16, 1.0]
    s = c = 0.0
    for x in terms:
        s, c = A.neumaier_add(s, c, x)
    assert s + c == math.fsum(terms) == 2.0
