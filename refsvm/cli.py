"""Command line: ``refsvm compare`` trains every algorithm with both twins;
``refsvm reproduce PAPER`` runs a paper's tables and figures (:mod:`refsvm.reproduce`);
``refsvm trace ALGORITHM`` prints the printed lines a reference executes (:mod:`refsvm.tracing`).

Everything it needs is generated on the fly (no files outside the package):
a linearly structured stream for the linear family and the papers' Gauss and
Checkerboard problems for the kernel methods.  For each algorithm it prints the
compiled twin's test accuracy, updates or support vectors, kernel evaluations and
training time on the whole training set; then the reference's on the first examples
of the same stream (all of them for the fast references, a slice for the slow kernel
ones), the largest difference between the two twins' decision values on the test
set after that slice, and the speed ratio of the compiled twin over the reference
on it.  ``--full`` runs the reference on every training example too.
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


#: training examples the reference learns in the quick form (``refsvm compare`` without
#: ``--full``) where it is slow: the pure-Python kernel learners spend seconds on a few
#: hundred examples (their cost grows with the examples seen), the linear ones do not
KERNEL_SLICE = 100
#: test examples a sliced reference is scored on in the quick form (its pure-Python
#: decision function costs about as much per test example as learning one)
TEST_SLICE = 500


def _registry():
    """(name, data set key, factory(backend), reference slice) for every implemented
    algorithm; the slice is the number of training examples the reference learns in the
    quick form (None: all of them)."""
    import refsvm

    entries = [
        ("Perceptron", "linear", lambda b: refsvm.Perceptron(max_epochs=1, backend=b), None),
        ("PA", "linear", lambda b: refsvm.PassiveAggressive(variant="PA", backend=b), None),
        ("PA-I", "linear", lambda b: refsvm.PassiveAggressive(variant="PA-I", C=0.1, backend=b),
         None),
        ("PA-II", "linear",
         lambda b: refsvm.PassiveAggressive(variant="PA-II", C=0.1, backend=b), None),
        ("PAm-1", "linear",
         lambda b: refsvm.ProximalPassiveAggressive(variant="PAm-1", C=0.1, gamma=0.01, backend=b),
         None),
        ("OnlineLinearSVM", "linear",
         lambda b: refsvm.OnlineLinearSVM(lam=1e-3, project=True, average=True, backend=b), None),
        ("KernelPA-I", "gauss",
         lambda b: refsvm.KernelPassiveAggressive(variant="PA-I", C=1.0, gamma=0.5, backend=b),
         2 * KERNEL_SLICE),
        ("IDSVM", "gauss", lambda b: refsvm.IncrementalSVM(C=1.0, gamma=0.5, backend=b),
         KERNEL_SLICE),
        ("OnlineRampSVM", "gauss", lambda b: refsvm.OnlineRampSVM(C=1.0, gamma=0.5, backend=b),
         KERNEL_SLICE),
        ("OnlineRampSVM", "ncheckerboard",
         lambda b: refsvm.OnlineRampSVM(C=1.0, gamma=4.0, backend=b), KERNEL_SLICE),
        ("OnlineRampSVM(m=None)", "ncheckerboard",
         lambda b: refsvm.OnlineRampSVM(C=1.0, gamma=4.0, max_non_sv=None, backend=b),
         KERNEL_SLICE),
        ("POKER(SelfInit)", "gauss", lambda b: refsvm.POKER(C=1.0, gamma=0.5, backend=b),
         KERNEL_SLICE),
        ("RKPA-I", "ncheckerboard",
         lambda b: refsvm.ReducedKernelPA(variant="PA-I", C=1.0, gamma=4.0, random_state=0,
                                          backend=b), 2 * KERNEL_SLICE),
        ("RKPAm-I", "ncheckerboard",
         lambda b: refsvm.ProximalReducedKernelPA(C=1.0, gamma=4.0, random_state=0,
                                                  backend=b), KERNEL_SLICE),
        ("StreamSVM", "linear", lambda b: refsvm.StreamSVM(backend=b), None),
        ("StreamSVM(L=10)", "linear", lambda b: refsvm.StreamSVM(lookahead=10, backend=b), None),
        ("StreamSVM(B=5)", "linear", lambda b: refsvm.StreamSVM(n_balls=5, backend=b), None),
        ("StreamSVM(rbf)", "gauss",
         lambda b: refsvm.StreamSVM(kernel="rbf", gamma=0.5, backend=b), 5 * KERNEL_SLICE),
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


def _fit(factory, backend, X, y):
    clf = factory(backend)
    start = time.perf_counter()
    clf.fit(X, y)
    return clf, time.perf_counter() - start


def compare(n_samples=2000, seed=0, only=None, out=sys.stdout, fmt="table", full=False):
    """Train every algorithm with both backends and print the table.

    The compiled twin learns all ``n_samples`` training examples; the reference learns
    the first ones of the same stream -- all of them with ``full=True``, else the
    registry's slice for the slow kernel references -- and the compiled twin learns that
    slice too, for the two twins' largest decision difference on the test set
    (``max_abs_diff``) and the speed-up (reference time / twin time, the same examples).
    A sliced reference is tested on the first ``TEST_SLICE`` test examples (its
    decision function costs about as much per example as learning one).
    ``only`` keeps the named algorithms (ValueError on an unknown name); ``fmt`` is
    "table" (default), "csv" or "json".  Returns one row per algorithm and backend.
    """
    if fmt not in ("table", "csv", "json"):
        raise ValueError(f"format must be table, csv or json; got {fmt!r}")
    registry = _registry()
    check_only(only, [entry[0] for entry in registry])
    data = {}
    rows = []
    header = (f"{'algorithm':<22}{'data':<15}{'backend':<9}{'examples':>9}{'accuracy':>9}"
              f"{'updates/SV':>12}{'kernel evals':>14}{'time [s]':>10}{'speed-up':>9}"
              f"{'max|f_cy-f_py|':>16}")
    start = time.perf_counter()
    if fmt == "table":
        form = ("full: both twins on every training example" if full else
                "quick: the slow references on the first training examples (--full: all)")
        print(f"refsvm compare: {n_samples} training and test examples per data set, "
              f"seed {seed}; {form}", file=out)
        print(header, file=out)
        print("-" * len(header), file=out)
    for name, key, factory, ref_slice in registry:
        if only and name not in only:
            continue
        if key not in data:
            data[key] = make_train_test(key, n_samples, random_state=seed)
        X, y, Xt, yt = data[key]
        m = n_samples if full or ref_slice is None else min(ref_slice, n_samples)
        m_test = len(yt) if m == n_samples else min(TEST_SLICE, len(yt))
        twin, t_twin = _fit(factory, "cython", X, y)
        if m == n_samples:
            twin_m, t_twin_m = twin, t_twin
        else:
            twin_m, t_twin_m = _fit(factory, "cython", X[:m], y[:m])
        ref, t_ref = _fit(factory, "python", X[:m], y[:m])
        f_ref = ref.decision_function(Xt[:m_test])         # once: it is the slow part
        diff = float(np.max(np.abs(twin_m.decision_function(Xt[:m_test]) - f_ref)))
        acc_ref = float(np.mean(ref.classes_[(f_ref > 0).astype(int)] == yt[:m_test]))
        for backend, clf, n, n_test, t, acc in (
                ("cython", twin, n_samples, len(yt), t_twin, twin.score(Xt, yt)),
                ("python", ref, m, m_test, t_ref, acc_ref)):
            size, evals = _describe(clf)
            ratio = f"{t_ref / max(t_twin_m, 1e-9):.0f}x" if backend == "python" else ""
            rows.append({"algorithm": name, "data": key, "backend": backend, "examples": n,
                         "test_examples": n_test, "accuracy": acc, "size": size,
                         "kernel_evals": evals, "seconds": t, "speed_up": ratio,
                         "max_abs_diff": diff if backend == "python" else None})
            if fmt == "table":
                agree = f"{diff:.1e}" if backend == "python" else ""
                mark = "*" if n_test < len(yt) else " "
                print(f"{name:<22}{key:<15}{backend:<9}{n:>9}{acc:>8.4f}{mark}{size:>12}"
                      f"{evals:>14}{t:>10.4f}{ratio:>9}{agree:>16}", file=out)
    if fmt == "table":
        print("\nexamples: training examples learned (the reference: the first ones of the "
              "twin's stream).\nspeed-up: reference (python) time / compiled twin (cython) "
              "time on the same examples in the same order.\nmax|f_cy-f_py|: the two twins' "
              "largest difference of decision values on the test set, both having learned "
              "the reference's examples.", file=out)
        if any(r["test_examples"] < len(data[r["data"]][3]) for r in rows):
            print(f"*: accuracy and max|f_cy-f_py| on the first {TEST_SLICE} test examples "
                  "(the reference's decision function is slow too); --full for all.", file=out)
        print(f"total {time.perf_counter() - start:.1f} s", file=out)
    elif fmt == "json":
        import json

        print(json.dumps({"n_samples": n_samples, "seed": seed, "full": full, "rows": rows},
                         indent=1), file=out)
    else:
        import csv

        w = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["algorithm"])
        w.writeheader()
        w.writerows(rows)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="refsvm", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmp_ = sub.add_parser("compare", help="train every algorithm with both twins, print a table",
                          description="Every algorithm with both twins: the compiled one on "
                                      "every training example, the reference on the first "
                                      "ones (--full: all), their agreement and the speed-up.")
    cmp_.add_argument("--n-samples", type=int, default=2000,
                      help="training (and test) examples per data set (default 2000)")
    cmp_.add_argument("--seed", type=int, default=0)
    cmp_.add_argument("--only", nargs="*", help="algorithm names to run (default: all)")
    cmp_.add_argument("--format", choices=("table", "csv", "json"), default="table")
    cmp_.add_argument("--full", action="store_true",
                      help="the references on every training example too (minutes; the "
                           "default runs the slow kernel references on the first "
                           f"{KERNEL_SLICE}-{5 * KERNEL_SLICE} examples)")
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
    rep.add_argument("--sample", type=float, metavar="FRACTION",
                     help="run only this fraction of the protocol's cells (of every data "
                          "set and method, spread over its grid, the same on a rerun); the "
                          "rest's cost is estimated from them")
    rep.add_argument("--record", metavar="DIR",
                     help="also store the tables and claims for the docs under "
                          "DIR/PAPER (summary-MODE.json with commit, date, settings and "
                          "machine; claims-MODE.csv; report-MODE.txt; FIGURE-MODE.png); "
                          "the docs use docs/results")
    tr = sub.add_parser(
        "trace", help="the pseudocode lines a reference executes, step by step",
        description="Run the reference in the paper's form on a small stream and print each "
                    "printed line it executes, what the line changed and the invariant after it.")
    tr.add_argument("algorithm", nargs="?", help="algorithm name (--list shows them)")
    tr.add_argument("--list", action="store_true", help="list the algorithms and exit")
    tr.add_argument("--data", help="your stream: .npz with X and y, or CSV (label last)")
    tr.add_argument("--n-samples", type=int, default=40, help="built-in stream size (40)")
    tr.add_argument("--seed", type=int, default=0, help="built-in stream seed")
    tr.add_argument("--noise", type=float, default=0.1, help="built-in label noise (0.1)")
    tr.add_argument("--steps", type=int, help="print at most this many steps")
    tr.add_argument("--from", dest="start", type=int, help="start at this example")
    tr.add_argument("--only", help="only the lines containing this text (e.g. 'line 7')")
    tr.add_argument("--format", choices=("text", "json"), default="text")
    tr.add_argument("--plot", metavar="DIR", help="write the trace's figures to DIR")
    args = parser.parse_args(argv)
    if args.command == "trace":
        return trace_command(args, parser)
    if args.command == "compare":
        if args.n_samples < 10:
            parser.error("--n-samples must be at least 10")
        try:
            compare(args.n_samples, args.seed, args.only, fmt=args.format, full=args.full)
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
                      run=not args.no_run, record=args.record, sample=args.sample)
        except (ValueError, OSError) as exc:
            # OSError: an --out or --record path that is a file, a scheduler that does
            # not answer, ...
            parser.error(str(exc))
        except Interrupted as exc:
            print(str(exc), file=sys.stderr)
            return 130
    return 0


def trace_command(args, parser, out=None):
    """``refsvm trace``: print (or write as JSON) the trace of one algorithm."""
    from . import tracing

    out = sys.stdout if out is None else out
    names = tracing.algorithms()
    if args.list or not args.algorithm:
        for name, algo in names.items():
            print(f"{name:22s} {algo.title}", file=out)
        return 0
    if args.algorithm not in names:
        parser.error(f"unknown algorithm {args.algorithm!r}; one of: {', '.join(names)}")
    if args.n_samples < 2:
        parser.error("--n-samples must be at least 2")
    try:
        if args.data:
            X, y = tracing.load_data(args.data)
        else:
            X, y = tracing.builtin_stream(args.n_samples, args.seed, args.noise)
        result = tracing.run(args.algorithm, X, y)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    steps = tracing.select(result.steps, args.steps, args.start, args.only)
    if args.format == "json":
        print(tracing.to_json(steps, result.algorithm), file=out)
    else:
        algo = result.algorithm
        print(f"{algo.title} -- {tracing.PAPERS[algo.paper]}", file=out)
        print(f"reference in the paper's form (departures='paper'); {X.shape[0]} examples, "
              f"{len(result.steps)} steps, {len(steps)} shown", file=out)
        print(tracing.format_text(steps), file=out)
    if args.plot:
        from .tracing.plots import plot_run

        try:
            paths = plot_run(result, args.plot)
        except OSError as exc:              # --plot names a file, or a directory not writable
            parser.error(str(exc))
        for path in paths:
            print(f"figure: {path}", file=sys.stderr)
    return 0


def _paper_names():
    try:
        from .reproduce import paper_names

        return paper_names()
    except Exception:  # pragma: no cover - a broken paper module must not break --help
        return []


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
