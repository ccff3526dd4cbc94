"""The exactness check's levels and verdicts, written once in the core
(``refsvm.core.exactness``: ``kkt_levels``, ``kkt_verdict``, ``kkt_sentence``, ``end_balance``,
``end_wrong_side``; compiled in ``_core``) and used by both exact families: the levels and
the verdicts on hand-made states with each family's settings (IDSVM's ``_check_exact``,
POKER's ``exactness`` and ``_check_end``, reference and twin), the sentences the families
print, and the compiled pieces against their Python counterparts bit for bit."""

import math

import numpy as np
import pytest

from refsvm.core.exactness import (EPS_MACH, KKT_G, KKT_H, end_balance, end_wrong_side,
                                   kkt_levels, kkt_sentence, kkt_verdict)
from refsvm.idsvm import departures as idsvm_departures
from refsvm.idsvm.departures.exactness import ExactnessError
from refsvm.idsvm.incremental_svm import IncrementalSVMState
from refsvm.poker import departures as poker_departures
from refsvm.poker.partition import PathError
from refsvm.poker.poker import POKERState

IDSVM = {k: v.default for k, v in idsvm_departures.DEPARTURES.items()}
POKER = {k: v.default for k, v in poker_departures.DEPARTURES.items()}


def _bits(x):
    return np.asarray(x, dtype=np.float64).tobytes()


# ------------------------------------------------------------------ the levels
@pytest.mark.parametrize("C,kmax", [(1.0, 1.0), (10.0, 2.5), (1e12, 1.0), (1e6, 0.3)])
def test_levels_of_both_families(C, kmax):
    # below the family's threshold: tol (1 + k_max alpha_max) and tol alpha_max; above it
    # at most the ulps' round-off floors (IDSVM: polish_above, POKER: ulps_ck)
    amax, b, mass = 0.7 * C, 3.0, 5.5 * C
    for d, above in ((IDSVM, IDSVM["polish_above"]), (POKER, POKER["ulps_ck"])):
        tol, ulps = d["kkt_tol"], (d["kkt_ulps"], d["h_ulps"])
        g, h = kkt_levels(tol, kmax, amax, C, above, ulps, b, mass)
        plain = (tol * (1.0 + kmax * amax), tol * amax)
        floors = (ulps[0] * EPS_MACH * (1.0 + b + kmax * mass), ulps[1] * EPS_MACH * mass)
        if C * kmax > above:
            assert (g, h) == (min(plain[0], floors[0]), min(plain[1], floors[1]))
        else:
            assert (g, h) == plain
        # never capped when the family has no threshold (IDSVM's polish off)
        assert kkt_levels(tol, kmax, amax, C, math.inf, ulps, b, mass) == plain


def test_levels_at_extreme_c_are_round_off_floors():
    # at C = 1e12 the plain levels (1e3 margin units) would let any end pass: the caps
    # bring them to a few dozen ulps of the terms of g and of sum alpha
    C, kmax, amax, mass = 1e12, 1.0, 1e12, 3e12
    g, h = kkt_levels(1e-9, kmax, amax, C, 1e5, (32, 32), 0.5, mass)
    assert g == 32 * EPS_MACH * (1.0 + 0.5 + mass) < 1e-9 * (1.0 + amax)
    assert h == 32 * EPS_MACH * mass < 1e-9 * amax


def test_levels_of_the_end_check():
    # POKER's end check: g at END_G_TOL (1 + k_max c), y'alpha at end_balance_tol c n
    from refsvm.poker.departures.end_of_chunk import END_G_TOL
    C, kmax = 84.2, 2.0
    for n in (1, 7, 1000):
        g, h = kkt_levels(END_G_TOL, kmax, C, h_tol=POKER["end_balance_tol"], count=n)
        assert g == END_G_TOL * (1.0 + kmax * C)
        assert h == POKER["end_balance_tol"] * C * n
    # the level of h grows with the examples, that of g does not
    assert kkt_levels(1e-6, kmax, C, h_tol=1e-9, count=10)[1] \
        > kkt_levels(1e-6, kmax, C, h_tol=1e-9, count=1)[1]


# ------------------------------------------------------------------ the verdict and its sentence
def test_verdict_bits_and_nan():
    lv = (1e-3, 1e-6)
    assert kkt_verdict(0.0, 0.0, lv) == 0
    assert kkt_verdict(1e-3, 1e-6, lv) == 0                 # at the level: within
    assert kkt_verdict(2e-3, 0.0, lv) == KKT_G
    assert kkt_verdict(0.0, 2e-6, lv) == KKT_H
    assert kkt_verdict(2e-3, 2e-6, lv) == KKT_G | KKT_H
    # IDSVM compares worst > level (a NaN passes), POKER not worst <= level (it fails)
    assert kkt_verdict(np.nan, np.nan, lv) == 0
    assert kkt_verdict(np.nan, np.nan, lv, nan_fails=True) == KKT_G | KKT_H
    assert kkt_verdict(np.nan, 0.0, lv, nan_fails=True) == KKT_G


def test_sentences_of_both_families():
    lv = (1e-3, 1e-6)
    # IDSVM: the first failure, no levels
    idsvm = dict(repairs=8, h_name="sum_i y_i alpha_i", first=True)
    assert kkt_sentence(KKT_G | KKT_H, 0.25, 0.5, lv, 7, **idsvm) == \
        "a KKT condition is violated by 0.25 (example 7) after 8 repairs"
    assert kkt_sentence(KKT_H, 0.25, 0.5, lv, 7, **idsvm) == "sum_i y_i alpha_i = 0.5 is not zero"
    # POKER: every failure with its level
    assert kkt_sentence(KKT_G | KKT_H, 0.25, 0.5, lv, 7, where="I_s", show_levels=True) == \
        ("a KKT condition is violated by 0.25 (example 7, I_s; allowed 0.001); "
         "y'alpha = 0.5 (allowed 1e-06)")
    assert kkt_sentence(KKT_H, 0.25, 0.5, lv, 7, where="kept g", show_levels=True) == \
        "y'alpha = 0.5 (allowed 1e-06)"
    assert kkt_sentence(0, 0.25, 0.5, lv, 7, where="kept g", show_levels=True) is None


# ------------------------------------------------------------------ hand-made states
def _idsvm(C=10.0):
    rng = np.random.RandomState(3)
    X = rng.randn(12, 2)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    st = IncrementalSVMState(2, C=C, kernel="rbf", gamma=0.5)
    for x, t in zip(X, y):
        st.step(x, t)
    return st


def test_idsvm_check_on_a_hand_made_state():
    st = _idsvm()
    amax = float(st.alpha[:st.n].max())
    level = IDSVM["kkt_tol"] * (1.0 + st.kscale * amax)
    st._check_exact(0, 1, 0.5 * level, 0.0, 0.0)             # within: passes
    with pytest.raises(ExactnessError, match=r"violated by .* \(example 1\) after 8 repairs"):
        st._check_exact(0, 1, 2.0 * level, 0.0, 0.0)
    # y'alpha off by more than kkt_tol alpha_max (an alpha of a margin vector moved)
    S = list(st.S)
    st.alpha[S[0]] += 1e-3 * amax
    with pytest.raises(ExactnessError, match="sum_i y_i alpha_i = .* is not zero"):
        st._check_exact(0, 1, 0.0, 0.0, 0.0)
    # alpha_max before the operation widens the levels
    st._check_exact(0, 1, 0.0, 1e9, 0.0)


def _poker_states(C=10.0, kernel="rbf"):
    rng = np.random.RandomState(5)
    X = rng.randn(24, 2)
    y = np.where(X[:, 0] + 0.3 * rng.randn(24) > 0, 1.0, -1.0)
    states = [POKERState(2, C=C, kernel=kernel, gamma=0.5)]
    try:
        from refsvm.poker import _poker
        states.append(_poker.POKERState(2, False, C=C, kernel=kernel, gamma=0.5))
    except ImportError:
        pass
    for st in states:
        for s in range(0, 24, 6):
            st.add_chunk(X[s:s + 6], y[s:s + 6])
    return states


def test_poker_checks_on_a_hand_made_state():
    for st in _poker_states():
        assert st.exactness() is None and st.exactness(fresh=True) is None
        st._check_end("chunk")                                # passes
        n = st.n
        act = np.flatnonzero(st.status[:n] >= 0)
        a = st.alpha[act]
        amax = float(a.max())
        # an alpha of I_s moved: y'alpha off and the g of I_s afresh off, both said (the
        # end check sees y'alpha only beyond end_balance_tol c n)
        j = int(st.S[0])
        delta = 1e-8 * st.C                                   # > kkt_tol amax, < 1e-9 c n
        assert POKER["kkt_tol"] * amax < delta < POKER["end_balance_tol"] * st.C * act.size
        st.alpha[j] += delta
        msg = st.exactness()
        assert msg is not None and "I_s; allowed" in msg and "; y'alpha = " in msg
        st._check_end("chunk")                                # within c n 1e-9: passes
        st.alpha[j] += 1.0 * st.C
        with pytest.raises(PathError, match=r"chunk ended with y'alpha = .* and 0 examples"):
            st._check_end("chunk")
        st.alpha[j] -= 1.0 * st.C + delta
        # a kept g of I_o on the wrong side: beyond kkt_tol for exactness, and beyond
        # 1e-6 (1 + k_max c) for the end check
        rest = act[st.status[act] == 0]
        i = int(rest[0])
        g0 = st.g[i]
        st.g[i] = -1e-7
        assert POKER["kkt_tol"] * (1.0 + st.kmax * amax) < 1e-7 < 1e-6 * (1.0 + st.kmax * st.C)
        assert "a KKT condition is violated by 1e-07 (example %d, kept g" % i in st.exactness()
        st._check_end("chunk")
        st.g[i] = -1.0
        with pytest.raises(PathError, match="and 1 examples on the wrong side"):
            st._check_end("chunk")
        st.g[i] = g0
        assert st.exactness() is None


# ------------------------------------------------------------------ compiled against Python
C_CORE = pytest.importorskip("refsvm._core", reason="compiled core not built")


def _level_cases():
    rng = np.random.RandomState(11)
    for _ in range(300):
        C = 10.0 ** rng.uniform(-3, 13)
        kmax = 10.0 ** rng.uniform(-3, 3)
        amax = C * rng.choice([0.0, rng.rand(), 1.0])
        mass = amax * rng.uniform(0, 100)
        yield (10.0 ** rng.uniform(-12, -3), kmax, amax, C, rng.choice([1e5, 1e9, np.inf]),
               (int(rng.randint(1, 64)), int(rng.randint(1, 64))), rng.randn() * 10 ** rng.uniform(0, 6),
               mass, rng.choice([None, 1e-9]), int(rng.randint(1, 500)))
    yield (1e-9, 1.0, np.nan, 1.0, 1e5, (32, 32), 0.0, 1.0, None, 1)
    yield (1e-9, np.inf, 1.0, 1e12, 1e5, (32, 32), np.inf, np.nan, None, 1)


def test_compiled_levels_bit_for_bit():
    for case in _level_cases():
        tol, kmax, amax, C, above, ulps, b, mass, h_tol, count = case
        ref = kkt_levels(tol, kmax, amax, C, above, ulps, b, mass, h_tol, count)
        got = C_CORE.kkt_levels_value(tol, kmax, amax, C, above, ulps, b, mass, h_tol, count)
        assert _bits(got) == _bits(ref), case


def test_compiled_verdict_equal():
    rng = np.random.RandomState(12)
    values = [0.0, 1.0, np.nan, np.inf, -1.0, 1e-300]
    for _ in range(200):
        w, h = rng.choice(values + [rng.rand()], 2)
        lv = tuple(rng.choice(values + [rng.rand()], 2))
        for nan_fails in (False, True):
            assert C_CORE.kkt_verdict_value(w, h, lv, nan_fails) == \
                kkt_verdict(w, h, lv, nan_fails=nan_fails)


def _end_states():
    rng = np.random.RandomState(13)
    for C in (1.0, 84.2, 1e6, 1e12):
        for n in (0, 1, 5, 200):
            status = rng.choice([-1, 0, 1, 2, 3], n).astype(np.int8)
            y = rng.choice([-1.0, 1.0], n)
            alpha = np.where(status == 2, C, np.where(status == 0, 0.0, rng.rand(n) * C))
            alpha[rng.rand(n) < 0.1] = C                      # at C, whatever the code
            g = rng.randn(n) * 10 ** rng.uniform(-8, 1, n)
            if n:
                g[rng.rand(n) < 0.05] = np.nan
            yield status, y, alpha, g, C


def test_compiled_end_sums_bit_for_bit():
    for status, y, alpha, g, C in _end_states():
        assert _bits(C_CORE.end_balance_value(status, y, alpha, C)) == \
            _bits(end_balance(status, y, alpha, C))
        for level in (0.0, 1e-6, 0.5, np.inf):
            assert C_CORE.end_wrong_side_value(status, g, level) == \
                end_wrong_side(status, g, level)


def test_end_balance_is_the_ordered_sum():
    # C times the count at C, exactly, plus the free terms left to right: at C = 1e12 the
    # low digits of the free alphas survive (a plain sum from the left loses them)
    C = 1e12
    status = np.array([2, 1, 2, 1, 0], dtype=np.int8)
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    alpha = np.array([C, 0.3, C, 0.1, 0.0])
    assert end_balance(status, y, alpha, C) == (0.3 - 0.1)
    assert C_CORE.end_balance_value(status, y, alpha, C) == (0.3 - 0.1)


def test_poker_twin_end_sums_are_the_references():
    # the twin's _end_balance / _end_wrong_side (compiled) against the reference's methods
    # called on the same twin state: the same bits
    from refsvm.poker.departures.end_of_chunk import EndOfChunk
    for C in (10.0, 1e12):
        for st in _poker_states(C)[1:]:
            assert _bits(st._end_balance()) == _bits(EndOfChunk._end_balance(st))
            for level in (0.0, 1e-9, 1.0):
                assert st._end_wrong_side(level) == EndOfChunk._end_wrong_side(st, level)
