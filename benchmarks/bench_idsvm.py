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


# ---------------------------------------------------------------------- stress figures
# (issue 15 item 3)  python benchmarks/bench_idsvm.py stress [--svc] [--compare K]
#
# The noisy streams of the issue (2,000 points uniform in [-2, 2]^2, a third positive at
# random: 8 seeds at C = 10, gamma = 0.5 and 8 at C = 1, gamma = 1), a stream with exact
# duplicates and opposite-label duplicates, the noisy stream at extreme C and a separable
# stream at C = 1e12 (hard margin).  Per stream, from the compiled twin: adiabatic steps,
# CPU seconds, the largest KKT violation and |sum y alpha| recomputed from scratch (with
# scikit-learn's kernel), the drift of the kept g, repairs / exchanges / rollbacks; with
# --svc the difference to SVC (tol 1e-10, as tests/idsvm/test_oracle.py); with --compare K
# the largest difference between the twins over the last K examples (the reference loaded
# from the compiled twin's state and both stepped, compared after every step).

def stress_streams(long=True):
    """(name, X, y, C, gamma) of the stress suite; ``long=False``: one per kind."""
    def noisy(seed, n=2000):
        rng = np.random.RandomState(seed)
        X = rng.uniform(-2, 2, (n, 2))
        return X, np.where(rng.rand(n) < 0.33, 1.0, -1.0)

    out = []
    seeds = range(8) if long else [0]
    for C_, g_ in ((10.0, 0.5), (1.0, 1.0)):
        for seed in seeds:
            X, y = noisy(seed)
            out.append((f"noisy seed {seed}", X, y, C_, g_))
    X, y = noisy(11, 600)
    rng = np.random.RandomState(1)
    flip = rng.choice(600, 100, replace=False)
    Xd = np.vstack([X, X, X[flip]])
    yd = np.concatenate([y, y, -y[flip]])
    order = rng.permutation(len(yd))
    out.append(("duplicates", Xd[order], yd[order], 10.0, 0.5))
    for C_ in ((1e-3, 1e3, 1e6, 1e9, 1e12) if long else (1e-3, 1e12)):
        X, y = noisy(0)
        out.append(("noisy seed 0", X, y, C_, 0.5))
    rng = np.random.RandomState(3)
    X = rng.uniform(-2, 2, (3000, 2))
    s = X[:, 0] + 0.3 * X[:, 1]
    keep = np.abs(s) > 0.2
    out.append(("separable", X[keep][:2000], np.where(s[keep][:2000] > 0, 1.0, -1.0), 1e12, 0.5))
    return out


def stress_row(name, X, y, C_, g_, svc=False, compare=0):
    """One row of the stress table (see above)."""
    from sklearn.metrics.pairwise import rbf_kernel

    from refsvm.idsvm import incremental_svm as ref

    n = len(y)
    X = np.ascontiguousarray(X, dtype=np.float64)
    st = _idsvm.IncrementalSVMState(2, False, C=C_, kernel="rbf", gamma=g_)
    t0 = time.process_time()
    stop = n - compare
    st.run(X, y, np.arange(stop))
    cpu = time.process_time() - t0
    row = {"stream": name, "n": n, "C": C_, "gamma": g_}
    if compare:
        saved, params = st.save_state(), st.init_params()
        twin_ref = ref.IncrementalSVMState(**params)
        twin_ref.load_state(saved)
        worst = 0.0
        for i in range(stop, n):
            t1 = time.process_time()
            st.step(X[i], y[i])
            cpu += time.process_time() - t1
            twin_ref.step(X[i], y[i])
            a, b = st.get_state(), twin_ref.get_state()
            assert np.array_equal(a["S_order"], b["S_order"]), (name, i)
            worst = max(worst, float(np.max(np.abs(a["alpha"] - b["alpha"]))),
                        float(np.max(np.abs(a["g"] - b["g"]))), abs(a["b"] - b["b"]))
        row["twins_max_diff"] = worst
    s = st.get_state()
    a = s["alpha"]
    K = rbf_kernel(X, X, gamma=g_)
    g = y * (K @ (a * y) + s["b"]) - 1.0
    viol = np.where(a <= 0, np.maximum(-g, 0), np.where(a >= C_, np.maximum(g, 0), np.abs(g)))
    scale = 1.0 + float(np.max(np.diag(K))) * float(a.max())
    row.update(steps=int(s["n_iterations"]), cpu_s=round(cpu, 2), S=len(s["S"]), E=len(s["E"]),
               kkt=float(viol.max()), kkt_rel=float(viol.max()) / scale,
               h=abs(float(a @ y)), g_drift=float(np.max(np.abs(g - s["g"]))),
               repairs=int(s["n_repairs"]), exchanges=int(s["n_exchanges"]),
               rollbacks=int(s["n_rollbacks"]))
    if svc:
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        kw = dict(C=C_, kernel="rbf", gamma=g_, cache_size=500, shrinking=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = SVC(tol=1e-10, max_iter=50_000, **kw).fit(X, y)
            converged = m.n_iter_[0] < 50_000
            if not converged:
                m = SVC(tol=1e-5, **kw).fit(X, y)
        asvc = np.zeros(n)
        asvc[m.support_] = np.abs(m.dual_coef_[0])
        Q = K * np.outer(y, y)
        ours, theirs = a.sum() - 0.5 * a @ Q @ a, asvc.sum() - 0.5 * asvc @ Q @ asvc
        diff = np.setxor1d(np.flatnonzero(a > 0), m.support_)
        ok = (np.maximum(a[diff], asvc[diff]) <= 1e-6 * C_) | (np.abs(s["g"][diff]) <= 1e-7)
        row.update(svc_converged=bool(converged),
                   obj_rel=float((ours - theirs) / max(abs(theirs), 1e-12)),
                   bias_diff=float(s["b"] - m.intercept_[0]), sv_set_diff=int((~ok).sum()))
    return row


def _stress_main(argv=None):
    import argparse
    import json

    p = argparse.ArgumentParser(description="IDSVM stress figures (issue 15 item 3)")
    p.add_argument("what", choices=["stress"])
    p.add_argument("--short", action="store_true", help="one stream per kind")
    p.add_argument("--svc", action="store_true", help="compare with SVC (slow)")
    p.add_argument("--compare", type=int, default=0,
                   help="compare the twins after each of the last K examples")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    rows = []
    for name, X, y, C_, g_ in stress_streams(long=not args.short):
        row = stress_row(name, X, y, C_, g_, svc=args.svc, compare=args.compare)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    _stress_main()
