"""IDSVM on noisy streams (issue 15, item 3): the degenerate-case rules keep the adiabatic
loop from cycling.

The stream of the issue (2-D uniform points, a third positive at random, C = 10,
gamma = 0.5) made both twins cycle at example 877: an error vector whose rate was
round-off joined S and left it again by a zero step, for ever.  Such an example is now
held back like one left dependent by an exchange (``_change_membership``).  Known open:
the same stream still cycles later (example 914, a longer cycle through positive steps
on a badly conditioned margin set, |S| ~ 85, inverse drift ~0.3 at refresh).
"""

import numpy as np
import pytest

from refsvm.idsvm import incremental_svm as idsvm

_idsvm = pytest.importorskip("refsvm.idsvm._incremental_svm")


def _noisy_stream(n=2000, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, (n, 2))
    y = np.where(rng.rand(n) < 0.33, 1.0, -1.0)
    return X, y


def test_issue_15_stream_passes_the_zero_step_join_and_leave():
    X, y = _noisy_stream()
    st = _idsvm.IncrementalSVMState(2, False, C=10.0, kernel="rbf", gamma=0.5)
    st.run(X, y, np.arange(877))
    data, params = st.save_state(), st.init_params()
    st.run(X, y, np.arange(877, 900))           # cycled at 877 before
    assert st.get_state()["n_seen"] == 900
    # the reference, loaded from the twin's state, takes the same degenerate step
    ref = idsvm.IncrementalSVMState(**params)
    ref.load_state(data)
    ref.run(X, y, np.arange(877, 880))
    assert ref.check()["h"] < 1e-3


@pytest.mark.parametrize("C", [1.0, 10.0, 1000.0])
@pytest.mark.parametrize("seed", range(3))
def test_random_label_streams_finish_and_keep_kkt(C, seed):
    X, y = _noisy_stream(300, seed)
    st = _idsvm.IncrementalSVMState(2, False, C=C, kernel="rbf", gamma=0.5)
    st.run(X, y, np.arange(300))
    d = st.check()
    assert d["g_drift"] < 1e-6 * max(1.0, C) and d["h"] < 1e-6 * max(1.0, C)
