"""The exact SVM of a batch from LIBSVM's solution: ``IncrementalSVM.fit``'s default start.

LIBSVM (scikit-learn's :class:`~sklearn.svm.SVC`) reaches the batch SVM to a tolerance
(1e-3 on the KKT conditions by default) in far fewer kernel evaluations than any exact
path from an empty model: SMO touches two multipliers at a time and shrinks the problem.
Its solution is close to the optimum but not on it, and a model whose next
``partial_fit`` and ``unlearn`` are exact needs the optimum itself: the partition, the
margin vectors' kernel columns and the inverse of the bordered matrix.

Fine & Scheinberg's fixed-bias method (Sec. 3, Eq. 3) is the bridge.  It follows
g(u) = Q alpha + p + u d from any solution that is optimal for the linear term p at
u = 0 to the true linear term -e - b y at u = 1.  Any feasible alpha is optimal for
*some* p: take LIBSVM's alpha and b, read the partition off alpha (0, strictly inside
(0, C), C), and choose p so that every g at u = 0 sits on its side of 0 -- 0 on the
margin set, min(g, 0) at C, max(g, 0) at 0.  Then d = g - g(0) is LIBSVM's violation of
each KKT condition, and the path to u = 1 passes one breakpoint per example LIBSVM put in
the wrong set: a handful where an exact path from an empty model passes thousands.  The
adjustable-bias method then brings y'alpha to 0 (LIBSVM's is 0 only to round-off).

Two things LIBSVM's solution may hold that the path cannot start from:

- identical rows with one label, several strictly inside (0, C): they share g, so any
  split of their total alpha is optimal, but their columns make the bordered matrix
  singular.  The total is moved onto as few of them as possible (:func:`_consolidate`),
  which changes neither f nor y'alpha.
- margin vectors whose kernel columns are (numerically) combinations of others': a
  margin set of hundreds on two features under an RBF kernel (Gauss, pure label noise)
  has a bordered matrix with condition number 1e19.  Pivoted Cholesky on Q_SS keeps a
  regular part (:func:`_independent`); the others go to their nearer bound and the
  kept part makes up their move (:func:`_regular_part`).  Any feasible alpha with a
  regular margin set is a start: moving some alpha only changes p and d, so the path
  passes more breakpoints and ends at the same optimum.  Those examples sit at a bound
  with g near 0, as do LIBSVM's own violators at u = 0; so that no two are tied there
  (ties of dependent examples make the path cycle in zero-length exchanges), in such a
  start every example at a bound starts at least ``TIE_GAP`` (1 to 2 times, by id) on
  its side of 0.  Where the inverse of the kept part's bordered matrix is still not
  accurate, or a path stops progressing or runs far beyond a polish
  (:class:`refsvm._exact_paths._StallWatch`, SelfInit's watch, with ``PATH_LIMIT``),
  the start is given up and ``fit`` learns the problem example by example.

The paths only carry the start to the optimum, whose end is checked: they form R afresh
less often than POKER's own paths (``START_DEPARTURES``; on ill-conditioned margin sets
the LU inverses were most of the start's time), and an R that has drifted by the end is
formed afresh, with every g recomputed (``END_DRIFT``), before the end is refined.
The end is handed over in the core's layout (:mod:`refsvm.core.optimum`) and checked like
every other start: IncrementalSVM's start (``load_optimum`` in
``refsvm/idsvm/state_format.py``) accepts it only if it is exact to that family's
tolerances.
LIBSVM's kernel evaluations are its own and not counted in ``n_kernel_evals_``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._exact_paths import SelfInitStalled, _StallWatch, _refine
from .core.bordered import bordered_drift
from ._validation import load_backend

__all__ = ["libsvm_optimum"]

#: LIBSVM's stopping tolerance (SVC's default): a looser start only adds breakpoints
LIBSVM_TOL = 1e-3
#: multipliers within this fraction of C of a bound are taken at the bound
BOUND_SNAP = 1e-10
#: a margin vector whose column's distance from the kept ones (the pivot of pivoted
#: Cholesky on Q_SS) falls below this times max_i Q_ii is moved to its nearer bound
PIVOT_LIMIT = 1e-4
#: examples at a bound start at least this far (times 1 to 2, by id) on their side of
#: g = 0: no two are tied at u = 0
TIE_GAP = 1e-4
#: the start is given up when its paths cross more breakpoints than this times n, plus
#: 100 (the benchmark's rows that end need 0.1 n at most; Gauss under gamma = 4, 0.24 n)
PATH_LIMIT = 0.5
#: the POKER departures of the start's paths: R afresh after joins whose pivot is below
#: 1e-8 of its scale and after shrinks of inverses with max|R| max|M| above 1e10, and
#: pivots re-solved from a fresh R below 1e-8 of their scale (POKER's defaults: 1e-5,
#: 1e6, 1e-6); the periodic probe keeps its drift limit (1e-12).  The start's end is
#: refined and checked like any other, so R need only stay accurate enough for the path
#: to find its breakpoints; on ill-conditioned margin sets POKER's defaults formed R
#: afresh at a third of them (``docs/defaults.rst`` has the figures)
START_DEPARTURES = {"small_pivot": 1e-8, "cond_refresh": 1e10, "doubt": 1e-8}
#: an R at the start's end whose backward error (``bordered_drift``) exceeds this is
#: formed afresh and every g recomputed: the kept g carry the drift of the updates made
#: with it (moons at C = 10: a drift of 2e-10 and kept g up to 1e-9 off their values
#: afresh; below 1e-10, within 6e-12 on the sets measured)
END_DRIFT = 1e-10
#: the bordered matrix's inverse is refused when M R - I exceeds this (max-abs)
RESIDUAL_LIMIT = 1e-6
#: above this residual of the start's inverse, every g is recomputed at the end
FRESH_ABOVE = 1e-10


def _row_keys(X, ids):
    """A bytes key per row of X (dense, or CSR in canonical form): equal keys, equal rows."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
        ind, val, ptr = X.indices.astype(np.int64), X.data, X.indptr
        return [ind[ptr[i]: ptr[i + 1]].tobytes() + b"|" + val[ptr[i]: ptr[i + 1]].tobytes()
                for i in ids]
    X = np.ascontiguousarray(X, dtype=np.float64)
    return [X[i].tobytes() for i in ids]


def _consolidate(X, y, alpha, C):
    """alpha with the total of every group of identical rows of one label that has a
    member strictly inside (0, C) moved onto as few members as possible (some at C, at
    most one inside, the rest at 0, in id order).  The members share g, so f and
    y'alpha are unchanged."""
    inner = np.flatnonzero((alpha > 0.0) & (alpha < C))
    if inner.size == 0:
        return alpha
    wanted = set(_row_keys(X, inner.tolist()))
    groups = {}
    for i, key in enumerate(_row_keys(X, range(X.shape[0]))):
        if key in wanted:
            groups.setdefault((key, float(y[i])), []).append(i)
    alpha = alpha.copy()
    for members in groups.values():
        if len(members) < 2:
            continue
        m = np.array(members, dtype=np.intp)
        total = float(np.sum(alpha[m]))
        full = min(int(total // C), m.size)
        alpha[m] = 0.0
        alpha[m[:full]] = C
        if full < m.size and total - full * C > BOUND_SNAP * C:
            alpha[m[full]] = total - full * C
    return alpha


def _bordered_inverse(KS, S, y):
    """The inverse of [[0, y_S'], [y_S, Q_SS]] from the margin set's columns and its
    residual max|M R - I|, or (None, residual) when it is not accurate
    (``RESIDUAL_LIMIT``); an empty array for an empty S."""
    if S.size == 0:
        return np.zeros((0, 0)), 0.0
    ys = y[S]
    M = np.zeros((S.size + 1, S.size + 1))
    M[0, 1:] = M[1:, 0] = ys
    M[1:, 1:] = KS[S, : S.size] * np.outer(ys, ys)
    try:
        R = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        return None, np.inf
    residual = float(np.max(np.abs(M @ R - np.eye(S.size + 1))))
    return (R if residual <= RESIDUAL_LIMIT else None), residual


def _independent(Q):
    """A mask of the margin vectors to keep: those that pivoted Cholesky (LAPACK's pstrf,
    largest remaining pivot first) takes before the remaining pivots fall below
    ``PIVOT_LIMIT`` times the largest diagonal entry; the others' columns are (nearly)
    combinations of the kept ones, and the bordered matrix would be singular with them."""
    keep = np.zeros(Q.shape[0], dtype=bool)
    if Q.shape[0] == 0:
        return keep
    from scipy.linalg import lapack

    _, piv, rank, info = lapack.dpstrf(np.array(Q, order="F"),
                                       tol=PIVOT_LIMIT * float(np.max(np.diag(Q))))
    if info < 0:
        raise np.linalg.LinAlgError("pstrf failed")
    keep[piv[:rank] - 1] = True
    return keep


def _columns(KS, S, keep, n):
    """The kept columns of KS (margin set S, ``keep`` a mask over it), at least 8 wide."""
    return np.ascontiguousarray(np.concatenate(
        [KS[:, : keep.size][:, keep], np.zeros((n, max(8 - int(keep.sum()), 0)))], axis=1))


def _regular_part(KS, S, y, alpha, b, C):
    """A margin set with a regular bordered matrix in place of LIBSVM's singular one:
    (S, KS, R, residual, b), R None when even that part's inverse is not accurate;
    ``alpha`` is updated in place.

    Pivoted Cholesky on Q_SS (:func:`_independent`) keeps a regular part K; the others
    (D) go to their nearer bound.  Their move is then made up on K: alpha_K and b solve
    the bordered system of K with the new alpha_D, so that g on K and y'alpha stay as
    LIBSVM left them (and every other g nearly so, D's columns being nearly
    combinations of K's; moving D alone shifts g by up to C k_max per member).  The
    members of K that this puts outside [0, C] are clipped to that bound and leave K;
    their move is not made up: solving again without them pushes others out in turn,
    and the path from the smaller K is longer (``docs/defaults.rst`` has the figures)."""
    n = KS.shape[0]
    keep = _independent(KS[S, : S.size] * np.outer(y[S], y[S]))
    K, D = S[keep], S[~keep]
    moved = np.where(alpha[D] < 0.5 * C, 0.0, C) - alpha[D]
    alpha[D] += moved
    KK = _columns(KS, S, keep, n)
    R, residual = _bordered_inverse(KK, K, y)
    if R is None:
        return K, KK, None, residual, b
    QKD = KS[K][:, : keep.size][:, ~keep] * np.outer(y[K], y[D])
    z = R @ -np.concatenate([[float(np.dot(y[D], moved))], QKD @ moved])
    alpha[K] = np.clip(alpha[K] + z[1:], 0.0, C)
    alpha[K[alpha[K] < BOUND_SNAP * C]] = 0.0
    alpha[K[alpha[K] > C - BOUND_SNAP * C]] = C
    inside = (alpha[K] > 0.0) & (alpha[K] < C)
    if not inside.all():
        KK = _columns(KK, K, inside, n)
        K = K[inside]
        R, residual = _bordered_inverse(KK, K, y)
    return K, KK, R, residual, b - float(z[0])


def _libsvm_solution(params, X, y):
    """LIBSVM's alpha (>= 0, by example) and POKER's b (f = w'phi - b) for (X, y)."""
    from sklearn.svm import SVC

    svc = SVC(C=params["C"], kernel=params["kernel"], gamma=params["gamma"],
              degree=params["degree"], coef0=params["coef0"], tol=LIBSVM_TOL,
              cache_size=max(float(params["cache_size"]), 1.0), shrinking=True)
    svc.fit(X, y)
    alpha = np.zeros(X.shape[0])
    coef = svc.dual_coef_.toarray() if sp.issparse(svc.dual_coef_) else svc.dual_coef_
    alpha[svc.support_] = np.abs(coef[0])
    return alpha, -float(svc.intercept_[0])


def libsvm_optimum(backend, params, X, y, departures=START_DEPARTURES):
    """The exact SVM of (X, y) reached from LIBSVM's solution by POKER's fixed- and
    adjustable-bias paths (module docstring), by the POKER twin of ``backend``, with the
    numeric parameters of an IncrementalSVM state (``init_params()``): the exact SVM in
    the core's layout (:mod:`refsvm.core.optimum`, written by POKER's ``optimum_of``),
    or None when the start is refused (a singular margin set) or a path fails.
    ``departures``: those of the paths' POKER state (``START_DEPARTURES``; None: POKER's
    own)."""
    from .poker import poker as reference
    from .poker.storage import optimum_of

    y = np.asarray(y, dtype=np.float64)
    if np.unique(y).size < 2:
        return None
    C = float(params["C"])
    alpha, b = _libsvm_solution(params, X, y)
    alpha[alpha < BOUND_SNAP * C] = 0.0
    alpha[alpha > C - BOUND_SNAP * C] = C
    alpha = _consolidate(X, y, alpha, C)

    module = load_backend(backend, reference, "refsvm.poker._poker")
    path = module.POKERState(params["n_features"], params["sparse"], C=C,
                             kernel=params["kernel"], gamma=params["gamma"],
                             degree=params["degree"], coef0=params["coef0"],
                             cache_size=params["cache_size"], departures=departures)
    ids = path._append_rows(X, y)
    path.breakpoint_hook = _StallWatch(limit=int(PATH_LIMIT * ids.size) + 100)
    path._activate(ids)
    n = ids.size
    S = ids[(alpha > 0.0) & (alpha < C)]
    try:
        # the margin set: its kernel columns, a regular part of it, and the inverse of
        # that part's bordered matrix
        KS = np.zeros((n, max(S.size, 8)))
        for j, s in enumerate(S.tolist()):
            KS[:, j] = path._known(path._column(s))[:n]
        R, residual = _bordered_inverse(KS, S, y)
        gap = 0.0
        singular = R is None
        if singular:
            S, KS, R, residual, b = _regular_part(KS, S, y, alpha, b, C)
            if R is None:
                return None
            gap = TIE_GAP * (1.0 + np.arange(n) / n)
        at_c = ids[alpha == C]
        path.alpha[ids] = alpha
        path.status[at_c] = reference.I_C
        path.status[S] = reference.I_S
        path.S = S.tolist()
        path.KS = KS
        if S.size:
            path.R = R
            path.fresh = True
        # g at u = 0 on the right side of 0 for each set; d carries LIBSVM's violation
        f = KS[:, : S.size] @ (alpha[S] * y[S]) + path._class_sums(ids, at_c)
        g = y * (f - b) - 1.0
        g0 = np.where(alpha == C, np.minimum(g, -gap),
                      np.where(alpha == 0.0, np.maximum(g, gap), 0.0))
        path.b = b
        path.g[ids] = g0
        path.p[ids] = g0 - y * f
        path.d[ids] = g - g0
        path.fixed_bias()                                 # Eq. 3: u from 0 to 1
        path.adjust_bias()                                # Sec. 3: y'alpha to 0
        path._end_chunk("the start from LIBSVM")
        # an R that drifted on the way is formed afresh, and every g recomputed
        drifted = bool(path.S) and not path.fresh and not bordered_drift(
            np.asarray(path.R), path.y, np.asarray(path.KS), path.S) <= END_DRIFT
        if drifted and not path._refresh():
            return None
        if not _refine(path, reference, fresh=singular or drifted or residual > FRESH_ABOVE):
            return None
        return optimum_of(path)
    except (reference.CyclingError, reference.PathError, SelfInitStalled,
            np.linalg.LinAlgError):
        return None
