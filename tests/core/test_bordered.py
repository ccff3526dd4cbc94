"""The bordered-inverse section of the core: the reference (refsvm.core.bordered) and the
compiled functions (refsvm._core, inline in _core.pxd) agree bit for bit; an updated
inverse equals a fresh inverse; the zero tests and the least-index choice do what their
documentation says."""

import numpy as np
import pytest

from refsvm.core import bordered as ref

_core = pytest.importorskip("refsvm._core")


def _bordered_matrix(rng, n, d=3):
    """A random IDSVM-like bordered matrix [[0, y'], [y, Q]] (Q = yy' * RBF Gram, PSD)."""
    X = rng.randn(n, d)
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    y[0], y[1] = 1.0, -1.0                 # both classes: the bordered matrix is regular
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    M = np.zeros((n + 1, n + 1))
    M[0, 1:] = y
    M[1:, 0] = y
    M[1:, 1:] = np.outer(y, y) * K
    return M, y, K


@pytest.mark.parametrize("n", [2, 3, 5, 9])
@pytest.mark.parametrize("seed", range(4))
def test_grow_one_by_one_equals_fresh_inverse_and_twins_agree(n, seed):
    rng = np.random.RandomState(seed)
    M, y, K = _bordered_matrix(rng, n)
    R_ref = ref.bordered_start(y[0], M[1, 1])
    R_c = _core.bordered_start_array(y[0], M[1, 1])
    np.testing.assert_array_equal(R_c, R_ref)
    np.testing.assert_allclose(R_ref, np.linalg.inv(M[:2, :2]), rtol=0, atol=1e-15)
    for j in range(2, n + 1):                       # add variable j (row/column j of M)
        m, q = M[:j, j], M[j, j]
        beta = ref.bordered_beta(R_ref, m)
        np.testing.assert_array_equal(_core.bordered_beta_array(R_c, m), beta)
        kappa = ref.bordered_pivot(q, m, beta)
        assert _core.bordered_pivot_value(q, m, beta) == kappa
        assert kappa > 0
        R_ref = ref.bordered_grow(R_ref, beta, kappa)
        R_c = _core.bordered_grow_array(R_c, beta, kappa)
        np.testing.assert_array_equal(R_c, R_ref)
        fresh = np.linalg.inv(M[: j + 1, : j + 1])
        np.testing.assert_allclose(R_ref, fresh, rtol=1e-9, atol=1e-9 * np.abs(fresh).max())


@pytest.mark.parametrize("seed", range(4))
def test_shrink_equals_fresh_inverse_and_twins_agree(seed):
    rng = np.random.RandomState(seed)
    n = 7
    M, _, _ = _bordered_matrix(rng, n)
    R = np.linalg.inv(M)
    keep = list(range(n + 1))
    for p in (3, n - 1, 1):                         # remove variables (never the border)
        R_ref = ref.bordered_shrink(R, p, 1e-12)
        R_c = _core.bordered_shrink_array(R, p, 1e-12)
        np.testing.assert_array_equal(R_c, R_ref)
        del keep[p]
        fresh = np.linalg.inv(M[np.ix_(keep, keep)])
        np.testing.assert_allclose(R_ref, fresh, rtol=1e-9, atol=1e-9 * np.abs(fresh).max())
        R = R_ref


@pytest.mark.parametrize("seed", range(4))
def test_grow_and_shrink_keep_the_inverse_exactly_symmetric(seed):
    """The rank-one updates are taken as sign(kappa) u u' (u scaled by sqrt(1 / |kappa|)):
    an exactly symmetric inverse stays exactly symmetric in both twins, as with
    (beta_a beta_b) / kappa (the form (beta_a / kappa) beta_b is not: with it the
    exactness checks of IncrementalSVM failed twice as often on degenerate streams)."""
    rng = np.random.RandomState(seed)
    n = 9
    M, y, K = _bordered_matrix(rng, n)
    for twin in ("ref", "compiled"):
        R = ref.bordered_start(y[0], M[1, 1])
        for j in range(2, n + 1):
            m, q = M[:j, j], M[j, j]
            beta = ref.bordered_beta(R, m)
            kappa = ref.bordered_pivot(q, m, beta)
            R = (ref.bordered_grow(R, beta, kappa) if twin == "ref"
                 else _core.bordered_grow_array(R, beta, kappa))
            np.testing.assert_array_equal(R, R.T, err_msg=f"{twin} grow {j}")
        for p in (4, 1, 5):
            R = (ref.bordered_shrink(R, p, 1e-12) if twin == "ref"
                 else _core.bordered_shrink_array(R, p, 1e-12))
            np.testing.assert_array_equal(R, R.T, err_msg=f"{twin} shrink {p}")


def test_shrink_refuses_a_tiny_pivot():
    R = np.array([[2.0, 1.0], [1.0, 1e-15]])
    assert ref.bordered_shrink(R, 1, 1e-12) is None
    assert _core.bordered_shrink_array(R, 1, 1e-12) is None
    assert ref.bordered_shrink(R, 1, 1e-16) is not None


@pytest.mark.parametrize("seed", range(6))
def test_pivot_scale_bound_twins_agree_and_bound_holds(seed):
    rng = np.random.RandomState(seed)
    n = 6
    M, y, K = _bordered_matrix(rng, n)
    beta = rng.randn(n + 1)
    q = 1.0
    scale = ref.pivot_round_off_scale(q, beta, M)
    assert _core.pivot_round_off_scale_value(q, beta, M) == scale
    root = np.sqrt(np.abs(np.diag(K)))
    bound = ref.pivot_bound(q, beta, y, root)
    assert _core.pivot_bound_value(q, beta, y, root) == bound
    assert scale <= bound * (1 + 1e-12)
    # the exact scale by brute force
    assert scale == pytest.approx(abs(q) + np.abs(beta) @ np.abs(M) @ np.abs(beta), rel=1e-13)


def test_pivot_zero_tests():
    cases = [(1e-3, 1.0, 1.0), (1e-8, 1.0, 1.0), (1e-12, 1.0, 1.0), (0.0, 1.0, 1.0),
             (1e-16, 1e-10, 1.0), (-1e-3, 1.0, 1.0)]
    for kappa, scale, abs_scale in cases:
        doubtful = ref.pivot_doubtful(kappa, scale, 1e-6)
        zero = ref.pivot_is_zero(kappa, scale, abs_scale, 1e-11, 1e-14)
        assert _core.pivot_tests_value(kappa, scale, abs_scale, 1e-6, 1e-11, 1e-14) == (
            doubtful, zero)
        assert doubtful == (kappa <= 1e-6 * scale)
        assert zero == (kappa <= max(1e-11 * scale, 1e-14 * abs_scale))


def test_least_index_event_rules():
    w = 1e-12
    # a tied priority event wins at once, in the given order
    ev = [(0.5, 3, 1, w, False), (0.5, 0, 9, w, True), (0.5, 1, 8, w, True)]
    # ties go to the least index; untied events never count
    ev2 = [(0.5, 3, 7, w, False), (0.5 + 1e-13, 4, 2, w, False), (0.6, 3, 0, w, False)]
    # nothing tied but the fallback
    ev3 = [(0.7, 3, 1, w, False)]
    for events, tmin, fallback, expect in [
            (ev, 0.5, None, (0, 9)), (ev2, 0.5, None, (4, 2)),
            (ev3, 0.5, (0.5, 1, -1, w), (1, -1)), (ev3, 0.5, None, (-1, -1)),
            (ev2, 0.5, (0.5, 1, -1, w), (4, 2))]:
        assert ref.least_index_event(events, tmin, fallback) == expect
        assert _core.least_index_event_value(events, tmin, fallback) == expect


def test_least_index_random_twins_agree():
    rng = np.random.RandomState(3)
    for _ in range(200):
        m = rng.randint(1, 8)
        t = np.round(rng.rand(m), 1)
        events = [(float(t[j]), int(rng.randint(5)), int(rng.randint(20)), 1e-12,
                   bool(rng.rand() < 0.2)) for j in range(m)]
        tmin, kind, index = _core.smallest_event_value([e[:3] for e in events])
        assert tmin == min(e[0] for e in events)
        first = next(e for e in events if e[0] == tmin)     # the first on exact ties
        assert (kind, index) == (first[1], first[2])
        assert (_core.least_index_event_value(events, tmin)
                == ref.least_index_event(events, tmin))


@pytest.mark.parametrize("seed", range(4))
def test_drift_twins_agree_and_detect_a_drifted_inverse(seed):
    """bordered_drift: the compiled probe equals the reference bit for bit; an exact
    inverse has a backward error at round-off, a perturbed one is caught."""
    rng = np.random.RandomState(seed)
    n_all, k = 12, 7
    X = rng.randn(n_all, 3)
    y = np.where(rng.rand(n_all) < 0.5, -1.0, 1.0)
    S = np.sort(rng.choice(n_all, k, replace=False))
    y[S[0]], y[S[1]] = 1.0, -1.0                       # both classes in S: M is regular
    KS = np.exp(-0.5 * ((X[:, None, :] - X[None, S, :]) ** 2).sum(-1))  # column j: x_S[j]
    M = ref.bordered_matrix(y, KS, S)
    R = np.linalg.inv(M)
    drift = ref.bordered_drift(R, y, KS, S)
    assert _core.bordered_drift_value(R, y, KS, S) == drift
    assert drift < 1e-13
    E = R.copy()
    E[2, 3] += 1e-6 * np.abs(R).max()                  # one drifted entry
    bad = ref.bordered_drift(E, y, KS, S)
    assert _core.bordered_drift_value(E, y, KS, S) == bad
    assert bad > 1e-9
    E[1, 1] = np.nan
    assert np.isnan(ref.bordered_drift(E, y, KS, S))
    assert np.isnan(_core.bordered_drift_value(E, y, KS, S))


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 8, 9, 17, 40])
def test_max_abs_twins_agree(n):
    """bordered_max_abs (a row at a time, eight entries per step where the CPU has AVX2)
    is the maximum of |R| over the leading n x n block, as the reference's, wherever the
    largest entry sits; a NaN entry is passed over."""
    rng = np.random.RandomState(n)
    for trial in range(20):
        R = rng.randn(n + 2, n + 3)
        if n:
            R[rng.randint(n), rng.randint(n)] = -50.0 * (trial + 1)
        want = ref.bordered_max_abs(R[:n, :n])
        assert _core.bordered_max_abs_value(R, n) == want
        if n > 1:
            R[rng.randint(n), rng.randint(n)] = np.nan
            assert _core.bordered_max_abs_value(R, n) == np.nanmax(np.abs(R[:n, :n]))


@pytest.fixture(params=[8, 4, 1], ids=lambda w: f"width{w}")
def sweep_width(request):
    """Each body of the core's sweep and axpy this CPU runs (AVX-512F, AVX2, the
    baseline), set for the test and the widest restored after."""
    if request.param not in _core.sweep_widths():
        pytest.skip(f"this CPU does not run the {request.param}-wide body")
    saved = _core.sweep_width()
    _core.sweep_width(request.param)
    yield request.param
    _core.sweep_width(saved)


def test_sweep_width_is_the_widest_by_default_and_refuses_others():
    widths = _core.sweep_widths()
    assert widths[-1] == 1 and _core.sweep_width() == widths[0]
    with pytest.raises(ValueError, match="not available"):
        _core.sweep_width(2)
    assert _core.sweep_width() == widths[0]


@pytest.mark.parametrize("n", [0, 1, 7, 15, 17, 255, 256, 257, 1000, 3001])
@pytest.mark.parametrize("k", [0, 1, 3, 4, 5, 9, 24])
def test_sweep_either_way_gives_the_reference_bits(n, k, sweep_width):
    """The core's sweep over kernel columns (IDSVM's rates, POKER's sensitivities) walks
    its row blocks forwards or backwards (the twins alternate): every row's sum is the
    reference's matvec, left to right over the columns, bit for bit either way, by
    every body the CPU runs (the rows left over by the vector loops included)."""
    assert _core.sweep_width() == sweep_width
    _assert_sweep_bits(n, k, np.random.RandomState(n + 31 * k))


def _assert_sweep_bits(n, k, rng):
    """The compiled sweep over n x k columns of mixed scales equals the reference's
    matvec bit for bit, walking its row blocks forwards and backwards."""
    KS = rng.randn(n, k) * 10.0 ** rng.randint(-6, 7, size=(n, k))
    v = rng.randn(k) * 10.0 ** rng.randint(-6, 7, size=k)
    want = ref.matvec(KS, v)
    for back in (False, True):
        got = _core.cols_matvec_array(KS, v, back)
        np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


@pytest.mark.parametrize("n, k", [(2000, 263), (70000, 9)])
def test_long_sweep_gives_the_reference_bits(n, k, sweep_width):
    """Columns beyond 4 MB are swept in long row blocks (65,536 rows: the prefetcher's
    streams) instead of 256: the same sums, bit for bit, either way, also with more rows
    than one long block."""
    assert 8 * n * k > 4 << 20
    _assert_sweep_bits(n, k, np.random.RandomState(k))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 301])
def test_rows_matvec_and_symmetric_beta_agree_with_the_reference(n):
    """IDSVM's twin reads the contiguous rows of a matrix as the columns of its transpose
    (``rows_matvec``, the core's vectorised sweep): A' v equals the reference's
    ``matvec(A.T, v)`` to the last bit for any A; for an exactly symmetric inverse,
    ``bordered_beta_sym`` equals ``bordered_beta`` (row by row) to the last bit."""
    rng = np.random.RandomState(n)
    A = rng.randn(n, n) * np.exp(rng.randn(n, n))
    v = rng.randn(n)
    np.testing.assert_array_equal(_core.rows_matvec_array(A, v), ref.matvec(A.T, v))
    R = ref.symmetrize(A + A.T + rng.randn(n, n) * 1e-17)
    np.testing.assert_array_equal(R, R.T)
    np.testing.assert_array_equal(_core.bordered_beta_sym_array(R, v), ref.bordered_beta(R, v))
    np.testing.assert_array_equal(_core.bordered_beta_sym_array(R, v),
                                  _core.bordered_beta_array(R, v))


@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 9, 12, 13, 15, 16, 17, 64, 301])
def test_beta_by_rows_equals_the_reference_for_any_matrix(n):
    """``bordered_beta`` (the core's ``rows_dot``: eight rows, then four, then one at a
    time, each summed left to right) is the reference's -matvec(R, m) to the last bit for
    any R, symmetric or not, with mixed scales."""
    rng = np.random.RandomState(100 + n)
    R = rng.randn(n, n) * 10.0 ** rng.randint(-8, 9, size=(n, n))
    m = rng.randn(n) * 10.0 ** rng.randint(-8, 9, size=n)
    want = ref.bordered_beta(R, m)
    np.testing.assert_array_equal(_core.bordered_beta_array(R, m).view(np.int64),
                                  want.view(np.int64))


@pytest.mark.parametrize("seed", range(4))
def test_symmetrize_makes_a_fresh_inverse_exactly_symmetric(seed):
    """An LU inverse is symmetric only up to round-off; ``symmetrize`` (both twins, the
    same bits) averages the pairs that differ and leaves a symmetric matrix as it is."""
    rng = np.random.RandomState(seed)
    M, _, _ = _bordered_matrix(rng, 40, d=2)
    R = ref.lu_inverse(M)
    S_ref = ref.symmetrize(R)
    np.testing.assert_array_equal(_core.bordered_symmetrize_array(R), S_ref)
    np.testing.assert_array_equal(S_ref, S_ref.T)
    assert (R != R.T).any()                 # (the case worth testing)
    assert np.all(np.abs(S_ref - R) <= np.abs(R - R.T))     # moved by the asymmetry only
    np.testing.assert_array_equal(ref.symmetrize(S_ref), S_ref)
    np.testing.assert_array_equal(_core.bordered_symmetrize_array(S_ref), S_ref)


@pytest.mark.parametrize("n", [17, 41])
def test_grow_and_shrink_twins_agree_on_larger_blocks(n, sweep_width):
    """The compiled grow and shrink update whole rows eight or four entries at a time
    (the core's ``refsvm_axpy``, each body the CPU runs; a row of the shrink is written
    one place to the left of where it is read): bit for bit the reference's, at every
    size and every removed position."""
    rng = np.random.RandomState(n)
    M, y, K = _bordered_matrix(rng, n, d=6)
    R_ref = ref.bordered_start(y[0], M[1, 1])
    R_c = R_ref.copy()
    for j in range(2, n + 1):
        m, q = M[:j, j], M[j, j]
        beta = ref.bordered_beta(R_ref, m)
        kappa = ref.bordered_pivot(q, m, beta)
        R_ref = ref.bordered_grow(R_ref, beta, kappa)
        R_c = _core.bordered_grow_array(R_c, beta, kappa)
        np.testing.assert_array_equal(R_c, R_ref, err_msg=f"grow {j}")
    for p in (n // 2, 1, n - 3, 2, 5):
        R_ref = ref.bordered_shrink(R_ref, p, 1e-14)
        R_c = _core.bordered_shrink_array(R_c, p, 1e-14)
        np.testing.assert_array_equal(R_c, R_ref, err_msg=f"shrink {p}")
