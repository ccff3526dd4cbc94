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

(the step sizes of :func:`refsvm.core.pa.pa_step`, with k(x, x) for ||x||^2).

With ``fit_intercept=True`` (our addition; off by default here, as in the paper) the
kernel is k + 1 everywhere: f(x) = sum_j c_j k(x_j, x) + b with b = sum_j c_j, a bias
regularised like a weight (the feature map gains a constant coordinate 1), and
||x||^2 = k(x, x) + 1 in the step sizes.  The evaluations counted are those of k.
Otherwise the model is unchanged (passive).  A zero k(x, x) (a zero vector
under the linear or polynomial kernel) gives no PA step (tau would be
infinite) and no PA-I step (it cannot move the margin; as the linear PA of
:mod:`refsvm.linear`), and l / (1 / (2C)) for PA-II.

Kernel evaluations: one per support vector for f(x) (in increasing id), plus
k(x, x) on rounds with l > 0.  Prediction is not counted.  The compiled twin
is :mod:`refsvm.kernel_pa._kernel_pa`.

References
----------
K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer, "Online
Passive-Aggressive Algorithms", JMLR 7, 2006 (Sec. 3, Eqs. for PA, PA-I,
PA-II; Sec. 7 kernel form).  Used as a baseline by Z. Wang and S. Vucetic,
"Fast Online Training of Ramp Loss Support Vector Machines", ICDM 2009.
"""

from __future__ import annotations

import numpy as np

from ..core.departures import resolve
from ..core.kernels import Kernel, get_row, rows_from_state, rows_to_state, stack_rows
from ..core.pa import PA_VARIANTS, pa_step, variant_code
from ..core.stream import StreamLearner
from .departures import DEPARTURES

__all__ = ["KernelPA"]


class KernelPA(StreamLearner):
    """Kernel PA state (bias-free): PA, PA-I or PA-II on a kernel expansion.

    Parameters
    ----------
    n_features : int
    sparse : bool
    C : float
        Aggressiveness of PA-I / PA-II (unused by PA).
    variant : {0, 1, 2} or a name of :data:`refsvm.core.pa.PA_VARIANTS`
        PA (0), PA-I (1, also "PA-1"), PA-II (2, also "PA-2").
    kernel, gamma, degree, coef0
        See :class:`refsvm.core.kernels.Kernel`.
    fit_intercept : bool
        Learn a regularised bias through the kernel k + 1 (module docstring).
    departures : None, "default", "paper" or dict
        The family's departures (:mod:`refsvm.kernel_pa.departures`): none, so every
        setting runs the printed step; kept as ``departures``.

    Examples
    --------
    An example already classified with margin y f(x) >= 1 is passive (``step`` returns
    0); a margin error joins the expansion with c = tau y, tau = min(C, loss / k(x, x)):

    >>> import numpy as np
    >>> from refsvm.kernel_pa.kernel_pa import KernelPA
    >>> pa = KernelPA(1, C=0.3, variant="PA-I", kernel="linear")
    >>> pa.step(np.array([2.0]), +1)      # loss 1, k(x, x) = 4: tau = 1/4
    1
    >>> pa.step(np.array([10.0]), +1)     # f = 0.25 * 2 * 10 = 5: passive
    0
    >>> pa.step(np.array([1.0]), -1)      # loss 1.5: tau = min(0.3, 1.5) = C
    1
    >>> pa.get_state()["coef"]
    array([ 0.25, -0.3 ])
    """

    _tracer = None  # refsvm.core.trace: who hears the printed lines (None: nobody)

    def __init__(self, n_features, sparse=False, C=1.0, variant=1, kernel="rbf", gamma=1.0,
                 degree=3, coef0=0.0, fit_intercept=False, departures=None):
        super().__init__(n_features, sparse)
        self.departures = resolve(DEPARTURES, departures)
        self.C = float(C)
        self.variant = (variant_code(variant, PA_VARIANTS) if isinstance(variant, str)
                        else int(variant))
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.fit_intercept = bool(fit_intercept)
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

    def _k(self, a, b):
        """k(a, b), counted; k(a, b) + 1 with ``fit_intercept``."""
        v = self.kernel(a, b)
        if self.fit_intercept:
            v = v + 1.0
        return v

    def intercept(self):
        """b = sum_j c_j with ``fit_intercept``, else 0.0: f(x) = sum_j c_j k(x_j, x) + b."""
        if not self.fit_intercept:
            return 0.0
        b = 0.0
        for c in self.coef:
            b += c
        return b

    def step(self, x, y):
        """One round: suffer the hinge loss, then the PA update; 1 if x joined the model."""
        y = float(y)
        f = 0.0
        for xj, cj in zip(self.rows, self.coef):
            f += cj * self._k(xj, x)
        loss = max(0.0, 1.0 - y * f)            # hinge loss
        self._tracer is None or self._tracer("Kernel PA: loss", f=f, loss=loss)
        if y * f <= 0.0:
            self.n_mistakes += 1
        self.cumulative_loss += loss
        changed = 0
        if loss > 0.0:
            kxx = self._k(x, x)                 # ||x||^2 in the feature space
            tau = pa_step(self.variant, loss, kxx, self.C)
            if tau > 0.0:
                self.rows.append(x)
                self.ids.append(self.n_seen)
                self.coef.append(tau * y)
                self.n_updates += 1
                self._tracer is None or self._tracer("Kernel PA: update", tau=tau, kxx=kxx,
                                                    margin=y * f + tau * kxx)
                changed = 1
        self.n_seen += 1
        return changed

    def decision_function(self, X):
        out = np.zeros(X.shape[0])
        for r in range(X.shape[0]):
            x = get_row(X, r)
            f = 0.0
            for xj, cj in zip(self.rows, self.coef):
                f += cj * self.kernel.value(xj, x)
            out[r] = f
        if self.fit_intercept:
            out += self.intercept()
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

    # ---- persistence (the format both twins share) ----
    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C,
                    variant=self.variant, kernel=k.kind, gamma=k.gamma, degree=k.degree,
                    coef0=k.coef0, fit_intercept=self.fit_intercept,
                    departures=dict(self.departures))

    def save_state(self):
        data = self.get_state()
        data.update(rows_to_state(stack_rows(self.rows, self.n_features, self.sparse),
                                  self.sparse))
        return data

    def load_state(self, data):
        n = len(data["support"])
        self.rows = rows_from_state(data, n, self.sparse)
        self.ids = [int(i) for i in data["support"]]
        self.coef = [float(c) for c in data["coef"]]
        self.n_seen = int(data["n_seen"])
        self.n_updates = int(data["n_updates"])
        self.n_mistakes = int(data["n_mistakes"])
        self.cumulative_loss = float(data["cumulative_loss"])
        self.kernel.n_evals = int(data["n_kernel_evals"])

    def __reduce__(self):
        from ..core.stream import restore_state

        return (restore_state, (type(self), self.init_params(), self.save_state()))
