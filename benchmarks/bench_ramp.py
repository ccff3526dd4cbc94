"""Benchmarks of the online ramp-loss SVM (Wang & Vucetic, ``refsvm.ramp`` / ``refsvm.ramp._online_svmr``).

Run (about 6 minutes on one core; ``-s`` prints the tables)::

    python -m pytest benchmarks/bench_ramp.py --benchmark-only -q -s

``-k gauss`` / ``-k ncheck`` / ``-k fig4`` / ``-k fig5`` / ``-k active`` run one part.

Side by side in one process, on the same data, RBF kernel with gamma = 0.5 on
the raw 2-D features, C in {1, 10} (and NCheckerboard also at gamma = 4, a
value of the paper's grid delta^2 = M / 2^k suited to the checkerboard):

- data: Gauss (two overlapping 2-D Gaussians, 10,000 training examples, tested
  on 10,000 fresh ones; Sec. V.B) and NCheckerboard (10,000 examples of the
  4x4 checkerboard with 15 % of the labels flipped, tested on 10,000 clean
  Checkerboard examples);
- one online pass of the compiled OnlineSVMR twin, with shrinking (the estimator's
  default) and with the inner loop exactly as printed, vs scikit-learn ``SVC``
  (LIBSVM) trained once, and the kernel PA-I baseline: accuracy, #SV, time.
  Targets of issue 3: accuracy within 0.5 points of LIBSVM, at most 1/4 of its
  SVs, one online pass no slower than one LIBSVM training;
- Fig. 4a: cumulative kernel evaluations of OnlineSVMR against the stream
  length, vs the offline CCCP solver (``refsvm.ramp.cccp``) trained once on the
  first t examples, vs retraining CCCP from scratch after every example (the
  last is the sum over s <= t of the offline cost at s, interpolated in log-log
  between measured points; it is far too long to run);
- Fig. 5: the removal step (Algorithm 2) with m = 0, 100, 1000 vs none, on
  NCheckerboard with C = 1, gamma = 4: accuracy, kernel evaluations, time, final |I|;
- Fig. 6 in small: accuracy against labels queried for OnlineASVMR, QueryAll and
  Greedy (h = 5) on Gauss with C = 1.

Each online pass and each SVC training is timed three times (a benchmark round *is* a
pass); the tables use the best of the three.  The online rows also give the counters that
set the cost of a pass: Eq. (14) steps (each one an O(|I|) update of g by Eq. 15 and a scan
of V), CCCP rounds, and the step-10 loops stopped by the gain rule.
"""

import time

import numpy as np
import pytest
from sklearn.svm import SVC

from refsvm._testing import RAMP_OPTIONS, clustered_streams
from refsvm.ramp.estimators import Greedy, OnlineASVMR, QueryAll
from refsvm.ramp.cccp import cccp_ramp
from refsvm.datasets import make_train_test

from conftest import quick, sized  # benchmarks/conftest.py

_ramp = pytest.importorskip("refsvm.ramp._online_svmr")
_kernel_pa = pytest.importorskip("refsvm.kernel_pa._kernel_pa")

GAMMA = 0.5
CS = [1.0, 10.0]
# (data, C, gamma): the settings (gamma = 0.5), plus NCheckerboard at gamma = 4, a
# value of the paper's grid (delta^2 = M / 2^4 with M = 2) suited to its unit squares, with
# C up to 100 (the paper's Table 1 NCheckerboard row: 98.6 % with 554 SVs vs LIBSVM's
# 96.5 % with 4,679 is the regime of C = 100 here)
SETTINGS = [(name, C, GAMMA) for name in ("gauss", "ncheck") for C in CS] + [
    ("ncheck", C, 4.0) for C in CS + [100.0]]
SETTINGS = sized(SETTINGS, [("gauss", 1.0, GAMMA)])  # --quick: one setting, small data
N_TRAIN = sized(10000, 2000)
IDS = [f"{n}-C{C:g}-g{g:g}" for n, C, g in SETTINGS]
_DATA = {}
_RESULTS = {}


def data(name):
    if name not in _DATA:
        X, y, Xt, yt = make_train_test("gauss" if name == "gauss" else "ncheckerboard", N_TRAIN,
                                       random_state=0)
        _DATA[name] = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in (X, y, Xt, yt))
    return _DATA[name]


def online_pass(X, y, C, m=-1, gamma=GAMMA, shrinking=True):
    st = _ramp.OnlineSVMR(X.shape[1], False, C=C, kernel="rbf", gamma=gamma, tol=1e-3,
                          min_gain=1e-5, max_non_sv=m, shrinking=shrinking)
    st.run(X, y, np.arange(len(y), dtype=np.intp))
    return st


def accuracy(f, yt):
    return float(np.mean(np.where(f > 0, 1.0, -1.0) == yt))


@pytest.mark.parametrize("shrinking", [True, False], ids=["shrinking", "as-printed"])
@pytest.mark.parametrize("name,C,gamma", SETTINGS, ids=IDS)
def test_online_svmr_pass(benchmark, record, name, C, gamma, shrinking):
    X, y, Xt, yt = data(name)
    group = f"{name} C={C:g} gamma={gamma:g}"
    benchmark.group = group
    st = benchmark.pedantic(online_pass, args=(X, y, C, -1, gamma, shrinking), rounds=3,
                            iterations=1)
    s = st.get_state()
    acc = accuracy(st.decision_function(Xt), yt)
    n_sv = int(np.count_nonzero(s["alpha"]))
    key = "online" if shrinking else "printed"
    _RESULTS.setdefault(group, {})[key] = dict(
        time=benchmark.stats.stats.min, acc=acc, sv=n_sv, evals=int(st.n_kernel_evals))
    label = "shrinking" if shrinking else "inner loop as printed"
    record(group, f"OnlineSVMR one pass (cython, {label})", benchmark, acc=f"{acc:.4f}",
           SV=n_sv, kernel_evals=f"{st.n_kernel_evals:.3g}",
           kernel_evals_per_example=round(st.n_kernel_evals / len(y), 1), steps=s["n_steps"],
           cccp_rounds=s["n_cccp_rounds"], gain_stops=s["n_gain_stops"])


@pytest.mark.parametrize("name,C,gamma", SETTINGS, ids=IDS)
def test_svc_once(benchmark, record, name, C, gamma):
    X, y, Xt, yt = data(name)
    group = f"{name} C={C:g} gamma={gamma:g}"
    benchmark.group = group
    model = benchmark.pedantic(lambda: SVC(C=C, gamma=gamma, cache_size=200).fit(X, y),
                               rounds=3, iterations=1)
    acc = float(model.score(Xt, yt))
    n_sv = int(model.n_support_.sum())
    _RESULTS.setdefault(group, {})["svc"] = dict(time=benchmark.stats.stats.min, acc=acc,
                                                 sv=n_sv)
    record(group, "sklearn SVC (LIBSVM) trained once", benchmark, acc=f"{acc:.4f}", SV=n_sv)


@pytest.mark.parametrize("name,C,gamma", SETTINGS, ids=IDS)
def test_kernel_pa_pass(benchmark, record, name, C, gamma):
    X, y, Xt, yt = data(name)
    group = f"{name} C={C:g} gamma={gamma:g}"
    benchmark.group = group

    def run():
        st = _kernel_pa.KernelPA(2, False, C=C, variant=1, kernel="rbf", gamma=gamma)
        st.run(X, y, np.arange(len(y), dtype=np.intp))
        return st

    st = benchmark.pedantic(run, rounds=1, iterations=1)
    acc = accuracy(st.decision_function(Xt), yt)
    n_sv = st.get_state()["support"].shape[0]
    _RESULTS.setdefault(group, {})["pa"] = dict(time=benchmark.stats.stats.min, acc=acc,
                                                sv=n_sv)
    record(group, "kernel PA-I one pass (cython)", benchmark, acc=f"{acc:.4f}", SV=n_sv,
           kernel_evals=f"{st.n_kernel_evals:.3g}",
           kernel_evals_per_example=round(st.n_kernel_evals / len(y), 1))


def test_targets_summary(benchmark):
    """Prints the issue-3 targets against the measured figures (no assertion: a report)."""
    benchmark.group = "summary"
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    print("\n[targets] accuracy within 0.5 points of LIBSVM, #SV <= 1/4 of LIBSVM, "
          "online pass time <= LIBSVM time")
    print(f"   {'setting':<22} {'loop':<10} {'acc online':>10} {'acc SVC':>8} {'acc PA':>7}"
          f" {'SV online':>9} {'SV SVC':>7} {'SV PA':>6} {'SV ratio':>8} {'t online':>9}"
          f" {'t SVC':>7} {'t ratio':>7}")
    for group, r in sorted(_RESULTS.items()):
        for key, loop in (("online", "shrinking"), ("printed", "printed")):
            if not {key, "svc"} <= r.keys():
                continue
            o, s, p = r[key], r["svc"], r.get("pa", dict(acc=np.nan, sv=0))
            print(f"   {group:<22} {loop:<10} {o['acc']:10.4f} {s['acc']:8.4f} {p['acc']:7.4f}"
                  f" {o['sv']:9d} {s['sv']:7d} {p['sv']:6d} {o['sv'] / s['sv']:8.3f}"
                  f" {o['time']:8.2f}s {s['time']:6.2f}s {o['time'] / s['time']:7.2f}"
                  f"   acc {'OK' if o['acc'] >= s['acc'] - 0.005 else 'MISSED'},"
                  f" SV {'OK' if o['sv'] <= s['sv'] / 4 else 'MISSED'},"
                  f" time {'OK' if o['time'] <= s['time'] else 'MISSED'}")


def _loglog_interp(xs, ys, x):
    return np.exp(np.interp(np.log(x), np.log(xs), np.log(ys)))


@pytest.mark.skipif(quick(), reason="full mode only")
def test_fig4a_kernel_evaluations(benchmark):
    """Cumulative kernel evaluations against the stream length on Gauss, C = 1."""
    X, y, _, _ = data("gauss")
    benchmark.group = "fig4a"
    lengths = [100, 300, 1000, 3000, 10000]

    def measure():
        st = _ramp.OnlineSVMR(2, False, C=1.0, kernel="rbf", gamma=GAMMA)
        online = []
        done = 0
        for t in lengths:
            st.run(X, y, np.arange(done, t, dtype=np.intp))
            done = t
            online.append(int(st.n_kernel_evals))
        offline, offline_time = [], []
        for t in lengths:
            t0 = time.perf_counter()
            r = cccp_ramp(X[:t], y[:t], 1.0, gamma=GAMMA, tol=1e-3)
            offline_time.append(time.perf_counter() - t0)
            offline.append(int(r.n_kernel_evals))
        return online, offline, offline_time

    online, offline, offline_time = benchmark.pedantic(measure, rounds=1, iterations=1)
    grid = np.array([10, 30] + lengths, dtype=float)
    # CCCP on s < 100 examples: measured too (cheap) for the interpolation
    small = [int(cccp_ramp(X[:s], y[:s], 1.0, gamma=GAMMA).n_kernel_evals) for s in (10, 30)]
    costs = np.array(small + offline, dtype=float)
    print("\n[Fig. 4a] Gauss, C = 1, gamma = 0.5: cumulative kernel evaluations")
    print(f"   {'t':>6} {'OnlineSVMR':>12} {'offline CCCP':>13} {'CCCP time':>10}"
          f" {'retrain CCCP (est.)':>20} {'online/offline':>15}")
    for t, on, off, tt in zip(lengths, online, offline, offline_time):
        s = np.arange(1, t + 1, dtype=float)
        retrain = float(np.sum(_loglog_interp(grid, costs, np.maximum(s, 10))))
        print(f"   {t:6d} {on:12.3g} {off:13.3g} {tt:9.2f}s {retrain:20.3g} {on / off:15.2f}")
    benchmark.extra_info.update(online=online, offline=offline)


@pytest.mark.skipif(quick(), reason="full mode only")
def test_fig5_removal_step(benchmark):
    """Algorithm 2 with m = 0, 100, 1000 vs no removal, NCheckerboard, C = 1, gamma = 4."""
    X, y, Xt, yt = data("ncheck")
    benchmark.group = "fig5"

    def measure():
        rows = []
        for m in (0, 100, 1000, -1):
            t0 = time.perf_counter()
            st = online_pass(X, y, 1.0, m, 4.0)
            dt = time.perf_counter() - t0
            s = st.get_state()
            rows.append((m, accuracy(st.decision_function(Xt), yt), int(st.n_kernel_evals), dt,
                         int(np.count_nonzero(s["alpha"])), len(s["I"]), int(s["n_removed"])))
        return rows

    rows = benchmark.pedantic(measure, rounds=1, iterations=1)
    print("\n[Fig. 5] NCheckerboard, C = 1, gamma = 4: the removal step")
    print(f"   {'m':>6} {'accuracy':>9} {'kernel evals':>13} {'time':>7} {'#SV':>5} {'|I|':>6}"
          f" {'removed':>8}")
    for m, acc, ev, dt, sv, ni, rem in rows:
        print(f"   {'none' if m < 0 else m:>6} {acc:9.4f} {ev:13.3g} {dt:6.2f}s {sv:5d} {ni:6d}"
              f" {rem:8d}")
    benchmark.extra_info.update(rows=rows)


@pytest.mark.skipif(quick(), reason="full mode only")
def test_fig6_active_learning(benchmark):
    """Accuracy against labels queried on Gauss, C = 1 (OnlineASVMR, QueryAll, Greedy h=5)."""
    X, y, Xt, yt = data("gauss")
    benchmark.group = "fig6"

    def measure():
        out = {}
        for name, cls in (("OnlineASVMR", OnlineASVMR), ("QueryAll", QueryAll),
                          ("Greedy h=5", Greedy)):
            t0 = time.perf_counter()
            curve = cls(C=1.0, gamma=GAMMA).run(X, y, Xt[:3000], yt[:3000], eval_every=500)
            out[name] = (curve, time.perf_counter() - t0)
        return out

    out = benchmark.pedantic(measure, rounds=1, iterations=1)
    print("\n[Fig. 6] Gauss, C = 1: accuracy (3,000 test examples) at labels queried")
    marks = [100, 300, 1000, 2000]
    print(f"   {'strategy':<12} " + " ".join(f"{'@' + str(m):>7}" for m in marks)
          + f" {'labels':>7} {'final acc':>9} {'#SV':>5} {'kernel evals':>13} {'time':>7}")
    for name, (c, dt) in out.items():
        accs = []
        for m in marks:
            k = np.searchsorted(c.n_labels, m)
            accs.append(f"{c.accuracy[k]:7.4f}" if k < len(c.n_labels) else f"{'-':>7}")
        print(f"   {name:<12} " + " ".join(accs) + f" {c.n_labels[-1]:7d}"
              f" {c.accuracy[-1]:9.4f} {c.n_support[-1]:5d} {c.n_kernel_evals[-1]:13.3g}"
              f" {dt:6.2f}s")


# ---------------------------------------------- nearly singular pairs (docs reading 13)
def _pass_with_pair_eta(X, y, C, gamma, pair_eta, shrinking=True):
    """One pass of the compiled twin with ``departures={"pair_eta": pair_eta}`` (0.0: the
    exact step on nearly singular pairs and the block step on detected cycles off, the
    printed loop's path)."""
    departures = {"pair_eta": pair_eta}
    if pair_eta == 0.0:                  # the printed path: the block step off too
        departures["cycle_window"] = 0
    st = _ramp.OnlineSVMR(X.shape[1], False, C=C, kernel="rbf", gamma=gamma, tol=1e-3,
                          min_gain=1e-5, shrinking=shrinking, departures=departures)
    st.run(X, y, np.arange(len(y), dtype=np.intp))
    return st


@pytest.mark.parametrize("pair_eta", [1e-3, 0.0], ids=["exact-pair-step", "printed-path"])
@pytest.mark.parametrize("name,C", [("gauss", 1.0), ("banana", 1.0), ("banana", 10.0)])
def test_nearly_singular_pairs(benchmark, record, name, C, pair_eta):
    """Side by side in one process, the same data: the exact step on nearly singular pairs
    (docs reading 13, ``pair_eta = 1e-3``) vs the printed loop's path (``pair_eta = 0``) on
    the sets where it fires (2-D data have close pairs): accuracy, #SV, steps, time."""
    if name == "gauss":
        X, y, Xt, yt = data("gauss")
        gamma = GAMMA
    else:
        if quick():
            pytest.skip("full mode only")
        from refsvm.datasets import DataUnavailable, load_dataset
        try:
            X, y, Xt, yt = load_dataset("banana")
        except DataUnavailable as exc:
            pytest.skip(str(exc))
        X, Xt = (np.ascontiguousarray(a, dtype=np.float64) for a in (X, Xt))
        y, yt = (np.asarray(a, dtype=np.float64) for a in (y, yt))
        gamma = 1.0 / (X.shape[1] * X.var())                 # gamma="scale"
    group = f"pairs {name} C={C:g}"
    benchmark.group = group
    st = benchmark.pedantic(_pass_with_pair_eta, args=(X, y, C, gamma, pair_eta), rounds=3,
                            iterations=1)
    acc = accuracy(st.decision_function(Xt), yt)
    record(group, f"OnlineSVMR pair_eta={pair_eta:g}", benchmark, acc=f"{acc:.4f}",
           SV=int(np.count_nonzero(st.get_state()["alpha"])), steps=st.n_steps,
           kernel_evals=f"{st.n_kernel_evals:.4g}")


@pytest.mark.parametrize("pair_eta", [1e-3, 0.0], ids=["exact-pair-step", "printed-path"])
def test_close_pair_steps(benchmark, pair_eta):
    """Steps on x, x + r u with opposite labels (gamma = 1, both loops): about
    min(C, log(1/tol) / r^2) on the printed path, 5 with the exact pair step."""
    benchmark.group = "close pair steps"
    Cs = sized([1.0, 1e3, 1e6], [1.0, 1e3])
    x = np.array([0.3, -0.2])
    u = np.array([0.6, 0.8])

    def measure():
        out = {}
        for r in (1e-5, 1e-4, 1e-3, 1e-2):
            rows = np.ascontiguousarray(np.vstack([x, x + r * u]))
            for C in Cs:
                st = _pass_with_pair_eta(rows, np.array([1.0, -1.0]), C, 1.0, pair_eta,
                                         shrinking=False)
                out[r, C] = st.n_steps
        return out

    out = benchmark.pedantic(measure, rounds=1, iterations=1)
    print(f"\n[close pair, pair_eta={pair_eta:g}] steps (printed loop):")
    for r in (1e-5, 1e-4, 1e-3, 1e-2):
        print(f"   r = {r:g}: " + ", ".join(f"C = {C:g}: {out[r, C]}" for C in Cs))


@pytest.mark.skipif(quick(), reason="full mode only")
@pytest.mark.parametrize("pair_eta,cycle_window", [(1e-3, 32), (1e-3, 0), (1.0, 0)],
                         ids=["block-step", "pair_eta=1e-3", "pair_eta=1"])
def test_clustered_stream_census(benchmark, pair_eta, cycle_window):
    """Steps of the compiled twin on 400 random clustered streams (docs reading 13, the
    block step on detected cycles) at C = 1e3, 1e6, 1e9, 1e12; a stream stops at the first
    example boundary past 100,000 steps.  ``cycle_window = 0`` turns the block step off;
    ``pair_eta = 1`` solves every zig-zag exactly."""
    benchmark.group = "clustered streams"
    departures = {"pair_eta": pair_eta, "cycle_window": cycle_window}

    def measure():
        total, worst = {}, 0
        for X, y, option, shrinking in clustered_streams():
            for C in (1e3, 1e6, 1e9, 1e12):
                st = _ramp.OnlineSVMR(2, False, C=C, gamma=1.0, shrinking=shrinking,
                                      departures=departures, **RAMP_OPTIONS[option])
                for t in range(len(y)):
                    st.step(X[t], y[t])
                    if st.n_steps > 100_000:
                        break
                total[C] = total.get(C, 0) + st.n_steps
                worst = max(worst, st.n_steps)
        return total, worst

    total, worst = benchmark.pedantic(measure, rounds=1, iterations=1)
    print(f"\n[clustered streams, pair_eta={pair_eta:g}, cycle_window={cycle_window}] steps in all: "
          + ", ".join(f"C = {C:g}: {v:,}" for C, v in total.items()) + f"; worst stream {worst:,}")
