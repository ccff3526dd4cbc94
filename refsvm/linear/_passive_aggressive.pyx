"""Compiled twin of :mod:`refsvm.linear.passive_aggressive` (Perceptron, PA, PAm).

Same classes, attributes and methods as the reference; each implements only
``_step`` (one example in the core's row convention, ``nogil``, returning 1 when
the model changed); ``step`` and the ``nogil`` ``run`` come from the core's
``StreamLearner``, the PA step size from the core's ``pa_step``.  The classes are
declared in ``_passive_aggressive.pxd`` so that other twins of the family can run
their ``_step`` (the reduced-kernel PA does, on its transformed rows).
"""
from libc.float cimport DBL_MAX

import numpy as np
cimport numpy as cnp

from refsvm._core cimport (STEP_BAD, pa_step, row_axpy, row_axpy_squared, row_bad_by_dot,
                           row_dot, row_dot_sqnorm, row_dot_sqnorm_trusted, row_screen,
                           row_sqnorm)
from refsvm._core import max_row_sqnorm
from refsvm.core.departures import resolve
from refsvm.linear.departures import DEPARTURES

cnp.import_array()


cdef inline double* _buffer(cnp.ndarray a) noexcept:
    return <double*> cnp.PyArray_DATA(a)


cdef class LinearModel(StreamLearner):
    """Twin of :class:`refsvm.linear.passive_aggressive.LinearModel`: f(x) = <w, x> + b."""

    def __init__(self, Py_ssize_t n_features, bint sparse=False, bint fit_intercept=False,
                 departures=None):
        self.departures = resolve(DEPARTURES, departures)
        self.n_features = n_features
        self.sparse = sparse
        self.fit_intercept = fit_intercept
        self.w = np.zeros(n_features)
        self.w_data = _buffer(self.w)
        self.b = 0.0
        self.t = 0
        self.n_updates = 0
        self.n_mistakes = 0

    def decision_function(self, X):
        """f(x) = <w, x> + b for every row."""
        return np.asarray(X @ self.w).ravel() + self.b

    def get_state(self):
        """The learned numbers, for comparing the twins."""
        return {"w": self.w.copy(), "b": self.b, "t": self.t, "n_updates": self.n_updates,
                "n_mistakes": self.n_mistakes}

    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse,
                "fit_intercept": self.fit_intercept, "departures": dict(self.departures)}

    def save_state(self):
        return self.get_state()

    def load_state(self, data):
        self.w[:] = data["w"]
        self.b = float(data["b"])
        self.t = int(data["t"])
        self.n_updates = int(data["n_updates"])
        self.n_mistakes = int(data["n_mistakes"]) if "n_mistakes" in data else 0


# --------------------------------------------------------------------------- Perceptron
cdef class PerceptronState(LinearModel):
    """Twin of :class:`refsvm.linear.passive_aggressive.PerceptronState`."""

    def __init__(self, Py_ssize_t n_features, bint sparse=False, double eta=1.0, double R=0.0,
                 departures=None):
        super().__init__(n_features, sparse, True, departures)
        self.eta = eta
        self.R2 = R * R

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        cdef double sq
        # <w, x> and ||x||^2 in one read (dense: one vector loop)
        cdef double wx = row_dot_sqnorm_trusted(self.w_data, xi, xv, nnz, &sq)
        return _perceptron_learn(self, xi, xv, nnz, y, wx, sq)

    cdef int _step_checked(self, const int* xi, const double* xv, Py_ssize_t nnz,
                           double y, double limit) except -1 nogil:
        """The row check fused into the step's read of x (<w, x> and ||x||^2)."""
        cdef double sq, wx
        cdef bint bad_index
        if nnz == 0 or self.n_features == 0:  # nothing to fuse (or no w[0] to read)
            return LinearModel._step_checked(self, xi, xv, nnz, y, limit)
        wx = row_dot_sqnorm(self.w_data, xi, xv, nnz, self.n_features, &sq, &bad_index)
        if row_screen(xv, nnz, sq, limit, bad_index):
            return STEP_BAD
        return _perceptron_learn(self, xi, xv, nnz, y, wx, sq)

    @property
    def R(self):
        return self.R2 ** 0.5

    def scan_radius(self, X, double limit=float("inf")):
        """(R2, n_done): max_j ||x_j||^2 over the rows of X, each row checked as in
        ``run_checked``, in one compiled read (``refsvm._core.max_row_sqnorm``); see the
        reference.  The state is not changed."""
        return max_row_sqnorm(X, limit, self.n_features)

    def get_state(self):
        state = LinearModel.get_state(self)
        state["R2"] = self.R2
        return state

    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "eta": self.eta,
                "departures": dict(self.departures)}

    def load_state(self, data):
        LinearModel.load_state(self, data)
        self.R2 = float(data["R2"])


cdef inline int _perceptron_learn(PerceptronState self, const int* xi, const double* xv,
                                  Py_ssize_t nnz, double y, double wx, double sq) noexcept nogil:
    """The step once <w, x> and ||x||^2 are known."""
    self.t += 1
    if sq > self.R2:
        self.R2 = sq
    if y * (wx + self.b) <= 0:
        self.n_mistakes += 1
        row_axpy(self.w_data, self.eta * y, xi, xv, nnz)
        self.b += self.eta * y * self.R2
        self.n_updates += 1
        return 1
    return 0


# --------------------------------------------------------------------------- PA
cdef class PAState(LinearModel):
    """Twin of :class:`refsvm.linear.passive_aggressive.PAState`."""

    def __init__(self, Py_ssize_t n_features, bint sparse=False, int variant=1, double C=1.0,
                 bint fit_intercept=False, departures=None):
        super().__init__(n_features, sparse, fit_intercept, departures)
        self.variant = variant
        self.C = C

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        cdef double wx, sq = -1.0
        if xi != NULL:  # CSR: ||x||² in the same read of the row
            wx = row_dot_sqnorm_trusted(self.w_data, xi, xv, nnz, &sq)
        else:           # dense: ||x||² only when the step needs it
            wx = row_dot(self.w_data, xi, xv, nnz)
        return _pa_learn(self, xi, xv, nnz, y, wx, sq)

    cdef int _step_checked(self, const int* xi, const double* xv, Py_ssize_t nnz,
                           double y, double limit) except -1 nogil:
        """The row check fused into the step's read of x: <w, x> alone (dense rows, any
        finite value accepted: ``row_bad_by_dot``), else <w, x> and ||x||^2."""
        cdef double sq, wx
        cdef bint bad_index
        if nnz == 0 or self.n_features == 0:  # nothing to fuse (or no w[0] to read)
            return LinearModel._step_checked(self, xi, xv, nnz, y, limit)
        if xi == NULL and limit >= DBL_MAX:  # dense, finite values: <w, x> proves them
            wx = row_dot(self.w_data, xi, xv, nnz)
            if row_bad_by_dot(wx, xv, nnz):
                return STEP_BAD
            return _pa_learn(self, xi, xv, nnz, y, wx, -1.0)
        wx = row_dot_sqnorm(self.w_data, xi, xv, nnz, self.n_features, &sq, &bad_index)
        if row_screen(xv, nnz, sq, limit, bad_index):
            return STEP_BAD
        return _pa_learn(self, xi, xv, nnz, y, wx, sq)

    def init_params(self):
        params = LinearModel.init_params(self)
        params.update(variant=self.variant, C=self.C)
        return params


cdef inline int _pa_learn(PAState self, const int* xi, const double* xv,
                          Py_ssize_t nnz, double y, double wx, double sq) noexcept nogil:
    """The step once <w, x> is known (and ||x||^2, else sq < 0)."""
    cdef double margin, loss, tau
    self.t += 1
    margin = y * (wx + self.b)
    if margin <= 0.0:
        self.n_mistakes += 1  # the prediction sign(f) was wrong (or f = 0)
    loss = 1.0 - margin
    if loss <= 0.0:
        return 0  # passive
    if sq < 0.0:
        sq = row_sqnorm(xv, nnz)
    sq = sq + (1.0 if self.fit_intercept else 0.0)
    tau = pa_step(self.variant, loss, sq, self.C)
    if tau == 0.0:
        return 0  # a zero example cannot move the margin
    row_axpy(self.w_data, tau * y, xi, xv, nnz)
    if self.fit_intercept:
        self.b += tau * y
    self.n_updates += 1
    return 1


# --------------------------------------------------------------------------- PAm
cdef class PAmState(LinearModel):
    """Twin of :class:`refsvm.linear.passive_aggressive.PAmState` (quasi-LDA proximal model).

    ``_add_statistics`` and ``_proximal`` are the two pieces a subclass may replace
    (the reduced-kernel PAm keeps its statistics on the kernel rows)."""

    def __init__(self, Py_ssize_t n_features, bint sparse=False, int variant=1, double C=1.0,
                 double gamma=0.1, bint fit_intercept=False, departures=None):
        super().__init__(n_features, sparse, fit_intercept, departures)
        self.variance_roundoff = self.departures["variance_roundoff"]
        self.variant = variant
        self.C = C
        self.gamma = gamma
        self.frozen = False
        self.n_pos = 0
        self.n_neg = 0
        self.sum_pos = np.zeros(n_features)
        self.sum_neg = np.zeros(n_features)
        self.sumsq_pos = np.zeros(n_features)
        self.sumsq_neg = np.zeros(n_features)
        self.wp = np.zeros(n_features)
        self.sum_pos_data = _buffer(self.sum_pos)
        self.sum_neg_data = _buffer(self.sum_neg)
        self.sumsq_pos_data = _buffer(self.sumsq_pos)
        self.sumsq_neg_data = _buffer(self.sumsq_neg)
        self.wp_data = _buffer(self.wp)

    cdef void _add_statistics(self, const int* xi, const double* xv, Py_ssize_t nnz,
                              double y) noexcept nogil:
        """Keep m_±, Σx² of each class online (P^t, N^t include round t)."""
        if y > 0:
            self.n_pos += 1
            row_axpy(self.sum_pos_data, 1.0, xi, xv, nnz)
            row_axpy_squared(self.sumsq_pos_data, 1.0, xi, xv, nnz)
        else:
            self.n_neg += 1
            row_axpy(self.sum_neg_data, 1.0, xi, xv, nnz)
            row_axpy_squared(self.sumsq_neg_data, 1.0, xi, xv, nnz)

    cdef double _proximal(self) noexcept nogil:
        """Fill wp with the quasi-LDA direction; return b_p."""
        cdef Py_ssize_t i, d = self.n_features
        cdef double n_pos = <double> self.n_pos, n_neg = <double> self.n_neg
        cdef double m_pos, m_neg, s_pos, s_neg, a_pos, a_neg, denom, bp = 0.0
        cdef double tol_pos = self.variance_roundoff * (n_pos + 2)
        cdef double tol_neg = self.variance_roundoff * (n_neg + 2)
        cdef bint guard = self.variance_roundoff != 0.0
        if self.n_pos < 2 or self.n_neg < 2:
            for i in range(d):
                self.wp_data[i] = 0.0
            return 0.0
        for i in range(d):
            m_pos = self.sum_pos_data[i] / n_pos
            m_neg = self.sum_neg_data[i] / n_neg
            # the reference's ``variance`` (the departure variance_roundoff: 0 within the
            # formula's rounding error bound; "paper": the printed variance)
            a_pos = self.sumsq_pos_data[i] / (n_pos - 1)
            a_neg = self.sumsq_neg_data[i] / (n_neg - 1)
            s_pos = a_pos - n_pos / (n_pos - 1) * (m_pos * m_pos)
            s_neg = a_neg - n_neg / (n_neg - 1) * (m_neg * m_neg)
            if guard and not s_pos > tol_pos * a_pos:
                s_pos = 0.0
            if guard and not s_neg > tol_neg * a_neg:
                s_neg = 0.0
            denom = s_pos + s_neg
            self.wp_data[i] = (m_pos - m_neg) / denom if denom > 0 else 0.0
            bp += self.wp_data[i] * (m_pos + m_neg)
        return -0.5 * bp if self.fit_intercept else 0.0

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        cdef double margin, loss, sq, numer, alpha, bp
        cdef Py_ssize_t i
        self.t += 1
        if not self.frozen:
            self._add_statistics(xi, xv, nnz, y)
        margin = y * (row_dot(self.w_data, xi, xv, nnz) + self.b)
        if margin <= 0.0:
            self.n_mistakes += 1
        loss = 1.0 - margin
        if loss <= 0.0:
            return 0  # passive round
        bp = self._proximal()
        sq = row_sqnorm(xv, nnz) + (1.0 if self.fit_intercept else 0.0)
        numer = loss - self.gamma * y * (row_dot(self.wp_data, xi, xv, nnz) + bp)
        alpha = max(pa_step(self.variant, numer, sq, self.C), 0.0)
        for i in range(self.n_features):
            self.w_data[i] += self.gamma * self.wp_data[i]
        row_axpy(self.w_data, alpha * y, xi, xv, nnz)
        if self.fit_intercept:
            self.b += self.gamma * bp + alpha * y
        self.n_updates += 1
        return 1

    def proximal(self):
        """(w_p, b_p) of the current statistics."""
        bp = self._proximal()
        return self.wp.copy(), bp

    def get_state(self):
        state = LinearModel.get_state(self)
        state.update(frozen=bool(self.frozen), n_pos=self.n_pos, n_neg=self.n_neg,
                     sum_pos=self.sum_pos.copy(), sum_neg=self.sum_neg.copy(),
                     sumsq_pos=self.sumsq_pos.copy(), sumsq_neg=self.sumsq_neg.copy())
        return state

    def init_params(self):
        params = LinearModel.init_params(self)
        params.update(variant=self.variant, C=self.C, gamma=self.gamma)
        return params

    def load_state(self, data):
        LinearModel.load_state(self, data)
        self.frozen = bool(data["frozen"]) if "frozen" in data else False
        self.n_pos = int(data["n_pos"])
        self.n_neg = int(data["n_neg"])
        self.sum_pos[:] = data["sum_pos"]
        self.sum_neg[:] = data["sum_neg"]
        self.sumsq_pos[:] = data["sumsq_pos"]
        self.sumsq_neg[:] = data["sumsq_neg"]
