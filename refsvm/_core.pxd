# The shared compiled core: row convention and arithmetic, kernels with evaluation
# counts, a growable row store, the stream driver.  Every twin cimports from here:
#     from refsvm._core cimport ...
# Its pure-Python counterpart is the package refsvm.core.

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


cdef class StreamLearner:
    """Base of the compiled states that learn one example at a time (see _core.pyx).

    Row convention: a CSR row is (xi, xv, nnz); a dense row has xi == NULL and
    nnz == n_features.  ``_step`` returns 1 when the example changed the model, else 0
    (-1 with an exception set); ``run`` returns the number of changes."""
    cdef readonly Py_ssize_t n_features
    cdef readonly bint sparse
    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil


# ---------------------------------------------------------------- buffer growth
cdef int grow(void** buf, Py_ssize_t* capacity, Py_ssize_t need,
              size_t itemsize) except -1 nogil


# ---------------------------------------------------------------- inline row arithmetic
# Inline row arithmetic shared by the compiled twins.
#
# A row is (idx, val, n): for a CSR row, idx/val point at its n column indices
# and values; for a dense row, idx is NULL and val points at its n = n_features
# values.  One code path then serves both formats.

cdef inline double row_dot(const double* w, const int* idx, const double* val,
                           Py_ssize_t n) noexcept nogil:
    """<w, x> for a dense weight vector w.

    Four partial sums break the chain of dependent additions (the reference's
    NumPy/BLAS dot does not sum in index order either; the twins agree to
    rounding, not bit for bit)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t p = 0
    if idx == NULL:
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
    """w += a * x."""
    cdef Py_ssize_t p
    if idx == NULL:
        for p in range(n):
            w[p] += a * val[p]
    else:
        for p in range(n):
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
