"""The compiled correctly rounded sum (``refsvm/_csrc/refsvm_fsum.c``, through
``refsvm._core.fsum``) and its products (``two_product``, ``exact_sum``, ``g_exact``):
bit for bit ``math.fsum`` and the reference's ``refsvm.core.active_set`` /
``refsvm.core.exactness`` on sums built to cancel (wide exponent ranges, many terms,
subnormals, ties to even), with the exact sum (``fractions.Fraction``) as a second
judge, and the same outcome on the special values (NaN, the infinities, intermediate
overflow: the same value or the same exception)."""

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from refsvm.core import active_set as A
from refsvm.core import exactness as X

_core = pytest.importorskip("refsvm._core")

TINY = 2.0 ** -1074
BIG = np.finfo(np.float64).max


def _bits(v):
    return struct.pack("<d", v)


def _outcome(f, *args):
    """("value", its bits) or ("error", the exception's type)"""
    try:
        v = f(*args)
    except (ValueError, OverflowError) as e:
        return "error", type(e)
    if math.isnan(v):
        return "value", "nan"
    return "value", _bits(v)


def _same(terms):
    """The compiled sum and math.fsum agree on ``terms`` (value bits or error type)."""
    terms = [float(t) for t in terms]
    want = _outcome(math.fsum, terms)
    got = _outcome(_core.fsum, np.array(terms))
    assert got == want, (terms[:8], got, want)
    return want


def _cancelling(rng, n, emin=-1074, emax=1000):
    """n terms of random signs and exponents in [emin, emax], then the negatives of some
    of them (exactly, or an ulp or a few off), and a few subnormals: shuffled."""
    e = rng.randint(emin, emax + 1, size=n)
    x = np.ldexp(rng.uniform(-1.0, 1.0, n), e)
    k = rng.randint(0, n + 1)
    pick = rng.randint(0, n, size=k)
    off = rng.choice([0.0, 0.0, 2.0 ** -52, -2.0 ** -52, 2.0 ** -30], size=k)
    terms = np.concatenate([x, -x[pick] * (1.0 + off),
                            np.ldexp(rng.randint(-2 ** 20, 2 ** 20, 3).astype(float), -1074)])
    rng.shuffle(terms)
    return terms


@pytest.mark.parametrize("seed", range(40))
def test_cancelling_sums_equal_fsum(seed):
    rng = np.random.RandomState(seed)
    for n in (1, 2, 3, 7, 30, 200):
        for emin, emax in ((-1074, 1000), (-60, 60), (-1074, -1000), (-5, 5)):
            terms = _cancelling(rng, n, emin, emax)
            kind, bits = _same(terms)
            assert kind == "value"
            # the exact sum rounded once (Fraction -> float is correctly rounded)
            exact = float(sum(Fraction(float(t)) for t in terms))
            assert bits == _bits(exact) or (exact == 0.0 and bits == _bits(0.0))


def test_many_terms_and_orders():
    rng = np.random.RandomState(7)
    terms = _cancelling(rng, 5000, -200, 200)
    want = _same(terms)
    for _ in range(5):                       # correctly rounded: the order does not matter
        rng.shuffle(terms)
        assert _same(terms) == want


def test_subnormals():
    rng = np.random.RandomState(3)
    for _ in range(200):
        m = rng.randint(-2 ** 53, 2 ** 53, size=rng.randint(1, 40)).astype(float)
        terms = np.concatenate([np.ldexp(m, -1074 - rng.randint(0, 3)),
                                np.ldexp(rng.uniform(-1, 1, 3), -1022)])
        _same(terms)
    assert _core.fsum([TINY, -TINY, TINY]) == TINY
    assert _core.fsum([2.0 ** -1022, -TINY]) == 2.0 ** -1022 - TINY


def test_ties_to_even():
    u = 2.0 ** -53                           # half an ulp of 1
    cases = [
        [1.0, u],                            # a tie: down to the even 1
        [1.0 + 2 * u, u],                    # a tie: up to the even 1 + 4u
        [1.0, u, 2.0 ** -200],               # past the tie: up
        [1.0, u, -(2.0 ** -200)],            # short of it: down
        [1.0 + 2 * u, u, -(2.0 ** -200)],    # short of it: down
        [-1.0, -u, -(2.0 ** -200)],
        [1e-16, 1.0, 1e16],
        [2.0 ** 53, 1.0, 2.0 ** -60],
        [2.0 ** 53, 1.0, -(2.0 ** -60)],
        [2.0 ** 53, -1.0, 2.0 ** -60, 2.0 ** -1074],
        [TINY, 2.0 ** 1000, -(2.0 ** 1000), 2.0 ** -1073],
    ]
    for terms in cases:
        for perm in (terms, terms[::-1]):
            _same(perm)
    assert _core.fsum([1.0, u]) == 1.0
    assert _core.fsum([1.0, u, 2.0 ** -200]) == 1.0 + 2 * u


def test_special_values():
    inf, nan = math.inf, math.nan
    cases = [
        [], [0.0], [-0.0], [-0.0, -0.0], [0.0, -0.0], [1.0, -1.0], [-1.0, 1.0],
        [nan], [1.0, nan, 2.0], [inf], [-inf], [inf, inf], [inf, 1.0, -1e308],
        [inf, -inf], [nan, inf, -inf], [inf, nan], [-inf, nan, 1.0],
        [1e308, 1e308], [-1e308, -1e308, 1e308], [BIG, 2.0 ** 970], [BIG, 2.0 ** 969],
        [BIG, -BIG], [BIG, BIG, -BIG], [1e308, inf, 1e308], [inf, 1e308, 1e308],
        [1e308, 1e308, inf], [1e308, 1e308, nan], [BIG, 2.0 ** 969, 2.0 ** 969],
    ]
    outcomes = {_same(c)[0] for c in cases}
    assert outcomes == {"value", "error"}
    with pytest.raises(ValueError):
        _core.fsum([inf, -inf])
    with pytest.raises(OverflowError):
        _core.fsum([1e308, 1e308])
    assert math.isnan(_core.fsum([nan, 1.0]))


def test_near_overflow():
    rng = np.random.RandomState(11)
    seen = set()
    for _ in range(300):
        terms = _cancelling(rng, rng.randint(1, 12), 1010, 1023)
        if rng.rand() < 0.5:
            terms = np.abs(terms)            # one sign: partial sums that can overflow
        seen.add(_same(terms)[0])
    assert seen == {"value", "error"}


def test_two_product():
    rng = np.random.RandomState(5)
    a = np.ldexp(rng.uniform(-1, 1, 2000), rng.randint(-600, 600, 2000))
    b = np.ldexp(rng.uniform(-1, 1, 2000), rng.randint(-600, 600, 2000))
    a[:5] = [1e300, 1e200, np.inf, np.nan, 3.0]          # products that overflow, specials
    b[:5] = [1e10, 1e200, 1.0, 2.0, np.inf]
    want = A.two_product(a, b)
    got = _core.two_product(a, b)
    for w, g in zip(want, got):
        assert w.tobytes() == g.tobytes()


def _outcome_array(f, *args, **kw):
    try:
        return "value", np.asarray(f(*args, **kw)).tobytes()
    except (ValueError, OverflowError) as e:
        return "error", type(e)


@pytest.mark.parametrize("seed", range(10))
def test_exact_sum_and_g_exact(seed):
    rng = np.random.RandomState(seed)
    m, rows = rng.randint(0, 12), rng.randint(1, 9)
    C = 10.0 ** rng.choice([0, 6, 12])
    coef = rng.choice([0.0, C, -C], m) + rng.uniform(-C, C, m)
    K = rng.uniform(-1, 1, (rows, m))
    y = rng.choice([-1.0, 1.0], rows)
    b = rng.uniform(-C, C)
    extra = [-1.0, b, rng.uniform(-1e-300, 1e-300)]
    for r in range(rows):
        assert _outcome(A.exact_sum, coef, K[r], y[r], extra) == \
            _outcome(_core.exact_sum, coef, K[r], y[r], extra)
    for bias_sign in (1.0, -1.0):
        assert _outcome_array(X.g_exact, coef, K, y, b, bias_sign) == \
            _outcome_array(_core.g_exact, coef, K, y, b, bias_sign)
    fixed = (rng.uniform(-C, C, rows), rng.uniform(0, 1), rng.uniform(-C, C, rows))
    assert _outcome_array(X.g_exact, coef, K, y, fixed=fixed) == \
        _outcome_array(_core.g_exact, coef, K, y, fixed=fixed)


def test_exact_sum_special_values():
    inf, nan = math.inf, math.nan
    for a, b, extra in [([1e300], [1e300], [0.0]),          # the product overflows: inf
                        ([1e300, -1e300], [1e300, 1e300], [0.0]),   # inf - inf
                        ([nan], [1.0], [1.0]), ([1.0], [1.0], [inf, -inf]),
                        ([1e308], [1.0], [1e308]), ([], [], [])]:
        for sign in (1.0, -1.0):
            assert _outcome(A.exact_sum, np.array(a), np.array(b), sign, extra) == \
                _outcome(_core.exact_sum, a, b, sign, extra)
