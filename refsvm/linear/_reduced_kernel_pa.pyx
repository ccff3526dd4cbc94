"""Compiled twin of :mod:`refsvm.linear.reduced_kernel_pa` (RKPA, RKPAm).

Same classes, attributes and methods as the reference.  The learning itself is the
linear family's compiled PA / PAm (:mod:`refsvm.linear._passive_aggressive`, cimported):
``ReducedKernelPAState`` computes φ(x) = Λ^{-1/2} Pᵀ K(Ã, x) and hands (φ(x), 1) to
``PAState._step``; the RKPAm state hands it to a ``PAmState`` whose statistics and
proximal model are those of the kernel rows (``KernelRowProximalPAm``: the diagonal
"quasi-KFD", or with ``covariance="full"`` Welford rank-one updates of each class's
scatter and of a Cholesky factor of the shrunk covariance, LAPACK ``dpotrf`` only at the
reference's refreshes, two triangular solves per update).  Both states make the
reference's passive test (ℓ ≤ 0, or with the departure ``passive_rtol`` ℓ up to round-off)
before the linear step.  Every departure setting is read from the state's ``departures``
(:mod:`refsvm.linear.departures`) when the state is made.

Where the time goes, and what is done about it (per example, m̃ reduced points):

1. K(Ã, x), computed here rather than by the core's pairwise kernel: Ã is kept
   transposed (d × m̃, feature-major), so that for few features (d ≤ 8) the squared
   distances Σ_j (ã_ij − x_j)² run down contiguous columns (summed directly, as the
   reference does), and otherwise the cross products x·ã come from a register-tiled
   matrix-vector product (dense; in ``run`` the rows of a block four at a time,
   ``_rkpa_matmat``, so that Ãᵀ streams by once per four rows) or one axpy per non-zero
   (CSR), then ‖x‖² + ‖ã‖² − 2x·ã clipped at 0; then a vectorised ``exp`` (``_rkpa_exp``:
   Cody–Waite reduction and a degree-13 polynomial, within 2.3e-16 relative of libm's).
   These C loops are compiled twice on x86-64 Linux with GCC ≥ 12 (AVX2/FMA and the
   baseline; the loader picks one).  Very wide data (d·m̃ > 2^24) uses the core's
   pairwise kernel.
2. The screen: most examples of an easy stream lie far outside the margin.  With
   v = Tᵀz kept (T = Λ^{-1/2}Pᵀ; recomputed after each change of z), zᵀφ(x) = vᵀK(Ã, x)
   costs m̃, and a loss below −(a bound on the round-off of both twins' loss) is passive
   whatever the rounding: no φ(x) is needed.  Other examples get φ(x) = T K(Ã, x), an
   m̃ × m̃ product.  Each change of z costs a refresh of v (m̃²), so the screen pays only
   while few rows need φ: it stays on while at most a quarter of a block did; with it
   off, the φ of a whole block come from one ``_rkpa_matmat`` (T read once per four
   rows, about twice the speed of a row at a time).  The screen only saves time: an example
   gets the same φ(x), the same passive test and the same step whether or not it was
   screened and whatever call or block it came in (the products are fixed-order C
   loops, not BLAS, for that reason; ``_rkpa_matmat`` gives each row the bits of
   ``_rkpa_matvec``), so ``run`` equals a stream of ``step`` calls bit for bit.
3. The linear PA / PAm step (O(m̃), the linear family's).
4. RKPAm with the full covariance: per example the scatter's and the factor's rank-one
   terms (O(m̃²)), whether passive or not, per update two triangular solves and
   z_p = Λ^{1/2}Pᵀũ_p (O(m̃²)), a Cholesky factorisation (O(m̃³)) only at a refresh,
   O(log n) times per class.  The factor is kept as L D Lᵀ and updated by Bennett's
   method (two multiply-adds per entry, no square root: ``_rkpa_ldl_update_batch``); the
   terms are deferred and applied in batches when needed (the factor's at the next
   update, the scatter's at the next refresh, or when a buffer is full), the matrix held
   in registers and L1 while the batch passes.  A batch gives every entry the same
   operations in the same order as one term at a time, so the result does not depend on
   the batching (nor on ``get_state``/``save_state``, which apply what is pending).
   Between refreshes (the departure ``refresh_growth``) the factor follows the matrix by
   rank-one terms; with ``refresh_growth=1`` (the paper form) every example refreshes.

Prediction (``transform_rows``, ``decision_function``) uses the reference's arithmetic --
the core's kernel and one BLAS ``dgemm`` per block -- so a model predicts the same in
both twins.
"""
from libc.float cimport DBL_EPSILON
from libc.math cimport fabs, pow, sqrt
from scipy.linalg.cython_blas cimport dgemm
from scipy.linalg.cython_lapack cimport dpotrf

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport CKernel, RowStore, StreamLearner, kernel_many, kernel_row_many
from refsvm._blas_threads import one_blas_thread
from refsvm.core.departures import resolve
from refsvm.linear._passive_aggressive cimport LinearModel, PAmState, PAState
from refsvm.linear.departures import DEPARTURES
from refsvm.linear.reduced_kernel_pa import SINGULAR_RATIO

cnp.import_array()

# the hand-written C of this twin: refsvm/_csrc/refsvm_rkpa.c
from refsvm._clib cimport (
    REFSVM_RKPA_NB as RKPA_NB, refsvm_rkpa_dot_abs as _rkpa_dot_abs,
    refsvm_rkpa_dot_and_sqnorm as _rkpa_dot_and_sqnorm,
    refsvm_rkpa_dots_csr as _rkpa_dots_csr, refsvm_rkpa_exp as _rkpa_exp,
    refsvm_rkpa_expanded as _rkpa_expanded, refsvm_rkpa_ldl_solve as _rkpa_ldl_solve,
    refsvm_rkpa_ldl_update_batch as _rkpa_ldl_update_batch,
    refsvm_rkpa_matmat as _rkpa_matmat, refsvm_rkpa_matvec as _rkpa_matvec,
    refsvm_rkpa_get_level as _rkpa_get_level, refsvm_rkpa_set_level as _rkpa_set_level, refsvm_rkpa_sqdist as _rkpa_sqdist,
    refsvm_rkpa_syr_batch as _rkpa_syr_batch)

# rows per block of ``run`` (the kernel rows and features of a block stay in cache)
cdef Py_ssize_t BLOCK = 64
# up to this many features, squared distances are summed directly (else cross products)
cdef Py_ssize_t DIRECT_FEATURES = 8
# a dense transposed copy of Ã is kept while d·m̃ is at most this (else pairwise kernel)
cdef Py_ssize_t DENSE_REDUCED_LIMIT = 1 << 24

# kernel codes of the block path (the core's order)
cdef enum:
    LINEAR = 0
    RBF = 1
    POLY = 2



def _single_threaded_blas():
    """BLAS on one thread (``refsvm/_blas_threads.py``): the blocks here are small (64 x m̃
    times m̃ x m̃), OpenBLAS's threads cost more than they give, and on a loaded machine
    their spinning makes a pass ten times slower."""
    return one_blas_thread()


cdef inline double* _buffer(cnp.ndarray a) noexcept:
    return <double*> cnp.PyArray_DATA(a)


cdef inline double _sqnorm(const double* x, Py_ssize_t d) noexcept nogil:
    """‖x‖², summed in order (the RBF rows from cross products: one loop for every path)."""
    cdef Py_ssize_t j
    cdef double xn = 0.0
    for j in range(d):
        xn += x[j] * x[j]
    return xn


cdef inline void _sqnorm4(const double* const* xs, Py_ssize_t d, double* xn) noexcept nogil:
    """‖x‖² of the four rows xs[0..3], each summed in order as by ``_sqnorm`` (the same
    bits): four independent chains in one loop instead of one chain after the other."""
    cdef Py_ssize_t j
    cdef const double* x0 = xs[0]
    cdef const double* x1 = xs[1]
    cdef const double* x2 = xs[2]
    cdef const double* x3 = xs[3]
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    for j in range(d):
        s0 += x0[j] * x0[j]
        s1 += x1[j] * x1[j]
        s2 += x2[j] * x2[j]
        s3 += x3[j] * x3[j]
    xn[0] = s0
    xn[1] = s1
    xn[2] = s2
    xn[3] = s3


def _simd_level(level=None):
    """Test hook: which bodies the twin's C runs (0 the baseline, 1 x86-64-v3, 2
    x86-64-v4; each as far as the CPU has it, refsvm_rkpa.h; from 1 on every level gives
    the same bits); ``level`` caps it (2, what the CPU has, is the default).  Returns the
    level in force before the call (as the ramp twin's ``_simd_level``)."""
    before = _rkpa_get_level()
    if level is not None:
        if level not in (0, 1, 2):
            raise ValueError(f"level must be 0, 1 or 2, got {level!r}")
        _rkpa_set_level(level)
    return before


def _exp(x):
    """exp of every entry by the kernel block's vectorised exp (a test hook)."""
    out = np.array(x, dtype=np.float64, order="C", copy=True)
    _rkpa_exp(_buffer(out), out.size)
    return out


def _ldl_update(LD, X, alpha):
    """L D Lᵀ + Σ_j alpha_j x_j x_jᵀ by the full covariance's update
    (``_rkpa_ldl_update_batch``, all rows x_j of X in one call) on copies; LD holds the
    unit lower triangular L below its diagonal and D on it (a test hook; the reference's
    ``ldl_rank_one_update``, one x after the other)."""
    U = np.ascontiguousarray(np.triu(np.asarray(LD, dtype=np.float64).T))
    Xv = np.array(np.atleast_2d(X), dtype=np.float64, order="C", copy=True)
    T = 1.0 / np.array(np.atleast_1d(alpha), dtype=np.float64)
    if (U.ndim != 2 or U.shape[0] != U.shape[1] or Xv.shape[1:] != (U.shape[0],)
            or T.shape != (Xv.shape[0],) or not np.all(T > 0)):
        raise ValueError("LD must be square, X rows of its size, alpha > 0 one per row")
    pb = np.zeros(4 * RKPA_NB * max(Xv.shape[0], 1))
    _rkpa_ldl_update_batch(_buffer(U), U.shape[0], _buffer(Xv), _buffer(T), Xv.shape[0],
                           _buffer(pb))
    return U.T.copy()


cdef class ReducedKernelMap:
    """Twin of :class:`refsvm.linear.reduced_kernel_pa.ReducedKernelMap`."""

    cdef readonly object reduced
    cdef readonly CKernel kernel
    cdef readonly double eps
    cdef readonly Py_ssize_t n_reduced
    cdef readonly object reduced_gram
    cdef readonly object eigenvalues
    cdef readonly object P
    cdef readonly object transform
    cdef RowStore store                 # Ã (the pairwise fallback)
    cdef double* transform_data         # m̃ x m̃, row-major
    cdef object transform_t             # Tᵀ, row-major (the matvec of φ = T k)
    cdef double* transform_t_data
    cdef double* P_data
    cdef object sqrt_eigenvalues
    cdef double* sqrt_eigenvalues_data
    cdef Py_ssize_t n_features
    cdef int kind                       # LINEAR, RBF, POLY
    cdef double gamma, coef0
    cdef int degree
    cdef bint blocked                   # the block path (a dense Ãᵀ is kept)
    cdef object reduced_t               # Ãᵀ, d x m̃ row-major (feature-major)
    cdef double* reduced_t_data
    cdef object reduced_sqnorms         # ‖ã_i‖²
    cdef double* reduced_sqnorms_data
    cdef object scratch                 # a densified CSR row (few features), d
    cdef double* scratch_data
    cdef readonly double transform_norm  # ‖T‖_F = (Σ 1/λ_i)^{1/2}, for the screen's bound

    def __init__(self, reduced, CKernel kernel, double eps=0.0):
        cdef Py_ssize_t i, j, m = reduced.shape[0], d = reduced.shape[1]
        self.reduced = reduced
        self.kernel = kernel
        self.eps = eps
        self.n_reduced = m
        self.n_features = d
        self.store = RowStore(d, sp.issparse(reduced))
        for i in range(m):
            self.store.append(reduced, i)
        # K(Ã, Ã), one evaluation per pair i <= j: column j's k(ã_i, ã_j), i <= j, in one
        # call (``kernel_many``: the values of ``k_rows(store, i, j)`` bit for bit)
        K = np.empty((m, m))
        cdef double[:, ::1] Kv = K
        col = np.empty(max(m, 1))
        cdef double* cv = _buffer(col)
        for j in range(m):
            kernel_many(self.kernel, self.store, j, NULL, j + 1, cv)
            for i in range(j + 1):
                Kv[i, j] = cv[i]
                Kv[j, i] = cv[i]
        self.reduced_gram = K
        # K̃ = K(Ã, Ã) + εI = P Λ Pᵀ (BLAS on one thread: at m̃ ~ 100 its threads only
        # wait for each other, 30x slower on a loaded machine)
        with _single_threaded_blas():
            eigenvalues, P = np.linalg.eigh(K + eps * np.eye(m))
        if m == 0 or not eigenvalues[0] > SINGULAR_RATIO * m * eigenvalues[m - 1]:
            raise ValueError(
                f"K(reduced, reduced) + eps*I is singular (smallest eigenvalue "
                f"{eigenvalues[0] if m else 0.0:.3g}): the reduced set has duplicate or "
                f"nearly equal points; use eps > 0 or distinct reduced points")
        self.eigenvalues = eigenvalues
        self.P = np.ascontiguousarray(P)
        self.transform = np.ascontiguousarray(P.T / np.sqrt(eigenvalues)[:, None])
        self.sqrt_eigenvalues = np.sqrt(eigenvalues)
        self.transform_data = _buffer(self.transform)
        self.transform_t = np.ascontiguousarray(self.transform.T)
        self.transform_t_data = _buffer(self.transform_t)
        self.P_data = _buffer(self.P)
        self.sqrt_eigenvalues_data = _buffer(self.sqrt_eigenvalues)
        self.transform_norm = float(np.sqrt(np.sum(1.0 / eigenvalues)))
        # the block path: Ãᵀ dense, feature-major, and ‖ã_i‖²
        self.kind = ("linear", "rbf", "poly").index(kernel.kind)
        self.gamma, self.degree, self.coef0 = kernel.gamma, kernel.degree, kernel.coef0
        self.blocked = d * m <= DENSE_REDUCED_LIMIT
        if self.blocked:
            dense = reduced.toarray() if sp.issparse(reduced) else np.asarray(reduced)
            self.reduced_t = np.ascontiguousarray(dense.T, dtype=np.float64)
            self.reduced_sqnorms = np.ascontiguousarray(
                np.einsum("ij,ij->i", dense, dense), dtype=np.float64)
            self.reduced_t_data = _buffer(self.reduced_t)
            self.reduced_sqnorms_data = _buffer(self.reduced_sqnorms)
            self.scratch = np.zeros(max(d, 1))
            self.scratch_data = _buffer(self.scratch)

    cdef void _finish(self, double* k, Py_ssize_t n) noexcept nogil:
        """Linear / polynomial kernel values from the n cross products in k."""
        cdef Py_ssize_t i
        if self.kind == POLY:
            for i in range(n):
                k[i] = pow(self.gamma * k[i] + self.coef0, self.degree)

    cdef void _kernel_row_pairwise(self, const int* xi, const double* xv, Py_ssize_t nnz,
                                   double* k) noexcept nogil:
        """k = K(Ã, x) by the core's kernel (``k_row_csr`` / ``k_row_dense``'s values, in
        one ``kernel_row_many`` call; each evaluation counted)."""
        kernel_row_many(self.kernel, self.store, NULL, self.n_reduced, xi, xv, nnz, k)

    cdef void _kernel_row(self, const int* xi, const double* xv, Py_ssize_t nnz,
                          double* k) noexcept nogil:
        """k = K(Ã, x) for one row: m̃ counted evaluations."""
        cdef Py_ssize_t q, m = self.n_reduced, d = self.n_features
        cdef double xn
        if not self.blocked:  # very wide: the core's pairwise kernel
            self._kernel_row_pairwise(xi, xv, nnz, k)
            return
        self.kernel.n_evals += m
        if self.store.sparse and d <= DIRECT_FEATURES:
            # few features: densify the row and take the dense path
            for q in range(nnz):
                self.scratch_data[xi[q]] = xv[q]
            self._dense_row(self.scratch_data, k)
            for q in range(nnz):
                self.scratch_data[xi[q]] = 0.0
        elif self.store.sparse:
            _rkpa_dots_csr(self.reduced_t_data, m, xi, xv, nnz, k)
            if self.kind == RBF:
                xn = 0.0
                for q in range(nnz):
                    xn += xv[q] * xv[q]
                _rkpa_expanded(self.reduced_sqnorms_data, m, xn, self.gamma, k)
                _rkpa_exp(k, m)
            else:
                self._finish(k, m)
        else:
            self._dense_row(xv, k)

    cdef void _dense_row(self, const double* x, double* k) noexcept nogil:
        cdef Py_ssize_t m = self.n_reduced, d = self.n_features
        if self.kind == RBF and d <= DIRECT_FEATURES:
            _rkpa_sqdist(self.reduced_t_data, m, d, x, -self.gamma, k)
            _rkpa_exp(k, m)
            return
        _rkpa_matvec(self.reduced_t_data, d, m, x, k)
        if self.kind == RBF:
            _rkpa_expanded(self.reduced_sqnorms_data, m, _sqnorm(x, d), self.gamma, k)
            _rkpa_exp(k, m)
        else:
            self._finish(k, m)

    cdef void _kernel_block_dense(self, const double* Xd, const Py_ssize_t* rows,
                                  Py_ssize_t n_rows, double* K,
                                  const double** xs) noexcept nogil:
        """K[r] = K(Ã, X[rows[r]]) for a block of dense rows (xs: scratch for n_rows
        pointers).  The cross products of the block in one ``_rkpa_matmat`` (Ãᵀ read once
        per four rows), which gives each row the bits of ``_dense_row``'s matvec: the values
        of a row never depend on the block it is in."""
        cdef Py_ssize_t r, q, m = self.n_reduced, d = self.n_features
        cdef double xn[4]
        if not self.blocked or (self.kind == RBF and d <= DIRECT_FEATURES):
            for r in range(n_rows):
                self._kernel_row(NULL, Xd + rows[r] * d, d, K + r * m)
            return
        self.kernel.n_evals += m * n_rows
        for r in range(n_rows):
            xs[r] = Xd + rows[r] * d
        _rkpa_matmat(self.reduced_t_data, d, m, xs, n_rows, K)
        if self.kind == RBF:
            # (exp row by row, as _dense_row: the same bits; ‖x‖² four rows at a time)
            r = 0
            while r + 4 <= n_rows:
                _sqnorm4(xs + r, d, xn)
                for q in range(4):
                    _rkpa_expanded(self.reduced_sqnorms_data, m, xn[q], self.gamma,
                                   K + (r + q) * m)
                    _rkpa_exp(K + (r + q) * m, m)
                r += 4
            while r < n_rows:
                _rkpa_expanded(self.reduced_sqnorms_data, m, _sqnorm(xs[r], d), self.gamma,
                               K + r * m)
                _rkpa_exp(K + r * m, m)
                r += 1
        else:
            for r in range(n_rows):
                self._finish(K + r * m, m)

    cdef void _features(self, const double* k, double* phi) noexcept nogil:
        """φ = T k (T = Λ^{-1/2}Pᵀ), by the fixed-order matvec (as every row, in ``step``
        and in ``run``)."""
        _rkpa_matvec(self.transform_t_data, self.n_reduced, self.n_reduced, k, phi)

    cdef void _features_rows(self, const double* k, Py_ssize_t n_rows, double* phi,
                             const double** xs) noexcept nogil:
        """Row r of phi = T (row r of k) for n_rows row-major rows (xs: scratch for n_rows
        pointers), by ``_rkpa_matmat``: each row gets the bits of ``_features``."""
        cdef Py_ssize_t r, m = self.n_reduced
        for r in range(n_rows):
            xs[r] = k + r * m
        _rkpa_matmat(self.transform_t_data, m, m, xs, n_rows, phi)

    cdef void _kernel_weights(self, const double* z, double* v) noexcept nogil:
        """v = Tᵀz, so that zᵀφ(x) = vᵀK(Ã, x)."""
        _rkpa_matvec(self.transform_data, self.n_reduced, self.n_reduced, z, v)

    cdef void _features_block(self, const double* k, Py_ssize_t n_rows,
                              double* phi) noexcept nogil:
        """Row r of phi = transform @ (row r of k), for n_rows row-major rows (one BLAS
        dgemm: prediction only, the same arithmetic as the reference's ``K @ T.T``)."""
        cdef int m = <int> self.n_reduced, n = <int> n_rows
        cdef double alpha = 1.0, beta = 0.0
        cdef char trans = b'T'
        cdef char notrans = b'N'
        dgemm(&trans, &notrans, &m, &n, &m, &alpha, self.transform_data, &m,
              <double*> k, &m, &beta, phi, &m)

    cdef void _to_features(self, const double* u, double* z) noexcept nogil:
        """z = Λ^{1/2} Pᵀ u (the fixed-order matvec: (Pᵀu)_i = Σ_j u_j P_ji, P row-major)."""
        cdef Py_ssize_t i
        _rkpa_matvec(self.P_data, self.n_reduced, self.n_reduced, u, z)
        for i in range(self.n_reduced):
            z[i] *= self.sqrt_eigenvalues_data[i]

    def kernel_row(self, x):
        """K(Ã, x), m̃ counted evaluations."""
        k = np.empty(self.n_reduced)
        cdef const double[::1] xv
        cdef const int[::1] xi
        if self.store.sparse:
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            self._kernel_row(&xi[0] if xi.shape[0] else NULL,
                             &xv[0] if xv.shape[0] else NULL, xi.shape[0], _buffer(k))
        else:
            xv = np.ascontiguousarray(x, dtype=np.float64)
            if xv.shape[0] != self.n_features:
                raise ValueError(f"x has {xv.shape[0]} features, expected {self.n_features}")
            self._kernel_row(NULL, &xv[0] if xv.shape[0] else NULL, xv.shape[0], _buffer(k))
        return k

    def __call__(self, x):
        """φ(x) for one row x."""
        return self.transform @ self.kernel_row(x)

    def to_features(self, u):
        """z = Λ^{1/2} Pᵀ u."""
        return self.sqrt_eigenvalues * (self.P.T @ np.asarray(u, dtype=np.float64))

    def transform_rows(self, X):
        """Φ(X), one row φ(x) per row of X (blocked BLAS; not counted: prediction)."""
        cdef long long counted = self.kernel.n_evals
        with _single_threaded_blas():
            out = _block_features(self, X)
        self.kernel.n_evals = counted
        return out


cdef class _Rows:
    """The rows of a dense array or a CSR matrix, for the blocked loops."""

    cdef bint sparse
    cdef Py_ssize_t d
    cdef const double[:, ::1] dense
    cdef const double[::1] data
    cdef const int[::1] indices
    cdef const int[::1] indptr32
    cdef const long long[::1] indptr64
    cdef bint narrow
    cdef const double* dense_data

    def __init__(self, X, bint sparse, Py_ssize_t n_features):
        self.sparse = sparse
        self.d = n_features
        if sparse:
            # read as they are (as the core's run): a call over a slice of the order
            # costs no pass over X
            self.data = np.ascontiguousarray(X.data, dtype=np.float64)
            self.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
            self.narrow = X.indptr.dtype == np.int32
            if self.narrow:
                self.indptr32 = np.ascontiguousarray(X.indptr)
            else:
                self.indptr64 = np.ascontiguousarray(X.indptr, dtype=np.int64)
            if X.shape[1] != n_features:
                raise ValueError(f"X has {X.shape[1]} features, expected {n_features}")
        else:
            self.dense = X
            if self.dense.shape[1] != n_features:
                raise ValueError(f"X has {self.dense.shape[1]} features, expected {n_features}")
            self.dense_data = &self.dense[0, 0] if self.dense.shape[0] and n_features else NULL

    cdef void kernel_block(self, ReducedKernelMap fmap, const Py_ssize_t* rows,
                           Py_ssize_t n_rows, double* K, const double** xs) noexcept nogil:
        """K[r] = K(Ã, row rows[r]) for r < n_rows (counted; xs: scratch for n_rows
        pointers)."""
        cdef Py_ssize_t r, i, lo, hi, m = fmap.n_reduced
        if not self.sparse:
            fmap._kernel_block_dense(self.dense_data, rows, n_rows, K, xs)
            return
        for r in range(n_rows):
            i = rows[r]
            if self.narrow:
                lo, hi = self.indptr32[i], self.indptr32[i + 1]
            else:
                lo, hi = self.indptr64[i], self.indptr64[i + 1]
            fmap._kernel_row(&self.indices[lo] if hi > lo else NULL,
                             &self.data[lo] if hi > lo else NULL, hi - lo, K + r * m)


cdef object _block_features(ReducedKernelMap fmap, X):
    """Φ(X) for prediction: the core's pairwise kernel rows and one dgemm per block -- the
    reference's arithmetic (``exp`` of libm, ``K @ T.T``), so that a model predicts the
    same in both twins."""
    cdef Py_ssize_t n = X.shape[0], m = fmap.n_reduced, start, stop, r, i
    Kb = np.empty((BLOCK, m))
    Phi = np.empty((n, m))
    cdef double* kp = _buffer(Kb)
    cdef double* pp = _buffer(Phi)
    cdef const double[:, ::1] Xd
    cdef const double[::1] data
    cdef const int[::1] indices
    cdef const Py_ssize_t[::1] indptr
    cdef bint sparse = fmap.store.sparse
    if sparse:
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
    else:
        Xd = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        if Xd.shape[1] != fmap.n_features:
            raise ValueError(f"X has {Xd.shape[1]} features, expected {fmap.n_features}")
    with nogil:
        start = 0
        while start < n:
            stop = min(start + BLOCK, n)
            for r in range(stop - start):
                i = start + r
                if sparse:
                    fmap._kernel_row_pairwise(
                        &indices[indptr[i]] if indptr[i + 1] > indptr[i] else NULL,
                        &data[indptr[i]] if indptr[i + 1] > indptr[i] else NULL,
                        indptr[i + 1] - indptr[i], kp + r * m)
                else:
                    fmap._kernel_row_pairwise(NULL, &Xd[i, 0], Xd.shape[1], kp + r * m)
            fmap._features_block(kp, stop - start, pp + start * m)
            start = stop
    return Phi


cdef class ReducedKernelPAState(StreamLearner):
    """Twin of :class:`refsvm.linear.reduced_kernel_pa.ReducedKernelPAState`: the linear
    family's compiled ``PAState._step`` on (φ(x), 1), after the scale-aware passive test."""

    cdef readonly int variant
    cdef readonly double C
    cdef readonly double eps
    cdef readonly object departures     # the family's departures, resolved
    cdef readonly double passive_rtol   # departures["passive_rtol"]
    cdef readonly CKernel kernel
    cdef readonly ReducedKernelMap feature_map
    cdef readonly LinearModel pa
    cdef object scratch                 # K(Ã, x) and φ(x) of one example, v = Tᵀz
    cdef double* k_data
    cdef double* phi_data
    cdef double* v_data
    cdef bint v_fresh                   # v = Tᵀz and z_norm = ‖z‖ for the current z
    cdef double z_norm
    cdef bint ready                     # the reduced set is known
    cdef int screen_factor              # screen while ≤ 1/screen_factor of a block needs φ

    def __init__(self, Py_ssize_t n_features, bint sparse=False, reduced=None, int variant=1,
                 double C=1.0, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
                 double eps=0.0, departures=None):
        self.departures = resolve(DEPARTURES, departures)
        self.passive_rtol = self.departures["passive_rtol"]
        self.n_features = n_features
        self.sparse = sparse
        self.variant = variant
        self.C = C
        self.eps = eps
        self.kernel = CKernel(kernel, gamma, degree, coef0)
        self.ready = False
        # screen while at most a quarter of a block needs φ (docs: "Design notes")
        self.screen_factor = 4
        if reduced is not None:
            self._build(reduced)

    def _build(self, reduced):
        """The feature map of Ã and a fresh linear state on it."""
        self.feature_map = ReducedKernelMap(reduced, self.kernel, self.eps)
        self.pa = self._linear_state()
        self.scratch = np.zeros((3, self.feature_map.n_reduced))
        self.k_data = _buffer(self.scratch)
        self.phi_data = self.k_data + self.feature_map.n_reduced
        self.v_data = self.phi_data + self.feature_map.n_reduced
        self.v_fresh = False
        self.ready = True

    def _check_ready(self):
        if not self.ready:
            raise ValueError("no reduced set: pass reduced= or load_state() first")

    def _linear_state(self):
        # RKPA = PA on (φ(x), 1): the bias is the weight of a constant feature 1
        return PAState(self.feature_map.n_reduced, False, variant=self.variant, C=self.C,
                       fit_intercept=True, departures=self.departures)

    cdef bint _passive(self, const double* phi, double y) noexcept nogil:
        """ℓ ≤ passive_rtol·(1 + |b| + Σ|z_i φ_i|): the reference's ``is_passive``, with
        the sums in order (``_passive_in_order``).  The sums are first taken in four
        lanes (``_rkpa_dot_abs``: four independent chains instead of one): any order of
        summation of the m̃ products (rounded or fused into the sum) is within
        2 (m̃ + 1) ε Σ|z_i φ_i| of any other, so when the lanes' test
        clears the threshold by more than 1024 (m̃ + 2) ε (1 + rtol)(1 + |b| + Σ|z_i φ_i|)
        -- far more than both computations' round-off together -- the in-order test gives
        the same answer; only a loss that close to the threshold (or a value that is not
        finite) is tested in order."""
        cdef Py_ssize_t m = self.feature_map.n_reduced
        cdef double s, a, gap, bound, b = self.pa.b, rtol = self.passive_rtol
        _rkpa_dot_abs(self.pa.w_data, phi, m, &s, &a)
        gap = (1.0 - y * (s + b)) - rtol * (1.0 + fabs(b) + a)
        bound = 1024.0 * (m + 2) * DBL_EPSILON * (1.0 + rtol) * (1.0 + fabs(b) + a)
        if gap > bound:
            return False
        if gap < -bound:
            return True
        return self._passive_in_order(phi, y)

    cdef bint _passive_in_order(self, const double* phi, double y) noexcept nogil:
        """The passive test with both sums in order, i = 1 .. m̃."""
        cdef Py_ssize_t i
        cdef double s = 0.0, a = 0.0, t, b = self.pa.b
        cdef double* z = self.pa.w_data
        for i in range(self.feature_map.n_reduced):
            t = z[i] * phi[i]
            s += t
            a += fabs(t)
        return 1.0 - y * (s + b) <= self.passive_rtol * (1.0 + fabs(b) + a)

    cdef int _learn(self, const double* k, const double* phi, double y) except -1 nogil:
        """The linear step on φ(x) (k = K(Ã, x) for the proximal statistics)."""
        if self._passive(phi, y):
            self._pass(k, y)
            return 0
        self.v_fresh = False
        return self.pa._step(NULL, phi, self.feature_map.n_reduced, y)

    cdef void _pass(self, const double* k, double y) noexcept nogil:
        """A passive round: counted (RKPAm: its kernel row joins the statistics)."""
        self.pa.t += 1

    cdef void _refresh(self) noexcept nogil:
        """v = Tᵀz and ‖z‖ for the screen."""
        cdef Py_ssize_t i
        cdef double s = 0.0
        cdef double* z = self.pa.w_data
        self.feature_map._kernel_weights(z, self.v_data)
        for i in range(self.feature_map.n_reduced):
            s += z[i] * z[i]
        self.z_norm = sqrt(s)
        self.v_fresh = True

    cdef bint _screened(self, const double* k, double y) noexcept nogil:
        """True when (x, y) is passive for certain, from K(Ã, x) alone: zᵀφ(x) = vᵀk
        (v = Tᵀz) puts the loss below −bound, where the bound (1024 times m̃ ε (‖z‖‖T‖_F‖k‖
        + |b| + 1)) exceeds the round-off of both this and the reference's computation of
        the loss, so the passive test on φ(x) would say passive whatever its rounding."""
        cdef Py_ssize_t m = self.feature_map.n_reduced
        cdef double g, kk, b = self.pa.b
        _rkpa_dot_and_sqnorm(self.v_data, k, m, &g, &kk)
        return 1.0 - y * (g + b) < -1024.0 * m * DBL_EPSILON * (
            self.z_norm * self.feature_map.transform_norm * sqrt(kk) + fabs(b) + 1.0)

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        if not self.ready:
            with gil:
                self._check_ready()
        if not self.sparse and nnz != self.n_features:
            with gil:
                raise ValueError(f"x has {nnz} features, expected {self.n_features}")
        self.feature_map._kernel_row(xi, xv, nnz, self.k_data)
        self.feature_map._features(self.k_data, self.phi_data)
        return self._learn(self.k_data, self.phi_data, y)

    def run(self, X, y, order):
        """Learn the rows of X in ``order``: the kernel rows of a block, then row by row
        the screen (``_screened``), φ(x) and the linear step; returns #changes.  Every
        row is computed as ``step`` computes it: the result does not depend on how the
        stream is cut into calls or blocks, and the screen only saves time."""
        cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
        cdef const Py_ssize_t[::1] od = np.ascontiguousarray(order, dtype=np.intp)
        cdef Py_ssize_t n = od.shape[0], m
        cdef Py_ssize_t start, stop, r, need
        cdef long long changes = 0
        cdef int changed
        cdef bint screen = True
        cdef double yr
        cdef double* kr
        cdef _Rows rows
        self._check_ready()
        if n == 0:
            return 0
        rows = _Rows(X, self.sparse, self.n_features)
        m = self.feature_map.n_reduced
        Kb = np.empty((2, BLOCK, m))  # the kernel rows of a block and (screen off) their φ
        xs_ = np.empty(BLOCK, dtype=np.intp)
        cdef double* kp = _buffer(Kb)
        cdef double* pp = kp + BLOCK * m
        cdef double* phi
        cdef const double** xs = <const double**> cnp.PyArray_DATA(xs_)
        with nogil:
            start = 0
            while start < n:
                stop = min(start + BLOCK, n)
                rows.kernel_block(self.feature_map, &od[start], stop - start, kp, xs)
                if not screen:  # every row needs φ: the block's at once (the same bits)
                    self.feature_map._features_rows(kp, stop - start, pp, xs)
                need = 0
                for r in range(stop - start):
                    kr = kp + r * m
                    yr = yv[od[start + r]]
                    if screen:
                        # rows far outside the margin are passive from K(Ã, x) alone
                        # (m̃ work); the others need φ (m̃² work)
                        if not self.v_fresh:
                            self._refresh()
                        if self._screened(kr, yr):
                            self._pass(kr, yr)
                            continue
                        phi = self.phi_data
                        self.feature_map._features(kr, phi)
                    else:
                        phi = pp + r * m
                    changed = self._learn(kr, phi, yr)
                    changes += changed
                    need += 1 if screen else changed
                # screening pays while few rows need φ (each change costs a refresh of v):
                # on while at most 1/screen_factor of the last block needed it
                screen = self.screen_factor * need <= stop - start
                start = stop
        return changes

    @property
    def z(self):
        return self.pa.w

    @property
    def b(self):
        return self.pa.b

    @property
    def n_updates(self):
        return self.pa.n_updates

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def decision_function(self, X):
        """f(x) = zᵀφ(x) + b for every row of X."""
        return self.feature_map.transform_rows(X) @ self.pa.w + self.pa.b

    def get_state(self):
        return {"z": self.pa.w.copy(), "b": self.pa.b, "t": self.pa.t,
                "n_updates": self.pa.n_updates, "n_kernel_evals": self.kernel.n_evals}

    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse,
                "variant": self.variant, "C": self.C,
                "kernel": self.kernel.kind, "gamma": self.kernel.gamma,
                "degree": self.kernel.degree, "coef0": self.kernel.coef0, "eps": self.eps,
                "departures": dict(self.departures)}

    def save_state(self):
        self._check_ready()
        data = save_reduced_set(self.feature_map.reduced)
        data.update({"linear_" + k: v for k, v in self.pa.save_state().items()})
        data["n_kernel_evals"] = self.kernel.n_evals
        return data

    def load_state(self, data):
        self._build(load_reduced_set(data, self.n_features))  # (v_fresh = False)
        self.pa.load_state({k[len("linear_"):]: v for k, v in data.items()
                            if k.startswith("linear_")})
        self.kernel.n_evals = int(data["n_kernel_evals"])


def save_reduced_set(reduced):
    """Ã as plain arrays (dense: ``reduced``; CSR: its data, indices and indptr), the
    format of the reference's ``save_reduced_set``."""
    if sp.issparse(reduced):
        return {"reduced_data": np.asarray(reduced.data, dtype=np.float64).copy(),
                "reduced_indices": np.asarray(reduced.indices, dtype=np.int32).copy(),
                "reduced_indptr": np.asarray(reduced.indptr, dtype=np.int64).copy()}
    return {"reduced": np.array(reduced, dtype=np.float64)}


def load_reduced_set(data, Py_ssize_t n_features):
    """The inverse of :func:`save_reduced_set`."""
    if "reduced" in data:
        return np.ascontiguousarray(data["reduced"], dtype=np.float64)
    indptr = np.asarray(data["reduced_indptr"])
    return sp.csr_matrix((np.asarray(data["reduced_data"], dtype=np.float64),
                          np.asarray(data["reduced_indices"], dtype=np.int32), indptr),
                         shape=(indptr.shape[0] - 1, n_features))


# deferred terms of the full covariance: rank-one updates of the factor pending until
# the next solve (or this many), Welford terms of a class scatter pending until the next
# refresh (or this many); flushing is exact (see _rkpa_ldl_update_batch, _rkpa_syr_batch)
cdef Py_ssize_t FACTOR_PENDING = 16
cdef Py_ssize_t SCATTER_PENDING = 32


cdef class KernelRowProximalPAm(PAmState):
    """The linear family's compiled PAm on φ(x), with the statistics of the kernel rows
    K(Ã, x) (``kernel_row`` points at the current one) and the proximal model
    z_p = Λ^{1/2} Pᵀ ũ_p (twin of the reference's ``_KernelRowProximalPAm``).

    ``covariance="full"`` also keeps the scatter Σ (k − M̃)(k − M̃)ᵀ per class (Welford
    rank-one terms (n−1)/n · d dᵀ, upper triangles, the lower ones filled when read) and
    S̃ = S₊/(c₊ − 1) + S₋/(c₋ − 1) + μI factored as L D Lᵀ (kept in one row-major
    matrix: D on the diagonal, Lᵀ above it), a rank-one update per example, LAPACK
    ``dpotrf`` at a refresh (the reference's ``needs_refresh``: O(log n) per class), two
    triangular solves per update.  Both kinds of terms are deferred: an example appends
    its d (and α = (n−1)/n/(c_y − 1)) to a buffer, and the factor's updates are applied
    together when the factor is next needed -- at the next PA update, or when
    FACTOR_PENDING are waiting -- the scatter's at the next refresh or when
    SCATTER_PENDING are waiting (``_rkpa_ldl_update_batch``, ``_rkpa_syr_batch``: the
    matrix is read and written once per batch, not once per example).  Applying them is
    exact: every entry gets the same operations in the same order however the terms are
    batched, so the state does not depend on when they are applied (``get_state`` and
    ``save_state`` apply them; tested bit for bit)."""

    cdef ReducedKernelMap feature_map
    cdef const double* kernel_row
    cdef object u_p
    cdef double* u_p_data
    cdef readonly str covariance
    cdef bint full
    cdef readonly double refresh_growth  # departures["refresh_growth"]
    cdef readonly double shrinkage      # departures["shrinkage"]
    cdef object scatter_pos_            # Σ (k − M̃)(k − M̃)ᵀ of each class (full covariance;
    cdef object scatter_neg_            # upper triangles, pending terms not yet added)
    cdef double* scatter_pos_data
    cdef double* scatter_neg_data
    cdef bint mirrored                  # the lower triangles are up to date
    cdef object ldl_u                   # D on the diagonal, Lᵀ above it (zeros: no factor)
    cdef double* ldl_u_data
    cdef readonly long long chol_n_pos  # c₊, c₋ of the last refresh (0: no factor)
    cdef readonly long long chol_n_neg
    cdef readonly double chol_mu        # μ of the last refresh
    cdef object pending                 # the buffers of the deferred terms and scratch
    cdef double* fx_data                # FACTOR_PENDING x m̃: x_j of the factor's updates
    cdef double* ft_data                # FACTOR_PENDING: t_j = 1/α_j
    cdef Py_ssize_t n_fx
    cdef double* sd_data                # 2 x SCATTER_PENDING x m̃: d_j of each class
    cdef double* sw_data                # 2 x SCATTER_PENDING: (n−1)/n of each d_j
    cdef Py_ssize_t n_sd[2]
    cdef double* pb_data                # 4 RKPA_NB FACTOR_PENDING: the update's scratch
    cdef double* wa_data                # SCATTER_PENDING: the scatter's scratch

    def __init__(self, ReducedKernelMap feature_map, int variant=1, double C=1.0,
                 double gamma=0.1, covariance="diagonal", departures=None):
        super().__init__(feature_map.n_reduced, False, variant, C, gamma, True, departures)
        cdef Py_ssize_t m = feature_map.n_reduced
        cdef Py_ssize_t F = FACTOR_PENDING, S = SCATTER_PENDING
        self.feature_map = feature_map
        self.u_p = np.zeros(m)
        self.u_p_data = _buffer(self.u_p)
        self.kernel_row = NULL
        self.covariance = covariance
        self.full = covariance == "full"
        self.refresh_growth = self.departures["refresh_growth"]
        self.shrinkage = self.departures["shrinkage"]
        self.mirrored = True
        self.chol_n_pos = self.chol_n_neg = 0
        self.chol_mu = 0.0
        self.n_fx = self.n_sd[0] = self.n_sd[1] = 0
        if self.full:
            self.scatter_pos_ = np.zeros((m, m))
            self.scatter_neg_ = np.zeros((m, m))
            self.ldl_u = np.zeros((m, m))
            self.scatter_pos_data = _buffer(self.scatter_pos_)
            self.scatter_neg_data = _buffer(self.scatter_neg_)
            self.ldl_u_data = _buffer(self.ldl_u)
            self.pending = np.zeros(F * m + F + 2 * S * m + 2 * S + 4 * RKPA_NB * F + S)
            self.fx_data = _buffer(self.pending)
            self.ft_data = self.fx_data + F * m
            self.sd_data = self.ft_data + F
            self.sw_data = self.sd_data + 2 * S * m
            self.pb_data = self.sw_data + 2 * S
            self.wa_data = self.pb_data + 4 * RKPA_NB * F

    cdef void _add_statistics(self, const int* xi, const double* xv, Py_ssize_t nnz,
                              double y) noexcept nogil:
        cdef Py_ssize_t i, m = self.n_features
        cdef Py_ssize_t cls = 0 if y > 0 else 1
        cdef long long n_old, c
        cdef double weight
        cdef const double* k = self.kernel_row
        cdef double* total
        cdef double* d
        if not self.full:
            # the statistics are those of K(Ã, x), not of φ(x)
            PAmState._add_statistics(self, NULL, k, nnz, y)
            return
        n_old = self.n_pos if y > 0 else self.n_neg
        d = self.sd_data + (cls * SCATTER_PENDING + self.n_sd[cls]) * m
        if n_old > 0:
            # d = k − M̃, the class mean before this example
            total = self.sum_pos_data if y > 0 else self.sum_neg_data
            for i in range(m):
                d[i] = k[i] - total[i] / <double> n_old
        PAmState._add_statistics(self, NULL, k, nnz, y)
        if n_old == 0:
            return
        # Welford: S ← S + (n−1)/n · d dᵀ (deferred: the term joins the class's buffer)
        weight = n_old / (n_old + 1.0)
        self.sw_data[cls * SCATTER_PENDING + self.n_sd[cls]] = weight
        self.n_sd[cls] += 1
        self.mirrored = False
        if self._needs_refresh():
            self._flush_scatter()
            self._refresh()
            return
        if self.chol_n_pos > 0:
            # S̃ gains α d dᵀ, α = weight/(c_y − 1): a rank-one update of the factor,
            # deferred until it is needed (t = 1/α)
            c = self.chol_n_pos if y > 0 else self.chol_n_neg
            for i in range(m):
                self.fx_data[self.n_fx * m + i] = d[i]
            self.ft_data[self.n_fx] = (c - 1) / weight
            self.n_fx += 1
            if self.n_fx == FACTOR_PENDING:
                self._flush_factor()
        if self.n_sd[cls] == SCATTER_PENDING:
            self._flush_scatter()

    cdef void _flush_factor(self) noexcept nogil:
        """Apply the pending rank-one updates of the factor."""
        if self.n_fx > 0:
            _rkpa_ldl_update_batch(self.ldl_u_data, self.n_features, self.fx_data,
                                   self.ft_data, self.n_fx, self.pb_data)
            self.n_fx = 0

    cdef void _flush_scatter(self) noexcept nogil:
        """Add the pending Welford terms to the class scatters."""
        cdef Py_ssize_t m = self.n_features
        if self.n_sd[0] > 0:
            _rkpa_syr_batch(self.scatter_pos_data, m, self.sd_data, self.sw_data,
                            self.n_sd[0], self.wa_data)
            self.n_sd[0] = 0
        if self.n_sd[1] > 0:
            _rkpa_syr_batch(self.scatter_neg_data, m, self.sd_data + SCATTER_PENDING * m,
                            self.sw_data + SCATTER_PENDING, self.n_sd[1], self.wa_data)
            self.n_sd[1] = 0

    cdef void _flush(self) noexcept nogil:
        if self.full:
            self._flush_scatter()
            self._flush_factor()

    cdef bint _needs_refresh(self) noexcept nogil:
        """The reference's ``needs_refresh``."""
        if self.n_pos < 2 or self.n_neg < 2:
            return False
        return (self.chol_n_pos == 0
                or self.n_pos - 1 > self.refresh_growth * <double> (self.chol_n_pos - 1)
                or self.n_neg - 1 > self.refresh_growth * <double> (self.chol_n_neg - 1))

    cdef void _refresh(self) noexcept nogil:
        """c ← n; μ ← shrinkage · mean variance; the factor of COV₊ + COV₋ + μI by
        ``dpotrf`` (Cholesky: D = its diagonal squared, L = its columns over their diagonal
        entries); pending updates of the old factor are dropped (no factor when there is no
        variance: tried again at the next example).  The scatters are up to date."""
        cdef Py_ssize_t i, j, m = self.n_features
        cdef double ap = 1.0 / <double> (self.n_pos - 1), an = 1.0 / <double> (self.n_neg - 1)
        cdef double trace = 0.0, mu, l, il
        cdef double* u = self.ldl_u_data
        cdef double* sp_ = self.scatter_pos_data
        cdef double* sn = self.scatter_neg_data
        cdef int im = <int> m, info = 0
        cdef char lower = b'L'
        self.chol_n_pos = self.chol_n_neg = 0
        self.chol_mu = 0.0
        self.n_fx = 0
        for i in range(m):
            trace += sp_[i * m + i] * ap + sn[i * m + i] * an
        if not trace > 0:
            for i in range(m * m):
                u[i] = 0.0
            return
        mu = self.shrinkage * trace / m  # the reference's ``ridge``
        # COV₊ + COV₋ + μI: the row-major upper triangle (LAPACK's column-major lower);
        # the row-major lower triangle stays zero
        for i in range(m):
            for j in range(i):
                u[i * m + j] = 0.0
            for j in range(i, m):
                u[i * m + j] = sp_[i * m + j] * ap + sn[i * m + j] * an
            u[i * m + i] += mu
        dpotrf(&lower, &im, u, &im, &info)
        if info != 0:  # not positive definite
            for i in range(m * m):
                u[i] = 0.0
            return
        for i in range(m):  # Cholesky → L D Lᵀ (row i of u: column i of the factor)
            l = u[i * m + i]
            il = 1.0 / l
            for j in range(i + 1, m):
                u[i * m + j] = u[i * m + j] * il
            u[i * m + i] = l * l
        self.chol_n_pos, self.chol_n_neg, self.chol_mu = self.n_pos, self.n_neg, mu

    cdef void _mirror(self) noexcept nogil:
        cdef Py_ssize_t i, j, m = self.n_features
        self._flush_scatter()
        if self.mirrored:
            return
        for i in range(m):
            for j in range(i + 1, m):
                self.scatter_pos_data[j * m + i] = self.scatter_pos_data[i * m + j]
                self.scatter_neg_data[j * m + i] = self.scatter_neg_data[i * m + j]
        self.mirrored = True

    cdef double _full_fisher_direction(self) noexcept nogil:
        """ũ_p = S̃⁻¹ (M̃₊ − M̃₋) into u_p_data by the factor; returns b_p."""
        cdef Py_ssize_t i, m = self.n_features
        cdef double n_pos = <double> self.n_pos, n_neg = <double> self.n_neg
        cdef double mpi, mni, bp = 0.0
        cdef double* mp = self.wp_data          # scratch: M̃₊ + M̃₋
        if self.n_pos < 2 or self.n_neg < 2 or self.chol_n_pos == 0:
            for i in range(m):
                self.u_p_data[i] = 0.0
            return 0.0
        self._flush_factor()
        for i in range(m):
            mpi = self.sum_pos_data[i] / n_pos
            mni = self.sum_neg_data[i] / n_neg
            self.u_p_data[i] = mpi - mni             # the right-hand side M̃₊ − M̃₋
            mp[i] = mpi + mni
        _rkpa_ldl_solve(self.ldl_u_data, m, self.u_p_data)
        for i in range(m):
            bp += self.u_p_data[i] * mp[i]
        return -0.5 * bp

    cdef double _ridged_quasi_direction(self) noexcept nogil:
        """ũ_i = (M̃₊ − M̃₋)_i / (s₊ + s₋ + μ)_i, μ = shrinkage · mean(s₊ + s₋), into
        u_p; returns b_p (PAmState._proximal's variances, then the ridge)."""
        cdef Py_ssize_t i, m = self.n_features
        cdef double n_pos = <double> self.n_pos, n_neg = <double> self.n_neg
        cdef double m_pos, m_neg, s_pos, s_neg, a_pos, a_neg, denom, total = 0.0, mu
        cdef double bp = 0.0
        cdef double tol_pos = self.variance_roundoff * (n_pos + 2)
        cdef double tol_neg = self.variance_roundoff * (n_neg + 2)
        cdef bint guard = self.variance_roundoff != 0.0
        if self.n_pos < 2 or self.n_neg < 2:
            for i in range(m):
                self.u_p_data[i] = 0.0
            return 0.0
        for i in range(m):  # the pooled variances, kept in u_p
            m_pos = self.sum_pos_data[i] / n_pos
            m_neg = self.sum_neg_data[i] / n_neg
            a_pos = self.sumsq_pos_data[i] / (n_pos - 1)
            a_neg = self.sumsq_neg_data[i] / (n_neg - 1)
            s_pos = a_pos - n_pos / (n_pos - 1) * (m_pos * m_pos)
            s_neg = a_neg - n_neg / (n_neg - 1) * (m_neg * m_neg)
            if guard and not s_pos > tol_pos * a_pos:
                s_pos = 0.0
            if guard and not s_neg > tol_neg * a_neg:
                s_neg = 0.0
            self.u_p_data[i] = s_pos + s_neg
            total += s_pos + s_neg
        mu = self.shrinkage * total / m  # the reference's ``ridge``
        for i in range(m):
            m_pos = self.sum_pos_data[i] / n_pos
            m_neg = self.sum_neg_data[i] / n_neg
            denom = self.u_p_data[i] + mu
            self.u_p_data[i] = (m_pos - m_neg) / denom if denom > 0 else 0.0
            bp += self.u_p_data[i] * (m_pos + m_neg)
        return -0.5 * bp

    cdef double _proximal(self) noexcept nogil:
        cdef Py_ssize_t i, m = self.n_features
        cdef double bp
        if self.full:
            bp = self._full_fisher_direction()
        elif self.shrinkage == 0.0:
            # quasi-KFD on the kernel rows (PAm's quasi-LDA formula): ũ_p into wp, b_p
            bp = PAmState._proximal(self)
            for i in range(m):
                self.u_p_data[i] = self.wp_data[i]
        else:
            # the departure shrinkage: the same quotient with μ added to every pooled
            # variance (the reference's ``_ridged_quasi_direction``)
            bp = self._ridged_quasi_direction()
        self.feature_map._to_features(self.u_p_data, self.wp_data)
        return bp

    @property
    def scatter_pos(self):
        """Σ (k − M̃)(k − M̃)ᵀ over the positive examples (full covariance)."""
        if not self.full:
            return None
        self._mirror()
        return self.scatter_pos_

    @property
    def scatter_neg(self):
        """Σ (k − M̃)(k − M̃)ᵀ over the negative examples (full covariance)."""
        if not self.full:
            return None
        self._mirror()
        return self.scatter_neg_

    @property
    def ldl(self):
        """S̃'s factor as one lower triangular matrix: L's entries below the diagonal, D on
        it (zeros before the first refresh)."""
        if not self.full:
            return None
        self._flush()
        return self.ldl_u.T.copy()

    @property
    def chol(self):
        """L D^{1/2}, the lower Cholesky factor of S̃ (zeros before the first refresh)."""
        if not self.full:
            return None
        self._flush()
        root = np.sqrt(np.diag(self.ldl_u))
        L = np.triu(self.ldl_u, 1).T + np.eye(self.n_features)
        return L * root if self.chol_n_pos else np.zeros_like(L)

    def shrunk_covariance(self):
        """S̃ = S₊/(c₊ − 1) + S₋/(c₋ − 1) + μI, the matrix L D Lᵀ factors (None before the
        first refresh)."""
        if not self.full or self.chol_n_pos == 0:
            return None
        self._mirror()
        return (self.scatter_pos_ / (self.chol_n_pos - 1)
                + self.scatter_neg_ / (self.chol_n_neg - 1)
                + self.chol_mu * np.eye(self.n_features))

    def get_state(self):
        state = PAmState.get_state(self)
        if self.full:
            self._flush()
            self._mirror()
            state.update(scatter_pos=self.scatter_pos_.copy(),
                         scatter_neg=self.scatter_neg_.copy(), chol=self.chol, ldl=self.ldl,
                         chol_n_pos=self.chol_n_pos, chol_n_neg=self.chol_n_neg,
                         chol_mu=self.chol_mu)
        return state

    def load_state(self, data):
        PAmState.load_state(self, data)
        cdef Py_ssize_t m = self.n_features
        if self.full:
            self.scatter_pos_[:] = data["scatter_pos"]
            self.scatter_neg_[:] = data["scatter_neg"]
            self.mirrored = True
            self.n_fx = self.n_sd[0] = self.n_sd[1] = 0
            if "ldl" in data:  # the factor as kept (bit for bit)
                self.ldl_u[:] = np.triu(np.asarray(data["ldl"], dtype=np.float64).T)
            else:  # a state saved with the Cholesky factor only
                L = np.asarray(data["chol"], dtype=np.float64)
                diag = np.diag(L).copy()
                safe = np.where(diag != 0, diag, 1.0)
                self.ldl_u[:] = np.triu((L / safe).T, 1) + np.diag(diag * diag)
            self.chol_n_pos = int(data["chol_n_pos"])
            self.chol_n_neg = int(data["chol_n_neg"])
            self.chol_mu = float(data["chol_mu"])


cdef class ReducedKernelPAmState(ReducedKernelPAState):
    """Twin of :class:`refsvm.linear.reduced_kernel_pa.ReducedKernelPAmState`
    (``covariance="diagonal"`` or ``"full"``)."""

    cdef readonly double proximal_weight
    cdef readonly str covariance

    def __init__(self, Py_ssize_t n_features, bint sparse=False, reduced=None, int variant=1,
                 double C=1.0, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
                 double eps=0.0, double proximal_weight=0.1, covariance="diagonal",
                 departures=None):
        if covariance not in ("diagonal", "full"):
            raise ValueError(f"covariance must be 'diagonal' or 'full'; got {covariance!r}")
        self.proximal_weight = proximal_weight
        self.covariance = covariance
        super().__init__(n_features, sparse, reduced, variant, C, kernel, gamma, degree,
                         coef0, eps, departures)
        self.screen_factor = 8 if covariance == "diagonal" else 2

    def _linear_state(self):
        return KernelRowProximalPAm(self.feature_map, self.variant, self.C,
                                    self.proximal_weight, self.covariance, self.departures)

    cdef int _learn(self, const double* k, const double* phi, double y) except -1 nogil:
        (<KernelRowProximalPAm> self.pa).kernel_row = k
        if self._passive(phi, y):
            self._pass(k, y)
            return 0
        self.v_fresh = False
        return self.pa._step(NULL, phi, self.feature_map.n_reduced, y)

    cdef void _pass(self, const double* k, double y) noexcept nogil:
        # a passive round: counted, and its kernel row joins the class statistics
        (<KernelRowProximalPAm> self.pa).kernel_row = k
        self.pa.t += 1
        (<KernelRowProximalPAm> self.pa)._add_statistics(NULL, k, self.feature_map.n_reduced,
                                                         y)

    def get_state(self):
        state = ReducedKernelPAState.get_state(self)
        pam = self.pa.get_state()
        for key in pam:
            if key not in ("w", "b", "t", "n_updates"):
                state[key] = pam[key]
        return state

    def init_params(self):
        params = ReducedKernelPAState.init_params(self)
        params.update(proximal_weight=self.proximal_weight, covariance=self.covariance)
        return params
