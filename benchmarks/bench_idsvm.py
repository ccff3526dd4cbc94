"""Benchmarks of the exact incremental SVM (Cauwenberghs & Poggio, ``refsvm.idsvm._incremental_svm``).

    python -m pytest benchmarks/bench_idsvm.py --benchmark-only -q -s

(``-k gauss5000`` etc. to run one data set; ``-s`` shows the growth tables.)

Side by side, in one process, on the same data (Gauss 5,000 and 10,000 from
:func:`refsvm.datasets.make_gauss`; Banana 5,300 x 2 from ``shared/data``,
standardised), RBF kernel, C = 1, gamma = 0.5:

1. one incremental pass of the compiled IDSVM twin: after *every* example the
   model is the exact SVM of the examples so far;
2. scikit-learn ``SVC`` (LIBSVM) trained once on all of it (default tol = 1e-3,
   cache 200 MB) -- target: the whole incremental pass within 10x of this;
3. OnlineSVMR (Wang & Vucetic, ``refsvm.ramp``) on the same stream, for the time
   and #SV comparison of the paper's Fig. 4b (skipped if that module is absent).

Each IDSVM pass is timed once (it takes seconds; a benchmark round *is* a pass).
The growth table printed for every pass gives, per tenth of the stream, the time
and the kernel evaluations per increment, and the number of adiabatic steps.
"""

import time

import numpy as np
import pytest
from sklearn.svm import SVC

from refsvm.datasets import load_shared, make_gauss

from conftest import SHARED_DATA, sized  # benchmarks/conftest.py (rootdir-relative import)

_idsvm = pytest.importorskip("refsvm.idsvm._incremental_svm")

C, GAMMA = 1.0, 0.5


def _data(name):
    if name == "gauss1000":
        X, y = make_gauss(1000, random_state=0)
    elif name == "gauss5000":
        X, y = make_gauss(5000, random_state=0)
    elif name == "gauss10000":
        X, y = make_gauss(10000, random_state=0)
    else:
        if not (SHARED_DATA / "banana").exists():
            pytest.skip("shared data not available")
        X, y = load_shared("banana", data_home=SHARED_DATA)
        X = (X - X.mean(0)) / X.std(0)
    return np.ascontiguousarray(X, dtype=np.float64), np.where(y > 0, 1.0, -1.0)


DATA = sized(["gauss5000", "gauss10000", "banana"], ["gauss1000"])  # --quick: small data
_CACHE = {}


@pytest.fixture(scope="module", params=DATA)
def dataset(request):
    if request.param not in _CACHE:
        _CACHE[request.param] = _data(request.param)
    return request.param, _CACHE[request.param]


def _incremental_pass(X, y):
    """One pass in ten chunks (the chunks only split the timing; the stream is one)."""
    n = len(y)
    st = _idsvm.IncrementalSVMState(X.shape[1], False, C=C, kernel="rbf", gamma=GAMMA)
    rows = []
    bounds = np.linspace(0, n, 11).astype(int)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        e0, i0, t0 = st.n_kernel_evals, st.get_state()["n_iterations"], time.perf_counter()
        st.run(X, y, np.arange(lo, hi))
        dt = time.perf_counter() - t0
        s = st.get_state()
        rows.append((hi, dt / (hi - lo) * 1e3, (st.n_kernel_evals - e0) / (hi - lo),
                     (s["n_iterations"] - i0) / (hi - lo), len(s["S"]), len(s["E"])))
    return st, rows


def test_idsvm_incremental_pass(benchmark, record, dataset):
    name, (X, y) = dataset
    benchmark.group = name
    st, rows = benchmark.pedantic(_incremental_pass, args=(X, y), rounds=1, iterations=1)
    s = st.get_state()
    n_sv = len(s["S"]) + len(s["E"])
    benchmark.extra_info.update(kernel_evals=int(st.n_kernel_evals), n_sv=n_sv,
                                margin_sv=len(s["S"]), growth=rows)
    record(name, "IDSVM one exact incremental pass", benchmark,
           kernel_evals=f"{st.n_kernel_evals:.3g}", SV=n_sv, marginSV=len(s["S"]),
           kernel_evals_per_example=round(st.n_kernel_evals / len(y), 1))
    print(f"\n[{name}] IDSVM pass: {benchmark.stats.stats.min:.2f} s, "
          f"{st.n_kernel_evals:.3g} kernel evaluations, {n_sv} SV ({len(s['S'])} on the margin)")
    print("   examples   ms/increment   kernel evals/increment   steps/increment   |S|   |E|")
    for hi, ms, ev, it, ns, ne in rows:
        print(f"   {hi:8d}   {ms:12.3f}   {ev:22.0f}   {it:15.1f}   {ns:3d}   {ne:5d}")


def test_svc_batch_once(benchmark, record, dataset):
    name, (X, y) = dataset
    benchmark.group = name
    model = benchmark.pedantic(lambda: SVC(C=C, gamma=GAMMA, cache_size=200).fit(X, y),
                               rounds=3, iterations=1)
    record(name, "sklearn SVC (LIBSVM) trained once", benchmark, SV=int(model.n_support_.sum()))


def test_online_svmr_same_stream(benchmark, record, dataset):
    _ramp = pytest.importorskip("refsvm.ramp._online_svmr")
    name, (X, y) = dataset
    benchmark.group = name

    def one_pass():
        st = _ramp.OnlineSVMR(X.shape[1], False, C=C, kernel="rbf", gamma=GAMMA, degree=3,
                              coef0=0.0, tol=1e-3, min_gain=1e-5, max_non_sv=-1)
        st.run(X, y, np.arange(len(y)))
        return st

    st = benchmark.pedantic(one_pass, rounds=1, iterations=1)
    n_sv = int(np.count_nonzero(np.asarray(st.get_state()["alpha"])))
    record(name, "OnlineSVMR (Wang & Vucetic) one pass", benchmark, SV=n_sv,
           kernel_evals=f"{st.n_kernel_evals:.3g}",
           kernel_evals_per_example=round(st.n_kernel_evals / len(y), 1))
