"""Kernel Passive-Aggressive classifiers (Crammer et al. 2006), bias-free: the reference.

The PA baseline of Wang & Vucetic (Table I).  The model is a kernel expansion
with no bias::

    f(x) = sum_j c_j k(x_j, x)

On each example the hinge loss l = max(0, 1 - y f(x)) is computed; if l > 0
the example is added with coefficient c = tau * y, where (Crammer et al.,
Eqs. for PA, PA-I, PA-II in the kernel form, ||x||^2 = k(x, x)):

- PA:    tau = l / k(x, x)
- PA-I:  tau = min(C, l / k(x, x))
- PA-II: tau = l / (k(x, x) + 1 / (2 C))

Otherwise the model is unchanged (passive).  A zero k(x, x) (a zero vector
under the linear or polynomial kernel) gives no PA step (tau would be
infinite) and no PA-I step (it cannot move the margin; as the linear PA of
:mod:`refsvm.linear`), and l / (1 / (2C)) for PA-II.

Kernel evaluations: one per support vector for f(x) (in increasing id), plus
k(x, x) on rounds with l > 0.  Prediction is not counted.  The compiled twin
is :mod:`refsvm._kernel_pa`.

References
----------
K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer, "Online
Passive-Aggressive Algorithms", JMLR 7, 2006 (Sec. 3, Eqs. for PA, PA-I,
PA-II; Sec. 7 kernel form).  Used as a baseline by Z. Wang and S. Vucetic,
"Fast Online Training of Ramp Loss Support Vector Machines", ICDM 2009.
"""

from __future__ import annotations


import numpy as np

from ..core.kernels import Kernel, get_row, stack_rows

__all__ = ["KernelPA", "KernelPassiveAggressive", "VARIANTS"]

VARIANTS = {"PA": 0, "PA-I": 1, "PA-II": 2}


def pa_tau(variant, loss, kxx, C):
    """The step size tau of PA (0), PA-I (1) or PA-II (2)."""
    if variant == 2:
        return loss / (kxx + 1.0 / (2.0 * C))
    if kxx <= 0.0:
        return 0.0
    tau = loss / kxx
    if variant == 1 and tau > C:
        tau = C
    return tau


class KernelPA:
    """Kernel PA state (bias-free).

    Parameters
    ----------
    n_features : int
    sparse : bool
    C : float
        Aggressiveness of PA-I / PA-II (unused by PA).
    variant : {0, 1, 2} or {"PA", "PA-I", "PA-II"}
    kernel, gamma, degree, coef0
        See :class:`refsvm.core.kernels.Kernel`.
    """

    def __init__(self, n_features, sparse=False, C=1.0, variant=1, kernel="rbf", gamma=1.0,
                 degree=3, coef0=0.0):
        self.n_features = int(n_features)
        self.sparse = bool(sparse)
        self.C = float(C)
        self.variant = VARIANTS[variant] if isinstance(variant, str) else int(variant)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.rows = []                        # support vectors x_j
        self.ids = []                         # their stream ids
        self.coef = []                        # c_j = tau_j y_j
        self.n_seen = 0
        self.n_updates = 0
        self.n_mistakes = 0                   # y f(x) <= 0 before the update
        self.cumulative_loss = 0.0

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def step(self, x, y):
        y = float(y)
        f = 0.0
        for xj, cj in zip(self.rows, self.coef):
            f += cj * self.kernel(xj, x)
        loss = max(0.0, 1.0 - y * f)            # hinge loss
        if y * f <= 0.0:
            self.n_mistakes += 1
        self.cumulative_loss += loss
        if loss > 0.0:
            kxx = self.kernel(x, x)
            tau = pa_tau(self.variant, loss, kxx, self.C)
            if tau > 0.0:
                self.rows.append(x)
                self.ids.append(self.n_seen)
                self.coef.append(tau * y)
                self.n_updates += 1
        self.n_seen += 1

    def run(self, X, y, order):
        for i in order:
            self.step(get_row(X, int(i)), float(y[i]))

    def decision_function(self, X):
        out = np.zeros(X.shape[0])
        for r in range(X.shape[0]):
            x = get_row(X, r)
            f = 0.0
            for xj, cj in zip(self.rows, self.coef):
                f += cj * self.kernel.value(xj, x)
            out[r] = f
        return out

    def support(self):
        return (np.array(self.ids, dtype=np.int64), np.array(self.coef, dtype=np.float64),
                stack_rows(self.rows, self.n_features, self.sparse))

    def get_state(self):
        return {
            "support": np.array(self.ids, dtype=np.int64),
            "coef": np.array(self.coef, dtype=np.float64),
            "n_seen": self.n_seen,
            "n_updates": self.n_updates,
            "n_mistakes": self.n_mistakes,
            "cumulative_loss": self.cumulative_loss,
            "n_kernel_evals": self.n_kernel_evals,
        }
