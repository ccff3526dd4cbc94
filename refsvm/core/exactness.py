"""The exactness check and the polish of the exact active-set engine, in readable Python:
what Cauwenberghs & Poggio's increments (:mod:`refsvm.idsvm`) and POKER's paths
(:mod:`refsvm.poker`) share when they judge or mend the end of an operation.

At C = 1e12 an alpha of order C is stored an ulp of C (1.2e-4) off, and g = y f - 1 is a
sum of products alpha_j k_ij of order C that cancel to O(1): a plain sum reports its own
round-off.  So both families compute g afresh in doubled precision from the stored
alpha, y, bias and kernel values, judge the partition on it, and mend the margin set by
a Newton step against the bordered matrix.  This module holds

- g afresh: :func:`g_dot2` (Dot2 of Ogita, Rump & Oishi: as if summed in twice the
  working precision, vectorised over the rows; :func:`dot2_sum` is its sum over the
  terms) and :func:`g_exact` (correctly rounded, row by row), for either sign of the bias
  (``bias_sign``: +1 for C&P's f = w'phi + b, -1 for POKER's f = w'phi - b) and, in
  :func:`g_exact`, for POKER's fixed-bias path (g = y w'phi + p + u d);
- the balance y'alpha (:func:`balance`: Sum2 or correctly rounded);
- the KKT conditions of a partition: margin set (``IN_S``) g = 0 and 0 <= alpha <= C,
  the rest (``AT_ZERO``) g >= 0 and alpha = 0, the errors (``AT_C``) g <= 0 and
  alpha = C (:func:`partition_violation` on g alone, :func:`kkt_violation` with the box;
  :func:`partition_of`: the partition the alphas imply);
- the Newton step of the polish (:func:`refine`): one step of iterative refinement of
  (b, alpha_S) on the residuals [y'alpha; g_S] of the bordered system, through a solve
  of M = [[0, y_S'], [y_S, Q_SS]] the caller gives;
- the polish over the engine's margin set (:class:`~refsvm.core.margin_set.MarginSet`):
  g afresh by Dot2 over the error vectors then over S in its order (:func:`margin_g`),
  the residual [h; g_S] and its size (:func:`polish_residual`), the Newton step through
  the margin set's R kept only when the residual drops (:func:`polish_newton`), and the
  snap of ulp residues to a bound (:func:`snap_margin`).

Each family keeps its sign convention, its tolerances, its error types and which of its
sums are plain and which doubled.  The compiled core (``_core.pxd``, "the polish of the
exact active-set engine") performs the polish's operations in the same order, over its
``MarginSet`` and plain arrays: ``polish_add_column``, ``margin_g``, ``polish_balance``,
``polish_residual``, ``polish_step``, ``polish_refine`` (with ``polish_undo``),
``polish_newton`` and ``snap_margin``, the bits of these functions
(``tests/core/test_polish.py``).
"""

from __future__ import annotations

import math

import numpy as np

from .active_set import AT_C, AT_ZERO, IN_S, dot2_add, exact_sum, two_product, two_sum
from .bordered import dot

__all__ = ["dot2_sum", "g_dot2", "g_exact", "balance", "partition_of", "partition_violation",
           "kkt_violation", "EPS_MACH", "KKT_G", "KKT_H", "kkt_levels", "kkt_verdict",
           "kkt_sentence", "end_balance", "end_wrong_side", "refine", "margin_g",
           "polish_residual", "polish_newton", "snap_margin"]


# ---------------------------------------------------------------------- g afresh
def dot2_sum(coef, columns, y=None, start=None):
    """sum_j c_j columns_j over the rows, by Dot2 (each term error-free, the sum as if in
    twice the working precision): returns (p, s), the sum being p + s.

    ``columns``: a 2-D block (its columns, K[r, j] = k(x_r, x_j)) or an iterable of 1-D
    columns (a generator that fetches them as they are summed); ``coef``: one coefficient
    per column, the terms taken in that order; ``y``: a factor per row of every term
    (y_r c_j k_rj; exact when y = +-1); ``start``: the (p, s) of the terms summed before
    (without it, zeros of the size of ``y``)."""
    if isinstance(columns, np.ndarray) and columns.ndim == 2:
        columns = columns.T
    if start is None:
        p = np.zeros(np.shape(y))
        s = np.zeros(np.shape(y))
    else:
        p, s = start
    for c, col in zip(coef, columns):
        p, s = dot2_add(p, s, c if y is None else y * c, col)
    return p, s


def g_dot2(coef, columns, y, b, bias_sign=1.0, start=None):
    """g_r = y_r (sum_j c_j k_rj + bias_sign b) - 1 for every row, in doubled precision
    (Dot2): the terms of :func:`dot2_sum` (``start``: those summed before), then y_r b
    (times ``bias_sign``: +1 for C&P's f = w'phi + b, -1 for POKER's f = w'phi - b) and
    -1 added error-free, one rounding at the end.  ``coef``: c_j = alpha_j y_j."""
    p, s = dot2_sum(coef, columns, y, start)
    p, q = two_sum(p, y * (bias_sign * b))
    s = s + q
    p, q = two_sum(p, np.full(np.shape(p), -1.0))
    s = s + q
    return p + s


def g_exact(coef, K, y, b=0.0, bias_sign=1.0, fixed=None):
    """g_r = y_r sum_j c_j K[r, j] + bias_sign y_r b - 1 for every row r, correctly
    rounded (error-free products, ``math.fsum``: :func:`refsvm.core.active_set.exact_sum`);
    ``bias_sign`` as in :func:`g_dot2`.  ``fixed`` = (p, u, d): POKER's fixed-bias path
    instead, g_r = y_r sum_j c_j K[r, j] + p_r + u d_r (u d_r split error-free; no bias,
    no -1).  ``K``: one row per example judged, one column per coefficient."""
    K = np.asarray(K, dtype=np.float64)
    out = np.empty(K.shape[0])
    if fixed is not None:
        pr, u, d = fixed
        hi, lo = two_product(np.full(K.shape[0], u), np.asarray(d, dtype=np.float64))
        for r in range(K.shape[0]):
            out[r] = exact_sum(coef, K[r], y[r], [pr[r], hi[r], lo[r]])
        return out
    for r in range(K.shape[0]):
        out[r] = exact_sum(coef, K[r], y[r], [-1.0, bias_sign * y[r] * b])
    return out


# ---------------------------------------------------------------------- the balance
def balance(y, alpha, exact=False):
    """y'alpha over the examples given (ids ascending): by Sum2 (Knuth's two-sum, left to
    right, the errors summed apart, as the compiled twin's ``two_sum_add``), or correctly
    rounded (``math.fsum``) when ``exact``."""
    terms = (np.asarray(y) * np.asarray(alpha)).tolist()
    if exact:
        return math.fsum(terms)
    p = s = 0.0
    for t in terms:
        p, q = two_sum(p, t)
        s += q
    return p + s


# ---------------------------------------------------------------------- the KKT conditions
def partition_of(alpha, C):
    """The partition the alphas imply: ``AT_ZERO`` where alpha <= 0, ``AT_C`` where
    alpha >= C, ``IN_S`` between (and where alpha is NaN)."""
    return np.where(alpha <= 0.0, AT_ZERO, np.where(alpha >= C, AT_C, IN_S))


def partition_violation(status, g, margin=True):
    """How far each example is on the wrong side of its set's condition on g: -g in the
    rest (g >= 0), g in the errors (g <= 0), |g| in the margin set (g = 0), -inf outside
    the three sets (and in the margin set when not ``margin``: its kept g is 0 by
    definition).  Negative where the condition holds strictly; np.maximum(v, 0) is the
    violation, argmax the worst example (the least id on ties)."""
    inner = np.where(status == IN_S, np.abs(g), -np.inf) if margin else -np.inf
    return np.where(status == AT_ZERO, -g, np.where(status == AT_C, g, inner))


def kkt_violation(status, g, alpha, C, other=None):
    """The KKT violation of every example of a partition, in the units of g and alpha:
    in the rest max(-g, 0) + |alpha|, in the errors max(g, 0) + |alpha - C|, in the margin
    set |g|, elsewhere ``other`` (0 if None); then at least the box violation
    max(-alpha, 0) + max(alpha - C, 0)."""
    v = np.zeros(np.shape(g)) if other is None else other
    v = np.where(status == AT_ZERO, np.maximum(-g, 0.0) + np.abs(alpha), v)
    v = np.where(status == AT_C, np.maximum(g, 0.0) + np.abs(alpha - C), v)
    v = np.where(status == IN_S, np.abs(g), v)
    return np.maximum(v, np.maximum(-alpha, 0.0) + np.maximum(alpha - C, 0.0))


# ---------------------------------------------------------------------- the check's levels
#: the machine epsilon of float64 (the unit of the round-off floors of the levels)
EPS_MACH = float(np.finfo(np.float64).eps)
#: the bits of a verdict (:func:`kkt_verdict`): a violation of g beyond its level, |h| beyond
KKT_G = 1
KKT_H = 2


def kkt_levels(tol, kmax, amax, C=0.0, above=math.inf, ulps=(0, 0), b=0.0, mass=0.0,
               h_tol=None, count=1):
    """The levels (g, h) of an exactness check: ``tol`` (1 + k_max alpha_max) for a
    violation of g (in margin units, the scale of g's terms), ``h_tol`` alpha_max ``count``
    for |h| = |y'alpha| (``h_tol``: ``tol`` if None; ``count``: 1, or the examples judged
    when the level grows with them).  When C k_max is above ``above`` (the family's
    threshold of extreme C; inf: never) each is capped by a multiple of its round-off
    floor, ``ulps`` = (on g, on h): eps_mach (1 + |b| + k_max ``mass``) for g and
    eps_mach ``mass`` for h (``mass``: sum alpha).  The compiled ``kkt_levels`` computes
    the same products in the same order."""
    g = tol * (1.0 + kmax * amax)
    h = (tol if h_tol is None else h_tol) * amax * count
    if C * kmax > above:
        g = min(g, ulps[0] * EPS_MACH * (1.0 + abs(b) + kmax * mass))
        h = min(h, ulps[1] * EPS_MACH * mass)
    return g, h


def kkt_verdict(worst, h, levels, nan_fails=False):
    """The verdict on the worst violation of g (``worst``) and |h| against ``levels``
    (:func:`kkt_levels`): 0 when both are within, else ``KKT_G`` | ``KKT_H`` for those
    beyond.  ``nan_fails``: a NaN is beyond its level (else it passes, as a comparison
    ``worst > level`` lets it)."""
    if nan_fails:
        return (KKT_G if not worst <= levels[0] else 0) | (KKT_H if not h <= levels[1] else 0)
    return (KKT_G if worst > levels[0] else 0) | (KKT_H if h > levels[1] else 0)


def kkt_sentence(verdict, worst, h, levels, example, where=None, repairs=None,
                 show_levels=False, h_name="y'alpha", first=False):
    """What a verdict (:func:`kkt_verdict`) says is off, or None when nothing is: "a KKT
    condition is violated by ``worst`` (example ``example``[, ``where``][; allowed
    level])[ after ``repairs`` repairs]" and "``h_name`` = h (allowed level)" (or "... is
    not zero" without ``show_levels``), joined by "; " (only the first when ``first``)."""
    parts = []
    if verdict & KKT_G:
        inner = f"example {example}" + (f", {where}" if where is not None else "")
        if show_levels:
            inner += f"; allowed {levels[0]:.3g}"
        parts.append(f"a KKT condition is violated by {worst:.3g} ({inner})"
                     + (f" after {repairs} repairs" if repairs is not None else ""))
    if verdict & KKT_H and not (first and parts):
        parts.append(f"{h_name} = {h:.3g} " + (f"(allowed {levels[1]:.3g})" if show_levels
                                                 else "is not zero"))
    return "; ".join(parts) or None


def end_balance(status, y, alpha, C):
    """y'alpha at the end of a path over the examples in the problem (``status`` >= 0):
    C times the sum of y over those at C (an integer: exact), plus y_i alpha_i of the
    others with alpha_i != 0 summed left to right (the compiled ``end_balance``'s order)."""
    act = np.asarray(status) >= 0
    a, yy = np.asarray(alpha)[act], np.asarray(y)[act]
    at_c = a == C
    rest = ~at_c & (a != 0.0)
    return C * float(np.sum(yy[at_c])) + dot(yy[rest], a[rest])


def end_wrong_side(status, g, level):
    """How many examples at zero (g < -``level``) or at C (g > ``level``) are on the wrong
    side of their margin by more than ``level`` (the kept g; NaN counts as on the right
    side)."""
    v = partition_violation(np.asarray(status), np.asarray(g), margin=False)
    return int(np.count_nonzero(v > level))


# ---------------------------------------------------------------------- the polish
def refine(solve, r, alpha_S, b, C, bias_sign=1.0, window=None, max_step=np.inf):
    """One step of iterative refinement of (b, alpha_S) on the residuals ``r`` = [y'alpha;
    g_S] of the bordered system (Eq. 3 of C&P): [db; dalpha_S] = ``solve(r)`` = -M^-1 r
    (``refsvm.core.bordered.bordered_beta`` with the kept inverse R of M).

    Returns (alpha_S + dalpha_S, b + bias_sign db) (``bias_sign`` as in :func:`g_dot2`:
    POKER's bias is -b of C&P's), or None when the step is refused: an alpha_s leaves
    [0, C] (by more than ``window``, and within it is clipped into the box; None: any
    step out of the box is refused and nothing is clipped), or moves by more than
    ``max_step``."""
    sol = solve(r)
    new = alpha_S + sol[1:]
    if window is None:
        if not np.all((new >= 0.0) & (new <= C)):
            return None
    else:
        if not np.all((new >= -window) & (new <= C + window)):
            return None
        new = np.minimum(np.maximum(new, 0.0), C)
    if np.any(np.abs(sol[1:]) > max_step):
        return None
    return new, b + bias_sign * sol[0]


# ---------------------------------------------------------------------- the polish over S
def margin_g(margin, ids, alpha, y, b, bias_sign=1.0, start=None):
    """g afresh of the examples ``ids``: the Dot2 sum ``start`` (the terms of the error
    vectors, summed before by :func:`dot2_sum`) continued over the margin set's S in its
    order (c_j = alpha_j y_j, the columns KS[ids]), then y b and -1 (:func:`g_dot2`)."""
    S = np.array(margin.S, dtype=np.intp)
    ids = np.asarray(ids, dtype=np.intp)
    return g_dot2(alpha[S] * y[S], margin.KS[ids, :S.size], y[ids], b, bias_sign, start)


def polish_residual(margin, act, alpha, y, b, kscale, pe, se, bias_sign=1.0):
    """The residual r = [h; g_S] of the bordered system at (b, alpha) and its size
    max(kscale |h|, max|g_S|) (h in units of alpha, g in units of k alpha): h = y'alpha
    over the learned examples ``act`` (ids ascending) by Sum2 (:func:`balance`), g_S by
    :func:`margin_g` from the error vectors' Dot2 sums (``pe``, ``se``: one per entry of
    ``act``)."""
    S = np.array(margin.S, dtype=np.intp)
    rows = np.searchsorted(act, S)
    r = np.empty(S.size + 1)
    r[0] = balance(y[act], alpha[act])
    r[1:] = margin_g(margin, S, alpha, y, b, bias_sign, start=(pe[rows], se[rows]))
    return r, max(kscale * abs(r[0]), float(np.max(np.abs(r[1:]))))


def polish_newton(margin, act, alpha, y, b, C, kscale, pe, se, bias_sign=1.0, window=None,
                  max_step=np.inf):
    """One step of iterative refinement of (b, alpha_S) on the residual of
    :func:`polish_residual`, through the margin set's R (:func:`refine`, its ``window``
    and ``max_step``): kept only if the residual summed again is smaller (with a nearly
    singular S the updated R can be far from M^-1).  alpha_S is changed in place;
    returns (b, whether the step was kept)."""
    S = np.array(margin.S, dtype=np.intp)
    r, size = polish_residual(margin, act, alpha, y, b, kscale, pe, se, bias_sign)
    step = refine(margin.beta, r, alpha[S], b, C, bias_sign, window, max_step)
    if not size > 0.0 or step is None:
        return b, False
    old, b0 = alpha[S].copy(), b
    alpha[S], b = step
    if polish_residual(margin, act, alpha, y, b, kscale, pe, se, bias_sign)[1] >= size:
        alpha[S] = old                   # no better: R too far from M^-1
        return b0, False
    return b, True


def snap_margin(margin, alpha, C, w):
    """alpha_s within w of 0 or C goes to that bound (S in its order; in place)."""
    for j in margin.S:
        if alpha[j] <= w:
            alpha[j] = 0.0
        elif alpha[j] >= C - w:
            alpha[j] = C
