"""The examples of an IDSVM state and their kernel columns (storage, not the printed
algorithm): the mixin :class:`Storage` of
:class:`refsvm.idsvm.incremental_svm.IncrementalSVMState`."""

import numpy as np

from ..core.bordered import grow_array
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
        """k(x_i, x_c) for every id i (0 for unlearned ids), kernel-evaluating only the
        active ids not already known: from c's cached column (its first L ids) or from
        ``known`` (an id -> value map)."""
        col = np.zeros(self.n)
        cached, L = self._cached_column(c)
        for i in range(self.n):
            if self.status[i] == GONE:
                continue
            if i == c:
                col[i] = self.kdiag[c]
            elif i < L:
                col[i] = cached[i]
            elif known is not None and i in known:
                col[i] = known[i]
            else:
                col[i] = self.kernel(self.rows[i], self.rows[c])
        return col

    def _known_from_S(self, i):
        """k(x_i, x_s) for the margin vectors s, read from their cached columns."""
        return self.margin.known(i)
