"""The refinement of beta (the departure ``refine``) stops at the round-off of its own
residual: a residual max|rho| within (k + 2) u of the scale of its terms (k margin
vectors, u = 2^-53) is as small as a correction can make it, whatever ``refine_tol``
asks.  Below 88 margin vectors that level is under ``refine_tol`` = 1e-14 and nothing
changes; above it the twins stop at the same level (bit for bit) and the model stays
exact."""

import numpy as np
import pytest

from refsvm.idsvm import incremental_svm as idsvm
from refsvm.idsvm.constants import EPS_MACH

from ..conftest import assert_states_equal
from .test_oracle import assert_kkt, assert_matches_svc

_idsvm = pytest.importorskip("refsvm.idsvm._incremental_svm")


def _wide_stream(n=300, d=60, seed=0):
    """60 features under a wide RBF kernel, noisy labels: the margin set passes 150."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] + rng.normal(size=n) > 0, 1.0, -1.0)


@pytest.mark.parametrize("k", [None, 300])
def test_a_correction_stops_within_the_round_off_of_the_residual(k):
    X, y = _wide_stream(60, 5)
    st = idsvm.IncrementalSVMState(5, False, C=10.0, kernel="rbf", gamma=0.2)
    st.run(X, y, range(60))
    k = st.Rinv.shape[0] - 1 if k is None else k        # None: the state's own margin set
    beta, smax = np.linspace(-1.0, 1.0, k + 1), 3.0
    level = max(st.departures["refine_tol"], (k + 2) * (0.5 * EPS_MACH)) * smax
    # (k + 2) u is above refine_tol = 1e-14 from k = 88 on
    assert (level > 1e-14 * smax) == (k >= 88)
    rho = np.zeros(k + 1)
    rho[k // 2] = level
    assert st._correct(beta, rho, smax, False)[2]
    if k + 1 == st.Rinv.shape[0]:
        rho[k // 2] = 1.5 * level
        assert not st._correct(beta, rho, smax, False)[2]


def test_twins_agree_where_the_round_off_level_is_above_refine_tol():
    X, y = _wide_stream()
    kw = dict(C=10.0, kernel="rbf", gamma=0.005)
    a = idsvm.IncrementalSVMState(X.shape[1], False, **kw)
    b = _idsvm.IncrementalSVMState(X.shape[1], False, **kw)
    largest = 0
    for i in range(X.shape[0]):
        assert a.run(X, y, [i]) == b.run(X, y, [i]), i
        sa, sb = a.get_state(), b.get_state()
        sa.pop("max_inverse_drift"), sb.pop("max_inverse_drift")
        assert_states_equal(sa, sb, rtol=0, atol=0, where=f"example {i}")
        largest = max(largest, len(sa["S_order"]))
    assert largest > 150        # (k + 2) u = 1.7e-14 and more: the level is in force
    for st in (a, b):
        assert_kkt(st, X, y, "rbf", {"gamma": 0.005})
        assert_matches_svc(st, X, y, "rbf", {"gamma": 0.005})
