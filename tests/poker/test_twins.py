"""POKER twins: the compiled twin passes the same breakpoints with the same numbers (after
every breakpoint, dense and CSR), KKT after every breakpoint in the twin too, states move
between twins (one persistence format)."""

import numpy as np
import pytest

from refsvm.poker import poker as P

from ..conftest import assert_states_equal, to_csr
from ._oracle import KERNELS, gram, state_kwargs, two_blobs

T = pytest.importorskip("refsvm.poker._poker", reason="compiled twin not built")


def _run(module, X, y, C, kp, how, sparse=False, K=None, joint=False):
    st = module.POKERState(X.shape[1], sparse, C=C, **state_kwargs(kp))
    log = []

    def hook(s):
        log.append(s.get_state())
        if K is not None:
            r = s.check(K)
            assert max(r["kkt"], r["g_drift"], r["balance"]) <= 1e-8 * max(1.0, C), r

    st.breakpoint_hook = hook
    Xs = to_csr(X) if sparse else X
    if how == "self":
        st.self_init(Xs, y)
    else:
        for s in range(0, X.shape[0], how):
            st.add_chunk(Xs[s:s + how], y[s:s + how], joint=joint)
    st.unlearn(np.arange(0, X.shape[0], 4))
    log.append(st.get_state())
    return st, log


def _assert_twins_agree(X, y, kname, how, joint, sparse):
    """Both twins on (X, y) at C = 3, the states equal after every breakpoint (the twin's
    KKT checked at each by the hook of ``_run``)."""
    kp = KERNELS[kname]
    C = 3.0
    K = gram(X, X, **kp)
    _, ref = _run(P, X, y, C, kp, how, sparse, joint=joint)
    _, twin = _run(T, X, y, C, kp, how, sparse, K=K, joint=joint)
    assert len(ref) == len(twin) > 1
    for r, (a, b) in enumerate(zip(ref, twin)):
        assert_states_equal(a, b, rtol=1e-9, atol=1e-11, where=f"breakpoint {r}")


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kname", sorted(KERNELS))
@pytest.mark.parametrize("how, joint", [(1, False), (9, False), ("self", False), (1, True),
                                        (9, True), (20, True)])
def test_twins_agree_after_every_breakpoint(kname, how, joint, sparse):
    X, y = two_blobs(n=60, d=4, seed=11)
    X[np.abs(X) < 0.3] = 0.0
    _assert_twins_agree(X, y, kname, how, joint, sparse)


@pytest.mark.parametrize("kname", sorted(KERNELS))
@pytest.mark.parametrize("how, joint", [("self", False), (9, True)])
def test_twins_agree_with_many_dense_features(kname, how, joint):
    """Dense rows of more than 8 features take the core's four-row kernel block
    (SelfInit's class sums, the joint path's scores and columns): the twins still agree
    after every breakpoint."""
    X, y = two_blobs(n=60, d=12, seed=19)
    _assert_twins_agree(X, y, kname, how, joint, False)


def test_state_moves_between_twins():
    kp = KERNELS["rbf"]
    X, y = two_blobs(n=60, seed=12)
    a = P.POKERState(2, C=1.0, **state_kwargs(kp))
    a.add_chunk(X[:40], y[:40])
    b = T.POKERState(**a.init_params())
    b.load_state(a.save_state())
    c = P.POKERState(**b.init_params())
    c.load_state(b.save_state())
    for s in (a, b, c):
        s.add_chunk(X[40:], y[40:])
    assert_states_equal(a.get_state(), b.get_state(), rtol=1e-10)
    assert_states_equal(a.get_state(), c.get_state(), rtol=1e-10)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-12)


def test_degenerate_stream_twins():
    grid = np.array([[i, j] for i in range(-2, 3) for j in range(-2, 3)], float)
    X = np.vstack([grid, grid])
    y = np.tile(np.where((grid.sum(1) % 2) == 0, 1.0, -1.0), 2)
    for kname in ("linear", "rbf"):
        kp = KERNELS[kname]
        _, ref = _run(P, X, y, 1.0, kp, 3)
        _, twin = _run(T, X, y, 1.0, kp, 3, K=gram(X, X, **kp))
        assert len(ref) == len(twin)
        for a, b in zip(ref, twin):
            assert_states_equal(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("selection", ["maxslk", "cls2w+dobj", "maxslk+dobj"])
def test_selective_sampling_twins_agree(selection):
    """The pool ranking, the dObj look-aheads (the twin copies its state without the
    persistence round trip) and the chunks they pick: the same in both twins."""
    X, y = two_blobs(n=80, d=3, seed=13)
    out = []
    for module in (P, T):
        st = module.POKERState(3, C=2.0, **state_kwargs(KERNELS["rbf"]))
        st.learn_selective(X, y, selection=selection, chunk_size=2, n_candidates=4)
        out.append(st.get_state())
    assert_states_equal(out[0], out[1], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("cache_size", [200.0, 0.004])
def test_copies_share_cached_columns_and_go_their_own_ways(cache_size):
    """The twin's copies (the estimator's backup before a chunk, a dObj look-ahead) share
    the cached columns instead of copying them: the original and two copies each learn
    and unlearn on their own -- the cache taken over, evicted (a cache of four columns),
    freed with the original -- and each stays equal to the reference on the same
    sequence, evaluation counts included."""
    import gc
    X, y = two_blobs(n=120, d=3, seed=5)
    kw = dict(C=1.0, cache_size=cache_size, **state_kwargs(KERNELS["rbf"]))
    ref = P.POKERState(3, **kw)
    st = T.POKERState(3, **kw)
    for s in (ref, st):
        s.add_chunk(X[:50], y[:50], joint=True)
        s.add_chunk(X[50:70], y[50:70], joint=True)
    assert len(st.cache) > 0
    copies = [st._trial_copy(), st._trial_copy()]
    refs = [ref._trial_copy() for _ in copies]
    st.add_chunk(X[70:120], y[70:120], joint=True)
    st.unlearn(np.arange(0, 70, 3))
    del st
    gc.collect()
    for k, (c, r) in enumerate(zip(copies, refs)):
        for s in (c, r):
            s.add_chunk(X[70:95 + 10 * k], y[70:95 + 10 * k], joint=k == 0)
            s.unlearn(np.arange(1, 60, 4 + k))
            s.add_chunk(X[95 + 10 * k:], y[95 + 10 * k:])
        assert_states_equal(r.get_state(), c.get_state(), rtol=1e-9, atol=1e-11,
                            where=f"copy {k}")


#: degenerate streams on which c = 1e12 once broke g, y'alpha or the check (issue 15 item 3;
#: docs/fine_scheinberg.rst, "Extreme C"): copies of a point with both labels
_EXTREME = [
    ([[-1, -1], [-1, 0], [-1, 0]], [-1, -1, 1]),                   # the check's own round-off
    ([[-1, -1]] * 3, [-1, 1, -1]),                                  # y'alpha = -1 counted as 0
    ([[-1, -1], [0, 0], [-1, 0], [-1, 0]], [-1, -1, -1, 1]),        # round-off null direction
    ([[-1, 0], [-1, -1], [-1, -1]], [-1, 1, -1]),                   # alpha c - 2.54 (polish)
    ([[-1, -1]] * 15 + [[-1, 0]], [-1, 1] * 8),                     # tau summed through c
    ([[-1, -1]] * 12 + [[-1, 0]], [-1, -1, 1] * 4 + [-1]),          # f summed through c
    ([[-1, -1]] * 8 + [[-1, 0], [-1, 1]], [-1, 1] * 5),             # optimum not representable
]


@pytest.mark.parametrize("C", [1e6, 1e12])
@pytest.mark.parametrize("case", range(len(_EXTREME)))
def test_extreme_c_exact_up_to_the_resolution_of_alpha(case, C):
    """g, the KKT conditions and y'alpha after every example within 1e-6 plus 64 roundings
    of c (an alpha of order c is held to 1.1e-16 c), the twins equal bit for bit; the
    first six streams are exact (1e-6) at 1e12 (before: drift up to 1 in margin units)."""
    X, y = (np.array(a, dtype=float) for a in _EXTREME[case])
    states = [m.POKERState(2, C=C, gamma=0.5) for m in (P, T)]
    tol = 1e-6 + (64 * 2.2e-16 * C if case == len(_EXTREME) - 1 else 0.0)
    for t in range(len(y)):
        for st in states:
            st.step(X[t], y[t])
        assert_states_equal(states[0].get_state(), states[1].get_state(), rtol=0.0, atol=0.0,
                            where=f"example {t}")
        r = states[0].check()
        assert max(r.values()) <= tol, (t, r)


@pytest.mark.parametrize("kname", sorted(KERNELS))
@pytest.mark.parametrize("how", [1, 9, "self"])
def test_twins_agree_without_a_hook(kname, how):
    """Without a breakpoint hook the twin applies each move of g with the next scan (one
    pass fewer per breakpoint); the same operations on the same numbers: the states after
    every chunk and after the decrement are equal bit for bit."""
    kp = KERNELS[kname]
    X, y = two_blobs(n=60, d=4, seed=13)
    states = [m.POKERState(4, C=3.0, **state_kwargs(kp)) for m in (P, T)]
    chunks = [(0, 60)] if how == "self" else [(s, s + how) for s in range(0, 60, how)]
    for start, stop in chunks:
        for st in states:
            if how == "self":
                st.self_init(X, y)
            else:
                st.add_chunk(X[start:stop], y[start:stop])
        assert_states_equal(states[0].get_state(), states[1].get_state(), rtol=0.0, atol=0.0,
                            where=f"after {stop}")
    for st in states:
        st.unlearn(np.arange(0, 60, 4))
    assert_states_equal(states[0].get_state(), states[1].get_state(), rtol=0.0, atol=0.0,
                        where="after the decrement")


def _bits(state):
    """A get_state() dict with every float array as its bit pattern (so -0.0 != 0.0)."""
    out = {}
    for key, v in state.items():
        a = np.asarray(v)
        out[key] = a.view(np.int64) if a.dtype == np.float64 else a
    return out


@pytest.mark.parametrize("case", ["blobs", "grid"])
@pytest.mark.parametrize("how", [1, 9, "self"])
def test_vector_scan_gives_the_same_bits(case, how):
    """The event scan eight examples at a time (AVX-512F) and one at a time pass the same
    breakpoints with the same bits after every breakpoint: fixed-bias and adjustable-bias
    paths and the decrement, a stream of duplicates with ties and zero steps, a length
    that leaves a tail of fewer than eight."""
    if not T._vector_scan():
        pytest.skip("the CPU has no AVX-512F: only the one-at-a-time scan runs")
    if case == "blobs":
        X, y = two_blobs(n=83, d=3, seed=21)
    else:
        grid = np.array([[i, j] for i in range(-2, 3) for j in range(-2, 3)], float)
        X = np.vstack([grid, grid, grid[:7]])
        y = np.r_[np.tile(np.where((grid.sum(1) % 2) == 0, 1.0, -1.0), 2), np.ones(7)]
    logs = []
    try:
        for flag in (True, False):
            T._vector_scan(flag)
            for kname in ("linear", "rbf"):
                _, log = _run(T, X, y, 2.0, KERNELS[kname], how,
                              K=gram(X, X, **KERNELS[kname]))
                logs.append(log)
    finally:
        T._vector_scan(True)
    for vec, one in zip(logs[:2], logs[2:]):
        assert len(vec) == len(one) > 1
        for r, (a, b) in enumerate(zip(vec, one)):
            a, b = _bits(a), _bits(b)
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(a[key], b[key], err_msg=f"breakpoint {r}: {key}")


@pytest.mark.parametrize("kname", ["rbf", "linear"])
def test_twins_agree_learning_after_unlearning(kname):
    """Chunks, a decrement, more chunks, another decrement, a last chunk: kernel columns
    are computed with unlearned (and, inside a chunk, pending) examples in the problem's
    ids, whole or from the cache; after every breakpoint the twins' states, kernel
    evaluation counts included, are equal bit for bit."""
    kp = KERNELS[kname]
    X, y = two_blobs(n=150, d=3, seed=17)
    logs = []
    for module in (P, T):
        st = module.POKERState(3, C=2.0, **state_kwargs(kp))
        log = []
        st.breakpoint_hook = lambda s: log.append(s.get_state())
        st.add_chunk(X[:40], y[:40])
        st.unlearn(np.arange(0, 40, 3))
        st.add_chunk(X[40:90], y[40:90])
        st.add_chunk(X[90:97], y[90:97])
        st.unlearn(np.arange(41, 97, 5))
        st.add_chunk(X[97:], y[97:])
        log.append(st.get_state())
        logs.append(log)
    assert len(logs[0]) == len(logs[1]) > 10
    for r, (a, b) in enumerate(zip(*logs)):
        a, b = _bits(a), _bits(b)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"breakpoint {r}: {key}")
