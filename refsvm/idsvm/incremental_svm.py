"""Exact incremental / decremental SVM with bias (Cauwenberghs & Poggio), the reference.

The printed method of G. Cauwenberghs and T. Poggio, "Incremental and decremental
support vector machine learning" (NIPS 2000; ``ALGORITHMS.md`` section 6), one method
per block of the paper, in its order; ``docs/cauwenberghs_poggio.rst`` ("The printed
algorithm") says which method to read beside which equation.  The compiled twin
:mod:`refsvm.idsvm._incremental_svm` has the same methods under the same names.

Q_ij = y_i y_j k(x_i, x_j); f(x) = sum_j alpha_j y_j k(x_j, x) + b; g_i = y_i f(x_i) - 1.
The KKT conditions (Eq. 2) split the examples into R (alpha = 0, g >= 0), S (the margin
vectors, 0 <= alpha <= C, g = 0) and E (alpha = C, g <= 0), with h = sum_i y_i alpha_i = 0.
An example c with g_c < 0 enters with alpha_c = 0 and alpha_c grows in adiabatic
increments (Eq. 3) that keep g_S = 0 and h = 0: per unit of alpha_c, b and alpha_S move
by beta = -R [y_c; Q_Sc] (Eq. 5, R the inverse of the bordered matrix
M = [[0, y_S'], [y_S, Q_SS]]) and every g_i by gamma_i (Eq. 7).  Each increment is the
largest that changes no membership (Sec. 2.2); the example that limits it changes set,
and R grows (Eq. 8) or shrinks (Eq. 9) by a rank-one update.  Unlearning (Sec. 4) runs
the same loop down to alpha_c = 0; the exact leave-one-out decision of a support vector
is f(x_c) after unlearning it, and learning it again restores the model.

The paper leaves the degenerate cases open; the choices (``docs/cauwenberghs_poggio.rst``,
"Degenerate cases"): with S empty only b moves (b-only increments); a pivot or a rate
below its round-off scale is zero (the constants in :mod:`refsvm.idsvm.constants`); a
joining example with a zero pivot goes through an exchange along the null direction;
ties go by the least example id (Bland's rule), so zero steps at a degenerate point do
not repeat (a long run of them goes by the rates: the departure ``steep_ties``).

Departures from the printed method -- refinement of beta, repair, the exactness check
and rollback, the polish at extreme C, snapping, the drift refresh of R, the column
cache, the bias centring -- are the named mixins of :mod:`refsvm.idsvm.departures`,
each chosen by the ``departures`` parameter; ``departures="paper"`` runs this module's
method as printed (the exactness check, a guard that only raises, stays on).
"""

from __future__ import annotations

import numpy as np

from ..core import column_cache
from ..core.active_set import limiting_event
from ..core.bordered import (
    bordered_pivot, pivot_bound, pivot_doubtful, pivot_is_zero,
    pivot_round_off_scale, symmetrize,
)
from ..core.bordered import dot as _dot
from ..core.bordered import matvec as _matvec
from ..core.departures import resolve
from ..core.engine import join, leave
from ..core.kernels import Kernel
from ..core.margin_set import MarginSet, delegated
from ..core.stream import StreamLearner
from .constants import (  # noqa: F401 - the printed method's constants, re-exported
    EPS_ALPHA, EPS_DOUBT, EPS_G, EPS_GAMMA, EPS_MACH, EPS_PIVOT_ABS, EPS_PIVOT_SCALE,
    EPS_RATE, EPS_RESIDUE, ERROR, EV_C_BOUND, EV_C_MARGIN, EV_C_ZERO, EV_JOIN, EV_S_OUT,
    GONE, MARGIN, OUT, REST, STEPS_PER_EXAMPLE,
)
from .departures import DEPARTURES
from .departures.balance_repair import BalanceRepair
from .departures.bias_centring import BiasCentring
from .departures.column_cache import ColumnCache
from .departures.drift_refresh import DriftRefresh
from .departures.exactness import ExactnessCheck, ExactnessError
from .departures.polish import Polish
from .departures.refinement import Refinement
from .departures.repair import Repair
from .departures.rollback import Rollback
from .departures.snapping import Snapping
from .departures.steep_ties import SteepTies, steepest_tie
from .storage import Storage
from .state_format import (  # noqa: F401 - the state formats, re-exported
    COUNTERS, StateFormat, kkt_diagnostics, state_arrays, state_arrays_from_optimum,
)

__all__ = ["DEPARTURES", "ExactnessError", "IncrementalSVMState", "kkt_diagnostics",
           "state_arrays", "state_arrays_from_optimum"]


def _first_event(events, tc, wc, cand, last=None, steep=False):
    """The limiting event (Sec. 2.2) and the step: t_min, the smallest step of all, and
    among the events *at their bound at t_min within round-off* (t <= t_min + w, the
    window w = eps / |rate|: EPS_ALPHA alpha_max for an alpha, EPS_G g_scale for a g) the
    one chosen by the least-index rule: the candidate's own events (kinds EV_C_*, which
    end the operation) first, in their order; otherwise the tied margin vector or
    joining candidate (``cand``) with the smallest example id (Bland's rule).  ``last``
    counts for t_min but is chosen only if no other event is tied.  The choice is the
    core's (:func:`refsvm.core.active_set.limiting_event`); with ``steep``, the rate
    rule of the departure ``steep_ties`` (:func:`steepest_tie`)."""
    own = [e for e in events if e[1] < EV_S_OUT]         # the candidate's own: priority
    rest = [e for e in events if e[1] >= EV_S_OUT]
    ids, kinds = cand if cand is not None else (), np.full(tc.shape[0], EV_JOIN)
    tmin, kind, who = limiting_event(own, rest, tc, wc, ids, kinds, fallback=last)
    if steep and kind >= 0:
        kind, who = steepest_tie(own, rest, tc, wc, ids, kinds, tmin)
    return tmin, kind, who


class IncrementalSVMState(Refinement, Repair, BalanceRepair, ExactnessCheck, Rollback,
                          Polish, Snapping, DriftRefresh, ColumnCache, BiasCentring, SteepTies,
                          Storage, StateFormat, StreamLearner):
    """Exact incremental/decremental SVM state (reference twin).

    Parameters
    ----------
    n_features, sparse : int, bool
        Row length; whether rows are :class:`refsvm.core.kernels.SparseRow` (CSR).
    C, kernel, gamma, degree, coef0 :
        Box constraint 0 <= alpha_i <= C; kernel (:class:`refsvm.core.kernels.Kernel`).
    tol : float
        An arriving example with g_c >= -tol joins R without any change.
    refresh_every, cache_size : int, float
        Changes of S between probes of R's drift (departure ``drift_refresh``); megabytes
        of kernel columns kept (departure ``column_cache``).
    max_steps : int
        Adiabatic steps allowed per operation (its repairs included); 0:
        ``STEPS_PER_EXAMPLE * (n + 10)``.  A guard: when they run out the operation is
        rolled back and :class:`ExactnessError` raised.
    departures : None, "default", "paper" or dict
        The departures from the printed method (:data:`DEPARTURES`).  ``"paper"``: every
        one off (``refresh_every`` and ``cache_size`` then inert); the exactness check
        stays on: :class:`ExactnessError` and a rollback report an operation on which
        the printed method lost exactness.

    Examples get ids 0, 1, 2, ... in the order they are learned; unlearned ids are never
    reused.  Every operation is atomic: on :class:`ExactnessError` the state is exactly
    the one before it.

    Examples
    --------
    >>> import numpy as np
    >>> from refsvm.idsvm.incremental_svm import IncrementalSVMState
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.2], [2., 2.]])
    >>> y = np.array([-1., 1., -1., 1., 1.])
    >>> st = IncrementalSVMState(2, C=10.0, kernel="linear")
    >>> [st.step(X[i], y[i]) for i in range(5)]   # the last two lie beyond their margin
    [1, 1, 1, 0, 0]
    >>> st.get_state()["S"]                        # the margin support vectors
    array([0, 1, 2])
    >>> first4 = IncrementalSVMState(2, C=10.0, kernel="linear", departures="paper")
    >>> first4.run(X, y, range(4))                 # examples that changed the model
    3
    >>> st.unlearn([4])                            # exactly the model without it
    >>> bool(np.allclose(st.decision_function(X), first4.decision_function(X)))
    True
    >>> np.round(st.loo_decisions(), 3)
    array([-1.   ,  1.   , -0.615,  1.   ])
    """

    S = delegated("S")                               # margin vectors, in joining order
    KS = delegated("KS")                             # KS[i, j] = k(x_i, x_{S[j]})
    Rinv = delegated("R")                            # R: inverse of [[0, y_S'], [y_S, Q_SS]]

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, tol=1e-12, refresh_every=100, cache_size=200.0, max_steps=0,
                 departures=None):
        super().__init__(n_features, sparse)
        self.departures = resolve(DEPARTURES, departures)
        self.max_steps = int(max_steps)
        self._steps_left = 0                         # of the operation under way
        self._amax0 = 0.0                            # alpha_max when it started
        self.cache_size = float(cache_size)
        self.C = float(C)
        self.tol = float(tol)
        self.refresh_every = int(refresh_every)
        self.cache_bytes = int(float(cache_size) * 2**20)
        self.cache = column_cache.ColumnCache()      # id -> kernel column (length = n then)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.rows = []
        self.n = 0                                   # ids handed out so far
        self.y = np.zeros(0)
        self.alpha = np.zeros(0)
        self.g = np.zeros(0)                         # g_i = y_i f(x_i) - 1  (Eq. 2)
        self.kdiag = np.zeros(0)                     # k(x_i, x_i)
        self.status = np.zeros(0, dtype=np.int8)     # the partition R, S, E (Eq. 2)
        self.b = 0.0
        self.margin = MarginSet(empty=1)             # S, KS and R (R 1 x 1 while S is empty)
        self.kscale = 0.0                            # max k(x_i, x_i): scale of the rates
        for name in COUNTERS:                        # n_increments, n_iterations, ...
            setattr(self, name, 0)
        self.fresh = False                           # R inverted from scratch, S unchanged since
        self.refined = False                         # the last pass's beta needed a correction
        self._joined = None                          # (see _change_membership), per operation
        self.max_inverse_drift = 0.0

    # ------------------------------------------------------------------ R (Eqs. 8-9)
    def _grow_inverse(self, i, beta_i, kappa, col):
        """Add example i to S: R <- [[R, 0], [0, 0]] + [beta; 1][beta; 1]^T / kappa  (Eq. 8;
        S = {i}: [[0, y_i], [y_i, Q_ii]]^-1 = [[-Q_ii, y_i], [y_i, 0]]), the core's ``join``."""
        join(self.margin, i, self.status, self.y, self.kdiag[i], col, beta_i, kappa, MARGIN)
        self.fresh = False
        self._s_changed()

    def _shrink_inverse(self, pos, code=OUT, value=None):
        """Remove the margin vector at position ``pos`` of S with status ``code`` (at a
        bound, alpha = ``value`` and its column to the cache), the core's ``leave``:
        R_ij <- R_ij - R_ik R_kj / R_kk  (Eq. 9), row and column k dropped; a (nearly)
        zero pivot R_kk: R inverted afresh from the kernel columns instead."""
        at_bound = value is not None
        _, refused = leave(self.margin, pos, self.status, code, EPS_RATE,
                           alpha=self.alpha if at_bound else None, value=value,
                           cache_put=self._cache_put if at_bound else None)
        self.fresh = False
        if refused:
            self.Rinv = self._invert_bordered()
            self.fresh = True
        self._s_changed()

    def _bordered(self):
        """The bordered matrix [[0, y_S^T], [y_S, Q_SS]] from the cached columns."""
        return self.margin.bordered(self.y)

    def _invert_bordered(self):
        """Its inverse by LU (LinAlgError when singular), made exactly symmetric: the
        rank-one updates keep it so, and the twin reads R's rows as its columns."""
        return symmetrize(self.margin.inverse(self.y))

    def _pivot_bound(self, i, beta):
        """An O(k) upper bound of ``_pivot_scale`` (positive semi-definite kernel)."""
        S = np.array(self.S, dtype=np.intp)
        return pivot_bound(self.kdiag[i], beta, self.y[S], np.sqrt(np.abs(self.kdiag[S])))

    def _pivot_scale(self, i, beta):
        """|Q_ii| + |beta|' |M| |beta|: the round-off scale of the pivot
        kappa_i = Q_ii + m' beta^(i)."""
        return pivot_round_off_scale(self.kdiag[i], beta, self._bordered())

    # ------------------------------------------------------------------ Eqs. 5-7
    def _m_of(self, i):
        """m = [y_i; Q_Si] (the cached columns of S at i)."""
        return self.margin.m_of(i, self.y)

    def _beta(self, i):
        """beta^(i) = -R [y_i; Q_Si]  (Eq. 5); returns (beta, m)."""
        m = self._m_of(i)
        beta_i = self.margin.beta(m)
        if self.departures["refine"]:
            beta_i = self._refined_beta(i, m, beta_i)              # departures/refinement.py
        return beta_i, m

    def _gamma(self, c, col, beta):
        """gamma_i = Q_ic + sum_{j in S} Q_ij beta_j + y_i beta_b for every id (Eq. 7)."""
        n, ns = self.n, len(self.S)
        S = np.array(self.S, dtype=np.intp)
        w = beta[1:] * self.y[S]
        inner = self.y[c] * col[:n] + _matvec(self.KS[:n, :ns], w) + beta[0]
        return self.y[:n] * inner

    def _sensitivities(self, c, sign, col):
        """How every variable moves per unit step of alpha_c (sign = +1 up, -1 down):
        (beta, r, aS, rb, rate_tol, kscale_c) with Delta b = rb t, Delta alpha_S = aS t,
        Delta g_i = r_i t (Eqs. 4-7); rate_tol_i is the round-off level below which
        |r_i| counts as zero, kscale_c the round-off scale of the pivot gamma_c."""
        y, n, ns = self.y, self.n, len(self.S)
        kscale_c = 0.0
        if ns == 0:
            # b-only increment: Delta g_i = y_i Delta b, Delta b = sign * y_c * t
            rb = sign * y[c]
            return None, y[:n] * rb, np.zeros(0), rb, np.zeros(n), kscale_c
        S = np.array(self.S, dtype=np.intp)
        m = self._m_of(c)
        beta = self.margin.beta(m)                                      # Eq. 5
        if self.departures["refine"]:
            beta, gamma = self._refined_rates(c, col, m, beta)    # departures/refinement.py
        else:
            gamma = self._gamma(c, col, beta)                           # Eq. 7
        if sign > 0:
            # the pivot gamma_c = Q_cc + m' beta and its scale (the O(|S|) bound unless
            # the pivot is small against it: then the exact O(|S|^2) scale)
            kappa_c = bordered_pivot(self.kdiag[c], m, beta)
            kscale_c = self._pivot_bound(c, beta)
            if pivot_doubtful(kappa_c, kscale_c, EPS_DOUBT):
                kscale_c = self._pivot_scale(c, beta)
        # |gamma_i| below round-off of its terms counts as zero (examples dependent on S
        # have gamma = 0 exactly): sqrt(k_ii) (sqrt(k_cc) + sum_j sqrt(k_jj) |beta_j|)
        # + |beta_b| bounds them, as |k(x_i, x_j)| <= sqrt(k_ii k_jj)
        kr = np.sqrt(np.abs(self.kdiag[:n]))
        rate_tol = EPS_GAMMA * (kr * (kr[c] + _dot(np.abs(beta[1:]), kr[S])) + abs(beta[0]))
        return beta, sign * gamma, sign * beta[1:], sign * beta[0], rate_tol, kscale_c

    # ------------------------------------------------------------------ one increment
    def _adiabatic(self, c, sign, col):
        """Move alpha_c up (sign=+1, learning) or down to 0 (sign=-1, unlearning) in the
        largest increments that change no membership (Sec. 2.2), updating the sets.
        Each pass: the sensitivities (Eqs. 5-7), the limiting event (Sec. 2.2), the
        increment (Eq. 3), the membership change (Eqs. 8-9)."""
        # examples left dependent on S by an exchange (see _join), or whose rate proved to
        # be round-off (see _change_membership): no candidates until S changes
        dependent = []
        self._joined = None
        zero_run = 0                           # zero-length steps in a row
        while True:
            if self._steps_left <= 0:          # a guard (departures/rollback.py)
                raise ExactnessError("the step budget of the operation ran out (cycling?)", c)
            self._steps_left -= 1
            self._answer_signals()             # Ctrl-C: rolled back (departures/rollback.py)
            self.n_iterations += 1
            sens = self._sensitivities(c, sign, col)
            t, kind, i = self._limiting_event(c, sign, sens, dependent,
                                              self._steep_ties(zero_run))
            zero_run = zero_run + 1 if t == 0.0 else 0
            self._increment(c, sign, t, sens)
            if self._change_membership(c, sign, col, t, kind, i, sens, dependent):
                return

    def _scales(self, c=-1):
        """(alpha_max, g_scale, alpha_max without c): the largest alpha (c's included),
        1 + k_max alpha_max (the size of the terms of g), the largest alpha of the
        others.  The tie windows are relative to these, not to C."""
        a = self.alpha[: self.n]                        # (alpha >= 0; 0 if none)
        amax = float(a.max(initial=0.0))
        other = amax
        if 0 <= c < a.size:
            other = float(max(a[:c].max(initial=0.0), a[c + 1:].max(initial=0.0)))
        return amax, 1.0 + self.kscale * amax, other

    def _s_events(self, aS, ea):
        """(t, EV_S_OUT, s, window) of every margin vector s whose rate moves it to C
        (aS_s > 0) or 0 (aS_s < 0), in the order of S."""
        events = []
        for pos, s in enumerate(self.S):
            a = aS[pos]
            if a > EPS_RATE:
                events.append((max((self.C - self.alpha[s]) / a, 0.0), EV_S_OUT, s, ea / abs(a)))
            elif a < -EPS_RATE:
                events.append((max(-self.alpha[s] / a, 0.0), EV_S_OUT, s, ea / abs(a)))
        return events

    def _limiting_event(self, c, sign, sens, dependent, steep=False):
        """The largest increment t >= 0 that changes no membership (Sec. 2.2) and the
        event that limits it: (t, kind, id), chosen by :func:`_first_event`."""
        _, r, aS, _, rate_tol, kscale_c = sens
        ns = len(self.S)
        st = self.status[: self.n]
        amax, gscale, aother = self._scales(c)
        ea = self._a_tol(EPS_ALPHA, amax)
        eg = self._g_tol(EPS_G, self.departures["tie_ulps"], amax,
                         self._mass() if self._extreme() else 0.0)
        events = []                                      # (t, kind, id, window), fixed order
        if sign > 0:
            # c reaches the margin -- unless its pivot gamma_c is numerically zero (c
            # dependent on S: g_c does not move); then the other events limit the step
            if ns == 0 or r[c] > max(EPS_PIVOT_SCALE * kscale_c, EPS_PIVOT_ABS * self.kscale):
                events.append((max(-self.g[c] / r[c], 0.0), EV_C_MARGIN, c, eg / abs(r[c])))
            if ns > 0:                                            # alpha_c reaches C
                events.append((max(self.C - self.alpha[c], 0.0), EV_C_BOUND, c, ea))
        elif ns > 0:                                              # alpha_c reaches 0
            events.append((max(self.alpha[c], 0.0), EV_C_ZERO, c, ea))
        events += self._s_events(aS, ea)                          # margin vectors hit 0 or C
        # E members rising to g = 0, R members falling to g = 0 (ids ascending)
        cand = np.flatnonzero(((st == ERROR) & (r > rate_tol)) | ((st == REST) & (r < -rate_tol)))
        if dependent:
            cand = cand[~np.isin(cand, dependent)]
        tc = np.maximum(-self.g[cand] / r[cand], 0.0)
        wc = eg / np.abs(r[cand])
        best_t, best_kind, best_i = _first_event(events, tc, wc, cand, steep=steep)
        if best_kind < 0 and sign < 0 and \
                self.alpha[c] <= self._a_tol(EPS_RESIDUE, max(aother, self._amax0)):
            # unlearning, S emptied by events tied with alpha_c ~ 0: alpha_c (a round-off
            # residue of h = 0) cannot move alone; it is 0
            best_t, best_kind, best_i = 0.0, EV_C_ZERO, c
        if best_kind < 0:
            raise ExactnessError("no event limits the increment (unbounded: round-off at a "
                                 "degenerate point)", c)
        return best_t, best_kind, best_i

    def _increment(self, c, sign, t, sens):
        """Apply the increment t: alpha_c, alpha_S, b and every g outside S (Eq. 3)."""
        _, r, aS, rb, _, _ = sens
        n = self.n
        st = self.status[:n]
        if self.S:
            S = np.array(self.S, dtype=np.intp)
            self.alpha[c] = min(max(self.alpha[c] + sign * t, 0.0), self.C)
            self.alpha[S] += aS * t
            # a variable tied with the limiting one may pass its bound by <= eps
            self.alpha[S] = np.minimum(np.maximum(self.alpha[S], 0.0), self.C)
        self.b += rb * t
        move = st != MARGIN
        move &= st != GONE
        self.g[:n][move] += r[move] * t

    def _change_membership(self, c, sign, col, t, kind, i, sens, dependent):
        """The membership change of the limiting event (the sets and R, Eqs. 8-9);
        returns True when the operation on c is over.  g keeps the value the increments
        gave it when an example reaches the margin (0 within the tie window).

        An example that joined S and leaves it again at the next pass by a zero step
        returns S, alpha, b and g to where they were before its join: its rate and its
        new beta_i are round-off.  It is then held back like an example left dependent
        by an exchange, with the marks of that S restored."""
        beta, r, aS, _, _, _ = sens
        joined, self._joined = self._joined, None
        if kind == EV_C_MARGIN:
            if self.alpha[c] <= 0.0:
                self.alpha[c] = 0.0
                self.status[c] = REST
                self._cache_put(c, col)
            elif not self.S:
                self._grow_inverse(c, None, None, col)
            else:
                self._grow_inverse(c, beta, r[c] * sign, col)
            return True
        if kind == EV_C_BOUND:
            self.alpha[c] = self.C
            self.status[c] = ERROR
            self._cache_put(c, col)
            return True
        if kind == EV_C_ZERO:
            self.alpha[c] = 0.0
            return True
        if kind == EV_S_OUT:
            pos = self.S.index(i)
            self._leave_margin(pos, aS[pos] > 0)
            if joined is not None and joined[0] == i and t == 0.0:
                dependent[:] = joined[1] + [i]      # back to the S before i joined
            else:
                dependent.clear()
            return False
        # EV_JOIN
        changes = self.n_s_changes
        marks = list(dependent)
        dep = self._join(i)
        # S changed: the marks go, unless S only swapped one member for a dependent one
        swapped = self.n_s_changes - changes == 2 and dep >= 0 and dep != i
        if self.n_s_changes != changes and not swapped:
            dependent.clear()
        if dep < 0 and self.n_s_changes - changes == 1:
            self._joined = (i, marks)               # a plain join: i is the last of S
        if dep >= 0:
            dependent.append(dep)
        return False

    def _leave_margin(self, pos, to_error):
        """The margin vector S[pos] leaves S at a bound: alpha = C (E) or 0 (R); Eq. 9."""
        if to_error:
            self._shrink_inverse(pos, ERROR, self.C)
        else:
            self._shrink_inverse(pos, REST, 0.0)

    def _join(self, i):
        """Example i (in R or E, g_i = 0) joins S (Eq. 8); a zero pivot goes through an
        exchange along the null direction beta^(i) until a margin vector leaves S (then
        i is tried again) or alpha_i reaches its other bound.  Returns the example the
        exchange left dependent on the final S (-1 if none): no candidate until S
        changes (two duplicates cannot replace each other forever)."""
        col_i = None
        dep = -1
        while True:
            if not self.S:
                self._grow_inverse(i, None, None, col_i if col_i is not None else self._column(i))
                return dep
            known = self._known_from_S(i)
            beta_i, m = self._beta(i)
            kappa = bordered_pivot(self.kdiag[i], m, beta_i)   # Schur complement = gamma_i^(i)
            scale = self._pivot_bound(i, beta_i)
            if pivot_doubtful(kappa, scale, EPS_DOUBT):
                scale = self._pivot_scale(i, beta_i)
            if not pivot_is_zero(kappa, scale, self.kscale, EPS_PIVOT_SCALE, EPS_PIVOT_ABS):
                self._grow_inverse(i, beta_i, kappa,
                                   col_i if col_i is not None else self._column(i, known))
                return dep
            # degenerate: [alpha_i, alpha_S] moves along a null direction of Q
            self.n_exchanges += 1
            if col_i is None:
                col_i = self._column(i, known)
            d = 1.0 if self.status[i] == REST else -1.0
            aS = d * beta_i[1:]
            S = np.array(self.S, dtype=np.intp)
            ea = self._a_tol(EPS_ALPHA, self._scales()[0])
            # the tied margin vector with the least id leaves; alpha_i reaching its other
            # bound (its room: i may have moved in an earlier exchange) only if none is tied
            room = max(self.C - self.alpha[i], 0.0) if d > 0 else max(self.alpha[i], 0.0)
            t, _, best_s = _first_event(self._s_events(aS, ea), np.zeros(0), np.zeros(0),
                                        None, last=(room, EV_C_BOUND, -1, ea))
            best_pos = self.S.index(best_s) if best_s >= 0 else -1
            self.alpha[i] += d * t
            self.alpha[S] = np.minimum(np.maximum(self.alpha[S] + aS * t, 0.0), self.C)
            self.b += d * beta_i[0] * t
            # a null direction up to round-off: g follows it (gamma^(i), Eq. 7) all the same
            st = self.status[: self.n]
            r = d * self._gamma(i, col_i, beta_i)
            move = (st != MARGIN) & (st != GONE)
            self.g[: self.n][move] += r[move] * t
            if best_pos < 0:                             # alpha_i reached its other bound
                self.alpha[i] = self.C if d > 0 else 0.0
                self.status[i] = ERROR if d > 0 else REST
                self._cache_put(i, col_i)
                return i
            dep = int(S[best_pos])
            self._leave_margin(best_pos, aS[best_pos] > 0)

    # ------------------------------------------------------------------ learning (Sec. 3)
    def _learn(self, c, col=None, known=None):
        """Learn the stored example c (status OUT, alpha_c = 0, g_c up to date)."""
        if -self.tol <= self.g[c]:                       # on or beyond its margin: R
            self.status[c] = REST
            return
        if col is None:
            col = self._column(c, known)
        self._adiabatic(c, +1.0, col)

    def step(self, x, y):
        """Learn one example (x, y), y = +1 or -1: the model is exact afterwards.
        Returns 1 when the model changed, 0 when the example joined R and b stayed.
        Atomic: on :class:`ExactnessError` the example is not learned (and not stored)."""
        b0 = self.b
        c = self._store(x, float(y))
        self.kdiag[c] = self.kernel.self_value(self.rows[c])
        self.kscale = max(self.kscale, abs(self.kdiag[c]))
        # g_c = y_c f(x_c) - 1 from the support vectors (Eq. 2)
        known = {}
        f = self.b
        for i in range(c):
            if self.status[i] == MARGIN or self.status[i] == ERROR:
                kv = self.kernel(self.rows[i], self.rows[c])
                known[i] = kv
                f += self.alpha[i] * self.y[i] * kv
        self.g[c] = self.y[c] * f - 1.0
        for j in range(len(self.S)):                      # extend the cached columns of S
            self.KS[c, j] = known[self.S[j]]
        if self.g[c] >= -self.tol:                       # on or beyond its margin: R
            self.status[c] = REST
            self._centre_bias()                          # departures/bias_centring.py
        else:
            self._guarded(c, c, lambda: self._learn(c, known=known))   # departures/rollback.py
        self.n_increments += 1
        # unchanged: c joined R and b stayed (S empty: the interval of b may have moved)
        return 1 if (self.status[c] != REST or self.b != b0) else 0

    # ------------------------------------------------------------------ unlearning (Sec. 4)
    def _unlearn_one(self, c):
        """Bring alpha_c to 0 (Sec. 4); c keeps status OUT and an up-to-date g_c."""
        st = self.status[c]
        if st == REST:
            self.status[c] = OUT
            return None
        if st == MARGIN:
            pos = self.S.index(c)
            col = self.KS[: self.n, pos].copy()
            self._shrink_inverse(pos)
        else:
            col = self._column(c, self._known_from_S(c))
        self.status[c] = OUT
        self._adiabatic(c, -1.0, col)
        return col

    def unlearn(self, ids):
        """Remove the examples with these ids exactly (decremental unlearning), one after
        the other; each removal is atomic (on :class:`ExactnessError` the ids before
        the failing one are unlearned, the others not)."""
        for c in [int(i) for i in ids]:
            self._guarded(c, self.n, lambda: self._remove(c))
            self.n_decrements += 1

    def _remove(self, c):
        self._unlearn_one(c)
        self.status[c] = GONE
        self.cache.drop(c)
        self.alpha[c] = 0.0
        self.g[c] = 0.0

    def loo_decisions(self):
        """Exact leave-one-out decisions f_{-i}(x_i) for every learned example (ids
        ascending): a support vector is unlearned, f(x_c) read off g_c, and re-learned
        (Sec. 4); both halves atomic together."""
        ids = np.flatnonzero(self.status[: self.n] >= 0)
        out = np.empty(ids.shape[0])
        for r, c in enumerate(ids):
            if self.status[c] == REST:
                out[r] = self.y[c] * (self.g[c] + 1.0)
                continue
            snap = self._snapshot(self.n)             # one budget for both halves
            try:
                col = self._unlearn_one(c)
                self._finish(c, snap)                 # departures/rollback.py
                out[r] = self.y[c] * (self.g[c] + 1.0)
                self._learn(c, col=col)
                self._finish(c, snap)
            except ExactnessError as exc:
                self._rollback(snap)
                raise ExactnessError(
                    f"IncrementalSVM: leave-one-out of example {c}: {exc}; the model was "
                    "rolled back to the one before it", c) from None
            except BaseException:                     # Ctrl-C inside: rolled back too
                self._rollback(snap)
                raise
        return out
