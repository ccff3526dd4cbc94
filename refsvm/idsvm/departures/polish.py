"""The polish at extreme C, in doubled precision, and the windows in round-off units
(settings ``polish``, ``polish_above``, ``tie_ulps``, ``alpha_ulps``, ``repair_ulps``,
``kkt_ulps``, ``h_ulps``).

The failure of the printed form it answers: the path is exact in exact arithmetic, but
its intermediate alphas need not be representable.  At C = 1e12 float64 holds an alpha of
order C to an ulp of C (1.2e-4): each increment leaves alpha_S and b that far off, and g,
updated by the exact rates, drifts from the true y f - 1 by that much times k, step after
step; and the tie windows relative to alpha_max and 1 + k_max alpha_max become wider than
a margin unit, wide enough to tie an event 0.8 margin units away with the candidate's
own (the census of degenerate streams at C = 1e12 in ``tests/idsvm/test_stress.py``).
Above C k_max = ``polish_above`` therefore:

* the end of every operation is polished (:meth:`Polish._polish`): g_S and h summed from
  the stored alpha and b in twice the working precision (Dot2), one step of iterative
  refinement of (b, alpha_S) on these residuals through R (kept only if it stays in the
  box, moves no alpha by more than ``kkt_tol`` alpha_max and lowers the residual), and
  every g recomputed so;
* the windows on g are capped by multiples of the round-off floor of g itself,
  eps (1 + |b| + k_max sum alpha): ``tie_ulps`` for ties, ``repair_ulps`` for repairs,
  ``kkt_ulps`` for the check (``h_ulps`` eps sum alpha for h), and those on alpha by
  ``alpha_ulps`` ulps of alpha_max (:meth:`Polish._g_tol`, :meth:`Polish._a_tol`).

Below ``polish_above`` (every ordinary C) nothing changes.  The sums in doubled
precision, the Newton step through the margin set's R and the snap are the core's
(:mod:`refsvm.core.exactness`: ``dot2_sum``, ``margin_g``, ``polish_newton``,
``snap_margin``; compiled in ``_core``); the windows, the tolerances and the kernel
columns of the error vectors (from the column cache) are this family's.  Docs:
``docs/cauwenberghs_poggio.rst``, "Extreme C: the end-of-operation polish" and "Extreme
C: tolerances in margin units".
"""

import numpy as np

from ...core.exactness import dot2_sum, margin_g, polish_newton
from ..constants import EPS_MACH, ERROR

__all__ = ["Polish"]


class Polish:
    """Mixin of the IDSVM state: the polish and the capped windows above
    ``polish_above``."""

    def _extreme(self):
        """Whether the operation is polished and the windows capped (``polish`` on and
        C k_max above ``polish_above``)."""
        return self.departures["polish"] and self.C * self.kscale > self.departures["polish_above"]

    def _mass(self):
        """sum_i alpha_i over the stored examples, summed left to right (as the twin)."""
        s = 0.0
        for a in self.alpha[: self.n].tolist():
            s += a
        return s

    def _g_tol(self, eps, ulps, amax, mass):
        """A tolerance on g: eps g_scale = eps (1 + k_max alpha_max), and above
        ``polish_above`` at most ``ulps`` round-off floors eps_mach (1 + |b| + k_max mass)."""
        tol = eps * (1.0 + self.kscale * amax)
        if self._extreme():
            tol = min(tol, ulps * EPS_MACH * (1.0 + abs(self.b) + self.kscale * mass))
        return tol

    def _a_tol(self, eps, amax):
        """A tolerance on alpha: eps alpha_max, and above ``polish_above`` at most
        ``alpha_ulps`` ulps of alpha_max."""
        tol = eps * amax
        if self._extreme():
            tol = min(tol, self.departures["alpha_ulps"] * EPS_MACH * amax)
        return tol

    def _polish(self):
        """Above ``polish_above``, g afresh at the end of an operation (module docstring):

        0. ulp residues on the margin vectors go to their bound (:mod:`.snapping`);
        1. g_s (s in S) and h = sum_i y_i alpha_i are summed from the stored alpha and b
           in twice the working precision (Dot2; the terms of the error vectors first,
           ids ascending, then those of S in its order, y_i b and -1);
        2. one step of iterative refinement of (b, alpha_S) on these residuals,
           [db; dalpha_S] = -R [h; g_S] (the bordered system, Eq. 3), kept only if every
           alpha_S stays in [0, C] (within the snap window), no alpha_s moves by more
           than ``kkt_tol`` alpha_max (alpha_max the larger of now and when the operation
           began) and the residual max(k_max |h|, max|g_S|) summed again so is smaller:
           with a nearly singular S the updated R can be far from M^-1;
        3. every g (learned examples) recomputed the same way.

        O(n (|E| + |S|)) flops; the kernel columns of the error vectors come from the
        column cache (the entries missing are evaluated and counted)."""
        if not self._extreme():
            return
        n = self.n
        st = self.status[:n]
        act = np.flatnonzero(st >= 0)
        if not act.size:
            return
        w = self.departures["snap_ulps"] * EPS_MACH * max(self._scales()[0], self._amax0)
        self._snap(w)
        y = self.y[act]
        E = np.flatnonzero(st == ERROR)

        def error_columns():
            """The kernel columns of the error vectors on the learned examples, ids
            ascending (from the column cache; the entries missing are evaluated)."""
            for j in E.tolist():
                col = self._column(j, self._known_from_S(j))
                self._cache_put(j, col)
                yield col[act]

        pe, se = dot2_sum(self.alpha[E] * self.y[E], error_columns(), y)   # Dot2 over E
        if self.S:
            amax = max(self._scales()[0], self._amax0)     # (the scale of the operation)
            # (a step that leaves the box by no more than the snap window w is clipped
            # into it: margin vectors at alpha = 0 or C exactly, as after a snap)
            self.b = polish_newton(self.margin, act, self.alpha, self.y, self.b, self.C,
                                   self.kscale, pe, se, window=w,
                                   max_step=self.departures["kkt_tol"] * amax)[0]
            self._snap(w)
        self.g[act] = margin_g(self.margin, act, self.alpha, self.y, self.b, start=(pe, se))
