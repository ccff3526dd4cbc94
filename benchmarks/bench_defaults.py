"""Every estimator with its default settings on every data set of ``shared/data``.

    python benchmarks/bench_defaults.py                  # the full table (3-5 minutes on 2 cores)
    python benchmarks/bench_defaults.py --quick          # 400 training rows per task
    python benchmarks/bench_defaults.py --modes raw --only PassiveAggressive,SVC
    python benchmarks/bench_defaults.py --params PassiveAggressive:fit_intercept=False
    python -m pytest benchmarks/bench_defaults.py --benchmark-only -q -s [--quick]

What a new user gets: ``Estimator().fit(X, y)`` and ``predict``, nothing tuned.  The 13
binary tasks (a set whose files are absent is skipped):

====================  ===========================================================
a9a, usps             train and test files (usps: round digits 3, 6, 8, 9, 0 vs rest)
ijcnn1, w3a           the test file (the larger one), split
svmguide1             the test file, split
dna                   class 3 vs the rest, split
banana, diabetes      split (diabetes: class 2 vs 1)
ionosphere            split (class 1 vs 0)
waveform              class 1 vs the rest, split
abalone               rings >= 10 vs the rest; sex one-hot, split
mnist01, mnist89      0 vs 1 and 8 vs 9 of the 5,000-image subset, split
====================  ===========================================================

A split draws min(4,000, 2/3 of the rows) training rows and min(2,000, the rest) test rows
at random (seed 0); with separate files 4,000 and 2,000 rows are drawn from each (usps:
4,000 training rows, the whole test file).  Two modes: ``std`` (attributes scaled to mean
0 / std 1 with the training statistics, dense) and ``raw`` (the file's values as loaded:
CSR for the LIBSVM files, pixel values 0-255 for MNIST).

Beside ours, scikit-learn's defaults: ``SVC()`` (LIBSVM, RBF, gamma "scale": the reference
for accuracy and time) and ``SGDClassifier`` once with its defaults (``SGD``: up to 1,000
epochs) and once for a single pass (``SGD 1 pass``: ``max_iter=1, tol=None,
shuffle=False``: what an online learner should be compared with).  The summary gives, per
estimator and mode, the mean and the worst difference of test accuracy to ``SVC`` (in
points) and the total fit time.  The linear models cannot reach an RBF ``SVC`` on banana,
waveform or usps: compare them with the ``SGD`` rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

QUICK_ENV = "REFSVM_BENCH_QUICK"

#: task -> (loader key of refsvm.datasets.load_shared or a local one, source, positive classes)
TASKS = {
    "diabetes": ("diabetes", "train", [2]),
    "ionosphere": ("ionosphere", "train", [1]),
    "banana": ("banana", "train", None),
    "svmguide1": ("svmguide1", "test", None),
    "abalone": ("abalone", "local", None),
    "waveform": ("waveform", "train", [1]),
    "mnist01": ("mnist", "local", (0, 1)),
    "mnist89": ("mnist", "local", (8, 9)),
    "dna": ("dna", "train", [3]),
    "w3a": ("w3a", "test", None),
    "usps": ("usps", "files", [3, 6, 8, 9, 0]),
    "ijcnn1": ("ijcnn1", "test", None),
    "a9a": ("a9a", "files", None),
}


def estimators():
    """name -> factory, default settings (only what the estimator needs to be built)."""
    from sklearn.linear_model import SGDClassifier
    from sklearn.svm import SVC

    import refsvm

    return {
        "SVC": SVC,
        "SGD": lambda: SGDClassifier(random_state=0),
        "SGD 1 pass": lambda: SGDClassifier(max_iter=1, tol=None, shuffle=False),
        "IncrementalSVM": refsvm.IncrementalSVM,
        "POKER": refsvm.POKER,
        "OnlineRampSVM": refsvm.OnlineRampSVM,
        "KernelPassiveAggressive": refsvm.KernelPassiveAggressive,
        "ReducedKernelPA": refsvm.ReducedKernelPA,
        "ProximalReducedKernelPA": refsvm.ProximalReducedKernelPA,
        "StreamSVM": refsvm.StreamSVM,
        "PassiveAggressive": refsvm.PassiveAggressive,
        "ProximalPassiveAggressive": refsvm.ProximalPassiveAggressive,
        "Perceptron": refsvm.Perceptron,
        "OnlineLinearSVM": refsvm.OnlineLinearSVM,
    }


def _local(key, positive, home):
    """abalone and the MNIST subset, which ``load_shared`` does not cover."""
    import pandas as pd

    if key == "abalone":
        path = home / "abalone" / "abalone.data.gz"
        if not path.is_file():
            raise FileNotFoundError(path)
        df = pd.read_csv(path, header=None)
        sex = np.stack([(df[0] == s).to_numpy(float) for s in ("M", "F", "I")], axis=1)
        X = np.hstack([sex, df.iloc[:, 1:8].to_numpy(float)])
        return X, np.where(df[8].to_numpy() >= 10, 1, -1)
    path = home / "mnist" / "mnist_5k.csv.gz"
    if not path.is_file():
        raise FileNotFoundError(path)
    arr = pd.read_csv(path, header=None).to_numpy()
    arr = arr[np.isin(arr[:, -1], positive)]
    return arr[:, :-1].astype(np.float64), np.where(arr[:, -1] == positive[1], 1, -1)


def load(task, mode, n_train=4000, n_test=2000, seed=0, data_home=None):
    """(X, y, X_test, y_test) of one task by the protocol above; None when absent.  The
    rows are drawn and standardised as in ``bench_real_data.py`` (``draw``,
    ``standardize``)."""
    from bench_real_data import _binary, draw, standardize

    from refsvm.datasets import get_data_home, load_shared

    key, source, positive = TASKS[task]
    try:
        if source == "local":  # labels already +-1
            X, y = _local(key, positive, get_data_home(data_home))
        else:
            X, y = load_shared(key, data_home=data_home, test=(source == "test"))
            y = _binary(y, positive)
        Xt, yt = (None, None)
        if source == "files":
            Xt, yt = load_shared(key, data_home=data_home, test=True)
            yt = _binary(yt, positive)
    except FileNotFoundError:
        return None
    X, y, Xt, yt = draw(X, y, Xt, yt, n_train, n_test, np.random.RandomState(seed))
    if mode == "std":
        X, Xt = standardize(X, Xt)
    return X, y, Xt, yt


def parse_params(items):
    """["Name:k=v,k2=v2", ...] -> {Name: {k: v}} (the pairs read by
    ``bench_real_data.parse_kv``: values as Python literals, else strings)."""
    from bench_real_data import parse_kv

    out = {}
    for item in items or ():
        name, _, rest = item.partition(":")
        out.setdefault(name.strip(), {}).update(parse_kv(rest))
    return out


def run_task(task, mode, names, data_home=None, n_train=4000, params=None):
    """One row per estimator: accuracy, fit time, #SV where there is one."""
    from sklearn.exceptions import ConvergenceWarning

    data = load(task, mode, n_train=n_train, n_test=min(2000, n_train), data_home=data_home)
    if data is None:
        return []
    X, y, Xt, yt = data
    makers = estimators()
    rows = []
    for name in names:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = makers[name]().set_params(**(params or {}).get(name, {})).fit(X, y)
        elapsed = time.perf_counter() - t0
        acc = float(np.mean(model.predict(Xt) == yt))
        nsv = int(np.sum(model.n_support_)) if hasattr(model, "n_support_") else None
        rows.append({"task": task, "mode": mode, "estimator": name, "accuracy": acc,
                     "time": elapsed, "n_sv": nsv, "n_train": int(X.shape[0]),
                     "majority": float(max(np.mean(yt == 1), np.mean(yt == -1)))})
    return rows


def summarize(rows):
    """(estimator, mode) -> mean and worst accuracy difference to SVC (points), time."""
    svc = {(r["task"], r["mode"]): r["accuracy"] for r in rows if r["estimator"] == "SVC"}
    out = {}
    for r in rows:
        key = (r["task"], r["mode"])
        if key not in svc:
            continue
        s = out.setdefault((r["estimator"], r["mode"]), {"diffs": [], "time": 0.0,
                                                        "below_majority": []})
        s["diffs"].append(100 * (r["accuracy"] - svc[key]))
        s["time"] += r["time"]
        if r["accuracy"] < r["majority"] - 1e-12:
            s["below_majority"].append(r["task"])
    return out


def print_tables(rows, out=sys.stdout, settings="default settings"):
    names = list(dict.fromkeys(r["estimator"] for r in rows))
    short = {n: n.replace("PassiveAggressive", "PA").replace("ReducedKernel", "RK")
             .replace("Proximal", "Prox").replace("Incremental", "Inc").replace("Online", "Onl")
             for n in names}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        print(f"\ntest accuracy [%], {mode} attributes, {settings}", file=out)
        print("%-11s" % "task" + "".join("%10s" % short[n][:9] for n in names), file=out)
        for task in dict.fromkeys(r["task"] for r in rows if r["mode"] == mode):
            got = {r["estimator"]: r for r in rows if r["task"] == task and r["mode"] == mode}
            print("%-11s" % task + "".join(
                "%10.1f" % (100 * got[n]["accuracy"]) if n in got else "%10s" % "-"
                for n in names), file=out)
    summary = summarize(rows)
    print("\naccuracy - SVC's [points] over the tasks, and total fit time", file=out)
    print("%-26s %-4s %7s %7s %8s  %s" % ("estimator", "mode", "mean", "worst", "time [s]",
                                          "below the majority class on"), file=out)
    for (name, mode), s in summary.items():
        d = np.array(s["diffs"])
        print("%-26s %-4s %7.2f %7.2f %8.2f  %s" % (name, mode, d.mean(), d.min(), s["time"],
                                                   ", ".join(s["below_majority"]) or "-"),
              file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="400 training rows per task")
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names")
    ap.add_argument("--modes", default="std,raw", help="std, raw or both")
    ap.add_argument("--only", default="", help="comma-separated estimator names")
    ap.add_argument("--params", action="append", default=[],
                    help="settings other than the defaults, Name:k=v,k=v (repeatable)")
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--json", default=None, help="write the rows to this file")
    args = ap.parse_args(argv)
    params = parse_params(args.params)
    import os

    quick = args.quick or os.environ.get(QUICK_ENV) == "1"
    names = [n for n in estimators() if not args.only or n in args.only.split(",")]
    if args.only and "SVC" not in names:
        names.insert(0, "SVC")
    rows = []
    for mode in args.modes.split(","):
        for task in args.tasks.split(","):
            rows += run_task(task, mode, names, args.data_home, n_train=400 if quick else 4000,
                             params=params)
    print_tables(rows, settings="default settings" + "".join(
        f"; {n}: {p}" for n, p in params.items()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


#: how far (points of mean test accuracy over the standardised tasks) an estimator of ours
#: may fall below scikit-learn's single pass (``SGD 1 pass``) with default settings
SLACK_VS_SGD = 1.5


def test_defaults_table(benchmark):
    """pytest entry point: the table (``--quick`` for the small one), printed with ``-s``.

    Fails when one of our estimators, with default settings, is on average over the
    standardised tasks more than :data:`SLACK_VS_SGD` points of test accuracy below
    scikit-learn's ``SGDClassifier`` run for one pass -- the least a user can expect of an
    online learner.  StreamSVM is left out: its single-pass ball is the paper's model, and
    the paper's own w3a accuracy (88.6 %, Table 1) is below that set's majority class."""
    import pytest

    from conftest import SHARED_DATA, quick

    if not SHARED_DATA.exists():
        pytest.skip("shared data not available")
    argv = ["--data-home", str(SHARED_DATA), "--modes", "std"] + (["--quick"] if quick() else [])
    rows = benchmark.pedantic(main, args=(argv,), rounds=1, iterations=1)
    assert rows, "no task ran"
    summary = summarize(rows)
    sgd = np.mean(summary[("SGD 1 pass", "std")]["diffs"])
    ours = {name: np.mean(s["diffs"]) for (name, mode), s in summary.items()
            if name not in ("SVC", "SGD", "SGD 1 pass", "StreamSVM")}
    bad = {k: round(v, 2) for k, v in ours.items() if v < sgd - SLACK_VS_SGD}
    assert not bad, (f"mean accuracy - SVC's below SGD's one pass ({sgd:.2f}) by more than "
                     f"{SLACK_VS_SGD} points with default settings: {bad}")


if __name__ == "__main__":
    main()
