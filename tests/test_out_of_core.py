"""Data larger than memory: a memory-mapped file read through a Dask array, streamed
chunk by chunk through ``partial_fit``, gives the model of one in-memory pass (the
gallery's ``examples/plot_out_of_core_dask.py`` shows the same loop)."""

import numpy as np
import pytest

import refsvm
from refsvm.datasets import make_gauss

da = pytest.importorskip("dask.array")

#: single-pass learners with every data-dependent setting fixed (gamma="scale" would be
#: resolved from the first chunk alone)
LEARNERS = {
    "PassiveAggressive": lambda: refsvm.PassiveAggressive(variant="PA-I", C=0.1),
    "OnlineLinearSVM": lambda: refsvm.OnlineLinearSVM(lam=1e-3, average=True),
    "KernelPassiveAggressive": lambda: refsvm.KernelPassiveAggressive(C=1.0, gamma=0.5),
    "OnlineRampSVM": lambda: refsvm.OnlineRampSVM(C=1.0, gamma=0.5),
}


@pytest.fixture(scope="module")
def on_disk(tmp_path_factory):
    """A stream saved as .npy files and opened memory-mapped as Dask arrays of 4 chunks."""
    folder = tmp_path_factory.mktemp("stream")
    X, y = make_gauss(1_200, random_state=0)
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)
    X_map = np.load(folder / "X.npy", mmap_mode="r")
    y_map = np.load(folder / "y.npy", mmap_mode="r")
    assert isinstance(X_map, np.memmap)
    return da.from_array(X_map, chunks=(300, 2)), da.from_array(y_map, chunks=300), X, y


@pytest.mark.parametrize("name", list(LEARNERS))
def test_dask_chunks_give_the_in_memory_model(name, on_disk):
    Xd, yd, X, y = on_disk
    chunked = LEARNERS[name]()
    n_chunks = 0
    for X_block, y_block in zip(Xd.to_delayed().ravel(), yd.to_delayed().ravel()):
        X_chunk, y_chunk = X_block.compute(), y_block.compute()
        assert len(X_chunk) == 300                      # one chunk in memory at a time
        chunked.partial_fit(X_chunk, y_chunk, classes=[-1, 1])
        n_chunks += 1
    assert n_chunks == 4
    whole = LEARNERS[name]().partial_fit(X, y, classes=[-1, 1])
    X_test, _ = make_gauss(500, random_state=1)
    np.testing.assert_array_equal(chunked.decision_function(X_test),
                                  whole.decision_function(X_test))
    assert chunked.score(X, y) > 0.6                   # above chance (two equal classes)


def test_dask_ml_incremental_runs_the_same_pass(on_disk):
    wrappers = pytest.importorskip("dask_ml.wrappers")
    Xd, yd, X, y = on_disk
    wrapped = wrappers.Incremental(LEARNERS["KernelPassiveAggressive"](), shuffle_blocks=False)
    wrapped.fit(Xd, yd, classes=[-1, 1])
    whole = LEARNERS["KernelPassiveAggressive"]().partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_array_equal(wrapped.estimator_.decision_function(X),
                                  whole.decision_function(X))
