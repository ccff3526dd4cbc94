"""The making of a kernel column in the exact active-set engine: the reference
(refsvm.core.engine.column) and the compiled core's (engine_column, driven by
refsvm._core.engine_column_value) given the same state -- both conventions for the ids off
the problem (C&P's 0, POKER's NaN), cached parts of several lengths (with unknown
entries or clean), values the caller has (as pairs, or already in the output for the
ids of some status codes), the margin set's columns, gone and pending ids, and the fast
path that evaluates every row at once -- make the same column, bit for bit, with the
same kernel-evaluation count."""

import numpy as np
import pytest
import scipy.sparse as sp

from refsvm.core.engine import column
from refsvm.core.kernels import Kernel, SparseRow
from refsvm.core.margin_set import MarginSet

_core = pytest.importorskip("refsvm._core")

N = 23
KERNELS = [("rbf", {"gamma": 0.3}), ("linear", {}), ("poly", {"gamma": 0.5, "coef0": 1.0})]


def _state(sparse, seed, kind, params):
    """Rows in both stores, a status array with gone (-1) and pending (-2) ids, and a
    margin set S of ids in the problem."""
    rng = np.random.RandomState(seed)
    X = rng.randn(N, 5)
    X[rng.rand(N, 5) < 0.4] = 0.0
    status = rng.choice(np.array([0, 1, 2, 3], dtype=np.int8), size=N)
    status[rng.choice(N, 5, replace=False)] = -1
    status[rng.choice(N, 2, replace=False)] = -2
    store = _core.RowStore(5, sparse)
    if sparse:
        M = sp.csr_matrix(X)
        M.indices = M.indices.astype(np.int32)
        rows = [SparseRow(M.indices[M.indptr[i]:M.indptr[i + 1]].copy(),
                          M.data[M.indptr[i]:M.indptr[i + 1]].copy()) for i in range(N)]
        for i in range(N):
            store.append(M, i)
    else:
        rows = [X[i].copy() for i in range(N)]
        for i in range(N):
            store.append(X, i)
    on = np.flatnonzero(status >= 0)
    S = [int(s) for s in rng.choice(on, 4, replace=False)]
    K = np.array([[Kernel(kind, **params).value(rows[a], rows[b]) for b in range(N)]
                  for a in range(N)])
    return rng, rows, store, status, S, K


def _cases(rng, status, S, K, c):
    """(cached, cached_clean, given pairs, KS) combinations; cached, given and KS values
    are offset from the true kernel values so that a wrong source shows in the bits."""
    on = np.flatnonzero(status >= 0)
    KS = K[:, S] + 300.0
    for L in (None, 0, 1, 7, N // 2, N - 1, N):
        for holes in (False, True):
            if L is None and holes:
                continue
            cached = None if L is None else K[:L, c] + 100.0
            if cached is not None and holes:
                cached = cached.copy()
                cached[rng.rand(L) < 0.4] = np.nan
            for g in range(3):
                if g == 0:
                    given = None
                else:
                    ids = rng.choice(N, 6)                  # repeats, off ids, c, S
                    ids[0] = S[0]
                    ids[1] = c
                    if g == 2:
                        ids[2] = ids[3]
                    given = (ids.astype(np.intp), K[ids, c] + 200.0 + np.arange(6))
                yield cached, not holes, given, KS


def _reference(kind, params, rows, status, S, KS, c, kcc, cached, given, zero_off):
    k = Kernel(kind, **params)
    ms = MarginSet()
    ms.S = list(S)
    ms.KS = KS
    pairs = () if given is None else zip(*given)
    col = column(N, c, status, kcc, k, rows, cached=cached, given=pairs, margin=ms,
                 zero_off=zero_off)
    return col, k.n_evals


def _compiled(kind, params, store, status, S, KS, c, kcc, cached, clean, given, zero_off,
              whole=False, use_ks=True, given_codes=0, prefilled=None):
    k = _core.CKernel(kind, **params)
    col, flag = _core.engine_column_value(store, k, c, status, kcc, S=S, KS=KS,
                                          cached=cached, cached_clean=clean, given=given,
                                          given_codes=given_codes, prefilled=prefilled,
                                          use_ks=use_ks, zero_off=zero_off, whole=whole)
    return col, k.n_evals, flag


def _same(a, b):
    assert a.shape == b.shape
    assert a.tobytes() == b.tobytes(), np.flatnonzero(a.view(np.int64) != b.view(np.int64))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kind,params", KERNELS)
@pytest.mark.parametrize("zero_off", [True, False])
def test_compiled_column_is_the_reference(sparse, kind, params, zero_off):
    for seed in range(3):
        rng, rows, store, status, S, K = _state(sparse, seed, kind, params)
        on = [int(i) for i in np.flatnonzero(status >= 0) if i not in S]
        for c in on[:3]:
            kcc = K[c, c] + 0.5                     # k(x_c, x_c) is the caller's: never evaluated
            n_cases = 0
            for cached, clean, given, KS in _cases(rng, status, S, K, c):
                ref, ref_evals = _reference(kind, params, rows, status, S, KS, c, kcc,
                                            cached, given, zero_off)
                for whole in (False, True):
                    col, evals, flag = _compiled(kind, params, store, status, S, KS, c,
                                                 kcc, cached, clean, given, zero_off,
                                                 whole=whole)
                    _same(col, ref)
                    assert evals == ref_evals
                    if flag:
                        assert not np.isnan(col).any()
                n_cases += 1
                # the sources are each used: cached, given, KS and evaluated values differ
                assert ref[c] == kcc
                if zero_off:
                    assert (ref[status < 0] == 0.0).all()
                    assert not np.isnan(ref).any()
            assert n_cases > 20


@pytest.mark.parametrize("sparse", [False, True])
def test_fast_path_evaluates_every_row_and_counts_what_the_reference_does(sparse):
    rng, rows, store, status, S, K = _state(sparse, 7, "rbf", {"gamma": 0.3})
    c = next(i for i in range(N) if status[i] >= 0 and i not in S)
    KS = K[:, S] + 300.0
    for zero_off in (True, False):
        ref, ref_evals = _reference("rbf", {"gamma": 0.3}, rows, status, S, KS, c, 2.0,
                                    None, None, zero_off)
        col, evals, flag = _compiled("rbf", {"gamma": 0.3}, store, status, S, KS, c, 2.0,
                                     None, False, None, zero_off, whole=True)
        _same(col, ref)
        assert evals == ref_evals == int((status >= 0).sum()) - len(S) - 1
        assert flag == (1 if zero_off else 0)      # NaN at the ids off the problem
        # a NaN in KS's row c (an id S has not seen): the general path, the same column
        KS2 = KS.copy()
        KS2[c, 1] = np.nan
        ref2, ref2_evals = _reference("rbf", {"gamma": 0.3}, rows, status, S, KS2, c,
                                      2.0, None, None, zero_off)
        col2, evals2, _ = _compiled("rbf", {"gamma": 0.3}, store, status, S, KS2, c, 2.0,
                                    None, False, None, zero_off, whole=True)
        _same(col2, ref2)
        assert evals2 == ref2_evals


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("L", [0, 4, N])
def test_given_codes_read_the_values_already_in_the_output(sparse, L):
    """C&P's arrival: the values of the ids in S and E (codes 1 and 2) are already in the
    output; the reference is given them as pairs (beyond the cached part)."""
    rng, rows, store, status, S, K = _state(sparse, 3, "rbf", {"gamma": 0.3})
    c = next(i for i in range(N) if status[i] >= 0 and i not in S)
    cached = K[:L, c] + 100.0
    prefilled = np.full(N, -7.0)
    sv = [l for l in range(N) if status[l] in (1, 2) and l != c]
    prefilled[sv] = K[sv, c] + 200.0
    beyond = [l for l in sv if l >= L]
    given = (np.array(beyond, dtype=np.intp), prefilled[beyond])
    for use_ks in (False, True):
        KS = K[:, S] + 300.0
        ref, ref_evals = _reference("rbf", {"gamma": 0.3}, rows, status,
                                    S if use_ks else [], KS if use_ks else np.zeros((N, 0)),
                                    c, 2.0, cached, given, True)
        col, evals, flag = _compiled("rbf", {"gamma": 0.3}, store, status, S, KS, c, 2.0,
                                     cached, True, None, True, use_ks=use_ks,
                                     given_codes=(1 << 1) | (1 << 2), prefilled=prefilled)
        _same(col, ref)
        assert evals == ref_evals
        assert flag == 1


def test_the_reference_reads_each_source_in_its_order():
    """cached > given > S's columns > a kernel evaluation; off the problem: 0 over
    everything (C&P), or the cached or given value and NaN elsewhere (POKER)."""
    rows = [np.array([float(v)]) for v in range(1, 7)]
    status = np.array([0, 1, -1, -2, 0, 0], dtype=np.int8)
    ms = MarginSet()
    ms.S = [1]
    ms.KS = np.full((6, 1), 50.0)
    for zero_off, off in ((True, [0.0, 0.0]), (False, [30.0, np.nan])):
        k = Kernel("linear")
        col = column(6, 5, status, 36.5, k, rows, cached=np.array([10.0, np.nan, np.nan]),
                     given=[(1, 21.0), (2, 30.0), (1, 22.0), (0, 23.0)], margin=ms,
                     zero_off=zero_off)
        np.testing.assert_array_equal(col, [10.0, 21.0] + off + [30.0, 36.5])
        assert k.n_evals == 1                    # id 4 alone


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kind,params", KERNELS)
@pytest.mark.parametrize("zero_off", [True, False])
def test_four_columns_at_once_are_four_columns(sparse, kind, params, zero_off):
    """engine_column4 (POKER's joint increment: four members, nothing cached, the same
    ids given to each) against four calls of the reference's column; a member in S, given
    or with a NaN in KS's row goes one by one, with the same result."""
    for seed in range(3):
        rng, rows, store, status, S, K = _state(sparse, seed, kind, params)
        free = [int(i) for i in np.flatnonzero(status >= 0) if i not in S]
        for variant in range(4):
            c4 = list(rng.choice(free, 4, replace=False))
            KS = K[:, S] + 300.0
            others = [i for i in range(N) if i not in c4]
            ids = np.array(rng.choice(others, 5, replace=False), dtype=np.intp)
            if variant == 1:
                c4[2] = S[1]                             # a member of S
            elif variant == 2:
                ids[0] = c4[1]                           # a member given
            elif variant == 3:
                KS = KS.copy()
                KS[c4[3], 2] = np.nan                    # a hole in KS's row
            vals = K[np.ix_(c4, ids)] + 200.0 + np.arange(5)
            kcc4 = [K[c, c] + 0.25 for c in c4]
            k = _core.CKernel(kind, **params)
            cols = _core.engine_column4_value(store, k, c4, status, kcc4, S=S, KS=KS,
                                              given=(ids, vals), zero_off=zero_off)
            ref_evals = 0
            for a in range(4):
                ref, evals = _reference(kind, params, rows, status, S, KS, c4[a], kcc4[a],
                                        None, (ids, vals[a]), zero_off)
                _same(cols[a], ref)
                ref_evals += evals
            assert k.n_evals == ref_evals
