"""Before/after fingerprint of every twin on fixed streams (a refactoring aid).

Usage::

    python tools/twin_fingerprint.py save before.npz     # on the old code
    python tools/twin_fingerprint.py save after.npz      # on the new code
    python tools/twin_fingerprint.py compare before.npz after.npz
    python tools/twin_fingerprint.py save after.npz --paper   # also every family's paper form

``save`` trains every public estimator on fixed dense and CSR streams with both
backends (fit, then partial_fit in two chunks; IncrementalSVM also unlearns and
computes its leave-one-out decisions; the active learners and offline CCCP run
once) and records every fitted number it can reach.  ``compare`` demands that
the two files hold the same keys and bit-for-bit equal arrays: a code move
must not change a single number.  The files are not kept in git.
"""

from __future__ import annotations

import importlib
import sys

import numpy as np
import scipy.sparse as sp


def _first(*names):
    """The first importable attribute among dotted names (old and new layouts)."""
    for name in names:
        mod, _, attr = name.rpartition(".")
        try:
            return getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError):
            continue
    raise ImportError(names)


def _streams():
    rng = np.random.RandomState(0)
    X = rng.randn(160, 5)
    X[rng.rand(160, 5) < 0.3] = 0.0
    y2 = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.randn(160) > 0.2, 1, 0)
    y3 = np.digitize(X[:, 0] + 0.3 * rng.randn(160), [-0.4, 0.4])
    Xt = rng.randn(40, 5)
    return X, y2, y3, Xt


def _estimators():
    import refsvm

    return {
        "perceptron": lambda b: refsvm.Perceptron(backend=b, max_epochs=3),
        "pa": lambda b: refsvm.PassiveAggressive(variant="PA-I", C=0.5, fit_intercept=False,
                                                 backend=b),
        "pa2_bias": lambda b: refsvm.PassiveAggressive(variant="PA-II", C=0.5,
                                                      fit_intercept=True, backend=b),
        "pam": lambda b: refsvm.ProximalPassiveAggressive(C=0.5, fit_intercept=False, backend=b),
        "pegasos": lambda b: refsvm.OnlineLinearSVM(lam=1e-2, project=True, average=True,
                                                    batch_size=4, fit_intercept=False,
                                                    backend=b),
        "kernel_pa": lambda b: refsvm.KernelPassiveAggressive(C=1.0, gamma=0.5, backend=b),
        "ramp": lambda b: refsvm.OnlineRampSVM(C=2.0, gamma=0.5, backend=b),
        "ramp_m": lambda b: refsvm.OnlineRampSVM(C=2.0, gamma=0.5, max_non_sv=5,
                                                 shrinking=False, backend=b),
        "idsvm": lambda b: refsvm.IncrementalSVM(C=1.0, gamma=0.5, backend=b),
        "poker": lambda b: refsvm.POKER(C=1.0, gamma=0.5, backend=b),
        "poker_alt": lambda b: refsvm.POKER(C=1.0, gamma=0.5, increment="altpoker",
                                            chunk_size=7, backend=b),
        "stream_svm": lambda b: refsvm.StreamSVM(C=1.0, lookahead=3, backend=b),
        "stream_svm_rbf": lambda b: refsvm.StreamSVM(C=1.0, kernel="rbf", gamma=0.5, backend=b),
        "rkpa": lambda b: refsvm.ReducedKernelPA(n_reduced=20, gamma=0.5, random_state=0,
                                                 backend=b),
        "rkpam": lambda b: refsvm.ProximalReducedKernelPA(n_reduced=20, gamma=0.5,
                                                          random_state=0, backend=b),
    }


def _paper_forms(estimators):
    """The paper form (``departures="paper"``) of every estimator that takes it."""
    import inspect

    out = {}
    for name, make in estimators.items():
        if "departures" in inspect.signature(type(make("python")).__init__).parameters:
            out[name + "@paper"] = (lambda m: lambda b: m(b).set_params(departures="paper"))(make)
    return out


_ATTRS = ("coef_", "intercept_", "dual_coef_", "support_", "n_support_", "n_kernel_evals_",
          "n_updates_", "n_I_", "n_V_", "n_epochs_")


def _record(out, key, est, Xt):
    out[key + "/decision"] = np.asarray(est.decision_function(Xt))
    for attr in _ATTRS:
        try:
            val = getattr(est, attr)
        except Exception:  # noqa: BLE001 - not every estimator has every attribute
            continue
        out[f"{key}/{attr}"] = np.asarray(val)
    for s, state in enumerate(est._states):
        for name, val in state.get_state().items():
            out[f"{key}/state{s}/{name}"] = np.asarray(val)


def save(path, paper=False):
    X, y2, y3, Xt = _streams()
    out = {}
    estimators = _estimators()
    if paper:
        estimators.update(_paper_forms(estimators))
    for name, make in estimators.items():
        for backend in ("cython", "python"):
            for fmt, XX, XXt in (("dense", X, Xt), ("csr", sp.csr_matrix(X), sp.csr_matrix(Xt))):
                for ylab, y in (("bin", y2), ("multi", y3)):
                    if name.startswith(("idsvm", "poker")) and ylab == "multi" and fmt == "csr":
                        continue
                    key = f"{name}/{backend}/{fmt}/{ylab}"
                    est = make(backend).fit(XX, y)
                    _record(out, key + "/fit", est, XXt)
                    est = make(backend)
                    est.partial_fit(XX[:90], y[:90], classes=np.unique(y))
                    est.partial_fit(XX[90:], y[90:])
                    _record(out, key + "/partial", est, XXt)
                    if name.split("@")[0] == "idsvm":
                        ids, f = est.loo_decisions()
                        out[key + "/loo_ids"], out[key + "/loo_f"] = np.asarray(ids), np.asarray(f)
                    if name.split("@")[0] in ("idsvm", "poker", "poker_alt"):
                        est.unlearn([3, 17, 40])
                        _record(out, key + "/unlearn", est, XXt)
    # active learning and offline CCCP (reference solver)
    Xa = X[:, :2].copy()
    ya = np.where(y2 == 1, 1, -1)
    for cls_name in ("QueryAll", "Greedy", "OnlineASVMR"):
        cls = _first(f"refsvm.active.{cls_name}", f"refsvm.ramp.{cls_name}", f"refsvm.{cls_name}")
        for backend in ("cython", "python"):
            learner = cls(C=2.0, gamma=0.5, backend=backend)
            curve = learner.run(Xa, lambda i: ya[i], X_test=Xt[:, :2], y_test=np.sign(Xt[:, 0]),
                                eval_every=20)
            for field in ("n_seen", "n_labels", "accuracy", "n_support", "n_kernel_evals",
                          "queried"):
                out[f"active/{cls_name}/{backend}/{field}"] = np.asarray(getattr(curve, field))
    cccp_ramp = _first("refsvm.cccp.cccp_ramp", "refsvm.ramp.cccp.cccp_ramp")
    res = cccp_ramp(Xa, ya.astype(float), C=2.0, gamma=0.5)
    out["cccp/alpha"], out["cccp/g"] = res.alpha, res.g
    out["cccp/n_kernel_evals"] = np.asarray(res.n_kernel_evals)
    np.savez(path, **out)
    print(f"saved {len(out)} arrays to {path}")


def compare(a, b):
    A, B = np.load(a), np.load(b)
    bad = sorted(set(A.files) ^ set(B.files))
    for key in sorted(set(A.files) & set(B.files)):
        x, y = A[key], B[key]
        if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=True):
            bad.append(key)
    if bad:
        print(f"{len(bad)} of {len(A.files)} arrays differ:")
        for key in bad[:50]:
            print("  ", key)
        return 1
    print(f"all {len(A.files)} arrays identical, bit for bit")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["save"]:
        save(sys.argv[2], paper="--paper" in sys.argv[3:])
    elif sys.argv[1:2] == ["compare"]:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
