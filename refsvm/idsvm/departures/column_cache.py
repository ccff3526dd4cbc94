"""The column cache (setting ``column_cache``; its size is the state's ``cache_size``).

What it saves (a speed-up, not a safeguard): an example that leaves S, or ends a learning
step in E or R, often returns to S later; the printed method then evaluates its whole
kernel column again.  The cache keeps at most ``cache_size`` MB of such columns (oldest
out first), so that a return costs only the kernel values of the examples learned
since.  It changes no number of the model, only ``n_kernel_evals`` (so it is off in the
paper form, whose counts are the printed method's).  The stream that shows it: any
noisy stream, e.g. ``tests/idsvm/test_stress.py``; ``benchmarks/bench_idsvm.py``
measures it.

The cache itself (its entries, admission, persistence) is the core's
:class:`refsvm.core.column_cache.ColumnCache`, one for both families; C&P's entries
hold 0 for unlearned examples.

Docs: ``docs/cauwenberghs_poggio.rst``, "Cost".
"""

__all__ = ["ColumnCache"]


class ColumnCache:
    """Mixin of the IDSVM state: ``cache`` is a :class:`refsvm.core.column_cache.ColumnCache`."""

    def _cached_column(self, c):
        """c's cached column and its length (None, 0 if none); it leaves the cache."""
        col = self.cache.take(c)
        return (None, 0) if col is None else (col, col.shape[0])

    def _cache_put(self, i, col):
        """Keep the kernel column of i (which just left S, or ended a learning step in E
        or R) for a later return to S: at most cache_size MB of columns of the current
        length n (none with ``column_cache`` off); the oldest entries go first."""
        self.cache.put(i, col[: self.n].copy(),
                       self.cache_bytes if self.departures["column_cache"] else 0)
