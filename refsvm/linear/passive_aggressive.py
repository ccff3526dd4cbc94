"""Perceptron, PA / PA-I / PA-II and PAm, in readable Python (the reference).

The linear algorithms of the slides of Lee, Tseng, Chen, *Online Nonlinear SVM for
Large-Scale Classification* (``shared/papers/002``; ALGORITHMS.md §3), with the PA
step sizes of Crammer et al. (JMLR 2006).  Each ``*State`` class is one algorithm:
the body of ``step`` follows the slide line by line.  The compiled twin,
:mod:`refsvm.linear._passive_aggressive`, has the same classes, attributes and
methods; the estimators are in :mod:`refsvm.linear.estimators`.

References
----------
.. [LTC] Y.-J. Lee, Y.-C. Tseng, I.-F. Chen, "Online Nonlinear SVM for
   Large-Scale Classification" (slides; ``shared/papers/002``): Perceptron,
   PA / PA-1 / PA-2, PAm (quasi-LDA proximal model).
.. [CDK] K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer,
   "Online Passive-Aggressive Algorithms", JMLR 7, 2006.
"""

from __future__ import annotations

import numpy as np

from ..core.departures import resolve
from ..core.kernels import SparseRow, add_scaled, dot, get_row, sqnorm
from ..core.pa import pa_step
from ..core.stream import StreamLearner, row_is_bad
from .departures import DEPARTURES
from .departures.variance_roundoff import variance

__all__ = ["LinearModel", "PAState", "PAmState", "PerceptronState"]


class LinearModel(StreamLearner):
    """What the linear states share: f(x) = <w, x> + b and the counters.

    Attributes
    ----------
    w : ndarray of shape (n_features,)
    b : float
    t : int
        Examples seen.
    n_updates : int
        Rounds on which the model changed.
    n_mistakes : int
        Rounds whose example the model before it misclassified (y f(x) <= 0), counted
        where the step computes f(x) anyway: the prequential (online) mistake count.
    departures : dict
        The family's departures, resolved (:mod:`refsvm.linear.departures`; the
        constructor takes None, "paper" or a dict).  Only PAm reads one.
    """

    _tracer = None  # refsvm.core.trace: who hears the printed lines (None: nobody)

    def __init__(self, n_features, sparse=False, fit_intercept=False, departures=None):
        super().__init__(n_features, sparse)
        self.departures = resolve(DEPARTURES, departures)
        self.fit_intercept = bool(fit_intercept)
        self.w = np.zeros(self.n_features)
        self.b = 0.0
        self.t = 0
        self.n_updates = 0
        self.n_mistakes = 0

    def decision_function(self, X):
        """f(x) = <w, x> + b for every row."""
        return np.asarray(X @ self.w).ravel() + self.b

    def get_state(self):
        """The learned numbers, for comparing the twins."""
        return {"w": self.w.copy(), "b": self.b, "t": self.t, "n_updates": self.n_updates,
                "n_mistakes": self.n_mistakes}

    # ---- persistence protocol (the twin saves and loads the same dict) ----
    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse,
                "fit_intercept": self.fit_intercept, "departures": dict(self.departures)}

    def save_state(self):
        return self.get_state()

    def load_state(self, data):
        self.w[:] = data["w"]
        self.b = float(data["b"])
        self.t = int(data["t"])
        self.n_updates = int(data["n_updates"])
        # states saved before the count existed load with none counted
        self.n_mistakes = int(data["n_mistakes"]) if "n_mistakes" in data else 0


# --------------------------------------------------------------------------- Perceptron
class PerceptronState(LinearModel):
    """Rosenblatt's Perceptron with bias, as on the slides (slide "Perceptron Algorithm").

    ``R = max_j ||x_j||`` is the radius of the data; here it is the running
    maximum over the examples seen so far (when the estimator's ``fit`` sees
    the whole set first, it starts R at the maximum, as the slides do).

    Parameters
    ----------
    n_features : int
    sparse : bool
    eta : float
        Learning rate η > 0.
    R : float
        Initial radius (0 for a stream).
    departures : None, "paper" or dict
        The family's departures (:mod:`refsvm.linear.departures`); the Perceptron has none.

    Examples
    --------
    The bias moves by η y R², not by η y: it lives on the scale of the data.

    >>> import numpy as np
    >>> from refsvm.linear.passive_aggressive import PerceptronState
    >>> state = PerceptronState(2, eta=1.0)
    >>> state.step(np.array([3.0, 4.0]), 1.0)     # f = 0: a mistake, R² = 25
    1
    >>> state.get_state()["w"], state.b
    (array([3., 4.]), 25.0)
    >>> state.step(np.array([1.0, 0.0]), 1.0)     # f = 28 > 0: no mistake
    0
    """

    def __init__(self, n_features, sparse=False, eta=1.0, R=0.0, departures=None):
        super().__init__(n_features, sparse, fit_intercept=True, departures=departures)
        self.eta = float(eta)
        self.R2 = float(R) ** 2  # R^2, the only form in which R is used

    def step(self, x, y):
        self.t += 1
        # R = max_j ||x_j||   (kept as R^2, running over the stream)
        self.R2 = max(self.R2, sqnorm(x))
        self._tracer is None or self._tracer("Perceptron: if", R2=self.R2,
                                                margin=y * (dot(self.w, x) + self.b))
        # if y_t (<w^k, x^t> + b_k) <= 0          (a mistake)
        if y * (dot(self.w, x) + self.b) <= 0:
            self.n_mistakes += 1
            # w^{k+1} = w^k + η y_t x^t
            add_scaled(self.w, self.eta * y, x)
            # b_{k+1} = b_k + η y_t R^2
            self.b += self.eta * y * self.R2
            self.n_updates += 1  # k = k + 1
            self._tracer is None or self._tracer("Perceptron: update", w=self.w, b=self.b)
            return 1
        return 0

    @property
    def R(self):
        return float(np.sqrt(self.R2))

    def scan_radius(self, X, limit=np.inf):
        """R² = max_j ||x_j||² over the rows of X, before a pass (the slides' R is the
        radius of the whole training set; ``fit`` sets ``R2`` from it).  Each row is
        checked as ``run_checked`` checks it (:func:`refsvm.core.stream.row_is_bad`), so
        this read of X is also the input check of the passes after it.

        Returns ``(R2, n_done)``: the maximum over rows ``0 .. n_done - 1``; when
        ``n_done < X.shape[0]`` row ``n_done`` is bad and was not read further.  The
        state is not changed."""
        R2 = 0.0
        for i in range(X.shape[0]):
            x = get_row(X, i)
            if row_is_bad(x, limit, self.n_features):
                return R2, i
            R2 = max(R2, sqnorm(x))
        return R2, X.shape[0]

    def get_state(self):
        return {**super().get_state(), "R2": self.R2}

    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "eta": self.eta,
                "departures": dict(self.departures)}

    def load_state(self, data):
        super().load_state(data)
        self.R2 = float(data["R2"])


# --------------------------------------------------------------------------- PA
class PAState(LinearModel):
    """Passive-Aggressive PA / PA-I / PA-II (Crammer et al. 2006), as on the slides.

    Bias-free by default; with ``fit_intercept`` the bias is the weight of an
    extra constant feature 1 (so ||x||² gains 1).  A zero example
    (||x||² = 0) cannot move the margin and is skipped by PA and PA-I
    (their step would divide by zero); PA-II's denominator is positive.

    Parameters
    ----------
    n_features : int
    sparse : bool
    variant : {0, 1, 2}
        PA, PA-I, PA-II (``refsvm.core.pa.PA_VARIANTS`` maps the names).
    C : float
        Aggressiveness (PA-I, PA-II).
    fit_intercept : bool
    departures : None, "paper" or dict
        The family's departures (:mod:`refsvm.linear.departures`); PA has none.

    Examples
    --------
    PA-I takes the step that zeroes the loss, capped at C:

    >>> import numpy as np
    >>> from refsvm.linear.passive_aggressive import PAState
    >>> state = PAState(2, variant=1, C=0.25)
    >>> x = np.array([1.0, 1.0])
    >>> state.step(x, 1.0)        # ℓ = 1, ℓ/||x||² = 0.5, capped: τ = C = 0.25
    1
    >>> state.get_state()["w"]
    array([0.25, 0.25])
    >>> state.step(x, 1.0), state.step(x, 1.0)   # ℓ = 0.5, τ = 0.25; then ℓ = 0: passive
    (1, 0)
    """

    def __init__(self, n_features, sparse=False, variant=1, C=1.0, fit_intercept=False,
                 departures=None):
        super().__init__(n_features, sparse, fit_intercept, departures)
        self.variant = int(variant)
        self.C = float(C)

    def step(self, x, y):
        self.t += 1
        margin = y * (dot(self.w, x) + self.b)  # y_t <w_t, x_t>
        if margin <= 0.0:
            self.n_mistakes += 1  # the prediction sign(f) was wrong (or f = 0)
        # ℓ_t = max(0, 1 - y_t <w_t, x_t>)      (hinge loss; suffer it)
        loss = max(0.0, 1.0 - margin)
        self._tracer is None or self._tracer("PA: loss", margin=margin, loss=loss)
        if loss == 0.0:
            return 0  # passive: ℓ_t = 0
        sq = sqnorm(x) + (1.0 if self.fit_intercept else 0.0)
        # τ_t = ℓ/||x||² (PA), min(C, ℓ/||x||²) (PA-I), ℓ/(||x||² + 1/(2C)) (PA-II)
        tau = pa_step(self.variant, loss, sq, self.C)
        self._tracer is None or self._tracer("PA: step size", tau=tau, sqnorm=sq)
        if tau == 0.0:
            return 0  # a zero example cannot move the margin
        # w_{t+1} = w_t + τ_t y_t x_t
        add_scaled(self.w, tau * y, x)
        if self.fit_intercept:
            self.b += tau * y
        self.n_updates += 1
        self._tracer is None or self._tracer("PA: update", w=self.w, b=self.b,
                                              margin=y * (dot(self.w, x) + self.b))
        return 1

    def init_params(self):
        return {**super().init_params(), "variant": self.variant, "C": self.C}


# --------------------------------------------------------------------------- PAm
class PAmState(LinearModel):
    """PA with a proximal model, PAm / PAm-1 / PAm-2 (quasi-LDA proximal classifier).

    The proximal classifier of round t is the quasi-LDA direction
    (w_p)_i = ((m₊)_i − (m₋)_i) / ((s₊)_i + (s₋)_i), from per-class running
    means m and unbiased variances s = Σx²/(n−1) − n/(n−1)·m², kept in O(d).

    Readings (ALGORITHMS.md §3; the slides are silent): the statistics of
    round t include x_t; w_p = 0 until each class has two examples (the
    variance needs n ≥ 2); a coordinate whose pooled variance is 0 gets
    (w_p)_i = 0 (the departure ``variance_roundoff`` also reads a computed variance
    within its rounding error bound as 0: :mod:`refsvm.linear.departures.variance_roundoff`;
    "paper": the printed variance); only
    rounds with ℓ_t > 0 update (passive otherwise, as PA); α_t is clipped at 0
    from below (it multiplies an inequality).  With ``fit_intercept`` the
    proximal bias is the midpoint b_p = −w_pᵀ(m₊ + m₋)/2.

    Parameters
    ----------
    n_features : int
    sparse : bool
    variant : {0, 1, 2}
        PAm, PAm-1, PAm-2 (``refsvm.core.pa.PAM_VARIANTS`` maps the names).
    C : float
        Aggressiveness (PAm-1, PAm-2).
    gamma : float
        Weight γ ≥ 0 of the proximal model.
    fit_intercept : bool
    departures : None, "paper" or dict
        The family's departures (:mod:`refsvm.linear.departures`); ``variance_roundoff``
        (PAm's only one; "paper": the printed variance).

    Attributes
    ----------
    frozen : bool
        When True, ``step`` no longer adds examples to the class statistics, so the
        proximal model stays what it is (the slides build it in the first epoch and then
        freeze it; the estimator's ``freeze_proximal``).

    Examples
    --------
    Once each class has two examples, every update also moves w by γ w_p:

    >>> import numpy as np
    >>> from refsvm.linear.passive_aggressive import PAmState
    >>> state = PAmState(2, variant=1, gamma=0.5)
    >>> X = np.array([[2.0, 1.0], [3.0, 1.0], [-2.0, 1.0], [-3.0, 1.0]])
    >>> for x, y in zip(X, [1.0, 1.0, -1.0, -1.0]):
    ...     _ = state.step(x, y)
    >>> wp, bp = state.proximal()      # m₊ − m₋ = (5, 0), s₊ + s₋ = (1, 0)
    >>> wp
    array([5., 0.])
    >>> sorted(state.get_state())[:4]
    ['b', 'frozen', 'n_mistakes', 'n_neg']
    """

    def __init__(self, n_features, sparse=False, variant=1, C=1.0, gamma=0.1,
                 fit_intercept=False, departures=None):
        super().__init__(n_features, sparse, fit_intercept, departures)
        self.variance_roundoff = self.departures["variance_roundoff"]
        self.variant = int(variant)
        self.C = float(C)
        self.gamma = float(gamma)
        d = self.n_features
        self.frozen = False  # True: the class statistics (so w_p, b_p) stop changing
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
        # (s_±)_i = Σ x_i² / (n−1) − n/(n−1) · (m_±)_i²  (departure: 0 within its round-off)
        s_pos = variance(self.sumsq_pos, self.n_pos, m_pos, self.variance_roundoff)
        s_neg = variance(self.sumsq_neg, self.n_neg, m_neg, self.variance_roundoff)
        denom = s_pos + s_neg
        wp = np.zeros(d)
        ok = denom > 0
        wp[ok] = (m_pos[ok] - m_neg[ok]) / denom[ok]
        bp = -0.5 * float(np.dot(wp, m_pos + m_neg)) if self.fit_intercept else 0.0
        return wp, bp

    def _add_statistics(self, x, y):
        """Keep m_±, Σx² of each class online (P^t, N^t include round t)."""
        if y > 0:
            self.n_pos += 1
            add_scaled(self.sum_pos, 1.0, x)
            add_scaled(self.sumsq_pos, 1.0, _squared(x))
        else:
            self.n_neg += 1
            add_scaled(self.sum_neg, 1.0, x)
            add_scaled(self.sumsq_neg, 1.0, _squared(x))

    def step(self, x, y):
        self.t += 1
        if not self.frozen:  # (the slides freeze the proximal model after epoch 1)
            self._add_statistics(x, y)
        self._tracer is None or self._tracer("PAm: statistics", n_pos=self.n_pos, n_neg=self.n_neg)
        margin = y * (dot(self.w, x) + self.b)
        if margin <= 0.0:
            self.n_mistakes += 1
        loss = max(0.0, 1.0 - margin)
        self._tracer is None or self._tracer("PAm: loss", margin=margin, loss=loss)
        if loss == 0.0:
            return 0  # passive round
        wp, bp = self.proximal()
        sq = sqnorm(x) + (1.0 if self.fit_intercept else 0.0)
        # α_t = (ℓ_t − γ y_t <w_p, x_t>) / ||x_t||²  (PAm; PAm-1: min{C, ·}; PAm-2: + 1/(2C))
        numer = loss - self.gamma * y * (dot(wp, x) + bp)
        alpha = max(pa_step(self.variant, numer, sq, self.C), 0.0)
        self._tracer is None or self._tracer("PAm: step size", w_p=wp, alpha=alpha)
        # w_{t+1} = w_t + γ w_p + α_t y_t x_t
        self.w += self.gamma * wp
        add_scaled(self.w, alpha * y, x)
        if self.fit_intercept:
            self.b += self.gamma * bp + alpha * y
        self.n_updates += 1
        self._tracer is None or self._tracer("PAm: update", w=self.w, b=self.b)
        return 1

    def get_state(self):
        return {
            **super().get_state(),
            "frozen": self.frozen,
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "sum_pos": self.sum_pos.copy(),
            "sum_neg": self.sum_neg.copy(),
            "sumsq_pos": self.sumsq_pos.copy(),
            "sumsq_neg": self.sumsq_neg.copy(),
        }

    def init_params(self):
        return {**super().init_params(), "variant": self.variant, "C": self.C,
                "gamma": self.gamma}

    def load_state(self, data):
        super().load_state(data)
        self.frozen = bool(data["frozen"]) if "frozen" in data else False
        self.n_pos = int(data["n_pos"])
        self.n_neg = int(data["n_neg"])
        for name in ("sum_pos", "sum_neg", "sumsq_pos", "sumsq_neg"):
            getattr(self, name)[:] = data[name]


def _squared(x):
    """The element-wise square of a row (same kind of row)."""
    if isinstance(x, SparseRow):
        return SparseRow(x.indices, x.data * x.data)
    return x * x
