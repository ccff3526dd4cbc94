"""Wang & Vucetic, *Fast Online Training of Ramp Loss Support Vector Machines* (ICDM 2009).

Table I (accuracy and #SV of LIBSVM, IDSVM, PA, OnlineSVMR, OnlineASVMR on nine data
sets, mean +- std of 10 repeats) and Figures 2-6.  The printed numbers are kept below as
data (``TABLE1``); the extraction lost the decimal points ("840+-03" is 84.0 +- 0.3).

Readings (the paper is silent or cross-validates without printing the result):

- hyper-parameters: the paper picks C and delta^2 by cross-validation per algorithm and
  data set and does not print them.  The default protocol uses one fixed setting per data
  set (``SETTINGS``, from the paper's grid, the same for every method); ``--full`` runs the
  grid (C in {0.1, 1, 5, 10, 50, 100, 500} x delta^2 in {M/2^-1, M/2^0, M/2^1, M/2^2, M/2^4,
  M/2^6}) on a hold-out of 20 % of the training rows (3 hold-outs per setting) and then
  the 10 test repeats at the best setting of each method and data set;
- RBF kernel k = exp(-||x - z||^2 / (2 delta^2)), i.e. gamma = 1 / (2 delta^2);
- PA is the kernel PA-I of Crammer et al. with the same C and kernel (the paper does not
  say which variant);
- LIBSVM is scikit-learn's ``SVC`` (LIBSVM inside), with its bias;
- IDSVM is stopped at the paper's time cap (5,000 s; 10 s in ``--quick``) and scored as it
  stands then;
- each repeat draws its own data (generated sets), split (Banana, DNA) and stream order.
"""

from __future__ import annotations

import time

import numpy as np

from ._claims import Claim, Missing, fmt, median, ratio, untestable, verdict
from ._runner import Cell, Item, Paper, figure, mean_curves, save_figure

NAME = "wang-vucetic"
MOD = __name__
DATASETS = ("adult", "banana", "checkerboard", "ncheckerboard", "cover", "dna", "gauss", "usps",
            "waveform")
METHODS = ("LIBSVM", "IDSVM", "PA", "OnlineSVMR", "OnlineASVMR")
C_GRID = (0.1, 1, 5, 10, 50, 100, 500)
K_GRID = (-1, 0, 1, 2, 4, 6)       # delta^2 = M / 2^k

#: fixed (C, k) of the default protocol, delta^2 = M / 2^k (a reading: the paper's values
#: come from cross-validation and are not printed).  USPS: (10, 1), the best of C in
#: {1, 10, 100} x k in {-1, 0, 1, 2} for LIBSVM on an 80/20 hold-out of the training rows
#: (97.9 %; (10, 2) gave 97.5 % there and 95.4 % on the test set, 96.5 % now)
SETTINGS = {"adult": (1, 1), "banana": (10, 1), "checkerboard": (10, 4),
            "ncheckerboard": (10, 4), "cover": (10, 2), "dna": (1, 2), "gauss": (1, 1),
            "usps": (10, 1), "waveform": (1, 1)}

MODE = {
    "quick": dict(n_train=300, n_test=500, repeats=2, cap=10.0, fig_n=300, fig_repeats=1,
                  naive_n=40, offline_n=300, datasets=DATASETS, fig6_sets=("gauss",)),
    "default": dict(n_train=None, n_test=None, repeats=10, cap=5000.0, fig_n=10000,
                    fig_repeats=1, naive_n=300, offline_n=3000, datasets=DATASETS,
                    fig6_sets=DATASETS),
}
MODE["full"] = dict(MODE["default"], select_repeats=3)


def _p(value, std):
    return (value, std)


#: Table I as printed: (data set, method) -> ((accuracy %, std), (#SV, std)); "*" = IDSVM
#: stopped after 5,000 s
TABLE1 = {
    "LIBSVM": {"adult": ((84.0, 0.3), (4275, 57)), "banana": ((90.0, 1.0), (926, 17)),
               "checkerboard": ((99.2, 0.1), (455, 13)),
               "ncheckerboard": ((96.5, 0.3), (4679, 27)), "cover": ((79.8, 0.4), (5164, 82)),
               "dna": ((95.0, 0.0), (1080, 1)), "gauss": ((81.9, 0.3), (4183, 74)),
               "usps": ((97.3, 0.0), (1126, 0)), "waveform": ((88.5, 0.2), (2629, 45))},
    "IDSVM": {"adult": ((84.3, 0.2), (4093, 50)), "banana": ((90.0, 0.8), (995, 14)),
              "checkerboard": ((99.1, 0.2), (477, 17)),
              "ncheckerboard": ((96.6, 0.5), (3196, 48)), "cover": ((80.8, 0.4), (3529, 22)),
              "dna": ((95.2, 0.0), (817, 0.4)), "gauss": ((81.5, 0.6), (2522, 76)),
              "usps": ((97.3, 0.0), (1180, 0)), "waveform": ((89.7, 0.5), (2545, 43))},
    "PA": {"adult": ((82.3, 0.2), (7764, 19)), "banana": ((88.7, 0.4), (1195, 16)),
           "checkerboard": ((97.1, 0.3), (1990, 29)), "ncheckerboard": ((89.9, 0.7), (5605, 66)),
           "cover": ((81.5, 0.4), (10000, 0)), "dna": ((93.8, 0.2), (1680, 2)),
           # printed "76.4±5": read as 76.4 +- 0.5 (every other std has one decimal)
           "gauss": ((76.4, 0.5), (4767, 47)), "usps": ((96.7, 0.3), (2205, 18)),
           "waveform": ((89.0, 0.4), (8273, 19))},
    "OnlineSVMR": {"adult": ((84.5, 0.2), (2631, 68)), "banana": ((90.8, 1.0), (713, 16)),
                   "checkerboard": ((99.5, 0.0), (492, 2)),
                   "ncheckerboard": ((98.6, 0.2), (554, 19)),
                   "cover": ((81.8, 0.4), (3898, 69)), "dna": ((95.1, 0.1), (796, 4)),
                   "gauss": ((81.8, 0.2), (465, 93)), "usps": ((97.5, 0.1), (1166, 10)),
                   "waveform": ((89.4, 0.3), (1796, 51))},
    "OnlineASVMR": {"adult": ((84.5, 0.2), (2497, 54)), "banana": ((89.9, 0.4), (303, 11)),
                    "checkerboard": ((99.0, 0.2), (438, 11)),
                    "ncheckerboard": ((98.0, 0.2), (987, 31)),
                    "cover": ((80.8, 0.4), (2408, 135)), "dna": ((95.2, 0.0), (1097, 4)),
                    "gauss": ((81.8, 0.2), (304, 27)), "usps": ((97.1, 0.0), (1152, 14)),
                    "waveform": ((89.5, 0.4), (1711, 41))},
}
#: OnlineSVMR's form in every item: the printed Algorithms 1-2 plus the hold-out of steps
#: 16-27 (the paper form alone cycles for ever on some streams)
PAPER_FORM = {"base": "paper", "hold_out": True}

#: IDSVM runs the paper stopped at 5,000 s
TABLE1_STOPPED = {("IDSVM", "ncheckerboard"), ("IDSVM", "cover"), ("IDSVM", "gauss")}

PRINTED = {}
for _m, _rows in TABLE1.items():
    for _d, (_acc, _sv) in _rows.items():
        PRINTED[(_d, _m, "accuracy")] = _acc
        PRINTED[(_d, _m, "n_sv")] = _sv


# ------------------------------------------------------------------------------ data
def _data(cell, n_train=None, n_test=None, data_home=None):
    from ..datasets import load_dataset

    X, y, Xt, yt = load_dataset(cell.dataset, n_train=n_train, n_test=n_test,
                                random_state=cell.data_seed % (2 ** 32), data_home=data_home)
    order = np.random.RandomState(cell.data_seed % (2 ** 32)).permutation(X.shape[0])
    return X[order], y[order], Xt, yt


def _gamma(k, d):
    """gamma of exp(-gamma ||x - z||^2) for delta^2 = M / 2^k."""
    return 2.0 ** k / (2.0 * d)


def _make(method, C, gamma, **kw):
    import refsvm

    if method == "LIBSVM":
        from sklearn.svm import SVC

        return SVC(C=C, gamma=gamma, cache_size=500)
    if method == "IDSVM":
        # the paper's baseline: Cauwenberghs & Poggio, one example at a time
        return refsvm.IncrementalSVM(C=C, gamma=gamma, fit_method="incremental")
    if method == "PA":
        return refsvm.KernelPassiveAggressive(variant="PA-I", C=C, gamma=gamma)
    if method == "OnlineSVMR":
        # Table I is about the printed algorithm: Algorithms 1-2 as printed (zero-bias
        # model, the gain stopping rule, no shrinking, no parked rows, no warm-up, no pair
        # or block steps), no removal budget unless asked (Fig. 5), with one departure:
        # hold_out, without which steps 16-27 cycle for ever on some streams (Gauss,
        # repeat 4, arrival 2,018: "V cycles as printed").  The estimator's defaults
        # differ (docs/wang_vucetic.rst).
        kw = {"stop": "gain", "min_gain": 1e-5, "fit_intercept": False, "max_non_sv": None,
              "departures": PAPER_FORM, **kw}
        return refsvm.OnlineRampSVM(C=C, gamma=gamma, **kw)
    raise ValueError(method)


def _active(method, C, gamma, h=5):
    import refsvm

    if method == "OnlineASVMR":
        return refsvm.OnlineASVMR(C=C, gamma=gamma)
    if method == "QueryAll":
        return refsvm.QueryAll(C=C, gamma=gamma)
    if method == "Greedy":
        return refsvm.Greedy(h=h, C=C, gamma=gamma)
    raise ValueError(method)


def _active_svs(learner, X):
    st = learner.state.get_state()
    queried = np.asarray(learner.queried, dtype=np.intp)
    ids = np.asarray(st["I"], dtype=np.intp)[np.asarray(st["alpha"]) != 0]
    return X[queried[ids]]


# ------------------------------------------------------------------------------ Table I
def run_table1(cell, data_home):
    p = cell.params
    X, y, Xt, yt = _data(cell, p["n_train"], p["n_test"], data_home)
    if p.get("validate"):
        cut = int(0.8 * X.shape[0])
        X, y, Xt, yt = X[:cut], y[:cut], X[cut:], y[cut:]
    C, gamma = float(p["C"]), _gamma(p["k"], X.shape[1])
    start = time.perf_counter()
    out = {"gamma": gamma, "C": C}
    if cell.method == "OnlineASVMR":
        learner = _active("OnlineASVMR", C, gamma)
        curve = learner.run(X, y, Xt, yt, eval_every=X.shape[0])
        out.update(accuracy=curve.accuracy[-1], n_sv=int(curve.n_support[-1]),
                   n_labels=int(curve.n_labels[-1]), kernel_evals=int(curve.n_kernel_evals[-1]),
                   n_train=int(X.shape[0]))
    elif cell.method.startswith("IDSVM"):
        out.update(_run_idsvm(X, y, Xt, yt, C, gamma, p.get("stop_sv")))
    else:
        est = _make(cell.method, C, gamma).fit(X, y)
        out.update(accuracy=float(est.score(Xt, yt)), n_sv=int(np.sum(est.n_support_)))
        if hasattr(est, "n_kernel_evals_"):
            out["kernel_evals"] = int(est.n_kernel_evals_)
    out["seconds"] = time.perf_counter() - start
    return out


#: IDSVM's block between two looks at its #SV (the paper's stop, below)
IDSVM_BLOCK = 50


def _run_idsvm(X, y, Xt, yt, C, gamma, stop_sv=None):
    """IDSVM on the stream, stopped as the paper stopped it when ``stop_sv`` is given.

    The paper stopped IDSVM after 5,000 s of its machine on three data sets and printed
    the #SV it had then.  Seconds do not carry across machines; the #SV does: IDSVM's
    #SV grows with the examples learned, so the model the paper scored is the one whose
    #SV first reaches the printed count.  We learn in blocks of ``IDSVM_BLOCK`` examples
    and stop after the block where #SV >= ``stop_sv`` (None: to the end of the stream).

    When IDSVM learned the whole stream, OnlineSVMR (the paper form) learns the same
    stream in the same process: ``time_ratio`` = IDSVM's seconds / OnlineSVMR's, the
    machine-independent form of the paper's time comparison (and the two kernel-evaluation
    counts).
    """
    est = _make("IDSVM", C, gamma)
    classes = np.array([-1, 1])
    n, t, spent = X.shape[0], 0, 0.0
    while t < n:
        start = time.perf_counter()
        est.partial_fit(X[t:t + IDSVM_BLOCK], y[t:t + IDSVM_BLOCK], classes=classes)
        spent += time.perf_counter() - start
        t = min(n, t + IDSVM_BLOCK)
        if stop_sv is not None and np.sum(est.n_support_) >= stop_sv:
            break
    out = {"accuracy": float(est.score(Xt, yt)), "n_sv": int(np.sum(est.n_support_)),
           "n_learned": int(t), "n_train": int(n), "stopped_early": bool(t < n),
           "seconds_idsvm": spent, "kernel_evals": int(est.n_kernel_evals_)}
    if t == n:
        start = time.perf_counter()
        base = _make("OnlineSVMR", C, gamma).fit(X, y)
        base_seconds = time.perf_counter() - start
        out.update(seconds_onlinesvmr=base_seconds, time_ratio=spent / max(base_seconds, 1e-9),
                   kernel_evals_onlinesvmr=int(base.n_kernel_evals_))
    return out


def _setting(C, k, n):
    s = f"C={C:g},d2=M/2^{k}"
    return s if n is None else s + f",n={n}"


def _select(score):
    """The grid setting of the highest mean hold-out accuracy; a tie goes to the smaller
    C, then to the smaller k (the wider kernel, delta^2 = M / 2^k): the simpler model."""
    return max(score, key=lambda ck: (np.mean(score[ck]), -ck[0], -ck[1]))


def _methods_of(ds):
    """Table I's methods on a data set; where the paper stopped IDSVM (its #SV printed
    with a star), "IDSVM" stops where the paper did (:func:`_run_idsvm`) and
    "IDSVM (to the end)" learns the whole stream."""
    out = list(METHODS)
    if ("IDSVM", ds) in TABLE1_STOPPED:
        out.insert(2, "IDSVM (to the end)")
    return out


def plan_table1(mode, records):
    m = MODE[mode]
    cells = []

    def cell(ds, method, C, k, rep, select=False):
        stop_sv = None
        if method == "IDSVM" and ("IDSVM", ds) in TABLE1_STOPPED and not select:
            stop_sv = TABLE1["IDSVM"][ds][1][0]
        params = dict(C=C, k=k, n_train=m["n_train"], n_test=m["n_test"], validate=select,
                      stop_sv=stop_sv)
        setting = ("select:" if select else "") + _setting(C, k, m["n_train"])
        return Cell(NAME, "table1", ds, method, setting, rep, f"{MOD}:run_table1", params)

    if mode != "full":
        for ds in m["datasets"]:
            C, k = SETTINGS[ds]
            for method in _methods_of(ds):
                cells += [cell(ds, method, C, k, r) for r in range(m["repeats"])]
        return cells
    # full: the grid on hold-outs for each method, then the repeats at its best setting
    by_key = {r["key"]: r for r in records}
    for ds in m["datasets"]:
        for method in _methods_of(ds):
            # (both IDSVM rows take the setting IDSVM's own grid selects)
            chooser = "IDSVM" if method.startswith("IDSVM") else method
            sel = [cell(ds, chooser, C, k, r, select=True) for C in C_GRID for k in K_GRID
                   for r in range(m["select_repeats"])]
            if chooser == method:
                cells += sel
            if all(c.key in by_key for c in sel):
                score = {}
                for c in sel:
                    acc = by_key[c.key]["result"].get("accuracy")
                    score.setdefault((c.params["C"], c.params["k"]), []).append(acc or 0.0)
                C, k = _select(score)
                cells += [cell(ds, method, C, k, r) for r in range(m["repeats"])]
    return cells


TABLE1_NOTES = """\
Accuracy in %, #SV; ours: mean ± std over the repeats; printed: the paper's Table I;
"ok": |diff| within the printed std.  OnlineSVMR runs the printed Algorithms 1-2 with one
departure, hold_out (the printed steps 16-27 cycle for ever on some streams: Gauss, repeat
4); LIBSVM is scikit-learn's SVC; IDSVM, PA and OnlineASVMR run refsvm's defaults.
IDSVM: the paper stopped it after 5,000 s on NCheckerboard, Cover and Gauss; seconds do
not carry across machines, so our "IDSVM" row stops where its #SV first reaches the
printed count (blocks of 50 examples) and "IDSVM (to the end)" learns the whole stream.
Default protocol: one fixed (C, δ²) per data set for every method (SETTINGS in
refsvm/reproduce/wang_vucetic.py; the paper cross-validated per method and printed no
values); --full selects (C, δ²) per method and data set on the paper's grid (hold-out
accuracy; a tie goes to the smaller C, then the wider kernel).  --quick: 300 training
rows, 500 test rows, 2 repeats -- a smoke run, not comparable with the printed numbers."""


# ------------------------------------------------------------------------------ Figure 2
def _grid(X, n=60):
    lo = np.percentile(X, 0.5, axis=0)
    hi = np.percentile(X, 99.5, axis=0)
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
    return gx, gy, np.column_stack([gx.ravel(), gy.ravel()])


def run_figure2(cell, data_home):
    p = cell.params
    X, y, Xt, yt = _data(cell, p["n"], 1000, data_home)
    C, gamma = float(p["C"]), _gamma(p["k"], X.shape[1])
    gx, gy, G = _grid(X)
    if cell.method == "OnlineASVMR":
        learner = _active("OnlineASVMR", C, gamma)
        learner.run(X, y, eval_every=X.shape[0])
        f, sv, acc = learner.decision_function(G), _active_svs(learner, X), learner.score(Xt, yt)
    elif cell.method == "data":
        f, sv, acc = np.zeros(G.shape[0]), np.zeros((0, 2)), None
    else:
        est = _make(cell.method, C, gamma).fit(X, y)
        f, sv, acc = est.decision_function(G), est.support_vectors_, est.score(Xt, yt)
    keep = np.random.RandomState(0).permutation(X.shape[0])[:600]
    return {"gx": gx[0], "gy": gy[:, 0], "f": f.reshape(gx.shape), "sv": sv, "X": X[keep],
            "y": y[keep], "accuracy": acc, "n_sv": int(sv.shape[0])}


def plan_figure2(mode, records):
    # 1,000 examples: the paper's panels show a few hundred points and a readable SV set
    n = min(MODE[mode]["fig_n"], 1000)
    C, k = SETTINGS["gauss"]
    return [Cell(NAME, "figure2", "gauss", method, _setting(C, k, n), 0,
                 f"{MOD}:run_figure2", dict(C=C, k=k, n=n))
            for method in ("data", "IDSVM", "OnlineSVMR", "OnlineASVMR")]


def plot_figure2(records, folder, mode):
    order = ["data", "IDSVM", "OnlineSVMR", "OnlineASVMR"]
    recs = sorted(records, key=lambda r: order.index(r["method"]))
    if not recs:
        return []
    fig, axes = figure(1, len(recs), width=3.2, height=3.2)
    for ax, rec in zip(axes[0], recs):
        r = rec["result"]
        X, y = np.asarray(r["X"]), np.asarray(r["y"])
        ax.scatter(X[y > 0, 0], X[y > 0, 1], s=3, c="tab:blue", label="+1")
        ax.scatter(X[y < 0, 0], X[y < 0, 1], s=3, c="tab:green", label="-1")
        if rec["method"] != "data":
            f = np.asarray(r["f"])
            ax.contour(r["gx"], r["gy"], f, levels=[0], colors="k", linewidths=1.2)
            ax.contour(r["gx"], r["gy"], f, levels=[-1], colors="c", linewidths=1)
            ax.contour(r["gx"], r["gy"], f, levels=[1], colors="y", linewidths=1)
            sv = np.asarray(r["sv"]).reshape(-1, 2)
            ax.scatter(sv[:, 0], sv[:, 1], s=14, facecolors="none", edgecolors="r", lw=0.6)
            ax.set_title(f"{rec['method']}: {r['n_sv']} SVs, acc {r['accuracy']:.3f}", fontsize=8)
        else:
            ax.set_title("Gauss (standardised)", fontsize=8)
        ax.set_xlim(min(r["gx"]), max(r["gx"]))
        ax.set_ylim(min(r["gy"]), max(r["gy"]))
    return save_figure(fig, folder, "figure2")


# ------------------------------------------------------------------------------ Figures 3-4
def run_curve(cell, data_home):
    """Accuracy, #SV, kernel evaluations and time against stream length (log-spaced)."""
    from ..evaluate import checkpoint_curve, checkpoints

    p = cell.params
    X, y, Xt, yt = _data(cell, p["n"], p.get("n_test", 2000), data_home)
    C, gamma = float(p["C"]), _gamma(p["k"], X.shape[1])
    n = X.shape[0]
    points = checkpoints(n, first=10, per_decade=4)
    if cell.method == "OnlineASVMR":
        # the active learner's run starts afresh: each checkpoint t is a run over the first
        # t examples (the same path as the full run), timed without test scoring; the
        # log-spaced points cost about twice one full run
        out = {k: [] for k in ("n_seen", "accuracy", "size", "kernel_evals", "seconds",
                               "n_labels")}
        for t in points:
            learner = _active("OnlineASVMR", C, gamma)
            start = time.perf_counter()
            c = learner.run(X[:t], y[:t], eval_every=int(t))
            out["seconds"].append(time.perf_counter() - start)
            out["n_seen"].append(int(t))
            out["accuracy"].append(learner.score(Xt, yt))
            out["size"].append(int(c.n_support[-1]))
            out["kernel_evals"].append(int(c.n_kernel_evals[-1]))
            out["n_labels"].append(int(c.n_labels[-1]))
        return dict(out, stopped_early=False)
    if cell.method.startswith("OnlineSVMR"):
        est = _make("OnlineSVMR", C, gamma, max_non_sv=p.get("m"))
    else:
        est = _make(cell.method, C, gamma)
    return checkpoint_curve(est, X, y, Xt, yt, points, time_limit=p.get("cap")).as_dict()


def run_offline(cell, data_home):
    """Figure 4(a): kernel evaluations of offline SVMR (CCCP) trained on demand on the first
    t examples, and of the naive online algorithm that retrains it from scratch after every
    example (run, not estimated, up to ``naive_n`` examples)."""
    from ..evaluate import checkpoints
    from ..ramp.cccp import cccp_ramp

    p = cell.params
    X, y, _, _ = _data(cell, p["n"], 10, data_home)
    C, gamma = float(p["C"]), _gamma(p["k"], X.shape[1])
    yf = y.astype(np.float64)
    if cell.method == "OfflineSVMR":
        points = checkpoints(min(p["offline_n"], X.shape[0]), first=10, per_decade=4)
        evals, secs = [], []
        for t in points:
            start = time.perf_counter()
            evals.append(cccp_ramp(X[:t], yf[:t], C, gamma=gamma).n_kernel_evals)
            secs.append(time.perf_counter() - start)
        return {"n_seen": points, "kernel_evals": evals, "seconds": secs}
    # NaiveRetrain: cumulative cost of retraining after every example
    n = min(p["naive_n"], X.shape[0])
    total, t_total, evals, secs, pts = 0, 0.0, [], [], []
    marks = set(checkpoints(n, first=10, per_decade=4).tolist())
    for t in range(1, n + 1):
        start = time.perf_counter()
        if len(np.unique(y[:t])) >= 1:
            total += cccp_ramp(X[:t], yf[:t], C, gamma=gamma).n_kernel_evals
        t_total += time.perf_counter() - start
        if t in marks:
            pts.append(t)
            evals.append(total)
            secs.append(t_total)
    return {"n_seen": pts, "kernel_evals": evals, "seconds": secs}


def _curve_cells(item, mode, dataset, methods, n_test=2000, extra=None):
    m = MODE[mode]
    C, k = SETTINGS[dataset]
    cells = []
    for method in methods:
        params = dict(C=C, k=k, n=m["fig_n"], n_test=n_test, cap=m["cap"])
        params.update((extra or {}).get(method, {}))
        for r in range(m["fig_repeats"]):
            cells.append(Cell(NAME, item, dataset, method, _setting(C, k, m["fig_n"]), r,
                              f"{MOD}:run_curve", params))
    return cells


def plan_figure3(mode, records):
    return _curve_cells("figure3", mode, "gauss", ("IDSVM", "OnlineSVMR", "OnlineASVMR"))


def plan_figure4(mode, records):
    m = MODE[mode]
    C, k = SETTINGS["gauss"]
    cells = plan_figure3(mode, records)
    for method in ("OfflineSVMR", "NaiveRetrain"):
        cells.append(Cell(NAME, "figure4", "gauss", method,
                          _setting(C, k, m["fig_n"]) + f",naive={m['naive_n']},"
                          f"offline={m['offline_n']}", 0, f"{MOD}:run_offline",
                          dict(C=C, k=k, n=m["fig_n"], naive_n=m["naive_n"],
                               offline_n=m["offline_n"])))
    return cells


STYLE = {"IDSVM": "tab:red", "OnlineSVMR": "tab:blue", "OnlineASVMR": "tab:green",
         "OfflineSVMR": "tab:purple", "NaiveRetrain": "tab:gray", "PA": "tab:orange",
         "QueryAll": "tab:blue", "Greedy": "tab:orange", "IDSVM+QueryAll": "tab:red",
         "IDSVM+Greedy": "tab:brown"}


def plot_figure3(records, folder, mode):
    fig, axes = figure(1, 2)
    acc = mean_curves(records, "n_seen", "accuracy")
    size = mean_curves(records, "n_seen", "size")
    for (ds, method), (x, yv) in sorted(acc.items()):
        axes[0, 0].plot(x, yv, label=method, color=STYLE.get(method))
    for (ds, method), (x, yv) in sorted(size.items()):
        axes[0, 1].plot(x, yv, label=method, color=STYLE.get(method))
    axes[0, 0].set(xscale="log", xlabel="data stream length", ylabel="accuracy",
                   title="(a) accuracy, Gauss")
    axes[0, 1].set(xlabel="data stream length", ylabel="#SV", title="(b) #SV, Gauss")
    axes[0, 0].legend(fontsize=7)
    return save_figure(fig, folder, "figure3")


def plot_figure4(records, folder, mode):
    fig, axes = figure(1, 2)
    ev = mean_curves(records, "n_seen", "kernel_evals")
    for (ds, method), (x, yv) in sorted(ev.items()):
        if method in ("OnlineSVMR", "OfflineSVMR", "NaiveRetrain"):
            axes[0, 0].plot(x, np.maximum(yv, 1), label=method, color=STYLE.get(method),
                            marker="." if method != "OnlineSVMR" else None)
    secs = mean_curves(records, "n_seen", "seconds")
    for (ds, method), (x, yv) in sorted(secs.items()):
        if method in ("OnlineSVMR", "OnlineASVMR", "IDSVM"):
            axes[0, 1].plot(x, np.maximum(yv, 1e-5), label=method, color=STYLE.get(method))
    axes[0, 0].set(xscale="log", yscale="log", xlabel="data stream length",
                   ylabel="# kernel computation", title="(a) kernel computations, Gauss")
    axes[0, 1].set(xscale="log", yscale="log", xlabel="data stream length",
                   ylabel="training time [s]", title="(b) training time, Gauss")
    for ax in axes[0]:
        ax.legend(fontsize=7)
    return save_figure(fig, folder, "figure4")


# ------------------------------------------------------------------------------ Figure 5
M_VALUES = {"m=0": 0, "m=100": 100, "m=1000": 1000, "none": None}


def plan_figure5(mode, records):
    extra = {f"OnlineSVMR {k}": {"m": v} for k, v in M_VALUES.items()}
    return _curve_cells("figure5", mode, "ncheckerboard", tuple(extra), extra=extra)


def plot_figure5(records, folder, mode):
    fig, axes = figure(1, 2)
    for col, key, ylabel in ((0, "kernel_evals", "# kernel computation"), (1, "accuracy", "ACC")):
        for (ds, method), (x, yv) in sorted(mean_curves(records, "n_seen", key).items()):
            label = ("OnlineSVMR" if method.endswith("none")
                     else method.replace("OnlineSVMR ", "OnlineSVMR+Removal, "))
            axes[0, col].plot(x, np.maximum(yv, 1) if col == 0 else yv, label=label)
        axes[0, col].set(xscale="log", xlabel="data stream length", ylabel=ylabel,
                         title=f"({'ab'[col]}) NCheckerboard")
    axes[0, 0].set_yscale("log")
    axes[0, 0].legend(fontsize=7)
    return save_figure(fig, folder, "figure5")


# ------------------------------------------------------------------------------ Figure 6
def _idsvm_active(X, y, Xt, yt, C, gamma, h, every, cap):
    """IDSVM + QueryAll (h = 1) or IDSVM + Greedy (h = 5): of each block of h examples,
    learn the one with the smallest |f(x)|; accuracy against labels."""
    est = _make("IDSVM", C, gamma)
    classes = np.array([-1, 1])
    labels, acc, n_seen = [], [], []
    spent, n = 0.0, X.shape[0]
    fitted = False
    for start in range(0, n, h):
        t0 = time.perf_counter()
        block = slice(start, min(start + h, n))
        if fitted and h > 1:
            j = start + int(np.argmin(np.abs(est.decision_function(X[block]))))
        else:
            j = start
        est.partial_fit(X[j:j + 1], y[j:j + 1], classes=classes)
        fitted = True
        spent += time.perf_counter() - t0
        q = start // h + 1
        if q % every == 0 or block.stop == n or spent > cap:
            labels.append(q)
            n_seen.append(block.stop)
            acc.append(float(est.score(Xt, yt)))
        if spent > cap:
            break
    return {"n_labels": labels, "accuracy": acc, "n_seen": n_seen, "stopped_early": spent > cap}


def run_figure6(cell, data_home):
    p = cell.params
    X, y, Xt, yt = _data(cell, p["n"], p["n_test"], data_home)
    C, gamma = float(p["C"]), _gamma(p["k"], X.shape[1])
    every = max(1, X.shape[0] // 50)
    if cell.method.startswith("IDSVM"):
        h = 5 if cell.method.endswith("Greedy") else 1
        return _idsvm_active(X, y, Xt, yt, C, gamma, h, max(1, every // h), p["cap"])
    learner = _active(cell.method, C, gamma)
    c = learner.run(X, y, Xt, yt, eval_every=every)
    return {"n_labels": c.n_labels, "accuracy": c.accuracy, "n_seen": c.n_seen,
            "size": c.n_support}


def plan_figure6(mode, records):
    m = MODE[mode]
    cells = []
    for ds in m["fig6_sets"]:
        C, k = SETTINGS[ds]
        n = m["n_train"] if mode == "quick" else None
        for method in ("QueryAll", "Greedy", "OnlineASVMR", "IDSVM+QueryAll", "IDSVM+Greedy"):
            cells.append(Cell(NAME, "figure6", ds, method, _setting(C, k, n), 0,
                              f"{MOD}:run_figure6",
                              dict(C=C, k=k, n=n, n_test=m["n_test"] or 2000, cap=m["cap"])))
    return cells


def plot_figure6(records, folder, mode):
    sets = sorted({r["dataset"] for r in records})
    if not sets:
        return []
    ncols = min(3, len(sets))
    nrows = (len(sets) + ncols - 1) // ncols
    fig, axes = figure(nrows, ncols, width=3.4, height=2.8)
    curves = mean_curves(records, "n_labels", "accuracy")
    for i, ds in enumerate(sets):
        ax = axes[i // ncols, i % ncols]
        for (d, method), (x, yv) in sorted(curves.items()):
            if d == ds:
                ax.plot(x, yv, label=method, color=STYLE.get(method),
                        ls="--" if method.startswith("IDSVM") else "-")
        ax.set(xlabel="#queried labels", ylabel="accuracy", title=ds)
    for j in range(len(sets), nrows * ncols):
        axes[j // ncols, j % ncols].axis("off")
    axes[0, 0].legend(fontsize=6)
    return save_figure(fig, folder, "figure6")


def plot_table1(records, folder, mode):
    return []

# ------------------------------------------------------------------------------ claims
def _printed_acc(method, ds):
    return TABLE1[method][ds][0][0]


def _printed_sv(method, ds):
    return TABLE1[method][ds][1][0]


def _claim_accuracy(ev):
    sets = ev.datasets("table1", "OnlineSVMR", "LIBSVM")
    if not sets:
        raise Missing("no data set with both OnlineSVMR and LIBSVM results")
    gaps = {ds: ev.mean("table1", ds, "OnlineSVMR", "accuracy")
            - ev.mean("table1", ds, "LIBSVM", "accuracy") for ds in sets}
    worst = min(gaps, key=gaps.get)
    ours = (f"OnlineSVMR - LIBSVM accuracy on {len(sets)} sets: "
            + ", ".join(f"{d} {g:+.1f}" for d, g in gaps.items()))
    return verdict(gaps[worst] >= -1.0, ours,
                   "rule: OnlineSVMR at most 1 point below LIBSVM on every data set run "
                   f"(worst: {worst} {gaps[worst]:+.1f})")


def _claim_sparse_gauss(ev):
    lib = ev.mean("table1", "gauss", "LIBSVM", "n_sv")
    svmr = ev.mean("table1", "gauss", "OnlineSVMR", "n_sv")
    printed = _printed_sv("LIBSVM", "gauss") / _printed_sv("OnlineSVMR", "gauss")
    r = ratio(lib, svmr)
    how = ("one (C, δ²) per data set for every method" if ev.mode != "full"
           else "(C, δ²) selected per method on the paper's grid")
    return verdict(r >= printed / 2, f"#SV LIBSVM / OnlineSVMR on Gauss = {fmt(lib, 0)} / "
                   f"{fmt(svmr, 0)} = {r:.1f}x ({how})",
                   f"rule: at least half the printed ratio ({printed / 2:.1f}x)")


def _claim_sparse_all(ev):
    sets = ev.datasets("table1", "OnlineSVMR", "LIBSVM", "IDSVM")
    if not sets:
        raise Missing("no data set with OnlineSVMR, LIBSVM and IDSVM results")
    idsvm = {ds: ("IDSVM (to the end)" if ("IDSVM", ds) in TABLE1_STOPPED else "IDSVM")
             for ds in sets}
    ours = [ds for ds in sets if ev.mean("table1", ds, "OnlineSVMR", "n_sv")
            < min(ev.mean("table1", ds, "LIBSVM", "n_sv"),
                  ev.mean("table1", ds, idsvm[ds], "n_sv"))]
    paper = [ds for ds in sets if _printed_sv("OnlineSVMR", ds)
             < min(_printed_sv("LIBSVM", ds), _printed_sv("IDSVM", ds))]
    return verdict(2 * len(ours) > len(sets),
                   f"OnlineSVMR has fewer SVs than both LIBSVM and IDSVM (to the end) on "
                   f"{len(ours)} of {len(sets)} sets ({', '.join(ours) or 'none'}); the paper "
                   f"on {len(paper)} of these {len(sets)}",
                   "rule: on a majority of the data sets run")


def _claim_faster(ev):
    ratios = {}
    for rec in ev.records("table1"):
        r = rec["result"]
        if rec["method"].startswith("IDSVM") and r.get("time_ratio") is not None:
            ratios.setdefault(rec["dataset"], []).append(r["time_ratio"])
    if not ratios:
        raise Missing("no IDSVM run learned its whole stream")
    med = {ds: median(v) for ds, v in ratios.items()}
    overall = median(list(med.values()))
    return verdict(min(med.values()) > 1.0 and overall >= 2.0,
                   "IDSVM seconds / OnlineSVMR seconds, same stream, same process: "
                   + ", ".join(f"{d} {v:.1f}x" for d, v in med.items()),
                   "rule: IDSVM slower on every data set run and at least 2x slower in the "
                   f"median (median {overall:.1f}x)")


def _claim_active(ev):
    sets = ev.datasets("table1", "OnlineASVMR", "OnlineSVMR")
    if not sets:
        raise Missing("no data set with OnlineASVMR and OnlineSVMR results")
    gaps, fractions = {}, {}
    for ds in sets:
        gaps[ds] = (ev.mean("table1", ds, "OnlineASVMR", "accuracy")
                    - ev.mean("table1", ds, "OnlineSVMR", "accuracy"))
        labels = ev.values("table1", "n_labels", ds, "OnlineASVMR")
        n = ev.values("table1", "n_train", ds, "OnlineASVMR")
        fractions[ds] = float(np.mean(labels) / np.mean(n))
    worst = min(gaps, key=gaps.get)
    return verdict(gaps[worst] >= -1.0 and max(fractions.values()) < 1.0,
                   "OnlineASVMR - OnlineSVMR accuracy (labels queried): "
                   + ", ".join(f"{d} {gaps[d]:+.1f} ({100 * fractions[d]:.0f} %)"
                               for d in sets),
                   "rule: at most 1 point below OnlineSVMR on every data set run, with "
                   "fewer labels than examples")


def _curve_at(curve, n):
    """The cumulative kernel count of a curve at n examples: its own checkpoint if it has
    one at n, else log-log interpolated between the checkpoints around n (the count grows
    with n); None beyond the curve."""
    xs = np.asarray(curve["n_seen"], dtype=float)
    ks = np.asarray(curve["kernel_evals"], dtype=float)
    if n > xs[-1] or n < xs[0]:
        return None
    hit = np.flatnonzero(xs == n)
    if hit.size:
        return float(ks[hit[0]])
    j = int(np.searchsorted(xs, n))
    lx, lk = np.log(xs[j - 1:j + 1]), np.log(np.maximum(ks[j - 1:j + 1], 1.0))
    return float(np.exp(np.interp(np.log(n), lx, lk)))


def _claim_kernel_cost(ev):
    online = ev.records("figure4", "gauss", "OnlineSVMR")[0]["result"]
    offline = ev.records("figure4", "gauss", "OfflineSVMR")[0]["result"]
    naive = ev.records("figure4", "gauss", "NaiveRetrain")[0]["result"]
    n_off, k_off = offline["n_seen"][-1], offline["kernel_evals"][-1]
    n_nv, k_nv = naive["n_seen"][-1], naive["kernel_evals"][-1]
    k_on, k_on_nv = _curve_at(online, n_off), _curve_at(online, n_nv)
    if k_on is None or k_on_nv is None:
        return untestable("OnlineSVMR's curve does not reach the offline or naive curve's "
                          "last n")
    between = [n for n in (n_off, n_nv) if n not in online["n_seen"]]
    r_off, r_nv = ratio(k_on, k_off), ratio(k_nv, k_on_nv)
    return verdict(r_off <= 3.0 and r_nv >= 10.0,
                   f"kernel computations at n = {n_off:,}: OnlineSVMR / one offline SVMR = "
                   f"{r_off:.2f}; naive retraining / OnlineSVMR at n = {n_nv:,}: {r_nv:.0f}x"
                   + (f" (OnlineSVMR's count at n = {', '.join(f'{n:,}' for n in between)} "
                      "log-log interpolated between its checkpoints)" if between else ""),
                   "rule: OnlineSVMR within 3x of one offline SVMR and naive retraining at "
                   "least 10x OnlineSVMR")


def _claim_queries(ev):
    wins, tried = [], []
    for ds in sorted({r["dataset"] for r in ev.records("figure6")}):
        try:
            a = ev.records("figure6", ds, "OnlineASVMR")[0]["result"]
            q = ev.records("figure6", ds, "QueryAll")[0]["result"]
        except Missing:
            continue
        budget = min(a["n_labels"][-1], q["n_labels"][-1])
        acc = [c["accuracy"][max(i for i, L in enumerate(c["n_labels"]) if L <= budget)]
               for c in (a, q) if c["n_labels"][0] <= budget]
        if len(acc) == 2:
            tried.append(ds)
            if acc[0] >= acc[1]:
                wins.append(ds)
    if not tried:
        raise Missing("no figure6 data set with both OnlineASVMR and QueryAll curves")
    return verdict(2 * len(wins) > len(tried),
                   f"OnlineASVMR at least as accurate as QueryAll at the same number of "
                   f"labels on {len(wins)} of {len(tried)} sets ({', '.join(tried)})",
                   "rule: on a majority of the data sets run, at the largest label count "
                   "both reached")


_GAUSS_RATIO = _printed_sv("LIBSVM", "gauss") / _printed_sv("OnlineSVMR", "gauss")
_N_ABOVE = sum(_printed_acc("OnlineSVMR", d) > _printed_acc("LIBSVM", d) for d in DATASETS)
CLAIMS = (
    Claim("W1", "OnlineSVMR is about as accurate as LIBSVM.",
          "Table I: OnlineSVMR within 1 point of LIBSVM or above it on all 9 sets "
          f"(above on {_N_ABOVE} of 9).", _claim_accuracy, ("table1",)),
    Claim("W2", "On noisy data the ramp loss gives a model about ten times sparser than "
          "LIBSVM's.",
          f"Table I, Gauss: #SV 4,183 (LIBSVM) against 465 (OnlineSVMR), {_GAUSS_RATIO:.1f}x; "
          "(C, δ²) chosen per method by cross-validation.", _claim_sparse_gauss, ("table1",)),
    Claim("W3", "The ramp-loss models are sparser than the hinge-loss ones (LIBSVM, IDSVM).",
          "Table I: OnlineSVMR has fewer SVs than both LIBSVM and IDSVM on 6 of 9 sets "
          "(IDSVM's stopped at 5,000 s on 3).", _claim_sparse_all, ("table1",)),
    Claim("W4", "OnlineSVMR trains much faster than IDSVM.",
          "Fig. 4b (Gauss): training time far below IDSVM's; Table I: IDSVM stopped "
          "unfinished after 5,000 s on 3 of 9 sets.", _claim_faster, ("table1",)),
    Claim("W5", "OnlineASVMR, querying only the labels of examples in the ramp region, is "
          "about as accurate as OnlineSVMR.",
          "Table I: OnlineASVMR within 1 point of OnlineSVMR on all 9 sets; Fig. 3a: it "
          "reaches OnlineSVMR's accuracy on Gauss after 10,000 examples.", _claim_active,
          ("table1",)),
    Claim("W6", "OnlineSVMR costs about as many kernel computations as training one offline "
          "SVMR, far fewer than retraining after every example.",
          "Fig. 4a (Gauss), kernel computations against the stream length (no numbers "
          "printed).", _claim_kernel_cost, ("figure4",)),
    Claim("W7", "For a fixed number of label queries OnlineASVMR is more accurate than "
          "QueryAll.", "Fig. 6: QueryAll consistently and significantly less accurate than "
          "OnlineASVMR and Greedy on the 9 sets.", _claim_queries, ("figure6",)),
)


PAPER = Paper(
    name=NAME,
    title="Wang & Vucetic, Fast Online Training of Ramp Loss SVMs (ICDM 2009)",
    datasets=DATASETS,
    methods=METHODS + ("IDSVM (to the end)",),
    claims=CLAIMS,
    items=[
        Item("table1", "accuracy [%] and #SV on the benchmark data sets", plan_table1,
             metrics=(("accuracy", "acc", 100.0), ("n_sv", "#SV", 1.0)), printed=PRINTED,
             notes=TABLE1_NOTES),
        Item("figure2", "Gauss: solutions of IDSVM, OnlineSVMR, OnlineASVMR", plan_figure2,
             plot=plot_figure2),
        Item("figure3", "Gauss: accuracy and #SV against stream length", plan_figure3,
             plot=plot_figure3),
        Item("figure4", "Gauss: kernel computations and training time against stream length",
             plan_figure4, plot=plot_figure4),
        Item("figure5", "NCheckerboard: non-SV budget m = 0, 100, 1000, none", plan_figure5,
             plot=plot_figure5),
        Item("figure6", "accuracy against queried labels (active learning)", plan_figure6,
             plot=plot_figure6),
    ],
)
