"""A weight vector stored as a scale times a direction, w = s·v (reference of the
core's ``ScaledVector``).

Online SVMs shrink w at every step (w ← (1 − ηλ) w in Pegasos, w ← (1 − β) w in
StreamSVM); with w = s·v that costs O(1) instead of O(d), and adding a sparse
example costs O(nnz).  ‖w‖² is kept incrementally when asked for.
"""

from __future__ import annotations

import numpy as np

from .kernels import add_scaled, dot, sqnorm

__all__ = ["ScaledVector"]


class ScaledVector:
    """w = s·v with O(1) scaling and O(nnz) dot / add.

    Parameters
    ----------
    n : int
        Dimension.
    track_norm : bool
        Keep ‖v‖² (hence ‖w‖²) up to date on every add.
    """

    def __init__(self, n, track_norm=False):
        self.v = np.zeros(int(n))
        self.s = 1.0
        self.vnorm2 = 0.0
        self.track_norm = bool(track_norm)

    def dot(self, x):
        """⟨w, x⟩ = s⟨v, x⟩."""
        return self.s * dot(self.v, x)

    def scale(self, a):
        """w ← a·w (a = 0 resets v)."""
        if a == 0.0:
            self.v[:] = 0.0
            self.s = 1.0
            self.vnorm2 = 0.0
        else:
            self.s *= a

    def add(self, a, x, vx=None):
        """w ← w + a·x; ``vx`` = ⟨v, x⟩ before the update (computed if not given)."""
        c = a / self.s
        if self.track_norm:
            if vx is None:
                vx = dot(self.v, x)
            self.vnorm2 += 2.0 * c * vx + c * c * sqnorm(x)
        add_scaled(self.v, c, x)

    def sqnorm(self):
        """‖w‖² = s²‖v‖² (with ``track_norm``)."""
        return self.s * self.s * self.vnorm2

    def fold(self, threshold=1e-9):
        """Fold a scale below ``threshold`` into v."""
        if self.s < threshold:
            self.v *= self.s
            self.vnorm2 *= self.s * self.s
            self.s = 1.0

    @property
    def w(self):
        """The vector w = s·v (a new array)."""
        return self.s * self.v
