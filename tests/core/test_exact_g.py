"""POKER's correctly rounded sums, compiled and in Python, on the same state: the
compiled twin's ``_polish_g`` (the core's nogil ``g_exact_rows`` over the rows),
``_fsum``, ``_exact_balance`` and ``_g_exact`` (the core's compiled sum,
``refsvm/_csrc/refsvm_fsum.c``) against the reference's methods of the same names
(``refsvm.poker.departures.end_of_chunk.EndOfChunk``: ``math.fsum`` through
``refsvm.core.exactness``), called on one twin state at large c: the same bits and the
same kernel counts; and the polish and the exactness check run with either set of
pieces end in the same state, bit for bit."""

import types

import numpy as np
import pytest
import scipy.sparse as sp

from refsvm.poker.departures.end_of_chunk import EndOfChunk

T = pytest.importorskip("refsvm.poker._poker", reason="compiled twin not built")

PIECES = ("_fsum", "_exact_balance", "_g_exact", "_polish_g")


def _stream(seed, n=40, d=3):
    """Points with copies carrying both labels (the extreme-c streams of the polish)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[n // 2:] = X[: n - n // 2] + rng.choice([0.0, 1e-9], size=(n - n // 2, d))
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    return X, y


def _state(seed, C, kernel, sparse):
    X, y = _stream(seed)
    st = T.POKERState(X.shape[1], sparse, C=C, kernel=kernel, gamma=0.5)
    Xs = sp.csr_matrix(X) if sparse else X
    for s in range(0, X.shape[0], 8):
        st.add_chunk(Xs[s:s + 8], y[s:s + 8])
    return st


def _with_reference_pieces(st):
    """A copy of the twin state whose correctly rounded sums are the reference's."""
    c = st._trial_copy()
    for name in PIECES:
        setattr(c, name, types.MethodType(getattr(EndOfChunk, name), c))
    return c


def _bits(state):
    return {k: np.asarray(v).tobytes() for k, v in state.get_state().items()}


CASES = [(seed, C, kernel, sparse) for seed in (0, 1, 2) for C in (1e6, 1e12)
         for kernel in ("rbf", "linear") for sparse in (False, True)]


@pytest.mark.parametrize("seed,C,kernel,sparse", CASES)
def test_pieces_equal_bit_for_bit(seed, C, kernel, sparse):
    st = _state(seed, C, kernel, sparse)
    n = st.n
    act = np.flatnonzero(st.status[:n] >= 0)
    sv = act[st.alpha[act] > 0.0]
    assert sv.size
    # g afresh of every learned example, and of a few in another order
    for ids in (act, act[::-3]):
        outs, counts = [], []
        for f in (T.POKERState._polish_g, EndOfChunk._polish_g):
            out = np.full(n, np.nan)
            k0 = st.n_kernel_evals
            f(st, ids, sv, out)
            outs.append(out.tobytes())
            counts.append(st.n_kernel_evals - k0)
        assert outs[0] == outs[1]
        assert counts[0] == counts[1] == sum(sv.size - (i in sv) for i in ids)
    a, y = st.alpha[act], st.y[act]
    for f, g in ((T.POKERState._fsum, EndOfChunk._fsum),):
        assert np.float64(f(st, a)).tobytes() == np.float64(g(st, a)).tobytes()
    assert np.float64(T.POKERState._exact_balance(st, y, a)).tobytes() == \
        np.float64(EndOfChunk._exact_balance(st, y, a)).tobytes()
    K = np.asarray(st.KS)[sv, :len(st.S)].T if st.S else np.ones((1, sv.size))
    ys = st.y[st.S] if st.S else np.ones(1)
    ya = st.alpha[sv] * st.y[sv]
    assert T.POKERState._g_exact(st, ya, K, ys, st.b).tobytes() == \
        EndOfChunk._g_exact(st, ya, K, ys, st.b).tobytes()


@pytest.mark.parametrize("seed,C,kernel,sparse", CASES)
def test_polish_and_exactness_equal_with_either_pieces(seed, C, kernel, sparse):
    st = _state(seed, C, kernel, sparse)
    # the state moved off its exact point, so that the Newton step and g afresh act
    st.alpha[st.S] *= 1.0 + 1e-12
    st.b = st.b * (1.0 + 1e-12) + 1e-9
    compiled, reference = st._trial_copy(), _with_reference_pieces(st)
    for s in (compiled, reference):
        s._polish(force=True)
    assert _bits(compiled) == _bits(reference)
    assert compiled.n_kernel_evals == reference.n_kernel_evals
    assert compiled.exactness() == reference.exactness()
    assert compiled.exactness(fresh=True) == reference.exactness(fresh=True)


def test_errors_of_the_sum_reach_the_caller():
    """A sum with +inf and -inf raises math.fsum's ValueError from both pieces."""
    st = _state(0, 1e6, "rbf", False)
    n = st.n
    act = np.flatnonzero(st.status[:n] >= 0)
    sv = act[st.alpha[act] > 0.0][:2]
    st.alpha[sv[0]], st.alpha[sv[1]] = np.inf, np.inf
    st.y[sv[0]], st.y[sv[1]] = 1.0, -1.0
    ids = sv[:1]                       # k(x_i, x_i) = 1 and k(x_i, x_j) > 0: inf - inf
    for f in (T.POKERState._polish_g, EndOfChunk._polish_g):
        with pytest.raises(ValueError):
            f(st, ids, sv, np.zeros(n))


def test_dot2_rows_equal_the_reference_bit_for_bit():
    """The twin's ``_dot2_rows`` (the core's compiled Dot2) against the reference's
    (``refsvm.core.exactness.dot2_sum``): the same (p, s) on terms of every size,
    cancelling sums, and products whose split overflows (the error term taken as 0)."""
    rng = np.random.RandomState(4)
    st = _state(0, 1e6, "rbf", False)
    for nrows, m in [(0, 3), (1, 1), (7, 0), (33, 17), (200, 301)]:
        coef = rng.randn(m) * 10.0 ** rng.randint(-8, 9, size=m)
        K = rng.rand(nrows, m)
        if m > 1:
            coef[1] = -coef[0]                       # a cancelling pair
        if m > 2 and nrows:
            coef[2], K[0, 2] = 1e300, 1e8             # the split of 1e300 overflows
        want = EndOfChunk._dot2_rows(st, coef, K)
        got = st._dot2_rows(coef, K)
        for w, g in zip(want, got):
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    with pytest.raises(ValueError, match="coefficient"):
        st._dot2_rows(np.ones(3), np.ones((2, 4)))
