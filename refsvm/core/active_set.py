"""The exact active-set engine of the SVM with bias, in readable Python: the pieces
Cauwenberghs & Poggio's adiabatic increments (:mod:`refsvm.idsvm`) and Fine &
Scheinberg's POKER paths (:mod:`refsvm.poker`) share.

Both methods keep the exact optimum of the dual with bias, max 1'alpha - alpha'Q alpha / 2
with 0 <= alpha <= C and y'alpha = 0, by following a piecewise-affine path: on every
piece the examples split by the KKT conditions into three sets (the *partition*),
g = y f - 1 moves affinely, and the piece ends at the first event (an alpha reaching a
bound, a g reaching 0), chosen among ties by the least-index rule
(:func:`refsvm.core.bordered.least_index_event`).  The bordered inverse of
[[0, y_S'], [y_S, Q_SS]] and its rank-one updates are :mod:`refsvm.core.bordered`.
The two families differ in the sign of the bias (C&P: f = w'phi + b; POKER:
f = w'phi - b) and in the parameter each path follows; each keeps its own sign
convention and its own names for the sets.

This module holds

- the partition codes, one home for both families and their twins;
- :func:`limiting_event`: the event that ends a piece, among the priority events of the
  caller (the end of the parameter, the candidate's own bounds) and the events of the
  examples, by the least-index rule (the compiled twins: ``EventChoice``);
- the error-free arithmetic of the checks and polishes in doubled precision (Knuth's
  two-sum, Dekker's split and product, Ogita-Rump-Oishi's Dot2, Neumaier's compensated
  sum, a correctly rounded dot product).  The compiled core (``_core.pxd``:
  ``two_sum_add``, ``dot2_add``, ``neumaier_add``) performs the same IEEE operations in
  the same order.

The column cache both families keep is :mod:`refsvm.core.column_cache`; their exactness
check and polish, built on these sums, are :mod:`refsvm.core.exactness`.
"""

from __future__ import annotations

import math

import numpy as np

from .bordered import least_index_event

__all__ = ["AT_ZERO", "IN_S", "AT_C", "GONE", "limiting_event", "two_sum", "split", "two_product",
           "dot2_add", "neumaier_add", "exact_sum"]

# ---------------------------------------------------------------------- the partition
#: alpha = 0 and g >= 0: C&P's R (the rest), POKER's I_o
AT_ZERO = 0
#: g = 0 and 0 <= alpha <= C: the margin set, C&P's S, POKER's I_s (the active set)
IN_S = 1
#: alpha = C and g <= 0: C&P's E (the errors), POKER's I_c
AT_C = 2
#: an example no longer in the problem (unlearned); every code < 0 is out of the problem
GONE = -1


# ---------------------------------------------------------------------- the event choice
def limiting_event(priority, others=(), ts=(), ws=(), ids=(), kinds=(), fallback=None):
    """The event that ends a piece of the path, and the step to it.

    Events are (t, kind, id, window): the step to the event, its kind (the caller's
    code), the example, the round-off window of the step.  ``priority``: the events that
    win whenever they are tied, in the caller's order (the end of the parameter, the
    candidate's own bounds); ``others``: the examples' events as a list, and ``ts, ws,
    ids, kinds``: more of them as arrays (ids ascending or not); ``fallback``: an event
    chosen only when no other is tied.  t_min is the smallest step of all (taken over
    ``priority``, ``others``, the arrays and the fallback, in that order); an event is
    tied when t <= t_min + window; the first tied priority event wins, else the tied
    event of the least example id (Bland's rule: zero steps at a degenerate point
    cannot cycle), else the fallback if it is tied.  Returns (t_min, kind, id);
    (inf, -1, -1) when no step is finite, kind -1 when nothing is tied."""
    ts = np.asarray(ts, dtype=np.float64)
    steps = [e[0] for e in priority] + [e[0] for e in others]
    if ts.size:
        steps.append(float(ts.min()))
    if fallback is not None:
        steps.append(fallback[0])
    tmin = min(steps, default=np.inf)
    if not np.isfinite(tmin):
        return np.inf, -1, -1
    events = [(t, kind, i, w, True) for t, kind, i, w in priority]
    events += [(t, kind, i, w, False) for t, kind, i, w in others]
    if ts.size:
        # only the tied events take part in the choice (the same choice, in O(#tied))
        ws = np.asarray(ws, dtype=np.float64)
        ids, kinds = np.asarray(ids), np.asarray(kinds)
        events += [(float(ts[j]), int(kinds[j]), int(ids[j]), float(ws[j]), False)
                   for j in np.flatnonzero(ts <= tmin + ws)]
    kind, who = least_index_event(events, tmin, fallback=fallback)
    return tmin, kind, who


# ---------------------------------------------------------------------- doubled precision
def two_sum(a, b):
    """Knuth's error-free sum, elementwise: a + b = s + e exactly (returns (s, e))."""
    t = a + b
    v = t - a
    return t, (a - (t - v)) + (b - v)


def split(a):
    """Dekker's split, elementwise: a = hi + lo exactly, each half with at most 26 bits."""
    c = 134217729.0 * a                                   # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def two_product(a, b):
    """Dekker's error-free product, elementwise: a * b = p + e exactly (finite inputs well
    inside the float range; e is 0 where the split overflowed).  Returns (p, e)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = split(a)
        bh, bl = split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.isfinite(e), e, 0.0)


def dot2_add(p, s, a, b):
    """One term a * b of Dot2 (Ogita, Rump & Oishi 2005, Algorithm 5.3), elementwise: the
    sum so far is p + s, as if summed in twice the working precision.  The compiled
    core's ``dot2_add`` applies the same operations per element."""
    h, r = two_product(a, b)
    p, q = two_sum(p, h)
    return p, s + (q + r)


def neumaier_add(s, c, x):
    """One term of Neumaier's compensated sum: (s + x, the compensation c plus the
    rounding error of s + x); the sum is s + c at the end.  Terms of order C that
    cancel (an example's margin at C = 1e12 with its copies at the bound, both labels)
    then sum to their exact value instead of an ulp of C."""
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


def exact_sum(a, b, sign, extra):
    """sign * sum_j a_j b_j + sum(extra), correctly rounded (the products split exactly
    by :func:`two_product`, the sum by ``math.fsum``); ``sign`` is +-1."""
    p, e = two_product(a, b)
    return math.fsum([sign * v for v in list(p) + list(e)] + list(extra))
