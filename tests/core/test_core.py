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
        if bad_at is None or name == "ref":  # the twin checks values after the step
            np.testing.assert_array_equal(st.w, plain.w)
        done[name] = (n_done, changes, st.w.copy())
    assert done["ref"][:2] == done["twin"][:2]
    assert done["ref"][0] == (40 if bad_at is None else bad_at)
    if bad_at is None:
        np.testing.assert_allclose(done["twin"][2], done["ref"][2], rtol=1e-12, atol=1e-14)
    assert _passive_aggressive.PAState.check_values_after_step


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
    # the checking state stopped at it (this twin checks values right after the step, so
    # it stepped the bad row too); the others are left at a block boundary before it (the
    # estimator restores them all)
    assert states[0].t == 212 and states[1].t == states[2].t < 211
