"""The shared core's compiled pieces against their pure-Python references."""

import numpy as np
import pytest

from refsvm import _core
from refsvm.core import PA_VARIANTS, PAM_VARIANTS, ScaledVector, StreamLearner, pa_step
from refsvm.core.kernels import SparseRow, get_row
from refsvm.core.pa import variant_code

from ..conftest import to_csr


@pytest.mark.parametrize("variant", [0, 1, 2])
def test_pa_step_twins_agree_bit_for_bit(variant):
    rng = np.random.RandomState(variant)
    for loss, sq, C in zip(rng.exponential(size=200), rng.exponential(size=200),
                           rng.exponential(size=200)):
        for sqnorm in (sq, 0.0):
            assert _core.pa_step_value(variant, loss, sqnorm, C) == pa_step(variant, loss,
                                                                            sqnorm, C)


def test_pa_step_formulas():
    assert pa_step(0, 2.0, 4.0, 0.1) == 0.5                    # ℓ/‖x‖²
    assert pa_step(1, 2.0, 4.0, 0.1) == 0.1                    # min{C, ℓ/‖x‖²}
    assert pa_step(2, 2.0, 4.0, 0.5) == 2.0 / 5.0              # ℓ/(‖x‖² + 1/(2C))
    assert pa_step(1, 2.0, 0.0, 0.5) == 0.0                    # a zero example cannot move


def test_variant_names_accept_both_spellings():
    assert PA_VARIANTS["PA-I"] == PA_VARIANTS["PA-1"] == 1
    assert PAM_VARIANTS["PAm-II"] == PAM_VARIANTS["PAm-2"] == 2
    with pytest.raises(ValueError, match="variant must be one of"):
        variant_code("PA-3")


@pytest.mark.parametrize("sparse", [False, True])
def test_scaled_vector_twins_agree_and_equal_the_plain_vector(sparse):
    rng = np.random.RandomState(1)
    d = 13
    X = rng.randn(60, d)
    X[rng.rand(60, d) < 0.5] = 0.0
    M = to_csr(X) if sparse else X
    ref, twin = ScaledVector(d, track_norm=True), _core.ScaledVectorArray(d, track_norm=True)
    plain = np.zeros(d)
    for t in range(60):
        x = get_row(M, t)
        a = rng.randn()
        shrink = 1.0 - 1.0 / (t + 2)
        for sv in (ref, twin):
            sv.scale(shrink)
            sv.add(a, x)
            sv.fold(1e-3)
        plain = shrink * plain + a * X[t]
        np.testing.assert_allclose(twin.w, ref.w, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(ref.w, plain, rtol=1e-10, atol=1e-12)
        assert twin.sqnorm() == pytest.approx(ref.sqnorm(), rel=1e-12)
        assert ref.sqnorm() == pytest.approx(plain @ plain, rel=1e-9)
        z = get_row(M, (t + 7) % 60)
        assert twin.dot(z) == pytest.approx(ref.dot(z), rel=1e-12, abs=1e-12)
    for sv in (ref, twin):
        sv.scale(0.0)
        assert sv.sqnorm() == 0.0 and not np.any(sv.w)


def test_reference_stream_driver_counts_changes():
    class EveryOther(StreamLearner):
        def step(self, x, y):
            return int(y > 0)

    X = np.zeros((5, 2))
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    assert EveryOther(2).run(X, y, np.arange(5)) == 3
    assert isinstance(get_row(to_csr(X), 0), SparseRow)


# ---------------------------------------------------------------- the checked stream driver
from refsvm.core.stream import BadRow, row_is_bad, run_states  # noqa: E402
from refsvm.linear import _passive_aggressive, passive_aggressive  # noqa: E402


def test_row_check_twins_agree_at_the_edges():
    limit, d = 1e10, 4
    big = np.nextafter(limit, np.inf)
    for row in ([0.0, -0.0, 1.0, -limit], [limit, 0, 0, 0], [big, 0, 0, 0], [0, -big, 0, 0],
                [np.nan, 0, 0, 0], [0, 0, 0, np.inf], [0, 0, -np.inf, 0], [1e-300, 0, 0, 0]):
        x = np.array(row, dtype=float)
        expect = not np.all(np.abs(x) <= limit)
        assert row_is_bad(x, limit, d) == expect
        assert _core.row_check_value(x, limit, d) == expect
    for idx, expect in (([0, 3], False), ([0, 4], True), ([-1, 2], True), ([], False),
                        ([2**31 - 1], True)):
        x = SparseRow(np.array(idx, dtype=np.int32), np.ones(len(idx)))
        assert row_is_bad(x, limit, d) == expect
        assert _core.row_check_value(x, limit, d) == expect
    x = SparseRow(np.array([1], dtype=np.int32), np.array([np.nan]))
    assert row_is_bad(x, limit, d) and _core.row_check_value(x, limit, d)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bad_at", [None, 0, 17, 39])
def test_run_checked_twins_agree_and_stop_before_the_bad_row(sparse, bad_at):
    rng = np.random.RandomState(2)
    X = rng.randn(40, 7)
    X[rng.rand(40, 7) < 0.4] = 0.0
    X[:, 3] = 1.0
    y = np.where(rng.rand(40) < 0.5, -1.0, 1.0)
    order = rng.permutation(40)
    if bad_at is not None:
        X[order[bad_at], 3] = np.nan
    M = to_csr(X) if sparse else X
    limit = 1e100
    done = {}
    for name, module in (("ref", passive_aggressive), ("twin", _passive_aggressive)):
        st = module.PAState(7, sparse, variant=1, C=0.5)
        changes, n_done = st.run_checked(M, y, order, limit)
        plain = module.PAState(7, sparse, variant=1, C=0.5)
        assert changes == plain.run(M, y, order[:n_done])
        # both stop before the bad row changes anything (the twin's check is fused into
        # the step's read of the row)
        np.testing.assert_array_equal(st.w, plain.w)
        done[name] = (n_done, changes, st.w.copy())
    assert done["ref"][:2] == done["twin"][:2]
    assert done["ref"][0] == (40 if bad_at is None else bad_at)
    if bad_at is None:
        np.testing.assert_allclose(done["twin"][2], done["ref"][2], rtol=1e-12, atol=1e-14)


def test_run_checked_rejects_out_of_range_indices_before_using_them():
    M = to_csr(np.eye(5))
    M.indices = M.indices.copy()
    M.indices[2] = 7  # row 2 points past the 5 weights
    for module in (passive_aggressive, _passive_aggressive):
        st = module.PAState(5, True, variant=1, C=1.0)
        changes, n_done = st.run_checked(M, np.ones(5), np.arange(5), 1e100)
        assert n_done == 2 and np.all(st.w[2:] == 0)


def test_run_states_with_check_raises_bad_row_naming_it():
    X = np.ones((300, 3))
    X[211, 0] = np.inf
    y = np.ones(300)
    states = [_passive_aggressive.PAState(3, False) for _ in range(3)]
    with pytest.raises(BadRow) as info:
        run_states(states, X, [y, -y, y], np.arange(300), check=1e100)
    assert info.value.row == 211 and isinstance(info.value, ValueError)
    # the checking state stopped right before it (its check is fused into the step's read
    # of the row, before anything changes); the others are left at a block boundary before
    # it (the estimator restores them all)
    assert states[0].t == 211 and states[1].t == states[2].t < 211


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", ["PAState", "PerceptronState"])
def test_fused_screen_reads_huge_norms_again_value_by_value(sparse, name):
    """The fused check proves a row good from ||x||^2 < limit^2; a row whose norm is not
    below limit^2 (good entries of a huge norm, or a bad one) is checked entry by entry, so
    the bound stays |x_j| <= limit exactly, as in the reference."""
    limit, d = 1e10, 4
    big = np.nextafter(limit, np.inf)
    X = np.array([[1.0, 2.0, 0.0, -1.0],
                  [limit, -limit, limit, limit],     # ||x||^2 = 4 limit^2: good
                  [limit, 0.0, 0.0, 0.0],            # ||x||^2 = limit^2: good
                  [0.0, 0.0, 3.0, 1.0],
                  [0.0, -big, 0.0, 0.0],             # just above the bound: bad
                  [1.0, 1.0, 1.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    M = to_csr(X) if sparse else X
    for module in (passive_aggressive, _passive_aggressive):
        st = getattr(module, name)(d, sparse)
        changes, n_done = st.run_checked(M, y, np.arange(6), limit)
        assert n_done == 4
        plain = getattr(module, name)(d, sparse)
        assert changes == plain.run(M, y, np.arange(4))
        np.testing.assert_array_equal(st.w, plain.w)


@pytest.mark.parametrize("sparse", [False, True])
def test_run_takes_a_range_as_the_order(sparse):
    rng = np.random.RandomState(4)
    X = rng.randn(50, 6) * (rng.rand(50, 6) < 0.6)
    y = np.where(rng.rand(50) < 0.5, -1.0, 1.0)
    M = to_csr(X) if sparse else X
    for module in (passive_aggressive, _passive_aggressive):
        a, b = (module.PAState(6, sparse, variant=1, C=0.5) for _ in range(2))
        assert a.run(M, y, range(10, 40)) == b.run(M, y, np.arange(10, 40))
        np.testing.assert_array_equal(a.w, b.w)
        assert a.run_checked(M, y, range(40, 50), 1e100) == b.run_checked(
            M, y, np.arange(40, 50), 1e100)
        np.testing.assert_array_equal(a.w, b.w)
        assert a.run(M, y, range(5, 5)) == 0
    states = [_passive_aggressive.PAState(6, sparse) for _ in range(2)]
    ref = [_passive_aggressive.PAState(6, sparse) for _ in range(2)]
    assert run_states(states, M, [y, -y], range(50), check=1e100) == run_states(
        ref, M, [y, -y], np.arange(50))
    for s, r in zip(states, ref):
        np.testing.assert_array_equal(s.w, r.w)


def test_two_values_finds_binary_labels_in_one_read():
    for y in (np.array([1.0, -1.0, 1.0]), np.array([3, 3, 7, 3]), np.array([2.5]),
              np.array([0.0, -0.0, 0.0])):
        np.testing.assert_array_equal(_core.two_values(y), np.unique(y))
        assert _core.two_values(y).dtype == y.dtype
    for y in (np.array([1.0, 2.0, 3.0]), np.array([1.0, np.nan]), np.array([np.nan, 1.0]),
              np.array([1, 2, 3]), np.array([1, 0], dtype=np.int32), np.zeros(0),
              np.array([1.0, -1.0, 1.0])[::2], np.ones((2, 2))):
        assert _core.two_values(y) is None


def _four_lane_sums(terms):
    """The twins' summation order: lane k sums terms p = k mod 4 (p below the last whole
    group of four) in order, the rest go into lane 0, then (s0 + s1) + (s2 + s3)."""
    s = [0.0, 0.0, 0.0, 0.0]
    m = len(terms) - len(terms) % 4
    for p in range(m):
        s[p % 4] += terms[p]
    for p in range(m, len(terms)):
        s[0] += terms[p]
    return (s[0] + s[1]) + (s[2] + s[3])


def test_csr_row_dot_is_the_four_lane_sum_bit_for_bit():
    """The CSR dot and squared norm (w gathered four at a time where the CPU has AVX2, a
    scalar loop otherwise or below 16 entries) give the four-lane sums exactly, for every
    row length; the checked form flags an index outside [0, d) wherever it is, reading
    w[0] in its place."""
    from refsvm import _core

    rng = np.random.RandomState(0)
    d = 500
    w = rng.randn(d) * 10.0 ** rng.randint(-3, 4, d)
    for n in list(range(0, 40)) + [63, 64, 65, 257]:
        idx = np.sort(rng.choice(d, size=n, replace=False)).astype(np.int32)
        val = rng.randn(n) * 10.0 ** rng.randint(-5, 6, n)
        prods = [float(v) * float(w[j]) for v, j in zip(val, idx)]
        squares = [float(v) * float(v) for v in val]
        dot, dot_t, sq_t, dot_c, sq_c, bad = _core.csr_row_dot_values(w, idx, val)
        assert dot == dot_t == dot_c == _four_lane_sums(prods)
        assert sq_t == sq_c == _four_lane_sums(squares)
        assert not bad
        for where in sorted({0, n // 2, n - 1}) if n else []:
            for wrong in (-1, d, 2**31 - 1, -(2**31)):
                bad_idx = idx.copy()
                bad_idx[where] = wrong
                read = [float(w[j]) if 0 <= j < d else float(w[0]) for j in bad_idx]
                *_, dot_c, sq_c, bad = _core.csr_row_dot_values(w, bad_idx, val)
                assert bad
                assert dot_c == _four_lane_sums([float(v) * r for v, r in zip(val, read)])
                assert sq_c == _four_lane_sums(squares)
