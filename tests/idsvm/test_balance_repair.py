"""The departure ``repair_balance`` (refsvm/idsvm/departures/balance_repair.py): y'alpha
repaired by one step through R's first column when an operation ends with it above the
exactness check's level.

The stream: 200 points, each twice, under the homogeneous cubic kernel (the bordered
matrix nearly singular), the classes sorted and each nearest first from one point.  Its
unlearnings and leave-one-out decisions end with |y'alpha| a few times its level
without the repair.
"""

import numpy as np
import pytest

from refsvm import IncrementalSVM
from refsvm.datasets import make_two_gaussians
from refsvm.idsvm import incremental_svm as idsvm
from refsvm.idsvm.departures.exactness import ExactnessError

from ..conftest import BACKENDS, assert_states_equal
from .test_oracle import assert_kkt, make_state
from .test_twins import exact_kernels  # noqa: F401 - a fixture

_idsvm = pytest.importorskip("refsvm.idsvm._incremental_svm")

CUBIC = {"gamma": 1.0, "degree": 3, "coef0": 0.0}
UNLEARN = list(range(0, 65, 5))


def duplicate_stream():
    rng = np.random.RandomState(2)
    X0 = rng.uniform(-2, 2, (200, 2))
    y0 = np.where(X0[:, 0] * X0[:, 1] + 0.3 * rng.randn(200) > 0, 1.0, -1.0)
    X, y = np.vstack([X0, X0]), np.r_[y0, y0]
    c = X[rng.randint(400)]
    order = np.lexsort((np.sum((X - c) ** 2, axis=1), y))
    return X[order], y[order]


@pytest.mark.parametrize("backend", BACKENDS)
def test_unlearning_through_a_nearly_singular_margin_set_ends_exact(backend):
    X, y = duplicate_stream()
    model = IncrementalSVM(C=0.1, kernel="poly", backend=backend, **CUBIC)
    model.partial_fit(X, y, classes=[-1, 1])
    model.unlearn(UNLEARN)
    st = model._states[0]
    assert st.get_state()["n_repairs"] > 0
    keep = np.setdiff1d(np.arange(len(y)), UNLEARN)
    assert np.all(st.get_state()["status"][UNLEARN] < 0)
    assert_kkt(st, X[keep], y[keep], "poly", CUBIC, tol=1e-8)


def test_without_the_repair_the_check_fails_on_y_alpha():
    """The failure the departure answers (if this passes without it, the stream no longer
    shows it); the operation is rolled back."""
    X, y = duplicate_stream()
    model = IncrementalSVM(C=0.1, kernel="poly", departures={"repair_balance": False},
                           **CUBIC)
    model.partial_fit(X, y, classes=[-1, 1])
    with pytest.raises(ExactnessError, match="sum_i y_i alpha_i"):
        model.unlearn(UNLEARN)
    with pytest.raises(ExactnessError, match="sum_i y_i alpha_i"):
        model.loo_decisions()


def test_leave_one_out_ends_exact():
    X, y = duplicate_stream()
    model = IncrementalSVM(C=0.1, kernel="poly", **CUBIC).partial_fit(X, y, classes=[-1, 1])
    before = model.decision_function(X)
    ids, loo = model.loo_decisions()
    assert np.array_equal(ids, np.arange(len(y))) and np.all(np.isfinite(loo))
    # (with duplicates alpha is not unique; f is)
    np.testing.assert_allclose(model.decision_function(X), before, rtol=0, atol=1e-8)
    assert_kkt(model._states[0], X, y, "poly", CUBIC, tol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_balanced_operation_changes_nothing(backend):
    """Where |y'alpha| stays within its level the repair is not taken: the same state,
    bit for bit, as without it."""
    X, y = make_two_gaussians(200, random_state=1)
    y = y.astype(float)
    a = make_state(backend, 2, 1.0, "rbf")
    b = make_state(backend, 2, 1.0, "rbf", departures={"repair_balance": False})
    for st in (a, b):
        st.run(X, y, range(len(y)))
        st.unlearn([0, 50, 199])
    assert a.get_state()["n_repairs"] == b.get_state()["n_repairs"]
    assert_states_equal(a.get_state(), b.get_state(), rtol=0, atol=0, where="end")


def test_twins_bit_identical_through_the_repair(exact_kernels):  # noqa: F811
    X, y = duplicate_stream()
    a = idsvm.IncrementalSVMState(2, False, C=0.1, kernel="poly", **CUBIC)
    b = _idsvm.IncrementalSVMState(2, False, C=0.1, kernel="poly", **CUBIC)
    for i in range(len(y)):
        a.step(X[i], y[i])
        b.step(X[i], y[i])
    assert_states_equal(a.get_state(), b.get_state(), rtol=0, atol=0, where="learned")
    for i in UNLEARN:
        a.unlearn([i])
        b.unlearn([i])
        assert_states_equal(a.get_state(), b.get_state(), rtol=0, atol=0, where=f"unlearn {i}")
    assert a.get_state()["n_repairs"] > 0
