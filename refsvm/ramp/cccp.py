"""Offline ramp-loss SVM by CCCP (Collobert, Sinz, Weston, Bottou 2006), zero bias.

The batch SVMR that Wang & Vucetic compare OnlineSVMR with (their Sec. II.C and
Fig. 4a).  A reference solver for tests and benchmarks, not an estimator.

CCCP for the ramp loss (Eqs. 8-11 of Wang & Vucetic): split
R(z) = H_1(z) - H_{-1}(z), and repeat

1. V = {i : y_i f_old(x_i) >= -1} = {i : g_i <= 2}            (Eq. 10)
2. solve the zero-bias hinge SVM on V (Eq. 11): max 1'a_V - 1/2 a_V' Q_VV a_V,
   0 <= a_V <= C, with a_i = 0 outside V
3. stop when V no longer changes.

The inner solver of step 2 is exact coordinate ascent of our own (the
one-example SMO of Eqs. 13-14, which is exact for a bias-free dual because
there is no equality constraint): pick the KKT violator with the largest dual
gain (Eq. 13), take the closed-form step (Eq. 14), update every gradient
(Eq. 15); stop when every example of V meets Eq. (3) within ``tol``.  Kernel
rows are computed on demand (vectorised) and kept in a bounded cache; every
value computed is counted in ``n_kernel_evals`` (the cost measure of Fig. 4).
There is no gain threshold: the inner solve runs to ``tol``.

References
----------
R. Collobert, F. Sinz, J. Weston, L. Bottou, "Trading Convexity for
Scalability", ICML 2006.  Z. Wang and S. Vucetic, "Fast Online Training of
Ramp Loss Support Vector Machines", ICDM 2009, Eqs. (8)-(11), (13)-(15).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..core.kernels import KERNEL_CODES
from .online_svmr import eq13_gain, eq14_new_alpha, violates_eq3

__all__ = ["RowKernel", "CCCPResult", "solve_hinge", "cccp_ramp", "dual_objective"]


class RowKernel:
    """Kernel rows k(x_i, X) of a fixed data set, vectorised, counted, cached.

    Parameters
    ----------
    X : ndarray or CSR matrix
    kernel, gamma, degree, coef0 : see :class:`refsvm.core.kernels.Kernel`
    cache_mb : float
        Memory for cached rows (least recently used rows are dropped).

    Attributes
    ----------
    n_evals : int
        Kernel values computed (a row of n values counts n).
    """

    def __init__(self, X, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, cache_mb=256.0):
        if kernel not in KERNEL_CODES:
            raise ValueError(f"unknown kernel {kernel!r}")
        self.X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        self.kind, self.gamma, self.degree, self.coef0 = kernel, float(gamma), int(degree), \
            float(coef0)
        self.n = self.X.shape[0]
        if sp.issparse(self.X):
            self.sq = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
        else:
            self.sq = np.einsum("ij,ij->i", self.X, self.X)
        self.max_rows = max(2, int(cache_mb * 2**20 / (8 * max(self.n, 1))))
        self.cache = OrderedDict()
        self.n_evals = 0

    def _finish(self, dots, sq_i):
        if self.kind == "linear":
            return dots
        if self.kind == "rbf":
            d2 = np.maximum(self.sq + sq_i - 2.0 * dots, 0.0)
            return np.exp(-self.gamma * d2)
        return (self.gamma * dots + self.coef0) ** self.degree

    def row(self, i):
        """k(x_i, x_k) for every k (n evaluations unless cached)."""
        r = self.cache.get(i)
        if r is not None:
            self.cache.move_to_end(i)
            return r
        xi = self.X[i]
        dots = np.asarray(self.X @ xi.T).ravel() if sp.issparse(self.X) else self.X @ xi
        r = self._finish(dots, self.sq[i])
        self.n_evals += self.n
        self.cache[i] = r
        if len(self.cache) > self.max_rows:
            self.cache.popitem(last=False)
        return r

    def diag(self):
        """k(x_i, x_i) for every i (n evaluations)."""
        self.n_evals += self.n
        return self._finish(self.sq, self.sq)


@dataclass
class CCCPResult:
    """Outcome of :func:`cccp_ramp`."""

    alpha: np.ndarray
    g: np.ndarray
    V: np.ndarray                 # boolean mask of the last active set used (Eq. 10)
    rounds: int
    n_steps: int
    n_kernel_evals: int
    converged: bool
    history: list = field(default_factory=list)   # |V| per round


def dual_objective(alpha, g):
    """D(alpha) = 1'alpha - 1/2 alpha'Q alpha, from alpha and g = 1 - Q alpha (zero bias)."""
    # alpha'Q alpha = alpha'(1 - g)
    return float(alpha.sum() - 0.5 * alpha @ (1.0 - g))


def solve_hinge(K, y, C, V, alpha, g, qdiag, tol=1e-3, max_steps=10_000_000):
    """Zero-bias hinge SVM on the examples of mask V (Eq. 11), in place, to ``tol``.

    ``alpha`` must be 0 outside V; ``g = 1 - y f`` is kept for every example
    (Eq. 15).  Returns the number of coordinate steps.
    """
    steps = 0
    idx = np.flatnonzero(V)
    while steps < max_steps:
        a, gv, q = alpha[idx], g[idx], qdiag[idx]
        viol = violates_eq3(a, gv, C, tol)                       # Eq. (3)
        if not viol.any():
            break
        delta = eq14_new_alpha(a, gv, q, C) - a                  # Eq. (14)
        gain = np.where(viol, eq13_gain(gv, q, delta), -np.inf)  # Eq. (13)
        b = int(np.argmax(gain))
        p = int(idx[b])
        alpha[p] += delta[b]
        g -= (delta[b] * y[p]) * y * K.row(p)                   # Eq. (15)
        steps += 1
    return steps


def cccp_ramp(X, y, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, tol=1e-3, alpha0=None,
              max_rounds=100, cache_mb=256.0, K=None):
    """Ramp-loss SVM by CCCP, zero bias (Eqs. 8-11 of Wang & Vucetic).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
    y : ndarray of +-1
    C : float
    kernel, gamma, degree, coef0 : kernel parameters
    tol : float
        KKT tolerance of the inner hinge solves (Eq. 3).
    alpha0 : ndarray, optional
        Warm start (e.g. an OnlineSVMR solution); default alpha = 0 (f = 0, so the
        first active set is every example).
    max_rounds : int
        Cap on CCCP rounds (``max_rounds=1``: a single round from ``alpha0``).
    K : RowKernel, optional
        A kernel row provider to reuse (its count keeps growing).

    Returns
    -------
    CCCPResult
        ``V`` is the active set of the last round; ``converged`` says whether
        Eq. (10) on the final f gives that same V (the CCCP stopping rule).
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    if K is None:
        K = RowKernel(X, kernel, gamma, degree, coef0, cache_mb)
    start_evals = K.n_evals
    qdiag = K.diag()
    alpha = np.zeros(n) if alpha0 is None else np.array(alpha0, dtype=np.float64)
    g = np.ones(n)
    for p in np.flatnonzero(alpha):                          # g = 1 - y f(x) for the warm start
        g -= (alpha[p] * y[p]) * y * K.row(p)
    steps = 0
    history = []
    converged = False
    V = g <= 2.0
    rounds = 0
    for rounds in range(1, max_rounds + 1):
        V = g <= 2.0                                          # Eq. (10) on f_old
        for p in np.flatnonzero(~V & (alpha != 0)):            # alpha = 0 outside V
            g -= (-alpha[p] * y[p]) * y * K.row(p)
            alpha[p] = 0.0
        history.append(int(V.sum()))
        steps += solve_hinge(K, y, C, V, alpha, g, qdiag, tol)   # Eq. (11)
        if np.array_equal(g <= 2.0, V):                        # V no longer changes
            converged = True
            break
    return CCCPResult(alpha=alpha, g=g, V=V, rounds=rounds, n_steps=steps,
                      n_kernel_evals=K.n_evals - start_evals, converged=converged,
                      history=history)
