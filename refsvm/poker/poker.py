"""POKER (Fine & Scheinberg, NIPS 2001), the readable reference.

Parametric optimization for kernel methods: the exact 1-norm soft-margin SVM with
bias, by following piecewise-affine solution paths of a parametric KKT system.
``ALGORITHMS.md`` §2 restores the printed equations; ``docs/fine_scheinberg.rst``
walks through this module beside the paper.

Notation (the paper's)
----------------------
Q_ij = y_i y_j k(x_i, x_j), e = (1, ..., 1), c = C.  The KKT system (Eq. 1)::

    alpha_i s_i = 0,  (c - alpha_i) xi_i = 0,  y'alpha = 0,
    -Q alpha + b y + s - xi = -e,   0 <= alpha <= c,  s >= 0,  xi >= 0.

Its sign convention: s_i - xi_i = g_i := y_i (w'phi(x_i) - b) - 1, i.e. the model
is f(x) = w'phi(x) - b.  POKER's b is LIBSVM's rho; SVC's intercept is -b.

We keep g = s - xi (one number per example) and the optimal partition
I_o (alpha = 0, g >= 0), I_c (alpha = c, g <= 0), I_s (g = 0, 0 <= alpha <= c).
Every path of this module moves (alpha_s, b) along the affine piece of the current
partition, to the next breakpoint:

- the **fixed-bias method** (Eq. 2, Eq. 3): g(u) = Q alpha + p + u d with
  d = -e - y b - p; u goes from 0 to 1 with b fixed; on I_s,
  Q_ss dalpha_s = -d_s du;
- the **adjustable-bias method** (Sec. 3, Eq. 4): g = Q alpha - e - y b; on I_s,
  Q_ss alpha_s = e_s + b y_s - Q_sc c e_c, so alpha_s moves affinely with b and
  y'alpha(b) is piecewise affine and non-decreasing; we follow it until y'alpha = 0;
- the **chunk decrement** (beyond the paper): the bounds c_i of the removed
  examples are driven to 0 (their alpha_i = (1 - t) alpha_i^0, t from 0 to 1) by the
  same parametric method, with b adjustable and y'alpha = 0 kept.

A breakpoint is where an alpha_s reaches 0 or c (it leaves I_s), or where the g of
an example of I_o or I_c reaches 0 (it joins I_s).

Factorisation
-------------
One factorisation serves every path: R, the inverse of the bordered matrix
M = [[0, y_s'], [y_s, Q_ss]], updated by rank one when I_s gains or loses a member
(``bordered_grow`` / ``bordered_shrink`` of the shared core, :mod:`refsvm.core.bordered`;
O(|I_s|^2) per breakpoint, never a cube).
Along b (Sec. 3) we parametrise the piece by tau = y'alpha instead of b: then
[-db; dalpha_s] = R [dtau; 0], which also covers a singular Q_ss (the degenerate
case of Sec. 3: alpha_s then moves at constant b, "the set of all possible solutions
changes linearly").  With b fixed (Eq. 3) the system Q_ss dalpha_s = r is solved with
the same R (``_solve_fixed``): dalpha_s = R_ss r + dtau R_s0 with dtau chosen so that
db = 0 (dtau = -R_0s r / R_00).

The degenerate case (documented in the docs page)
--------------------------------------------------
* **Least-index rule** on tied breakpoints: the events within round-off of the
  smallest step are tied (``alpha_window(C)`` for an alpha, 1e-12 for a g); the end of the
  parameter goes first, then the example with the smallest id (Bland's rule).
* **Pivot tests against a round-off scale**: the pivot kappa of a joining example
  (Q_ii - m'R m for the bordered matrix, Q_ii - Q_is Q_ss^-1 Q_si with b fixed) is
  compared with |Q_ii| + |m|'|R m|; below 1e-6 of it the pivot is doubtful and is
  recomputed from a fresh factorisation (LAPACK getrf/getri of M); below 1e-11 of it
  it is zero: the example is dependent on I_s, and instead of joining it is
  *exchanged*: alpha_i moves off its bound along the null direction (which changes no
  g, and with b adjustable not y'alpha either) until a member of I_s reaches a bound
  and leaves (then i joins) or alpha_i reaches its other bound (I_o <-> I_c).
* **Singular Q_ss with b fixed** (e.g. d+1 margin vectors of a d-dimensional linear
  kernel, left by the previous adjustable-bias path): R_00 = -v'Q_ss v with
  v = R_s0 is then zero; before the fixed-bias path alpha_s moves along v (no g
  changes) until a member reaches a bound and leaves, until Q_ss is regular.
* A rate |dg_i| below 1e-10 of the bound of its terms counts as zero.
* **Bias with I_s empty** at the end of an operation: every b of an interval keeps
  the KKT conditions; we take its midpoint (LIBSVM's choice), or its finite end when
  only one class is present.

Counters: ``n_iterations`` (breakpoints passed, exchanges included: the paper's
iteration count) and ``n_kernel_evals``.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

from ..core.bordered import (bordered_beta, bordered_grow, bordered_matrix, bordered_pivot,
                             bordered_drift, bordered_max_abs, bordered_shrink, bordered_start, dot, grow_array, least_index_event,
                             lu_inverse, matvec, pivot_doubtful, pivot_is_zero)
from ..core.kernels import Kernel, SparseRow, get_row, stack_rows
from ..core.stream import StreamLearner

__all__ = ["POKERState", "next_breakpoint", "SELECTIONS", "CyclingError",
           "JointIncrementError", "PathError"]

# partition codes (shared with the twin)
I_O, I_S, I_C, FORCED, GONE, PENDING = 0, 1, 2, 3, -1, -2   # status < 0: not in the problem
# what the state is doing (which system holds after every breakpoint)
IDLE, FIXED, BIAS, UNLEARN, JOINT = 0, 1, 2, 3, 4
# event kinds
EV_END, EV_LEAVE, EV_JOIN, EV_FLIP = 0, 1, 2, 3

#: events within these of their bound at the smallest step are tied
EPS_G = 1e-12           # for g
EPS_ALPHA = 1e-12       # times min(C, 1), for alpha (see ``alpha_window``)
#: ... and at least this times C (the round-off of alpha at large C)
EPS_ALPHA_ULP = 1e-14
#: relative round-off level of a rate dg_i against the bound of its terms
EPS_RATE = 1e-10
#: a margin vector within this times c of a bound counts as at the bound when I_s
#: decides the bias (``_centre_bias``)
EPS_BOUND = 1e-10       # times min(C, 1), at least EPS_ALPHA_ULP C
#: a rate dalpha_s below this times the largest one is zero
EPS_ARATE = 1e-12
#: a shrink with |R_pp| below this times max|R| is re-inverted instead
EPS_SHRINK = 1e-14
#: a joining example with a pivot below this fraction of its scale is followed by a
#: fresh R (the rank-one update loses about -log10 of it in digits; at 1e-3 a third of
#: the breakpoints on Gauss refreshed R, at 1e-5 4 %, the largest KKT residual of a
#: 5,000-row run 4e-10: docs/fine_scheinberg.rst)
EPS_SMALL_PIVOT = 1e-5
#: above this c k_max, g is recomputed exactly at the end of an operation (``_polish``;
#: the round-off of an alpha at c, 1.1e-16 c k_max, is then above 1e-7 in g; it costs
#: O(n #SV) kernel values per operation, so an unscaled kernel at an ordinary c, k_max
#: up to 1e9, never pays it)
POLISH_CK = 1e9
#: every ``refresh_every`` changes of I_s, R is recomputed (O(|I_s|^3)) only when the
#: backward error of M R (``bordered_drift``, O(|I_s|^2)) is above this: after 50 changes
#: it was 1e-16 to 1e-12 on the real data sets (none refreshed; never above 3e-13 with no
#: refresh at all) and 4e-12 median, up to 1e-7, on 3,000 Gauss rows (73 % refreshed)
DRIFT_REFRESH = 1e-12
#: after a shrink of an inverse with max|R| max|M| above this, R is recomputed
COND_REFRESH = 1e6
#: a pivot below this fraction of its scale is doubtful (re-solved from a fresh R)
EPS_DOUBT = 1e-6
#: a (re-solved) pivot below this fraction of its scale is zero ...
EPS_PIVOT = 1e-11
#: ... and so is one below this times max k(x, x)
EPS_PIVOT_ABS = 1e-14



def alpha_window(C, eps=EPS_ALPHA):
    """The round-off window of alpha at the bound c: ``eps`` c for c <= 1, ``eps`` for
    1 <= c <= eps / EPS_ALPHA_ULP, EPS_ALPHA_ULP c beyond.

    An alpha moved by w moves the g of the others by up to w k_max, so a window in
    alpha must not grow with c where round-off does not force it to (at c = 1e12 the
    old window 1e-12 c let an alpha of 1 count as 0: g then drifted by 1, the extreme-C
    property test); below it c's own round-off (about 2e-16 c per operation, so
    EPS_ALPHA_ULP is 45 of them) would make true ties look distinct."""
    return max(eps * min(C, 1.0), EPS_ALPHA_ULP * C)


SELECTIONS = ("none", "cls2w", "maxslk", "cls2w+dobj", "maxslk+dobj")


def next_breakpoint(t_end, w_end, ts, ws, ids, kinds):
    """The step and the event that limits it, by the shared least-index rule
    (:func:`refsvm.core.bordered.least_index_event`).

    ``t_end`` is the step to the end of the parameter (inf if none) and ``w_end`` its
    round-off window; ``ts, ws, ids, kinds`` the other events (step, window, example
    id, kind).  t_min is the smallest step; the events with t <= t_min + w are tied;
    the end goes first (a priority event), then the tied event of the smallest example
    id.  Returns (t_min, kind, id); kind -1 when there is no event at all."""
    ts, ws = np.asarray(ts, dtype=np.float64), np.asarray(ws, dtype=np.float64)
    tmin = min(t_end, float(ts.min())) if ts.size else t_end
    if not np.isfinite(tmin):
        return np.inf, -1, -1
    # only the tied events take part in the choice (the same choice, in O(#tied))
    tied = np.flatnonzero(ts <= tmin + ws)
    ids, kinds = np.asarray(ids), np.asarray(kinds)
    events = [(t_end, EV_END, -1, w_end, True)]
    events += [(float(ts[j]), int(kinds[j]), int(ids[j]), float(ws[j]), False) for j in tied]
    kind, who = least_index_event(events, tmin)
    return (t_end if kind == EV_END else tmin), int(kind), int(who)


def neumaier_add(s, c, x):
    """One term of Neumaier's compensated sum: (s + x, the compensation c plus the
    rounding error of s + x); the sum is s + c at the end.  Terms of order c that
    cancel (an example's margin at c = 1e12 with its copies at the bound, both labels)
    then sum to their exact value instead of an ulp of c."""
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


def _split(a):
    """Dekker's split: a = hi + lo exactly, each half with at most 26 significant bits."""
    c = 134217729.0 * a                                   # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_product(a, b):
    """Error-free products (Dekker): a * b = p + e exactly, elementwise; returns the
    list [p..., e...] (finite inputs well inside the float range)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    ok = np.isfinite(e)
    return list(p) + list(np.where(ok, e, 0.0))


def _exact_sum(a, b, sign, extra):
    """sign * sum_j a_j b_j + sum(extra), correctly rounded (the products split exactly
    by :func:`_two_product`, the sum by ``math.fsum``); ``sign`` is +-1."""
    return math.fsum([sign * v for v in _two_product(a, b)] + list(extra))


class _Budget(Exception):
    """Raised when a path has used its breakpoint budget (dObj look-ahead)."""


class CyclingError(RuntimeError):
    """A path passed more breakpoints than any finite path of its size needs (50 (n + 10)):
    it cycles, on degenerate data (docs, "Fuzzing")."""


class PathError(RuntimeError):
    """A path (SelfInit, AltPOKER, the joint increment) ended with y'alpha = 0 or the sign
    conditions of the kept g lost, or with an inverse of the active set that a fresh one
    does not mend: a singular active set reached through round-off on degenerate data
    (fuzzing found it on rows of zeros with the linear kernel).  The state is not the
    optimum; the estimator learns the call again from its copy of the model, by another
    path (``refsvm.poker.estimators``)."""


class JointIncrementError(PathError):
    """:class:`PathError` of the joint increment, or its path did not end (cycling on
    degenerate data).  The estimator learns the chunk again by AltPOKER from its copy of
    the model (and if that fails too, by IncrementalSVM's path)."""


#: |y'alpha| allowed at the end of a path, per unit of c and per example (the round-off of
#: the paths is about 1e-15 c per example; the failures it catches, 0.09 c and more)
END_BALANCE_TOL = 1e-9
#: the end of a path checks the inverse the next path starts from when max|R| max(1, k_max)
#: exceeds END_COND (a singular I_s reached by round-off: 4 vectors of R^3 and a row of
#: zeros under the linear kernel gave max|R| = 1.8e12 and ||M R - I|| = 3.8, and the next
#: chunk's path ended off the optimum, its end check blind to it): ||M R - I||_max above
#: END_RESIDUAL_TOL (far above the 1e-6 an inverse at the condition END_COND may carry)
#: then forms R afresh, and if that does not mend it the path raises
END_COND = 1e10
END_RESIDUAL_TOL = 1e-3
# the joint increment scores this many new examples at a time (``_learn_joint``): the
# kernel values of a block with the support vectors are kept until the violated ones'
# columns are formed, so the block bounds that memory (256 x #SV doubles)
JOINT_BLOCK = 256


class POKERState(StreamLearner):
    """POKER state for one binary problem (reference twin).

    Parameters
    ----------
    n_features : int
    sparse : bool
        Rows are :class:`~refsvm.core.kernels.SparseRow` (CSR input) or dense arrays.
    C : float
        The penalty c: 0 <= alpha_i <= c.
    kernel, gamma, degree, coef0 :
        The kernel (:class:`refsvm.core.kernels.Kernel`).
    cache_size : float
        Megabytes of kernel columns kept for examples that left I_s (a return costs
        only the entries of the examples added since).

    Attributes
    ----------
    n_iterations : int
        Breakpoints passed (the paper's iteration count), over all operations.
    n_kernel_evals : int
    breakpoint_hook : callable or None
        Called with the state after every breakpoint (tests check the KKT
        conditions of the system being followed there: :meth:`check`).

    Notes
    -----
    Examples get ids 0, 1, 2, ... in the order they are added; unlearned ids are
    never reused.
    """

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, cache_size=200.0, refresh_every=50):
        super().__init__(n_features, sparse)
        self.refresh_every = int(refresh_every)
        self.n_s_changes = 0
        self.C = float(C)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.cache_size = float(cache_size)
        self.cache = OrderedDict()            # id -> kernel column (length = n then)
        self.rows = []
        self.n = 0
        self.y = np.zeros(0)
        self.alpha = np.zeros(0)
        self.g = np.zeros(0)                  # g = s - xi of the system being followed
        self.p = np.zeros(0)                  # Eq. 3: p (fixed-bias path only)
        self.d = np.zeros(0)                  # Eq. 3: d = -e - y b - p (idem)
        self.a0 = np.zeros(0)                 # alpha at the start of a decrement
        self.kdiag = np.zeros(0)
        self.status = np.zeros(0, dtype=np.int8)
        self.b = 0.0
        self.S = []                           # I_s, in joining order
        self.KS = np.zeros((0, 0))            # KS[i, j] = k(x_i, x_S[j])
        self.R = np.zeros((0, 0))             # inverse of [[0, y_s'], [y_s, Q_ss]]
        self.KF = np.zeros((0, 0))            # kernel columns of the removed set (decrement)
        self.F = np.zeros(0, dtype=np.intp)
        self.fresh = False
        self.kmax = 0.0
        self.phase = IDLE
        self.u = 1.0                          # parameter of the fixed-bias path
        self.tau = 0.0                        # y'alpha along the adjustable-bias path
        self.t = 0.0                          # parameter of the decrement
        self.dependent = []                   # left dependent by an exchange (see _join)
        self.n_iterations = 0
        self.n_exchanges = 0
        self.n_refresh = 0
        self.n_chunks = 0
        self.budget = -1                      # breakpoints left (dObj), -1: no limit
        self.breakpoint_hook = None

    @property
    def aw(self):
        """The tie window of an alpha event and the zero of y'alpha (:func:`alpha_window`)."""
        return alpha_window(self.C)

    # ------------------------------------------------------------------ persistence
    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C, kernel=k.kind,
                    gamma=k.gamma, degree=k.degree, coef0=k.coef0, cache_size=self.cache_size,
                    refresh_every=self.refresh_every)

    def save_state(self):
        n = self.n
        X = stack_rows(self.rows, self.n_features, self.sparse)
        out = {"n": n, "y": self.y[:n].copy(), "alpha": self.alpha[:n].copy(),
               "g": self.g[:n].copy(), "kdiag": self.kdiag[:n].copy(),
               "status": self.status[:n].astype(np.int8), "b": float(self.b),
               "S": np.array(self.S, dtype=np.intp),
               **self._saved_KS_R(n),
               "kmax": float(self.kmax), "n_iterations": self.n_iterations,
               "n_exchanges": self.n_exchanges, "n_refresh": self.n_refresh,
               "n_chunks": self.n_chunks, "n_kernel_evals": self.kernel.n_evals,
               "n_s_changes": self.n_s_changes, "fresh": bool(self.fresh),
               **self._cache_arrays()}
        if self.sparse:
            out.update(X_data=X.data, X_indices=X.indices.astype(np.int32),
                       X_indptr=X.indptr.astype(np.int64))
        else:
            out["X"] = X
        return out

    def load_state(self, data):
        n = int(data["n"])
        if self.sparse:
            X = sp.csr_matrix((data["X_data"], data["X_indices"], data["X_indptr"]),
                              shape=(n, self.n_features))
            self.rows = [SparseRow(np.array(r.indices, np.int32), np.array(r.data))
                         for r in (get_row(X, i) for i in range(n))]
        else:
            X = np.asarray(data["X"], dtype=np.float64).reshape(n, self.n_features)
            self.rows = [X[i].copy() for i in range(n)]
        self.n = n
        self.y = np.array(data["y"], dtype=np.float64)
        self.alpha = np.array(data["alpha"], dtype=np.float64)
        self.g = np.array(data["g"], dtype=np.float64)
        self.kdiag = np.array(data["kdiag"], dtype=np.float64)
        self.status = np.array(data["status"], dtype=np.int8)
        self.p = np.zeros(n)
        self.d = np.zeros(n)
        self.a0 = np.zeros(n)
        self.b = float(data["b"])
        self.S = [int(i) for i in data["S"]]
        self.KS = np.array(data["KS"], dtype=np.float64).reshape(n, len(self.S))
        self.R = np.array(data["R"], dtype=np.float64)
        self.kmax = float(data["kmax"])
        self.n_iterations = int(data["n_iterations"])
        self.n_exchanges = int(data["n_exchanges"])
        self.n_refresh = int(data["n_refresh"])
        self.n_chunks = int(data["n_chunks"])
        self.kernel.n_evals = int(data["n_kernel_evals"])
        self.n_s_changes = int(data["n_s_changes"])
        self.fresh = bool(data["fresh"])
        self._cache_load(data["cache_ids"], data["cache_len"], data["cache_cols"])
        self.phase = IDLE

    def __reduce__(self):
        from ..core.stream import restore_state

        return (restore_state, (type(self), self.init_params(), self.save_state()))

    # ------------------------------------------------------------------ storage
    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def _append(self, x, y):
        """Store a new example (alpha = 0, status PENDING: not yet in the problem) and
        k(x, x).  Returns its id."""
        if self.sparse:
            x = SparseRow(np.array(x.indices, dtype=np.int32), np.array(x.data, dtype=np.float64))
        else:
            x = np.array(x, dtype=np.float64)
        i = self.n
        self.rows.append(x)
        self._store_row(x)
        self.n += 1
        for name in ("y", "alpha", "g", "p", "d", "a0", "kdiag"):
            setattr(self, name, grow_array(getattr(self, name), self.n))
        self.status = grow_array(self.status, self.n, GONE)
        if self.KS.shape[0] < self.n:
            KS = np.zeros((self.y.shape[0], self.KS.shape[1]))
            KS[: self.KS.shape[0]] = self.KS
            self.KS = KS
        self.y[i] = y
        self.alpha[i] = self.g[i] = self.p[i] = self.d[i] = self.a0[i] = 0.0
        self.status[i] = PENDING
        self.kdiag[i] = self._k(i, i)
        self.kmax = max(self.kmax, float(abs(self.kdiag[i])))
        return i

    def _append_rows(self, X, y):
        """Store the rows of X (2-D array or CSR) with labels y; their ids (array)."""
        return np.array([self._append(get_row(X, r), float(y[r])) for r in range(X.shape[0])],
                        dtype=np.intp)

    def _store_row(self, x):
        """Keep a copy of the row for the kernel (the twin: in its compiled row store)."""

    def _k(self, a, b):
        """k(x_a, x_b) of two stored ids, counted."""
        return self.kernel(self.rows[a], self.rows[b])

    def _kernel_value(self, a, b):
        """k(x_a, x_b), not counted (diagnostics)."""
        return self.kernel.value(self.rows[a], self.rows[b])

    def _class_sums(self, ids, at_c):
        """F_r = sum_{j at c} c y_j k(x_ids[r], x_j) (SelfInit's trivial partition),
        compensated (``neumaier_add``: at c = 1e12 the terms cancel)."""
        F, Fc = [0.0] * len(ids), [0.0] * len(ids)         # compensated sums
        for j in at_c:
            for r, i in enumerate(ids):
                kv = self.kdiag[i] if i == j else self._k(i, j)
                F[r], Fc[r] = neumaier_add(F[r], Fc[r], self.C * self.y[j] * kv)
        return np.array([f + fc for f, fc in zip(F, Fc)])

    def _activate(self, ids):
        """The pending ``ids`` enter the problem at alpha = 0 (status I_o): their kernel
        values with I_s fill their rows of KS."""
        for i in ids:
            for j, s in enumerate(self.S):
                self.KS[i, j] = self._k(i, s)
            self.status[i] = I_O

    def _column(self, i, part=None):
        """k(x_l, x_i) for every id l (0 for removed ids): the cached part, the entries
        known from KS (l in I_s), those given in ``part`` (ids, values: evaluated for
        the score of a new example, ``_f_of``) and k(x_i, x_i) are not evaluated again."""
        n = self.n
        cached = self.cache.pop(i, None)
        L = 0 if cached is None else cached.shape[0]
        col = np.full(n, np.nan)
        if L:
            col[:L] = cached                              # NaN where unknown then
        if part is not None:
            for l, v in zip(*part):
                if np.isnan(col[l]):
                    col[l] = v
        pos = {s: j for j, s in enumerate(self.S)}
        for l in range(n):
            if self.status[l] < 0 or not np.isnan(col[l]):
                continue
            if l == i:
                col[l] = self.kdiag[i]
            elif l in pos:
                col[l] = self.KS[i, pos[l]]
            else:
                col[l] = self._k(l, i)
        col[i] = self.kdiag[i]
        return col

    def _known(self, col):
        """A column as the paths use it: 0 where an entry is unknown (ids outside the problem)."""
        return np.where(np.isnan(col), 0.0, col)

    def _cache_put(self, i, col):
        """Keep the column of an example that left I_s (oldest entries go first)."""
        self.cache.pop(i, None)
        col = np.array(col[: self.n], dtype=np.float64)
        col[self.status[: self.n] < 0] = np.nan               # unknown: not in the problem
        max_cols = int(self.cache_size * 2**20) // (8 * max(self.n, 1))
        if max_cols < 1:
            return
        self.cache[i] = col
        while len(self.cache) > max_cols:
            self.cache.popitem(last=False)

    def _cache_drop(self, i):
        """Forget the cached column of i (an unlearned example)."""
        self.cache.pop(i, None)

    def _saved_KS_R(self, n):
        """{"KS": the kernel columns of I_s for the n examples, "R": the bordered inverse},
        copies of the state's own arrays (``save_state``; the twin's engine hands out
        fresh arrays, so it does not copy them twice)."""
        return {"KS": self.KS[:n, : len(self.S)].copy(), "R": self.R.copy()}

    def _cache_arrays(self):
        """The cache as arrays (persistence): ids oldest first, lengths, the columns
        one after another."""
        return {"cache_ids": np.array(list(self.cache.keys()), dtype=np.intp),
                "cache_len": np.array([c.shape[0] for c in self.cache.values()], dtype=np.intp),
                "cache_cols": (np.concatenate(list(self.cache.values())) if self.cache
                               else np.zeros(0))}

    def _cache_load(self, ids, lengths, cols):
        """The cache from the arrays of :meth:`_cache_arrays`."""
        self.cache = OrderedDict()
        start = 0
        for i, L in zip(np.asarray(ids).tolist(), np.asarray(lengths).tolist()):
            self.cache[int(i)] = np.array(cols[start: start + L], dtype=np.float64)
            start += L

    # ------------------------------------------------------------------ factorisation
    def _bordered(self):
        """The bordered matrix [[0, y_S^T], [y_S, Q_SS]] from the cached columns."""
        return bordered_matrix(self.y, self.KS, self.S)

    def _refresh(self):
        """R afresh from the cached columns (doubtful pivots); False if M is singular."""
        if not self.S:
            return False
        try:
            self.R = lu_inverse(self._bordered())
        except np.linalg.LinAlgError:
            return False
        self.fresh = True
        self.n_refresh += 1
        return True

    def _add_to_S(self, i, col, beta=None, kappa=None):
        """i joins I_s (bordered_grow, or bordered_start when I_s is empty)."""
        k = len(self.S)
        if k == 0:
            self.R = bordered_start(self.y[i], self.kdiag[i])
        else:
            self.R = bordered_grow(self.R, beta, kappa)             # Eq. 8 of C&P
        if self.KS.shape[1] <= k:
            KS = np.zeros((self.KS.shape[0], max(2 * k, 8)))
            KS[:, :k] = self.KS[:, :k]
            self.KS = KS
        self.KS[:, k] = 0.0
        self.KS[: self.n, k] = self._known(col)
        self.S.append(i)
        self.status[i] = I_S
        self.g[i] = 0.0
        self.fresh = False
        self._s_changed()

    def _s_changed(self):
        """Every ``refresh_every`` changes of I_s, R afresh (drift of the rank-one updates)."""
        self.n_s_changes += 1
        if self.refresh_every and self.S and self.n_s_changes % self.refresh_every == 0:
            drift = bordered_drift(self.R, self.y, self.KS, self.S)
            if not drift <= DRIFT_REFRESH:
                self._refresh()

    def _remove_from_S(self, pos, new_status):
        """The member at ``pos`` leaves I_s (bordered_shrink; a fresh R if that is
        numerically singular)."""
        s = self.S[pos]
        k = len(self.S)
        # an inverse of a badly conditioned M (max|R| max|M| large) carries its error into
        # the smaller one: R afresh after the shrink then
        ill = k > 1 and bordered_max_abs(self.R) * max(1.0, self.kmax) > COND_REFRESH
        self._cache_put(s, self.KS[: self.n, pos])
        R = bordered_shrink(self.R, pos + 1, EPS_SHRINK) if k > 1 else np.zeros((0, 0))
        self.KS[:, pos: k - 1] = self.KS[:, pos + 1: k]
        del self.S[pos]
        self.status[s] = new_status
        self.fresh = False
        if R is None:
            if not self._refresh():
                raise RuntimeError("POKER: singular active set after a removal")
        else:
            self.R = R
            self._s_changed()
            if ill and self.S and not self.fresh:
                self._refresh()

    def _solve_fixed(self, r):
        """z with Q_ss z = r (b fixed), from the bordered inverse:
        z = R_ss r + dtau R_s0, dtau = -R_0s r / R_00 (so that db = 0)."""
        R = self.R
        dtau = -dot(R[0, 1:], r) / R[0, 0]
        return matvec(R[1:, 1:], r) + dtau * R[1:, 0]

    def _qss_singular(self):
        """Q_ss numerically singular: R_00 = -v'Q_ss v (v = R_s0, y_s'v = 1) is zero
        against k_max ||v||^2."""
        v = self.R[1:, 0]
        return -self.R[0, 0] <= EPS_PIVOT * self.kmax * dot(v, v)

    # ------------------------------------------------------------------ one breakpoint
    def _direction(self, mode):
        """Rates of the piece: (dalpha_s, db, dg, t_end, b_only, aF); the parameter is
        u (fixed bias), |tau| (adjustable bias) or t (decrement)."""
        n, k = self.n, len(self.S)
        S = np.array(self.S, dtype=np.intp)
        y = self.y[:n]
        yS = y[S]
        F = self.F
        # the set F whose alphas the parameter drives: to 0 (decrement) or up to c
        # (joint increment: alpha_F = t c, a0_F = c)
        aF = (-self.a0[F] if mode == UNLEARN else self.a0[F] if mode == JOINT
              else np.zeros(F.shape[0]))
        b_only = False
        bdot = 0.0
        if mode == FIXED:
            # Eq. 3 on I_s: -Q_ss dalpha_s = d_s du (b fixed)
            t_end = 1.0 - self.u
            aS = self._solve_fixed(-self.d[S]) if k else np.zeros(0)
        elif mode == BIAS:
            # Eq. 4 along tau = y'alpha: [-db; dalpha_s] = R [sigma; 0]
            sigma = 1.0 if self.tau < 0 else -1.0
            if k:
                t_end = abs(self.tau)
                sol = sigma * self.R[:, 0]
                bdot, aS = -sol[0], sol[1:]
            else:
                # I_s empty: every alpha is at a bound and y'alpha is known exactly (the
                # tracked tau may carry round-off); it cannot move: b alone moves (Sec. 3,
                # the first pieces) until an example reaches its margin
                self.tau = self._y_alpha(ordered=True)
                if abs(self.tau) <= self.aw:
                    t_end, aS = 0.0, np.zeros(0)
                else:
                    sigma = 1.0 if self.tau < 0 else -1.0
                    t_end, b_only, bdot, aS = np.inf, True, sigma, np.zeros(0)
        else:
            # decrement: alpha_F = (1 - t) a0_F; joint increment: alpha_F = t a0_F; I_s
            # rows and y'alpha = 0 kept
            t_end = 1.0 - self.t
            h = -dot(y[F], aF)                          # y_s'dalpha_s must equal h
            rhs = -(yS * matvec(self.KF[S], y[F] * aF)) if F.shape[0] else np.zeros(k)
            if k:
                sol = matvec(self.R, np.concatenate(([h], rhs)))
                bdot, aS = -sol[0], sol[1:]
            elif abs(h) <= self.aw:
                aS = np.zeros(0)
            else:
                t_end, b_only, bdot, aS = np.inf, True, np.sign(h), np.zeros(0)
                aF = np.zeros(F.shape[0])
        # the sensitivities, O(n |I_s|): every sum over I_s left to right (the compiled order)
        inner = matvec(self.KS[:n, :k], yS * aS) if k else np.zeros(n)
        if F.shape[0]:
            inner = inner + matvec(self.KF[:n], y[F] * aF)
        gdot = y * inner - y * bdot
        if mode == FIXED:
            gdot = gdot + self.d[:n]
        # round-off bound of each rate: sqrt(k_ii) (sum_j sqrt(k_jj) |dalpha_j|) + |db| + |d_i|
        kr = np.sqrt(np.abs(self.kdiag[:n]))
        terms = (dot(np.abs(aS), kr[S]) if k else 0.0) + (
            dot(np.abs(aF), kr[F]) if F.shape[0] else 0.0)
        rtol = EPS_RATE * (kr * terms + abs(bdot) + (np.abs(self.d[:n]) if mode == FIXED else 0.0))
        return aS, bdot, gdot, rtol, t_end, b_only, aF

    def _follow(self, mode):
        """Follow the path of ``mode`` to the end of its parameter (one breakpoint per
        pass of the loop)."""
        self.phase = mode
        self.dependent = []                  # the rates change with the system followed
        if mode == FIXED:
            self._regularise_fixed()
        max_iter = 50 * (self.n + 10)
        for _ in range(max_iter):
            n, k = self.n, len(self.S)
            S = np.array(self.S, dtype=np.intp)
            st = self.status[:n]
            aS, bdot, gdot, rtol, t_end, b_only, aF = self._direction(mode)
            # ---- the next breakpoint (Sec. 3: "b can increase until one of the four
            # types of inequality constraints becomes active")
            # alpha_s reaching c (rate > 0) or 0 (rate < 0); rates within round-off of
            # zero make no event
            athr = EPS_ARATE * (float(np.max(np.abs(aS))) if k else 0.0)
            if mode == JOINT and aF.shape[0]:
                # relative to the rates of F too: when the true alpha_s rates are all 0
                # (y_F'a_F = 0 and only b moves), what is left of them is round-off of R,
                # and a margin vector at c would leave by it at a zero step, rejoin and
                # leave again for ever
                athr = max(athr, EPS_ARATE * float(np.max(np.abs(aF))))
            up, down = (aS > athr) & (aS > 0), (aS < -athr) & (aS < 0)
            moving = up | down
            aSm = aS[moving]
            ts_s = np.maximum(np.where(up[moving], self.C - self.alpha[S[moving]],
                                       -self.alpha[S[moving]]) / aSm, 0.0) if k else np.zeros(0)
            ws_s = self.aw / np.abs(aSm)
            # an s_o or a xi_c reaching 0 (candidates to join I_s)
            joins = ((st == I_O) & (gdot < -rtol)) | ((st == I_C) & (gdot > rtol))
            if mode == JOINT:
                # a member of F (g < 0, alpha_F = t c) reaching its margin joins I_s
                joins |= (st == FORCED) & (gdot > rtol)
            cand = np.flatnonzero(joins)
            if self.dependent:
                cand = cand[~np.isin(cand, self.dependent)]
            ts = np.concatenate((ts_s, np.maximum(-self.g[cand] / gdot[cand], 0.0)))
            ws = np.concatenate((ws_s, EPS_G / np.abs(gdot[cand])))
            ids = np.concatenate((S[moving], cand))
            kinds = np.concatenate((np.full(aSm.shape[0], EV_LEAVE), np.full(cand.shape[0], EV_JOIN)))
            w_end = 1e-15 if mode != BIAS else 1e-15 * max(1.0, abs(self.tau))
            t, kind, who = next_breakpoint(t_end, w_end, ts, ws, ids, kinds)
            if kind < 0 and mode == UNLEARN:
                # I_s emptied at t = 1 up to round-off (the last margin vector leaves with
                # the last of the removed mass; nothing of the other class can absorb the
                # round-off residue): the decrement is over
                t, kind, bdot = 0.0, EV_END, 0.0
            if kind < 0:
                raise RuntimeError("POKER: unbounded piece (internal error)")
            if self.budget == 0:
                raise _Budget()
            # ---- move along the piece
            if k:
                self.alpha[S] = np.clip(self.alpha[S] + aS * t, 0.0, self.C)
            if mode == UNLEARN and not b_only and self.F.shape[0]:
                self.alpha[self.F] = np.maximum(self.alpha[self.F] + aF * t, 0.0)
            elif mode == JOINT and not b_only and self.F.shape[0]:
                self.alpha[self.F] = np.clip(self.alpha[self.F] + aF * t, 0.0, self.C)
            self.b += bdot * t
            move = (st != I_S) & (st >= 0)
            self.g[:n][move] += gdot[move] * t
            if mode == FIXED:
                self.u += t
            elif mode == BIAS and not b_only:
                self.tau += (1.0 if self.tau < 0 else -1.0) * t
            elif mode in (UNLEARN, JOINT) and not b_only:
                self.t += t
            self.n_iterations += 1
            if self.budget > 0:
                self.budget -= 1
            # ---- the breakpoint: update the partition
            if kind == EV_END:
                if mode == FIXED:
                    self.u = 1.0
                elif mode == BIAS:
                    self.tau = 0.0
                else:
                    self.t = 1.0
                    self.alpha[self.F] = 0.0 if mode == UNLEARN else self.a0[self.F]
                self._hook()
                return
            if kind == EV_LEAVE:
                pos = self.S.index(who)
                if aS[pos] > 0:
                    self.alpha[who] = self.C
                    new = I_C
                else:
                    self.alpha[who] = 0.0
                    new = I_O
                self._remove_from_S(pos, new)
                self.g[who] = 0.0
                self.dependent = []
            else:
                self.g[who] = 0.0
                if self.status[who] == FORCED:
                    # joint increment: who leaves F at alpha = t c and joins I_s as an
                    # example off its bound (status I_C: sigma = -1 in an exchange)
                    pos = int(np.flatnonzero(self.F == who)[0])
                    self.F = np.delete(self.F, pos)
                    self.KF = np.delete(self.KF, pos, axis=1)
                    self.status[who] = I_C
                self._join(who, mode)
            self._hook()
        raise CyclingError("POKER: too many breakpoints (cycling?)")

    def _hook(self):
        if self.breakpoint_hook is not None:
            self.breakpoint_hook(self)

    def _join(self, i, mode):
        """Example i (in I_o or I_c, g_i = 0) joins I_s; a zero pivot (i dependent on
        I_s) goes through an exchange along the null direction instead."""
        col = self._column(i)
        sigma = 1.0 if self.status[i] == I_O else -1.0   # alpha_i leaves 0 upwards, c downwards
        changed = False
        while True:
            k = len(self.S)
            S = np.array(self.S, dtype=np.intp)
            q_ii = self.kdiag[i]
            if k == 0:
                if mode == FIXED and q_ii <= EPS_PIVOT_ABS * self.kmax:
                    dirn = np.zeros(0)                       # alpha_i alone: nothing moves
                else:
                    self._add_to_S(i, col)
                    self.dependent = []
                    return
            elif (dup := self._duplicate(i, col)) >= 0:
                # i is a copy of the member at dup (the same point in feature space):
                # its exact null direction is alpha_dup moving by -y_i y_dup per unit of
                # alpha_i (Q_ss z = Q_si and y_s'z = y_i by z = y_i y_dup e_dup, with
                # db = 0), with no round-off of R in it: at c = 1e12 a relative error of
                # 1e-17 in the computed z, times a step of order c, left alpha an ulp
                # of c off and g drifting by 1e-5 (docs, "Extreme C")
                dirn = np.zeros(k)
                dirn[dup] = -sigma * self.y[i] * self.y[S[dup]]
            else:
                m = np.concatenate(([self.y[i]], self.y[S] * self.y[i] * col[S]))
                for attempt in range(2):
                    beta = bordered_beta(self.R, m)             # beta = -R m
                    kb = bordered_pivot(q_ii, m, beta)          # q - m'M^-1 m
                    scale_b = abs(q_ii) + dot(np.abs(m), np.abs(beta))
                    if mode == FIXED:
                        z = self._solve_fixed(m[1:])            # Q_ss z = Q_si
                        kappa = q_ii - dot(m[1:], z)
                        scale = abs(q_ii) + dot(np.abs(m[1:]), np.abs(z))
                    else:
                        z, kappa, scale = -beta[1:], kb, scale_b
                    if not pivot_doubtful(kappa, scale, EPS_DOUBT) or attempt == 1 or self.fresh:
                        break
                    if not self._refresh():                     # doubtful: re-solve
                        break
                if not pivot_is_zero(kappa, scale, self.kmax, EPS_PIVOT, EPS_PIVOT_ABS):
                    self._add_to_S(i, col, beta, kb)
                    if kappa <= EPS_SMALL_PIVOT * scale:
                        self._refresh()                         # a small pivot: R afresh
                    if not changed:
                        self.dependent = []
                    return
                dirn = -sigma * z                              # dalpha_s per unit of alpha_i
            # ---- exchange: alpha_i moves off its bound along the null direction (no g
            # changes, nor y'alpha with b adjustable) until a member of I_s reaches a
            # bound (it leaves, i joins) or alpha_i reaches its other bound
            # (alpha_i at 0 or c, or inside its box when it left F: the distance)
            ts = [self.C - self.alpha[i] if sigma > 0 else self.alpha[i]]
            ws, ids, kinds = [self.aw], [i], [EV_FLIP]
            athr = EPS_ARATE * max(1.0, float(np.max(np.abs(dirn))) if k else 1.0)
            for pos in range(k):
                s, a = S[pos], dirn[pos]
                if a > athr:
                    ts.append(max((self.C - self.alpha[s]) / a, 0.0))
                elif a < -athr:
                    ts.append(max(-self.alpha[s] / a, 0.0))
                else:
                    # a rate within round-off of zero makes no event and no move: the
                    # step can be of order c, and g is not updated along a null
                    # direction (at c = 1e12 a rate of 1e-16 would move g by 1e-4)
                    dirn[pos] = 0.0
                    continue
                ws.append(self.aw / abs(a))
                ids.append(int(s))
                kinds.append(EV_LEAVE)
            tmin = float(min(ts))
            kind, who = least_index_event(                    # i's own event first
                [(t, kd, j, w, kd == EV_FLIP) for t, w, j, kd in zip(ts, ws, ids, kinds)], tmin)
            if k:
                self.alpha[S] = np.clip(self.alpha[S] + dirn * tmin, 0.0, self.C)
                # the members whose event is tied with the one taken reach their bound
                # with it (g is not updated along a null direction: an alpha left an ulp
                # of c off its bound would move the g of the others by that ulp)
                for t_j, w_j, j in zip(ts[1:], ws[1:], ids[1:]):
                    if t_j <= tmin + w_j:
                        self.alpha[j] = self.C if dirn[self.S.index(j)] > 0 else 0.0
            self.n_iterations += 1
            self.n_exchanges += 1
            if kind == EV_FLIP:
                self.alpha[i] = self.C if sigma > 0 else 0.0
                self.status[i] = I_C if sigma > 0 else I_O
                self.g[i] = 0.0
                self._cache_put(i, col)
                self.dependent.append(i)
                return
            self.alpha[i] += sigma * tmin
            pos = self.S.index(who)
            if dirn[pos] > 0:
                self.alpha[who] = self.C
                new = I_C
            else:
                self.alpha[who] = 0.0
                new = I_O
            self._remove_from_S(pos, new)
            self.g[who] = 0.0
            self.dependent = [who]             # I_s changed: the older marks go
            changed = True
            # i is now strictly inside its box: it joins the smaller I_s (retry); its
            # status stays I_O/I_C until then and sigma keeps its direction

    def _duplicate(self, i, col):
        """Position in I_s of the first member identical to i in feature space
        (k(x_i, x_s) = k(x_i, x_i) = k(x_s, x_s) exactly), or -1."""
        q = self.kdiag[i]
        for pos, s in enumerate(self.S):
            if col[s] == q and self.kdiag[s] == q:
                return pos
        return -1

    def _regularise_fixed(self):
        """Before a fixed-bias path: while Q_ss is singular, move alpha_s along its null
        vector v = R_s0 (no g changes, b fixed) until a member reaches a bound and leaves."""
        for _ in range(len(self.S) + 1):
            if not self.S or not self._qss_singular():
                return
            if not self.fresh:
                self._refresh()
                if not self._qss_singular():
                    return
            S = np.array(self.S, dtype=np.intp)
            v = self.R[1:, 0].copy()
            ts, ws, ids, kinds = [], [], [], []
            athr = EPS_ARATE * float(np.max(np.abs(v)))
            for pos in range(len(S)):
                a = v[pos]
                if a > athr:
                    ts.append(max((self.C - self.alpha[S[pos]]) / a, 0.0))
                elif a < -athr:
                    ts.append(max(-self.alpha[S[pos]] / a, 0.0))
                else:
                    v[pos] = 0.0                     # no event, no move (see _join)
                    continue
                ws.append(self.aw / abs(a))
                ids.append(int(S[pos]))
                kinds.append(EV_LEAVE)
            t, kind, who = next_breakpoint(np.inf, 0.0, ts, ws, ids, kinds)
            self.alpha[S] = np.clip(self.alpha[S] + v * t, 0.0, self.C)
            pos = self.S.index(who)
            new = I_C if v[pos] > 0 else I_O
            self.alpha[who] = self.C if new == I_C else 0.0
            self._remove_from_S(pos, new)
            self.g[who] = 0.0
            self.n_iterations += 1
            self.n_exchanges += 1
            self._hook()

    # ------------------------------------------------------------------ the methods
    def _f_of(self, ids, values=False):
        """w'phi(x_j) for the new ids j, from the examples with alpha > 0 (the kernel
        values with I_s from KS for the ids in the problem, whose KS rows are filled;
        a pending id of a selection pool has none yet).  ``values``: also the support
        vectors off I_s and the kernel values evaluated with them, ``(f, sv_off, V)``
        with ``V[r, q] = k(x_sv_off[q], x_ids[r])`` (the joint increment's columns of F
        take them over, ``_f_columns``)."""
        n = self.n
        new = set(ids)
        sv = [l for l in range(n) if self.alpha[l] > 0.0 and self.status[l] >= 0
              and l not in new]
        pos = {s: j for j, s in enumerate(self.S)}
        off = [l for l in sv if l not in pos]
        q_of = {l: q for q, l in enumerate(off)}
        V = np.zeros((len(ids), len(off)))
        out = np.zeros(len(ids))
        for r, j in enumerate(ids):
            acc = comp = 0.0                  # a compensated sum (``neumaier_add``)
            known = self.status[j] >= 0
            for l in sv:
                kv = self.KS[j, pos[l]] if (known and l in pos) else self._k(l, j)
                if l in q_of:
                    V[r, q_of[l]] = kv
                acc, comp = neumaier_add(acc, comp, self.alpha[l] * self.y[l] * kv)
            out[r] = acc + comp
        if values:
            return out, np.array(off, dtype=np.intp), V
        return out

    def _y_alpha(self, ordered=False):
        """y'alpha over the examples in the problem: the terms at c exactly (c times
        an integer), plus the others (summed left to right when ``ordered``, the
        compiled order).  At c = 1e12 a plain sum keeps partial sums of order c and
        loses the low digits of the free alphas (2e-4 of a tau of 1.2: the extreme-C
        property test)."""
        n = self.n
        act = self.status[:n] >= 0
        a, y = self.alpha[:n][act], self.y[:n][act]
        at_c = a == self.C
        rest = ~at_c & (a != 0.0)
        free = dot(y[rest], a[rest]) if ordered else float(y[rest] @ a[rest])
        return self.C * float(np.sum(y[at_c])) + free

    def adjust_bias(self):
        """The adjustable-bias method (Sec. 3) from the current fixed-bias solution:
        b moves until y'alpha = 0 (a no-op when it is 0 already)."""
        self.tau = self._y_alpha()
        if abs(self.tau) > self.aw:
            self._follow(BIAS)
        self.tau = 0.0
        self.phase = IDLE

    def add_chunk(self, X, y, joint=False):
        """AltPOKER (Fig. 1): add the rows of X (2-D array or CSR) with labels y (+-1)
        to the optimal solution and restore optimality.  ``joint=True``: the joint
        increment instead (:meth:`learn_ids`).  Returns the number of violated points
        (0: nothing changed)."""
        return self.learn_ids(self._append_rows(X, y).tolist(), joint=joint)

    def learn_ids(self, ids, joint=False):
        """AltPOKER (Fig. 1) on stored pending examples ``ids`` (one chunk), or with
        ``joint=True`` the joint increment (beyond the paper, :meth:`_learn_joint`)."""
        ids = [int(i) for i in ids]
        if not ids:
            return 0
        if not np.any(self.status[: self.n] >= 0):
            # Fig. 1 starts from an optimal solution; on an empty model the first chunk
            # is solved by SelfInit, the paper's batch method (from alpha = 0, b = 0 every
            # example of a large chunk would reach its margin at u = 1/2 at once)
            self._self_init_ids(np.array(ids, dtype=np.intp))
            return len(ids)
        self._activate(ids)
        if joint:
            return self._learn_joint(ids)
        # Fig. 1 line 1: alpha_j = 0, xi_j = 0, s_j = y_j (w'x_j - b) - 1
        f = self._f_of(ids)
        violated = 0
        for r, j in enumerate(ids):
            yj = self.y[j]
            s = yj * (f[r] - self.b) - 1.0
            if s >= 0.0:                                  # margin met: p_j = -1 - b y_j
                self.g[j] = s
                self.p[j] = -1.0 - self.b * yj
                self.d[j] = 0.0
            else:                                         # violated: s_j = 1 at u = 0
                violated += 1
                self.g[j] = 1.0
                self.p[j] = -yj * f[r] + 1.0              # p_j = -(Q alpha)_j + 1
                self.d[j] = -1.0 - yj * self.b - self.p[j]
            self.status[j] = I_O
        # Fig. 1 line 3: if p != -e - b y, POKERfixedbias (u: 0 -> 1)
        if violated:
            # Fig. 1 line 0: p = -e - b y on the old points (their rows hold at every u;
            # p and d are read by the fixed-bias path only)
            old = np.flatnonzero(self.status[: self.n] >= 0)
            old = old[~np.isin(old, ids)]
            self.p[old] = -1.0 - self.b * self.y[old]
            self.d[old] = 0.0
            self.u = 0.0
            self._follow(FIXED)
            self.d[: self.n] = 0.0
        # Fig. 1 line 4: POKERadjustbias (unconditional; returns at once if y'alpha = 0)
        self.adjust_bias()
        self._end_chunk("AltPOKER")
        return violated

    def _learn_joint(self, ids):
        """The joint increment (beyond the paper; the multiple incremental path of
        Karasuyama & Takeuchi, NIPS 2009, on this family's machinery): the chunk's
        violated examples F start at alpha = 0 and rise together, alpha_F = t c for t
        from 0 to 1, while b stays adjustable and y'alpha = 0 and the I_s rows hold
        (the decrement's parametric system with the opposite sign).  A member of F whose
        g reaches 0 joins I_s with its alpha as it is; at t = 1 the rest are at c.  One
        path instead of Fig. 1's two: the fixed-bias path moves the old margin vectors
        with b held, and the adjustable-bias path moves many of them back."""
        ids = np.asarray(ids, dtype=np.intp)
        # the scores, JOINT_BLOCK new examples at a time: the kernel values with the
        # support vectors off I_s kept for the violated ones (``_f_columns``), the
        # memory of the block bounded
        yj = self.y[ids]
        s = np.empty(ids.size)                            # g_j at alpha_j = 0
        parts = []
        for start in range(0, ids.size, JOINT_BLOCK):
            stop = min(start + JOINT_BLOCK, ids.size)
            f, sv_off, V = self._f_of(ids[start:stop].tolist(), values=True)
            s[start:stop] = yj[start:stop] * (f - self.b) - 1.0
            parts.append(V[s[start:stop] < 0.0])
        V = np.concatenate(parts) if len(parts) > 1 else parts[0]
        self.g[ids] = s
        self.p[ids] = -1.0 - self.b * yj
        self.d[ids] = 0.0
        violated = s < 0.0
        # margin met: I_o, nothing changes; violated: in F, alpha_j = 0
        self.status[ids] = np.where(violated, FORCED, I_O)
        F = ids[violated]
        if F.size:
            self.KF = self._f_columns(F, sv_off, V)
            self.F = F
            self.a0[F] = self.C
            self.t = 0.0
            try:
                self._follow(JOINT)
            except CyclingError as exc:                   # on degenerate data
                raise JointIncrementError(f"joint increment: {exc}") from exc
            self.alpha[self.F] = self.C
            self.status[self.F] = I_C
            self.F = np.zeros(0, dtype=np.intp)
            self.KF = np.zeros((0, 0))
        self.phase = IDLE
        self._end_chunk("joint increment", JointIncrementError)
        return int(len(F))

    def _f_columns(self, F, sv_off, V):
        """The kernel columns of F (n x |F|, 0 off the problem), each kept in the cache
        for its join (not evaluated again); the values with the support vectors off I_s
        are those of the scores (row c of V: member c), not evaluated again."""
        KF = np.empty((self.n, len(F)))
        for c, j in enumerate(F):
            KF[:, c] = self._known(self._column(int(j), (sv_off, V[c])))
            self._cache_put(int(j), KF[:, c])
        return KF

    def _end_chunk(self, what, error=PathError):
        """The end of a chunk or of SelfInit: the path's end checked, then g afresh at
        large c (:meth:`_polish`) and the bias centred in its range (:meth:`_centre_bias`)."""
        self._check_end(what, error)
        self._polish()
        self._centre_bias()
        self.n_chunks += 1

    def _check_end(self, what, error=PathError):
        """The end of a path: y'alpha = 0 within END_BALANCE_TOL c n and the kept g on
        the right side of 0 for I_o and I_c (O(n); the paths keep both, so a breach means
        the active set went singular on the way): else ``error``."""
        n = self.n
        tau = self._y_alpha(ordered=True)
        act = self.status[:n] >= 0
        st, g = self.status[:n], self.g[:n]
        tol = END_BALANCE_TOL * self.C * max(1, int(np.sum(act)))
        gtol = 1e-6 * (1.0 + self.kmax * self.C)
        bad = ((st == I_O) & (g < -gtol)) | ((st == I_C) & (g > gtol))
        if not abs(tau) <= tol or bool(np.any(bad & act)):
            raise error(
                f"{what} ended with y'alpha = {tau:.3g} (allowed {tol:.3g}) and "
                f"{int(np.sum(bad & act))} examples on the wrong side of their margin")
        if self.S and not bordered_max_abs(self.R) * max(1.0, self.kmax) <= END_COND:
            # the inverse the next path starts from, checked where it is ill-conditioned
            # (O(|I_s|^3), rare): mended by a fresh R, or the active set is singular
            res = self._inverse_residual()
            if not res <= END_RESIDUAL_TOL:
                if not self._refresh() or not self._inverse_residual() <= END_RESIDUAL_TOL:
                    raise error(f"{what} ended with a singular active set (||M R - I|| = "
                                f"{res:.3g} with max|R| = {bordered_max_abs(self.R):.3g})")

    def _inverse_residual(self):
        """max |M R - I| (M = [[0, y_s'], [y_s, Q_ss]]; O(|I_s|^3))."""
        return float(np.max(np.abs(self._bordered() @ self.R - np.eye(len(self.S) + 1))))

    def self_init(self, X, y):
        """SelfInit POKER (Sec. 5): the trivial partition (alpha in {0, c} by class, b at
        the end of its range that keeps it optimal), then the adjustable-bias method."""
        if any(self.status[: self.n] >= 0):
            raise ValueError("self_init starts from an empty model")
        ids = self._append_rows(X, y)
        if ids.size:
            self._self_init_ids(ids)

    def _self_init_ids(self, ids):
        """SelfInit on the stored pending ``ids`` (the model is empty)."""
        self._activate(ids)
        yy = self.y[ids]
        # the class at c: the smaller one (fewer kernel columns); +1 on a tie
        cls = 1.0 if np.sum(yy > 0) <= np.sum(yy < 0) else -1.0
        at_c = ids[yy == cls]
        self.alpha[at_c] = self.C
        self.status[at_c] = I_C
        F = self._class_sums(ids, at_c)                   # w'phi(x_i) = c sum_{at c} y_j k_ij
        # the bias that keeps the trivial partition optimal, at its finite end:
        # cls = +1 (b large): b >= F_i - 1 (y_i = +1, at c), b >= F_i + 1 (y_i = -1, at 0)
        bounds = F - yy                                   # g_i = 0 at b = F_i - y_i
        self.b = float(np.max(bounds)) if cls > 0 else float(np.min(bounds))
        self.g[ids] = yy * (F - self.b) - 1.0
        self.adjust_bias()
        self._end_chunk("SelfInit")

    def unlearn(self, ids):
        """Chunk decrement: remove the examples ``ids`` at once, exactly.  Their bounds
        c_i are driven to 0 (alpha_i = (1 - t) alpha_i^0, t: 0 -> 1) by the parametric
        method with b adjustable and y'alpha = 0 kept."""
        ids = np.unique(np.asarray(ids, dtype=np.intp))
        for i in ids:
            if self.status[i] == I_S:
                pos = self.S.index(int(i))
                self.status[i] = FORCED
                self._remove_from_S(pos, FORCED)
            elif self.status[i] == I_O or self.alpha[i] == 0.0:
                self.status[i] = GONE                     # alpha_i = 0: nothing depends on it
                self.alpha[i] = 0.0
            else:
                self.status[i] = FORCED
        F = np.flatnonzero(self.status[: self.n] == FORCED)
        # removed margin vectors at alpha = 0 go at once as well
        F = F[self.alpha[F] > 0.0]
        self.status[np.flatnonzero(self.status[: self.n] == FORCED)] = GONE
        self.status[F] = FORCED
        if F.size:
            self.F = F
            self.a0[F] = self.alpha[F]
            self.KF = np.column_stack([self._known(self._column(int(j))) for j in F])
            self.t = 0.0
            self._follow(UNLEARN)
            self.alpha[F] = 0.0
            self.status[F] = GONE
            self.F = np.zeros(0, dtype=np.intp)
            self.KF = np.zeros((0, 0))
        for i in ids:
            self._cache_drop(int(i))
            self.alpha[i] = 0.0
            self.g[i] = 0.0
        self.phase = IDLE
        self._polish()
        self._centre_bias()

    def _polish(self):
        """At large c (c k_max above ``POLISH_CK``), g afresh at the end of an operation.

        The path is exact in exact arithmetic, but its intermediate alphas need not be
        representable: at c = 1e12 an exchange that moves an alpha from 0 to c - 2.54
        stores it an ulp of c (1.2e-4) off, and g, updated by the exact rates, drifts by
        that much times k while the final partition (0, c, c) is exact again.  From the
        stored alpha and b, each g is then recomputed correctly rounded (exact products,
        ``math.fsum``), O(n #SV) kernel values; the bias of an empty I_s is then centred
        on exact margins.  Below POLISH_CK the round-off of g is below 1e-7 and
        nothing is done (every ordinary C)."""
        if self.C * self.kmax <= POLISH_CK:
            return
        n = self.n
        act = np.flatnonzero(self.status[:n] >= 0)
        rows = {}

        def exact_g(i, sv, ya):
            if i not in rows:
                rows[i] = {}
            known = rows[i]
            kv = np.array([known.setdefault(int(j), self.kdiag[i] if j == i
                                            else self._k(int(i), int(j))) for j in sv])
            return _exact_sum(ya, kv, self.y[i], [-1.0, -self.y[i] * self.b])

        if self.S and self.phase != FIXED:
            # one step of iterative refinement of (b, alpha_s) on the exact residuals
            # of the bordered system: M [-db; dalpha_s] = -[y'alpha; g_s]
            S = np.array(self.S, dtype=np.intp)
            sv = act[self.alpha[act] > 0.0]
            ya = self.alpha[sv] * self.y[sv]
            r = np.array([math.fsum(self.y[act] * self.alpha[act])]
                         + [exact_g(int(i), sv, ya) for i in S])
            sol = -matvec(self.R, r)
            new = self.alpha[S] + sol[1:]
            if np.all((new >= 0.0) & (new <= self.C)):
                self.alpha[S] = new
                self.b -= sol[0]
        sv = act[self.alpha[act] > 0.0]
        ya = self.alpha[sv] * self.y[sv]
        for i in act:
            if self.status[i] == I_S:
                continue                              # on its margin: g = 0 by definition
            self.g[i] = exact_g(int(i), sv, ya)

    def _centre_bias(self):
        """With I_s empty every b of an interval keeps the KKT conditions: take its
        midpoint (LIBSVM's choice), or its finite end (one class only).  I_s counts as
        empty when all its members are at a bound (alpha within ``alpha_window(c,
        EPS_BOUND)`` of 0 or c): they leave I_s first (b is then not unique either), g
        following the change of their alpha."""
        wb = alpha_window(self.C, EPS_BOUND)
        if any(wb < self.alpha[s] < self.C - wb for s in self.S):
            return
        n = self.n
        while self.S:
            k = len(self.S)
            s = self.S[-1]
            at_c = self.alpha[s] > 0.5 * self.C
            new = self.C if at_c else 0.0
            # g follows the snap: g_l += y_l y_s k_ls (new - alpha_s) (in margin units it
            # is not negligible at large c)
            delta = new - self.alpha[s]
            if delta != 0.0:
                act = self.status[:n] >= 0
                self.g[:n][act] += (self.y[:n] * (self.y[s] * delta) * self.KS[:n, k - 1])[act]
            self.alpha[s] = new
            self._remove_from_S(k - 1, I_C if at_c else I_O)
        st, y = self.status[:n], self.y[:n]
        v = self.b + y * self.g[:n]               # the b that puts i on its margin
        # g_i(b') = g_i - y_i (b' - b): I_o needs g >= 0, I_c needs g <= 0
        hi_mask = ((st == I_O) & (y > 0)) | ((st == I_C) & (y < 0))
        lo_mask = ((st == I_O) & (y < 0)) | ((st == I_C) & (y > 0))
        lo = np.max(v[lo_mask]) if lo_mask.any() else -np.inf
        hi = np.min(v[hi_mask]) if hi_mask.any() else np.inf
        if np.isfinite(lo) and np.isfinite(hi):
            new = 0.5 * (lo + hi)
        elif np.isfinite(lo):
            new = lo
        elif np.isfinite(hi):
            new = hi
        else:
            return
        act = st >= 0
        self.g[:n][act] -= y[act] * (new - self.b)
        self.b = new

    # ------------------------------------------------------------------ stream API
    def step(self, x, y):
        """One example as a chunk of size 1; 1 if it was violated (the model changed)."""
        if self.sparse:
            X = sp.csr_matrix((x.data, x.indices, [0, x.indices.shape[0]]),
                              shape=(1, self.n_features))
        else:
            X = np.asarray(x, dtype=np.float64).reshape(1, -1)
        return int(self.add_chunk(X, [y]) > 0)

    def run(self, X, y, order):
        """The rows ``order`` of X as one AltPOKER chunk; 1 if the model changed."""
        order = np.asarray(order, dtype=np.intp)
        return int(self.add_chunk(X[order], np.asarray(y)[order]) > 0)

    # ------------------------------------------------------------------ selective sampling
    def dual_objective(self):
        """W(alpha) = e'alpha - 1/2 alpha'Q alpha (to be maximised), from the stored g:
        (Q alpha)_i = g_i - q_i with q the right-hand side of the system followed."""
        n = self.n
        act = np.flatnonzero((self.status[:n] >= 0) & (self.alpha[:n] > 0))
        if self.phase == FIXED:
            q = self.p[act] + self.u * self.d[act]
        else:
            q = -1.0 - self.y[act] * self.b
        a = self.alpha[act]
        return float(a.sum() - 0.5 * a @ (self.g[act] - q))

    def _trial_copy(self):
        """An independent copy for a look-ahead that is thrown away (dObj)."""
        return copy.deepcopy(self)

    def _backup(self):
        """An independent copy to put back if a chunk fails (the estimator's)."""
        return copy.deepcopy(self)

    def _dobj(self, j, steps):
        """dObj (Sec. 5): the change of the objective after ``steps`` breakpoints of
        adding the pending example j (on a copy; its kernel evaluations are counted)."""
        trial = self._trial_copy()
        trial.breakpoint_hook = None
        trial.budget = steps
        before = trial.dual_objective()
        try:
            trial.learn_ids([j])
        except _Budget:
            pass
        self.kernel.n_evals = trial.kernel.n_evals
        return trial.dual_objective() - before

    def learn_selective(self, X, y, selection="maxslk", chunk_size=1, n_candidates=10,
                        dobj_steps=3):
        """AltPOKER with selective sampling over the pool (X, y) (Sec. 5).

        The rows are stored first (ids in row order, pending).  At each meta-iteration
        the pool is ranked by the criterion (Cls2W: the smallest |f(x)|, the closest to
        the hyperplane; MaxSlk: the largest slack 1 - y f(x)); ``+dobj`` re-ranks the
        top ``n_candidates`` by the change of the objective after ``dobj_steps``
        breakpoints of adding each; the top ``chunk_size`` are added as one chunk.
        Only violators are worth adding: once none is left, the rest of the pool is
        added as a last chunk (which changes nothing).  Returns the number of chunks."""
        y = np.asarray(y, dtype=np.float64)
        pool = self._append_rows(X, y)
        if not np.any(self.status[: self.n] >= 0):
            # the first chunk: the first example of each class
            first = [int(pool[np.flatnonzero(y == c)[0]]) for c in (-1.0, 1.0) if np.any(y == c)]
            self.learn_ids(first)
            pool = np.setdiff1d(pool, first)
        base, dobj = selection.split("+")[0], selection.endswith("+dobj")
        meta = 1
        while pool.size:
            if base == "none":
                pick = pool[:chunk_size]
            else:
                f = self._f_of(pool.tolist()) - self.b
                slack = 1.0 - self.y[pool] * f
                if slack.max() <= 0.0:
                    pick = pool                           # nothing violates: the rest
                else:
                    key = -slack if base == "maxslk" else np.abs(f)
                    order = np.argsort(key, kind="stable")
                    order = order[slack[order] > 0.0]     # violators only
                    if dobj:
                        top = order[:n_candidates]
                        gains = np.array([self._dobj(int(pool[r]), dobj_steps) for r in top])
                        order = top[np.argsort(-gains, kind="stable")]
                    pick = pool[order[:chunk_size]]
            self.learn_ids(pick)
            pool = np.setdiff1d(pool, pick)
            meta += 1
        return meta

    # ------------------------------------------------------------------ read-outs
    def active_ids(self):
        return np.flatnonzero(self.status[: self.n] >= 0)

    def support_ids(self):
        n = self.n
        return np.flatnonzero((self.status[:n] >= 0) & (self.alpha[:n] > 0.0))

    def support(self):
        """(ids, y_i alpha_i, rows) of the support vectors, ids ascending."""
        ids = self.support_ids()
        rows = stack_rows([self.rows[i] for i in ids], self.n_features, self.sparse)
        return ids, self.alpha[ids] * self.y[ids], rows

    def decision_function(self, X):
        """f(x) = sum_j alpha_j y_j k(x_j, x) - b (kernel values not counted)."""
        ids = self.support_ids()
        coef = self.alpha[ids] * self.y[ids]
        out = np.empty(X.shape[0])
        for r in range(X.shape[0]):
            x = get_row(X, r)
            out[r] = sum(c * self.kernel.value(self.rows[j], x) for j, c in zip(ids, coef))
        return out - self.b

    def get_state(self):
        n = self.n
        st = self.status[:n]
        return {"alpha": self.alpha[:n].copy(), "g": self.g[:n].copy(),
                "y": self.y[:n].copy(), "b": float(self.b),
                "status": st.astype(np.int8).copy(),
                "S_order": np.array(self.S, dtype=np.intp), "n_seen": n,
                "n_iterations": self.n_iterations, "n_exchanges": self.n_exchanges,
                "n_kernel_evals": self.n_kernel_evals, "n_chunks": self.n_chunks}

    def check(self, K=None):
        """KKT residuals of the system being followed (Eq. 3 at u on the fixed-bias
        path, Eq. 2 on the adjustable-bias path, Eq. 1 otherwise), from g recomputed
        from scratch (``K``: the Gram matrix of all ids, or None to evaluate it
        uncounted).  Returns a dict: g_drift (|g - g fresh|), kkt (largest violation of
        the partition's sign conditions and the box), balance (|y'alpha| where it must
        be 0, else 0), inverse_residual (||M R - I||)."""
        n = self.n
        act = np.flatnonzero(self.status[:n] >= 0)
        sv = act[self.alpha[act] > 0]
        if K is None:
            Ka = np.array([[self._kernel_value(i, j) for j in sv]
                           for i in act]).reshape(act.size, sv.size)
        else:
            Ka = np.asarray(K)[np.ix_(act, sv)]
        # g afresh, correctly rounded from the stored alpha, b, p, d and kernel values:
        # at C = 1e12 a product alpha_j k_ij carries a rounding error of 1e-4, and g is a
        # sum of such products that cancel to O(1); a plain matrix product would report
        # its own round-off as drift (docs/fine_scheinberg.rst, "Extreme C")
        ya, yv = self.alpha[sv] * self.y[sv], self.y[act]
        if self.phase == FIXED:
            const = [[self.p[i], *_two_product(np.array([self.u]), self.d[i:i + 1])]
                     for i in act]
        else:
            const = [[-1.0, -yv[r] * self.b] for r in range(act.size)]
        g = np.array([_exact_sum(ya, Ka[r], yv[r], const[r]) for r in range(act.size)])
        st = self.status[act]
        a = self.alpha[act]
        # (the members of F of a decrement are leaving: no conditions; of a joint
        # increment: g <= 0 and alpha = t c)
        free = st != FORCED if self.phase != JOINT else np.ones(act.size, dtype=bool)
        viol = np.zeros(act.size)
        if self.phase == JOINT:
            viol = np.where(st == FORCED, np.maximum(g, 0.0)
                            + np.abs(a - self.a0[act] * self.t), viol)
        viol = np.where(st == I_O, np.maximum(-g, 0.0) + np.abs(a), viol)
        viol = np.where(st == I_C, np.maximum(g, 0.0) + np.abs(a - self.C), viol)
        viol = np.where(st == I_S, np.abs(g), viol)
        viol = np.maximum(viol, np.maximum(-a, 0.0) + np.maximum(a - self.C, 0.0))
        kkt = float(np.max(viol[free])) if free.any() else 0.0
        drift = float(np.max(np.abs(g - self.g[act])[free])) if free.any() else 0.0
        balance = 0.0 if self.phase in (FIXED, BIAS) else abs(math.fsum(self.y[act] * a))
        resid = self._inverse_residual() if self.S else 0.0
        return {"g_drift": drift, "kkt": kkt, "balance": balance, "inverse_residual": resid}
