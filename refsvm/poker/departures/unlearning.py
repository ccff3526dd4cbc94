"""Departure ``unlearning`` (an extension, beyond the paper): the chunk decrement.

Fine & Scheinberg add examples only.  The decrement removes a set of learned examples at
once, exactly: their bounds c_i are driven to 0 (alpha_i = (1 - t) alpha_i^0, t from 0 to
1) by the path of :mod:`.forced_path`, with b adjustable and y'alpha = 0 kept; removed
examples at alpha = 0 go at once.  It is called explicitly and changes nothing of Fig. 1,
so it has no switch in ``DEPARTURES``; in the paper form it runs with every other departure
off.  Stream:
``POKER.unlearn`` (``tests/poker/test_estimator.py``); docs section "One factorisation for every path".
"""

from __future__ import annotations

import numpy as np

from ..partition import FORCED, GONE, I_O, I_S, IDLE, UNLEARN

__all__ = ["ChunkUnlearning"]


class ChunkUnlearning:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: the chunk decrement."""

    def unlearn(self, ids):
        """Chunk decrement: remove the examples ``ids`` at once, exactly.  Their bounds
        c_i are driven to 0 (alpha_i = (1 - t) alpha_i^0, t: 0 -> 1) by the parametric
        method with b adjustable and y'alpha = 0 kept."""
        ids = np.unique(np.asarray(ids, dtype=np.intp))
        for i in ids:
            if self.status[i] == I_S:
                pos = self.S.index(int(i))
                self.status[i] = FORCED
                self._remove_from_S(pos, FORCED)
            elif self.status[i] == I_O or self.alpha[i] == 0.0:
                self.status[i] = GONE                     # alpha_i = 0: nothing depends on it
                self.alpha[i] = 0.0
            else:
                self.status[i] = FORCED
        F = np.flatnonzero(self.status[: self.n] == FORCED)
        # removed margin vectors at alpha = 0 go at once as well
        F = F[self.alpha[F] > 0.0]
        self.status[np.flatnonzero(self.status[: self.n] == FORCED)] = GONE
        self.status[F] = FORCED
        if F.size:
            self.F = F
            self.a0[F] = self.alpha[F]
            self.KF = np.column_stack([self._known(self._column(int(j))) for j in F])
            self.t = 0.0
            self._follow(UNLEARN)
            self.alpha[F] = 0.0
            self.status[F] = GONE
            self.F = np.zeros(0, dtype=np.intp)
            self.KF = np.zeros((0, 0))
        for i in ids:
            self._cache_drop(int(i))
            self.alpha[i] = 0.0
            self.g[i] = 0.0
        self.phase = IDLE
        self._polish()
        self._centre_bias()
