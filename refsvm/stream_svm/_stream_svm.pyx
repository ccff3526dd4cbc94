"""Compiled twin of :mod:`refsvm.stream_svm.stream_svm` (StreamSVM, Rai et al.).

Same classes (``StreamSVMLinear``, ``StreamSVMKernel``), same order of operations,
same counting, same persistence format.  The linear form is a scale-and-add on the
core's ``ScaledVector`` (w = s·v: line 7 is ``sv_scale`` in O(1) and ``sv_add_row``
in O(nnz)); the kernel form keeps its core set in the core's ``RowStore`` and
evaluates it with ``CKernel``.  Both subclass the core's ``StreamLearner`` and
implement only ``_step``.  The lookahead solver (``enclosing_ball``) is the
reference's algorithm in C: an active-set simplex QP with a Cholesky solve on the
free set, inside a safeguarded Newton iteration on the radius.
"""
from libc.math cimport sqrt, fabs, INFINITY
from libc.stdlib cimport malloc, calloc, realloc, free

cimport cython

import numpy as np
import scipy.sparse as sp

from refsvm._core cimport (KernelSpec, CKernel, RowStore, StreamLearner, ScaledVector,
                           sv_init, sv_scale, sv_add_row, sv_sqnorm, sv_fold, row_dot,
                           row_sqnorm, grow, kernel_dense, kernel_csr, STEP_BAD,
                           row_dot_sqnorm, row_screen, kernel_row_many)
from refsvm._core import restore_state
from refsvm.core.stream import answer_held_signals as _answer_held_signals
from cpython.exc cimport PyErr_CheckSignals
from refsvm.stream_svm import enclosing_ball as _ball
from refsvm.stream_svm import stream_svm as _ref
from refsvm.stream_svm.departures import resolve_form
from refsvm.stream_svm.multi_ball import check_multi_ball

#: the reference's constants, as C doubles (each read from its one home)
cdef double FOLD = _ref.FOLD
cdef double TOL = _ball.TOL
cdef double QP_TOL = _ball.QP_TOL

__all__ = ["StreamSVMLinear", "StreamSVMKernel", "MultiBallStreamSVM", "enclosing_ball", "simplex_qp"]


cdef int _resize(void** p, size_t nbytes) except -1 nogil:
    cdef void* q = realloc(p[0], nbytes if nbytes > 0 else 1)
    if q == NULL:
        with gil:
            raise MemoryError(f"StreamSVM: cannot allocate {nbytes} bytes")
    p[0] = q
    return 0


# --------------------------------------------------------------------------- the solver
cdef int _cholesky_solve(int n, double* A, double* x) noexcept nogil:
    """A = LLᵀ in place (lower triangle), then x ← A⁻¹x; -1 if A is not PD to rounding
    (reference: _cholesky_solve)."""
    cdef int i, j, k
    cdef double s, t
    for j in range(n):
        s = A[j * n + j]
        for k in range(j):
            s -= A[j * n + k] * A[j * n + k]
        if s <= 0.0:
            return -1
        s = sqrt(s)
        A[j * n + j] = s
        for i in range(j + 1, n):
            t = A[i * n + j]
            for k in range(j):
                t -= A[i * n + k] * A[j * n + k]
            A[i * n + j] = t / s
    for i in range(n):                       # L y = x
        s = x[i]
        for k in range(i):
            s -= A[i * n + k] * x[k]
        x[i] = s / A[i * n + i]
    for i in range(n - 1, -1, -1):           # Lᵀ x = y
        s = x[i]
        for k in range(i + 1, n):
            s -= A[k * n + i] * x[k]
        x[i] = s / A[i * n + i]
    return 0


cdef double _objective(int n, const double* G, const double* b, const double* mu,
                       double* Gmu) noexcept nogil:
    """φ = μᵀGμ − bᵀμ, and Gμ (reference: _objective)."""
    cdef int i, k
    cdef double phi = 0.0
    for i in range(n):
        Gmu[i] = 0.0
        for k in range(n):
            Gmu[i] += G[i * n + k] * mu[k]
    for i in range(n):
        phi += mu[i] * (Gmu[i] - b[i])
    return phi


cdef inline double _line_gain(double slope, double curv, double tmax) noexcept nogil:
    """The decrease of t·slope + t²·curv over 0 ≤ t ≤ tmax (reference: _line_gain)."""
    if curv > 0.0 and -slope < 2.0 * curv * tmax:
        return slope * slope / (4.0 * curv)
    return -slope * tmax - curv * tmax * tmax


cdef int _entering(int n, const double* G, const double* b, const double* mu, const double* Gmu,
                   const int* isfree, double threshold) noexcept nogil:
    """The fixed coordinate whose best line search lowers φ by more than ``threshold``
    (the most), or -1 (reference: _entering)."""
    cdef int i, k, worst = -1
    cdef double q = 0.0, gm = 0.0, gain = threshold, gi, g, slope
    for i in range(n):
        q += mu[i] * Gmu[i]
        gm += mu[i] * (2.0 * Gmu[i] - b[i])
    for i in range(n):
        if isfree[i]:
            continue
        gi = 2.0 * Gmu[i] - b[i]
        if gi - gm < 0.0:
            g = _line_gain(gi - gm, G[i * n + i] - 2.0 * Gmu[i] + q, 1.0)
            if g > gain:
                worst = i
                gain = g
        for k in range(n):
            if isfree[k]:
                slope = gi - (2.0 * Gmu[k] - b[k])
                if slope < 0.0:
                    g = _line_gain(slope, G[i * n + i] + G[k * n + k] - 2.0 * G[i * n + k], mu[k])
                    if g > gain:
                        worst = i
                        gain = g
    return worst


# Ctrl-C inside a long solve (the reference's ``_look_for_signals``): its iterations look
# for a signal (with the GIL) after this much work (n^3 each), not every time
cdef double POLL_WORK = _ball.POLL_WORK


cdef int _answer_signals() except -1 nogil:
    """Run the signal handlers and deliver a signal the stream driver holds back (the
    reference's ``answer_held_signals``): a handler's exception ends the solve (-1)."""
    with gil:
        PyErr_CheckSignals()
        _answer_held_signals()
    return 0


cdef int _simplex_qp(int n, const double* G, const double* b, double* mu, double* work,
                     int* iwork, double tol, long long* steps) except -1 nogil:
    """min μᵀGμ − bᵀμ over the simplex from the feasible ``mu`` (see the reference's
    ``simplex_qp``: the same steps, the same stopping rules, no failure exit but a
    signal handler's exception).
    work: n*n + 6n doubles; iwork: 2n ints.  Adds its iterations to ``steps``."""
    cdef double* H = work
    cdef double* q = work + n * n
    cdef double* p = q + n
    cdef double* Gmu = p + n
    cdef double* best = Gmu + n
    cdef int* F = iwork
    cdef int* isfree = iwork + n
    cdef int i, k, c, m, mo, it = 0, block, worst, top, j, a, cc
    cdef double scale = 0.0, slack = 0.0, t, val, phi, best_phi, qs
    cdef double last = INFINITY
    cdef double poll = 0.0                      # work since the last look for a signal
    for i in range(n):
        isfree[i] = mu[i] > 0.0
        if G[i * n + i] > scale:
            scale = G[i * n + i]
        if fabs(b[i]) > slack:
            slack = fabs(b[i])
    slack = 1e-14 * (scale if scale > slack else slack)
    phi = _objective(n, G, b, mu, Gmu)
    best_phi = phi
    for i in range(n):
        best[i] = mu[i]
    while it < 20 * n + 20:
        it += 1
        poll += <double> n * <double> n * <double> n
        if poll >= POLL_WORK:               # the reference's _look_for_signals
            poll = 0.0
            _answer_signals()               # Ctrl-C inside a long solve
        m = 0
        for i in range(n):
            if isfree[i]:
                F[m] = i
                m += 1
        # the step on F with Σp = 0 (reference: the reduced system H q = ½(r_a − r_j))
        top = 0
        for k in range(1, m):
            if mu[F[k]] > mu[F[top]]:
                top = k
        j = F[top]
        mo = m - 1
        for k in range(mo):
            a = F[k if k < top else k + 1]
            for c in range(mo):
                cc = F[c if c < top else c + 1]
                H[k * mo + c] = G[a * n + cc] - G[a * n + j] - G[j * n + cc] + G[j * n + j]
            q[k] = 0.5 * ((b[a] - 2.0 * Gmu[a]) - (b[j] - 2.0 * Gmu[j]))
        if _cholesky_solve(mo, H, q) < 0:
            break
        qs = 0.0
        for k in range(m):
            if k == top:
                p[k] = 0.0
            else:
                p[k] = q[k if k < top else k - 1]
                qs += p[k]
        p[top] = -qs
        t = 1.0
        block = -1
        for k in range(m):
            if p[k] < 0.0 and -mu[F[k]] / p[k] < t:
                t = -mu[F[k]] / p[k]
                block = k
        for k in range(m):
            val = mu[F[k]] + t * p[k]
            mu[F[k]] = val if val > 0.0 else 0.0
        if block >= 0:
            mu[F[block]] = 0.0
        for k in range(m):
            if mu[F[k]] == 0.0:
                isfree[F[k]] = 0
        phi = _objective(n, G, b, mu, Gmu)
        if phi <= best_phi + slack:
            best_phi = phi
            for i in range(n):
                best[i] = mu[i]
        if block >= 0:
            continue
        worst = _entering(n, G, b, mu, Gmu, isfree, tol * scale)
        if worst < 0 or not phi < last:
            break
        last = phi
        isfree[worst] = 1
    for i in range(n):
        mu[i] = best[i]
    steps[0] += it
    return 0


cdef double _ball_radius(int n, const double* G, const double* mu, double R,
                         double* Gmu) noexcept nogil:
    """max(‖c − c_0‖ + R, max_j ‖c − p_j‖) for c = Σ μ_i c_i (reference: ball_distances)."""
    cdef int i, k
    cdef double q = 0.0, d2, d, r = 0.0
    for i in range(n):
        Gmu[i] = 0.0
        for k in range(n):
            Gmu[i] += G[i * n + k] * mu[k]
        q += mu[i] * Gmu[i]
    for i in range(n):
        d2 = q - 2.0 * Gmu[i] + G[i * n + i]
        d = sqrt(d2) if d2 > 0.0 else 0.0
        if i == 0:
            d += R
        if d > r:
            r = d
    return r


cdef int _enclose(int n1, const double* G, double R, double tol, double* mu_out, double* r_out,
                  double* work, int* iwork, long long* steps) except -1 nogil:
    """The minimum ball enclosing B(c_0, R) and p_1..p_{n1-1} (reference: enclosing_ball).
    work: n1*n1 + 10*n1 doubles; iwork: 2*n1 ints.  Never fails: the QP keeps its best
    point, and the radius returned is the exact enclosing radius of the center."""
    cdef double* diag = work
    cdef double* b = diag + n1
    cdef double* mu = b + n1
    cdef double* Gmu = mu + n1
    cdef double* qpwork = Gmu + n1
    cdef int i, k, it
    cdef double dj, dmax = 0.0, lo = 0.0, hi, r, psi, bm, mGm, dpsi, r_new
    for i in range(n1):
        diag[i] = G[i * n1 + i]
        mu[i] = 0.0
        mu_out[i] = 0.0
    mu[0] = 1.0
    mu_out[0] = 1.0
    for i in range(1, n1):
        dj = G[0] - 2.0 * G[i] + diag[i]
        dj = sqrt(dj) if dj > 0.0 else 0.0
        if dj > dmax:
            dmax = dj
        if 0.5 * (dj + R) > lo:
            lo = 0.5 * (dj + R)
    if n1 == 1 or dmax <= R:
        r_out[0] = R
        return 0
    if R == 0.0:
        _simplex_qp(n1, G, diag, mu, qpwork, iwork, QP_TOL, steps)
        for i in range(n1):
            mu_out[i] = mu[i]
        r_out[0] = _ball_radius(n1, G, mu_out, R, Gmu)
        return 0
    hi = dmax
    r = lo
    for it in range(100):
        for i in range(n1):
            b[i] = diag[i]
        b[0] += 2.0 * r * R - R * R          # the ball as a weighted point
        _simplex_qp(n1, G, b, mu, qpwork, iwork, QP_TOL, steps)
        bm = 0.0
        mGm = 0.0
        for i in range(n1):
            Gmu[i] = 0.0
            for k in range(n1):
                Gmu[i] += G[i * n1 + k] * mu[k]
        for i in range(n1):
            bm += b[i] * mu[i]
            mGm += mu[i] * Gmu[i]
        psi = (bm - mGm) - r * r
        if psi <= 0.0:
            hi = r
            for i in range(n1):
                mu_out[i] = mu[i]
            if -psi <= tol * r * r:
                break
        else:
            lo = r
        if hi - lo <= tol * hi:
            break
        dpsi = 2.0 * R * mu[0] - 2.0 * r
        r_new = r - psi / dpsi if dpsi < 0.0 else lo
        if not (lo < r_new < hi):
            r_new = 0.5 * (lo + hi)
        r = r_new
    r_out[0] = _ball_radius(n1, G, mu_out, R, Gmu)
    return 0


def simplex_qp(G, b, mu, tol=_ball.QP_TOL, stats=None):
    """Python entry to the compiled simplex QP (tests); as the reference's."""
    cdef double[:, ::1] Gv = np.ascontiguousarray(G, dtype=np.float64)
    cdef double[::1] bv = np.ascontiguousarray(b, dtype=np.float64)
    cdef double[::1] m = np.array(mu, dtype=np.float64)
    cdef int n = bv.shape[0]
    cdef double[::1] work = np.empty(n * n + 6 * n)
    cdef int[::1] iwork = np.empty(2 * n, dtype=np.intc)
    cdef long long steps = 0
    _simplex_qp(n, &Gv[0, 0], &bv[0], &m[0], &work[0], &iwork[0], tol, &steps)
    if stats is not None:
        stats[0] += steps
    return np.asarray(m)


def enclosing_ball(G, R, tol=_ball.TOL, stats=None):
    """Python entry to the compiled lookahead solver: (μ, r) as the reference's."""
    cdef double[:, ::1] Gv = np.ascontiguousarray(G, dtype=np.float64)
    cdef int n = Gv.shape[0]
    cdef double[::1] mu = np.zeros(n)
    cdef double r = 0.0
    cdef double[::1] work = np.empty(n * n + 10 * n)
    cdef int[::1] iwork = np.empty(2 * n, dtype=np.intc)
    cdef long long steps = 0
    _enclose(n, &Gv[0, 0], R, tol, &mu[0], &r, &work[0], &iwork[0], &steps)
    if stats is not None:
        stats[0] += steps
    return np.asarray(mu), r


# --------------------------------------------------------------------------- the state
@cython.nonecheck(False)
cdef class _StreamSVM(StreamLearner):
    """Algorithms 1 and 2 (see the reference's ``_StreamSVM``); hooks in the subclasses."""

    cdef readonly double C, R, xi2
    cdef readonly long long M, n_seen
    cdef readonly int lookahead
    cdef readonly object form
    cdef readonly object departures          # resolved: {name: setting}
    cdef readonly bint consistent_xi2        # departures["consistent_xi2"], read once
    cdef readonly bint fit_intercept
    cdef readonly double one                 # the constant coordinate: 1 with the bias
    cdef readonly double b                   # the bias Σ α_m (0 without fit_intercept)
    cdef readonly long long n_solver_steps
    cdef RowStore buf                        # Alg. 2's S (rows)
    cdef double* buf_y
    cdef double* buf_f
    cdef double* buf_kxx
    cdef double* buf_d
    cdef long long* buf_ids
    cdef Py_ssize_t nbuf
    cdef double* G                           # (L + 1)² Gram matrix of [c, φ̃_1..φ̃_L]
    cdef double* Q                           # L² signed kernel block
    cdef double* lam
    cdef double* work
    cdef int* iwork
    cdef Py_ssize_t cap_buf, cap_n1

    def __cinit__(self, *args, **kwargs):
        self.buf_y = self.buf_f = self.buf_kxx = self.buf_d = NULL
        self.buf_ids = NULL
        self.G = self.Q = self.lam = self.work = NULL
        self.iwork = NULL

    def _init_common(self, n_features, sparse, C, lookahead, form, fit_intercept, departures):
        self.n_features = n_features
        self.sparse = sparse
        self.C = C
        self.lookahead = lookahead
        self.departures = resolve_form(departures, form)
        self.consistent_xi2 = self.departures["consistent_xi2"]
        self.form = "consistent" if self.consistent_xi2 else "printed"
        self.fit_intercept = bool(fit_intercept)
        self.one = 1.0 if self.fit_intercept else 0.0
        self.b = 0.0
        self.n_solver_steps = 0
        self.buf = RowStore(n_features, sparse)
        self.cap_buf = 0
        self.cap_n1 = 0

    cdef int _reserve_buffer(self, Py_ssize_t need) except -1 nogil:
        """Room for ``need`` buffered points (grown on demand: memory follows |S|, not L)."""
        cdef Py_ssize_t cap
        if need <= self.cap_buf:
            return 0
        cap = max(need, min(<Py_ssize_t> self.lookahead, max(8, 2 * self.cap_buf)))
        _resize(<void**> &self.buf_y, cap * sizeof(double))
        _resize(<void**> &self.buf_f, cap * sizeof(double))
        _resize(<void**> &self.buf_kxx, cap * sizeof(double))
        _resize(<void**> &self.buf_d, cap * sizeof(double))
        _resize(<void**> &self.buf_ids, cap * sizeof(long long))
        self.cap_buf = cap
        return 0

    cdef int _reserve_solver(self, Py_ssize_t n1) except -1 nogil:
        """Room for the Gram matrix of n1 = |S| + 1 objects and the solver's work."""
        if n1 <= self.cap_n1:
            return 0
        _resize(<void**> &self.G, n1 * n1 * sizeof(double))
        _resize(<void**> &self.Q, (n1 - 1) * (n1 - 1) * sizeof(double))
        _resize(<void**> &self.lam, n1 * sizeof(double))
        _resize(<void**> &self.work, (n1 * n1 + 10 * n1) * sizeof(double))
        _resize(<void**> &self.iwork, 2 * n1 * sizeof(int))
        self.cap_n1 = n1
        return 0

    def __dealloc__(self):
        free(self.buf_y)
        free(self.buf_f)
        free(self.buf_kxx)
        free(self.buf_d)
        free(self.buf_ids)
        free(self.G)
        free(self.Q)
        free(self.lam)
        free(self.work)
        free(self.iwork)

    # ---- hooks
    cdef int _start(self, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                    long long n) except -1 nogil:
        return 0

    cdef double _score(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        return 0.0

    cdef double _self_value(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        return 0.0

    cdef double _wnorm2(self) noexcept nogil:
        return 0.0

    cdef void _rescore(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        pass

    cdef int _move(self, double beta, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                   double f, double kxx, long long n) except -1 nogil:
        return 0

    cdef double _pair(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        return 0.0

    cdef int _combine(self, Py_ssize_t L) except -1 nogil:
        return 0

    # ---- rows of the buffer
    cdef void _buf_row(self, Py_ssize_t j, const int** xi, const double** xv,
                       Py_ssize_t* nnz) noexcept nogil:
        cdef Py_ssize_t start
        if self.sparse:
            start = self.buf.indptr[j]
            nnz[0] = self.buf.indptr[j + 1] - start
            xi[0] = self.buf.indices + start
            xv[0] = self.buf.data + start
        else:
            xi[0] = NULL
            xv[0] = self.buf.dense + j * self.n_features
            nnz[0] = self.n_features

    # ---- Algorithm 1 (and the buffering of Algorithm 2)
    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        cdef long long n = self.n_seen
        cdef double f, kxx
        self.n_seen += 1
        if self.M == 0:
            # Alg. 1 line 3: M = 1; R = 0; ξ² = 1 (the departure consistent_xi2: 1/C)
            self._start(xi, xv, nnz, y, n)
            self.b = y * self.one
            self.R = 0.0
            self.xi2 = 1.0 / self.C if self.consistent_xi2 else 1.0
            self.M = 1
            return 1
        # line 5
        f = self._score(xi, xv, nnz) + self.b
        kxx = self._self_value(xi, xv, nnz) + self.one
        return self._scored_step(xi, xv, nnz, y, f, kxx, n)

    cdef int _scored_step(self, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                          double f, double kxx, long long n) except -1 nogil:
        """The step of example n (counted in n_seen) once f(x) and k(x, x) (+ the bias
        coordinate) are known: line 5's distance, then lines 6-10 or Alg. 2's buffer."""
        cdef double t, d
        t = self._wnorm2() - 2.0 * y * f + kxx
        if t < 0.0:
            t = 0.0
        d = sqrt(t + self.xi2 + 1.0 / self.C)
        # line 6
        if d < self.R:
            return 0
        if self.lookahead == 1:
            self._ball_step(xi, xv, nnz, y, f, kxx, d, n)
            return 1
        # Alg. 2 line 5: S = S ∪ {y_n x_n}
        self._reserve_buffer(self.nbuf + 1)
        if self.sparse:
            self.buf.append_csr(xi, xv, nnz)
        else:
            self.buf.append_dense(xv)
        self.buf_y[self.nbuf] = y
        self.buf_f[self.nbuf] = f
        self.buf_kxx[self.nbuf] = kxx
        self.buf_d[self.nbuf] = d
        self.buf_ids[self.nbuf] = n
        self.nbuf += 1
        # Alg. 2 line 6
        if self.nbuf >= self.lookahead:             # (>: a flush that Ctrl-C ended, again)
            self._flush()
        return 1

    cdef int _ball_step(self, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                        double f, double kxx, double d, long long n) except -1 nogil:
        """Alg. 1 lines 7-10."""
        cdef double R = self.R
        cdef double beta = 0.5 * (1.0 - R / d)
        cdef double beta9
        self._move(beta, xi, xv, nnz, y, f, kxx, n)              # line 7
        if self.fit_intercept:
            self.b = (1.0 - beta) * self.b + beta * y             # the bias coordinate
        self.R = R + 0.5 * (d - R)                                # line 8
        if self.consistent_xi2:                                   # departure
            self.xi2 = ((1.0 - beta) * (1.0 - beta)) * self.xi2 + (beta * beta) / self.C
        else:                                                     # line 9, as printed
            beta9 = 0.5 * (1.0 - self.R / d)
            self.xi2 = self.xi2 * ((1.0 - beta9) * (1.0 - beta9)) + beta9 * beta9
        self.M += 1                                               # line 10
        return 0

    # ---- Algorithm 2
    cdef int _flush(self) except -1 nogil:
        cdef Py_ssize_t L = self.nbuf, i, j, n1 = self.nbuf + 1
        cdef const int* xi
        cdef const double* xv
        cdef Py_ssize_t nnz
        cdef double r = 0.0, s2, bb
        if L == 0:
            return 0
        if L == 1:
            self._buf_row(0, &xi, &xv, &nnz)
            self._rescore(xi, xv, nnz)
            self._ball_step(xi, xv, nnz, self.buf_y[0], self.buf_f[0], self.buf_kxx[0],
                            self.buf_d[0], self.buf_ids[0])
            self.nbuf = 0
            self.buf.keep(NULL, 0)
            return 1
        self._reserve_solver(n1)
        for i in range(L):
            self.Q[i * L + i] = self.buf_kxx[i]
            for j in range(i + 1, L):
                self.Q[i * L + j] = self.buf_y[i] * self.buf_y[j] * (self._pair(i, j) + self.one)
                self.Q[j * L + i] = self.Q[i * L + j]
        self.G[0] = self._wnorm2() + self.xi2
        for j in range(L):
            self.G[j + 1] = self.buf_y[j] * self.buf_f[j]
            self.G[(j + 1) * n1] = self.G[j + 1]
        for i in range(L):
            for j in range(L):
                self.G[(i + 1) * n1 + j + 1] = self.Q[i * L + j] + (1.0 / self.C if i == j else 0.0)
        _enclose(n1, self.G, self.R, TOL, self.lam, &r, self.work, self.iwork,
                 &self.n_solver_steps)
        self._combine(L)
        if self.fit_intercept:
            bb = self.lam[0] * self.b                             # b' = λ_0 b + Σ λ_j y_j
            for j in range(L):
                if self.lam[j + 1] > 0.0:
                    bb += self.lam[j + 1] * self.buf_y[j]
            self.b = bb
        s2 = 0.0
        for j in range(L):
            s2 += self.lam[j + 1] * self.lam[j + 1]
        self.xi2 = (self.lam[0] * self.lam[0]) * self.xi2 + s2 / self.C
        self.R = r
        self.M += L
        self.nbuf = 0
        self.buf.keep(NULL, 0)
        return L

    def flush(self):
        """Alg. 2 lines 7-8 / 12-14: enclose the ball and the buffer; empty it.  Returns |S|."""
        return self._flush()

    def flushed(self):
        """A copy with the buffer flushed (the model if the stream ended now)."""
        model = restore_state(type(self), self.init_params(), self.save_state())
        model.flush()
        return model

    def decision_function(self, X):
        """f(x) for every row; with a non-empty buffer, that of :meth:`flushed`."""
        model = self.flushed() if self.nbuf else self
        return model.center_function(X)

    @property
    def radius(self):
        return self.R

    @property
    def intercept(self):
        return self.b

    @property
    def n_updates(self):
        return self.M

    @property
    def n_buffered(self):
        return self.nbuf

    # ---- persistence
    def _init_extra(self):
        return {}

    def init_params(self):
        return dict(n_features=self.n_features, sparse=bool(self.sparse), C=self.C,
                    lookahead=self.lookahead, form=self.form,
                    fit_intercept=bool(self.fit_intercept), departures=dict(self.departures),
                    **self._init_extra())

    def _pack(self, prefix, RowStore store):
        M = store.to_matrix()
        if self.sparse:
            return {prefix + "data": np.asarray(M.data, dtype=np.float64),
                    prefix + "indices": np.asarray(M.indices, dtype=np.int32),
                    prefix + "indptr": np.asarray(M.indptr, dtype=np.int64)}
        return {prefix + "X": np.ascontiguousarray(M, dtype=np.float64).reshape(-1, self.n_features)}

    def _unpack(self, prefix, data, RowStore store):
        cdef Py_ssize_t i
        if self.sparse:
            indptr = np.asarray(data[prefix + "indptr"])
            M = sp.csr_matrix((np.asarray(data[prefix + "data"], dtype=np.float64),
                               np.asarray(data[prefix + "indices"], dtype=np.int32), indptr),
                              shape=(indptr.shape[0] - 1, self.n_features))
            M.indices = M.indices.astype(np.int32)
        else:
            M = np.ascontiguousarray(data[prefix + "X"], dtype=np.float64).reshape(-1, self.n_features)
        for i in range(M.shape[0]):
            store.append(M, i)
        return M.shape[0]

    def _save_common(self):
        cdef Py_ssize_t j
        out = {
            "R": self.R, "xi2": self.xi2, "M": self.M, "n_seen": self.n_seen, "b": self.b,
            "n_solver_steps": self.n_solver_steps,
            "buf_y": np.array([self.buf_y[j] for j in range(self.nbuf)], dtype=np.float64),
            "buf_f": np.array([self.buf_f[j] for j in range(self.nbuf)], dtype=np.float64),
            "buf_kxx": np.array([self.buf_kxx[j] for j in range(self.nbuf)], dtype=np.float64),
            "buf_d": np.array([self.buf_d[j] for j in range(self.nbuf)], dtype=np.float64),
            "buf_ids": np.array([self.buf_ids[j] for j in range(self.nbuf)], dtype=np.int64),
        }
        out.update(self._pack("buf_", self.buf))
        return out

    def _load_common(self, data):
        cdef Py_ssize_t j, L
        self.R = float(data["R"])
        self.xi2 = float(data["xi2"])
        self.M = int(data["M"])
        self.n_seen = int(data["n_seen"])
        self.b = float(data.get("b", 0.0))
        self.n_solver_steps = int(data.get("n_solver_steps", 0))
        self.buf.keep(NULL, 0)
        L = self._unpack("buf_", data, self.buf)
        if L >= self.lookahead:
            raise ValueError("the saved buffer is not shorter than the lookahead")
        self._reserve_buffer(L)
        for j in range(L):
            self.buf_y[j] = data["buf_y"][j]
            self.buf_f[j] = data["buf_f"][j]
            self.buf_kxx[j] = data["buf_kxx"][j]
            self.buf_d[j] = data["buf_d"][j]
            self.buf_ids[j] = data["buf_ids"][j]
        self.nbuf = L

    def _common_state(self):
        cdef Py_ssize_t j
        return {
            "R": self.R,
            "xi2": self.xi2,
            "wnorm2": self._wnorm2(),
            "b": self.b,
            "n_updates": self.M,
            "n_seen": self.n_seen,
            "buffer_ids": np.array([self.buf_ids[j] for j in range(self.nbuf)], dtype=np.int64),
            "n_kernel_evals": self.n_kernel_evals,
        }


@cython.nonecheck(False)
cdef class StreamSVMLinear(_StreamSVM):
    """StreamSVM, linear form; see :class:`refsvm.stream_svm.stream_svm.StreamSVMLinear`."""

    cdef ScaledVector w
    cdef double* v
    cdef long long* ids
    cdef double* a                           # α_m = s·a_m
    cdef Py_ssize_t n_sv, cap_ids, cap_a
    cdef double vx
    cdef KernelSpec linspec

    def __cinit__(self, *args, **kwargs):
        self.v = NULL
        self.ids = NULL
        self.a = NULL
        self.n_sv = self.cap_ids = self.cap_a = 0

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 fit_intercept=False, departures=None):
        self._init_common(n_features, sparse, C, lookahead, form, fit_intercept, departures)
        self.v = <double*> calloc(max(1, n_features), sizeof(double))
        if self.v == NULL:
            raise MemoryError()
        sv_init(&self.w, self.v, n_features, True)
        self.linspec.kind = 0
        self.linspec.gamma = 1.0
        self.linspec.coef0 = 0.0
        self.linspec.degree = 1

    def __dealloc__(self):
        free(self.v)
        free(self.ids)
        free(self.a)

    @property
    def n_kernel_evals(self):
        return 0

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        """Line 5 with <v, x> and ||x||^2 in one read of x (the sums of ``_score`` and
        ``_self_value``, bit for bit), then the common step."""
        cdef double vx, sq
        cdef bint bad_index
        cdef long long n = self.n_seen
        if nnz == 0 or self.M == 0 or self.n_features == 0:
            return _StreamSVM._step(self, xi, xv, nnz, y)
        vx = row_dot_sqnorm(self.w.v, xi, xv, nnz, self.n_features, &sq, &bad_index)
        self.n_seen += 1
        self.vx = vx            # as _score leaves it
        return self._scored_step(xi, xv, nnz, y, self.w.s * vx + self.b, sq + self.one, n)

    cdef int _step_checked(self, const int* xi, const double* xv, Py_ssize_t nnz,
                           double y, double limit) except -1 nogil:
        """The row check fused into line 5's read of x (<v, x> and ||x||^2 in one loop),
        before anything changes (the buffer of Algorithm 2 included)."""
        cdef double vx, sq
        cdef bint bad_index
        cdef long long n = self.n_seen
        if nnz == 0 or self.M == 0 or self.n_features == 0:
            return StreamLearner._step_checked(self, xi, xv, nnz, y, limit)
        vx = row_dot_sqnorm(self.w.v, xi, xv, nnz, self.n_features, &sq, &bad_index)
        if row_screen(xv, nnz, sq, limit, bad_index):
            return STEP_BAD
        self.n_seen += 1
        self.vx = vx            # as _score leaves it
        return self._scored_step(xi, xv, nnz, y, self.w.s * vx + self.b, sq + self.one, n)

    cdef int _append(self, long long n, double a) except -1 nogil:
        grow(<void**> &self.ids, &self.cap_ids, self.n_sv + 1, sizeof(long long))
        grow(<void**> &self.a, &self.cap_a, self.n_sv + 1, sizeof(double))
        self.ids[self.n_sv] = n
        self.a[self.n_sv] = a
        self.n_sv += 1
        return 0

    cdef int _start(self, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                    long long n) except -1 nogil:
        sv_add_row(&self.w, y, xi, xv, nnz, 0.0)                 # w = y_1 x_1
        self._append(n, y / self.w.s)
        return 0

    cdef double _score(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        self.vx = row_dot(self.w.v, xi, xv, nnz)
        return self.w.s * self.vx

    cdef double _self_value(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        return row_sqnorm(xv, nnz)

    cdef double _wnorm2(self) noexcept nogil:
        return sv_sqnorm(&self.w) + self.b * self.b

    cdef void _rescore(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        self.vx = row_dot(self.w.v, xi, xv, nnz)

    cdef int _move(self, double beta, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                   double f, double kxx, long long n) except -1 nogil:
        # line 7: w = (1 − β)w + βy_n x_n, a scale in O(1) and an add in O(nnz)
        sv_scale(&self.w, 1.0 - beta)
        sv_add_row(&self.w, beta * y, xi, xv, nnz, self.vx)
        self._append(n, beta * y / self.w.s)
        self._fold()
        return 0

    cdef void _fold(self) noexcept nogil:
        cdef Py_ssize_t j
        cdef double s = self.w.s
        if s < FOLD:
            for j in range(self.n_sv):
                self.a[j] = self.a[j] * s
            sv_fold(&self.w, FOLD)

    cdef double _pair(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        return self.buf.kernel_rows(&self.linspec, i, j)

    cdef int _combine(self, Py_ssize_t L) except -1 nogil:
        cdef Py_ssize_t j
        cdef const int* xi
        cdef const double* xv
        cdef Py_ssize_t nnz
        cdef double c
        sv_scale(&self.w, self.lam[0])
        if self.lam[0] == 0.0:
            for j in range(self.n_sv):
                self.a[j] = 0.0
        for j in range(L):
            if self.lam[j + 1] > 0.0:
                self._buf_row(j, &xi, &xv, &nnz)
                c = self.lam[j + 1] * self.buf_y[j]
                sv_add_row(&self.w, c, xi, xv, nnz, row_dot(self.w.v, xi, xv, nnz))
                self._append(self.buf_ids[j], c / self.w.s)
        self._fold()
        return 0

    def center_function(self, X):
        """f(x) = ⟨w, x⟩ + b of the current center (the buffer ignored)."""
        v = np.asarray(<double[:self.n_features]> self.v) if self.n_features else np.zeros(0)
        if sp.issparse(X):
            return self.w.s * np.asarray(X @ v).ravel() + self.b
        return self.w.s * (np.asarray(X) @ v) + self.b

    @property
    def coef(self):
        return self.w.s * self._v()

    def _v(self):
        cdef Py_ssize_t j
        return np.array([self.v[j] for j in range(self.n_features)], dtype=np.float64)

    def support(self):
        cdef Py_ssize_t j
        return (np.array([self.ids[j] for j in range(self.n_sv)], dtype=np.int64),
                self.w.s * np.array([self.a[j] for j in range(self.n_sv)], dtype=np.float64),
                None)

    def get_state(self):
        out = self._common_state()
        ids, coef, _ = self.support()
        out["w"] = self.coef
        out["support"] = ids
        out["coef"] = coef
        return out

    def save_state(self):
        cdef Py_ssize_t j
        out = self._save_common()
        out.update({"v": self._v(), "s": self.w.s, "vnorm2": self.w.vnorm2,
                    "ids": np.array([self.ids[j] for j in range(self.n_sv)], dtype=np.int64),
                    "a": np.array([self.a[j] for j in range(self.n_sv)], dtype=np.float64)})
        return out

    def load_state(self, data):
        cdef Py_ssize_t j
        self._load_common(data)
        v = np.asarray(data["v"], dtype=np.float64)
        for j in range(self.n_features):
            self.v[j] = v[j]
        self.w.s = float(data["s"])
        self.w.vnorm2 = float(data["vnorm2"])
        self.n_sv = 0
        for j in range(len(data["ids"])):
            self._append(int(data["ids"][j]), float(data["a"][j]))


@cython.nonecheck(False)
cdef class StreamSVMKernel(_StreamSVM):
    """StreamSVM, kernel form; see :class:`refsvm.stream_svm.stream_svm.StreamSVMKernel`."""

    cdef RowStore store
    cdef CKernel kern
    cdef long long* ids
    cdef double* alpha
    cdef double* kbuf           # k(x_m, x) of the scored row, m < n_sv (kernel_row_many)
    cdef Py_ssize_t n_sv, cap_ids, cap_alpha, cap_k
    cdef readonly double wnorm2

    def __cinit__(self, *args, **kwargs):
        self.ids = NULL
        self.alpha = NULL
        self.kbuf = NULL
        self.n_sv = self.cap_ids = self.cap_alpha = self.cap_k = 0

    def __init__(self, n_features, sparse=False, C=1.0, lookahead=1, form="consistent",
                 kernel="rbf", gamma=1.0, degree=3, coef0=0.0, fit_intercept=False,
                 departures=None):
        self._init_common(n_features, sparse, C, lookahead, form, fit_intercept, departures)
        self.kern = CKernel(kernel, gamma, degree, coef0)
        self.store = RowStore(n_features, sparse)

    def __dealloc__(self):
        free(self.ids)
        free(self.alpha)
        free(self.kbuf)

    def _init_extra(self):
        k = self.kern
        return dict(kernel=k.kind, gamma=k.gamma, degree=k.degree, coef0=k.coef0)

    @property
    def n_kernel_evals(self):
        return self.kern.n_evals

    cdef int _append(self, long long n, double a) except -1 nogil:
        grow(<void**> &self.ids, &self.cap_ids, self.n_sv + 1, sizeof(long long))
        grow(<void**> &self.alpha, &self.cap_alpha, self.n_sv + 1, sizeof(double))
        grow(<void**> &self.kbuf, &self.cap_k, self.n_sv + 1, sizeof(double))
        self.ids[self.n_sv] = n
        self.alpha[self.n_sv] = a
        self.n_sv += 1
        return 0

    cdef int _store_row(self, const int* xi, const double* xv, Py_ssize_t nnz) except -1 nogil:
        if self.sparse:
            self.store.append_csr(xi, xv, nnz)
        else:
            self.store.append_dense(xv)
        return 0

    cdef int _start(self, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                    long long n) except -1 nogil:
        self._store_row(xi, xv, nnz)
        self._append(n, y)                                        # α_1 = y_1
        self.wnorm2 = self._self_value(xi, xv, nnz) + self.one   # k(x_1, x_1) (+ 1)
        return 0

    cdef double _score(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        cdef Py_ssize_t m
        cdef double f = 0.0
        if self.n_sv:           # k_row_csr / k_row_dense's values, in one call
            kernel_row_many(self.kern, self.store, NULL, self.n_sv, xi, xv, nnz, self.kbuf)
        for m in range(self.n_sv):
            f += self.alpha[m] * self.kbuf[m]
        return f

    cdef double _self_value(self, const int* xi, const double* xv, Py_ssize_t nnz) noexcept nogil:
        self.kern.n_evals += 1
        if self.sparse:
            return kernel_csr(&self.kern.spec, xi, xv, nnz, xi, xv, nnz)
        return kernel_dense(&self.kern.spec, xv, xv, self.n_features)

    cdef double _wnorm2(self) noexcept nogil:
        return self.wnorm2

    cdef int _move(self, double beta, const int* xi, const double* xv, Py_ssize_t nnz, double y,
                   double f, double kxx, long long n) except -1 nogil:
        cdef Py_ssize_t m
        self.wnorm2 = (((1.0 - beta) * (1.0 - beta)) * self.wnorm2
                       + 2.0 * beta * (1.0 - beta) * y * f + (beta * beta) * kxx)
        for m in range(self.n_sv):
            self.alpha[m] = (1.0 - beta) * self.alpha[m]         # α ← (1 − β)α
        self._store_row(xi, xv, nnz)
        self._append(n, beta * y)                                 # α_n = βy_n
        return 0

    cdef double _pair(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        return self.kern.k_rows(self.buf, i, j)

    cdef int _combine(self, Py_ssize_t L) except -1 nogil:
        cdef Py_ssize_t i, j, n1 = L + 1
        cdef const int* xi
        cdef const double* xv
        cdef Py_ssize_t nnz
        cdef double lyf = 0.0, lQl = 0.0, qi
        cdef double l0 = self.lam[0]
        for j in range(L):
            lyf += self.lam[j + 1] * self.G[j + 1]
        for i in range(L):
            qi = 0.0
            for j in range(L):
                qi += self.Q[i * L + j] * self.lam[j + 1]
            lQl += self.lam[i + 1] * qi
        self.wnorm2 = (l0 * l0) * self.wnorm2 + 2.0 * l0 * lyf + lQl
        for i in range(self.n_sv):
            self.alpha[i] = l0 * self.alpha[i]
        for j in range(L):
            if self.lam[j + 1] > 0.0:
                self._buf_row(j, &xi, &xv, &nnz)
                self._store_row(xi, xv, nnz)
                self._append(self.buf_ids[j], self.lam[j + 1] * self.buf_y[j])
        return 0

    def center_function(self, X):
        """f(x) = Σ_m α_m k(x_m, x) + b of the current center (not counted)."""
        return self.store.expansion(self.kern, self._alpha(), X) + self.b

    def _alpha(self):
        cdef Py_ssize_t j
        return np.array([self.alpha[j] for j in range(self.n_sv)], dtype=np.float64)

    def support(self):
        cdef Py_ssize_t j
        return (np.array([self.ids[j] for j in range(self.n_sv)], dtype=np.int64),
                self._alpha(), self.store.to_matrix())

    def get_state(self):
        out = self._common_state()
        ids, coef, _ = self.support()
        out["support"] = ids
        out["coef"] = coef
        return out

    def save_state(self):
        ids, alpha, _ = self.support()
        out = self._save_common()
        out.update({"wnorm2": self.wnorm2, "ids": ids, "alpha": alpha,
                    "n_evals": self.kern.n_evals})
        out.update(self._pack("sv_", self.store))
        return out

    def load_state(self, data):
        cdef Py_ssize_t j
        self._load_common(data)
        self.wnorm2 = float(data["wnorm2"])
        self.n_sv = 0
        for j in range(len(data["ids"])):
            self._append(int(data["ids"][j]), float(data["alpha"][j]))
        self.kern.n_evals = int(data["n_evals"])
        self.store.keep(NULL, 0)
        self._unpack("sv_", data, self.store)


# --------------------------------------------------------------------------- multiple balls
cdef inline void _merge_balls(double D, double Ra, double Rb, double* t, double* R) noexcept nogil:
    """See the reference's ``merge_balls``."""
    if D + Rb <= Ra:
        t[0] = 0.0
        R[0] = Ra
    elif D + Ra <= Rb:
        t[0] = 1.0
        R[0] = Rb
    else:
        R[0] = 0.5 * (D + Ra + Rb)
        t[0] = (R[0] - Ra) / D


@cython.nonecheck(False)
cdef class MultiBallStreamSVM(StreamLearner):
    """Multiple balls (Sec. 4.3); see :class:`refsvm.stream_svm.stream_svm.MultiBallStreamSVM`.

    Balls have stable handles 0..B (slots of ``bw``, ``bxi``, ``bR`` and the (B+1)² matrix
    P); ``order`` lists the handles in the reference's list order (a merge removes both
    balls and appends the merged one, which keeps the first ball's handle).  Every kept
    row records its ball handle and its α."""

    cdef RowStore store
    cdef CKernel kern
    cdef readonly double C
    cdef readonly int n_balls
    cdef readonly long long M, n_seen
    cdef readonly bint fit_intercept
    cdef readonly double one
    cdef readonly object departures          # resolved (no printed form to switch to)
    cdef long long* ids
    cdef double* alpha
    cdef int* row_ball
    cdef double* kbuf                        # k(x_m, x) of the example in hand (kernel_row_many)
    cdef Py_ssize_t nrows, cap_ids, cap_alpha, cap_rb, cap_k
    cdef int nb                              # balls in the list
    cdef int* order                          # handles in list order
    cdef int* free_h                         # 1 if the handle is unused
    cdef double* bw
    cdef double* bxi
    cdef double* bR
    cdef double* P                           # (B+1)² by handle
    cdef double* f                           # per handle, f_b(x) of the example in hand

    def __cinit__(self, *args, **kwargs):
        self.ids = NULL
        self.alpha = NULL
        self.row_ball = NULL
        self.kbuf = NULL
        self.order = self.free_h = NULL
        self.bw = self.bxi = self.bR = self.P = self.f = NULL
        self.nrows = self.cap_ids = self.cap_alpha = self.cap_rb = self.cap_k = 0

    def __init__(self, n_features, sparse=False, C=1.0, n_balls=2, kernel="linear", gamma=1.0,
                 degree=3, coef0=0.0, fit_intercept=False, departures=None):
        cdef Py_ssize_t h, B1 = n_balls + 1
        self.departures = check_multi_ball(departures)
        self.n_features = n_features
        self.sparse = sparse
        self.C = C
        self.n_balls = n_balls
        self.fit_intercept = bool(fit_intercept)
        self.one = 1.0 if self.fit_intercept else 0.0
        self.kern = CKernel(kernel, gamma, degree, coef0)
        self.store = RowStore(n_features, sparse)
        self.order = <int*> calloc(B1, sizeof(int))
        self.free_h = <int*> calloc(B1, sizeof(int))
        self.bw = <double*> calloc(B1, sizeof(double))
        self.bxi = <double*> calloc(B1, sizeof(double))
        self.bR = <double*> calloc(B1, sizeof(double))
        self.f = <double*> calloc(B1, sizeof(double))
        self.P = <double*> calloc(B1 * B1, sizeof(double))
        if (self.order == NULL or self.free_h == NULL or self.bw == NULL or self.bxi == NULL
                or self.bR == NULL or self.f == NULL or self.P == NULL):
            raise MemoryError()
        for h in range(B1):
            self.free_h[h] = 1

    def __dealloc__(self):
        free(self.ids)
        free(self.alpha)
        free(self.row_ball)
        free(self.kbuf)
        free(self.order)
        free(self.free_h)
        free(self.bw)
        free(self.bxi)
        free(self.bR)
        free(self.P)
        free(self.f)

    @property
    def n_kernel_evals(self):
        return self.kern.n_evals

    @property
    def n_updates(self):
        return self.M

    @property
    def n_buffered(self):
        return self.nb - 1 if self.nb > 1 else 0

    cdef int _append_row(self, const int* xi, const double* xv, Py_ssize_t nnz, long long n,
                         double a, int h) except -1 nogil:
        if self.sparse:
            self.store.append_csr(xi, xv, nnz)
        else:
            self.store.append_dense(xv)
        grow(<void**> &self.ids, &self.cap_ids, self.nrows + 1, sizeof(long long))
        grow(<void**> &self.alpha, &self.cap_alpha, self.nrows + 1, sizeof(double))
        grow(<void**> &self.row_ball, &self.cap_rb, self.nrows + 1, sizeof(int))
        grow(<void**> &self.kbuf, &self.cap_k, self.nrows + 1, sizeof(double))
        self.ids[self.nrows] = n
        self.alpha[self.nrows] = a
        self.row_ball[self.nrows] = h
        self.nrows += 1
        return 0

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        cdef long long n = self.n_seen
        cdef Py_ssize_t m
        cdef int k, h
        cdef Py_ssize_t B1 = self.n_balls + 1
        cdef double kxx, t, d
        self.n_seen += 1
        for k in range(B1):
            self.f[k] = 0.0
        if self.nrows:          # k_row_csr / k_row_dense's values, in one call
            kernel_row_many(self.kern, self.store, NULL, self.nrows, xi, xv, nnz, self.kbuf)
        for m in range(self.nrows):
            self.f[self.row_ball[m]] += self.alpha[m] * (self.kbuf[m] + self.one)
        self.kern.n_evals += 1
        if self.sparse:
            kxx = kernel_csr(&self.kern.spec, xi, xv, nnz, xi, xv, nnz) + self.one
        else:
            kxx = kernel_dense(&self.kern.spec, xv, xv, self.n_features) + self.one
        for k in range(self.nb):
            h = self.order[k]
            t = self.bw[h] - 2.0 * y * self.f[h] + kxx
            if t < 0.0:
                t = 0.0
            d = sqrt(t + self.bxi[h] + 1.0 / self.C)
            if d < self.bR[h]:
                return 0                      # inside a ball: discarded
        h = 0
        while not self.free_h[h]:
            h += 1
        self.free_h[h] = 0
        self._append_row(xi, xv, nnz, n, y, h)
        self.bw[h] = kxx
        self.bxi[h] = 1.0 / self.C
        self.bR[h] = 0.0
        for k in range(self.nb):
            self.P[h * B1 + self.order[k]] = y * self.f[self.order[k]]
            self.P[self.order[k] * B1 + h] = y * self.f[self.order[k]]
        self.P[h * B1 + h] = kxx
        self.order[self.nb] = h
        self.nb += 1
        self.M += 1
        if self.nb > self.n_balls:
            self._merge_closest()
        return 1

    cdef void _merge_closest(self) noexcept nogil:
        cdef int a, b, ha, hb, k, pos, best_a = -1, best_b = -1
        cdef Py_ssize_t B1 = self.n_balls + 1
        cdef double D2, D, t = 0.0, R = 0.0, best_R = 0.0, best_t = 0.0, u
        cdef Py_ssize_t m
        for a in range(self.nb):
            for b in range(a + 1, self.nb):
                ha = self.order[a]
                hb = self.order[b]
                D2 = self.bw[ha] + self.bw[hb] - 2.0 * self.P[ha * B1 + hb] + self.bxi[ha] + self.bxi[hb]
                D = sqrt(D2) if D2 > 0.0 else 0.0
                _merge_balls(D, self.bR[ha], self.bR[hb], &t, &R)
                if best_a < 0 or R < best_R:
                    best_a, best_b, best_R, best_t = a, b, R, t
        ha = self.order[best_a]
        hb = self.order[best_b]
        t = best_t
        u = 1.0 - t
        for m in range(self.nrows):
            if self.row_ball[m] == ha:
                self.alpha[m] = u * self.alpha[m]
            elif self.row_ball[m] == hb:
                self.alpha[m] = t * self.alpha[m]
                self.row_ball[m] = ha
        self.bw[ha] = (u * u) * self.bw[ha] + 2.0 * t * u * self.P[ha * B1 + hb] + (t * t) * self.bw[hb]
        self.bxi[ha] = (u * u) * self.bxi[ha] + (t * t) * self.bxi[hb]
        self.bR[ha] = best_R
        for k in range(self.nb):
            if k != best_a and k != best_b:
                b = self.order[k]
                self.P[ha * B1 + b] = u * self.P[ha * B1 + b] + t * self.P[hb * B1 + b]
                self.P[b * B1 + ha] = self.P[ha * B1 + b]
        self.P[ha * B1 + ha] = self.bw[ha]
        self.free_h[hb] = 1
        pos = 0
        for k in range(self.nb):
            if k != best_a and k != best_b:
                self.order[pos] = self.order[k]
                pos += 1
        self.order[pos] = ha
        self.nb = pos + 1

    def flush(self):
        """Merge all balls into one.  Returns the merges made."""
        cdef int k = 0
        while self.nb > 1:
            self._merge_closest()
            k += 1
        return k

    def flushed(self):
        model = restore_state(type(self), self.init_params(), self.save_state())
        model.flush()
        return model

    @property
    def radius(self):
        if self.nb == 0:
            return 0.0
        if self.nb > 1:
            return self.flushed().radius
        return self.bR[self.order[0]]

    def center_function(self, X):
        """f(x) of the single ball (call on a flushed model); not counted."""
        cdef Py_ssize_t m
        if self.nb == 0:
            return np.zeros(X.shape[0])
        coef = np.array([self.alpha[m] if self.row_ball[m] == self.order[0] else 0.0
                         for m in range(self.nrows)], dtype=np.float64)
        return self.store.expansion(self.kern, coef, X) + self.one * coef.sum()

    def decision_function(self, X):
        model = self.flushed() if self.nb > 1 else self
        return model.center_function(X)

    def support(self):
        """(stream ids, α, rows) of the final ball, in stream order."""
        cdef MultiBallStreamSVM model = self.flushed() if self.nb > 1 else self
        data = model.save_state()
        keep = np.flatnonzero(data["ball_of"] == 0)
        return (data["ids"][keep], data["alpha"][keep], model.store.to_matrix(keep))

    @property
    def coef(self):
        ids, alpha, rows = self.support()
        return np.asarray(rows.T @ alpha).ravel() if alpha.size else np.zeros(self.n_features)

    @property
    def intercept(self):
        """b = Σ α_m of the final ball (0 without ``fit_intercept``)."""
        return float(np.sum(self.support()[1])) * self.one

    def init_params(self):
        k = self.kern
        return dict(n_features=self.n_features, sparse=bool(self.sparse), C=self.C,
                    n_balls=self.n_balls, kernel=k.kind, gamma=k.gamma, degree=k.degree,
                    coef0=k.coef0, fit_intercept=bool(self.fit_intercept),
                    departures=dict(self.departures))

    def save_state(self):
        cdef Py_ssize_t m
        cdef int k, j
        cdef Py_ssize_t B1 = self.n_balls + 1
        pos = {self.order[k]: k for k in range(self.nb)}
        out = {
            "ids": np.array([self.ids[m] for m in range(self.nrows)], dtype=np.int64),
            "ball_of": np.array([pos[self.row_ball[m]] for m in range(self.nrows)],
                                dtype=np.int64),
            "alpha": np.array([self.alpha[m] for m in range(self.nrows)], dtype=np.float64),
            "ball_wnorm2": np.array([self.bw[self.order[k]] for k in range(self.nb)]),
            "ball_xi2": np.array([self.bxi[self.order[k]] for k in range(self.nb)]),
            "ball_R": np.array([self.bR[self.order[k]] for k in range(self.nb)]),
            "P": np.array([[self.P[self.order[k] * B1 + self.order[j]] for j in range(self.nb)]
                           for k in range(self.nb)], dtype=np.float64).reshape(self.nb, self.nb),
            "M": self.M, "n_seen": self.n_seen, "n_evals": self.kern.n_evals,
        }
        M = self.store.to_matrix()
        if self.sparse:
            out.update({"sv_data": np.asarray(M.data, dtype=np.float64),
                        "sv_indices": np.asarray(M.indices, dtype=np.int32),
                        "sv_indptr": np.asarray(M.indptr, dtype=np.int64)})
        else:
            out["sv_X"] = np.ascontiguousarray(M, dtype=np.float64).reshape(-1, self.n_features)
        return out

    def load_state(self, data):
        cdef Py_ssize_t m
        cdef int k, j
        cdef Py_ssize_t B1 = self.n_balls + 1
        if self.sparse:
            indptr = np.asarray(data["sv_indptr"])
            X = sp.csr_matrix((np.asarray(data["sv_data"], dtype=np.float64),
                               np.asarray(data["sv_indices"], dtype=np.int32), indptr),
                              shape=(indptr.shape[0] - 1, self.n_features))
            X.indices = X.indices.astype(np.int32)
        else:
            X = np.ascontiguousarray(data["sv_X"], dtype=np.float64).reshape(-1, self.n_features)
        nb = len(data["ball_R"])
        if nb > self.n_balls:
            raise ValueError("more saved balls than n_balls")
        self.store.keep(NULL, 0)
        self.nrows = 0
        for m in range(X.shape[0]):
            self.store.append(X, m)
            grow(<void**> &self.ids, &self.cap_ids, self.nrows + 1, sizeof(long long))
            grow(<void**> &self.alpha, &self.cap_alpha, self.nrows + 1, sizeof(double))
            grow(<void**> &self.row_ball, &self.cap_rb, self.nrows + 1, sizeof(int))
            grow(<void**> &self.kbuf, &self.cap_k, self.nrows + 1, sizeof(double))
            self.ids[m] = data["ids"][m]
            self.alpha[m] = data["alpha"][m]
            self.row_ball[m] = data["ball_of"][m]     # handle k = list position k
            self.nrows += 1
        for k in range(B1):
            self.free_h[k] = 1
        P = np.asarray(data["P"], dtype=np.float64).reshape(nb, nb)
        for k in range(nb):
            self.order[k] = k
            self.free_h[k] = 0
            self.bw[k] = data["ball_wnorm2"][k]
            self.bxi[k] = data["ball_xi2"][k]
            self.bR[k] = data["ball_R"][k]
            for j in range(nb):
                self.P[k * B1 + j] = P[k, j]
        self.nb = nb
        self.M = int(data["M"])
        self.n_seen = int(data["n_seen"])
        self.kern.n_evals = int(data["n_evals"])

    def get_state(self):
        saved = self.save_state()
        return {
            "R": saved["ball_R"], "xi2": saved["ball_xi2"], "wnorm2": saved["ball_wnorm2"],
            "P": saved["P"], "ids": saved["ids"], "ball_of": saved["ball_of"],
            "alpha": saved["alpha"],
            "n_updates": self.M,
            "n_seen": self.n_seen,
            "n_kernel_evals": self.kern.n_evals,
        }
