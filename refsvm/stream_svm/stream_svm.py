"""StreamSVM (Rai, Daumé, Venkatasubramanian 2009): the readable reference.

The l2-SVM without bias, min ‖w‖² + C Σ ξ_n², y_n wᵀφ(x_n) ≥ 1 − ξ_n, is the minimum
enclosing ball (MEB) of the augmented points (Eq. 3, Eq. 7)

    φ̃(z_n) = [y_n φ(x_n); C^{-1/2} e_n].

StreamSVM keeps one ball (center c, radius R) and grows it in one pass with the
streaming MEB update of Zarrabi-Zadeh & Chan (Eqs. 4–6).  The center is always a
convex combination c = Σ_m λ_m φ̃(z_m) of the points seen, so

    c = [w; C^{-1/2} Σ_m λ_m e_m],   w = Σ_m α_m φ(x_m),  α_m = λ_m y_m,
    ξ² := ‖C^{-1/2} Σ_m λ_m e_m‖² = Σ_m λ_m² / C,

and the e_m never need to be stored: only ξ² is (the new point's e_n is orthogonal
to everything before it, which gives the "+ ξ² + 1/C" of line 5).

Two forms of Algorithm 1 (ALGORITHMS.md §5; the docs derive both):

- ``form="consistent"`` (default): β = ½(1 − R/d) with the R from *before* line 8
  (the center moves by δ = (d − R)/2 toward the point, a fraction δ/d = β of the way);
  then c ← (1 − β)c + β φ̃(z_n) gives w ← (1 − β)w + βy_n x_n and
  ξ² ← (1 − β)² ξ² + β²/C, and the first ball (one point, R = 0) has ξ² = 1/C.
- ``form="printed"``: lines 3 and 9 exactly as printed -- ξ² = 1 at the start and
  ξ² ← ξ²[1 − ½(1 − R/d)]² + [½(1 − R/d)]² with the R *after* line 8.  It equals the
  consistent form only in its line 3 when C = 1; its ball need not enclose the points.

The linear form (:class:`StreamSVMLinear`) keeps w as a :class:`ScaledVector`
(w = s·v): line 7 is a scale by (1 − β) in O(1) and an add of βy_n x_n in O(nnz).
The kernel form (:class:`StreamSVMKernel`, Sec. 4.2) keeps the signed coefficients
α (α_1 = y_1; α ← (1 − β)α; α_n = βy_n) and ‖w‖² = Σ α_n α_m k(x_n, x_m) incrementally:

    ‖w'‖² = (1 − β)² ‖w‖² + 2β(1 − β) y_n f(x_n) + β² k(x_n, x_n),

with f(x_n) = Σ_m α_m k(x_m, x_n), which line 5 needs anyway: O(#SV) per example.

Kernels with a non-constant k(x, x) (linear on unnormalised data, polynomial): every
distance is computed exactly with the example's own k(x, x) (one counted evaluation),
never with a constant κ, so the ball is always the streaming MEB of the augmented
points and its 3/2 bound holds for every kernel.  What needs a constant k(x, x) is
the equivalence of that MEB with the l2-SVM (Tsang et al.: the MEB dual has the extra
linear term Σ λ_n k̃(z_n, z_n), constant only when k(x, x) is); with a non-constant
k(x, x) the classifier is the MEB center, as in the paper's linear experiments.

Algorithm 2 (lookahead L): points with d ≥ R wait in a buffer S; at |S| = L the ball
becomes the minimum ball enclosing the current ball B(c, R) and the L points
(:func:`enclosing_ball`), and S is emptied; :meth:`flush` does the same for a partly
filled S (the end of the stream, line 12).  A buffer of one point is the closed form
of Algorithm 1, so L = 1 *is* Algorithm 1.  The new center is again a convex
combination c' = λ_0 c + Σ_j λ_j φ̃(z_j), so w' = λ_0 w + Σ_j λ_j y_j φ(x_j) and

    ξ'² = λ_0² ξ² + Σ_j λ_j² / C.

Multiple balls (Sec. 4.3): :class:`MultiBallStreamSVM` (see its docstring for the merge
policy).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import scipy.sparse as sp

from ..core.kernels import Kernel, SparseRow, dot, get_row, sqnorm, stack_rows
from ..core.scaled import ScaledVector
from ..core.stream import StreamLearner

__all__ = [
    "FORMS",
    "StreamSVMLinear",
    "StreamSVMKernel",
    "MultiBallStreamSVM",
    "merge_balls",
    "simplex_qp",
    "enclosing_ball",
]

FORMS = ("consistent", "printed")
#: w = s·v: fold s into v when it falls below this (s only shrinks: s ← (1 − β)s).
FOLD = 1e-9
#: Relative tolerance of the lookahead solver on the radius (see enclosing_ball).
TOL = 1e-12
#: The simplex QP frees a coordinate only for a gain above QP_TOL · max G_ii (see simplex_qp).
QP_TOL = 1e-14


# --------------------------------------------------------------------------- the solver
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
    compute the same numbers.

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
    while it < 20 * n + 20:
        it += 1
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


# --------------------------------------------------------------------------- helpers
def _copy_row(x):
    if isinstance(x, SparseRow):
        return SparseRow(np.array(x.indices, dtype=np.int32), np.array(x.data, dtype=np.float64))
    return np.array(x, dtype=np.float64)


def _pack(prefix, rows, n_features, sparse):
    """Rows as plain arrays for save_state (dense matrix, or the three CSR arrays)."""
    M = stack_rows(rows, n_features, sparse)
    if sparse:
        return {prefix + "data": M.data.astype(np.float64),
                prefix + "indices": M.indices.astype(np.int32),
                prefix + "indptr": M.indptr.astype(np.int64)}
    return {prefix + "X": np.ascontiguousarray(M, dtype=np.float64).reshape(-1, n_features)}


def _unpack(prefix, data, n_features, sparse):
    if sparse:
        indptr = np.asarray(data[prefix + "indptr"])
        M = sp.csr_matrix((data[prefix + "data"], data[prefix + "indices"], indptr),
                          shape=(indptr.shape[0] - 1, n_features))
    else:
        M = np.asarray(data[prefix + "X"], dtype=np.float64).reshape(-1, n_features)
    return [_copy_row(get_row(M, i)) for i in range(M.shape[0])]


# --------------------------------------------------------------------------- the state
class _StreamSVM(StreamLearner):
    """Algorithms 1 and 2, written once; the subclasses say how w is stored.

    Hooks: ``_start`` (line 3's w = y_1 φ(x_1)), ``_score`` (⟨w, φ(x)⟩),
    ``_self_value`` (k(x, x)), ``_wnorm2`` (‖w‖², with the bias: ‖w‖² + b²), ``_move``
    (line 7), ``_pair`` (k(x_i, x_j) for the lookahead Gram matrix), ``_combine`` (the
    new center λ_0 c + Σ λ_j φ̃(z_j) of Alg. 2 line 7).

    ``fit_intercept=True`` is the regularised bias: the kernel k + 1, i.e. the feature
    map [φ(x); 1], so the augmented point is [y φ(x); y; C^{-1/2} e_n] and the bias is
    the center's coordinate b = Σ_m α_m (the CVM form of Tsang et al.: min ‖w‖² + b² +
    C Σ ξ²).  It is kept as one number: f(x) = ⟨w, φ(x)⟩ + b, k(x, x) + 1,
    b ← (1 − β)b + βy (line 7), b' = λ_0 b + Σ_j λ_j y_j (Alg. 2); with the option off
    b stays 0 and every number is the paper's.
    """

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 fit_intercept=False):
        super().__init__(n_features, sparse)
        self.C = float(C)
        self.lookahead = int(lookahead)
        self.form = str(form)
        self.fit_intercept = bool(fit_intercept)
        self.one = 1.0 if self.fit_intercept else 0.0   # the constant coordinate
        self.b = 0.0            # bias: the center's constant coordinate Σ α_m
        self.n_solver_steps = 0  # active-set steps of the lookahead solver (Alg. 2)
        self.R = 0.0            # radius of the ball
        self.xi2 = 0.0          # ξ² = Σ λ_m² / C, the squared norm of the e-part of c
        self.M = 0              # updates: the core-set size (Alg. 2: an upper bound on #SV)
        self.n_seen = 0
        self.buffer = []        # Alg. 2's S: (x, y, f(x), k(x, x), d, stream id)

    # ---- read-outs
    @property
    def radius(self):
        return self.R

    @property
    def n_updates(self):
        return self.M

    @property
    def n_buffered(self):
        """|S|: points waiting in the lookahead buffer."""
        return len(self.buffer)

    # ---- Algorithm 1 (and the buffering of Algorithm 2)
    def step(self, x, y):
        y = float(y)
        n = self.n_seen
        self.n_seen += 1
        if self.M == 0:
            # Alg. 1 line 3: M = 1; R = 0; ξ² = 1/C (printed: ξ² = 1); w = y_1 x_1
            self._start(x, y, n)
            self.b = y * self.one
            self.R = 0.0
            self.xi2 = 1.0 if self.form == "printed" else 1.0 / self.C
            self.M = 1
            return 1
        # Alg. 1 line 5: d = sqrt(‖w − y_n x_n‖² + ξ² + 1/C), ‖w − y x‖² = ‖w‖² − 2y f + k(x, x)
        f = self._score(x) + self.b
        kxx = self._self_value(x) + self.one
        d = math.sqrt(max(self._wnorm2() - 2.0 * y * f + kxx, 0.0) + self.xi2 + 1.0 / self.C)
        # Alg. 1 line 6: if d ≥ R (a point inside the ball is discarded)
        if d < self.R:
            return 0
        if self.lookahead == 1:
            self._ball_step(x, y, f, kxx, d, n)
            return 1
        # Alg. 2 line 5: S = S ∪ {y_n x_n}  (the ball does not move while S fills)
        self.buffer.append((_copy_row(x), y, f, kxx, d, n))
        # Alg. 2 line 6: if |S| = L, lines 7-8
        if len(self.buffer) == self.lookahead:
            self.flush()
        return 1

    def _ball_step(self, x, y, f, kxx, d, n):
        """Alg. 1 lines 7-10 for a point at distance d ≥ R from the center."""
        R = self.R
        beta = 0.5 * (1.0 - R / d)       # ½(1 − R/d), R from before line 8
        self._move(beta, x, y, f, kxx, n)                    # line 7
        if self.fit_intercept:
            self.b = (1.0 - beta) * self.b + beta * y        # line 7, the bias coordinate
        self.R = R + 0.5 * (d - R)                           # line 8
        if self.form == "printed":
            beta9 = 0.5 * (1.0 - self.R / d)                 # line 9 as printed (R after line 8)
            self.xi2 = self.xi2 * (1.0 - beta9) ** 2 + beta9 ** 2
        else:
            self.xi2 = (1.0 - beta) ** 2 * self.xi2 + beta ** 2 / self.C   # line 9
        self.M += 1                                          # line 10

    # ---- Algorithm 2
    def flush(self):
        """Alg. 2 lines 7-8 (and 12-14 at the end of the stream): replace the ball by the
        minimum ball enclosing it and the buffered points; empty S.  Returns |S|."""
        S = self.buffer
        L = len(S)
        if L == 0:
            return 0
        self.buffer = []
        if L == 1:
            # one point: the exact answer is Algorithm 1's closed form (lines 7-10)
            x, y, f, kxx, d, n = S[0]
            self._rescore(x)
            self._ball_step(x, y, f, kxx, d, n)
            return 1
        # Gram matrix of [c, φ̃(z_1), ..., φ̃(z_L)] in the augmented space:
        #   ⟨c, c⟩ = ‖w‖² + ξ²,  ⟨c, φ̃_j⟩ = y_j f(x_j),  ⟨φ̃_i, φ̃_j⟩ = y_i y_j k(x_i, x_j) + δ_ij / C
        Q = np.empty((L, L))
        for i in range(L):
            Q[i, i] = S[i][3]
            for j in range(i + 1, L):
                Q[i, j] = Q[j, i] = S[i][1] * S[j][1] * (self._pair(S[i][0], S[j][0])
                                                         + self.one)
        G = np.empty((L + 1, L + 1))
        G[0, 0] = self._wnorm2() + self.xi2
        G[0, 1:] = G[1:, 0] = [s[1] * s[2] for s in S]
        G[1:, 1:] = Q + np.eye(L) / self.C
        # Alg. 2 line 7: enclose the ball (w, R, ξ²) and all points of S
        stats = [0]
        lam, r = enclosing_ball(G, self.R, stats=stats)
        self.n_solver_steps += stats[0]
        self._combine(lam, S, G[0, 1:], Q)          # w' = λ_0 w + Σ_j λ_j y_j φ(x_j)
        if self.fit_intercept:
            bb = lam[0] * self.b                     # b' = λ_0 b + Σ_j λ_j y_j
            for j in range(L):
                if lam[j + 1] > 0.0:
                    bb += lam[j + 1] * S[j][1]
            self.b = bb
        s2 = 0.0
        for lj in lam[1:]:
            s2 += lj * lj
        self.xi2 = lam[0] ** 2 * self.xi2 + s2 / self.C     # ξ'² = λ_0²ξ² + Σ_j λ_j²/C
        self.R = r
        self.M += L                                  # line 8: M = M + L; S = ∅
        return L

    def _rescore(self, x):
        """Before a buffered point's closed-form step: what ``_move`` needs from
        ``_score`` (nothing for the kernel form)."""

    @property
    def intercept(self):
        """b, the bias (0 without ``fit_intercept``)."""
        return self.b

    def flushed(self):
        """A copy with the buffer flushed: the model Algorithm 2 outputs if the stream
        ended now.  The state itself is unchanged."""
        model = copy.deepcopy(self)
        model.flush()
        return model

    def decision_function(self, X):
        """f(x) = ⟨w, φ(x)⟩ for every row; with a non-empty buffer, that of
        :meth:`flushed` (the buffered points are part of the stream seen so far)."""
        model = self.flushed() if self.buffer else self
        return model.center_function(X)

    # ---- persistence (both twins, one format)
    def _init_extra(self):
        return {}

    def init_params(self):
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C,
                    lookahead=self.lookahead, form=self.form, fit_intercept=self.fit_intercept,
                    **self._init_extra())

    def _save_common(self):
        S = self.buffer
        out = {
            "R": self.R, "xi2": self.xi2, "M": self.M, "n_seen": self.n_seen, "b": self.b,
            "n_solver_steps": self.n_solver_steps,
            "buf_y": np.array([s[1] for s in S], dtype=np.float64),
            "buf_f": np.array([s[2] for s in S], dtype=np.float64),
            "buf_kxx": np.array([s[3] for s in S], dtype=np.float64),
            "buf_d": np.array([s[4] for s in S], dtype=np.float64),
            "buf_ids": np.array([s[5] for s in S], dtype=np.int64),
        }
        out.update(_pack("buf_", [s[0] for s in S], self.n_features, self.sparse))
        return out

    def _load_common(self, data):
        self.R = float(data["R"])
        self.xi2 = float(data["xi2"])
        self.M = int(data["M"])
        self.n_seen = int(data["n_seen"])
        self.b = float(data.get("b", 0.0))
        self.n_solver_steps = int(data.get("n_solver_steps", 0))
        rows = _unpack("buf_", data, self.n_features, self.sparse)
        self.buffer = [(rows[k], float(data["buf_y"][k]), float(data["buf_f"][k]),
                        float(data["buf_kxx"][k]), float(data["buf_d"][k]),
                        int(data["buf_ids"][k])) for k in range(len(rows))]

    def _common_state(self):
        return {
            "R": self.R,
            "xi2": self.xi2,
            "wnorm2": self._wnorm2(),
            "b": self.b,
            "n_updates": self.M,
            "n_seen": self.n_seen,
            "buffer_ids": np.array([s[5] for s in self.buffer], dtype=np.int64),
            "n_kernel_evals": self.n_kernel_evals,
        }


class StreamSVMLinear(_StreamSVM):
    """StreamSVM, linear form: w = s·v (:class:`refsvm.core.scaled.ScaledVector`).

    Parameters
    ----------
    n_features : int
    sparse : bool
    C : float
        Slack parameter (the e-parts of the points are scaled by C^{-1/2}).
    lookahead : int
        L of Algorithm 2 (1: Algorithm 1).
    form : {"consistent", "printed"}
    fit_intercept : bool
        The regularised bias b (the constant coordinate 1 of [x; 1]; see ``_StreamSVM``).

    The core-set coefficients α_m = λ_m y_m are kept too (stream ids and raw values
    a_m with α_m = s·a_m, so the scale of line 7 costs O(1) for them as well): they
    serve ``support()`` and the invariant tests, never the distance computation.
    No kernel is evaluated: ``n_kernel_evals`` is 0.
    """

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 fit_intercept=False):
        super().__init__(n_features, sparse, C, lookahead, form, fit_intercept)
        self.w = ScaledVector(self.n_features, track_norm=True)
        self.ids = []           # stream ids of the core set
        self.a = []             # α_m = s·a_m
        self._vx = 0.0          # ⟨v, x⟩ of the example in hand

    n_kernel_evals = 0

    def _start(self, x, y, n):
        self.w.add(y, x, 0.0)                           # w = y_1 x_1
        self.ids.append(n)
        self.a.append(y / self.w.s)

    def _score(self, x):
        self._vx = dot(self.w.v, x)
        return self.w.s * self._vx

    def _self_value(self, x):
        return sqnorm(x)

    def _rescore(self, x):
        self._vx = dot(self.w.v, x)     # v has not moved since x was buffered

    def _wnorm2(self):
        return self.w.sqnorm() + self.b * self.b

    def _move(self, beta, x, y, f, kxx, n):
        # w = w + β(y_n x_n − w) = (1 − β)w + βy_n x_n: a scale (O(1)), an add (O(nnz))
        self.w.scale(1.0 - beta)
        self.w.add(beta * y, x, self._vx)
        self.ids.append(n)
        self.a.append(beta * y / self.w.s)
        self._fold()

    def _fold(self):
        if self.w.s < FOLD:
            s = self.w.s
            self.a = [a * s for a in self.a]
            self.w.fold(FOLD)

    def _pair(self, x, z):
        return dot(x, z)

    def _combine(self, lam, S, yf, Q):
        self.w.scale(lam[0])
        if lam[0] == 0.0:                               # scale(0) reset v and s
            self.a = [0.0 for _ in self.a]
        for j, (x, y, f, kxx, d, n) in enumerate(S):
            if lam[j + 1] > 0.0:
                self.w.add(lam[j + 1] * y, x, dot(self.w.v, x))
                self.ids.append(n)
                self.a.append(lam[j + 1] * y / self.w.s)
        self._fold()

    def center_function(self, X):
        """f(x) = ⟨w, x⟩ + b of the current center (the buffer ignored)."""
        if sp.issparse(X):
            return self.w.s * np.asarray(X @ self.w.v).ravel() + self.b
        return self.w.s * (np.asarray(X) @ self.w.v) + self.b

    @property
    def coef(self):
        """w as a new array."""
        return self.w.w

    def support(self):
        """(stream ids, α, None): the core set and its coefficients (rows not kept)."""
        return (np.array(self.ids, dtype=np.int64),
                self.w.s * np.array(self.a, dtype=np.float64), None)

    def get_state(self):
        out = self._common_state()
        out["w"] = self.w.w
        out["support"] = np.array(self.ids, dtype=np.int64)
        out["coef"] = self.w.s * np.array(self.a, dtype=np.float64)
        return out

    def save_state(self):
        out = self._save_common()
        out.update({"v": self.w.v.copy(), "s": self.w.s, "vnorm2": self.w.vnorm2,
                    "ids": np.array(self.ids, dtype=np.int64),
                    "a": np.array(self.a, dtype=np.float64)})
        return out

    def load_state(self, data):
        self._load_common(data)
        self.w.v = np.array(data["v"], dtype=np.float64)
        self.w.s = float(data["s"])
        self.w.vnorm2 = float(data["vnorm2"])
        self.ids = [int(i) for i in data["ids"]]
        self.a = [float(a) for a in data["a"]]


class StreamSVMKernel(_StreamSVM):
    """StreamSVM, kernel form (Sec. 4.2): signed coefficients α, ‖w‖² kept incrementally.

    Parameters
    ----------
    n_features, sparse, C, lookahead, form
        As :class:`StreamSVMLinear`.
    kernel, gamma, degree, coef0
        See :class:`refsvm.core.kernels.Kernel`.

    Kernel evaluations: one k(x_m, x) per stored row and one k(x, x) per example
    after the first (the first costs k(x_1, x_1) only); a lookahead flush of L ≥ 2
    points costs L(L − 1)/2 more.  Prediction is not counted.
    """

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 kernel="rbf", gamma=1.0, degree=3, coef0=0.0, fit_intercept=False):
        super().__init__(n_features, sparse, C, lookahead, form, fit_intercept)
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.rows = []          # x_m of the core set
        self.ids = []           # their stream ids
        self.alpha = []         # α_m = λ_m y_m
        self.wnorm2 = 0.0       # ‖w‖² (+ b²) = Σ α_n α_m (k(x_n, x_m) + 1), kept incrementally

    def _init_extra(self):
        k = self.kernel
        return dict(kernel=k.kind, gamma=k.gamma, degree=k.degree, coef0=k.coef0)

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def _start(self, x, y, n):
        self.rows.append(_copy_row(x))
        self.ids.append(n)
        self.alpha.append(y)                            # α_1 = y_1
        self.wnorm2 = self._self_value(x) + self.one    # ‖y_1 φ(x_1)‖² = k(x_1, x_1) (+ 1)

    def _score(self, x):
        f = 0.0
        for xm, am in zip(self.rows, self.alpha):       # f(x) = Σ_m α_m k(x_m, x)
            f += am * self.kernel(xm, x)
        return f

    def _self_value(self, x):
        return self.kernel(x, x)

    def _wnorm2(self):
        return self.wnorm2

    def _move(self, beta, x, y, f, kxx, n):
        # ‖(1 − β)w + βy φ(x)‖² = (1 − β)²‖w‖² + 2β(1 − β) y f(x) + β² k(x, x)
        self.wnorm2 = ((1.0 - beta) ** 2 * self.wnorm2 + 2.0 * beta * (1.0 - beta) * y * f
                       + beta ** 2 * kxx)
        self.alpha = [(1.0 - beta) * a for a in self.alpha]     # α_{1:n−1} ← (1 − β) α_{1:n−1}
        self.rows.append(_copy_row(x))
        self.ids.append(n)
        self.alpha.append(beta * y)                             # α_n = β y_n

    def _pair(self, x, z):
        return self.kernel(x, z)

    def _combine(self, lam, S, yf, Q):
        # ‖λ_0 w + Σ_j λ_j y_j φ(x_j)‖² = λ_0²‖w‖² + 2λ_0 Σ_j λ_j y_j f(x_j) + Σ_ij λ_i λ_j Q_ij
        lyf = lQl = 0.0
        for j in range(len(S)):
            lyf += lam[j + 1] * yf[j]
        for i in range(len(S)):
            qi = 0.0
            for j in range(len(S)):
                qi += Q[i, j] * lam[j + 1]
            lQl += lam[i + 1] * qi
        self.wnorm2 = lam[0] ** 2 * self.wnorm2 + 2.0 * lam[0] * lyf + lQl
        self.alpha = [lam[0] * a for a in self.alpha]
        for j, (x, y, f, kxx, d, n) in enumerate(S):
            if lam[j + 1] > 0.0:
                self.rows.append(x)
                self.ids.append(n)
                self.alpha.append(lam[j + 1] * y)

    def center_function(self, X):
        """f(x) = Σ_m α_m k(x_m, x) + b of the current center (the buffer ignored)."""
        out = np.zeros(X.shape[0])
        for r in range(X.shape[0]):
            x = get_row(X, r)
            f = 0.0
            for xm, am in zip(self.rows, self.alpha):
                f += am * self.kernel.value(xm, x)
            out[r] = f + self.b
        return out

    def support(self):
        """(stream ids, α, rows) of the core set."""
        return (np.array(self.ids, dtype=np.int64), np.array(self.alpha, dtype=np.float64),
                stack_rows(self.rows, self.n_features, self.sparse))

    def get_state(self):
        out = self._common_state()
        out["support"] = np.array(self.ids, dtype=np.int64)
        out["coef"] = np.array(self.alpha, dtype=np.float64)
        return out

    def save_state(self):
        out = self._save_common()
        out.update({"wnorm2": self.wnorm2, "ids": np.array(self.ids, dtype=np.int64),
                    "alpha": np.array(self.alpha, dtype=np.float64),
                    "n_evals": self.kernel.n_evals})
        out.update(_pack("sv_", self.rows, self.n_features, self.sparse))
        return out

    def load_state(self, data):
        self._load_common(data)
        self.wnorm2 = float(data["wnorm2"])
        self.ids = [int(i) for i in data["ids"]]
        self.alpha = [float(a) for a in data["alpha"]]
        self.kernel.n_evals = int(data["n_evals"])
        self.rows = _unpack("sv_", data, self.n_features, self.sparse)


# --------------------------------------------------------------------------- multiple balls
def merge_balls(D, Ra, Rb):
    """The smallest ball enclosing two balls at center distance D (Eqs. 4–6 generalised):
    ``(t, R)`` with the new center (1 − t)c_a + t c_b.  t = 0 when ball a contains ball b,
    t = 1 when b contains a; otherwise R = (D + R_a + R_b)/2 and t = (R − R_a)/D.  With
    R_b = 0 (b a point) this is Algorithm 1's step: t = ½(1 − R_a/D) = β."""
    if D + Rb <= Ra:
        return 0.0, Ra
    if D + Ra <= Rb:
        return 1.0, Rb
    R = 0.5 * (D + Ra + Rb)
    return (R - Ra) / D, R


class _Ball:
    """One ball: its center Σ λ_m φ̃(z_m) over its own points (rows ``members`` of the
    state, coefficients α_m = λ_m y_m), ‖w‖², ξ² = Σ λ_m²/C, radius R."""

    __slots__ = ("members", "alpha", "wnorm2", "xi2", "R")

    def __init__(self, members, alpha, wnorm2, xi2, R):
        self.members, self.alpha = members, alpha
        self.wnorm2, self.xi2, self.R = wnorm2, xi2, R


class MultiBallStreamSVM(StreamLearner):
    """StreamSVM with B balls (Sec. 4.3).

    Every point belongs to exactly one ball, so the e-parts of different balls are
    orthogonal and the distance of two centers is
    D² = ‖w_a‖² + ‖w_b‖² − 2⟨w_a, w_b⟩ + ξ_a² + ξ_b²; the inner products ⟨w_a, w_b⟩ are
    kept in a B × B matrix P, updated linearly on every merge (no kernel evaluation).

    Merge policy (the paper leaves it open): a point inside some ball (d < R) is
    discarded.  Otherwise, while fewer than B balls exist, the point becomes a ball of
    radius 0; then, among the B + 1 objects (the B balls and the point as a ball of
    radius 0), the **pair whose enclosing ball is smallest** is merged
    (:func:`merge_balls`; the first such pair in index order on ties, the point last), so
    B balls remain.  At the end (:meth:`flush`, and :meth:`flushed` for predictions) the
    balls are merged the same way, smallest enclosing pair first, until one remains.
    B = 1 is Algorithm 1.

    Parameters
    ----------
    n_features, sparse, C
        As :class:`StreamSVMLinear`.
    n_balls : int
        B.
    kernel, gamma, degree, coef0
        The kernel ("linear" works too: the balls then store their rows).
    fit_intercept : bool
        The regularised bias, literally as the kernel k + 1 (every evaluation, and the
        prediction Σ α_m (k(x_m, x) + 1)).
    """

    def __init__(self, n_features, sparse=False, C=1.0, n_balls=2, kernel="linear", gamma=1.0,
                 degree=3, coef0=0.0, fit_intercept=False):
        super().__init__(n_features, sparse)
        self.C = float(C)
        self.n_balls = int(n_balls)
        self.fit_intercept = bool(fit_intercept)
        self.one = 1.0 if self.fit_intercept else 0.0
        self.kernel = Kernel(kernel, gamma, degree, coef0)
        self.rows, self.ids = [], []         # every point kept by some ball
        self.balls = []
        self.P = np.zeros((0, 0))            # P[a, b] = ⟨w_a, w_b⟩
        self.M = 0
        self.n_seen = 0

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    @property
    def n_updates(self):
        return self.M

    @property
    def n_buffered(self):
        return max(0, len(self.balls) - 1)

    def _f(self, ball, x):
        f = 0.0
        for m, a in zip(ball.members, ball.alpha):
            f += a * (self.kernel(self.rows[m], x) + self.one)
        return f

    def step(self, x, y):
        y = float(y)
        n = self.n_seen
        self.n_seen += 1
        f = [self._f(b, x) for b in self.balls]
        kxx = self.kernel(x, x) + self.one
        for b, fb in zip(self.balls, f):
            d = math.sqrt(max(b.wnorm2 - 2.0 * y * fb + kxx, 0.0) + b.xi2 + 1.0 / self.C)
            if d < b.R:
                return 0                      # inside a ball: discarded
        # the point as a ball of radius 0: w = y φ(x), ξ² = 1/C
        self.rows.append(_copy_row(x))
        self.ids.append(n)
        self._add_ball(_Ball([len(self.rows) - 1], [y], kxx, 1.0 / self.C, 0.0),
                       np.array([y * fb for fb in f]))
        self.M += 1
        if len(self.balls) > self.n_balls:
            self._merge_closest()
        return 1

    def _add_ball(self, ball, cross):
        B = len(self.balls)
        P = np.zeros((B + 1, B + 1))
        P[:B, :B] = self.P
        P[B, :B] = P[:B, B] = cross
        P[B, B] = ball.wnorm2
        self.P = P
        self.balls.append(ball)

    def _distance(self, a, b):
        A, Bb = self.balls[a], self.balls[b]
        D2 = A.wnorm2 + Bb.wnorm2 - 2.0 * self.P[a, b] + A.xi2 + Bb.xi2
        return math.sqrt(max(D2, 0.0))

    def _merge_closest(self):
        best = None
        for a in range(len(self.balls)):
            for b in range(a + 1, len(self.balls)):
                D = self._distance(a, b)
                t, R = merge_balls(D, self.balls[a].R, self.balls[b].R)
                if best is None or R < best[0]:
                    best = (R, a, b, t)
        R, a, b, t = best
        A, Bb = self.balls[a], self.balls[b]
        merged = _Ball(A.members + Bb.members,
                       [(1.0 - t) * al for al in A.alpha] + [t * al for al in Bb.alpha],
                       (1.0 - t) ** 2 * A.wnorm2 + 2.0 * t * (1.0 - t) * self.P[a, b]
                       + t ** 2 * Bb.wnorm2,
                       (1.0 - t) ** 2 * A.xi2 + t ** 2 * Bb.xi2, R)
        cross = (1.0 - t) * self.P[a] + t * self.P[b]
        keep = [i for i in range(len(self.balls)) if i not in (a, b)]
        self.balls = [self.balls[i] for i in keep]
        self.P = self.P[np.ix_(keep, keep)]
        self._add_ball(merged, cross[keep])

    def flush(self):
        """Merge all balls into one (the end of the stream).  Returns the merges made."""
        k = 0
        while len(self.balls) > 1:
            self._merge_closest()
            k += 1
        return k

    def flushed(self):
        model = copy.deepcopy(self)
        model.flush()
        return model

    @property
    def radius(self):
        """Radius of the final ball (all balls merged, on a copy)."""
        if not self.balls:
            return 0.0
        return (self.flushed() if len(self.balls) > 1 else self).balls[0].R

    def center_function(self, X):
        """f(x) of the current single ball (call on a flushed copy); the rows in stream
        order, zero coefficients skipped, then + Σ α with the bias (the twin's order)."""
        out = np.zeros(X.shape[0])
        if not self.balls:
            return out
        coef = np.zeros(len(self.rows))
        for m, a in zip(self.balls[0].members, self.balls[0].alpha):
            coef[m] = a
        b = self.one * coef.sum()           # Σ α_m (k(x_m, x) + 1) = Σ α_m k(x_m, x) + Σ α_m
        for r in range(X.shape[0]):
            x = get_row(X, r)
            f = 0.0
            for m in range(len(self.rows)):
                if coef[m] != 0.0:
                    f += coef[m] * self.kernel.value(self.rows[m], x)
            out[r] = f + b
        return out

    def decision_function(self, X):
        model = self.flushed() if len(self.balls) > 1 else self
        return model.center_function(X)

    def support(self):
        """(stream ids, α, rows) of the final ball, in stream order."""
        model = self.flushed() if len(self.balls) > 1 else self
        if not model.balls:
            return np.zeros(0, np.int64), np.zeros(0), stack_rows([], self.n_features, self.sparse)
        b = model.balls[0]
        ids = np.array([self.ids[m] for m in b.members], dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        return (ids[order], np.array(b.alpha, dtype=np.float64)[order],
                stack_rows([self.rows[b.members[k]] for k in order], self.n_features,
                           self.sparse))

    @property
    def coef(self):
        """w of the final ball (linear kernel)."""
        ids, alpha, rows = self.support()
        return np.asarray(rows.T @ alpha).ravel() if alpha.size else np.zeros(self.n_features)

    @property
    def intercept(self):
        """b = Σ α_m of the final ball (0 without ``fit_intercept``)."""
        return float(np.sum(self.support()[1])) * self.one

    def get_state(self):
        saved = self.save_state()
        return {
            "R": saved["ball_R"], "xi2": saved["ball_xi2"], "wnorm2": saved["ball_wnorm2"],
            "P": saved["P"], "ids": saved["ids"], "ball_of": saved["ball_of"],
            "alpha": saved["alpha"],
            "n_updates": self.M,
            "n_seen": self.n_seen,
            "n_kernel_evals": self.n_kernel_evals,
        }

    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C,
                    n_balls=self.n_balls, kernel=k.kind, gamma=k.gamma, degree=k.degree,
                    coef0=k.coef0, fit_intercept=self.fit_intercept)

    def save_state(self):
        """Rows in stream order with their ball (its position in the list) and α; the
        balls' ‖w‖², ξ², R and the matrix P, in the order of the list."""
        ball_of = np.zeros(len(self.rows), dtype=np.int64)
        alpha = np.zeros(len(self.rows))
        for k, b in enumerate(self.balls):
            for m, a in zip(b.members, b.alpha):
                ball_of[m], alpha[m] = k, a
        out = {"ids": np.array(self.ids, dtype=np.int64), "ball_of": ball_of, "alpha": alpha,
               "ball_wnorm2": np.array([b.wnorm2 for b in self.balls]),
               "ball_xi2": np.array([b.xi2 for b in self.balls]),
               "ball_R": np.array([b.R for b in self.balls]), "P": self.P.copy(),
               "M": self.M, "n_seen": self.n_seen, "n_evals": self.kernel.n_evals}
        out.update(_pack("sv_", self.rows, self.n_features, self.sparse))
        return out

    def load_state(self, data):
        self.rows = _unpack("sv_", data, self.n_features, self.sparse)
        self.ids = [int(i) for i in data["ids"]]
        ball_of = np.asarray(data["ball_of"])
        self.balls = [
            _Ball([int(m) for m in np.flatnonzero(ball_of == k)],
                  [float(a) for a in np.asarray(data["alpha"])[ball_of == k]],
                  float(data["ball_wnorm2"][k]), float(data["ball_xi2"][k]),
                  float(data["ball_R"][k]))
            for k in range(len(data["ball_R"]))]
        self.P = np.array(data["P"], dtype=np.float64).reshape(len(self.balls), len(self.balls))
        self.M = int(data["M"])
        self.n_seen = int(data["n_seen"])
        self.kernel.n_evals = int(data["n_evals"])
