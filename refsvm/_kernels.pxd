# Shared compiled helpers: row arithmetic, kernels and a growable row store.
# cimport these from any twin module:  from refsvm._kernels cimport ...

ctypedef struct KernelSpec:
    int kind          # 0 linear, 1 rbf, 2 poly  (refsvm.kernels.KERNEL_CODES)
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
    """Base of the compiled states that learn one example at a time (see _kernels.pyx)."""
    cdef readonly Py_ssize_t n_features
    cdef readonly bint sparse
    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil
