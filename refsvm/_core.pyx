"""The shared compiled core (twin of the package :mod:`refsvm.core`).

Every compiled twin cimports from here (see ``_core.pxd``): the row convention and
row arithmetic, kernels with evaluation counts, the growable row store and kernel
expansion, the stream driver (``StreamLearner``: ``step`` and a ``nogil`` ``run``),
buffer growth, the PA step size and the scaled weight vector (inline, in the .pxd).

Every function here computes exactly what its reference counterpart computes,
in the same order of summation where it matters (the RBF squared distance comes from
the norms and the inner product, ``refsvm.core.kernels.sqdist``: the same bits for a
dense row and its CSR form).
"""
from libc.math cimport exp, fabs, pow, INFINITY
from libc.stdlib cimport calloc, malloc, realloc, free
from libc.string cimport memcpy

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

cnp.import_array()

from refsvm.core import active_set as _core_active_set
from refsvm.core import exactness as _core_exactness
from refsvm.core.kernels import KERNEL_CODES, SparseRow


# ---------------------------------------------------------------- row arithmetic
cdef double dense_dot(const double* x, const double* z, Py_ssize_t n) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        s += x[i] * z[i]
    return s


cdef double dense_sqnorm(const double* x, Py_ssize_t n) noexcept nogil:
    return dense_dot(x, x, n)


cdef double dense_sqdist(const double* x, const double* z, Py_ssize_t n) noexcept nogil:
    cdef double s = 0.0, d
    cdef Py_ssize_t i
    for i in range(n):
        d = x[i] - z[i]
        s += d * d
    return s


cdef double csr_dot_dense(const int* idx, const double* val, Py_ssize_t nnz,
                          const double* w) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t p
    for p in range(nnz):
        s += val[p] * w[idx[p]]
    return s


cdef double csr_dot_csr(const int* xi, const double* xv, Py_ssize_t xn,
                        const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t a = 0, b = 0
    while a < xn and b < zn:
        if xi[a] == zi[b]:
            s += xv[a] * zv[b]
            a += 1
            b += 1
        elif xi[a] < zi[b]:
            a += 1
        else:
            b += 1
    return s


cdef double csr_sqdist_direct(const int* xi, const double* xv, Py_ssize_t xn,
                              const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    """||x - z||^2 summed directly over the union of the two index lists, in index order
    (the differences of a dense row pair, whose common zeros add +0.0)."""
    cdef double s = 0.0, d
    cdef Py_ssize_t a = 0, b = 0
    while a < xn or b < zn:
        if b >= zn or (a < xn and xi[a] < zi[b]):
            d = xv[a]
            a += 1
        elif a >= xn or zi[b] < xi[a]:
            d = -zv[b]
            b += 1
        else:
            d = xv[a] - zv[b]
            a += 1
            b += 1
        s += d * d
    return s


cdef inline double seq_sqnorm(const double* v, Py_ssize_t n) noexcept nogil:
    """v[0]^2 + v[1]^2 + ..., added left to right (the reference's ``sqnorm``)."""
    cdef double s = 0.0
    cdef Py_ssize_t p
    for p in range(n):
        s += v[p] * v[p]
    return s


cdef inline double sqdist_from_norms(double sx, double sz, double dot) noexcept nogil:
    """||x - z||^2 = (||x||^2 + ||z||^2) - 2 <x, z> when it exceeds (||x||^2 + ||z||^2) / 4,
    where its round-off (a few units of the norms') is a few units of its own; else -1.0,
    and the caller sums (x_k - z_k)^2 directly (``refsvm.core.kernels.sqdist``: close
    points far from the origin keep the direct sum's accuracy)."""
    cdef double d = (sx + sz) - 2.0 * dot
    return d if d > 0.25 * (sx + sz) else -1.0


cdef inline double _dense_dist(double sx, double sz, double dot, const double* x,
                              const double* z, Py_ssize_t n) noexcept nogil:
    """||x - z||^2 of dense rows from their squared norms and inner product, or summed
    directly where that is not accurate (the reference's ``sqdist``)."""
    cdef double t = sqdist_from_norms(sx, sz, dot)
    return t if t >= 0.0 else dense_sqdist(x, z, n)


cdef inline double _csr_dist(double sx, double sz, double dot, const int* xi,
                            const double* xv, Py_ssize_t xn, const int* zi, const double* zv,
                            Py_ssize_t zn) noexcept nogil:
    """The same for CSR rows (the direct sum over the union of their indices)."""
    cdef double t = sqdist_from_norms(sx, sz, dot)
    return t if t >= 0.0 else csr_sqdist_direct(xi, xv, xn, zi, zv, zn)


cdef double csr_sqdist(const int* xi, const double* xv, Py_ssize_t xn,
                       const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    """||x - z||^2 of two CSR rows (``_csr_dist`` with both norms computed)."""
    return _csr_dist(seq_sqnorm(xv, xn), seq_sqnorm(zv, zn),
                     csr_dot_csr(xi, xv, xn, zi, zv, zn), xi, xv, xn, zi, zv, zn)


cdef inline double _finish(const KernelSpec* k, double dot_or_dist) noexcept nogil:
    if k.kind == 0:
        return dot_or_dist
    if k.kind == 1:
        return exp(-k.gamma * dot_or_dist)
    return pow(k.gamma * dot_or_dist + k.coef0, k.degree)


cdef inline double _rbf_dense(const KernelSpec* k, const double* x, const double* z,
                              Py_ssize_t n, double sx, double sz) noexcept nogil:
    """exp(-gamma ||x - z||^2) of dense rows: the sums not given (a squared norm < 0 is
    not given; the store keeps its rows') in one pass, independent chains."""
    cdef double sxx = 0.0, szz = 0.0, sxz = 0.0, t
    cdef Py_ssize_t i
    if sx >= 0.0 and sz >= 0.0:
        for i in range(n):
            sxz += x[i] * z[i]
        sxx = sx
        szz = sz
    elif sx >= 0.0:
        for i in range(n):
            szz += z[i] * z[i]
            sxz += x[i] * z[i]
        sxx = sx
    else:
        for i in range(n):
            sxx += x[i] * x[i]
            szz += z[i] * z[i]
            sxz += x[i] * z[i]
    return exp(-k.gamma * _dense_dist(sxx, szz, sxz, x, z, n))


cdef double kernel_dense(const KernelSpec* k, const double* x, const double* z,
                         Py_ssize_t n) noexcept nogil:
    if k.kind == 1:
        return _rbf_dense(k, x, z, n, -1.0, -1.0)
    return _finish(k, dense_dot(x, z, n))


cdef double kernel_csr(const KernelSpec* k, const int* xi, const double* xv, Py_ssize_t xn,
                       const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    if k.kind == 1:
        return _finish(k, csr_sqdist(xi, xv, xn, zi, zv, zn))
    return _finish(k, csr_dot_csr(xi, xv, xn, zi, zv, zn))


# The hand-written C of the kernels (refsvm/_csrc/refsvm_kernels.c, refsvm_exp.c)
cdef extern from "refsvm_kernels.h":
    void refsvm_dots4x(const double* base, const Py_ssize_t* pos, Py_ssize_t m,
                       const double* x4, Py_ssize_t d, double* out0, double* out1,
                       double* out2, double* out3) noexcept nogil
    void refsvm_sqdist_small(const double* dense, const Py_ssize_t* pos, Py_ssize_t m,
                             const double* z, Py_ssize_t d, const double* sqn, double sz,
                             double* out) noexcept nogil
    void refsvm_csr_dots4(const Py_ssize_t* indptr, const int* indices, const double* data,
                          const Py_ssize_t* pos, Py_ssize_t m, const double* zd4,
                          double* out0, double* out1, double* out2,
                          double* out3) noexcept nogil

cdef extern from "refsvm_rows.h":
    int refsvm_rows_get_width() noexcept nogil
    void refsvm_rows_set_width(int width) noexcept nogil


cdef extern from "refsvm_exp.h":
    void refsvm_exp_init() noexcept nogil
    void refsvm_exp_neg_many(double* out, Py_ssize_t m, double gamma) noexcept nogil
    bint refsvm_exp_form_ok(int width) noexcept nogil
    int refsvm_exp_get_width() noexcept nogil
    void refsvm_exp_set_width(int width) noexcept nogil
    const unsigned long long* refsvm_exp_table() noexcept nogil


cdef inline Py_ssize_t _at(const Py_ssize_t* pos, Py_ssize_t j) noexcept nogil:
    """Row pos[j], or j when pos is NULL (the stored rows 0, 1, ... in order)."""
    return pos[j] if pos != NULL else j


cdef inline double _csr_rbf_dist(RowStore s, Py_ssize_t r, double sz, double dot,
                                 const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    """||x_r - z||^2 of the stored CSR row r and a row z, from the kept norm of x_r, the
    squared norm sz of z and their inner product (``csr_sqdist``'s value); the kernel is
    exp(-gamma times it), taken for a whole column at once (``refsvm_exp_neg_many``)."""
    cdef Py_ssize_t q = s.indptr[r]
    return _csr_dist(s.sqn[r], sz, dot, s.indices + q, s.data + q, s.indptr[r + 1] - q,
                     zi, zv, zn)


cdef void kernel_csr_many(const KernelSpec* k, RowStore s, const Py_ssize_t* pos, Py_ssize_t m,
                          const int* zi, const double* zv, Py_ssize_t zn,
                          double* out) noexcept nogil:
    """out[j] = k(stored CSR row pos[j], z) for j < m (the rows 0 .. m-1 if pos is NULL;
    not counted), each value ``kernel_csr(k, row pos[j], z)``'s bit for bit.

    ``csr_dot_csr`` walks two index lists with a branch on every comparison (about 50 ns
    an evaluation on a9a, most of it mispredicted branches).  Here z is scattered once
    into a dense buffer and each row's inner product is a gather over the row's own
    indices, four rows in flight (four independent sums).  A row index that z lacks adds
    x_k * 0.0 = +-0.0, a no-op on a sum that is never -0.0 (it starts at +0.0 and rounds to
    nearest), so each sum is ``csr_dot_csr``'s, added in the same order.  The squared
    norms of stored rows are kept by the store (``sqn``).  Below a few rows per feature
    (the buffer would cost more than it saves), for a z or a stored row with an index
    outside the store's features (``wide``: malformed input reaches no buffer), or without
    memory: ``kernel_csr`` per row (the same values)."""
    cdef Py_ssize_t j = 0, p, q, n0, n1, n2, n3, nmin, d = s.n_features
    cdef const int* i0
    cdef const int* i1
    cdef const int* i2
    cdef const int* i3
    cdef const double* v0
    cdef const double* v1
    cdef const double* v2
    cdef const double* v3
    cdef double a0, a1, a2, a3, sz
    cdef double* zd = NULL
    if m >= 4 and d <= 64 * m and not s.wide:
        for q in range(zn):
            if not 0 <= zi[q] < d:        # an index beyond the store's features: merge
                d = -1
                break
        if d >= 0:
            zd = <double*> calloc(max(d, 1), sizeof(double))
    if zd == NULL:
        for j in range(m):
            q = s.indptr[_at(pos, j)]
            out[j] = kernel_csr(k, s.indices + q, s.data + q, s.indptr[_at(pos, j) + 1] - q,
                                zi, zv, zn)
        return
    for q in range(zn):
        zd[zi[q]] = zv[q]
    sz = seq_sqnorm(zv, zn)
    while j < m:
        if j + 4 <= m:
            q = s.indptr[_at(pos, j)]
            i0 = s.indices + q
            v0 = s.data + q
            n0 = s.indptr[_at(pos, j) + 1] - q
            q = s.indptr[_at(pos, j + 1)]
            i1 = s.indices + q
            v1 = s.data + q
            n1 = s.indptr[_at(pos, j + 1) + 1] - q
            q = s.indptr[_at(pos, j + 2)]
            i2 = s.indices + q
            v2 = s.data + q
            n2 = s.indptr[_at(pos, j + 2) + 1] - q
            q = s.indptr[_at(pos, j + 3)]
            i3 = s.indices + q
            v3 = s.data + q
            n3 = s.indptr[_at(pos, j + 3) + 1] - q
            nmin = min(min(n0, n1), min(n2, n3))
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for p in range(nmin):
                a0 = a0 + v0[p] * zd[i0[p]]
                a1 = a1 + v1[p] * zd[i1[p]]
                a2 = a2 + v2[p] * zd[i2[p]]
                a3 = a3 + v3[p] * zd[i3[p]]
            for p in range(nmin, n0):
                a0 = a0 + v0[p] * zd[i0[p]]
            for p in range(nmin, n1):
                a1 = a1 + v1[p] * zd[i1[p]]
            for p in range(nmin, n2):
                a2 = a2 + v2[p] * zd[i2[p]]
            for p in range(nmin, n3):
                a3 = a3 + v3[p] * zd[i3[p]]
            if k.kind == 1:
                out[j] = _csr_rbf_dist(s, _at(pos, j), sz, a0, zi, zv, zn)
                out[j + 1] = _csr_rbf_dist(s, _at(pos, j + 1), sz, a1, zi, zv, zn)
                out[j + 2] = _csr_rbf_dist(s, _at(pos, j + 2), sz, a2, zi, zv, zn)
                out[j + 3] = _csr_rbf_dist(s, _at(pos, j + 3), sz, a3, zi, zv, zn)
            else:
                out[j] = _finish(k, a0)
                out[j + 1] = _finish(k, a1)
                out[j + 2] = _finish(k, a2)
                out[j + 3] = _finish(k, a3)
            j += 4
        else:
            q = s.indptr[_at(pos, j)]
            i0 = s.indices + q
            v0 = s.data + q
            n0 = s.indptr[_at(pos, j) + 1] - q
            a0 = 0.0
            for p in range(n0):
                a0 = a0 + v0[p] * zd[i0[p]]
            if k.kind == 1:
                out[j] = _csr_rbf_dist(s, _at(pos, j), sz, a0, zi, zv, zn)
            else:
                out[j] = _finish(k, a0)
            j += 1
    free(zd)
    if k.kind == 1:
        refsvm_exp_neg_many(out, m, k.gamma)      # exp(-gamma d2), the library's bits


cdef void kernel_csr_many4(const KernelSpec* k, RowStore s, const Py_ssize_t* pos,
                           Py_ssize_t m, const int** zi, const double** zv,
                           const Py_ssize_t* zn, double** out) noexcept nogil:
    """out[r][j] = k(stored CSR row pos[j], z_r) for four rows z_r (r < 4) and j < m (not
    counted): ``kernel_csr_many``'s values for each z_r bit for bit, with the inner
    products of the four taken in one pass over the stored rows (``refsvm_csr_dots4``:
    a row's indices and values read once for four, which halves the time of a block of
    new rows against the support vectors).  Where ``kernel_csr_many`` would not scatter
    (few rows, a wide store, an index outside the features, no memory): it, per z_r."""
    cdef Py_ssize_t j, q, r, d = s.n_features
    cdef double* zd4 = NULL
    cdef double sz
    if m >= 4 and d <= 64 * m and not s.wide:
        for r in range(4):
            for q in range(zn[r]):
                if not 0 <= zi[r][q] < d:
                    d = -1
        if d >= 0:
            zd4 = <double*> calloc(max(4 * d, 1), sizeof(double))
    if zd4 == NULL:
        for r in range(4):
            kernel_csr_many(k, s, pos, m, zi[r], zv[r], zn[r], out[r])
        return
    for r in range(4):
        for q in range(zn[r]):
            zd4[4 * zi[r][q] + r] = zv[r][q]
    refsvm_csr_dots4(s.indptr, s.indices, s.data, pos, m, zd4, out[0], out[1], out[2],
                     out[3])
    free(zd4)
    for r in range(4):
        if k.kind == 1:
            sz = seq_sqnorm(zv[r], zn[r])
            for j in range(m):
                out[r][j] = _csr_rbf_dist(s, _at(pos, j), sz, out[r][j], zi[r], zv[r], zn[r])
            refsvm_exp_neg_many(out[r], m, k.gamma)    # exp(-gamma d2), the library's bits
        else:
            for j in range(m):
                out[r][j] = _finish(k, out[r][j])


cdef void kernel_many4(CKernel kern, RowStore s, const Py_ssize_t* z, const Py_ssize_t* pos,
                       Py_ssize_t m, double** out) noexcept nogil:
    """out[r][j] = k(x_pos[j], x_z[r]) for four stored rows z[r] and j < m: four
    ``kernel_many`` calls' values bit for bit (4 m counted evaluations), the inner
    products in one pass over the rows (CSR: ``kernel_csr_many4``; dense with more than 8
    features: ``refsvm_dots4x``, then ``kernel_row_many``'s finish)."""
    cdef const int* zi[4]
    cdef const double* zv[4]
    cdef Py_ssize_t zn[4]
    cdef Py_ssize_t r, i, d = s.n_features
    cdef double* x4
    if not s.sparse:
        x4 = NULL
        if m > 0 and d > 8:
            x4 = <double*> malloc(4 * d * sizeof(double))
        if x4 == NULL:         # no memory (or few features: refsvm_sqdist_small's path)
            for r in range(4):
                kernel_many(kern, s, z[r], pos, m, out[r])
            return
        kern.n_evals += 4 * m
        for i in range(d):
            for r in range(4):
                x4[4 * i + r] = s.dense[z[r] * d + i]
        refsvm_dots4x(s.dense, pos, m, x4, d, out[0], out[1], out[2], out[3])
        for r in range(4):
            _dense_finish(&kern.spec, s, pos, m, s.dense + z[r] * d, out[r])
        free(x4)
        return
    kern.n_evals += 4 * m
    if m <= 0:
        return
    for r in range(4):
        zi[r] = s.indices + s.indptr[z[r]]
        zv[r] = s.data + s.indptr[z[r]]
        zn[r] = s.indptr[z[r] + 1] - s.indptr[z[r]]
    kernel_csr_many4(&kern.spec, s, pos, m, zi, zv, zn, out)


cdef void kernel_row_many(CKernel kern, RowStore s, const Py_ssize_t* pos, Py_ssize_t m,
                          const int* xi, const double* xv, Py_ssize_t xn,
                          double* out) noexcept nogil:
    """out[j] = k(stored row pos[j], x) for j < m (the rows 0 .. m-1 if pos is NULL):
    ``k_row_csr`` / ``k_row_dense``'s values bit for bit, m counted evaluations, in one call
    (a kernel column, an arrival's score, prediction).  CSR: ``kernel_csr_many``.  Dense
    (xi NULL, xn = n_features): ||x||^2 once, the inner products four stored rows at a
    time (independent sums in the order of ``dense_dot``), the store's squared norms, then
    the finish of ``kernel_dense`` (with at most 8 features both sums of every row and the
    choice made on bits: ``refsvm_sqdist_small``)."""
    cdef const KernelSpec* k = &kern.spec
    cdef Py_ssize_t j = 0, d = s.n_features
    cdef double sz
    kern.n_evals += m
    if m <= 0:
        return
    if s.sparse:
        kernel_csr_many(k, s, pos, m, xi, xv, xn, out)
        return
    if k.kind == 1 and d <= 8:
        refsvm_sqdist_small(s.dense, pos, m, xv, d, s.sqn, dense_dot(xv, xv, d), out)
        refsvm_exp_neg_many(out, m, k.gamma)
        return
    refsvm_dots(s.dense, d, pos, m, xv, d, out)  # eight inner products in flight
    _dense_finish(k, s, pos, m, xv, out)


cdef inline void _dense_finish(const KernelSpec* k, RowStore s, const Py_ssize_t* pos,
                               Py_ssize_t m, const double* xv, double* out) noexcept nogil:
    """out[j] = k(stored row pos[j], x) from out[j] = <stored row pos[j], x> (dense rows,
    more than 8 features): ``kernel_dense``'s finish, for ``kernel_row_many`` and the dense
    ``kernel_many4``."""
    cdef Py_ssize_t j, d = s.n_features
    cdef double sz
    if k.kind == 1:
        sz = dense_dot(xv, xv, d)
        for j in range(m):
            out[j] = _dense_dist(s.sqn[_at(pos, j)], sz, out[j], s.dense + _at(pos, j) * d,
                                 xv, d)
        refsvm_exp_neg_many(out, m, k.gamma)
    elif k.kind == 2:
        for j in range(m):
            out[j] = pow(k.gamma * out[j] + k.coef0, k.degree)


# ---------------------------------------------------------------- buffer growth
cdef int grow(void** buf, Py_ssize_t* capacity, Py_ssize_t need,
              size_t itemsize) except -1 nogil:
    """Make ``*buf`` hold at least ``need`` items of ``itemsize`` bytes (realloc to
    max(need, 2 * capacity, 16)); MemoryError on failure, the old buffer kept."""
    cdef Py_ssize_t cap
    cdef void* p
    if need <= capacity[0]:
        return 0
    cap = max(need, 2 * capacity[0], 16)
    p = realloc(buf[0], cap * itemsize)
    if p == NULL:
        with gil:
            raise MemoryError()
    buf[0] = p
    capacity[0] = cap
    return 0


# ---------------------------------------------------------------- inline helpers, from Python
def pa_step_value(int variant, double loss, double sqnorm, double C):
    """The compiled ``pa_step`` (inline in _core.pxd), callable from Python."""
    return pa_step(variant, loss, sqnorm, C)


cdef class ScaledVectorArray:
    """A :class:`refsvm.core.scaled.ScaledVector` held by the compiled ``sv_*`` functions.

    The twins embed the ``ScaledVector`` struct directly; this class exposes the same
    operations to Python (tests compare it with the reference, step by step).
    """

    cdef ScaledVector sv
    cdef object v_arr

    def __init__(self, Py_ssize_t n, bint track_norm=False):
        self.v_arr = np.zeros(n)
        cdef double[::1] v = self.v_arr
        sv_init(&self.sv, &v[0] if n else NULL, n, track_norm)

    def _row(self, x):
        if isinstance(x, SparseRow):
            return (np.ascontiguousarray(x.indices, dtype=np.int32),
                    np.ascontiguousarray(x.data, dtype=np.float64), True)
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape[0] != self.sv.n:
            raise ValueError(f"row of length {x.shape[0]}, expected {self.sv.n}")
        return None, x, False

    def dot(self, x):
        """<w, x> (sv_dot)."""
        return self.sv.s * self._vdot(x)

    def _vdot(self, x):
        """<v, x> (row_dot on the direction)."""
        cdef const int[::1] xi
        cdef const double[::1] xv
        idx, val, sparse = self._row(x)
        xv = val
        if sparse:
            xi = idx
            return row_dot(self.sv.v, &xi[0] if xi.shape[0] else NULL,
                           &xv[0] if xv.shape[0] else NULL, xv.shape[0])
        return row_dot(self.sv.v, NULL, &xv[0] if xv.shape[0] else NULL, xv.shape[0])

    def scale(self, double a):
        sv_scale(&self.sv, a)

    def add(self, double a, x, vx=None):
        cdef const int[::1] xi
        cdef const double[::1] xv
        if vx is None:
            vx = self._vdot(x)
        idx, val, sparse = self._row(x)
        xv = val
        if sparse:
            xi = idx
            sv_add_row(&self.sv, a, &xi[0] if xi.shape[0] else NULL,
                       &xv[0] if xv.shape[0] else NULL, xv.shape[0], vx)
        else:
            sv_add_row(&self.sv, a, NULL, &xv[0] if xv.shape[0] else NULL, xv.shape[0], vx)

    def sqnorm(self):
        return sv_sqnorm(&self.sv)

    def fold(self, double threshold=1e-9):
        sv_fold(&self.sv, threshold)

    @property
    def s(self):
        return self.sv.s

    @property
    def vnorm2(self):
        return self.sv.vnorm2

    @property
    def v(self):
        return self.v_arr.copy()

    @property
    def w(self):
        return self.sv.s * self.v_arr


# ---------------------------------------------------------------- row store
cdef class RowStore:
    """Growable store of examples, dense or CSR, in C buffers (appendable nogil).

    Parameters
    ----------
    n_features : int
    sparse : bool
        Store CSR rows (True) or dense rows (False).
    """

    def __cinit__(self, Py_ssize_t n_features, bint sparse=False):
        self.n_features = n_features
        self.sparse = sparse
        self.n_rows = 0
        self.capacity = 0
        self.nnz_capacity = 0
        self.dense = NULL
        self.data = NULL
        self.indices = NULL
        self.sqn = NULL
        self.wide = False
        self.indptr = <Py_ssize_t*> malloc(sizeof(Py_ssize_t))
        if self.indptr == NULL:
            raise MemoryError()
        self.indptr[0] = 0

    def __dealloc__(self):
        free(self.dense)
        free(self.data)
        free(self.indices)
        free(self.indptr)
        free(self.sqn)

    cdef int _reserve(self, Py_ssize_t rows, Py_ssize_t nnz) except -1 nogil:
        cdef Py_ssize_t cap
        cdef void* p
        if rows > self.capacity:
            cap = max(rows, 2 * self.capacity, 16)
            if self.sparse:
                p = realloc(self.indptr, (cap + 1) * sizeof(Py_ssize_t))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.indptr = <Py_ssize_t*> p
                p = realloc(self.sqn, cap * sizeof(double))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.sqn = <double*> p
            else:
                p = realloc(self.dense, cap * max(self.n_features, 1) * sizeof(double))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.dense = <double*> p
                p = realloc(self.sqn, cap * sizeof(double))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.sqn = <double*> p
            self.capacity = cap
        if self.sparse and nnz > self.nnz_capacity:
            cap = max(nnz, 2 * self.nnz_capacity, 64)
            p = realloc(self.data, cap * sizeof(double))
            if p == NULL:
                with gil:
                    raise MemoryError()
            self.data = <double*> p
            p = realloc(self.indices, cap * sizeof(int))
            if p == NULL:
                with gil:
                    raise MemoryError()
            self.indices = <int*> p
            self.nnz_capacity = cap
        return 0

    cdef int append_dense(self, const double* x) except -1 nogil:
        self._reserve(self.n_rows + 1, 0)
        memcpy(self.dense + self.n_rows * self.n_features, x, self.n_features * sizeof(double))
        self.sqn[self.n_rows] = dense_dot(x, x, self.n_features)
        self.n_rows += 1
        return 0

    cdef int append_csr(self, const int* idx, const double* val, Py_ssize_t nnz) except -1 nogil:
        cdef Py_ssize_t start = self.indptr[self.n_rows], p
        self._reserve(self.n_rows + 1, start + nnz)
        memcpy(self.data + start, val, nnz * sizeof(double))
        memcpy(self.indices + start, idx, nnz * sizeof(int))
        self.indptr[self.n_rows + 1] = start + nnz
        self.sqn[self.n_rows] = seq_sqnorm(val, nnz)
        if not self.wide:
            for p in range(nnz):
                if not 0 <= idx[p] < self.n_features:
                    self.wide = True
                    break
        self.n_rows += 1
        return 0

    cdef int keep(self, const Py_ssize_t* rows, Py_ssize_t n) except -1 nogil:
        """Keep only the listed rows, in that order (rows must be increasing)."""
        cdef Py_ssize_t r, src, start, nnz, pos = 0
        for r in range(n):
            src = rows[r]
            if self.sparse:
                start = self.indptr[src]
                nnz = self.indptr[src + 1] - start
                if pos != start:
                    memcpy(self.data + pos, self.data + start, nnz * sizeof(double))
                    memcpy(self.indices + pos, self.indices + start, nnz * sizeof(int))
                self.indptr[r] = pos
                self.sqn[r] = self.sqn[src]
                pos += nnz
            elif src != r:
                memcpy(self.dense + r * self.n_features, self.dense + src * self.n_features,
                       self.n_features * sizeof(double))
                self.sqn[r] = self.sqn[src]
        if self.sparse:
            self.indptr[n] = pos
        self.n_rows = n
        return 0

    cdef double kernel_rows(self, const KernelSpec* k, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t d = self.n_features
        if k.kind == 1:             # the kept squared norms: the same values, fewer sums
            if self.sparse:
                return exp(-k.gamma * _csr_rbf_dist(self, i, self.sqn[j], csr_dot_csr(
                    self.indices + self.indptr[i], self.data + self.indptr[i],
                    self.indptr[i + 1] - self.indptr[i], self.indices + self.indptr[j],
                    self.data + self.indptr[j], self.indptr[j + 1] - self.indptr[j]),
                    self.indices + self.indptr[j], self.data + self.indptr[j],
                    self.indptr[j + 1] - self.indptr[j]))
            return _rbf_dense(k, self.dense + i * d, self.dense + j * d, d, self.sqn[i],
                              self.sqn[j])
        if self.sparse:
            return kernel_csr(k, self.indices + self.indptr[i], self.data + self.indptr[i],
                              self.indptr[i + 1] - self.indptr[i],
                              self.indices + self.indptr[j], self.data + self.indptr[j],
                              self.indptr[j + 1] - self.indptr[j])
        return kernel_dense(k, self.dense + i * d, self.dense + j * d, d)

    cdef double kernel_row_dense(self, const KernelSpec* k, Py_ssize_t i,
                                 const double* x) noexcept nogil:
        if k.kind == 1:
            return _rbf_dense(k, self.dense + i * self.n_features, x, self.n_features,
                              self.sqn[i], -1.0)
        return kernel_dense(k, self.dense + i * self.n_features, x, self.n_features)

    cdef double kernel_row_csr(self, const KernelSpec* k, Py_ssize_t i, const int* xi,
                               const double* xv, Py_ssize_t xn) noexcept nogil:
        if k.kind == 1:
            return exp(-k.gamma * _csr_rbf_dist(self, i, seq_sqnorm(xv, xn), csr_dot_csr(
                self.indices + self.indptr[i], self.data + self.indptr[i],
                self.indptr[i + 1] - self.indptr[i], xi, xv, xn), xi, xv, xn))
        return kernel_csr(k, self.indices + self.indptr[i], self.data + self.indptr[i],
                          self.indptr[i + 1] - self.indptr[i], xi, xv, xn)

    # ---- Python-level helpers (tests, estimators, pickling) ----
    def append(self, X, Py_ssize_t i):
        """Append row ``i`` of a C-contiguous float64 array or a CSR matrix."""
        cdef const double[:, ::1] Xd
        cdef const double[::1] data
        cdef const int[::1] indices
        cdef Py_ssize_t start, stop
        if self.sparse:
            data = X.data
            indices = X.indices
            start = X.indptr[i]
            stop = X.indptr[i + 1]
            self.append_csr(&indices[start] if stop > start else NULL,
                            &data[start] if stop > start else NULL, stop - start)
        else:
            Xd = X
            self.append_dense(&Xd[i, 0])

    def keep_rows(self, rows):
        cdef Py_ssize_t[::1] r = np.ascontiguousarray(rows, dtype=np.intp)
        if r.shape[0]:
            self.keep(&r[0], r.shape[0])
        else:
            self.n_rows = 0
            if self.sparse:
                self.indptr[0] = 0

    def get_row(self, Py_ssize_t i):
        """Row ``i`` as a dense array or a SparseRow (copies)."""
        cdef Py_ssize_t j, start, stop
        if i < 0 or i >= self.n_rows:
            raise IndexError(i)
        if self.sparse:
            start, stop = self.indptr[i], self.indptr[i + 1]
            idx = np.empty(stop - start, dtype=np.int32)
            val = np.empty(stop - start, dtype=np.float64)
            for j in range(stop - start):
                idx[j] = self.indices[start + j]
                val[j] = self.data[start + j]
            return SparseRow(idx, val)
        out = np.empty(self.n_features, dtype=np.float64)
        for j in range(self.n_features):
            out[j] = self.dense[i * self.n_features + j]
        return out

    def to_matrix(self, rows=None):
        """The stored rows (all, or those listed) as a 2-D array or a CSR matrix."""
        if rows is None:
            rows = range(self.n_rows)
        got = [self.get_row(i) for i in rows]
        if not self.sparse:
            if not got:
                return np.zeros((0, self.n_features))
            return np.vstack(got)
        indptr = np.zeros(len(got) + 1, dtype=np.int64)
        for r, row in enumerate(got):
            indptr[r + 1] = indptr[r] + row.indices.shape[0]
        if got:
            indices = np.concatenate([g.indices for g in got])
            data = np.concatenate([g.data for g in got])
        else:
            indices, data = np.zeros(0, np.int32), np.zeros(0)
        return sp.csr_matrix((data, indices, indptr), shape=(len(got), self.n_features))

    def expansion(self, CKernel kern, coef, X, double start=0.0):
        """f(x) = start + sum_j coef[j] k(row_j, x) for every row of X (same format as the
        store), added left to right from ``start``.

        Only the first ``len(coef)`` stored rows take part; rows whose
        coefficient is 0 are skipped.  Prediction: the evaluations are not counted.
        """
        cdef const double[::1] c = np.ascontiguousarray(coef, dtype=np.float64)
        cdef Py_ssize_t r, j, m = X.shape[0], n = c.shape[0]
        cdef double f
        cdef double[::1] out = np.zeros(m)
        cdef const double[:, ::1] Xd
        cdef const double[::1] data
        cdef const int[::1] indices
        cdef const Py_ssize_t[::1] indptr
        cdef const int* xi
        cdef const double* xv
        cdef const Py_ssize_t[::1] pos
        cdef double[::1] kv
        if n > self.n_rows:
            raise ValueError("more coefficients than stored rows")
        if not self.sparse and m and X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, the store {self.n_features}")
        if m == 0:
            return np.asarray(out)
        pos = np.flatnonzero(np.asarray(c)).astype(np.intp)   # the rows with c[j] != 0
        kv = np.empty(max(pos.shape[0], 1))
        # k(row pos[j], x) by kernel_row_many (kernel_row_csr / kernel_row_dense's values),
        # summed with j ascending as before; prediction: the evaluations are not counted
        if self.sparse:
            data = np.ascontiguousarray(X.data, dtype=np.float64)
            indices = np.ascontiguousarray(X.indices, dtype=np.int32)
            indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
            with nogil:
                for r in range(m):
                    xi = &indices[indptr[r]] if indptr[r + 1] > indptr[r] else NULL
                    xv = &data[indptr[r]] if indptr[r + 1] > indptr[r] else NULL
                    kernel_row_many(kern, self, &pos[0] if pos.shape[0] else NULL,
                                    pos.shape[0], xi, xv, indptr[r + 1] - indptr[r], &kv[0])
                    kern.n_evals -= pos.shape[0]
                    f = start
                    for j in range(pos.shape[0]):
                        f += c[pos[j]] * kv[j]
                    out[r] = f
        else:
            Xd = X
            with nogil:
                for r in range(m):
                    kernel_row_many(kern, self, &pos[0] if pos.shape[0] else NULL,
                                    pos.shape[0], NULL, &Xd[r, 0], self.n_features, &kv[0])
                    kern.n_evals -= pos.shape[0]
                    f = start
                    for j in range(pos.shape[0]):
                        f += c[pos[j]] * kv[j]
                    out[r] = f
        return np.asarray(out)

    def __len__(self):
        return self.n_rows

    def __reduce__(self):
        return (_rebuild_store, (self.n_features, self.sparse, self.to_matrix()))


def _rebuild_store(n_features, sparse, M):
    s = RowStore(n_features, sparse)
    if sparse:
        M = sp.csr_matrix(M)
        M.indices = M.indices.astype(np.int32)
    for i in range(M.shape[0]):
        s.append(M, i)
    return s


# ---------------------------------------------------------------- counting kernel
cdef class CKernel:
    """Compiled twin of :class:`refsvm.core.kernels.Kernel` (counts ``n_evals``)."""

    def __init__(self, kind="rbf", gamma=1.0, degree=3, coef0=0.0):
        if kind not in KERNEL_CODES:
            raise ValueError(f"unknown kernel {kind!r}")
        self.spec.kind = KERNEL_CODES[kind]
        self.spec.gamma = gamma
        self.spec.degree = degree
        self.spec.coef0 = coef0
        self.n_evals = 0

    @property
    def kind(self):
        return ("linear", "rbf", "poly")[self.spec.kind]

    @property
    def gamma(self):
        return self.spec.gamma

    @property
    def degree(self):
        return self.spec.degree

    @property
    def coef0(self):
        return self.spec.coef0

    cdef double k_rows(self, RowStore s, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        self.n_evals += 1
        return s.kernel_rows(&self.spec, i, j)

    cdef double k_row_dense(self, RowStore s, Py_ssize_t i, const double* x) noexcept nogil:
        self.n_evals += 1
        return s.kernel_row_dense(&self.spec, i, x)

    cdef double k_row_csr(self, RowStore s, Py_ssize_t i, const int* xi, const double* xv,
                          Py_ssize_t xn) noexcept nogil:
        self.n_evals += 1
        return s.kernel_row_csr(&self.spec, i, xi, xv, xn)

    def __call__(self, x, z):
        """k(x, z) for two dense arrays or two SparseRows; one counted evaluation."""
        cdef const double[::1] xd, zd, xv, zv
        cdef const int[::1] xi, zi
        self.n_evals += 1
        if isinstance(x, SparseRow):
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            zi = np.ascontiguousarray(z.indices, dtype=np.int32)
            zv = np.ascontiguousarray(z.data, dtype=np.float64)
            return kernel_csr(&self.spec, &xi[0] if xi.shape[0] else NULL,
                              &xv[0] if xv.shape[0] else NULL, xi.shape[0],
                              &zi[0] if zi.shape[0] else NULL,
                              &zv[0] if zv.shape[0] else NULL, zi.shape[0])
        xd = np.ascontiguousarray(x, dtype=np.float64)
        zd = np.ascontiguousarray(z, dtype=np.float64)
        if xd.shape[0] != zd.shape[0]:
            raise ValueError("rows of different lengths")
        if xd.shape[0] == 0:
            return kernel_dense(&self.spec, NULL, NULL, 0)
        return kernel_dense(&self.spec, &xd[0], &zd[0], xd.shape[0])

    def row(self, RowStore store, x, bint many=False):
        """[k(store[i], x) for every stored row], counted as n_rows evaluations: by
        ``k_row_csr`` / ``k_row_dense`` one by one, or (``many``) by one
        ``kernel_row_many`` call (the same values)."""
        cdef Py_ssize_t i, n = store.n_rows
        cdef double[::1] out = np.empty(max(n, 1))
        cdef const double[::1] xd, xv
        cdef const int[::1] xi
        if store.sparse:
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            if many:
                kernel_row_many(self, store, NULL, n, &xi[0] if xi.shape[0] else NULL,
                                &xv[0] if xv.shape[0] else NULL, xi.shape[0], &out[0])
            else:
                for i in range(n):
                    out[i] = self.k_row_csr(store, i, &xi[0] if xi.shape[0] else NULL,
                                            &xv[0] if xv.shape[0] else NULL, xi.shape[0])
        else:
            xd = np.ascontiguousarray(x, dtype=np.float64)
            if xd.shape[0] != store.n_features:
                raise ValueError(f"x has {xd.shape[0]} features, the store "
                                 f"{store.n_features}")
            if many:
                kernel_row_many(self, store, NULL, n, NULL, &xd[0] if xd.shape[0] else NULL,
                                xd.shape[0], &out[0])
            else:
                for i in range(n):
                    out[i] = self.k_row_dense(store, i, &xd[0])
        return np.asarray(out)[:n]

    def rows_pairs(self, RowStore store, Py_ssize_t z, pos, bint many=True):
        """[k(store[pos[j]], store[z])]: by ``kernel_many`` (one call), or (``many``
        False) by ``k_rows`` one by one; len(pos) counted evaluations either way."""
        cdef const Py_ssize_t[::1] p = np.ascontiguousarray(pos, dtype=np.intp)
        cdef Py_ssize_t j, m = p.shape[0]
        if not 0 <= z < store.n_rows or (m and not (0 <= np.min(pos) and np.max(pos) < store.n_rows)):
            raise IndexError("row id out of range")
        cdef double[::1] out = np.empty(max(m, 1))
        if many:
            kernel_many(self, store, z, &p[0] if m else NULL, m, &out[0])
        else:
            for j in range(m):
                out[j] = self.k_rows(store, p[j], z)
        return np.asarray(out)[:m]

    def rows_pairs4(self, RowStore store, z, pos):
        """[[k(store[pos[j]], store[z[r]]) for j] for r < 4] by one ``kernel_many4`` call
        (4 len(pos) counted evaluations): the values of ``rows_pairs`` for each z[r]."""
        cdef const Py_ssize_t[::1] zz = np.ascontiguousarray(z, dtype=np.intp)
        cdef const Py_ssize_t[::1] p = np.ascontiguousarray(pos, dtype=np.intp)
        cdef Py_ssize_t r, m = p.shape[0]
        cdef double* outs[4]
        if zz.shape[0] != 4:
            raise ValueError("rows_pairs4 takes four rows z")
        if (not (0 <= np.min(z) and np.max(z) < store.n_rows)
                or (m and not (0 <= np.min(pos) and np.max(pos) < store.n_rows))):
            raise IndexError("row id out of range")
        out = np.empty((4, max(m, 1)))
        cdef double[:, ::1] o = out
        for r in range(4):
            outs[r] = &o[r, 0]
        kernel_many4(self, store, &zz[0], &p[0] if m else NULL, m, outs)
        return out[:, :m]


# ---------------------------------------------------------------- row checks
# The row checks of run_checked, in C (refsvm/_csrc/refsvm_rows.c: counts, no branch, so
# that they vectorise; an AVX2 body where the CPU has it).
cdef bint row_values_bad(const double* v, Py_ssize_t n, double limit) noexcept nogil:
    """Some |v_p| is not <= limit: NaN, an infinity or a value above the bound."""
    return refsvm_values_bad(v, n, limit)


cdef bint row_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d) noexcept nogil:
    """Some column index is outside [0, d)."""
    return refsvm_indices_bad(idx, n, d)


def row_check_value(x, double limit, Py_ssize_t n_features):
    """The compiled row check, callable from Python (tests): True when the dense row or
    SparseRow ``x`` is bad (see ``StreamLearner.run_checked``)."""
    cdef const double[::1] xv
    cdef const int[::1] xi
    if isinstance(x, SparseRow):
        xi = np.ascontiguousarray(x.indices, dtype=np.int32)
        xv = np.ascontiguousarray(x.data, dtype=np.float64)
        if xv.shape[0] == 0:
            return False
        return bool(row_values_bad(&xv[0], xv.shape[0], limit)
                    or row_indices_bad(&xi[0], xi.shape[0], n_features))
    xv = np.ascontiguousarray(x, dtype=np.float64)
    if xv.shape[0] == 0:
        return False
    return bool(row_values_bad(&xv[0], xv.shape[0], limit))


def csr_row_dot_values(w, indices, data):
    """The CSR row arithmetic, callable from Python (tests): ``(row_dot,
    row_dot_sqnorm_trusted and its squared norm, row_dot_sqnorm and its squared norm and
    bad-index flag)`` of the row (``indices``, ``data``) against w (d = len(w) >= 1).  An
    index outside [0, d) is read as 0 by the checked form only; the others must not be
    given one."""
    cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
    cdef const int[::1] xi = np.ascontiguousarray(indices, dtype=np.int32)
    cdef const double[::1] xv = np.ascontiguousarray(data, dtype=np.float64)
    cdef Py_ssize_t n = xv.shape[0], d = wv.shape[0]
    cdef double dot = 0.0, dot_t = 0.0, sq_t = 0.0, dot_c, sq_c
    cdef bint bad = False
    if xi.shape[0] != n or d < 1:
        raise ValueError("indices and data differ in length, or w is empty")
    if n == 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, False
    if not row_indices_bad(&xi[0], n, d):  # the unchecked forms only on a good row
        dot = row_dot(&wv[0], &xi[0], &xv[0], n)
        dot_t = row_dot_sqnorm_trusted(&wv[0], &xi[0], &xv[0], n, &sq_t)
    dot_c = row_dot_sqnorm(&wv[0], &xi[0], &xv[0], n, d, &sq_c, &bad)
    return dot, dot_t, sq_t, dot_c, sq_c, bool(bad)


# ---------------------------------------------------------------- CSR input
cdef object csr_view(CSRView* view, object X):
    """Point ``view`` at the arrays of the CSR matrix X: float64 data, int32 column indices,
    an int32 or int64 ``indptr`` (read as it is: no pass over X when the dtypes already
    fit; other dtypes are converted).  Returns the arrays the view points into: keep that
    object alive while the view is used."""
    cdef cnp.ndarray data = np.ascontiguousarray(X.data, dtype=np.float64)
    cdef cnp.ndarray indices = np.ascontiguousarray(X.indices, dtype=np.int32)
    cdef cnp.ndarray indptr = X.indptr
    if not (indptr.dtype == np.int32 and indptr.flags.c_contiguous):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    view.data = <const double*> cnp.PyArray_DATA(data)
    view.indices = <const int*> cnp.PyArray_DATA(indices)
    view.n_rows = indptr.shape[0] - 1
    if indptr.dtype == np.int32:
        view.indptr32 = <const int*> cnp.PyArray_DATA(indptr)
        view.indptr64 = NULL
    else:
        view.indptr32 = NULL
        view.indptr64 = <const long long*> cnp.PyArray_DATA(indptr)
    return (data, indices, indptr)


def max_row_sqnorm(X, double limit, Py_ssize_t n_features):
    """``(R2, n_done)``: the largest squared norm ``||x_j||^2`` over the rows of X
    (C-contiguous float64 array, or CSR with float64 data and int32 indices), each row
    checked as :meth:`StreamLearner.run_checked` checks it (values finite with
    ``|x_j| <= limit``; CSR column indices in ``[0, n_features)``); stops before the first
    bad row: rows ``0 .. n_done - 1`` were read, ``R2`` is their maximum, and row
    ``n_done`` (when ``n_done < n``) is bad.  One compiled read of X: the radius that the
    Perceptron's ``fit`` needs before its first pass, with the input check of that pass.
    Squared norms as ``row_sqnorm`` (four partial sums), as the compiled Perceptron's step."""
    cdef const double[:, ::1] Xd
    cdef CSRView view
    cdef const int* xi
    cdef const double* xv
    cdef Py_ssize_t i = 0, n = X.shape[0], nnz, d = n_features
    cdef double R2 = 0.0, sq
    if sp.issparse(X):
        keep = csr_view(&view, X)
        with nogil:
            while i < n:
                nnz = csr_row(&view, i, &xi, &xv)
                if nnz:
                    if row_indices_bad(xi, nnz, d) or row_values_bad(xv, nnz, limit):
                        break
                    sq = row_sqnorm(xv, nnz)
                    if sq > R2:
                        R2 = sq
                i += 1
    else:
        Xd = X
        if Xd.shape[1] != d:
            raise ValueError(f"X has {Xd.shape[1]} features, expected {d}")
        if d == 0:
            return 0.0, n
        with nogil:
            while i < n:
                if row_values_bad(&Xd[i, 0], d, limit):
                    break
                sq = row_sqnorm(&Xd[i, 0], d)
                if sq > R2:
                    R2 = sq
                i += 1
    return R2, i


def two_values(y):
    """The distinct values of a 1-D float64 or int64 array y, sorted, when it holds one or
    two (the common binary stream), in one compiled read without a branch per value (the
    labels of a stream alternate at random: a branch would be mispredicted half the time);
    None otherwise (more values, NaN, another dtype or layout: ask ``np.unique``)."""
    cdef const double[::1] yd
    cdef const long long[::1] yl
    cdef Py_ssize_t i = 1, j, n
    cdef double a, b, v
    cdef long long la, lb, lv
    cdef double bad = 0.0        # the count of other values (a double: the loop vectorises)
    cdef int lbad = 0
    if not isinstance(y, np.ndarray) or y.ndim != 1 or y.shape[0] == 0:
        return None
    if y.dtype == np.float64 and y.flags.c_contiguous:
        yd = y
        n = yd.shape[0]
        a = yd[0]
        if a != a:
            return None
        with nogil:
            while i < n and yd[i] == a:
                i += 1
            b = yd[i] if i < n else a
            for j in range(i, n):
                v = yd[j]
                bad += 0.0 if (v == a) | (v == b) else 1.0   # NaN is neither
        if bad:
            return None
        return np.array([min(a, b), max(a, b)] if b != a else [a], dtype=y.dtype)
    if y.dtype == np.int64 and y.flags.c_contiguous:
        yl = y
        n = yl.shape[0]
        la = yl[0]
        with nogil:
            while i < n and yl[i] == la:
                i += 1
            lb = yl[i] if i < n else la
            for j in range(i, n):
                lv = yl[j]
                lbad |= (lv != la) & (lv != lb)
        if lbad:
            return None
        return np.array([min(la, lb), max(la, lb)] if lb != la else [la], dtype=y.dtype)
    return None


# ---------------------------------------------------------------- stream driver
cdef inline Py_ssize_t* _order_view(object order, Py_ssize_t* first, Py_ssize_t* n,
                                    list keep) except? NULL:
    """The examples to learn: a ``range`` with step 1 (no array: ``*first`` is its start,
    NULL returned) or an array of row numbers (its intp buffer, kept alive in ``keep``)."""
    cdef cnp.ndarray od
    if isinstance(order, range) and order.step == 1:
        first[0] = order.start
        n[0] = max(0, order.stop - order.start)
        return NULL
    od = np.ascontiguousarray(order, dtype=np.intp)
    keep.append(od)
    first[0] = 0
    n[0] = od.shape[0]
    return <Py_ssize_t*> cnp.PyArray_DATA(od) if n[0] else NULL


cdef inline object _result(bint checked, long long changes, Py_ssize_t n_done):
    """What ``run`` (changes) and ``run_checked`` ((changes, n_done)) return."""
    if checked:
        return changes, n_done
    return changes


cdef object _drive(StreamLearner self, X, y, order, bint checked, double limit):
    """``run`` (``checked`` False) and ``run_checked`` of ``self``."""
    cdef const double[:, ::1] Xd
    cdef CSRView view
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    cdef list keep = []
    cdef Py_ssize_t first = 0, n = 0
    cdef const Py_ssize_t* od = _order_view(order, &first, &n, keep)
    cdef Py_ssize_t t = 0, i, nnz, d = self.n_features
    cdef long long changes = 0
    cdef int r
    cdef const int* xi
    cdef const double* xv
    if n == 0:
        return _result(checked, 0, 0)
    if self.sparse:
        keep.append(csr_view(&view, X))
        with nogil:
            while t < n:
                i = od[t] if od != NULL else first + t
                nnz = csr_row(&view, i, &xi, &xv)
                if checked:
                    r = self._step_checked(xi, xv, nnz, yv[i], limit)
                    if r == STEP_BAD:
                        break
                else:
                    r = self._step(xi, xv, nnz, yv[i])
                changes += r
                t += 1
    else:
        Xd = X
        if Xd.shape[1] != d:
            raise ValueError(f"X has {Xd.shape[1]} features, expected {d}")
        if Xd.shape[0] == 0:
            return _result(checked, 0, 0)
        with nogil:
            while t < n:
                i = od[t] if od != NULL else first + t
                xv = &Xd[i, 0] if d else NULL
                if checked:
                    r = self._step_checked(NULL, xv, d, yv[i], limit)
                    if r == STEP_BAD:
                        break
                else:
                    r = self._step(NULL, xv, d, yv[i])
                changes += r
                t += 1
    return _result(checked, changes, t)


cdef class StreamLearner:
    """Base of the compiled states that learn one example at a time.

    A subclass sets ``n_features`` and ``sparse`` and implements ``_step`` for one example
    in the core's row convention: a CSR row (indices ``xi``, values ``xv``, ``nnz``
    entries) when ``sparse``, else the ``n_features`` values at ``xv`` (``xi`` NULL,
    ``nnz == n_features``).  ``_step`` returns 1 when the example changed the model,
    else 0.  ``step`` (one example from Python) and ``run`` (a whole stream, without the
    GIL) are written once, here; the reference driver is
    :class:`refsvm.core.stream.StreamLearner`.

    ``run_checked`` calls ``_step_checked``: here the row check, then ``_step``.  A state
    whose step reads the whole row before it changes anything (the linear twins: <w, x>
    first) overrides it with the check fused into that read (``row_dot_sqnorm`` and
    ``row_screen``: one compare per CSR index in the loop that uses it, the squared norm
    beside the dot; for a dense row with any finite value accepted, <w, x> alone,
    ``row_bad_by_dot``), so that the checked pass costs about what the plain one does.
    """

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        with gil:
            raise NotImplementedError("StreamLearner._step")

    cdef int _step_checked(self, const int* xi, const double* xv, Py_ssize_t nnz,
                           double y, double limit) except -1 nogil:
        """The row check, then ``_step``: STEP_BAD (nothing changed) for a bad row."""
        if nnz > 0:
            if xi != NULL and row_indices_bad(xi, nnz, self.n_features):
                return STEP_BAD
            if row_values_bad(xv, nnz, limit):
                return STEP_BAD
        return self._step(xi, xv, nnz, y)

    def step(self, x, double y):
        """Learn one example: x a dense row, or a :class:`refsvm.core.kernels.SparseRow`.
        Returns 1 when the model changed, else 0."""
        cdef const double[::1] xd, xv
        cdef const int[::1] xi
        if self.sparse:
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            return self._step(&xi[0] if xi.shape[0] else NULL,
                              &xv[0] if xv.shape[0] else NULL, xi.shape[0], y)
        xd = np.ascontiguousarray(x, dtype=np.float64)
        if xd.shape[0] != self.n_features:
            raise ValueError(f"row of length {xd.shape[0]}, expected {self.n_features}")
        return self._step(NULL, &xd[0] if xd.shape[0] else NULL, self.n_features, y)

    def run(self, X, y, order):
        """Learn the rows of X (C-contiguous float64 array, or CSR) in ``order`` (an array
        of row numbers, or a ``range``); return the number of examples that changed the
        model.

        CSR input: float64 data, int32 column indices, an int32 or int64 ``indptr``
        (read as it is: a call over a slice of ``order`` costs no pass over X)."""
        return _drive(self, X, y, order, False, 0.0)

    def run_checked(self, X, y, order, double limit):
        """``run`` with the input check fused into the pass: each row is checked as it is
        read, before it changes anything -- every value finite with ``|x_j| <= limit``,
        and for CSR every column index in ``[0, n_features)`` (``indptr`` must already be
        valid: non-decreasing, within the index arrays).  Stops before the first bad row.

        Returns ``(changes, n_done)``: the examples ``order[:n_done]`` were learned
        (``changes`` counts their changes); when ``n_done < len(order)``, row
        ``order[n_done]`` is bad and the state is the state after ``order[:n_done]``.
        One pass over X (``_step_checked``).  Reference:
        :meth:`refsvm.core.stream.StreamLearner.run_checked` (which checks each row
        before its step)."""
        return _drive(self, X, y, order, True, limit)

    # ---- the persistence protocol of every state (both twins, one format) ----
    def init_params(self):
        """The constructor's keyword arguments (plain numbers, strings, booleans)."""
        raise NotImplementedError(f"{type(self).__name__}.init_params")

    def save_state(self):
        """Everything learned, as a dict of NumPy arrays and plain scalars, in a format
        that both twins share (so a state saved by one loads into the other)."""
        raise NotImplementedError(f"{type(self).__name__}.save_state")

    def load_state(self, data):
        """Restore what ``save_state`` returned (into a freshly constructed state)."""
        raise NotImplementedError(f"{type(self).__name__}.load_state")

    def __reduce__(self):
        return (restore_state, (type(self), self.init_params(), self.save_state()))

    def __deepcopy__(self, memo):
        """A deep copy of a live state, not validated (``refsvm.core.stream.live_copy``)."""
        from refsvm.core.stream import live_copy

        return live_copy(self, memo, restore_state)


def restore_state(cls, params, data):
    """A state of class ``cls`` built with ``params`` and loaded with ``data`` (the
    unpickling half of the persistence protocol; the reference's is the same), once the
    state's validator (:func:`refsvm._state_checks.check_state`) has passed them: a pickle
    is input too, and no compiled loop may see an unchecked state."""
    from refsvm._state_checks import check_state

    check_state(cls.__name__, params, data, where=f"unpickled {cls.__name__}")
    obj = cls(**params)
    obj.load_state(data)
    return obj


# ================================================================ bordered inverse
# Section owned by the IDSVM family: Python access to the inline bordered-inverse
# functions of _core.pxd (for tests against refsvm.core.bordered; the twins call the
# inline functions directly).

def bordered_start_array(double a, double q):
    """The compiled ``bordered_start``: inverse of [[0, a], [a, q]]."""
    out = np.zeros((2, 2))
    cdef double[:, ::1] R = out
    bordered_start(&R[0, 0], 2, a, q)
    return out


def bordered_grow_array(Rinv, beta, double kappa):
    """The compiled ``bordered_grow`` on copies: the inverse grown by one row/column."""
    cdef Py_ssize_t n = Rinv.shape[0]
    out = np.zeros((n + 1, n + 1))
    out[:n, :n] = Rinv
    b = np.zeros(n + 1)
    b[:n] = beta
    cdef double[:, ::1] R = out
    cdef double[::1] bv = b
    bordered_grow(&R[0, 0], n + 1, n, &bv[0], kappa)
    return out


def bordered_shrink_array(Rinv, Py_ssize_t p, double eps):
    """The compiled ``bordered_shrink`` on a copy: the inverse without row/column p, or
    None when the pivot is too small."""
    cdef Py_ssize_t n = Rinv.shape[0]
    out = np.array(Rinv, dtype=np.float64, order="C", copy=True)
    work = np.empty(n)
    cdef double[:, ::1] R = out
    cdef double[::1] w = work
    if bordered_shrink(&R[0, 0], n, n, p, eps, &w[0]):
        return None
    return out[: n - 1, : n - 1].copy()


def bordered_max_abs_value(R, Py_ssize_t n):
    """The compiled ``bordered_max_abs`` of the leading n x n block of R (rows of R as
    stored, leading dimension its number of columns)."""
    cdef const double[:, ::1] Rv = np.ascontiguousarray(R, dtype=np.float64)
    if n < 0 or n > Rv.shape[0] or n > Rv.shape[1]:
        raise ValueError(f"n = {n} outside the {Rv.shape[0]} x {Rv.shape[1]} matrix")
    if n == 0:
        return 0.0
    return bordered_max_abs(&Rv[0, 0], Rv.shape[1], n)


def bordered_drift_value(Rinv, y, KS, S):
    """The compiled ``bordered_drift`` of Rinv against M = [[0, y_S'], [y_S, Q_SS]],
    with Q read from the kernel columns ``KS`` (row = example id, column = position
    in S), as the twins hold them."""
    cdef const double[:, ::1] R = np.ascontiguousarray(Rinv, dtype=np.float64)
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    cdef const Py_ssize_t[::1] Sv = np.ascontiguousarray(S, dtype=np.intp)
    cols = [np.ascontiguousarray(KS[:, j], dtype=np.float64) for j in range(len(S))]
    cdef Py_ssize_t k = Sv.shape[0], j
    cdef double** cp = <double**> malloc(max(k, 1) * sizeof(double*))
    cdef double[::1] c
    u = np.empty(k + 1)
    w = np.empty(k + 1)
    cdef double[::1] uv = u, wv = w
    if cp == NULL:
        raise MemoryError()
    try:
        for j in range(k):
            c = cols[j]
            cp[j] = &c[0]
        return bordered_drift(&R[0, 0], R.shape[1], k, &yv[0], &Sv[0], cp, &uv[0], &wv[0])
    finally:
        free(cp)


def cols_matvec_array(KS, v, bint back=False):
    """The compiled sweep ``refsvm_cols_matvec``: out = KS v over the columns of ``KS``
    (n x k), every row's sum from 0 left to right; ``back`` walks the row blocks from the
    last (the same sums)."""
    cols = [np.ascontiguousarray(KS[:, j], dtype=np.float64) for j in range(KS.shape[1])]
    cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
    cdef Py_ssize_t k = len(cols), n = KS.shape[0], j
    cdef double** cp = <double**> malloc(max(k, 1) * sizeof(double*))
    cdef const double[::1] c
    out = np.empty(n)
    cdef double[::1] o = out
    if cp == NULL:
        raise MemoryError()
    try:
        for j in range(k):
            c = cols[j]
            cp[j] = <double*> &c[0]
        if n:
            refsvm_cols_matvec(&o[0], cp, &vv[0] if k else NULL, k, n, back)
        return out
    finally:
        free(cp)


def exp_width(width=None):
    """How many exp values the kernels take at a time: 8 (AVX-512F), 4 (AVX2 and FMA) or 1
    (the C library's exp one by one); each vector form reproduces the library's exp and is
    taken only if it passed the check at import (``refsvm_exp_neg_many``).  ``width``
    sets it (1 always; 4 or 8 only where that form passed: ValueError otherwise), for the
    tests and the benchmark of the gain: the values are the same bits at every width."""
    if width is not None:
        if width not in exp_widths():
            raise ValueError(f"exp width {width!r} is not available here: {exp_widths()}")
        refsvm_exp_set_width(width)
    return refsvm_exp_get_width()


def sweep_width(width=None):
    """How many rows at a time the core's sweep (``refsvm_cols_matvec``) and axpy
    (``refsvm_axpy``) in this module take: 8 (AVX-512F), 4 (AVX2) or 1 (the baseline), the
    widest the CPU has by default.  ``width`` sets it (one of :func:`sweep_widths`:
    ValueError otherwise), for the tests: every body gives the same bits."""
    if width is not None:
        if width not in sweep_widths():
            raise ValueError(f"sweep width {width!r} is not available here: {sweep_widths()}")
        refsvm_rows_set_width(width)
    return refsvm_rows_get_width()


def sweep_widths():
    """The sweep's widths this CPU runs (1 always)."""
    cdef int saved = refsvm_rows_get_width(), w
    out = []
    for w in (8, 4, 1):
        refsvm_rows_set_width(w)
        if refsvm_rows_get_width() == w:
            out.append(w)
    refsvm_rows_set_width(saved)
    return out


def exp_widths():
    """The widths that passed the check at import (1 always)."""
    return [w for w in (8, 4, 1) if refsvm_exp_form_ok(w)]


def exp_table():
    """The vector exp's table as 256 unsigned 64-bit words (tail, bits) per i < 128."""
    cdef const unsigned long long* t = refsvm_exp_table()
    return np.array([t[i] for i in range(256)], dtype=np.uint64)


def exp_neg_array(d2, double gamma):
    """exp(-gamma * d2) of every value, as the RBF kernels take it (``refsvm_exp_neg_many``:
    the C library's exp bit for bit, ``exp_width()`` values at a time)."""
    out = np.array(d2, dtype=np.float64, order="C", copy=True).ravel()
    cdef double[::1] o = out
    if out.size:
        refsvm_exp_neg_many(&o[0], out.size, gamma)
    return out


refsvm_exp_init()      # the checks once, at import (not raced by the first nogil callers)


def bordered_beta_array(Rinv, m):
    """The compiled ``bordered_beta``: -Rinv m."""
    cdef const double[:, ::1] R = np.ascontiguousarray(Rinv, dtype=np.float64)
    cdef const double[::1] mv = np.ascontiguousarray(m, dtype=np.float64)
    cdef Py_ssize_t n = R.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    bordered_beta(&R[0, 0], n, n, &mv[0], &o[0])
    return out


def rows_matvec_array(A, v, bint negate=False):
    """The compiled ``rows_matvec``: A' v, each sum left to right; ``negate``: the
    compiled ``bordered_beta_sym``, -A' v."""
    cdef const double[:, ::1] R = np.ascontiguousarray(A, dtype=np.float64)
    cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
    cdef Py_ssize_t n = R.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    cdef double** rows = <double**> malloc(max(n, 1) * sizeof(double*))
    if rows == NULL:
        raise MemoryError()
    if n and negate:
        bordered_beta_sym(&R[0, 0], n, n, &vv[0], &o[0], rows)
    elif n:
        rows_matvec(&o[0], &R[0, 0], n, n, &vv[0], rows)
    free(rows)
    return out


def bordered_beta_sym_array(Rinv, m):
    """The compiled ``bordered_beta_sym``: -Rinv' m."""
    return rows_matvec_array(Rinv, m, True)


def bordered_symmetrize_array(Rinv):
    """The compiled ``bordered_symmetrize`` (on a copy)."""
    out = np.array(Rinv, dtype=np.float64, order="C", copy=True)
    cdef double[:, ::1] o = out
    if o.shape[0]:
        bordered_symmetrize(&o[0, 0], o.shape[0], o.shape[0])
    return out


def bordered_pivot_value(double q, m, beta):
    """The compiled ``bordered_pivot``: q + m' beta."""
    cdef const double[::1] mv = np.ascontiguousarray(m, dtype=np.float64)
    cdef const double[::1] bv = np.ascontiguousarray(beta, dtype=np.float64)
    return bordered_pivot(q, &mv[0], &bv[0], mv.shape[0])


def pivot_bound_value(double q, beta, border, root):
    """The compiled ``pivot_bound`` (idx NULL)."""
    cdef const double[::1] bv = np.ascontiguousarray(beta, dtype=np.float64)
    cdef const double[::1] av = np.ascontiguousarray(border, dtype=np.float64)
    cdef const double[::1] rv = np.ascontiguousarray(root, dtype=np.float64)
    cdef Py_ssize_t k = av.shape[0]
    return pivot_bound(q, &bv[0], k, &av[0] if k else NULL, &rv[0] if k else NULL, NULL)


def pivot_round_off_scale_value(double q, beta, M):
    """The compiled ``pivot_round_off_scale``."""
    cdef const double[::1] bv = np.ascontiguousarray(beta, dtype=np.float64)
    cdef const double[:, ::1] Mv = np.ascontiguousarray(M, dtype=np.float64)
    return pivot_round_off_scale(q, &bv[0], &Mv[0, 0], Mv.shape[1], Mv.shape[0])


def pivot_tests_value(double kappa, double scale, double abs_scale, double eps_doubt,
                      double eps_rel, double eps_abs):
    """(pivot_doubtful, pivot_is_zero) of the compiled core."""
    return (bool(pivot_doubtful(kappa, scale, eps_doubt)),
            bool(pivot_is_zero(kappa, scale, abs_scale, eps_rel, eps_abs)))


def least_index_event_value(events, double tmin, fallback=None):
    """The compiled least-index choice over (t, kind, index, window, priority) events,
    as refsvm.core.bordered.least_index_event: returns (kind, index)."""
    cdef EventChoice e
    event_start(&e, tmin)
    for t, kind, index, window, priority in events:
        if event_tied(t, tmin, window):
            if priority:
                event_take(&e, kind, index)
                return e.kind, e.index
            event_least_index(&e, kind, index)
    if e.kind < 0 and fallback is not None and event_tied(fallback[0], tmin, fallback[3]):
        event_take(&e, fallback[1], fallback[2])
    return e.kind, e.index


def smallest_event_value(events, double tmax=float("inf")):
    """Pass 1 of the compiled choice: (t, kind, index) of the strictly smallest step."""
    cdef EventChoice e
    event_start(&e, tmax)
    for t, kind, index in events:
        event_smaller(&e, t, kind, index)
    return e.t, e.kind, e.index


# ---------------------------------------------------------------- the column cache
cdef class ColumnCache:
    """The column cache of the exact active-set engine (Cauwenberghs-Poggio's increments
    and POKER's paths; the reference: :class:`refsvm.core.column_cache.ColumnCache`): the
    kernel columns of examples that left the margin set, kept for a later return, at most
    ``budget`` bytes of columns of the current length, the oldest out first.

    The entries are the owner's columns as it hands them over (IDSVM's twin: 0 for
    unlearned examples; POKER's twin: NaN outside the problem, ``clean`` when there is
    none).  With ``adopt`` false, ``put`` keeps a copy of the n values it is given and an
    entry that goes frees it; with ``adopt`` true, ``put`` keeps the buffer itself
    (capacity ``room``), ``take`` hands it back, an entry that goes gives its buffer to the
    owner's spares (``lend_spares``) and ``copy_into`` shares the buffers with a copy (a
    cache that takes a shared column gets a copy of it, one that drops it drops its
    share).  The slots are unordered (a dropped slot is filled by the last); the stamps
    give the age.  The per-example slot index grows with ``reserve`` (and ``insert``).

    Examples
    --------
    >>> from refsvm._core import ColumnCache
    >>> cache = ColumnCache()
    >>> len(cache), cache.ids().tolist()
    (0, [])
    """

    def __cinit__(self, bint adopt=False):
        self.adopt = adopt
        self.budget = 0
        self.slot = NULL
        self.nids = 0
        self.n = 0
        self.cap = 0
        self.id = NULL
        self.col = NULL
        self.length = NULL
        self.room = NULL
        self.clean = NULL
        self.shares = NULL
        self.stamp = NULL
        self.clock = 0
        self.spare = NULL
        self.nspare = NULL
        self.spare_max = 0
        self.width = NULL

    def __dealloc__(self):
        # the owner's spares are not touched (the owner may be gone already)
        cdef Py_ssize_t sl
        for sl in range(self.n):
            if self.release(sl):
                free(self.col[sl])
        free(self.slot)
        free(self.id)
        free(self.col)
        free(self.length)
        free(self.room)
        free(self.clean)
        free(self.shares)
        free(self.stamp)

    cdef void lend_spares(self, double** spare, Py_ssize_t* nspare, Py_ssize_t spare_max,
                          const Py_ssize_t* width) noexcept nogil:
        """The owner's spare buffers (adopt): ``spare[:*nspare]``, at most ``spare_max``,
        each of capacity ``*width`` (the owner's fields, read when used)."""
        self.spare = spare
        self.nspare = nspare
        self.spare_max = spare_max
        self.width = width

    cdef int reserve(self, Py_ssize_t nids) except -1 nogil:
        """Room for the ids < nids in the slot index."""
        cdef Py_ssize_t i, old = self.nids
        if nids <= old:
            return 0
        grow(<void**> &self.slot, &self.nids, nids, sizeof(Py_ssize_t))
        for i in range(old, self.nids):
            self.slot[i] = -1
        return 0

    cdef bint has(self, Py_ssize_t i) noexcept nogil:
        """A column of i is cached."""
        return i < self.nids and self.slot[i] >= 0

    cdef bint fits(self, Py_ssize_t n) noexcept nogil:
        """One column of n values fits in the budget (``put`` keeps one)."""
        return self.budget // (8 * max(n, 1)) >= 1

    cdef int put(self, Py_ssize_t i, double* col, Py_ssize_t n, Py_ssize_t room,
                 bint clean) except -1 nogil:
        """Keep i's column ``col`` (n values, the number of examples now) for a later
        return: at most ``budget`` bytes of columns of length n, the oldest entries out
        first.  A previous entry of i goes in any case; nothing is kept when not even one
        column fits.  ``adopt``: the buffer (capacity ``room``) is kept, or goes to the
        spares when it is not; else the cache keeps a copy of the n values."""
        cdef Py_ssize_t max_cols, j, oldest
        cdef double* cp
        self.drop(i)
        max_cols = <Py_ssize_t> (self.budget // (8 * max(n, 1)))
        if max_cols < 1:
            if self.adopt:
                self.dispose(col, room)
            return 0
        if not self.adopt:
            cp = <double*> malloc(max(n, 1) * sizeof(double))
            if cp == NULL:
                with gil:
                    raise MemoryError()
            memcpy(cp, col, n * sizeof(double))
            col = cp
            room = n
        self.insert(i, col, n, room, clean)
        while self.n > max_cols:
            oldest = 0
            for j in range(1, self.n):
                if self.stamp[j] < self.stamp[oldest]:
                    oldest = j
            self.drop(self.id[oldest])
        return 0

    cdef int insert(self, Py_ssize_t i, double* col, Py_ssize_t length, Py_ssize_t room,
                    bint clean) except -1 nogil:
        """A new entry of i (not cached), the newest: the buffer ``col`` (capacity
        ``room``, its first ``length`` values the column) is the cache's from now on."""
        cdef Py_ssize_t sl = self.n, c
        if i >= self.nids:
            self.reserve(i + 1)
        if sl == self.cap:
            c = self.cap
            grow(<void**> &self.id, &c, sl + 1, sizeof(Py_ssize_t))
            c = self.cap
            grow(<void**> &self.col, &c, sl + 1, sizeof(double*))
            c = self.cap
            grow(<void**> &self.length, &c, sl + 1, sizeof(Py_ssize_t))
            c = self.cap
            grow(<void**> &self.room, &c, sl + 1, sizeof(Py_ssize_t))
            c = self.cap
            grow(<void**> &self.clean, &c, sl + 1, sizeof(signed char))
            c = self.cap
            grow(<void**> &self.shares, &c, sl + 1, sizeof(int*))
            c = self.cap
            grow(<void**> &self.stamp, &c, sl + 1, sizeof(long long))
            self.cap = c
        self.id[sl] = i
        self.col[sl] = col
        self.length[sl] = length
        self.room[sl] = room
        self.clean[sl] = clean
        self.shares[sl] = NULL
        self.clock += 1
        self.stamp[sl] = self.clock
        self.slot[i] = sl
        self.n = sl + 1
        return 0

    cdef const double* peek(self, Py_ssize_t i, Py_ssize_t* length) noexcept nogil:
        """i's cached column and its length (NULL and 0 if none); it stays cached."""
        cdef Py_ssize_t sl = self.slot[i] if i < self.nids else -1
        if sl < 0:
            length[0] = 0
            return NULL
        length[0] = self.length[sl]
        return self.col[sl]

    cdef int take(self, Py_ssize_t i, Py_ssize_t width, double** col, Py_ssize_t* length,
                  bint* clean) except -1 nogil:
        """i's cached column, handed over in a buffer of capacity >= ``width`` (adopt; the
        owner's spares, if any, have that capacity): the entry goes.  A shared buffer is
        copied into a spare one (or a new one); a smaller one grows.  Returns 1, or 0 when
        nothing is cached (``*col`` NULL)."""
        cdef Py_ssize_t sl = self.slot[i] if i < self.nids else -1
        cdef double* buf
        cdef void* p
        col[0] = NULL
        length[0] = 0
        clean[0] = False
        if sl < 0:
            return 0
        buf = self.col[sl]
        length[0] = self.length[sl]
        clean[0] = self.clean[sl]
        if self.shares[sl] != NULL and self.shares[sl][0] > 1:
            if self.nspare != NULL and self.nspare[0] > 0:
                self.nspare[0] -= 1
                buf = self.spare[self.nspare[0]]
            else:
                buf = <double*> malloc(max(width, self.length[sl]) * sizeof(double))
                if buf == NULL:
                    with gil:
                        raise MemoryError()
            memcpy(buf, self.col[sl], self.length[sl] * sizeof(double))
        elif self.room[sl] < width:
            p = realloc(buf, width * sizeof(double))
            if p == NULL:
                with gil:
                    raise MemoryError()
            buf = <double*> p
            self.col[sl] = buf
        self.release(sl)
        self.unlink(sl)
        col[0] = buf
        return 1

    cdef void drop(self, Py_ssize_t i) noexcept nogil:
        """Forget i's cached column (if any)."""
        cdef Py_ssize_t sl = self.slot[i] if i < self.nids else -1
        if sl < 0:
            return
        if self.release(sl):
            self.dispose(self.col[sl], self.room[sl])
        self.unlink(sl)

    cdef void unlink(self, Py_ssize_t sl) noexcept nogil:
        """Slot sl leaves the cache (its buffer is the caller's concern); the last slot
        fills the hole."""
        cdef Py_ssize_t last = self.n - 1
        self.slot[self.id[sl]] = -1
        if sl != last:
            self.id[sl] = self.id[last]
            self.col[sl] = self.col[last]
            self.length[sl] = self.length[last]
            self.room[sl] = self.room[last]
            self.clean[sl] = self.clean[last]
            self.shares[sl] = self.shares[last]
            self.stamp[sl] = self.stamp[last]
            self.slot[self.id[sl]] = sl
        self.n = last

    cdef bint release(self, Py_ssize_t sl) noexcept nogil:
        """Give up this cache's share of slot sl's buffer: True if it was the only holder
        (the buffer is then this cache's to dispose of or hand over)."""
        cdef int* rc = self.shares[sl]
        self.shares[sl] = NULL
        if rc == NULL:
            return True
        if rc[0] > 1:
            rc[0] -= 1
            return False
        free(rc)
        return True

    cdef void dispose(self, double* col, Py_ssize_t room) noexcept nogil:
        """A buffer no entry holds: to the owner's spares (adopt, of their capacity, while
        there is room), else freed."""
        if self.adopt and self.nspare != NULL and room == self.width[0] \
                and self.nspare[0] < self.spare_max:
            self.spare[self.nspare[0]] = col
            self.nspare[0] += 1
        else:
            free(col)

    cdef void cut(self, Py_ssize_t n) noexcept nogil:
        """Keep only what concerns the first n examples: the entries of ids >= n go,
        longer columns are cut to n values (their buffers kept)."""
        cdef Py_ssize_t sl = self.n - 1
        while sl >= 0:
            if self.id[sl] >= n:
                self.drop(self.id[sl])
            elif self.length[sl] > n:
                self.length[sl] = n
            sl -= 1

    cdef void clear(self) noexcept nogil:
        """Every entry goes."""
        while self.n:
            self.drop(self.id[self.n - 1])

    cdef int copy_into(self, ColumnCache other) except -1:
        """``other`` (empty) gets every entry, in the same slots with the same stamps:
        adopt, the buffers shared (counted); else copied."""
        cdef Py_ssize_t j, L
        cdef double* cp
        other.reserve(self.nids)
        for j in range(self.n):
            L = self.length[j]
            if self.adopt:
                if self.shares[j] == NULL:
                    self.shares[j] = <int*> malloc(sizeof(int))
                    if self.shares[j] == NULL:
                        raise MemoryError()
                    self.shares[j][0] = 1
                other.insert(self.id[j], self.col[j], L, self.room[j], self.clean[j])
                other.shares[j] = self.shares[j]
                self.shares[j][0] += 1
            else:
                cp = <double*> malloc(max(L, 1) * sizeof(double))
                if cp == NULL:
                    raise MemoryError()
                memcpy(cp, self.col[j], L * sizeof(double))
                other.insert(self.id[j], cp, L, L, self.clean[j])
            other.stamp[j] = self.stamp[j]
        other.clock = self.clock
        return 0

    # ---- from Python: the entries for persistence
    def __len__(self):
        return self.n

    def _oldest_first(self):
        stamps = np.array([self.stamp[sl] for sl in range(self.n)], dtype=np.int64)
        return np.argsort(stamps, kind="stable").tolist()

    def ids(self):
        """The cached ids, oldest first."""
        return np.array([self.id[sl] for sl in self._oldest_first()], dtype=np.intp)

    def arrays(self):
        """(ids oldest first, the columns' lengths, the columns end to end)."""
        cdef Py_ssize_t sl, L, start = 0
        cdef double[::1] o
        order = self._oldest_first()
        ids = np.array([self.id[sl] for sl in order], dtype=np.intp)
        lens = np.array([self.length[sl] for sl in order], dtype=np.intp)
        cols = np.empty(int(lens.sum()))
        o = cols
        for sl in order:
            L = self.length[sl]
            if L:
                memcpy(&o[start], self.col[sl], L * sizeof(double))
            start += L
        return ids, lens, cols

    def load(self, ids, lengths, values):
        """The entries of :meth:`arrays` (every present one goes first), oldest first;
        each column in a buffer of its length."""
        cdef Py_ssize_t i, L, start = 0
        cdef double* buf
        cdef const double[::1] v = np.ascontiguousarray(values, dtype=np.float64)
        self.clear()
        for i, L in zip(np.asarray(ids).tolist(), np.asarray(lengths).tolist()):
            buf = <double*> malloc(max(L, 1) * sizeof(double))
            if buf == NULL:
                raise MemoryError()
            if L:
                memcpy(buf, &v[start], L * sizeof(double))
            self.insert(i, buf, L, L, False)
            start += L


def column_cache_run(ops, long long budget, bint adopt=False):
    """Run ``ops`` on a compiled ``ColumnCache`` (for the tests: the reference
    :class:`refsvm.core.column_cache.ColumnCache` given the same operations keeps the same
    entries).  ``ops``: ("put", i, column) (n = the column's length), ("take", i),
    ("drop", i), ("cut", n), ("copy",) (the operations that follow go to a copy made by
    ``copy_into``; the original keeps its entries).  Returns the columns taken (None
    when nothing was cached) and the caches' ``arrays()``, the original's first."""
    cdef ColumnCache cache = ColumnCache(adopt)
    cdef ColumnCache other
    cdef double* buf
    cdef const double* seen
    cdef double[::1] o
    cdef Py_ssize_t L, n
    cdef bint clean
    cache.budget = budget
    caches = [cache]
    taken = []
    for op in ops:
        if op[0] == "put":
            v = np.ascontiguousarray(op[2], dtype=np.float64)
            n = v.shape[0]
            o = v
            buf = <double*> malloc(max(n, 1) * sizeof(double))
            if buf == NULL:
                raise MemoryError()
            if n:
                memcpy(buf, &o[0], n * sizeof(double))
            cache.put(op[1], buf, n, n, False)
            if not adopt:
                free(buf)
        elif op[0] == "take":
            if adopt:
                if cache.take(op[1], 1, &buf, &L, &clean):
                    out = np.empty(L)
                    o = out
                    if L:
                        memcpy(&o[0], buf, L * sizeof(double))
                    free(buf)
                    taken.append(out)
                else:
                    taken.append(None)
            else:
                seen = cache.peek(op[1], &L)
                if seen == NULL:
                    taken.append(None)
                else:
                    out = np.empty(L)
                    o = out
                    if L:
                        memcpy(&o[0], seen, L * sizeof(double))
                    taken.append(out)
                    cache.drop(op[1])
        elif op[0] == "drop":
            cache.drop(op[1])
        elif op[0] == "cut":
            cache.cut(op[1])
        elif op[0] == "copy":
            other = ColumnCache(adopt)
            other.budget = budget
            cache.copy_into(other)
            caches.append(other)
            cache = other
        else:
            raise ValueError(op[0])
    return taken, [c.arrays() for c in caches]


# ---------------------------------------------------------------- the margin set
cdef Py_ssize_t POOL = 8          # spare column buffers a margin set keeps


cdef int _resize(void** buf, Py_ssize_t n, size_t itemsize) except -1 nogil:
    """``*buf`` reallocated to n items (at least 1); MemoryError on failure."""
    cdef void* p = realloc(buf[0], max(n, 1) * itemsize)
    if p == NULL:
        with gil:
            raise MemoryError()
    buf[0] = p
    return 0


cdef class MarginSet:
    """The margin set of the exact active-set engine (the reference:
    :class:`refsvm.core.margin_set.MarginSet`): S in joining order, its kernel columns KS
    (one buffer of ``cap`` values per member) and R, the inverse of
    [[0, y_S'], [y_S, Q_SS]] (row-major, leading dimension ``ld``), grown by rank one
    (Eq. 8 of C&P, ``start``/``grow``), shrunk (Eq. 9, ``remove``) or formed afresh
    (``inverse``); the spare column buffers (``pool_get``/``pool_put``).  IDSVM's and
    POKER's twins hold one and read its buffers in their loops; each keeps its own
    status codes, events and scratch.

    Examples
    --------
    >>> from refsvm._core import MarginSet
    >>> MarginSet().ids()
    []
    """

    def __cinit__(self):
        self.ns = 0
        self.caps = 0
        self.ld = 1
        self.cap = 0
        self.S = NULL
        self.KS = NULL
        self.R = NULL
        self.rp = NULL
        self.npool = 0
        self.maxpool = POOL
        self.pool = <double**> malloc(POOL * sizeof(double*))
        if self.pool == NULL:
            raise MemoryError()
        self.reserve(4)

    def __dealloc__(self):
        cdef Py_ssize_t j
        if self.KS != NULL:
            for j in range(self.ns):
                free(self.KS[j])
        self.pool_clear()
        free(self.pool)
        free(self.KS)
        free(self.S)
        free(self.R)
        free(self.rp)

    cdef int reserve(self, Py_ssize_t need) except -1 nogil:
        """Room for ``need`` members (R of size need + 1): capacity max(need, 2 caps, 4),
        R copied to its new leading dimension caps + 2."""
        cdef Py_ssize_t caps, ld, a, b
        cdef double* newR
        if need <= self.caps:
            return 0
        caps = max(need, 2 * self.caps, 4)
        ld = caps + 2
        newR = <double*> malloc(ld * ld * sizeof(double))
        if newR == NULL:
            with gil:
                raise MemoryError()
        if self.R != NULL:
            for a in range(self.ns + 1):
                for b in range(self.ns + 1):
                    newR[a * ld + b] = self.R[a * self.ld + b]
            free(self.R)
        else:
            newR[0] = 0.0
        self.R = newR
        self.ld = ld
        _resize(<void**> &self.S, caps, sizeof(Py_ssize_t))
        _resize(<void**> &self.KS, caps, sizeof(double*))
        _resize(<void**> &self.rp, ld, sizeof(double))
        self.caps = caps
        return 0

    cdef int reserve_rows(self, Py_ssize_t cap) except -1 nogil:
        """Room for ``cap`` examples in every column (the new rows 0); the spare buffers,
        of the old length, are freed."""
        cdef Py_ssize_t j, i, old = self.cap
        if cap <= old:
            return 0
        for j in range(self.ns):
            _resize(<void**> &self.KS[j], cap, sizeof(double))
            for i in range(old, cap):
                self.KS[j][i] = 0.0
        self.pool_clear()
        self.cap = cap
        return 0

    cdef void zero_rows(self, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        """The examples start..stop-1 have no kernel values yet: 0 in every column."""
        cdef Py_ssize_t j, i
        for j in range(self.ns):
            for i in range(start, stop):
                self.KS[j][i] = 0.0

    cdef double* pool_get(self) except NULL nogil:
        """A column buffer of capacity cap: a spare one, or a new one."""
        cdef double* col
        if self.npool > 0:
            self.npool -= 1
            return self.pool[self.npool]
        col = <double*> malloc(max(self.cap, 1) * sizeof(double))
        if col == NULL:
            with gil:
                raise MemoryError()
        return col

    cdef void pool_put(self, double* col, Py_ssize_t capacity) noexcept nogil:
        """Keep a column buffer of ``capacity`` values as a spare (at most maxpool of the
        current capacity; any other is freed)."""
        if capacity == self.cap and self.npool < self.maxpool:
            self.pool[self.npool] = col
            self.npool += 1
        else:
            free(col)

    cdef void pool_clear(self) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.npool):
            free(self.pool[j])
        self.npool = 0

    cdef int start(self, Py_ssize_t i, double a, double q, double* col) except -1 nogil:
        """S = {i}: R = [[0, a], [a, q]]^-1 (``bordered_start``; a = y_i, q = Q_ii); ``col``
        (capacity cap) becomes i's column."""
        self.reserve(1)
        bordered_start(self.R, self.ld, a, q)
        self.KS[0] = col
        self.S[0] = i
        self.ns = 1
        return 0

    cdef int grow(self, Py_ssize_t i, double* beta, double kappa, double* col) except -1 nogil:
        """i joins S: R <- [[R, 0], [0, 0]] + [beta; 1][beta; 1]' / kappa (Eq. 8,
        ``bordered_grow``; beta = -R m has room for ns + 2 entries); ``col`` (capacity cap)
        becomes i's column."""
        cdef Py_ssize_t k = self.ns
        self.reserve(k + 1)
        bordered_grow(self.R, self.ld, k + 1, beta, kappa)
        self.KS[k] = col
        self.S[k] = i
        self.ns = k + 1
        return 0

    cdef bint remove(self, Py_ssize_t pos, double eps, double scale) noexcept nogil:
        """The member at ``pos`` leaves S (its column buffer is the caller's: take it
        first): R_ab <- R_ab - R_ap R_pb / R_pp (Eq. 9, ``bordered_shrink_scaled`` with
        ``scale`` = max|R|, :meth:`max_abs`), row and column pos + 1 dropped.  Returns
        True when the downdate was refused (|R_pp| <= eps scale): S and KS have shrunk, R
        has not; the caller forms it afresh."""
        cdef Py_ssize_t a, k = self.ns
        cdef bint refused = False
        if k == 1:
            self.R[0] = 0.0
        else:
            refused = bordered_shrink_scaled(self.R, self.ld, k + 1, pos + 1, eps, scale,
                                             self.rp) != 0
        for a in range(pos, k - 1):
            self.KS[a] = self.KS[a + 1]
            self.S[a] = self.S[a + 1]
        self.ns = k - 1
        return refused

    cdef double max_abs(self) noexcept nogil:
        """max |R_ab| (``bordered_max_abs``): the scale of the shrink's singularity test."""
        return bordered_max_abs(self.R, self.ld, self.ns + 1)

    cdef void known(self, Py_ssize_t i, double* out) noexcept nogil:
        """out[s] <- k(x_i, x_s) for every member s, read from KS."""
        cdef Py_ssize_t j
        for j in range(self.ns):
            out[self.S[j]] = self.KS[j][i]

    cdef void m_of(self, Py_ssize_t i, const double* y, double* m) noexcept nogil:
        """m <- [y_i; Q_Si], Q_Si = (y_s y_i) KS[s][i] (example i's column of M)."""
        cdef Py_ssize_t a
        m[0] = y[i]
        for a in range(self.ns):
            m[a + 1] = (y[self.S[a]] * y[i]) * self.KS[a][i]

    cdef int inverse(self, const double* y, double* A, int* ipiv,
                     double* out, Py_ssize_t ldo) noexcept nogil:
        """out (leading dimension ldo) <- M^-1 by getrf + getri (``lu_inverse``) of
        M = [[0, y_S'], [y_S, Q_SS]] formed from KS in A (column-major, as the reference's
        ``lu_inverse`` hands it to LAPACK; (ns + 1)^2 doubles, ``ipiv`` ns + 1).  Returns 0; 1 when M is singular, 2 when getri fails, 3 when its workspace
        cannot be allocated (out untouched)."""
        cdef int nn = <int> (self.ns + 1)
        cdef Py_ssize_t a, bb, k = self.ns
        cdef double ya, yb
        cdef const double* col
        cdef double* dst
        A[0] = 0.0
        for a in range(k):
            ya = y[self.S[a]]
            A[a + 1] = ya
            A[(a + 1) * nn] = ya
        # column by column: each of A's columns is written in order from one column of
        # KS (entry by entry across KS's columns, every read was a cache miss)
        for bb in range(k):
            yb = y[self.S[bb]]
            col = self.KS[bb]
            dst = A + (bb + 1) * nn + 1
            for a in range(k):
                dst[a] = (y[self.S[a]] * yb) * col[self.S[a]]
        return lu_inverse(A, nn, ipiv, out, ldo)

    cdef int copy_into(self, MarginSet o) except -1 nogil:
        """``o`` (empty, with room for cap >= this cap rows) <- S, the columns (copies)
        and R."""
        cdef Py_ssize_t j, a
        o.reserve(max(self.ns, 1))
        for j in range(self.ns):
            o.KS[j] = o.pool_get()
            memcpy(o.KS[j], self.KS[j], self.cap * sizeof(double))
            o.S[j] = self.S[j]
            o.ns = j + 1
        for a in range(self.ns + 1):
            memcpy(o.R + a * o.ld, self.R + a * self.ld, (self.ns + 1) * sizeof(double))
        return 0

    # ---- read-outs and a driver (tests: the twin of the reference's MarginSet)
    def ids(self):
        """S, in joining order (a list)."""
        return [self.S[j] for j in range(self.ns)]

    def inverse_array(self):
        """R as a (ns + 1) x (ns + 1) array."""
        cdef Py_ssize_t a, b, nn = self.ns + 1
        out = np.empty((nn, nn))
        cdef double[:, ::1] o = out
        for a in range(nn):
            for b in range(nn):
                o[a, b] = self.R[a * self.ld + b]
        return out

    def columns(self, Py_ssize_t n):
        """KS for the first n examples (n x ns)."""
        cdef Py_ssize_t i, j
        out = np.zeros((n, self.ns))
        cdef double[:, ::1] o = out
        for j in range(self.ns):
            for i in range(min(n, self.cap)):
                o[i, j] = self.KS[j][i]
        return out


def margin_set_run(ops, y):
    """Drive a compiled :class:`MarginSet` through ``ops`` (a test of the engine against
    the reference's, which takes the same calls): ("rows", cap), ("zero", start, stop),
    ("start", i, q, col), ("grow", i, q, col): beta = -R m, kappa = q + m' beta (with
    ``bordered_beta_sym`` and ``bordered_pivot``, the twins' functions), ("remove", pos,
    eps): its result, and the refused inverse formed afresh (``inverse``, made exactly
    symmetric).  Returns (the results of the removes, S, R, KS of the examples)."""
    cdef MarginSet ms = MarginSet()
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    results = _margin_set_ops(ms, ops, yv)
    return results, ms.ids(), ms.inverse_array(), ms.columns(yv.shape[0])


cdef double _test_pivot(MarginSet ms, Py_ssize_t i, const double* y, double q,
                        double* beta):
    """The test drivers' join of i: beta = -R m (``bordered_beta_sym``, beta of length
    |S| + 2) and its pivot kappa = q + m' beta (``bordered_pivot``), as the twins form
    them."""
    cdef Py_ssize_t nn = ms.ns + 1
    cdef double* m = <double*> malloc((nn + 1) * sizeof(double))
    cdef double** rows = <double**> malloc(nn * sizeof(double*))
    cdef double kappa
    ms.m_of(i, y, m)
    bordered_beta_sym(ms.R, ms.ld, nn, m, beta, rows)
    kappa = bordered_pivot(q, m, beta, nn)
    free(m)
    free(rows)
    return kappa


cdef int _test_inverse_afresh(MarginSet ms, const double* y) except -1:
    """The test drivers' answer to a refused downdate: R formed afresh (``inverse``, LU)
    and made exactly symmetric; LinAlgError when the bordered matrix is singular."""
    cdef Py_ssize_t nn = ms.ns + 1
    cdef double* A = <double*> malloc(nn * nn * sizeof(double))
    cdef int* ipiv = <int*> malloc(nn * sizeof(int))
    cdef int info = ms.inverse(y, A, ipiv, ms.R, ms.ld)
    free(A)
    free(ipiv)
    if info == 3:
        raise MemoryError()
    if info:
        raise np.linalg.LinAlgError("singular bordered matrix")
    bordered_symmetrize(ms.R, ms.ld, nn)
    return 0


cdef list _margin_set_ops(MarginSet ms, ops, const double[::1] yv):
    """``ops`` (see :func:`margin_set_run`) applied to ``ms``; the results of the removes."""
    cdef double[::1] cv
    cdef double* col
    cdef double* beta
    cdef Py_ssize_t i
    cdef double kappa
    results = []
    for op in ops:
        if op[0] == "rows":
            ms.reserve_rows(op[1])
        elif op[0] == "zero":
            ms.zero_rows(op[1], op[2])
        elif op[0] in ("start", "grow"):
            i = op[1]
            cv = np.ascontiguousarray(op[3], dtype=np.float64)
            col = ms.pool_get()
            memcpy(col, &cv[0], cv.shape[0] * sizeof(double))
            if op[0] == "start":
                ms.start(i, yv[i], op[2], col)
                continue
            beta = <double*> malloc((ms.ns + 2) * sizeof(double))
            kappa = _test_pivot(ms, i, &yv[0], op[2], beta)
            ms.grow(i, beta, kappa, col)
            free(beta)
        elif op[0] == "remove":
            ms.pool_put(ms.KS[op[1]], ms.cap)
            refused = ms.remove(op[1], op[2], ms.max_abs())
            results.append(bool(refused))
            if refused and ms.ns:
                _test_inverse_afresh(ms, &yv[0])
        else:
            raise ValueError(op[0])
    return results


# ---------------------------------------------------------------- the partition's arrays
cdef signed char _GONE = _core_active_set.GONE
_PARTITION_BASE = ("y", "alpha", "g", "kdiag")


cdef class _Block:
    """One buffer of a :class:`Partition` (malloc'd, freed with the last reference): the
    holder keeps the current one of every array, and each NumPy view it hands out has
    its block as base object, so a view outlives a growth (it then reads the values of
    before the growth) and never points at freed memory."""
    cdef void* data

    def __dealloc__(self):
        free(self.data)


cdef class Partition:
    """The per-example arrays of the exact active-set engine's partition: the compiled
    counterpart of :class:`refsvm.core.optimum.PartitionArrays`, held by IDSVM's twin and
    POKER's twin.

    ``y``, ``alpha``, ``g``, ``kdiag`` (float64) and ``status`` (int8: the core's codes
    and the family's own), by example id (ids 0..``n``-1, never reused), and the
    family's own float64 arrays named when the holder is made (IDSVM's ``kroot``;
    POKER's ``p``, ``d``, ``a0``: at most ``PARTITION_EXTRA``).  Every array has room for
    ``cap`` examples; ``reserve`` (nogil) grows them all to max(need, 2 cap, 16), as
    :func:`refsvm.core.bordered.grow_array` grows the reference's arrays, the new room
    0 and ``GONE``; ``new_example`` (nogil) stores an example: its id ``n``, its label,
    alpha = g = 0 (and the family's arrays), its code (``kdiag`` is the family's to
    fill).  The twins' loops read the C pointers; a growth replaces them, so a twin
    takes them again after every growth.

    Python reads and writes the arrays through NumPy views over all ``cap`` entries
    (``view``); ``assign`` copies values in (a length other than ``cap`` first resizes
    every array to it: a state loaded from its saved arrays).  Each buffer is owned by a
    small block object, the base of every view of it: a growth makes new blocks and
    drops the holder's references to the old ones, which live on as long as a view of
    them does (that view keeps the values of before the growth, like an array the
    reference replaced by ``grow_array``).  No view ever points at freed memory, and
    the memory of the old buffers goes with their last view.  A growth takes the GIL
    (it makes Python objects): it happens when the capacity doubles.

    Examples
    --------
    >>> from refsvm._core import Partition
    >>> part = Partition(("kroot",))
    >>> part.append(1.0, -2)
    0
    >>> part.n, part.cap, part.names
    (1, 16, ('y', 'alpha', 'g', 'kdiag', 'kroot', 'status'))
    >>> part.view("y")[:2]
    array([1., 0.])
    """

    def __cinit__(self, extra=()):
        cdef Py_ssize_t k
        extra = tuple(str(name) for name in extra)
        if len(extra) > PARTITION_EXTRA:
            raise ValueError(f"a partition holds at most {PARTITION_EXTRA} arrays of a "
                             f"family's own, not {len(extra)}")
        names = _PARTITION_BASE + extra + ("status",)
        if len(set(names)) != len(names):
            raise ValueError(f"the partition's arrays need distinct names: {names}")
        self.names = names
        self.nextra = len(extra)
        self.n = 0
        self.cap = 0
        self.y = self.alpha = self.g = self.kdiag = NULL
        self.status = NULL
        for k in range(PARTITION_EXTRA):
            self.extra[k] = NULL
        self.blocks = None
        self.resize(0)

    cdef int resize(self, Py_ssize_t cap) except -1:
        """Every array to exactly ``cap`` entries (new blocks), the first min(cap, old
        cap) kept, the floats 0 and the status ``GONE`` beyond them; the pointers taken
        again.  ``n`` is left as it is (the caller's count)."""
        cdef Py_ssize_t k, i, keep = min(cap, self.cap), count = len(self.names)
        cdef size_t item
        cdef _Block b, old
        cdef double* dv
        cdef signed char* sv
        if cap < 0:
            raise ValueError(f"a partition's capacity is a count, not {cap}")
        blocks = []
        for k in range(count):
            item = sizeof(signed char) if k == count - 1 else sizeof(double)
            b = _Block.__new__(_Block)
            b.data = malloc(max(cap, 1) * item)
            if b.data == NULL:
                raise MemoryError()
            if self.blocks is not None and keep:
                old = self.blocks[k]
                memcpy(b.data, old.data, keep * item)
            if k == count - 1:
                sv = <signed char*> b.data
                for i in range(keep, cap):
                    sv[i] = _GONE
            else:
                dv = <double*> b.data
                for i in range(keep, cap):
                    dv[i] = 0.0
            blocks.append(b)
        self.blocks = blocks
        self.cap = cap
        self.y = <double*> (<_Block> blocks[0]).data
        self.alpha = <double*> (<_Block> blocks[1]).data
        self.g = <double*> (<_Block> blocks[2]).data
        self.kdiag = <double*> (<_Block> blocks[3]).data
        for k in range(self.nextra):
            self.extra[k] = <double*> (<_Block> blocks[4 + k]).data
        self.status = <signed char*> (<_Block> blocks[count - 1]).data
        return 0

    cdef int reserve(self, Py_ssize_t need) except -1 nogil:
        """Room for ``need`` examples: capacity max(need, 2 cap, 16) (the core's
        ``grow``, the reference's ``grow_array``), the new room 0 and ``GONE``."""
        if need <= self.cap:
            return 0
        with gil:
            self.resize(max(need, 2 * self.cap, 16))
        return 0

    cdef Py_ssize_t new_example(self, double y, signed char code) except -1 nogil:
        """A new example (the reference's ``_new_example`` without the row): its id
        ``n``, label ``y``, alpha = g = 0 and the family's arrays 0, status ``code``;
        ``kdiag`` is the family's to fill."""
        cdef Py_ssize_t i = self.n, k
        self.reserve(i + 1)
        self.n = i + 1
        self.y[i] = y
        self.alpha[i] = 0.0
        self.g[i] = 0.0
        for k in range(self.nextra):
            self.extra[k][i] = 0.0
        self.status[i] = code
        return i

    cdef int _index(self, name) except -1:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"the partition has no array {name!r} (it has {self.names})") \
                from None

    def view(self, name):
        """The array ``name`` as a NumPy array over its ``cap`` entries (writable,
        without a copy), its base the block that owns the buffer."""
        cdef int k = self._index(name)
        cdef cnp.npy_intp dims[1]
        cdef _Block b = self.blocks[k]
        dims[0] = self.cap
        arr = cnp.PyArray_SimpleNewFromData(
            1, dims, cnp.NPY_INT8 if k == len(self.names) - 1 else cnp.NPY_FLOAT64, b.data)
        cnp.set_array_base(arr, b)
        return arr

    def assign(self, name, values):
        """The array ``name`` becomes a copy of the 1-D ``values`` (cast to its dtype);
        when their length is not ``cap``, every array is first resized to it (the
        others keep their first entries, 0 and ``GONE`` beyond)."""
        cdef int k = self._index(name)
        a = np.asarray(values, dtype=np.int8 if k == len(self.names) - 1 else np.float64)
        if a.ndim != 1:
            raise ValueError(f"the partition's {name!r} is 1-D, not of shape {a.shape}")
        if a.shape[0] != self.cap:
            self.resize(a.shape[0])
        self.view(name)[:] = a

    def room(self, Py_ssize_t need):
        """``reserve`` from Python: room for ``need`` examples."""
        self.reserve(need)

    def append(self, double y, signed char code):
        """``new_example`` from Python: the new example's id."""
        return self.new_example(y, code)

    def set_n(self, Py_ssize_t n):
        """The number of examples (the family's count; at most ``cap`` when a twin reads
        the arrays)."""
        if n < 0:
            raise ValueError(f"a number of examples is a count, not {n}")
        self.n = n

    def copy(self):
        """An independent copy (the same names, n, capacity and values)."""
        cdef Partition o = Partition(self.names[4:4 + self.nextra])
        cdef Py_ssize_t k
        o.resize(self.cap)
        for k in range(len(self.names)):
            o.view(self.names[k])[:] = self.view(self.names[k])
        o.n = self.n
        return o


# ---------------------------------------------------------------- correctly rounded sums
cdef int fsum_check(int status) except -1:
    """Raise ``math.fsum``'s error for a status of refsvm_fsum.h (0: nothing)."""
    if status == REFSVM_FSUM_OK:
        return 0
    if status == REFSVM_FSUM_INVALID:
        raise ValueError("-inf + inf in fsum")
    if status == REFSVM_FSUM_OVERFLOW:
        raise OverflowError("intermediate overflow in fsum")
    raise MemoryError("fsum: more partials than room")


cdef int g_exact_rows(CKernel kern, RowStore s, const Py_ssize_t* ids, Py_ssize_t nids,
                      const Py_ssize_t* sv, Py_ssize_t m, const double* coef,
                      const double* y, const double* kdiag, double b, double bias_sign,
                      double* kv, double* out) noexcept nogil:
    """g of the stored examples ids, correctly rounded, row by row (see _core.pxd)."""
    cdef Py_ssize_t r, j, i, bad
    cdef double g
    cdef int status
    for r in range(nids):
        i = ids[r]
        for j in range(m):
            kv[j] = kdiag[i] if sv[j] == i else kern.k_rows(s, i, sv[j])
        status = refsvm_g_exact(coef, kv, m, 1, m, &y[i], b, bias_sign, &g, &bad)
        if status != REFSVM_FSUM_OK:
            return status
        out[i] = g
    return REFSVM_FSUM_OK


def _float_array(values):
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1))


def fsum(values):
    """The sum of ``values`` correctly rounded, by the hand-written C (refsvm_fsum.c):
    ``math.fsum``'s value and errors."""
    cdef const double[::1] x = _float_array(values)
    cdef double out = 0.0
    cdef int status
    with nogil:
        status = refsvm_fsum(&x[0] if x.shape[0] else NULL, x.shape[0], &out)
    fsum_check(status)
    return out


def two_product(a, b):
    """Dekker's error-free product elementwise (the reference's ``two_product``):
    (p, e) with a * b = p + e."""
    cdef const double[::1] av = _float_array(a)
    cdef const double[::1] bv = _float_array(b)
    cdef Py_ssize_t j
    if av.shape[0] != bv.shape[0]:
        raise ValueError("a and b differ in length")
    p, e = np.empty(av.shape[0]), np.empty(av.shape[0])
    cdef double[::1] pv = p
    cdef double[::1] ev = e
    for j in range(av.shape[0]):
        refsvm_two_product(av[j], bv[j], &pv[j], &ev[j])
    return p, e


def exact_sum(a, b, double sign, extra):
    """sign * sum_j a_j b_j + sum(extra), correctly rounded (the reference's
    ``refsvm.core.active_set.exact_sum``, its terms in its order)."""
    cdef const double[::1] av = _float_array(a)
    cdef const double[::1] bv = _float_array(b)
    cdef const double[::1] ev = _float_array(extra)
    cdef double out = 0.0
    cdef int status
    if av.shape[0] != bv.shape[0]:
        raise ValueError("a and b differ in length")
    status = refsvm_exact_sum(&av[0] if av.shape[0] else NULL,
                              &bv[0] if bv.shape[0] else NULL, av.shape[0], sign,
                              &ev[0] if ev.shape[0] else NULL, ev.shape[0], &out)
    fsum_check(status)
    return out


def g_exact(coef, K, y, double b=0.0, double bias_sign=1.0, fixed=None):
    """g of every row of K correctly rounded (the reference's
    ``refsvm.core.exactness.g_exact``, its arguments): y_r sum_j c_j K[r, j] +
    bias_sign y_r b - 1, or with ``fixed`` = (p, u, d) y_r sum_j c_j K[r, j] + p_r +
    u d_r."""
    cdef const double[::1] cv = _float_array(coef)
    Kc = np.ascontiguousarray(np.atleast_2d(np.asarray(K, dtype=np.float64)))
    if Kc.ndim != 2 or Kc.shape[1] != cv.shape[0]:
        raise ValueError("one column of K a coefficient")
    cdef const double[:, ::1] Kv = Kc
    cdef Py_ssize_t nrows = Kv.shape[0], m = cv.shape[0], bad = 0
    cdef const double[::1] yv = _float_array(y)
    cdef const double[::1] pv
    cdef const double[::1] dv
    cdef double u
    cdef int status
    out = np.empty(nrows)
    cdef double[::1] ov = out
    if yv.shape[0] != nrows:
        raise ValueError("one y a row of K")
    if not nrows:
        return out
    if fixed is None:
        status = refsvm_g_exact(&cv[0] if m else NULL, &Kv[0, 0] if m else NULL, m, nrows,
                                m, &yv[0], b, bias_sign, &ov[0], &bad)
    else:
        pv = _float_array(fixed[0])
        u = float(fixed[1])
        dv = _float_array(fixed[2])
        if pv.shape[0] != nrows or dv.shape[0] != nrows:
            raise ValueError("one p and one d a row of K")
        status = refsvm_g_exact_fixed(&cv[0] if m else NULL, &Kv[0, 0] if m else NULL, m,
                                      nrows, m, &yv[0], &pv[0], u, &dv[0], &ov[0], &bad)
    fsum_check(status)
    return out


def dot2_rows(coef, K):
    """sum_j c_j K[r, j] for every row r of K by Dot2, the terms j in order, from zeros:
    (p, s), the sum being p + s (the reference's ``refsvm.core.exactness.dot2_sum(coef,
    K)``: the same operations per term, so the same bits)."""
    cdef const double[::1] cv = _float_array(coef)
    Kc = np.ascontiguousarray(np.atleast_2d(np.asarray(K, dtype=np.float64)))
    if Kc.ndim != 2 or Kc.shape[1] != cv.shape[0]:
        raise ValueError("one column of K a coefficient")
    cdef const double[:, ::1] Kv = Kc
    cdef Py_ssize_t r, j, nrows = Kv.shape[0], m = cv.shape[0]
    p = np.zeros(nrows)
    s = np.zeros(nrows)
    cdef double[::1] pv = p
    cdef double[::1] sv = s
    with nogil:
        for r in range(nrows):
            for j in range(m):
                dot2_add(&pv[r], &sv[r], cv[j], Kv[r, j])
    return p, s


# ---------------------------------------------------------------- the polish
# (reference: refsvm/core/exactness.py, the same operations in the same order)
cdef void polish_add_column(double* pe, double* se, const signed char* status,
                            const double* y, double a, const double* col,
                            Py_ssize_t n) noexcept nogil:
    """One error vector's terms of g by Dot2: (pe_i, se_i) += y_i a col_i for every learned
    example i (a = alpha_j y_j, col the kernel column of j; the reference's ``dot2_sum``)."""
    cdef Py_ssize_t i
    for i in range(n):
        if status[i] >= 0:
            dot2_add(&pe[i], &se[i], y[i] * a, col[i])


cdef double margin_g(MarginSet ms, Py_ssize_t i, const double* alpha, const double* y,
                     double b, double bias_sign, double p, double s) noexcept nogil:
    """g_i afresh: the Dot2 sum (p, s) of the terms before (the error vectors) continued
    over S in its order (y_i alpha_j y_j KS_j[i]), then y_i (bias_sign b) and -1 added
    error-free, one rounding at the end (the reference's ``margin_g``)."""
    cdef double yi = y[i]
    cdef Py_ssize_t pos, j
    for pos in range(ms.ns):
        j = ms.S[pos]
        dot2_add(&p, &s, yi * (alpha[j] * y[j]), ms.KS[pos][i])
    two_sum_add(&p, &s, yi * (bias_sign * b))
    two_sum_add(&p, &s, -1.0)
    return p + s


cdef double polish_balance(const signed char* status, const double* y,
                           const double* alpha, Py_ssize_t n) noexcept nogil:
    """h = y'alpha over the learned examples, ids ascending, by Sum2 (the reference's
    ``balance``)."""
    cdef double p = 0.0, s = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        if status[i] >= 0:
            two_sum_add(&p, &s, y[i] * alpha[i])
    return p + s


cdef double polish_residual(MarginSet ms, const signed char* status, const double* alpha,
                            const double* y, double b, double bias_sign, double kscale,
                            const double* pe, const double* se, Py_ssize_t n,
                            double* r) noexcept nogil:
    """r = [h; g_S] (``polish_balance``, ``margin_g`` from the error vectors' sums pe, se);
    returns its size max(kscale |h|, max|g_S|) (the reference's ``polish_residual``)."""
    cdef double size
    cdef Py_ssize_t pos, i
    r[0] = polish_balance(status, y, alpha, n)
    size = kscale * fabs(r[0])
    for pos in range(ms.ns):
        i = ms.S[pos]
        r[pos + 1] = margin_g(ms, i, alpha, y, b, bias_sign, pe[i], se[i])
        if fabs(r[pos + 1]) > size:
            size = fabs(r[pos + 1])
    return size


cdef void polish_step(MarginSet ms, const double* r, double* step,
                      double** rows) noexcept nogil:
    """The Newton step [db; dalpha_S] = -R r through the margin set's R: by rows
    (``bordered_beta``) when ``rows`` is NULL, else by ``bordered_beta_sym`` (the same
    bits for an exactly symmetric R; ``rows`` holds |S| + 1 pointers)."""
    if rows == NULL:
        bordered_beta(ms.R, ms.ld, ms.ns + 1, r, step)
    else:
        bordered_beta_sym(ms.R, ms.ld, ms.ns + 1, r, step, rows)


cdef bint polish_refine(MarginSet ms, double* alpha, double* b, const double* step,
                        double C, double bias_sign, double window, double max_step,
                        double* old) noexcept nogil:
    """The step taken (the reference's ``refine``): alpha_S += dalpha_S, b += bias_sign db,
    the old values in old = [b; alpha_S]; refused (False, nothing changed) when an alpha_s
    leaves [0, C] (by more than ``window`` when it is >= 0, and within it clipped into
    the box; any step out of the box when it is < 0) or a |dalpha_s| is above
    ``max_step``."""
    cdef Py_ssize_t pos, ns = ms.ns
    cdef double a
    for pos in range(ns):
        a = alpha[ms.S[pos]] + step[pos + 1]
        if window < 0.0:
            if not (a >= 0.0 and a <= C):
                return False
        elif not (a >= -window and a <= C + window):
            return False
        if fabs(step[pos + 1]) > max_step:
            return False
    old[0] = b[0]
    for pos in range(ns):
        old[pos + 1] = alpha[ms.S[pos]]
        a = alpha[ms.S[pos]] + step[pos + 1]
        if window >= 0.0:
            a = min(max(a, 0.0), C)
        alpha[ms.S[pos]] = a
    b[0] = b[0] + bias_sign * step[0]
    return True


cdef void polish_undo(MarginSet ms, double* alpha, double* b, const double* old) noexcept nogil:
    """(b, alpha_S) back to old = [b; alpha_S] (``polish_refine``'s)."""
    cdef Py_ssize_t pos
    for pos in range(ms.ns):
        alpha[ms.S[pos]] = old[pos + 1]
    b[0] = old[0]


cdef bint polish_newton(MarginSet ms, const signed char* status, double* alpha,
                        const double* y, double* b, double bias_sign, double C,
                        double kscale, const double* pe, const double* se, Py_ssize_t n,
                        double window, double max_step, double* r, double* step,
                        double* old, double** rows) noexcept nogil:
    """One step of iterative refinement of (b, alpha_S) on the residual [h; g_S] summed in
    doubled precision (the reference's ``polish_newton``): kept (True) only if
    ``polish_refine`` takes it and the residual summed again is smaller, else undone.
    ``r``, ``step``, ``old``: |S| + 1 values each (``step`` holds the second residual
    afterwards); ``rows`` as in ``polish_step``."""
    cdef double size = polish_residual(ms, status, alpha, y, b[0], bias_sign, kscale,
                                       pe, se, n, r)
    polish_step(ms, r, step, rows)
    if not size > 0.0 or not polish_refine(ms, alpha, b, step, C, bias_sign, window,
                                           max_step, old):
        return False
    if polish_residual(ms, status, alpha, y, b[0], bias_sign, kscale, pe, se, n,
                       step) >= size:
        polish_undo(ms, alpha, b, old)       # no better: R too far from M^-1
        return False
    return True


cdef void snap_margin(MarginSet ms, double* alpha, double C, double w) noexcept nogil:
    """alpha_s within w of 0 or C goes to that bound, S in its order (the reference's
    ``snap_margin``)."""
    cdef Py_ssize_t pos, j
    for pos in range(ms.ns):
        j = ms.S[pos]
        if alpha[j] <= w:
            alpha[j] = 0.0
        elif alpha[j] >= C - w:
            alpha[j] = C


def polish_run(ops, y, K, alpha, double b, status, double C, double kscale,
               double bias_sign=1.0, window=None, double max_step=INFINITY,
               bint snap=False, bint sym=True, int error_code=2):
    """Drive the compiled polish on a margin set built by ``ops`` (as
    :func:`margin_set_run`; a test against the reference's pieces on the same state):
    the snap (``snap``: with width ``window``), the error vectors' terms (examples of
    status ``error_code``, their kernel columns from K), the Newton step (``window``
    None: any step out of the box refused, nothing clipped; ``sym``: the step by
    ``bordered_beta_sym``), the snap again, and g afresh for every learned example.
    Returns (alpha, b, g, whether the step was kept)."""
    cdef MarginSet ms = MarginSet()
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    cdef Py_ssize_t n = yv.shape[0], i, j
    cdef const double[:, ::1] Kc = np.ascontiguousarray(np.asarray(K, dtype=np.float64).T)
    a_out = np.array(alpha, dtype=np.float64)
    cdef double[::1] av = a_out
    st = np.ascontiguousarray(status, dtype=np.int8)
    cdef const signed char[::1] sv = st
    cdef double w = -1.0 if window is None else float(window)
    g = np.zeros(n)
    cdef double[::1] gv = g
    pe_arr = np.zeros(n)
    se_arr = np.zeros(n)
    cdef double[::1] pe = pe_arr
    cdef double[::1] se = se_arr
    _margin_set_ops(ms, ops, yv)
    cdef Py_ssize_t nn = ms.ns + 1
    r_arr, step_arr, old_arr = np.zeros(nn), np.zeros(nn), np.zeros(nn)
    cdef double[::1] r = r_arr
    cdef double[::1] step = step_arr
    cdef double[::1] old = old_arr
    cdef double** rows = <double**> malloc(nn * sizeof(double*))
    cdef bint kept = False
    if rows == NULL:
        raise MemoryError()
    try:
        if snap:
            snap_margin(ms, &av[0], C, w)
        for j in range(n):
            if sv[j] == error_code:
                polish_add_column(&pe[0], &se[0], &sv[0], &yv[0], av[j] * yv[j], &Kc[j, 0], n)
        if ms.ns:
            kept = polish_newton(ms, &sv[0], &av[0], &yv[0], &b, bias_sign, C, kscale,
                                 &pe[0], &se[0], n, w, max_step, &r[0], &step[0], &old[0],
                                 rows if sym else NULL)
            if snap:
                snap_margin(ms, &av[0], C, w)
        for i in range(n):
            if sv[i] >= 0:
                gv[i] = margin_g(ms, i, &av[0], &yv[0], b, bias_sign, pe[i], se[i])
    finally:
        free(rows)
    return a_out, b, g, bool(kept)


# ================================================================ the exactness check's levels
# (reference: refsvm/core/exactness.py, the same products and sums in the same order; the
# verdict's bits and the partition codes read from there)
cdef int _KKT_G = _core_exactness.KKT_G
cdef int _KKT_H = _core_exactness.KKT_H
cdef signed char _AT_ZERO = _core_active_set.AT_ZERO
cdef signed char _AT_C = _core_active_set.AT_C
cdef double _EPS_MACH = _core_exactness.EPS_MACH


cdef KKTLevels kkt_levels(double tol, double kmax, double amax, double C, double above,
                          double g_ulps, double h_ulps, double b, double mass,
                          double h_tol, double count) noexcept nogil:
    """The levels (g, h) of an exactness check (the reference's ``kkt_levels``, with
    ``h_tol`` and ``count`` given and the ulps as (g_ulps, h_ulps))."""
    cdef KKTLevels lv
    lv.g = tol * (1.0 + kmax * amax)
    lv.h = h_tol * amax * count
    if C * kmax > above:
        lv.g = min(lv.g, g_ulps * _EPS_MACH * (1.0 + fabs(b) + kmax * mass))
        lv.h = min(lv.h, h_ulps * _EPS_MACH * mass)
    return lv


cdef int kkt_verdict(double worst, double h, KKTLevels lv, bint nan_fails) noexcept nogil:
    """The reference's ``kkt_verdict``: KKT_G | KKT_H of what is beyond its level."""
    cdef int v = 0
    if nan_fails:
        if not worst <= lv.g:
            v |= _KKT_G
        if not h <= lv.h:
            v |= _KKT_H
    else:
        if worst > lv.g:
            v |= _KKT_G
        if h > lv.h:
            v |= _KKT_H
    return v


cdef double end_balance(const signed char* status, const double* y, const double* alpha,
                        Py_ssize_t n, double C) noexcept nogil:
    """y'alpha over status >= 0: C times the sum of y at C, plus y_i alpha_i of the other
    nonzero alphas summed left to right (the reference's ``end_balance``)."""
    cdef double at_c = 0.0, free = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        if status[i] >= 0:
            if alpha[i] == C:
                at_c += y[i]
            elif alpha[i] != 0.0:
                free += y[i] * alpha[i]
    return C * at_c + free


cdef Py_ssize_t end_wrong_side(const signed char* status, const double* g, Py_ssize_t n,
                               double level) noexcept nogil:
    """How many examples at zero have -g above ``level`` and at C g above it (the
    reference's ``end_wrong_side``)."""
    cdef Py_ssize_t i, m = 0
    for i in range(n):
        if status[i] == _AT_ZERO:
            m += -g[i] > level
        elif status[i] == _AT_C:
            m += g[i] > level
    return m


def kkt_levels_value(double tol, double kmax, double amax, double C=0.0,
                     double above=INFINITY, ulps=(0, 0), double b=0.0, double mass=0.0,
                     h_tol=None, double count=1.0):
    """``kkt_levels`` from Python (the reference's arguments): (g level, h level)."""
    cdef KKTLevels lv = kkt_levels(tol, kmax, amax, C, above, ulps[0], ulps[1], b, mass,
                                   tol if h_tol is None else h_tol, count)
    return lv.g, lv.h


def kkt_verdict_value(double worst, double h, levels, bint nan_fails=False):
    """``kkt_verdict`` from Python."""
    cdef KKTLevels lv
    lv.g, lv.h = levels
    return kkt_verdict(worst, h, lv, nan_fails)


def end_balance_value(status, y, alpha, double C):
    """``end_balance`` from Python."""
    cdef const signed char[::1] sv = np.ascontiguousarray(status, dtype=np.int8)
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    cdef const double[::1] av = np.ascontiguousarray(alpha, dtype=np.float64)
    cdef Py_ssize_t n = sv.shape[0]
    if yv.shape[0] != n or av.shape[0] != n:
        raise ValueError("status, y and alpha differ in length")
    if not n:
        return end_balance(NULL, NULL, NULL, 0, C)
    return end_balance(&sv[0], &yv[0], &av[0], n, C)


def end_wrong_side_value(status, g, double level):
    """``end_wrong_side`` from Python."""
    cdef const signed char[::1] sv = np.ascontiguousarray(status, dtype=np.int8)
    cdef const double[::1] gv = np.ascontiguousarray(g, dtype=np.float64)
    cdef Py_ssize_t n = sv.shape[0]
    if gv.shape[0] != n:
        raise ValueError("status and g differ in length")
    if not n:
        return 0
    return int(end_wrong_side(&sv[0], &gv[0], n, level))


# ================================================================ membership changes
# (reference: refsvm/core/engine.py, the same operations in the same order)
cdef int engine_join(MarginSet ms, Py_ssize_t i, signed char code, signed char* status,
                     const double* y, double q, double* beta, double kappa,
                     double* col) except -1 nogil:
    """i joins S (Eq. 8): S = {i} (``start``, a = y_i, q = Q_ii) when S is empty, else
    R grown by (beta, kappa); S takes the buffer ``col`` over; status[i] = code."""
    if ms.ns == 0:
        ms.start(i, y[i], q, col)
    else:
        ms.grow(i, beta, kappa, col)
    status[i] = code
    return 0


cdef int engine_leave(MarginSet ms, Py_ssize_t pos, signed char code, signed char* status,
                      double* alpha, double value, ColumnCache cache, bint keep,
                      Py_ssize_t n, Py_ssize_t room, bint clean, double eps,
                      double scale) except -1 nogil:
    """S[pos] leaves S (Eq. 9): alpha = value (when ``alpha`` is given), its column to
    ``cache`` (when ``keep``; the buffer to the spares unless the cache adopts it), R
    shrunk (``remove``), status = code.  Returns 1 when the downdate was refused (S and
    KS have shrunk, R has not: the caller forms it afresh)."""
    cdef Py_ssize_t s = ms.S[pos]
    cdef double* col = ms.KS[pos]
    cdef bint refused
    if alpha != NULL:
        alpha[s] = value
    if keep:
        cache.put(s, col, n, room, clean)
    if not (keep and cache.adopt):
        ms.pool_put(col, ms.cap)
    refused = ms.remove(pos, eps, scale)
    status[s] = code
    return 1 if refused else 0


def engine_run(ops, y, K, alpha, status, double C, long long budget, bint adopt=False):
    """Drive the compiled membership changes through ``ops`` (a test against
    :mod:`refsvm.core.engine`, which takes the same calls), on a :class:`MarginSet`, a
    :class:`ColumnCache` (``budget`` bytes, adopting or copying) and copies of ``alpha``
    and ``status`` (int8): ("join", i, code): beta = -R m and kappa = Q_ii + m' beta
    (``bordered_beta_sym``, ``bordered_pivot``) with i's column K[:, i]; ("leave", pos,
    code, up, keep, eps): alpha = C (up), 0 (not up) or untouched (None), the column kept
    (keep) with n = K's rows, a refused downdate formed afresh (``inverse``, made exactly
    symmetric).  Returns (the leaves' (s, refused), S, R, KS of the examples, alpha,
    status, the cache's ``arrays()``)."""
    cdef MarginSet ms = MarginSet()
    cdef ColumnCache cache = ColumnCache(adopt)
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    cdef const double[:, ::1] Kv = np.ascontiguousarray(K, dtype=np.float64)
    a_out = np.array(alpha, dtype=np.float64)
    s_out = np.array(status, dtype=np.int8)
    cdef double[::1] av = a_out
    cdef signed char[::1] sv = s_out
    cdef Py_ssize_t i, pos, a, n = yv.shape[0]
    cdef double* col
    cdef double* beta
    cdef double kappa = 0.0
    cdef int refused
    cache.budget = budget
    ms.reserve_rows(n)
    results = []
    for op in ops:
        if op[0] == "join":
            i = op[1]
            col = ms.pool_get()
            for a in range(n):
                col[a] = Kv[a, i]
            beta = <double*> malloc((ms.ns + 2) * sizeof(double))
            if ms.ns:
                kappa = _test_pivot(ms, i, &yv[0], Kv[i, i], beta)
            engine_join(ms, i, <signed char> op[2], &sv[0], &yv[0], Kv[i, i], beta, kappa,
                        col)
            free(beta)
        elif op[0] == "leave":
            pos = op[1]
            i = ms.S[pos]
            refused = engine_leave(ms, pos, <signed char> op[2], &sv[0],
                                   NULL if op[3] is None else &av[0],
                                   C if op[3] else 0.0, cache, op[4], n, ms.cap, False,
                                   op[5], ms.max_abs())
            results.append((int(i), bool(refused)))
            if refused and ms.ns:
                _test_inverse_afresh(ms, &yv[0])
        else:
            raise ValueError(op[0])
    return (results, ms.ids(), ms.inverse_array(), ms.columns(n), a_out, s_out,
            cache.arrays())


# ================================================================ the making of a column
# (reference: refsvm/core/engine.py, ``column``: the same entries from the same sources
# and the same kernel-evaluation count)
from libc.math cimport NAN, isnan


cdef int engine_column(MarginSet ms, CKernel kern, RowStore store, Py_ssize_t c,
                       Py_ssize_t n, const signed char* status, double kcc, double* out,
                       const double* cached, Py_ssize_t L, bint cached_clean,
                       const Py_ssize_t* pid, const double* pval, Py_ssize_t pm,
                       int given_codes, bint use_ks, bint zero_off, bint whole,
                       Py_ssize_t* idx, double* tmp) noexcept nogil:
    """k(x_l, x_c) for every id l < n into ``out`` (room for n), each value from the first
    source that has it: the cached part (``cached``, its first L <= n ids, copied unless
    it is ``out`` itself; NaN marks an unknown entry, none when ``cached_clean``), the
    values the caller has (the pm pairs (pid[q], pval[q]), and the entries already in
    ``out`` of the ids whose status code is set in the bit mask ``given_codes``), the
    margin set's columns (``use_ks``: KS[j][c] for S[j]), and else, for an id in the
    problem (status >= 0), a counted kernel evaluation (one ``kernel_many`` call, ids
    ascending, the values k_rows(l, c) bit for bit; indices into ``idx``, values into
    ``tmp``, room for n each); out[c] = kcc, never evaluated.  Ids off the problem:
    ``zero_off``, all of them 0 (the caller may pass 0 when it knows that none is off);
    else a cached or given value is kept, NaN where there is none.
    ``whole`` allows the fast path when nothing is cached or given and KS holds no NaN
    for c: every row against x_c in one contiguous call, then the entries the reference
    does not evaluate put back (off the problem, S's, c's) and uncounted.
    Returns 1 when ``out`` is known to hold no NaN, else 0."""
    cdef Py_ssize_t l, j, m, q, start, ns = ms.ns if use_ks else 0
    cdef int clean = 0
    cdef signed char st
    if cached != NULL and cached != out and L > 0:
        memcpy(out, cached, L * sizeof(double))
    whole = whole and L == 0 and pm == 0 and given_codes == 0 and status[c] >= 0
    for j in range(ns if whole else 0):
        if isnan(ms.KS[j][c]) or ms.S[j] == c:
            whole = False
            break
    if whole:
        kernel_many(kern, store, c, NULL, n, out)
        m = set_off(out, status, n, 0.0 if zero_off else NAN)
        for j in range(ns):
            out[ms.S[j]] = ms.KS[j][c]
        out[c] = kcc
        kern.n_evals -= m + ns + 1
        return 1 if (m == 0 or zero_off) else 0
    if cached_clean and L >= n:
        clean = 1
    else:
        if given_codes == 0:
            for l in range(L, n):
                out[l] = NAN
        else:
            for l in range(L, n):
                st = status[l]
                if st < 0 or not ((given_codes >> st) & 1):
                    out[l] = NAN
        for q in range(pm):
            if isnan(out[pid[q]]):
                out[pid[q]] = pval[q]
        for j in range(ns):
            if isnan(out[ms.S[j]]):
                out[ms.S[j]] = ms.KS[j][c]
        out[c] = kcc
        start = L if cached_clean else 0
        m = 0
        for l in range(start, n):           # no branch on the (unpredictable) set
            idx[m] = l
            m += (status[l] >= 0) & isnan(out[l])
        kernel_many(kern, store, c, idx, m, tmp)
        for j in range(m):
            out[idx[j]] = tmp[j]
        clean = zero_off
    if zero_off:
        set_off(out, status, n, 0.0)
    out[c] = kcc
    return clean


cdef int engine_column4(MarginSet ms, CKernel kern, RowStore store, const Py_ssize_t* c4,
                        Py_ssize_t n, const signed char* status, const double* kcc4,
                        double** out4, const Py_ssize_t* pid, const double* pval,
                        Py_ssize_t ldp, Py_ssize_t pm, bint zero_off, Py_ssize_t* idx,
                        double** tmp4) noexcept nogil:
    """``engine_column`` for the four examples c4[a] (k(x_c, x_c) = kcc4[a], into out4[a],
    room for n each), nothing cached, the pm ids pid given to each with member a's values
    pval[a * ldp + q], S's columns used: the same columns and count as four calls.  The
    ids to evaluate (in the problem, neither given nor in S) are then the same for the
    four and go through one ``kernel_many4`` pass (each value ``k_rows``'s bits); a
    member's value with itself, evaluated there too, is put back to kcc4[a] and not
    counted.  A member off the problem, in S, given, or with a NaN in KS's row (its own
    set to evaluate) makes the four go one by one.  ``tmp4``: four rows of room n."""
    cdef Py_ssize_t a, j, l, q, m
    cdef double* o
    cdef bint apart = False
    for a in range(4):
        apart = apart or status[c4[a]] < 0
        for j in range(ms.ns):
            apart = apart or ms.S[j] == c4[a] or isnan(ms.KS[j][c4[a]])
        for q in range(pm):
            apart = apart or pid[q] == c4[a]
    if apart:
        for a in range(4):
            engine_column(ms, kern, store, c4[a], n, status, kcc4[a], out4[a], NULL, 0,
                          False, pid, pval + a * ldp if pm else NULL, pm, 0, True,
                          zero_off, False, idx, tmp4[0])
        return 0
    o = out4[0]                              # a marker: NaN for the ids to evaluate
    for l in range(n):
        o[l] = NAN
    for q in range(pm):
        o[pid[q]] = 0.0
    for j in range(ms.ns):
        o[ms.S[j]] = 0.0
    m = 0
    for l in range(n):
        idx[m] = l
        m += (status[l] >= 0) & isnan(o[l])
    kernel_many4(kern, store, c4, idx, m, tmp4)
    kern.n_evals -= 4
    for a in range(4):
        o = out4[a]
        for l in range(n):
            o[l] = NAN
        for j in range(m):
            o[idx[j]] = tmp4[a][j]
        for q in range(pm):
            if isnan(o[pid[q]]):
                o[pid[q]] = pval[a * ldp + q]
        for j in range(ms.ns):
            if isnan(o[ms.S[j]]):
                o[ms.S[j]] = ms.KS[j][c4[a]]
        if zero_off:
            set_off(o, status, n, 0.0)
        o[c4[a]] = kcc4[a]
    return 0


cdef MarginSet _test_margin_set(S, KS, Py_ssize_t n):
    """The test drivers' margin set: ids ``S`` and their columns ``KS`` (n x |S|)."""
    cdef Py_ssize_t j, l, ns = len(S)
    cdef MarginSet ms = MarginSet()
    cdef const double[:, ::1] K = np.ascontiguousarray(
        KS if KS is not None else np.zeros((n, 0)), dtype=np.float64)
    if K.shape[0] != n or K.shape[1] != ns:
        raise ValueError("KS must be n x |S|")
    ms.reserve_rows(max(n, 1))
    ms.reserve(max(ns, 1))
    for j in range(ns):
        ms.KS[j] = ms.pool_get()
        ms.S[j] = S[j]
        for l in range(n):
            ms.KS[j][l] = K[l, j]
        ms.ns = j + 1
    return ms


def engine_column4_value(RowStore store, CKernel kern, c4, status, kcc4, S=(), KS=None,
                         given=None, bint zero_off=True):
    """Drive ``engine_column4`` (a test against four calls of
    :func:`refsvm.core.engine.column`): the four ids c4, their k(x_c, x_c) kcc4, S's ids
    and columns KS (n x |S|), ``given`` (ids, values of shape 4 x len(ids)).  Returns the
    four columns (4 x n)."""
    cdef const signed char[::1] st = np.ascontiguousarray(status, dtype=np.int8)
    cdef Py_ssize_t n = st.shape[0], j, a
    cdef Py_ssize_t c[4]
    cdef double kc[4]
    cdef double* o4[4]
    cdef double* t4[4]
    for a in range(4):
        c[a] = c4[a]
        kc[a] = kcc4[a]
        if not 0 <= c[a] < n or n > store.n_rows:
            raise IndexError(c[a])
    cdef MarginSet ms = _test_margin_set(S, KS, n)
    cdef const Py_ssize_t[::1] pid = np.ascontiguousarray(
        given[0] if given is not None else np.zeros(0, dtype=np.intp), dtype=np.intp)
    cdef const double[:, ::1] pval = np.ascontiguousarray(
        given[1] if given is not None else np.zeros((4, 0)), dtype=np.float64)
    if pval.shape[0] != 4 or pval.shape[1] != pid.shape[0]:
        raise ValueError("given must be (ids, 4 x len(ids) values)")
    for j in range(pid.shape[0]):
        if not 0 <= pid[j] < n:
            raise IndexError(pid[j])
    out = np.empty((4, max(n, 1)))
    tmp = np.empty((4, max(n, 1)))
    cdef double[:, ::1] ov = out
    cdef double[:, ::1] tv = tmp
    cdef Py_ssize_t[::1] idx = np.empty(max(n, 1), dtype=np.intp)
    for a in range(4):
        o4[a] = &ov[a, 0]
        t4[a] = &tv[a, 0]
    engine_column4(ms, kern, store, c, n, &st[0], kc, o4,
                   &pid[0] if pid.shape[0] else NULL,
                   &pval[0, 0] if pid.shape[0] else NULL, pid.shape[0], pid.shape[0],
                   zero_off, &idx[0], t4)
    return out[:, :n].copy()


def engine_column_value(RowStore store, CKernel kern, Py_ssize_t c, status, double kcc,
                        S=(), KS=None, cached=None, bint cached_clean=False, given=None,
                        int given_codes=0, prefilled=None, bint use_ks=True,
                        bint zero_off=True, bint whole=False):
    """Drive ``engine_column`` (a test against :func:`refsvm.core.engine.column`, which
    takes the same sources): the n = len(status) examples of ``store``, S's ids and their
    columns ``KS`` (n x |S|), the cached part ``cached``, the pairs ``given`` (ids,
    values), and ``prefilled`` (the entries of ``out`` before the call, read for the ids
    whose status code is in ``given_codes``).  Returns (the column, the returned flag)."""
    cdef const signed char[::1] st = np.ascontiguousarray(status, dtype=np.int8)
    cdef Py_ssize_t n = st.shape[0], j, L = 0
    if not 0 <= c < n or n > store.n_rows:
        raise IndexError(c)
    cdef MarginSet ms = _test_margin_set(S, KS, n)
    cdef const double[::1] cv = np.ascontiguousarray(
        cached if cached is not None else np.zeros(0), dtype=np.float64)
    L = min(cv.shape[0], n)
    cdef const Py_ssize_t[::1] pid = np.ascontiguousarray(
        given[0] if given is not None else np.zeros(0, dtype=np.intp), dtype=np.intp)
    cdef const double[::1] pval = np.ascontiguousarray(
        given[1] if given is not None else np.zeros(0), dtype=np.float64)
    if pval.shape[0] != pid.shape[0]:
        raise ValueError("given must be (ids, values) of one length")
    for j in range(pid.shape[0]):
        if not 0 <= pid[j] < n:
            raise IndexError(pid[j])
    out = np.full(max(n, 1), np.nan) if prefilled is None else \
        np.array(prefilled, dtype=np.float64)
    cdef double[::1] o = out
    cdef Py_ssize_t[::1] idx = np.empty(max(n, 1), dtype=np.intp)
    cdef double[::1] tmp = np.empty(max(n, 1))
    cdef int flag
    flag = engine_column(ms, kern, store, c, n, &st[0], kcc, &o[0],
                         &cv[0] if L else NULL, L, cached_clean,
                         &pid[0] if pid.shape[0] else NULL,
                         &pval[0] if pid.shape[0] else NULL, pid.shape[0],
                         given_codes, use_ks, zero_off, whole, &idx[0], &tmp[0])
    return out[:n].copy(), flag
