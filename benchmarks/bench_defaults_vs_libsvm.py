"""The defaults of OnlineRampSVM and IncrementalSVM against LIBSVM, every row (issue 40).

    python benchmarks/bench_defaults_vs_libsvm.py                 # writes the result file
    python benchmarks/bench_defaults_vs_libsvm.py --rows gauss,dna --C 10 --no-write
    python benchmarks/bench_defaults_vs_libsvm.py --rows '' --idsvm --idsvm-rows noise --no-write
    python benchmarks/bench_defaults_vs_libsvm.py --rows '' --rows-from a.err,b.err \
        --idsvm-from c.err      # the result file from the rows that runs of parts printed
    python -m pytest benchmarks/bench_defaults_vs_libsvm.py --benchmark-only -q -s [--quick]

The rows (``ROWS``), RBF kernel, C in {1, 10}:

==============  ================================================================
gauss           Haykin's Gauss (:func:`refsvm.datasets.make_gauss`), 10,000 training
                and 10,000 test points (seeds 0 and 1), gamma = 0.5
ncheck          NCheckerboard: 10,000 points of the 4x4 board with 15 % of the labels
                flipped, tested on 10,000 clean points, gamma = 4 (``bench_ramp.py``'s
                value suited to the board's unit squares); ``ncheck-g0.5`` the same at
                gamma = 0.5 and ``ncheck-scale`` at the estimator's ``gamma="scale"``
                (1 / (d Var x), about 0.375): kernels as wide as the board's squares,
                where the printed updates cascade (departure ``rewarm``); offline
                CCCP from alpha = 0 is solved beside them
check5-g0.5     the 4x4 board with 5 % of the labels flipped, gamma = 0.5 (a cascade
                with less noise; the training and test seeds 7 and 8)
gauss-g2        Haykin's Gauss at gamma = 2, where a pass at C = 10 freezes on a small
                model (the seeds 13 and 14)
a9a ... waveform  the 8 sets of ``benchmarks/bench_real_data.py`` (its protocol: 4,000
                training / 2,000 test rows, standardised, gamma = 1/d)
noise           (``--idsvm`` only) 2,000 points uniform on [-2, 2]^2, label +1 with
                probability 0.33 independent of x (pure label noise), gamma = 0.5
==============  ================================================================

For every row, in one process, interleaved (``--repeat`` rounds, the best time of each):
``SVC`` (LIBSVM), ``OnlineRampSVM()`` with its defaults, and the removal budget as it was
the default until issue 40 (``departures={"budget_per_sv": 0}``: a fixed m = 100, now the
speed option).  Where the default model has more support vectors than LIBSVM, and on the
rows of ``OPTIMUM_ROWS``, the ramp model's offline optimum (:func:`refsvm.ramp.cccp.cccp_ramp`
from alpha = 0, the same kernel k + 1 as the estimator's regularised bias, tol 1e-3) is
solved and its count and test accuracy printed beside ours.  With ``--idsvm``:
``IncrementalSVM().fit`` (its default start) against ``partial_fit`` of the same rows and
against LIBSVM, on ``noise`` and every row above (interleaved, best of two rounds; one
round where the two take more than 20 s together).

The rows are written to ``docs/_static/defaults_vs_libsvm.json`` (``--out``; not with
``--no-write``) and the table of ``docs/defaults.rst`` is rendered from them by
:func:`render_rst` (``write_docs_table``); ``tests/test_docs.py`` checks that the page
shows what the file holds.  Times are ratios to LIBSVM measured side by side; the
machine's load is recorded.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parent))  # a source checkout, not installed

QUICK_ENV = "REFSVM_BENCH_QUICK"
RESULT_FILE = HERE.parent / "docs" / "_static" / "defaults_vs_libsvm.json"
REAL = ("a9a", "ijcnn1", "w3a", "svmguide1", "usps", "dna", "banana", "waveform")
#: the generated rows and their gamma
GENERATED = {"gauss": 0.5, "ncheck": 4.0, "ncheck-g0.5": 0.5, "ncheck-scale": "scale",
             "check5-g0.5": 0.5, "gauss-g2": 2.0}
ROWS = tuple(GENERATED) + REAL
#: rows where the ramp model's offline optimum from alpha = 0 is solved and shown beside the
#: defaults whatever their #SV: gamma as wide as the board's squares, where an online pass
#: can end at a CCCP fixed point (a local optimum of the non-convex ramp model) below it
OPTIMUM_ROWS = ("ncheck-g0.5", "ncheck-scale", "check5-g0.5")
#: the rows issue 40 names (Gauss, the noisy Checkerboard at its kernel, the shared sets): the
#: time targets' rows; the other generated rows add kernels and noise it did not name
ISSUE_ROWS = ("gauss", "ncheck") + REAL
#: the speed option: Algorithm 2's fixed budget m = 100 (the default until issue 40)
FIXED_BUDGET = {"departures": {"budget_per_sv": 0.0}}


def load(name, quick=False, data_home=None):
    """(X, y, X_test, y_test, gamma) of one row, or None when its files are absent."""
    from refsvm._validation import resolve_gamma
    from refsvm.datasets import make_train_test

    if name in ("check5-g0.5", "gauss-g2"):
        from refsvm.datasets import make_checkerboard, make_gauss

        n = 2000 if quick else 6000
        if name == "gauss-g2":
            (X, y), (Xt, yt) = make_gauss(n, random_state=13), make_gauss(n, random_state=14)
        else:
            X, y = make_checkerboard(n, noise=0.05, random_state=7)
            Xt, yt = make_checkerboard(n, random_state=8)
        return X, y, Xt, yt, GENERATED[name]
    if name in GENERATED:
        n = 2000 if quick else 10000
        X, y, Xt, yt = make_train_test("gauss" if name == "gauss" else "ncheckerboard", n,
                                       random_state=0)
        # "scale" as the estimator resolves it, a number (the offline optimum needs one)
        return X, y, Xt, yt, resolve_gamma(GENERATED[name], X)
    if name == "noise":
        rng = np.random.RandomState(0)
        n = 1000 if quick else 2000
        X = rng.uniform(-2.0, 2.0, (n, 2))
        y = np.where(rng.rand(n) < 0.33, 1, -1)
        return X, y, X, y, 0.5
    import bench_real_data as brd

    data = brd.load(name, *((600, 400) if quick else (4000, 2000)), data_home=data_home)
    if data is None:
        return None
    X, y, Xt, yt = data
    return X, y, Xt, yt, 1.0 / X.shape[1]


def ramp_optimum(X, y, C, gamma, X_test=None, y_test=None):
    """The ramp model's offline CCCP optimum from alpha = 0, with the kernel k + 1 (the
    estimator's regularised bias, ``fit_intercept=True``): (#SV, converged, test accuracy
    or None without a test set)."""
    from sklearn.metrics.pairwise import rbf_kernel

    from refsvm.ramp import cccp

    class PlusOne(cccp.RowKernel):
        def _finish(self, dots, sq_i):
            return super()._finish(dots, sq_i) + 1.0

    yy = np.where(y > 0, 1.0, -1.0)
    K = PlusOne(X, "rbf", gamma, cache_mb=512.0)
    res = cccp.cccp_ramp(X, yy, C, K=K)
    sv = np.flatnonzero(res.alpha)
    acc = None
    if X_test is not None:
        coef = yy[sv] * res.alpha[sv]
        f = np.concatenate([(rbf_kernel(X_test[i:i + 2000], X[sv], gamma=gamma) + 1.0) @ coef
                            for i in range(0, X_test.shape[0], 2000)])
        acc = float(np.mean(np.where(f > 0, 1.0, -1.0) == np.where(y_test > 0, 1.0, -1.0)))
    return int(sv.shape[0]), bool(res.converged), acc


def side_by_side(makers, X, y, X_test, y_test, repeat=2):
    """Every estimator of ``makers`` (key -> a function that builds it) fitted on (X, y),
    interleaved (one of each per round, ``repeat`` rounds): ``{key}_time`` (the best
    round), ``{key}_acc`` (test accuracy) and ``{key}_sv`` (#SV) for every key."""
    best = {k: np.inf for k in makers}
    models = {}
    for _ in range(max(1, repeat)):
        for key, make in makers.items():
            t0 = time.perf_counter()
            models[key] = make().fit(X, y)
            best[key] = min(best[key], time.perf_counter() - t0)
    out = {}
    for key, m in models.items():
        out[f"{key}_time"] = best[key]
        out[f"{key}_acc"] = float(m.score(X_test, y_test))
        out[f"{key}_sv"] = int(np.sum(m.n_support_))
    return out


def run_row(name, C, repeat=2, quick=False, data_home=None, optimum=True):
    """One row: LIBSVM, the defaults and the fixed budget, side by side."""
    from sklearn.svm import SVC

    from refsvm import OnlineRampSVM

    data = load(name, quick, data_home)
    if data is None:
        return None
    X, y, Xt, yt, gamma = data
    makers = {"svc": lambda: SVC(C=C, gamma=gamma),
              "ramp": lambda: OnlineRampSVM(C=C, gamma=gamma),
              "fixed": lambda: OnlineRampSVM(C=C, gamma=gamma, **FIXED_BUDGET)}
    row = {"name": name, "C": C, "n": int(X.shape[0]), "d": int(X.shape[1]), "gamma": gamma,
           **side_by_side(makers, X, y, Xt, yt, repeat)}
    if optimum and (row["ramp_sv"] > row["svc_sv"] or name in OPTIMUM_ROWS):
        row["optimum_sv"], row["optimum_converged"], row["optimum_acc"] = ramp_optimum(
            X, y, C, gamma, Xt, yt)
    return row


def run_idsvm(name, C, quick=False, data_home=None):
    """IncrementalSVM's ``fit`` against ``partial_fit`` and LIBSVM (one run each)."""
    from sklearn.svm import SVC

    from refsvm import IncrementalSVM

    data = load(name, quick, data_home)
    if data is None:
        return None
    X, y, _, _, gamma = data
    warm = np.concatenate([np.flatnonzero(y == c)[:25] for c in np.unique(y)])
    IncrementalSVM(C=C, gamma=gamma).fit(X[warm], y[warm])    # imports, first calls
    best = {"svc": np.inf, "fit": np.inf, "pf": np.inf}
    for rnd in range(2):
        for key in best:                                       # interleaved
            t0 = time.perf_counter()
            if key == "svc":
                SVC(C=C, gamma=gamma).fit(X, y)
            elif key == "fit":
                fit = IncrementalSVM(C=C, gamma=gamma).fit(X, y)
            else:
                IncrementalSVM(C=C, gamma=gamma).partial_fit(X, y, classes=np.unique(y))
            best[key] = min(best[key], time.perf_counter() - t0)
        if best["fit"] + best["pf"] > 20.0:                    # long rows: one round
            break
    return {"name": name, "C": C, "n": int(X.shape[0]), "svc_time": best["svc"],
            "fit_time": best["fit"], "partial_fit_time": best["pf"],
            "fit_path": ",".join(fit.fit_paths_)}


def summary(rows):
    """The issue's targets: the largest accuracy loss against LIBSVM (points) over every
    row; the time ratios (median, max) over the issue's rows (``ISSUE_ROWS``) and over
    every row; the #SV checks."""
    if not rows:
        return {}
    ratio = lambda rs, k: np.array([r[f"{k}_time"] / r["svc_time"] for r in rs])  # noqa: E731
    issue = [r for r in rows if r["name"] in ISSUE_ROWS]
    tr, ta = ratio(issue or rows, "ramp"), ratio(rows, "ramp")
    loss = np.array([100 * (r["svc_acc"] - r["ramp_acc"]) for r in rows])
    floss = np.array([100 * (r["svc_acc"] - r["fixed_acc"]) for r in rows])
    over = [r for r in rows if r["ramp_sv"] > r["svc_sv"]]
    return {"median_time_ratio": float(np.median(tr)), "max_time_ratio": float(tr.max()),
            "all_median_time_ratio": float(np.median(ta)),
            "all_max_time_ratio": float(ta.max()),
            "max_accuracy_loss": float(loss.max()),
            "fixed_max_accuracy_loss": float(floss.max()),
            "fixed_median_time_ratio": float(np.median(ratio(rows, "fixed"))),
            "rows_more_sv_than_libsvm": [f"{r['name']} C={r['C']:g}" for r in over],
            "max_sv_over_optimum": max((r["ramp_sv"] / r["optimum_sv"] for r in over
                                        if r.get("optimum_sv")), default=None)}


def render_rst(result):
    """The table of ``docs/defaults.rst`` from a result file's content (one string)."""
    rows = result["rows"]
    head = ("data", "C", "LIBSVM %", "#SV", "s", "defaults %", "#SV", "time",
            "optimum #SV", "optimum %", "m=100 %", "#SV", "time")
    cells = []
    for r in rows:
        opt = str(r["optimum_sv"]) if r.get("optimum_sv") else "-"
        opt_acc = f"{100 * r['optimum_acc']:.2f}" if r.get("optimum_acc") is not None else "-"
        cells.append((r["name"], f"{r['C']:g}", f"{100 * r['svc_acc']:.2f}", str(r["svc_sv"]),
                      f"{r['svc_time']:.2f}", f"{100 * r['ramp_acc']:.2f}", str(r["ramp_sv"]),
                      f"{r['ramp_time'] / r['svc_time']:.2f}x", opt, opt_acc,
                      f"{100 * r['fixed_acc']:.2f}", str(r["fixed_sv"]),
                      f"{r['fixed_time'] / r['svc_time']:.2f}x"))
    width = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    rule = "  ".join("=" * w for w in width)
    line = lambda cs: "  ".join(c.ljust(w) for c, w in zip(cs, width)).rstrip()  # noqa: E731
    la = result.get("load_average")
    load = f"; load average {la[0]:.1f} before, {la[1]:.1f} after" if la else ""
    out = [f"Measured {result.get('written', '?')} ({result.get('mode', '?')}, best of "
           f"{result.get('repeat', '?')} interleaved rounds; {result.get('machine', '?')}"
           f"{load}):", "",
           rule, line(head), rule] + [line(c) for c in cells] + [rule]
    s = result.get("summary") or summary(rows)
    out += [] if not s else ["", f"Over the issue's rows ({', '.join(ISSUE_ROWS[:2])} and the "
                f"real sets): median time ratio {s['median_time_ratio']:.2f}, worst "
                f"{s['max_time_ratio']:.2f}; over all {len(rows)} rows: median "
                f"{s['all_median_time_ratio']:.2f}, worst {s['all_max_time_ratio']:.2f}.  "
                f"Largest accuracy loss against LIBSVM over all rows "
                f"{s['max_accuracy_loss']:.2f} points (the fixed budget m = 100: "
                f"{s['fixed_max_accuracy_loss']:.2f} points, median time ratio "
                f"{s['fixed_median_time_ratio']:.2f}).  More support vectors than LIBSVM on "
                f"{', '.join(s['rows_more_sv_than_libsvm']) or 'no row'}"
                + (f" (at most {s['max_sv_over_optimum']:.3f}x the ramp optimum's count)."
                   if s.get("max_sv_over_optimum") else ".")]
    ids = result.get("idsvm") or []
    if ids:
        w2 = ("data", "C", "n", "fit / partial_fit", "fit / LIBSVM", "fit path")
        c2 = [(r["name"], f"{r['C']:g}", str(r["n"]),
               f"{r['fit_time'] / r['partial_fit_time']:.2f}",
               f"{r['fit_time'] / r['svc_time']:.1f}x", r["fit_path"]) for r in ids]
        width = [max(len(h), *(len(c[i]) for c in c2)) for i, h in enumerate(w2)]
        rule = "  ".join("=" * w for w in width)
        line = lambda cs: "  ".join(c.ljust(w) for c, w in zip(cs, width)).rstrip()  # noqa: E731
        fp = [r["fit_time"] / r["partial_fit_time"] for r in ids]
        fl = [r["fit_time"] / r["svc_time"] for r in ids]
        out += ["", f"IncrementalSVM, measured {result.get('idsvm_written', '?')}:", "",
                rule, line(w2), rule] + [line(c) for c in c2] + [rule]
        out += ["", f"fit / partial_fit at most {max(fp):.2f} (above 1.2 on "
                    f"{sum(v > 1.2 for v in fp)} of {len(fp)} rows); fit / LIBSVM at most "
                    f"{max(fl):.1f}x (above 5x on {sum(v > 5 for v in fl)} of {len(fl)} rows)."]
    return "\n".join(out) + "\n"


DOCS_PAGE = HERE.parent / "docs" / "defaults.rst"
BEGIN, END = ".. BEGIN defaults table\n\n", "\n.. END defaults table"


def replace_between(page, begin, end, table):
    """Put ``table`` between the markers ``begin`` and ``end`` of the page ``page``."""
    text = Path(page).read_text(encoding="utf-8")
    a, b = text.index(begin) + len(begin), text.index(end)
    Path(page).write_text(text[:a] + table + text[b:], encoding="utf-8")


def write_docs_table(result, page=DOCS_PAGE):
    """Put ``render_rst(result)`` between the markers of ``docs/defaults.rst``."""
    replace_between(page, BEGIN, END, render_rst(result))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"small data (also {QUICK_ENV}=1)")
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--C", default="1,10")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--idsvm", action="store_true",
                    help="also IncrementalSVM fit / partial_fit / LIBSVM (rows --idsvm-rows)")
    ap.add_argument("--idsvm-rows", default=",".join(("noise",) + ROWS))
    ap.add_argument("--no-optimum", action="store_true", help="skip the CCCP optimum")
    ap.add_argument("--data-home", default=None)
    ap.add_argument("--out", default=str(RESULT_FILE))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--idsvm-from", default=None, metavar="PATH",
                    help="take the IncrementalSVM rows from another run's result file "
                         "(or from the JSON lines it printed on stderr)")
    ap.add_argument("--rows-from", default=None, metavar="PATH[,PATH]",
                    help="take the ramp rows from the JSON lines other runs printed on "
                         "stderr (runs of parts of the rows; the last line of a row wins)")
    ap.add_argument("--update", action="store_true",
                    help="keep the parts of the existing result file this run does not "
                         "measure (the ramp rows with --rows '', the IncrementalSVM rows "
                         "without --idsvm)")
    args = ap.parse_args(argv)
    quick = args.quick or os.environ.get(QUICK_ENV, "") not in ("", "0")
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    Cs = [float(c) for c in args.C.split(",")]
    rows, ids = [], []
    for name in filter(None, args.rows.split(",")):
        for C in Cs:
            r = run_row(name, C, args.repeat, quick, args.data_home, not args.no_optimum)
            if r is not None:
                rows.append(r)
                print(json.dumps(r), file=sys.stderr, flush=True)
    if args.rows_from:
        got = {}
        for path in args.rows_from.split(","):
            for t in Path(path).read_text().splitlines():
                if t.startswith("{") and "ramp_time" in json.loads(t):
                    r = json.loads(t)
                    got[(r["name"], r["C"])] = r
        rows = [got[k] for k in sorted(got, key=lambda k: (ROWS.index(k[0]), k[1]))]
    if args.idsvm:
        for name in args.idsvm_rows.split(","):
            for C in Cs:
                r = run_idsvm(name, C, quick, args.data_home)
                if r is not None:
                    ids.append(r)
                    print(json.dumps(r), file=sys.stderr, flush=True)
    from conftest import machine_note

    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    result = {"written": now,
              "mode": "quick" if quick else "full", "machine": machine_note(),
              "load_average": [load0, os.getloadavg()[0] if hasattr(os, "getloadavg") else
                               float("nan")],
              "repeat": args.repeat, "rows": rows, "summary": summary(rows), "idsvm": ids}
    if args.rows_from:
        paths = [Path(p) for p in args.rows_from.split(",")]
        stamps = [_dt.datetime.fromtimestamp(p.stat().st_mtime, _dt.timezone.utc)
                  for p in paths]
        result["written"] = (max(stamps).strftime("%Y-%m-%d %H:%M UTC")
                             + f", rows of {len(paths)} runs")
        result["load_average"] = None
    if args.update and Path(args.out).is_file():
        old = json.loads(Path(args.out).read_text())
        if not rows:
            for key in ("rows", "repeat", "load_average", "written", "machine"):
                result[key] = old[key]
            result["summary"] = summary(result["rows"])
        if not ids:
            result["idsvm"] = old.get("idsvm", [])
            if "idsvm_written" in old:
                result["idsvm_written"] = old["idsvm_written"]
    if args.idsvm_from:      # the IncrementalSVM rows of another run: its result file,
        # or the rows it printed one per line on stderr (a run stopped before its end)
        text = Path(args.idsvm_from).read_text()
        try:
            other = json.loads(text)
            result["idsvm"], result["idsvm_written"] = other["idsvm"], other["written"]
        except json.JSONDecodeError:
            lines = [json.loads(t) for t in text.splitlines() if t.startswith("{")]
            result["idsvm"] = [r for r in lines if "partial_fit_time" in r]
            mtime = _dt.datetime.fromtimestamp(Path(args.idsvm_from).stat().st_mtime,
                                               _dt.timezone.utc)
            result["idsvm_written"] = (mtime.strftime("%Y-%m-%d %H:%M UTC")
                                       + ", the rows printed by the runs")
    elif ids:
        result["idsvm_written"] = now            # not the kept ramp rows' (--update)
    print(render_rst(result) if result["rows"] else "")
    if not args.no_write and not quick:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        if Path(args.out) == RESULT_FILE:
            write_docs_table(result)
    return result


def test_defaults_vs_libsvm(benchmark):
    """pytest entry point: the rows recorded for ``benchmarks/floors.toml`` (group
    ``defaults <row> C=<C>``: entries ``OnlineRampSVM defaults`` and ``LIBSVM``, values
    ``accuracy_loss``, ``sv_over_libsvm``, ``sv_over_optimum``; group ``defaults summary``;
    groups ``idsvm fit <row> C=<C>``: ``IncrementalSVM fit``, ``IncrementalSVM
    partial_fit``, ``LIBSVM``).  Does not write the result file.  Full mode takes long
    (the IncrementalSVM rows: tens of minutes on a loaded 2-core VM)."""
    import pytest

    import conftest
    from conftest import SHARED_DATA, quick

    if not SHARED_DATA.exists():
        pytest.skip("shared data not available")
    argv = ["--data-home", str(SHARED_DATA), "--no-write", "--repeat", "1", "--idsvm"] + \
        (["--quick"] if quick() else [])
    result = benchmark.pedantic(main, args=(argv,), rounds=1, iterations=1)
    record_floors(result, conftest._RESULTS)


def record_floors(result, results):
    """The figures the floors of ``[defaults]`` read, into ``results`` (conftest's)."""
    for r in result["rows"]:
        g = results.setdefault(f"defaults {r['name']} C={r['C']:g}", {})
        g["LIBSVM"] = {"min": r["svc_time"], "median": r["svc_time"]}
        g["OnlineRampSVM defaults"] = {
            "min": r["ramp_time"], "median": r["ramp_time"],
            "accuracy_loss": 100 * (r["svc_acc"] - r["ramp_acc"]),
            "sv_over_libsvm": r["ramp_sv"] / r["svc_sv"],
            "sv_over_optimum": r["ramp_sv"] / r["optimum_sv"] if r.get("optimum_sv") else None}
    s = result["summary"]
    if s:
        results["defaults summary"] = {"OnlineRampSVM defaults": {
            "min": 1.0, "median": 1.0, "median_time_ratio": s["median_time_ratio"],
            "max_time_ratio": s["max_time_ratio"],
            "all_median_time_ratio": s["all_median_time_ratio"],
            "all_max_time_ratio": s["all_max_time_ratio"],
            "max_accuracy_loss": s["max_accuracy_loss"]}}
    for r in result.get("idsvm") or []:
        g = results.setdefault(f"idsvm fit {r['name']} C={r['C']:g}", {})
        g["IncrementalSVM fit"] = {"min": r["fit_time"], "median": r["fit_time"]}
        g["IncrementalSVM partial_fit"] = {"min": r["partial_fit_time"],
                                           "median": r["partial_fit_time"]}
        g["LIBSVM"] = {"min": r["svc_time"], "median": r["svc_time"]}


if __name__ == "__main__":
    main()
