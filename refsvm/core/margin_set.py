"""The margin set of the exact active-set engine, in readable Python: S, its kernel
columns and the bordered inverse R (the compiled core's ``MarginSet`` in ``_core.pxd`` is
the same object).

Cauwenberghs & Poggio's increments (:mod:`refsvm.idsvm`, S) and Fine & Scheinberg's
POKER paths (:mod:`refsvm.poker`, I_s) keep the same bookkeeping: the members of the
margin set in joining order, their kernel columns ``KS`` (``KS[i, j] = k(x_i, x_S[j])``,
one row per example) and R, the inverse of the bordered matrix
M = [[0, y_S'], [y_S, Q_SS]], grown by rank one when an example joins (Eq. 8 of C&P) and
shrunk when a member leaves (Eq. 9), or formed afresh by LU.  The arithmetic is
:mod:`refsvm.core.bordered`'s; this class only keeps S, KS and R together.  Each family
drives it with its own sign convention, status codes and events.
"""

from __future__ import annotations

import numpy as np

from .bordered import (bordered_beta, bordered_grow, bordered_matrix, bordered_shrink,
                       bordered_start, lu_inverse)

__all__ = ["MarginSet", "delegated"]


class MarginSet:
    """S (example ids in joining order), KS (rows = examples, one column per member, more
    columns kept as room) and R, the inverse of [[0, y_S'], [y_S, Q_SS]].

    Parameters
    ----------
    empty : int
        The size of the zero matrix R is while S is empty (C&P keeps 1 x 1, POKER 0 x 0).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([1.0, -1.0])
    >>> K = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> ms = MarginSet()
    >>> ms.reserve_rows(2)
    >>> ms.start(0, y[0], K[0, 0], K[:, 0])
    >>> m = ms.m_of(1, y)
    >>> beta = ms.beta(m)
    >>> ms.grow(1, beta, K[1, 1] + float(m @ beta), K[:, 1])
    >>> bool(np.allclose(ms.R @ ms.bordered(y), np.eye(3)))
    True
    >>> ms.remove(0, 1e-15), ms.S
    (False, [1])
    """

    def __init__(self, empty=1):
        self.empty = int(empty)
        self.S = []
        self.KS = np.zeros((0, 0))
        self.R = np.zeros((self.empty, self.empty))

    def __len__(self):
        return len(self.S)

    # ------------------------------------------------------------------ rows of KS
    def reserve_rows(self, cap):
        """Room for ``cap`` examples (the family's capacity): KS grows to cap rows, its
        values kept, the new rows 0."""
        if self.KS.shape[0] < cap:
            KS = np.zeros((cap, self.KS.shape[1]))
            KS[: self.KS.shape[0]] = self.KS
            self.KS = KS

    def zero_rows(self, start, stop):
        """The examples start..stop-1 have no kernel values yet: 0 in every column."""
        self.KS[start:stop] = 0.0

    # ------------------------------------------------------------------ Eqs. 8-9
    def _append(self, i, col):
        """i becomes the last member; its column ``col`` (one value per example so far)."""
        k = len(self.S)
        if self.KS.shape[1] <= k:
            KS = np.zeros((self.KS.shape[0], max(2 * k, 8)))
            KS[:, :k] = self.KS[:, :k]
            self.KS = KS
        self.KS[:, k] = 0.0
        self.KS[: col.shape[0], k] = col
        self.S.append(i)

    def start(self, i, a, q, col):
        """S = {i}: R = [[0, a], [a, q]]^-1 (``bordered_start``; a = y_i, q = Q_ii)."""
        self.R = bordered_start(a, q)
        self._append(i, col)

    def grow(self, i, beta, kappa, col):
        """i joins S: R <- [[R, 0], [0, 0]] + [beta; 1][beta; 1]' / kappa (Eq. 8), with
        beta = -R m (:meth:`beta`) and the pivot kappa = Q_ii + m' beta."""
        self.R = bordered_grow(self.R, beta, kappa)
        self._append(i, col)

    def remove(self, pos, eps):
        """The member at ``pos`` leaves S: R_ab <- R_ab - R_ap R_pb / R_pp (Eq. 9), row and
        column p = pos + 1 dropped.  Returns True when the downdate was refused
        (|R_pp| <= eps max|R|): S and KS have shrunk, R has not; the caller forms it
        afresh (:meth:`inverse`)."""
        k = len(self.S)
        R = (bordered_shrink(self.R, pos + 1, eps) if k > 1
             else np.zeros((self.empty, self.empty)))
        self.KS[:, pos: k - 1] = self.KS[:, pos + 1: k]
        del self.S[pos]
        if R is None:
            return True
        self.R = R
        return False

    # ------------------------------------------------------------------ M, R afresh, Eq. 5
    def bordered(self, y):
        """The bordered matrix [[0, y_S'], [y_S, Q_SS]] from KS (labels ``y``)."""
        return bordered_matrix(y, self.KS, self.S)

    def inverse(self, y):
        """M^-1 afresh by LU (``lu_inverse``; LinAlgError when M is singular); not stored."""
        return lu_inverse(self.bordered(y))

    def m_of(self, i, y):
        """m = [y_i; Q_Si], Q_Si = y_S y_i KS[i, :] (example i's column of M)."""
        S = np.array(self.S, dtype=np.intp)
        m = np.empty(len(S) + 1)
        m[0] = y[i]
        m[1:] = y[S] * y[i] * self.KS[i, : len(S)]
        return m

    def beta(self, m):
        """beta = -R m (Eq. 5)."""
        return bordered_beta(self.R, m)

    def known(self, i):
        """k(x_i, x_s) of every member s, read from KS (id -> value)."""
        return {s: self.KS[i, j] for j, s in enumerate(self.S)}


def delegated(name):
    """A property of a family's state that reads and sets the attribute ``name`` of its
    margin set (``self.margin``): the names the family's other code reads."""
    def get(self):
        return getattr(self.margin, name)

    def set(self, value):
        setattr(self.margin, name, value)

    return property(get, set, doc=f"``margin.{name}`` (:class:`MarginSet`).")
