"""The membership changes of the margin set, written once for both exact families: an
example joins S (Eq. 8 of Cauwenberghs & Poggio) or a member leaves it (Eq. 9); and the
making of an example's kernel column (``column``), which a join needs.

Cauwenberghs & Poggio's increments (:mod:`refsvm.idsvm`, ``_grow_inverse`` and
``_shrink_inverse``) and Fine & Scheinberg's POKER paths (:mod:`refsvm.poker`,
``_add_to_S`` and ``_remove_from_S``) call these two operations on their
:class:`~refsvm.core.margin_set.MarginSet`; what differs between the families is passed
in: the partition code the example gets (the core's ``IN_S``, ``AT_C``, ``AT_ZERO``, or a
family's own, C&P's ``OUT``, POKER's ``FORCED``), the bound alpha takes, the family's
cache hook (``cache_put``: C&P's copy, POKER's copy with NaN outside the problem) and
the singularity level of the downdate.  What each family does around them stays with it:
forming R afresh when the downdate is refused (C&P: from its bordered matrix, by LU;
POKER: from KS, or an error when singular), its drift and conditioning refreshes, POKER's
g_i = 0 and its marks of dependent examples.

The compiled core performs the same operations in the same order (``_core.pxd``:
``engine_join``, ``engine_leave``; there the cache hook is the core's ``ColumnCache``
with the family's ``room`` and ``clean`` arguments, as its twin keeps it).

Not here: the choice between a join and an exchange (the pivot test) and the exchange
along a null direction.  The families' tests and moves differ in their numbers (see
``docs/CONVENTIONS.md``, "The exact active-set engine").
"""

from __future__ import annotations

import numpy as np

from .active_set import IN_S

__all__ = ["join", "leave", "column"]


def join(margin, i, status, y, q, col, beta=None, kappa=None, code=IN_S):
    """Example i joins S (Eq. 8): S = {i} (``start``, R = [[0, y_i], [y_i, q]]^-1) when S
    is empty, else R grown by (beta, kappa) (``grow``); ``col`` its kernel column;
    ``status[i] = code``.

    Examples
    --------
    >>> import numpy as np
    >>> from refsvm.core.margin_set import MarginSet
    >>> ms, status = MarginSet(), np.zeros(2, dtype=np.int8)
    >>> ms.reserve_rows(2)
    >>> join(ms, 1, status, np.array([1.0, -1.0]), 2.0, np.array([0.5, 2.0]))
    >>> ms.S, status.tolist()
    ([1], [0, 1])
    """
    if not margin.S:
        margin.start(i, y[i], q, col)
    else:
        margin.grow(i, beta, kappa, col)
    status[i] = code


def leave(margin, pos, status, code, eps, alpha=None, value=0.0, cache_put=None):
    """The member at position ``pos`` of S leaves it (Eq. 9): ``alpha[s] = value`` (when
    ``alpha`` is given), its kernel column handed to ``cache_put(s, column)`` (when
    given), R shrunk by the margin set (``remove`` at ``eps``), ``status[s] = code``.
    Returns (s, refused): refused when the downdate was refused (S and KS have shrunk, R
    has not: the caller forms it afresh).

    Examples
    --------
    >>> import numpy as np
    >>> from refsvm.core.margin_set import MarginSet
    >>> ms, status = MarginSet(), np.ones(2, dtype=np.int8)
    >>> ms.reserve_rows(2)
    >>> ms.start(1, -1.0, 2.0, np.array([0.5, 2.0]))
    >>> alpha = np.array([0.0, 0.5])
    >>> leave(ms, 0, status, 2, 1e-15, alpha=alpha, value=1.0)
    (1, False)
    >>> ms.S, alpha.tolist(), status.tolist()
    ([], [0.0, 1.0], [1, 2])
    """
    s = margin.S[pos]
    if alpha is not None:
        alpha[s] = value
    if cache_put is not None:
        cache_put(s, margin.KS[:, pos])
    refused = margin.remove(pos, eps)
    status[s] = code
    return s, refused


def column(n, c, status, kcc, kernel, rows, cached=None, given=(), margin=None,
           zero_off=True):
    """k(x_l, x_c) for every id l < n, each value from the first source that has it:
    ``cached`` (the cached part of c's column, its first L ids; NaN marks an unknown
    entry), ``given`` ((id, value) pairs the caller already has), the margin set's
    columns (``margin.known(c)``, for the members of S), and else, for an id in the
    problem (``status >= 0``), one counted kernel evaluation ``kernel(rows[l], rows[c])``
    in ascending id order; k(x_c, x_c) is ``kcc`` and never evaluated.  Ids off the problem
    (``status < 0``) are never evaluated: with ``zero_off`` every one of them is 0 (C&P's
    convention, over any cached or given value), else it keeps a cached or given value
    and is NaN where it has none (POKER's).

    The compiled core's ``engine_column`` makes the same column with the same count.

    Examples
    --------
    >>> import numpy as np
    >>> from refsvm.core.kernels import Kernel
    >>> k = Kernel("linear")
    >>> rows = [np.array([1.0]), np.array([2.0]), np.array([3.0])]
    >>> status = np.array([0, -1, 0], dtype=np.int8)
    >>> column(3, 2, status, 9.0, k, rows).tolist(), k.n_evals
    ([3.0, 0.0, 9.0], 1)
    >>> column(3, 2, status, 9.0, k, rows, cached=np.array([np.nan, 6.0]),
    ...        zero_off=False).tolist(), k.n_evals
    ([3.0, 6.0, 9.0], 2)
    """
    col = np.full(n, np.nan)
    L = 0 if cached is None else min(cached.shape[0], n)
    if L:
        col[:L] = cached[:L]
    for l, v in given:
        if np.isnan(col[l]):
            col[l] = v
    if margin is not None:
        for l, v in margin.known(c).items():
            if np.isnan(col[l]):
                col[l] = v
    col[c] = kcc
    for l in range(n):
        if status[l] >= 0 and np.isnan(col[l]):
            col[l] = kernel(rows[l], rows[c])
    if zero_off:
        col[np.asarray(status[:n]) < 0] = 0.0
    col[c] = kcc
    return col
