"""Compiled twins of the linear family (:mod:`refsvm.linear.linear`).

Each class has the name, attributes and methods of its reference; ``_step``
is the update of one example on raw row pointers (``nogil``), and ``run``
drives it over a whole stream without the GIL.  Dense and CSR rows share one
code path (see ``_rows.pxd``).

The one representational difference: :class:`PegasosState` stores
w = s · v (a scalar times a vector), so that the shrinkage
w ← (1 − α_t λ) w of every step costs O(1) instead of O(d) and a sparse step
costs O(nnz).  ``w`` is exposed as the product.
"""
from libc.math cimport sqrt

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport row_dot, row_axpy, row_axpy_squared, row_sqnorm
from refsvm.core.kernels import SparseRow

cnp.import_array()


def _restore(cls, kwargs, state):
    obj = cls(**kwargs)
    obj.set_state(state)
    return obj


cdef class _LinearState:
    """Shared twin base: w, b, counters, the stream loop, prediction, pickling."""

    cdef public Py_ssize_t n_features
    cdef public bint sparse
    cdef public bint fit_intercept
    cdef public object w_arr          # the numpy array behind w_
    cdef double[::1] w_
    cdef public double b
    cdef public long long t
    cdef public long long n_updates

    def __init__(self, Py_ssize_t n_features, bint sparse=False, bint fit_intercept=False):
        self.n_features = n_features
        self.sparse = sparse
        self.fit_intercept = fit_intercept
        self.w_arr = np.zeros(n_features)
        self.w_ = self.w_arr
        self.b = 0.0
        self.t = 0
        self.n_updates = 0

    cdef void _step(self, const int* idx, const double* val, Py_ssize_t n,
                    double y) noexcept nogil:
        pass

    # ---------------------------------------------------------------- drivers
    def step(self, x, double y):
        """One example: a dense 1-D float64 row or a SparseRow."""
        cdef const double[::1] val
        cdef const int[::1] idx
        if isinstance(x, SparseRow):
            idx = np.ascontiguousarray(x.indices, dtype=np.int32)
            val = np.ascontiguousarray(x.data, dtype=np.float64)
            self._step(&idx[0] if idx.shape[0] else <const int*> NULL,
                       &val[0] if val.shape[0] else <const double*> NULL, val.shape[0], y)
        else:
            val = np.ascontiguousarray(x, dtype=np.float64)
            if val.shape[0] != self.n_features:
                raise ValueError("row has the wrong number of features")
            self._step(NULL, &val[0] if val.shape[0] else <const double*> NULL,
                       val.shape[0], y)

    def run(self, X, y, order):
        """Feed the rows of X (dense C-contiguous or CSR) in ``order``; return #updates."""
        cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
        cdef const Py_ssize_t[::1] ov = np.ascontiguousarray(order, dtype=np.intp)
        cdef const double[:, ::1] Xd
        cdef const double[::1] data
        cdef const int[::1] indices
        cdef const long long[::1] indptr
        cdef const double* dp = NULL
        cdef const int* ip = NULL
        cdef Py_ssize_t k, i, d = self.n_features
        cdef long long before = self.n_updates
        if sp.issparse(X):
            data = np.ascontiguousarray(X.data, dtype=np.float64)
            indices = np.ascontiguousarray(X.indices, dtype=np.int32)
            indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
            if data.shape[0]:
                dp = &data[0]
                ip = &indices[0]
            with nogil:
                for k in range(ov.shape[0]):
                    i = ov[k]
                    self._step(ip + indptr[i], dp + indptr[i], indptr[i + 1] - indptr[i], yv[i])
        else:
            Xd = X
            if Xd.shape[1] != d:
                raise ValueError("X has the wrong number of features")
            if Xd.shape[0] and d:
                dp = &Xd[0, 0]
            with nogil:
                for k in range(ov.shape[0]):
                    i = ov[k]
                    self._step(NULL, dp + i * d, d, yv[i])
        return self.n_updates - before

    @property
    def w(self):
        return np.asarray(self.w_)

    def decision_function(self, X):
        """f(x) = <w, x> + b for every row."""
        return np.asarray(X @ self.w).ravel() + self.b

    # ---------------------------------------------------------------- state
    def _kwargs(self):
        return {"n_features": self.n_features, "sparse": self.sparse,
                "fit_intercept": self.fit_intercept}

    def get_state(self):
        return {"w": self.w.copy(), "b": self.b, "t": self.t, "n_updates": self.n_updates}

    def set_state(self, state):
        np.asarray(self.w_)[:] = state["w"]
        self.b = state["b"]
        self.t = state["t"]
        self.n_updates = state["n_updates"]

    def __reduce__(self):
        return (_restore, (type(self), self._kwargs(), self.get_state()))


# --------------------------------------------------------------------------- Perceptron
cdef class PerceptronState(_LinearState):
    """Twin of :class:`refsvm.linear.linear.PerceptronState`."""

    cdef public double eta
    cdef public double R2

    def __init__(self, Py_ssize_t n_features, bint sparse=False, double eta=1.0, double R=0.0):
        super().__init__(n_features, sparse, True)
        self.eta = eta
        self.R2 = R * R

    cdef void _step(self, const int* idx, const double* val, Py_ssize_t n,
                    double y) noexcept nogil:
        cdef double sq = row_sqnorm(val, n)
        if sq > self.R2:
            self.R2 = sq
        if y * (row_dot(&self.w_[0], idx, val, n) + self.b) <= 0:
            row_axpy(&self.w_[0], self.eta * y, idx, val, n)
            self.b += self.eta * y * self.R2
            self.n_updates += 1
        self.t += 1

    @property
    def R(self):
        return sqrt(self.R2)

    def _kwargs(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "eta": self.eta}

    def get_state(self):
        s = _LinearState.get_state(self)
        s["R2"] = self.R2
        return s

    def set_state(self, state):
        _LinearState.set_state(self, state)
        self.R2 = state["R2"]


# --------------------------------------------------------------------------- PA
cdef class PAState(_LinearState):
    """Twin of :class:`refsvm.linear.linear.PAState`."""

    cdef public int variant
    cdef public double C

    def __init__(self, Py_ssize_t n_features, bint sparse=False, int variant=1, double C=1.0,
                 bint fit_intercept=False):
        super().__init__(n_features, sparse, fit_intercept)
        self.variant = variant
        self.C = C

    cdef void _step(self, const int* idx, const double* val, Py_ssize_t n,
                    double y) noexcept nogil:
        cdef double loss, sq, tau
        self.t += 1
        loss = 1.0 - y * (row_dot(&self.w_[0], idx, val, n) + self.b)
        if loss <= 0.0:
            return
        sq = row_sqnorm(val, n) + (1.0 if self.fit_intercept else 0.0)
        if self.variant == 2:
            tau = loss / (sq + 0.5 / self.C)
        elif sq == 0.0:
            return
        elif self.variant == 1:
            tau = min(self.C, loss / sq)
        else:
            tau = loss / sq
        row_axpy(&self.w_[0], tau * y, idx, val, n)
        if self.fit_intercept:
            self.b += tau * y
        self.n_updates += 1

    def _kwargs(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "variant": self.variant,
                "C": self.C, "fit_intercept": self.fit_intercept}


# --------------------------------------------------------------------------- PAm
cdef class PAmState(_LinearState):
    """Twin of :class:`refsvm.linear.linear.PAmState` (quasi-LDA proximal model)."""

    cdef public int variant
    cdef public double C
    cdef public double gamma
    cdef public long long n_pos
    cdef public long long n_neg
    cdef double[::1] sum_pos_, sum_neg_, sumsq_pos_, sumsq_neg_, wp_

    def __init__(self, Py_ssize_t n_features, bint sparse=False, int variant=1, double C=1.0,
                 double gamma=0.1, bint fit_intercept=False):
        super().__init__(n_features, sparse, fit_intercept)
        self.variant = variant
        self.C = C
        self.gamma = gamma
        self.n_pos = 0
        self.n_neg = 0
        self.sum_pos_ = np.zeros(n_features)
        self.sum_neg_ = np.zeros(n_features)
        self.sumsq_pos_ = np.zeros(n_features)
        self.sumsq_neg_ = np.zeros(n_features)
        self.wp_ = np.zeros(n_features)

    cdef double _proximal(self) noexcept nogil:
        """Fill wp_ with the quasi-LDA direction; return b_p."""
        cdef Py_ssize_t i, d = self.n_features
        cdef double np_ = <double> self.n_pos, nn = <double> self.n_neg
        cdef double mp, mn, sp_, sn, denom, bp = 0.0
        if self.n_pos < 2 or self.n_neg < 2:
            for i in range(d):
                self.wp_[i] = 0.0
            return 0.0
        for i in range(d):
            mp = self.sum_pos_[i] / np_
            mn = self.sum_neg_[i] / nn
            sp_ = self.sumsq_pos_[i] / (np_ - 1) - np_ / (np_ - 1) * (mp * mp)
            sn = self.sumsq_neg_[i] / (nn - 1) - nn / (nn - 1) * (mn * mn)
            denom = max(sp_, 0.0) + max(sn, 0.0)
            self.wp_[i] = (mp - mn) / denom if denom > 0 else 0.0
            bp += self.wp_[i] * (mp + mn)
        return -0.5 * bp if self.fit_intercept else 0.0

    cdef void _step(self, const int* idx, const double* val, Py_ssize_t n,
                    double y) noexcept nogil:
        cdef double loss, sq, numer, alpha, bp
        cdef Py_ssize_t i
        self.t += 1
        if y > 0:
            self.n_pos += 1
            row_axpy(&self.sum_pos_[0], 1.0, idx, val, n)
            row_axpy_squared(&self.sumsq_pos_[0], 1.0, idx, val, n)
        else:
            self.n_neg += 1
            row_axpy(&self.sum_neg_[0], 1.0, idx, val, n)
            row_axpy_squared(&self.sumsq_neg_[0], 1.0, idx, val, n)
        loss = 1.0 - y * (row_dot(&self.w_[0], idx, val, n) + self.b)
        if loss <= 0.0:
            return
        bp = self._proximal()
        sq = row_sqnorm(val, n) + (1.0 if self.fit_intercept else 0.0)
        numer = loss - self.gamma * y * (row_dot(&self.wp_[0], idx, val, n) + bp)
        if self.variant == 2:
            alpha = numer / (sq + 0.5 / self.C)
        elif sq == 0.0:
            alpha = 0.0
        elif self.variant == 1:
            alpha = min(self.C, numer / sq)
        else:
            alpha = numer / sq
        alpha = max(alpha, 0.0)
        for i in range(self.n_features):
            self.w_[i] += self.gamma * self.wp_[i]
        row_axpy(&self.w_[0], alpha * y, idx, val, n)
        if self.fit_intercept:
            self.b += self.gamma * bp + alpha * y
        self.n_updates += 1

    def proximal(self):
        """(w_p, b_p) of the current statistics."""
        bp = self._proximal()
        return np.asarray(self.wp_).copy(), bp

    def _kwargs(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "variant": self.variant,
                "C": self.C, "gamma": self.gamma, "fit_intercept": self.fit_intercept}

    def get_state(self):
        s = _LinearState.get_state(self)
        s.update(n_pos=self.n_pos, n_neg=self.n_neg,
                 sum_pos=np.array(self.sum_pos_), sum_neg=np.array(self.sum_neg_),
                 sumsq_pos=np.array(self.sumsq_pos_), sumsq_neg=np.array(self.sumsq_neg_))
        return s

    def set_state(self, state):
        _LinearState.set_state(self, state)
        self.n_pos = state["n_pos"]
        self.n_neg = state["n_neg"]
        np.asarray(self.sum_pos_)[:] = state["sum_pos"]
        np.asarray(self.sum_neg_)[:] = state["sum_neg"]
        np.asarray(self.sumsq_pos_)[:] = state["sumsq_pos"]
        np.asarray(self.sumsq_neg_)[:] = state["sumsq_neg"]


# --------------------------------------------------------------------------- Pegasos
cdef class PegasosState(_LinearState):
    """Twin of :class:`refsvm.linear.linear.PegasosState`, with w stored as s · v.

    ``w_`` holds v; ``s`` the scale; ``vnorm2`` = ||v||², kept incrementally
    when ``project`` needs it (recomputed exactly whenever a step touches all
    of v anyway).
    """

    cdef public double lam
    cdef public bint project
    cdef public bint average
    cdef public Py_ssize_t batch_size
    cdef public long long n_steps
    cdef public double s
    cdef public double vnorm2
    cdef double[::1] w_avg_, grad_w_
    cdef public double b_avg
    cdef public double grad_b
    cdef public Py_ssize_t n_batch

    def __init__(self, Py_ssize_t n_features, bint sparse=False, double lam=1e-4,
                 bint project=False, bint average=False, Py_ssize_t batch_size=1,
                 bint fit_intercept=False):
        super().__init__(n_features, sparse, fit_intercept)
        self.lam = lam
        self.project = project
        self.average = average
        self.batch_size = batch_size
        self.n_steps = 0
        self.s = 1.0
        self.vnorm2 = 0.0
        self.w_avg_ = np.zeros(n_features)
        self.grad_w_ = np.zeros(n_features)
        self.b_avg = 0.0
        self.grad_b = 0.0
        self.n_batch = 0

    cdef inline void _shrink(self, double shrink) noexcept nogil:
        """w ← shrink · w, in O(1) unless shrink is 0 (step 1) or s underflows."""
        cdef Py_ssize_t i
        if shrink == 0.0:
            for i in range(self.n_features):
                self.w_[i] = 0.0
            self.s = 1.0
            self.vnorm2 = 0.0
        else:
            self.s *= shrink
        self.b *= shrink

    cdef inline void _fold_scale(self) noexcept nogil:
        """Fold a tiny s into v (keeps s·v accurate over very long streams)."""
        cdef Py_ssize_t i
        if self.s < 1e-9:
            for i in range(self.n_features):
                self.w_[i] *= self.s
            self.vnorm2 *= self.s * self.s
            self.s = 1.0

    cdef inline void _finish_step(self, long long t) noexcept nogil:
        cdef double norm2, factor
        cdef Py_ssize_t i
        if self.project:
            norm2 = self.s * self.s * self.vnorm2 + self.b * self.b
            if norm2 > 1.0 / self.lam:
                factor = 1.0 / (sqrt(norm2) * sqrt(self.lam))
                self.s *= factor
                self.b *= factor
        self._fold_scale()
        if self.average:
            for i in range(self.n_features):
                self.w_avg_[i] += (self.s * self.w_[i] - self.w_avg_[i]) / t
            self.b_avg += (self.b - self.b_avg) / t
        self.n_steps = t
        self.n_updates += 1

    cdef void _step(self, const int* idx, const double* val, Py_ssize_t n,
                    double y) noexcept nogil:
        cdef double vx, eta, shrink, a, coef
        cdef long long t
        self.t += 1
        vx = row_dot(&self.w_[0], idx, val, n)
        if self.batch_size == 1:
            # the whole batch is this example: step at once, in O(nnz)
            t = self.n_steps + 1
            eta = 1.0 / (self.lam * t)
            shrink = 1.0 - eta * self.lam
            if y * (self.s * vx + self.b) < 1.0:
                if shrink == 0.0:
                    vx = 0.0
                self._shrink(shrink)
                a = eta * y / self.s
                if self.project:  # ||v||² is needed only by the projection
                    self.vnorm2 += 2.0 * a * vx + a * a * row_sqnorm(val, n)
                row_axpy(&self.w_[0], a, idx, val, n)
                if self.fit_intercept:
                    self.b += eta * y
            else:
                self._shrink(shrink)
            self._finish_step(t)
            return
        if y * (self.s * vx + self.b) < 1.0:
            row_axpy(&self.grad_w_[0], y, idx, val, n)
            if self.fit_intercept:
                self.grad_b += y
        self.n_batch += 1
        if self.n_batch == self.batch_size:
            self._flush()

    cdef void _flush(self) noexcept nogil:
        cdef long long t
        cdef double eta, shrink, scale, a, v2 = 0.0
        cdef Py_ssize_t i
        if self.n_batch == 0:
            return
        t = self.n_steps + 1
        eta = 1.0 / (self.lam * t)
        shrink = 1.0 - eta * self.lam
        scale = eta / self.n_batch
        self._shrink(shrink)
        a = scale / self.s
        for i in range(self.n_features):
            self.w_[i] += a * self.grad_w_[i]
            v2 += self.w_[i] * self.w_[i]
            self.grad_w_[i] = 0.0
        self.vnorm2 = v2
        if self.fit_intercept:
            self.b += scale * self.grad_b
        self.grad_b = 0.0
        self.n_batch = 0
        self._finish_step(t)

    def flush(self):
        """Take one step with the examples gathered so far (none: nothing happens)."""
        self._flush()

    @property
    def w(self):
        return self.s * np.asarray(self.w_)

    @property
    def w_avg(self):
        return np.asarray(self.w_avg_).copy()

    def decision_function(self, X):
        if self.average:
            return np.asarray(X @ self.w_avg).ravel() + self.b_avg
        return np.asarray(X @ self.w).ravel() + self.b

    def objective(self, X, y):
        w = self.w
        margins = y * (np.asarray(X @ w).ravel() + self.b)
        norm2 = float(np.dot(w, w)) + self.b * self.b
        return 0.5 * self.lam * norm2 + float(np.mean(np.maximum(0.0, 1.0 - margins)))

    def _kwargs(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "lam": self.lam,
                "project": self.project, "average": self.average,
                "batch_size": self.batch_size, "fit_intercept": self.fit_intercept}

    def get_state(self):
        s = _LinearState.get_state(self)
        s.update(n_steps=self.n_steps, w_avg=self.w_avg, b_avg=self.b_avg,
                 grad_w=np.array(self.grad_w_), grad_b=self.grad_b, n_batch=self.n_batch)
        return s

    def set_state(self, state):
        w = np.asarray(state["w"], dtype=np.float64)
        np.asarray(self.w_)[:] = w
        self.s = 1.0
        self.vnorm2 = float(np.dot(w, w))
        self.b = state["b"]
        self.t = state["t"]
        self.n_updates = state["n_updates"]
        self.n_steps = state["n_steps"]
        np.asarray(self.w_avg_)[:] = state["w_avg"]
        self.b_avg = state["b_avg"]
        np.asarray(self.grad_w_)[:] = state["grad_w"]
        self.grad_b = state["grad_b"]
        self.n_batch = state["n_batch"]
