"""The margin set of the exact active-set engine: the reference
(refsvm.core.margin_set.MarginSet) and the compiled core's (refsvm._core.MarginSet) driven
through the same starts, grows, shrinks (one refused) and row changes end with the same
S, R and KS, bit for bit, and R is the inverse of the bordered matrix."""

import numpy as np
import pytest

from refsvm.core.bordered import bordered_pivot, symmetrize
from refsvm.core.margin_set import MarginSet

_core = pytest.importorskip("refsvm._core")


def _kernel(n, seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return y, np.exp(-0.5 * d)


def _ops(K, seed):
    """A random sequence: a start, grows and removes (a remove with eps = 1 is refused:
    |R_pp| <= max|R|), S emptied and started again, the rows grown (their values kept)
    and the rows of the last two examples (never members) zeroed."""
    rng = np.random.RandomState(seed)
    n = K.shape[0]
    ops = [("rows", 24)]
    S, out = [], list(range(n - 2))
    for step in range(60):
        if step == 30:
            ops.append(("rows", 48))
        if step == 40:
            ops.append(("zero", n - 2, n))
        if not S:
            i = out.pop(int(rng.randint(len(out))))
            ops.append(("start", i, K[i, i], K[:, i]))
            S.append(i)
        elif len(S) < 6 and out and rng.rand() < 0.6:
            i = out.pop(int(rng.randint(len(out))))
            ops.append(("grow", i, K[i, i], K[:, i]))
            S.append(i)
        else:
            pos = int(rng.randint(len(S)))
            refuse = len(S) > 1 and rng.rand() < 0.3
            ops.append(("remove", pos, 1.0 if refuse else 1e-15))
            out.append(S.pop(pos))
    return ops


def _run_reference(ops, y):
    ms = MarginSet()
    results = []
    for op in ops:
        if op[0] == "rows":
            ms.reserve_rows(op[1])
        elif op[0] == "zero":
            ms.zero_rows(op[1], op[2])
        elif op[0] == "start":
            ms.start(op[1], y[op[1]], op[2], np.asarray(op[3]))
        elif op[0] == "grow":
            m = ms.m_of(op[1], y)
            beta = ms.beta(m)
            ms.grow(op[1], beta, bordered_pivot(op[2], m, beta), np.asarray(op[3]))
        else:
            refused = ms.remove(op[1], op[2])
            results.append(refused)
            if refused and ms.S:
                ms.R = symmetrize(ms.inverse(y))
    return results, ms


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_and_compiled_margin_sets_agree(seed):
    y, K = _kernel(20, seed)
    ops = _ops(K, seed)
    results, ms = _run_reference(ops, y)
    c_results, c_S, c_R, c_KS = _core.margin_set_run(ops, y)
    assert any(results)                                  # a refused shrink was taken
    assert results == c_results
    assert ms.S == c_S
    ns = len(ms.S)
    R = ms.R if ns else np.zeros((1, 1))
    np.testing.assert_array_equal(R, c_R)
    np.testing.assert_array_equal(ms.KS[:20, :ns], c_KS)
    if ns:
        M = ms.bordered(y)
        np.testing.assert_allclose(R @ M, np.eye(ns + 1), atol=1e-8)


def test_remove_refused_leaves_R():
    y, K = _kernel(4, 3)
    ms = MarginSet(empty=0)
    ms.reserve_rows(4)
    ms.start(0, y[0], K[0, 0], K[:, 0])
    m = ms.m_of(1, y)
    beta = ms.beta(m)
    ms.grow(1, beta, bordered_pivot(K[1, 1], m, beta), K[:, 1])
    R = ms.R.copy()
    assert ms.remove(0, 1.0) is True                     # |R_pp| <= max|R|: refused
    assert ms.S == [1] and ms.R.shape == R.shape
    np.testing.assert_array_equal(ms.KS[:, 0], K[:, 1])
    assert ms.remove(0, 1e-15) is False and ms.R.shape == (0, 0)
