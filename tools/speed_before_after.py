"""Time the public estimators of two source trees, alternating, in separate processes.

Usage::

    python tools/speed_before_after.py OLD_TREE NEW_TREE [repeats]

Each tree must have its compiled twins built in place.  For every estimator (compiled
twin) the fit on a fixed data set is timed in a fresh interpreter of each tree, the trees
alternating, ``repeats`` times; the best time of each side and their ratio are printed.
Alternating keeps a busy machine's noise off the ratio as far as possible.
"""

from __future__ import annotations

import json
import subprocess
import sys

CASES = {
    "PassiveAggressive dense 200k x 100": (
        "refsvm.PassiveAggressive(variant='PA-I', C=0.1)", "linear", 200_000, 100),
    "Perceptron dense 200k x 100": ("refsvm.Perceptron(max_epochs=1)", "linear", 200_000, 100),
    "OnlineLinearSVM dense 200k x 100": (
        "refsvm.OnlineLinearSVM(lam=1e-3, project=True, average=True)", "linear", 200_000, 100),
    "PAm dense 200k x 100": ("refsvm.ProximalPassiveAggressive(C=0.1)", "linear", 200_000, 100),
    "KernelPassiveAggressive gauss 5k": (
        "refsvm.KernelPassiveAggressive(gamma=0.5)", "gauss", 5_000, 2),
    "OnlineRampSVM gauss 5k": ("refsvm.OnlineRampSVM(C=1.0, gamma=0.5)", "gauss", 5_000, 2),
    "IncrementalSVM gauss 2k": ("refsvm.IncrementalSVM(C=1.0, gamma=0.5)", "gauss", 2_000, 2),
}

SNIPPET = """
import sys, time, json
sys.path.insert(0, {tree!r})
import numpy as np, refsvm
rng = np.random.RandomState(0)
kind, n, d = {kind!r}, {n}, {d}
if kind == "linear":
    w = rng.randn(d); X = rng.randn(n, d); y = np.where(X @ w + 0.5 * rng.randn(n) > 0, 1, -1)
else:
    y = np.where(rng.rand(n) < 0.5, -1, 1); X = rng.randn(n, 2); X[:, 0] += y * 0.5
est = {make}
start = time.perf_counter(); est.fit(X, y); print(json.dumps(time.perf_counter() - start))
"""


def main(old, new, repeats=5):
    print(f"{'case':<36}{'before [s]':>12}{'after [s]':>12}{'after/before':>14}")
    for name, (make, kind, n, d) in CASES.items():
        best = {}
        for _ in range(repeats):
            for label, tree in (("old", old), ("new", new)):
                code = SNIPPET.format(tree=tree, kind=kind, n=n, d=d, make=make)
                out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                     text=True, cwd=tree, check=True).stdout
                best[label] = min(best.get(label, float("inf")), json.loads(out))
        print(f"{name:<36}{best['old']:>12.4f}{best['new']:>12.4f}"
              f"{best['new'] / best['old']:>14.2f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
