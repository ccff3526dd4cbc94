"""StreamSVM with multiple balls (Rai, Daumé, Venkatasubramanian, Sec. 4.3).

The paper describes the variant in prose ("our algorithm chooses with each arriving
datapoint (that is not already enclosed in any of the balls) how the current L + 1
balls ... should be merged, resulting again into a set of L balls.  At the end, the
final set of L balls are merged together") and prints no algorithm; the merge policy
is ours (:class:`MultiBallStreamSVM`).  B = 1 is Algorithm 1
(:mod:`refsvm.stream_svm.stream_svm`).  Docs: ``docs/rai_daume_venkatasubramanian.rst``,
"Multiple balls".
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..core.kernels import Kernel, get_row, stack_rows
from ..core.stream import StreamLearner
from .departures import resolve_form
from .stored_rows import _copy_row, _pack, _unpack

__all__ = ["MultiBallStreamSVM", "merge_balls", "check_multi_ball"]


def check_multi_ball(departures):
    """``departures`` resolved; a ValueError for the printed ξ² (no printed form here)."""
    settings = resolve_form(departures)
    if not settings["consistent_xi2"]:
        raise ValueError("multiple balls (Sec. 4.3) have no printed form: "
                         "departures 'consistent_xi2' must stay True (not 'paper')")
    return settings


def merge_balls(D, Ra, Rb):
    """The smallest ball enclosing two balls at center distance D (Eqs. 4–6 generalised):
    ``(t, R)`` with the new center (1 − t)c_a + t c_b.  t = 0 when ball a contains ball b,
    t = 1 when b contains a; otherwise R = (D + R_a + R_b)/2 and t = (R − R_a)/D.  With
    R_b = 0 (b a point) this is Algorithm 1's step: t = ½(1 − R_a/D) = β."""
    if D + Rb <= Ra:
        return 0.0, Ra
    if D + Ra <= Rb:
        return 1.0, Rb
    R = 0.5 * (D + Ra + Rb)
    return (R - Ra) / D, R


class _Ball:
    """One ball: its center Σ λ_m φ̃(z_m) over its own points (rows ``members`` of the
    state, coefficients α_m = λ_m y_m), ‖w‖², ξ² = Σ λ_m²/C, radius R."""

    __slots__ = ("members", "alpha", "wnorm2", "xi2", "R")

    def __init__(self, members, alpha, wnorm2, xi2, R):
        self.members, self.alpha = members, alpha
        self.wnorm2, self.xi2, self.R = wnorm2, xi2, R


class MultiBallStreamSVM(StreamLearner):
    """StreamSVM with B balls (Sec. 4.3).

    Every point belongs to exactly one ball, so the e-parts of different balls are
    orthogonal and the distance of two centers is
    D² = ‖w_a‖² + ‖w_b‖² − 2⟨w_a, w_b⟩ + ξ_a² + ξ_b²; the inner products ⟨w_a, w_b⟩ are
    kept in a B × B matrix P, updated linearly on every merge (no kernel evaluation).

    Merge policy (the paper leaves it open): a point inside some ball (d < R) is
    discarded.  Otherwise, while fewer than B balls exist, the point becomes a ball of
    radius 0; then, among the B + 1 objects (the B balls and the point as a ball of
    radius 0), the **pair whose enclosing ball is smallest** is merged
    (:func:`merge_balls`; the first such pair in index order on ties, the point last), so
    B balls remain.  At the end (:meth:`flush`, and :meth:`flushed` for predictions) the
    balls are merged the same way, smallest enclosing pair first, until one remains.
    B = 1 is Algorithm 1.

    Parameters
    ----------
    n_features, sparse, C
        As :class:`StreamSVMLinear`.
    n_balls : int
        B.
    kernel, gamma, degree, coef0
        The kernel ("linear" works too: the balls then store their rows).
    fit_intercept : bool
        The regularised bias, literally as the kernel k + 1 (every evaluation, and the
        prediction Σ α_m (k(x_m, x) + 1)).
    departures : None, "paper" or dict
        StreamSVM's table (:mod:`refsvm.stream_svm.departures`).  Sec. 4.3 prints no
        algorithm, so there is no printed form to run: ``consistent_xi2=False`` (and so
        "paper") raises a ValueError; the setting is kept for one name across states.
    """

    def __init__(self, n_features, sparse=False, C=1.0, n_balls=2, kernel="linear", gamma=1.0,
                 degree=3, coef0=0.0, fit_intercept=False, departures=None):
        super().__init__(n_features, sparse)
        self.departures = check_multi_ball(departures)
        self.C = float(C)
        self.n_balls = int(n_balls)
        self.fit_intercept = bool(fit_intercept)
        self.one = 1.0 if self.fit_intercept else 0.0
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.rows, self.ids = [], []         # every point kept by some ball
        self.balls = []
        self.P = np.zeros((0, 0))            # P[a, b] = ⟨w_a, w_b⟩
        self.M = 0
        self.n_seen = 0

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    @property
    def n_updates(self):
        return self.M

    @property
    def n_buffered(self):
        return max(0, len(self.balls) - 1)

    def _f(self, ball, x):
        f = 0.0
        for m, a in zip(ball.members, ball.alpha):
            f += a * (self.kernel(self.rows[m], x) + self.one)
        return f

    def step(self, x, y):
        y = float(y)
        n = self.n_seen
        self.n_seen += 1
        f = [self._f(b, x) for b in self.balls]
        kxx = self.kernel(x, x) + self.one
        for b, fb in zip(self.balls, f):
            d = math.sqrt(max(b.wnorm2 - 2.0 * y * fb + kxx, 0.0) + b.xi2 + 1.0 / self.C)
            if d < b.R:
                return 0                      # inside a ball: discarded
        # the point as a ball of radius 0: w = y φ(x), ξ² = 1/C
        self.rows.append(_copy_row(x))
        self.ids.append(n)
        self._add_ball(_Ball([len(self.rows) - 1], [y], kxx, 1.0 / self.C, 0.0),
                       np.array([y * fb for fb in f]))
        self.M += 1
        if len(self.balls) > self.n_balls:
            self._merge_closest()
        return 1

    def _add_ball(self, ball, cross):
        B = len(self.balls)
        P = np.zeros((B + 1, B + 1))
        P[:B, :B] = self.P
        P[B, :B] = P[:B, B] = cross
        P[B, B] = ball.wnorm2
        self.P = P
        self.balls.append(ball)

    def _distance(self, a, b):
        A, Bb = self.balls[a], self.balls[b]
        D2 = A.wnorm2 + Bb.wnorm2 - 2.0 * self.P[a, b] + A.xi2 + Bb.xi2
        return math.sqrt(max(D2, 0.0))

    def _merge_closest(self):
        best = None
        for a in range(len(self.balls)):
            for b in range(a + 1, len(self.balls)):
                D = self._distance(a, b)
                t, R = merge_balls(D, self.balls[a].R, self.balls[b].R)
                if best is None or R < best[0]:
                    best = (R, a, b, t)
        R, a, b, t = best
        A, Bb = self.balls[a], self.balls[b]
        merged = _Ball(A.members + Bb.members,
                       [(1.0 - t) * al for al in A.alpha] + [t * al for al in Bb.alpha],
                       (1.0 - t) ** 2 * A.wnorm2 + 2.0 * t * (1.0 - t) * self.P[a, b]
                       + t ** 2 * Bb.wnorm2,
                       (1.0 - t) ** 2 * A.xi2 + t ** 2 * Bb.xi2, R)
        cross = (1.0 - t) * self.P[a] + t * self.P[b]
        keep = [i for i in range(len(self.balls)) if i not in (a, b)]
        self.balls = [self.balls[i] for i in keep]
        self.P = self.P[np.ix_(keep, keep)]
        self._add_ball(merged, cross[keep])

    def flush(self):
        """Merge all balls into one (the end of the stream).  Returns the merges made."""
        k = 0
        while len(self.balls) > 1:
            self._merge_closest()
            k += 1
        return k

    def flushed(self):
        model = copy.deepcopy(self)
        model.flush()
        return model

    @property
    def radius(self):
        """Radius of the final ball (all balls merged, on a copy)."""
        if not self.balls:
            return 0.0
        return (self.flushed() if len(self.balls) > 1 else self).balls[0].R

    def center_function(self, X):
        """f(x) of the current single ball (call on a flushed copy); the rows in stream
        order, zero coefficients skipped, then + Σ α with the bias (the twin's order)."""
        out = np.zeros(X.shape[0])
        if not self.balls:
            return out
        coef = np.zeros(len(self.rows))
        for m, a in zip(self.balls[0].members, self.balls[0].alpha):
            coef[m] = a
        b = self.one * coef.sum()           # Σ α_m (k(x_m, x) + 1) = Σ α_m k(x_m, x) + Σ α_m
        for r in range(X.shape[0]):
            x = get_row(X, r)
            f = 0.0
            for m in range(len(self.rows)):
                if coef[m] != 0.0:
                    f += coef[m] * self.kernel.value(self.rows[m], x)
            out[r] = f + b
        return out

    def decision_function(self, X):
        model = self.flushed() if len(self.balls) > 1 else self
        return model.center_function(X)

    def support(self):
        """(stream ids, α, rows) of the final ball, in stream order."""
        model = self.flushed() if len(self.balls) > 1 else self
        if not model.balls:
            return np.zeros(0, np.int64), np.zeros(0), stack_rows([], self.n_features, self.sparse)
        b = model.balls[0]
        ids = np.array([self.ids[m] for m in b.members], dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        return (ids[order], np.array(b.alpha, dtype=np.float64)[order],
                stack_rows([self.rows[b.members[k]] for k in order], self.n_features,
                           self.sparse))

    @property
    def coef(self):
        """w of the final ball (linear kernel)."""
        ids, alpha, rows = self.support()
        return np.asarray(rows.T @ alpha).ravel() if alpha.size else np.zeros(self.n_features)

    @property
    def intercept(self):
        """b = Σ α_m of the final ball (0 without ``fit_intercept``)."""
        return float(np.sum(self.support()[1])) * self.one

    def get_state(self):
        saved = self.save_state()
        return {
            "R": saved["ball_R"], "xi2": saved["ball_xi2"], "wnorm2": saved["ball_wnorm2"],
            "P": saved["P"], "ids": saved["ids"], "ball_of": saved["ball_of"],
            "alpha": saved["alpha"],
            "n_updates": self.M,
            "n_seen": self.n_seen,
            "n_kernel_evals": self.n_kernel_evals,
        }

    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C,
                    n_balls=self.n_balls, kernel=k.kind, gamma=k.gamma, degree=k.degree,
                    coef0=k.coef0, fit_intercept=self.fit_intercept,
                    departures=dict(self.departures))

    def save_state(self):
        """Rows in stream order with their ball (its position in the list) and α; the
        balls' ‖w‖², ξ², R and the matrix P, in the order of the list."""
        ball_of = np.zeros(len(self.rows), dtype=np.int64)
        alpha = np.zeros(len(self.rows))
        for k, b in enumerate(self.balls):
            for m, a in zip(b.members, b.alpha):
                ball_of[m], alpha[m] = k, a
        out = {"ids": np.array(self.ids, dtype=np.int64), "ball_of": ball_of, "alpha": alpha,
               "ball_wnorm2": np.array([b.wnorm2 for b in self.balls]),
               "ball_xi2": np.array([b.xi2 for b in self.balls]),
               "ball_R": np.array([b.R for b in self.balls]), "P": self.P.copy(),
               "M": self.M, "n_seen": self.n_seen, "n_evals": self.kernel.n_evals}
        out.update(_pack("sv_", self.rows, self.n_features, self.sparse))
        return out

    def load_state(self, data):
        self.rows = _unpack("sv_", data, self.n_features, self.sparse)
        self.ids = [int(i) for i in data["ids"]]
        ball_of = np.asarray(data["ball_of"])
        self.balls = [
            _Ball([int(m) for m in np.flatnonzero(ball_of == k)],
                  [float(a) for a in np.asarray(data["alpha"])[ball_of == k]],
                  float(data["ball_wnorm2"][k]), float(data["ball_xi2"][k]),
                  float(data["ball_R"][k]))
            for k in range(len(data["ball_R"]))]
        self.P = np.array(data["P"], dtype=np.float64).reshape(len(self.balls), len(self.balls))
        self.M = int(data["M"])
        self.n_seen = int(data["n_seen"])
        self.kernel.n_evals = int(data["n_evals"])
