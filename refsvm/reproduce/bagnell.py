"""Bagnell, *Notes on efficient online SVM implementation* (2010).

The notes print no numbers; what they claim is qualitative: the 1/(lambda t) steps
converge to the optimum of lambda/2 ||w||^2 + mean hinge, projection onto the ball of
radius 1/sqrt(lambda) and averaging of the iterates help, mini-batches (e.g. 100) average
the sub-gradient, inputs scaled to unit norm.  Here:

- Table 1: after one shuffled pass, the objective and its gap to the batch optimum (the
  same objective solved by ``LinearSVC`` with C = 1/(lambda n), no bias) and the test
  error, for every (projection, averaging) pair and mini-batch sizes 1, 10, 100;
- Figure 1: objective (log-log) and test error against t for the same variants.

Data: a9a (Adult), unit-norm rows (the notes' trick), lambda = 1e-4.  Nothing is printed to
compare with, so the table's "printed" column is empty; the batch optimum is the reference.
"""

from __future__ import annotations

import numpy as np

from ._claims import Claim, Missing, verdict
from ._runner import Cell, Item, Paper, figure, mean_curves, save_figure

NAME = "bagnell"
MOD = __name__
LAM = 1e-4
VARIANTS = {"plain": (False, False), "project": (True, False), "average": (False, True),
            "project+average": (True, True)}
BATCHES = (1, 10, 100)
MODE = {"quick": dict(n_train=2000, n_test=2000, repeats=1),
        "default": dict(n_train=None, n_test=None, repeats=3)}
MODE["full"] = MODE["default"]


def _data(cell, data_home, p):
    from sklearn.preprocessing import normalize

    from ..datasets import load_dataset

    seed = cell.data_seed % (2 ** 32)
    X, y, Xt, yt = load_dataset("a9a", n_train=p["n_train"], n_test=p["n_test"],
                                random_state=seed, data_home=data_home)
    order = np.random.RandomState(seed).permutation(X.shape[0])
    return normalize(X[order]), y[order], normalize(Xt), yt


def _objective(w, X, y, lam):
    return float(lam / 2 * w @ w + np.mean(np.maximum(0.0, 1.0 - y * (X @ w))))


def run_curve(cell, data_home):
    import refsvm
    from ..evaluate import checkpoints

    p = cell.params
    X, y, Xt, yt = _data(cell, data_home, p)
    project, average = VARIANTS[p["variant"]]
    est = refsvm.OnlineLinearSVM(lam=LAM, project=project, average=average,
                                 batch_size=p["batch"], fit_intercept=False)
    points = checkpoints(X.shape[0], first=100, per_decade=4)
    out = {"n_seen": [], "objective": [], "error": []}
    t = 0
    for point in points:
        est.partial_fit(X[t:point], y[t:point], classes=[-1, 1])
        t = point
        w = np.ravel(est.coef_)
        out["n_seen"].append(int(point))
        out["objective"].append(_objective(w, X, y, LAM))
        out["error"].append(1.0 - est.score(Xt, yt))
    out["final_objective"] = out["objective"][-1]
    out["final_error"] = out["error"][-1]
    return out


def run_optimum(cell, data_home):
    from sklearn.svm import LinearSVC

    p = cell.params
    X, y, Xt, yt = _data(cell, data_home, p)
    svc = LinearSVC(C=1.0 / (LAM * X.shape[0]), loss="hinge", fit_intercept=False,
                    dual=True, tol=1e-6, max_iter=200000).fit(X, y)
    w = np.ravel(svc.coef_)
    return {"final_objective": _objective(w, X, y, LAM), "final_error": 1 - svc.score(Xt, yt)}


def plan(mode, records):
    m = MODE[mode]
    n = "" if m["n_train"] is None else f",n={m['n_train']}"
    cells = []
    for r in range(m["repeats"]):
        cells.append(Cell(NAME, "table1", "a9a", "batch optimum (LinearSVC)", f"lam={LAM:g}{n}",
                          r, f"{MOD}:run_optimum", dict(m)))
        for variant in VARIANTS:
            for b in BATCHES:
                cells.append(Cell(NAME, "table1", "a9a", f"{variant}, k={b}",
                                  f"lam={LAM:g}{n}", r, f"{MOD}:run_curve",
                                  dict(m, variant=variant, batch=b)))
    return cells


def plot(records, folder, mode):
    if not records:
        return []
    fig, axes = figure(1, 2)
    best = min((r["result"]["final_objective"] for r in records
                if r["method"].startswith("batch")), default=None)
    obj = mean_curves(records, "n_seen", "objective")
    err = mean_curves(records, "n_seen", "error")
    for (ds, method), (x, yv) in sorted(obj.items()):
        if method.endswith("k=1") or method.endswith("k=100"):
            ls = "-" if method.endswith("k=1") else ":"
            axes[0, 0].plot(x, yv, ls=ls, label=method)
            axes[0, 1].plot(x, 100 * err[(ds, method)][1], ls=ls, label=method)
    if best is not None:
        axes[0, 0].axhline(best, color="k", lw=0.8, label="batch optimum")
    axes[0, 0].set(xscale="log", yscale="log", xlabel="t (examples)", ylabel="objective",
                   title="λ/2‖w‖² + mean hinge, a9a")
    axes[0, 1].set(xscale="log", xlabel="t (examples)", ylabel="test error [%]",
                   title="test error, a9a")
    axes[0, 0].legend(fontsize=6)
    return save_figure(fig, folder, "figure1")

# ------------------------------------------------------------------------------ claims
def _final(ev, method):
    return ev.mean("table1", "a9a", method, "final_objective")


def _optimum(ev):
    return _final(ev, "batch optimum (LinearSVC)")


def _claim_rate(ev):
    curves = [r["result"] for r in ev.records("table1", "a9a", "plain, k=1")]
    opt = _optimum(ev)
    n = np.asarray(curves[0]["n_seen"], dtype=float)
    gap = np.mean([np.asarray(c["objective"]) for c in curves], axis=0) - opt
    keep = (gap > 0) & (n >= n[-1] / 10)
    if keep.sum() < 2:
        raise Missing("too few checkpoints with a positive gap in the last decade")
    slope = float(np.polyfit(np.log(n[keep]), np.log(gap[keep]), 1)[0])
    return verdict(slope <= -0.5 and gap[-1] < gap[0],
                   f"gap to the batch optimum {gap[0]:.3g} at t = {int(n[0])} -> "
                   f"{gap[-1]:.3g} at t = {int(n[-1])}; log-log slope over the last decade "
                   f"{slope:.2f} (lambda t = {LAM * n[-1]:.2g} at the end)",
                   "rule: the gap shrinks and its slope is at most -0.5 (the rate 1/(lambda t) "
                   "is -1; it needs lambda t >> 1)")


def _claim_average(ev):
    pairs = [(f"plain, k={b}", f"average, k={b}") for b in BATCHES]
    better = [b for a, b in pairs if _final(ev, b) < _final(ev, a)]
    return verdict(2 * len(better) > len(pairs),
                   "objective after one pass, last iterate -> average: " + ", ".join(
                       f"k={a.rpartition('=')[2]} {_final(ev, a):.4f} -> {_final(ev, b):.4f}"
                       for a, b in pairs), "rule: the average lower for a majority of k")


def _claim_project(ev):
    pairs = [(f"plain, k={b}", f"project, k={b}") for b in BATCHES]
    better = [b for a, b in pairs if _final(ev, b) <= _final(ev, a)]
    return verdict(2 * len(better) > len(pairs),
                   "objective after one pass, plain -> projected: " + ", ".join(
                       f"k={a.rpartition('=')[2]} {_final(ev, a):.4f} -> {_final(ev, b):.4f}"
                       for a, b in pairs), "rule: projection no worse for a majority of k")


def _claim_batches(ev):
    one, hundred = _final(ev, "average, k=1"), _final(ev, "average, k=100")
    opt = _optimum(ev)
    return verdict(hundred - opt <= 2 * (one - opt),
                   f"averaged objective, gap to the optimum: k=1 {one - opt:.4f}, k=100 "
                   f"{hundred - opt:.4f} (k=100 takes 1/100 of the steps)",
                   "rule: mini-batches of 100 at most double the gap of k = 1")


def _claim_practice(ev):
    best = ev.mean("table1", "a9a", "batch optimum (LinearSVC)", "final_error")   # in %
    err = ev.mean("table1", "a9a", "project+average, k=1", "final_error")
    return verdict(err <= best + 1.0, f"test error after one pass {err:.2f} % (projection, "
                   f"averaging, k=1) against the batch optimum's {best:.2f} %",
                   "rule: within 1 point of the batch solution")


CLAIMS = (
    Claim("B1", "The steps 1/(lambda t) (the strongly convex rate of Hazan et al.) drive the "
          "objective to its optimum.", "Sec. 2, Alg. 1 (the notes print no experiment).",
          _claim_rate, ("table1",)),
    Claim("B2", "Returning the average of the iterates helps.",
          "Alg. 1's optional output (no experiment printed).", _claim_average, ("table1",)),
    Claim("B3", "Projecting onto the ball of the prior does not hurt and can help.",
          "Alg. 1's optional step (no experiment printed).", _claim_project, ("table1",)),
    Claim("B4", "Small batches (say 100) with the averaged gradient also help.",
          "Sec. 2's closing tricks (no experiment printed).", _claim_batches, ("table1",)),
    Claim("B5", "One pass over unit-norm rows performs very well in practice.",
          "Introduction (no experiment printed).", _claim_practice, ("table1",)),
)


PAPER = Paper(
    name=NAME,
    title="Bagnell, Notes on efficient online SVM implementation (2010)",
    datasets=("a9a",),
    methods=tuple(f"{v}, k={b}" for v in VARIANTS for b in BATCHES)
    + ("batch optimum (LinearSVC)",),
    claims=CLAIMS,
    items=[
        Item("table1", "one pass: objective and test error, with/without projection and "
             "averaging, mini-batches", plan,
             metrics=(("final_objective", "obj", 1.0, 4), ("final_error", "err%", 100.0)),
             notes="Nothing is printed in the notes; compare each row with the batch optimum "
                   "row (same objective, LinearSVC).  a9a rows scaled to unit norm, "
                   "lambda = 1e-4, one shuffled pass."),
        Item("figure1", "objective and test error against t", plan, plot=plot),
    ],
)
