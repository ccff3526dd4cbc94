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
