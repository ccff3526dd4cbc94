"""Installed-package smoke test: ``python -m refsvm._smoke``.

The check cibuildwheel runs on every wheel it builds (``[tool.cibuildwheel]`` in
``pyproject.toml``) and the one to run after ``pip install refsvm`` on a new machine.
It needs nothing beyond the package's own dependencies (no pytest, no data files, no
compiler) and takes a few seconds:

- every compiled twin imports (a wheel missing an extension fails here, not in a
  user's first ``fit``);
- every public estimator fits a small stream with both backends, and the two twins
  give the same decision values (to rounding);
- each model is saved with ``est.save`` and loaded back with ``refsvm.load`` into
  either twin, with the same decision values, and the loaded model keeps learning;
- the active learners and the offline CCCP solver run in both twins.

Exit status 0 when everything holds; an ``AssertionError`` (status 1) names the first
estimator that does not.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time

import numpy as np

#: every compiled module the package ships (a wheel without one of them is broken)
COMPILED = ("refsvm._core", "refsvm.linear._passive_aggressive",
            "refsvm.linear._online_linear_svm", "refsvm.linear._reduced_kernel_pa",
            "refsvm.kernel_pa._kernel_pa", "refsvm.ramp._online_svmr",
            "refsvm.idsvm._incremental_svm", "refsvm.poker._poker",
            "refsvm.stream_svm._stream_svm")


def estimators():
    """name -> factory(backend): every public estimator, settings that learn on 80 rows."""
    import refsvm

    return {
        "Perceptron": lambda b: refsvm.Perceptron(max_epochs=2, backend=b),
        "PassiveAggressive": lambda b: refsvm.PassiveAggressive(C=0.5, backend=b),
        "ProximalPassiveAggressive": lambda b: refsvm.ProximalPassiveAggressive(C=0.5,
                                                                               backend=b),
        "OnlineLinearSVM": lambda b: refsvm.OnlineLinearSVM(lam=1e-2, backend=b),
        "KernelPassiveAggressive": lambda b: refsvm.KernelPassiveAggressive(gamma=0.5,
                                                                           backend=b),
        "OnlineRampSVM": lambda b: refsvm.OnlineRampSVM(C=2.0, gamma=0.5, backend=b),
        "IncrementalSVM": lambda b: refsvm.IncrementalSVM(C=1.0, gamma=0.5, backend=b),
        "POKER": lambda b: refsvm.POKER(C=1.0, gamma=0.5, backend=b),
        "ReducedKernelPA": lambda b: refsvm.ReducedKernelPA(n_reduced=10, gamma=0.5,
                                                            random_state=0, backend=b),
        "ProximalReducedKernelPA": lambda b: refsvm.ProximalReducedKernelPA(
            n_reduced=10, gamma=0.5, random_state=0, backend=b),
        "StreamSVM": lambda b: refsvm.StreamSVM(C=1.0, backend=b),
        "StreamSVM-rbf": lambda b: refsvm.StreamSVM(C=1.0, kernel="rbf", gamma=0.5,
                                                    lookahead=5, backend=b),
    }


def _data(n=80, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 4)
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.randn(n) > 0, 1, -1)
    return X, y


def _close(a, b, what):
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=what)


def check_estimator(name, factory, folder):
    """Both twins agree; save, load into either twin, continue."""
    import refsvm

    X, y = _data()
    majority = max(np.mean(y == 1), np.mean(y == -1))
    half = len(y) // 2
    models = {}
    for backend in ("cython", "python"):
        est = factory(backend).partial_fit(X[:half], y[:half], classes=[-1, 1])
        models[backend] = est
    _close(models["cython"].decision_function(X), models["python"].decision_function(X),
           f"{name}: the compiled twin and the reference disagree")
    path = models["cython"].save(os.path.join(folder, f"{name}.npz"))
    for backend in ("cython", "python"):
        loaded = refsvm.load(path, backend=backend)
        assert type(loaded) is type(models["cython"]), name
        _close(loaded.decision_function(X), models["cython"].decision_function(X),
               f"{name}: loaded into backend={backend!r}")
        loaded.partial_fit(X[half:], y[half:])
        assert loaded.score(X, y) > majority, f"{name}: the loaded {backend} model learned nothing"
    whole = factory("cython").fit(X, y)
    assert whole.score(X, y) > majority, f"{name}: fit learned nothing ({whole.score(X, y):.2f})"


def check_active_learners_and_cccp():
    import refsvm

    X, y = _data(120, seed=1)
    for cls in (refsvm.QueryAll, refsvm.Greedy, refsvm.OnlineASVMR):
        curves = [cls(C=1.0, gamma=0.5, backend=b).run(X, y, X, y, eval_every=60)
                  for b in ("cython", "python")]
        np.testing.assert_array_equal(curves[0].n_labels, curves[1].n_labels,
                                      err_msg=cls.__name__)
        _close(curves[0].accuracy, curves[1].accuracy, cls.__name__)
    result = refsvm.cccp_ramp(X[:40], y[:40].astype(float), 1.0, gamma=0.5)
    assert result is not None


def main(argv=None):
    import refsvm

    start = time.perf_counter()
    for module in COMPILED:
        importlib.import_module(module)
    names = estimators()
    with tempfile.TemporaryDirectory() as folder:
        for name, factory in names.items():
            check_estimator(name, factory, folder)
    check_active_learners_and_cccp()
    print(f"refsvm {refsvm.__version__} ({os.path.dirname(refsvm.__file__)}): "
          f"{len(COMPILED)} compiled modules, {len(names)} estimators x 2 twins fit, agree, "
          f"save and load; active learners and CCCP run "
          f"({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
