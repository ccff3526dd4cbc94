"""Departure ``warmup``: the first arrivals learned with the hinge loss (CCCP's usual start).

The failure of the printed form.  From its first arrival the printed algorithm treats an
example with g > 2 as an outlier (step 4, Eq. 10).  A stream can fix a wrong model in its
first few dozen examples and then ignore, as outliers, every later example that model gets
badly wrong.  Stream that shows it: Banana (C = 1 and 10, 8 random orders each): 3 of 16
runs end at 67-71 % test accuracy without the warm-up, all 16 at 88.3-89.0 % with
``warmup=200`` (``docs/wang_vucetic.rst``, reading 18).

What it does instead.  The first ``warmup`` arrivals are learned with the hinge loss: the
flat part of the ramp is off, no example is an outlier (:attr:`WarmUp.outlier_bound` is
infinite), so steps 4 and 16-22 keep every g >= 0 in V; at arrival ``warmup + 1`` steps
9-27 run once with the ramp's bound g <= 2, whatever that arrival's g
(:meth:`WarmUp._end_of_warmup`).

Setting: ``warmup`` (gates the state's parameter ``warmup``).  Docs:
``docs/wang_vucetic.rst``, reading 18.
"""

from __future__ import annotations

import math

__all__ = ["WarmUp"]


class WarmUp:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the hinge-loss warm-up."""

    @property
    def outlier_bound(self):
        """The bound of Eq. (10) now: V holds the examples with g <= 2 (the ramp's
        s = -1), or every g up to arrival ``hinge_until`` (infinite bound): the first
        ``warmup`` arrivals, and the stretches of the departure ``rewarm``."""
        return math.inf if self.n_seen <= self.hinge_until else 2.0

    def _end_of_warmup(self):
        """An arrival that step 4 turned away: when it ends the warm-up (or a stretch of
        ``rewarm``), an update (steps 9-27 with the bound 2)."""
        if self.hinge_until and self.n_seen == self.hinge_until + 1:
            self.n_updates += 1
            self.held[:] = False
            self._cccp()
