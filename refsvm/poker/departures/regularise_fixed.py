"""Departure ``regularise_fixed``: a singular Q_ss made regular before the fixed-bias path.

Eq. 3 solves Q_ss dalpha_s = -d_s du with b fixed; the adjustable-bias path that ended
the previous chunk only needs the *bordered* matrix [[0, y_s'], [y_s, Q_ss]] regular, and
may leave Q_ss itself singular (d + 1 margin vectors of a d-dimensional linear kernel).
Then R_00 = -v'Q_ss v (v = R_s0) is zero and the printed step divides by it.  Before
the fixed-bias path alpha_s moves along v (no g changes, b fixed) until a member
reaches a bound and leaves, until Q_ss is regular.  Stream: the checkerboard grid and the
duplicates under the linear kernel on two features, chunks of 1 and 5
(``tests/poker/test_reference.py::test_degenerate_streams``); docs section "One
factorisation for every path" (fixed bias).
"""

from __future__ import annotations

import numpy as np

from ...core.bordered import dot
from ..partition import (EPS_ARATE, EPS_PIVOT, EV_LEAVE, I_C, I_O, next_breakpoint)

__all__ = ["FixedBiasRegularisation"]


class FixedBiasRegularisation:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: Q_ss regular before Eq. 3."""

    def _qss_singular(self):
        """Q_ss numerically singular: R_00 = -v'Q_ss v (v = R_s0, y_s'v = 1) is zero
        against k_max ||v||^2."""
        v = self.R[1:, 0]
        return -self.R[0, 0] <= EPS_PIVOT * self.kmax * dot(v, v)

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
                    v[pos] = 0.0                     # no event, no move (see _exchange)
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
