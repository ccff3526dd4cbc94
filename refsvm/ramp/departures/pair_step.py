"""Departure ``singular_pairs`` / ``pair_eta``: one exact step on a (nearly) singular pair.

The failure of the printed form.  Steps 11-14 move one coordinate at a time.  When the
working example q and the previous one p are the same or the opposite point in feature
space (an opposite-label duplicate: the 2x2 block of the dual is singular, the dual is flat
along a direction n of the pair), each Eq. (14) step advances along n by about 1: the loop
takes about C steps on the pair.  When they are almost the same or the opposite point
(det = Q_pp Q_qq - Q_pq^2 <= ``pair_eta`` Q_pp Q_qq, rows 1e-5 to 1e-2 apart under the RBF
kernel) the loop zig-zags between them, contracting the residual by only 1 - det / (Q_pp
Q_qq) per step: about min(C, log(1/tol) / (1 - k)) steps.

What it does instead.  On a singular pair, one step along the flat direction to the box
bound (:meth:`PairStep._flat_step`); on a nearly singular pair that the loop zig-zags on
(q was also the working example before p), the two-variable sub-problem solved exactly
(:meth:`PairStep._exact_pair_step`); Eq. (15) for both coordinates in one pass.

Streams that show it: ``tests/ramp/test_online_svmr.py``, opposite-label duplicates
(``test_twins_agree_on_streams_with_opposite_label_duplicates``) and close pairs
(``test_close_pair_zig_zags_without_the_exact_step``: about 2,000 steps as printed at C =
1e3, a handful with the pair step).

Settings: ``singular_pairs`` (flag), ``pair_eta`` (0: off), ``pair_eps`` (the round-off
test of a singular pair).  Docs: ``docs/wang_vucetic.rst``, reading 13 and "Departures
from the printed algorithm".
"""

from __future__ import annotations

import numpy as np

__all__ = ["PairStep"]


class PairStep:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the pair steps."""

    def _try_pair_step(self, q, gain, A=None, moved=None):
        """A pair step on (p, q), p the previous working example, when (p, q) is a pair to
        step on jointly (:meth:`_pair_kernel`) and the step moves it; Eq. (15) on ``A`` (all
        of I when None), the rows of coordinates back at 0 released (when ``moved`` is None)
        or the moves added to ``moved`` (a shrinking round).  Returns True when taken."""
        p = self._last
        kpq = self._pair_kernel(p, q, self._back)
        if kpq is None:
            return False
        dp, dq = self._pair_step(p, q, kpq)
        if dp == 0.0 and dq == 0.0:
            return False
        if moved is None:
            self._pair_eq15(p, dp, q, dq)                        # Eq. (15), both coordinates
            for r in (p, q):
                if self.alpha[r] == 0.0:
                    self._release_row(r)
        else:
            moved[p] = moved.get(p, 0.0) + dp
            moved[q] = moved.get(q, 0.0) + dq
            self._pair_eq15(p, dp, q, dq, A)                     # Eq. (15) on A
        self._remember(p, gain)                                  # for _cycle: two steps
        self._remember(q, gain)
        self._last = self._back = -1
        return True

    def _pair_kernel(self, p, q, back=-1):
        """k(x_p, x_q) when p's row is kept and the working example q, after p, forms with
        it a pair to step on jointly, else None.

        Either (p, q) is singular (:meth:`_is_singular`: the same or the opposite point in
        feature space; with ``singular_pairs``), or it is nearly singular, det = Q_pp Q_qq -
        Q_pq^2 <= ``pair_eta`` Q_pp Q_qq (the squared sine of the angle between phi(x_p) and
        phi(x_q) at most ``pair_eta`` > 0: almost the same or the opposite point, or parallel rows under the linear
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
        if not ((self.singular_pairs and self._is_singular(p, q, kpq))
                or (self.pair_eta > 0.0 and back == q
                    and qp * qq - kpq * kpq <= self.pair_eta * (qp * qq))):
            return None
        return kpq

    def _is_singular(self, p, q, kpq):
        """The same or the opposite point in feature space (to round-off):
        Q_pp + Q_qq - 2 |k(x_p, x_q)| <= ``pair_eps`` (Q_pp + Q_qq)."""
        qp, qq = self.qdiag[p], self.qdiag[q]
        return qp + qq - 2.0 * abs(kpq) <= self.pair_eps * (qp + qq)

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

        1. when H is not singular to round-off (det > ``pair_eps`` Q_pp Q_qq), its
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
        if det > self.pair_eps * (hpp * hqq):                   # 1. Newton: d = H^{-1} g
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
