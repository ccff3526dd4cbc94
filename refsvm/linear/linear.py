"""The linear online family, in readable Python (the reference).

Each ``*State`` class below is one algorithm, written to be read beside its
paper: the body of ``step`` follows the printed pseudocode line by line.  The
compiled twins in :mod:`refsvm._core` have the same names, attributes and
methods.  The scikit-learn estimators at the end of this module
(:class:`Perceptron`, :class:`PassiveAggressive`,
:class:`ProximalPassiveAggressive`, :class:`OnlineLinearSVM`) wrap either twin.

References
----------
.. [LTC] Y.-J. Lee, Y.-C. Tseng, I.-F. Chen, "Online Nonlinear SVM for
   Large-Scale Classification" (slides; ``shared/papers/002``): Perceptron,
   PA / PA-1 / PA-2, PAm (quasi-LDA proximal model).
.. [CDK] K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer,
   "Online Passive-Aggressive Algorithms", JMLR 7, 2006.
.. [B] J. A. Bagnell, "Notes on efficient online SVM implementation", 2010
   (``shared/papers/003``), Algorithm 1 (Pegasos-style online linear SVM).
"""

from __future__ import annotations

import numpy as np

from ..core.kernels import add_scaled, dot, get_row, sqnorm

PA_VARIANTS = {"PA": 0, "PA-I": 1, "PA-II": 2}


class _LinearState:
    """What every linear state shares: w, b, counters, prediction, the stream loop."""

    def __init__(self, n_features, sparse=False, fit_intercept=False):
        self.n_features = int(n_features)
        self.sparse = bool(sparse)
        self.fit_intercept = bool(fit_intercept)
        self.w = np.zeros(self.n_features)
        self.b = 0.0
        self.t = 0  # examples seen
        self.n_updates = 0  # rounds on which the model changed

    def run(self, X, y, order):
        """Feed the rows of X in ``order``; return the number of updates made."""
        before = self.n_updates
        for i in order:
            self.step(get_row(X, i), float(y[i]))
        return self.n_updates - before

    def decision_function(self, X):
        """f(x) = <w, x> + b for every row."""
        return np.asarray(X @ self.w).ravel() + self.b

    def get_state(self):
        return {"w": self.w.copy(), "b": self.b, "t": self.t, "n_updates": self.n_updates}


# --------------------------------------------------------------------------- Perceptron
class PerceptronState(_LinearState):
    """Rosenblatt's Perceptron with bias, as on the slides (Lee, Tseng, Chen slides).

    ``R = max_j ||x_j||`` is the radius of the data; here it is the running
    maximum over the examples seen so far (when the estimator's ``fit`` sees
    the whole set first, it starts R at the maximum, as the slides do).

    Parameters
    ----------
    eta : float
        Learning rate η > 0.
    R : float
        Initial radius (0 for a stream).
    """

    def __init__(self, n_features, sparse=False, eta=1.0, R=0.0):
        super().__init__(n_features, sparse, fit_intercept=True)
        self.eta = float(eta)
        self.R2 = float(R) ** 2  # R^2, the only form in which R is used

    def step(self, x, y):
        # R = max_j ||x_j||   (kept as R^2, running over the stream)
        self.R2 = max(self.R2, sqnorm(x))
        # if y_t (<w^k, x^t> + b_k) <= 0          (a mistake)
        if y * (dot(self.w, x) + self.b) <= 0:
            # w^{k+1} = w^k + η y_t x^t
            add_scaled(self.w, self.eta * y, x)
            # b_{k+1} = b_k + η y_t R^2
            self.b += self.eta * y * self.R2
            # k = k + 1
            self.n_updates += 1
        self.t += 1

    @property
    def R(self):
        return float(np.sqrt(self.R2))

    def get_state(self):
        return {**super().get_state(), "R2": self.R2}


# --------------------------------------------------------------------------- PA
class PAState(_LinearState):
    """Passive-Aggressive PA / PA-I / PA-II (Crammer et al. 2006) as on the slides (Lee, Tseng, Chen slides).

    Bias-free by default; with ``fit_intercept`` the bias is the weight of an
    extra constant feature 1 (so ||x||^2 gains 1).  A zero example
    (||x||^2 = 0) cannot move the margin and is skipped by PA and PA-I
    (their step would divide by zero); PA-II's denominator is positive.

    Parameters
    ----------
    variant : {0, 1, 2}
        PA, PA-I, PA-II (``PA_VARIANTS`` maps the names).
    C : float
        Aggressiveness (PA-I, PA-II).
    """

    def __init__(self, n_features, sparse=False, variant=1, C=1.0, fit_intercept=False):
        super().__init__(n_features, sparse, fit_intercept)
        self.variant = int(variant)
        self.C = float(C)

    def step(self, x, y):
        self.t += 1
        # ℓ_t = max(0, 1 - y_t <w_t, x_t>)      (hinge loss; suffer it)
        loss = max(0.0, 1.0 - y * (dot(self.w, x) + self.b))
        if loss == 0.0:
            return  # passive
        sq = sqnorm(x) + (1.0 if self.fit_intercept else 0.0)
        # τ_t = ℓ/||x||² (PA), min(C, ℓ/||x||²) (PA-I), ℓ/(||x||² + 1/(2C)) (PA-II)
        if self.variant == 2:
            tau = loss / (sq + 0.5 / self.C)
        elif sq == 0.0:
            return
        elif self.variant == 1:
            tau = min(self.C, loss / sq)
        else:
            tau = loss / sq
        # w_{t+1} = w_t + τ_t y_t x_t
        add_scaled(self.w, tau * y, x)
        if self.fit_intercept:
            self.b += tau * y
        self.n_updates += 1


# --------------------------------------------------------------------------- PAm
class PAmState(_LinearState):
    """PA with a proximal model, PAm / PAm-1 / PAm-2 (Lee, Tseng, Chen slides) (quasi-LDA proximal classifier).

    The proximal classifier of round t is the quasi-LDA direction
    (w_p)_i = ((m₊)_i − (m₋)_i) / ((s₊)_i + (s₋)_i), from per-class running
    means m and unbiased variances s = Σx²/(n−1) − n/(n−1)·m², kept in O(d).

    Readings (ALGORITHMS.md §3; the slides are silent): the statistics of
    round t include x_t; w_p = 0 until each class has two examples (the
    variance needs n ≥ 2); a coordinate whose pooled variance is 0 gets
    (w_p)_i = 0; negative variances from rounding are clipped to 0; only
    rounds with ℓ_t > 0 update (passive otherwise, as PA); α_t is clipped at 0
    from below (it multiplies an inequality).  With ``fit_intercept`` the
    proximal bias is the midpoint b_p = −w_pᵀ(m₊ + m₋)/2.

    Parameters
    ----------
    variant : {0, 1, 2}
        PAm, PAm-1, PAm-2.
    C : float
        Aggressiveness (PAm-1, PAm-2).
    gamma : float
        Weight γ ≥ 0 of the proximal model.
    """

    def __init__(self, n_features, sparse=False, variant=1, C=1.0, gamma=0.1,
                 fit_intercept=False):
        super().__init__(n_features, sparse, fit_intercept)
        self.variant = int(variant)
        self.C = float(C)
        self.gamma = float(gamma)
        d = self.n_features
        self.n_pos = 0
        self.n_neg = 0
        self.sum_pos = np.zeros(d)
        self.sum_neg = np.zeros(d)
        self.sumsq_pos = np.zeros(d)
        self.sumsq_neg = np.zeros(d)

    def proximal(self):
        """(w_p, b_p) of the current round: the quasi-LDA direction and midpoint bias."""
        d = self.n_features
        if self.n_pos < 2 or self.n_neg < 2:
            return np.zeros(d), 0.0
        m_pos = self.sum_pos / self.n_pos
        m_neg = self.sum_neg / self.n_neg
        # (s_±)_i = Σ x_i² / (n−1) − n/(n−1) · (m_±)_i²
        s_pos = self.sumsq_pos / (self.n_pos - 1) - self.n_pos / (self.n_pos - 1) * m_pos**2
        s_neg = self.sumsq_neg / (self.n_neg - 1) - self.n_neg / (self.n_neg - 1) * m_neg**2
        denom = np.maximum(s_pos, 0.0) + np.maximum(s_neg, 0.0)
        wp = np.zeros(d)
        ok = denom > 0
        wp[ok] = (m_pos[ok] - m_neg[ok]) / denom[ok]
        bp = -0.5 * float(np.dot(wp, m_pos + m_neg)) if self.fit_intercept else 0.0
        return wp, bp

    def step(self, x, y):
        self.t += 1
        # keep m_±, Σx² of each class online (P^t, N^t include round t)
        if y > 0:
            self.n_pos += 1
            add_scaled(self.sum_pos, 1.0, x)
            add_scaled(self.sumsq_pos, 1.0, _squared(x))
        else:
            self.n_neg += 1
            add_scaled(self.sum_neg, 1.0, x)
            add_scaled(self.sumsq_neg, 1.0, _squared(x))
        loss = max(0.0, 1.0 - y * (dot(self.w, x) + self.b))
        if loss == 0.0:
            return  # passive round
        wp, bp = self.proximal()
        sq = sqnorm(x) + (1.0 if self.fit_intercept else 0.0)
        # α_t = (ℓ_t − γ y_t <w_p, x_t>) / ||x_t||²  (PAm; PAm-1: min{C, ·}; PAm-2: + 1/(2C))
        numer = loss - self.gamma * y * (dot(wp, x) + bp)
        if self.variant == 2:
            alpha = numer / (sq + 0.5 / self.C)
        elif sq == 0.0:
            alpha = 0.0
        elif self.variant == 1:
            alpha = min(self.C, numer / sq)
        else:
            alpha = numer / sq
        alpha = max(alpha, 0.0)
        # w_{t+1} = w_t + γ w_p + α_t y_t x_t
        self.w += self.gamma * wp
        add_scaled(self.w, alpha * y, x)
        if self.fit_intercept:
            self.b += self.gamma * bp + alpha * y
        self.n_updates += 1

    def get_state(self):
        return {
            **super().get_state(),
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "sum_pos": self.sum_pos.copy(),
            "sum_neg": self.sum_neg.copy(),
            "sumsq_pos": self.sumsq_pos.copy(),
            "sumsq_neg": self.sumsq_neg.copy(),
        }


def _squared(x):
    """The element-wise square of a row (same kind of row)."""
    if hasattr(x, "indices"):
        return type(x)(x.indices, x.data * x.data)
    return x * x


# --------------------------------------------------------------------------- Pegasos
class PegasosState(_LinearState):
    """Online linear SVM, Algorithm 1 of Bagnell's notes (Pegasos), with mini-batches.

    Minimises λ/2 ||w||² + (1/T) Σ hinge(w; x_t, y_t).  With ``batch_size`` k
    the examples are taken k at a time and the step uses their averaged
    sub-gradient ("tricks" paragraph of Bagnell's notes); the margins of a batch are all
    tested against the w at its start.  A batch left incomplete at the end of
    a stream waits for the next examples (``flush()`` applies it as a batch of
    its actual size).

    Parameters
    ----------
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
    """

    def __init__(self, n_features, sparse=False, lam=1e-4, project=False, average=False,
                 batch_size=1, fit_intercept=False):
        super().__init__(n_features, sparse, fit_intercept)
        self.lam = float(lam)
        self.project = bool(project)
        self.average = bool(average)
        self.batch_size = int(batch_size)
        self.n_steps = 0  # t − 1 in the pseudocode: steps taken so far
        self.w_avg = np.zeros(self.n_features)
        self.b_avg = 0.0
        # the batch being gathered: Σ y x over its margin violators, and its size
        self.grad_w = np.zeros(self.n_features)
        self.grad_b = 0.0
        self.n_batch = 0

    def step(self, x, y):
        self.t += 1
        # line 5: if y_t wᵀx_t < 1 (margin violation) the example enters the sub-gradient
        if y * (dot(self.w, x) + self.b) < 1.0:
            add_scaled(self.grad_w, y, x)
            if self.fit_intercept:
                self.grad_b += y
        self.n_batch += 1
        if self.n_batch == self.batch_size:
            self.flush()

    def flush(self):
        """Take one step with the examples gathered so far (none: nothing happens)."""
        if self.n_batch == 0:
            return
        t = self.n_steps + 1
        # line 4: α_t = 1/(λ t)
        eta = 1.0 / (self.lam * t)
        # lines 6/8: w ← (1 − α_t λ) w + α_t · (1/k) Σ_{violators} y x
        shrink = 1.0 - eta * self.lam
        scale = eta / self.n_batch
        self.w = shrink * self.w + scale * self.grad_w
        if self.fit_intercept:
            self.b = shrink * self.b + scale * self.grad_b
        # lines 10–12: if wᵀw > 1/λ: w ← w / (√(wᵀw) √λ)
        if self.project:
            norm2 = float(np.dot(self.w, self.w)) + self.b * self.b
            if norm2 > 1.0 / self.lam:
                factor = 1.0 / (np.sqrt(norm2) * np.sqrt(self.lam))
                self.w = factor * self.w
                self.b = factor * self.b
        # line 16 (optional): the average of all the w's computed
        if self.average:
            self.w_avg += (self.w - self.w_avg) / t
            self.b_avg += (self.b - self.b_avg) / t
        # line 13: t ← t + 1
        self.n_steps = t
        self.n_updates += 1
        self.grad_w[:] = 0.0
        self.grad_b = 0.0
        self.n_batch = 0

    def decision_function(self, X):
        if self.average:
            return np.asarray(X @ self.w_avg).ravel() + self.b_avg
        return super().decision_function(X)

    def objective(self, X, y):
        """λ/2 ||w||² + mean hinge loss on (X, y) (the bias counts in the norm
        when it is a constant feature)."""
        margins = y * (np.asarray(X @ self.w).ravel() + self.b)
        norm2 = float(np.dot(self.w, self.w)) + self.b * self.b
        return 0.5 * self.lam * norm2 + float(np.mean(np.maximum(0.0, 1.0 - margins)))

    def get_state(self):
        return {
            **super().get_state(),
            "n_steps": self.n_steps,
            "w_avg": self.w_avg.copy(),
            "b_avg": self.b_avg,
            "grad_w": self.grad_w.copy(),
            "grad_b": self.grad_b,
            "n_batch": self.n_batch,
        }
