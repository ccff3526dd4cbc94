# Inline row arithmetic shared by the compiled twins.
#
# A row is (idx, val, n): for a CSR row, idx/val point at its n column indices
# and values; for a dense row, idx is NULL and val points at its n = n_features
# values.  One code path then serves both formats.

cdef inline double row_dot(const double* w, const int* idx, const double* val,
                           Py_ssize_t n) noexcept nogil:
    """<w, x> for a dense weight vector w."""
    cdef double s = 0.0
    cdef Py_ssize_t p
    if idx == NULL:
        for p in range(n):
            s += val[p] * w[p]
    else:
        for p in range(n):
            s += val[p] * w[idx[p]]
    return s


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
    """||x||^2 (the same for dense and CSR rows)."""
    cdef double s = 0.0
    cdef Py_ssize_t p
    for p in range(n):
        s += val[p] * val[p]
    return s
