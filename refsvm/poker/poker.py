"""POKER (Fine & Scheinberg, NIPS 2001), the readable reference: the printed method.

Parametric optimization for kernel methods: the exact 1-norm soft-margin SVM with bias,
by following piecewise-affine solution paths of a parametric KKT system.  Open this
module beside Fig. 1 of the paper (``ALGORITHMS.md`` §2 restores the printed block);
``docs/fine_scheinberg.rst`` walks through it line by line.

Notation (the paper's): Q_ij = y_i y_j k(x_i, x_j), e = (1, ..., 1), c = C; the KKT
system (Eq. 1) is  alpha_i s_i = 0, (c - alpha_i) xi_i = 0, y'alpha = 0,
-Q alpha + b y + s - xi = -e, 0 <= alpha <= c, s >= 0, xi >= 0.  We keep
g = s - xi = y (w'phi(x) - b) - 1 (so f(x) = w'phi(x) - b; POKER's b is LIBSVM's rho)
and the partition I_o (alpha = 0, g >= 0), I_c (alpha = c, g <= 0), I_s (g = 0).

In the order of the paper:

=====================================  ===============================================
the paper                              this module
=====================================  ===============================================
Fig. 1, lines 0-4 (AltPOKER)           :meth:`POKERState.learn_ids`
Eq. 3, the fixed-bias method           :meth:`~POKERState.fixed_bias`,
                                       :meth:`~POKERState._fixed_bias_rates`
Sec. 3, Eq. 4, the adjustable bias     :meth:`~POKERState.adjust_bias`,
                                       :meth:`~POKERState._adjustable_bias_rates`
Sec. 3, one piece to its breakpoint    :meth:`~POKERState._follow` (the loop),
                                       ``_sensitivities``, ``_next_event``, ``_move``
Sec. 3, the set changes                ``_leave``, ``_join`` (``_schur``, ``_exchange``),
                                       ``_add_to_S``, ``_remove_from_S``
Sec. 5, SelfInit POKER                 :meth:`~POKERState.self_init`
Sec. 5, Cls2W, MaxSlk, dObj            :meth:`~POKERState.learn_selective`, ``_dobj``
=====================================  ===============================================

One factorisation serves every path: R, the inverse of M = [[0, y_s'], [y_s, Q_ss]],
updated by rank one when I_s changes.  Along b the piece is parametrised by tau = y'alpha
([-db; dalpha_s] = R [dtau; 0], which covers a singular Q_ss, Sec. 3's degenerate case);
with b fixed the same R solves Q_ss dalpha_s = r.  A joining example with a zero pivot is
*exchanged* along the null direction.  Ties go by the least-index rule (:mod:`.partition`).

What the printed method does not do is a departure, each in its own module of
:mod:`refsvm.poker.departures`, one named call here, switched by ``departures``
(``"paper"``: as printed).  Storage, persistence, read-outs: :mod:`refsvm.poker.storage`.
"""

from __future__ import annotations

import numpy as np

from ..core.bordered import bordered_pivot, dot, least_index_event, matvec, pivot_is_zero
from ..core.engine import join, leave
from ..core.margin_set import delegated
from .departures.bias_centring import BiasCentring
from .departures.column_cache import ColumnCache
from .departures.duplicates import Duplicates
from .departures.end_of_chunk import EndOfChunk
from .departures.forced_path import ForcedPath
from .departures.joint_increment import JointIncrement
from .departures.refresh import InverseRefresh
from .departures.regularise_fixed import FixedBiasRegularisation
from .departures.unlearning import ChunkUnlearning
from .partition import (  # noqa: F401 - the printed method's vocabulary, re-exported
    BIAS, EPS_ALPHA, EPS_ALPHA_ULP, EPS_ARATE, EPS_G, EPS_PIVOT, EPS_PIVOT_ABS, EPS_RATE,
    EV_END, EV_FLIP, EV_JOIN, EV_LEAVE, FIXED, FORCED, GONE, I_C, I_O, I_S, IDLE, JOINT,
    PENDING, UNLEARN, CyclingError, JointIncrementError, PathError,
    SingularActiveSetError, alpha_window, next_breakpoint)
from .storage import POKERStorage

__all__ = ["POKERState", "next_breakpoint", "SELECTIONS", "CyclingError",
           "JointIncrementError", "PathError"]

SELECTIONS = ("none", "cls2w", "maxslk", "cls2w+dobj", "maxslk+dobj")


class _Budget(Exception):
    """Raised when a path has used its breakpoint budget (dObj look-ahead)."""


class POKERState(ColumnCache, InverseRefresh, Duplicates, FixedBiasRegularisation,
                 BiasCentring, EndOfChunk, ForcedPath, JointIncrement, ChunkUnlearning,
                 POKERStorage):
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
        Megabytes of kernel columns kept for examples that left I_s (departure
        ``column_cache``).
    refresh_every : int
        Changes of I_s between two probes of R's drift (departure ``refresh``).
    departures : None, "default", "paper" or dict
        The departures from the printed method (:data:`refsvm.poker.departures.DEPARTURES`,
        resolved by :func:`refsvm.core.departures.resolve`).  ``"paper"`` runs Fig. 1,
        the adjustable-bias method and SelfInit as printed: no joint increment, end
        check, polish, bias centring or regularisation of a singular Q_ss, no special
        case for duplicates, R never formed afresh (but for an exactly singular shrink,
        a guard), no column cache; ``unlearn`` runs with all these off.  The breakpoint
        budget 50 (n + 10) stays on: it only raises :class:`CyclingError`.

    Attributes
    ----------
    departures : dict
        The resolved settings (kept by ``init_params``).
    n_iterations : int
        Breakpoints passed (the paper's iteration count), over all operations.
    n_kernel_evals : int
    breakpoint_hook : callable or None
        Called with the state after every breakpoint (tests check the KKT
        conditions of the system being followed there: :meth:`check`).

    Notes
    -----
    Examples get ids 0, 1, 2, ... in the order they are added (never reused).

    Examples
    --------
    >>> import numpy as np
    >>> from refsvm.poker.poker import POKERState
    >>> X = np.array([[0.0, 0.0], [0.1, 0.2], [2.0, 2.0], [2.1, 1.9]])
    >>> y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> st = POKERState(2, C=1.0, gamma=0.5, departures="paper")
    >>> st.add_chunk(X[:2], y[:2]), st.add_chunk(X[2:], y[2:])
    (2, 2)
    >>> [int(v) for v in np.sign(st.decision_function(X))]
    [-1, -1, 1, 1]
    """

    S = delegated("S")                  # I_s, in joining order
    KS = delegated("KS")                # KS[i, j] = k(x_i, x_S[j])
    R = delegated("R")                  # inverse of [[0, y_s'], [y_s, Q_ss]]

    # ------------------------------------------------------------------ Fig. 1: AltPOKER
    def add_chunk(self, X, y, joint=False):
        """AltPOKER (Fig. 1): add the rows of X (2-D array or CSR) with labels y (+-1)
        to the optimal solution and restore optimality (``joint=True``: the joint
        increment).  Returns the number of violated points (0: nothing changed)."""
        self._refuse_joint(joint)                         # departure: joint increment
        return self.learn_ids(self._append_rows(X, y).tolist(), joint=joint)

    def learn_ids(self, ids, joint=False):
        """AltPOKER (Fig. 1, lines 0-4) on stored pending examples ``ids`` (one chunk),
        or with ``joint=True`` the joint increment (departure ``joint_increment``)."""
        self._refuse_joint(joint)
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
            return self._learn_joint(ids)                 # departure: joint increment
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
            self.fixed_bias()
        # Fig. 1 line 4: POKERadjustbias (unconditional; returns at once if y'alpha = 0)
        self.adjust_bias()
        self._end_chunk("AltPOKER")                       # departures: end of a chunk
        return violated

    # ------------------------------------------------------------------ Eq. 3: fixed bias
    def fixed_bias(self):
        """POKERfixedbias (Fig. 1 line 3; Eq. 3): g(u) = Q alpha + p + u d with
        d = -e - y b - p, followed from u = 0 to 1 with b fixed."""
        self.u = 0.0
        self._follow(FIXED)
        self.d[: self.n] = 0.0

    def _fixed_bias_rates(self):
        """Eq. 3 on I_s: -Q_ss dalpha_s = d_s du (b fixed).  (dalpha_s, db, the rest of
        the parameter, b alone moves)."""
        S = np.array(self.S, dtype=np.intp)
        aS = self._solve_fixed(-self.d[S]) if S.size else np.zeros(0)
        return aS, 0.0, 1.0 - self.u, False

    def _solve_fixed(self, r):
        """z with Q_ss z = r (b fixed), from the bordered inverse:
        z = R_ss r + dtau R_s0, dtau = -R_0s r / R_00 (so that db = 0)."""
        R = self.R
        dtau = -dot(R[0, 1:], r) / R[0, 0]
        return matvec(R[1:, 1:], r) + dtau * R[1:, 0]

    # ------------------------------------------------------------------ Sec. 3: adjustable bias
    def adjust_bias(self):
        """POKERadjustbias (Fig. 1 line 4; Sec. 3, Eq. 4) from the current fixed-bias
        solution: b moves until y'alpha = 0 (a no-op when it is 0 already)."""
        self.tau = self._y_alpha()
        if abs(self.tau) > self.aw:
            self._follow(BIAS)
        self.tau = 0.0
        self.phase = IDLE

    def _adjustable_bias_rates(self):
        """Eq. 4 along tau = y'alpha: [-db; dalpha_s] = R [sigma; 0], sigma towards 0
        ("if -y'alpha(b0) > 0 then b increases").  With I_s empty every alpha is at a
        bound and cannot move: b alone moves until an example reaches its margin."""
        sigma = 1.0 if self.tau < 0 else -1.0
        if self.S:
            sol = sigma * self.R[:, 0]
            return sol[1:], -sol[0], abs(self.tau), False
        # y'alpha known exactly here (the tracked tau may carry round-off)
        self.tau = self._y_alpha(ordered=True)
        if abs(self.tau) <= self.aw:
            return np.zeros(0), 0.0, 0.0, False
        sigma = 1.0 if self.tau < 0 else -1.0
        return np.zeros(0), sigma, np.inf, True

    # ------------------------------------------------------------------ Sec. 3: the path
    def _follow(self, mode):
        """Follow the path of ``mode`` (FIXED: u to 1; BIAS: y'alpha to 0; UNLEARN,
        JOINT: the departures' t to 1) to its end, one breakpoint per pass (Sec. 3:
        "move along the current affine piece until the first breakpoint; update the
        partition; repeat")."""
        self.phase = mode
        self.dependent = []                  # the rates change with the system followed
        if mode == FIXED and self.departures["regularise_fixed"]:
            self._regularise_fixed()                      # departure: singular Q_ss
        for _ in range(50 * (self.n + 10)):
            aS, bdot, gdot, rtol, t_end, b_only, aF = self._direction(mode)
            t, kind, who, bdot = self._next_event(mode, aS, aF, gdot, rtol, t_end, bdot)
            if self.budget == 0:
                raise _Budget()
            self._move(mode, t, aS, bdot, gdot, b_only, aF)
            if kind == EV_END:
                self._end_of_parameter(mode)
                self._hook()
                return
            if kind == EV_LEAVE:                          # an alpha_s reached 0 or c
                self._leave(who, aS[self.S.index(who)] > 0)
            else:                                         # an s_o or a xi_c reached 0
                self.g[who] = 0.0
                if self.status[who] == FORCED:
                    self._leave_forced(who)               # departure: joint increment
                self._join(who, mode)
            self._hook()
        raise CyclingError("POKER: too many breakpoints (cycling?)")

    def _direction(self, mode):
        """The rates of the current piece: (dalpha_s, db, dg, round-off of dg, the rest
        of the parameter, b alone moves, dalpha_F)."""
        if mode == FIXED:
            aS, bdot, t_end, b_only = self._fixed_bias_rates()
            aF = np.zeros(0)
        elif mode == BIAS:
            aS, bdot, t_end, b_only = self._adjustable_bias_rates()
            aF = np.zeros(0)
        else:
            aS, bdot, t_end, b_only, aF = self._forced_rates(mode)   # departures
        gdot, rtol = self._sensitivities(mode, aS, bdot, aF)
        return aS, bdot, gdot, rtol, t_end, b_only, aF

    def _sensitivities(self, mode, aS, bdot, aF):
        """dg_i = y_i (sum_s Q-column dalpha_s) - y_i db (+ d_i with b fixed, Eq. 3), and
        each rate's round-off bound: sqrt(k_ii) (sum_j sqrt(k_jj) |dalpha_j|) + |db| +
        |d_i|, times EPS_RATE.  O(n |I_s|), every sum over I_s left to right."""
        n, k = self.n, len(self.S)
        S = np.array(self.S, dtype=np.intp)
        y = self.y[:n]
        kr = np.sqrt(np.abs(self.kdiag[:n]))
        inner = matvec(self.KS[:n, :k], y[S] * aS) if k else np.zeros(n)
        terms = dot(np.abs(aS), kr[S]) if k else 0.0
        if mode in (UNLEARN, JOINT):
            inner, terms = self._forced_sensitivities(inner, terms, aF, kr)  # departures
        gdot = y * inner - y * bdot
        if mode == FIXED:
            gdot = gdot + self.d[:n]
        rtol = EPS_RATE * (kr * terms + abs(bdot) + (np.abs(self.d[:n]) if mode == FIXED else 0.0))
        return gdot, rtol

    def _next_event(self, mode, aS, aF, gdot, rtol, t_end, bdot):
        """The next breakpoint (Sec. 3: "b can increase until one of the four types of
        inequality constraints becomes active"): an alpha_s reaching c (rate > 0) or 0
        (rate < 0), an s_o or a xi_c reaching 0, or the end of the parameter; the
        least-index rule among ties.  Returns (step, kind, id, db)."""
        n, k = self.n, len(self.S)
        S = np.array(self.S, dtype=np.intp)
        st = self.status[:n]
        # rates within round-off of zero make no event
        athr = EPS_ARATE * (float(np.max(np.abs(aS))) if k else 0.0)
        joins = ((st == I_O) & (gdot < -rtol)) | ((st == I_C) & (gdot > rtol))
        if mode == JOINT:
            athr, joins = self._joint_events(athr, aF, joins, st, gdot, rtol)  # departure
        up, down = (aS > athr) & (aS > 0), (aS < -athr) & (aS < 0)
        moving = up | down
        aSm = aS[moving]
        ts_s = np.maximum(np.where(up[moving], self.C - self.alpha[S[moving]],
                                   -self.alpha[S[moving]]) / aSm, 0.0) if k else np.zeros(0)
        ws_s = self.aw / np.abs(aSm)
        cand = np.flatnonzero(joins)
        if self.dependent:
            cand = cand[~np.isin(cand, self.dependent)]
        ts = np.concatenate((ts_s, np.maximum(-self.g[cand] / gdot[cand], 0.0)))
        ws = np.concatenate((ws_s, EPS_G / np.abs(gdot[cand])))
        ids = np.concatenate((S[moving], cand))
        kinds = np.concatenate((np.full(aSm.shape[0], EV_LEAVE),
                                np.full(cand.shape[0], EV_JOIN)))
        w_end = 1e-15 if mode != BIAS else 1e-15 * max(1.0, abs(self.tau))
        t, kind, who = next_breakpoint(t_end, w_end, ts, ws, ids, kinds)
        if kind < 0 and mode == UNLEARN:
            t, kind, bdot = self._decrement_emptied()     # departure: unlearning
        if kind < 0:
            raise SingularActiveSetError("POKER: unbounded piece (no event ends it)")
        return t, kind, who, bdot

    def _move(self, mode, t, aS, bdot, gdot, b_only, aF):
        """Move along the piece by the step t: alpha_s, b, the g off I_s, the parameter."""
        n = self.n
        st = self.status[:n]
        if self.S:
            S = np.array(self.S, dtype=np.intp)
            self.alpha[S] = np.clip(self.alpha[S] + aS * t, 0.0, self.C)
        if mode in (UNLEARN, JOINT) and not b_only:
            self._move_forced(mode, aF, t)                # departures: alpha_F and t
        self.b += bdot * t
        move = (st != I_S) & (st >= 0)
        self.g[:n][move] += gdot[move] * t
        if mode == FIXED:
            self.u += t
        elif mode == BIAS and not b_only:
            self.tau += (1.0 if self.tau < 0 else -1.0) * t
        self.n_iterations += 1
        if self.budget > 0:
            self.budget -= 1

    def _end_of_parameter(self, mode):
        """The end of the parameter: u = 1 (Eq. 3 is now Eq. 2), y'alpha = 0 (b = b*)."""
        if mode == FIXED:
            self.u = 1.0
        elif mode == BIAS:
            self.tau = 0.0
        else:
            self._forced_end(mode)                        # departures: t = 1

    def _hook(self):
        if self.breakpoint_hook is not None:
            self.breakpoint_hook(self)

    # ------------------------------------------------------------------ Sec. 3: the set changes
    def _leave(self, who, up):
        """A member of I_s reached a bound: c (``up``, it joins I_c) or 0 (I_o)."""
        pos = self.S.index(who)
        if up:
            self._remove_from_S(pos, I_C, self.C)
        else:
            self._remove_from_S(pos, I_O, 0.0)
        self.g[who] = 0.0
        self.dependent = []

    def _join(self, i, mode):
        """Example i (in I_o or I_c, g_i = 0) joins I_s; a zero pivot (i dependent on
        I_s) goes through an exchange along the null direction instead, until i joins
        a smaller I_s or reaches its other bound."""
        col = self._column(i)
        sigma = 1.0 if self.status[i] == I_O else -1.0   # alpha_i leaves 0 upwards, c downwards
        changed = False
        while True:
            dirn = self._try_join(i, col, mode, sigma, changed)
            if dirn is None or self._exchange(i, col, sigma, dirn):
                return
            changed = True

    def _try_join(self, i, col, mode, sigma, changed):
        """i joins I_s by its pivot (None), or the null direction dalpha_s per unit of
        alpha_i when the pivot is zero."""
        q_ii = self.kdiag[i]
        if not self.S:
            if mode == FIXED and q_ii <= EPS_PIVOT_ABS * self.kmax:
                return np.zeros(0)                        # alpha_i alone: nothing moves
            self._add_to_S(i, col)
            self.dependent = []
            return None
        if self.departures["duplicates"] and (dup := self._duplicate(i, col)) >= 0:
            return self._duplicate_direction(i, dup, sigma)      # departure: a copy
        S = np.array(self.S, dtype=np.intp)
        m = np.concatenate(([self.y[i]], self.y[S] * self.y[i] * col[S]))
        pivot = self._resolve_doubtful(i, m, mode, self._schur(i, m, mode))  # departure
        beta, kb, z, kappa, scale = pivot
        if pivot_is_zero(kappa, scale, self.kmax, EPS_PIVOT, EPS_PIVOT_ABS):
            return -sigma * z
        self._add_to_S(i, col, beta, kb)
        self._after_small_pivot(kappa, scale)             # departure: refresh
        if not changed:
            self.dependent = []
        return None

    def _schur(self, i, m, mode):
        """The pivot of i: (beta = -R m, kappa of M, z, kappa, its round-off scale).
        kappa = q_ii - m'M^-1 m for the bordered matrix; with b fixed (Eq. 3) the pivot
        of Q_ss, q_ii - Q_is z with Q_ss z = Q_si.  The scale is |q_ii| + |m|'|R m|."""
        q_ii = self.kdiag[i]
        beta = self.margin.beta(m)                        # beta = -R m
        kb = bordered_pivot(q_ii, m, beta)                # q - m'M^-1 m
        if mode == FIXED:
            z = self._solve_fixed(m[1:])                  # Q_ss z = Q_si
            kappa = q_ii - dot(m[1:], z)
            scale = abs(q_ii) + dot(np.abs(m[1:]), np.abs(z))
        else:
            z, kappa = -beta[1:], kb
            scale = abs(q_ii) + dot(np.abs(m), np.abs(beta))
        return beta, kb, z, kappa, scale

    def _exchange(self, i, col, sigma, dirn):
        """The degenerate case: alpha_i moves off its bound along the null direction
        ``dirn`` (no g changes, nor y'alpha with b adjustable) until a member of I_s
        reaches a bound (it leaves: False, i then joins the smaller I_s) or alpha_i
        reaches its other bound (True: i flips between I_o and I_c)."""
        k = len(self.S)
        S = np.array(self.S, dtype=np.intp)
        # alpha_i at 0 or c, or inside its box when it left F: the distance
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
                # a rate within round-off of zero makes no event and no move: the step
                # can be of order c, and g is not updated along a null direction
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
            # the members whose event is tied with the one taken reach their bound with
            # it (g is not updated along a null direction)
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
            return True
        self.alpha[i] += sigma * tmin
        self._leave(who, dirn[self.S.index(who)] > 0)
        self.dependent = [who]             # I_s changed: the older marks go
        # i is now strictly inside its box: it joins the smaller I_s; its status stays
        # I_O/I_C until then and sigma keeps its direction
        return False

    def _add_to_S(self, i, col, beta=None, kappa=None):
        """i joins I_s: R grows by the bordered rank-one update (Eq. 8 of C&P;
        bordered_start when I_s is empty), the core's ``join``."""
        join(self.margin, i, self.status, self.y, self.kdiag[i], self._known(col), beta, kappa,
             I_S)
        self.g[i] = 0.0
        self.fresh = False
        self._s_changed()                                 # departure: refresh (drift)

    def _remove_from_S(self, pos, new_status, value=None):
        """The member at ``pos`` leaves I_s with status ``new_status`` (alpha = ``value``
        when given), the core's ``leave``: its column to the cache, R shrunk by the
        rank-one downdate (bordered_shrink; R afresh where that is refused as singular)."""
        ill = self._shrink_ill()                          # departure: refresh
        _, refused = leave(self.margin, pos, self.status, new_status,
                           self.departures["shrink_eps"],
                           alpha=None if value is None else self.alpha, value=value,
                           cache_put=self._cache_put)     # departure: column cache
        self.fresh = False
        if refused:
            if not self._refresh():
                raise SingularActiveSetError("POKER: singular active set after a removal")
        else:
            self._s_changed()
            self._refresh_after_shrink(ill)

    # ------------------------------------------------------------------ Sec. 5: SelfInit POKER
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
        self._end_chunk("SelfInit")                       # departures: end of a chunk

    # ------------------------------------------------------------------ Sec. 5: selective sampling
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
