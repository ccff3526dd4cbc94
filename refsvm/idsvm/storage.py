"""The examples of an IDSVM state and their kernel columns (storage, not the printed
algorithm): the mixin :class:`Storage` of
:class:`refsvm.idsvm.incremental_svm.IncrementalSVMState`."""

import numpy as np

from ..core.bordered import grow_array
from ..core.engine import column
from ..core.kernels import SparseRow
from .constants import GONE, OUT

__all__ = ["Storage"]


class Storage:
    """Mixin: ``rows``, the per-example arrays, and the column Q_ic of an example."""

    def _store(self, x, y):
        """Append an example with alpha = 0 and status OUT; returns its id (no g yet)."""
        if self.sparse:
            x = SparseRow(np.array(x.indices, dtype=np.int32), np.array(x.data, dtype=np.float64))
        else:
            x = np.array(x, dtype=np.float64)
        c = self.n
        self.rows.append(x)
        self.n += 1
        for name, fill in (("y", 0), ("alpha", 0), ("g", 0), ("kdiag", 0), ("status", GONE)):
            setattr(self, name, grow_array(getattr(self, name), self.n, fill))
        self.margin.reserve_rows(self.y.shape[0])
        self.y[c] = y
        self.alpha[c] = 0.0
        self.status[c] = OUT
        return c

    def _column(self, c, known=None):
        """k(x_i, x_c) for every id i (the engine's ``column``; 0 for unlearned ids),
        kernel-evaluating only the active ids not already known: from c's cached column
        (its first L ids; it leaves the cache) or from ``known`` (an id -> value map)."""
        cached, _ = self._cached_column(c)
        return column(self.n, c, self.status, self.kdiag[c], self.kernel, self.rows,
                      cached=cached, given=() if known is None else known.items())

    def _known_from_S(self, i):
        """k(x_i, x_s) for the margin vectors s, read from their cached columns."""
        return self.margin.known(i)
