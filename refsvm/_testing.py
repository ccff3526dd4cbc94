"""Streams shared by the tests and the benchmarks (private; as ``sklearn.utils._testing``).

Nothing here is an algorithm: generators of the small adversarial streams that the tests
assert on and the benchmarks count steps on, kept in one place so that both draw the
same streams.
"""

from __future__ import annotations

import numpy as np

#: OnlineSVMR option sets by name (the paper's form, the bias, the relative stopping rule,
#: kept kernel rows, all of them), as the ramp tests parametrize them
RAMP_OPTIONS = {"paper": {}, "bias": dict(fit_intercept=True),
                "relative": dict(stop="relative"),
                "bias-relative": dict(fit_intercept=True, stop="relative"),
                "keep": dict(keep_rows=True),
                "all": dict(fit_intercept=True, stop="relative", keep_rows=True)}


def clustered_streams(n_streams=400, seed=0):
    """The census of docs/wang_vucetic.rst reading 13: random small streams with close
    points -- 1 to 3 clusters of 2 to 4 points, each 1e-6 to 1e-1 from its centre, plus up
    to 9 scattered points, random labels -- each with an option set (a key of
    ``RAMP_OPTIONS``) and a loop (``shrinking``) drawn at random.

    Yields ``(X, y, option, shrinking)``."""
    options = list(RAMP_OPTIONS)
    rng = np.random.RandomState(seed)
    for _ in range(n_streams):
        n_cl, per = rng.randint(1, 4), rng.randint(2, 5)
        centers = rng.randn(n_cl, 2) * 2
        X = [c + 10.0 ** rng.uniform(-6, -1) * rng.randn(2) for c in centers for _ in range(per)]
        X += list(rng.randn(rng.randint(0, 10), 2))
        X = np.ascontiguousarray(np.array(X)[rng.permutation(len(X))])
        y = rng.choice([-1.0, 1.0], len(X))
        rng.choice([0, 3, 6, 9, 12])                       # (a C drawn, unused: C is swept)
        yield X, y, options[rng.randint(len(options))], bool(rng.randint(2))
