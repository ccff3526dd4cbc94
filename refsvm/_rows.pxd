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
