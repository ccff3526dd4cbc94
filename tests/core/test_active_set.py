"""refsvm.core.active_set: the partition codes and the sums in doubled precision."""

import math
from fractions import Fraction

import numpy as np
import pytest

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


def test_limiting_event_priority_least_index_fallback():
    inf = np.inf
    # nothing finite
    assert A.limiting_event([(inf, 0, -1, 0.0)]) == (inf, -1, -1)
    # a tied priority event wins over a tied example of smaller id
    t, kind, who = A.limiting_event([(1.0, 0, 7, 1e-9)], [(1.0, 3, 2, 0.0)], [1.0], [0.0], [1], [4])
    assert (t, kind, who) == (1.0, 0, 7)
    # else the least id among the tied list and array events; untied ones take no part
    t, kind, who = A.limiting_event([(2.0, 0, 7, 0.0)], [(1.0, 3, 5, 0.0), (1.5, 3, 0, 0.0)],
                                    [1.0 + 1e-13, 0.9], [1e-12, 0.0], [3, 9], [4, 4])
    assert (t, kind, who) == (0.9, 4, 9)
    t, kind, who = A.limiting_event([], [(1.0, 3, 5, 0.0)], [1.0 + 1e-13], [1e-12], [3], [4])
    assert (t, kind, who) == (1.0, 4, 3)
    # the fallback counts for t_min and is chosen only when nothing else is tied
    assert A.limiting_event([], [(2.0, 3, 5, 0.0)], fallback=(1.0, 1, -1, 0.0)) == (1.0, 1, -1)
    assert A.limiting_event([], [(1.0, 3, 5, 0.0)], fallback=(1.0, 1, -1, 0.0)) == (1.0, 3, 5)


def test_both_families_choose_by_limiting_event():
    from refsvm.idsvm.incremental_svm import _first_event
    from refsvm.poker.partition import EV_END, EV_JOIN, next_breakpoint

    # POKER: the end of the parameter first, its own step returned
    assert next_breakpoint(1.0, 1e-15, [1.0, 3.0], [0.0, 0.0], [4, 2], [EV_JOIN, EV_JOIN]) \
        == (1.0, EV_END, -1)
    assert next_breakpoint(np.inf, 0.0, [1.0, 1.0], [0.0, 0.0], [4, 2], [EV_JOIN, EV_JOIN]) \
        == (1.0, EV_JOIN, 2)
    # IDSVM: the candidate's own events (kinds below EV_S_OUT) first
    from refsvm.idsvm.constants import EV_C_MARGIN, EV_JOIN as JOIN, EV_S_OUT

    events = [(0.5, EV_C_MARGIN, 9, 0.0), (0.5, EV_S_OUT, 1, 0.0)]
    assert _first_event(events, np.array([0.5]), np.array([0.0]), np.array([0])) \
        == (0.5, EV_C_MARGIN, 9)
    events = [(0.6, EV_C_MARGIN, 9, 0.0), (0.5, EV_S_OUT, 3, 0.0)]
    assert _first_event(events, np.array([0.5, 0.5]), np.zeros(2), np.array([1, 2])) \
        == (0.5, JOIN, 1)


def test_column_cache_budget_and_order():
    from refsvm.core.column_cache import ColumnCache

    def col(v, n=4):
        return np.full(n, float(v))

    cache = ColumnCache()
    for i in range(5):                           # 3 columns of 4 values fit in 100 bytes
        cache.put(i, col(i), 100)
    assert list(cache) == [2, 3, 4]
    cache.put(3, col(-3), 100)                   # a new entry of i replaces the old, newest
    assert [(i, c[0]) for i, c in cache.items()] == [(2, 2.0), (4, 4.0), (3, -3.0)]
    cache.put(4, col(-4), 0)                     # off (no budget): i's entry goes, none kept
    assert list(cache) == [2, 3]
    cache.put(2, col(9, 100), 100)               # not one column fits
    assert list(cache) == [3]


def test_column_cache_cut_and_arrays():
    from refsvm.core.column_cache import ColumnCache

    cache = ColumnCache()
    cache.put(5, np.arange(6.0), 10**6)
    cache.put(1, np.arange(2.0), 10**6)
    cache.put(2, np.arange(4.0) + 10, 10**6)
    cache.cut(3)                                 # id 5 goes, 2's column is cut to 3 values
    assert list(cache) == [1, 2]
    assert cache.take(2).tolist() == [10.0, 11.0, 12.0] and 2 not in cache
    cache.put(0, np.full(3, np.nan), 10**6)
    ids, lengths, values = cache.arrays()
    assert ids.tolist() == [1, 0] and lengths.tolist() == [2, 3]
    again = ColumnCache.from_arrays(ids, lengths, values)
    assert [(i, c.tolist()) for i, c in again.items()][0] == (1, [0.0, 1.0])
    assert np.isnan(again.take(0)).all() and len(again) == 1
    again.drop(1)
    again.drop(7)                                # nothing cached: nothing to forget
    assert len(again) == 0 and again.arrays()[2].shape == (0,)


@pytest.mark.parametrize("adopt", [False, True])
def test_compiled_column_cache_keeps_the_reference_entries(adopt):
    # the compiled ColumnCache (both forms: copies, IDSVM's twin; adopted and shared
    # buffers, POKER's) given the reference's operations keeps the same entries
    from refsvm.core.column_cache import ColumnCache

    _core = pytest.importorskip("refsvm._core")
    rng = np.random.default_rng(0)
    budget = 8 * 6 * 4                           # 4 columns of 6 values
    ops = []
    for step in range(300):
        i = int(rng.integers(12))
        r = rng.random()
        if r < 0.5:
            n = int(rng.integers(4, 9))
            col = rng.standard_normal(n)
            col[rng.random(n) < 0.2] = np.nan
            ops.append(("put", i, col))
        elif r < 0.75:
            ops.append(("take", i))
        elif r < 0.9:
            ops.append(("drop", i))
        elif r < 0.97:
            ops.append(("cut", int(rng.integers(3, 12))))
        else:
            ops.append(("copy",))
    taken, arrays = _core.column_cache_run(ops, budget, adopt)
    caches = [ColumnCache()]
    ref_taken = []
    for op in ops:
        cache = caches[-1]
        if op[0] == "put":
            cache.put(op[1], op[2].copy(), budget)
        elif op[0] == "take":
            ref_taken.append(cache.take(op[1]))
        elif op[0] == "drop":
            cache.drop(op[1])
        elif op[0] == "cut":
            cache.cut(op[1])
        else:
            caches.append(ColumnCache.from_arrays(*cache.arrays()))
    assert len(caches) > 1 and len(taken) == len(ref_taken)
    for a, b in zip(taken, ref_taken):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)
    assert len(arrays) == len(caches)
    for got, ref in zip(arrays, caches):
        for x, y in zip(got, ref.arrays()):
            np.testing.assert_array_equal(x, y)
