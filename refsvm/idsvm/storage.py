"""The examples of an IDSVM state and their kernel columns (storage, not the printed
algorithm): the mixin :class:`Storage` of
:class:`refsvm.idsvm.incremental_svm.IncrementalSVMState`."""

from ..core.engine import column
from ..core.optimum import PartitionArrays
from .constants import OUT

__all__ = ["Storage"]


class Storage(PartitionArrays):
    """Mixin: ``rows``, the per-example arrays (the core's :class:`PartitionArrays`), and
    the column Q_ic of an example."""

    def _store(self, x, y):
        """Append an example with alpha = 0 and status OUT; returns its id (no g yet)."""
        return self._new_example(x, y, OUT)

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
