"""Compiled twin of :mod:`refsvm.linear.reduced_kernel_pa` (RKPA, RKPAm).

Same classes, attributes and methods as the reference.  The learning itself is the
linear family's compiled PA / PAm (:mod:`refsvm.linear._passive_aggressive`, cimported):
``ReducedKernelPAState`` computes φ(x) = Λ^{-1/2} Pᵀ K(Ã, x) and hands (φ(x), 1) to
``PAState._step``; the RKPAm state hands it to a ``PAmState`` whose statistics and
proximal model are those of the kernel rows (``KernelRowProximalPAm``).  ``run``
takes the stream in blocks: the m̃ kernel evaluations of each row of the block, one
BLAS ``dgemm`` for the block's features, then the sequential PA updates; so the cost
per example is the m̃ kernel evaluations plus a BLAS-3 share of the m̃×m̃ transform.
"""
from libc.math cimport sqrt
from scipy.linalg.cython_blas cimport dgemm, dgemv

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport CKernel, RowStore, StreamLearner
from refsvm.linear._passive_aggressive cimport LinearModel, PAmState, PAState

cnp.import_array()

# rows per block of ``run`` (the kernel rows and features of a block stay in cache)
cdef Py_ssize_t BLOCK = 256

#: as the reference's SINGULAR_RATIO
SINGULAR_RATIO = np.finfo(np.float64).eps

_blas_controller = None


def _single_threaded_blas():
    """A context in which BLAS runs on one thread.  The blocks here are small (256 x m̃
    times m̃ x m̃): OpenBLAS's threads cost more than they give, and on a loaded machine
    their spinning makes a pass ten times slower."""
    global _blas_controller
    if _blas_controller is None:
        from threadpoolctl import ThreadpoolController
        _blas_controller = ThreadpoolController()
    return _blas_controller.limit(limits=1, user_api="blas")


cdef inline double* _buffer(cnp.ndarray a) noexcept:
    return <double*> cnp.PyArray_DATA(a)


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
    cdef RowStore store                 # Ã
    cdef double* transform_data         # m̃ x m̃, row-major
    cdef double* P_data
    cdef object sqrt_eigenvalues
    cdef double* sqrt_eigenvalues_data

    def __init__(self, reduced, CKernel kernel, double eps=0.0):
        cdef Py_ssize_t i, j, m = reduced.shape[0]
        self.reduced = reduced
        self.kernel = kernel
        self.eps = eps
        self.n_reduced = m
        self.store = RowStore(reduced.shape[1], sp.issparse(reduced))
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
        # K̃ = K(Ã, Ã) + εI = P Λ Pᵀ
        eigenvalues, P = np.linalg.eigh(K + eps * np.eye(m))
        if m == 0 or not eigenvalues[0] > SINGULAR_RATIO * m * eigenvalues[-1]:
            raise ValueError(
                f"K(reduced, reduced) + eps*I is singular (smallest eigenvalue "
                f"{eigenvalues[0] if m else 0.0:.3g}): the reduced set has duplicate or "
                f"nearly equal points; use eps > 0 or distinct reduced points")
        self.eigenvalues = eigenvalues
        self.P = np.ascontiguousarray(P)
        self.transform = np.ascontiguousarray(P.T / np.sqrt(eigenvalues)[:, None])
        self.sqrt_eigenvalues = np.sqrt(eigenvalues)
        self.transform_data = _buffer(self.transform)
        self.P_data = _buffer(self.P)
        self.sqrt_eigenvalues_data = _buffer(self.sqrt_eigenvalues)

    cdef void _kernel_row(self, const int* xi, const double* xv, Py_ssize_t nnz,
                          double* k) noexcept nogil:
        """k = K(Ã, x): m̃ counted evaluations."""
        cdef Py_ssize_t i
        if self.store.sparse:
            for i in range(self.n_reduced):
                k[i] = self.kernel.k_row_csr(self.store, i, xi, xv, nnz)
        else:
            for i in range(self.n_reduced):
                k[i] = self.kernel.k_row_dense(self.store, i, xv)

    cdef void _features(self, const double* k, Py_ssize_t n_rows, double* phi) noexcept nogil:
        """Row r of phi = transform @ (row r of k), for n_rows row-major rows (BLAS)."""
        cdef int m = <int> self.n_reduced, n = <int> n_rows, one = 1
        cdef double alpha = 1.0, beta = 0.0
        cdef char trans = b'T'
        cdef char notrans = b'N'
        if n_rows == 1:
            # column-major view of the row-major transform is its transpose
            dgemv(&trans, &m, &m, &alpha, self.transform_data, &m, <double*> k, &one,
                  &beta, phi, &one)
        else:
            dgemm(&trans, &notrans, &m, &n, &m, &alpha, self.transform_data, &m,
                  <double*> k, &m, &beta, phi, &m)

    cdef void _to_features(self, const double* u, double* z) noexcept nogil:
        """z = Λ^{1/2} Pᵀ u."""
        cdef int m = <int> self.n_reduced, one = 1
        cdef double alpha = 1.0, beta = 0.0
        cdef char notrans = b'N'
        cdef Py_ssize_t i
        # column-major view of the row-major P is Pᵀ
        dgemv(&notrans, &m, &m, &alpha, self.P_data, &m, <double*> u, &one, &beta, z, &one)
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
            self._kernel_row(NULL, &xv[0], xv.shape[0], _buffer(k))
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


cdef object _block_features(ReducedKernelMap fmap, X):
    """Φ(X) through the compiled kernel rows and one dgemm per block."""
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
    with nogil:
        start = 0
        while start < n:
            stop = min(start + BLOCK, n)
            for r in range(stop - start):
                i = start + r
                if sparse:
                    fmap._kernel_row(&indices[indptr[i]] if indptr[i + 1] > indptr[i] else NULL,
                                     &data[indptr[i]] if indptr[i + 1] > indptr[i] else NULL,
                                     indptr[i + 1] - indptr[i], kp + r * m)
                else:
                    fmap._kernel_row(NULL, &Xd[i, 0], Xd.shape[1], kp + r * m)
            fmap._features(kp, stop - start, pp + start * m)
            start = stop
    return Phi


cdef class ReducedKernelPAState(StreamLearner):
    """Twin of :class:`refsvm.linear.reduced_kernel_pa.ReducedKernelPAState`: the linear
    family's compiled ``PAState._step`` on (φ(x), 1)."""

    cdef readonly int variant
    cdef readonly double C
    cdef readonly double eps
    cdef readonly CKernel kernel
    cdef readonly ReducedKernelMap feature_map
    cdef readonly LinearModel pa
    cdef object scratch                 # K(Ã, x) and φ(x) of one example
    cdef double* k_data
    cdef double* phi_data
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
        self.scratch = np.zeros((2, self.feature_map.n_reduced))
        self.k_data = _buffer(self.scratch)
        self.phi_data = self.k_data + self.feature_map.n_reduced
        self.ready = True

    def _check_ready(self):
        if not self.ready:
            raise ValueError("no reduced set: pass reduced= or load_state() first")

    def _linear_state(self):
        # RKPA = PA on (φ(x), 1): the bias is the weight of a constant feature 1
        return PAState(self.feature_map.n_reduced, False, variant=self.variant, C=self.C,
                       fit_intercept=True)

    cdef int _learn(self, const double* k, const double* phi, double y) except -1 nogil:
        """The linear step on φ(x) (k = K(Ã, x) for the proximal statistics)."""
        return self.pa._step(NULL, phi, self.feature_map.n_reduced, y)

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        if not self.ready:
            with gil:
                self._check_ready()
        self.feature_map._kernel_row(xi, xv, nnz, self.k_data)
        self.feature_map._features(self.k_data, 1, self.phi_data)
        return self._learn(self.k_data, self.phi_data, y)

    def run(self, X, y, order):
        """Learn the rows of X in ``order`` block by block (kernel rows, one dgemm for
        the block's features, then the sequential PA steps); returns #changes."""
        cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
        cdef const Py_ssize_t[::1] od = np.ascontiguousarray(order, dtype=np.intp)
        cdef Py_ssize_t n = od.shape[0], m, d = self.n_features
        cdef Py_ssize_t start, stop, r, i
        cdef const double[:, ::1] Xd
        cdef const double[::1] data
        cdef const int[::1] indices
        cdef const Py_ssize_t[::1] indptr
        cdef long long changes = 0
        self._check_ready()
        m = self.feature_map.n_reduced
        Kb = np.empty((BLOCK, m))
        Pb = np.empty((BLOCK, m))
        cdef double* kp = _buffer(Kb)
        cdef double* pp = _buffer(Pb)
        self._check_ready()
        if n == 0:
            return 0
        if self.sparse:
            data = np.ascontiguousarray(X.data, dtype=np.float64)
            indices = np.ascontiguousarray(X.indices, dtype=np.int32)
            indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
        else:
            Xd = X
            if Xd.shape[1] != d:
                raise ValueError(f"X has {Xd.shape[1]} features, expected {d}")
        with _single_threaded_blas(), nogil:
            start = 0
            while start < n:
                stop = min(start + BLOCK, n)
                for r in range(stop - start):
                    i = od[start + r]
                    if self.sparse:
                        self.feature_map._kernel_row(
                            &indices[indptr[i]] if indptr[i + 1] > indptr[i] else NULL,
                            &data[indptr[i]] if indptr[i + 1] > indptr[i] else NULL,
                            indptr[i + 1] - indptr[i], kp + r * m)
                    else:
                        self.feature_map._kernel_row(NULL, &Xd[i, 0], d, kp + r * m)
                self.feature_map._features(kp, stop - start, pp)
                for r in range(stop - start):
                    changes += self._learn(kp + r * m, pp + r * m, yv[od[start + r]])
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
        self._build(load_reduced_set(data, self.n_features))
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
    z_p = Λ^{1/2} Pᵀ ũ_p (twin of the reference's ``_KernelRowProximalPAm``)."""

    cdef ReducedKernelMap feature_map
    cdef const double* kernel_row
    cdef object u_p
    cdef double* u_p_data

    def __init__(self, ReducedKernelMap feature_map, int variant=1, double C=1.0,
                 double gamma=0.1):
        super().__init__(feature_map.n_reduced, False, variant, C, gamma, True)
        self.feature_map = feature_map
        self.u_p = np.zeros(feature_map.n_reduced)
        self.u_p_data = _buffer(self.u_p)
        self.kernel_row = NULL

    cdef void _add_statistics(self, const int* xi, const double* xv, Py_ssize_t nnz,
                              double y) noexcept nogil:
        # the statistics are those of K(Ã, x), not of φ(x)
        PAmState._add_statistics(self, NULL, self.kernel_row, nnz, y)

    cdef double _proximal(self) noexcept nogil:
        cdef Py_ssize_t i, m = self.n_features
        # quasi-KFD on the kernel rows (PAm's quasi-LDA formula): ũ_p into wp, b_p
        cdef double bp = PAmState._proximal(self)
        for i in range(m):
            self.u_p_data[i] = self.wp_data[i]
        self.feature_map._to_features(self.u_p_data, self.wp_data)
        return bp


cdef class ReducedKernelPAmState(ReducedKernelPAState):
    """Twin of :class:`refsvm.linear.reduced_kernel_pa.ReducedKernelPAmState`
    (``covariance="diagonal"``; the full covariance is reference-only for now)."""

    cdef readonly double proximal_weight
    cdef readonly str covariance

    def __init__(self, Py_ssize_t n_features, bint sparse=False, reduced=None, int variant=1,
                 double C=1.0, kernel="rbf", gamma=1.0, degree=3, coef0=0.0,
                 double eps=0.0, double proximal_weight=0.1, covariance="diagonal"):
        if covariance not in ("diagonal", "full"):
            raise ValueError(f"covariance must be 'diagonal' or 'full'; got {covariance!r}")
        if covariance == "full":
            raise NotImplementedError("covariance='full' has no compiled twin yet; "
                                      "use backend='python'")
        self.proximal_weight = proximal_weight
        self.covariance = covariance
        super().__init__(n_features, sparse, reduced, variant, C, kernel, gamma, degree,
                         coef0, eps)

    def _linear_state(self):
        return KernelRowProximalPAm(self.feature_map, self.variant, self.C,
                                    self.proximal_weight)

    cdef int _learn(self, const double* k, const double* phi, double y) except -1 nogil:
        (<KernelRowProximalPAm> self.pa).kernel_row = k
        return self.pa._step(NULL, phi, self.feature_map.n_reduced, y)

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
