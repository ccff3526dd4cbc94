"""The input check fused into the linear passes (issue 14): ``run_checked``, whose check rides
along the step's read of the row (``_step_checked``: <w, x> and ||x||^2 in one loop, each
CSR index tested before it addresses w), and the Perceptron's radius scan (``scan_radius``),
which is ``fit``'s input check.  Both must stop exactly before the first bad row, with the
state of the stream up to it, and, on good input, change nothing: the same numbers bit for
bit as the unchecked pass."""

import numpy as np
import pytest
import scipy.sparse as sp

from refsvm import Perceptron
from refsvm.linear import _online_linear_svm, _passive_aggressive, passive_aggressive

from ..conftest import to_csr

LIMIT = 1e100

#: compiled states with the check fused into the step (PAm: checked before its step)
STATES = {
    "PA-I": lambda d: _passive_aggressive.PAState(d, True, variant=1, C=0.5),
    "Perceptron": lambda d: _passive_aggressive.PerceptronState(d, True),
    "PAm-1": lambda d: _passive_aggressive.PAmState(d, True, variant=1, C=0.5, gamma=0.1),
    "Pegasos": lambda d: _online_linear_svm.PegasosState(d, True, lam=0.01, batch_size=3),
}


def _short_rows(n=700, d=40, seed=0, indptr=np.int32):
    """CSR rows of 0 to 6 values (some empty): chunks of many rows."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) * (rng.rand(n, d) < 0.08)
    X[5] = 0.0
    y = np.where(rng.rand(n) < 0.5, -1.0, 1.0)
    M = to_csr(X)
    M.indptr = M.indptr.astype(indptr)
    return M, y


def _snapshot(state):
    return {k: np.copy(v) for k, v in state.get_state().items()}


@pytest.mark.parametrize("name", list(STATES))
@pytest.mark.parametrize("indptr", [np.int32, np.int64])
def test_chunked_check_on_good_input_is_the_plain_pass_bit_for_bit(name, indptr):
    M, y = _short_rows(indptr=indptr)
    for order in (np.arange(M.shape[0]), np.r_[np.arange(300, 700), np.arange(300)],
                  np.random.RandomState(1).permutation(M.shape[0])):
        checked, plain = STATES[name](M.shape[1]), STATES[name](M.shape[1])
        changes, n_done = checked.run_checked(M, y, order, LIMIT)
        assert n_done == M.shape[0]
        assert changes == plain.run(M, y, order)
        for key, value in _snapshot(plain).items():
            np.testing.assert_array_equal(checked.get_state()[key], value, err_msg=key)


@pytest.mark.parametrize("name", list(STATES))
@pytest.mark.parametrize("bad_row", [0, 7, 8, 255, 256, 300, 699])
@pytest.mark.parametrize("what", ["nan", "inf", "large", "index", "negative index"])
def test_chunked_check_stops_right_before_the_bad_row(name, bad_row, what):
    M, y = _short_rows()
    M = M.copy()
    if M.indptr[bad_row + 1] == M.indptr[bad_row]:  # give the bad row a value to spoil
        X = M.toarray()
        X[bad_row, 3] = 1.0
        M = to_csr(X)
    p = M.indptr[bad_row]
    if what == "nan":
        M.data[p] = np.nan
    elif what == "inf":
        M.data[p] = -np.inf
    elif what == "large":
        M.data[p] = 2 * LIMIT
    elif what == "index":
        M.indices[p] = M.shape[1] + 1000
    else:
        M.indices[p] = -3
    order = np.arange(M.shape[0])
    state = STATES[name](M.shape[1])
    changes, n_done = state.run_checked(M, y, order, LIMIT)
    assert n_done == bad_row
    assert changes == STATES[name](M.shape[1]).run(M, y, order[:bad_row])
    # the reference, which checks each row before its step, stops at the same row
    if name == "PA-I":
        ref = passive_aggressive.PAState(M.shape[1], True, variant=1, C=0.5)
        assert ref.run_checked(M, y, order, LIMIT) == (changes, n_done)
    # the bad row changed nothing: the state of the stream up to it
    plain = STATES[name](M.shape[1])
    plain.run(M, y, order[:bad_row])
    for key, value in _snapshot(plain).items():
        np.testing.assert_array_equal(state.get_state()[key], value, err_msg=key)


@pytest.mark.parametrize("sparse", [False, True])
def test_scan_radius_twins_agree_and_stop_at_the_bad_row(sparse):
    rng = np.random.RandomState(3)
    X = rng.randn(60, 9) * (rng.rand(60, 9) < 0.5)
    X[7] *= 10.0
    M = to_csr(X) if sparse else X
    ref = passive_aggressive.PerceptronState(9, sparse)
    twin = _passive_aggressive.PerceptronState(9, sparse)
    (r2_ref, n_ref), (r2_twin, n_twin) = ref.scan_radius(M, LIMIT), twin.scan_radius(M, LIMIT)
    assert n_ref == n_twin == 60
    np.testing.assert_allclose(r2_twin, r2_ref, rtol=1e-14)
    np.testing.assert_allclose(r2_ref, np.max(np.sum(X * X, axis=1)), rtol=1e-14)
    assert twin.R2 == 0.0  # the scan changes nothing
    X[33, 4] = np.nan
    M = to_csr(X) if sparse else X
    for state in (ref, twin):
        R2, n_done = state.scan_radius(M, LIMIT)
        assert n_done == 33
        np.testing.assert_allclose(R2, np.max(np.sum(X[:33] ** 2, axis=1)), rtol=1e-14)
    if sparse:
        M.indices[M.indptr[40]] = 9  # out of range: row 40 is bad too (row 33 first)
        assert twin.scan_radius(M, LIMIT)[1] == 33


@pytest.mark.parametrize("backend", ["cython", "python"])
@pytest.mark.parametrize("sparse", [False, True])
def test_perceptron_fit_radius_from_the_scan(backend, sparse):
    rng = np.random.RandomState(4)
    X = rng.randn(80, 6)
    y = np.where(X[:, 0] + 0.3 * rng.randn(80) > 0, 1, 0)
    M = sp.csr_matrix(X) if sparse else X
    clf = Perceptron(max_epochs=3, backend=backend).fit(M, y)
    R2, coef = clf._states[0].R2, clf.coef_
    np.testing.assert_allclose(R2, np.max(np.sum(X * X, axis=1)), rtol=1e-14)
    X[50, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.fit(sp.csr_matrix(X) if sparse else X, y)
    # the failed fit left the model of the good fit
    assert clf._states[0].R2 == R2
    np.testing.assert_array_equal(clf.coef_, coef)


@pytest.mark.parametrize("name", list(STATES))
def test_checked_step_without_features_reads_no_weight(name):
    """A CSR row with values but no features to address (a malformed index, d = 0): the
    fused check has no w[0] to read instead, so the core's check-then-step decides."""
    M = sp.csr_matrix((np.ones(1), np.zeros(1, dtype=np.int32), np.array([0, 0, 1], np.int32)),
                      shape=(2, 1))
    M._shape = (2, 0)  # malformed on purpose: index 0 with no column
    state = STATES[name](0)
    changes, n_done = state.run_checked(M, np.ones(2), np.arange(2), LIMIT)
    assert n_done == 1  # row 1 is bad
    assert changes == STATES[name](0).run(M, np.ones(2), np.arange(1))


#: dense states: Pegasos checks a dense row with <v, x> exact and ||x||^2 as a bound only
#: (fused multiply-adds where the CPU has them), the others with the exact ||x||^2
DENSE = {
    "Pegasos": lambda d: _online_linear_svm.PegasosState(d, False, lam=0.01),
    "Pegasos-batch": lambda d: _online_linear_svm.PegasosState(d, False, lam=0.01,
                                                               batch_size=3),
    "PA-I": lambda d: _passive_aggressive.PAState(d, False, variant=1, C=0.5),
}


@pytest.mark.parametrize("name", list(DENSE))
@pytest.mark.parametrize("d", [3, 16, 37])
@pytest.mark.parametrize("what", [None, "nan", "inf", "above", "at limit", "huge norm"])
def test_dense_checked_pass_stops_right_before_the_bad_row(name, d, what):
    """On good dense input the checked pass is the plain one bit for bit; a row with NaN,
    an infinity or a value above the limit stops it right before, with the state of the
    stream up to it; values at the limit, and a row whose squared norm exceeds limit^2
    with every value within it, are accepted (read again value by value)."""
    rng = np.random.RandomState(d)
    X = rng.randn(300, d)
    y = np.where(rng.rand(300) < 0.5, -1.0, 1.0)
    limit = 1e3
    bad = 123
    if what == "nan":
        X[bad, d // 2] = np.nan
    elif what == "inf":
        X[bad, d - 1] = np.inf
    elif what == "above":
        X[bad, 0] = -np.nextafter(limit, np.inf)
    elif what == "at limit":
        X[bad, 0] = -limit
    elif what == "huge norm":
        X[bad, :] = limit                       # ||x||^2 = d limit^2 >= limit^2
    order = np.arange(300)
    state, plain = DENSE[name](d), DENSE[name](d)
    changes, n_done = state.run_checked(X, y, order, limit)
    stop = bad if what in ("nan", "inf", "above") else 300
    assert n_done == stop
    assert changes == plain.run(X, y, order[:stop])
    for key, value in _snapshot(plain).items():
        np.testing.assert_array_equal(state.get_state()[key], value, err_msg=key)
