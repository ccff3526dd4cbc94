"""Departure ``column_cache`` (a speed-up): the kernel columns of examples that left I_s.

The printed method evaluates the column of every example that joins I_s.  A member that
leaves and later rejoins (common: a path passes the same margin vectors back and forth)
would evaluate its n kernel values again; the cache keeps them (``cache_size`` MB, the
oldest first out) so that a return evaluates only the entries of the examples added since.
It changes no number, only the kernel-evaluation counts; ``departures="paper"`` turns it
off.  Stream: any AltPOKER run (``benchmarks/bench_poker.py``); docs section "Counters" of
``docs/fine_scheinberg.rst``.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ...core.active_set import cache_keep

__all__ = ["ColumnCache"]


class ColumnCache:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: the column cache."""

    def _cache_put(self, i, col):
        """Keep the column of an example that left I_s (oldest entries go first)."""
        col = np.array(col[: self.n], dtype=np.float64)
        col[self.status[: self.n] < 0] = np.nan               # unknown: not in the problem
        cache_keep(self.cache, i, col, self.n, int(self.cache_size * 2**20),
                   self.departures["column_cache"])

    def _cache_drop(self, i):
        """Forget the cached column of i (an unlearned example)."""
        self.cache.pop(i, None)

    def _cache_arrays(self):
        """The cache as arrays (persistence): ids oldest first, lengths, the columns
        one after another."""
        return {"cache_ids": np.array(list(self.cache.keys()), dtype=np.intp),
                "cache_len": np.array([c.shape[0] for c in self.cache.values()], dtype=np.intp),
                "cache_cols": (np.concatenate(list(self.cache.values())) if self.cache
                               else np.zeros(0))}

    def _cache_load(self, ids, lengths, cols):
        """The cache from the arrays of :meth:`_cache_arrays`."""
        self.cache = OrderedDict()
        start = 0
        for i, L in zip(np.asarray(ids).tolist(), np.asarray(lengths).tolist()):
            self.cache[int(i)] = np.array(cols[start: start + L], dtype=np.float64)
            start += L
