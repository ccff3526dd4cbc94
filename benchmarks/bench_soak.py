"""Soak: memory against stream length for the streaming estimators (issue 15 item 9).

    python -m pytest benchmarks/bench_soak.py -s -q        # prints RSS tables

Each estimator learns a long stream in chunks of ``partial_fit`` (compiled twin); the
resident set size (``/proc/self/statm``) is recorded after each chunk.  The linear family
keeps O(d) state, so its RSS must stay flat (the test asserts growth below 5 MB over
10⁶ examples).  OnlineRampSVM with ``max_non_sv=m`` keeps |I| ≤ #SV + max(m, #SV)
examples (the removal budget grows with #SV by default, departure ``budget_per_sv``;
asserted after every chunk), so its memory is O(#SV · |I|) for the kept kernel rows —
it grows only with the support vectors, not with the stream.
"""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import refsvm

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="Linux /proc")


def rss_mb():
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _chunks(n_total, chunk, d, seed=0):
    rng = np.random.RandomState(seed)
    w = rng.randn(d)
    for _ in range(n_total // chunk):
        X = rng.randn(chunk, d)
        y = np.where(X @ w + 0.5 * rng.randn(chunk) > 0, 1, -1)
        yield X, y


@pytest.mark.parametrize("make", [
    lambda: refsvm.Perceptron(max_epochs=1),
    lambda: refsvm.PassiveAggressive(C=0.1),
    lambda: refsvm.ProximalPassiveAggressive(C=0.1),
    lambda: refsvm.OnlineLinearSVM(lam=1e-4, average=True, project=True),
    lambda: refsvm.StreamSVM(C=1.0),
    lambda: refsvm.StreamSVM(C=1.0, lookahead=10),
    lambda: refsvm.ReducedKernelPA(C=0.1, n_reduced=50, gamma=0.05, random_state=0),
], ids=["Perceptron", "PA", "PAm", "OnlineLinearSVM", "StreamSVM", "StreamSVM-L10", "RKPA"])
def test_bounded_state_memory_is_flat(make):
    """The estimators whose state does not grow with the stream: O(d) (linear family,
    linear StreamSVM) or O(m̃²) (RKPA).  Flat means: after a warm-up of a quarter of the
    stream (the allocator settles on its arenas for the 8 MB chunks), RSS grows by less
    than 5 MB over the remaining 750,000 examples — under 7 bytes per example, so any
    per-example leak fails."""
    est = make()
    table = []
    for t, (X, y) in enumerate(_chunks(1_000_000, 50_000, 20), start=1):
        est.partial_fit(X, y, classes=[-1, 1])
        del X, y
        gc.collect()
        table.append((t * 50_000, rss_mb()))
    first = table[len(table) // 4 - 1][1]  # after the warm-up quarter
    print(f"\n{type(est).__name__}: examples -> RSS MB")
    for n, mb in table[::4] + [table[-1]]:
        print(f"  {n:>9,}  {mb:8.1f}")
    assert table[-1][1] - first < 5.0, table


@pytest.mark.parametrize("m", [0, 100])
def test_ramp_with_removal_keeps_I_bounded(m):
    est = refsvm.OnlineRampSVM(C=1.0, gamma=0.5, max_non_sv=m)
    rng = np.random.RandomState(1)
    print(f"\nOnlineRampSVM max_non_sv={m}: examples, |I|, #SV, RSS MB")
    for t in range(1, 21):
        X = rng.randn(1000, 2)
        y = np.where(X[:, 0] + 0.3 * rng.randn(1000) > 0, 1, -1)
        est.partial_fit(X, y, classes=[-1, 1])
        n_sv = int(np.sum(est.n_support_))
        assert est.n_I_ <= n_sv + max(m, n_sv), (est.n_I_, n_sv, m)
        if t % 5 == 0:
            print(f"  {t * 1000:>7,}  {est.n_I_:>6}  {n_sv:>6}  {rss_mb():8.1f}")


def test_ramp_hinge_stretches_do_not_grow_with_the_stream():
    """The departure ``rewarm`` learns a noisy stream in hinge stretches, whose model keeps
    a share of its arrivals as support vectors; ``rewarm_max`` ends a stretch every 4,000
    arrivals at most, so the support vectors of a long stream stay within a small factor
    of the printed ramp's (Gauss, 40,000 arrivals: 4,152 at most against 1,738; 13,520
    with uncapped stretches, 2026-11-30)."""
    from refsvm.datasets import make_gauss

    X, y = make_gauss(40_000, random_state=21)
    peak = {}
    for name, deps in (("defaults", None), ("rewarm off", {"rewarm": 0.0})):
        est = refsvm.OnlineRampSVM(C=1.0, gamma=0.5, departures=deps)
        peak[name] = 0
        for i in range(0, X.shape[0], 2000):
            est.partial_fit(X[i:i + 2000], y[i:i + 2000], classes=[-1, 1])
            peak[name] = max(peak[name], int(np.sum(est.n_support_)))
    print(f"\nOnlineRampSVM, Gauss 40,000 arrivals, peak #SV: {peak}")
    assert peak["defaults"] <= 3 * peak["rewarm off"], peak


def test_kernel_pa_memory_follows_the_support_vectors():
    """KernelPassiveAggressive keeps every support vector (the paper's model has no
    budget): memory is O(#SV · d) for the rows, so RSS must grow with #SV, not with the
    stream — the bytes per stored SV stay bounded while the stream runs on."""
    est = refsvm.KernelPassiveAggressive(C=0.1, gamma=0.5)
    rng = np.random.RandomState(2)
    base = rss_mb()
    print("\nKernelPassiveAggressive: examples, #SV, RSS MB")
    for t in range(1, 21):
        X = rng.randn(5000, 2)
        y = np.where(X[:, 0] + 0.3 * rng.randn(5000) > 0, 1, -1)
        est.partial_fit(X, y, classes=[-1, 1])
        n_sv = int(np.sum(est.n_support_))
        if t % 5 == 0:
            print(f"  {t * 5000:>7,}  {n_sv:>6}  {rss_mb():8.1f}")
    # each SV costs its row (2 doubles), its coefficient and index: well under 1 KB,
    # plus at most 5 MB of allocator slack
    assert (rss_mb() - base) * 2**20 < 5 * 2**20 + 1024 * n_sv
