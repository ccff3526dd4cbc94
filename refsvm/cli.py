"""Command line: ``refsvm compare`` trains every algorithm with both twins;
``refsvm reproduce PAPER`` runs a paper's tables and figures (:mod:`refsvm.reproduce`).

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
        ("OnlineRampSVM(m=None)", "ncheckerboard",
         lambda b: refsvm.OnlineRampSVM(C=1.0, gamma=4.0, max_non_sv=None, backend=b)),
        ("POKER(SelfInit)", "gauss", lambda b: refsvm.POKER(C=1.0, gamma=0.5, backend=b)),
        ("RKPA-I", "ncheckerboard",
         lambda b: refsvm.ReducedKernelPA(variant="PA-I", C=1.0, gamma=4.0, random_state=0,
                                          backend=b)),
        ("RKPAm-I", "ncheckerboard",
         lambda b: refsvm.ProximalReducedKernelPA(C=1.0, gamma=4.0, random_state=0,
                                                  backend=b)),
        ("StreamSVM", "linear", lambda b: refsvm.StreamSVM(backend=b)),
        ("StreamSVM(L=10)", "linear", lambda b: refsvm.StreamSVM(lookahead=10, backend=b)),
        ("StreamSVM(B=5)", "linear", lambda b: refsvm.StreamSVM(n_balls=5, backend=b)),
        ("StreamSVM(rbf)", "gauss",
         lambda b: refsvm.StreamSVM(kernel="rbf", gamma=0.5, backend=b)),
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


def check_only(only, known):
    """``--only`` names must all be known (a typo is an error, not a silent skip)."""
    unknown = [n for n in (only or []) if n not in known]
    if unknown:
        raise ValueError(f"unknown name(s) {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(sorted(set(known)))}")


def compare(n_samples=2000, seed=0, only=None, out=sys.stdout, fmt="table"):
    """Train every algorithm with both backends and print the table.

    ``only`` keeps the named algorithms (ValueError on an unknown name); ``fmt`` is
    "table" (default), "csv" or "json".
    """
    if fmt not in ("table", "csv", "json"):
        raise ValueError(f"format must be table, csv or json; got {fmt!r}")
    registry = _registry()
    check_only(only, [name for name, _, _ in registry])
    data = {}
    rows = []
    header = (f"{'algorithm':<22}{'data':<15}{'backend':<9}{'accuracy':>9}{'updates/SV':>14}"
              f"{'kernel evals':>15}{'time [s]':>11}{'speed-up':>10}")
    if fmt == "table":
        print(f"refsvm compare: {n_samples} training and test examples per data set, "
              f"seed {seed}", file=out)
        print(header, file=out)
        print("-" * len(header), file=out)
    for name, key, factory in registry:
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
            rows.append({"algorithm": name, "data": key, "backend": backend,
                         "accuracy": acc, "size": size, "kernel_evals": evals,
                         "seconds": times[backend], "speed_up": ratio})
            if fmt == "table":
                print(f"{name:<22}{key:<15}{backend:<9}{acc:>9.4f}{size:>14}{evals:>15}"
                      f"{times[backend]:>11.4f}{ratio:>10}", file=out)
    if fmt == "table":
        print("\nspeed-up: reference (python) time / compiled twin (cython) time, same data and "
              "order.", file=out)
    elif fmt == "json":
        import json

        print(json.dumps({"n_samples": n_samples, "seed": seed, "rows": rows}, indent=1),
              file=out)
    else:
        import csv

        w = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["algorithm"])
        w.writeheader()
        w.writerows(rows)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="refsvm", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmp_ = sub.add_parser("compare", help="train every algorithm with both twins, print a table")
    cmp_.add_argument("--n-samples", type=int, default=2000,
                      help="training (and test) examples per data set (default 2000)")
    cmp_.add_argument("--seed", type=int, default=0)
    cmp_.add_argument("--only", nargs="*", help="algorithm names to run (default: all)")
    cmp_.add_argument("--format", choices=("table", "csv", "json"), default="table")
    rep = sub.add_parser(
        "reproduce", help="the papers' tables and figures beside the printed numbers",
        description="Run (or resume) a paper's experiments; print ours beside the printed "
                    "numbers; write results.csv, summary.json and the figures under --out.")
    rep.add_argument("paper", help="short name: " + ", ".join(_paper_names()))
    which = rep.add_mutually_exclusive_group()
    which.add_argument("--table", help="only this table (its number)")
    which.add_argument("--figure", help="only this figure (its number)")
    size = rep.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", const="quick", dest="mode",
                      help="small subsets, few repeats (about a minute)")
    size.add_argument("--full", action="store_const", const="full", dest="mode",
                      help="add the papers' cross-validation grids")
    rep.set_defaults(mode="default")
    rep.add_argument("--n-jobs", type=int, default=1, help="joblib workers (-1: all cores)")
    rep.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    rep.add_argument("--out", default="reproduce-results",
                     help="results folder (default ./reproduce-results); finished cells "
                          "stored there are skipped on a rerun")
    rep.add_argument("--data-home", help="data folder (default: $REFSVM_DATA or ../shared/data)")
    rep.add_argument("--only", nargs="*", help="data set and/or method names to keep")
    rep.add_argument("--format", choices=("table", "csv", "json"), default="table")
    rep.add_argument("--no-progress", action="store_true", help="no progress bar")
    rep.add_argument("--no-run", action="store_true",
                     help="run nothing: print the tables of the cells stored under --out")
    args = parser.parse_args(argv)
    if args.command == "compare":
        if args.n_samples < 10:
            parser.error("--n-samples must be at least 10")
        try:
            compare(args.n_samples, args.seed, args.only, fmt=args.format)
        except ValueError as exc:
            parser.error(str(exc))
    elif args.command == "reproduce":
        from .reproduce import get_paper, reproduce
        from .reproduce._runner import Interrupted

        try:
            paper = get_paper(args.paper)
            items = None
            if args.table is not None:
                items = [f"table{args.table}"]
            elif args.figure is not None:
                items = [f"figure{args.figure}"]
            if items:
                paper.item(items[0])
            reproduce(paper, items, mode=args.mode, n_jobs=args.n_jobs,
                      scheduler=args.scheduler, out=args.out, data_home=args.data_home,
                      fmt=args.format, only=args.only, progress=not args.no_progress,
                      run=not args.no_run)
        except ValueError as exc:
            parser.error(str(exc))
        except Interrupted as exc:
            print(str(exc), file=sys.stderr)
            return 130
    return 0


def _paper_names():
    try:
        from .reproduce import paper_names

        return paper_names()
    except Exception:  # pragma: no cover - a broken paper module must not break --help
        return []


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
