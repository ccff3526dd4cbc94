"""Compiled twin of :mod:`refsvm.ramp.online_svmr` (OnlineSVMR, Algorithms 1-2, Wang & Vucetic).

Same class (``OnlineSVMR``), same methods, same order of floating-point
operations, same tie-breaking (lowest example id wins the arg-max of Eq. 13;
Algorithm 2 removes the oldest first among equal |1 - g|) and the same kernel
row policy (rows kept only for the support vectors), so that the twins agree
state-for-state.  ``step`` and the ``nogil`` ``run`` come from the core's
``StreamLearner``; this module implements ``_step`` (and ``observe``/``label``/``skip``
for Algorithm 3).  The SIMD pass of steps 11-14 is C, in ``refsvm/_csrc/refsvm_ramp.c``; buffers grow
through the core's ``grow``; the persistence format is the reference's.

The departures from the printed algorithm are the reference's
(:mod:`refsvm.ramp.departures`, each a module there with its explanation): the state
resolves ``departures=`` with the reference's table when it is made and keeps the settings
as attributes of the reference's names (``pair_eta``, ``cycle_window``, ``hold_out``, ...);
``departures="paper"`` runs Algorithms 1-2 as printed.  The constants live in the
reference package and are read from there; the sizes of the fixed arrays (``HIST_MAX``,
``BLOCK_MAX``, ``BLOCK_GUESSES_MAX``) are checked against them at import.
"""
from libc.stdlib cimport malloc, free, qsort
from libc.math cimport exp, fabs, fmax, fmin, INFINITY

cimport cython

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport CKernel, RowStore, StreamLearner, grow, kernel_many
from refsvm.core.departures import resolve
from refsvm.core.kernels import rows_to_state
from refsvm.ramp.departures import (BLOCK_GUESSES_MAX as _GUESSES_MAX, CYCLE_SET_MAX,
                                    CYCLE_WINDOW_MAX, DEPARTURES)
from refsvm.ramp.online_svmr import CCCP_ROUNDS_MAX, STOP_RULES
from refsvm.core.stream import signal_held as _signal_held, LONG_WORK as _LONG_WORK, POLL_WORK as _POLL_WORK
from cpython.exc cimport PyErr_CheckSignals

cnp.import_array()



# the SIMD passes of steps 11-14 and their scalar rules (refsvm/_csrc/refsvm_ramp.c, .h)
from refsvm._clib cimport (
    refsvm_ramp_cannot_win as cannot_win, refsvm_ramp_eq13_gain as eq13_gain,
    refsvm_ramp_eq14 as eq14, refsvm_ramp_eq15, refsvm_ramp_eq15_pick_idx,
    refsvm_ramp_eq15_rows, refsvm_ramp_prefetch, refsvm_ramp_simd_get, refsvm_ramp_simd_set,
    refsvm_ramp_working_set, refsvm_ramp_ws)


def _simd_level(level=None):
    """Test hook: which loops the Eq. (15) passes and a shrinking round's working set take.
    2: the AVX-512F loops of a shrinking round (the working set, the fused pass) and the
    AVX2 loops of the others, 1: the AVX2 loops, 0: the SSE2 / plain loops (all must give
    the same numbers bit for bit), each as far as the CPU has them; ``level`` caps it (2,
    what the CPU has, is the default).  Returns the level in force before the call."""
    before = refsvm_ramp_simd_get()
    if level is not None:
        refsvm_ramp_simd_set(level)
    return before



# The sizes of the cycle detector's history and of the largest block, fixed when the twin
# is compiled: the reference's CYCLE_WINDOW_MAX and CYCLE_SET_MAX (checked at import below;
# the departures' checks keep every setting within them).
cdef enum:
    HIST_MAX = 64
    BLOCK_MAX = 8


cdef struct RemKey:
    double key
    long long id
    Py_ssize_t pos


cdef int _cmp_rem(const void* a, const void* b) noexcept nogil:
    # largest |1 - g| first; on ties the lowest id (oldest) first
    cdef const RemKey* x = <const RemKey*> a
    cdef const RemKey* z = <const RemKey*> b
    if x.key > z.key:
        return -1
    if x.key < z.key:
        return 1
    if x.id < z.id:
        return -1
    if x.id > z.id:
        return 1
    return 0


# The most faces of a block step's active-set search, fixed when the twin is compiled: the
# reference's BLOCK_GUESSES_MAX (checked at import below).
cdef enum:
    BLOCK_GUESSES_MAX = 32

if (HIST_MAX, BLOCK_MAX, BLOCK_GUESSES_MAX) != (CYCLE_WINDOW_MAX, CYCLE_SET_MAX, _GUESSES_MAX):
    raise ImportError("refsvm.ramp._online_svmr was compiled for other sizes than "
                      "refsvm.ramp.departures declares: rebuild it")

# The paper form's guard on steps 9-27 (the reference's CCCP_ROUNDS_MAX), for nogil code.
cdef long long ROUNDS_MAX = CCCP_ROUNDS_MAX

# departure step_budget: the loops of steps 10-15 look for a signal (with the GIL) once the
# update has done CUT_WORK of work (iterations times |I|: about 0.1 s, the reference's
# LONG_STEP seconds counted as work), then after every POLL_WORK more (about a millisecond)
cdef double CUT_WORK = _LONG_WORK
cdef double POLL_WORK = _POLL_WORK

# why an update was cut short (departure step_budget; the reference's ``_cut``)
cdef enum:
    CUT_NONE = 0
    CUT_BUDGET = 1      # the budget of steps 10-15 is spent
    CUT_SIGNAL = 2      # a signal is held back by the stream driver
    CUT_RAISED = 3      # a signal handler raised (outside the driver): raised at the end


cdef inline bint _any(const int* flag, Py_ssize_t k) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(k):
        if flag[i]:
            return True
    return False


cdef int _face(const double* H, const double* g, const double* a, const int* state,
               Py_ssize_t k, double C, double pair_eps, double block_kkt_tol, double* nw,
               double* d, int* flag, double* val) noexcept nogil:
    """The reference's ``OnlineSVMR._face`` (same operations in the same order) on H (row
    stride BLOCK_MAX): -1 - i when H_FF is singular to round-off (i the coordinate of the
    vanishing pivot); 1 when the face's point
    leaves the box (flag marks those free coordinates); else 0, with the gain in ``val``
    and flag marking the bound coordinates where the KKT conditions fail."""
    cdef double M[BLOCK_MAX][BLOCK_MAX]
    cdef double rhs[BLOCK_MAX]
    cdef double x[BLOCK_MAX]
    cdef Py_ssize_t free_[BLOCK_MAX]
    cdef Py_ssize_t i, j, r, c, cc, m = 0
    cdef double t, piv, f, lin, quad, hd, habs, r_kkt, tol
    cdef int out = 0
    for i in range(k):
        d[i] = 0.0
        nw[i] = 0.0
        flag[i] = 0
        if state[i] == 1:
            nw[i] = 0.0
            d[i] = 0.0 - a[i]
        elif state[i] == 2:
            nw[i] = C
            d[i] = C - a[i]
        else:
            free_[m] = i
            m += 1
    for r in range(m):                                          # M = H_FF, r = g_F - H_FB d_B
        for c in range(m):
            M[r][c] = H[free_[r] * BLOCK_MAX + free_[c]]
        t = g[free_[r]]
        for j in range(k):
            if state[j] != 0:
                t = t - H[free_[r] * BLOCK_MAX + j] * d[j]
        rhs[r] = t
    for c in range(m):                                          # elimination
        piv = M[c][c]
        if not piv > pair_eps * H[free_[c] * BLOCK_MAX + free_[c]]:
            return -1 - <int> free_[c]
        for r in range(c + 1, m):
            f = M[r][c] / piv
            for cc in range(c + 1, m):
                M[r][cc] = M[r][cc] - f * M[c][cc]
            rhs[r] = rhs[r] - f * rhs[c]
    for r in range(m - 1, -1, -1):                              # back substitution
        t = rhs[r]
        for cc in range(r + 1, m):
            t = t - M[r][cc] * x[cc]
        x[r] = t / M[r][r]
    for r in range(m):
        i = free_[r]
        nw[i] = a[i] + x[r]
        d[i] = x[r]
        if not (0.0 <= nw[i] and nw[i] <= C):
            flag[i] = 1
            out = 1
    if out:
        return 1
    lin = 0.0
    quad = 0.0
    for i in range(k):
        lin = lin + g[i] * d[i]
        hd = 0.0
        habs = 0.0
        for j in range(k):
            hd = hd + H[i * BLOCK_MAX + j] * d[j]
            habs = habs + fabs(H[i * BLOCK_MAX + j] * d[j])
        quad = quad + d[i] * hd
        r_kkt = g[i] - hd                                       # the reference's KKT test
        tol = block_kkt_tol * (fabs(g[i]) + habs)
        if (state[i] == 1 and r_kkt > tol) or (state[i] == 2 and r_kkt < -tol):
            flag[i] = 1
    val[0] = lin - 0.5 * quad
    return 0


cdef inline double sgn(double y) noexcept nogil:
    """The sign the kernel rows carry for label y (y itself when y = +-1)."""
    return -1.0 if y < 0 else 1.0


# nogil methods read attributes of self, which is never None: no None checks even
# in REFSVM_DEBUG builds (which keep bounds checks on).
@cython.nonecheck(False)
cdef class OnlineSVMR(StreamLearner):
    """OnlineSVMR state (Algorithm 1 + Algorithm 2); see :class:`refsvm.ramp.online_svmr.OnlineSVMR`."""

    cdef RowStore store
    cdef CKernel kernel
    cdef readonly double C, tol, min_gain, shrink_margin
    cdef readonly bint shrinking
    cdef readonly bint fit_intercept   # the kernel k + 1 everywhere (see the reference)
    cdef readonly bint keep_rows       # park the rows of coordinates back at 0 (see the reference)
    cdef readonly dict departures      # the resolved departures (see the reference)
    # their settings, read when the state is made (the reference's SETTINGS)
    cdef readonly bint singular_pairs, hold_out
    cdef readonly double pair_eta, pair_eps, cycle_ratio, cycle_eta, block_kkt_tol
    cdef readonly double budget_per_sv   # removal budget grows with #SV (see the reference)
    cdef readonly double step_budget     # the budget of steps 10-15 (see the reference)
    cdef readonly double rewarm          # unlearnings per arrival that start a hinge stretch ...
    cdef readonly long long rewarm_after # ... once this many examples are seen (see the reference)
    cdef readonly long long rewarm_growth  # a stretch ends at this times the examples seen
    cdef readonly long long rewarm_max     # ... at most this many arrivals on (0: no cap)
    cdef double budget_left              # iterations of steps 10-15 left in this update
    cdef double update_work              # work of this update's steps 10-15 so far
    cdef double poll_work                # work since the last look for a signal
    cdef int cut                         # CUT_*: why this update was cut short
    cdef object cut_exc                  # CUT_RAISED: the handler's exception
    cdef readonly int cycle_window, cycle_set, block_guesses
    cdef Py_ssize_t hist_p[HIST_MAX]   # the cycle detector's history: positions of the steps,
    cdef double hist_g[HIST_MAX]       # their Eq. (13) gains (a ring, hist_n steps pushed)
    cdef Py_ssize_t hist_n
    cdef bint stop_relative            # stop="relative": the gain rule relative to D
    cdef readonly long long max_non_sv
    cdef readonly long long warmup     # hinge loss for the first arrivals (see the reference)
    cdef readonly long long hinge_until  # ... and up to this arrival (warmup, rewarm)
    cdef Py_ssize_t n, capacity   # positions in use (members of I and tombstones), allocated
    cdef long long* ids
    cdef double* y
    cdef double* alpha
    cdef double* g
    cdef double* qdiag
    cdef char* in_v
    cdef char* held
    cdef char* dead           # removed by Algorithm 2, not yet compacted away (tombstone)
    # Eq. (3) as two thresholds per position (twin only, for a branch-free scan of step 11):
    # p violates Eq. (3) iff g_p > ut[p] or g_p < lt[p], where ut = tol if p in V and
    # alpha_p < C, else +inf; lt = -tol if p in V and alpha_p > 0, else -inf.  Kept in step
    # with in_v / alpha by _thresholds(p).
    cdef double* ut
    cdef double* lt
    cdef Py_ssize_t* cand     # the violators found by one step-11 scan (_step_and_scan)
    # shrinking (see _optimize_shrunk): the working set A and the rest of I as position
    # lists, the net step D_p of every coordinate moved since the last synchronisation
    # (net_step), and those coordinates in the order they first moved (moved, flag touched)
    cdef Py_ssize_t* apos
    cdef Py_ssize_t* arank    # position -> rank in A (members of A only)
    cdef double* ga
    cdef double* uta
    cdef double* qa           # Q_jj of the working set by rank (_optimize_shrunk)
    cdef double* lta
    cdef Py_ssize_t* moved
    cdef double* net_step
    cdef char* touched
    cdef Py_ssize_t* svpos    # _row: the positions whose rows are kept
    cdef Py_ssize_t* kpos     # _row: the positions whose kernel values are evaluated
    cdef double* kval         # their values (_k_many)
    cdef Py_ssize_t n_dead
    cdef readonly long long n_compactions   # twin only: buffer compactions after removals
    # Kernel rows of the support vectors, *signed*: krow[p][k] = s_k k(x_p, x_k) with
    # s_k = sgn(y_k) (= y_k for labels +-1), so that Eq. (15) is g -= (delta y_p) krow[p]
    # with no product by y_k (exactly the reference's (delta y_p y_k) k when |y_k| = 1).
    # kernel_rows() and save_state() give the unsigned values.
    cdef double** krow
    # keep_rows: krow[p] holds valid values at positions < rlen[p] (= n for support vectors);
    # a parked row (alpha_p = 0, row kept) has its parking time in pstamp[p] (-1: not parked)
    cdef Py_ssize_t* rlen
    cdef long long* pstamp
    cdef long long park_clock
    cdef Py_ssize_t n_parked
    cdef bint unit_y          # every label so far is +1 or -1 (else Eq. 15 multiplies by y_k)
    cdef double* pending_kx
    cdef double pending_f
    cdef Py_ssize_t pending_nsv  # the support vectors of the observation, listed in svpos
    cdef bint pending
    cdef Py_ssize_t* tmp_pos
    cdef RemKey* tmp_keys
    cdef readonly long long n_seen, n_updates, n_steps, n_cccp_rounds, n_unlearned
    cdef readonly long long n_removed, n_gain_stops, n_row_builds, n_shrink_rounds, n_shrunk
    cdef readonly bint gain_stopped

    def __cinit__(self, *args, **kwargs):
        # every C attribute starts zeroed (NULL buffers, empty counters); only this differs
        self.unit_y = True

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, tol=1e-3, min_gain=1e-5, max_non_sv=-1, shrinking=False,
                 shrink_margin=0.1, fit_intercept=False, stop="gain", keep_rows=False,
                 warmup=0, departures=None):
        dep = self.departures = resolve(DEPARTURES, departures)
        if warmup < 0:
            raise ValueError(f"warmup must be >= 0; got {warmup!r}")
        if stop not in STOP_RULES:
            raise ValueError(f"stop must be one of {STOP_RULES}; got {stop!r}")
        # the departures' parameters, each off when its departure is
        self.warmup = warmup if dep["warmup"] else 0
        self.hinge_until = self.warmup
        self.stop_relative = stop == "relative" and dep["relative_stop"]
        self.shrinking = shrinking and dep["shrinking"]
        self.fit_intercept = fit_intercept and dep["intercept"]
        self.keep_rows = keep_rows and dep["keep_rows"]
        self.singular_pairs = dep["singular_pairs"]
        self.pair_eta = dep["pair_eta"]
        self.pair_eps = dep["pair_eps"]
        self.cycle_window = dep["cycle_window"]
        self.cycle_set = dep["cycle_set"]
        self.cycle_ratio = dep["cycle_ratio"]
        self.cycle_eta = dep["cycle_eta"]
        self.block_guesses = dep["block_guesses"]
        self.block_kkt_tol = dep["block_kkt_tol"]
        self.hold_out = dep["hold_out"]
        self.budget_per_sv = dep["budget_per_sv"]
        self.step_budget = dep["step_budget"]
        self.rewarm = dep["rewarm"]
        self.rewarm_after = dep["rewarm_after"]
        self.rewarm_growth = dep["rewarm_growth"]
        self.rewarm_max = dep["rewarm_max"]
        self.budget_left = INFINITY
        self.n_features = n_features
        self.sparse = sparse
        self.C = C
        self.tol = tol
        self.min_gain = min_gain
        self.shrink_margin = shrink_margin
        self.max_non_sv = -1 if max_non_sv is None else max_non_sv
        self.kernel = CKernel(kernel, gamma, degree, coef0)
        self.store = RowStore(n_features, sparse)
        self._reserve(16)

    def __dealloc__(self):
        cdef Py_ssize_t p
        if self.krow != NULL:
            for p in range(self.capacity):
                free(self.krow[p])
        free(self.krow)
        free(self.ids)
        free(self.y)
        free(self.alpha)
        free(self.g)
        free(self.qdiag)
        free(self.in_v)
        free(self.held)
        free(self.dead)
        free(self.ut)
        free(self.lt)
        free(self.cand)
        free(self.apos)
        free(self.arank)
        free(self.ga)
        free(self.uta)
        free(self.lta)
        free(self.qa)
        free(self.moved)
        free(self.net_step)
        free(self.touched)
        free(self.svpos)
        free(self.kpos)
        free(self.kval)
        free(self.rlen)
        free(self.pstamp)
        free(self.pending_kx)
        free(self.tmp_pos)
        free(self.tmp_keys)

    # ------------------------------------------------------------------ buffers
    cdef int _reserve(self, Py_ssize_t need) except -1 nogil:
        """Room for ``need`` positions in every per-position buffer and kept kernel row.

        Every buffer grows through the core's ``grow`` from the same capacity to the same
        need, so all reach the capacity the first one reached."""
        cdef Py_ssize_t capacity = self.capacity, p
        if need <= capacity:
            return 0
        grow(<void**> &self.ids, &capacity, need, sizeof(long long))   # the new capacity
        self._grow_buffer(<void**> &self.y, need, sizeof(double))
        self._grow_buffer(<void**> &self.alpha, need, sizeof(double))
        self._grow_buffer(<void**> &self.g, need, sizeof(double))
        self._grow_buffer(<void**> &self.qdiag, need, sizeof(double))
        self._grow_buffer(<void**> &self.in_v, need, sizeof(char))
        self._grow_buffer(<void**> &self.held, need, sizeof(char))
        self._grow_buffer(<void**> &self.dead, need, sizeof(char))
        self._grow_buffer(<void**> &self.ut, need, sizeof(double))
        self._grow_buffer(<void**> &self.lt, need, sizeof(double))
        self._grow_buffer(<void**> &self.cand, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.apos, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.arank, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.ga, need, sizeof(double))
        self._grow_buffer(<void**> &self.uta, need, sizeof(double))
        self._grow_buffer(<void**> &self.lta, need, sizeof(double))
        self._grow_buffer(<void**> &self.qa, need, sizeof(double))
        self._grow_buffer(<void**> &self.moved, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.net_step, need, sizeof(double))
        self._grow_buffer(<void**> &self.touched, need, sizeof(char))
        self._grow_buffer(<void**> &self.svpos, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.kpos, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.kval, need, sizeof(double))
        self._grow_buffer(<void**> &self.rlen, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.pstamp, need, sizeof(long long))
        self._grow_buffer(<void**> &self.pending_kx, need, sizeof(double))
        self._grow_buffer(<void**> &self.tmp_pos, need, sizeof(Py_ssize_t))
        self._grow_buffer(<void**> &self.tmp_keys, need, sizeof(RemKey))
        self._grow_buffer(<void**> &self.krow, need, sizeof(double*))
        for p in range(self.capacity, capacity):
            self.krow[p] = NULL
        for p in range(self.n):
            if self.krow[p] != NULL:
                self._grow_buffer(<void**> &self.krow[p], need, sizeof(double))
        self.capacity = capacity
        return 0

    cdef inline int _grow_buffer(self, void** buf, Py_ssize_t need,
                                 size_t itemsize) except -1 nogil:
        """The core's ``grow`` on one buffer of ``self.capacity`` items."""
        cdef Py_ssize_t capacity = self.capacity
        return grow(buf, &capacity, need, itemsize)

    cdef inline void _thresholds(self, Py_ssize_t p) noexcept nogil:
        """Refresh the Eq. (3) thresholds of p after in_v[p] or alpha[p] changed."""
        self.ut[p] = self.tol if (self.in_v[p] and self.alpha[p] < self.C) else INFINITY
        self.lt[p] = -self.tol if (self.in_v[p] and self.alpha[p] > 0) else -INFINITY

    # ------------------------------------------------------------------ kernel values
    cdef inline double _k(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """k(x_i, x_j) of two stored rows, counted; + 1 with ``fit_intercept``."""
        cdef double v = self.kernel.k_rows(self.store, i, j)
        if self.fit_intercept:
            v = v + 1.0
        return v

    cdef void _k_many(self, Py_ssize_t z, const Py_ssize_t* pos, Py_ssize_t m,
                      double* out) noexcept nogil:
        """out[j] = k(x_pos[j], x_z) for j < m, counted: the values of ``_k`` bit for bit
        (the core's ``kernel_many``: dense rows four at a time, each inner product one
        sequential sum in the order of ``dense_dot``; CSR rows by a gather), + 1 with
        ``fit_intercept``."""
        cdef Py_ssize_t j
        kernel_many(self.kernel, self.store, z, pos, m, out)
        if self.fit_intercept:
            for j in range(m):
                out[j] = out[j] + 1.0

    # ------------------------------------------------------------------ kernel rows
    cdef double* _row(self, Py_ssize_t p) except NULL nogil:
        """k(x_p, x_k) for every k in I; built on first use (counted), then kept.

        A parked row (``keep_rows``) is completed from its valid prefix on."""
        cdef Py_ssize_t k, j, n_sym = 0, start = 0, n_eval = 0
        cdef double* row
        cdef double** krow = self.krow
        cdef Py_ssize_t* sv = self.svpos
        cdef Py_ssize_t* rlen = self.rlen
        if krow[p] != NULL:
            if self.pstamp[p] >= 0:                # un-park
                self.pstamp[p] = -1
                self.n_parked -= 1
            if rlen[p] == self.n:
                return krow[p]
            row = krow[p]
            start = rlen[p]
        else:
            row = <double*> malloc(self.capacity * sizeof(double))
            if row == NULL:
                with gil:
                    raise MemoryError()
            self.pstamp[p] = -1
        for k in range(start, self.n):
            if k == p:
                row[k] = sgn(self.y[p]) * self.qdiag[p]
            elif self.dead[k]:
                row[k] = 0.0                 # removed example: not in I, no evaluation
            elif krow[k] != NULL and rlen[k] > p:
                sv[n_sym] = k                   # symmetric value, read below
                n_sym += 1
            else:
                self.kpos[n_eval] = k           # evaluated below, four at a time
                n_eval += 1
        self._k_many(p, self.kpos, n_eval, self.kval)
        for j in range(n_eval):
            k = self.kpos[j]
            row[k] = sgn(self.y[k]) * self.kval[j]
        # the symmetric values krow[k][p] sit in as many rows as there are kept rows, one
        # cache miss each: fetch them a few rows ahead
        for j in range(n_sym):
            if j + 8 < n_sym:
                refsvm_ramp_prefetch(&krow[sv[j + 8]][p])
            k = sv[j]
            row[k] = sgn(self.y[k]) * (sgn(self.y[p]) * krow[k][p])
        krow[p] = row
        rlen[p] = self.n
        self.n_row_builds += 1
        return row

    cdef inline void _release_row(self, Py_ssize_t p) noexcept nogil:
        """alpha_p is back at 0: free its row, or park it as the newest (``keep_rows``)."""
        if self.keep_rows and self.krow[p] != NULL:
            if self.pstamp[p] < 0:
                self.n_parked += 1
            self.pstamp[p] = self.park_clock
            self.park_clock += 1
            return
        self._free_row(p)

    cdef inline void _free_row(self, Py_ssize_t p) noexcept nogil:
        if self.krow[p] != NULL and self.pstamp[p] >= 0:
            self.n_parked -= 1
        self.pstamp[p] = -1
        free(self.krow[p])
        self.krow[p] = NULL

    cdef void _evict_parked(self) noexcept nogil:
        """At most #SV parked rows: the oldest parked go first (``keep_rows``)."""
        cdef Py_ssize_t p, n_sv = 0, oldest
        for p in range(self.n):
            if self.alpha[p] != 0.0:
                n_sv += 1
        while self.n_parked > n_sv:
            oldest = -1
            for p in range(self.n):
                if self.krow[p] != NULL and self.pstamp[p] >= 0 and (
                        oldest < 0 or self.pstamp[p] < self.pstamp[oldest]):
                    oldest = p
            self._free_row(oldest)

    # ------------------------------------------------------------------ one coordinate
    cdef int _coordinate_step(self, Py_ssize_t p) except -1 nogil:
        """Eq. (14) on alpha_p, then Eq. (15) for every k in I."""
        cdef double a_old = self.alpha[p]
        cdef double a_new = eq14(a_old, self.g[p], self.qdiag[p], self.C)
        cdef double delta = a_new - a_old
        cdef double c
        cdef double* row
        cdef Py_ssize_t k
        if delta == 0.0:
            return 0
        row = self._row(p)
        self.alpha[p] = a_new
        self._thresholds(p)
        c = delta * self.y[p]
        self._eq15(c, row)
        self.n_steps += 1
        if a_new == 0.0:
            self._release_row(p)
        return 0

    cdef inline void _eq15(self, double c, const double* row) noexcept nogil:
        """Eq. (15) for every k in I: g_k -= (c y_k) k(x_p, x_k), c = delta y_p (signed row)."""
        cdef Py_ssize_t k
        cdef double* g = self.g
        cdef const double* yv = self.y
        if self.unit_y:
            for k in range(self.n):
                g[k] = g[k] - c * row[k]
        else:
            for k in range(self.n):
                g[k] = g[k] - (c * yv[k]) * (sgn(yv[k]) * row[k])

    # ------------------------------------------------------------------ degenerate pairs
    cdef bint _pair_kernel(self, Py_ssize_t p, Py_ssize_t q, Py_ssize_t back,
                           double* kpq) noexcept nogil:
        """k(x_p, x_q) into kpq and 1 when p's row is kept and (p, q) is singular, or nearly
        singular (Q_pp Q_qq - Q_pq^2 <= pair_eta Q_pp Q_qq) with q also the working example
        before p (``back``: a zig-zag), else 0; see the reference."""
        cdef double qp, qq, k
        if p < 0 or p == q or self.krow[p] == NULL or self.pstamp[p] >= 0:
            return 0
        qp = self.qdiag[p]
        qq = self.qdiag[q]
        if not (qp > 0.0 and qq > 0.0):
            return 0
        k = sgn(self.y[q]) * self.krow[p][q]
        if not ((self.singular_pairs and self._is_singular(p, q, k))
                or (self.pair_eta > 0.0 and back == q
                    and qp * qq - k * k <= self.pair_eta * (qp * qq))):
            return 0
        kpq[0] = k
        return 1

    cdef inline bint _is_singular(self, Py_ssize_t p, Py_ssize_t q, double kpq) noexcept nogil:
        """The same or the opposite point in feature space (to round-off)."""
        cdef double qp = self.qdiag[p], qq = self.qdiag[q]
        return qp + qq - 2.0 * fabs(kpq) <= self.pair_eps * (qp + qq)

    cdef bint _pair_step(self, Py_ssize_t p, Py_ssize_t q, double kpq, double gp, double gq,
                         double* dp, double* dq) noexcept nogil:
        """A step on both coordinates of a nearly singular pair: ``_flat_step`` on a
        singular pair, else ``_exact_pair_step`` (see the reference)."""
        if self._is_singular(p, q, kpq):
            return self._flat_step(p, q, kpq, gp, gq, dp, dq)
        return self._exact_pair_step(p, q, kpq, gp, gq, dp, dq)

    cdef bint _flat_step(self, Py_ssize_t p, Py_ssize_t q, double kpq, double gp, double gq,
                         double* dp, double* dq) noexcept nogil:
        """Exact step of the dual along the flat direction n = (1, t) of a singular pair
        (departure ``singular_pairs``, see the reference's ``_flat_step``).  Updates alpha_p, alpha_q (not
        g); returns 1 when they moved."""
        cdef double C = self.C, ap = self.alpha[p], aq = self.alpha[q]
        cdef double qpq, t, slope, curv, s, lo, hi, v, apn, aqn
        qpq = (self.y[p] * self.y[q]) * kpq                     # signed Q_pq
        t = -qpq / self.qdiag[q]
        slope = gp + t * gq                                     # dual gradient along n
        curv = self.qdiag[p] + t * qpq                          # n' Q n
        if slope == 0.0:
            return 0
        if curv > 0.0:
            s = slope / curv
        else:
            s = INFINITY if slope > 0.0 else -INFINITY
        lo = -ap
        hi = C - ap
        if t > 0.0:
            v = -aq / t
            if v > lo:
                lo = v
            v = (C - aq) / t
            if v < hi:
                hi = v
        elif t < 0.0:
            v = (C - aq) / t
            if v > lo:
                lo = v
            v = -aq / t
            if v < hi:
                hi = v
        if lo > s:
            s = lo
        if hi < s:
            s = hi
        apn = ap + s
        if 0.0 > apn:
            apn = 0.0
        if C < apn:
            apn = C
        aqn = aq + t * s
        if 0.0 > aqn:
            aqn = 0.0
        if C < aqn:
            aqn = C
        if s == C - ap:                                         # the bound reached: exactly
            apn = C
        elif s == -ap:
            apn = 0.0
        if t != 0.0 and s == (C - aq) / t:
            aqn = C
        elif t != 0.0 and s == -aq / t:
            aqn = 0.0
        return self._move_pair(p, q, apn, aqn, dp, dq)

    cdef bint _move_pair(self, Py_ssize_t p, Py_ssize_t q, double apn, double aqn,
                         double* dp, double* dq) noexcept nogil:
        """Set (alpha_p, alpha_q) to the values a pair step found (reference ``_move_pair``):
        the moves in dp, dq; returns 1 when they moved (a step is counted)."""
        dp[0] = apn - self.alpha[p]
        dq[0] = aqn - self.alpha[q]
        if dp[0] == 0.0 and dq[0] == 0.0:
            return 0
        self.alpha[p] = apn
        self.alpha[q] = aqn
        self._thresholds(p)
        self._thresholds(q)
        self.n_steps += 1
        return 1

    cdef bint _exact_pair_step(self, Py_ssize_t p, Py_ssize_t q, double kpq, double gp, double gq,
                         double* dp, double* dq) noexcept nogil:
        """Exact maximisation of the dual over (alpha_p, alpha_q) in [0, C]^2 on a nearly
        singular, not singular pair, the other coordinates fixed: the Newton point H^{-1} g when in the box (H not singular to
        round-off), else the first of largest gain of the four edges (alpha_p = 0, C,
        alpha_q = 0, C; Eq. 14 on the other coordinate).  Departure ``pair_eta``, see the reference's
        ``_pair_step`` (same operations).  Updates alpha_p, alpha_q (not g); returns 1 when
        they moved."""
        cdef double C = self.C, ap = self.alpha[p], aq = self.alpha[q]
        cdef double hpp = self.qdiag[p], hqq = self.qdiag[q]
        cdef double hpq, det, apn = -1.0, aqn = -1.0, u, v, ep, eq, gain, best
        cdef int e
        hpq = (self.y[p] * self.y[q]) * kpq                     # signed Q_pq
        det = hpp * hqq - hpq * hpq
        if det > self.pair_eps * (hpp * hqq):                   # 1. Newton: d = H^{-1} g
            u = ap + (hqq * gp - hpq * gq) / det
            v = aq + (hpp * gq - hpq * gp) / det
            if 0.0 <= u and u <= C and 0.0 <= v and v <= C:
                apn = u
                aqn = v
        if apn < 0.0:                                           # 2. the four edges
            best = -INFINITY
            for e in range(4):
                if e < 2:                                       # alpha_p = bound, Eq. (14) on q
                    u = 0.0 if e == 0 else C
                    v = aq + (gq - hpq * (u - ap)) / hqq
                    if 0.0 > v:
                        v = 0.0
                    if C < v:
                        v = C
                else:                                           # alpha_q = bound, Eq. (14) on p
                    v = 0.0 if e == 2 else C
                    u = ap + (gp - hpq * (v - aq)) / hpp
                    if 0.0 > u:
                        u = 0.0
                    if C < u:
                        u = C
                ep = u - ap
                eq = v - aq
                gain = (gp * ep + gq * eq) - 0.5 * (hpp * ep * ep + 2.0 * hpq * ep * eq
                                                    + hqq * eq * eq)
                if gain > best:                                 # first of the largest gain
                    best = gain
                    apn = u
                    aqn = v
            if apn < 0.0:                                       # no finite gain (overflow)
                return 0
        return self._move_pair(p, q, apn, aqn, dp, dq)

    # ------------------------------------------------------------------ detected cycles
    cdef inline void _remember(self, Py_ssize_t p, double gain) noexcept nogil:
        """A coordinate step on p with Eq. (13) gain ``gain``, into the detector's history."""
        self.hist_p[self.hist_n % HIST_MAX] = p
        self.hist_g[self.hist_n % HIST_MAX] = gain
        self.hist_n += 1

    cdef Py_ssize_t _cycle(self, Py_ssize_t q, double gain, Py_ssize_t* S,
                           double* H) noexcept nogil:
        """The reference's ``_cycle``: the members of a detected cycle that q belongs to, in
        increasing position, into S, their block into H; returns their number, 0 when
        there is none."""
        cdef Py_ssize_t w = self.cycle_window, i, j, k = 0, p, t
        cdef bint seen
        if w == 0 or self.hist_n < w:
            return 0
        if not gain >= self.cycle_ratio * self.hist_g[(self.hist_n - w) % HIST_MAX]:
            return 0
        for i in range(w):
            p = self.hist_p[(self.hist_n - w + i) % HIST_MAX]
            seen = False
            for j in range(k):
                if S[j] == p:
                    seen = True
            if not seen:
                if k == self.cycle_set:
                    return 0
                S[k] = p
                k += 1
        seen = False
        for j in range(k):
            if S[j] == q:
                seen = True
        if not seen or k < 2:
            return 0
        for i in range(1, k):                                   # increasing position
            t = S[i]
            j = i - 1
            while j >= 0 and S[j] > t:
                S[j + 1] = S[j]
                j -= 1
            S[j + 1] = t
        if not self._block_matrix(S, k, H):
            return 0
        return k

    cdef inline bint _usable_row(self, Py_ssize_t p) noexcept nogil:
        """p's kernel row is kept and not parked (complete over I)."""
        return self.krow[p] != NULL and self.pstamp[p] < 0

    cdef bint _block_matrix(self, const Py_ssize_t* S, Py_ssize_t k, double* H) noexcept nogil:
        """The reference's ``_block_matrix``: H (row stride BLOCK_MAX) on the positions S
        from kept rows only; 1 when it is nearly singular (prod piv_c / H_cc <= cycle_eta),
        else 0."""
        cdef double M[BLOCK_MAX][BLOCK_MAX]
        cdef double v, piv, f, ratio = 1.0
        cdef Py_ssize_t i, j, r, c, cc
        for i in range(k):
            H[i * BLOCK_MAX + i] = self.qdiag[S[i]]
            if not H[i * BLOCK_MAX + i] > 0.0:
                return 0
            for j in range(i + 1, k):
                if self._usable_row(S[i]):
                    v = sgn(self.y[S[j]]) * self.krow[S[i]][S[j]]
                elif self._usable_row(S[j]):
                    v = sgn(self.y[S[i]]) * self.krow[S[j]][S[i]]
                else:
                    return 0
                v = (self.y[S[i]] * self.y[S[j]]) * v
                H[i * BLOCK_MAX + j] = v
                H[j * BLOCK_MAX + i] = v
        for i in range(k):
            for j in range(k):
                M[i][j] = H[i * BLOCK_MAX + j]
        for c in range(k):
            piv = M[c][c]
            if not piv > 0.0:
                ratio = 0.0
                break
            ratio = ratio * (piv / H[c * BLOCK_MAX + c])
            for r in range(c + 1, k):
                f = M[r][c] / piv
                for cc in range(c + 1, k):
                    M[r][cc] = M[r][cc] - f * M[c][cc]
        return ratio <= self.cycle_eta

    cdef int _block_step(self, const Py_ssize_t* S, Py_ssize_t k, const double* Hf,
                         const double* g, double gain, double* moves) except -1 nogil:
        """The reference's ``_block_step`` (same operations in the same order): the exact
        maximum of the dual over the coordinates S in the box, by an active-set search
        from alpha, else over every face of it, when it gains more than ``gain``.  Sets
        alpha on S, counts a step, writes the moves and returns 1; 0 when nothing
        changed."""
        cdef double C = self.C, best = gain, val, step = 0.0, ti
        cdef double a[BLOCK_MAX]
        cdef double x[BLOCK_MAX]
        cdef double H[BLOCK_MAX][BLOCK_MAX]
        cdef double d[BLOCK_MAX]
        cdef double nw[BLOCK_MAX]
        cdef double best_new[BLOCK_MAX]
        cdef int state[BLOCK_MAX]
        cdef int flag[BLOCK_MAX]
        cdef long tried[BLOCK_GUESSES_MAX]
        cdef Py_ssize_t i, j, code, n_codes = 1, rest, n_tried = 0, t, res, hit
        cdef long face_code, p3
        cdef bint found = False, any_move, done = False, seen
        for i in range(k):
            a[i] = self.alpha[S[i]]
            n_codes *= 3
            for j in range(k):
                H[i][j] = Hf[i * BLOCK_MAX + j]
        # 1. the active-set search from alpha: x its current point, in the box
        for i in range(k):
            x[i] = a[i]
            if a[i] == 0.0 and g[i] <= 0.0:
                state[i] = 1
            elif a[i] == C and g[i] >= 0.0:
                state[i] = 2
            else:
                state[i] = 0
        for t in range(self.block_guesses):
            face_code = 0
            p3 = 1
            for i in range(k):
                face_code += state[i] * p3
                p3 *= 3
            seen = False
            for j in range(n_tried):
                if tried[j] == face_code:
                    seen = True
                    break
            if seen:
                break
            tried[n_tried] = face_code
            n_tried += 1
            res = _face(&H[0][0], g, a, state, k, C, self.pair_eps, self.block_kkt_tol,
                    nw, d, flag, &val)
            if res < 0:                                         # singular: fix its pivot's
                i = -1 - res                                    # coordinate by its g at alpha
                state[i] = 2 if g[i] > 0.0 else 1
                x[i] = C if state[i] == 2 else 0.0
                continue
            if res > 0:                                         # step towards nw to the first
                hit = -1                                        # bound it crosses (least index)
                for i in range(k):
                    if flag[i]:
                        ti = ((0.0 if nw[i] < 0.0 else C) - x[i]) / (nw[i] - x[i])
                        if hit < 0 or ti < step:
                            hit = i
                            step = ti
                for i in range(k):
                    if state[i] == 0:
                        x[i] = fmin(fmax(x[i] + step * (nw[i] - x[i]), 0.0), C)
                state[hit] = 1 if nw[hit] < 0.0 else 2
                x[hit] = 0.0 if nw[hit] < 0.0 else C
                continue
            if not _any(flag, k):                               # a KKT point: the maximum
                if val > best:
                    best = val
                    found = True
                    for i in range(k):
                        best_new[i] = nw[i]
                done = True
                break
            for i in range(k):                                  # x moves to nw; free the
                x[i] = nw[i]                                    # first violator
            for i in range(k):
                if flag[i]:
                    state[i] = 0
                    break
        # 2. every face
        if not done:
            for code in range(n_codes):
                rest = code
                for i in range(k):
                    state[i] = rest % 3
                    rest = rest // 3
                res = _face(&H[0][0], g, a, state, k, C, self.pair_eps, self.block_kkt_tol,
                    nw, d, flag, &val)
                if res != 0:                                    # singular, or out of the box
                    continue
                if val > best:                                  # first of the largest gain
                    best = val
                    found = True
                    for i in range(k):
                        best_new[i] = nw[i]
                if not _any(flag, k):  # convex: a KKT point is the maximum
                    break
        if not found:
            return 0
        any_move = False
        for i in range(k):
            moves[i] = best_new[i] - a[i]
            if moves[i] != 0.0:
                any_move = True
        if not any_move:
            return 0
        for i in range(k):
            self.alpha[S[i]] = best_new[i]
            self._thresholds(S[i])
        self.n_steps += 1
        return 1

    cdef int _unlearn(self, Py_ssize_t p) except -1 nogil:
        """Alg. 1 steps 24-25."""
        cdef double delta, c
        cdef double* row
        cdef Py_ssize_t k
        if self.alpha[p] == 0.0:
            return 0
        delta = 0.0 - self.alpha[p]
        row = self._row(p)
        self.alpha[p] = 0.0
        self._thresholds(p)
        c = delta * self.y[p]
        self._eq15(c, row)
        self._release_row(p)
        self.n_unlearned += 1
        return 0

    # ------------------------------------------------------------------ steps 10-15
    cdef double _dual_objective(self) noexcept nogil:
        """D = 1/2 sum_i alpha_i (1 + g_i) over the support vectors in increasing id."""
        cdef Py_ssize_t p
        cdef double d = 0.0
        for p in range(self.n):
            if self.alpha[p] != 0.0:
                d += self.alpha[p] * (1.0 + self.g[p])
        return 0.5 * d

    cdef double _gain_threshold(self) noexcept nogil:
        """min_gain (stop="gain") or min_gain * D (stop="relative")."""
        if not self.stop_relative:
            return self.min_gain
        return self.min_gain * self._dual_objective()

    @property
    def stop(self):
        return "relative" if self.stop_relative else "gain"

    def dual_objective(self):
        """D = sum_i alpha_i - 1/2 alpha' Q alpha (see the reference)."""
        return self._dual_objective()

    def gain_threshold(self):
        """The threshold of the gain rule of step 10 now (see the reference)."""
        return self._gain_threshold()

    cdef inline void _consider(self, Py_ssize_t p, Py_ssize_t* best,
                               double* best_gain) noexcept nogil:
        """Step 11 for one member p of V: a KKT violator (Eq. 3) with the gain of Eq. 13."""
        cdef double a = self.alpha[p], gg = self.g[p], d, gain
        if not ((a < self.C and gg > self.tol) or (a > 0 and gg < -self.tol)):   # Eq. (3)
            return
        d = eq14(a, gg, self.qdiag[p], self.C) - a                                  # Eq. (14)
        gain = eq13_gain(gg, self.qdiag[p], d)                                 # Eq. (13)
        if best[0] < 0 or gain > best_gain[0]:                                   # lowest id on ties
            best[0] = p
            best_gain[0] = gain

    cdef int _step_and_scan(self, Py_ssize_t p, Py_ssize_t* best,
                            double* best_gain) except -1 nogil:
        """Steps 12-14 on p (Eqs. 14, 15) fused with step 11's scan of the updated V.

        The same arithmetic as ``_coordinate_step`` followed by a scan.  One pass
        (``refsvm_ramp_eq15``, two positions at a time) updates g by Eq. (15) and lists
        the violators of Eq. (3) through the thresholds ut / lt; the gains of Eq. (13)
        are computed for those few only, in increasing position, so ties still go to the
        lowest id."""
        cdef double a_old = self.alpha[p]
        cdef double a_new = eq14(a_old, self.g[p], self.qdiag[p], self.C)
        cdef double delta = a_new - a_old
        cdef double c
        cdef double* row
        cdef Py_ssize_t k
        best[0] = -1
        best_gain[0] = -INFINITY
        if delta == 0.0:
            for k in range(self.n):
                if self.in_v[k]:
                    self._consider(k, best, best_gain)
            return 0
        row = self._row(p)
        self.alpha[p] = a_new
        self._thresholds(p)
        c = delta * self.y[p]
        # local copies of the pointers and constants (the compiler cannot hoist them)
        cdef double* g = self.g
        cdef const double* alpha = self.alpha
        cdef const double* qdiag = self.qdiag
        cdef const double* ut = self.ut
        cdef const double* lt = self.lt
        cdef double C = self.C, a, gk, d, gain, bg = -INFINITY
        cdef Py_ssize_t n = self.n, bk = -1
        cdef Py_ssize_t* cand = self.cand
        cdef Py_ssize_t j, m = 0
        if self.unit_y:
            m = refsvm_ramp_eq15(g, row, ut, lt, c, n, cand)                    # Eq. (15)
        else:
            self._eq15(c, row)                                                  # Eq. (15)
            for k in range(n):
                cand[m] = k
                m += (g[k] > ut[k]) | (g[k] < lt[k])
        for j in range(m):                           # the violators of Eq. (3), increasing k
            k = cand[j]
            gk = g[k]
            if cannot_win(gk, qdiag[k], bg):
                continue
            a = alpha[k]
            d = eq14(a, gk, qdiag[k], C) - a                                        # Eq. (14)
            gain = eq13_gain(gk, qdiag[k], d)                                  # Eq. (13)
            if bk < 0 or gain > bg:                                              # lowest id on ties
                bk = k
                bg = gain
        best[0] = bk
        best_gain[0] = bg
        self.n_steps += 1
        if a_new == 0.0:
            self._release_row(p)
        return 0

    cdef int _optimize_on_v(self) except -1 nogil:
        cdef Py_ssize_t p, k, best = -1, last = -1, back = -1, nb, i
        cdef double best_gain = -INFINITY, kpq, dp, dq, cp, cq, sk, min_gain, acc
        cdef double* rp
        cdef double* rq
        cdef Py_ssize_t S[BLOCK_MAX]
        cdef double gS[BLOCK_MAX]
        cdef double mv[BLOCK_MAX]
        cdef double* rows[BLOCK_MAX]
        cdef double Hf[BLOCK_MAX * BLOCK_MAX]
        if self.shrinking:
            return self._optimize_shrunk()
        self.hist_n = 0
        min_gain = self._gain_threshold()
        for p in range(self.n):                                  # step 10: scan V
            if self.in_v[p]:
                self._consider(p, &best, &best_gain)
        while not self._cut_short():                             # departure step_budget
            if best < 0:                                         # no violator left
                return 0
            if best_gain < min_gain or best_gain <= 0.0:         # gain rule
                self.n_gain_stops += 1
                self.gain_stopped = True
                return 0
            if self._pair_kernel(last, best, back, &kpq) and self._pair_step(
                    last, best, kpq, self.g[last], self.g[best], &dp, &dq):
                # pair step (departures/pair_step.py, Eqs. 13-15 on two coordinates): Eq. (15) in one pass
                rp = self._row(last)
                rq = self._row(best)
                cp = dp * self.y[last]
                cq = dq * self.y[best]
                for k in range(self.n):
                    sk = sgn(self.y[k])
                    self.g[k] = self.g[k] - self.y[k] * (cp * (sk * rp[k]) + cq * (sk * rq[k]))
                if self.alpha[last] == 0.0:
                    self._release_row(last)
                if self.alpha[best] == 0.0:
                    self._release_row(best)
                self._remember(last, best_gain)                  # for _cycle: two steps
                self._remember(best, best_gain)
                last = -1
                back = -1
                best = -1
                best_gain = -INFINITY
                for p in range(self.n):                          # step 11: scan V
                    if self.in_v[p]:
                        self._consider(p, &best, &best_gain)
                continue
            nb = self._cycle(best, best_gain, S, Hf)
            if nb > 0:
                # a detected cycle (departures/block_step.py, Eqs. 13-15 on its coordinates jointly)
                self.hist_n = 0
                for i in range(nb):
                    gS[i] = self.g[S[i]]
                if self._block_step(S, nb, Hf, gS, best_gain, mv):
                    for i in range(nb):
                        rows[i] = self._row(S[i])
                    for k in range(self.n):                      # Eq. (15), one pass
                        sk = sgn(self.y[k])
                        acc = (mv[0] * self.y[S[0]]) * (sk * rows[0][k])
                        for i in range(1, nb):
                            acc = acc + (mv[i] * self.y[S[i]]) * (sk * rows[i][k])
                        self.g[k] = self.g[k] - self.y[k] * acc
                    for i in range(nb):
                        if self.alpha[S[i]] == 0.0:
                            self._release_row(S[i])
                    last = -1
                    back = -1
                    best = -1
                    best_gain = -INFINITY
                    for p in range(self.n):                      # step 11: scan V
                        if self.in_v[p]:
                            self._consider(p, &best, &best_gain)
                    continue
            self._remember(best, best_gain)
            back = last
            last = best
            self._step_and_scan(best, &best, &best_gain)         # steps 11-14
        return 0

    cdef int _optimize_shrunk(self) except -1 nogil:
        """Steps 10-15 with shrinking; see ``refsvm.ramp.online_svmr.OnlineSVMR._optimize_shrunk``.

        Rounds.  One scan of I splits V into the working set A (V minus the members at a
        bound whose Eq. (3) holds by more than ``shrink_margin``: alpha = 0 with
        g < -margin, alpha = C with g > margin) and picks the best violator of V (step 10;
        every violator is in A).  Steps 11-14 then run on A, with Eq. (15) on A only; at
        the end of the round Eq. (15) is applied to the rest of I at once, with the net
        step D_p of every coordinate moved in the round (first moved first).

        Layout (twin only, same arithmetic as the reference): during a round, g, ut, lt
        and Q_jj of A live in contiguous copies (ga, uta, lta, qa, indexed by rank in A);
        Eq. (15) on A reads the moved coordinate's full row through A, fused with the scan
        of step 11 (``refsvm_ramp_eq15_pick_idx``, eight or four positions at a time)."""
        cdef Py_ssize_t n = self.n, na, nv, nt, p, k, j, jp, m, best, last, back
        cdef double C = self.C, theta = self.shrink_margin, a_old, a_new, delta, c, gk, a, d
        cdef double gain, bg, kpq, dl, dp, cl, cp, sk, min_gain
        cdef double* rl
        cdef double* g = self.g
        cdef const double* alpha = self.alpha
        cdef const double* qdiag = self.qdiag
        cdef const double* yv = self.y
        cdef Py_ssize_t* A = self.apos
        cdef Py_ssize_t* rank = self.arank
        cdef Py_ssize_t* cand = self.cand
        cdef double* ga = self.ga
        cdef double* uta = self.uta
        cdef double* lta = self.lta
        cdef double* qa = self.qa
        cdef double* row
        cdef Py_ssize_t S[BLOCK_MAX]
        cdef double gS[BLOCK_MAX]
        cdef double mv[BLOCK_MAX]
        cdef double* rows[BLOCK_MAX]
        cdef Py_ssize_t nb, i
        cdef double acc
        cdef double Hf[BLOCK_MAX * BLOCK_MAX]
        cdef refsvm_ramp_ws ws
        ws.in_v, ws.alpha, ws.g, ws.qdiag = self.in_v, alpha, g, qdiag
        ws.ut, ws.lt = self.ut, self.lt
        ws.C, ws.theta, ws.tol, ws.n = C, theta, self.tol, n
        ws.A, ws.rank, ws.ga, ws.uta, ws.lta, ws.qa = A, rank, ga, uta, lta, qa
        while not self._cut_short():                             # departure step_budget
            ws.best = -1
            ws.bg = -INFINITY
            # step 10 on V; the set A: every p of V but alpha_p = 0 with g_p < -theta and
            # alpha_p = C with g_p > theta, in increasing p (A[rank[p]] = p, the copies ga,
            # uta, lta, qa), each passed to _consider's test and rule (refsvm_ramp_working_set)
            na = refsvm_ramp_working_set(&ws)
            nv, best, bg = ws.nv, ws.best, ws.bg
            if best < 0:
                return 0
            min_gain = self._gain_threshold()
            if bg < min_gain or bg <= 0.0:                       # gain rule
                self.n_gain_stops += 1
                self.gain_stopped = True
                return 0
            self.n_shrink_rounds += 1
            self.n_shrunk += nv - na
            nt = 0
            best = rank[best]                                    # from here on, a rank in A
            last = -1                                            # previous working example
            back = -1                                            # the one before it
            self.hist_n = 0
            while best >= 0 and bg >= min_gain and bg > 0.0:     # steps 11-14 on A
                if self._cut_short():                            # departure step_budget
                    break
                jp = best
                p = A[jp]
                if self._pair_kernel(last, p, back, &kpq) and self._pair_step(
                        last, p, kpq, ga[rank[last]], ga[jp], &dl, &dp):
                    # pair step (departures/pair_step.py, Eqs. 13-15 on two coordinates): Eq. (15) on A
                    rl = self._row(last)
                    row = self._row(p)
                    if not self.touched[p]:
                        self.touched[p] = 1
                        self.net_step[p] = 0.0
                        self.moved[nt] = p
                        nt += 1
                    self.net_step[last] += dl
                    self.net_step[p] += dp
                    uta[rank[last]] = self.ut[last]
                    lta[rank[last]] = self.lt[last]
                    uta[jp] = self.ut[p]
                    lta[jp] = self.lt[p]
                    cl = dl * yv[last]
                    cp = dp * yv[p]
                    self._remember(last, bg)                     # for _cycle: two steps
                    self._remember(p, bg)
                    best = -1
                    bg = -INFINITY
                    for j in range(na):                          # Eq. (15) on A, step 11
                        k = A[j]
                        sk = sgn(yv[k])
                        gk = ga[j] - yv[k] * (cl * (sk * rl[k]) + cp * (sk * row[k]))
                        ga[j] = gk
                        if gk > uta[j] or gk < lta[j]:
                            a = alpha[k]
                            d = eq14(a, gk, qdiag[k], C) - a
                            gain = eq13_gain(gk, qdiag[k], d)
                            if best < 0 or gain > bg:
                                best = j
                                bg = gain
                    last = -1
                    back = -1
                    continue
                nb = self._cycle(p, bg, S, Hf)
                if nb > 0:
                    # a detected cycle (departures/block_step.py, Eqs. 13-15 on its coordinates jointly)
                    self.hist_n = 0
                    for i in range(nb):
                        gS[i] = ga[rank[S[i]]]
                    if self._block_step(S, nb, Hf, gS, bg, mv):
                        for i in range(nb):                      # each moved in this round
                            rows[i] = self._row(S[i])
                            self.net_step[S[i]] += mv[i]
                            uta[rank[S[i]]] = self.ut[S[i]]
                            lta[rank[S[i]]] = self.lt[S[i]]
                        best = -1
                        bg = -INFINITY
                        for j in range(na):                      # Eq. (15) on A, step 11
                            k = A[j]
                            sk = sgn(yv[k])
                            acc = (mv[0] * yv[S[0]]) * (sk * rows[0][k])
                            for i in range(1, nb):
                                acc = acc + (mv[i] * yv[S[i]]) * (sk * rows[i][k])
                            gk = ga[j] - yv[k] * acc
                            ga[j] = gk
                            if gk > uta[j] or gk < lta[j]:
                                a = alpha[k]
                                d = eq14(a, gk, qdiag[k], C) - a
                                gain = eq13_gain(gk, qdiag[k], d)
                                if best < 0 or gain > bg:
                                    best = j
                                    bg = gain
                        last = -1
                        back = -1
                        continue
                a_old = alpha[p]
                a_new = eq14(a_old, ga[jp], qdiag[p], C)            # Eq. (14)
                delta = a_new - a_old
                if delta == 0.0:
                    break
                row = self._row(p)
                self.alpha[p] = a_new
                self._thresholds(p)
                uta[jp] = self.ut[p]
                lta[jp] = self.lt[p]
                if not self.touched[p]:                          # first move in the round
                    self.touched[p] = 1
                    self.net_step[p] = 0.0
                    self.moved[nt] = p
                    nt += 1
                self.net_step[p] += delta
                c = delta * yv[p]
                self._remember(p, bg)
                back = last
                last = p
                best = -1
                bg = -INFINITY
                if self.unit_y:
                    # Eq. (15) on A, the row read through A, fused with step 11 (the same
                    # operations and the same choice as the pass and the scan below)
                    refsvm_ramp_eq15_pick_idx(ga, row, A, uta, lta, qa, alpha, c, C, na, &best,
                                              &bg)
                    self.n_steps += 1
                    continue
                m = 0
                for j in range(na):                              # Eq. (15) on A
                    k = A[j]
                    gk = ga[j] - (c * yv[k]) * (sgn(yv[k]) * row[k])
                    ga[j] = gk
                    # the violators, without a branch (about half of A on dense data)
                    cand[m] = j
                    m += (gk > uta[j]) | (gk < lta[j])
                for j in range(m):                               # step 11: Eq. (13) on violators
                    k = A[cand[j]]
                    gk = ga[cand[j]]
                    if cannot_win(gk, qdiag[k], bg):
                        continue
                    a = alpha[k]
                    d = eq14(a, gk, qdiag[k], C) - a
                    gain = eq13_gain(gk, qdiag[k], d)
                    if best < 0 or gain > bg:
                        best = cand[j]
                        bg = gain
                self.n_steps += 1
            # Eq. (15) on the rest of I: applied to every position (one contiguous pass per
            # moved coordinate, first moved first), then the values of A put back from ga.
            # With labels +-1 the passes of four coordinates at a time are one pass over g
            # (the same operations in the same order for every value); no row is released
            # before every pass is done.
            if self.unit_y:
                nb = 0
                for j in range(nt):
                    p = self.moved[j]
                    if self.net_step[p] != 0.0:
                        rows[nb] = self.krow[p]
                        mv[nb] = self.net_step[p] * yv[p]
                        nb += 1
                        if nb == 4:
                            refsvm_ramp_eq15_rows(g, <const double* const*> rows, mv, 4, n)
                            nb = 0
                if nb > 0:
                    refsvm_ramp_eq15_rows(g, <const double* const*> rows, mv, <int> nb, n)
                for j in range(nt):
                    p = self.moved[j]
                    self.touched[p] = 0
                    if alpha[p] == 0.0:
                        self._release_row(p)
            else:
                for j in range(nt):
                    p = self.moved[j]
                    self.touched[p] = 0
                    if self.net_step[p] != 0.0:
                        self._eq15(self.net_step[p] * yv[p], self.krow[p])
                    if alpha[p] == 0.0:
                        self._release_row(p)
            for j in range(na):
                g[A[j]] = ga[j]
        return 0

    # ------------------------------------------------------------------ steps 9-27
    cdef inline double _outlier_bound(self) noexcept nogil:
        """The bound of Eq. (10): 2, or infinite up to arrival ``hinge_until`` (the
        warm-up and the stretches of ``rewarm``; see the reference)."""
        return INFINITY if self.n_seen <= self.hinge_until else 2.0

    cdef inline void _hold(self, Py_ssize_t p) noexcept nogil:
        """Step 19 removed p from V: hold it out for the rest of this update (departure
        ``hold_out``; see the reference's ``_hold``)."""
        if self.hold_out:
            self.held[p] = 1

    cdef int _end_of_warmup(self) except -1 nogil:
        """An arrival that step 4 turned away: when it ends the warm-up, an update (steps
        9-27 with the bound 2; departure ``warmup``, see the reference's ``_end_of_warmup``)."""
        cdef Py_ssize_t p
        if self.hinge_until and self.n_seen == self.hinge_until + 1:
            self.n_updates += 1
            for p in range(self.n):
                self.held[p] = 0
            self._cccp()
        return 0

    cdef int _cccp(self) except -1 nogil:
        """Alg. 1 steps 9-27 (see the reference's ``_cccp``)."""
        cdef Py_ssize_t p, n_removed
        cdef long long rounds = 0
        cdef bint changed = True
        cdef double bound = self._outlier_bound()    # 2, or inf in the warm-up
        self._open_budget()                          # departure step_budget
        while changed:                               # steps 9, 27
            rounds += 1
            if rounds > ROUNDS_MAX and not self.hold_out:   # the paper form's guard
                with gil:
                    raise RuntimeError(
                        f"Alg. 1 steps 9-27 did not end after {CCCP_ROUNDS_MAX} rounds at "
                        f"arrival {self.n_seen - 1}: V cycles as printed (departure hold_out)")
            self.n_cccp_rounds += 1
            self._optimize_on_v()
            n_removed = 0
            changed = False
            for p in range(self.n):
                if self.dead[p]:
                    continue
                if self.g[p] <= bound and not self.in_v[p] and not self.held[p]:
                    self.in_v[p] = 1
                    self._thresholds(p)
                    changed = True
                elif self.g[p] > bound and self.in_v[p]:
                    self.in_v[p] = 0
                    self._thresholds(p)
                    self._hold(p)                    # hold_out (not in the paper)
                    self.tmp_pos[n_removed] = p
                    n_removed += 1
                    changed = True
            for p in range(n_removed):
                self._unlearn(self.tmp_pos[p])
        return self._close_budget()                  # departure step_budget

    # ------------------------------------------------------------------ departure step_budget
    cdef inline void _open_budget(self) noexcept nogil:
        """Steps 9-27 begin: their budget of step 10-15 iterations, nothing cut yet (the
        reference's ``_open_budget``, refsvm/ramp/departures/step_budget.py)."""
        cdef double live = <double> (self.n - self.n_dead + 10)
        self.budget_left = self.step_budget * (live * live)
        self.cut = CUT_NONE
        self.update_work = 0.0
        self.poll_work = POLL_WORK                   # a long update looks at once

    cdef inline bint _cut_short(self) noexcept nogil:
        """At the top of each iteration of steps 10-15: True when the loop must end now
        (the reference's ``_cut_short``).  The look for a signal takes the GIL: only in
        an update that has done CUT_WORK of work, then every POLL_WORK, not every
        iteration."""
        if self.cut == CUT_NONE:
            self.budget_left -= 1.0
            if self.budget_left < 0.0:
                self.cut = CUT_BUDGET
            else:
                self.update_work += <double> self.n
                if self.update_work >= CUT_WORK:
                    self.poll_work += <double> self.n
                    if self.poll_work >= POLL_WORK:
                        self.poll_work = 0.0
                        self.cut = self._poll_signals()
        return self.cut != CUT_NONE

    cdef int _poll_signals(self) noexcept nogil:
        """CUT_SIGNAL when the stream driver holds a signal back, CUT_RAISED (the exception
        kept for the end of steps 9-27) when a signal handler raised, else CUT_NONE."""
        with gil:
            try:
                PyErr_CheckSignals()
                if _signal_held():
                    return CUT_SIGNAL
            except BaseException as exc:
                self.cut_exc = exc
                return CUT_RAISED
        return CUT_NONE

    cdef int _close_budget(self) except -1 nogil:
        """Steps 9-27 end: a spent budget raises (the reference's ``_close_budget``), and
        so does a signal handler's exception caught while the update ran."""
        cdef int cut = self.cut
        self.cut = CUT_NONE
        if cut == CUT_BUDGET:
            with gil:
                raise RuntimeError(
                    f"OnlineSVMR: steps 10-15 did not end within the budget of "
                    f"{self.step_budget:g} (|I| + 10)^2 iterations at arrival "
                    f"{self.n_seen - 1} (|I| = {self.n - self.n_dead}): the update was cut "
                    "short there (the model is consistent; are its kernel rows those of its "
                    "rows?)")
        if cut == CUT_RAISED:
            with gil:
                exc, self.cut_exc = self.cut_exc, None
                raise exc
        return 0

    # ------------------------------------------------------------------ Algorithm 2
    cdef int _removal_step(self) except -1 nogil:
        """Keep at most m non-SVs, dropping those with the largest |1 - g| (oldest first on ties).

        Removed examples become tombstones (``dead``): out of I for every later step (no
        reassignment, no kernel evaluation, not in any read-out) and compacted away once they
        are a quarter of the buffers, so that the cost of compaction is amortised.  The
        reference compacts at once; the observable state is the same."""
        cdef Py_ssize_t p, cnt = 0, n_drop, j, k, best
        cdef RemKey tmp
        cdef long long m = self.max_non_sv, grown
        if m < 0:
            return 0
        for p in range(self.n):                  # the live non-SVs, without a branch
            self.tmp_keys[cnt].key = fabs(1.0 - self.g[p])
            self.tmp_keys[cnt].id = self.ids[p]
            self.tmp_keys[cnt].pos = p
            cnt += (self.alpha[p] == 0.0) & (self.dead[p] == 0)
        if self.budget_per_sv > 0.0:
            # departure budget_per_sv: m grows with #SV (the live positions not in X)
            grown = <long long> (self.budget_per_sv * <double> (self.n - self.n_dead - cnt))
            if grown > m:
                m = grown
        if cnt <= m:
            return 0
        n_drop = cnt - <Py_ssize_t> m
        if n_drop <= 8:
            # usually one or two to drop (one arrival since the last removal): selection by
            # scans in the order of the sort (largest key first, then the lowest id)
            for j in range(n_drop):
                best = j
                for k in range(j + 1, cnt):
                    if _cmp_rem(&self.tmp_keys[k], &self.tmp_keys[best]) < 0:
                        best = k
                tmp = self.tmp_keys[j]
                self.tmp_keys[j] = self.tmp_keys[best]
                self.tmp_keys[best] = tmp
        else:
            qsort(self.tmp_keys, cnt, sizeof(RemKey), _cmp_rem)
        for j in range(n_drop):
            p = self.tmp_keys[j].pos
            if self.krow[p] != NULL:
                self._free_row(p)                # a parked row goes with its example
            self.dead[p] = 1
            self.in_v[p] = 0
            self._thresholds(p)
            self.held[p] = 0
        self.n_dead += n_drop
        self.n_removed += n_drop
        if self.n_dead > 64 and 4 * self.n_dead > self.n:
            self._compact()
        return 0

    cdef int _compact(self) except -1 nogil:
        """Drop the tombstones from every buffer and kernel row (positions keep id order)."""
        cdef Py_ssize_t p, j, n_keep = 0, old_len, new_len
        cdef double* row
        if self.n_dead == 0:
            return 0
        for p in range(self.n):
            if not self.dead[p]:
                self.tmp_pos[n_keep] = p
                n_keep += 1
        self.store.keep(self.tmp_pos, n_keep)
        for j in range(n_keep):
            p = self.tmp_pos[j]
            self.ids[j] = self.ids[p]
            self.y[j] = self.y[p]
            self.alpha[j] = self.alpha[p]
            self.g[j] = self.g[p]
            self.qdiag[j] = self.qdiag[p]
            self.in_v[j] = self.in_v[p]
            self.held[j] = self.held[p]
            self.ut[j] = self.ut[p]
            self.lt[j] = self.lt[p]
            self.dead[j] = 0
            self.touched[j] = 0
            self.rlen[j] = self.rlen[p]
            self.pstamp[j] = self.pstamp[p]
            self.krow[j] = self.krow[p]
            if p != j:
                self.krow[p] = NULL
        for j in range(n_keep, self.n):
            self.krow[j] = NULL       # removed examples' rows were freed at removal
        for j in range(n_keep):
            row = self.krow[j]
            if row != NULL:
                old_len = self.rlen[j]
                new_len = 0
                for p in range(n_keep):
                    if self.tmp_pos[p] >= old_len:
                        break
                    row[p] = row[self.tmp_pos[p]]
                    new_len += 1
                self.rlen[j] = new_len
        self.n = n_keep
        self.n_dead = 0
        self.n_compactions += 1
        return 0

    # ------------------------------------------------------------------ arrival
    cdef int _observe_stored(self) except -1 nogil:
        """f(x) for the example just appended to the store (row self.n)."""
        cdef Py_ssize_t p, j, n = self.n, n_sym = 0
        cdef double f = 0.0, v
        for p in range(n):                       # the SVs, in order, without a branch
            self.svpos[n_sym] = p
            n_sym += self.alpha[p] != 0.0
        self._k_many(n, self.svpos, n_sym, self.kval)          # k(x_p, x) for the SVs
        for j in range(n_sym):
            p = self.svpos[j]
            v = self.kval[j]
            self.pending_kx[p] = v
            f += (self.y[p] * self.alpha[p]) * v
        self.pending_f = f
        self.pending_nsv = n_sym
        self.pending = True
        return 0

    cdef int _begin_observe(self) except -1 nogil:
        if self.pending:
            self.store.n_rows = self.n       # drop the previous, unlabelled observation
            self.pending = False
        self._reserve(self.n + 1)
        return 0

    cdef int _label(self, double yy) except -1 nogil:
        """Alg. 1 steps 3-28 (+ Algorithm 2); 1 when f changed (some alpha moved), else 0."""
        cdef Py_ssize_t p, j, new = self.n, n_sym = self.pending_nsv
        cdef long long moves = self.n_steps + self.n_unlearned
        cdef double q
        cdef double** krow = self.krow
        cdef const Py_ssize_t* sv = self.svpos
        self.pending = False
        q = self._k(new, new)                                      # step 3: Q_ii
        # the kept rows are those of the support vectors: extend each by k(x_p, x_new)
        # (one cache miss per row, fetched a few rows ahead)
        for j in range(n_sym):
            if j + 8 < n_sym:
                refsvm_ramp_prefetch(&krow[sv[j + 8]][new])
            p = sv[j]
            krow[p][new] = sgn(yy) * self.pending_kx[p]
            self.rlen[p] = new + 1
        self.ids[new] = self.n_seen
        self.y[new] = yy
        if yy != 1.0 and yy != -1.0:
            self.unit_y = False
        self.alpha[new] = 0.0
        self.g[new] = 1.0 - yy * self.pending_f
        self.qdiag[new] = q
        self.in_v[new] = 0
        self.held[new] = 0
        self.dead[new] = 0
        self.touched[new] = 0
        self._thresholds(new)
        self.krow[new] = NULL
        self.rlen[new] = 0
        self.pstamp[new] = -1
        self.n += 1
        self.n_seen += 1
        self.gain_stopped = False
        if 0.0 <= self.g[new] <= self._outlier_bound():          # step 4
            self.n_updates += 1
            for p in range(new + 1):
                self.held[p] = 0
            self.in_v[new] = 1                                    # step 5
            self._thresholds(new)
            self._coordinate_step(new)                           # steps 6-8
            self._cccp()                                         # steps 9-27
        else:
            self._end_of_warmup()                                # warmup (not in the paper)
        self._removal_step()                                     # Algorithm 2
        if self.keep_rows:
            self._evict_parked()
        self._rewarm()                                           # rewarm (not in the paper)
        return 1 if self.n_steps + self.n_unlearned != moves else 0

    cdef inline void _rewarm(self) noexcept nogil:
        """After an arrival: more than ``rewarm`` unlearnings per arrival so far (or a
        stretch before) start a hinge stretch up to arrival ``rewarm_growth`` times the
        examples seen, at most ``rewarm_max`` arrivals on (departure ``rewarm``; the
        reference's ``_rewarm``, refsvm/ramp/departures/rewarm.py)."""
        if (self.rewarm > 0.0 and self.n_seen > self.hinge_until
                and self.n_seen >= self.rewarm_after
                and (self.hinge_until > self.warmup
                     or <double> self.n_unlearned > self.rewarm * <double> self.n_seen)):
            self.hinge_until = self.rewarm_growth * self.n_seen
            if self.rewarm_max and self.hinge_until > self.n_seen + self.rewarm_max:
                self.hinge_until = self.n_seen + self.rewarm_max

    cdef inline void _end_rewarm(self) noexcept nogil:
        """A hinge stretch (not the warm-up) under way ends now (the reference's
        ``_end_rewarm``)."""
        if self.warmup < self.hinge_until and self.n_seen <= self.hinge_until:
            self.hinge_until = self.n_seen - 1

    cdef int _observe_dense(self, const double* x) except -1 nogil:
        self._begin_observe()
        self.store.append_dense(x)
        return self._observe_stored()

    cdef int _observe_csr(self, const int* idx, const double* val, Py_ssize_t nnz) except -1 nogil:
        self._begin_observe()
        self.store.append_csr(idx, val, nnz)
        return self._observe_stored()

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        """One example of the stream: Alg. 1 steps 2-28 (+ Algorithm 2)."""
        if self.sparse:
            self._observe_csr(xi, xv, nnz)
        else:
            self._observe_dense(xv)
        return self._label(y)

    # ------------------------------------------------------------------ Python API
    def observe(self, x):
        """Receive x, return f(x) (Eq. 4); x waits for :meth:`label` or :meth:`skip`."""
        cdef const double[::1] xd, xv
        cdef const int[::1] xi
        if self.sparse:
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            self._observe_csr(&xi[0] if xi.shape[0] else NULL,
                              &xv[0] if xv.shape[0] else NULL, xi.shape[0])
        else:
            xd = np.ascontiguousarray(x, dtype=np.float64)
            if xd.shape[0] != self.n_features:
                raise ValueError("row of the wrong length")
            self._observe_dense(&xd[0])
        return self.pending_f

    def skip(self):
        """Drop the observed example (never labelled)."""
        if self.pending:
            self.store.n_rows = self.n
            self.pending = False

    def label(self, double y):
        """Alg. 1 steps 3-28 (+ Algorithm 2) for the observed example; 1 if f changed."""
        if not self.pending:
            raise RuntimeError("label() needs a preceding observe()")
        return self._label(y)

    def finish(self, double min_gain):
        """The finishing step after the stream (see the reference): steps 9-27 on the
        examples kept with the gain threshold ``min_gain``, then Algorithm 2; 1 if f
        changed."""
        if self.pending:
            raise RuntimeError("finish() between observe() and label()")
        if not self.departures["finish"]:
            return 0
        return self._finish(min_gain)

    cdef int _finish(self, double min_gain) except -1 nogil:
        cdef long long moves = self.n_steps + self.n_unlearned
        cdef double online_gain = self.min_gain
        cdef Py_ssize_t p
        self.min_gain = min_gain
        self.gain_stopped = False
        for p in range(self.n):                                  # as at an update
            self.held[p] = 0
        self._end_rewarm()                                       # rewarm: the bound 2
        try:
            self._cccp()                                         # steps 9-27
        finally:
            self.min_gain = online_gain
        self._removal_step()                                     # Algorithm 2
        if self.keep_rows:
            self._evict_parked()
        return 1 if self.n_steps + self.n_unlearned != moves else 0

    @property
    def outlier_bound(self):
        return self._outlier_bound()

    @property
    def n_kernel_evals(self):
        return self.kernel.n_evals

    def decision_function(self, X):
        """f(x) (Eq. 4) for every row; not counted."""
        cdef Py_ssize_t p
        cdef double[::1] coef = np.empty(self.n)
        for p in range(self.n):
            coef[p] = self.y[p] * self.alpha[p]
        out = self.store.expansion(self.kernel, coef, X)
        if self.fit_intercept:
            out = out + self.intercept()
        return out

    def intercept(self):
        """b = sum_i y_i alpha_i with ``fit_intercept``, else 0.0 (see the reference)."""
        cdef Py_ssize_t p
        cdef double b = 0.0
        if not self.fit_intercept:
            return 0.0
        for p in range(self.n):
            if not self.dead[p]:
                b += self.y[p] * self.alpha[p]
        return b

    # ------------------------------------------------------------------ read-outs
    def _alive(self):
        """Buffer positions of the members of I (tombstones left out), in increasing id."""
        return np.array([p for p in range(self.n) if not self.dead[p]], dtype=np.intp)

    def _arr(self):
        live = self._alive()
        ids = np.array([self.ids[p] for p in live], dtype=np.int64)
        y = np.array([self.y[p] for p in live], dtype=np.float64)
        alpha = np.array([self.alpha[p] for p in live], dtype=np.float64)
        g = np.array([self.g[p] for p in live], dtype=np.float64)
        qdiag = np.array([self.qdiag[p] for p in live], dtype=np.float64)
        in_v = np.array([self.in_v[p] != 0 for p in live], dtype=bool)
        held = np.array([self.held[p] != 0 for p in live], dtype=bool)
        return ids, y, alpha, g, qdiag, in_v, held

    def support(self):
        """(ids, y * alpha, rows) of the support vectors, in increasing id."""
        ids, y, alpha, g, qdiag, in_v, held = self._arr()
        sv = np.flatnonzero(alpha != 0.0)
        return ids[sv].copy(), y[sv] * alpha[sv], self.store.to_matrix(rows=self._alive()[sv])

    def get_state(self):
        ids, y, alpha, g, qdiag, in_v, held = self._arr()
        cached = np.array([self.ids[p] for p in self._alive() if self.krow[p] != NULL],
                          dtype=np.int64)
        parked = [p for p in self._alive() if self.krow[p] != NULL and self.pstamp[p] >= 0]
        parked = np.array([self.ids[p] for p in sorted(parked, key=lambda p: self.pstamp[p])],
                          dtype=np.int64)
        return {
            "I": ids,
            "V": ids[in_v].copy(),
            "held": ids[held].copy(),
            "alpha": alpha,
            "g": g,
            "y": y,
            "qdiag": qdiag,
            "support": ids[alpha != 0.0].copy(),
            "cached": cached,
            "parked": parked,
            "n_seen": self.n_seen,
            "n_updates": self.n_updates,
            "n_steps": self.n_steps,
            "n_cccp_rounds": self.n_cccp_rounds,
            "n_unlearned": self.n_unlearned,
            "n_removed": self.n_removed,
            "n_gain_stops": self.n_gain_stops,
            "n_row_builds": self.n_row_builds,
            "n_shrink_rounds": self.n_shrink_rounds,
            "n_shrunk": self.n_shrunk,
            "gain_stopped": bool(self.gain_stopped),
            "hinge_until": self.hinge_until,
            "n_kernel_evals": self.kernel.n_evals,
        }

    def kernel_rows(self):
        """The kept kernel rows as {example id: row over I} (copies; for tests); a parked
        row over the prefix of I it holds."""
        cdef Py_ssize_t p
        live = self._alive()
        out = {}
        for p in live:
            if self.krow[p] != NULL:
                out[int(self.ids[p])] = np.array([sgn(self.y[k]) * self.krow[p][k]
                                                  for k in live if k < self.rlen[p]])
        return out

    # ------------------------------------------------------------------ persistence
    # The format both twins share (see OnlineSVMR.save_state of the reference).  An
    # observation waiting for label() is not saved; nor is the twin-only n_compactions.
    def init_params(self):
        k = self.kernel
        return dict(n_features=self.n_features, sparse=bool(self.sparse), C=self.C,
                    kernel=k.kind, gamma=k.gamma, degree=k.degree, coef0=k.coef0, tol=self.tol,
                    min_gain=self.min_gain, max_non_sv=self.max_non_sv,
                    shrinking=bool(self.shrinking), shrink_margin=self.shrink_margin,
                    fit_intercept=bool(self.fit_intercept), stop=self.stop,
                    keep_rows=bool(self.keep_rows), warmup=self.warmup,
                    departures=dict(self.departures))

    def save_state(self):
        """get_state(), plus the rows of I and the kept kernel rows (in the order of
        ``cached``, unsigned, over I)."""
        data = self.get_state()
        rows = self.kernel_rows()
        lengths = np.array([rows[int(i)].shape[0] for i in data["cached"]], dtype=np.int64)
        out = np.zeros((lengths.shape[0], data["I"].shape[0]))
        for r, i in enumerate(data["cached"]):
            out[r, :lengths[r]] = rows[int(i)]
        data["kernel_rows"] = out
        data["row_lengths"] = lengths
        data.update(rows_to_state(self.store.to_matrix(rows=self._alive()), self.sparse))
        return data

    def load_state(self, data):
        cdef Py_ssize_t p, k, r, n = len(data["I"])
        ids = np.asarray(data["I"], dtype=np.int64)
        y = np.asarray(data["y"], dtype=np.float64)
        alpha = np.asarray(data["alpha"], dtype=np.float64)
        g = np.asarray(data["g"], dtype=np.float64)
        qdiag = np.asarray(data["qdiag"], dtype=np.float64)
        in_v = np.isin(ids, data["V"])
        held = np.isin(ids, data["held"])
        rows = np.asarray(data["kernel_rows"], dtype=np.float64)
        lengths = np.asarray(data.get("row_lengths", np.full(rows.shape[0], n)), dtype=np.intp)
        position = {int(i): p for p, i in enumerate(ids)}
        if self.sparse:
            X = sp.csr_matrix((np.asarray(data["rows_data"], np.float64),
                               np.asarray(data["rows_indices"], np.int32),
                               np.asarray(data["rows_indptr"])), shape=(n, self.n_features))
            X.indices = X.indices.astype(np.int32)
        else:
            X = np.ascontiguousarray(data["rows"], dtype=np.float64).reshape(n, self.n_features)
        self._reserve(n + 1)
        for p in range(n):
            self.store.append(X, p)
            self.ids[p] = ids[p]
            self.y[p] = y[p]
            if y[p] != 1.0 and y[p] != -1.0:
                self.unit_y = False
            self.alpha[p] = alpha[p]
            self.g[p] = g[p]
            self.qdiag[p] = qdiag[p]
            self.in_v[p] = 1 if in_v[p] else 0
            self.held[p] = 1 if held[p] else 0
            self.dead[p] = 0
            self.touched[p] = 0
            self.rlen[p] = 0
            self.pstamp[p] = -1
            self._thresholds(p)
        self.n = n
        for r, i in enumerate(data["cached"]):
            p = position[int(i)]
            self.krow[p] = <double*> malloc(self.capacity * sizeof(double))
            if self.krow[p] == NULL:
                raise MemoryError()
            self.rlen[p] = lengths[r]
            for k in range(lengths[r]):
                self.krow[p][k] = sgn(y[k]) * rows[r, k]
        self.n_parked = 0
        self.park_clock = 0
        for i in data.get("parked", ()):
            p = position[int(i)]
            self.pstamp[p] = self.park_clock
            self.park_clock += 1
            self.n_parked += 1
        self.n_seen = data["n_seen"]
        self.n_updates = data["n_updates"]
        self.n_steps = data["n_steps"]
        self.n_cccp_rounds = data["n_cccp_rounds"]
        self.n_unlearned = data["n_unlearned"]
        self.n_removed = data["n_removed"]
        self.n_gain_stops = data["n_gain_stops"]
        self.n_row_builds = data["n_row_builds"]
        self.n_shrink_rounds = data["n_shrink_rounds"]
        self.n_shrunk = data["n_shrunk"]
        self.gain_stopped = data["gain_stopped"]
        self.hinge_until = data.get("hinge_until", self.warmup)     # older states: warmup
        self.kernel.n_evals = data["n_kernel_evals"]
