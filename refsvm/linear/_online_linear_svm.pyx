"""Compiled twin of :mod:`refsvm.linear.online_linear_svm` (Bagnell's online linear SVM).

:class:`PegasosState` has the reference's attributes and methods and implements
only ``_step`` (``step`` and the ``nogil`` ``run`` come from the core's
``StreamLearner``).  The one representational difference: w is the core's
``ScaledVector`` w = s·v (``w_scale`` · ``w_direction``), so that the shrinkage
w ← (1 − α_t λ) w of every step costs O(1) and a sparse step O(nnz); ``w`` is
exposed as the product.  ``save_state`` keeps s, v and ||v||² apart, so a pickled
state resumes bit for bit.
"""
from libc.float cimport DBL_MAX
from libc.math cimport NAN, isfinite, sqrt

import numpy as np
cimport numpy as cnp

from refsvm._core cimport (STEP_BAD, ScaledVector, StreamLearner, refsvm_dense_dot_bound,
                           row_axpy, row_bad_by_dot, row_dot, row_dot_index_checked,
                           row_dot_sqnorm, row_screen, sv_add_row, sv_fold, sv_init, sv_scale,
                           sv_sqnorm)

from refsvm.core.departures import resolve
from refsvm.linear.departures import DEPARTURES

cnp.import_array()

# a scale below this is folded into v (keeps s·v accurate over very long streams)
cdef double FOLD_BELOW = 1e-9


cdef class PegasosState(StreamLearner):
    """Twin of :class:`refsvm.linear.online_linear_svm.PegasosState`, with w = s·v."""

    cdef readonly double lam
    cdef readonly bint project
    cdef readonly bint average
    cdef readonly Py_ssize_t batch_size
    cdef readonly bint fit_intercept
    cdef readonly object departures      # the family's, resolved (none concerns Pegasos)
    cdef ScaledVector w_scaled           # w = s · v, v in the buffer of w_direction
    cdef readonly object w_direction     # ndarray (n_features,): v
    cdef public double b
    cdef public long long t
    cdef public long long n_updates
    cdef public long long n_mistakes     # y f(x) <= 0 before the step (prequential)
    cdef public long long n_steps
    cdef readonly object w_avg           # ndarrays (n_features,), as in the reference
    cdef readonly object grad_w
    cdef double* w_avg_data
    cdef double* grad_w_data
    cdef public double b_avg
    cdef public double grad_b
    cdef public Py_ssize_t n_batch

    def __init__(self, Py_ssize_t n_features, bint sparse=False, double lam=1e-4,
                 bint project=False, bint average=False, Py_ssize_t batch_size=1,
                 bint fit_intercept=False, departures=None):
        self.departures = resolve(DEPARTURES, departures)
        self.n_features = n_features
        self.sparse = sparse
        self.lam = lam
        self.project = project
        self.average = average
        self.batch_size = batch_size
        self.fit_intercept = fit_intercept
        self.w_direction = np.zeros(n_features)
        # ||v||² is needed only by the projection
        sv_init(&self.w_scaled, <double*> cnp.PyArray_DATA(self.w_direction), n_features,
                project)
        self.b = 0.0
        self.t = 0
        self.n_updates = 0
        self.n_mistakes = 0
        self.n_steps = 0
        self.w_avg = np.zeros(n_features)
        self.grad_w = np.zeros(n_features)
        self.w_avg_data = <double*> cnp.PyArray_DATA(self.w_avg)
        self.grad_w_data = <double*> cnp.PyArray_DATA(self.grad_w)
        self.b_avg = 0.0
        self.grad_b = 0.0
        self.n_batch = 0

    cdef inline void _shrink(self, double shrink) noexcept nogil:
        """w ← shrink · w (O(1) unless shrink is 0, at t = 1)."""
        sv_scale(&self.w_scaled, shrink)
        self.b *= shrink

    cdef inline void _finish_step(self, long long t, bint unscaled) noexcept nogil:
        """Lines 10–13 and 16: projection, average, t ← t + 1.  ``unscaled``: the scale
        is 1 (a mini-batch step) and stays 1 -- the projection multiplies v element by
        element, as the reference multiplies w."""
        cdef double norm2, factor
        cdef double* v = self.w_scaled.v
        cdef Py_ssize_t i
        if self.project:
            norm2 = sv_sqnorm(&self.w_scaled) + self.b * self.b
            if norm2 > 1.0 / self.lam:
                # an overflowed ||w||^2: NaN marks it (the reference's reading)
                factor = 1.0 / (sqrt(norm2) * sqrt(self.lam)) if isfinite(norm2) else NAN
                if unscaled:
                    for i in range(self.n_features):
                        v[i] = factor * v[i]
                    self.w_scaled.vnorm2 *= factor * factor
                else:
                    sv_scale(&self.w_scaled, factor)
                self.b *= factor
        sv_fold(&self.w_scaled, FOLD_BELOW)
        if self.average:
            for i in range(self.n_features):
                self.w_avg_data[i] += (self.w_scaled.s * self.w_scaled.v[i]
                                       - self.w_avg_data[i]) / t
            self.b_avg += (self.b - self.b_avg) / t
        self.n_steps = t
        self.n_updates += 1

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        return _pegasos_learn(self, xi, xv, nnz, y, row_dot(self.w_scaled.v, xi, xv, nnz))

    cdef int _step_checked(self, const int* xi, const double* xv, Py_ssize_t nnz,
                           double y, double limit) except -1 nogil:
        """The row check fused into the step's read of x: <v, x> alone when any finite
        value is accepted (``row_bad_by_dot``; CSR indices tested in the same read), else
        <v, x> with ||x||^2 beside it."""
        cdef double vx, sq
        cdef bint bad_index
        if nnz == 0 or self.n_features == 0:  # nothing to fuse (or no w[0] to read)
            return StreamLearner._step_checked(self, xi, xv, nnz, y, limit)
        if limit >= DBL_MAX:  # any finite value: <v, x> proves the values
            if xi == NULL:
                vx = row_dot(self.w_scaled.v, xi, xv, nnz)
                bad_index = False
            else:
                vx = row_dot_index_checked(self.w_scaled.v, xi, xv, nnz, self.n_features,
                                           &bad_index)
            if bad_index or row_bad_by_dot(vx, xv, nnz):
                return STEP_BAD
            return _pegasos_learn(self, xi, xv, nnz, y, vx)
        if xi == NULL:  # dense: ||x||^2 only for the check (any rounding will do)
            vx = refsvm_dense_dot_bound(self.w_scaled.v, xv, nnz, &sq)
            bad_index = False
        else:
            vx = row_dot_sqnorm(self.w_scaled.v, xi, xv, nnz, self.n_features, &sq,
                                &bad_index)
        if row_screen(xv, nnz, sq, limit, bad_index):
            return STEP_BAD
        return _pegasos_learn(self, xi, xv, nnz, y, vx)

    cdef void _flush(self) noexcept nogil:
        cdef long long t
        cdef double eta, shrink, scale, a, v2 = 0.0
        cdef double* v = self.w_scaled.v
        cdef Py_ssize_t i
        if self.n_batch == 0:
            return
        t = self.n_steps + 1
        eta = 1.0 / (self.lam * t)
        shrink = 1.0 - eta * self.lam
        scale = eta / self.n_batch
        # w ← shrink · w + scale · grad_w touches all of w anyway: it is done element by
        # element with the reference's arithmetic and the scale folded (s = 1 from here
        # on, w = v), so the margins of the next batch are the reference's (a tie
        # y f(x) = 1 is decided alike); ||v||² is recomputed
        a = self.w_scaled.s
        for i in range(self.n_features):
            v[i] = shrink * (a * v[i]) + scale * self.grad_w_data[i]
            v2 += v[i] * v[i]
            self.grad_w_data[i] = 0.0
        self.w_scaled.s = 1.0
        self.w_scaled.vnorm2 = v2
        self.b *= shrink
        if self.fit_intercept:
            self.b += scale * self.grad_b
        self.grad_b = 0.0
        self.n_batch = 0
        self._finish_step(t, True)

    def flush(self):
        """Take one step with the examples gathered so far (none: nothing happens).
        Returns 1 if a step was taken, else 0."""
        if self.n_batch == 0:
            return 0
        self._flush()
        return 1

    @property
    def w(self):
        """w = s · v (a new array)."""
        return self.w_scaled.s * self.w_direction

    @property
    def w_scale(self):
        return self.w_scaled.s

    @property
    def w_direction_sqnorm(self):
        return self.w_scaled.vnorm2

    def decision_function(self, X):
        """f(x) = <w, x> + b (the averaged iterate with ``average``) for every row."""
        if self.average:
            return np.asarray(X @ self.w_avg).ravel() + self.b_avg
        return np.asarray(X @ self.w).ravel() + self.b

    def objective(self, X, y):
        """λ/2 ||w||² + mean hinge loss on (X, y)."""
        w = self.w
        margins = y * (np.asarray(X @ w).ravel() + self.b)
        norm2 = float(np.dot(w, w)) + self.b * self.b
        return 0.5 * self.lam * norm2 + float(np.mean(np.maximum(0.0, 1.0 - margins)))

    def get_state(self):
        """The learned numbers, for comparing the twins (w as one vector)."""
        return {"w": self.w, "b": self.b, "t": self.t, "n_updates": self.n_updates,
                "n_mistakes": self.n_mistakes, "n_steps": self.n_steps, "w_avg": self.w_avg.copy(), "b_avg": self.b_avg,
                "grad_w": self.grad_w.copy(), "grad_b": self.grad_b, "n_batch": self.n_batch}

    # ---- persistence protocol (format shared with the reference) ----
    def init_params(self):
        return {"n_features": self.n_features, "sparse": self.sparse, "lam": self.lam,
                "project": self.project, "average": self.average,
                "batch_size": self.batch_size, "fit_intercept": self.fit_intercept,
                "departures": dict(self.departures)}

    def save_state(self):
        data = self.get_state()
        del data["w"]
        data.update(w_scale=self.w_scaled.s, w_direction=self.w_direction.copy(),
                    w_direction_sqnorm=self.w_scaled.vnorm2)
        return data

    def load_state(self, data):
        self.w_direction[:] = data["w_direction"]
        self.w_scaled.s = float(data["w_scale"])
        self.w_scaled.vnorm2 = float(data["w_direction_sqnorm"])
        self.b = float(data["b"])
        self.t = int(data["t"])
        self.n_updates = int(data["n_updates"])
        self.n_mistakes = int(data["n_mistakes"]) if "n_mistakes" in data else 0
        self.n_steps = int(data["n_steps"])
        self.w_avg[:] = data["w_avg"]
        self.b_avg = float(data["b_avg"])
        self.grad_w[:] = data["grad_w"]
        self.grad_b = float(data["grad_b"])
        self.n_batch = int(data["n_batch"])


cdef inline int _pegasos_learn(PegasosState self, const int* xi, const double* xv,
                               Py_ssize_t nnz, double y, double vx) except -1 nogil:
    """The step of ``PegasosState`` once <v, x> is known."""
    cdef double eta, shrink, margin
    cdef long long t
    self.t += 1
    margin = y * (self.w_scaled.s * vx + self.b)
    if margin <= 0.0:
        self.n_mistakes += 1  # the prediction sign(f) was wrong (or f = 0)
    if self.batch_size == 1:
        # the whole batch is this example: step at once, in O(nnz)
        t = self.n_steps + 1
        eta = 1.0 / (self.lam * t)
        shrink = 1.0 - eta * self.lam
        if margin < 1.0:
            if shrink == 0.0:
                vx = 0.0  # v is reset: <v, x> = 0
            self._shrink(shrink)
            sv_add_row(&self.w_scaled, eta * y, xi, xv, nnz, vx)
            if self.fit_intercept:
                self.b += eta * y
        else:
            self._shrink(shrink)
        self._finish_step(t, False)
        return 1
    if margin < 1.0:
        row_axpy(self.grad_w_data, y, xi, xv, nnz)
        if self.fit_intercept:
            self.grad_b += y
    self.n_batch += 1
    if self.n_batch == self.batch_size:
        self._flush()
        return 1
    return 0
