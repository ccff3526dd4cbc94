"""StreamSVM (Rai, Daumé, Venkatasubramanian 2009): Algorithms 1 and 2, the reference.

Read beside the paper (``shared/papers/004``, Sec. 4; ALGORITHMS.md §5):

=============================================  =========================================
the paper                                      here
=============================================  =========================================
Algorithm 1, line 3 (the first ball)           ``_StreamSVM.step``, ``M == 0`` branch
Algorithm 1, lines 5-6 (distance, d ≥ R)       ``_StreamSVM.step``
Algorithm 1, lines 7-10 (move, grow, ξ², M)    ``_StreamSVM._ball_step``
Algorithm 2, lines 5-6 (the buffer S)          ``_StreamSVM.step``, ``lookahead > 1``
Algorithm 2, lines 7-8 and 12-14               ``_StreamSVM.flush`` (the solver:
                                               :mod:`refsvm.stream_svm.enclosing_ball`)
Sec. 4.2 (the kernel form)                     :class:`StreamSVMKernel`
Sec. 4.3 (multiple balls)                      :mod:`refsvm.stream_svm.multi_ball`
=============================================  =========================================

The l2-SVM without bias, min ‖w‖² + C Σ ξ_n², y_n wᵀφ(x_n) ≥ 1 − ξ_n, is the minimum
enclosing ball (MEB) of the augmented points (Eq. 3, Eq. 7)
φ̃(z_n) = [y_n φ(x_n); C^{-1/2} e_n].  StreamSVM keeps one ball (center c, radius R) and
grows it in one pass with the streaming MEB update of Zarrabi-Zadeh & Chan (Eqs. 4–6).
The center is a convex combination c = Σ_m λ_m φ̃(z_m) of the points seen, so
c = [w; C^{-1/2} Σ_m λ_m e_m], w = Σ_m α_m φ(x_m), α_m = λ_m y_m, and the e_m are never
stored: only ξ² = Σ_m λ_m² / C is (the new point's e_n is orthogonal to everything
before it, which gives the "+ ξ² + 1/C" of line 5).

``departures="paper"`` runs lines 3 and 9 as printed (ξ² = 1 at the start; line 9 with
the R after line 8).  The default replaces them by the consistent bookkeeping of ξ²,
one named call each (:mod:`refsvm.stream_svm.departures.consistent_xi2`: why, and the
stream that shows it).

The linear form (:class:`StreamSVMLinear`) keeps w as a :class:`ScaledVector`
(w = s·v): line 7 is a scale by (1 − β) in O(1) and an add of βy_n x_n in O(nnz).
The kernel form (:class:`StreamSVMKernel`, Sec. 4.2) keeps the signed coefficients
α (α_1 = y_1; α ← (1 − β)α; α_n = βy_n) and ‖w‖² incrementally:
‖w'‖² = (1 − β)² ‖w‖² + 2β(1 − β) y_n f(x_n) + β² k(x_n, x_n), with
f(x_n) = Σ_m α_m k(x_m, x_n), which line 5 needs anyway: O(#SV) per example.  Every
distance uses the example's own k(x, x), so the ball is the streaming MEB of the
augmented points for every kernel (the MEB is the l2-SVM when k(x, x) is constant).

Algorithm 2 (lookahead L): points with d ≥ R wait in a buffer S; at |S| = L the ball
becomes the minimum ball enclosing the current ball B(c, R) and the L points, and S is
emptied; :meth:`_StreamSVM.flush` does the same for a partly filled S (line 12).  A
buffer of one point is the closed form of Algorithm 1, so L = 1 *is* Algorithm 1.  The
new center is c' = λ_0 c + Σ_j λ_j φ̃(z_j), so w' = λ_0 w + Σ_j λ_j y_j φ(x_j) and
ξ'² = λ_0² ξ² + Σ_j λ_j² / C.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import scipy.sparse as sp

from ..core.kernels import Kernel, dot, get_row, sqnorm, stack_rows
from ..core.scaled import ScaledVector
from ..core.stream import StreamLearner
from .departures import DEPARTURES, FORMS, consistent_xi2, resolve_form
from .enclosing_ball import QP_TOL, TOL, ball_distances, enclosing_ball, simplex_qp
from .stored_rows import _copy_row, _pack, _unpack

__all__ = [
    "DEPARTURES",
    "FORMS",
    "StreamSVMLinear",
    "StreamSVMKernel",
    "MultiBallStreamSVM",
    "merge_balls",
    "simplex_qp",
    "enclosing_ball",
    "ball_distances",
    "FOLD",
    "TOL",
    "QP_TOL",
]

#: w = s·v: fold s into v when it falls below this (s only shrinks: s ← (1 − β)s).
FOLD = 1e-9


class _StreamSVM(StreamLearner):
    """Algorithms 1 and 2, written once; the subclasses say how w is stored.

    Hooks: ``_start`` (line 3's w = y_1 φ(x_1)), ``_score`` (⟨w, φ(x)⟩),
    ``_self_value`` (k(x, x)), ``_wnorm2`` (‖w‖², with the bias: ‖w‖² + b²), ``_move``
    (line 7), ``_pair`` (k(x_i, x_j) for the lookahead Gram matrix), ``_combine`` (the
    new center λ_0 c + Σ λ_j φ̃(z_j) of Alg. 2 line 7).

    ``fit_intercept=True`` is the regularised bias: the kernel k + 1, i.e. the feature
    map [φ(x); 1], so the augmented point is [y φ(x); y; C^{-1/2} e_n] and the bias is
    the center's coordinate b = Σ_m α_m (the CVM form of Tsang et al.: min ‖w‖² + b² +
    C Σ ξ²).  It is kept as one number: f(x) = ⟨w, φ(x)⟩ + b, k(x, x) + 1,
    b ← (1 − β)b + βy (line 7), b' = λ_0 b + Σ_j λ_j y_j (Alg. 2); with the option off
    b stays 0 and every number is the paper's.

    ``departures`` (:mod:`refsvm.stream_svm.departures`): None (the consistent ξ²
    bookkeeping), "paper" (lines 3 and 9 as printed) or a dict; ``form="printed"`` is
    the same as ``{"consistent_xi2": False}`` and overrides the dict, ``form="consistent"``
    leaves the choice to ``departures``.  ``self.form`` is the form in use.
    """

    _tracer = None  # refsvm.core.trace: who hears the printed lines (None: nobody)

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 fit_intercept=False, departures=None):
        super().__init__(n_features, sparse)
        self.C = float(C)
        self.lookahead = int(lookahead)
        self.departures = resolve_form(departures, form)
        self.consistent_xi2 = self.departures["consistent_xi2"]
        self.form = "consistent" if self.consistent_xi2 else "printed"
        self.fit_intercept = bool(fit_intercept)
        self.one = 1.0 if self.fit_intercept else 0.0   # the constant coordinate
        self.b = 0.0            # bias: the center's constant coordinate Σ α_m
        self.n_solver_steps = 0  # active-set steps of the lookahead solver (Alg. 2)
        self.R = 0.0            # radius of the ball
        self.xi2 = 0.0          # ξ² = Σ λ_m² / C, the squared norm of the e-part of c
        self.M = 0              # updates: the core-set size (Alg. 2: an upper bound on #SV)
        self.n_seen = 0
        self.buffer = []        # Alg. 2's S: (x, y, f(x), k(x, x), d, stream id)

    # ---- read-outs
    @property
    def radius(self):
        return self.R

    @property
    def n_updates(self):
        return self.M

    @property
    def n_buffered(self):
        """|S|: points waiting in the lookahead buffer."""
        return len(self.buffer)

    # ---- Algorithm 1 (and the buffering of Algorithm 2)
    def step(self, x, y):
        y = float(y)
        n = self.n_seen
        self.n_seen += 1
        if self.M == 0:
            # Alg. 1 line 3: M = 1; R = 0; ξ² = 1; w = y_1 x_1
            self._start(x, y, n)
            self.b = y * self.one
            self.R = 0.0
            self.xi2 = consistent_xi2.first_xi2(self.C) if self.consistent_xi2 else 1.0
            self.M = 1
            self._tracer is None or self._tracer("Alg. 1 line 3", n=n, xi2=self.xi2)
            return 1
        # Alg. 1 line 5: d = sqrt(‖w − y_n x_n‖² + ξ² + 1/C), ‖w − y x‖² = ‖w‖² − 2y f + k(x, x)
        f = self._score(x) + self.b
        kxx = self._self_value(x) + self.one
        d = math.sqrt(max(self._wnorm2() - 2.0 * y * f + kxx, 0.0) + self.xi2 + 1.0 / self.C)
        self._tracer is None or self._tracer("Alg. 1 line 5", n=n, d=d)
        # Alg. 1 line 6: if d ≥ R (a point inside the ball is discarded)
        self._tracer is None or self._tracer("Alg. 1 line 6", d=d, R=self.R, outside=d >= self.R)
        if d < self.R:
            return 0
        if self.lookahead == 1:
            self._ball_step(x, y, f, kxx, d, n)
            return 1
        # Alg. 2 line 5: S = S ∪ {y_n x_n}  (the ball does not move while S fills)
        self.buffer.append((_copy_row(x), y, f, kxx, d, n))
        self._tracer is None or self._tracer("Alg. 2 line 5", n=n, S=[s[5] for s in self.buffer])
        # Alg. 2 line 6: if |S| = L, lines 7-8
        self._tracer is None or self._tracer("Alg. 2 line 6", size=len(self.buffer))
        if len(self.buffer) >= self.lookahead:      # (>: a flush that Ctrl-C ended, again)
            self.flush()
        return 1

    def _ball_step(self, x, y, f, kxx, d, n):
        """Alg. 1 lines 7-10 for a point at distance d ≥ R from the center."""
        R = self.R
        beta = 0.5 * (1.0 - R / d)       # ½(1 − R/d), R from before line 8
        self._move(beta, x, y, f, kxx, n)                    # line 7
        if self.fit_intercept:
            self.b = (1.0 - beta) * self.b + beta * y        # line 7, the bias coordinate
        self._tracer is None or self._tracer("Alg. 1 line 7", n=n, beta=beta)
        self.R = R + 0.5 * (d - R)                           # line 8
        self._tracer is None or self._tracer("Alg. 1 line 8", R=self.R)
        if self.consistent_xi2:
            self.xi2 = consistent_xi2.next_xi2(self.xi2, beta, self.C)   # departure
        else:
            beta9 = 0.5 * (1.0 - self.R / d)                 # line 9: ½(1 − R/d), R after line 8
            self.xi2 = self.xi2 * (1.0 - beta9) ** 2 + beta9 ** 2
        self._tracer is None or self._tracer("Alg. 1 line 9", xi2=self.xi2)
        self.M += 1                                          # line 10
        self._tracer is None or self._tracer("Alg. 1 line 10", M=self.M)

    # ---- Algorithm 2
    def flush(self):
        """Alg. 2 lines 7-8 (and 12-14 at the end of the stream): replace the ball by the
        minimum ball enclosing it and the buffered points; empty S.  Returns |S|."""
        S = self.buffer
        L = len(S)
        if L == 0:
            return 0
        if L == 1:
            # one point: the exact answer is Algorithm 1's closed form (lines 7-10)
            self.buffer = []
            x, y, f, kxx, d, n = S[0]
            self._rescore(x)
            self._ball_step(x, y, f, kxx, d, n)
            return 1
        # Gram matrix of [c, φ̃(z_1), ..., φ̃(z_L)] in the augmented space:
        #   ⟨c, c⟩ = ‖w‖² + ξ²,  ⟨c, φ̃_j⟩ = y_j f(x_j),  ⟨φ̃_i, φ̃_j⟩ = y_i y_j k(x_i, x_j) + δ_ij / C
        Q = np.empty((L, L))
        for i in range(L):
            Q[i, i] = S[i][3]
            for j in range(i + 1, L):
                Q[i, j] = Q[j, i] = S[i][1] * S[j][1] * (self._pair(S[i][0], S[j][0])
                                                         + self.one)
        G = np.empty((L + 1, L + 1))
        G[0, 0] = self._wnorm2() + self.xi2
        G[0, 1:] = G[1:, 0] = [s[1] * s[2] for s in S]
        G[1:, 1:] = Q + np.eye(L) / self.C
        # Alg. 2 line 7: enclose the ball (w, R, ξ²) and all points of S
        stats = [0]
        lam, r = enclosing_ball(G, self.R, stats=stats)
        self.buffer = []                             # (after the solve: Ctrl-C keeps S)
        self.n_solver_steps += stats[0]
        self._tracer is None or self._tracer("Alg. 2 line 7", S=[s[5] for s in S], lam=lam, R=r)
        self._combine(lam, S, G[0, 1:], Q)          # w' = λ_0 w + Σ_j λ_j y_j φ(x_j)
        if self.fit_intercept:
            bb = lam[0] * self.b                     # b' = λ_0 b + Σ_j λ_j y_j
            for j in range(L):
                if lam[j + 1] > 0.0:
                    bb += lam[j + 1] * S[j][1]
            self.b = bb
        s2 = 0.0
        for lj in lam[1:]:
            s2 += lj * lj
        self.xi2 = lam[0] ** 2 * self.xi2 + s2 / self.C     # ξ'² = λ_0²ξ² + Σ_j λ_j²/C
        self.R = r
        self.M += L                                  # line 8: M = M + L; S = ∅
        self._tracer is None or self._tracer("Alg. 2 line 8", M=self.M, R=self.R, xi2=self.xi2)
        return L

    def _rescore(self, x):
        """Before a buffered point's closed-form step: what ``_move`` needs from
        ``_score`` (nothing for the kernel form)."""

    @property
    def intercept(self):
        """b, the bias (0 without ``fit_intercept``)."""
        return self.b

    def flushed(self):
        """A copy with the buffer flushed: the model Algorithm 2 outputs if the stream
        ended now.  The state itself is unchanged."""
        model = copy.deepcopy(self)
        model.flush()
        return model

    def decision_function(self, X):
        """f(x) = ⟨w, φ(x)⟩ for every row; with a non-empty buffer, that of
        :meth:`flushed` (the buffered points are part of the stream seen so far)."""
        model = self.flushed() if self.buffer else self
        return model.center_function(X)

    # ---- persistence (both twins, one format)
    def _init_extra(self):
        return {}

    def init_params(self):
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C,
                    lookahead=self.lookahead, form=self.form, fit_intercept=self.fit_intercept,
                    departures=dict(self.departures), **self._init_extra())

    def _save_common(self):
        S = self.buffer
        out = {
            "R": self.R, "xi2": self.xi2, "M": self.M, "n_seen": self.n_seen, "b": self.b,
            "n_solver_steps": self.n_solver_steps,
            "buf_y": np.array([s[1] for s in S], dtype=np.float64),
            "buf_f": np.array([s[2] for s in S], dtype=np.float64),
            "buf_kxx": np.array([s[3] for s in S], dtype=np.float64),
            "buf_d": np.array([s[4] for s in S], dtype=np.float64),
            "buf_ids": np.array([s[5] for s in S], dtype=np.int64),
        }
        out.update(_pack("buf_", [s[0] for s in S], self.n_features, self.sparse))
        return out

    def _load_common(self, data):
        self.R = float(data["R"])
        self.xi2 = float(data["xi2"])
        self.M = int(data["M"])
        self.n_seen = int(data["n_seen"])
        self.b = float(data.get("b", 0.0))
        self.n_solver_steps = int(data.get("n_solver_steps", 0))
        rows = _unpack("buf_", data, self.n_features, self.sparse)
        self.buffer = [(rows[k], float(data["buf_y"][k]), float(data["buf_f"][k]),
                        float(data["buf_kxx"][k]), float(data["buf_d"][k]),
                        int(data["buf_ids"][k])) for k in range(len(rows))]

    def _common_state(self):
        return {
            "R": self.R,
            "xi2": self.xi2,
            "wnorm2": self._wnorm2(),
            "b": self.b,
            "n_updates": self.M,
            "n_seen": self.n_seen,
            "buffer_ids": np.array([s[5] for s in self.buffer], dtype=np.int64),
            "n_kernel_evals": self.n_kernel_evals,
        }


class StreamSVMLinear(_StreamSVM):
    """StreamSVM, linear form: w = s·v (:class:`refsvm.core.scaled.ScaledVector`).

    Parameters
    ----------
    n_features : int
    sparse : bool
    C : float
        Slack parameter (the e-parts of the points are scaled by C^{-1/2}).
    lookahead : int
        L of Algorithm 2 (1: Algorithm 1).
    form : {"consistent", "printed"}
        "printed" is ``departures={"consistent_xi2": False}`` (see ``_StreamSVM``).
    fit_intercept : bool
        The regularised bias b (the constant coordinate 1 of [x; 1]; see ``_StreamSVM``).
    departures : None, "paper" or dict
        :data:`refsvm.stream_svm.departures.DEPARTURES`; "paper" runs lines 3 and 9 as
        printed.

    The core-set coefficients α_m = λ_m y_m are kept too (stream ids and raw values
    a_m with α_m = s·a_m, so the scale of line 7 costs O(1) for them as well): they
    serve ``support()`` and the invariant tests, never the distance computation.
    No kernel is evaluated: ``n_kernel_evals`` is 0.
    """

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 fit_intercept=False, departures=None):
        super().__init__(n_features, sparse, C, lookahead, form, fit_intercept, departures)
        self.w = ScaledVector(self.n_features, track_norm=True)
        self.ids = []           # stream ids of the core set
        self.a = []             # α_m = s·a_m
        self._vx = 0.0          # ⟨v, x⟩ of the example in hand

    n_kernel_evals = 0

    def _start(self, x, y, n):
        self.w.add(y, x, 0.0)                           # w = y_1 x_1
        self.ids.append(n)
        self.a.append(y / self.w.s)

    def _score(self, x):
        self._vx = dot(self.w.v, x)
        return self.w.s * self._vx

    def _self_value(self, x):
        return sqnorm(x)

    def _rescore(self, x):
        self._vx = dot(self.w.v, x)     # v has not moved since x was buffered

    def _wnorm2(self):
        return self.w.sqnorm() + self.b * self.b

    def _move(self, beta, x, y, f, kxx, n):
        # w = w + β(y_n x_n − w) = (1 − β)w + βy_n x_n: a scale (O(1)), an add (O(nnz))
        self.w.scale(1.0 - beta)
        self.w.add(beta * y, x, self._vx)
        self.ids.append(n)
        self.a.append(beta * y / self.w.s)
        self._fold()

    def _fold(self):
        if self.w.s < FOLD:
            s = self.w.s
            self.a = [a * s for a in self.a]
            self.w.fold(FOLD)

    def _pair(self, x, z):
        return dot(x, z)

    def _combine(self, lam, S, yf, Q):
        self.w.scale(lam[0])
        if lam[0] == 0.0:                               # scale(0) reset v and s
            self.a = [0.0 for _ in self.a]
        for j, (x, y, f, kxx, d, n) in enumerate(S):
            if lam[j + 1] > 0.0:
                self.w.add(lam[j + 1] * y, x, dot(self.w.v, x))
                self.ids.append(n)
                self.a.append(lam[j + 1] * y / self.w.s)
        self._fold()

    def center_function(self, X):
        """f(x) = ⟨w, x⟩ + b of the current center (the buffer ignored)."""
        if sp.issparse(X):
            return self.w.s * np.asarray(X @ self.w.v).ravel() + self.b
        return self.w.s * (np.asarray(X) @ self.w.v) + self.b

    @property
    def coef(self):
        """w as a new array."""
        return self.w.w

    def support(self):
        """(stream ids, α, None): the core set and its coefficients (rows not kept)."""
        return (np.array(self.ids, dtype=np.int64),
                self.w.s * np.array(self.a, dtype=np.float64), None)

    def get_state(self):
        out = self._common_state()
        out["w"] = self.w.w
        out["support"] = np.array(self.ids, dtype=np.int64)
        out["coef"] = self.w.s * np.array(self.a, dtype=np.float64)
        return out

    def save_state(self):
        out = self._save_common()
        out.update({"v": self.w.v.copy(), "s": self.w.s, "vnorm2": self.w.vnorm2,
                    "ids": np.array(self.ids, dtype=np.int64),
                    "a": np.array(self.a, dtype=np.float64)})
        return out

    def load_state(self, data):
        self._load_common(data)
        self.w.v = np.array(data["v"], dtype=np.float64)
        self.w.s = float(data["s"])
        self.w.vnorm2 = float(data["vnorm2"])
        self.ids = [int(i) for i in data["ids"]]
        self.a = [float(a) for a in data["a"]]


class StreamSVMKernel(_StreamSVM):
    """StreamSVM, kernel form (Sec. 4.2): signed coefficients α, ‖w‖² kept incrementally.

    Parameters
    ----------
    n_features, sparse, C, lookahead, form
        As :class:`StreamSVMLinear`.
    kernel, gamma, degree, coef0
        See :class:`refsvm.core.kernels.Kernel`.

    Kernel evaluations: one k(x_m, x) per stored row and one k(x, x) per example
    after the first (the first costs k(x_1, x_1) only); a lookahead flush of L ≥ 2
    points costs L(L − 1)/2 more.  Prediction is not counted.
    """

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 kernel="rbf", gamma=1.0, degree=3, coef0=0.0, fit_intercept=False,
                 departures=None):
        super().__init__(n_features, sparse, C, lookahead, form, fit_intercept, departures)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.rows = []          # x_m of the core set
        self.ids = []           # their stream ids
        self.alpha = []         # α_m = λ_m y_m
        self.wnorm2 = 0.0       # ‖w‖² (+ b²) = Σ α_n α_m (k(x_n, x_m) + 1), kept incrementally

    def _init_extra(self):
        k = self.kernel
        return dict(kernel=k.kind, gamma=k.gamma, degree=k.degree, coef0=k.coef0)

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def _start(self, x, y, n):
        self.rows.append(_copy_row(x))
        self.ids.append(n)
        self.alpha.append(y)                            # α_1 = y_1
        self.wnorm2 = self._self_value(x) + self.one    # ‖y_1 φ(x_1)‖² = k(x_1, x_1) (+ 1)

    def _score(self, x):
        f = 0.0
        for xm, am in zip(self.rows, self.alpha):       # f(x) = Σ_m α_m k(x_m, x)
            f += am * self.kernel(xm, x)
        return f

    def _self_value(self, x):
        return self.kernel(x, x)

    def _wnorm2(self):
        return self.wnorm2

    def _move(self, beta, x, y, f, kxx, n):
        # ‖(1 − β)w + βy φ(x)‖² = (1 − β)²‖w‖² + 2β(1 − β) y f(x) + β² k(x, x)
        self.wnorm2 = ((1.0 - beta) ** 2 * self.wnorm2 + 2.0 * beta * (1.0 - beta) * y * f
                       + beta ** 2 * kxx)
        self.alpha = [(1.0 - beta) * a for a in self.alpha]     # α_{1:n−1} ← (1 − β) α_{1:n−1}
        self.rows.append(_copy_row(x))
        self.ids.append(n)
        self.alpha.append(beta * y)                             # α_n = β y_n

    def _pair(self, x, z):
        return self.kernel(x, z)

    def _combine(self, lam, S, yf, Q):
        # ‖λ_0 w + Σ_j λ_j y_j φ(x_j)‖² = λ_0²‖w‖² + 2λ_0 Σ_j λ_j y_j f(x_j) + Σ_ij λ_i λ_j Q_ij
        lyf = lQl = 0.0
        for j in range(len(S)):
            lyf += lam[j + 1] * yf[j]
        for i in range(len(S)):
            qi = 0.0
            for j in range(len(S)):
                qi += Q[i, j] * lam[j + 1]
            lQl += lam[i + 1] * qi
        self.wnorm2 = lam[0] ** 2 * self.wnorm2 + 2.0 * lam[0] * lyf + lQl
        self.alpha = [lam[0] * a for a in self.alpha]
        for j, (x, y, f, kxx, d, n) in enumerate(S):
            if lam[j + 1] > 0.0:
                self.rows.append(x)
                self.ids.append(n)
                self.alpha.append(lam[j + 1] * y)

    def center_function(self, X):
        """f(x) = Σ_m α_m k(x_m, x) + b of the current center (the buffer ignored)."""
        out = np.zeros(X.shape[0])
        for r in range(X.shape[0]):
            x = get_row(X, r)
            f = 0.0
            for xm, am in zip(self.rows, self.alpha):
                f += am * self.kernel.value(xm, x)
            out[r] = f + self.b
        return out

    def support(self):
        """(stream ids, α, rows) of the core set."""
        return (np.array(self.ids, dtype=np.int64), np.array(self.alpha, dtype=np.float64),
                stack_rows(self.rows, self.n_features, self.sparse))

    def get_state(self):
        out = self._common_state()
        out["support"] = np.array(self.ids, dtype=np.int64)
        out["coef"] = np.array(self.alpha, dtype=np.float64)
        return out

    def save_state(self):
        out = self._save_common()
        out.update({"wnorm2": self.wnorm2, "ids": np.array(self.ids, dtype=np.int64),
                    "alpha": np.array(self.alpha, dtype=np.float64),
                    "n_evals": self.kernel.n_evals})
        out.update(_pack("sv_", self.rows, self.n_features, self.sparse))
        return out

    def load_state(self, data):
        self._load_common(data)
        self.wnorm2 = float(data["wnorm2"])
        self.ids = [int(i) for i in data["ids"]]
        self.alpha = [float(a) for a in data["alpha"]]
        self.kernel.n_evals = int(data["n_evals"])
        self.rows = _unpack("sv_", data, self.n_features, self.sparse)


# Sec. 4.3, in its own module beside this one (importable from either)
from .multi_ball import MultiBallStreamSVM, merge_balls  # noqa: E402
