"""Compiled twin of :mod:`refsvm.idsvm.incremental_svm` (Cauwenberghs & Poggio incremental/decremental SVM).

Same class (``IncrementalSVMState``), same attributes and methods, the same
order of operations and tie-breaking as the reference, so that the two agree
after every increment and decrement up to round-off.  The whole stream of
:meth:`IncrementalSVMState.run` runs without the GIL.

Layout: the examples in a :class:`refsvm._core.RowStore`; per example y,
alpha, g, k(x, x), sqrt |k(x, x)| and the set code in the core's holder ``part``
(:class:`refsvm._core.Partition`), whose buffers the loops read through pointer copies
taken again after every growth; the margin set ``ms``, the core's
:class:`refsvm._core.MarginSet`: S, the kernel column k(x_i, x_s) of every margin
vector s (one malloc'd column each, indexed by example id), the inverse R of the
bordered matrix (row-major, leading dimension ``ms.ld``), |S| = ``ms.ns``, the spare
column buffers.  The twin keeps beside it the bordered matrix ``Mb`` (same leading
dimension), from which it forms R afresh.

The printed method's constants come from ``refsvm/idsvm/constants.py`` (read when this
module is imported); the departures' settings from the state's ``departures``
(``refsvm.idsvm.departures.DEPARTURES``), read into the struct ``dep`` when the state is
made.  ``departures="paper"`` runs the printed increments here as in the reference.
"""
from libc.math cimport INFINITY, fabs, fmax, isfinite, sqrt
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memmove, memset

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

from refsvm._core cimport (
    KernelSpec, CKernel, RowStore, StreamLearner, EventChoice, ColumnCache, MarginSet, Partition,
    grow,
    bordered_beta_sym,
    bordered_drift, bordered_symmetrize, rows_matvec,
    kernel_many, refsvm_cols_matvec, refsvm_cols_to_rows, refsvm_rows_to_cols, refsvm_max,
    refsvm_max_abs,    refsvm_join_scan,
    bordered_pivot, event_least_index, event_smaller,
    event_start, event_take, event_tied, pivot_bound, pivot_doubtful, pivot_is_zero,
    pivot_round_off_scale, lu_inverse, margin_g, polish_add_column, polish_balance,
    polish_newton, snap_margin, engine_join, engine_leave, engine_column, KKTLevels,
    kkt_levels, kkt_verdict)
from cpython.exc cimport PyErr_CheckSignals
from refsvm.core.stream import answer_held_signals as _answer_held_signals, LONG_WORK as _LONG_WORK, POLL_WORK as _POLL_WORK
from refsvm.core.departures import resolve
from refsvm.core.exactness import kkt_sentence
from refsvm.core import exactness as _core_exactness
from refsvm.core.kernels import Kernel, SparseRow
from refsvm.idsvm import constants as _constants
from refsvm.idsvm.departures import DEPARTURES
from refsvm.idsvm.departures.exactness import ExactnessError
from refsvm.idsvm.departures.steep_ties import STEEP_SPAN as _STEEP_SPAN
from refsvm.idsvm.state_format import kkt_diagnostics, state_arrays

cnp.import_array()

# The printed method's constants, read from their one home (refsvm/idsvm/constants.py)
# when the module is imported: set codes, event kinds, zero tests and tie windows.
cdef long long STEEP_SPAN = _STEEP_SPAN   # (departures/steep_ties.py)
cdef signed char GONE = _constants.GONE
cdef signed char REST = _constants.REST
cdef signed char MARGIN = _constants.MARGIN
cdef signed char ERROR = _constants.ERROR
cdef signed char OUT = _constants.OUT
# the codes whose column entries an arrival already holds (``_column``'s mode 1)
cdef int GIVEN_SE = (1 << MARGIN) | (1 << ERROR)
cdef int EV_C_MARGIN = _constants.EV_C_MARGIN
cdef int EV_C_BOUND = _constants.EV_C_BOUND
cdef int EV_C_ZERO = _constants.EV_C_ZERO
cdef int EV_S_OUT = _constants.EV_S_OUT
cdef int EV_JOIN = _constants.EV_JOIN
cdef double EPS_RATE = _constants.EPS_RATE
cdef double EPS_GAMMA = _constants.EPS_GAMMA
cdef double EPS_G = _constants.EPS_G
cdef double EPS_ALPHA = _constants.EPS_ALPHA
cdef double EPS_RESIDUE = _constants.EPS_RESIDUE
cdef double EPS_DOUBT = _constants.EPS_DOUBT
cdef double EPS_PIVOT_SCALE = _constants.EPS_PIVOT_SCALE
cdef double EPS_PIVOT_ABS = _constants.EPS_PIVOT_ABS
cdef long long STEPS_PER_EXAMPLE = _constants.STEPS_PER_EXAMPLE
cdef double EPS_MACH = _constants.EPS_MACH
cdef int KKT_G = _core_exactness.KKT_G
cdef int KKT_H = _core_exactness.KKT_H

# Ctrl-C inside an operation (see the reference's departures/rollback.py,
# ``_answer_signals``): the adiabatic loop runs the signal handlers (with the GIL) after
# every POLL_WORK of work (passes times n (|S| + 1): about a millisecond), not at every
# pass, and delivers a signal the stream driver holds back once the operation has done
# LONG_WORK of work (about 0.1 s: the reference's LONG_STEP seconds counted as work); the
# code an operation returns when a signal handler raised there (rolled back, then raised)
cdef double POLL_WORK = _POLL_WORK
# the core's sweep (refsvm/_csrc/refsvm_rows.c): blocks of SWEEP_BLOCK rows while the
# columns (8 n |S| bytes) are at most SWEEP_STREAM bytes; _rates keeps to them
cdef Py_ssize_t SWEEP_BLOCK = 256
cdef Py_ssize_t SWEEP_STREAM = 4 << 20
cdef double LONG_WORK = _LONG_WORK
cdef enum:
    RC_SIGNAL = 7

#: the constants as this module read them (the test that they are the home's)
CONSTANTS = {
    "GONE": GONE, "REST": REST, "MARGIN": MARGIN, "ERROR": ERROR, "OUT": OUT,
    "EV_C_MARGIN": EV_C_MARGIN, "EV_C_BOUND": EV_C_BOUND, "EV_C_ZERO": EV_C_ZERO,
    "EV_S_OUT": EV_S_OUT, "EV_JOIN": EV_JOIN,
    "EPS_RATE": EPS_RATE, "EPS_GAMMA": EPS_GAMMA, "EPS_G": EPS_G, "EPS_ALPHA": EPS_ALPHA,
    "EPS_RESIDUE": EPS_RESIDUE, "EPS_DOUBT": EPS_DOUBT, "EPS_PIVOT_SCALE": EPS_PIVOT_SCALE,
    "EPS_PIVOT_ABS": EPS_PIVOT_ABS, "STEPS_PER_EXAMPLE": STEPS_PER_EXAMPLE,
    "EPS_MACH": EPS_MACH,
}


cdef struct Departures:
    # the settings of refsvm.idsvm.departures.DEPARTURES, per state (the reference's
    # ``self.departures[name]`` is ``self.dep.name`` here)
    int refine
    double refine_tol
    double refactor_above
    int repair
    double repair_tol
    bint check
    double kkt_tol
    bint polish
    double polish_above
    int tie_ulps
    int alpha_ulps
    int repair_ulps
    int kkt_ulps
    int h_ulps
    int snap_ulps
    bint drift_refresh
    double drift_tol
    bint column_cache
    bint centre_bias
    int steep_ties
    bint repair_balance


cdef int _fail(const char* msg) except -1 with gil:
    raise RuntimeError(msg.decode())


cdef int _nomem() except -1 with gil:
    raise MemoryError()


cdef int _fail_exact(int code, Py_ssize_t c, bint loo, double worst, Py_ssize_t v,
                     double h, int repairs) except -1 with gil:
    """Raise ExactnessError after a rollback (the messages of the reference; those of the
    check, codes 3 and 4, the core's ``kkt_sentence``)."""
    if code == 2:
        msg = "the step budget of the operation ran out (cycling?)"
    elif code == 5:
        msg = "no event limits the increment (unbounded: round-off at a degenerate point)"
    else:
        msg = kkt_sentence(KKT_G if code == 3 else KKT_H, worst, h, None, v, repairs=repairs,
                           h_name="sum_i y_i alpha_i", first=True)
    if loo:
        raise ExactnessError(f"IncrementalSVM: leave-one-out of example {c}: {msg}; the model "
                             "was rolled back to the one before it", c)
    raise ExactnessError(f"IncrementalSVM: example {c}: {msg}; the operation was rolled back "
                         "(the state is exactly the one before it)", c)


cdef class IncrementalSVMState(StreamLearner):
    """Exact incremental/decremental SVM state (compiled twin of
    :class:`refsvm.idsvm.incremental_svm.IncrementalSVMState`; see there for the method)."""

    cdef readonly double C, tol
    cdef readonly dict departures   # the resolved settings (refsvm.core.departures.resolve)
    cdef Departures dep             # ... read into C once, when the state is made
    cdef readonly long refresh_every
    cdef public RowStore store
    cdef public CKernel kern
    cdef str kind               # the kernel's name (the reference's kernel.kind)
    cdef readonly double cache_size, gamma, coef0
    cdef readonly int degree
    # per example: the core's holder of the partition's arrays (n = part.n, ids 0..n-1;
    # its own array kroot = sqrt |k(x, x)|, the per-example scale of the rates), and the
    # pointers to its buffers the loops read, taken again after every growth (_reserve_n,
    # the one place the holder grows)
    cdef Partition part
    cdef double* y
    cdef double* alpha
    cdef double* g
    cdef double* kdiag
    cdef double* kroot
    cdef signed char* status
    cdef Py_ssize_t cap         # the room of the per-example scratch below (= part.cap)
    # margin set, its kernel columns and the inverse of the bordered matrix
    cdef MarginSet ms           # S, its kernel columns KS, R and the spare column buffers
    cdef Py_ssize_t caps        # the room of the scratch below (members of S)
    # work buffers
    cdef double* beta
    cdef double* m
    cdef double* w
    cdef double* r
    cdef double* col
    cdef double* col2
    cdef double* tb             # the join steps computed by _events pass 1 ...
    cdef Py_ssize_t* tlist      # ... and their examples (ascending)
    cdef Py_ssize_t ntl
    cdef Py_ssize_t* idx        # ids whose kernel value is to be evaluated ...
    cdef double* kv             # ... and their values (kernel_many)
    cdef signed char* blk       # left dependent on S by an exchange: no candidate until S changes
    cdef Py_ssize_t* blist
    cdef Py_ssize_t nblk, capblk
    cdef bint back              # the direction of the next rates sweep (refsvm_cols_matvec)
    cdef Py_ssize_t joined      # the example that just joined S by a plain join, or -1 ...
    cdef Py_ssize_t* saved      # ... and the marks (blist) before its join
    cdef Py_ssize_t nsaved, capsaved
    cdef double* lu
    cdef double* Mb             # the bordered matrix M (as R: row-major, ms.ld)
    cdef double* rho            # the residual M beta + m (see _refine) ...
    cdef double* dbeta          # ... and the correction -Rinv rho
    cdef double* rp             # row p of R while S[p - 1] leaves S
    cdef double** rows          # pointers to the rows of R or M (rows_matvec)
    cdef double* gs             # g of the margin vectors (see _move_g)
    cdef double rbound          # an upper bound of max|R| (INFINITY: unknown; see _leave_scale)
    cdef Py_ssize_t ngone       # unlearned examples
    # spare kernel-column buffers of length cap (columns that left S), reused for joins
    cdef int* ipiv
    # column cache (the departure ``column_cache``: refsvm/idsvm/departures/column_cache.py;
    # the core's, keeping copies of the columns it is given)
    cdef ColumnCache cache
    cdef readonly double b, kscale
    cdef readonly long long n_increments, n_decrements, n_iterations, n_exchanges
    cdef readonly long long n_refresh_failed, n_pivot_refresh
    cdef bint fresh             # R inverted from scratch, S unchanged since
    cdef bint refined           # the last pass's beta needed a correction (_refined_rates)
    cdef double cscale          # the scale of the candidate's pivot (see _adiabatic)
    cdef double amax, aother    # the scales of alpha and g (see _scales) and the tie
    cdef double ea, eg          # windows EPS_ALPHA alpha_max, EPS_G g_scale
    cdef readonly long long max_steps, steps_left   # the step budget of an operation
    cdef double poll_work                           # work since the last look for a signal
    cdef double op_work                             # work of the operation under way
    cdef object abandoned                           # RC_SIGNAL: the handler's exception
    cdef readonly long long n_repairs, n_rollbacks
    # the snapshot an operation rolls back to (see _snapshot)
    cdef double* snap_alpha
    cdef double* snap_g
    cdef signed char* snap_status
    cdef Py_ssize_t* snap_S
    cdef double* snap_R
    cdef Py_ssize_t snap_cap, snap_caps, snap_n, snap_ns, snap_ngone
    cdef double snap_b, snap_kscale, snap_drift, snap_amax, snap_mass
    cdef double mass            # sum_i alpha_i (see _scales; the g tolerances above polish_above)
    cdef bint snap_fresh, snap_refined
    cdef long long snap_nsc, snap_nref
    cdef double fail_worst, fail_h     # what the check found (see _repair_and_check)
    cdef Py_ssize_t fail_v
    cdef readonly long long n_s_changes, n_refresh
    cdef readonly double max_inverse_drift

    def __cinit__(self):
        self.rbound = INFINITY
        self.part = Partition(("kroot",))
        self._take_arrays()
        self.ms = MarginSet()
        self.beta = NULL
        self.m = NULL
        self.w = NULL
        self.r = NULL
        self.col = NULL
        self.col2 = NULL
        self.tb = NULL
        self.tlist = NULL
        self.idx = NULL
        self.kv = NULL
        self.ntl = 0
        self.blk = NULL
        self.blist = NULL
        self.nblk = 0
        self.capblk = 0
        self.joined = -1
        self.saved = NULL
        self.nsaved = 0
        self.capsaved = 0
        self.lu = NULL
        self.Mb = NULL
        self.rho = NULL
        self.dbeta = NULL
        self.snap_alpha = NULL
        self.snap_g = NULL
        self.snap_status = NULL
        self.snap_S = NULL
        self.snap_R = NULL
        self.snap_cap = 0
        self.snap_caps = 0
        self.rp = NULL
        self.rows = NULL
        self.gs = NULL
        self.ngone = 0
        self.ipiv = NULL
        self.cache = ColumnCache()
        self.cap = 0
        self.caps = 0

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, tol=1e-12, refresh_every=100, cache_size=200.0, max_steps=0,
                 departures=None):
        self.departures = resolve(DEPARTURES, departures)
        d = self.departures
        self.dep.refine = d["refine"]
        self.dep.refine_tol = d["refine_tol"]
        self.dep.refactor_above = d["refactor_above"]
        self.dep.repair = d["repair"]
        self.dep.repair_tol = d["repair_tol"]
        self.dep.check = d["check"]
        self.dep.kkt_tol = d["kkt_tol"]
        self.dep.polish = d["polish"]
        self.dep.polish_above = d["polish_above"]
        self.dep.tie_ulps = d["tie_ulps"]
        self.dep.alpha_ulps = d["alpha_ulps"]
        self.dep.repair_ulps = d["repair_ulps"]
        self.dep.kkt_ulps = d["kkt_ulps"]
        self.dep.h_ulps = d["h_ulps"]
        self.dep.snap_ulps = d["snap_ulps"]
        self.dep.drift_refresh = d["drift_refresh"]
        self.dep.drift_tol = d["drift_tol"]
        self.dep.column_cache = d["column_cache"]
        self.dep.centre_bias = d["centre_bias"]
        self.dep.steep_ties = d["steep_ties"]
        self.dep.repair_balance = d["repair_balance"]
        self.n_features = int(n_features)
        self.max_steps = int(max_steps)
        self.steps_left = 0
        self.n_repairs = 0
        self.n_rollbacks = 0
        self.cache_size = float(cache_size)
        self.cache.budget = int(float(cache_size) * 2**20) if self.dep.column_cache else 0
        self.sparse = bool(sparse)
        self.C = float(C)
        self.tol = float(tol)
        self.refresh_every = int(refresh_every)
        self.kind = str(kernel)
        self.gamma = float(gamma)
        self.degree = int(degree)
        self.coef0 = float(coef0)
        self.kern = CKernel(kernel, float(gamma), int(degree), float(coef0))
        self.store = RowStore(self.n_features, self.sparse)
        self.b = 0.0
        self.kscale = 0.0
        self.n_increments = 0
        self.n_decrements = 0
        self.n_iterations = 0
        self.n_exchanges = 0
        self.n_refresh_failed = 0
        self.n_pivot_refresh = 0
        self.fresh = False
        self.refined = False
        self.cscale = 0.0
        self.n_s_changes = 0
        self.n_refresh = 0
        self.max_inverse_drift = 0.0
        self._reserve_s(4)
        self._reserve_n(16)

    def __dealloc__(self):
        free(self.beta)
        free(self.m)
        free(self.w)
        free(self.r)
        free(self.col)
        free(self.col2)
        free(self.tb)
        free(self.tlist)
        free(self.idx)
        free(self.kv)
        free(self.blk)
        free(self.blist)
        free(self.saved)
        free(self.lu)
        free(self.Mb)
        free(self.rho)
        free(self.dbeta)
        free(self.rows)
        free(self.snap_alpha)
        free(self.snap_g)
        free(self.snap_status)
        free(self.snap_S)
        free(self.snap_R)
        free(self.rp)
        free(self.gs)
        free(self.ipiv)

    # ------------------------------------------------------------------ storage
    cdef void _take_arrays(self) noexcept nogil:
        """The pointers to the holder's buffers (after it grew)."""
        self.y = self.part.y
        self.alpha = self.part.alpha
        self.g = self.part.g
        self.kdiag = self.part.kdiag
        self.kroot = self.part.extra[0]
        self.status = self.part.status

    cdef int _reserve_n(self, Py_ssize_t need) except -1 nogil:
        """Room for ``need`` examples in the partition's arrays (the core's holder:
        capacity max(need, 2 cap, 16)) and in every per-example scratch buffer (the
        core's ``grow`` to the same capacity)."""
        cdef Py_ssize_t cap, i, c, old = self.cap
        if need <= self.cap:
            return 0
        self.part.reserve(need)
        self._take_arrays()
        cap = self.part.cap
        c = old
        grow(<void**> &self.r, &c, cap, sizeof(double))
        c = old
        grow(<void**> &self.col, &c, cap, sizeof(double))
        c = old
        grow(<void**> &self.col2, &c, cap, sizeof(double))
        c = old
        grow(<void**> &self.tb, &c, cap, sizeof(double))
        c = old
        grow(<void**> &self.tlist, &c, cap, sizeof(Py_ssize_t))
        c = old
        grow(<void**> &self.idx, &c, cap, sizeof(Py_ssize_t))
        c = old
        grow(<void**> &self.kv, &c, cap, sizeof(double))
        c = old
        grow(<void**> &self.blk, &c, cap, sizeof(signed char))
        for i in range(self.cap, cap):
            self.blk[i] = 0
        self.cache.reserve(cap)
        self.ms.reserve_rows(cap)      # S's columns (the spares of the old length go)
        self.cap = cap
        return 0

    cdef int _reserve_s(self, Py_ssize_t need) except -1 nogil:
        """Room for ``need`` margin vectors (R of size need + 1) and the scratch; M keeps
        its entries at R's new leading dimension."""
        cdef Py_ssize_t ld, old_ld = self.ms.ld, i, j, c, old = 0   # (grow: at least need)
        cdef double* new_m
        if need <= self.caps:
            return 0
        self.ms.reserve(need)
        ld = self.ms.ld
        new_m = <double*> malloc(ld * ld * sizeof(double))
        if new_m == NULL: _nomem()
        if self.Mb != NULL:
            for i in range(self.ms.ns + 1):
                for j in range(self.ms.ns + 1):
                    new_m[i * ld + j] = self.Mb[i * old_ld + j]
            free(self.Mb)
        else:
            new_m[0] = 0.0
        self.Mb = new_m
        c = old
        grow(<void**> &self.beta, &c, ld, sizeof(double))
        c = old
        grow(<void**> &self.m, &c, ld, sizeof(double))
        c = old
        grow(<void**> &self.w, &c, ld, sizeof(double))
        c = old
        grow(<void**> &self.gs, &c, ld, sizeof(double))
        c = old
        grow(<void**> &self.rp, &c, ld, sizeof(double))
        c = old
        grow(<void**> &self.rho, &c, ld, sizeof(double))
        c = old
        grow(<void**> &self.dbeta, &c, ld, sizeof(double))
        c = old
        grow(<void**> &self.rows, &c, ld, sizeof(double*))
        c = old
        grow(<void**> &self.lu, &c, ld * ld, sizeof(double))
        c = old
        grow(<void**> &self.ipiv, &c, ld, sizeof(int))
        self.caps = self.ms.caps
        return 0

    cdef Py_ssize_t _store_row(self, double yc) except -1 nogil:
        """The row just appended to the store becomes example c (alpha 0, status OUT)."""
        cdef Py_ssize_t c
        self._reserve_n(self.part.n + 1)
        c = self.part.new_example(yc, OUT)    # alpha, g, kroot 0
        self.kdiag[c] = 0.0
        self.ms.zero_rows(c, c + 1)
        return c

    cdef int _cache_put(self, Py_ssize_t i, const double* col) except -1 nogil:
        """Keep the kernel column of i (length n) in the cache (a copy); the oldest go
        beyond the budget (none with the departure ``column_cache`` off)."""
        return self.cache.put(i, <double*> col, self.part.n, self.part.n, False)

    cdef int _column(self, Py_ssize_t c, double* out, int mode) except -1 nogil:
        """k(x_i, x_c) for every id into ``out`` (0 for unlearned ids; the core's
        ``engine_column``, the reference's ``_column``).  mode 0: evaluate all; mode 1:
        the S and E values are already in ``out`` (arrival); mode 2: take the S values
        from the margin set's columns (row c).  c's cached column (its first L ids)
        comes first and leaves the cache."""
        cdef Py_ssize_t L = 0
        cdef const double* cached = self.cache.peek(c, &L)
        engine_column(self.ms, self.kern, self.store, c, self.part.n, self.status, self.kdiag[c],
                      out, cached, min(L, self.part.n), True, NULL, NULL, 0,
                      GIVEN_SE if mode == 1 else 0, mode == 2, self.ngone != 0, False,
                      self.idx, self.kv)
        self.cache.drop(c)
        return 0

    # ------------------------------------------------------------------ inverse R
    cdef int _grow_inverse(self, Py_ssize_t i, double kappa, const double* col,
                           bint from_empty) except -1 nogil:
        """Add i to S (Eq. 8, the core's ``engine_join``); beta^(i) must be in self.beta
        (unless from_empty); then row and column of i in the bordered matrix M."""
        cdef Py_ssize_t ns = self.ms.ns
        cdef double* newcol
        cdef double bmax
        self._reserve_s(ns + 1)
        # the bound of max|R| after Eq. 8: each entry gains sign(kappa) u_a u_b, |u_a| <=
        # max(1, max|beta|) / sqrt|kappa|, each product and sum rounded (a few ulps: the
        # factor 1 + 1e-12 covers them)
        if from_empty:
            bmax = INFINITY
        else:
            bmax = refsvm_max_abs(self.beta, ns + 1, 1.0)
            bmax = (self.rbound + (bmax * bmax) / fabs(kappa) * (1.0 + 1e-12)) * (1.0 + 1e-12)
        # the column: the work buffer it is in becomes S's (a spare one replaces it)
        if col == <const double*> self.col:
            newcol = self.col
            self.col = self.ms.pool_get()
        elif col == <const double*> self.col2:
            newcol = self.col2
            self.col2 = self.ms.pool_get()
        else:
            newcol = self.ms.pool_get()
            memcpy(newcol, col, self.part.n * sizeof(double))
        # (S = {i}: [[0, y_i], [y_i, Q_ii]]^-1 = [[-Q_ii, y_i], [y_i, 0]])
        engine_join(self.ms, i, MARGIN, self.status, self.y, self.kdiag[i], self.beta, kappa,
                    newcol)
        self.rbound = bmax if bmax < INFINITY else INFINITY     # (NaN: unknown)
        self._border(ns)
        self.fresh = False
        self._s_changed()
        return 0

    cdef void _border(self, Py_ssize_t a) noexcept nogil:
        """Row and column a + 1 of the bordered matrix M (those of the margin vector
        S[a]), entries as in _bordered."""
        cdef Py_ssize_t bb, ld = self.ms.ld, ns = self.ms.ns, sa = self.ms.S[a]
        cdef double ya = self.y[sa]
        cdef double* M = self.Mb
        M[0] = 0.0
        M[a + 1] = ya
        M[(a + 1) * ld] = ya
        for bb in range(ns):
            M[(a + 1) * ld + bb + 1] = (ya * self.y[self.ms.S[bb]]) * self.ms.KS[bb][sa]
            M[(bb + 1) * ld + a + 1] = (self.y[self.ms.S[bb]] * ya) * self.ms.KS[a][self.ms.S[bb]]

    cdef int _shrink_inverse(self, Py_ssize_t pos, signed char code, double value,
                             bint at_bound) except -1 nogil:
        """Remove S[pos] with status ``code`` (the core's ``engine_leave``): at a bound
        (at_bound) alpha = value and its column to the cache; R_ij <- R_ij - R_ip R_pj /
        R_pp (Eq. 9), drop row/column p, of R and of M."""
        cdef Py_ssize_t ns = self.ms.ns, a, q, ld
        cdef double mx, after
        cdef bint rebuild
        # a nearly singular reduced matrix is inverted afresh below
        mx = self._leave_scale(pos, &after)
        rebuild = engine_leave(self.ms, pos, code, self.status,
                               self.alpha if at_bound else NULL, value, self.cache, at_bound,
                               self.part.n, self.part.n, False, EPS_RATE, mx)
        self.rbound = after if not rebuild and ns > 1 and after < INFINITY else INFINITY
        # M without row and column pos + 1
        ld = self.ms.ld
        for a in range(ns + 1):
            if a == pos + 1:
                continue
            q = a - (a > pos + 1)
            if q != a:
                memmove(self.Mb + q * ld, self.Mb + a * ld, (pos + 1) * sizeof(double))
            memmove(self.Mb + q * ld + pos + 1, self.Mb + a * ld + pos + 2,
                    (ns - pos - 1) * sizeof(double))
        self.fresh = False
        if ns > 1 and rebuild:
            self._invert_bordered(self.ms.R, &mx)
            self.fresh = True
        self._s_changed()
        return 0

    cdef double _leave_scale(self, Py_ssize_t pos, double* after) noexcept nogil:
        """The scale of the downdate's singularity test |R_pp| <= EPS_RATE scale (p = pos +
        1), whose only use is that test: max|R| (``bordered_max_abs``, O(|S|^2)) only when
        the bound ``rbound`` of it cannot decide, else the bound itself (|R_pp| > EPS_RATE
        rbound >= EPS_RATE max|R|: refused by neither, the same shrink).  ``after``: the
        bound after the downdate (each entry loses R_ap R_pb / R_pp, a few ulps more)."""
        cdef Py_ssize_t nn = self.ms.ns + 1, ld = self.ms.ld, p = pos + 1, a
        cdef double rpp = self.ms.R[p * ld + p], mx = self.rbound, rmax, cmax = 0.0
        if not fabs(rpp) > EPS_RATE * mx:
            mx = self.ms.max_abs()
        rmax = refsvm_max_abs(self.ms.R + p * ld, nn, 0.0)
        for a in range(nn):
            if fabs(self.ms.R[a * ld + p]) > cmax:
                cmax = fabs(self.ms.R[a * ld + p])
        after[0] = (mx + (rmax * cmax) / fabs(rpp) * (1.0 + 1e-12)) * (1.0 + 1e-12)
        return mx

    cdef int _invert_bordered(self, double* out, double* scale, bint soft=False) except -1 nogil:
        """out <- inverse of [[0, y_S'], [y_S, Q_SS]] by LAPACK getrf + getri (row-major,
        leading dimension ldr); scale <- max |entry| of the inverse.  A singular matrix
        raises, or (soft) returns 1 leaving out untouched."""
        cdef int nn = <int> (self.ms.ns + 1), info
        cdef Py_ssize_t a, bb, ld = self.ms.ld
        cdef double* A = self.lu
        if out == self.ms.R:
            self.rbound = INFINITY
        for a in range(nn):
            for bb in range(nn):
                A[a + bb * nn] = self.Mb[a * ld + bb]
        info = lu_inverse(A, nn, self.ipiv, out, ld)
        if info == 1:
            if soft:
                return 1
            _fail("singular bordered matrix")
        if info == 2:
            _fail("getri failed")
        if info == 3:
            _nomem()
        # exactly symmetric (the updates keep it so; beta reads R's rows as columns)
        bordered_symmetrize(out, ld, nn)
        scale[0] = 0.0
        for a in range(nn):
            for bb in range(nn):
                if fabs(out[a * ld + bb]) > scale[0]:
                    scale[0] = fabs(out[a * ld + bb])
        return 0

    cdef int _s_changed(self) except -1 nogil:
        """S changed: counted; every ``refresh_every`` changes the drift of R is probed
        (O(|S|^2), the core's ``bordered_drift``) and R recomputed (O(|S|^3)) above
        ``drift_tol`` (the departure ``drift_refresh``)."""
        cdef double drift
        cdef double* u
        self.n_s_changes += 1
        if self.dep.drift_refresh and self.refresh_every and self.ms.ns and self.n_s_changes % self.refresh_every == 0:
            u = <double*> malloc(2 * (self.ms.ns + 1) * sizeof(double))
            if u == NULL: _nomem()
            drift = bordered_drift(self.ms.R, self.ms.ld, self.ms.ns, self.y, self.ms.S,
                                   self.ms.KS, u, u + self.ms.ns + 1)
            free(u)
            if not drift <= self.dep.drift_tol:
                self._refresh()
        return 0

    cdef double _refresh(self) except -1 nogil:
        cdef Py_ssize_t nn = self.ms.ns + 1, a, bb, ld = self.ms.ld
        cdef double scale = 0.0, d, drift = 0.0
        cdef double* fresh
        if self.ms.ns == 0:
            return 0.0
        fresh = <double*> malloc(ld * ld * sizeof(double))
        if fresh == NULL: _nomem()
        if self._invert_bordered(fresh, &scale, True):
            # numerically singular S (degenerate data): keep the updated inverse
            free(fresh)
            self.n_refresh_failed += 1
            return 0.0
        self.rbound = INFINITY
        for a in range(nn):
            for bb in range(nn):
                d = fabs(fresh[a * ld + bb] - self.ms.R[a * ld + bb])
                if d > drift:
                    drift = d
                self.ms.R[a * ld + bb] = fresh[a * ld + bb]
        free(fresh)
        drift = drift / scale if scale > 0 else 0.0
        if drift > self.max_inverse_drift:
            self.max_inverse_drift = drift
        self.fresh = True
        self.n_refresh += 1
        return drift

    cdef bint _fresh_inverse(self) except -1 nogil:
        """R recomputed from the cached columns unless fresh already (a doubtful pivot);
        returns whether R changed (refsvm/idsvm/departures/refinement.py, ``_fresh_inverse``)."""
        cdef double scale
        if self.fresh or self.ms.ns == 0:
            return False
        if self._invert_bordered(self.ms.R, &scale, True):
            return False
        self.fresh = True
        self.n_pivot_refresh += 1
        return True

    cdef double _pivot_bound(self, Py_ssize_t i) noexcept nogil:
        """The O(k) upper bound of _pivot_scale (refsvm._core.pivot_bound: border y_S,
        roots sqrt|k(x_s, x_s)|)."""
        return pivot_bound(self.kdiag[i], self.beta, self.ms.ns, self.y, self.kroot, self.ms.S)

    cdef double _pivot_scale(self, Py_ssize_t i) noexcept nogil:
        """|Q_ii| + |beta|' |M| |beta| for beta = self.beta, M the bordered matrix (built
        row-major in the scratch buffer lu; refsvm._core.pivot_round_off_scale)."""
        return pivot_round_off_scale(self.kdiag[i], self.beta, self.Mb, self.ms.ld,
                                     self.ms.ns + 1)

    cdef void _bordered(self, double* M) noexcept nogil:
        """M <- [[0, y_S'], [y_S, Q_SS]] (row-major, leading dimension k + 1), Q_ab =
        (y_a y_b) k(x_a, x_b) read from the cached columns."""
        cdef Py_ssize_t a, bb, ns = self.ms.ns, nn = self.ms.ns + 1, sa
        cdef double ya
        M[0] = 0.0
        for bb in range(ns):
            M[bb + 1] = self.y[self.ms.S[bb]]
        for a in range(ns):
            sa = self.ms.S[a]
            ya = self.y[sa]
            M[(a + 1) * nn] = ya
            for bb in range(ns):
                M[(a + 1) * nn + bb + 1] = (ya * self.y[self.ms.S[bb]]) * self.ms.KS[bb][sa]

    cdef double _pivot(self, Py_ssize_t i) noexcept nogil:
        """kappa_i = Q_ii + m' beta (m, beta of i in self.m, self.beta)."""
        return bordered_pivot(self.kdiag[i], self.m, self.beta, self.ms.ns + 1)

    # ------------------------------------------------------------------ sensitivities
    cdef void _form_m(self, Py_ssize_t i) noexcept nogil:
        """m = [y_i; Q_Si] into self.m (the margin set's ``m_of``)."""
        self.ms.m_of(i, self.y, self.m)

    cdef double _resid_scale(self) noexcept nogil:
        """max|m| + max(1, k_max) sum|beta|: a bound of max(|M||beta| + |m|), the scale of
        the residual's terms, as |M_ab| <= max(1, k_max) (self.m, self.beta)."""
        cdef Py_ssize_t a
        cdef double mmax = 0.0, bsum = 0.0
        for a in range(self.ms.ns + 1):
            if fabs(self.m[a]) > mmax:
                mmax = fabs(self.m[a])
            bsum += fabs(self.beta[a])
        return mmax + max(1.0, self.kscale) * bsum

    cdef int _beta(self, Py_ssize_t i) except -1 nogil:
        """m = [y_i; Q_Si], beta = -R m (Eq. 5); refined (the departure ``refine``, the
        reference's ``_refined_beta``)."""
        self._form_m(i)
        bordered_beta_sym(self.ms.R, self.ms.ld, self.ms.ns + 1, self.m, self.beta,
                          self.rows)
        if not self.dep.refine:
            return 0
        if self._refine() > self.dep.refactor_above and self._fresh_inverse():
            bordered_beta_sym(self.ms.R, self.ms.ld, self.ms.ns + 1, self.m, self.beta,
                              self.rows)
            self._refine()
        return 0

    cdef int _refined_rates(self, Py_ssize_t c, const double* col, double sign) except -1 nogil:
        """beta of c (self.m and the printed beta = -R m in self.beta) refined (as _beta)
        and the rates r from it, the residual of the margin rows read from the rates:
        rho_{a+1} = gamma_{S_a} = sign r_{S_a}, rho_0 = y_S' beta_S + y_c; against M first
        (_residual) after a pass that needed a correction (``refined``); R refactorised
        and the whole once more when refinement does not converge (the departure
        ``refine``: refsvm/idsvm/departures/refinement.py)."""
        cdef Py_ssize_t nn = self.ms.ns + 1, a, it = 0, attempt
        cdef double rmax = 0.0, smax, acc
        cdef bint explicit
        for attempt in range(2):
            if attempt:
                bordered_beta_sym(self.ms.R, self.ms.ld, nn, self.m, self.beta, self.rows)
            smax = self._resid_scale()
            if smax == 0.0:
                self._rates(c, col, sign)
                return 0
            explicit = self.refined
            for it in range(self.dep.refine + 1):
                if explicit:
                    self._residual()
                else:
                    self._rates(c, col, sign)
                    acc = 0.0
                    for a in range(nn - 1):
                        acc += self.y[self.ms.S[a]] * self.beta[a + 1]
                    self.rho[0] = acc + self.y[c]
                    for a in range(nn - 1):
                        self.rho[a + 1] = sign * self.r[self.ms.S[a]]
                if self._correct(smax, it == self.dep.refine, &rmax):
                    break
                explicit = False
            self.refined = it > 0
            if explicit:
                self._rates(c, col, sign)
            if attempt or not rmax / smax > self.dep.refactor_above or \
                    not self._fresh_inverse():
                return 0
        return 0

    cdef double _refine(self) noexcept nogil:
        """Iterative refinement of beta = -M^-1 m (self.beta, self.m) against the bordered
        matrix M itself: rho = M beta + m, beta <- beta - Rinv rho, at most ``refine`` times,
        until max|rho| <= refine_tol (max|m| + max(1, k_max) sum|beta|) (a bound of
        max(|M||beta| + |m|) from the first beta, as |M_ab| <= max(1, k_max)).  Returns the
        relative residual (refsvm/idsvm/departures/refinement.py, ``_refine``)."""
        cdef Py_ssize_t it
        cdef double rmax = 0.0, smax = self._resid_scale()
        if smax == 0.0:
            return 0.0
        for it in range(self.dep.refine + 1):
            self._residual()
            if self._correct(smax, it == self.dep.refine, &rmax):
                break
        return rmax / smax

    cdef bint _correct(self, double smax, bint last, double* rmax) noexcept nogil:
        """One step of the refinement of beta: rmax = max|rho| (self.rho, the residual M
        beta + m); 1 when it is at most max(refine_tol, (ns + 2) u) smax (the round-off of
        its own sums, refinement.py's ``_correct``) or this was the ``last`` check, else
        beta <- beta - Rinv rho and 0 (_refine, _refined_rates)."""
        cdef Py_ssize_t nn = self.ms.ns + 1, a
        rmax[0] = 0.0
        for a in range(nn):
            if fabs(self.rho[a]) > rmax[0]:
                rmax[0] = fabs(self.rho[a])
        if rmax[0] <= fmax(self.dep.refine_tol, <double> (nn + 1) * (0.5 * EPS_MACH)) * smax or last:
            return 1
        bordered_beta_sym(self.ms.R, self.ms.ld, nn, self.rho, self.dbeta, self.rows)
        for a in range(nn):
            self.beta[a] = self.beta[a] + self.dbeta[a]
        return 0

    cdef void _residual(self) noexcept nogil:
        """rho = M beta + m, as the reference's matvec(M.T, beta) + m: M's rows (contiguous)
        taken as the columns of M' (M is symmetric up to the kernel's round-off), each sum
        from 0 left to right, vectorised across the entries (the core's rows_matvec)."""
        cdef Py_ssize_t nn = self.ms.ns + 1, a
        rows_matvec(self.rho, self.Mb, self.ms.ld, nn, self.beta, self.rows)
        for a in range(nn):
            self.rho[a] = self.rho[a] + self.m[a]

    cdef int _rates(self, Py_ssize_t c, const double* col, double sign) except -1 nogil:
        """r_i = sign * gamma_i (Eq. 7) for every example (those in S are not used).

        gamma_i = y_i ((y_c col_i + sum_j KS_ij w_j) + beta_b), w_j = beta_j y_{S_j}, the
        sum from 0.0 left to right in j (the reference's order, bit for bit): the core's
        sweep over the kernel columns (``refsvm_cols_matvec``, eight columns per pass, AVX-512F
        or AVX2 where the CPU has it, its row blocks walked the other way at every other step to
        meet the parts of the columns still cached; the same sweep as POKER's
        sensitivities), then gamma: of each block of rows as soon as it is summed while
        the columns fit the caches, else after the whole sweep."""
        cdef Py_ssize_t n = self.part.n, ns = self.ms.ns, i, j, blk, nb, lo, hi
        cdef double yc = self.y[c], bb = self.beta[0]
        cdef double* r = self.r
        cdef double* y = self.y
        cdef double** part = self.rows
        for j in range(ns):
            self.w[j] = self.beta[j + 1] * self.y[self.ms.S[j]]
        if 8 * n * ns > SWEEP_STREAM:
            refsvm_cols_matvec(r, self.ms.KS, self.w, ns, n, self.back)
            lo, hi = 0, n
        else:
            # columns that stay in the caches: the sweep a block of rows at a time (the
            # block of the core's sweep), each block's gamma while it is in L1
            nb = (n + SWEEP_BLOCK - 1) // SWEEP_BLOCK
            for blk in range(nb):
                lo = (nb - 1 - blk if self.back else blk) * SWEEP_BLOCK
                hi = min(lo + SWEEP_BLOCK, n)
                for j in range(ns):
                    part[j] = self.ms.KS[j] + lo
                refsvm_cols_matvec(r + lo, part, self.w, ns, hi - lo, False)
                for i in range(lo, hi):
                    r[i] = sign * (y[i] * ((yc * col[i] + r[i]) + bb))
            lo, hi = 0, 0
        self.back = not self.back           # the next sweep the other way (the same sums)
        for i in range(lo, hi):
            r[i] = sign * (y[i] * ((yc * col[i] + r[i]) + bb))
        return 0

    # ------------------------------------------------------------------ the adiabatic loop
    cdef int _adiabatic(self, Py_ssize_t c, double sign, double* col) except -1 nogil:
        """Move alpha_c up (sign=+1) or down to 0 (sign=-1): the four steps of each pass
        as in refsvm.idsvm.incremental_svm._adiabatic."""
        cdef double rb, rtb, rt0
        cdef EventChoice ev
        cdef int rc
        cdef long long zero_run = 0         # zero-length steps in a row
        self._clear_dependent()
        self.joined = -1
        while True:
            if self.steps_left <= 0:
                return 2                    # the budget is spent (see _snapshot)
            self.steps_left -= 1
            self.poll_work += <double> self.part.n * <double> (self.ms.ns + 1)
            self.op_work += <double> self.part.n * <double> (self.ms.ns + 1)
            if self.poll_work >= POLL_WORK and self._answer_signals():
                return RC_SIGNAL            # Ctrl-C: rolled back, then raised
            self.n_iterations += 1
            self._sensitivities(c, sign, col, &rb, &rtb, &rt0)
            rc = self._limiting_event(c, sign, rtb, rt0, &ev, self._steep_ties(zero_run))
            if rc:
                return rc                   # 5: no event limits the increment
            zero_run = zero_run + 1 if ev.t == 0.0 else 0
            self._increment(c, sign, ev.t, rb)
            if self._change_membership(c, sign, col, &ev):
                return 0

    cdef int _sensitivities(self, Py_ssize_t c, double sign, const double* col, double* rb,
                            double* rtb, double* rt0) except -1 nogil:
        """beta (self.beta), the rates r (self.r) and the pivot scale (self.cscale); rb =
        the rate of b, rtb and rt0 the terms of the rates' round-off level EPS_GAMMA
        (sqrt(k_ii) rtb + rt0) (refsvm.idsvm.incremental_svm._sensitivities)."""
        cdef Py_ssize_t i, pos, n = self.part.n, ns = self.ms.ns
        cdef double kappa, bsum
        if ns == 0:
            rb[0] = sign * self.y[c]
            for i in range(n):
                self.r[i] = self.y[i] * rb[0]
            rtb[0] = 0.0
            rt0[0] = 0.0
            return 0
        self._form_m(c)
        bordered_beta_sym(self.ms.R, self.ms.ld, ns + 1, self.m, self.beta, self.rows)  # Eq. 5
        if self.dep.refine:
            self._refined_rates(c, col, sign)   # refsvm/idsvm/departures/refinement.py
        else:
            self._rates(c, col, sign)           # Eq. 7
        if sign > 0:
            # the pivot gamma_c and its scale (the bound unless the pivot is small
            # against it); a doubtful one from a fresh R
            kappa = self._pivot(c)
            self.cscale = self._pivot_bound(c)
            if pivot_doubtful(kappa, self.cscale, EPS_DOUBT):
                self.cscale = self._pivot_scale(c)
        rb[0] = sign * self.beta[0]
        bsum = 0.0
        for pos in range(ns):
            bsum += fabs(self.beta[pos + 1]) * self.kroot[self.ms.S[pos]]
        rtb[0] = self.kroot[c] + bsum
        rt0[0] = fabs(self.beta[0])
        return 0

    cdef bint _steep_ties(self, long long zero_run) noexcept nogil:
        """The tie of the next step goes by the rates (departure ``steep_ties``:
        refsvm/idsvm/departures/steep_ties.py)."""
        cdef long long k = self.dep.steep_ties
        return k > 0 and k <= zero_run and zero_run < (STEEP_SPAN + 1) * k

    cdef int _limiting_event(self, Py_ssize_t c, double sign, double rtb, double rt0,
                             EventChoice* ev, bint steep=False) except -1 nogil:
        """The largest increment that changes no membership and its event: pass 1 the
        smallest step, pass 2 the first event (fixed order) within its window eps/|rate|
        of it (refsvm.idsvm.incremental_svm._limiting_event)."""
        cdef Py_ssize_t ns = self.ms.ns
        self._scales(c)
        self._events(c, sign, ns, rtb, rt0, INFINITY, ev)
        if ev.kind >= 0:
            self._events(c, sign, ns, rtb, rt0, ev.t, ev, steep)
        if ev.kind < 0 and sign < 0 and \
                self.alpha[c] <= self._a_tol(EPS_RESIDUE, max(self.aother, self.snap_amax)):
            ev.t = 0.0                      # round-off residue (see the reference)
            event_take(ev, EV_C_ZERO, c)
        if ev.kind < 0:
            return 5                        # unbounded: rolled back (see the reference)
        return 0

    cdef void _increment(self, Py_ssize_t c, double sign, double t, double rb) noexcept nogil:
        """alpha_c, alpha_S, b and every g outside S move by the increment t (Eqs. 3-7)."""
        cdef Py_ssize_t pos, s, ns = self.ms.ns
        if ns > 0:
            self.alpha[c] += sign * t
            if self.alpha[c] < 0.0:
                self.alpha[c] = 0.0
            elif self.alpha[c] > self.C:
                self.alpha[c] = self.C
            for pos in range(ns):
                s = self.ms.S[pos]
                self.alpha[s] += (sign * self.beta[pos + 1]) * t
                # a step chosen among round-off ties may overshoot a bound by an ulp
                if self.alpha[s] < 0.0:
                    self.alpha[s] = 0.0
                elif self.alpha[s] > self.C:
                    self.alpha[s] = self.C
        self.b += rb * t
        self._move_g(t)

    cdef int _change_membership(self, Py_ssize_t c, double sign, double* col,
                                const EventChoice* ev) except -1 nogil:
        """The membership change of the limiting event (sets and inverse, Eqs. 8-9);
        returns 1 when the operation on c is over.  An example that joined S and leaves
        it at the next pass by a zero step is held back (see the reference)."""
        cdef Py_ssize_t pos, dep, q, i = ev.index, joined = self.joined
        cdef long long changes
        cdef double kappa
        self.joined = -1
        if ev.kind == EV_C_MARGIN:
            if self.alpha[c] <= 0.0:
                self.alpha[c] = 0.0
                self.status[c] = REST
                self._cache_put(c, col)
            elif self.ms.ns == 0:
                self._grow_inverse(c, 0.0, col, True)
            else:
                kappa = self.r[c] * sign
                self._grow_inverse(c, kappa, col, False)
            return 1
        if ev.kind == EV_C_BOUND:
            self.alpha[c] = self.C
            self.status[c] = ERROR
            self._cache_put(c, col)
            return 1
        if ev.kind == EV_C_ZERO:
            self.alpha[c] = 0.0
            return 1
        if ev.kind == EV_S_OUT:
            pos = self._s_pos(i)
            self._leave_margin(pos, sign * self.beta[pos + 1] > 0)
            self._clear_dependent()
            if joined >= 0 and joined == i and ev.t == 0.0:
                for q in range(self.nsaved):    # back to the S before i joined
                    self._mark_dependent(self.saved[q])
                self._mark_dependent(i)
            return 0
        # EV_JOIN (g_i keeps the value the increments gave it, as in the reference)
        changes = self.n_s_changes
        grow(<void**> &self.saved, &self.capsaved, self.nblk, sizeof(Py_ssize_t))
        for q in range(self.nblk):
            self.saved[q] = self.blist[q]
        self.nsaved = self.nblk
        dep = self._join(i)
        # (kept if S only swapped one member for a dependent one: see the reference)
        if self.n_s_changes != changes and not (
                self.n_s_changes - changes == 2 and dep >= 0 and dep != i):
            self._clear_dependent()
        if dep >= 0:                        # left dependent on S (see the reference's _join)
            self._mark_dependent(dep)
        if dep < 0 and self.n_s_changes - changes == 1:
            self.joined = i                 # a plain join: i is the last of S
        return 0

    cdef int _mark_dependent(self, Py_ssize_t i) except -1 nogil:
        """i is no join candidate until S changes."""
        grow(<void**> &self.blist, &self.capblk, self.nblk + 1, sizeof(Py_ssize_t))
        self.blist[self.nblk] = i
        self.nblk += 1
        self.blk[i] = 1
        return 0

    cdef int _leave_margin(self, Py_ssize_t pos, bint to_error) except -1 nogil:
        """S[pos] leaves S at a bound: alpha = C (E) or 0 (R)."""
        if to_error:
            self._shrink_inverse(pos, ERROR, self.C, True)
        else:
            self._shrink_inverse(pos, REST, 0.0, True)
        return 0

    cdef void _move_g(self, double t) noexcept nogil:
        """g_i += r_i t for every example outside S that is not unlearned (Eqs. 3-7).
        Without unlearned examples: every g in one branch-free (vectorised) loop, then
        the margin vectors' g put back as they were (the same result)."""
        cdef Py_ssize_t i, j, n = self.part.n, ns = self.ms.ns
        cdef double* g = self.g
        cdef double* r = self.r
        cdef signed char st
        if self.ngone == 0:
            for j in range(ns):
                self.gs[j] = g[self.ms.S[j]]
            for i in range(n):
                g[i] = g[i] + r[i] * t
            for j in range(ns):
                g[self.ms.S[j]] = self.gs[j]
            return
        for i in range(n):
            st = self.status[i]
            if st != MARGIN and st != GONE:
                g[i] += r[i] * t

    cdef void _events(self, Py_ssize_t c, double sign, Py_ssize_t ns, double rtb, double rt0,
                      double tmin, EventChoice* e, bint steep=False) noexcept nogil:
        """Scan the events (see refsvm.idsvm.incremental_svm._first_event; the two passes
        of refsvm._core's least-index choice).  tmin = INFINITY (pass 1): the smallest
        step, first on exact ties; the join steps computed are kept in tb / tlist.
        Otherwise (pass 2): among the events whose step is within its window eps / |rate|
        of tmin, the candidate's own (first in their order), else the margin vector or
        candidate with the least id (with ``steep``, the departure ``steep_ties``: the tied
        margin vector, else candidate, of the smallest window, then the least id); e.t is
        tmin."""
        cdef Py_ssize_t pos, s, i
        cdef double t, a, w, bw = INFINITY, ea = self.ea, eg = self.eg
        cdef bint first = tmin == INFINITY
        event_start(e, tmin)
        if sign > 0:
            if ns == 0 or self.r[c] > max(EPS_PIVOT_SCALE * self.cscale,
                                         EPS_PIVOT_ABS * self.kscale):
                t = -self.g[c] / self.r[c]
                if t < 0.0:
                    t = 0.0
                if first:
                    event_smaller(e, t, EV_C_MARGIN, c)
                elif event_tied(t, tmin, eg / fabs(self.r[c])):
                    event_take(e, EV_C_MARGIN, c)
                    return
            if ns > 0:
                t = self.C - self.alpha[c]
                if t < 0.0:
                    t = 0.0
                if first:
                    event_smaller(e, t, EV_C_BOUND, c)
                elif event_tied(t, tmin, ea):
                    event_take(e, EV_C_BOUND, c)
                    return
        elif ns > 0:
            t = self.alpha[c]
            if t < 0.0:
                t = 0.0
            if first:
                event_smaller(e, t, EV_C_ZERO, c)
            elif event_tied(t, tmin, ea):
                event_take(e, EV_C_ZERO, c)
                return
        for pos in range(ns):
            s = self.ms.S[pos]
            a = sign * self.beta[pos + 1]
            if a > EPS_RATE:
                t = (self.C - self.alpha[s]) / a
            elif a < -EPS_RATE:
                t = -self.alpha[s] / a
            else:
                continue
            if t < 0.0:
                t = 0.0
            if first:
                event_smaller(e, t, EV_S_OUT, s)
                continue
            w = ea / fabs(a)
            if not event_tied(t, tmin, w):
                continue
            if steep:
                if e.index < 0 or w < bw or (w == bw and s < e.index):
                    event_take(e, EV_S_OUT, s)
                    bw = w
            else:
                # least-index rule among the tied margin vectors and candidates
                event_least_index(e, EV_S_OUT, s)
        cdef double* tb = self.tb
        cdef Py_ssize_t* tlist = self.tlist
        cdef Py_ssize_t q, ntl
        cdef double* r = self.r
        cdef double* g = self.g
        cdef signed char* status = self.status
        cdef signed char* blk = self.blk
        cdef double* kroot = self.kroot
        cdef double best
        cdef Py_ssize_t n = self.part.n, bi
        cdef signed char err = ERROR, rest = REST
        if not first:
            # pass 2 reads the steps pass 1 computed, ids ascending (the candidates it
            # skipped are surely beyond their window).  A cheap test skips, without a
            # division, the steps surely beyond their window: (t - tmin) |r| > 4 eg
            # (as t is a float > tmin, fl(tmin + eg/|r|) < t then)
            # (the first tied candidate has the least id among them; it is chosen if its
            # id is below that of the least tied margin vector)
            if steep and e.index >= 0:
                return                      # a tied margin vector leaves first
            for q in range(self.ntl):
                i = tlist[q]
                if not steep and e.index >= 0 and i > e.index:
                    return
                t = tb[q]
                if (t - tmin) * fabs(r[i]) > 4.0 * eg:
                    continue
                w = eg / fabs(r[i])
                if not event_tied(t, tmin, w):
                    continue
                if not steep:
                    event_least_index(e, EV_JOIN, i)
                    return
                if w < bw:                  # ids ascending: the least id on equal windows
                    event_take(e, EV_JOIN, i)
                    bw = w
            return
        # The candidates: E members rising (r > tol_i), R members falling (r < -tol_i),
        # tol_i = EPS_GAMMA (kroot_i rtb + rt0), not held back as dependent on S (blk).
        # With sd = +1 for E, -1 for R (0 otherwise) that is sd r > tol_i,
        # |r| = sd r and -g/r = x/|r| with x = -sd g (all exact).  The division is skipped
        # when t = -g/r surely exceeds best + eg/|r| (it can then be neither the smallest
        # step nor tied with it; same result).  The test is computed without branches on the
        # (unpredictable) set and sign, in one condition that is rarely true (with the rate
        # bound tol0 = EPS_GAMMA rt0 <= tol_i); tol_i itself only for the few that pass.
        # That loop is the core's refsvm_join_scan (where the CPU has AVX2 it skips four
        # entries at a time that the test rejects; each entry decided by the same scalar
        # arithmetic).
        best = e.t
        bi = -1
        ntl = refsvm_join_scan(status, blk, r, g, kroot, n, err, rest, EPS_GAMMA * rt0, eg,
                               EPS_GAMMA, rtb, rt0, &best, &bi, tb, tlist)
        self.ntl = ntl
        if bi >= 0:
            event_smaller(e, best, EV_JOIN, bi)

    cdef void _scales(self, Py_ssize_t c) noexcept nogil:
        """alpha_max (all learned examples), the largest alpha of the others (i != c),
        and the tie windows ea = EPS_ALPHA alpha_max, eg = EPS_G (1 + k_max alpha_max)
        (refsvm.idsvm.incremental_svm._scales)."""
        cdef Py_ssize_t i, n = self.part.n, cut = c if 0 <= c < self.part.n else self.part.n
        cdef double other, rest = 0.0, mass = 0.0, cap
        cdef double* alpha = self.alpha
        # the largest alpha before c and after it (from 0.0, only a greater value counts:
        # the core's vectorised refsvm_max, the same value in every order)
        other = refsvm_max(alpha, cut, 0.0)
        if cut + 1 < n:
            rest = refsvm_max(alpha + cut + 1, n - cut - 1, 0.0)
        other = rest if rest > other else other
        self.aother = other
        self.amax = other
        if cut < n and alpha[cut] > other:
            self.amax = alpha[cut]
        self.ea = EPS_ALPHA * self.amax
        self.eg = EPS_G * (1.0 + self.kscale * self.amax)
        if self._extreme():
            # capped by multiples of the round-off floor (the reference's _a_tol, _g_tol)
            for i in range(n):                   # (left to right, as the reference's _mass)
                mass += alpha[i]
            cap = self.dep.alpha_ulps * EPS_MACH * self.amax
            self.ea = min(self.ea, cap)
            cap = self.dep.tie_ulps * EPS_MACH * (1.0 + fabs(self.b) + self.kscale * mass)
            self.eg = min(self.eg, cap)
        self.mass = mass

    cdef inline bint _extreme(self) noexcept nogil:
        """The departure ``polish`` on and C k_max above ``polish_above`` (the
        reference's ``_extreme``)."""
        return self.dep.polish and self.C * self.kscale > self.dep.polish_above

    cdef double _g_tol(self, double eps, int ulps, double amax, double mass) noexcept nogil:
        """The reference's ``_g_tol``."""
        cdef double tol = eps * (1.0 + self.kscale * amax), cap
        if self._extreme():
            cap = ulps * EPS_MACH * (1.0 + fabs(self.b) + self.kscale * mass)
            tol = min(tol, cap)
        return tol

    cdef double _a_tol(self, double eps, double amax) noexcept nogil:
        """The reference's ``_a_tol``."""
        cdef double tol = eps * amax, cap
        if self._extreme():
            cap = self.dep.alpha_ulps * EPS_MACH * amax
            tol = min(tol, cap)
        return tol

    cdef Py_ssize_t _s_pos(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.ms.ns):
            if self.ms.S[j] == i:
                return j
        return -1

    cdef void _clear_dependent(self) noexcept nogil:
        """S changed: the examples found dependent on it are candidates again."""
        cdef Py_ssize_t q
        for q in range(self.nblk):
            self.blk[self.blist[q]] = 0
        self.nblk = 0

    cdef Py_ssize_t _join(self, Py_ssize_t i) except -2 nogil:
        """i (in R or E, g_i = 0) joins S; degenerate pivots go through an exchange.
        Returns the example the exchange left dependent on the final S, or -1 (see
        refsvm.idsvm.incremental_svm._join)."""
        cdef double kappa, d, best_t, t, a, ea, mag, room
        cdef EventChoice ev
        cdef Py_ssize_t best_pos, pos, s, ns, j, dep = -1
        cdef int new
        cdef bint have_col = False
        cdef signed char st
        while True:
            if self.ms.ns == 0:
                if not have_col:
                    self._column(i, self.col2, 0)
                self._grow_inverse(i, 0.0, self.col2, True)
                return dep
            self._beta(i)
            kappa = self._pivot(i)
            mag = self._pivot_bound(i)
            if pivot_doubtful(kappa, mag, EPS_DOUBT):
                mag = self._pivot_scale(i)
            if not pivot_is_zero(kappa, mag, self.kscale, EPS_PIVOT_SCALE, EPS_PIVOT_ABS):
                if not have_col:
                    self._column(i, self.col2, 2)
                self._grow_inverse(i, kappa, self.col2, False)
                return dep
            self.n_exchanges += 1
            if not have_col:
                self._column(i, self.col2, 2)
                have_col = True
            d = 1.0 if self.status[i] == REST else -1.0
            ns = self.ms.ns
            # the smallest step (alpha_i's own bound C last), then the first event within
            # its window of it (refsvm.idsvm.incremental_svm._first_event)
            self._scales(-1)
            ea = self.ea
            # (alpha_i's room: i may have moved in an earlier exchange of this join)
            room = self.C - self.alpha[i] if d > 0 else self.alpha[i]
            if room < 0.0:
                room = 0.0
            event_start(&ev, room)
            for pos in range(ns):
                s = self.ms.S[pos]
                a = d * self.beta[pos + 1]
                if a > EPS_RATE:
                    t = (self.C - self.alpha[s]) / a
                elif a < -EPS_RATE:
                    t = -self.alpha[s] / a
                else:
                    continue
                if t < 0.0:
                    t = 0.0
                event_smaller(&ev, t, EV_S_OUT, s)
            best_t = ev.t
            # the tied margin vector with the least id (refsvm.idsvm.incremental_svm._join)
            event_start(&ev, best_t)
            for pos in range(ns):
                s = self.ms.S[pos]
                a = d * self.beta[pos + 1]
                if a > EPS_RATE:
                    t = (self.C - self.alpha[s]) / a
                elif a < -EPS_RATE:
                    t = -self.alpha[s] / a
                else:
                    continue
                if t < 0.0:
                    t = 0.0
                if event_tied(t, best_t, ea / fabs(a)):
                    event_least_index(&ev, EV_S_OUT, s)
            best_pos = self._s_pos(ev.index) if ev.index >= 0 else -1
            t = best_t
            self.alpha[i] += d * t
            for pos in range(ns):
                s = self.ms.S[pos]
                self.alpha[s] += (d * self.beta[pos + 1]) * t
                if self.alpha[s] < 0.0:
                    self.alpha[s] = 0.0
                elif self.alpha[s] > self.C:
                    self.alpha[s] = self.C
            self.b += (d * self.beta[0]) * t
            # a null direction up to round-off: g follows it (gamma^(i)) all the same
            self._rates(i, self.col2, d)
            self._move_g(t)
            if best_pos < 0:
                if d > 0:
                    self.alpha[i] = self.C
                    self.status[i] = ERROR
                else:
                    self.alpha[i] = 0.0
                    self.status[i] = REST
                self._cache_put(i, self.col2)
                return i
            dep = self.ms.S[best_pos]
            self._leave_margin(best_pos, d * self.beta[best_pos + 1] > 0)

    cdef int _centre_bias(self) except -1 nogil:
        cdef double lo = -INFINITY, hi = INFINITY, v, new, db
        cdef bint has_lo = False, has_hi = False
        cdef Py_ssize_t i
        cdef signed char st
        if self.ms.ns or not self.dep.centre_bias:
            return 0
        for i in range(self.part.n):
            st = self.status[i]
            v = self.b - self.y[i] * self.g[i]
            if (st == REST and self.y[i] > 0) or (st == ERROR and self.y[i] < 0):
                if not has_lo or v > lo:
                    lo = v
                has_lo = True
            elif (st == REST and self.y[i] < 0) or (st == ERROR and self.y[i] > 0):
                if not has_hi or v < hi:
                    hi = v
                has_hi = True
        if has_lo and has_hi:
            new = 0.5 * (lo + hi)
        elif has_lo:
            new = lo
        elif has_hi:
            new = hi
        else:
            return 0
        db = new - self.b
        self.b = new
        for i in range(self.part.n):
            if self.status[i] != GONE:
                self.g[i] += self.y[i] * db
        return 0

    cdef int _polish(self) except -1 nogil:
        """At large C (``_extreme``) the end of an operation: one step of
        iterative refinement of (b, alpha_S) on residuals summed in twice the working
        precision, then every g so (refsvm/idsvm/departures/polish.py, ``_polish``: the
        core's polish, ``snap_margin``, ``polish_add_column``, ``polish_newton``,
        ``margin_g``, on this family's windows and columns)."""
        cdef Py_ssize_t n = self.part.n, i, j
        cdef double* pe
        cdef double* se
        cdef double w
        if not self._extreme() or n == 0:
            return 0
        for i in range(n):
            if self.status[i] >= 0:
                break
        else:
            return 0                               # (no learned example: as the reference)
        # 0. ulp residues on the margin vectors go to their bound (the reference's _snap)
        self._scales(-1)
        w = self.dep.snap_ulps * EPS_MACH * max(self.amax, self.snap_amax)
        if self.dep.snap_ulps:
            snap_margin(self.ms, self.alpha, self.C, w)
        pe = <double*> malloc(2 * n * sizeof(double))
        if pe == NULL: _nomem()
        se = pe + n
        try:
            for i in range(n):
                pe[i] = 0.0
                se[i] = 0.0
            for j in range(n):                     # the error vectors, ids ascending
                if self.status[j] != ERROR:
                    continue
                self._column(j, self.col2, 2)
                self._cache_put(j, self.col2)
                polish_add_column(pe, se, self.status, self.y, self.alpha[j] * self.y[j],
                                  self.col2, n)
            if self.ms.ns:
                self._scales(-1)                   # (the scale of the operation)
                polish_newton(self.ms, self.status, self.alpha, self.y, &self.b, 1.0,
                              self.C, self.kscale, pe, se, n, w,
                              self.dep.kkt_tol * max(self.amax, self.snap_amax),
                              self.rho, self.dbeta, self.m, self.rows)
                if self.dep.snap_ulps:
                    snap_margin(self.ms, self.alpha, self.C, w)
            for i in range(n):
                if self.status[i] >= 0:
                    self.g[i] = margin_g(self.ms, i, self.alpha, self.y, self.b, 1.0,
                                         pe[i], se[i])
        finally:
            free(pe)
        return 0

    # ------------------------------------------------------------------ operations
    cdef int _learn(self, Py_ssize_t c, int mode) except -1 nogil:
        """mode 1: arrival (S and E values of the column in self.col); mode 3: self.col
        holds the whole column already."""
        if self.g[c] >= -self.tol:
            self.status[c] = REST
            return 0
        if mode != 3:
            self._column(c, self.col, mode)
        return self._adiabatic(c, 1.0, self.col)       # 2: the step budget is spent

    # ------------------------------------------------------------------ departures:
    # snapshot and rollback, repair, the exactness check (refsvm/idsvm/departures/)
    cdef int _snapshot(self, Py_ssize_t keep) except -1 nogil:
        """Start an operation: its step budget, and what it rolls back to (the first
        ``keep`` examples, the margin set, R, b)."""
        cdef Py_ssize_t ns = self.ms.ns, nn = self.ms.ns + 1, a, j, c
        self.steps_left = self.max_steps if self.max_steps > 0 else \
            STEPS_PER_EXAMPLE * (self.part.n + 10)
        self.op_work = 0.0
        if keep > self.snap_cap:
            c = self.snap_cap
            grow(<void**> &self.snap_alpha, &c, keep, sizeof(double))
            c = self.snap_cap
            grow(<void**> &self.snap_g, &c, keep, sizeof(double))
            c = self.snap_cap
            grow(<void**> &self.snap_status, &c, keep, sizeof(signed char))
            self.snap_cap = c
        if nn > self.snap_caps:
            c = self.snap_caps
            grow(<void**> &self.snap_S, &c, nn, sizeof(Py_ssize_t))
            c = self.snap_caps
            grow(<void**> &self.snap_R, &c, nn * nn, sizeof(double))
            self.snap_caps = nn
        memcpy(self.snap_alpha, self.alpha, keep * sizeof(double))
        memcpy(self.snap_g, self.g, keep * sizeof(double))
        memcpy(self.snap_status, self.status, keep * sizeof(signed char))
        for j in range(ns):
            self.snap_S[j] = self.ms.S[j]
        for a in range(nn):
            memcpy(self.snap_R + a * nn, self.ms.R + a * self.ms.ld, nn * sizeof(double))
        self._scales(-1)
        self.snap_amax = self.amax
        self.snap_mass = self.mass
        self.snap_n = keep
        self.snap_ns = ns
        self.snap_ngone = self.ngone
        self.snap_b = self.b
        self.snap_kscale = self.kscale
        self.snap_fresh = self.fresh
        self.snap_refined = self.refined
        self.snap_nsc = self.n_s_changes
        self.snap_nref = self.n_refresh
        self.snap_drift = self.max_inverse_drift
        return 0

    cdef bint _answer_signals(self) noexcept nogil:
        """A pass of the adiabatic loop, after POLL_WORK of work: run the signal handlers
        and deliver a signal the stream driver holds back (the reference's
        ``_answer_signals``) in an operation that has done LONG_WORK of work; True when
        a handler raised (its exception kept for ``_raise_abandoned``, after the
        rollback)."""
        self.poll_work = 0.0
        with gil:
            try:
                PyErr_CheckSignals()
                if self.op_work >= LONG_WORK:
                    _answer_held_signals()
            except BaseException as exc:
                self.abandoned = exc
                return True
        return False

    cdef int _raise_abandoned(self) except -1 nogil:
        """Raise the exception of a signal handler that ended an operation (rolled back)."""
        with gil:
            exc, self.abandoned = self.abandoned, None
            raise exc

    cdef int _rollback(self) except -1 nogil:
        """Back to the snapshot (refsvm/idsvm/departures/rollback.py): the columns of
        the old margin vectors still in S are kept, the others recomputed in the order of
        S (cache first); cached columns cut to the examples kept."""
        cdef Py_ssize_t n = self.snap_n, ns = self.snap_ns, old_n = self.part.n, j, q, s
        cdef Py_ssize_t cur = self.ms.ns
        cdef double** kept = <double**> malloc((ns + 1) * sizeof(double*))
        cdef double* col
        if kept == NULL: _nomem()
        for j in range(ns):
            kept[j] = NULL
            for q in range(cur):
                if self.ms.S[q] == self.snap_S[j] and self.ms.KS[q] != NULL:
                    kept[j] = self.ms.KS[q]
                    self.ms.KS[q] = NULL
                    break
        for q in range(cur):
            if self.ms.KS[q] != NULL:
                self.ms.pool_put(self.ms.KS[q], self.ms.cap)
                self.ms.KS[q] = NULL
        self.ms.ns = 0
        # the examples after the first n (the one being learned) go
        if old_n > n:
            for j in range(n):
                self.idx[j] = j
            self.store.keep(self.idx, n)
        self.part.n = n
        self.cache.cut(n)
        memcpy(self.alpha, self.snap_alpha, n * sizeof(double))
        memcpy(self.g, self.snap_g, n * sizeof(double))
        memcpy(self.status, self.snap_status, n * sizeof(signed char))
        for j in range(n, old_n):
            self.alpha[j] = 0.0
            self.g[j] = 0.0
            self.status[j] = GONE
        self._clear_dependent()
        self.ngone = self.snap_ngone
        self.b = self.snap_b
        self.kscale = self.snap_kscale
        self._reserve_s(ns + 1)
        for j in range(ns):
            s = self.snap_S[j]
            if kept[j] != NULL:
                col = kept[j]
            else:
                col = self.ms.pool_get()
                self._column(s, col, 0)
            self.ms.KS[j] = col
            self.ms.S[j] = s
        free(kept)
        self.ms.ns = ns
        for j in range(ns):
            self._border(j)
        for j in range(ns + 1):
            for q in range(ns + 1):
                self.ms.R[j * self.ms.ld + q] = self.snap_R[j * (ns + 1) + q]
        if ns == 0:
            self.ms.R[0] = 0.0
        self.fresh = self.snap_fresh
        self.refined = self.snap_refined
        self.n_s_changes = self.snap_nsc
        self.n_refresh = self.snap_nref
        self.max_inverse_drift = self.snap_drift
        self.rbound = INFINITY
        self.n_rollbacks += 1
        return 0

    cdef Py_ssize_t _worst_violation(self) noexcept nogil:
        """The example violating its KKT condition most on the kept g (-g in R, g in E,
        |g| in S; the least id on ties); its violation in self.fail_worst."""
        cdef Py_ssize_t i, best = -1
        cdef double v, worst = 0.0
        cdef signed char st
        for i in range(self.part.n):
            st = self.status[i]
            if st == REST:
                v = -self.g[i]
            elif st == ERROR:
                v = self.g[i]
            elif st == MARGIN:
                v = fabs(self.g[i])
            else:
                continue
            if best < 0 or v > worst:
                worst = v
                best = i
        self.fail_worst = worst
        return best

    cdef int _repair_and_check(self, Py_ssize_t c) except -1 nogil:
        """After an operation on c: at most ``repair`` repairs (the worst violation on the
        kept g above ``repair_tol`` g_scale: unlearned and learned again), then (the
        departure ``check``) the exactness check, ``_check_exact``.  0 if the KKT
        conditions hold, 2 if the step budget ran out, 3 or 4 (see ``_check_exact``)
        otherwise; the scales are those of the larger of alpha_max now and before the
        operation (see the reference)."""
        cdef Py_ssize_t it, v = -1
        cdef int rc
        cdef double amax, mass
        cdef bint extreme = self._extreme()
        for it in range(self.dep.repair + 1):
            v = self._worst_violation()
            self._scales(-1)
            amax = max(self.amax, self.snap_amax)
            mass = max(self.mass, self.snap_mass) if extreme else 0.0
            if self.fail_worst <= self._g_tol(self.dep.repair_tol, self.dep.repair_ulps,
                                              amax, mass) or it == self.dep.repair:
                break
            self.n_repairs += 1
            rc = self._unlearn_one(v)
            if rc >= 2:
                return rc
            self._centre_bias()
            rc = self._learn(v, 3 if rc == 1 else 0)
            if rc:
                return rc
            self._polish()
            self._centre_bias()
        if self._repair_balance():          # departures/balance_repair.py
            v = self._worst_violation()
        self.fail_v = v
        if self.dep.check:
            return self._check_exact()
        return 0

    cdef bint _repair_balance(self) noexcept nogil:
        """y'alpha repaired by one step through R's first column when it is above the
        check's level (refsvm/idsvm/departures/balance_repair.py); 1 when taken."""
        cdef KKTLevels levels
        cdef double h, a, step, db
        cdef Py_ssize_t i, j, ns = self.ms.ns, ld = self.ms.ld, n = self.part.n
        cdef double* R = self.ms.R
        cdef signed char st
        if not self.dep.repair_balance or ns == 0 or self._extreme():
            return 0
        h = self._balance_and_levels(&levels)
        if not fabs(h) > levels.h:
            return 0
        for j in range(ns):
            a = self.alpha[self.ms.S[j]] + (-h * R[(j + 1) * ld])
            if a < 0.0 or a > self.C:
                return 0
        self.n_repairs += 1
        for j in range(ns):
            step = -h * R[(j + 1) * ld]
            self.alpha[self.ms.S[j]] = self.alpha[self.ms.S[j]] + step
            self.w[j] = self.y[self.ms.S[j]] * step
        db = -h * R[0]
        self.b += db
        refsvm_cols_matvec(self.r, self.ms.KS, self.w, ns, n, 0)
        for i in range(n):
            st = self.status[i]
            if st != MARGIN and st != GONE:
                self.g[i] += self.y[i] * (self.r[i] + db)
        return 1

    cdef double _balance_and_levels(self, KKTLevels* levels) noexcept nogil:
        """h = sum_i y_i alpha_i over the learned examples (above ``polish_above`` summed
        exactly) and the check's levels (the reference's ``_balance_and_levels``)."""
        cdef Py_ssize_t i
        cdef double h, amax, mass
        cdef bint extreme = self._extreme()
        self._scales(-1)
        amax = max(self.amax, self.snap_amax)
        mass = max(self.mass, self.snap_mass) if extreme else 0.0
        if extreme:
            h = polish_balance(self.status, self.y, self.alpha, self.part.n)   # Sum2 (as _polish)
        else:
            h = 0.0
            for i in range(self.part.n):
                if self.status[i] >= 0:
                    h += self.y[i] * self.alpha[i]
        levels[0] = kkt_levels(self.dep.kkt_tol, self.kscale, amax, self.C,
                               self.dep.polish_above if self.dep.polish else INFINITY,
                               self.dep.kkt_ulps, self.dep.h_ulps, self.b, mass,
                               self.dep.kkt_tol, 1.0)
        return h

    cdef int _check_exact(self) except -1 nogil:
        """The exactness check (the reference's ``_check_exact``): 3 if the worst
        violation (self.fail_worst) is above ``kkt_tol`` g_scale, 4 if |h| is above
        ``kkt_tol`` alpha_max (above ``polish_above``: h summed exactly, both capped by
        ``kkt_ulps`` and ``h_ulps`` round-off floors), else 0; the levels and the verdict
        are the core's ``kkt_levels`` and ``kkt_verdict``."""
        cdef KKTLevels levels
        cdef int verdict
        self.fail_h = fabs(self._balance_and_levels(&levels))
        verdict = kkt_verdict(self.fail_worst, self.fail_h, levels, False)
        if verdict & KKT_G:
            return 3
        if verdict & KKT_H:
            return 4
        return 0

    cdef int _step_stored(self, double yc) except -1 nogil:
        """Learn the row just appended to the store; 1 if the model changed, else 0."""
        cdef Py_ssize_t c = self._store_row(yc), i, j, m
        cdef double f, kv, b0 = self.b
        cdef signed char st
        self.kdiag[c] = self.kern.k_rows(self.store, c, c)
        self.kroot[c] = sqrt(fabs(self.kdiag[c]))
        if fabs(self.kdiag[c]) > self.kscale:
            self.kscale = fabs(self.kdiag[c])
        # the support vectors (ids ascending, collected without branching on the set)
        m = 0
        for i in range(c):
            st = self.status[i]
            self.idx[m] = i
            m += (st == MARGIN) | (st == ERROR)
        f = self.b
        kernel_many(self.kern, self.store, c, self.idx, m, self.kv)   # k_rows's values
        for j in range(m):
            i = self.idx[j]
            kv = self.kv[j]
            self.col[i] = kv
            f += self.alpha[i] * self.y[i] * kv
        self.g[c] = self.y[c] * f - 1.0
        for j in range(self.ms.ns):
            self.ms.KS[j][c] = self.col[self.ms.S[j]]
        cdef int rc
        if self.g[c] >= -self.tol:                  # on or beyond its margin: R
            self.status[c] = REST
            self._centre_bias()
        else:
            self._snapshot(c)                       # one atomic operation (rollback.py)
            rc = self._learn(c, 1)
            if rc == 0:
                self._polish()
                self._centre_bias()
                rc = self._repair_and_check(c)
            if rc:
                self._rollback()
                if rc == RC_SIGNAL:
                    self._raise_abandoned()
                _fail_exact(rc, c, False, self.fail_worst, self.fail_v, self.fail_h,
                                self.dep.repair)
        self.n_increments += 1
        # unchanged: c joined R and b stayed (S empty: the interval of b may have moved)
        return 1 if (self.status[c] != REST or self.b != b0) else 0

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        """Learn one example (row convention of ``refsvm._core.StreamLearner``, which
        gives ``step`` and ``run``), y = +1 or -1."""
        if self.sparse:
            self.store.append_csr(xi, xv, nnz)
        else:
            self.store.append_dense(xv)
        return self._step_stored(y)

    cdef int _unlearn_one(self, Py_ssize_t c) except -1 nogil:
        """alpha_c -> 0 (Sec. 4); c keeps status OUT; its column is left in self.col.
        Returns 1 when c was a support vector, 0 otherwise."""
        cdef signed char st = self.status[c]
        cdef Py_ssize_t pos
        cdef int rc
        if st == REST:
            self.status[c] = OUT
            return 0
        if st == MARGIN:
            pos = self._s_pos(c)
            memcpy(self.col, self.ms.KS[pos], self.part.n * sizeof(double))
            self._shrink_inverse(pos, OUT, 0.0, False)
        else:
            self._column(c, self.col, 2)
        self.status[c] = OUT
        rc = self._adiabatic(c, -1.0, self.col)
        if rc:
            return rc                           # 2: the step budget is spent; 5: unbounded
        return 1

    def unlearn(self, ids):
        """Remove the examples with these ids exactly (decremental unlearning), each
        removal atomic (see the reference)."""
        cdef const Py_ssize_t[::1] v = np.ascontiguousarray(ids, dtype=np.intp)
        cdef Py_ssize_t t, c
        cdef int rc
        with nogil:
            for t in range(v.shape[0]):
                c = v[t]
                self._snapshot(self.part.n)
                rc = self._unlearn_one(c)
                if rc < 2:
                    self.status[c] = GONE
                    self.ngone += 1
                    self.cache.drop(c)
                    self.alpha[c] = 0.0
                    self.g[c] = 0.0
                    self._polish()
                    self._centre_bias()
                    rc = self._repair_and_check(c)
                if rc:
                    self._rollback()
                    if rc == RC_SIGNAL:
                        self._raise_abandoned()
                    _fail_exact(rc, c, False, self.fail_worst, self.fail_v, self.fail_h,
                                self.dep.repair)
                self.n_decrements += 1

    def loo_decisions(self):
        """Exact leave-one-out decisions f_{-i}(x_i) of every learned example (ids ascending)."""
        ids = self.active_ids()
        cdef const Py_ssize_t[::1] v = ids
        cdef double[::1] out = np.empty(ids.shape[0])
        cdef Py_ssize_t r, c
        cdef int rc
        # c's column, kept across the repairs of the check (which leave theirs in
        # self.col): the reference's local ``col``
        cdef double[::1] keep = np.empty(max(self.part.n, 1))
        with nogil:
            for r in range(v.shape[0]):
                c = v[r]
                if self.status[c] == REST:
                    out[r] = self.y[c] * (self.g[c] + 1.0)
                    continue
                self._snapshot(self.part.n)             # one budget for both halves
                rc = self._unlearn_one(c)
                if rc < 2:
                    memcpy(&keep[0], self.col, self.part.n * sizeof(double))
                    self._polish()
                    self._centre_bias()
                    rc = self._repair_and_check(c)
                if rc == 0:
                    out[r] = self.y[c] * (self.g[c] + 1.0)
                    memcpy(self.col, &keep[0], self.part.n * sizeof(double))
                    rc = self._learn(c, 3)
                    if rc == 0:
                        self._polish()
                        self._centre_bias()
                        rc = self._repair_and_check(c)
                if rc:
                    self._rollback()
                    if rc == RC_SIGNAL:
                        self._raise_abandoned()
                    _fail_exact(rc, c, True, self.fail_worst, self.fail_v, self.fail_h,
                                self.dep.repair)
        return np.asarray(out)

    def refresh_inverse(self):
        """Recompute R from the cached columns; returns the relative drift found."""
        return self._refresh()

    # ------------------------------------------------------------------ prediction, state
    def decision_function(self, X):
        """f(x) for every row of X (prediction is not counted in n_kernel_evals): b plus
        the kernel expansion over the support vectors, ids ascending (the core's
        ``RowStore.expansion`` with coefficients alpha_i y_i, added from b)."""
        cdef Py_ssize_t i
        cdef const Py_ssize_t[::1] sv = self.support_ids()
        coef = np.zeros(self.part.n)
        for i in range(sv.shape[0]):
            coef[sv[i]] = self.alpha[sv[i]] * self.y[sv[i]]
        return self.store.expansion(self.kern, coef, X, self.b)

    @property
    def n_kernel_evals(self):
        return self.kern.n_evals

    def _array(self, which):
        cdef Py_ssize_t i
        out = np.empty(self.part.n)
        cdef double[::1] o = out
        cdef double* src = self.alpha if which == 0 else (self.g if which == 1 else (
            self.y if which == 2 else self.kdiag))
        for i in range(self.part.n):
            o[i] = src[i]
        return out

    def _status(self):
        cdef Py_ssize_t i
        out = np.empty(self.part.n, dtype=np.int8)
        cdef signed char[::1] o = out
        for i in range(self.part.n):
            o[i] = self.status[i]
        return out

    def _rinv(self):
        cdef Py_ssize_t a, bb
        if self.ms.ns == 0:
            return np.zeros((1, 1))
        out = np.empty((self.ms.ns + 1, self.ms.ns + 1))
        cdef double[:, ::1] o = out
        for a in range(self.ms.ns + 1):
            memcpy(&o[a, 0], self.ms.R + a * self.ms.ld, (self.ms.ns + 1) * sizeof(double))
        return out

    def _cached_ids(self):
        """Cached ids, oldest first (the order of the reference's cache)."""
        return self.cache.ids()

    def _s_order(self):
        return np.array([self.ms.S[j] for j in range(self.ms.ns)], dtype=np.intp)

    def _ks(self):
        out = np.zeros((self.part.n, self.ms.ns))
        cdef double[:, ::1] o = out
        if self.part.n and self.ms.ns:
            refsvm_cols_to_rows(&o[0, 0], self.ms.ns, self.ms.KS, self.ms.ns, self.part.n)
        return out

    def support_ids(self):
        st = self._status()
        return np.flatnonzero((st == MARGIN) | (st == ERROR))

    def active_ids(self):
        return np.flatnonzero(self._status() >= 0)

    def support_rows(self):
        return self.store.to_matrix(self.support_ids())

    def support(self):
        """(ids, y_i alpha_i, rows) of the support vectors S u E, ids ascending."""
        ids = self.support_ids()
        return ids, self._array(0)[ids] * self._array(2)[ids], self.support_rows()

    def get_state(self):
        st = self._status()
        return {
            "alpha": self._array(0),
            "g": self._array(1),
            "y": self._array(2),
            "b": float(self.b),
            "status": st,
            "S": np.flatnonzero(st == MARGIN),
            "E": np.flatnonzero(st == ERROR),
            "R": np.flatnonzero(st == REST),
            "S_order": self._s_order(),
            "Rinv": self._rinv(),
            "n_seen": int(self.part.n),
            "n_increments": int(self.n_increments),
            "n_decrements": int(self.n_decrements),
            "n_iterations": int(self.n_iterations),
            "n_exchanges": int(self.n_exchanges),
            "n_refresh_failed": int(self.n_refresh_failed),
            "n_pivot_refresh": int(self.n_pivot_refresh),
            "n_repairs": int(self.n_repairs),
            "n_rollbacks": int(self.n_rollbacks),
            "cached": self._cached_ids(),
            "n_refresh": int(self.n_refresh),
            "refined": bool(self.refined),
            "max_inverse_drift": float(self.max_inverse_drift),
            "n_kernel_evals": int(self.kern.n_evals),
        }

    def check(self):
        """Diagnostics (see the reference): g drift, the true KKT violation ``kkt``, |h|
        and h / C, ||M R - I||_max."""
        kern = Kernel(self.kind, self.gamma, self.degree, self.coef0)
        st = self._status()
        act = np.flatnonzero(st >= 0)
        sv = self.support_ids()
        alpha, y, gg = self._array(0), self._array(2), self._array(1)
        rows = {int(i): self.store.get_row(i) for i in act}
        K = np.array([[kern.value(rows[int(i)], rows[int(j)]) for j in sv] for i in act])
        out = kkt_diagnostics(K.reshape(act.size, sv.size), alpha, y, gg, self.b, self.C,
                              act, sv)
        if self.ms.ns:
            S = self._s_order()
            ys = y[S]
            M = np.zeros((self.ms.ns + 1, self.ms.ns + 1))
            M[0, 1:] = ys
            M[1:, 0] = ys
            M[1:, 1:] = np.outer(ys, ys) * self._ks()[S]
            rdrift = float(np.max(np.abs(M @ self._rinv() - np.eye(self.ms.ns + 1))))
        else:
            rdrift = 0.0
        out["inverse_residual"] = rdrift
        return out

    # ------------------------------------------------------------------ persistence
    def init_params(self):
        """The constructor's keyword arguments (persistence protocol)."""
        return dict(n_features=self.n_features, sparse=self.sparse, C=self.C,
                    kernel=self.kind, gamma=self.gamma, degree=self.degree,
                    coef0=self.coef0, tol=self.tol, refresh_every=self.refresh_every,
                    cache_size=self.cache_size, max_steps=self.max_steps,
                    departures=dict(self.departures))

    def save_state(self):
        """Everything learned, in the format both twins share
        (refsvm.idsvm.state_format.state_arrays)."""
        ids, lengths, values = self.cache.arrays()
        return state_arrays(
            self.store.to_matrix(), self.sparse, alpha=self._array(0), g=self._array(1),
            y=self._array(2), kdiag=self._array(3), status=self._status(),
            S=self._s_order(), KS=self._ks(), Rinv=self._rinv(), b=self.b,
            kscale=self.kscale, cache_ids=ids, cache_columns=None, cache_flat=(lengths, values),
            counters=dict(n_increments=self.n_increments, n_decrements=self.n_decrements,
                          n_iterations=self.n_iterations, n_exchanges=self.n_exchanges,
                          n_refresh_failed=self.n_refresh_failed,
                          n_pivot_refresh=self.n_pivot_refresh, n_s_changes=self.n_s_changes,
                          n_refresh=self.n_refresh, max_inverse_drift=self.max_inverse_drift,
                          fresh=bool(self.fresh), refined=bool(self.refined),
                          n_kernel_evals=self.kern.n_evals,
                          n_repairs=self.n_repairs, n_rollbacks=self.n_rollbacks))

    def load_state(self, data):
        """Restore what either twin's ``save_state`` returned (into a fresh state)."""
        cdef Py_ssize_t i, j, n = int(data["n_seen"]), ns
        cdef double* colp
        if self.part.n:
            raise ValueError("load_state needs a freshly constructed state")
        if self.sparse:
            M = sp.csr_matrix((np.asarray(data["rows_data"], dtype=np.float64),
                               np.asarray(data["rows_indices"], dtype=np.int32),
                               np.asarray(data["rows_indptr"], dtype=np.int64)),
                              shape=(n, self.n_features))
        else:
            M = np.ascontiguousarray(np.asarray(data["rows"], dtype=np.float64)
                                     .reshape(n, self.n_features))
        for i in range(n):
            self.store.append(M, i)
        self._reserve_n(n)
        self.part.n = n
        alpha, g = np.asarray(data["alpha"]), np.asarray(data["g"])
        y, kdiag, status = np.asarray(data["y"]), np.asarray(data["kdiag"]), np.asarray(data["status"])
        for i in range(n):
            self.alpha[i] = alpha[i]
            self.g[i] = g[i]
            self.y[i] = y[i]
            self.kdiag[i] = kdiag[i]
            self.kroot[i] = sqrt(fabs(self.kdiag[i]))
            self.status[i] = status[i]
            if self.status[i] == GONE:
                self.ngone += 1
        S = np.asarray(data["S"], dtype=np.intp)
        ns = S.shape[0]
        self._reserve_s(ns + 1)
        cdef const double[:, ::1] KS = np.ascontiguousarray(
            np.asarray(data["KS"], dtype=np.float64).reshape(n, ns))
        for j in range(ns):
            colp = <double*> malloc(self.cap * sizeof(double))
            if colp == NULL:
                raise MemoryError()
            for i in range(min(n, self.cap), self.cap):
                colp[i] = 0.0
            self.ms.KS[j] = colp
            self.ms.S[j] = S[j]
            self.ms.ns = j + 1
        if n and ns:
            refsvm_rows_to_cols(self.ms.KS, &KS[0, 0], ns, ns, min(n, self.cap))
        for j in range(ns):
            self._border(j)
        cdef const double[:, ::1] Rinv = np.ascontiguousarray(data["Rinv"], dtype=np.float64)
        if ns:
            for i in range(ns + 1):
                for j in range(ns + 1):
                    self.ms.R[i * self.ms.ld + j] = Rinv[i, j]
            bordered_symmetrize(self.ms.R, self.ms.ld, ns + 1)
        self.rbound = INFINITY
        self.b = float(data["b"])
        self.kscale = float(data["kscale"])
        self.cache.load(data["cache_ids"], data["cache_lengths"], data["cache_values"])
        self.n_increments = int(data["n_increments"])
        self.n_decrements = int(data["n_decrements"])
        self.n_iterations = int(data["n_iterations"])
        self.n_exchanges = int(data["n_exchanges"])
        self.n_refresh_failed = int(data["n_refresh_failed"])
        self.n_pivot_refresh = int(data["n_pivot_refresh"])
        self.n_s_changes = int(data["n_s_changes"])
        self.n_refresh = int(data["n_refresh"])
        self.max_inverse_drift = float(data["max_inverse_drift"])
        self.n_repairs = int(data["n_repairs"]) if "n_repairs" in data else 0
        self.n_rollbacks = int(data["n_rollbacks"]) if "n_rollbacks" in data else 0
        self.fresh = bool(data["fresh"])
        self.refined = bool(data["refined"]) if "refined" in data else False
        self.kern.n_evals = int(data["n_kernel_evals"])


# ---------------------------------------------------------------------- test entries
# The core's C functions this twin alone calls, from Python with arrays
# (tests/core/test_idsvm_scans.py compares them with plain loops bit for bit).
def max_value(x, double m=0.0):
    """``refsvm_max`` (the largest alpha in ``_scales``) of a float64 array from m."""
    cdef const double[::1] v = np.ascontiguousarray(x, dtype=np.float64)
    return refsvm_max(&v[0] if v.shape[0] else NULL, v.shape[0], m)


def join_scan_arrays(status, blk, r, g, kroot, int err, int rest, double tol0, double eg,
                     double gam, double rtb, double rt0, double best):
    """``refsvm_join_scan`` (``_events`` pass 1's candidates) over arrays: (best, the best
    id or -1, the steps tb and their ids)."""
    cdef const signed char[::1] st = np.ascontiguousarray(status, dtype=np.int8)
    cdef const signed char[::1] bk = np.ascontiguousarray(blk, dtype=np.int8)
    cdef const double[::1] rv = np.ascontiguousarray(r, dtype=np.float64)
    cdef const double[::1] gv = np.ascontiguousarray(g, dtype=np.float64)
    cdef const double[::1] kv = np.ascontiguousarray(kroot, dtype=np.float64)
    cdef Py_ssize_t n = st.shape[0], bi = -1, ntl
    if not (bk.shape[0] == rv.shape[0] == gv.shape[0] == kv.shape[0] == n):
        raise ValueError("join_scan_arrays: the arrays differ in length")
    tb = np.empty(max(n, 1))
    tl = np.empty(max(n, 1), dtype=np.intp)
    cdef double[::1] tbv = tb
    cdef Py_ssize_t[::1] tlv = tl
    if n == 0:
        return best, -1, tb[:0], tl[:0]
    ntl = refsvm_join_scan(&st[0], &bk[0], &rv[0], &gv[0], &kv[0], n, <signed char> err,
                           <signed char> rest, tol0, eg, gam, rtb, rt0, &best, &bi,
                           &tbv[0], &tlv[0])
    return best, bi, tb[:ntl], tl[:ntl]
