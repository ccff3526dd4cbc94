"""The core's kernel columns, side by side in one process (``refsvm._core``).

    python -m pytest benchmarks/bench_kernels.py --benchmark-only -q -s [--quick]

One kernel column (every stored row against one stored row: what IncrementalSVM, POKER and
OnlineSVMR need when an example joins the margin set) and one arrival's kernel row (every
stored row against one new row: the score of kernel PA and kernel StreamSVM), RBF with
gamma = 1/d, on a9a's CSR rows (the first 10,000; 2,000 with ``--quick``) and on a dense
standard-normal set of the same size and d = 123:

* ``kernel_many`` / ``kernel_row_many`` (CSR: the column's row scattered once, a gather per
  stored row, four rows in flight; dense: four inner products in flight, the kept norms);
* ``k_rows`` / ``k_row_*`` one by one (CSR: a merge of the two index lists).

Both give the same bits (``tests/core/test_kernels.py``); the ratio is the speed of the
batched form.  Measured 2026-11-27 (full, 2-core VM): CSR column 4.4-5x, dense 1-1.3x.
Four columns in one pass (``kernel_many4``) against four ``kernel_many`` calls, the same
bits: see ``floors.toml``.

The exponential of a column, eight (AVX-512F) or four (AVX2) at a time against one at a
time (``_core.exp_width(1)``), the same bits (``tests/core/test_exp.py``): whole RBF
columns over 2-D rows (Gauss, where the exp is most of an evaluation) and over a9a.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parents[1]))  # a source checkout, not installed

from conftest import SHARED_DATA, sized  # noqa: E402

_core = pytest.importorskip("refsvm._core")

N = sized(10000, 2000)
COLUMNS = 20


def _store(name):
    if name == "a9a":
        from refsvm.datasets import load_dataset

        if not (SHARED_DATA / "a9a" / "a9a.gz").is_file():
            pytest.skip("a9a is not in the data home")
        X, _, _, _ = load_dataset("a9a", n_train=32561, n_test=1, data_home=SHARED_DATA)
        X = X[:N].tocsr()
        X.sort_indices()
        X.indices = X.indices.astype(np.int32)
        sparse = True
    else:
        X = np.random.RandomState(0).randn(N, 123)
        sparse = False
    store = _core.RowStore(X.shape[1], sparse)
    for i in range(X.shape[0]):
        store.append(X, i)
    return X, store


@pytest.fixture(scope="module", params=["a9a", "dense123"])
def data(request):
    return (request.param, *_store(request.param))


@pytest.mark.parametrize("many", [True, False], ids=["batched", "one-by-one"])
def test_kernel_column(benchmark, record, data, many):
    name, X, store = data
    kern = _core.CKernel("rbf", gamma=1.0 / X.shape[1])
    pos = np.arange(N)

    def run():
        for z in range(COLUMNS):
            kern.rows_pairs(store, z, pos, many)

    benchmark.pedantic(run, rounds=3, iterations=1)
    label = "kernel_many" if many else "k_rows one by one"
    record(f"core kernel column ({name})", label, benchmark,
           ns_per_eval=benchmark.stats.stats.min / (COLUMNS * N) * 1e9)


@pytest.mark.parametrize("four", [True, False], ids=["four-at-a-time", "one-at-a-time"])
def test_four_kernel_columns(benchmark, record, data, four):
    """Four columns in one pass over the stored rows (``kernel_many4``: POKER's SelfInit
    class sums, the joint path's scores and columns) against the same four columns one
    ``kernel_many`` at a time; the same bits (``tests/core/test_kernels.py``)."""
    name, X, store = data
    kern = _core.CKernel("rbf", gamma=1.0 / X.shape[1])
    pos = np.arange(N)

    def run():
        for z in range(0, COLUMNS, 4):
            if four:
                kern.rows_pairs4(store, [z, z + 1, z + 2, z + 3], pos)
            else:
                for r in range(4):
                    kern.rows_pairs(store, z + r, pos)

    benchmark.pedantic(run, rounds=3, iterations=1)
    record(f"core four kernel columns ({name})",
           "kernel_many4" if four else "kernel_many four times", benchmark,
           ns_per_eval=benchmark.stats.stats.min / (COLUMNS * N) * 1e9)


@pytest.mark.parametrize("many", [True, False], ids=["batched", "one-by-one"])
def test_kernel_row_of_an_arrival(benchmark, record, data, many):
    name, X, store = data
    kern = _core.CKernel("rbf", gamma=1.0 / X.shape[1])
    rows = [X[z] for z in range(COLUMNS)]

    def run():
        for x in rows:
            kern.row(store, x, many)

    benchmark.pedantic(run, rounds=3, iterations=1)
    label = "kernel_row_many" if many else "k_row one by one"
    record(f"core kernel row ({name})", label, benchmark,
           ns_per_eval=benchmark.stats.stats.min / (COLUMNS * N) * 1e9)


@pytest.mark.parametrize("vector", [True, False], ids=["vector", "one-at-a-time"])
@pytest.mark.parametrize("name", ["gauss2", "a9a"])
def test_exp_of_a_column(benchmark, record, name, vector):
    widest = _core.exp_widths()[0]
    if widest == 1:
        pytest.skip("no vector exp here (no AVX2/AVX-512F, or another C library)")
    if name == "a9a":
        X, store = _store("a9a")
    else:
        X = np.random.RandomState(0).randn(N, 2)
        store = _core.RowStore(2, False)
        for i in range(N):
            store.append(X, i)
    kern = _core.CKernel("rbf", gamma=1.0 / X.shape[1])
    pos = np.arange(N)

    def run():
        for z in range(COLUMNS):
            kern.rows_pairs(store, z, pos)

    try:
        _core.exp_width(widest if vector else 1)
        benchmark.pedantic(run, rounds=5, iterations=1)
    finally:
        _core.exp_width(widest)
    record(f"core exp of a column ({name})", "vector exp" if vector else "exp one at a time",
           benchmark, ns_per_eval=benchmark.stats.stats.min / (COLUMNS * N) * 1e9,
           width=widest if vector else 1)
