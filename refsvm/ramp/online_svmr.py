"""Online ramp-loss SVM (Wang & Vucetic): OnlineSVMR, the removal step, OnlineASVMR.

This is the *reference*: pure Python, written to be read beside the paper.
Every block cites the step of Algorithm 1 ("Alg. 1 step 11") or the equation
("Eq. (14)") it implements; the numbering follows
``shared/papers/ALGORITHMS.md`` section 1.  The compiled twin is
:mod:`refsvm.ramp._online_svmr` (same class, same attributes, same order of operations).

Model (zero bias, Eq. 4)::

    f(x) = sum_i y_i alpha_i k(x_i, x)

With ``fit_intercept=True`` (our addition, off by default here: the paper's form) the
kernel is k + 1 everywhere (Q_ij + y_i y_j), i.e. f(x) = sum_i y_i alpha_i k(x_i, x) + b
with b = sum_i y_i alpha_i: a bias regularised like a weight (the feature map gains a
constant coordinate 1).  Every equation below holds as printed for the kernel k + 1, so
invariants (a)-(c) are unchanged; the kernel evaluations counted are those of k.

State kept for every example i of I (all examples seen and not removed):
``alpha_i``, ``g_i = 1 - y_i f(x_i)`` (Eq. 3), ``Q_ii = k(x_i, x_i)`` and
whether i is in the active set V (Eq. 10).  Kernel rows ``k(x_i, x_k), k in
I`` are kept only for the support vectors (alpha_i != 0): a row is computed
when alpha_i first moves away from 0, extended by one value per arrival (the
values f(x_new) needs anyway), and released when alpha_i returns to 0.  There
is no Gram matrix; memory is O(#SV * |I|), and with the removal step
(Algorithm 2, ``max_non_sv=m``) |I| <= #SV + m.

Kernel evaluations (``n_kernel_evals``), exactly:

- arrival of x (Alg. 1 steps 2-3 / Alg. 3 step 3): one per support vector
  (the values of f(x), Eq. 4); plus k(x, x) once when x joins I;
- a row built for example p (its alpha moves away from 0): one per member of
  I that is neither p nor a support vector (the others are read from the
  rows already kept, by symmetry, and from the stored Q_pp); with ``keep_rows``,
  a parked row is completed: one per such member that arrived after the row was
  last complete and that no kept row reaches;
- prediction (``decision_function``) is not counted.

Readings chosen where the printed text is ambiguous (see
``docs/wang_vucetic.rst``):

- Step 10/11: the working example is the KKT violator (Eq. 3 broken by more
  than ``tol``) of V with the largest gain of Eq. (13); ties go to the lowest
  example id.  The loop stops when V has no violator, or when the best gain is
  below ``min_gain`` (the second stopping criterion of Sec. III.B) or not
  positive (a step that rounds to zero cannot make progress).
- ``stop="relative"`` (our addition; ``stop="gain"``, the printed rule, is the default
  here): the gain rule compares the best gain with ``min_gain * D`` instead, where
  D = sum_i alpha_i - 1/2 alpha' Q alpha = 1/2 sum_i alpha_i (1 + g_i) is the dual objective
  at the start of the step-10 loop (of each shrinking round): a rule that does not depend
  on the scale of the problem (k -> s k, C -> C / s scales every gain and D alike).  The
  absolute rule spends hundreds of Eq. (14) steps per update on gains that are a
  negligible fraction of D once the model has a few hundred support vectors, and ends
  loops too early on problems whose gains are small (small C, large k(x, x)).
- Steps 8, 14, 25 (Eq. 15) are skipped when the step is zero (no change).
- Steps 16-27: after the reassignment, the examples that left V are unlearned
  in increasing id order; the loop repeats until the reassignment changes
  nothing.  As printed, this loop can cycle for ever: an example with alpha = C
  and g just above 2 leaves V, is unlearned, its g drops just below 2, it
  re-enters, the optimisation drives alpha back to C and g above 2 again
  (observed on the Gauss stream, C = 1, gamma = 0.5, example 249 of seed 0,
  g alternating 2.0005 / 1.9989).  We therefore *hold out* an example that left
  V during an update: it does not re-enter V before the next update.  At the
  end of every update V = {i in I : g_i <= 2} minus the held-out examples (all
  with alpha = 0, g within the tolerance of 2 in practice), listed in
  ``get_state()["held"]``.
- Algorithm 2 runs after step 28 of *every* arrival (also those that did not
  update the model); ties of |1 - g| are broken by removing the oldest first.
- ``keep_rows=True`` (our addition, off by default here, on in the estimator): the kernel
  row of an example whose alpha returns to 0 is *parked* instead of released, so that when
  alpha leaves 0 again only the values of the examples that arrived since are evaluated
  (rows of support vectors are extended by one value per arrival for free; parked rows
  are not).  At most as many rows are parked as there are support vectors (the oldest
  parked first out, at the end of every arrival), so memory stays O(#SV * |I|); a row of
  an example removed by Algorithm 2 goes with it.  The values are the same kernel values
  either way: alpha, g and every step are the same bit for bit, only the kernel
  evaluations (and the rows kept) differ.
- ``shrinking=True`` (our addition, off by default here, on in the estimator)
  runs steps 10-15 in rounds on a working set and applies Eq. (15) to the rest
  of I once per round (:meth:`OnlineSVMR._optimize_shrunk`); same stopping
  rule, different order of steps.
- Singular pairs (our departure from the one-coordinate loop, both loops): when
  the working example q and the previous one p are the same or the opposite point
  in feature space (a duplicate with the opposite label: the dual is flat along
  (1, 1) on the pair, and Eq. (14) steps would take about C of them), one exact
  step along the flat direction to the box bound replaces the Eq. (14) step on q
  (:meth:`OnlineSVMR._flat_step`); Eq. (15) for both coordinates.
- Nearly singular pairs (the same departure): when p and q are almost the same or the
  opposite point (Q_pp Q_qq - Q_pq^2 <= ``PAIR_ETA`` Q_pp Q_qq, e.g. rows 1e-5 to 1e-2
  apart under the RBF kernel) and the loop zig-zags on them (q was also the working
  example before p), Eq. (14) would contract the residual by only 1 - det / (Q_pp Q_qq)
  per step (about min(C, log(1/tol) / (1 - k)) steps); the two-variable sub-problem is
  solved exactly instead (:meth:`OnlineSVMR._exact_pair_step`: the Newton point in the
  box, else the best edge of the box); Eq. (15) for both coordinates.
- Detected cycles (the same departure): when the last ``CYCLE_WINDOW`` = 32 steps of the
  loop (a pair step counting as two) went to at most ``CYCLE_SET`` = 8 examples, the
  working example is one of them, its Eq. (13) gain is at least ``CYCLE_RATIO`` = 0.5
  times that of the step 32 back, and their block H of the dual is nearly singular
  (det H <= ``CYCLE_ETA`` = 1e-3 prod H_ii, read from kept rows), the loop circles on a
  near-null direction of H (triples, clusters, pairs just above ``PAIR_ETA`` with a third
  point between their steps: steps growing with C); the sub-problem on those coordinates
  is solved exactly on the faces of the box (:meth:`OnlineSVMR._block_step`: an
  active-set search from alpha, else every face) when that gains more than the Eq. (14)
  step on q; Eq. (15) for every coordinate of it.

References
----------
Z. Wang and S. Vucetic, "Fast Online Training of Ramp Loss Support Vector
Machines", ICDM 2009: Algorithm 1 (OnlineSVMR), Algorithm 2 (removal step),
Algorithm 3 (OnlineASVMR), Eqs. (3), (4), (10), (13), (14), (15).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.kernels import Kernel, get_row, rows_from_state, rows_to_state, stack_rows
from ..core.stream import StreamLearner, restore_state

__all__ = ["OnlineSVMR", "STOP_RULES", "eq13_gain", "eq14_new_alpha",
           "violates_eq3"]


def eq14_new_alpha(alpha, g, q, C):
    """Eq. (14): alpha_new = clip(alpha + g / Q_ii, 0, C).

    Works elementwise on arrays.  A zero diagonal (Q_ii = 0, e.g. a zero
    vector under the linear kernel) moves alpha to the bound g points at.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.where(q > 0, g / np.where(q > 0, q, 1.0), np.where(g > 0, np.inf, -np.inf))
    new = alpha + step
    return np.where(new < 0.0, 0.0, np.where(new > C, C, new))


def eq13_gain(g, q, delta):
    """Eq. (13): dual gain g * delta - 1/2 Q_ii delta^2 of a one-coordinate step."""
    return g * delta - 0.5 * q * delta * delta


#: ||phi(x_p) -+ phi(x_q)||^2 <= PAIR_EPS (Q_pp + Q_qq): the same or opposite point in
#: feature space, a singular 2x2 block of the dual (see OnlineSVMR._flat_step); also
#: det <= PAIR_EPS Q_pp Q_qq: a block singular to round-off (OnlineSVMR._exact_pair_step).
PAIR_EPS = 1e-12

#: det = Q_pp Q_qq - Q_pq^2 <= PAIR_ETA Q_pp Q_qq: a nearly singular 2x2 block of the dual
#: (almost the same or the opposite point in feature space), on which the one-coordinate
#: steps of Eq. (14) zig-zag; solved exactly instead (OnlineSVMR._exact_pair_step).  Both
#: twins read it when a state is made (``pair_eta``); 0.0 turns these steps off (the path
#: of the printed loop, as before issue 15; the tests replay it).
PAIR_ETA = 1e-3

#: Cycle detector (issue 15 item 4, docs reading 13): when the last CYCLE_WINDOW coordinate
#: steps of the step-10 loop (since it started, since the last pair or block step, or in a
#: shrinking round) all went to at most CYCLE_SET examples, the working example is one of
#: them and its Eq. (13) gain is at least CYCLE_RATIO times the gain of the step
#: CYCLE_WINDOW steps back (the gains do not shrink geometrically: the loop circles on a
#: nearly singular block), the dual is maximised exactly over those coordinates instead
#: (OnlineSVMR._block_step).  Both twins read CYCLE_WINDOW when a state is made
#: (``cycle_window``); 0 turns the block step off (the path before it, as the tests replay).
CYCLE_WINDOW = 32
#: The largest block solved exactly (3^k faces of the box are enumerated); read likewise.
CYCLE_SET = 8
#: See CYCLE_WINDOW; read likewise.
CYCLE_RATIO = 0.5
#: A cycle's block H is nearly singular when det H <= CYCLE_ETA prod_i H_ii (PAIR_ETA's
#: test on k coordinates; OnlineSVMR._block_matrix); read likewise.
CYCLE_ETA = 1e-3
#: The face search of a block step stops at the first feasible face whose point meets the
#: KKT conditions of the box QP (g - H d <= 0 at 0, >= 0 at C) to this relative tolerance
#: (of |g_i| + sum_j |H_ij d_j|): the sub-problem is convex, so that point is its maximum
#: (up to the tolerance); without the stop all 3^k faces were solved (6,561 for k = 8).
BLOCK_KKT_TOL = 1e-9
#: The most faces the active-set search of a block step tries before it falls back on
#: every face (OnlineSVMR._block_step); 0: every face at once (the search before it).
#: Both twins read it when a state is made (``block_guesses``).
BLOCK_GUESSES = 24
#: The most steps of history and the largest block the compiled twin provides for.
CYCLE_WINDOW_MAX = 64
CYCLE_SET_MAX = 8
BLOCK_GUESSES_MAX = 32


#: The second stopping rules of step 10 (see OnlineSVMR, ``stop``).
STOP_RULES = ("gain", "relative")


def cycle_params():
    """The module's (CYCLE_WINDOW, CYCLE_SET, CYCLE_RATIO, CYCLE_ETA, BLOCK_GUESSES), checked;
    both twins read them when a state is made."""
    w, k, r, e = int(CYCLE_WINDOW), int(CYCLE_SET), float(CYCLE_RATIO), float(CYCLE_ETA)
    m = int(BLOCK_GUESSES)
    if not 0 <= m <= BLOCK_GUESSES_MAX:
        raise ValueError(f"BLOCK_GUESSES must be in [0, {BLOCK_GUESSES_MAX}]; got {m}")
    if not 0 <= w <= CYCLE_WINDOW_MAX:
        raise ValueError(f"CYCLE_WINDOW must be in [0, {CYCLE_WINDOW_MAX}]; got {w}")
    if not 2 <= k <= CYCLE_SET_MAX:
        raise ValueError(f"CYCLE_SET must be in [2, {CYCLE_SET_MAX}]; got {k}")
    if not r >= 0.0:
        raise ValueError(f"CYCLE_RATIO must be >= 0; got {r}")
    if not e >= 0.0:
        raise ValueError(f"CYCLE_ETA must be >= 0; got {e}")
    return w, k, r, e, m


def violates_eq3(alpha, g, C, tol):
    """Eq. (3) broken by more than ``tol``: alpha < C with g > tol, or alpha > 0 with g < -tol."""
    return ((alpha < C) & (g > tol)) | ((alpha > 0) & (g < -tol))


class OnlineSVMR(StreamLearner):
    """OnlineSVMR state (Algorithm 1), with the removal step (Algorithm 2).

    Parameters
    ----------
    n_features : int
    sparse : bool
        Rows are :class:`refsvm.core.kernels.SparseRow` (True) or dense arrays.
    C : float
        Box constraint of the dual (Eq. 2, Eq. 11).
    kernel, gamma, degree, coef0
        Kernel, see :class:`refsvm.core.kernels.Kernel`.
    tol : float
        Eq. (3) must hold within ``tol`` on V (first stopping rule of step 10).
    min_gain : float
        Step 10 also stops when the best gain of Eq. (13) is below this
        (``stop="gain"``), or below ``min_gain * D`` (``stop="relative"``).
    stop : {"gain", "relative"}
        The second stopping rule of step 10: the printed absolute gain rule, or the
        same relative to the dual objective D (see the module docstring).
    max_non_sv : int
        ``m`` of Algorithm 2; ``-1`` (or None) turns the removal step off.
    shrinking : bool
        Run steps 10-15 with shrinking (:meth:`_optimize_shrunk`) instead of
        as printed (:meth:`_optimize_on_v`).  Same stopping rule, fewer
        operations; the path (and so the local optimum of the non-convex
        ramp-loss problem) may differ.
    shrink_margin : float
        A member of V at a bound whose Eq. (3) holds by more than this is left
        out of the working set of a shrinking round.
    fit_intercept : bool
        Learn a regularised bias through the kernel k + 1 (see the module
        docstring); False (default) is the paper's zero-bias model, Eq. (4).
    keep_rows : bool
        Park the kernel row of an example whose alpha returns to 0 (at most #SV
        rows parked) and complete it when alpha leaves 0 again, instead of
        building it anew (see the module docstring).  Same model, fewer kernel
        evaluations.
    warmup : int
        Our addition (0, the default, is the paper's algorithm): the first ``warmup``
        arrivals are learned with the hinge loss -- the flat part of the ramp is off, no
        example is an outlier (:attr:`outlier_bound` is infinite), so steps 4 and 16-22 keep
        every g >= 0 in V -- and at arrival ``warmup + 1`` steps 9-27 run once with the
        ramp's bound g <= 2, whatever that arrival's g.  CCCP's usual start from the
        hinge-loss solution, for the first examples of the stream: without it a stream can
        fix a wrong model in its first few dozen examples and then ignore, as outliers,
        every later example that model gets badly wrong (see ``docs/wang_vucetic.rst``).

    Attributes
    ----------
    n_kernel_evals : int
        Kernel evaluations so far (training only).
    pair_eta : float
        The module's ``PAIR_ETA`` when the state was made: the threshold of the exact step
        on nearly singular pairs (0.0: off, the printed loop's path).
    cycle_window : int
        The module's ``CYCLE_WINDOW`` when the state was made: the steps of the cycle
        detector that triggers the exact block step (0: off).
    block_guesses : int
        The module's ``BLOCK_GUESSES`` when the state was made: the faces the block step's
        active-set search tries before the search over every face (0: that search alone).

    Examples
    --------
    Only arrivals in the ramp region 0 <= g = 1 - y f(x) <= 2 join the active set V and
    move the model (``step`` returns 1); an example the model already gets right with
    margin (g < 0), or gets badly wrong (g > 2, the flat part of the ramp, an outlier),
    stays out of V and does not change f (``step`` returns 0):

    >>> import numpy as np
    >>> from refsvm.ramp.online_svmr import OnlineSVMR
    >>> svm = OnlineSVMR(1, C=1.0, kernel="linear")
    >>> svm.step(np.array([1.0]), +1)       # g = 1: joins V, alpha = min(C, g / Q) = 1
    1
    >>> svm.step(np.array([3.0]), +1)       # f = 3, g = -2: right with margin
    0
    >>> svm.step(np.array([2.0]), -1)       # f = 2, g = 3 > 2: an outlier, ignored
    0
    >>> svm.get_state()["V"]
    array([0])
    >>> svm.get_state()["alpha"]
    array([1., 0., 0.])

    References
    ----------
    Wang & Vucetic (2009), Algorithm 1 and Algorithm 2.
    """

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, tol=1e-3, min_gain=1e-5, max_non_sv=-1, shrinking=False,
                 shrink_margin=0.1, fit_intercept=False, stop="gain", keep_rows=False,
                 warmup=0):
        super().__init__(n_features, sparse)
        self.C = float(C)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.tol = float(tol)
        self.min_gain = float(min_gain)
        self.max_non_sv = -1 if max_non_sv is None else int(max_non_sv)
        self.shrinking = bool(shrinking)
        self.shrink_margin = float(shrink_margin)
        self.fit_intercept = bool(fit_intercept)
        self.keep_rows = bool(keep_rows)
        if int(warmup) < 0:
            raise ValueError(f"warmup must be >= 0; got {warmup!r}")
        self.warmup = int(warmup)
        self.pair_eta = PAIR_ETA          # read when the state is made (see PAIR_ETA)
        # likewise (see CYCLE_WINDOW)
        (self.cycle_window, self.cycle_set, self.cycle_ratio, self.cycle_eta,
         self.block_guesses) = cycle_params()
        if stop not in STOP_RULES:
            raise ValueError(f"stop must be one of {STOP_RULES}; got {stop!r}")
        self.stop = stop
        # Alg. 1 step 0: f = 0, I = {}, V = {}.  Arrays are indexed by position
        # in I; positions are in increasing example id (arrival order).
        self.rows = []                       # x_i
        self.ids = np.zeros(0, np.int64)     # example id (0, 1, 2, ... in arrival order)
        self.y = np.zeros(0)
        self.alpha = np.zeros(0)
        self.g = np.zeros(0)                 # g_i = 1 - y_i f(x_i), Eq. (3)
        self.qdiag = np.zeros(0)             # Q_ii = k(x_i, x_i)
        self.in_v = np.zeros(0, bool)        # i in V
        self.held = np.zeros(0, bool)        # left V during the current update (see _cccp)
        self.krow = {}                       # id -> k(x_i, x_k) for k in I (support vectors, parked)
        # keep_rows: ids of the parked rows (alpha = 0, row kept, valid on a prefix of I:
        # the members of I when it was last complete), oldest parked first
        self.parked = {}
        self.n_seen = 0
        self.n_updates = 0        # arrivals that entered step 5, and the end of a warm-up
        self.n_steps = 0          # Eq. (14) steps taken (steps 6 and 12), and pair steps
        self.n_cccp_rounds = 0    # passes through steps 9-27
        self.n_unlearned = 0      # examples decrementally unlearned (steps 23-26) with alpha != 0
        self.n_removed = 0        # examples dropped by Algorithm 2
        self.n_gain_stops = 0     # step-10 loops stopped by the gain rule
        self.gain_stopped = False # the last update's loop stopped by the gain rule at least once
        self.n_row_builds = 0
        self.n_shrink_rounds = 0  # shrinking rounds that took a step (see _optimize_shrunk)
        self.n_shrunk = 0         # members of V left out of those rounds' working sets, summed
        self._pending = None      # (x, k(x_i, x) for SVs, f(x)) between observe() and label()

    # ------------------------------------------------------------------ properties
    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    @property
    def outlier_bound(self):
        """The bound of Eq. (10) now: V holds the examples with g <= 2 (the ramp's
        s = -1), or every g during the first ``warmup`` arrivals (infinite bound)."""
        return math.inf if self.n_seen <= self.warmup else 2.0

    # ------------------------------------------------------------------ kernel values
    def _k(self, a, b):
        """k(a, b), counted; k(a, b) + 1 with ``fit_intercept`` (the bias as a weight)."""
        v = self.kernel(a, b)
        if self.fit_intercept:
            v = v + 1.0
        return v

    def intercept(self):
        """b = sum_i y_i alpha_i with ``fit_intercept`` (the weight of the constant
        feature), else 0.0: f(x) = sum_i y_i alpha_i k(x_i, x) + b."""
        if not self.fit_intercept:
            return 0.0
        b = 0.0
        for p in range(self.ids.shape[0]):       # in position order, as the twin sums
            b += self.y[p] * self.alpha[p]
        return float(b)

    # ------------------------------------------------------------------ kernel rows
    def _row(self, p):
        """k(x_p, x_k) for every k in I; built on first use (counted), then kept.

        A parked row (``keep_rows``) holds the values of a prefix of I: only the rest is
        computed (a completion, counted in ``n_row_builds`` as a build)."""
        i = int(self.ids[p])
        n = self.ids.shape[0]
        self.parked.pop(i, None)
        old = self.krow.get(i)
        if old is not None and old.shape[0] == n:
            return old
        start = 0 if old is None else old.shape[0]
        row = np.empty(n)
        if old is not None:
            row[:start] = old                        # the parked prefix
        for k in range(start, n):
            j = int(self.ids[k])
            other = self.krow.get(j)
            if k == p:
                row[k] = self.qdiag[p]               # stored Q_pp, no new evaluation
            elif other is not None and other.shape[0] > p:
                row[k] = other[p]                    # symmetric value already kept
            else:
                row[k] = self._k(self.rows[p], self.rows[k])
        self.krow[i] = row
        self.n_row_builds += 1
        return row

    def _release_row(self, p):
        """alpha_p is back at 0: release its row, or park it (``keep_rows``)."""
        i = int(self.ids[p])
        if self.keep_rows and i in self.krow:
            self.parked.pop(i, None)
            self.parked[i] = None                    # the newest parked
        else:
            self.krow.pop(i, None)

    def _evict_parked(self):
        """At most #SV parked rows: the oldest parked go first (``keep_rows``)."""
        n_sv = int(np.count_nonzero(self.alpha))
        while len(self.parked) > n_sv:
            i = next(iter(self.parked))
            del self.parked[i]
            del self.krow[i]

    # ------------------------------------------------------------------ one coordinate
    def _coordinate_step(self, p):
        """Eq. (14) on alpha_p, then Eq. (15) for every k in I.  Returns the step."""
        a_old = self.alpha[p]
        a_new = float(eq14_new_alpha(a_old, self.g[p], self.qdiag[p], self.C))
        delta = a_new - a_old                                  # Delta alpha
        if delta == 0.0:
            return 0.0
        row = self._row(p)
        self.alpha[p] = a_new
        self.g -= (delta * self.y[p]) * self.y * row           # Eq. (15)
        self.n_steps += 1
        if a_new == 0.0:
            self._release_row(p)
        return delta

    # ------------------------------------------------------------------ degenerate pairs
    def _pair_kernel(self, p, q, back=-1):
        """k(x_p, x_q) when p's row is kept and the working example q, after p, forms with
        it a pair to step on jointly, else None.

        Either (p, q) is singular (:meth:`_is_singular`: the same or the opposite point in
        feature space), or it is nearly singular, det = Q_pp Q_qq - Q_pq^2 <= PAIR_ETA
        Q_pp Q_qq (the squared sine of the angle between phi(x_p) and phi(x_q) at most
        PAIR_ETA: almost the same or the opposite point, or parallel rows under the linear
        kernel) and the loop zig-zags on it: q was also the working example before p
        (``back``).  Both diagonals > 0.  Reads only a kept row (no kernel evaluation), so
        it changes nothing elsewhere."""
        if p < 0 or p == q or int(self.ids[p]) not in self.krow:
            return None
        if int(self.ids[p]) in self.parked:        # alpha_p back at 0 (keep_rows): as released
            return None
        qp, qq = self.qdiag[p], self.qdiag[q]
        if not (qp > 0.0 and qq > 0.0):
            return None
        kpq = self.krow[int(self.ids[p])][q]
        if not (self._is_singular(p, q, kpq)
                or (back == q and qp * qq - kpq * kpq <= self.pair_eta * (qp * qq))):
            return None
        return kpq

    def _is_singular(self, p, q, kpq):
        """The same or the opposite point in feature space (to round-off):
        Q_pp + Q_qq - 2 |k(x_p, x_q)| <= PAIR_EPS (Q_pp + Q_qq)."""
        qp, qq = self.qdiag[p], self.qdiag[q]
        return qp + qq - 2.0 * abs(kpq) <= PAIR_EPS * (qp + qq)

    def _pair_step(self, p, q, kpq):
        """A step of the dual on both coordinates of a nearly singular pair (our reading,
        ``docs/wang_vucetic.rst`` reading 13): :meth:`_flat_step` on a singular pair,
        else :meth:`_exact_pair_step`.  Returns (Delta alpha_p, Delta alpha_q), (0, 0) if
        the pair does not move."""
        if self._is_singular(p, q, kpq):
            return self._flat_step(p, q, kpq)
        return self._exact_pair_step(p, q, kpq)

    def _flat_step(self, p, q, kpq):
        """Exact step of the dual on (alpha_p, alpha_q) along its flat direction.

        Eqs. (13)-(14) move one coordinate; on a singular pair (x_q the same or the
        opposite point as x_p, e.g. a duplicate with the opposite label) the dual has a
        direction of (almost) zero curvature n = (1, t), t = -Q_pq / Q_qq, on which the
        one-coordinate steps advance by about 1 each (C + 1 steps).  Here the dual is
        maximised along n in one step (its curvature Q_pp + t Q_pq is 0 for an exact pair:
        to the bound of the box [0, C]^2)."""
        C = self.C
        ap, aq = self.alpha[p], self.alpha[q]
        qpq = (self.y[p] * self.y[q]) * kpq                     # signed Q_pq
        t = -qpq / self.qdiag[q]
        slope = self.g[p] + t * self.g[q]                       # dual gradient along n
        curv = self.qdiag[p] + t * qpq                          # n' Q n (0 on an exact pair)
        if slope == 0.0:
            return 0.0, 0.0
        if curv > 0.0:
            s = slope / curv
        else:
            s = np.inf if slope > 0.0 else -np.inf
        lo, hi = -ap, C - ap                                    # alpha_p + s in [0, C]
        if t > 0.0:                                             # alpha_q + t s in [0, C]
            lo, hi = max(lo, -aq / t), min(hi, (C - aq) / t)
        elif t < 0.0:
            lo, hi = max(lo, (C - aq) / t), min(hi, -aq / t)
        s = min(max(s, lo), hi)
        ap_new = min(max(ap + s, 0.0), C)
        aq_new = min(max(aq + t * s, 0.0), C)
        if s == C - ap:                                         # the bound reached: exactly
            ap_new = C
        elif s == -ap:
            ap_new = 0.0
        if t != 0.0 and s == (C - aq) / t:
            aq_new = C
        elif t != 0.0 and s == -aq / t:
            aq_new = 0.0
        return self._move_pair(p, q, ap_new, aq_new)

    def _move_pair(self, p, q, ap_new, aq_new):
        """Set (alpha_p, alpha_q) to the values a pair step found; returns the moves
        (dp, dq), (0, 0) when nothing moved (then no step is counted)."""
        dp, dq = ap_new - self.alpha[p], aq_new - self.alpha[q]
        if dp == 0.0 and dq == 0.0:
            return 0.0, 0.0
        self.alpha[p] = ap_new
        self.alpha[q] = aq_new
        self.n_steps += 1
        return dp, dq

    def _exact_pair_step(self, p, q, kpq):
        """Exact maximisation of the dual over (alpha_p, alpha_q) in [0, C]^2, the other
        coordinates fixed.

        On a nearly singular (not singular) 2x2 block H the one-coordinate steps of
        Eqs. (13)-(14) zig-zag between p and q, contracting the residual by only
        1 - det / (Q_pp Q_qq) per step: min(C, log(1/tol) / r) steps for rows at distance
        r under the RBF kernel.  Here the two-variable sub-problem max g'd - 1/2 d'Hd
        (Eq. 13 on two coordinates, g = (g_p, g_q)) is solved exactly:

        1. when H is not singular to round-off (det > PAIR_EPS Q_pp Q_qq), its
           unconstrained maximiser d = H^{-1} g (Newton), taken when alpha + d is in the box;
        2. otherwise the maximiser lies on an edge of the box: one coordinate at 0 or C and
           the other by Eq. (14) given it (clipped to [0, C]); of the four edges, in the
           order alpha_p = 0, alpha_p = C, alpha_q = 0, alpha_q = C, the first of largest
           gain g'd - 1/2 d'Hd."""
        C = self.C
        ap, aq = self.alpha[p], self.alpha[q]
        gp, gq = self.g[p], self.g[q]
        hpp, hqq = self.qdiag[p], self.qdiag[q]
        hpq = (self.y[p] * self.y[q]) * kpq                     # signed Q_pq
        det = hpp * hqq - hpq * hpq
        apn = aqn = -1.0                                        # no candidate yet
        if det > PAIR_EPS * (hpp * hqq):                        # 1. Newton: d = H^{-1} g
            u = ap + (hqq * gp - hpq * gq) / det
            v = aq + (hpp * gq - hpq * gp) / det
            if 0.0 <= u <= C and 0.0 <= v <= C:
                apn, aqn = u, v
        if apn < 0.0:                                           # 2. the four edges
            best = -np.inf
            for fix_p, bound in ((True, 0.0), (True, C), (False, 0.0), (False, C)):
                if fix_p:                                       # alpha_p = bound, Eq. (14) on q
                    u = bound
                    v = min(max(aq + (gq - hpq * (u - ap)) / hqq, 0.0), C)
                else:                                           # alpha_q = bound, Eq. (14) on p
                    v = bound
                    u = min(max(ap + (gp - hpq * (v - aq)) / hpp, 0.0), C)
                dp, dq = u - ap, v - aq
                gain = (gp * dp + gq * dq) - 0.5 * (hpp * dp * dp + 2.0 * hpq * dp * dq
                                                    + hqq * dq * dq)
                if gain > best:                                 # first of the largest gain
                    best, apn, aqn = gain, u, v
            if apn < 0.0:                                       # no finite gain (overflow)
                return 0.0, 0.0
        return self._move_pair(p, q, apn, aqn)

    def _pair_eq15(self, p, dp, q, dq, at=None):
        """Eq. (15) for both coordinates of a pair step, in one pass (on ``at``, or all of I)."""
        rp, rq = self._row(p), self._row(q)
        cp, cq = dp * self.y[p], dq * self.y[q]
        if at is None:
            self.g -= self.y * (cp * rp + cq * rq)
        else:
            self.g[at] -= self.y[at] * (cp * rp[at] + cq * rq[at])

    # ------------------------------------------------------------------ detected cycles
    def _cycle(self, hist, q, gain):
        """(S, H) for a detected cycle that the working example q (Eq. 13 gain ``gain``)
        belongs to, else None: S its positions (increasing), H its block of the dual.

        ``hist`` holds (position, gain) of the steps since the loop (or the shrinking
        round) started or since the last block step, newest last (a pair step as two steps,
        each with the gain of the Eq. 13 step it replaced).  A
        cycle: at least ``cycle_window`` steps, the last ``cycle_window`` of them on at most
        ``cycle_set`` distinct examples, q one of them; ``gain`` at least ``cycle_ratio``
        times the gain of the step ``cycle_window`` back (a loop that converges normally
        shrinks its gains geometrically; one that circles on a nearly singular block does
        not); and the block is nearly singular (:meth:`_block_matrix`)."""
        w = self.cycle_window
        if w == 0 or len(hist) < w:
            return None
        window = hist[len(hist) - w:]
        if not gain >= self.cycle_ratio * window[0][1]:
            return None
        members = []
        for p, _ in window:
            if p not in members:
                if len(members) == self.cycle_set:
                    return None
                members.append(p)
        if q not in members or len(members) < 2:
            return None
        S = sorted(members)
        H = self._block_matrix(S)
        if H is None:
            return None
        return S, H

    def _block_matrix(self, S):
        """H_ij = y_i y_j k(x_i, x_j) (H_ii = Q_ii) on the positions S when it is nearly
        singular, else None: prod_c piv_c / H_cc <= ``cycle_eta`` over the pivots piv_c of
        the elimination of H without pivoting in increasing position (det H over
        prod_c H_cc; 1 - c^2 for a pair; any pivot <= 0 counts as singular).  Reads kept
        rows only (k(x_i, x_j) from the row of i, else of j; None when neither is kept),
        so it evaluates no kernel and changes nothing."""
        k = len(S)
        H = [[0.0] * k for _ in range(k)]
        for i in range(k):
            H[i][i] = float(self.qdiag[S[i]])
            if not H[i][i] > 0.0:
                return None
            for j in range(i + 1, k):
                ri = self._kept_row(S[i])
                rj = self._kept_row(S[j])
                if ri is not None:
                    v = float(ri[S[j]])
                elif rj is not None:
                    v = float(rj[S[i]])
                else:
                    return None
                H[i][j] = H[j][i] = (float(self.y[S[i]]) * float(self.y[S[j]])) * v
        M = [list(r) for r in H]
        ratio = 1.0
        for c in range(k):
            piv = M[c][c]
            if not piv > 0.0:
                ratio = 0.0
                break
            ratio = ratio * (piv / H[c][c])
            for r in range(c + 1, k):
                f = M[r][c] / piv
                for cc in range(c + 1, k):
                    M[r][cc] = M[r][cc] - f * M[c][cc]
        if not ratio <= self.cycle_eta:
            return None
        return H

    def _kept_row(self, p):
        """p's kernel row when kept and not parked (complete over I), else None."""
        i = int(self.ids[p])
        if i not in self.krow or i in self.parked:
            return None
        return self.krow[i]

    def _block_step(self, S, H, g, gain):
        """Exact maximisation of the dual over the coordinates S (2 to ``cycle_set`` of
        them, positions in increasing id; H their block, :meth:`_block_matrix`) in the box
        [0, C]^k, the others fixed (our departure, ``docs/wang_vucetic.rst`` reading 13),
        when it gains more than ``gain`` (the Eq. 13 gain of the one-coordinate step it
        replaces).  ``g`` are their g values.

        The sub-problem is Eq. (13) on k coordinates, max g'd - 1/2 d'Hd with alpha + d in
        the box.  Its maximiser is the maximiser of some face of the box (each coordinate
        free, at 0 or at C) restricted to that face, where H on the free coordinates F is
        not singular (if it is, the maximisers of the face reach a smaller face); a
        feasible face point that meets the KKT conditions (``BLOCK_KKT_TOL``) is a
        maximum, the problem being convex.  The search (:meth:`_face` solves one face):

        1. at most ``block_guesses`` faces of a primal active-set search from x = alpha:
           the first face fixes the coordinates at a bound whose g points out of the box
           and frees the others.  When a face's point leaves the box, x moves towards it
           up to the first bound crossed (least index on ties) and that coordinate is
           fixed there; when it is in the box but violates the KKT conditions, x moves to
           it and the first violating coordinate is freed; a singular face fixes the
           coordinate of its vanishing pivot at C where its g is positive, else at 0.  It
           ends at a KKT point or at a face already tried;
        2. without a KKT point there, every one of the 3^k faces in the order of the
           number sum_i s_i 3^i (s_i = 0 free, 1 at 0, 2 at C): the first of the largest
           gain among the feasible faces wins, and the search stops at the first KKT one.

        Sets alpha on S (the bound values exactly) and counts one step; returns the moves
        d, or None (nothing changed) when the maximum gains no more than ``gain``."""
        C = self.C
        k = len(S)
        a = [float(self.alpha[p]) for p in S]
        best, best_new = gain, None
        # 1. the active-set search from alpha: x its current point, in the box
        state = [1 if a[i] == 0.0 and g[i] <= 0.0 else 2 if a[i] == C and g[i] >= 0.0 else 0
                 for i in range(k)]
        x = list(a)
        tried = []
        done = False
        for _ in range(self.block_guesses):
            code = sum(state[i] * 3 ** i for i in range(k))
            if code in tried:
                break
            tried.append(code)
            new, d, out, val, viol = self._face(H, g, a, state)
            if new is None:                                      # singular: fix its pivot's
                i = out                                          # coordinate by its g at alpha
                state[i] = 2 if g[i] > 0.0 else 1
                x[i] = C if state[i] == 2 else 0.0
                continue
            if out:                                              # step towards new to the first
                hit = out[0]                                     # bound it crosses (least index)
                t = ((0.0 if new[hit] < 0.0 else C) - x[hit]) / (new[hit] - x[hit])
                for i in out[1:]:
                    ti = ((0.0 if new[i] < 0.0 else C) - x[i]) / (new[i] - x[i])
                    if ti < t:
                        hit, t = i, ti
                for i in range(k):
                    if state[i] == 0:
                        x[i] = min(max(x[i] + t * (new[i] - x[i]), 0.0), C)
                state[hit] = 1 if new[hit] < 0.0 else 2
                x[hit] = 0.0 if new[hit] < 0.0 else C
                continue
            if not viol:                                         # a KKT point: the maximum
                if val > best:
                    best, best_new = val, new
                done = True
                break
            x = list(new)                                        # free the first violator
            state[viol[0]] = 0
        # 2. every face
        for code in range(0 if done else 3 ** k):
            state = [(code // 3 ** i) % 3 for i in range(k)]
            new, d, out, val, viol = self._face(H, g, a, state)
            if new is None or out:                               # singular, or out of the box
                continue
            if val > best:                                       # first of the largest gain
                best, best_new = val, new
            if not viol:  # the problem is convex: a KKT point is its maximum
                break
        if best_new is None:
            return None
        moves = [best_new[i] - a[i] for i in range(k)]
        if all(dm == 0.0 for dm in moves):
            return None
        for i in range(k):
            self.alpha[S[i]] = best_new[i]
        self.n_steps += 1
        return moves

    def _face(self, H, g, a, state):
        """The maximiser of the block sub-problem on one face of the box (``_block_step``;
        state[i]: 0 free, 1 at 0, 2 at C).  d_B = bound - alpha_B, H_FF d_F = g_F - H_FB d_B
        by elimination without pivoting in increasing position.

        Returns (new, d, out, val, viol): the point alpha + d, the step, the free
        coordinates whose point leaves [0, C] (when there are any, val and viol are not
        computed: None), the gain g'd - 1/2 d'Hd, and the bound coordinates where the KKT
        conditions of the box QP fail (r = g - H d <= 0 at 0, >= 0 at C, to
        ``BLOCK_KKT_TOL`` of |g_i| + sum_j |H_ij d_j|; r = 0 on F by construction).  When
        H_FF is singular to round-off (a pivot at most PAIR_EPS H_ii): (None, None, i,
        None, None), i the coordinate of that pivot."""
        C = self.C
        k = len(a)
        d = [0.0] * k
        new = [0.0] * k
        for i in range(k):
            if state[i] == 1:
                new[i] = 0.0
                d[i] = 0.0 - a[i]
            elif state[i] == 2:
                new[i] = C
                d[i] = C - a[i]
        free = [i for i in range(k) if state[i] == 0]
        m = len(free)
        # the free system: M x = r, M = H_FF, r = g_F - H_FB d_B
        M = [[H[free[r]][free[c]] for c in range(m)] for r in range(m)]
        rhs = [0.0] * m
        for r in range(m):
            t = g[free[r]]
            for j in range(k):
                if state[j] != 0:
                    t = t - H[free[r]][j] * d[j]
            rhs[r] = t
        for c in range(m):                                       # elimination
            piv = M[c][c]
            if not piv > PAIR_EPS * H[free[c]][free[c]]:
                return None, None, free[c], None, None
            for r in range(c + 1, m):
                f = M[r][c] / piv
                for cc in range(c + 1, m):
                    M[r][cc] = M[r][cc] - f * M[c][cc]
                rhs[r] = rhs[r] - f * rhs[c]
        x = [0.0] * m
        for r in range(m - 1, -1, -1):                           # back substitution
            t = rhs[r]
            for cc in range(r + 1, m):
                t = t - M[r][cc] * x[cc]
            x[r] = t / M[r][r]
        out = []
        for r in range(m):
            i = free[r]
            new[i] = a[i] + x[r]
            d[i] = x[r]
            if not (0.0 <= new[i] <= C):
                out.append(i)
        if out:
            return new, d, out, None, None
        lin = 0.0
        quad = 0.0
        viol = []
        for i in range(k):
            lin = lin + g[i] * d[i]
            hd = 0.0
            habs = 0.0
            for j in range(k):
                hd = hd + H[i][j] * d[j]
                habs = habs + abs(H[i][j] * d[j])
            quad = quad + d[i] * hd
            r = g[i] - hd
            tol = BLOCK_KKT_TOL * (abs(g[i]) + habs)
            if (state[i] == 1 and r > tol) or (state[i] == 2 and r < -tol):
                viol.append(i)
        return new, d, out, lin - 0.5 * quad, viol

    def _block_eq15(self, S, moves, at=None):
        """Eq. (15) for every coordinate of a block step, in one pass (on ``at``, or all of I):
        g_k -= y_k (c_1 k(x_1, x_k) + c_2 k(x_2, x_k) + ...), c_i = d_i y_i."""
        acc = None
        for p, dm in zip(S, moves):
            r = self._row(p)
            term = (dm * self.y[p]) * (r if at is None else r[at])
            acc = term if acc is None else acc + term
        if at is None:
            self.g -= self.y * acc
        else:
            self.g[at] -= self.y[at] * acc

    def _unlearn(self, p):
        """Alg. 1 steps 24-25: alpha_p = 0, Eq. (15) with Delta alpha = -alpha_p_old."""
        if self.alpha[p] == 0.0:
            return
        delta = 0.0 - self.alpha[p]
        row = self._row(p)
        self.alpha[p] = 0.0
        self.g -= (delta * self.y[p]) * self.y * row           # Eq. (15)
        self._release_row(p)
        self.n_unlearned += 1

    # ------------------------------------------------------------------ steps 10-15
    def dual_objective(self):
        """D = sum_i alpha_i - 1/2 alpha' Q alpha = 1/2 sum_i alpha_i (1 + g_i) (g_i = 1 - (Q alpha)_i),
        summed over the support vectors in increasing id."""
        d = 0.0
        for p in np.flatnonzero(self.alpha != 0.0):
            d += self.alpha[p] * (1.0 + self.g[p])
        return 0.5 * d

    def gain_threshold(self):
        """The threshold of the gain rule of step 10: ``min_gain`` (``stop="gain"``, as
        printed) or ``min_gain * D`` (``stop="relative"``), D the dual objective now."""
        if self.stop == "gain":
            return self.min_gain
        return self.min_gain * self.dual_objective()

    def _optimize_on_v(self):
        """Alg. 1 steps 10-15: SMO with one-example working sets on V."""
        if self.shrinking:
            return self._optimize_shrunk()
        last = back = -1                       # previous working example, the one before it
        hist = []                              # (position, gain) of the steps, for _cycle
        min_gain = self.gain_threshold()
        while True:
            v = np.flatnonzero(self.in_v)
            best, gain = self._best_violator(v)                  # steps 10-11, Eqs. (3), (13)
            if best is None:                                     # step 10: no violator
                return
            if gain < min_gain or gain <= 0.0:                   # step 10, gain rule
                self.n_gain_stops += 1
                self.gain_stopped = True
                return
            q = int(v[best])
            kpq = self._pair_kernel(last, q, back)
            if kpq is not None:           # (nearly) singular pair: Eqs. (13)-(15) on two coordinates
                dp, dq = self._pair_step(last, q, kpq)
                if dp != 0.0 or dq != 0.0:
                    self._pair_eq15(last, dp, q, dq)             # Eq. (15), both coordinates
                    for r in (last, q):
                        if self.alpha[r] == 0.0:
                            self._release_row(r)
                    hist += [(last, gain), (q, gain)]            # for _cycle: two steps
                    del hist[:-CYCLE_WINDOW_MAX]
                    last = back = -1
                    continue
            cyc = self._cycle(hist, q, gain)
            if cyc is not None:           # a detected cycle: Eq. (13) on its coordinates jointly
                hist = []
                S, H = cyc
                moves = self._block_step(S, H, [float(self.g[p]) for p in S], gain)
                if moves is not None:
                    self._block_eq15(S, moves)                   # Eq. (15), every coordinate
                    for r in S:
                        if self.alpha[r] == 0.0:
                            self._release_row(r)
                    last = back = -1
                    continue
            self._coordinate_step(int(v[best]))                  # steps 12-14
            last, back = q, last
            hist.append((q, gain))
            del hist[:-CYCLE_WINDOW_MAX]

    def _best_violator(self, A):
        """Steps 10-11 on the positions A: (index into A, Eq. 13 gain) of the violator of
        Eq. (3) with the largest gain, lowest id on ties; (None, -inf) without violators."""
        a, g, q = self.alpha[A], self.g[A], self.qdiag[A]
        viol = violates_eq3(a, g, self.C, self.tol)               # Eq. (3)
        if not viol.any():
            return None, -np.inf
        delta = eq14_new_alpha(a, g, q, self.C) - a               # Eq. (14)
        gain = np.where(viol, eq13_gain(g, q, delta), -np.inf)   # Eq. (13)
        best = int(np.argmax(gain))                               # lowest id on ties
        return best, float(gain[best])

    def _optimize_shrunk(self):
        """Alg. 1 steps 10-15 with shrinking (our addition, as in LIBSVM; ``shrinking=True``).

        The loop of steps 10-15 as printed updates g on all of I (Eq. 15) after every
        step, although most of V sits at a bound with Eq. (3) met by a wide margin and
        never becomes the working example.  Here the loop runs in *rounds*:

        1. the working set A = V minus the members at a bound whose Eq. (3) holds by
           more than ``shrink_margin`` (alpha = 0 with g < -margin, alpha = C with
           g > margin).  Every violator of V is in A, so step 10 on V is step 10 on A;
        2. steps 11-14 on A, with Eq. (15) applied to A only;
        3. Eq. (15) for the rest of I at once: g_k -= D_p y_p y_k k(x_p, x_k) with the
           net step D_p of every coordinate moved in the round (first moved first);
           kernel rows of coordinates back at 0 are released only now.

        Rounds repeat until step 10 on the whole of V finds no violator or the best
        gain is below ``min_gain``: the same stopping rule as the printed loop, so the
        invariants (a)-(c) hold as before.  The values of g differ from the printed
        loop's only by rounding, but the sequence of working examples may differ.
        """
        theta = self.shrink_margin
        while True:
            v = np.flatnonzero(self.in_v)
            a, g = self.alpha[v], self.g[v]
            shrunk = ((a == 0.0) & (g < -theta)) | ((a == self.C) & (g > theta))
            A = v[~shrunk]                                       # 1. the working set
            best, gain = self._best_violator(A)                  # step 10
            if best is None:
                return
            min_gain = self.gain_threshold()
            if gain < min_gain or gain <= 0.0:                   # step 10, gain rule
                self.n_gain_stops += 1
                self.gain_stopped = True
                return
            self.n_shrink_rounds += 1
            self.n_shrunk += int(v.shape[0] - A.shape[0])
            moved = {}                                           # p -> D_p, first moved first
            last = back = -1                   # previous working example, the one before it
            hist = []                          # (position, gain) of the steps, for _cycle
            while best is not None and gain >= min_gain and gain > 0.0:  # 2. on A
                p = int(A[best])
                kpq = self._pair_kernel(last, p, back)
                if kpq is not None:       # (nearly) singular pair: Eqs. (13)-(15) on two coordinates
                    dl, dp = self._pair_step(last, p, kpq)
                    if dl != 0.0 or dp != 0.0:
                        moved[last] = moved.get(last, 0.0) + dl
                        moved[p] = moved.get(p, 0.0) + dp
                        self._pair_eq15(last, dl, p, dp, A)      # Eq. (15) on A
                        hist += [(last, gain), (p, gain)]        # for _cycle: two steps
                        del hist[:-CYCLE_WINDOW_MAX]
                        last = back = -1
                        best, gain = self._best_violator(A)      # step 11
                        continue
                cyc = self._cycle(hist, p, gain)
                if cyc is not None:       # a detected cycle: Eq. (13) on its coordinates jointly
                    hist = []
                    S, H = cyc
                    moves = self._block_step(S, H, [float(self.g[r]) for r in S], gain)
                    if moves is not None:
                        for r, dm in zip(S, moves):              # each moved in this round
                            moved[r] = moved[r] + dm
                        self._block_eq15(S, moves, A)            # Eq. (15) on A
                        last = back = -1
                        best, gain = self._best_violator(A)      # step 11
                        continue
                a_old = self.alpha[p]
                a_new = float(eq14_new_alpha(a_old, self.g[p], self.qdiag[p], self.C))
                delta = a_new - a_old                            # Eq. (14)
                if delta == 0.0:
                    break
                row = self._row(p)
                self.alpha[p] = a_new
                moved[p] = moved.get(p, 0.0) + delta
                self.g[A] -= (delta * self.y[p]) * self.y[A] * row[A]   # Eq. (15) on A
                self.n_steps += 1
                last, back = p, last
                hist.append((p, gain))
                del hist[:-CYCLE_WINDOW_MAX]
                best, gain = self._best_violator(A)              # step 11
            rest = np.ones(self.ids.shape[0], bool)
            rest[A] = False
            for p, d in moved.items():                           # 3. Eq. (15) on the rest
                if d != 0.0:
                    row = self._row(p)
                    self.g[rest] -= (d * self.y[p]) * self.y[rest] * row[rest]
                if self.alpha[p] == 0.0:
                    self._release_row(p)

    # ------------------------------------------------------------------ steps 9-27
    def _cccp(self):
        bound = self.outlier_bound                               # 2, or inf in the warm-up
        while True:                                              # step 9
            self.n_cccp_rounds += 1
            self._optimize_on_v()                                # steps 10-15
            removed = []
            changed = False
            for p in range(self.ids.shape[0]):                   # steps 16-22, Eq. (10)
                if self.g[p] <= bound and not self.in_v[p] and not self.held[p]:
                    self.in_v[p] = True                          # step 17
                    changed = True
                elif self.g[p] > bound and self.in_v[p]:
                    self.in_v[p] = False                         # step 19
                    self.held[p] = True                          # no re-entry in this update
                    removed.append(p)
                    changed = True
            for p in removed:                                    # steps 23-26
                self._unlearn(p)
            if not changed:                                      # step 27
                return

    # ------------------------------------------------------------------ Algorithm 2
    def _removal_step(self):
        """Keep at most m non-SVs: drop those with the largest |1 - g| (oldest first on ties)."""
        m = self.max_non_sv
        if m < 0:
            return
        x_set = np.flatnonzero(self.alpha == 0.0)                # X = {i : alpha_i = 0}
        if x_set.shape[0] <= m:
            return
        key = np.abs(1.0 - self.g[x_set])
        order = np.argsort(-key, kind="stable")
        drop = np.zeros(self.ids.shape[0], bool)
        drop[x_set[order[: x_set.shape[0] - m]]] = True
        for i in self.ids[drop]:                                 # their parked rows go too
            self.krow.pop(int(i), None)
            self.parked.pop(int(i), None)
        self._keep(~drop)
        self.n_removed += int(drop.sum())

    def _keep(self, mask):
        pos = np.flatnonzero(mask)
        self.rows = [self.rows[p] for p in pos]
        for name in ("ids", "y", "alpha", "g", "qdiag", "in_v", "held"):
            setattr(self, name, getattr(self, name)[pos])
        self.krow = {i: r[pos[pos < r.shape[0]]] for i, r in self.krow.items()}

    # ------------------------------------------------------------------ arrival
    def observe(self, x):
        """Alg. 1 step 2 / Alg. 3 step 2: receive x and compute f(x) (Eq. 4).

        The kernel values k(x_i, x) of the support vectors are kept until
        :meth:`label` (which adds x to I) or :meth:`skip` (which drops it).
        Returns f(x).
        """
        sv = np.flatnonzero(self.alpha != 0.0)
        kx = np.zeros(self.ids.shape[0])
        f = 0.0
        for p in sv:
            kx[p] = self._k(self.rows[p], x)
            f += (self.y[p] * self.alpha[p]) * kx[p]
        self._pending = (x, kx, f)
        return f

    def skip(self):
        """Drop the observed example (Alg. 3: not in the ramp region, never queried)."""
        self._pending = None

    def label(self, y):
        """Alg. 1 steps 3-28 (and Algorithm 2) for the observed example with label y.

        Returns 1 when f changed (some alpha moved: a step of Eq. 14 or an unlearning),
        else 0."""
        if self._pending is None:
            raise RuntimeError("label() needs a preceding observe()")
        x, kx, f = self._pending
        self._pending = None
        y = float(y)
        # step 3: I = I u {t+1}, alpha_{t+1} = 0, g_{t+1} = 1 - y f(x_{t+1})
        q = self._k(x, x)
        for i, row in self.krow.items():          # keep the SV rows complete (same values as f used)
            if i in self.parked:                  # parked rows are not extended (keep_rows)
                continue
            p = int(np.searchsorted(self.ids, i))
            self.krow[i] = np.append(row, kx[p])
        self.rows.append(x)
        self.ids = np.append(self.ids, self.n_seen)
        self.y = np.append(self.y, y)
        self.alpha = np.append(self.alpha, 0.0)
        self.g = np.append(self.g, 1.0 - y * f)
        self.qdiag = np.append(self.qdiag, q)
        self.in_v = np.append(self.in_v, False)
        self.held = np.append(self.held, False)
        self.n_seen += 1
        new = self.ids.shape[0] - 1
        self.gain_stopped = False
        moves = self.n_steps + self.n_unlearned
        if 0.0 <= self.g[new] <= self.outlier_bound:             # step 4
            self.n_updates += 1
            self.held[:] = False
            self.in_v[new] = True                                # step 5
            self._coordinate_step(new)                           # steps 6-8
            self._cccp()                                         # steps 9-27
        elif self.warmup and self.n_seen == self.warmup + 1:     # warm-up over (not in
            self.n_updates += 1                                  # the paper): an update,
            self.held[:] = False                                 # steps 9-27 with the
            self._cccp()                                         # bound 2
        self._removal_step()                                     # Algorithm 2 (after step 28)
        if self.keep_rows:
            self._evict_parked()
        return int(self.n_steps + self.n_unlearned != moves)

    def step(self, x, y):
        """One example of the stream: Alg. 1 steps 2-28 (+ Algorithm 2); 1 if f changed."""
        self.observe(x)
        return self.label(y)

    def finish(self, min_gain):
        """A finishing step after the stream (not in the paper; LASVM's "finishing", Bordes
        et al. 2005): steps 9-27 on the examples kept, without a new arrival, with the gain
        rule's threshold ``min_gain`` (read like ``self.min_gain``: absolute with
        ``stop="gain"``, times D with ``stop="relative"``) in place of ``self.min_gain``;
        then Algorithm 2.  With a smaller threshold the coordinates the online loop left
        slightly above 0 are driven to 0: fewer support vectors, the same invariants.

        Returns 1 when f changed, else 0."""
        if self._pending is not None:
            raise RuntimeError("finish() between observe() and label()")
        moves = self.n_steps + self.n_unlearned
        online_gain, self.min_gain = self.min_gain, float(min_gain)
        try:
            self.gain_stopped = False
            self.held[:] = False                                 # as at an update
            self._cccp()                                         # steps 9-27
        finally:
            self.min_gain = online_gain
        self._removal_step()                                     # Algorithm 2
        if self.keep_rows:
            self._evict_parked()
        return int(self.n_steps + self.n_unlearned != moves)

    # ------------------------------------------------------------------ read-outs
    def decision_function(self, X):
        """f(x) (Eq. 4) for every row of X; not counted as kernel evaluations."""
        sv = np.flatnonzero(self.alpha != 0.0)
        out = np.zeros(X.shape[0])
        for r in range(X.shape[0]):
            x = get_row(X, r)
            f = 0.0
            for p in sv:
                f += (self.y[p] * self.alpha[p]) * self.kernel.value(self.rows[p], x)
            out[r] = f
        # the bias b = sum_i y_i alpha_i of the kernel k + 1, added once
        return out + self.intercept() if self.fit_intercept else out

    def support(self):
        """(ids, y * alpha, rows) of the support vectors, in increasing id."""
        sv = np.flatnonzero(self.alpha != 0.0)
        coef = self.y[sv] * self.alpha[sv]
        return self.ids[sv].copy(), coef, stack_rows([self.rows[p] for p in sv], self.n_features,
                                                 self.sparse)

    def get_state(self):
        """Everything the twins must agree on (arrays in increasing example id)."""
        sv = self.alpha != 0.0
        return {
            "I": self.ids.copy(),
            "V": self.ids[self.in_v].copy(),
            "held": self.ids[self.held].copy(),
            "alpha": self.alpha.copy(),
            "g": self.g.copy(),
            "y": self.y.copy(),
            "qdiag": self.qdiag.copy(),
            "support": self.ids[sv].copy(),
            "cached": np.array(sorted(self.krow), dtype=np.int64),
            "parked": np.array(list(self.parked), dtype=np.int64),
            "n_seen": self.n_seen,
            "n_updates": self.n_updates,
            "n_steps": self.n_steps,
            "n_cccp_rounds": self.n_cccp_rounds,
            "n_unlearned": self.n_unlearned,
            "n_removed": self.n_removed,
            "n_gain_stops": self.n_gain_stops,
            "n_row_builds": self.n_row_builds,
            "n_shrink_rounds": self.n_shrink_rounds,
            "n_shrunk": self.n_shrunk,
            "gain_stopped": bool(self.gain_stopped),
            "n_kernel_evals": self.n_kernel_evals,
        }

    def kernel_rows(self):
        """The kept kernel rows as {example id: row over I} (copies; for tests)."""
        return {i: r.copy() for i, r in self.krow.items()}

    # ------------------------------------------------------------------ persistence
    # The format both twins share.  An observation waiting for label() is not saved.
    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C, kernel=k.kind,
                    gamma=k.gamma, degree=k.degree, coef0=k.coef0, tol=self.tol,
                    min_gain=self.min_gain, max_non_sv=self.max_non_sv,
                    shrinking=self.shrinking, shrink_margin=self.shrink_margin,
                    fit_intercept=self.fit_intercept, stop=self.stop, keep_rows=self.keep_rows,
                    warmup=self.warmup)

    def save_state(self):
        """get_state(), plus the rows of I and the kept kernel rows (in the order of
        ``cached``, unsigned, over I; a parked row over the prefix of I of its length in
        ``row_lengths``, zeros after it)."""
        data = self.get_state()
        n = self.ids.shape[0]
        lengths = np.array([self.krow[i].shape[0] for i in data["cached"]], dtype=np.int64)
        rows = np.zeros((lengths.shape[0], n))
        for r, i in enumerate(data["cached"]):
            rows[r, :lengths[r]] = self.krow[i]
        data["kernel_rows"] = rows
        data["row_lengths"] = lengths
        data.update(rows_to_state(stack_rows(self.rows, self.n_features, self.sparse),
                                  self.sparse))
        return data

    def load_state(self, data):
        ids = np.array(data["I"], dtype=np.int64)
        n = ids.shape[0]
        self.rows = rows_from_state(data, n, self.sparse)
        self.ids = ids
        self.y = np.array(data["y"], dtype=np.float64)
        self.alpha = np.array(data["alpha"], dtype=np.float64)
        self.g = np.array(data["g"], dtype=np.float64)
        self.qdiag = np.array(data["qdiag"], dtype=np.float64)
        self.in_v = np.isin(ids, data["V"])
        self.held = np.isin(ids, data["held"])
        rows = np.asarray(data["kernel_rows"], dtype=np.float64)
        lengths = data.get("row_lengths", np.full(rows.shape[0], n))   # older states: full
        self.krow = {int(i): rows[r, :int(lengths[r])].copy()
                     for r, i in enumerate(data["cached"])}
        self.parked = {int(i): None for i in data.get("parked", ())}
        for name in ("n_seen", "n_updates", "n_steps", "n_cccp_rounds", "n_unlearned",
                     "n_removed", "n_gain_stops", "n_row_builds", "n_shrink_rounds",
                     "n_shrunk"):
            setattr(self, name, int(data[name]))
        self.gain_stopped = bool(data["gain_stopped"])
        self.kernel.n_evals = int(data["n_kernel_evals"])
        self._pending = None

    def __reduce__(self):
        return (restore_state, (type(self), self.init_params(), self.save_state()))
