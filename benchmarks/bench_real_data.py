"""The kernel learners on real data, side by side with LIBSVM (issue 13's table).

    python benchmarks/bench_real_data.py                 # the full table (~10-20 minutes)
    python benchmarks/bench_real_data.py --quick         # small version (also REFSVM_BENCH_QUICK=1)
    python benchmarks/bench_real_data.py --sets a9a,dna --C 1 --no-idsvm
    python benchmarks/bench_real_data.py --ramp fit_intercept=False --pa fit_intercept=False
    python benchmarks/bench_real_data.py --idsvm-floor   # + IncrementalSVM's memory-traffic floor
    python -m pytest benchmarks/bench_real_data.py --benchmark-only -q -s [--quick]

The protocol of issue 13, as a new user would try it: every set of ``shared/data`` read with
:func:`refsvm.datasets.load_shared` (sets whose files are absent are skipped):

====================  ===========================================================
a9a                   train and test files
ijcnn1, w3a           the test file (the larger one), split
svmguide1             the test file, split
usps                  round digits 3, 6, 8, 9, 0 vs the rest; train and test files
dna                   class 3 vs the rest, split
banana                split
waveform              class 1 vs the rest, split
====================  ===========================================================

A split draws min(4,000, 2/3 of the rows) training rows and min(2,000, the rest) test rows
at random (seed 0); with separate files, 4,000 training rows and 2,000 test rows are drawn
from each.  Attributes are scaled to mean 0 / std 1 with the training statistics (dense).
RBF kernel with gamma = 1/d, C in {1, 10}, **default estimator settings** otherwise.

For each (set, C), in one process, one after the other on the same arrays:

- ``SVC`` (LIBSVM, default tol and cache) trained once: time, #SV, test accuracy;
- ``OnlineRampSVM`` one online pass (``fit``): time / LIBSVM's, #SV, test accuracy, and its
  kernel evaluations against the *floor* sum_t |SV_t| (the evaluations that computing
  f(x_t) on each arrival needs anyway; measured in a second, untimed pass of the same state
  driven through ``observe``/``label``);
- ``KernelPassiveAggressive`` (PA-I) one pass: time, #SV, accuracy;
- ``IncrementalSVM`` (exact after every example: ``fit_method="incremental"``) one pass:
  time / LIBSVM's;
- ``IncrementalSVM`` with its default ``fit`` (``fit_method="libsvm"``: LIBSVM's solution
  made exact by Fine & Scheinberg's paths, then exact after every later example): time /
  LIBSVM's and the largest |f - f_LIBSVM| on the test rows.

Times are the best of ``--repeat`` runs (IncrementalSVM: one run).  The targets of issue 13
are printed beside the table: ramp time <= 2x LIBSVM (median <= 1x), accuracy within 0.5
point of LIBSVM, #SV <= LIBSVM's, kernel evaluations <= 2x the floor, IncrementalSVM <= 10x.
The machine's load average is printed with the table: ratios measured under load are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.append(str(Path(__file__).resolve().parents[1]))  # a source checkout, not installed

QUICK_ENV = "REFSVM_BENCH_QUICK"

#: name -> (loader key, source, positive classes or None for label > 0)
SETS = {
    "a9a": ("a9a", "files", None),
    "ijcnn1": ("ijcnn1", "test", None),
    "w3a": ("w3a", "test", None),
    "svmguide1": ("svmguide1", "test", None),
    "usps": ("usps", "files", [3, 6, 8, 9, 0]),
    "dna": ("dna", "train", [3]),
    "banana": ("banana", "train", None),
    "waveform": ("waveform", "train", [1]),
}


def _binary(y, positive):
    if positive is None:
        return np.where(y > 0, 1, -1)
    return np.where(np.isin(y, positive), 1, -1)


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def draw(X, y, Xt, yt, n_train, n_test, rng):
    """The rows of the protocol: with a test file (``Xt`` given) ``n_train`` and ``n_test``
    rows drawn from each, in file order; else a random split of X into min(n_train, 2/3
    of the rows) training and min(n_test, the rest) test rows."""
    if Xt is not None:
        i = np.sort(rng.choice(X.shape[0], min(n_train, X.shape[0]), replace=False))
        j = np.sort(rng.choice(Xt.shape[0], min(n_test, Xt.shape[0]), replace=False))
        return X[i], y[i], Xt[j], yt[j]
    n = X.shape[0]
    ntr = min(n_train, 2 * n // 3)
    nte = min(n_test, n - ntr)
    p = rng.permutation(n)
    return X[p[:ntr]], y[p[:ntr]], X[p[ntr:ntr + nte]], y[p[ntr:ntr + nte]]


def standardize(X, Xt):
    """Dense X and Xt scaled to mean 0 / std 1 with the statistics of X."""
    X, Xt = _dense(X), _dense(Xt)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd == 0] = 1.0
    return np.ascontiguousarray((X - mu) / sd), np.ascontiguousarray((Xt - mu) / sd)


def load(name, n_train=4000, n_test=2000, seed=0, data_home=None):
    """(X, y, X_test, y_test) of one set by the protocol above; None when its files are absent."""
    from refsvm.datasets import load_shared

    key, source, positive = SETS[name]
    try:
        X, y = load_shared(key, data_home=data_home, test=(source == "test"))
        Xt, yt = load_shared(key, data_home=data_home, test=True) if source == "files" \
            else (None, None)
    except FileNotFoundError:
        return None
    X, y, Xt, yt = draw(X, y, Xt, yt, n_train, n_test, np.random.RandomState(seed))
    X, Xt = standardize(X, Xt)
    return X, _binary(y, positive), Xt, _binary(yt, positive)


def _best_time(fn, repeat):
    best, out = np.inf, None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def arrival_floor(est, X, y):
    """sum_t |SV_t| for the stream of ``est`` (a fitted OnlineRampSVM): the same state
    driven through observe/label, the evaluations of each observe counted (one per SV)."""
    st = est._states[0]
    mod = est._module()
    twin = getattr(mod, type(st).__name__)(**st.init_params())
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    floor = 0
    for t in range(X.shape[0]):
        e0 = twin.n_kernel_evals
        twin.observe(X[t])
        floor += twin.n_kernel_evals - e0
        twin.label(yy[t])
    est._end_of_pass(twin)            # the finishing step of fit, if any (no arrival)
    assert twin.n_kernel_evals == st.n_kernel_evals, "the untimed pass must equal the timed one"
    return floor


def parse_kv(text):
    """"k=v,k2=v2" -> {k: v}: values as Python literals (1e-3, True, None, 'x'), else as
    strings.  The one option parser of the benchmark scripts (``bench_defaults.py`` too)."""
    import ast

    out = {}
    for pair in filter(None, (text or "").split(",")):
        k, _, v = pair.partition("=")
        try:
            out[k.strip()] = ast.literal_eval(v.strip())
        except (ValueError, SyntaxError):
            out[k.strip()] = v.strip()
    return out


def run_one(X, y, Xt, yt, C, repeat=3, idsvm=True, ramp_params=None, pa_params=None):
    """One row of the table: a dict of the measured numbers."""
    from sklearn.svm import SVC

    from refsvm import IncrementalSVM, KernelPassiveAggressive, OnlineRampSVM

    gamma = 1.0 / X.shape[1]
    row = dict(n=X.shape[0], d=X.shape[1], C=C)
    t, svc = _best_time(lambda: SVC(C=C, gamma=gamma).fit(X, y), repeat)
    row.update(svc_time=t, svc_sv=int(svc.n_support_.sum()), svc_acc=float(svc.score(Xt, yt)))

    def ramp():
        return OnlineRampSVM(C=C, gamma=gamma, **(ramp_params or {})).fit(X, y)

    t, est = _best_time(ramp, repeat)
    st = est._states[0].get_state()
    row.update(ramp_time=t, ramp_sv=int(est.support_.shape[0]),
               ramp_acc=float(est.score(Xt, yt)), ramp_evals=int(est.n_kernel_evals_),
               ramp_floor=arrival_floor(est, X, y), ramp_steps=int(st["n_steps"]),
               ramp_updates=int(st["n_updates"]))

    def pa():
        return KernelPassiveAggressive(C=C, gamma=gamma, **(pa_params or {})).fit(X, y)

    t, est = _best_time(pa, repeat)
    row.update(pa_time=t, pa_sv=int(est.support_.shape[0]), pa_acc=float(est.score(Xt, yt)))
    if idsvm:
        t, est = _best_time(lambda: IncrementalSVM(C=C, gamma=gamma,
                                                   fit_method="incremental").fit(X, y), 1)
        row.update(idsvm_time=t, idsvm_sv=int(est.support_.shape[0]),
                   idsvm_acc=float(est.score(Xt, yt)))
        t, est = _best_time(lambda: IncrementalSVM(C=C, gamma=gamma).fit(X, y), repeat)
        row.update(idsvm_fit_time=t, idsvm_fit_path=",".join(est.fit_paths_),
                   idsvm_fit_gap=float(np.max(np.abs(est.decision_function(Xt)
                                                     - svc.decision_function(Xt)))))
    return row


#: array sizes (bytes) at which idsvm_memory_floor measures the bandwidths
BANDWIDTH_SIZES = [2 ** k for k in range(18, 28)]      # 256 KB .. 128 MB


def measured_bandwidths(repeat=10, one_thread=False):
    """{"read": [...], "update": [...]}: bytes per second of the best of ``repeat`` passes
    over a float64 array of each size of ``BANDWIDTH_SIZES``; "read": reading it once (a
    dot product of the array with itself, BLAS), "update": reading and writing it in
    place.  Made non-increasing in the size (the larger of a size's figure and every
    larger size's), so that a figure read off for any array no smaller than its size is
    at least what that array gets: a floor built on them stays a floor.  The dot product
    runs on BLAS's threads (all cores), or with ``one_thread`` on one, as the compiled
    twins' loops run."""
    import contextlib

    from refsvm._blas_threads import one_blas_thread

    out = {"read": [], "update": []}
    with one_blas_thread() if one_thread else contextlib.nullcontext():
        _measure_bandwidths(out, repeat)
    for kind in out:
        out[kind] = list(np.maximum.accumulate(out[kind][::-1])[::-1])
    return out


def _measure_bandwidths(out, repeat):
    for size in BANDWIDTH_SIZES:
        a = np.ones(size // 8)
        for kind, fn, moved in (("read", lambda: a @ a, size),
                                ("update", lambda: np.multiply(a, 1.0, out=a), 2 * size)):
            best = np.inf
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t0)
            out[kind].append(moved / best)


def _bandwidth_at(table, nbytes):
    """The figure of the largest measured size <= nbytes (the smallest size's below it)."""
    i = int(np.searchsorted(BANDWIDTH_SIZES, nbytes, side="right")) - 1
    return table[max(i, 0)]


def idsvm_memory_floor(X, y, C, bandwidths=None, one_core=None):
    """A lower bound on IncrementalSVM's time, exact after every example, from memory
    traffic alone: every adiabatic step reads and writes the bordered inverse R once
    ((|S| + 1)^2 doubles, the least a rank-one update of it touches) and reads the kernel
    columns of S once (t |S| doubles for the t examples so far: the rates of every example,
    Eq. 7).  Each step's bytes go at the bandwidth measured for an array of that step's
    size (``measured_bandwidths``: in cache while it fits, from memory once it does not),
    and no faster.  The compiled state is stepped one example at a time to count the
    steps and |S| around each example (|S| during an example taken as the mean of before
    and after).  With ``one_core`` (bandwidths measured on one thread) also the floor at
    those bandwidths, ``floor_one_core``: the bound for code that runs on one core, as the
    compiled twin does."""
    from refsvm.idsvm import _incremental_svm as twin

    bw = bandwidths or measured_bandwidths()
    st = twin.IncrementalSVMState(X.shape[1], False, C=C, kernel="rbf", gamma=1.0 / X.shape[1])
    yy = np.where(y > 0, 1.0, -1.0)
    r_bytes = rate_bytes = r_time = rate_time = one = 0.0
    for i in range(X.shape[0]):
        ns0, it0 = len(st._s_order()), st.n_iterations
        st.step(X[i], yy[i])
        steps = st.n_iterations - it0
        if not steps:
            continue
        m = 0.5 * (ns0 + len(st._s_order()))
        r_size, c_size = 8.0 * (m + 1) ** 2, 8.0 * (i + 1) * m
        r_bytes += steps * 2.0 * r_size
        rate_bytes += steps * c_size
        r_time += steps * 2.0 * r_size / _bandwidth_at(bw["update"], r_size)
        rate_time += steps * c_size / _bandwidth_at(bw["read"], c_size)
        if one_core:
            one += steps * (2.0 * r_size / _bandwidth_at(one_core["update"], r_size)
                            + c_size / _bandwidth_at(one_core["read"], c_size))
    out = dict(steps=int(st.n_iterations), margin=len(st._s_order()), r_gb=r_bytes / 1e9,
               rate_gb=rate_bytes / 1e9, r_s=r_time, rate_s=rate_time,
               floor=r_time + rate_time)
    if one_core:
        out["floor_one_core"] = one
    return out


def libsvm_retrain_estimate(X, y, C, n_prefixes=10):
    """What an exact model after every example costs with LIBSVM: ``SVC`` retrained on
    all rows so far after each one, sum_{t=1..n} T(t).  T is measured at ``n_prefixes``
    prefix sizes evenly spaced up to n (one fit each) and interpolated linearly between
    them (through T(0) = 0) at every t; a prefix with one class only counts as 0.
    Returns the estimated seconds and the measured (size, seconds) pairs."""
    from sklearn.svm import SVC

    n = X.shape[0]
    sizes = np.unique(np.linspace(n / n_prefixes, n, n_prefixes).round().astype(int))
    times = []
    for m in sizes:
        if np.unique(y[:m]).size < 2:
            times.append(0.0)
            continue
        t0 = time.perf_counter()
        SVC(C=C, gamma=1.0 / X.shape[1]).fit(X[:m], y[:m])
        times.append(time.perf_counter() - t0)
    every = np.interp(np.arange(1, n + 1), np.r_[0, sizes], np.r_[0.0, times])
    return float(every.sum()), list(zip(sizes.tolist(), times))


def print_table(rows, out=sys.stdout):
    """The issue's table, plus accuracy, kernel evaluations and the PA-I baseline."""
    w = out.write
    w("| data | C | n | ramp / LIBSVM time | #SV ramp / LIBSVM | acc ramp / LIBSVM (%) "
      "| evals / floor | IDSVM / LIBSVM time | IDSVM fit / LIBSVM time "
      "| PA-I: time ratio, #SV, acc | LIBSVM s |\n")
    w("|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        ids = f"{r['idsvm_time'] / r['svc_time']:.1f}x" if "idsvm_time" in r else "-"
        fit = (f"{r['idsvm_fit_time'] / r['svc_time']:.1f}x" if "idsvm_fit_time" in r
               else "-")
        w(f"| {r['name']} | {r['C']:g} | {r['n']} | {r['ramp_time'] / r['svc_time']:.2f}x "
          f"| {r['ramp_sv']}/{r['svc_sv']} | {100 * r['ramp_acc']:.2f}/{100 * r['svc_acc']:.2f} "
          f"| {r['ramp_evals'] / max(1, r['ramp_floor']):.2f} | {ids} | {fit} "
          f"| {r['pa_time'] / r['svc_time']:.2f}x, {r['pa_sv']}, {100 * r['pa_acc']:.2f} "
          f"| {r['svc_time']:.2f} |\n")
    if not rows:
        return
    tr = np.array([r["ramp_time"] / r["svc_time"] for r in rows])
    acc = np.array([r["svc_acc"] - r["ramp_acc"] for r in rows])
    sv = np.array([r["ramp_sv"] / r["svc_sv"] for r in rows])
    ev = np.array([r["ramp_evals"] / max(1, r["ramp_floor"]) for r in rows])
    w(f"\ntargets (issue 13): ramp time ratio max {tr.max():.2f} (<= 2), median "
      f"{np.median(tr):.2f} (<= 1); accuracy loss max {100 * acc.max():.2f} points (<= 0.5); "
      f"#SV ratio max {sv.max():.2f} (<= 1); evals / floor max {ev.max():.2f} (<= 2)")
    if all("idsvm_time" in r for r in rows):
        ir = np.array([r["idsvm_time"] / r["svc_time"] for r in rows])
        fr = np.array([r["idsvm_fit_time"] / r["svc_time"] for r in rows])
        w(f"; IDSVM time ratio max {ir.max():.1f} (<= 10), median {np.median(ir):.1f}; "
          f"IDSVM fit max {fr.max():.1f}, median {np.median(fr):.1f}")
    w("\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"small version: 600 training / 400 test rows (also {QUICK_ENV}=1)")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated set names")
    ap.add_argument("--C", default="1,10", help="comma-separated values of C")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--no-idsvm", action="store_true", help="leave out IncrementalSVM")
    ap.add_argument("--idsvm-floor", action="store_true",
                    help="also IncrementalSVM's memory-traffic floor (idsvm_memory_floor)")
    ap.add_argument("--retrain", action="store_true",
                    help="also LIBSVM retrained after every example, estimated from ten "
                         "prefix sizes (libsvm_retrain_estimate), against IncrementalSVM")
    ap.add_argument("--ramp", default="", help="extra OnlineRampSVM parameters, k=v,k=v")
    ap.add_argument("--pa", default="", help="extra KernelPassiveAggressive parameters")
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--json", default=None, help="write the rows to this file")
    args = ap.parse_args(argv)
    quick = args.quick or os.environ.get(QUICK_ENV, "") not in ("", "0")
    n_train, n_test = (600, 400) if quick else (4000, 2000)
    rows, bandwidths, one_core = [], None, None
    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for name in args.sets.split(","):
        data = load(name, n_train, n_test, data_home=args.data_home)
        if data is None:
            print(f"[skip] {name}: files absent", file=sys.stderr)
            continue
        for C in (float(c) for c in args.C.split(",")):
            r = run_one(*data, C, repeat=args.repeat, idsvm=not args.no_idsvm,
                        ramp_params=parse_kv(args.ramp), pa_params=parse_kv(args.pa))
            r["name"] = name
            if args.idsvm_floor:
                bandwidths = bandwidths or measured_bandwidths()
                one_core = one_core or measured_bandwidths(one_thread=True)
                r.update({f"floor_{k}": v for k, v in idsvm_memory_floor(
                    *data[:2], C, bandwidths, one_core).items()})
            if args.retrain:
                r["retrain_time"], r["retrain_points"] = libsvm_retrain_estimate(
                    *data[:2], C)
            rows.append(r)
            print(f"[done] {name} C={C:g}: " + ", ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()),
                file=sys.stderr, flush=True)
    print(f"load average {load_avg:.2f} before, {os.getloadavg()[0]:.2f} after "
          f"({os.cpu_count()} cores); ramp {args.ramp or 'defaults'}, PA {args.pa or 'defaults'}")
    print_table(rows)
    if args.idsvm_floor and rows:
        print("\nIncrementalSVM's memory floor (idsvm_memory_floor): one read and write of R "
              "and one read of the columns of S per step, each at the bandwidth measured for "
              "an array of its size")
        print("| data | C | steps | final |S| | R GB | R floor s | columns GB | columns floor s "
              "| floor / LIBSVM | IDSVM / LIBSVM | IDSVM / floor | IDSVM / one-core floor |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            ids = f"{r['idsvm_time'] / r['svc_time']:.1f}x" if "idsvm_time" in r else "-"
            per = (f"{r['idsvm_time'] / r['floor_floor']:.1f}x | "
                   f"{r['idsvm_time'] / r['floor_floor_one_core']:.1f}x"
                   if "idsvm_time" in r else "- | -")
            print(f"| {r['name']} | {r['C']:g} | {r['floor_steps']} | {r['floor_margin']} "
                  f"| {r['floor_r_gb']:.1f} | {r['floor_r_s']:.2f} | {r['floor_rate_gb']:.1f} "
                  f"| {r['floor_rate_s']:.2f} "
                  f"| {r['floor_floor'] / r['svc_time']:.1f}x | {ids} | {per} |")
        if "idsvm_time" in rows[0]:
            q = np.array([r["idsvm_time"] / r["floor_floor"] for r in rows])
            q1 = np.array([r["idsvm_time"] / r["floor_floor_one_core"] for r in rows])
            print(f"IDSVM / floor: median {np.median(q):.1f}x, max {q.max():.1f}x (issue 40: "
                  f"<= 2x, <= 3x); / one-core floor: median {np.median(q1):.1f}x, max "
                  f"{q1.max():.1f}x")
        for label, bw in (("all cores", bandwidths), ("one core", one_core)):
            if bw:
                print(f"bandwidths ({label}), GB/s (read / update) at "
                      + ", ".join(f"{size / 2 ** 20:g} MB {rd / 1e9:.0f}/{up / 1e9:.0f}"
                                  for size, rd, up in zip(BANDWIDTH_SIZES, bw["read"],
                                                          bw["update"])))
    if args.retrain and rows:
        print("\nAn exact model after every example: LIBSVM retrained on all rows so far "
              "after each one (libsvm_retrain_estimate: ten prefix sizes, interpolated) "
              "against IncrementalSVM's one pass")
        print("| data | C | n | LIBSVM once s | LIBSVM retrained s (est.) | IncrementalSVM s "
              "| retrained / IncrementalSVM |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            ids = r.get("idsvm_time")
            ratio = f"{r['retrain_time'] / ids:.0f}x" if ids else "-"
            print(f"| {r['name']} | {r['C']:g} | {r['n']} | {r['svc_time']:.2f} "
                  f"| {r['retrain_time']:.0f} | {ids if ids is None else f'{ids:.2f}'} "
                  f"| {ratio} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


#: the entries each row records for benchmarks/floors.toml (group "real <set> C=<C>")
ENTRIES = {"ramp": "OnlineRampSVM one pass", "svc": "sklearn SVC (LIBSVM) trained once",
           "pa": "KernelPassiveAggressive one pass", "idsvm": "IncrementalSVM one pass",
           "idsvm_fit": "IncrementalSVM fit",
           "retrain": "LIBSVM retrained after every example (est.)"}


def test_real_data_table(benchmark):
    """pytest entry point: the table (``--quick`` for the small one), printed with ``-s``.

    Every row is also recorded for the floors of ``benchmarks/floors.toml``: group
    ``real <set> C=<C>``, entries :data:`ENTRIES` (their best times), and the value
    ``evals_over_floor`` of the OnlineRampSVM entry."""
    import pytest

    import conftest  # benchmarks/conftest.py
    from conftest import SHARED_DATA, quick

    if not SHARED_DATA.exists():
        pytest.skip("shared data not available")
    argv = ["--data-home", str(SHARED_DATA), "--retrain"] + (["--quick"] if quick() else [])
    benchmark.group = "real data"
    rows = benchmark.pedantic(main, args=(argv,), rounds=1, iterations=1)
    benchmark.extra_info.update(rows=rows)
    for r in rows:
        group = conftest._RESULTS.setdefault(f"real {r['name']} C={r['C']:g}", {})
        for key, name in ENTRIES.items():
            if f"{key}_time" in r:
                group[name] = {"min": r[f"{key}_time"], "median": r[f"{key}_time"]}
        group[ENTRIES["ramp"]]["evals_over_floor"] = r["ramp_evals"] / max(1, r["ramp_floor"])


if __name__ == "__main__":
    main()
