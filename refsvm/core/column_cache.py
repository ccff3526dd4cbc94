"""The column cache of the exact active-set engine, in readable Python: the kernel columns
of examples that left the margin set, kept for a later return (a departure of both
families, ``column_cache``; the compiled core's ``ColumnCache`` in ``_core.pxd`` is the
same cache).

Cauwenberghs & Poggio's increments (:mod:`refsvm.idsvm`) and Fine & Scheinberg's POKER
paths (:mod:`refsvm.poker`) evaluate the whole kernel column of every example that joins
the margin set.  An example that leaves it (or, in C&P, ends a learning step outside it)
often returns; the cache keeps its column, so that the return evaluates only the values
of the examples added since.  It changes no number of the model, only the kernel
evaluation counts.

The entries are the family's columns as it hands them over: C&P's hold 0 for unlearned
examples, POKER's NaN for the examples outside the problem (evaluated again on the
return, when they may have joined it).  A column's length is the number of examples
when it was kept; a return reads its first values and evaluates the rest.  Admission
(:meth:`ColumnCache.put`): at most ``budget_bytes`` of columns of the current length,
the oldest entries out first.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

__all__ = ["ColumnCache"]


class ColumnCache:
    """Example id -> its kernel column (a float64 array), oldest entry first.

    Examples
    --------
    >>> import numpy as np
    >>> cache = ColumnCache()
    >>> for i in range(4):                 # at most 2 columns of 3 values in 48 bytes
    ...     cache.put(i, np.full(3, float(i)), budget_bytes=48)
    >>> cache.ids().tolist()
    [2, 3]
    >>> cache.take(2).tolist(), cache.take(2)
    ([2.0, 2.0, 2.0], None)
    """

    def __init__(self):
        self.entries = OrderedDict()

    def __len__(self):
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def __contains__(self, i):
        return i in self.entries

    def items(self):
        """(id, column) pairs, oldest first."""
        return self.entries.items()

    def put(self, i, col, budget_bytes):
        """Keep ``col`` (example i's column, its length n the number of examples now) for
        a later return of i to the margin set: at most ``budget_bytes`` of columns of
        length n, the oldest entries out first.  A previous entry of i goes in any case;
        nothing is kept when not even one column fits (a budget of 0: the cache off)."""
        self.entries.pop(i, None)
        max_cols = budget_bytes // (8 * max(col.shape[0], 1))
        if max_cols < 1:
            return
        self.entries[i] = col
        while len(self.entries) > max_cols:
            self.entries.popitem(last=False)

    def take(self, i):
        """i's cached column (None if there is none); it leaves the cache."""
        return self.entries.pop(i, None)

    def drop(self, i):
        """Forget i's cached column (if any)."""
        self.entries.pop(i, None)

    def cut(self, n):
        """Keep only what concerns the first n examples (the others are forgotten): the
        entries of ids >= n go, longer columns are cut to n values."""
        for i in list(self.entries):
            col = self.entries[i]
            if i >= n:
                del self.entries[i]
            elif col.shape[0] > n:
                self.entries[i] = col[:n].copy()

    def ids(self):
        """The cached ids, oldest first."""
        return np.array(list(self.entries), dtype=np.intp)

    def arrays(self):
        """The cache as arrays (persistence): ids oldest first, the columns' lengths, the
        columns end to end."""
        cols = list(self.entries.values())
        return (self.ids(), np.array([c.shape[0] for c in cols], dtype=np.intp),
                np.concatenate(cols) if cols else np.zeros(0))

    @classmethod
    def from_arrays(cls, ids, lengths, values):
        """The cache of :meth:`arrays` (the columns copied)."""
        out = cls()
        values = np.asarray(values, dtype=np.float64)
        start = 0
        for i, L in zip(np.asarray(ids).tolist(), np.asarray(lengths).tolist()):
            out.entries[int(i)] = np.array(values[start:start + L], dtype=np.float64)
            start += L
        return out
