# cython: language_level=3
"""Compiled twin of :mod:`refsvm.poker.poker` (POKER, Fine & Scheinberg).

The same class, ``POKERState``, with the same attributes and methods: it *is* the
reference's path-following logic (the breakpoint loop, the partition updates, the
bordered inverse of the shared core, the least-index rule: inherited, one code for
both twins), with every kernel loop compiled on the shared core (``RowStore``,
``CKernel``): the examples live in a compiled row store; the kernel column of an
example joining I_s, the rows of KS of the examples of a chunk, w'phi(x) of a chunk's
examples (Fig. 1 line 1), the class sums of SelfInit's trivial partition and the
prediction run without the GIL.  The kernel values are the shared core's (summed in
order, as the reference's), so the twins pass the same breakpoints with the same
numbers up to the last bits of the reference's NumPy dot products.

What is not compiled (yet): the O(n |I_s|) rate update of each breakpoint runs in
NumPy in both twins (``_direction``); see the docs page for the measured split.
"""
import numpy as np
cimport numpy as cnp
import scipy.sparse as sp
from libc.math cimport isnan

from refsvm._core cimport CKernel, RowStore

from refsvm.core.kernels import SparseRow, get_row
from refsvm.poker import poker as _ref
from refsvm.poker.poker import (BIAS, FIXED, FORCED, GONE, I_C, I_O, I_S, IDLE, PENDING,
                                SELECTIONS, UNLEARN)

cnp.import_array()

__all__ = ["POKERState", "SELECTIONS"]


cdef void _fill_column(RowStore store, CKernel kern, Py_ssize_t i, double[::1] col,
                       const signed char[::1] status, Py_ssize_t n) noexcept nogil:
    """col[l] = k(x_l, x_i) where unknown (NaN) and l is in the problem."""
    cdef Py_ssize_t l
    for l in range(n):
        if status[l] < 0 or not isnan(col[l]):
            continue
        col[l] = kern.k_rows(store, l, i)


cdef void _fill_ks(RowStore store, CKernel kern, const Py_ssize_t[::1] ids,
                   const Py_ssize_t[::1] S, double[:, ::1] KS) noexcept nogil:
    """KS[i, j] = k(x_i, x_S[j]) for the rows i of a chunk."""
    cdef Py_ssize_t r, j
    for r in range(ids.shape[0]):
        for j in range(S.shape[0]):
            KS[ids[r], j] = kern.k_rows(store, ids[r], S[j])


cdef void _f_of(RowStore store, CKernel kern, const Py_ssize_t[::1] ids,
                const Py_ssize_t[::1] sv, const double[::1] coef, const Py_ssize_t[::1] pos,
                const double[:, ::1] KS, double[::1] out) noexcept nogil:
    """out[r] = sum_{l in sv} coef_l k(x_l, x_ids[r]), the kernel values with I_s from KS."""
    cdef Py_ssize_t r, t, j, l
    cdef double acc, kv
    for r in range(ids.shape[0]):
        j = ids[r]
        acc = 0.0
        for t in range(sv.shape[0]):
            l = sv[t]
            if pos[l] >= 0:
                kv = KS[j, pos[l]]
            else:
                kv = kern.k_rows(store, l, j)
            acc += coef[t] * kv
        out[r] = acc


cdef void _class_sums(RowStore store, CKernel kern, const Py_ssize_t[::1] ids,
                      const Py_ssize_t[::1] at_c, const double[::1] cy,
                      const double[::1] kdiag, double[::1] F) noexcept nogil:
    """F[r] += (c y_j) k(x_ids[r], x_j) over j at c (outer), r (inner): the reference's order."""
    cdef Py_ssize_t a, r, i, j
    cdef double kv
    for a in range(at_c.shape[0]):
        j = at_c[a]
        for r in range(ids.shape[0]):
            i = ids[r]
            if i == j:
                kv = kdiag[i]
            else:
                kv = kern.k_rows(store, i, j)
            F[r] += cy[a] * kv


class POKERState(_ref.POKERState):
    """POKER state for one binary problem (compiled twin; see
    :class:`refsvm.poker.poker.POKERState` for the parameters and the method)."""

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, cache_size=200.0, refresh_every=50):
        super().__init__(n_features, sparse, C=C, kernel=kernel, gamma=gamma, degree=degree,
                         coef0=coef0, cache_size=cache_size, refresh_every=refresh_every)
        self.kernel = CKernel(kernel, gamma, degree, coef0)
        self.store = RowStore(int(n_features), bool(sparse))

    # ---- storage and kernel values on the compiled row store
    def _store_row(self, x):
        cdef RowStore store = self.store
        if self.sparse:
            nnz = x.indices.shape[0]
            M = sp.csr_matrix((x.data, x.indices, np.array([0, nnz], dtype=np.int32)),
                              shape=(1, self.n_features))
            M.indices = np.ascontiguousarray(M.indices, dtype=np.int32)
            store.append(M, 0)
        else:
            store.append(np.ascontiguousarray(x, dtype=np.float64).reshape(1, -1), 0)

    def _k(self, Py_ssize_t a, Py_ssize_t b):
        cdef CKernel kern = self.kernel
        cdef RowStore store = self.store
        return kern.k_rows(store, a, b)

    def _kernel_value(self, Py_ssize_t a, Py_ssize_t b):
        cdef CKernel kern = self.kernel
        cdef RowStore store = self.store
        n0 = kern.n_evals
        v = kern.k_rows(store, a, b)
        kern.n_evals = n0
        return v

    def load_state(self, data):
        super().load_state(data)
        self.store = RowStore(int(self.n_features), bool(self.sparse))
        for x in self.rows:
            self._store_row(x)

    # ---- the kernel loops
    def _column(self, i):
        cdef Py_ssize_t n = self.n
        cached = self.cache.pop(i, None)
        col = np.full(n, np.nan)
        if cached is not None:
            col[: cached.shape[0]] = cached
        if np.isnan(col[i]):
            col[i] = self.kdiag[i]
        for j, s in enumerate(self.S):
            if np.isnan(col[s]):
                col[s] = self.KS[i, j]
        cdef double[::1] c = col
        cdef const signed char[::1] st = self.status[:n]
        cdef RowStore store = self.store
        cdef CKernel kern = self.kernel
        cdef Py_ssize_t ii = i
        with nogil:
            _fill_column(store, kern, ii, c, st, n)
        col[i] = self.kdiag[i]
        return col

    def _activate(self, ids):
        idx = np.ascontiguousarray(ids, dtype=np.intp)
        S = np.array(self.S, dtype=np.intp)
        if S.shape[0] and idx.shape[0]:
            self._fill_ks(idx, S)
        self.status[idx] = I_O

    def _fill_ks(self, const Py_ssize_t[::1] idx, const Py_ssize_t[::1] S):
        cdef double[:, ::1] KS = self.KS
        cdef RowStore store = self.store
        cdef CKernel kern = self.kernel
        with nogil:
            _fill_ks(store, kern, idx, S, KS)

    def _f_of(self, ids):
        n = self.n
        idx = np.ascontiguousarray(ids, dtype=np.intp)
        new = np.zeros(n, dtype=bool)
        new[idx] = True
        sv = np.flatnonzero((self.alpha[:n] > 0.0) & (self.status[:n] >= 0) & ~new).astype(np.intp)
        coef = self.alpha[sv] * self.y[sv]
        pos = np.full(n, -1, dtype=np.intp)
        if self.S:
            pos[np.array(self.S, dtype=np.intp)] = np.arange(len(self.S), dtype=np.intp)
        out = np.zeros(idx.shape[0])
        cdef const Py_ssize_t[::1] ids_v = idx
        cdef const Py_ssize_t[::1] sv_v = sv
        cdef const double[::1] coef_v = coef
        cdef const Py_ssize_t[::1] pos_v = pos
        cdef const double[:, ::1] KS = self.KS
        cdef double[::1] out_v = out
        cdef RowStore store = self.store
        cdef CKernel kern = self.kernel
        with nogil:
            _f_of(store, kern, ids_v, sv_v, coef_v, pos_v, KS, out_v)
        return out

    def _class_sums(self, ids, at_c):
        idx = np.ascontiguousarray(ids, dtype=np.intp)
        ac = np.ascontiguousarray(at_c, dtype=np.intp)
        cy = self.C * self.y[ac]
        F = np.zeros(idx.shape[0])
        cdef const Py_ssize_t[::1] ids_v = idx
        cdef const Py_ssize_t[::1] ac_v = ac
        cdef const double[::1] cy_v = cy
        cdef const double[::1] kd = self.kdiag
        cdef double[::1] F_v = F
        cdef RowStore store = self.store
        cdef CKernel kern = self.kernel
        with nogil:
            _class_sums(store, kern, ids_v, ac_v, cy_v, kd, F_v)
        return F

    def decision_function(self, X):
        """f(x) = sum_j alpha_j y_j k(x_j, x) - b (compiled expansion, not counted)."""
        ids = self.support_ids()
        coef = np.zeros(self.n)
        coef[ids] = self.alpha[ids] * self.y[ids]
        if self.sparse:
            X = sp.csr_matrix(X)
            X.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
        return self.store.expansion(self.kernel, coef, X) - self.b
