"""The repair of y'alpha after an operation (setting ``repair_balance``).

The failure of the printed form it answers: the increments keep h = sum_i y_i alpha_i = 0
only as accurately as beta = -R m (Eq. 5) is computed.  Where the bordered matrix is
nearly singular -- exact duplicates under a homogeneous polynomial kernel, with
exchanges along null directions -- an operation can end with |h| above the exactness
check's level while every g is within its own.  The stream that shows it: points each
twice under (x.z)^3, the classes sorted and each nearest first from one point, then
every fifth id unlearned (``tests/idsvm/test_balance_repair.py``; the figures are in
the docs section below).

The repair: when |h| is above the check's level, S is not empty and C k_max is not above
``polish_above`` (there the polish, :mod:`.polish`, refines h and g_S together in
doubled precision; a step in plain arithmetic through R can leave the kept g passing
the check while the true g is off), one Newton step on h alone through the bordered
system, [db; dalpha_S] = -R [h; 0] (Eq. 3 with h's residual: R's first column times
-h), taken only if every alpha_S stays in [0, C]; g of every learned example outside S
then moves by y_i (sum_j k(x_i, x_S[j]) y_S[j] dalpha_S[j] + db) (Eq. 7, the sums left
to right over S); counted as a repair (``n_repairs``).  An operation whose h is within
its level changes no number.

Docs: ``docs/cauwenberghs_poggio.rst``, "Safeguards" (item 3).
"""

import numpy as np

from ...core.bordered import matvec as _matvec
from ..constants import GONE, MARGIN

__all__ = ["BalanceRepair"]


class BalanceRepair:
    """Mixin of the IDSVM state: y'alpha repaired by one step through R."""

    def _repair_balance(self, amax0, mass0):
        """The repair (module docstring) when ``repair_balance`` is on and |h| is above
        its level; returns True when the step was taken."""
        if not self.departures["repair_balance"] or not self.S or self._extreme():
            return False
        h, levels = self._balance_and_levels(amax0, mass0)
        if not abs(h) > levels[1]:
            return False
        S = np.array(self.S, dtype=np.intp)
        step = -h * self.Rinv[: S.size + 1, 0]
        alpha_S = self.alpha[S] + step[1:]
        if np.any(alpha_S < 0.0) or np.any(alpha_S > self.C):
            return False
        self.n_repairs += 1
        self.alpha[S] = alpha_S
        self.b += step[0]
        n = self.n
        move = (self.status[:n] != MARGIN) & (self.status[:n] != GONE)
        dg = self.y[:n] * (_matvec(self.KS[:n, : S.size], self.y[S] * step[1:]) + step[0])
        self.g[:n][move] += dg[move]
        return True
