"""Command line: ``refsvm compare`` trains every algorithm with both twins.

Everything it needs is generated on the fly (no files outside the package):
a linearly structured stream for the linear family and the papers' Gauss and
Checkerboard problems for the kernel methods.  For each algorithm and each
backend it prints test accuracy, updates or support vectors, kernel
evaluations and training time, and the speed ratio of the compiled twin over
the reference.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .datasets import make_train_test

#: key -> description; the data come from refsvm.datasets.make_train_test
DATASETS = {
    "linear": "linear stream, d=20",
    "gauss": "Gauss (2-D)",
    "ncheckerboard": "NCheckerboard (15% noise; clean test)",
}


def _registry():
    """(name, data set key, factory(backend)) for every implemented algorithm."""
    import refsvm

    entries = [
        ("Perceptron", "linear", lambda b: refsvm.Perceptron(max_epochs=1, backend=b)),
        ("PA", "linear", lambda b: refsvm.PassiveAggressive(variant="PA", backend=b)),
        ("PA-I", "linear", lambda b: refsvm.PassiveAggressive(variant="PA-I", C=0.1, backend=b)),
        ("PA-II", "linear", lambda b: refsvm.PassiveAggressive(variant="PA-II", C=0.1, backend=b)),
        ("PAm-1", "linear",
         lambda b: refsvm.ProximalPassiveAggressive(variant="PAm-1", C=0.1, gamma=0.01, backend=b)),
        ("OnlineLinearSVM", "linear",
         lambda b: refsvm.OnlineLinearSVM(lam=1e-3, project=True, average=True, backend=b)),
        ("KernelPA-I", "gauss",
         lambda b: refsvm.KernelPassiveAggressive(variant="PA-I", C=1.0, gamma=0.5, backend=b)),
        ("IDSVM", "gauss", lambda b: refsvm.IncrementalSVM(C=1.0, gamma=0.5, backend=b)),
        ("OnlineRampSVM", "gauss", lambda b: refsvm.OnlineRampSVM(C=1.0, gamma=0.5, backend=b)),
        ("OnlineRampSVM", "ncheckerboard",
         lambda b: refsvm.OnlineRampSVM(C=1.0, gamma=4.0, backend=b)),
        ("OnlineRampSVM(m=100)", "ncheckerboard",
         lambda b: refsvm.OnlineRampSVM(C=1.0, gamma=4.0, max_non_sv=100, backend=b)),
    ]
    return entries


def _describe(clf):
    """#updates or #SV, and kernel evaluations ('-' for linear models)."""
    if hasattr(clf, "n_support_"):
        size = f"{int(np.sum(clf.n_support_))} SV"
    else:
        size = f"{clf.n_updates_} upd"
    try:
        evals = f"{clf.n_kernel_evals_:,}"
    except AttributeError:
        evals = "-"
    return size, evals


def compare(n_samples=2000, seed=0, only=None, out=sys.stdout):
    """Train every algorithm with both backends and print the table."""
    data = {}
    header = (f"{'algorithm':<22}{'data':<15}{'backend':<9}{'accuracy':>9}{'updates/SV':>14}"
              f"{'kernel evals':>15}{'time [s]':>11}{'speed-up':>10}")
    print(f"refsvm compare: {n_samples} training and test examples per data set, seed {seed}",
          file=out)
    print(header, file=out)
    print("-" * len(header), file=out)
    for name, key, factory in _registry():
        if only and name not in only:
            continue
        if key not in data:
            data[key] = make_train_test(key, n_samples, random_state=seed)
        X, y, Xt, yt = data[key]
        times = {}
        for backend in ("cython", "python"):
            clf = factory(backend)
            start = time.perf_counter()
            clf.fit(X, y)
            times[backend] = time.perf_counter() - start
            acc = clf.score(Xt, yt)
            size, evals = _describe(clf)
            ratio = ""
            if backend == "python":
                ratio = f"{times['python'] / max(times['cython'], 1e-9):.0f}x"
            print(f"{name:<22}{key:<15}{backend:<9}{acc:>9.4f}{size:>14}{evals:>15}"
                  f"{times[backend]:>11.4f}{ratio:>10}", file=out)
    print("\nspeed-up: reference (python) time / compiled twin (cython) time, same data and order.",
          file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="refsvm", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmp_ = sub.add_parser("compare", help="train every algorithm with both twins, print a table")
    cmp_.add_argument("--n-samples", type=int, default=2000,
                      help="training (and test) examples per data set (default 2000)")
    cmp_.add_argument("--seed", type=int, default=0)
    cmp_.add_argument("--only", nargs="*", help="algorithm names to run (default: all)")
    args = parser.parse_args(argv)
    if args.command == "compare":
        if args.n_samples < 10:
            parser.error("--n-samples must be at least 10")
        compare(args.n_samples, args.seed, args.only)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
