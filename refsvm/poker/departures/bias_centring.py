"""Departure ``centre_bias``: with I_s empty, the midpoint of the optimal biases.

When no margin vector is strictly inside its box, every b of an interval keeps the KKT
conditions; the printed paths stop at whichever end they reached.  The bias is moved to
the interval's midpoint (LIBSVM's choice), or to its finite end when only one class is
present, so that the model does not depend on the path's history (and agrees with SVC's
intercept).  Margin vectors within ``bound_window`` min(c, 1) of a bound count as at it
(they leave I_s first, g following the change of their alpha).  Stream: any chunk that
ends with I_s empty, e.g. separable blobs at small c, where the tests compare b with
LIBSVM's (``tests/poker/test_estimator.py``); docs section "The readings chosen for the
printed ambiguities" (bias with I_s empty).
"""

from __future__ import annotations

from ...core.bordered import centred_bias
from ..partition import I_C, I_O, alpha_window

__all__ = ["BiasCentring"]


class BiasCentring:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: the bias of an empty I_s."""

    def _centre_bias(self):
        """With I_s empty every b of an interval keeps the KKT conditions: take its
        midpoint (LIBSVM's choice), or its finite end (one class only).  I_s counts as
        empty when all its members are at a bound (alpha within ``alpha_window(c,
        bound_window)`` of 0 or c): they leave I_s first (b is then not unique either), g
        following the change of their alpha."""
        if not self.departures["centre_bias"]:
            return
        wb = alpha_window(self.C, self.departures["bound_window"])
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
        new = centred_bias(v, lo_mask, hi_mask)
        if new is None:
            return
        act = st >= 0
        self.g[:n][act] -= y[act] * (new - self.b)
        self.b = new
