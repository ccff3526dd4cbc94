"""Kernels, in readable Python (the reference).

The papers measure cost in *kernel evaluations*, so every :class:`Kernel`
counts the evaluations it performs in ``n_evals``.  The compiled twin is
:class:`refsvm._core.CKernel`; both compute the same formulas in the same
way (the squared distance of the RBF kernel from the norms and the inner product, or
summed directly for close points: see :func:`sqdist`), so that the twins agree to
rounding -- in fact bit for bit, on every machine: sums are added left to right
(:func:`sequential_sum`, as the twin's C loops; not BLAS's ``ddot``, whose order and
fused multiply-adds depend on the CPU), and the exponential is the C library's
(``math.exp``, the function the twin calls; NumPy's vectorised exp differs from it in the
last bit on about 5 % of arguments on CPUs with AVX-512, measured with NumPy 2.4).  On
nearly degenerate streams one bit decides which path an exact method takes.

An example ("row") is either a 1-D ``float64`` NumPy array (dense) or a
:class:`SparseRow` (sorted column indices and their values, as in one row of
a CSR matrix).

Kernels
-------
- ``"linear"``: k(x, z) = <x, z>
- ``"rbf"``: k(x, z) = exp(-gamma * ||x - z||^2)
- ``"poly"``: k(x, z) = (gamma * <x, z> + coef0) ** degree

The Wang & Vucetic experiments write the RBF kernel as
exp(-||x - z||^2 / (2 delta^2)); that is ``gamma = 1 / (2 delta^2)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

KERNELS = ("linear", "rbf", "poly")
KERNEL_CODES = {"linear": 0, "rbf": 1, "poly": 2}


class SparseRow(NamedTuple):
    """One sparse example: sorted column ``indices`` and their ``data``."""

    indices: np.ndarray
    data: np.ndarray


def get_row(X, i):
    """Row ``i`` of a dense 2-D array (a view) or of a CSR matrix (a SparseRow)."""
    if sp.issparse(X):
        start, stop = X.indptr[i], X.indptr[i + 1]
        return SparseRow(X.indices[start:stop], X.data[start:stop])
    return X[i]


def stack_rows(rows, n_features, sparse):
    """Rows (dense arrays or SparseRows) back into a 2-D array or a CSR matrix."""
    if not sparse:
        if not rows:
            return np.zeros((0, n_features))
        return np.vstack(rows)
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    for r, row in enumerate(rows):
        indptr[r + 1] = indptr[r] + row.indices.shape[0]
    if rows:
        indices = np.concatenate([r.indices for r in rows]).astype(np.int32)
        data = np.concatenate([r.data for r in rows]).astype(np.float64)
    else:
        indices, data = np.zeros(0, np.int32), np.zeros(0)
    return sp.csr_matrix((data, indices, indptr), shape=(len(rows), n_features))


def rows_to_state(M, sparse):
    """Stored examples as plain arrays, the persistence format every family's twins share:
    a 2-D ``rows`` array, or for CSR ``rows_data``, ``rows_indices`` (int32) and
    ``rows_indptr`` (int64)."""
    if not sparse:
        return {"rows": np.array(M, dtype=np.float64, order="C")}
    M = sp.csr_matrix(M)
    return {"rows_data": np.asarray(M.data, dtype=np.float64).copy(),
            "rows_indices": np.asarray(M.indices, dtype=np.int32).copy(),
            "rows_indptr": np.asarray(M.indptr, dtype=np.int64).copy()}


def rows_from_state(data, n_rows, sparse):
    """The first ``n_rows`` rows saved by :func:`rows_to_state`: dense arrays or
    SparseRows (copies)."""
    if not sparse:
        return [np.array(r, dtype=np.float64) for r in np.asarray(data["rows"])[:n_rows]]
    indptr = np.asarray(data["rows_indptr"])
    return [SparseRow(np.array(data["rows_indices"][indptr[r]:indptr[r + 1]], np.int32),
                      np.array(data["rows_data"][indptr[r]:indptr[r + 1]], np.float64))
            for r in range(n_rows)]


def sequential_sum(v):
    """0.0 + v[0] + v[1] + ... + v[n-1], added left to right as the twins' C loops add
    (``s = 0.0`` then ``s += v[p]``).

    ``np.dot`` and ``np.sum`` add in another order, and BLAS's ``ddot`` in one that depends
    on the CPU (with fused multiply-adds on some): the kernel values would then differ from
    the twin's in the last bit on some machines only.  A cumulative sum is sequential by
    definition, and each product ``x * z`` is rounded by itself, as in C.  Adding the 0.0
    at the end instead of the start changes only the sign of an all-zero sum, which the
    final ``0.0 +`` makes +0.0 as in C."""
    return 0.0 + float(np.cumsum(v)[-1]) if v.shape[0] else 0.0


def dot(x, z):
    """<x, z> for dense or sparse rows (sparse-sparse by matching indices), summed in
    index order (:func:`sequential_sum`)."""
    if isinstance(x, SparseRow):
        if isinstance(z, SparseRow):
            common, ix, iz = np.intersect1d(
                x.indices, z.indices, assume_unique=True, return_indices=True
            )
            return sequential_sum(x.data[ix] * z.data[iz])
        return sequential_sum(x.data * z[x.indices])
    if isinstance(z, SparseRow):
        return sequential_sum(z.data * x[z.indices])
    return sequential_sum(np.asarray(x) * np.asarray(z))


def sqnorm(x):
    """||x||^2 of a dense or sparse row."""
    data = x.data if isinstance(x, SparseRow) else np.asarray(x)
    return sequential_sum(data * data)


def sqdist(x, z):
    """||x - z||^2, from the norms where that is accurate, else summed directly.

    d = (||x||^2 + ||z||^2) - 2 <x, z> (as LIBSVM computes it) is kept when
    d > (||x||^2 + ||z||^2) / 4: its round-off, a few units of the norms', is then a few
    units of d.  Otherwise (close points, far from the origin) the squared differences are
    summed directly over the coordinates where either row is non-zero, in index order.
    Either way a dense row and its CSR form give the same bits (zeros add +0.0, a no-op on
    these sums).  The inner product of two sparse rows needs only their common indices,
    which the twin computes by a gather against one row scattered once, four rows at a time
    (``kernel_csr_many``: about 5x faster than merging the two index lists on a9a); the
    twin's store keeps every row's squared norm.  Equal rows give 0 exactly."""
    sx, sz = sqnorm(x), sqnorm(z)
    d = (sx + sz) - 2.0 * dot(x, z)
    if d > 0.25 * (sx + sz):
        return d
    return _direct_sqdist(x, z)


def _direct_sqdist(x, z):
    """sum_k (x_k - z_k)^2 in index order (over the union of the indices of sparse rows)."""
    if isinstance(x, SparseRow) or isinstance(z, SparseRow):
        x = _as_sparse(x)
        z = _as_sparse(z)
        union = np.union1d(x.indices, z.indices)
        diff = np.zeros(union.shape[0])
        diff[np.searchsorted(union, x.indices)] += x.data
        diff[np.searchsorted(union, z.indices)] -= z.data
        return sequential_sum(diff * diff)
    diff = x - z
    return sequential_sum(diff * diff)


def _as_sparse(x):
    if isinstance(x, SparseRow):
        return x
    nz = np.flatnonzero(x)
    return SparseRow(nz.astype(np.int32), x[nz])


def kernel_block(A, B, kind="rbf", gamma=1.0, degree=3, coef0=0.0, clamp=False,
                 scale=False):
    """k(a_i, b_j) for the rows of A and B (2-D arrays, or CSR matrices) by NumPy's
    matrix product, uncounted: for checks of a state, not for the algorithms (the
    products are not summed in index order, so a value may differ from
    :class:`Kernel`'s in the last bits).

    The squared distance of the RBF kernel is (||a||^2 + ||b||^2) - 2 <a, b>; where that
    is not above (||a||^2 + ||b||^2) / 4 it is summed directly from the difference of the
    rows (as :func:`sqdist`), or with ``clamp`` only clamped at 0 (cheaper; the scale
    below then bounds the error).  Any ``kind`` but "linear" and "poly" is the RBF kernel.
    ``scale``: also return a scale of the round-off of each value, (values, scale):
    sqrt(||a||^2 ||b||^2) for the linear kernel, |degree base^(degree-1)| (gamma
    sqrt(||a||^2 ||b||^2) + |coef0|) for the polynomial one (base = gamma <a, b> + coef0),
    gamma (||a||^2 + ||b||^2) max(k, 1e-300) + 1 for the RBF kernel."""
    AB = A @ B.T
    AB = AB.toarray() if sp.issparse(AB) else np.asarray(AB)
    if kind == "linear" and not scale:
        return AB
    if kind == "poly" and not scale:
        return (gamma * AB + coef0) ** degree
    sa = np.asarray(A.multiply(A).sum(axis=1)).ravel() if sp.issparse(A) \
        else np.einsum("ij,ij->i", A, A)
    sb = np.asarray(B.multiply(B).sum(axis=1)).ravel() if sp.issparse(B) \
        else np.einsum("ij,ij->i", B, B)
    with np.errstate(over="ignore", invalid="ignore"):
        if kind == "linear":
            return AB, np.sqrt(np.outer(sa, sb))
        if kind == "poly":
            base = gamma * AB + coef0
            err = np.abs(degree * base ** max(degree - 1, 0)) * (
                gamma * np.sqrt(np.outer(sa, sb)) + abs(coef0))
            return base ** degree, err
        s = sa[:, None] + sb[None, :]
        d2 = s - 2.0 * AB
        if clamp:
            d2 = np.maximum(d2, 0.0)
        else:
            ii, jj = np.nonzero(~(d2 > 0.25 * s))
            for lo in range(0, ii.size, 4096):
                i, j = ii[lo:lo + 4096], jj[lo:lo + 4096]
                diff = A[i] - B[j]
                d2[i, j] = (np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
                            if sp.issparse(diff) else np.einsum("ij,ij->i", diff, diff))
        val = np.exp(-gamma * d2)
        if not scale:
            return val
        return val, gamma * s * np.maximum(val, 1e-300) + 1.0


def add_scaled(w, scale, x):
    """w += scale * x in place (dense w; dense or sparse x)."""
    if isinstance(x, SparseRow):
        w[x.indices] += scale * x.data
    else:
        w += scale * x


class Kernel:
    """A kernel function that counts its evaluations.

    Parameters
    ----------
    kind : {"linear", "rbf", "poly"}
    gamma : float
        RBF width, or the scale of the polynomial kernel's inner product.
    degree : int
        Degree of the polynomial kernel.
    coef0 : float
        Constant term of the polynomial kernel.

    Attributes
    ----------
    n_evals : int
        Number of kernel evaluations k(x, z) performed so far.
    """

    def __init__(self, kind="rbf", gamma=1.0, degree=3, coef0=0.0):
        if kind not in KERNEL_CODES:
            raise ValueError(f"unknown kernel {kind!r}; expected one of {KERNELS}")
        self.kind = kind
        self.gamma = float(gamma)
        self.degree = int(degree)
        self.coef0 = float(coef0)
        self.n_evals = 0

    def value(self, x, z):
        """k(x, z) without counting (for diagnostics; algorithms use ``__call__``)."""
        if self.kind == "linear":
            return dot(x, z)
        if self.kind == "rbf":
            return math.exp(-self.gamma * sqdist(x, z))
        return float((self.gamma * dot(x, z) + self.coef0) ** self.degree)

    def __call__(self, x, z):
        """k(x, z), counted as one evaluation."""
        self.n_evals += 1
        return self.value(x, z)

    def row(self, rows, x):
        """[k(r, x) for r in rows] as an array, counted as len(rows) evaluations."""
        return np.array([self(r, x) for r in rows], dtype=np.float64)

    def self_value(self, x):
        """k(x, x), counted as one evaluation (the RBF kernel gives 1 without work,
        but the papers count it; we count it too so the twins agree)."""
        return self(x, x)

    def __repr__(self):
        return (
            f"Kernel(kind={self.kind!r}, gamma={self.gamma!r}, degree={self.degree!r}, "
            f"coef0={self.coef0!r})"
        )
