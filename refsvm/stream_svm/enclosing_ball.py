"""The lookahead step of StreamSVM (Alg. 2 line 7): the minimum ball enclosing a ball
and L points, solved exactly up to rounding.

Algorithm 2 of Rai, Daumé, Venkatasubramanian says "update w, R, ξ² to enclose the ball
(w, R, ξ²) and all points in S" and leaves the method open ("a quadratic program of size
L", Sec. 4.3).  :func:`enclosing_ball` is that step: a second-order cone problem solved
as a short sequence of simplex QPs (:func:`simplex_qp`, a primal active-set method) in a
safeguarded Newton iteration on the radius.  The reference state
(:mod:`refsvm.stream_svm.stream_svm`) builds the Gram matrix of the old center and the
buffered points and calls :func:`enclosing_ball` once per full buffer.  Docs:
``docs/rai_daume_venkatasubramanian.rst``, "Algorithm 2 (lookahead)".

Every loop is written in the twin's order of operations (``_stream_svm.pyx``:
``_simplex_qp``, ``_enclose``), so both twins compute the same numbers.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.stream import POLL_WORK, answer_held_signals  # a solve's signal polling

__all__ = ["TOL", "QP_TOL", "simplex_qp", "ball_distances", "enclosing_ball"]

#: Relative tolerance of the lookahead solver on the radius (see enclosing_ball).
TOL = 1e-12
#: The simplex QP frees a coordinate only for a gain above QP_TOL · max G_ii (see simplex_qp).
QP_TOL = 1e-14


def _cholesky_solve(A, x):
    """A = LLᵀ in place (lists of rows; lower triangle), then x ← A⁻¹x.  False if A is
    not positive definite to rounding.  Plain loops, in the twin's order of operations."""
    n = len(A)
    for j in range(n):
        s = A[j][j]
        for k in range(j):
            s -= A[j][k] * A[j][k]
        if s <= 0.0:
            return False
        s = math.sqrt(s)
        A[j][j] = s
        for i in range(j + 1, n):
            t = A[i][j]
            for k in range(j):
                t -= A[i][k] * A[j][k]
            A[i][j] = t / s
    for i in range(n):                          # L y = x
        s = x[i]
        for k in range(i):
            s -= A[i][k] * x[k]
        x[i] = s / A[i][i]
    for i in range(n - 1, -1, -1):              # Lᵀ x = y
        s = x[i]
        for k in range(i + 1, n):
            s -= A[k][i] * x[k]
        x[i] = s / A[i][i]
    return True


def _matvec(G, mu):
    """Gμ, each entry summed in index order."""
    out = []
    for row in G:
        v = 0.0
        for g, m in zip(row, mu):
            v += g * m
        out.append(v)
    return out


def _objective(G, b, mu):
    """μᵀGμ − bᵀμ and Gμ (each sum in index order)."""
    Gmu = _matvec(G, mu)
    phi = 0.0
    for i in range(len(mu)):
        phi += mu[i] * (Gmu[i] - b[i])
    return phi, Gmu


def _line_gain(slope, curv, tmax):
    """The decrease of t·slope + t²·curv over 0 ≤ t ≤ tmax (slope < 0)."""
    if curv > 0.0 and -slope < 2.0 * curv * tmax:
        return slope * slope / (4.0 * curv)
    return -slope * tmax - curv * tmax * tmax


def _entering(G, b, mu, Gmu, free, threshold):
    """The fixed coordinate whose best line search lowers φ the most, if by more than
    ``threshold``: (index, gain), or (-1, threshold).  For a fixed i, with the gradient
    g = 2Gμ − b, two directions are tried: the Frank-Wolfe step toward vertex i
    (e_i − μ: slope g_i − μᵀg, curvature ‖p_i − c‖², t ≤ 1) and every swap from a free
    k (e_i − e_k: slope g_i − g_k, curvature ‖p_i − p_k‖², t ≤ μ_k) -- the swap sees
    the gain of splitting mass between near-duplicates, whose curvature is tiny."""
    n = len(mu)
    q = gm = 0.0
    for i in range(n):
        q += mu[i] * Gmu[i]
        gm += mu[i] * (2.0 * Gmu[i] - b[i])
    worst, gain = -1, threshold
    for i in range(n):
        if free[i]:
            continue
        gi = 2.0 * Gmu[i] - b[i]
        if gi - gm < 0.0:
            g = _line_gain(gi - gm, G[i][i] - 2.0 * Gmu[i] + q, 1.0)
            if g > gain:
                worst, gain = i, g
        for k in range(n):
            if free[k]:
                slope = gi - (2.0 * Gmu[k] - b[k])
                if slope < 0.0:
                    g = _line_gain(slope, G[i][i] + G[k][k] - 2.0 * G[i][k], mu[k])
                    if g > gain:
                        worst, gain = i, g
    return worst, gain




def _look_for_signals(polled, n):
    """An iteration of :func:`simplex_qp` on n points: n^3 more work since the last look;
    after POLL_WORK of it, deliver the signals the stream driver holds back
    (:func:`refsvm.core.stream.answer_held_signals`: Ctrl-C's KeyboardInterrupt ends the
    solve).  Returns the work since the last look."""
    polled += float(n) * float(n) * float(n)
    if polled < POLL_WORK:
        return polled
    answer_held_signals()
    return 0.0


def simplex_qp(G, b, mu, tol=QP_TOL, stats=None):
    """min_μ φ(μ) = μᵀGμ − bᵀμ over the simplex {μ ≥ 0, Σμ = 1}, G positive definite.

    A primal active-set method started from the feasible ``mu`` (warm start): solve
    the equality-constrained problem on the free set F for the step p (Σp = 0), in the
    null space of the constraint: with j the free coordinate of largest μ,
    p_j = −Σ_{a≠j} p_a and the others solve H q = ½(r_a − r_j), r = b − 2Gμ the
    residual, H_ac = G_ac − G_aj − G_jc + G_jj = ⟨p_a − p_j, p_c − p_j⟩ by a Cholesky
    factor.  H is the Gram matrix of *differences*: positive definite whenever the free
    points are affinely independent, even where G_FF is singular to rounding (a point and
    its opposite-label twin at huge C: the MEB of p and −p is well posed, G_FF is not),
    and solving for the step from the residual keeps Σμ = 1 and the accuracy.  Step
    until coordinates hit 0 (they leave F); after a full step free the fixed coordinate
    whose line search lowers φ the most.  Exact up to rounding (G is small: L + 1
    rows).  Written with plain loops in the twin's order of operations, so both twins
    compute the same numbers.  A long solve delivers a signal the stream driver holds
    back (:func:`_look_for_signals`: Ctrl-C ends it; the estimator puts back its copy of
    the model from before the call).

    Stopping, and why it cannot cycle on near-singular G (huge C, near-duplicate
    points): a fixed coordinate i is freed only if a line search into it -- the
    Frank-Wolfe step toward vertex i or a swap of mass from a free coordinate
    (:func:`_entering`) -- would lower φ by more than ``tol`` times the largest diagonal
    entry of G (gains below that are rounding: the radius moves by less than ``tol``
    relative); φ must have fallen strictly since the last coordinate
    was freed, else the last improving point is optimal to rounding.  Every exit
    returns the latest point whose φ is not above the lowest φ seen by more than the
    rounding of φ (so a step spoiled by an ill-conditioned G_FF is dropped); the
    number of iterations is capped at 20n + 20 whatever G.  ``stats`` (a list) gets
    the iterations added to its first entry.  Returns the new μ.
    """
    G = [[float(g) for g in row] for row in np.asarray(G, dtype=np.float64)]
    b = [float(v) for v in b]
    mu = [float(v) for v in mu]
    n = len(b)
    free = [m > 0.0 for m in mu]
    scale = slack = 0.0
    for i in range(n):
        if G[i][i] > scale:
            scale = G[i][i]
        if abs(b[i]) > slack:
            slack = abs(b[i])
    slack = 1e-14 * (scale if scale > slack else slack)   # rounding of φ
    phi, Gmu = _objective(G, b, mu)
    best, best_phi = list(mu), phi
    last = math.inf                     # φ when a coordinate was last freed
    it = 0
    polled = 0.0                        # work since the last look for a signal
    while it < 20 * n + 20:
        it += 1
        polled = _look_for_signals(polled, n)   # Ctrl-C inside a long solve (not in the paper)
        F = [i for i in range(n) if free[i]]
        # the step p on F with Σp = 0: p_j = −Σ_{a≠j} p_a for the free j of largest μ,
        # the others from the reduced system H q = ½(r_a − r_j), r = b − 2Gμ (the
        # residual), H_ac = ⟨p_a − p_j, p_c − p_j⟩ (translation-invariant)
        top = 0
        for k in range(1, len(F)):
            if mu[F[k]] > mu[F[top]]:
                top = k
        j = F[top]
        others = [F[k] for k in range(len(F)) if k != top]
        H = [[G[a][c] - G[a][j] - G[j][c] + G[j][j] for c in others] for a in others]
        q = [0.5 * ((b[a] - 2.0 * Gmu[a]) - (b[j] - 2.0 * Gmu[j])) for a in others]
        if not _cholesky_solve(H, q):
            break                       # H singular to rounding: keep the best point
        p = []
        qs = 0.0
        for k in range(len(F)):
            if k == top:
                p.append(0.0)
            else:
                p.append(q[k if k < top else k - 1])
                qs += p[k]
        p[top] = -qs
        t, block = 1.0, -1
        for k in range(len(F)):
            if p[k] < 0.0 and -mu[F[k]] / p[k] < t:
                t, block = -mu[F[k]] / p[k], k
        for k in range(len(F)):
            val = mu[F[k]] + t * p[k]
            mu[F[k]] = val if val > 0.0 else 0.0
        if block >= 0:
            mu[F[block]] = 0.0
        for k in range(len(F)):         # coordinates at 0 leave F
            if mu[F[k]] == 0.0:
                free[F[k]] = False
        phi, Gmu = _objective(G, b, mu)
        if phi <= best_phi + slack:     # the latest point unless clearly worse
            best, best_phi = list(mu), phi
        if block >= 0:
            continue
        # a full step: μ is optimal on F; the fixed coordinates' best line searches
        worst, gain = _entering(G, b, mu, Gmu, free, tol * scale)
        if worst < 0 or not phi < last:
            break
        last = phi
        free[worst] = True
    if stats is not None:
        stats[0] += it
    return np.array(best)


def ball_distances(G, mu, R):
    """Distances from the center c = Σ μ_i c_i to the farthest point of each object:
    ‖c − c_0‖ + R for the ball, ‖c − p_j‖ for the points (from the Gram matrix)."""
    G = np.asarray(G, dtype=np.float64)
    mu = [float(m) for m in mu]
    Gmu = _matvec(G.tolist(), mu)
    q = 0.0
    for m, g in zip(mu, Gmu):
        q += m * g
    d = np.empty(len(mu))
    for i in range(len(mu)):
        d2 = q - 2.0 * Gmu[i] + G[i, i]
        d[i] = math.sqrt(d2) if d2 > 0.0 else 0.0
    d[0] += R
    return d


def enclosing_ball(G, R, tol=TOL, max_iter=100, stats=None):
    """The minimum ball enclosing the ball B(c_0, R) and the points p_1..p_n.

    ``G`` is the Gram matrix of [c_0, p_1, ..., p_n] (positive definite here: the
    augmented points have mutually orthogonal e-parts).  The optimal center is a
    convex combination c = Σ_i μ_i c_i (KKT of min r s.t. ‖c − c_0‖ + R ≤ r,
    ‖c − p_j‖ ≤ r), returned as μ with the radius r.

    Method (a second-order cone problem solved through QPs): a radius r is feasible
    iff the MEB of the *weighted* points -- c_0 with power weight w_0(r) = 2rR − R²,
    the p_j with weight 0 -- has radius h(r) ≤ r, because ‖c − c_0‖² + 2rR − R² ≤ r²
    ⇔ ‖c − c_0‖ ≤ r − R.  h(r)² is the value of the dual QP
    max_μ Σ_i μ_i (G_ii + w_i) − μᵀGμ over the simplex (:func:`simplex_qp`), and
    ψ(r) = h(r)² − r² decreases (ψ' = 2Rμ_0 − 2r < 0), so r* is its root: safeguarded
    Newton inside the bracket [max_j (d_j + R)/2, max_j d_j] (the Alg. 1 radius for the
    farthest point; the ball around c_0 through the farthest point).  Stops when the
    bracket is below ``tol`` relative, or at a feasible r with |ψ| ≤ tol·r².  The μ
    returned is that of the last feasible r, and the radius returned is the exact
    enclosing radius of its center (:func:`ball_distances`), so the ball always
    encloses the ball and the points; it exceeds r* by at most ``tol`` relative (up to
    rounding).  With R = 0 (the ball is a point) it is one QP.  The work is bounded
    whatever G (at most ``max_iter`` QPs of at most 20n + 20 steps each, n = L + 1):
    ``stats`` (a list) gets the QP steps added to its first entry.
    """
    G = np.asarray(G, dtype=np.float64)
    n1 = G.shape[0]
    diag = np.diag(G).copy()
    d = np.sqrt(np.maximum(G[0, 0] - 2.0 * G[0, 1:] + diag[1:], 0.0))
    mu = np.zeros(n1)
    mu[0] = 1.0
    if n1 == 1 or d.max() <= R:
        return mu, float(R)
    if R == 0.0:
        mu = simplex_qp(G, diag, mu, stats=stats)
        return mu, float(ball_distances(G, mu, R).max())
    lo = float(np.max(0.5 * (d + R)))
    hi = float(d.max())
    mu_hi = mu.copy()
    r = lo
    Gl = G.tolist()
    for _ in range(max_iter):
        b = diag.copy()
        b[0] += 2.0 * r * R - R * R          # the ball as a weighted point
        mu = simplex_qp(G, b, mu, stats=stats)
        Gmu = _matvec(Gl, mu.tolist())
        bm = mGm = 0.0
        for i in range(n1):
            bm += b[i] * mu[i]
            mGm += mu[i] * Gmu[i]
        psi = (bm - mGm) - r * r             # h(r)² − r²
        if psi <= 0.0:
            hi, mu_hi = r, mu.copy()
            if -psi <= tol * r * r:
                break
        else:
            lo = r
        if hi - lo <= tol * hi:
            break
        dpsi = 2.0 * R * mu[0] - 2.0 * r
        r_new = r - psi / dpsi if dpsi < 0.0 else lo
        if not (lo < r_new < hi):
            r_new = 0.5 * (lo + hi)
        r = r_new
    return mu_hi, float(ball_distances(G, mu_hi, R).max())
