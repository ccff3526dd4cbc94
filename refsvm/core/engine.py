"""The membership changes of the margin set, written once for both exact families: an
example joins S (Eq. 8 of Cauwenberghs & Poggio) or a member leaves it (Eq. 9).

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

from .active_set import IN_S

__all__ = ["join", "leave"]


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
