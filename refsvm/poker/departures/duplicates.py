"""Departure ``duplicates``: a copy of a margin vector joins along the exact null direction.

An example identical in feature space to a member s of I_s has a zero pivot; the printed
method's exchange moves alpha_s along the null direction z = -R m, which carries the
round-off of R.  At c = 1e12 a relative error of 1e-17 in z, times a step of order c,
left alpha an ulp of c off and g drifting by 1e-5.  The exact direction is known:
alpha_s moves by -y_i y_s per unit of alpha_i (Q_ss z = Q_si and y_s'z = y_i with
z = y_i y_s e_s, db = 0).  Stream: copies of a point with both labels at C = 1e12
(``tests/poker/test_twins.py``, the extreme-C streams); docs section "Extreme C".
"""

from __future__ import annotations

import numpy as np

__all__ = ["Duplicates"]


class Duplicates:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: the exact null direction of a copy."""

    def _duplicate(self, i, col):
        """Position in I_s of the first member identical to i in feature space
        (k(x_i, x_s) = k(x_i, x_i) = k(x_s, x_s) exactly), or -1."""
        q = self.kdiag[i]
        for pos, s in enumerate(self.S):
            if col[s] == q and self.kdiag[s] == q:
                return pos
        return -1

    def _duplicate_direction(self, i, pos, sigma):
        """dalpha_s per unit of alpha_i for i a copy of the member at ``pos``: alpha_s
        moves by -sigma y_i y_s (Q_ss z = Q_si and y_s'z = y_i by z = y_i y_s e_pos,
        with db = 0), with no round-off of R in it."""
        dirn = np.zeros(len(self.S))
        dirn[pos] = -sigma * self.y[i] * self.y[self.S[pos]]
        return dirn
