"""Cauwenberghs & Poggio, *Incremental and Decremental Support Vector Machine Learning*
(NIPS 2000) -- IDSVM, the exact baseline of Wang & Vucetic (not among the shared texts).

The paper's claims, checked against brute force:

- Table 1 (exact leave-one-out): the LOO error by decremental unlearning
  (``IncrementalSVM.loo_error``) against n retrainings of LIBSVM (``SVC``) without each
  example; the largest difference of the LOO decision values; and unlearning half of the
  examples against a batch SVM trained on the other half (largest decision difference).
  "Printed": the brute-force value (the claim is equality); differences at the solvers'
  tolerance.
- Figure 1 (incremental cost): kernel evaluations and training time against n
  (log-log), with the number of margin support vectors.

Data: Pima diabetes (768 x 8, the set of the paper's experiments, scaled to mean 0 /
std 1) and Gauss; RBF kernel, C = 1, gamma = 1/M.
"""

from __future__ import annotations

import time

import numpy as np

from ._claims import Claim, Missing, median, verdict
from ._runner import Cell, Item, Paper, figure, mean_curves, save_figure

NAME = "cauwenberghs-poggio"
MOD = __name__
MODE = {"quick": dict(n_loo=80, n_curve=400, repeats=1, sets=("diabetes", "gauss")),
        "default": dict(n_loo=400, n_curve=5000, repeats=3, sets=("diabetes", "gauss"))}
MODE["full"] = MODE["default"]
C = 1.0


def _data(cell, data_home, n):
    from ..datasets import load_dataset, load_shared

    seed = cell.data_seed % (2 ** 32)
    rng = np.random.RandomState(seed)
    if cell.dataset == "diabetes":
        X, y = load_shared("diabetes", data_home=data_home)
        y = np.where(y == y.max(), 1, -1)
        idx = rng.permutation(X.shape[0])[:n]
        X = X[idx]
        X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1)
        return X, y[idx]
    X, y, _, _ = load_dataset(cell.dataset, n_train=n, n_test=10, random_state=seed,
                              data_home=data_home)
    perm = rng.permutation(X.shape[0])
    return X[perm], y[perm]


def run_loo(cell, data_home):
    import refsvm
    from sklearn.svm import SVC

    p = cell.params
    X, y = _data(cell, data_home, p["n"])
    gamma = 1.0 / X.shape[1]
    start = time.perf_counter()
    est = refsvm.IncrementalSVM(C=C, gamma=gamma, fit_method="incremental").fit(X, y)
    ids, dec = est.loo_decisions()
    loo_seconds = time.perf_counter() - start
    loo = float(np.mean(np.where(dec > 0, 1, -1) != y[ids]))
    start = time.perf_counter()
    brute = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        keep = np.arange(X.shape[0]) != i
        svc = SVC(C=C, gamma=gamma, tol=1e-8).fit(X[keep], y[keep])
        brute[i] = svc.decision_function(X[i:i + 1])[0]
    brute_seconds = time.perf_counter() - start
    brute_err = float(np.mean(np.where(brute > 0, 1, -1) != y))
    # unlearn the first half, compare with a batch SVM on the second half
    half = X.shape[0] // 2
    est.unlearn(np.arange(half))
    svc = SVC(C=C, gamma=gamma, tol=1e-8).fit(X[half:], y[half:])
    unlearn_diff = float(np.max(np.abs(est.decision_function(X) - svc.decision_function(X))))
    return {"loo_error": loo, "brute_loo_error": brute_err,
            "loo_error_diff": loo - brute_err,
            "max_loo_decision_diff": float(np.max(np.abs(dec - brute[ids]))),
            "max_unlearn_decision_diff": unlearn_diff,
            "loo_seconds": loo_seconds, "brute_seconds": brute_seconds}


def run_cost(cell, data_home):
    import refsvm
    from ..evaluate import checkpoint_curve, checkpoints

    p = cell.params
    X, y = _data(cell, data_home, p["n"])
    est = refsvm.IncrementalSVM(C=C, gamma=1.0 / X.shape[1], fit_method="incremental")
    curve = checkpoint_curve(est, X, y, X[:200], y[:200], checkpoints(X.shape[0], 10, 4))
    return curve.as_dict()


def plan_loo(mode, records):
    m = MODE[mode]
    return [Cell(NAME, "table1", ds, "IDSVM vs brute force", f"C={C:g},gamma=1/M,n={m['n_loo']}",
                 r, f"{MOD}:run_loo", dict(n=m["n_loo"]))
            for ds in m["sets"] for r in range(m["repeats"])]


def plan_cost(mode, records):
    m = MODE[mode]
    return [Cell(NAME, "figure1", ds, "IDSVM", f"C={C:g},gamma=1/M,n={m['n_curve']}", r,
                 f"{MOD}:run_cost", dict(n=m["n_curve"]))
            for ds in m["sets"] for r in range(m["repeats"])]


def plot_cost(records, folder, mode):
    if not records:
        return []
    fig, axes = figure(1, 3, width=3.4)
    for key, ax, lab in (("kernel_evals", axes[0, 0], "# kernel evaluations"),
                         ("seconds", axes[0, 1], "training time [s]"),
                         ("size", axes[0, 2], "#SV")):
        for (ds, method), (x, yv) in sorted(mean_curves(records, "n_seen", key).items()):
            ax.plot(x, np.maximum(yv, 1e-6), marker=".", label=ds)
        ax.set(xscale="log", yscale="log" if key != "size" else "linear",
               xlabel="examples learned (n)", ylabel=lab)
    axes[0, 0].legend(fontsize=7)
    return save_figure(fig, folder, "figure1")

# ------------------------------------------------------------------------------ claims
def _claim_loo(ev):
    out, ok = [], True
    for ds in ev.datasets("table1", "IDSVM vs brute force"):
        a = ev.mean("table1", ds, "IDSVM vs brute force", "loo_error")
        b = ev.mean("table1", ds, "IDSVM vs brute force", "brute_loo_error")
        d = ev.mean("table1", ds, "IDSVM vs brute force", "max_loo_decision_diff")
        ok &= abs(a - b) < 1e-9 and d < 1e-3
        out.append(f"{ds}: LOO {a:.2f} % vs brute force {b:.2f} %, max|df| {d:.1e}")
    if not out:
        raise Missing("no table1 results")
    return verdict(ok, "; ".join(out), "rule: equal LOO errors, decision values within 1e-3")


def _claim_unlearn(ev):
    out = {ds: ev.mean("table1", ds, "IDSVM vs brute force", "max_unlearn_decision_diff")
           for ds in ev.datasets("table1", "IDSVM vs brute force")}
    if not out:
        raise Missing("no table1 results")
    return verdict(max(out.values()) < 1e-3, "max|f_unlearned - f_batch|: " + ", ".join(
        f"{d} {v:.1e}" for d, v in out.items()), "rule: below 1e-3 on every set")


def _claim_cost(ev):
    slopes = {}
    for rec in ev.records("figure1"):
        r = rec["result"]
        n, k = np.asarray(r["n_seen"], float), np.asarray(r["kernel_evals"], float)
        keep = (n >= n[-1] / 10) & (k > 0)
        if keep.sum() >= 2:
            slopes.setdefault(rec["dataset"], []).append(
                float(np.polyfit(np.log(n[keep]), np.log(k[keep]), 1)[0]))
    if not slopes:
        raise Missing("no figure1 curve")
    med = {d: median(v) for d, v in slopes.items()}
    return verdict(all(v < 2.5 for v in med.values()),
                   "log-log slope of kernel evaluations against n over the last decade: "
                   + ", ".join(f"{d} {v:.2f}" for d, v in med.items()),
                   "rule: below 2.5 (a retraining from scratch after each example costs "
                   "at least n^2 per step, n^3 in all)")


CLAIMS = (
    Claim("C1", "Decremental unlearning gives the exact leave-one-out error.",
          "The paper's exact LOO procedure (the paper is not among the shared texts).",
          _claim_loo, ("table1",)),
    Claim("C2", "Unlearning examples gives the SVM trained without them.",
          "The paper's decremental procedure.", _claim_unlearn, ("table1",)),
    Claim("C3", "Adding one example at a time stays far cheaper than retraining.",
          "The paper's incremental procedure (no numbers in the shared material).",
          _claim_cost, ("figure1",)),
)


PAPER = Paper(
    name=NAME,
    title="Cauwenberghs & Poggio, Incremental and Decremental SVM Learning (NIPS 2000)",
    datasets=("diabetes", "gauss"),
    methods=("IDSVM vs brute force", "IDSVM"),
    claims=CLAIMS,
    items=[
        Item("table1", "exact leave-one-out and unlearning against brute force", plan_loo,
             metrics=(("loo_error", "LOO err%", 100.0), ("brute_loo_error", "brute err%", 100.0),
                      ("max_loo_decision_diff", "max|Δf_loo|", 1.0, ".1e"),
                      ("max_unlearn_decision_diff", "max|Δf_unl|", 1.0, ".1e")),
             notes="LOO err: IDSVM's exact leave-one-out (decremental unlearning); brute: n "
                   "LIBSVM fits without each example.  max|Δf|: largest difference of "
                   "decision values (LOO; and after unlearning the first half, against LIBSVM "
                   "on the second half) -- the solvers' tolerance, not a modelling gap.  "
                   "Nothing printed to compare with (the paper is not among the shared "
                   "texts)."),
        Item("figure1", "incremental cost against n", plan_cost, plot=plot_cost),
    ],
)
