"""The core's C scans that IncrementalSVM's twin calls (``refsvm_max`` in ``_scales``,
``refsvm_join_scan`` in ``_events``) against plain Python loops of the code they
replaced, bit for bit (AVX2 bodies where the CPU has them)."""

import numpy as np
import pytest

twin = pytest.importorskip("refsvm.idsvm._incremental_svm")

ERR, REST = 2, 0      # any two codes: the scan takes them as arguments


def _plain_max(x, m):
    for v in x:
        if v > m:
            m = v
    return m


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 8, 9, 16, 17, 40, 1001])
def test_max_is_the_plain_loop(n):
    """From m, only a greater entry counts: NaN passed over, -0.0 never replaces 0.0,
    wherever the largest entry sits."""
    rng = np.random.RandomState(n)
    for trial in range(30):
        x = rng.randn(n) * 10.0 ** rng.randint(-3, 4, size=n)
        if n and trial % 3 == 0:
            x[rng.randint(n)] = np.nan
        if n and trial % 5 == 0:
            x[rng.randint(n)] = -0.0
        if n and trial % 7 == 0:
            x[:] = -np.abs(x)        # nothing above m = 0.0
        for m in (0.0, -1.0, 0.5, -np.inf):
            want = _plain_max(x, m)
            got = twin.max_value(x, m)
            assert np.float64(got).tobytes() == np.float64(want).tobytes(), (trial, m)


def _plain_scan(status, blk, r, g, kroot, tol0, eg, gam, rtb, rt0, best):
    """The loop of IncrementalSVMState._events, pass 1, as it was written in the twin."""
    bi, tb, tl = -1, [], []
    for i in range(len(status)):
        st = int(status[i])
        sd = float(int(st == ERR) - int(st == REST))
        rr = float(r[i])
        ar = sd * rr
        lim = (ar * best + eg) * (1.0 + 1e-9)
        take = (ar > tol0) and (blk[i] == 0) and ((-sd) * float(g[i]) <= lim)
        if take and ar > gam * (float(kroot[i]) * rtb + rt0):
            t = -float(g[i]) / rr
            if t < 0.0:
                t = 0.0
            tb.append(t)
            tl.append(i)
            if t < best:
                best = t
                bi = i
    return best, bi, tb, tl


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 8, 13, 64, 1003])
def test_join_scan_is_the_plain_loop(n):
    """The same candidates, steps, best step and its id as the plain loop, with many
    candidates (the best changing inside a group of four), with few, with NaN and
    infinite rates, blocked entries and an infinite start."""
    rng = np.random.RandomState(7 + n)
    for trial in range(40):
        status = rng.choice([-2, -1, 0, 1, 2, 3], size=n).astype(np.int8)
        blk = (rng.rand(n) < 0.2).astype(np.int8)
        r = rng.randn(n) * 10.0 ** rng.randint(-14, 2, size=n)
        dense = trial % 2 == 0
        g = (rng.randn(n) if dense else rng.rand(n) * 5.0 + 0.1) * np.where(
            status == ERR, -1.0, 1.0) * (1.0 if dense else -1.0)
        kroot = rng.rand(n) * 2.0
        if n and trial % 4 == 1:
            r[rng.randint(n)] = np.nan
            g[rng.randint(n)] = np.inf
            r[rng.randint(n)] = 0.0
        for best in (np.inf, 0.3, 1e-8):
            for rtb, rt0 in ((1.0, 1.0), (0.0, 0.0), (3.0, 1e-3)):
                args = (status, blk, r, g, kroot, 1e-12 * rt0, 1e-9, 1e-12, rtb, rt0, best)
                want = _plain_scan(*args)
                got = twin.join_scan_arrays(status, blk, r, g, kroot, ERR, REST, *args[5:])
                assert np.float64(got[0]).tobytes() == np.float64(want[0]).tobytes()
                assert got[1] == want[1]
                np.testing.assert_array_equal(np.asarray(got[2]).view(np.int64),
                                              np.asarray(want[2], dtype=np.float64).view(np.int64))
                np.testing.assert_array_equal(got[3], want[3])
