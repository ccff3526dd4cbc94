"""
Data larger than memory: a Dask array, chunk by chunk
=====================================================

Every learner here is single-pass: ``partial_fit`` on the blocks of a stream, one after
the other, gives the model of one pass over the whole stream.  So data that do not fit
in memory can stay on disk -- here a memory-mapped ``.npy`` file, read through a
:mod:`dask.array` -- and reach the learner one chunk at a time: only one chunk is ever
in memory.  Below, a linear learner (PA-I) and a kernel learner (kernel PA-I) learn a
stream of 10,000 rows in chunks of 1,000 rows, and each ends with exactly the model of
one in-memory pass.  The same loop works on a Dask array from any source (Parquet, HDF5,
Zarr, a cluster's memory); `dask-ml <https://ml.dask.org>`_'s ``Incremental`` wrapper
runs it for you, shown at the end.

Pass ``gamma`` (and every data-dependent setting) explicitly: ``gamma="scale"`` would be
resolved from the first chunk only.
"""

import os
import tempfile

import dask.array as da
import matplotlib.pyplot as plt
import numpy as np

from refsvm import KernelPassiveAggressive, PassiveAggressive
from refsvm.datasets import make_gauss

folder = tempfile.mkdtemp()
X_all, y_all = make_gauss(10_000, random_state=0)
np.save(os.path.join(folder, "X.npy"), X_all)        # stands for a file larger than memory
np.save(os.path.join(folder, "y.npy"), y_all)
del X_all, y_all
X_test, y_test = make_gauss(1_000, random_state=1)

# the file stays on disk: each chunk is read when the learner asks for it
X = da.from_array(np.load(os.path.join(folder, "X.npy"), mmap_mode="r"), chunks=(1_000, 2))
y = da.from_array(np.load(os.path.join(folder, "y.npy"), mmap_mode="r"), chunks=1_000)

learners = {"PA-I (linear)": PassiveAggressive(variant="PA-I", C=0.1),
            "kernel PA-I (rbf)": KernelPassiveAggressive(variant="PA-I", C=1.0, gamma=0.5)}
accuracy = {name: [] for name in learners}
for X_block, y_block in zip(X.to_delayed().ravel(), y.to_delayed().ravel()):
    X_chunk, y_chunk = X_block.compute(), y_block.compute()     # one chunk in memory
    for name, clf in learners.items():
        clf.partial_fit(X_chunk, y_chunk, classes=[-1, 1])
        accuracy[name].append(clf.score(X_test, y_test))

# %%
# The same models as one pass in memory, bit for bit:
X_mem, y_mem = X.compute(), y.compute()
in_memory = {"PA-I (linear)": PassiveAggressive(variant="PA-I", C=0.1),
             "kernel PA-I (rbf)": KernelPassiveAggressive(variant="PA-I", C=1.0, gamma=0.5)}
for name, clf in in_memory.items():
    clf.partial_fit(X_mem, y_mem, classes=[-1, 1])
    same = np.array_equal(clf.decision_function(X_test),
                          learners[name].decision_function(X_test))
    print(f"{name}: chunked == in memory: {same}")

fig, ax = plt.subplots(figsize=(8, 4))
rows = np.arange(1, len(X.chunks[0]) + 1) * X.chunks[0][0]
for name, acc in accuracy.items():
    ax.plot(rows, acc, marker="o", label=name)
ax.axhline(0.815, color="k", ls=":", lw=0.8, label="Bayes accuracy of Gauss")
ax.set_xlabel("rows streamed from the memory-mapped file")
ax.set_ylabel("test accuracy")
ax.set_title("partial_fit on the chunks of a Dask array")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# With dask-ml (``pip install dask-ml``), ``Incremental`` calls ``partial_fit`` on each
# block in order (``shuffle_blocks=False`` keeps the stream's order):
try:
    from dask_ml.wrappers import Incremental
except ImportError:
    print("dask-ml is not installed; the loop above is what it runs")
else:
    wrapped = Incremental(KernelPassiveAggressive(variant="PA-I", C=1.0, gamma=0.5),
                          shuffle_blocks=False)
    wrapped.fit(X, y, classes=[-1, 1])
    print("dask-ml Incremental == the loop above:",
          np.array_equal(wrapped.estimator_.decision_function(X_test),
                         learners["kernel PA-I (rbf)"].decision_function(X_test)))

del X, y, X_mem, y_mem
import shutil  # noqa: E402

shutil.rmtree(folder, ignore_errors=True)
