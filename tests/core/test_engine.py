"""The membership changes of the exact active-set engine: the reference
(refsvm.core.engine.join / leave over refsvm.core.margin_set.MarginSet and
refsvm.core.column_cache.ColumnCache) and the compiled core's (engine_join /
engine_leave, driven by refsvm._core.engine_run) given the same joins and leaves (at C,
at zero, with a family's own code and alpha untouched; a refused downdate among them;
the column kept or not) end with the same S, R, KS, alpha, status and cache, bit for
bit."""

import numpy as np
import pytest

from refsvm.core.active_set import AT_C, AT_ZERO, IN_S
from refsvm.core.bordered import bordered_pivot, symmetrize
from refsvm.core.column_cache import ColumnCache
from refsvm.core.engine import join, leave
from refsvm.core.margin_set import MarginSet

_core = pytest.importorskip("refsvm._core")

OWN = -1          # a family's own code (C&P's OUT, POKER's FORCED): alpha left as it is


def _kernel(n, seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return y, np.exp(-0.5 * d), rng.rand(n)


def _ops(n, seed):
    """Random joins and leaves: a leave goes to C, to 0 or to a family's own code (alpha
    untouched), keeps its column or not, and is refused now and then (eps = 1)."""
    rng = np.random.RandomState(seed)
    S, out, ops = [], list(range(n)), []
    for _ in range(80):
        if not S or (len(S) < 7 and out and rng.rand() < 0.55):
            i = out.pop(int(rng.randint(len(out))))
            ops.append(("join", i, IN_S))
            S.append(i)
        else:
            pos = int(rng.randint(len(S)))
            where = int(rng.randint(3))
            code, up = ((AT_C, True), (AT_ZERO, False), (OWN, None))[where]
            eps = 1.0 if len(S) > 1 and rng.rand() < 0.25 else 1e-15
            ops.append(("leave", pos, code, up, bool(rng.rand() < 0.7), eps))
            out.append(S.pop(pos))
    return ops


def _run_reference(ops, y, K, alpha, status, C, budget):
    n = y.shape[0]
    ms, cache = MarginSet(), ColumnCache()
    alpha, status = alpha.copy(), status.copy()
    ms.reserve_rows(n)
    results = []

    def cache_put(i, col):
        cache.put(i, col[:n].copy(), budget)

    for op in ops:
        if op[0] == "join":
            i = op[1]
            beta = kappa = None
            if ms.S:
                m = ms.m_of(i, y)
                beta = ms.beta(m)
                kappa = bordered_pivot(K[i, i], m, beta)
            join(ms, i, status, y, K[i, i], K[:, i].copy(), beta, kappa, op[2])
        else:
            _, pos, code, up, keep, eps = op
            s, refused = leave(ms, pos, status, code, eps,
                               alpha=None if up is None else alpha,
                               value=C if up else 0.0, cache_put=cache_put if keep else None)
            results.append((s, refused))
            if refused and ms.S:
                ms.R = symmetrize(ms.inverse(y))
    return results, ms, alpha, status, cache.arrays()


@pytest.mark.parametrize("adopt", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_and_compiled_membership_changes_agree(seed, adopt):
    y, K, a0 = _kernel(24, seed)
    C = 0.75
    alpha = a0 * C
    status = np.full(24, AT_ZERO, dtype=np.int8)
    ops = _ops(24, seed)
    budget = 8 * 24 * 5                                   # five columns: the oldest go
    results, ms, a_ref, s_ref, cache_ref = _run_reference(ops, y, K, alpha, status, C,
                                                          budget)
    c_results, c_S, c_R, c_KS, a_c, s_c, cache_c = _core.engine_run(
        ops, y, K, alpha, status, C, budget, adopt)
    assert any(r for _, r in results)                    # a refused downdate was taken
    assert {op[2] for op in ops if op[0] == "leave"} == {AT_C, AT_ZERO, OWN}
    assert results == c_results
    assert ms.S == c_S
    ns = len(ms.S)
    np.testing.assert_array_equal(ms.R if ns else np.zeros((1, 1)), c_R)
    np.testing.assert_array_equal(ms.KS[:24, :ns], c_KS)
    np.testing.assert_array_equal(a_ref, a_c)
    np.testing.assert_array_equal(s_ref, s_c)
    for r, c in zip(cache_ref, cache_c):
        np.testing.assert_array_equal(r, c)
    # what the operations promise, on the reference's state
    assert all(s_ref[i] == IN_S for i in ms.S)
    for op, (s, _) in zip([op for op in ops if op[0] == "leave"], results):
        if op[3] is not None and s not in ms.S:
            assert a_ref[s] in (0.0, C)
    assert len(cache_ref[0]) > 0                         # columns were kept
    if ns:
        np.testing.assert_allclose(ms.R @ ms.bordered(y), np.eye(ns + 1), atol=1e-8)


def test_leave_sets_alpha_status_and_cache_in_order():
    """The cache hook sees the column before R shrinks (the member's own column) and the
    status the member had; alpha is set first; the code comes last."""
    y, K, _ = _kernel(5, 4)
    ms = MarginSet(empty=0)
    ms.reserve_rows(5)
    status = np.zeros(5, dtype=np.int8)
    join(ms, 2, status, y, K[2, 2], K[:, 2].copy())
    m = ms.m_of(4, y)
    beta = ms.beta(m)
    join(ms, 4, status, y, K[4, 4], K[:, 4].copy(), beta, bordered_pivot(K[4, 4], m, beta))
    alpha = np.zeros(5)
    seen = []

    def hook(i, col):
        seen.append((i, col[:5].copy(), int(status[i]), alpha[i]))

    s, refused = leave(ms, 0, status, AT_C, 1e-15, alpha=alpha, value=0.5, cache_put=hook)
    assert (s, refused) == (2, False)
    assert seen[0][0] == 2 and seen[0][2] == IN_S and seen[0][3] == 0.5
    np.testing.assert_array_equal(seen[0][1], K[:, 2])
    assert ms.S == [4] and status[2] == AT_C and alpha[2] == 0.5
