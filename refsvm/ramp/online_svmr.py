"""Online ramp-loss SVM (Wang & Vucetic): OnlineSVMR (Algorithm 1) and the removal step
(Algorithm 2), as printed.

This is the *reference*: pure Python, written to be read beside the paper (Z. Wang and
S. Vucetic, ICDM 2009; ``shared/papers/ALGORITHMS.md`` section 1).  One method per block of
the pseudocode, in the paper's order, each citing its steps and equations:

===========================  =================================================
Alg. 1 step 2, Eq. (4)       :meth:`OnlineSVMR.observe`
Alg. 1 steps 3-8, 28         :meth:`OnlineSVMR.label`
Alg. 1 steps 6-8, 12-14      :meth:`OnlineSVMR._coordinate_step` (Eqs. 14, 15)
Alg. 1 steps 9-27            :meth:`OnlineSVMR._cccp` (Eq. 10)
Alg. 1 steps 10-15           :meth:`OnlineSVMR._optimize_on_v`
Alg. 1 steps 10-11           :meth:`OnlineSVMR._best_violator` (Eqs. 3, 13)
Alg. 1 steps 23-26           :meth:`OnlineSVMR._unlearn`
Algorithm 2                  :meth:`OnlineSVMR._removal_step`
===========================  =================================================

Algorithm 3, QueryAll and Greedy loop over this state (:mod:`refsvm.ramp.online_asvmr`);
the twin :mod:`refsvm.ramp._online_svmr` has its class, attributes and order of operations.

Model (zero bias, Eq. 4): f(x) = sum_i y_i alpha_i k(x_i, x).

State, for every example i of I (all examples seen and not removed): ``alpha_i``,
``g_i = 1 - y_i f(x_i)`` (Eq. 3), ``Q_ii = k(x_i, x_i)`` and whether i is in the active set
V (Eq. 10).  Kernel rows ``k(x_i, x_k), k in I`` are kept only for the support vectors: a
row is computed when alpha_i first moves away from 0, extended by one value per arrival
(the values f(x_new) needs anyway) and released when alpha_i returns to 0.  There is no
Gram matrix; memory is O(#SV * |I|), and with Algorithm 2 (``max_non_sv=m``)
|I| <= #SV + m.  Kernel evaluations (``n_kernel_evals``): one per support vector at an
arrival (f(x), Eq. 4), plus k(x, x) once; one per member of I that is neither p nor a
support vector when the row of p is built (the others are read by symmetry); prediction is
not counted.

Readings chosen where the printed text is ambiguous (``docs/wang_vucetic.rst``, "Readings"):

- steps 10/11: the working example is the violator of Eq. (3) (by more than ``tol``) in V
  with the largest gain of Eq. (13), the lowest example id on ties; the loop stops when V
  has no violator, or when the best gain is below ``min_gain`` or not positive;
- steps 8, 14, 25: Eq. (15) is skipped when the step is zero;
- steps 16-27: the examples that left V are unlearned in increasing id order; the loop
  repeats until the reassignment changes nothing;
- Algorithm 2 runs after step 28 of *every* arrival; ties of |1 - g| go oldest first.

Departures from the printed algorithm (``departures=``; each a module of
:mod:`refsvm.ramp.departures`, a mixin of :class:`OnlineSVMR`; ``departures="paper"``
turns every one off):

- ``singular_pairs``, ``pair_eta``: an exact step on a singular pair (:mod:`~.pair_step`);
- ``cycle_window`` and its settings: the cycle detector and block step
  (:mod:`~refsvm.ramp.departures.block_step`); both reached through
  :mod:`~refsvm.ramp.departures.joint_steps`, one call of steps 10-15;
- ``shrinking``: steps 10-15 in rounds (:mod:`~refsvm.ramp.departures.shrinking`);
- ``keep_rows``: parked kernel rows (:mod:`~refsvm.ramp.departures.keep_rows`);
- ``relative_stop``: the gain rule relative to D (:mod:`~refsvm.ramp.departures.relative_stop`);
- ``warmup``: the hinge-loss start (:mod:`~refsvm.ramp.departures.warmup`);
- ``hold_out``: no re-entry into V in the update an example left it (steps 9-27 can
  cycle without it; :mod:`~refsvm.ramp.departures.hold_out`);
- ``finish``: the finishing step (:mod:`~refsvm.ramp.departures.finish`);
- ``intercept``: the regularised bias, kernel k + 1 (:mod:`~refsvm.ramp.departures.intercept`);
- ``budget_per_sv``: Alg. 2's m grows with #SV (:mod:`~refsvm.ramp.departures.removal_budget`);
- ``step_budget``: steps 10-15 end within a budget; Ctrl-C cuts them short (a guard, on in
  the paper form; :mod:`~refsvm.ramp.departures.step_budget`).

References
----------
Z. Wang and S. Vucetic, "Fast Online Training of Ramp Loss Support Vector Machines", ICDM
2009: Algorithms 1 (OnlineSVMR) and 2 (removal step), Eqs. (3), (4), (10), (13)-(15).
"""

from __future__ import annotations

import numpy as np

from ..core.departures import resolve
from ..core.kernels import Kernel, get_row, rows_from_state, rows_to_state, stack_rows
from ..core.stream import StreamLearner, restore_state
from .departures import DEPARTURES
from .departures.block_step import BlockStep
from .departures.finish import Finish
from .departures.hold_out import HoldOut
from .departures.intercept import Intercept
from .departures.joint_steps import JointSteps
from .departures.keep_rows import KeepRows
from .departures.pair_step import PairStep
from .departures.relative_stop import STOP_RULES, RelativeStop
from .departures.removal_budget import RemovalBudget
from .departures.rewarm import Rewarm
from .departures.shrinking import Shrinking
from .departures.step_budget import StepBudget
from .departures.warmup import WarmUp

__all__ = ["CCCP_ROUNDS_MAX", "OnlineSVMR", "STOP_RULES", "eq13_gain", "eq14_new_alpha",
           "violates_eq3"]

#: The guard of the paper form (``hold_out`` off): steps 9-27 of one update may cycle for
#: ever as printed; after this many rounds a RuntimeError says so.  Never changes a number.
CCCP_ROUNDS_MAX = 1000


def violates_eq3(alpha, g, C, tol):
    """Eq. (3) broken by more than ``tol``: alpha < C with g > tol, or alpha > 0 with g < -tol."""
    return ((alpha < C) & (g > tol)) | ((alpha > 0) & (g < -tol))


def eq13_gain(g, q, delta):
    """Eq. (13): dual gain g * delta - 1/2 Q_ii delta^2 of a one-coordinate step."""
    return g * delta - 0.5 * q * delta * delta


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


class OnlineSVMR(JointSteps, PairStep, BlockStep, Shrinking, KeepRows, RelativeStop, WarmUp,
                 Rewarm, HoldOut, Finish, Intercept, RemovalBudget, StepBudget, StreamLearner):
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
        Step 10 also stops when the best gain of Eq. (13) is below this (``stop="gain"``),
        or below ``min_gain * D`` (``stop="relative"``).
    max_non_sv : int
        ``m`` of Algorithm 2; ``-1`` (or None) turns the removal step off.
    shrinking : bool
        Run steps 10-15 in rounds on a working set (departure ``shrinking``,
        :meth:`_optimize_shrunk`) instead of as printed (:meth:`_optimize_on_v`).
    shrink_margin : float
        A member of V at a bound whose Eq. (3) holds by more than this is left out of the
        working set of a shrinking round.
    fit_intercept : bool
        Learn a regularised bias through the kernel k + 1 (departure ``intercept``);
        False is the paper's zero-bias model, Eq. (4).
    stop : {"gain", "relative"}
        The second stopping rule of step 10: the printed absolute rule, or the same
        relative to the dual objective D (departure ``relative_stop``).
    keep_rows : bool
        Park the kernel row of an example whose alpha returns to 0 (departure
        ``keep_rows``).  Same model, fewer kernel evaluations.
    warmup : int
        Learn the first ``warmup`` arrivals with the hinge loss (departure ``warmup``);
        0 is the paper's algorithm.
    departures : None, "default", "paper" or dict
        The departures from the printed algorithm (:data:`refsvm.ramp.departures.DEPARTURES`,
        :func:`refsvm.core.departures.resolve`).  "paper": every one off, whatever
        ``shrinking``, ``fit_intercept``, ``stop``, ``keep_rows`` and ``warmup`` say;
        the guards left, :data:`CCCP_ROUNDS_MAX` and ``step_budget``, change no number.

    Attributes
    ----------
    departures : dict
        The resolved settings (saved in :meth:`init_params`).
    shrinking, fit_intercept, stop, keep_rows, warmup
        The parameters as in force (off when their departure is).
    singular_pairs, pair_eta, pair_eps, cycle_window, cycle_set, cycle_ratio, cycle_eta, \
block_guesses, block_kkt_tol, hold_out
        The settings of the departures, read when the state is made.
    n_kernel_evals : int
        Kernel evaluations so far (training only).

    Examples
    --------
    Only arrivals in the ramp region 0 <= g = 1 - y f(x) <= 2 join the active set V and
    move the model (``step`` returns 1); an example the model already gets right with
    margin (g < 0), or gets badly wrong (g > 2, the flat part of the ramp, an outlier),
    stays out of V and does not change f (``step`` returns 0):

    >>> import numpy as np
    >>> from refsvm.ramp.online_svmr import OnlineSVMR
    >>> svm = OnlineSVMR(1, C=1.0, kernel="linear", departures="paper")
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

    #: The settings of the departures kept as attributes (both twins).
    SETTINGS = ("singular_pairs", "pair_eta", "pair_eps", "cycle_window", "cycle_set",
                "cycle_ratio", "cycle_eta", "block_guesses", "block_kkt_tol", "hold_out",
                "budget_per_sv", "step_budget", "rewarm", "rewarm_after", "rewarm_growth",
                "rewarm_max")
    #: The counters of the state (get_state, save_state, load_state).
    COUNTERS = ("n_seen", "n_updates", "n_steps", "n_cccp_rounds", "n_unlearned", "n_removed",
                "n_gain_stops", "n_row_builds", "n_shrink_rounds", "n_shrunk")
    _tracer = None  # refsvm.core.trace: who hears the printed lines (None: nobody)

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, tol=1e-3, min_gain=1e-5, max_non_sv=-1, shrinking=False,
                 shrink_margin=0.1, fit_intercept=False, stop="gain", keep_rows=False,
                 warmup=0, departures=None):
        super().__init__(n_features, sparse)
        dep = self.departures = resolve(DEPARTURES, departures)
        self.C = float(C)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.tol, self.min_gain = float(tol), float(min_gain)
        self.max_non_sv = -1 if max_non_sv is None else int(max_non_sv)
        self.shrink_margin = float(shrink_margin)
        if int(warmup) < 0:
            raise ValueError(f"warmup must be >= 0; got {warmup!r}")
        if stop not in STOP_RULES:
            raise ValueError(f"stop must be one of {STOP_RULES}; got {stop!r}")
        # the departures' parameters, each off when its departure is
        self.shrinking = bool(shrinking) and dep["shrinking"]
        self.fit_intercept = bool(fit_intercept) and dep["intercept"]
        self.keep_rows = bool(keep_rows) and dep["keep_rows"]
        self.stop = stop if dep["relative_stop"] else "gain"
        self.warmup = int(warmup) if dep["warmup"] else 0
        self.hinge_until = self.warmup       # the hinge loss up to this arrival (warmup, rewarm)
        for name in self.SETTINGS:
            setattr(self, name, dep[name])
        # Alg. 1 step 0: f = 0, I = {}, V = {}.  Arrays are indexed by position
        # in I; positions are in increasing example id (arrival order).
        self.rows = []                       # x_i
        self.ids = np.zeros(0, np.int64)     # example id (0, 1, 2, ... in arrival order)
        self.y = np.zeros(0)
        self.alpha = np.zeros(0)
        self.g = np.zeros(0)                 # g_i = 1 - y_i f(x_i), Eq. (3)
        self.qdiag = np.zeros(0)             # Q_ii = k(x_i, x_i)
        self.in_v = np.zeros(0, bool)        # i in V
        self.held = np.zeros(0, bool)        # left V in the current update (hold_out)
        self.krow = {}                       # id -> k(x_i, x_k) for k in I (support vectors, parked)
        self.parked = {}                     # keep_rows: ids of parked rows, oldest first
        self.n_seen = 0
        self.n_updates = 0        # arrivals that entered step 5, and the end of a warm-up
        self.n_steps = 0          # Eq. (14) steps taken (steps 6 and 12), pair and block steps
        self.n_cccp_rounds = 0    # passes through steps 9-27
        self.n_unlearned = 0      # examples decrementally unlearned (steps 23-26) with alpha != 0
        self.n_removed = 0        # examples dropped by Algorithm 2
        self.n_gain_stops = 0     # step-10 loops stopped by the gain rule
        self.gain_stopped = False # the last update's loop stopped by the gain rule at least once
        self.n_row_builds = 0
        self.n_shrink_rounds = 0  # shrinking rounds that took a step
        self.n_shrunk = 0         # members of V left out of those rounds' working sets, summed
        self._pending = None      # (x, k(x_i, x) for SVs, f(x)) between observe() and label()
        self._forget_steps()

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    # ------------------------------------------------------------------ kernel values
    def _k(self, a, b):
        """k(a, b), counted; k(a, b) + 1 with ``fit_intercept`` (departure ``intercept``)."""
        v = self.kernel(a, b)
        if self.fit_intercept:
            v = v + 1.0
        return v

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

    # ------------------------------------------------------------------ Algorithm 1
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
        self._tracer is None or self._tracer("Alg. 1 step 2", f=f)
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
        self._tracer is None or self._tracer("Alg. 1 step 3", i=self.n_seen - 1, g=self.g[new])
        self._tracer is None or self._tracer("Alg. 1 step 4", g=self.g[new])
        if 0.0 <= self.g[new] <= self.outlier_bound:             # step 4
            self.n_updates += 1
            self.held[:] = False
            self.in_v[new] = True                                # step 5
            self._coordinate_step(new)                           # steps 6-8
            self._tracer is None or self._tracer("Alg. 1 steps 5-8", alpha=self.alpha[new])
            self._cccp()                                         # steps 9-27
        else:
            self._end_of_warmup()                                # warmup (not in the paper)
        self._removal_step()                                     # Algorithm 2 (after step 28)
        self._evict_parked()                                     # keep_rows (not in the paper)
        self._rewarm()                                           # rewarm (not in the paper)
        return int(self.n_steps + self.n_unlearned != moves)

    def step(self, x, y):
        """One example of the stream: Alg. 1 steps 2-28 (+ Algorithm 2); 1 if f changed."""
        self.observe(x)
        return self.label(y)

    def _coordinate_step(self, p):
        """Alg. 1 steps 6-8 and 12-14: Eq. (14) on alpha_p, then Eq. (15) for every k in I.
        Returns the step."""
        a_old = self.alpha[p]
        a_new = float(eq14_new_alpha(a_old, self.g[p], self.qdiag[p], self.C))
        delta = a_new - a_old                                  # Delta alpha
        if delta == 0.0:
            return 0.0
        row = self._row(p)
        self.alpha[p] = a_new
        self.g -= (delta * self.y[p]) * self.y * row           # Eq. (15), steps 8 and 14
        self.n_steps += 1
        if a_new == 0.0:
            self._release_row(p)
        return delta

    def _cccp(self):
        """Alg. 1 steps 9-27: optimise on V, reassign V by Eq. (10), unlearn the examples that
        left it; until V does not change."""
        bound = self.outlier_bound                               # 2 (inf in a warm-up)
        rounds, changed = 0, True
        self._open_budget()                                      # step_budget (not in the paper)
        while changed:                                           # steps 9, 27
            rounds += 1
            if rounds > CCCP_ROUNDS_MAX and not self.hold_out:   # the paper form's guard
                raise RuntimeError(
                    f"Alg. 1 steps 9-27 did not end after {CCCP_ROUNDS_MAX} rounds at "
                    f"arrival {self.n_seen - 1}: V cycles as printed (departure hold_out)")
            self.n_cccp_rounds += 1
            self._optimize_on_v()                                # steps 10-15
            removed = []
            changed = False
            for p in range(self.ids.shape[0]):                   # steps 16-22, Eq. (10)
                if self.g[p] <= bound and not self.in_v[p] and not self.held[p]:
                    self.in_v[p] = True                          # step 17
                    self._tracer is None or self._tracer("Alg. 1 step 17", i=self.ids[p])
                    changed = True
                elif self.g[p] > bound and self.in_v[p]:
                    self.in_v[p] = False                         # step 19
                    self._tracer is None or self._tracer("Alg. 1 step 19", i=self.ids[p])
                    self._hold(p)                                # hold_out (not in the paper)
                    removed.append(p)
                    changed = True
            for p in removed:                                    # steps 23-26
                self._unlearn(p)
            self._tracer is None or self._tracer("Alg. 1 steps 9/27", changed=changed)
        self._close_budget()                                     # step_budget (not in the paper)

    def _optimize_on_v(self):
        """Alg. 1 steps 10-15: SMO with one-example working sets on V."""
        if self.shrinking:
            return self._optimize_shrunk()                       # shrinking (not in the paper)
        min_gain = self.gain_threshold()
        self._forget_steps()
        while not self._cut_short():                             # step_budget (not in the paper)
            v = np.flatnonzero(self.in_v)
            best, gain = self._best_violator(v)                  # steps 10-11, Eqs. (3), (13)
            self._tracer is None or self._tracer("Alg. 1 steps 10-11", gain=gain,
                                                  i=None if best is None else self.ids[v[best]])
            if best is None:                                     # step 10: no violator
                return
            if gain < min_gain or gain <= 0.0:                   # step 10, gain rule
                self.n_gain_stops += 1
                self.gain_stopped = True
                return
            q = int(v[best])
            if self._joint_step(q, gain):                        # pair, block (not in the paper)
                continue
            self._coordinate_step(q)                             # steps 12-14
            self._tracer is None or self._tracer("Alg. 1 steps 12-14", i=self.ids[q],
                                                  alpha=self.alpha[q])

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

    def _unlearn(self, p):
        """Alg. 1 steps 24-25: alpha_p = 0, Eq. (15) with Delta alpha = -alpha_p_old."""
        if self.alpha[p] == 0.0:
            return
        delta = 0.0 - self.alpha[p]
        row = self._row(p)
        self.alpha[p] = 0.0
        self.g -= (delta * self.y[p]) * self.y * row           # Eq. (15), step 25
        self._release_row(p)
        self.n_unlearned += 1
        self._tracer is None or self._tracer("Alg. 1 steps 23-26", i=self.ids[p], delta=delta)

    # ------------------------------------------------------------------ Algorithm 2
    def _removal_step(self):
        """Algorithm 2 (after step 28): keep at most m non-SVs, X = {i : alpha_i = 0}; drop the
        |X| - m with the largest |1 - g| (oldest first on ties)."""
        m = self.max_non_sv
        if m < 0:
            return
        x_set = np.flatnonzero(self.alpha == 0.0)                # X = {i : alpha_i = 0}
        m = self._removal_budget(m, x_set.shape[0])              # departure budget_per_sv
        if x_set.shape[0] <= m:
            return
        key = np.abs(1.0 - self.g[x_set])
        order = np.argsort(-key, kind="stable")
        drop = np.zeros(self.ids.shape[0], bool)
        drop[x_set[order[: x_set.shape[0] - m]]] = True
        for i in self.ids[drop]:                                 # their parked rows go too
            self.krow.pop(int(i), None)
            self.parked.pop(int(i), None)
        self._tracer is None or self._tracer("Alg. 2", dropped=self.ids[drop])
        self._keep(~drop)
        self.n_removed += int(drop.sum())

    def _keep(self, mask):
        pos = np.flatnonzero(mask)
        self.rows = [self.rows[p] for p in pos]
        for name in ("ids", "y", "alpha", "g", "qdiag", "in_v", "held"):
            setattr(self, name, getattr(self, name)[pos])
        self.krow = {i: r[pos[pos < r.shape[0]]] for i, r in self.krow.items()}

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
            **{name: getattr(self, name) for name in self.COUNTERS},
            "gain_stopped": bool(self.gain_stopped), "hinge_until": self.hinge_until,
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
                    warmup=self.warmup, departures=dict(self.departures))

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
        for name in self.COUNTERS:
            setattr(self, name, int(data[name]))
        self.gain_stopped = bool(data["gain_stopped"])
        self.hinge_until = int(data.get("hinge_until", self.warmup))     # older states: warmup
        self.kernel.n_evals = int(data["n_kernel_evals"])
        self._pending = None

    def __reduce__(self):
        return (restore_state, (type(self), self.init_params(), self.save_state()))
