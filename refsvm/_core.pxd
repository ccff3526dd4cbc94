# The shared compiled core: row convention and arithmetic, kernels with evaluation
# counts, a growable row store, the stream driver.  Every twin cimports from here:
#     from refsvm._core cimport ...
# Its pure-Python counterpart is the package refsvm.core.

from libc.float cimport DBL_MAX
from libc.math cimport exp, isfinite

ctypedef struct KernelSpec:
    int kind          # 0 linear, 1 rbf, 2 poly  (refsvm.core.kernels.KERNEL_CODES)
    double gamma
    double coef0
    int degree


cdef double dense_dot(const double* x, const double* z, Py_ssize_t n) noexcept nogil
cdef double dense_sqnorm(const double* x, Py_ssize_t n) noexcept nogil
cdef double dense_sqdist(const double* x, const double* z, Py_ssize_t n) noexcept nogil
cdef double csr_dot_dense(const int* idx, const double* val, Py_ssize_t nnz,
                          const double* w) noexcept nogil
cdef double csr_dot_csr(const int* xi, const double* xv, Py_ssize_t xn,
                        const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil
cdef double csr_sqdist(const int* xi, const double* xv, Py_ssize_t xn,
                       const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil

cdef double kernel_dense(const KernelSpec* k, const double* x, const double* z,
                         Py_ssize_t n) noexcept nogil
cdef double kernel_csr(const KernelSpec* k, const int* xi, const double* xv, Py_ssize_t xn,
                       const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil


cdef class RowStore:
    """Growable store of examples (dense rows or CSR rows) in C buffers."""
    cdef readonly bint sparse
    cdef readonly Py_ssize_t n_features
    cdef readonly Py_ssize_t n_rows
    cdef Py_ssize_t capacity
    cdef Py_ssize_t nnz_capacity
    cdef double* dense          # n_rows x n_features, row-major (dense)
    cdef double* data           # CSR values (sparse)
    cdef int* indices           # CSR column indices (sparse)
    cdef Py_ssize_t* indptr     # n_rows + 1 offsets (sparse)
    cdef double* sqn            # squared norm of every row (``seq_sqnorm`` / ``dense_dot``)
    cdef bint wide              # a stored CSR index outside [0, n_features) (no gather)

    cdef int _reserve(self, Py_ssize_t rows, Py_ssize_t nnz) except -1 nogil
    cdef int append_dense(self, const double* x) except -1 nogil
    cdef int append_csr(self, const int* idx, const double* val, Py_ssize_t nnz) except -1 nogil
    cdef int keep(self, const Py_ssize_t* rows, Py_ssize_t n) except -1 nogil
    cdef double kernel_rows(self, const KernelSpec* k, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef double kernel_row_dense(self, const KernelSpec* k, Py_ssize_t i,
                                 const double* x) noexcept nogil
    cdef double kernel_row_csr(self, const KernelSpec* k, Py_ssize_t i, const int* xi,
                               const double* xv, Py_ssize_t xn) noexcept nogil


cdef class CKernel:
    cdef KernelSpec spec
    cdef public long long n_evals
    cdef double k_rows(self, RowStore s, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef double k_row_dense(self, RowStore s, Py_ssize_t i, const double* x) noexcept nogil
    cdef double k_row_csr(self, RowStore s, Py_ssize_t i, const int* xi, const double* xv,
                          Py_ssize_t xn) noexcept nogil


cdef void kernel_csr_many(const KernelSpec* k, RowStore s, const Py_ssize_t* pos, Py_ssize_t m,
                          const int* zi, const double* zv, Py_ssize_t zn,
                          double* out) noexcept nogil


cdef void kernel_row_many(CKernel kern, RowStore s, const Py_ssize_t* pos, Py_ssize_t m,
                          const int* xi, const double* xv, Py_ssize_t xn,
                          double* out) noexcept nogil


cdef void kernel_many4(CKernel kern, RowStore s, const Py_ssize_t* z, const Py_ssize_t* pos,
                       Py_ssize_t m, double** out) noexcept nogil


cdef inline void kernel_many(CKernel k, RowStore s, Py_ssize_t z, const Py_ssize_t* pos,
                             Py_ssize_t m, double* out) noexcept nogil:
    """out[j] = k(x_pos[j], x_z) for j < m, two stored rows; m counted evaluations, the
    values of ``k.k_rows(s, pos[j], z)`` bit for bit: ``kernel_row_many`` with the stored
    row z as the other row (its squared norm recomputed once, the kept value's bits)."""
    if s.sparse:
        kernel_row_many(k, s, pos, m, s.indices + s.indptr[z], s.data + s.indptr[z],
                        s.indptr[z + 1] - s.indptr[z], out)
    else:
        kernel_row_many(k, s, pos, m, NULL, s.dense + z * s.n_features, s.n_features, out)


cdef class StreamLearner:
    """Base of the compiled states that learn one example at a time (see _core.pyx).

    Row convention: a CSR row is (xi, xv, nnz); a dense row has xi == NULL and
    nnz == n_features.  ``_step`` returns 1 when the example changed the model, else 0
    (-1 with an exception set); ``run`` returns the number of changes.
    ``_step_checked`` is ``_step`` behind the row check of ``run_checked``: it returns
    STEP_BAD, having changed nothing, when the row is bad (see ``row_screen``)."""
    cdef readonly Py_ssize_t n_features
    cdef readonly bint sparse
    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil
    cdef int _step_checked(self, const int* xi, const double* xv, Py_ssize_t nnz,
                           double y, double limit) except -1 nogil


# ---------------------------------------------------------------- checked rows
#: what ``StreamLearner._step_checked`` returns for a bad row (nothing changed)
cdef enum:
    STEP_BAD = 2

cdef bint row_values_bad(const double* v, Py_ssize_t n, double limit) noexcept nogil
cdef bint row_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d) noexcept nogil


cdef inline double _row_dot_sqnorm(const double* w, const int* idx, const double* val,
                                   Py_ssize_t n, Py_ssize_t d, double* sq, bint* bad_index,
                                   bint checked) noexcept nogil:
    """The loop of ``row_dot_sqnorm`` (``checked``) and ``row_dot_sqnorm_trusted`` (not):
    always called with a constant ``checked``, so the C compiler keeps one branch."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef double q0 = 0.0, q1 = 0.0, q2 = 0.0, q3 = 0.0
    cdef double v0, v1, v2, v3
    cdef Py_ssize_t p = 0
    cdef size_t j0, j1, j2, j3, ud = <size_t> d
    cdef bint bad = False
    cdef int bad_c = 0
    if idx == NULL:
        bad_index[0] = False
        return refsvm_dense_dot_sqnorm(w, val, n, sq)
    elif n >= 16 and refsvm_csr_fast():  # the same sums, w gathered 4 at a time
        s0 = refsvm_csr_dot(w, idx, val, n, d, sq, &bad_c, checked)
        bad_index[0] = checked and bad_c != 0
        return s0
    else:
        while p + 4 <= n:
            # an index is a C int: a negative one is a huge size_t
            j0 = <size_t> <Py_ssize_t> idx[p]
            j1 = <size_t> <Py_ssize_t> idx[p + 1]
            j2 = <size_t> <Py_ssize_t> idx[p + 2]
            j3 = <size_t> <Py_ssize_t> idx[p + 3]
            if checked and (j0 >= ud or j1 >= ud or j2 >= ud or j3 >= ud):
                bad = True
                j0 = 0 if j0 >= ud else j0
                j1 = 0 if j1 >= ud else j1
                j2 = 0 if j2 >= ud else j2
                j3 = 0 if j3 >= ud else j3
            v0 = val[p]
            v1 = val[p + 1]
            v2 = val[p + 2]
            v3 = val[p + 3]
            s0 += v0 * w[j0]
            s1 += v1 * w[j1]
            s2 += v2 * w[j2]
            s3 += v3 * w[j3]
            q0 += v0 * v0
            q1 += v1 * v1
            q2 += v2 * v2
            q3 += v3 * v3
            p += 4
        while p < n:
            j0 = <size_t> <Py_ssize_t> idx[p]
            if checked and j0 >= ud:
                bad = True
                j0 = 0
            s0 += val[p] * w[j0]
            q0 += val[p] * val[p]
            p += 1
    bad_index[0] = bad
    sq[0] = (q0 + q1) + (q2 + q3)
    return (s0 + s1) + (s2 + s3)


cdef inline double row_dot_sqnorm(const double* w, const int* idx, const double* val,
                                  Py_ssize_t n, Py_ssize_t d, double* sq,
                                  bint* bad_index) noexcept nogil:
    """<w, x> (returned) and ||x||^2 (in ``sq``) in one read of the row: the same sums, in
    the same order, as ``row_dot`` and ``row_sqnorm`` (four partial sums each), so the
    results are theirs bit for bit.  A CSR column index is tested before it addresses w:
    one outside [0, d) sets ``bad_index`` and reads w[0] instead (d >= 1), so a bad row
    is read safely and the caller drops it.  With ``row_screen``, the row check of
    ``run_checked`` fused into a linear step that reads the row anyway."""
    return _row_dot_sqnorm(w, idx, val, n, d, sq, bad_index, True)


cdef inline double row_dot_sqnorm_trusted(const double* w, const int* idx, const double* val,
                                          Py_ssize_t n, double* sq) noexcept nogil:
    """``row_dot_sqnorm`` of a row already checked (every CSR index in range): the same
    sums, no index test -- the unchecked steps (``run`` after a check pass)."""
    cdef bint unused
    return _row_dot_sqnorm(w, idx, val, n, 0, sq, &unused, False)


cdef inline double row_dot_index_checked(const double* w, const int* idx, const double* val,
                                         Py_ssize_t n, Py_ssize_t d,
                                         bint* bad_index) noexcept nogil:
    """<w, x> of a CSR row with every column index tested before it addresses w (a bad
    one sets ``bad_index`` and reads w[0]; d >= 1): the sums of ``row_dot``, no ||x||^2.
    With ``row_bad_by_dot``, the row check of a sparse step that needs no ||x||^2."""
    cdef int bad_c = 0
    cdef double s, sq
    if n >= 16 and refsvm_csr_fast():
        s = refsvm_csr_dot(w, idx, val, n, d, NULL, &bad_c, 1)
        bad_index[0] = bad_c != 0
        return s
    return _row_dot_sqnorm(w, idx, val, n, d, &sq, bad_index, True)


cdef inline bint row_screen(const double* xv, Py_ssize_t nnz, double sq, double limit,
                            bint bad_index) noexcept nogil:
    """The row check of ``run_checked`` (every value finite with |x_j| <= limit, every CSR
    index in range) from what ``row_dot_sqnorm`` found: True when the row is bad.

    sq = ||x||^2 < fl(limit^2) proves the values good: the computed sum of nonnegative
    rounded squares is at least each rounded square (rounding is monotone), and
    |x_j| > limit gives fl(x_j^2) >= fl(limit^2); NaN or an infinity makes sq NaN or
    infinite.  Only a row with sq >= fl(limit^2) (a bad one, or a good one of a huge norm)
    is read again, value by value."""
    if bad_index:
        return True
    if sq < limit * limit:
        return False
    return nnz > 0 and row_values_bad(xv, nnz, limit)


cdef inline bint row_bad_by_dot(double wx, const double* xv, Py_ssize_t nnz) noexcept nogil:
    """The row check of ``run_checked`` with ``limit = DBL_MAX`` (every value finite: the
    linear estimators, ``_finite_input_only``) from <w, x> alone, w finite: True when the
    row is bad.

    A NaN or infinite x_j makes the product w_j x_j NaN or infinite (0 * inf is NaN), and
    a sum with a NaN or infinite term is NaN or infinite, so a finite <w, x> proves every
    value finite: a dense step that reads the row only for <w, x> is checked for free.
    Only a row with <w, x> not finite (a bad one, or a good one whose product overflowed)
    is read again, value by value."""
    return not isfinite(wx) and row_values_bad(xv, nnz, DBL_MAX)


# ---------------------------------------------------------------- CSR input
ctypedef struct CSRView:
    const double* data
    const int* indices
    const int* indptr32          # exactly one of indptr32 / indptr64 is set
    const long long* indptr64
    Py_ssize_t n_rows


cdef object csr_view(CSRView* view, object X)


cdef inline Py_ssize_t csr_row(const CSRView* X, Py_ssize_t i, const int** xi,
                               const double** xv) noexcept nogil:
    """Row i of X in the core's row convention: ``xi``/``xv`` point at its column indices
    and values (NULL for an empty row); returns its nnz."""
    cdef Py_ssize_t start, stop
    if X.indptr32 != NULL:
        start = X.indptr32[i]
        stop = X.indptr32[i + 1]
    else:
        start = X.indptr64[i]
        stop = X.indptr64[i + 1]
    if stop > start:
        xi[0] = X.indices + start
        xv[0] = X.data + start
        return stop - start
    xi[0] = NULL
    xv[0] = NULL
    return 0


# ---------------------------------------------------------------- buffer growth
cdef int grow(void** buf, Py_ssize_t* capacity, Py_ssize_t need,
              size_t itemsize) except -1 nogil


# ---------------------------------------------------------------- inline row arithmetic
# Inline row arithmetic shared by the compiled twins.
#
# A row is (idx, val, n): for a CSR row, idx/val point at its n column indices
# and values; for a dense row, idx is NULL and val points at its n = n_features
# values.  One code path then serves both formats.

# The hand-written C of the core (refsvm/_csrc/refsvm_rows.c, compiled once into the
# static library every extension links; one CPU dispatcher, refsvm_cpu.h, picks the AVX2
# bodies where the CPU has them: the same bits).
cdef extern from "refsvm_rows.h":
    double refsvm_dense_dot_sqnorm(const double* w, const double* x, Py_ssize_t n,
                                   double* sq) noexcept nogil
    double refsvm_dense_dot(const double* w, const double* x, Py_ssize_t n) noexcept nogil
    double refsvm_dense_dot_bound(const double* w, const double* x, Py_ssize_t n,
                                  double* sq) noexcept nogil
    void refsvm_cols_matvec(double* out, double** cols, const double* v, Py_ssize_t k,
                            Py_ssize_t n, int back) noexcept nogil
    void refsvm_axpy(double* dst, const double* src, double s, const double* x,
                     Py_ssize_t n) noexcept nogil
    double refsvm_max_abs(const double* x, Py_ssize_t n, double m) noexcept nogil
    double refsvm_max(const double* x, Py_ssize_t n, double m) noexcept nogil
    Py_ssize_t refsvm_join_scan(const signed char* status, const signed char* blk,
                                const double* r, const double* g, const double* kroot,
                                Py_ssize_t n, signed char err, signed char rest, double tol0,
                                double eg, double gam, double rtb, double rt0, double* best,
                                Py_ssize_t* bi, double* tb, Py_ssize_t* tlist) noexcept nogil
    void refsvm_cols_to_rows(double* rows, Py_ssize_t ld, double* const* cols, Py_ssize_t k,
                             Py_ssize_t n) noexcept nogil
    void refsvm_rows_to_cols(double** cols, const double* rows, Py_ssize_t ld, Py_ssize_t k,
                             Py_ssize_t n) noexcept nogil
    bint refsvm_csr_fast() noexcept nogil
    double refsvm_csr_dot(const double* w, const int* idx, const double* val, Py_ssize_t n,
                          Py_ssize_t d, double* sq, int* bad, int checked) noexcept nogil
    void refsvm_dots(const double* base, Py_ssize_t ld, const Py_ssize_t* pos, Py_ssize_t m,
                     const double* x, Py_ssize_t d, double* out) noexcept nogil
    bint refsvm_values_bad(const double* v, Py_ssize_t n, double limit) noexcept nogil
    bint refsvm_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d) noexcept nogil


cdef inline double row_dot(const double* w, const int* idx, const double* val,
                           Py_ssize_t n) noexcept nogil:
    """<w, x> for a dense weight vector w.

    Four partial sums break the chain of dependent additions (the reference's
    NumPy/BLAS dot does not sum in index order either; the twins agree to
    rounding, not bit for bit)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t p = 0
    if idx == NULL:
        if n >= 16:  # the same sums as one 4-wide vector (refsvm_dense_dot)
            return refsvm_dense_dot(w, val, n)
        while p + 4 <= n:
            s0 += val[p] * w[p]
            s1 += val[p + 1] * w[p + 1]
            s2 += val[p + 2] * w[p + 2]
            s3 += val[p + 3] * w[p + 3]
            p += 4
        while p < n:
            s0 += val[p] * w[p]
            p += 1
    else:
        if n >= 16 and refsvm_csr_fast():  # the same sums, w gathered 4 at a time
            return refsvm_csr_dot(w, idx, val, n, 1, NULL, NULL, 0)
        while p + 4 <= n:
            s0 += val[p] * w[idx[p]]
            s1 += val[p + 1] * w[idx[p + 1]]
            s2 += val[p + 2] * w[idx[p + 2]]
            s3 += val[p + 3] * w[idx[p + 3]]
            p += 4
        while p < n:
            s0 += val[p] * w[idx[p]]
            p += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void row_axpy(double* w, double a, const int* idx, const double* val,
                          Py_ssize_t n) noexcept nogil:
    """w += a * x.  A CSR row is walked from its end: the entries of w that the step's
    read of the row (``row_dot``, from the start) touched last are still in the L1 cache,
    and a backward walk uses them before they are evicted, where a forward walk over a
    row whose entries of w exceed L1 (1,000 nonzeros: 1,000 cache lines) misses on
    nearly every one, LRU having evicted each just before its turn (``docs/benchmarks.rst``
    has the measurement).  The indices of a row are distinct (canonical CSR), so
    the order changes no value."""
    cdef Py_ssize_t p
    if idx == NULL:
        for p in range(n):
            w[p] += a * val[p]
    else:
        p = n
        while p > 0:
            p -= 1
            w[idx[p]] += a * val[p]


cdef inline void row_axpy_squared(double* w, double a, const int* idx, const double* val,
                                  Py_ssize_t n) noexcept nogil:
    """w += a * x**2 (element-wise square)."""
    cdef Py_ssize_t p
    if idx == NULL:
        for p in range(n):
            w[p] += a * (val[p] * val[p])
    else:
        for p in range(n):
            w[idx[p]] += a * (val[p] * val[p])


cdef inline double row_sqnorm(const double* val, Py_ssize_t n) noexcept nogil:
    """||x||^2 (the same for dense and CSR rows; four partial sums, as row_dot)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t p = 0
    while p + 4 <= n:
        s0 += val[p] * val[p]
        s1 += val[p + 1] * val[p + 1]
        s2 += val[p + 2] * val[p + 2]
        s3 += val[p + 3] * val[p + 3]
        p += 4
    while p < n:
        s0 += val[p] * val[p]
        p += 1
    return (s0 + s1) + (s2 + s3)


# ---------------------------------------------------------------- PA step size
# Variants: 0 = PA, 1 = PA-I, 2 = PA-II (refsvm.core.pa.PA_VARIANTS names them).
cdef inline double pa_step(int variant, double loss, double sqnorm, double C) noexcept nogil:
    """tau = loss/||x||^2 (PA), min{C, loss/||x||^2} (PA-I), loss/(||x||^2 + 1/(2C)) (PA-II).

    ``loss`` is the numerator (the hinge loss for PA; PAm passes its own).  A zero
    example (sqnorm <= 0) gives 0 for PA and PA-I, whose step would divide by zero.
    Reference: refsvm.core.pa.pa_step (the same arithmetic)."""
    cdef double tau
    if variant == 2:
        return loss / (sqnorm + 0.5 / C)
    if sqnorm <= 0.0:
        return 0.0
    tau = loss / sqnorm
    if variant == 1 and tau > C:
        tau = C
    return tau


# ---------------------------------------------------------------- scaled weight vector
ctypedef struct ScaledVector:
    double* v            # the direction, n entries: w = s * v
    double s             # the scale
    double vnorm2        # ||v||^2, kept when track_norm (else not maintained)
    Py_ssize_t n
    bint track_norm


cdef inline void sv_init(ScaledVector* w, double* v, Py_ssize_t n, bint track_norm) noexcept nogil:
    """Point w at the n doubles of v (owned by the caller), as w = 1 * v."""
    w.v = v
    w.n = n
    w.s = 1.0
    w.track_norm = track_norm
    w.vnorm2 = dense_sqnorm(v, n) if (track_norm and n > 0) else 0.0


cdef inline double sv_dot(const ScaledVector* w, const int* xi, const double* xv,
                          Py_ssize_t nnz) noexcept nogil:
    """<w, x> = s <v, x>, O(nnz)."""
    return w.s * row_dot(w.v, xi, xv, nnz)


cdef inline void sv_scale(ScaledVector* w, double a) noexcept nogil:
    """w <- a w in O(1); a == 0 resets v in O(n)."""
    cdef Py_ssize_t i
    if a == 0.0:
        for i in range(w.n):
            w.v[i] = 0.0
        w.s = 1.0
        w.vnorm2 = 0.0
    else:
        w.s *= a


cdef inline void sv_add_row(ScaledVector* w, double a, const int* xi, const double* xv,
                            Py_ssize_t nnz, double vx) noexcept nogil:
    """w <- w + a x in O(nnz).  ``vx`` is <v, x> before the update (needed for ||v||^2
    when track_norm; pass anything otherwise)."""
    cdef double c = a / w.s
    if w.track_norm:
        w.vnorm2 += 2.0 * c * vx + c * c * row_sqnorm(xv, nnz)
    row_axpy(w.v, c, xi, xv, nnz)


cdef inline double sv_sqnorm(const ScaledVector* w) noexcept nogil:
    """||w||^2 = s^2 ||v||^2 (track_norm only), O(1)."""
    return w.s * w.s * w.vnorm2


cdef inline void sv_fold(ScaledVector* w, double threshold) noexcept nogil:
    """Fold a scale below ``threshold`` into v (O(n)), so s * v stays accurate."""
    cdef Py_ssize_t i
    if w.s < threshold:
        for i in range(w.n):
            w.v[i] *= w.s
        w.vnorm2 *= w.s * w.s
        w.s = 1.0


# ================================================================ bordered inverse
# Section owned by the IDSVM family (used by IDSVM, then POKER): the rank-one updates of
# the inverse of a bordered matrix, the zero tests of its pivot, the least-index event
# choice.  Reference: refsvm/core/bordered.py (the same arithmetic in the same order, so
# the twins agree bit for bit); Python wrappers for tests at the end of _core.pyx.
#
# Storage: R is row-major with leading dimension ld; its leading n x n block holds
# Rinv = M^-1 for the current n x n bordered matrix M (for IDSVM n = |S| + 1).

from libc.math cimport exp, fabs, sqrt
from libc.stdlib cimport free, malloc

from scipy.linalg.cython_lapack cimport dgetrf, dgetri


# getri's workspace in rows of the matrix: the reference's LU_WORK_ROWS
# (refsvm/core/bordered.py), so that both twins run LAPACK's blocked code alike
cdef enum:
    LU_WORK_ROWS = 64


cdef inline int lu_inverse(double* A, int nn, int* ipiv, double* out,
                           Py_ssize_t ld) noexcept nogil:
    """out (row-major, leading dimension ld) <- the inverse of A (nn x nn, column-major, as
    the reference's ``lu_inverse`` hands it to LAPACK) by getrf + getri; A is overwritten,
    ``ipiv`` holds nn ints.  getri gets a workspace of ``LU_WORK_ROWS`` times nn doubles,
    allocated here; where that cannot be allocated, 3 is returned (out untouched).
    Returns 0; 1 when getrf finds A singular, 2 when getri fails (out untouched)."""
    cdef int info = 0, lwork = LU_WORK_ROWS * nn
    cdef Py_ssize_t a, b
    cdef double* big
    dgetrf(&nn, &nn, A, &nn, ipiv, &info)
    if info != 0:
        return 1
    big = <double*> malloc(max(lwork, 1) * sizeof(double))
    if big == NULL:
        return 3
    dgetri(&nn, A, &nn, ipiv, big, &lwork, &info)
    free(big)
    if info != 0:
        return 2
    for a in range(nn):
        for b in range(nn):
            out[a * ld + b] = A[a + b * nn]
    return 0


cdef inline void bordered_start(double* R, Py_ssize_t ld, double a, double q) noexcept nogil:
    """R <- inverse of [[0, a], [a, q]] = [[-q/a^2, 1/a], [1/a, 0]] (ld >= 2)."""
    R[0] = -q / (a * a)
    R[1] = 1.0 / a
    R[ld] = 1.0 / a
    R[ld + 1] = 0.0


cdef inline void bordered_grow(double* R, Py_ssize_t ld, Py_ssize_t n, double* beta,
                               double kappa) noexcept nogil:
    """Grow Rinv (n x n) to the inverse of [[M, m], [m', q]] ((n+1) x (n+1), ld > n):
    Rinv+ = [[Rinv, 0], [0, 0]] + [beta; 1][beta; 1]' / kappa (C&P Eq. 8), given
    beta = -Rinv m (bordered_beta) and kappa = q + m' beta (bordered_pivot).  ``beta``
    needs n + 1 entries: beta[n] is set to 1.

    The update is added as sign(kappa) u_a u_b with u = [beta; 1] sqrt(1 / |kappa|):
    no division an entry (a division an entry was the cost of the whole update), and
    exactly symmetric (u_a u_b = u_b u_a), as (beta_a beta_b) / kappa was.  The form
    (beta_a / kappa) beta_b is not symmetric, and with it IncrementalSVM failed its
    exactness checks twice as often on degenerate streams."""
    cdef Py_ssize_t a, b
    cdef double ua, sg, sc
    cdef double* row
    for a in range(n):
        R[a * ld + n] = 0.0
        R[n * ld + a] = 0.0
    R[n * ld + n] = 0.0
    beta[n] = 1.0
    sg = 1.0 if kappa > 0 else -1.0
    sc = sqrt(1.0 / fabs(kappa))
    # the scaled vector u' = [beta; 1] sc in row n (zero so far, rewritten below as the
    # last row of the update: its entry b is 0 + u_n u'_b = sg u'_b), then each row a
    # += (sg u'_a) u' by the core's vectorised axpy
    row = R + n * ld
    for b in range(n + 1):
        row[b] = beta[b] * sc
    for a in range(n):
        ua = sg * (beta[a] * sc)
        refsvm_axpy(R + a * ld, R + a * ld, ua, row, n + 1)
    ua = sg * (beta[n] * sc)
    for b in range(n + 1):
        row[b] = 0.0 + ua * row[b]


cdef inline double bordered_max_abs(const double* R, Py_ssize_t ld, Py_ssize_t n) noexcept nogil:
    """max |R_ab| over the leading n x n block (0 for n = 0; NaN entries are passed over),
    a row at a time by the core's vectorised ``refsvm_max_abs`` (a single chain of
    dependent compares was the cost of the whole shrink); a maximum is one of the values,
    so the result is the single chain's exactly."""
    cdef Py_ssize_t a
    cdef double mx = 0.0
    for a in range(n):
        mx = refsvm_max_abs(R + a * ld, n, mx)
    return mx


cdef inline int bordered_shrink(double* R, Py_ssize_t ld, Py_ssize_t n, Py_ssize_t p,
                                double eps, double* work) noexcept nogil:
    """Shrink Rinv (n x n) to the inverse of M without row and column p ((n-1) x (n-1)):
    Rinv_ij - Rinv_ip Rinv_pj / Rinv_pp, row and column p dropped (C&P Eq. 9), in place.
    ``work`` holds n doubles.  Returns 1 and leaves R untouched when |Rinv_pp| <=
    eps max|Rinv| (the reduced matrix is nearly singular: invert it afresh), else 0."""
    return bordered_shrink_scaled(R, ld, n, p, eps, bordered_max_abs(R, ld, n), work)


cdef inline int bordered_shrink_scaled(double* R, Py_ssize_t ld, Py_ssize_t n, Py_ssize_t p,
                                       double eps, double mx, double* work) noexcept nogil:
    """``bordered_shrink`` with max|Rinv| already known (``mx``, from
    ``bordered_max_abs`` of the same block): for a caller that needs the scale itself.
    Rinv_ip Rinv_pj / Rinv_pp is taken as sign(Rinv_pp) v_i v_j with v = Rinv_p
    sqrt(1 / |Rinv_pp|): exactly symmetric, no division an entry (``bordered_grow``)."""
    cdef Py_ssize_t a, b
    cdef double rpp, rap, sg, sc
    cdef double* src
    cdef double* dst
    rpp = R[p * ld + p]
    if fabs(rpp) <= eps * mx:
        return 1
    sg = 1.0 if rpp > 0 else -1.0
    sc = sqrt(1.0 / fabs(rpp))
    # update and compact in one pass: row a goes to row a - (a > p) and column b to
    # b - (b > p); row p is read from its copy, R_ap is read before its row is written,
    # and every row is written only after it was read
    for b in range(n):
        work[b] = R[p * ld + b] * sc
    for a in range(n):
        if a == p:
            continue
        src = R + a * ld
        dst = R + (a - 1) * ld if a > p else src
        rap = sg * (src[p] * sc)
        # src_b - rap w_b as src_b + (-rap) w_b: the same bits
        refsvm_axpy(dst, src, -rap, work, p)
        refsvm_axpy(dst + p, src + p + 1, -rap, work + p + 1, n - p - 1)
    return 0


cdef inline double bordered_drift(const double* R, Py_ssize_t ld, Py_ssize_t k,
                                  const double* y, const Py_ssize_t* S, double** cols,
                                  double* u, double* w) noexcept nogil:
    """How far the updated Rinv ((k+1) x (k+1)) has drifted from M^-1, M = [[0, y_S'],
    [y_S, Q_SS]] read from the margin set's kernel columns (cols[b][S[a]] = k(x_S[a],
    x_S[b])): the largest backward error max_a |(M Rinv v - v)_a| / (|v_a| + sum_b
    |M_ab| |(Rinv v)_b|) of the test vector v_a = (-1)^a, in O(k^2) (the reference's
    ``bordered_drift``: every sum left to right, as ``matvec``).  ``u`` and ``w`` hold
    k + 1 doubles.  A scale-free probe: the round-off of one product is about 1e-16."""
    cdef Py_ssize_t a, b, n = k + 1
    cdef double s, va, sc, worst = 0.0, ya, t
    cdef const double* row
    for a in range(n):                       # u = Rinv v
        row = R + a * ld
        s = 0.0
        for b in range(n):
            s = s + row[b] * (1.0 if b % 2 == 0 else -1.0)
        u[a] = s
    for a in range(n):                       # w = M u, and the scale of each sum
        va = 1.0 if a % 2 == 0 else -1.0
        if a == 0:
            s = 0.0 * u[0]
            sc = 0.0
            for b in range(k):
                t = y[S[b]] * u[b + 1]
                s = s + t
                sc = sc + fabs(t)
        else:
            ya = y[S[a - 1]]
            s = 0.0 + ya * u[0]
            sc = fabs(ya * u[0])
            for b in range(k):
                t = ((ya * y[S[b]]) * cols[b][S[a - 1]]) * u[b + 1]
                s = s + t
                sc = sc + fabs(t)
        w[a] = s
        t = fabs(s - va) / (1.0 + sc)
        if t != t:                           # NaN: R (or M) is broken
            return t
        if t > worst:
            worst = t
    return worst


cdef inline void rows_dot(const double* A, Py_ssize_t ld, Py_ssize_t m, Py_ssize_t n,
                          const double* v, double* out) noexcept nogil:
    """out[a] = sum_b A[a ld + b] v[b] for a < m, b < n (row-major, leading dimension ld):
    every row summed from 0 left to right (the reference's ``matvec``), eight rows in
    flight (``refsvm_dots``: the latency of one chain of n additions is the bound of a
    single row; a bordered inverse of 1,000 rows, 8 MB, is read at the rate of the
    caches only with several rows in flight)."""
    refsvm_dots(A, ld, NULL, m, v, n, out)


cdef inline void bordered_beta(const double* R, Py_ssize_t ld, Py_ssize_t n, const double* m,
                               double* beta) noexcept nogil:
    """beta = -Rinv m (C&P Eq. 5), each row summed left to right (``rows_dot``)."""
    cdef Py_ssize_t a
    rows_dot(R, ld, n, n, m, beta)
    for a in range(n):
        beta[a] = -beta[a]


cdef inline void rows_matvec(double* out, const double* A, Py_ssize_t ld, Py_ssize_t n,
                             const double* v, double** rows) noexcept nogil:
    """out = A' v (A n x n, row-major, leading dimension ld): out_i = sum_j A_ji v_j, every
    sum from 0 left to right over j (the reference's ``matvec(A.T, v)``).  The rows of A
    are the columns of A' and are contiguous, so this is the core's vectorised sweep
    ``refsvm_cols_matvec``; ``rows`` holds n pointers (set here).  For an exactly
    symmetric A (an inverse kept by ``bordered_grow`` and ``bordered_shrink`` after
    ``bordered_symmetrize``) the result is A v to the last bit."""
    cdef Py_ssize_t j
    for j in range(n):
        rows[j] = <double*> (A + j * ld)
    refsvm_cols_matvec(out, rows, v, n, n, 0)


cdef inline void bordered_beta_sym(const double* R, Py_ssize_t ld, Py_ssize_t n,
                                   const double* m, double* beta, double** rows) noexcept nogil:
    """``bordered_beta`` for an exactly symmetric Rinv: -Rinv' m by ``rows_matvec`` (the
    same sums, each left to right; vectorised across the entries instead of one entry
    at a time).  ``rows`` holds n pointers."""
    cdef Py_ssize_t a
    rows_matvec(beta, R, ld, n, m, rows)
    for a in range(n):
        beta[a] = -beta[a]


cdef inline void bordered_symmetrize(double* R, Py_ssize_t ld, Py_ssize_t n) noexcept nogil:
    """R_ab = R_ba <- (R_ab + R_ba) * 0.5 wherever they differ (an inverse from LU is
    symmetric only up to round-off); afterwards R is exactly symmetric, and
    ``bordered_grow`` and ``bordered_shrink`` keep it so (the reference's
    ``symmetrize``)."""
    cdef Py_ssize_t a, b
    cdef double v
    for a in range(n):
        for b in range(a + 1, n):
            if R[a * ld + b] != R[b * ld + a]:
                v = (R[a * ld + b] + R[b * ld + a]) * 0.5
                R[a * ld + b] = v
                R[b * ld + a] = v


cdef inline double bordered_pivot(double q, const double* m, const double* beta,
                                  Py_ssize_t n) noexcept nogil:
    """kappa = q + m' beta (the Schur complement q - m' M^-1 m), summed left to right."""
    cdef Py_ssize_t a
    cdef double s = 0.0
    for a in range(n):
        s += m[a] * beta[a]
    return q + s


cdef inline double pivot_bound(double q, const double* beta, Py_ssize_t k,
                               const double* border, const double* root,
                               const Py_ssize_t* idx) noexcept nogil:
    """O(k) upper bound of pivot_round_off_scale for M = [[0, a'], [a, Q]], Q PSD:
    |q| + (2 |beta_0| sum_j |a_j| |beta_j+1| + (sum_j r_j |beta_j+1|)^2), j < k, where
    a_j = border[idx[j]], r_j = root[idx[j]] = sqrt|Q_jj| (idx NULL: j itself)."""
    cdef Py_ssize_t j, t
    cdef double sb = 0.0, sk = 0.0
    for j in range(k):
        t = idx[j] if idx != NULL else j
        sb += fabs(border[t]) * fabs(beta[j + 1])
    for j in range(k):
        t = idx[j] if idx != NULL else j
        sk += root[t] * fabs(beta[j + 1])
    return fabs(q) + (2.0 * fabs(beta[0]) * sb + sk * sk)


cdef inline double pivot_round_off_scale(double q, const double* beta, const double* M,
                                         Py_ssize_t ldm, Py_ssize_t n) noexcept nogil:
    """|q| + |beta|' |M| |beta| (M n x n, row-major, leading dimension ldm): the round-off
    scale of kappa computed with an inverse of backward error |dM| <= eps |M|; each row
    of |M| |beta| summed left to right."""
    cdef Py_ssize_t a, b
    cdef double s, tot = 0.0
    for a in range(n):
        s = 0.0
        for b in range(n):
            s += fabs(M[a * ldm + b]) * fabs(beta[b])
        tot += fabs(beta[a]) * s
    return fabs(q) + tot


cdef inline bint pivot_doubtful(double kappa, double scale, double eps) noexcept nogil:
    """kappa <= eps * scale: recompute the pivot from a fresh inverse."""
    return kappa <= eps * scale


cdef inline bint pivot_is_zero(double kappa, double scale, double abs_scale, double eps_rel,
                               double eps_abs) noexcept nogil:
    """kappa is numerically zero: not above max(eps_rel * scale, eps_abs * abs_scale)."""
    return not (kappa > max(eps_rel * scale, eps_abs * abs_scale))


# ---- least-index event choice (Bland's rule), in two passes over the events:
# pass 1 finds the smallest step (event_smaller, from event_start(e, INFINITY) or from the
# largest step allowed); pass 2 restarts with event_start(e, tmin) and, for each event in
# the caller's fixed order with event_tied(t, tmin, window): a priority event is taken at
# once (event_take), the others through event_least_index.
ctypedef struct EventChoice:
    double t             # the step (pass 1: the smallest so far; pass 2: tmin)
    int kind             # the caller's event code, -1 for none
    Py_ssize_t index     # the variable (example id) of the event, -1 for none


cdef inline void event_start(EventChoice* e, double t) noexcept nogil:
    e.t = t
    e.kind = -1
    e.index = -1


cdef inline void event_take(EventChoice* e, int kind, Py_ssize_t index) noexcept nogil:
    e.kind = kind
    e.index = index


cdef inline bint event_smaller(EventChoice* e, double t, int kind,
                               Py_ssize_t index) noexcept nogil:
    """Pass 1: keep the event if its step is strictly the smallest so far."""
    if t < e.t:
        e.t = t
        e.kind = kind
        e.index = index
        return True
    return False


cdef inline bint event_tied(double t, double tmin, double window) noexcept nogil:
    """Pass 2: the event's variable reaches its bound within round-off at tmin."""
    return t <= tmin + window


cdef inline bint event_least_index(EventChoice* e, int kind, Py_ssize_t index) noexcept nogil:
    """Pass 2, a tied event: keep it if its index is the least so far."""
    if e.index < 0 or index < e.index:
        e.kind = kind
        e.index = index
        return True
    return False


# ================================================================ exact active set
# The pieces Cauwenberghs-Poggio's increments (IDSVM) and POKER's paths share beyond the
# bordered inverse.  Reference: refsvm/core/active_set.py (the same IEEE operations in the
# same order).
#
# ---- doubled precision: the checks and polishes of the exact families sum g and h as if
# in twice the working precision.

cdef inline void two_sum_add(double* p, double* s, double x) noexcept nogil:
    """p + s += x: Knuth's error-free sum of p and x, its error added to s (the
    reference's ``two_sum``)."""
    cdef double t = p[0] + x
    cdef double v = t - p[0]
    s[0] = s[0] + ((p[0] - (t - v)) + (x - v))
    p[0] = t


cdef inline void dot2_add(double* p, double* s, double a, double b) noexcept nogil:
    """One term a * b of Dot2 (Ogita, Rump & Oishi 2005, Alg. 5.3; the reference's
    ``dot2_add``): Dekker's error-free product, then Knuth's sum; the same operations."""
    cdef double h = a * b, c, ah, al, bh, bl, r, t, v, q
    c = 134217729.0 * a
    ah = c - (c - a)
    al = a - ah
    c = 134217729.0 * b
    bh = c - (c - b)
    bl = b - bh
    r = ((ah * bh - h) + ah * bl + al * bh) + al * bl
    if not isfinite(r):
        r = 0.0
    t = p[0] + h
    v = t - p[0]
    q = (p[0] - (t - v)) + (h - v)
    p[0] = t
    s[0] = s[0] + (q + r)


cdef inline void neumaier_add(double* s, double* c, double x) noexcept nogil:
    """One term of Neumaier's compensated sum (the reference's ``neumaier_add``); the
    larger and the smaller of s and x chosen by selects, not a branch (the terms of a
    score come in no order, and a mispredicted branch a term cost more than the sum)."""
    cdef double a = s[0]
    cdef double t = a + x
    cdef bint ge = fabs(a) >= fabs(x)
    cdef double big = a if ge else x
    cdef double small = x if ge else a
    c[0] += (big - t) + small
    s[0] = t


# ---- the column cache (reference: refsvm/core/column_cache.py): the kernel columns of
# examples that left the margin set, kept for their return, oldest out first within a
# budget of bytes.  IDSVM's twin gives copies (the cache makes its own), POKER's twin hands
# its buffers over (``adopt``) and shares them with its trial copies (``copy_into``).
cdef class ColumnCache:
    # admission: at most ``budget`` bytes of columns of the current length (0: none kept)
    cdef public long long budget
    cdef bint adopt             # put keeps the buffer it is given (else a copy of its values)
    # example id -> its slot, or -1 (ids < nids)
    cdef Py_ssize_t* slot
    cdef Py_ssize_t nids
    # the slots 0..n-1: the example, the column and its length (the number of examples
    # when kept), the buffer's capacity, clean (no NaN mark: every id in the problem), the
    # count of caches sharing the buffer (NULL: this one only) and the stamp (the oldest
    # goes first)
    cdef Py_ssize_t n, cap
    cdef Py_ssize_t* id
    cdef double** col
    cdef Py_ssize_t* length
    cdef Py_ssize_t* room
    cdef signed char* clean
    cdef int** shares
    cdef long long* stamp
    cdef long long clock
    # adopt: the owner's spare buffers (capacity ``*width``, at most ``spare_max``): where
    # a buffer goes when its entry goes, where a copy of a shared column comes from
    cdef double** spare
    cdef Py_ssize_t* nspare
    cdef Py_ssize_t spare_max
    cdef const Py_ssize_t* width

    cdef void lend_spares(self, double** spare, Py_ssize_t* nspare, Py_ssize_t spare_max,
                          const Py_ssize_t* width) noexcept nogil
    cdef int reserve(self, Py_ssize_t nids) except -1 nogil
    cdef bint has(self, Py_ssize_t i) noexcept nogil
    cdef bint fits(self, Py_ssize_t n) noexcept nogil
    cdef int put(self, Py_ssize_t i, double* col, Py_ssize_t n, Py_ssize_t room,
                 bint clean) except -1 nogil
    cdef int insert(self, Py_ssize_t i, double* col, Py_ssize_t length, Py_ssize_t room,
                    bint clean) except -1 nogil
    cdef const double* peek(self, Py_ssize_t i, Py_ssize_t* length) noexcept nogil
    cdef int take(self, Py_ssize_t i, Py_ssize_t width, double** col, Py_ssize_t* length,
                  bint* clean) except -1 nogil
    cdef void drop(self, Py_ssize_t i) noexcept nogil
    cdef void unlink(self, Py_ssize_t sl) noexcept nogil
    cdef bint release(self, Py_ssize_t sl) noexcept nogil
    cdef void dispose(self, double* col, Py_ssize_t room) noexcept nogil
    cdef void cut(self, Py_ssize_t n) noexcept nogil
    cdef void clear(self) noexcept nogil
    cdef int copy_into(self, ColumnCache other) except -1


# ---- the margin set (reference: refsvm/core/margin_set.py): S, its kernel columns and the
# bordered inverse R, for both exact families (IDSVM's twin and POKER's twin hold one).
cdef class MarginSet:
    # S in joining order (ns members, room for caps), KS[j] the kernel column of S[j] (a
    # buffer of cap values, one per example), R the inverse of [[0, y_S'], [y_S, Q_SS]]
    # (row-major, leading dimension ld = caps + 2: bordered_grow writes one row beyond)
    cdef Py_ssize_t ns, caps, ld, cap
    cdef Py_ssize_t* S
    cdef double** KS
    cdef double* R
    cdef double* rp             # bordered_shrink's work row
    # spare column buffers (capacity cap, at most maxpool): a member's column comes from here
    cdef double** pool
    cdef Py_ssize_t npool, maxpool

    cdef int reserve(self, Py_ssize_t need) except -1 nogil
    cdef int reserve_rows(self, Py_ssize_t cap) except -1 nogil
    cdef void zero_rows(self, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    cdef double* pool_get(self) except NULL nogil
    cdef void pool_put(self, double* col, Py_ssize_t capacity) noexcept nogil
    cdef void pool_clear(self) noexcept nogil
    cdef int start(self, Py_ssize_t i, double a, double q, double* col) except -1 nogil
    cdef int grow(self, Py_ssize_t i, double* beta, double kappa, double* col) except -1 nogil
    cdef bint remove(self, Py_ssize_t pos, double eps, double scale) noexcept nogil
    cdef double max_abs(self) noexcept nogil
    cdef void known(self, Py_ssize_t i, double* out) noexcept nogil
    cdef void m_of(self, Py_ssize_t i, const double* y, double* m) noexcept nogil
    cdef int inverse(self, const double* y, double* A, int* ipiv,
                     double* out, Py_ssize_t ldo) noexcept nogil
    cdef int copy_into(self, MarginSet o) except -1 nogil


# ---- the partition's per-example arrays (reference: refsvm/core/optimum.py
# ``PartitionArrays``): y, alpha, g, kdiag, status and a family's own float64 arrays, by
# example id, for both exact families (IDSVM's twin and POKER's twin hold one).
cdef enum:
    PARTITION_EXTRA = 4         # the most float64 arrays of its own a family names

cdef class Partition:
    # n examples (ids 0..n-1), room for cap; each buffer is a block of cap items (floats 0
    # and status GONE beyond what was written), replaced by a larger one when it grows
    cdef readonly Py_ssize_t n, cap
    cdef double* y
    cdef double* alpha
    cdef double* g
    cdef double* kdiag
    cdef signed char* status
    cdef double* extra[PARTITION_EXTRA]   # the family's own arrays, in the order of its names
    cdef readonly int nextra
    cdef readonly tuple names   # "y", "alpha", "g", "kdiag", the family's own, "status"
    cdef list blocks            # the blocks that own the buffers, in the order of names

    cdef int reserve(self, Py_ssize_t need) except -1 nogil
    cdef int resize(self, Py_ssize_t cap) except -1
    cdef Py_ssize_t new_example(self, double y, signed char code) except -1 nogil
    cdef int _index(self, name) except -1


# ---- correctly rounded sums (reference: ``math.fsum``; refsvm/core/active_set.py
# ``two_product``, ``exact_sum``; refsvm/core/exactness.py ``g_exact``): the hand-written C
# of refsvm/_csrc/refsvm_fsum.c, Shewchuk's exact partials rounded once, bit for bit the
# reference's on every finite sum (tests/core/test_fsum.py).  A status other than
# REFSVM_FSUM_OK is ``math.fsum``'s error: ``fsum_check`` raises it (ValueError for +inf and
# -inf among the terms, OverflowError for an intermediate overflow).
cdef extern from "refsvm_fsum.h":
    int REFSVM_FSUM_OK, REFSVM_FSUM_INVALID, REFSVM_FSUM_OVERFLOW, REFSVM_FSUM_FULL
    int refsvm_fsum(const double* x, Py_ssize_t n, double* out) noexcept nogil
    void refsvm_two_product(double a, double b, double* p, double* e) noexcept nogil
    int refsvm_exact_sum(const double* a, const double* b, Py_ssize_t m, double sign,
                         const double* extra, Py_ssize_t nextra, double* out) noexcept nogil
    int refsvm_g_exact(const double* coef, const double* K, Py_ssize_t ldk, Py_ssize_t nrows,
                       Py_ssize_t m, const double* y, double b, double bias_sign,
                       double* out, Py_ssize_t* bad) noexcept nogil
    int refsvm_g_exact_fixed(const double* coef, const double* K, Py_ssize_t ldk,
                             Py_ssize_t nrows, Py_ssize_t m, const double* y,
                             const double* p, double u, const double* d, double* out,
                             Py_ssize_t* bad) noexcept nogil
cdef int fsum_check(int status) except -1
# g afresh of stored examples from their kernel values, correctly rounded (the exact
# families' polish: POKER's ``_polish_g``): out[ids[r]] = y_i sum_j coef_j k(x_i, x_sv[j]) +
# (bias_sign y_i) b - 1 for r < nids, i = ids[r], the kernel values counted (k_rows(i, sv[j]);
# k(x_i, x_i) read from kdiag[i], not counted) into kv (room for m); stops at the first row
# whose sum fails and returns its status
cdef int g_exact_rows(CKernel kern, RowStore s, const Py_ssize_t* ids, Py_ssize_t nids,
                      const Py_ssize_t* sv, Py_ssize_t m, const double* coef,
                      const double* y, const double* kdiag, double b, double bias_sign,
                      double* kv, double* out) noexcept nogil


# ---- the polish of the exact active-set engine (reference: refsvm/core/exactness.py,
# ``margin_g``, ``polish_residual``, ``polish_newton``, ``snap_margin``): g afresh in
# doubled precision (Dot2 over the error vectors, then over S in its order, then y_i b and
# -1), the residual [h; g_S] of the bordered system, one Newton step of (b, alpha_S)
# through the margin set's R (kept only inside the box and when the residual drops), and
# the snap of ulp residues to a bound.  ``status``: the learned examples are those with
# status >= 0; ``bias_sign``: +1 for C&P's f = w'phi + b, -1 for POKER's f = w'phi - b.
# What a family does around them (when to polish, its windows, where its kernel columns
# come from) stays with the family.
cdef void polish_add_column(double* pe, double* se, const signed char* status,
                            const double* y, double a, const double* col,
                            Py_ssize_t n) noexcept nogil
cdef double margin_g(MarginSet ms, Py_ssize_t i, const double* alpha, const double* y,
                     double b, double bias_sign, double p, double s) noexcept nogil
cdef double polish_balance(const signed char* status, const double* y,
                           const double* alpha, Py_ssize_t n) noexcept nogil
cdef double polish_residual(MarginSet ms, const signed char* status, const double* alpha,
                            const double* y, double b, double bias_sign, double kscale,
                            const double* pe, const double* se, Py_ssize_t n,
                            double* r) noexcept nogil
cdef void polish_step(MarginSet ms, const double* r, double* step,
                      double** rows) noexcept nogil
cdef bint polish_refine(MarginSet ms, double* alpha, double* b, const double* step,
                        double C, double bias_sign, double window, double max_step,
                        double* old) noexcept nogil
cdef void polish_undo(MarginSet ms, double* alpha, double* b, const double* old) noexcept nogil
cdef bint polish_newton(MarginSet ms, const signed char* status, double* alpha,
                        const double* y, double* b, double bias_sign, double C,
                        double kscale, const double* pe, const double* se, Py_ssize_t n,
                        double window, double max_step, double* r, double* step,
                        double* old, double** rows) noexcept nogil
cdef void snap_margin(MarginSet ms, double* alpha, double C, double w) noexcept nogil


# ================================================================ the exactness check's levels
# The levels and the verdict of both exact families' exactness checks, and the plain
# ordered sums of POKER's end check, written once (reference: refsvm/core/exactness.py,
# ``kkt_levels``, ``kkt_verdict``, ``end_balance``, ``end_wrong_side``: the same products
# and sums in the same order; tests/core/test_kkt_levels.py).  ``kkt_levels``: tol (1 +
# kmax amax) for g, h_tol amax count for |y'alpha|, each capped by g_ulps eps (1 + |b| +
# kmax mass) and h_ulps eps mass when C kmax > above (INFINITY: never).  ``kkt_verdict``:
# the reference's ``KKT_G`` | ``KKT_H`` bits of what is beyond its level (a NaN fails only
# when ``nan_fails``).
cdef struct KKTLevels:
    double g                # the level of a violation of g (margin units)
    double h                # the level of |y'alpha|

cdef KKTLevels kkt_levels(double tol, double kmax, double amax, double C, double above,
                          double g_ulps, double h_ulps, double b, double mass,
                          double h_tol, double count) noexcept nogil
cdef int kkt_verdict(double worst, double h, KKTLevels lv, bint nan_fails) noexcept nogil
cdef double end_balance(const signed char* status, const double* y, const double* alpha,
                        Py_ssize_t n, double C) noexcept nogil
cdef Py_ssize_t end_wrong_side(const signed char* status, const double* g, Py_ssize_t n,
                               double level) noexcept nogil


# ================================================================ membership changes
# The membership changes of the margin set, written once for both exact families
# (reference: refsvm/core/engine.py, ``join`` and ``leave``, the same operations in the
# same order).  ``join``: i enters S (``start`` when S is empty, else ``grow`` by
# (beta, kappa) with its column ``col``, a buffer S takes over) and gets the family's code
# for S.  ``leave``: the member at ``pos`` leaves S with the family's code (its code for
# "at C" or "at zero", or one of its own), alpha set to ``value`` when ``alpha`` is given,
# its column kept by the family's cache when ``keep`` (``put(s, col, n, room, clean)``;
# an adopting cache takes the buffer, else it goes back to the spares), R shrunk (Eq. 9,
# ``remove`` with ``eps`` and ``scale``).  Returns 1 when the downdate was refused: the
# family forms R afresh its own way (and keeps its own bookkeeping around both calls:
# IDSVM's bordered matrix, POKER's positions, g and marks, both families' refreshes).
cdef int engine_join(MarginSet ms, Py_ssize_t i, signed char code, signed char* status,
                     const double* y, double q, double* beta, double kappa,
                     double* col) except -1 nogil
cdef int engine_leave(MarginSet ms, Py_ssize_t pos, signed char code, signed char* status,
                      double* alpha, double value, ColumnCache cache, bint keep,
                      Py_ssize_t n, Py_ssize_t room, bint clean, double eps,
                      double scale) except -1 nogil


# ================================================================ the making of a column
# (reference: refsvm/core/engine.py, ``column``: the same entries from the same sources
# and the same kernel-evaluation count)
from libc.stdint cimport uint64_t
from libc.string cimport memcpy


cdef inline Py_ssize_t first_off(const signed char* status, Py_ssize_t l,
                                 Py_ssize_t n) noexcept nogil:
    """The first id >= l below n off the problem (status < 0), or n: eight status bytes
    at a time (a word with no sign bit set holds none), the ids between one by one."""
    cdef uint64_t w
    while l < n and (l & 7):
        if status[l] < 0:
            return l
        l += 1
    while l + 8 <= n:
        memcpy(&w, status + l, 8)
        if w & <uint64_t> 0x8080808080808080:
            break
        l += 8
    while l < n:
        if status[l] < 0:
            return l
        l += 1
    return n


cdef inline Py_ssize_t set_off(double* out, const signed char* status, Py_ssize_t n,
                               double v) noexcept nogil:
    """out[l] = v for every id l < n off the problem; returns how many."""
    cdef Py_ssize_t m = 0, l = first_off(status, 0, n)
    while l < n:
        out[l] = v
        m += 1
        l = first_off(status, l + 1, n)
    return m


cdef int engine_column(MarginSet ms, CKernel kern, RowStore store, Py_ssize_t c,
                       Py_ssize_t n, const signed char* status, double kcc, double* out,
                       const double* cached, Py_ssize_t L, bint cached_clean,
                       const Py_ssize_t* pid, const double* pval, Py_ssize_t pm,
                       int given_codes, bint use_ks, bint zero_off, bint whole,
                       Py_ssize_t* idx, double* tmp) noexcept nogil
# four columns at once, with nothing cached and the same ids given to each (member a's
# values pval[a * ldp + q]): four engine_column calls' columns and count, bit for bit, the
# rows to evaluate taken in one kernel_many4 pass
cdef int engine_column4(MarginSet ms, CKernel kern, RowStore store, const Py_ssize_t* c4,
                        Py_ssize_t n, const signed char* status, const double* kcc4,
                        double** out4, const Py_ssize_t* pid, const double* pval,
                        Py_ssize_t ldp, Py_ssize_t pm, bint zero_off, Py_ssize_t* idx,
                        double** tmp4) noexcept nogil
