"""Bagnell's online linear SVM (Pegasos), in readable Python (the reference).

J. A. Bagnell, *Notes on efficient online SVM implementation* (2010;
``shared/papers/003``), Algorithm 1, and the "tricks" paragraph (mini-batches);
ALGORITHMS.md §4.  :class:`PegasosState` follows the pseudocode line by line and
keeps w plainly; its compiled twin, :mod:`refsvm.linear._online_linear_svm`,
stores w = s·v (the core's ``ScaledVector``) so that the shrinkage of every step
costs O(1).  The estimator is :class:`refsvm.linear.estimators.OnlineLinearSVM`.
"""

from __future__ import annotations

import numpy as np

from ..core.departures import resolve
from ..core.kernels import add_scaled, dot
from ..core.stream import StreamLearner
from .departures import DEPARTURES

__all__ = ["PegasosState"]


class PegasosState(StreamLearner):
    """Online linear SVM, Algorithm 1 of Bagnell's notes (Pegasos), with mini-batches.

    Minimises λ/2 ||w||² + (1/T) Σ hinge(w; x_t, y_t).  With ``batch_size`` k
    the examples are taken k at a time and the step uses their averaged
    sub-gradient ("tricks" paragraph of Bagnell's notes); the margins of a batch are all
    tested against the w at its start.  A batch left incomplete at the end of
    a stream waits for the next examples (``flush()`` applies it as a batch of
    its actual size).  ``step`` returns 1 when it took a step (the batch was
    complete), else 0.

    Parameters
    ----------
    n_features : int
    sparse : bool
    lam : float
        Regularisation λ > 0.
    project : bool
        Project onto the ball of radius 1/√λ after each step (lines 10–12).
    average : bool
        Keep the average of all iterates w_1..w_T (line 16); ``w_avg``.
    batch_size : int
        k ≥ 1 examples per step.
    fit_intercept : bool
        A bias as the weight of an extra constant feature 1 (regularised and
        projected with w, as the augmented-feature reading implies).
    departures : None, "paper" or dict
        The linear family's departures (:mod:`refsvm.linear.departures`), kept as
        ``departures``; none concerns this algorithm: the projection, the average and
        the mini-batches are Bagnell's own options (Algorithm 1 and its tricks), so
        every setting runs the same printed lines.

    Examples
    --------
    At t = 1 the shrinkage factor 1 − α_t λ is 0: the first step forgets w and
    jumps to α_1 y x = x/λ; the projection brings it back onto ||w|| = 1/√λ.

    >>> import numpy as np
    >>> from refsvm.linear.online_linear_svm import PegasosState
    >>> state = PegasosState(2, lam=0.25, project=True)
    >>> state.step(np.array([1.0, 0.0]), 1.0)
    1
    >>> state.get_state()["w"]          # x/λ = (4, 0), projected onto radius 1/√λ = 2
    array([2., 0.])
    >>> state.step(np.array([0.0, 0.5]), -1.0)   # t = 2: w ← w/2 − 2·(0, 0.5)
    1
    >>> state.get_state()["w"]
    array([ 1., -1.])
    """

    _tracer = None  # refsvm.core.trace: who hears the printed lines (None: nobody)

    def __init__(self, n_features, sparse=False, lam=1e-4, project=False, average=False,
                 batch_size=1, fit_intercept=False, departures=None):
        super().__init__(n_features, sparse)
        self.departures = resolve(DEPARTURES, departures)
        self.lam = float(lam)
        self.project = bool(project)
        self.average = bool(average)
        self.batch_size = int(batch_size)
        self.fit_intercept = bool(fit_intercept)
        self.w = np.zeros(self.n_features)
        self.b = 0.0
        self.t = 0  # examples seen
        self.n_updates = 0  # steps taken (the model changed)
        self.n_mistakes = 0  # y f(x) <= 0 before the example (prequential mistakes)
        self.n_steps = 0  # t − 1 in the pseudocode: steps taken so far
        self.w_avg = np.zeros(self.n_features)
        self.b_avg = 0.0
        # the batch being gathered: Σ y x over its margin violators, and its size
        self.grad_w = np.zeros(self.n_features)
        self.grad_b = 0.0
        self.n_batch = 0

    def step(self, x, y):
        self.t += 1
        margin = y * (dot(self.w, x) + self.b)
        if margin <= 0.0:
            self.n_mistakes += 1  # the prediction sign(f) was wrong (or f = 0)
        # line 5: if y_t wᵀx_t < 1 (margin violation) the example enters the sub-gradient
        self._tracer is None or self._tracer("Alg. 1 line 5", margin=margin)
        if margin < 1.0:
            add_scaled(self.grad_w, y, x)
            if self.fit_intercept:
                self.grad_b += y
        self.n_batch += 1
        if self.n_batch == self.batch_size:
            return self.flush()
        return 0

    def flush(self):
        """Take one step with the examples gathered so far (none: nothing happens).
        Returns 1 if a step was taken, else 0."""
        if self.n_batch == 0:
            return 0
        t = self.n_steps + 1
        # line 4: α_t = 1/(λ t)
        eta = 1.0 / (self.lam * t)
        self._tracer is None or self._tracer("Alg. 1 line 4", t=t, alpha_t=eta)
        # lines 6/8: w ← (1 − α_t λ) w + α_t · (1/k) Σ_{violators} y x
        shrink = 1.0 - eta * self.lam
        scale = eta / self.n_batch
        self.w = shrink * self.w + scale * self.grad_w
        if self.fit_intercept:
            self.b = shrink * self.b + scale * self.grad_b
        self._tracer is None or self._tracer("Alg. 1 line 6" if np.any(self.grad_w) or self.grad_b
                                              else "Alg. 1 line 8", w=self.w, b=self.b)
        # lines 10–12: if wᵀw > 1/λ: w ← w / (√(wᵀw) √λ)
        if self.project:
            norm2 = float(np.dot(self.w, self.w)) + self.b * self.b
            if norm2 > 1.0 / self.lam:
                # an overflowed ‖w‖² (X near 1e154 or beyond) has no projection in float64:
                # NaN marks the overflow (the estimators raise and restore the model)
                factor = (1.0 / (np.sqrt(norm2) * np.sqrt(self.lam)) if np.isfinite(norm2)
                          else np.nan)
                self.w = factor * self.w
                self.b = factor * self.b
                self._tracer is None or self._tracer("Alg. 1 lines 10-12", w=self.w, norm2=norm2)
        # line 16 (optional): the average of all the w's computed
        if self.average:
            self.w_avg += (self.w - self.w_avg) / t
            self.b_avg += (self.b - self.b_avg) / t
            self._tracer is None or self._tracer("Alg. 1 line 16", w_avg=self.w_avg)
        # line 13: t ← t + 1
        self.n_steps = t
        self.n_updates += 1
        self._tracer is None or self._tracer("Alg. 1 line 13", t=t + 1)
        self.grad_w[:] = 0.0
        self.grad_b = 0.0
        self.n_batch = 0
        return 1

    def decision_function(self, X):
        """f(x) = <w, x> + b (the averaged iterate with ``average``) for every row."""
        if self.average:
            return np.asarray(X @ self.w_avg).ravel() + self.b_avg
        return np.asarray(X @ self.w).ravel() + self.b

    def objective(self, X, y):
        """λ/2 ||w||² + mean hinge loss on (X, y) (the bias counts in the norm
        when it is a constant feature)."""
        margins = y * (np.asarray(X @ self.w).ravel() + self.b)
        norm2 = float(np.dot(self.w, self.w)) + self.b * self.b
        return 0.5 * self.lam * norm2 + float(np.mean(np.maximum(0.0, 1.0 - margins)))

    def get_state(self):
        """The learned numbers, for comparing the twins (w as one vector)."""
        return {
            "w": self.w.copy(),
            "b": self.b,
            "t": self.t,
            "n_updates": self.n_updates,
            "n_mistakes": self.n_mistakes,
            "n_steps": self.n_steps,
            "w_avg": self.w_avg.copy(),
            "b_avg": self.b_avg,
            "grad_w": self.grad_w.copy(),
            "grad_b": self.grad_b,
            "n_batch": self.n_batch,
        }

    # ---- persistence protocol ----
    # The shared format stores w as scale · direction with the direction's squared
    # norm, the twin's representation; the reference, which keeps w plainly, saves
    # scale 1 and loads w = scale · direction.  A twin saved and loaded into a twin
    # resumes bit for bit.
    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "lam": self.lam,
                "project": self.project, "average": self.average,
                "batch_size": self.batch_size, "fit_intercept": self.fit_intercept,
                "departures": dict(self.departures)}

    def save_state(self):
        data = self.get_state()
        w = data.pop("w")
        data.update(w_scale=1.0, w_direction=w, w_direction_sqnorm=float(np.dot(w, w)))
        return data

    def load_state(self, data):
        self.w = float(data["w_scale"]) * np.asarray(data["w_direction"], dtype=np.float64)
        self.b = float(data["b"])
        self.t = int(data["t"])
        self.n_updates = int(data["n_updates"])
        self.n_mistakes = int(data["n_mistakes"]) if "n_mistakes" in data else 0
        self.n_steps = int(data["n_steps"])
        self.w_avg[:] = data["w_avg"]
        self.b_avg = float(data["b_avg"])
        self.grad_w[:] = data["grad_w"]
        self.grad_b = float(data["grad_b"])
        self.n_batch = int(data["n_batch"])
