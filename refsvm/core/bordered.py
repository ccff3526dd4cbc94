"""Bordered-inverse rank-one updates and the least-index event choice, in readable Python.

The reference versions of the section "bordered inverse" of :mod:`refsvm._core`
(``_core.pxd``), which compiles the same arithmetic in the same order (so the twins
agree bit for bit).  Used by the exact incremental SVM of Cauwenberghs & Poggio
(:mod:`refsvm.idsvm.incremental_svm`, Eqs. 5, 8, 9) and by path-following methods
that keep the inverse of a matrix bordered by one row/column per active variable.

The bordered matrix
-------------------
Let M be an n x n symmetric matrix whose inverse ``Rinv`` is kept (for IDSVM,
M = [[0, y_S'], [y_S, Q_SS]], ``n = |S| + 1``).  Adding a variable with coupling column
m (n entries) and diagonal entry q gives

    M+ = [[M, m], [m', q]],   beta = -Rinv m,   kappa = q + m' beta  (the Schur complement),
    M+^-1 = [[Rinv, 0], [0, 0]] + [beta; 1] [beta; 1]' / kappa          (Eq. 8 of C&P),

and removing variable p from M gives (Eq. 9 of C&P)

    Rinv_ij <- Rinv_ij - Rinv_ip Rinv_pj / Rinv_pp,   row and column p dropped.

Zero tests
----------
The pivot kappa is computed from an inverse accurate to a backward error
``|dM| <= eps |M|``, so its round-off scale is ``|q| + |beta|' |M| |beta|``
(:func:`pivot_round_off_scale`, O(n^2)).  When the trailing block of M is positive
semi-definite with diagonal d and the border row is a, the scale is bounded in O(n) by
``|q| + 2 |beta_0| sum_j |a_j beta_j| + (sum_j sqrt|d_j| |beta_j|)^2`` (:func:`pivot_bound`,
since ``|Q_jl| <= sqrt(d_j d_l)``).  A pivot below a small fraction of its scale is
*doubtful* (recompute it from a fresh inverse); below a smaller one, or below an
absolute floor, it is *zero* (the new variable is linearly dependent on the others).

Least-index event choice
------------------------
A path-following step is limited by the first of several events (a variable reaching
a bound).  The step taken is t_min, the smallest event step; the events whose step is
within a round-off window of t_min are *tied*; among them, the first *priority* event
(in the caller's fixed order) wins, otherwise the one with the least index (Bland's
rule for the simplex method: the order depends on nothing the path changes, so zero
steps at a degenerate point cannot cycle), otherwise a *fallback* event if it is tied.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from .kernels import sequential_sum

__all__ = [
    "centred_bias",
    "matvec", "dot", "bordered_matrix", "lu_inverse", "symmetrize", "grow_array", "bordered_start", "bordered_grow", "bordered_shrink", "bordered_beta",
    "bordered_pivot", "pivot_bound", "pivot_round_off_scale", "pivot_doubtful",
    "pivot_is_zero", "least_index_event", "bordered_drift", "bordered_max_abs",
]


def matvec(A, v):
    """A @ v with every sum taken left to right over the columns of A (the compiled
    order, so that the twins agree to the last bit)."""
    out = np.zeros(A.shape[0])
    for j in range(A.shape[1]):
        out += A[:, j] * v[j]
    return out


def dot(u, v):
    """u . v summed left to right (the compiled order; the kernels' ``sequential_sum``)."""
    return sequential_sum(np.asarray(u, dtype=np.float64) * np.asarray(v, dtype=np.float64))


def bordered_matrix(y, KS, S):
    """The bordered matrix M = [[0, y_S^T], [y_S, Q_SS]] of the margin set S, from the
    cached kernel columns ``KS`` (row = example id, column = position in S)."""
    S = np.array(S, dtype=np.intp)
    ns = S.shape[0]
    M = np.zeros((ns + 1, ns + 1))
    yS = y[S]
    M[0, 1:] = yS
    M[1:, 0] = yS
    M[1:, 1:] = np.outer(yS, yS) * KS[S, :ns]
    return M


#: getri's workspace, in rows of the matrix: room for LAPACK's blocked code (blocks of up
#: to 64 columns; with one row of workspace it runs column by column, two to three times
#: slower from a few hundred rows on).  The twins pass the same, so they block alike.
LU_WORK_ROWS = 64


def lu_inverse(M):
    """Inverse of a square matrix by LU (getrf + getri), the LAPACK calls the twins make;
    LinAlgError when it is singular."""
    lu, piv, info = lapack.dgetrf(M)
    if info != 0:
        raise np.linalg.LinAlgError(f"singular bordered matrix (getrf info={info})")
    inv, info = lapack.dgetri(lu, piv, lwork=max(1, LU_WORK_ROWS * M.shape[0]))
    if info != 0:
        raise np.linalg.LinAlgError(f"getri failed (info={info})")
    return inv


def symmetrize(R):
    """R with R_ab = R_ba = (R_ab + R_ba) * 0.5 wherever the two differ: an inverse from LU
    is symmetric only up to round-off; afterwards it is exactly symmetric, and
    :func:`bordered_grow` and :func:`bordered_shrink` keep it so (``_rank_one`` is
    symmetric).  Then ``matvec(R, v)`` and ``matvec(R.T, v)`` agree to the last bit,
    which lets a twin read R's contiguous rows as its columns (the twin's
    ``bordered_symmetrize``)."""
    R = np.array(R, dtype=np.float64)
    differ = R != R.T
    if differ.any():
        R[differ] = ((R + R.T) * 0.5)[differ]
    return R


def bordered_drift(R, y, KS, S):
    """How far an updated inverse R has drifted from M^-1 (M = ``bordered_matrix``): the
    largest backward error |(M R v - v)_a| / (|v_a| + sum_b |M_ab| |(R v)_b|) of the test
    vector v_a = (-1)^a; every sum left to right, as the compiled core's."""
    M = bordered_matrix(y, KS, S)
    n = M.shape[0]
    v = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    u = matvec(R, v)
    w = matvec(M, u)
    scale = matvec(np.abs(M), np.abs(u))
    r = np.abs(w - v) / (1.0 + scale)
    return float(np.nan) if np.isnan(r).any() else float(np.max(r))


def grow_array(a, n, fill=0.0):
    """``a`` extended to length ``n`` (capacity doubling, at least 16), content kept: the
    reference version of the core's ``grow``."""
    if a.shape[0] >= n:
        return a
    out = np.full(max(n, 2 * a.shape[0], 16), fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


def bordered_start(a, q):
    """Inverse of the 2 x 2 bordered matrix [[0, a], [a, q]]: [[-q/a^2, 1/a], [1/a, 0]]
    (for a = +-1, as in IDSVM's first margin vector: [[-q, a], [a, 0]] exactly)."""
    a, q = float(a), float(q)
    return np.array([[-q / (a * a), 1.0 / a], [1.0 / a, 0.0]])


def _rank_one(a, b, d):
    """The update a b' / d of the grow and the shrink, as sign(d) (a s)(b s)' with
    s = sqrt(1 / |d|) (the twin's arithmetic): no division an entry, and exactly
    symmetric when a = b, as (a_i b_j) / d was ((a_i / d) b_j is not; see the twin's
    ``bordered_grow``)."""
    s = np.sqrt(1.0 / abs(d))
    return np.outer((1.0 if d > 0 else -1.0) * (a * s), b * s)


def bordered_grow(Rinv, beta, kappa):
    """Inverse of [[M, m], [m', q]] from ``Rinv`` = M^-1 (n x n), ``beta`` = -Rinv m
    (n entries, see :func:`bordered_beta`) and the pivot ``kappa`` = q + m' beta
    (:func:`bordered_pivot`): [[Rinv, 0], [0, 0]] + [beta; 1][beta; 1]' / kappa."""
    n = Rinv.shape[0]
    v = np.append(beta, 1.0)
    R = np.zeros((n + 1, n + 1))
    R[:n, :n] = Rinv
    R += _rank_one(v, v, kappa)
    return R


def bordered_max_abs(Rinv):
    """max |Rinv_ab| (0 for an empty matrix): the scale of the shrink's singularity test
    (the twin's ``bordered_max_abs``, which passes NaN entries over)."""
    return float(np.max(np.abs(Rinv))) if Rinv.size else 0.0


def bordered_shrink(Rinv, p, eps):
    """Inverse of M with row and column p removed, from ``Rinv`` = M^-1:
    Rinv_ij - Rinv_ip Rinv_pj / Rinv_pp, row and column p dropped.  Returns None when
    |Rinv_pp| <= eps max|Rinv| (the reduced matrix is nearly singular: the caller
    inverts it afresh)."""
    if abs(Rinv[p, p]) <= eps * bordered_max_abs(Rinv):
        return None
    R = Rinv - _rank_one(Rinv[:, p], Rinv[p, :], Rinv[p, p])
    return np.delete(np.delete(R, p, axis=0), p, axis=1)


def bordered_beta(Rinv, m):
    """beta = -Rinv m, each entry summed left to right (Eq. 5 of C&P).  For an exactly
    symmetric Rinv (:func:`symmetrize`) it is also the twin's ``bordered_beta_sym``,
    which reads Rinv's rows as its columns (``rows_matvec``, the reference's
    ``matvec(A.T, v)``)."""
    return -matvec(Rinv, m)


def bordered_pivot(q, m, beta):
    """The Schur complement kappa = q + m' beta (= q - m' M^-1 m), summed left to right."""
    return q + dot(m, beta)


def pivot_bound(q, beta, border, root):
    """An O(n) upper bound of :func:`pivot_round_off_scale` for M = [[0, a'], [a, Q]]
    with Q positive semi-definite: |q| + (2 |beta_0| sum_j |a_j| |beta_j| +
    (sum_j r_j |beta_j|)^2), where ``border`` = a and ``root`` = r = sqrt|diag Q| (one
    entry per variable after the border; beta has one more entry, beta_0 first)."""
    ab = np.abs(beta[1:])
    sb = dot(np.abs(border), ab)
    sk = dot(np.asarray(root, dtype=float), ab)
    return abs(q) + (2.0 * abs(beta[0]) * sb + sk * sk)


def pivot_round_off_scale(q, beta, M):
    """|q| + |beta|' |M| |beta|: the round-off scale of kappa = q + m' beta computed with
    an inverse of M accurate to a backward error |dM| <= eps |M| (O(n^2))."""
    ab = np.abs(beta)
    return abs(q) + dot(ab, matvec(np.abs(M), ab))


def pivot_doubtful(kappa, scale, eps):
    """kappa <= eps * scale: a pivot to recompute from a fresh inverse."""
    return kappa <= eps * scale


def pivot_is_zero(kappa, scale, abs_scale, eps_rel, eps_abs):
    """kappa is numerically zero: not above max(eps_rel * scale, eps_abs * abs_scale)
    (the absolute floor covers exact zeros, for which no relative scale is meaningful)."""
    return not kappa > max(eps_rel * scale, eps_abs * abs_scale)


def least_index_event(events, tmin, fallback=None):
    """The event that limits a step of length ``tmin`` (the smallest step of all).

    ``events`` is an iterable, in a fixed order, of (t, kind, index, window, priority):
    the event is tied when t <= tmin + window.  The first tied event with ``priority``
    is chosen at once; otherwise the tied event with the least ``index`` (Bland's rule);
    otherwise ``fallback`` (t, kind, index, window) if it is tied.  Returns
    (kind, index), or (-1, -1) when nothing is tied."""
    best_kind, best_i = -1, -1
    for t, kind, i, w, priority in events:
        if t <= tmin + w:
            if priority:
                return kind, i
            if best_kind < 0 or i < best_i:
                best_kind, best_i = kind, i
    if best_kind < 0 and fallback is not None and fallback[0] <= tmin + fallback[3]:
        best_kind, best_i = fallback[1], fallback[2]
    return best_kind, best_i


def centred_bias(v, low, high):
    """The bias the KKT conditions leave free when the margin set is empty.

    ``v[i]`` is the bias that puts example i on its margin; the examples of ``low`` bound
    the bias from below and those of ``high`` from above, so b may lie anywhere in
    [max v[low], min v[high]].  Returns that interval's midpoint (LIBSVM's choice), its
    finite end when only one side is bounded (one class seen so far), or None when
    neither is.  IDSVM and POKER centre their bias with it."""
    lo = np.max(v[low]) if low.any() else -np.inf
    hi = np.min(v[high]) if high.any() else np.inf
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    if np.isfinite(lo):
        return lo
    if np.isfinite(hi):
        return hi
    return None
