"""Compiled twin of :mod:`refsvm.linear.reduced_kernel_pa` (RKPA, RKPAm).

Same classes, attributes and methods as the reference.  The learning itself is the
linear family's compiled PA / PAm (:mod:`refsvm.linear._passive_aggressive`, cimported):
``ReducedKernelPAState`` computes φ(x) = Λ^{-1/2} Pᵀ K(Ã, x) and hands (φ(x), 1) to
``PAState._step``; the RKPAm state hands it to a ``PAmState`` whose statistics and
proximal model are those of the kernel rows (``KernelRowProximalPAm``: the diagonal
"quasi-KFD", or with ``covariance="full"`` Welford rank-one updates of each class's
scatter and of a Cholesky factor of the shrunk covariance, LAPACK ``dpotrf`` only at the
reference's refreshes, two triangular solves per update).  Both states make the
reference's scale-aware passive test (``PASSIVE_RTOL``) before the linear step.

Where the time goes, and what is done about it (per example, m̃ reduced points):

1. K(Ã, x), computed here rather than by the core's pairwise kernel: Ã is kept
   transposed (d × m̃, feature-major), so that for few features (d ≤ 8) the squared
   distances Σ_j (ã_ij − x_j)² run down contiguous columns (summed directly, as the
   reference does), and otherwise the cross products x·ã come from a register-tiled
   matrix-vector product (dense) or one axpy per non-zero (CSR), then
   ‖x‖² + ‖ã‖² − 2x·ã clipped at 0; then a vectorised ``exp`` (``_rkpa_exp``:
   Cody–Waite reduction and a degree-13 polynomial, within 2.3e-16 relative of libm's).
   These C loops are compiled twice on x86-64 Linux with GCC ≥ 12 (AVX2/FMA and the
   baseline; the loader picks one).  Very wide data (d·m̃ > 2^24) uses the core's
   pairwise kernel.
2. The screen: most examples of an easy stream lie far outside the margin.  With
   v = Tᵀz kept (T = Λ^{-1/2}Pᵀ; recomputed after each change of z), zᵀφ(x) = vᵀK(Ã, x)
   costs m̃, and a loss below −(a bound on the round-off of both twins' loss) is passive
   whatever the rounding: no φ(x) is needed.  Other examples get φ(x) = T K(Ã, x), an
   m̃ × m̃ product.  The screen only saves time: an example gets the same φ(x), the same
   passive test and the same step whether or not it was screened and whatever call or
   block it came in (the products are fixed-order C loops, not BLAS, for that reason),
   so ``run`` equals a stream of ``step`` calls bit for bit.
3. The linear PA / PAm step (O(m̃), the linear family's).
4. RKPAm with the full covariance: per example the scatter's and the factor's rank-one
   updates (O(m̃²), one fused pass: ``_rkpa_chol_update_syr``), whether passive or
   not; per update two triangular solves and z_p = Λ^{1/2}Pᵀũ_p (O(m̃²)); a Cholesky
   factorisation (O(m̃³)) only at a refresh, O(log n) times per class.  Before, every
   update solved the m̃ × m̃ system anew (``dposv``, O(m̃³)).

Prediction (``transform_rows``, ``decision_function``) uses the reference's arithmetic --
the core's kernel and one BLAS ``dgemm`` per block -- so a model predicts the same in
both twins.
"""
from libc.math cimport fabs, pow, sqrt
from scipy.linalg.cython_blas cimport dgemm
from scipy.linalg.cython_lapack cimport dpotrf

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport CKernel, RowStore, StreamLearner
from refsvm.linear._passive_aggressive cimport LinearModel, PAmState, PAState

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    #include <string.h>
    #if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 \\
        && defined(__x86_64__) && defined(__linux__)
    #define RKPA_VEC __attribute__((target_clones("arch=x86-64-v3", "default"), \\
                                    optimize("no-trapping-math")))
    #elif defined(__GNUC__) && !defined(__clang__)
    #define RKPA_VEC __attribute__((optimize("no-trapping-math")))
    #else
    #define RKPA_VEC
    #endif

    /* v[i] = exp(v[i]): x = n ln2 + r (Cody-Waite, |r| <= ln2/2), e^r by its Taylor
       polynomial of degree 13 (truncation < 5e-18), 2^n by the exponent bits.  Below
       -708 the result is 0 (libm gives subnormals < 3.3e-308 there). */
    RKPA_VEC
    static void _rkpa_exp(double *restrict v, Py_ssize_t n) {
        const double log2e = 1.4426950408889634, shift = 6755399441055744.0;
        const double ln2hi = 6.93147180369123816490e-01, ln2lo = 1.90821492927058770002e-10;
        for (Py_ssize_t i = 0; i < n; i++) {
            double x0 = v[i];
            double x = x0 < -708.0 ? -708.0 : x0;
            x = x > 709.0 ? 709.0 : x;
            double t = x * log2e + shift;
            double k = t - shift;
            double r = (x - k * ln2hi) - k * ln2lo;
            double p = 1.0 / 6227020800.0;
            p = p * r + 1.0 / 479001600.0;
            p = p * r + 1.0 / 39916800.0;
            p = p * r + 1.0 / 3628800.0;
            p = p * r + 1.0 / 362880.0;
            p = p * r + 1.0 / 40320.0;
            p = p * r + 1.0 / 5040.0;
            p = p * r + 1.0 / 720.0;
            p = p * r + 1.0 / 120.0;
            p = p * r + 1.0 / 24.0;
            p = p * r + 1.0 / 6.0;
            p = p * r + 0.5;
            p = p * r + 1.0;
            p = p * r + 1.0;
            uint64_t b;
            memcpy(&b, &t, 8);
            b = (b + (uint64_t)(1023 - 0x4338000000000000LL)) << 52;
            double s;
            memcpy(&s, &b, 8);
            v[i] = x0 < -708.0 ? 0.0 : p * s;
        }
    }

    /* out[i] = scale * sum_j (AT[j m + i] - x[j])^2: squared distances summed directly */
    RKPA_VEC
    static void _rkpa_sqdist(const double *restrict AT, Py_ssize_t m, Py_ssize_t d,
                             const double *restrict x, double scale,
                             double *restrict out) {
        for (Py_ssize_t i = 0; i < m; i++) out[i] = 0.0;
        for (Py_ssize_t j = 0; j < d; j++) {
            const double xj = x[j];
            const double *restrict a = AT + j * m;
            for (Py_ssize_t i = 0; i < m; i++) {
                double t = a[i] - xj;
                out[i] += t * t;
            }
        }
        for (Py_ssize_t i = 0; i < m; i++) out[i] *= scale;
    }

    /* out[i] = sum_{j < n_in} x[j] A[j m + i] (= A^T x for a row-major n_in x m matrix A).
       Each out[i] is accumulated over j in order, one multiply-add (fused in the AVX2/FMA
       clone) per term, whatever the tile it falls in: the result of a row never depends on
       how rows are grouped.  Tiles of 16 outputs stay in registers while A streams by. */
    typedef double rkpa_v4 __attribute__((vector_size(32), aligned(8)));
    RKPA_VEC
    static void _rkpa_matvec(const double *restrict A, Py_ssize_t n_in, Py_ssize_t m,
                             const double *restrict x, double *restrict out) {
        Py_ssize_t i = 0, j;
        const rkpa_v4 zero = {0.0, 0.0, 0.0, 0.0};
        for (; i + 16 <= m; i += 16) {
            rkpa_v4 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            for (j = 0; j < n_in; j++) {
                const double *p = A + j * m + i;
                const rkpa_v4 xj = {x[j], x[j], x[j], x[j]};
                a0 = a0 + xj * *(const rkpa_v4 *) p;
                a1 = a1 + xj * *(const rkpa_v4 *) (p + 4);
                a2 = a2 + xj * *(const rkpa_v4 *) (p + 8);
                a3 = a3 + xj * *(const rkpa_v4 *) (p + 12);
            }
            memcpy(out + i, &a0, 32);
            memcpy(out + i + 4, &a1, 32);
            memcpy(out + i + 8, &a2, 32);
            memcpy(out + i + 12, &a3, 32);
        }
        for (; i + 4 <= m; i += 4) {
            rkpa_v4 a0 = zero;
            for (j = 0; j < n_in; j++) {
                const rkpa_v4 xj = {x[j], x[j], x[j], x[j]};
                a0 = a0 + xj * *(const rkpa_v4 *) (A + j * m + i);
            }
            memcpy(out + i, &a0, 32);
        }
        for (; i < m; i++) {
            double a = 0.0;
            for (j = 0; j < n_in; j++) a = a + x[j] * A[j * m + i];
            out[i] = a;
        }
    }

    /* (sum_i v[i] k[i], sum_i k[i]^2) in four lanes: the screen's numbers (any order of
       summation will do there) */
    RKPA_VEC
    static void _rkpa_dot_and_sqnorm(const double *restrict v, const double *restrict k,
                                     Py_ssize_t m, double *dot, double *sq) {
        double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        Py_ssize_t i = 0;
        for (; i + 4 <= m; i += 4) {
            d0 += v[i] * k[i]; d1 += v[i + 1] * k[i + 1];
            d2 += v[i + 2] * k[i + 2]; d3 += v[i + 3] * k[i + 3];
            s0 += k[i] * k[i]; s1 += k[i + 1] * k[i + 1];
            s2 += k[i + 2] * k[i + 2]; s3 += k[i + 3] * k[i + 3];
        }
        for (; i < m; i++) { d0 += v[i] * k[i]; s0 += k[i] * k[i]; }
        *dot = (d0 + d1) + (d2 + d3);
        *sq = (s0 + s1) + (s2 + s3);
    }

    /* out[i] = sum_nz AT[xi m + i] xv (a CSR row) */
    RKPA_VEC
    static void _rkpa_dots_csr(const double *restrict AT, Py_ssize_t m, const int *xi,
                               const double *restrict xv, Py_ssize_t nnz,
                               double *restrict out) {
        for (Py_ssize_t i = 0; i < m; i++) out[i] = 0.0;
        for (Py_ssize_t q = 0; q < nnz; q++) {
            const double v = xv[q];
            const double *restrict a = AT + (Py_ssize_t) xi[q] * m;
            for (Py_ssize_t i = 0; i < m; i++) out[i] += a[i] * v;
        }
    }

    /* S[i m + j] += w (d[i] d[j]) for j >= i: the upper triangle of a rank-one update */
    RKPA_VEC
    static void _rkpa_syr_upper(double *restrict S, Py_ssize_t m, const double *restrict d,
                                double w) {
        for (Py_ssize_t i = 0; i < m; i++) {
            const double di = d[i];
            double *restrict row = S + i * m;
            for (Py_ssize_t j = i; j < m; j++) row[j] += w * (di * d[j]);
        }
    }

    /* U (row-major upper, row k = column k of the lower Cholesky factor L = U^T) <- the
       factor of L L^T + x x^T; x is overwritten.  Column k: r = sqrt(L_kk^2 + x_k^2),
       c = r / L_kk, s = x_k / L_kk; L_kk = r; below it L_ik = (L_ik + s x_i) / c (times
       1/c = L_kk / r here: a division per column, not per entry) and x_i = c x_i - s L_ik
       (the reference's cholesky_rank_one_update).  With S (not NULL), row k of S's upper
       triangle also gets w (d_k d_j) on the way (_rkpa_syr_upper's numbers): that work
       does not wait for the column's square root and division, and fills their latency. */
    RKPA_VEC
    static void _rkpa_chol_update_syr(double *restrict U, Py_ssize_t m, double *restrict x,
                                      double *restrict S, const double *restrict d,
                                      double w) {
        Py_ssize_t k, i, j;
        /* two columns at a time: x_i passes through both rotations in a register (the
           same operations, in the same order, as one column after the other) */
        for (k = 0; k < m; k += 2) {
            if (S) {
                for (j = k; j < m && j < k + 2; j++) {
                    const double dj = d[j];
                    double *restrict srow = S + j * m;
                    for (i = j; i < m; i++) srow[i] += w * (dj * d[i]);
                }
            }
            double *restrict r0 = U + k * m;
            const double l0 = r0[k], inv0 = 1.0 / l0, x0 = x[k];
            const double rad0 = sqrt(l0 * l0 + x0 * x0);
            const double c0 = rad0 * inv0, s0 = x0 * inv0, ic0 = l0 / rad0;
            r0[k] = rad0;
            if (k + 1 == m) break;
            double *restrict r1 = r0 + m;
            const double a = (r0[k + 1] + s0 * x[k + 1]) * ic0;
            r0[k + 1] = a;
            const double x1 = c0 * x[k + 1] - s0 * a;
            const double l1 = r1[k + 1], inv1 = 1.0 / l1;
            const double rad1 = sqrt(l1 * l1 + x1 * x1);
            const double c1 = rad1 * inv1, s1 = x1 * inv1, ic1 = l1 / rad1;
            r1[k + 1] = rad1;
            x[k + 1] = x1;
            for (i = k + 2; i < m; i++) {
                double xi = x[i];
                const double p = (r0[i] + s0 * xi) * ic0;
                r0[i] = p;
                xi = c0 * xi - s0 * p;
                const double q = (r1[i] + s1 * xi) * ic1;
                r1[i] = q;
                x[i] = c1 * xi - s1 * q;
            }
        }
    }

    /* b <- (U^T U)^{-1} b for U row-major upper (L = U^T): L y = b by columns of L (rows
       of U, contiguous axpys), then U u = y by rows (dot products in vector lanes: a fixed
       order, not a chain of m dependent additions); two rows at a time, the reciprocals
       of the diagonal first (inv, m doubles of scratch): the chain from one row to the
       next is short. */
    RKPA_VEC
    static void _rkpa_chol_solve(const double *restrict U, Py_ssize_t m, double *restrict b,
                                 double *restrict inv) {
        Py_ssize_t k, i;
        for (k = 0; k < m; k++) inv[k] = 1.0 / U[k * m + k];
        for (k = 0; k + 1 < m; k += 2) {
            const double *restrict r0 = U + k * m, *restrict r1 = r0 + m;
            const double b0 = b[k] * inv[k];
            const double b1 = (b[k + 1] - b0 * r0[k + 1]) * inv[k + 1];
            b[k] = b0;
            b[k + 1] = b1;
            for (i = k + 2; i < m; i++) b[i] = (b[i] - b0 * r0[i]) - b1 * r1[i];
        }
        if (k < m) b[k] = b[k] * inv[k];
        const rkpa_v4 zero = {0.0, 0.0, 0.0, 0.0};
        for (k = m - 1; k >= 1; k -= 2) {
            const double *restrict r0 = U + k * m, *restrict r1 = r0 - m;  /* rows k, k-1 */
            rkpa_v4 a0 = zero, a1 = zero, c0 = zero, c1 = zero;
            for (i = k + 1; i + 8 <= m; i += 8) {
                const rkpa_v4 u0 = *(const rkpa_v4 *) (b + i), u1 = *(const rkpa_v4 *) (b + i + 4);
                a0 = a0 + *(const rkpa_v4 *) (r0 + i) * u0;
                a1 = a1 + *(const rkpa_v4 *) (r0 + i + 4) * u1;
                c0 = c0 + *(const rkpa_v4 *) (r1 + i) * u0;
                c1 = c1 + *(const rkpa_v4 *) (r1 + i + 4) * u1;
            }
            a0 = a0 + a1;
            c0 = c0 + c1;
            double t0 = (a0[0] + a0[1]) + (a0[2] + a0[3]);
            double t1 = (c0[0] + c0[1]) + (c0[2] + c0[3]);
            for (; i < m; i++) {
                t0 += r0[i] * b[i];
                t1 += r1[i] * b[i];
            }
            const double uk = (b[k] - t0) * inv[k];
            b[k] = uk;
            b[k - 1] = (b[k - 1] - t1 - r1[k] * uk) * inv[k - 1];
        }
        if (k == 0) {
            double t = 0.0;
            for (i = 1; i < m; i++) t += U[i] * b[i];
            b[0] = (b[0] - t) * inv[0];
        }
    }

    /* out[i] = -gamma * max(xn + an[i] - 2 out[i], 0): RBF exponent from cross products */
    RKPA_VEC
    static void _rkpa_expanded(const double *restrict an, Py_ssize_t m, double xn,
                               double gamma, double *restrict out) {
        for (Py_ssize_t i = 0; i < m; i++) {
            double s = (xn + an[i]) - 2.0 * out[i];
            out[i] = -gamma * (s > 0.0 ? s : 0.0);
        }
    }
    """
    void _rkpa_exp(double* v, Py_ssize_t n) noexcept nogil
    void _rkpa_sqdist(const double* AT, Py_ssize_t m, Py_ssize_t d, const double* x,
                      double scale, double* out) noexcept nogil
    void _rkpa_matvec(const double* A, Py_ssize_t n_in, Py_ssize_t m, const double* x,
                      double* out) noexcept nogil
    void _rkpa_dots_csr(const double* AT, Py_ssize_t m, const int* xi, const double* xv,
                        Py_ssize_t nnz, double* out) noexcept nogil
    void _rkpa_expanded(const double* an, Py_ssize_t m, double xn, double gamma,
                        double* out) noexcept nogil
    void _rkpa_dot_and_sqnorm(const double* v, const double* k, Py_ssize_t m, double* dot,
                              double* sq) noexcept nogil
    void _rkpa_syr_upper(double* S, Py_ssize_t m, const double* d, double w) noexcept nogil
    void _rkpa_chol_update_syr(double* U, Py_ssize_t m, double* x, double* S,
                               const double* d, double w) noexcept nogil
    void _rkpa_chol_solve(const double* U, Py_ssize_t m, double* b, double* inv) noexcept nogil

# rows per block of ``run`` (the kernel rows and features of a block stay in cache)
cdef Py_ssize_t BLOCK = 256
# up to this many features, squared distances are summed directly (else cross products)
cdef Py_ssize_t DIRECT_FEATURES = 8
# a dense transposed copy of Ã is kept while d·m̃ is at most this (else pairwise kernel)
cdef Py_ssize_t DENSE_REDUCED_LIMIT = 1 << 24

# kernel codes of the block path (the core's order)
cdef enum:
    LINEAR = 0
    RBF = 1
    POLY = 2

#: as the reference's SINGULAR_RATIO
SINGULAR_RATIO = np.finfo(np.float64).eps
#: as the reference's PASSIVE_RTOL (the scale-aware passive test)
PASSIVE_RTOL = 1e-9
#: as the reference's SHRINKAGE (the full covariance's ridge, relative to its mean variance)
SHRINKAGE = 0.1
#: as the reference's REFRESH_GROWTH (when the full covariance's factor is recomputed);
#: read when a state is made
REFRESH_GROWTH = 1.1
cdef double _PASSIVE_RTOL = PASSIVE_RTOL
cdef double _SHRINKAGE = SHRINKAGE


class _OneBlasThread:
    """BLAS on one thread for the duration of a ``with``.  The blocks here are small
    (256 x m̃ times m̃ x m̃): OpenBLAS's threads cost more than they give, and on a loaded
    machine their spinning makes a pass ten times slower.  The libraries are found once
    (threadpoolctl); entering and leaving is then two calls per library."""

    libraries = None

    def __enter__(self):
        if _OneBlasThread.libraries is None:
            from threadpoolctl import ThreadpoolController
            _OneBlasThread.libraries = [lc for lc in ThreadpoolController().lib_controllers
                                        if lc.user_api == "blas"]
        self.saved = [(lc, lc.num_threads) for lc in _OneBlasThread.libraries]
        for lc, n in self.saved:
            if n != 1:
                lc.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        for lc, n in self.saved:
            if n != 1:
                lc.set_num_threads(n)
        return False


def _single_threaded_blas():
    return _OneBlasThread()


cdef inline double* _buffer(cnp.ndarray a) noexcept:
    return <double*> cnp.PyArray_DATA(a)


def _exp(x):
    """exp of every entry by the kernel block's vectorised exp (a test hook)."""
    out = np.array(x, dtype=np.float64, order="C", copy=True)
    _rkpa_exp(_buffer(out), out.size)
    return out


def _chol_update(L, x):
    """The lower Cholesky factor of L Lᵀ + x xᵀ by the full covariance's rank-one update
    (``_rkpa_chol_update_syr``) on copies (a test hook; the reference's
    ``cholesky_rank_one_update``)."""
    U = np.ascontiguousarray(np.triu(np.asarray(L, dtype=np.float64).T))
    xv = np.array(x, dtype=np.float64, order="C", copy=True)
    if U.ndim != 2 or U.shape[0] != U.shape[1] or xv.shape != (U.shape[0],):
        raise ValueError("L must be square and x of its size")
    _rkpa_chol_update_syr(_buffer(U), U.shape[0], _buffer(xv), NULL, NULL, 0.0)
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
        # K(Ã, Ã), one evaluation per pair i <= j
        K = np.empty((m, m))
        cdef double[:, ::1] Kv = K
        for i in range(m):
            for j in range(i, m):
                Kv[i, j] = self.kernel.k_rows(self.store, i, j)
                Kv[j, i] = Kv[i, j]
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
        """k = K(Ã, x) by the core's kernel, pair by pair (each evaluation counted)."""
        cdef Py_ssize_t i
        if self.store.sparse:
            for i in range(self.n_reduced):
                k[i] = self.kernel.k_row_csr(self.store, i, xi, xv, nnz)
        else:
            for i in range(self.n_reduced):
                k[i] = self.kernel.k_row_dense(self.store, i, xv)

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
        cdef Py_ssize_t j, m = self.n_reduced, d = self.n_features
        cdef double xn
        if self.kind == RBF and d <= DIRECT_FEATURES:
            _rkpa_sqdist(self.reduced_t_data, m, d, x, -self.gamma, k)
            _rkpa_exp(k, m)
            return
        _rkpa_matvec(self.reduced_t_data, d, m, x, k)
        if self.kind == RBF:
            xn = 0.0
            for j in range(d):
                xn += x[j] * x[j]
            _rkpa_expanded(self.reduced_sqnorms_data, m, xn, self.gamma, k)
            _rkpa_exp(k, m)
        else:
            self._finish(k, m)

    cdef void _kernel_block_dense(self, const double* Xd, const Py_ssize_t* rows,
                                  Py_ssize_t n_rows, double* K) noexcept nogil:
        """K[r] = K(Ã, X[rows[r]]) for a block of dense rows (row by row: the values of
        a row never depend on the block it is in)."""
        cdef Py_ssize_t r, m = self.n_reduced, d = self.n_features
        for r in range(n_rows):
            self._kernel_row(NULL, Xd + rows[r] * d, d, K + r * m)

    cdef void _features(self, const double* k, double* phi) noexcept nogil:
        """φ = T k (T = Λ^{-1/2}Pᵀ), by the fixed-order matvec (as every row, in ``step``
        and in ``run``)."""
        _rkpa_matvec(self.transform_t_data, self.n_reduced, self.n_reduced, k, phi)

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
                           Py_ssize_t n_rows, double* K) noexcept nogil:
        """K[r] = K(Ã, row rows[r]) for r < n_rows (counted)."""
        cdef Py_ssize_t r, i, lo, hi, m = fmap.n_reduced
        if not self.sparse:
            fmap._kernel_block_dense(self.dense_data, rows, n_rows, K)
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

    def __init__(self, Py_ssize_t n_features, bint sparse=False, reduced=None, int variant=1,
                 double C=1.0, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
                 double eps=0.0):
        self.n_features = n_features
        self.sparse = sparse
        self.variant = variant
        self.C = C
        self.eps = eps
        self.kernel = CKernel(kernel, gamma, degree, coef0)
        self.ready = False
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
                       fit_intercept=True)

    cdef bint _passive(self, const double* phi, double y) noexcept nogil:
        """ℓ ≤ PASSIVE_RTOL·(1 + |b| + Σ|z_i φ_i|): the reference's ``is_passive``."""
        cdef Py_ssize_t i
        cdef double s = 0.0, a = 0.0, t, b = self.pa.b
        cdef double* z = self.pa.w_data
        for i in range(self.feature_map.n_reduced):
            t = z[i] * phi[i]
            s += t
            a += fabs(t)
        return 1.0 - y * (s + b) <= _PASSIVE_RTOL * (1.0 + fabs(b) + a)

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
        return 1.0 - y * (g + b) < -1024.0 * m * 2.220446049250313e-16 * (
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
        Kb = np.empty((BLOCK, m))
        cdef double* kp = _buffer(Kb)
        with nogil:
            start = 0
            while start < n:
                stop = min(start + BLOCK, n)
                rows.kernel_block(self.feature_map, &od[start], stop - start, kp)
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
                    self.feature_map._features(kr, self.phi_data)
                    changed = self._learn(kr, self.phi_data, yr)
                    changes += changed
                    need += 1 if screen else changed
                # screening pays while few rows need φ (each change costs a refresh of v)
                screen = 8 * need <= stop - start
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
                "degree": self.kernel.degree, "coef0": self.kernel.coef0, "eps": self.eps}

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


cdef class KernelRowProximalPAm(PAmState):
    """The linear family's compiled PAm on φ(x), with the statistics of the kernel rows
    K(Ã, x) (``kernel_row`` points at the current one) and the proximal model
    z_p = Λ^{1/2} Pᵀ ũ_p (twin of the reference's ``_KernelRowProximalPAm``).

    ``covariance="full"`` also keeps the scatter Σ (k − M̃)(k − M̃)ᵀ per class
    (``scatter_pos``, ``scatter_neg``; Welford rank-one updates of the upper triangle, the
    lower one filled when read) and the Cholesky factor of S̃ = S₊/(c₊ − 1) + S₋/(c₋ − 1)
    + μI (``chol``; kept as U = Lᵀ, row-major): a rank-one update per example
    (``_rkpa_chol_update_syr``, O(m̃²)), LAPACK ``dpotrf`` at a refresh (the reference's
    ``needs_refresh``: O(log n) per class), two triangular solves per update."""

    cdef ReducedKernelMap feature_map
    cdef const double* kernel_row
    cdef object u_p
    cdef double* u_p_data
    cdef readonly str covariance
    cdef bint full
    cdef double growth                  # REFRESH_GROWTH when the state was made
    cdef readonly object scatter_pos    # Σ (k − M̃)(k − M̃)ᵀ of each class (full covariance)
    cdef readonly object scatter_neg
    cdef double* scatter_pos_data
    cdef double* scatter_neg_data
    cdef bint mirrored                  # the lower triangles are up to date
    cdef object chol_u                  # U = Lᵀ, row-major upper (zeros: no factor)
    cdef double* chol_u_data
    cdef readonly long long chol_n_pos  # c₊, c₋ of the last refresh (0: no factor)
    cdef readonly long long chol_n_neg
    cdef readonly double chol_mu        # μ of the last refresh
    cdef object d                       # k − M̃ of the current example and the scaled
    cdef double* d_data                 # copy the factor's update takes (scratch, 2 x m̃)
    cdef double* x_data

    def __init__(self, ReducedKernelMap feature_map, int variant=1, double C=1.0,
                 double gamma=0.1, covariance="diagonal"):
        super().__init__(feature_map.n_reduced, False, variant, C, gamma, True)
        cdef Py_ssize_t m = feature_map.n_reduced
        self.feature_map = feature_map
        self.u_p = np.zeros(m)
        self.u_p_data = _buffer(self.u_p)
        self.kernel_row = NULL
        self.covariance = covariance
        self.full = covariance == "full"
        self.growth = REFRESH_GROWTH
        self.mirrored = True
        self.chol_n_pos = self.chol_n_neg = 0
        self.chol_mu = 0.0
        if self.full:
            self.scatter_pos = np.zeros((m, m))
            self.scatter_neg = np.zeros((m, m))
            self.chol_u = np.zeros((m, m))
            self.d = np.zeros(2 * m)
            self.scatter_pos_data = _buffer(self.scatter_pos)
            self.scatter_neg_data = _buffer(self.scatter_neg)
            self.chol_u_data = _buffer(self.chol_u)
            self.d_data = _buffer(self.d)
            self.x_data = self.d_data + m

    cdef void _add_statistics(self, const int* xi, const double* xv, Py_ssize_t nnz,
                              double y) noexcept nogil:
        cdef Py_ssize_t i, m = self.n_features
        cdef long long n_old, c
        cdef double weight, scale
        cdef const double* k = self.kernel_row
        cdef double* total
        cdef double* scatter
        if not self.full:
            # the statistics are those of K(Ã, x), not of φ(x)
            PAmState._add_statistics(self, NULL, k, nnz, y)
            return
        n_old = self.n_pos if y > 0 else self.n_neg
        if n_old > 0:
            # d = k − M̃, the class mean before this example
            total = self.sum_pos_data if y > 0 else self.sum_neg_data
            for i in range(m):
                self.d_data[i] = k[i] - total[i] / <double> n_old
        PAmState._add_statistics(self, NULL, k, nnz, y)
        if n_old == 0:
            return
        # Welford: S ← S + (n−1)/n · d dᵀ (upper triangle)
        weight = n_old / (n_old + 1.0)
        scatter = self.scatter_pos_data if y > 0 else self.scatter_neg_data
        self.mirrored = False
        if self._needs_refresh():
            _rkpa_syr_upper(scatter, m, self.d_data, weight)
            self._refresh()
        elif self.chol_n_pos > 0:
            # S̃ gains weight/(c_y − 1) · d dᵀ: one rank-one update of the factor (x =
            # √(weight/(c_y − 1)) d), fused with the scatter's
            c = self.chol_n_pos if y > 0 else self.chol_n_neg
            scale = sqrt(weight / <double> (c - 1))
            for i in range(m):
                self.x_data[i] = scale * self.d_data[i]
            _rkpa_chol_update_syr(self.chol_u_data, m, self.x_data, scatter, self.d_data,
                                  weight)
        else:
            _rkpa_syr_upper(scatter, m, self.d_data, weight)

    cdef bint _needs_refresh(self) noexcept nogil:
        """The reference's ``needs_refresh``."""
        if self.n_pos < 2 or self.n_neg < 2:
            return False
        return (self.chol_n_pos == 0
                or self.n_pos - 1 > self.growth * <double> (self.chol_n_pos - 1)
                or self.n_neg - 1 > self.growth * <double> (self.chol_n_neg - 1))

    cdef void _refresh(self) noexcept nogil:
        """c ← n; μ ← SHRINKAGE · mean variance; U ← chol(COV₊ + COV₋ + μI) by ``dpotrf``
        (no factor when there is no variance: tried again at the next example)."""
        cdef Py_ssize_t i, j, m = self.n_features
        cdef double ap = 1.0 / <double> (self.n_pos - 1), an = 1.0 / <double> (self.n_neg - 1)
        cdef double trace = 0.0, mu
        cdef double* u = self.chol_u_data
        cdef double* sp_ = self.scatter_pos_data
        cdef double* sn = self.scatter_neg_data
        cdef int im = <int> m, info = 0
        cdef char lower = b'L'
        self.chol_n_pos = self.chol_n_neg = 0
        self.chol_mu = 0.0
        for i in range(m):
            trace += sp_[i * m + i] * ap + sn[i * m + i] * an
        if not trace > 0:
            for i in range(m * m):
                u[i] = 0.0
            return
        mu = _SHRINKAGE * trace / m
        # COV₊ + COV₋ + μI: the row-major upper triangle (LAPACK's column-major lower);
        # the row-major lower triangle stays zero
        for i in range(m):
            for j in range(i):
                u[i * m + j] = 0.0
            for j in range(i, m):
                u[i * m + j] = sp_[i * m + j] * ap + sn[i * m + j] * an
            u[i * m + i] += mu
        dpotrf(&lower, &im, u, &im, &info)
        if info != 0:  # not positive definite (round-off only: μ > 0)
            for i in range(m * m):
                u[i] = 0.0
            return
        self.chol_n_pos, self.chol_n_neg, self.chol_mu = self.n_pos, self.n_neg, mu

    cdef void _mirror(self) noexcept nogil:
        cdef Py_ssize_t i, j, m = self.n_features
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
        for i in range(m):
            mpi = self.sum_pos_data[i] / n_pos
            mni = self.sum_neg_data[i] / n_neg
            self.u_p_data[i] = mpi - mni             # the right-hand side M̃₊ − M̃₋
            mp[i] = mpi + mni
        _rkpa_chol_solve(self.chol_u_data, m, self.u_p_data, self.d_data)  # (d: scratch)
        for i in range(m):
            bp += self.u_p_data[i] * mp[i]
        return -0.5 * bp

    cdef double _proximal(self) noexcept nogil:
        cdef Py_ssize_t i, m = self.n_features
        cdef double bp
        if self.full:
            bp = self._full_fisher_direction()
        else:
            # quasi-KFD on the kernel rows (PAm's quasi-LDA formula): ũ_p into wp, b_p
            bp = PAmState._proximal(self)
            for i in range(m):
                self.u_p_data[i] = self.wp_data[i]
        self.feature_map._to_features(self.u_p_data, self.wp_data)
        return bp

    @property
    def chol(self):
        """L, the lower Cholesky factor of S̃ (zeros before the first refresh)."""
        return self.chol_u.T.copy() if self.full else None

    def shrunk_covariance(self):
        """S̃ = S₊/(c₊ − 1) + S₋/(c₋ − 1) + μI, the matrix L factors (None before the
        first refresh)."""
        if not self.full or self.chol_n_pos == 0:
            return None
        self._mirror()
        return (self.scatter_pos / (self.chol_n_pos - 1)
                + self.scatter_neg / (self.chol_n_neg - 1)
                + self.chol_mu * np.eye(self.n_features))

    def get_state(self):
        state = PAmState.get_state(self)
        if self.full:
            self._mirror()
            state.update(scatter_pos=self.scatter_pos.copy(),
                         scatter_neg=self.scatter_neg.copy(), chol=self.chol,
                         chol_n_pos=self.chol_n_pos, chol_n_neg=self.chol_n_neg,
                         chol_mu=self.chol_mu)
        return state

    def load_state(self, data):
        PAmState.load_state(self, data)
        if self.full:
            self.scatter_pos[:] = data["scatter_pos"]
            self.scatter_neg[:] = data["scatter_neg"]
            self.mirrored = True
            self.chol_u[:] = np.triu(np.asarray(data["chol"], dtype=np.float64).T)
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
                 double eps=0.0, double proximal_weight=0.1, covariance="diagonal"):
        if covariance not in ("diagonal", "full"):
            raise ValueError(f"covariance must be 'diagonal' or 'full'; got {covariance!r}")
        self.proximal_weight = proximal_weight
        self.covariance = covariance
        super().__init__(n_features, sparse, reduced, variant, C, kernel, gamma, degree,
                         coef0, eps)

    def _linear_state(self):
        return KernelRowProximalPAm(self.feature_map, self.variant, self.C,
                                    self.proximal_weight, self.covariance)

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
