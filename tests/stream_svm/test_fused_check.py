"""The input check fused into the linear StreamSVM pass (issues 11, 14): line 5 reads the
row once for <v, x> and ||x||^2, and the check rides along (``_step_checked``), before
anything changes, lookahead buffer included.  On good input the checked pass is the plain
pass bit for bit; on a bad row it stops right before it, the state that of the prefix."""

import numpy as np
import pytest

from refsvm.stream_svm import _stream_svm, stream_svm

from ..conftest import to_csr

LIMIT = 1e100


def _stream(n=600, d=30, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) * (rng.rand(n, d) < 0.1)
    y = np.where(X[:, 0] + 0.2 * rng.randn(n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("L", [1, 10])
@pytest.mark.parametrize("bias", [False, True])
def test_checked_pass_is_the_plain_pass_and_stops_at_the_bad_row(sparse, L, bias):
    X, y = _stream()
    M = to_csr(X) if sparse else X
    order = np.arange(X.shape[0])

    def make():
        return _stream_svm.StreamSVMLinear(X.shape[1], sparse, C=1.0, lookahead=L,
                                           fit_intercept=bias)

    checked, plain = make(), make()
    changes, n_done = checked.run_checked(M, y, order, LIMIT)
    assert (changes, n_done) == (plain.run(M, y, order), X.shape[0])
    for key, value in plain.save_state().items():
        np.testing.assert_array_equal(checked.save_state()[key], value, err_msg=key)
    ref = stream_svm.StreamSVMLinear(X.shape[1], sparse, C=1.0, lookahead=L, fit_intercept=bias)
    for bad_row in (0, 9, 300, 599):
        Xb = X.copy()
        Xb[bad_row, 1] = np.nan
        Mb = to_csr(Xb) if sparse else Xb
        state = make()
        changes, n_done = state.run_checked(Mb, y, order, LIMIT)
        assert n_done == bad_row
        before = make()
        assert changes == before.run(Mb, y, order[:bad_row])
        # the check is fused into the step's read of the row, before anything changes:
        # the state is the state of the stream up to the bad row (the buffer included)
        for key, value in before.save_state().items():
            np.testing.assert_array_equal(state.save_state()[key], value, err_msg=key)
        if bad_row == 9:
            assert ref.run_checked(Mb, y, order, LIMIT) == (changes, n_done)
