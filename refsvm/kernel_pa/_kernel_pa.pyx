"""Compiled twin of :mod:`refsvm.kernel_pa.kernel_pa` (kernel PA / PA-I / PA-II, bias-free).

Same class (``KernelPA``), same order of operations (f summed over the support
vectors in increasing id, each kernel value k(x_j, x) with x_j first), same
counting.  ``run`` is a ``nogil`` loop over the stream.
"""
from libc.stdlib cimport realloc, free

cimport cython

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport (KernelSpec, CKernel, RowStore, StreamLearner, kernel_dense,
                              kernel_csr)

cnp.import_array()


cdef inline double pa_tau(int variant, double loss, double kxx, double C) noexcept nogil:
    cdef double tau
    if variant == 2:
        return loss / (kxx + 1.0 / (2.0 * C))
    if kxx <= 0.0:
        return 0.0
    tau = loss / kxx
    if variant == 1 and tau > C:
        tau = C
    return tau


# nogil methods read attributes of self, which is never None: no None checks even
# in REFSVM_DEBUG builds (which keep bounds checks on).
@cython.nonecheck(False)
cdef class KernelPA(StreamLearner):
    """Kernel PA state; see :class:`refsvm.kernel_pa.kernel_pa.KernelPA`."""

    cdef RowStore store
    cdef CKernel kern
    cdef readonly double C
    cdef readonly int variant
    cdef double* coef
    cdef long long* ids
    cdef Py_ssize_t n, cap
    cdef readonly long long n_seen, n_updates, n_mistakes
    cdef readonly double cumulative_loss

    def __cinit__(self, *args, **kwargs):
        self.coef = NULL
        self.ids = NULL
        self.n = 0
        self.cap = 0

    def __init__(self, n_features, sparse=False, C=1.0, variant=1, kernel="rbf", gamma=1.0,
                 degree=3, coef0=0.0):
        from refsvm.kernel_pa.kernel_pa import VARIANTS
        self.n_features = n_features
        self.sparse = sparse
        self.C = C
        self.variant = VARIANTS[variant] if isinstance(variant, str) else variant
        self.kern = CKernel(kernel, gamma, degree, coef0)
        self.store = RowStore(n_features, sparse)

    def __dealloc__(self):
        free(self.coef)
        free(self.ids)

    cdef int _reserve(self) except -1 nogil:
        cdef Py_ssize_t cap
        cdef void* p
        if self.n < self.cap:
            return 0
        cap = max(16, 2 * self.cap)
        p = realloc(self.coef, cap * sizeof(double))
        if p == NULL:
            with gil:
                raise MemoryError()
        self.coef = <double*> p
        p = realloc(self.ids, cap * sizeof(long long))
        if p == NULL:
            with gil:
                raise MemoryError()
        self.ids = <long long*> p
        self.cap = cap
        return 0

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        """One example: a CSR row (xi, xv, nnz) when the store is sparse, else the
        dense row xv (xi and nnz unused)."""
        cdef Py_ssize_t j
        cdef double f = 0.0, loss, kxx, tau
        for j in range(self.n):
            if self.sparse:
                f += self.coef[j] * self.kern.k_row_csr(self.store, j, xi, xv, nnz)
            else:
                f += self.coef[j] * self.kern.k_row_dense(self.store, j, xv)
        loss = 1.0 - y * f
        if loss < 0.0:
            loss = 0.0
        if y * f <= 0.0:
            self.n_mistakes += 1
        self.cumulative_loss += loss
        if loss > 0.0:
            self.kern.n_evals += 1
            if self.sparse:
                kxx = kernel_csr(&self.kern.spec, xi, xv, nnz, xi, xv, nnz)
            else:
                kxx = kernel_dense(&self.kern.spec, xv, xv, self.n_features)
            tau = pa_tau(self.variant, loss, kxx, self.C)
            if tau > 0.0:
                self._reserve()
                if self.sparse:
                    self.store.append_csr(xi, xv, nnz)
                else:
                    self.store.append_dense(xv)
                self.ids[self.n] = self.n_seen
                self.coef[self.n] = tau * y
                self.n += 1
                self.n_updates += 1
        self.n_seen += 1
        return 0

    @property
    def n_kernel_evals(self):
        return self.kern.n_evals

    def decision_function(self, X):
        """f(x) = sum_j coef_j k(x_j, x) for every row; not counted."""
        cdef Py_ssize_t j
        cdef double[::1] coef = np.empty(self.n)
        for j in range(self.n):
            coef[j] = self.coef[j]
        return self.store.expansion(self.kern, coef, X)

    def support(self):
        ids = np.array([self.ids[j] for j in range(self.n)], dtype=np.int64)
        coef = np.array([self.coef[j] for j in range(self.n)], dtype=np.float64)
        return ids, coef, self.store.to_matrix()

    def get_state(self):
        ids, coef, _ = self.support()
        return {
            "support": ids,
            "coef": coef,
            "n_seen": self.n_seen,
            "n_updates": self.n_updates,
            "n_mistakes": self.n_mistakes,
            "cumulative_loss": self.cumulative_loss,
            "n_kernel_evals": self.kern.n_evals,
        }

    def __reduce__(self):
        ids, coef, X = self.support()
        params = (self.n_features, self.sparse, self.C, self.variant, self.kern.kind,
                  self.kern.gamma, self.kern.degree, self.kern.coef0)
        counters = (self.n_seen, self.n_updates, self.n_mistakes, self.cumulative_loss,
                    self.kern.n_evals)
        return (_rebuild, (params, ids, coef, X, counters))

    def _restore(self, ids, coef, X, counters):
        cdef Py_ssize_t j
        if self.sparse:
            X = sp.csr_matrix(X)
            X.indices = X.indices.astype(np.int32)
        for j in range(ids.shape[0]):
            self._reserve()
            self.store.append(X, j)
            self.ids[j] = ids[j]
            self.coef[j] = coef[j]
            self.n += 1
        (self.n_seen, self.n_updates, self.n_mistakes, self.cumulative_loss,
         self.kern.n_evals) = counters


def _rebuild(params, ids, coef, X, counters):
    n_features, sparse, C, variant, kind, gamma, degree, coef0 = params
    s = KernelPA(n_features, sparse, C=C, variant=variant, kernel=kind, gamma=gamma,
                 degree=degree, coef0=coef0)
    s._restore(ids, coef, X, counters)
    return s
