"""Compiled twin of :mod:`refsvm.kernel_pa.kernel_pa` (kernel PA / PA-I / PA-II, bias-free).

Same class (``KernelPA``), same order of operations (f summed over the support
vectors in increasing id, each kernel value k(x_j, x) with x_j first), the step
size of the core's ``pa_step``, same counting.  ``step`` and the ``nogil`` ``run``
come from the core's ``StreamLearner``; this module implements only ``_step``.
"""
from libc.stdlib cimport free

cimport cython

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport (CKernel, RowStore, StreamLearner, kernel_dense, kernel_csr, grow,
                           kernel_row_many, pa_step)
from refsvm.core.pa import PA_VARIANTS, variant_code
from refsvm.core.kernels import rows_to_state
from refsvm.core.departures import resolve
from refsvm.kernel_pa.departures import DEPARTURES

cnp.import_array()


# nogil methods read attributes of self, which is never None: no None checks even
# in REFSVM_DEBUG builds (which keep bounds checks on).
@cython.nonecheck(False)
cdef class KernelPA(StreamLearner):
    """Kernel PA state; see :class:`refsvm.kernel_pa.kernel_pa.KernelPA`."""

    cdef RowStore store       # the support vectors x_j (the reference's ``rows``)
    cdef CKernel kernel
    cdef readonly double C
    cdef readonly int variant
    cdef readonly bint fit_intercept   # the kernel k + 1 everywhere (see the reference)
    cdef readonly object departures    # resolved over the family's (empty) table
    cdef double* coef         # c_j = tau_j y_j
    cdef long long* ids       # stream ids of the support vectors
    cdef double* kbuf         # k(x_j, x) of the arrival, j < n_sv (the core's kernel_row_many)
    cdef Py_ssize_t n_sv, capacity
    cdef readonly long long n_seen, n_updates, n_mistakes
    cdef readonly double cumulative_loss

    def __init__(self, n_features, sparse=False, C=1.0, variant=1, kernel="rbf", gamma=1.0,
                 degree=3, coef0=0.0, fit_intercept=False, departures=None):
        self.departures = resolve(DEPARTURES, departures)
        self.n_features = n_features
        self.sparse = sparse
        self.C = C
        self.variant = variant_code(variant, PA_VARIANTS) if isinstance(variant, str) else variant
        self.kernel = CKernel(kernel, gamma, degree, coef0)
        self.fit_intercept = fit_intercept
        self.store = RowStore(n_features, sparse)

    def __dealloc__(self):
        free(self.coef)
        free(self.ids)
        free(self.kbuf)

    cdef int _reserve(self, Py_ssize_t need) except -1 nogil:
        """Room for ``need`` support vectors in coef and ids (the core's ``grow``)."""
        cdef Py_ssize_t capacity = self.capacity
        if need <= capacity:
            return 0
        grow(<void**> &self.coef, &capacity, need, sizeof(double))
        capacity = self.capacity
        grow(<void**> &self.ids, &capacity, need, sizeof(long long))
        capacity = self.capacity
        grow(<void**> &self.kbuf, &capacity, need, sizeof(double))
        self.capacity = capacity
        return 0

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        """One round (a CSR row, or a dense row with xi NULL and nnz = n_features);
        returns 1 when x joined the expansion, else 0."""
        cdef Py_ssize_t j
        cdef double f = 0.0, loss, kxx, tau, k
        if self.n_sv:               # k_row_csr / k_row_dense's values, in one call
            kernel_row_many(self.kernel, self.store, NULL, self.n_sv, xi, xv, nnz, self.kbuf)
        for j in range(self.n_sv):
            k = self.kbuf[j]
            if self.fit_intercept:
                k = k + 1.0
            f += self.coef[j] * k
        loss = 1.0 - y * f                                    # hinge loss
        if loss < 0.0:
            loss = 0.0
        if y * f <= 0.0:
            self.n_mistakes += 1
        self.cumulative_loss += loss
        self.n_seen += 1
        if loss <= 0.0:
            return 0
        self.kernel.n_evals += 1                              # ||x||^2 = k(x, x)
        if self.sparse:
            kxx = kernel_csr(&self.kernel.spec, xi, xv, nnz, xi, xv, nnz)
        else:
            kxx = kernel_dense(&self.kernel.spec, xv, xv, nnz)
        if self.fit_intercept:
            kxx = kxx + 1.0
        tau = pa_step(self.variant, loss, kxx, self.C)
        if tau <= 0.0:
            return 0
        self._reserve(self.n_sv + 1)
        if self.sparse:
            self.store.append_csr(xi, xv, nnz)
        else:
            self.store.append_dense(xv)
        self.ids[self.n_sv] = self.n_seen - 1
        self.coef[self.n_sv] = tau * y
        self.n_sv += 1
        self.n_updates += 1
        return 1

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def decision_function(self, X):
        """f(x) = sum_j coef_j k(x_j, x) for every row; not counted."""
        cdef Py_ssize_t j
        cdef double[::1] coef = np.empty(self.n_sv)
        for j in range(self.n_sv):
            coef[j] = self.coef[j]
        out = self.store.expansion(self.kernel, coef, X)
        if self.fit_intercept:
            out = out + self.intercept()
        return out

    def intercept(self):
        """b = sum_j c_j with ``fit_intercept``, else 0.0 (see the reference)."""
        cdef Py_ssize_t j
        cdef double b = 0.0
        if not self.fit_intercept:
            return 0.0
        for j in range(self.n_sv):
            b += self.coef[j]
        return b

    def support(self):
        ids = np.array([self.ids[j] for j in range(self.n_sv)], dtype=np.int64)
        coef = np.array([self.coef[j] for j in range(self.n_sv)], dtype=np.float64)
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
            "n_kernel_evals": self.kernel.n_evals,
        }

    # ---- persistence (the format both twins share) ----
    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=bool(self.sparse), C=self.C,
                    variant=self.variant, kernel=k.kind, gamma=k.gamma, degree=k.degree,
                    coef0=k.coef0, fit_intercept=bool(self.fit_intercept),
                    departures=dict(self.departures))

    def save_state(self):
        data = self.get_state()
        data.update(rows_to_state(self.store.to_matrix(), self.sparse))
        return data

    def load_state(self, data):
        cdef Py_ssize_t j, n = len(data["support"])
        if self.sparse:
            X = sp.csr_matrix((np.asarray(data["rows_data"], np.float64),
                               np.asarray(data["rows_indices"], np.int32),
                               np.asarray(data["rows_indptr"])), shape=(n, self.n_features))
            X.indices = X.indices.astype(np.int32)
        else:
            X = np.ascontiguousarray(data["rows"], dtype=np.float64).reshape(n, self.n_features)
        self._reserve(n)
        for j in range(n):
            self.store.append(X, j)
            self.ids[j] = data["support"][j]
            self.coef[j] = data["coef"][j]
        self.n_sv = n
        self.n_seen = data["n_seen"]
        self.n_updates = data["n_updates"]
        self.n_mistakes = data["n_mistakes"]
        self.cumulative_loss = data["cumulative_loss"]
        self.kernel.n_evals = data["n_kernel_evals"]
