"""Departure ``column_cache`` (a speed-up): the kernel columns of examples that left I_s.

The printed method evaluates the column of every example that joins I_s.  A member that
leaves and later rejoins (common: a path passes the same margin vectors back and forth)
would evaluate its n kernel values again; the cache keeps them (``cache_size`` MB, the
oldest first out) so that a return evaluates only the entries of the examples added since.
It changes no number, only the kernel-evaluation counts; ``departures="paper"`` turns it
off.  Stream: any AltPOKER run (``benchmarks/bench_poker.py``); docs section "Counters" of
``docs/fine_scheinberg.rst``.

The cache itself (its entries, admission, persistence) is the core's
:class:`refsvm.core.column_cache.ColumnCache`, one for both families; POKER's entries
hold NaN for the examples outside the problem when the column was kept (evaluated on the
return if they have joined it since).
"""

from __future__ import annotations

import numpy as np

from ...core.column_cache import ColumnCache as _Cache

__all__ = ["ColumnCache"]


class ColumnCache:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: ``cache`` is a
    :class:`refsvm.core.column_cache.ColumnCache`."""

    def _cache_put(self, i, col):
        """Keep the column of an example that left I_s (oldest entries go first)."""
        col = np.array(col[: self.n], dtype=np.float64)
        col[self.status[: self.n] < 0] = np.nan               # unknown: not in the problem
        self.cache.put(i, col, int(self.cache_size * 2**20) if self.departures["column_cache"]
                       else 0)

    def _cache_drop(self, i):
        """Forget the cached column of i (an unlearned example)."""
        self.cache.drop(i)

    def _cache_arrays(self):
        """The cache as arrays (persistence): ids oldest first, lengths, the columns
        one after another."""
        ids, lengths, cols = self.cache.arrays()
        return {"cache_ids": ids, "cache_len": lengths, "cache_cols": cols}

    def _cache_load(self, ids, lengths, cols):
        """The cache from the arrays of :meth:`_cache_arrays`."""
        self.cache = _Cache.from_arrays(ids, lengths, cols)
