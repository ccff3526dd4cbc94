# cython: language_level=3
"""Compiled twin of :mod:`refsvm.poker.poker` (POKER, Fine & Scheinberg).

``POKERState`` is a ``cdef class`` deriving from the core's ``StreamLearner``, with the
reference's attribute and method names.  The printed method's drivers (Fig. 1:
``add_chunk``, ``learn_ids``, ``fixed_bias``, ``adjust_bias``; Sec. 5: ``self_init``,
``learn_selective``, ``_dobj``) are short methods mirroring the reference's.  What runs
per **breakpoint** is compiled, with no Python object in the loop (``_follow_c``):

- the rates of a piece (``_direction``): the sensitivities y_i (sum_j Q_ij dalpha_j)
  of every example, O(n |I_s|), from the kernel columns of I_s kept as C buffers (one
  per member, indexed by example id), eight columns per pass;
- the next breakpoint by the core's least-index choice (``EventChoice``: pass 1 the
  smallest step, pass 2 the least id among the tied events, the end of the parameter
  first);
- the move along the piece and the partition update: the core's margin set
  (``start``, ``grow``, ``remove``, ``inverse``), ``bordered_beta/pivot`` and pivot tests
  (``pivot_doubtful``, ``pivot_is_zero``), the exchange of a zero-pivot join, a fresh
  inverse by LAPACK getrf/getri (``scipy.linalg.cython_lapack``), the kernel column of
  a joining example through the core's ``RowStore``/``CKernel`` and a column cache
  in C (the reference's least-recently-stored eviction).

Every sum is taken in the reference's order (``refsvm.core.bordered.matvec`` /
``dot``: left to right over I_s), so the twins pass the same breakpoints with the same
numbers; they differ only where the kernel values do (the core's compiled kernels
against the reference's NumPy ones, in the last bits).  The O(n |I_s|) products are
memory-bound at the sizes of the benchmarks: a hand loop over four columns at a time
streams the kernel columns as fast as BLAS ``dgemv`` (docs, "Design notes") and keeps the
reference's order, which BLAS does not.

The reference's methods that the paths call by name (``_follow``, ``_remove_from_S``,
``_refresh``, ``_column``, ``_cache_put``, ...) are Python entries here; their compiled
bodies are the ``cdef`` methods of the same name with ``_c`` (``_follow_c``, ...).  What
is neither the printed method nor a path -- persistence, read-outs, the KKT check, the
departures' once-per-chunk Python (the joint increment's driver, the decrement's, the end
of a chunk, the exactness check, the polish, the bias centring) -- is the reference's own
code, called on this state (class attributes at the end of the class: the reference's
functions, which read and write the attribute names this class keeps): one code for both
twins.

The departures (``departures``, resolved as the reference resolves them) are read into C
when the state is made or loaded (``_configure``): per state, never from module globals.
The per-example arrays (y, alpha, g, p, d, a0, kdiag, status) and their count ``n`` are
the core's holder ``part`` (:class:`refsvm._core.Partition`, POKER's own arrays p, d, a0
among them); the reference's Python code reads and writes them through properties of
the same names (the holder's NumPy views; an assignment copies into the holder), and the
compiled code takes the holder's pointers at every entry (``bind``).  I_s, its kernel
columns and R are the core's margin set ``ms`` (:class:`refsvm._core.MarginSet`, whose
spare column buffers the cache borrows); it, the cache and the scalars of the path (b, u,
tau, t, the counters) are declared; ``S``, ``R``, ``KS``, ``dependent`` and ``cache`` are
properties that hand out the reference's forms.
"""
import numpy as np
cimport numpy as cnp
import scipy.sparse as sp
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY, NAN, fabs, isnan, sqrt
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memcmp

from refsvm._core cimport (CKernel, ColumnCache, EventChoice, MarginSet, Partition, RowStore,
                           StreamLearner, bordered_beta, bordered_drift, rows_dot,
                           kernel_many, kernel_many4, refsvm_cols_matvec,
                           refsvm_cols_to_rows, refsvm_rows_to_cols, bordered_pivot,
                           event_least_index,
                           event_smaller, event_start, event_take, event_tied, pivot_doubtful,
                           pivot_is_zero, neumaier_add, polish_refine, polish_step,
                           engine_join, engine_leave, engine_column, engine_column4, set_off)
from refsvm._core cimport end_balance, end_wrong_side, fsum_check, g_exact_rows
from refsvm._core import dot2_rows as _core_dot2_rows, fsum as _core_fsum
from refsvm._core import g_exact as _core_g_exact

from refsvm.core import column_cache as _column_cache
from refsvm.core import stream as _stream
from refsvm.core.kernels import SparseRow, get_row
from refsvm.poker import poker as _ref
from refsvm.poker.departures.bias_centring import BiasCentring
from refsvm.poker.departures.end_of_chunk import EndOfChunk
from refsvm.poker.departures.joint_increment import JointIncrement
from refsvm.poker.departures.unlearning import ChunkUnlearning
from refsvm.poker.poker import PENDING, SELECTIONS, _Budget
from refsvm.poker.storage import POKERStorage, init_state

cnp.import_array()

__all__ = ["POKERState", "SELECTIONS"]

# the printed method's codes and tolerances, one definition (refsvm.poker.partition, read
# through the reference); the departures' settings are read per state (``_configure``)
cdef signed char C_IO = _ref.I_O, C_IS = _ref.I_S, C_IC = _ref.I_C
cdef signed char C_FORCED = _ref.FORCED
cdef int M_IDLE = _ref.IDLE, M_FIXED = _ref.FIXED, M_BIAS = _ref.BIAS
cdef int M_UNLEARN = _ref.UNLEARN, M_JOINT = _ref.JOINT
cdef int EV_END = _ref.EV_END, EV_LEAVE = _ref.EV_LEAVE, EV_JOIN = _ref.EV_JOIN
cdef int EV_FLIP = _ref.EV_FLIP
cdef double EPS_G = _ref.EPS_G, EPS_RATE = _ref.EPS_RATE
cdef double EPS_ARATE = _ref.EPS_ARATE, EPS_PIVOT = _ref.EPS_PIVOT
cdef double EPS_PIVOT_ABS = _ref.EPS_PIVOT_ABS
cdef bint _VECTOR_SCAN = True     # the event scan eight at a time where the CPU can


def _vector_scan(flag=None):
    """Whether the event scan runs eight examples at a time (AVX-512F, when the CPU has
    it); ``flag`` sets it (tests run both and compare the states bit for bit)."""
    global _VECTOR_SCAN
    if flag is not None:
        _VECTOR_SCAN = bool(flag)
    return bool(_VECTOR_SCAN and refsvm_poker_scan_vector())


cdef int _nomem() except -1:
    raise MemoryError()


cdef int _resize(void** buf, Py_ssize_t n, size_t itemsize) except -1:
    """realloc ``*buf`` to ``n`` items (at least one)."""
    cdef void* p = realloc(buf[0], max(n, 1) * itemsize)
    if p == NULL:
        _nomem()
    buf[0] = p
    return 0


cdef inline double _clip(double x, double hi) noexcept nogil:
    """np.clip(x, 0, hi) = min(max(x, 0), hi)."""
    if x < 0.0:
        x = 0.0
    if x > hi:
        x = hi
    return x


cdef inline double _max0(double x) noexcept nogil:
    """np.maximum(x, 0.0)."""
    return x if x >= 0.0 else 0.0


# the event scan's eight-wide form (refsvm/_csrc/refsvm_poker.c)
from refsvm._clib cimport refsvm_poker_scan8, refsvm_poker_scan_vector


cdef void _class_sums(RowStore store, CKernel kern, const Py_ssize_t[::1] ids,
                      const Py_ssize_t[::1] at_c, const double[::1] cy,
                      const double[::1] kdiag, double[::1] F, double[::1] Fc,
                      double[::1] tmp) noexcept nogil:
    """F[r] += (c y_j) k(x_ids[r], x_j) over j at c (outer), r (inner), compensated in
    Fc: the reference's order.  The kernel values of four j at a time come from one
    ``kernel_many4`` call into ``tmp`` (4 m values; each ``k_rows``'s bit for bit, as one
    ``kernel_many`` call a j gives), then are added j by j; k(x_j, x_j) is kdiag[j] and not
    counted, as in the reference."""
    cdef Py_ssize_t a, q, r, i, j, nq, m = ids.shape[0]
    cdef Py_ssize_t grp[4]
    cdef double* gout[4]
    cdef double kv
    if m == 0:
        return
    for q in range(4):
        gout[q] = &tmp[q * m]
    a = 0
    while a < at_c.shape[0]:
        nq = min(4, at_c.shape[0] - a)
        if nq == 4:
            for q in range(4):
                grp[q] = at_c[a + q]
            kernel_many4(kern, store, grp, &ids[0], m, gout)
        else:
            for q in range(nq):
                kernel_many(kern, store, at_c[a + q], &ids[0], m, gout[q])
        for q in range(nq):
            j = at_c[a + q]
            for r in range(m):
                i = ids[r]
                if i == j:
                    kv = kdiag[i]
                    kern.n_evals -= 1   # k(x_j, x_j) is known, not evaluated
                else:
                    kv = gout[q][r]
                neumaier_add(&F[r], &Fc[r], cy[a + q] * kv)
        a += nq


cdef class _PartitionArray:
    """A per-example array of :class:`POKERState` as the reference's Python code reads
    and writes it: the holder's NumPy view (over its capacity); an assignment copies into
    the holder."""
    cdef str name

    def __init__(self, str name):
        self.name = name

    def __get__(self, POKERState state, owner):
        if state is None:
            return self
        return state.part.view(self.name)

    def __set__(self, POKERState state, values):
        state.part.assign(self.name, values)


cdef class POKERState(StreamLearner):
    """POKER state for one binary problem (compiled twin of
    :class:`refsvm.poker.poker.POKERState`; see there for the parameters, ``departures``
    among them, and the method)."""

    # the reference's attributes that are not declared here (rows, F, KF, n_chunks,
    # breakpoint_hook) are ordinary attributes, in the instance's dict; the per-example
    # arrays y, alpha, g, p, d, a0, kdiag, status and n are properties over ``part``
    cdef dict __dict__
    # the parameters
    cdef public double C, cache_size
    cdef readonly double aw     # the tie window of an alpha event (reference ``alpha_window``)
    cdef public long refresh_every
    # the departures (refsvm.poker.departures.DEPARTURES) this state runs with
    cdef public dict departures
    cdef bint refresh_on, duplicates_on, regularise_on
    cdef double drift_refresh, cond_refresh, small_pivot, doubt, shrink_eps
    cdef public RowStore store
    cdef public CKernel kernel
    # the scalars of the path
    cdef public double b, u, tau, t, kmax
    cdef public long long n_iterations, n_exchanges, n_refresh, n_s_changes, budget
    cdef public bint fresh
    cdef public int phase
    # the per-example arrays and n (the core's holder; POKER's own arrays p, d, a0) ...
    cdef Partition part
    # ... and the pointers to its buffers, taken at every entry (``bind``)
    cdef double* c_y
    cdef double* c_alpha
    cdef double* c_g
    cdef double* c_p
    cdef double* c_d
    cdef double* c_a0
    cdef double* c_kdiag
    cdef signed char* c_status
    cdef object hook            # the breakpoint hook of the path being followed
    # per-example work (capacity cap)
    cdef Py_ssize_t cap, nkr
    cdef Py_ssize_t nonunit      # how many of kr[:nkr] are not 1 (0: the scan reads no kr)
    cdef signed char* y8        # y as -1 / +1 bytes (the scan reads 1 byte a label, not 8) ...
    cdef Py_ssize_t nonpm        # ... when every y[:nkr] is -1 or +1 (nonpm == 0)
    cdef double* col_clean      # the column _column just made with no NaN (or NULL)
    cdef double* kr             # sqrt |k(x, x)|, computed once per id
    cdef double* gdot
    cdef double* inner
    cdef double* tmp
    cdef double* cts            # steps of the join candidates ...
    cdef Py_ssize_t* cand       # ... and their ids
    cdef Py_ssize_t* kidx       # ids whose kernel value _column evaluates (values in tmp)
    cdef Py_ssize_t* spos       # position in I_s, or -1
    cdef signed char* blk       # left dependent by an exchange: no candidate (reference: dependent)
    cdef Py_ssize_t* blist
    cdef Py_ssize_t nblk
    # I_s, its kernel columns, R and the spare column buffers: the core's margin set (the
    # properties ``S``, ``KS``, ``R`` read it); caps: the room of the scratch below
    cdef MarginSet ms
    cdef Py_ssize_t caps
    cdef double* beta
    cdef double* m
    cdef double* z
    cdef double* aS
    cdef double* tsS
    cdef double* wsS
    cdef double* rv             # [h; rhs] of the decrement, v of the regularisation
    cdef double* rp             # bordered_drift's work row
    cdef double* lu
    cdef double* work
    cdef int* ipiv
    # the rates of the current piece
    cdef double bdot, t_end, terms
    cdef double cmin, cgmin     # the scan's smallest join step and smallest |rate| (candidates)
    cdef bint back              # the direction of the next sweep over the rows (refsvm_cols_matvec)
    cdef double tpend           # a move of the g off I_s not yet applied (``_flush``) ...
    cdef bint pend              # ... pending: the next scan applies it in its pass
    cdef bint b_only
    # the decrement (alpha_F driven to 0): ids, kernel columns (row-major n x nF), rates
    cdef Py_ssize_t nF
    cdef Py_ssize_t* c_F        # the state's F and KF while a path runs
    cdef double* c_KF
    cdef double* aF
    cdef double* yaF
    # KF y_F aF for every row, kept while F and y_F aF do not change (the same sums each
    # breakpoint of a joint increment or a decrement: formed once, not in every sweep)
    cdef double* vF
    cdef double* vF_ya
    cdef Py_ssize_t vF_n
    cdef object _F_arr, _KF_arr
    # column cache (the core's: it keeps the column buffers it is given, hands dropped
    # ones to the pool, and shares them with a copy); ``cache`` is the reference's view
    cdef ColumnCache ccache

    def __cinit__(self):
        self.cap = 0
        self.nkr = 0
        self.ms = MarginSet()
        self.caps = 0
        self.part = Partition(("p", "d", "a0"))
        self.nblk = 0
        self.nF = 0
        self.ccache = ColumnCache(True)
        self.budget = -1
        self.kr = NULL
        self.y8 = NULL
        self.col_clean = NULL
        self.gdot = NULL
        self.inner = NULL
        self.tmp = NULL
        self.cts = NULL
        self.cand = NULL
        self.kidx = NULL
        self.spos = NULL
        self.blk = NULL
        self.blist = NULL
        self.beta = NULL
        self.m = NULL
        self.z = NULL
        self.aS = NULL
        self.tsS = NULL
        self.wsS = NULL
        self.rv = NULL
        self.rp = NULL
        self.lu = NULL
        self.work = NULL
        self.ipiv = NULL
        self.c_F = NULL
        self.c_KF = NULL
        self.aF = NULL
        self.yaF = NULL
        self.vF = NULL
        self.vF_ya = NULL
        self.vF_n = -1
        self.ccache.lend_spares(self.ms.pool, &self.ms.npool, self.ms.maxpool, &self.ms.cap)
        self._reserve_s(4)
        self._reserve(16)

    def __init__(self, n_features, sparse=False, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, cache_size=200.0, refresh_every=50, departures=None):
        self.n_features = int(n_features)
        self.sparse = bool(sparse)
        self.store = RowStore(self.n_features, self.sparse)
        init_state(self, CKernel(kernel, gamma, degree, coef0), C, cache_size, refresh_every,
                   departures)
        self._configure()

    cdef int _configure(self) except -1:
        """The settings read from the parameters and the resolved ``departures``: the tie
        window, the cache's budget, the refresh, duplicates and regularise_fixed
        departures."""
        cdef dict departures = self.departures
        self.aw = _ref.alpha_window(self.C)
        self.ccache.budget = <long long> (self.cache_size * 1048576.0) \
            if departures["column_cache"] else 0
        self.refresh_on = departures["refresh"]
        self.duplicates_on = departures["duplicates"]
        self.regularise_on = departures["regularise_fixed"]
        self.drift_refresh = departures["drift_refresh"]
        self.cond_refresh = departures["cond_refresh"]
        self.small_pivot = departures["small_pivot"]
        self.doubt = departures["doubt"]
        self.shrink_eps = departures["shrink_eps"]
        return 0

    def __dealloc__(self):
        free(self.kr)
        free(self.y8)
        free(self.gdot)
        free(self.inner)
        free(self.tmp)
        free(self.cts)
        free(self.cand)
        free(self.kidx)
        free(self.spos)
        free(self.blk)
        free(self.blist)
        free(self.beta)
        free(self.m)
        free(self.z)
        free(self.aS)
        free(self.tsS)
        free(self.wsS)
        free(self.rv)
        free(self.rp)
        free(self.lu)
        free(self.work)
        free(self.ipiv)
        free(self.aF)
        free(self.yaF)
        free(self.vF)
        free(self.vF_ya)

    # ------------------------------------------------------------------ storage
    cdef int _reserve(self, Py_ssize_t need) except -1:
        """Room for ``need`` examples in the per-example buffers and the I_s columns."""
        cdef Py_ssize_t cap, i, old = self.cap
        if need <= old:
            return 0
        cap = max(need, 2 * old, 16)
        _resize(<void**> &self.kr, cap, sizeof(double))
        _resize(<void**> &self.y8, cap, sizeof(signed char))
        _resize(<void**> &self.gdot, cap, sizeof(double))
        _resize(<void**> &self.inner, cap, sizeof(double))
        _resize(<void**> &self.tmp, cap, sizeof(double))
        _resize(<void**> &self.cts, cap, sizeof(double))
        _resize(<void**> &self.cand, cap, sizeof(Py_ssize_t))
        _resize(<void**> &self.kidx, cap, sizeof(Py_ssize_t))
        _resize(<void**> &self.spos, cap, sizeof(Py_ssize_t))
        self.ccache.reserve(cap)
        _resize(<void**> &self.blk, cap, sizeof(signed char))
        _resize(<void**> &self.blist, cap, sizeof(Py_ssize_t))
        for i in range(old, cap):
            self.spos[i] = -1
            self.blk[i] = 0
        self.ms.reserve_rows(cap)        # I_s's columns (the spares of the old length go)
        self.cap = cap
        return 0

    cdef int _reserve_s(self, Py_ssize_t need) except -1:
        """Room for ``need`` members of I_s (R of size need + 1) and the scratch."""
        cdef Py_ssize_t ld
        if need <= self.caps:
            return 0
        self.ms.reserve(need)
        ld = self.ms.ld
        _resize(<void**> &self.beta, ld, sizeof(double))
        _resize(<void**> &self.m, ld, sizeof(double))
        _resize(<void**> &self.z, ld, sizeof(double))
        _resize(<void**> &self.aS, ld, sizeof(double))
        _resize(<void**> &self.tsS, ld, sizeof(double))
        _resize(<void**> &self.wsS, ld, sizeof(double))
        _resize(<void**> &self.rv, ld, sizeof(double))
        _resize(<void**> &self.rp, ld, sizeof(double))
        _resize(<void**> &self.lu, ld * ld, sizeof(double))
        _resize(<void**> &self.work, ld, sizeof(double))
        _resize(<void**> &self.ipiv, ld, sizeof(int))
        self.caps = self.ms.caps
        return 0

    cdef int bind(self) except -1:
        """Take the pointers to the holder's buffers (a growth replaces them, so at
        every entry) and make room for the n examples in the scratch."""
        cdef Py_ssize_t i, n = self.part.n
        if n > self.part.cap:
            raise TypeError("POKER twin: the per-example arrays are shorter than n")
        self._reserve(n)
        self.c_y = self.part.y
        self.c_alpha = self.part.alpha
        self.c_g = self.part.g
        self.c_p = self.part.extra[0]
        self.c_d = self.part.extra[1]
        self.c_a0 = self.part.extra[2]
        self.c_kdiag = self.part.kdiag
        self.c_status = self.part.status
        for i in range(self.nkr, n):
            self.kr[i] = sqrt(fabs(self.c_kdiag[i]))
            self.nonunit += self.kr[i] != 1.0
            self.y8[i] = 1 if self.c_y[i] == 1.0 else -1
            self.nonpm += (self.c_y[i] != 1.0) & (self.c_y[i] != -1.0)
        self.nkr = n
        return 0

    # the number of examples and the per-example arrays as the reference's Python code
    # reads and writes them: the holder's count and its NumPy views (_PartitionArray)
    @property
    def n(self):
        return self.part.n

    @n.setter
    def n(self, n):
        self.part.set_n(n)

    y = _PartitionArray("y")
    alpha = _PartitionArray("alpha")
    g = _PartitionArray("g")
    p = _PartitionArray("p")
    d = _PartitionArray("d")
    a0 = _PartitionArray("a0")
    kdiag = _PartitionArray("kdiag")
    status = _PartitionArray("status")

    cdef int _clone_into(self, POKERState o) except -1:
        """Copy into the fresh state ``o`` (made by ``__new__``) the declared data: the
        parameters, the scalars, I_s, its columns and R, the marks and the cache (whose
        columns are shared: see below); the row store is shared, ``o``'s kernel is its
        own (``_trial_copy``)."""
        cdef Py_ssize_t j, a, L
        cdef double* buf
        o.n_features, o.sparse = self.n_features, self.sparse
        o.C, o.cache_size, o.refresh_every = self.C, self.cache_size, self.refresh_every
        o.departures, o.store = self.departures, self.store
        o._configure()
        o.part = self.part.copy()
        o.b, o.u, o.tau, o.t, o.kmax = self.b, self.u, self.tau, self.t, self.kmax
        o.n_iterations, o.n_exchanges = self.n_iterations, self.n_exchanges
        o.n_refresh, o.n_s_changes, o.budget = self.n_refresh, self.n_s_changes, self.budget
        o.fresh, o.phase = self.fresh, self.phase
        o._reserve(self.cap)
        o._reserve_s(max(self.ms.ns, 1))
        memcpy(o.kr, self.kr, self.nkr * sizeof(double))
        memcpy(o.y8, self.y8, self.nkr * sizeof(signed char))
        o.nkr = self.nkr
        o.nonunit = self.nonunit
        o.nonpm = self.nonpm
        self.ms.copy_into(o.ms)
        for j in range(self.ms.ns):
            o.spos[self.ms.S[j]] = j
        for j in range(self.nblk):
            o._dep_add(self.blist[j])
        # the cached columns are shared, not copied (a backup is made before every chunk;
        # docs, "Design notes"): a state that takes a shared column out of its cache
        # takes a copy (``_column``), one that drops it drops its share
        self.ccache.copy_into(o.ccache)
        return 0

    cdef int _zero_rows(self, Py_ssize_t start, Py_ssize_t stop) except -1:
        """New examples start..stop-1: 0 in every I_s column until they are activated."""
        self._reserve(stop)
        self.ms.zero_rows(start, stop)
        return 0

    cdef void _forget_kr(self) noexcept:
        self.nkr = 0
        self.nonunit = 0
        self.nonpm = 0

    # ------------------------------------------------------------------ cache
    cdef void _cache_drop_c(self, Py_ssize_t i) noexcept:
        """Forget the cached column of i (if any); its buffer goes to the pool."""
        self.ccache.drop(i)

    cdef int _cache_put_c(self, Py_ssize_t i, double* col) except -1:
        """Keep the column of an example that left I_s (reference ``_cache_put``): the
        buffer (length cap) is taken over; NaN where an id is not in the problem; the
        oldest columns go first beyond cache_size (a buffer not kept goes to the pool)."""
        cdef Py_ssize_t n = self.part.n
        return self.ccache.put(i, col, n, self.cap,
                               self.ccache.fits(n) and set_off(col, self.c_status, n, NAN) == 0)

    cdef double* _column_c(self, Py_ssize_t i, const Py_ssize_t* pid=NULL,
                         const double* pval=NULL, Py_ssize_t pm=0) except NULL:
        """k(x_l, x_i) for every id l < n into a buffer of length cap (the core's
        ``engine_column``, the reference's ``_column``): the cached part (taken out of the
        cache; the buffer is the cache's, or a copy when a copy shares it), the pm values
        given (k(x_pid[q], x_i) = pval[q], the ``part`` of the reference), the entries
        known from I_s's columns, k(x_i, x_i), and a kernel evaluation for the rest of the
        problem; NaN where unknown (ids not in the problem).  With nothing cached or
        given, the engine's fast path evaluates every row in one contiguous call."""
        cdef Py_ssize_t L = 0
        cdef double* col
        cdef bint clean = False
        self.col_clean = NULL
        if not self.ccache.take(i, self.cap, &col, &L, &clean):
            col = self.ms.pool_get()
        if engine_column(self.ms, self.kernel, self.store, i, self.part.n, self.c_status,
                         self.c_kdiag[i], col, col, L, clean, pid, pval, pm, 0, True,
                         False, True, self.kidx, self.tmp):
            self.col_clean = col             # no NaN: _add_to_S need not look
        return col

    # ------------------------------------------------------------------ factorisation
    cdef bint _refresh_c(self) except -1:
        """R afresh: getrf + getri of M = [[0, y_s'], [y_s, Q_ss]] (the margin set's
        ``inverse``); False if M is singular."""
        cdef int info
        if self.ms.ns == 0:
            return False
        info = self.ms.inverse(self.c_y, self.lu, self.ipiv, self.ms.R, self.ms.ld)
        if info == 3:
            _nomem()
        if info:
            return False
        self.fresh = True
        self.n_refresh += 1
        return True

    cdef int _s_changed(self) except -1:
        """Every ``refresh_every`` changes of I_s, the drift of R is probed (O(|I_s|^2),
        ``bordered_drift``) and R is computed afresh (O(|I_s|^3)) only above
        ``drift_refresh`` (departure ``refresh``)."""
        cdef double drift
        self.n_s_changes += 1
        if self.refresh_on and self.refresh_every and self.ms.ns \
                and self.n_s_changes % self.refresh_every == 0:
            drift = bordered_drift(self.ms.R, self.ms.ld, self.ms.ns, self.c_y, self.ms.S, self.ms.KS,
                                   self.rp, self.work)
            if not drift <= self.drift_refresh:
                self._refresh_c()
        return 0

    cdef int _add_to_S(self, Py_ssize_t i, double* col, double kappa) except -1:
        """i joins I_s (the core's ``engine_join``: bordered_start, or bordered_grow with
        beta in self.beta); its column buffer (NaN -> 0) becomes I_s's."""
        cdef Py_ssize_t k = self.ms.ns, l
        self._reserve_s(k + 1)
        if col != self.col_clean:
            for l in range(self.part.n):
                if isnan(col[l]):
                    col[l] = 0.0
        self.col_clean = NULL
        engine_join(self.ms, i, C_IS, self.c_status, self.c_y, self.c_kdiag[i], self.beta,
                    kappa, col)
        self.spos[i] = k
        self.c_g[i] = 0.0
        self.fresh = False
        self._s_changed()
        return 0

    cdef int _remove_from_S_c(self, Py_ssize_t pos, signed char new_status,
                              double* alpha=NULL, double value=0.0) except -1:
        """The member at ``pos`` leaves I_s (the core's ``engine_leave``: alpha = value
        when ``alpha`` is given, its column to the cache, bordered_shrink; R afresh if it
        is refused, or after the shrink of an ill-conditioned inverse)."""
        cdef Py_ssize_t s = self.ms.S[pos], k = self.ms.ns, a, n = self.part.n
        cdef double mx = 0.0
        cdef bint ill = False, refused = False, clean
        if k > 1:
            mx = self.ms.max_abs()
            ill = self.refresh_on and mx * max(1.0, self.kmax) > self.cond_refresh
        # the cache takes the buffer (NaN where an id is not in the problem: _cache_put_c)
        clean = self.ccache.fits(n) and set_off(self.ms.KS[pos], self.c_status, n, NAN) == 0
        # the scale of the shrink's singularity test is the mx just computed
        refused = engine_leave(self.ms, pos, new_status, self.c_status, alpha, value,
                               self.ccache, True, n, self.cap, clean, self.shrink_eps, mx)
        for a in range(pos, k - 1):
            self.spos[self.ms.S[a]] = a
        self.spos[s] = -1
        self.fresh = False
        if refused:
            if not self._refresh_c():
                raise _ref.SingularActiveSetError("POKER: singular active set after a removal")
        else:
            self._s_changed()
            if ill and self.ms.ns and not self.fresh:
                self._refresh_c()
        return 0

    cdef int _leave(self, Py_ssize_t who, bint up) except -1:
        """A member of I_s reached a bound: c (``up``, it joins I_c) or 0 (I_o)
        (reference ``_leave``)."""
        if up:
            self._remove_from_S_c(self.spos[who], C_IC, self.c_alpha, self.C)
        else:
            self._remove_from_S_c(self.spos[who], C_IO, self.c_alpha, 0.0)
        self.c_g[who] = 0.0
        self.gdot[who] = 0.0             # nothing pending for it
        self._dep_clear()
        return 0

    cdef void _solve_fixed(self, const double* r, double* out) noexcept:
        """out with Q_ss out = r (b fixed): out = R_ss r + dtau R_s0, dtau = -R_0s r / R_00."""
        cdef Py_ssize_t a, bb, k = self.ms.ns, ld = self.ms.ld
        cdef double s = 0.0, dtau
        for bb in range(k):
            s += self.ms.R[1 + bb] * r[bb]
        dtau = -s / self.ms.R[0]
        rows_dot(self.ms.R + ld + 1, ld, k, k, r, out)        # R_ss r, rows left to right
        for a in range(k):
            out[a] = out[a] + dtau * self.ms.R[(a + 1) * ld]

    cdef bint _qss_singular(self) noexcept:
        cdef Py_ssize_t a, ld = self.ms.ld
        cdef double vv = 0.0, v
        for a in range(self.ms.ns):
            v = self.ms.R[(a + 1) * ld]
            vv += v * v
        return -self.ms.R[0] <= EPS_PIVOT * self.kmax * vv

    cdef void _dep_clear(self) noexcept:
        cdef Py_ssize_t j
        for j in range(self.nblk):
            self.blk[self.blist[j]] = 0
        self.nblk = 0

    cdef void _dep_add(self, Py_ssize_t i) noexcept:
        if not self.blk[i]:
            self.blk[i] = 1
            self.blist[self.nblk] = i
            self.nblk += 1

    cdef void _flush(self) noexcept:
        """Apply the pending move of the g off I_s, g_i += gdot_i t (the reference's
        move, the same operation on the same numbers, only later: the next scan does it
        in its own pass over the examples, one pass fewer per breakpoint).  An example
        whose g was set to 0 since (it joined or left I_s) has its gdot zeroed then."""
        cdef Py_ssize_t i
        cdef signed char st
        cdef double tp = self.tpend
        if not self.pend:
            return
        for i in range(self.part.n):
            st = self.c_status[i]
            if st != C_IS and st >= 0:
                self.c_g[i] += self.gdot[i] * tp
        self.pend = False

    cdef int _hook(self) except -1:
        if self.hook is not None:
            self._flush()
            self.hook(self)
        return 0

    # ------------------------------------------------------------------ one breakpoint
    cdef int _direction(self, int mode) except -1:
        """The rates of the piece (reference ``_direction``): aS, bdot, inner, t_end,
        b_only, aF, terms (the rates gdot and their round-off bound are formed in the
        scan, ``_scan``)."""
        cdef Py_ssize_t n = self.part.n, k = self.ms.ns, a, j, i, nF = self.nF, ld = self.ms.ld
        cdef double sigma, s, h, acc
        cdef double* R = self.ms.R
        self.b_only = False
        self.bdot = 0.0
        if mode == M_FIXED:
            # Eq. 3 on I_s: -Q_ss dalpha_s = d_s du (b fixed)
            self.t_end = 1.0 - self.u
            if k:
                for a in range(k):
                    self.rv[a] = -self.c_d[self.ms.S[a]]
                self._solve_fixed(self.rv, self.aS)
        elif mode == M_BIAS:
            # Eq. 4 along tau = y'alpha: [-db; dalpha_s] = R [sigma; 0]
            sigma = 1.0 if self.tau < 0 else -1.0
            if k:
                self.t_end = fabs(self.tau)
                self.bdot = -(sigma * R[0])
                for a in range(k):
                    self.aS[a] = sigma * R[(a + 1) * ld]
            else:
                # y'alpha: the terms at c exactly, the others left to right (reference
                # ``_y_alpha``: the core's ``end_balance``)
                self.tau = end_balance(self.c_status, self.c_y, self.c_alpha, n, self.C)
                if fabs(self.tau) <= self.aw:
                    self.t_end = 0.0
                else:
                    sigma = 1.0 if self.tau < 0 else -1.0
                    self.t_end = INFINITY
                    self.b_only = True
                    self.bdot = sigma
        else:
            # decrement: alpha_F = (1 - t) a0_F; joint increment: alpha_F = t a0_F; I_s
            # rows and y'alpha = 0 kept
            self.t_end = 1.0 - self.t
            for j in range(nF):
                self.aF[j] = (-self.c_a0[self.c_F[j]] if mode == M_UNLEARN
                              else self.c_a0[self.c_F[j]])
            s = 0.0
            for j in range(nF):
                s += self.c_y[self.c_F[j]] * self.aF[j]
            h = -s
            for j in range(nF):
                self.yaF[j] = self.c_y[self.c_F[j]] * self.aF[j]
            if nF:
                self._form_vF()
            self.rv[0] = h
            for a in range(k):
                if nF:
                    self.rv[a + 1] = -(self.c_y[self.ms.S[a]] * self.vF[self.ms.S[a]])
                else:
                    self.rv[a + 1] = 0.0
            if k:
                # [-bdot; aS] = R rv, every row left to right (the core's rows_dot)
                rows_dot(R, ld, 1, k + 1, self.rv, &self.bdot)
                self.bdot = -self.bdot
                rows_dot(R + ld, ld, k, k + 1, self.rv, self.aS)
            elif fabs(h) <= self.aw:
                pass
            else:
                self.t_end = INFINITY
                self.b_only = True
                self.bdot = 1.0 if h > 0 else -1.0
                for j in range(nF):
                    self.aF[j] = 0.0
                    self.yaF[j] = self.c_y[self.c_F[j]] * 0.0
                if nF:
                    self._form_vF()
        # the sensitivities, O(n |I_s|): every sum over I_s left to right
        for a in range(k):
            self.z[a] = self.c_y[self.ms.S[a]] * self.aS[a]
        refsvm_cols_matvec(self.inner, self.ms.KS, self.z, k, n, self.back)   # the core's sweep
        self.back = not self.back            # the next sweep the other way (the same sums)
        if nF:
            for i in range(n):
                self.inner[i] = self.inner[i] + self.vF[i]
        # (the rates gdot = y inner - y bdot (+ d) are formed in the event scan)
        s = 0.0
        for a in range(k):
            s += fabs(self.aS[a]) * self.kr[self.ms.S[a]]
        acc = 0.0
        for j in range(nF):
            acc += fabs(self.aF[j]) * self.kr[self.c_F[j]]
        self.terms = s + acc
        return 0

    cdef Py_ssize_t _scan(self, bint fixed) noexcept:
        """The rates gdot_i = y_i inner_i - y_i db (+ d_i with b fixed) of every example,
        and the join candidates into ``cand`` (returns their number): an s_o or a xi_c
        moving to 0 faster than the round-off bound of its rate (reference: I_o with
        gdot < -rtol, I_c with gdot > rtol, not left dependent), collected without a
        branch on the (unpredictable) outcome; their steps max(0, -g_i / gdot_i) into
        ``cts``, the smallest into ``cmin`` (the first in id order among equal ones, as
        the reference's one-by-one pass 1) and the smallest |gdot| into ``cgmin``.
        Eight examples at a time where the CPU has AVX-512F (``refsvm_poker_scan8``: the
        same operations in each lane), the rest one by one."""
        cdef Py_ssize_t i, c, n = self.part.n, ncand = 0, start = 0, nvec = 0
        cdef double gd, rt, ts, bd = self.bdot, base, terms = self.terms
        cdef double tmin = INFINITY, gmin = INFINITY
        cdef double* y = self.c_y
        cdef double* inner = self.inner
        cdef double* gdot = self.gdot
        cdef double* kr = self.kr
        cdef double* d = self.c_d
        cdef signed char* status = self.c_status
        cdef signed char* blk = self.blk
        cdef Py_ssize_t* cand = self.cand
        cdef double* cts = self.cts
        cdef signed char st
        cdef double* g = self.c_g
        cdef double tp = self.tpend
        cdef bint pend = self.pend
        base = fabs(bd)
        if _VECTOR_SCAN and refsvm_poker_scan_vector():
            ncand = refsvm_poker_scan8(n, fixed, y, inner, gdot, g, kr if self.nonunit else NULL,
                                       d, status, blk, cand,
                                       cts, bd, terms, base, tp, pend, EPS_RATE, C_IO, C_IS,
                                       C_IC, &tmin, &gmin, &start,
                                       NULL if self.nonpm else self.y8)
            nvec = ncand
        if fixed:
            for i in range(start, n):
                gd = (y[i] * inner[i] - y[i] * bd) + d[i]
                st = status[i]
                if pend and st != C_IS and st >= 0:
                    g[i] += gdot[i] * tp             # the previous move (``_flush``)
                gdot[i] = gd
                rt = EPS_RATE * ((kr[i] * terms + base) + fabs(d[i]))
                cand[ncand] = i
                ncand += (((st == C_IO) & (gd < -rt)) | ((st == C_IC) & (gd > rt))) & (blk[i] == 0)
        else:
            for i in range(start, n):
                gd = y[i] * inner[i] - y[i] * bd
                st = status[i]
                if pend and st != C_IS and st >= 0:
                    g[i] += gdot[i] * tp             # the previous move (``_flush``)
                gdot[i] = gd
                rt = EPS_RATE * ((kr[i] * terms + base) + 0.0)
                cand[ncand] = i
                ncand += (((st == C_IO) & (gd < -rt)) | ((st == C_IC) & (gd > rt))) & (blk[i] == 0)
        self.pend = False
        for c in range(nvec, ncand):
            i = cand[c]
            gd = gdot[i]
            ts = _max0(-g[i] / gd)
            cts[c] = ts
            if ts < tmin:
                tmin = ts
            if fabs(gd) < gmin:
                gmin = fabs(gd)
        if tmin == 0.0:
            # a zero step: the first in id order, as one by one (its sign)
            for c in range(ncand):
                if cts[c] == 0.0:
                    tmin = cts[c]
                    break
        self.cmin = tmin
        self.cgmin = gmin
        return ncand

    cdef int _follow_c(self, int mode) except -1:
        """Follow the path of ``mode`` to the end of its parameter (reference ``_follow``)."""
        cdef Py_ssize_t n = self.part.n, k, a, i, c, ncand, who, it, max_iter
        cdef double athr, r, ts, tmin, w_end, t, gd, gmin, wmax, C = self.C
        cdef signed char st
        cdef int kind
        cdef bint fixed = mode == M_FIXED
        cdef EventChoice e
        self.phase = mode
        self._dep_clear()
        if fixed and self.regularise_on:
            self._regularise_fixed()
        max_iter = 50 * (n + 10)
        for it in range(max_iter):
            if PyErr_CheckSignals() == -1:
                self._flush()
                return -1
            k = self.ms.ns
            self._direction(mode)
            # ---- pass 1: the smallest step (Sec. 3: "b can increase until one of the
            # four types of inequality constraints becomes active")
            event_start(&e, self.t_end)
            gmin = INFINITY
            athr = 0.0
            for a in range(k):
                if fabs(self.aS[a]) > athr:
                    athr = fabs(self.aS[a])
            athr = EPS_ARATE * athr
            if mode == M_JOINT:
                # relative to the rates of F too (reference)
                for c in range(self.nF):
                    if EPS_ARATE * fabs(self.aF[c]) > athr:
                        athr = EPS_ARATE * fabs(self.aF[c])
            for a in range(k):
                r = self.aS[a]
                if r > athr and r > 0:
                    ts = (C - self.c_alpha[self.ms.S[a]]) / r
                elif r < -athr and r < 0:
                    ts = (-self.c_alpha[self.ms.S[a]]) / r
                else:
                    self.tsS[a] = INFINITY
                    self.wsS[a] = -1.0            # not moving: no event
                    continue
                ts = _max0(ts)
                self.tsS[a] = ts
                self.wsS[a] = self.aw / fabs(r)
                event_smaller(&e, ts, EV_LEAVE, self.ms.S[a])
            ncand = self._scan(fixed)    # the rates, the candidates and their steps
            if mode == M_JOINT:
                ncand = self._scan_forced(ncand)
            if ncand:
                event_smaller(&e, self.cmin, EV_JOIN, -1)
                gmin = self.cgmin
            tmin = e.t
            # ---- pass 2: the end first, then the least id among the tied events
            kind = -1
            who = -1
            if tmin < INFINITY:
                w_end = 1e-15 if mode != M_BIAS else 1e-15 * max(1.0, fabs(self.tau))
                event_start(&e, tmin)
                if event_tied(self.t_end, tmin, w_end):
                    event_take(&e, EV_END, -1)
                else:
                    for a in range(k):
                        if self.wsS[a] >= 0.0 and event_tied(self.tsS[a], tmin, self.wsS[a]):
                            event_least_index(&e, EV_LEAVE, self.ms.S[a])
                    # EPS_G / gmin bounds every window: a candidate beyond it is not tied
                    wmax = EPS_G / gmin if ncand else 0.0
                    for c in range(ncand):
                        if self.cts[c] <= tmin + wmax:
                            i = self.cand[c]
                            if event_tied(self.cts[c], tmin, EPS_G / fabs(self.gdot[i])):
                                event_least_index(&e, EV_JOIN, i)
                kind = e.kind
                who = e.index
            t = self.t_end if kind == EV_END else tmin
            if kind < 0 and mode == M_UNLEARN:
                # I_s emptied at t = 1 up to round-off: the decrement is over
                t = 0.0
                kind = EV_END
                self.bdot = 0.0
            if kind < 0:
                raise _ref.SingularActiveSetError("POKER: unbounded piece (no event ends it)")
            if self.budget == 0:
                self._flush()
                raise _Budget()
            # ---- move along the piece
            for a in range(k):
                i = self.ms.S[a]
                self.c_alpha[i] = _clip(self.c_alpha[i] + self.aS[a] * t, C)
            if mode == M_UNLEARN and not self.b_only:
                for c in range(self.nF):
                    i = self.c_F[c]
                    self.c_alpha[i] = _max0(self.c_alpha[i] + self.aF[c] * t)
            elif mode == M_JOINT and not self.b_only:
                for c in range(self.nF):
                    i = self.c_F[c]
                    self.c_alpha[i] = _clip(self.c_alpha[i] + self.aF[c] * t, C)
            self.b += self.bdot * t
            # g_i += gdot_i t off I_s: left pending, done by the next scan (``_flush``)
            self.tpend = t
            self.pend = True
            if fixed:
                self.u += t
            elif mode == M_BIAS and not self.b_only:
                self.tau += (1.0 if self.tau < 0 else -1.0) * t
            elif (mode == M_UNLEARN or mode == M_JOINT) and not self.b_only:
                self.t += t
            self.n_iterations += 1
            if self.budget > 0:
                self.budget -= 1
            # ---- the breakpoint: update the partition
            if kind == EV_END:
                self._flush()
                if fixed:
                    self.u = 1.0
                elif mode == M_BIAS:
                    self.tau = 0.0
                else:
                    self.t = 1.0
                    for c in range(self.nF):
                        self.c_alpha[self.c_F[c]] = (0.0 if mode == M_UNLEARN
                                                     else self.c_a0[self.c_F[c]])
                self._hook()
                return 0
            if kind == EV_LEAVE:
                self._leave(who, self.aS[self.spos[who]] > 0)
            else:
                self.c_g[who] = 0.0
                self.gdot[who] = 0.0
                if self.c_status[who] == C_FORCED:
                    # joint increment: who leaves F at alpha = t c and joins I_s as an
                    # example off its bound (reference)
                    self._f_remove(who)
                    self.c_status[who] = C_IC
                self._join(who, mode)
            self._hook()
        raise _ref.CyclingError("POKER: too many breakpoints (cycling?)")

    cdef Py_ssize_t _scan_forced(self, Py_ssize_t ncand) noexcept:
        """Joint increment: the members of F (g < 0, alpha_F = t c) whose g rises to 0
        faster than the round-off bound of its rate join the candidates (reference: F
        with gdot > rtol, not left dependent), their steps into ``cts``, ``cmin`` and
        ``cgmin`` updated.  Their rates and g are the scan's (status F >= 0)."""
        cdef Py_ssize_t c, i
        cdef double gd, rt, ts, base = fabs(self.bdot)
        for c in range(self.nF):
            i = self.c_F[c]
            gd = self.gdot[i]
            rt = EPS_RATE * ((self.kr[i] * self.terms + base) + 0.0)
            if gd > rt and self.blk[i] == 0:
                ts = _max0(-self.c_g[i] / gd)
                self.cand[ncand] = i
                self.cts[ncand] = ts
                ncand += 1
                if ts < self.cmin:
                    self.cmin = ts
                if fabs(gd) < self.cgmin:
                    self.cgmin = fabs(gd)
        return ncand

    cdef int _form_vF(self) except -1:
        """vF_i = sum_j KF_ij yaF_j (j left to right, the reference's ``matvec``) for
        every row, formed again only when F or yaF changed since (bit for bit)."""
        cdef Py_ssize_t i, j, n = self.part.n, nF = self.nF
        cdef double acc
        if self.vF_n == nF and memcmp(self.vF_ya, self.yaF, nF * sizeof(double)) == 0:
            return 0
        for i in range(n):
            acc = 0.0
            for j in range(nF):
                acc = acc + self.c_KF[i * nF + j] * self.yaF[j]
            self.vF[i] = acc
        memcpy(self.vF_ya, self.yaF, nF * sizeof(double))
        self.vF_n = nF
        return 0

    cdef int _f_remove(self, Py_ssize_t who) except -1:
        """Take ``who`` out of F and its column out of KF (row-major n x nF, compacted
        in place; reference ``np.delete``)."""
        cdef Py_ssize_t c, pos = -1, i, j, n = self.part.n, nF = self.nF
        for c in range(nF):
            if self.c_F[c] == who:
                pos = c
                break
        if pos < 0:
            raise _ref.PathError("POKER: joining member not in F (internal error)")
        for c in range(pos, nF - 1):
            self.c_F[c] = self.c_F[c + 1]
        for i in range(n):
            for j in range(nF):
                if j != pos:
                    self.c_KF[i * (nF - 1) + (j if j < pos else j - 1)] = self.c_KF[i * nF + j]
        self.nF = nF - 1
        self.vF_n = -1
        return 0

    cdef int _join(self, Py_ssize_t i, int mode) except -1:
        """Example i (in I_o or I_c, g_i = 0) joins I_s; a zero pivot (i dependent on
        I_s) goes through an exchange along the null direction (reference ``_join``)."""
        cdef double* col = self._column_c(i)
        cdef double sigma = 1.0 if self.c_status[i] == C_IO else -1.0
        cdef double q_ii, kb = 0.0, kappa = 0.0, scale = 0.0, scale_b, s, athr, a, ts, tmin
        cdef double tflip
        cdef double C = self.C
        cdef bint changed = False, owned = True
        cdef Py_ssize_t k, pos, j, who, attempt
        cdef int kind
        cdef EventChoice e
        try:
            while True:
                k = self.ms.ns
                self._reserve_s(k + 1)
                q_ii = self.c_kdiag[i]
                if k == 0:
                    if not (mode == M_FIXED and q_ii <= EPS_PIVOT_ABS * self.kmax):
                        owned = False
                        self._add_to_S(i, col, 0.0)
                        self._dep_clear()
                        return 0
                    # alpha_i alone: nothing moves (exchange with the flip only)
                elif self.duplicates_on and self._duplicate(i, col) >= 0:
                    # i is a copy of the member at pos: its exact null direction
                    # (reference ``_join``)
                    pos = self._duplicate(i, col)
                    for j in range(k):
                        self.z[j] = 0.0
                    self.z[pos] = -sigma * (self.c_y[i] * self.c_y[self.ms.S[pos]])
                else:
                    self.m[0] = self.c_y[i]
                    for j in range(k):
                        self.m[j + 1] = (self.c_y[self.ms.S[j]] * self.c_y[i]) * col[self.ms.S[j]]
                    for attempt in range(2):
                        bordered_beta(self.ms.R, self.ms.ld, k + 1, self.m, self.beta)
                        kb = bordered_pivot(q_ii, self.m, self.beta, k + 1)
                        s = 0.0
                        for j in range(k + 1):
                            s += fabs(self.m[j]) * fabs(self.beta[j])
                        scale_b = fabs(q_ii) + s
                        if mode == M_FIXED:
                            self._solve_fixed(self.m + 1, self.z)     # Q_ss z = Q_si
                            s = 0.0
                            for j in range(k):
                                s += self.m[j + 1] * self.z[j]
                            kappa = q_ii - s
                            s = 0.0
                            for j in range(k):
                                s += fabs(self.m[j + 1]) * fabs(self.z[j])
                            scale = fabs(q_ii) + s
                        else:
                            for j in range(k):
                                self.z[j] = -self.beta[j + 1]
                            kappa = kb
                            scale = scale_b
                        if (not self.refresh_on or not pivot_doubtful(kappa, scale, self.doubt)
                                or attempt == 1 or self.fresh):
                            break
                        if not self._refresh_c():             # doubtful: re-solve
                            break
                    if not pivot_is_zero(kappa, scale, self.kmax, EPS_PIVOT, EPS_PIVOT_ABS):
                        owned = False
                        self._add_to_S(i, col, kb)
                        if self.refresh_on and kappa <= self.small_pivot * scale:
                            self._refresh_c()                     # a small pivot: R afresh
                        if not changed:
                            self._dep_clear()
                        return 0
                    for j in range(k):
                        self.z[j] = -sigma * self.z[j]            # dalpha_s per unit of alpha_i
                # ---- exchange: alpha_i moves off its bound along the null direction until
                # a member of I_s reaches a bound (it leaves, i joins) or alpha_i reaches
                # its other bound; i's own event first
                athr = 1.0
                if k:
                    athr = 0.0
                    for j in range(k):
                        if fabs(self.z[j]) > athr:
                            athr = fabs(self.z[j])
                    athr = max(1.0, athr)
                athr = EPS_ARATE * athr
                # (alpha_i at 0 or C, or inside its box when it left F: the distance)
                tflip = (C - self.c_alpha[i]) if sigma > 0 else self.c_alpha[i]
                tmin = self._bound_steps(self.z, k, athr, tflip)
                event_start(&e, tmin)
                if event_tied(tflip, tmin, self.aw):
                    event_take(&e, EV_FLIP, i)
                else:
                    for j in range(k):
                        if self.wsS[j] >= 0.0 and event_tied(self.tsS[j], tmin, self.wsS[j]):
                            event_least_index(&e, EV_LEAVE, self.ms.S[j])
                kind = e.kind
                who = e.index
                if kind < 0:
                    raise _ref.PathError("POKER: exchange without an event (internal error)")
                for j in range(k):
                    self.c_alpha[self.ms.S[j]] = _clip(self.c_alpha[self.ms.S[j]]
                                                      + self.z[j] * tmin, C)
                # the members whose event is tied with the one taken reach their bound
                # with it (reference)
                for j in range(k):
                    if self.wsS[j] >= 0.0 and event_tied(self.tsS[j], tmin, self.wsS[j]):
                        self.c_alpha[self.ms.S[j]] = C if self.z[j] > 0 else 0.0
                self.n_iterations += 1
                self.n_exchanges += 1
                if kind == EV_FLIP:
                    self.c_alpha[i] = C if sigma > 0 else 0.0
                    self.c_status[i] = C_IC if sigma > 0 else C_IO
                    self.c_g[i] = 0.0
                    self.gdot[i] = 0.0
                    owned = False
                    self._cache_put_c(i, col)
                    self._dep_add(i)
                    return 0
                self.c_alpha[i] += sigma * tmin
                self._leave(who, self.z[self.spos[who]] > 0)
                self._dep_add(who)             # I_s changed: the older marks go
                changed = True
                # i is now strictly inside its box: it joins the smaller I_s (retry)
        finally:
            if owned:
                self.ms.pool_put(col, self.cap)

    cdef Py_ssize_t _duplicate(self, Py_ssize_t i, const double* col) noexcept:
        """Position in I_s of the first member identical to i in feature space, or -1
        (reference ``_duplicate``)."""
        cdef Py_ssize_t j
        cdef double q = self.c_kdiag[i]
        for j in range(self.ms.ns):
            if col[self.ms.S[j]] == q and self.c_kdiag[self.ms.S[j]] == q:
                return j
        return -1

    cdef double _bound_steps(self, double* rate, Py_ssize_t k, double athr,
                             double tmin) noexcept nogil:
        """The step at which each member S[j] of I_s, moving at rate[j], reaches 0 or C
        (into tsS, its tie window into wsS), and the smallest of them and ``tmin``; a rate
        within athr of 0 is set to 0 and marked with wsS = -1 (no event, no move: the
        reference).  Shared by the exchange of a joining example and the null direction."""
        cdef Py_ssize_t j
        cdef double a, ts, C = self.C
        for j in range(k):
            a = rate[j]
            if a > athr:
                ts = _max0((C - self.c_alpha[self.ms.S[j]]) / a)
            elif a < -athr:
                ts = _max0(-self.c_alpha[self.ms.S[j]] / a)
            else:
                self.wsS[j] = -1.0
                rate[j] = 0.0
                continue
            self.tsS[j] = ts
            self.wsS[j] = self.aw / fabs(a)
            if ts < tmin:
                tmin = ts
        return tmin

    cdef int _regularise_fixed(self) except -1:
        """Before a fixed-bias path: while Q_ss is singular, move alpha_s along its null
        vector v = R_s0 until a member reaches a bound and leaves (reference)."""
        cdef Py_ssize_t rep, k, a, pos, who, ld
        cdef double athr, r, ts, tmin, C = self.C
        cdef signed char new
        cdef EventChoice e
        for rep in range(self.ms.ns + 1):
            if self.ms.ns == 0 or not self._qss_singular():
                return 0
            if not self.fresh:
                self._refresh_c()
                if not self._qss_singular():
                    return 0
            k = self.ms.ns
            ld = self.ms.ld
            athr = 0.0
            for a in range(k):
                self.rv[a] = self.ms.R[(a + 1) * ld]
                if fabs(self.rv[a]) > athr:
                    athr = fabs(self.rv[a])
            athr = EPS_ARATE * athr
            tmin = self._bound_steps(self.rv, k, athr, INFINITY)
            if not tmin < INFINITY:
                raise _ref.PathError("POKER: no event on the null direction (internal error)")
            event_start(&e, tmin)
            for a in range(k):
                if self.wsS[a] >= 0.0 and event_tied(self.tsS[a], tmin, self.wsS[a]):
                    event_least_index(&e, EV_LEAVE, self.ms.S[a])
            who = e.index
            for a in range(k):
                self.c_alpha[self.ms.S[a]] = _clip(self.c_alpha[self.ms.S[a]] + self.rv[a] * tmin, C)
            pos = self.spos[who]
            new = C_IC if self.rv[pos] > 0 else C_IO
            self.c_alpha[who] = C if new == C_IC else 0.0
            self._remove_from_S_c(pos, new)
            self.c_g[who] = 0.0
            self.n_iterations += 1
            self.n_exchanges += 1
            self._hook()
        return 0

    # ------------------------------------------------------------------ the paths' entries
    def _follow(self, int mode):
        """Follow the path of ``mode`` to its end (reference ``_follow``): ``_follow_c``
        on the state's arrays, with the set F and its columns KF of a decrement or a
        joint increment."""
        cdef cnp.ndarray KF
        cdef Py_ssize_t j, n
        self.bind()
        self.hook = self.breakpoint_hook
        self.nF = 0
        try:
            if mode == M_UNLEARN or mode == M_JOINT:
                self._F_arr = np.array(self.F, dtype=np.intp)
                self.nF = self._F_arr.shape[0]
                if self.nF:
                    # compacted in place as members leave F (``_f_remove``): no copy of
                    # an array the state hands over C-ordered (``_f_columns``'s)
                    self._KF_arr = np.ascontiguousarray(self.KF, dtype=np.float64).reshape(-1)
                    KF = self._KF_arr
                    self.c_F = <Py_ssize_t*> cnp.PyArray_DATA(self._F_arr)
                    self.c_KF = <double*> cnp.PyArray_DATA(KF)
                    _resize(<void**> &self.aF, self.nF, sizeof(double))
                    _resize(<void**> &self.yaF, self.nF, sizeof(double))
                    _resize(<void**> &self.vF_ya, self.nF, sizeof(double))
                    _resize(<void**> &self.vF, self.part.n, sizeof(double))
            self.vF_n = -1
            self._follow_c(mode)
        finally:
            if (mode == M_JOINT or mode == M_UNLEARN) and self._F_arr is not None:
                # F less the members that joined I_s on the way (``_f_remove``), also
                # when the path stopped: F and KF stay consistent, as the reference's
                n = self.part.n
                self.F = self._F_arr[: self.nF].copy()
                self.KF = (self._KF_arr[: n * self.nF].reshape(n, self.nF)
                           if self.nF else np.zeros((0, 0)))
            self._flush()
            self.hook = None
            self.nF = 0
            self._F_arr = None
            self._KF_arr = None

    def _remove_from_S(self, Py_ssize_t pos, int new_status):
        """The member at ``pos`` leaves I_s (reference ``_remove_from_S``)."""
        self.bind()
        if not 0 <= pos < self.ms.ns:
            raise IndexError(pos)
        self._remove_from_S_c(pos, <signed char> new_status)

    def _refresh(self):
        """R afresh (reference ``_refresh``); False if M is singular."""
        self.bind()
        return bool(self._refresh_c())

    def _column(self, Py_ssize_t i, part=None):
        """The reference's ``_column(i, part)`` (its cached column leaves the cache)."""
        cdef double* col
        cdef const Py_ssize_t[::1] pid = np.ascontiguousarray(
            part[0] if part is not None else np.zeros(0, dtype=np.intp), dtype=np.intp)
        cdef const double[::1] pval = np.ascontiguousarray(
            part[1] if part is not None else np.zeros(0), dtype=np.float64)
        cdef Py_ssize_t q, pm = pid.shape[0]
        self.bind()
        if pval.shape[0] != pm:
            raise ValueError("column: part must be (ids, values) of one length")
        for q in range(pm):
            if not 0 <= pid[q] < self.part.n:
                raise IndexError(pid[q])
        col = self._column_c(i, &pid[0] if pm else NULL, &pval[0] if pm else NULL, pm)
        out = np.empty(self.part.n)
        cdef double[::1] o = out
        if self.part.n:
            memcpy(&o[0], col, self.part.n * sizeof(double))
        self.ms.pool_put(col, self.cap)
        return out

    def _f_columns(self, F, sv_off, V):
        """The reference's ``_f_columns``: the columns of F (row-major n x |F|, 0 off
        the problem), the values with sv_off taken from the rows of V, each column then
        handed to the cache (its buffer taken over).  Four consecutive members without a
        cached column go together, through the core's ``engine_column4`` (the rows left
        to evaluate, in the problem, off I_s and sv_off, are the same for the four: one
        ``kernel_many4`` pass; the same columns and count as the reference's one by one)."""
        cdef const Py_ssize_t[::1] Fv = np.ascontiguousarray(F, dtype=np.intp)
        cdef const Py_ssize_t[::1] pid = np.ascontiguousarray(sv_off, dtype=np.intp)
        cdef const double[:, ::1] Vv = np.ascontiguousarray(V, dtype=np.float64)
        cdef Py_ssize_t c, l, a, r, q, nF = Fv.shape[0], pm = pid.shape[0], n, nr = 0, ng
        cdef double* col
        cdef double* gcol[4]
        cdef double* gout[4]
        cdef Py_ssize_t grp[4]
        cdef double kc[4]
        self.bind()
        n = self.part.n
        if Vv.shape[0] != nF or Vv.shape[1] != pm:
            raise ValueError("f_columns: V must be |F| x |sv_off|")
        for c in range(nF):
            if not 0 <= Fv[c] < n or self.c_status[Fv[c]] < 0:
                raise IndexError(Fv[c])
        for l in range(pm):
            if not 0 <= pid[l] < n:
                raise IndexError(pid[l])
        KF = np.empty((n, nF))
        cdef double[:, ::1] K = KF
        vals = np.empty((4, max(n, 1)))
        cdef double[:, ::1] vv = vals
        c = 0
        while c < nF:                        # in F's order, as the reference
            ng = 4 if c + 4 <= nF else 0
            for a in range(ng):
                if self.ccache.has(Fv[c + a]):
                    ng = 0                   # a cached part: member c on its own
            if ng == 0:
                col = self._column_c(Fv[c], &pid[0] if pm else NULL,
                                   &Vv[c, 0] if pm else NULL, pm)
                self._f_column_out(K, c, Fv[c], col)
                c += 1
                continue
            for a in range(4):
                grp[a] = Fv[c + a]
                kc[a] = self.c_kdiag[grp[a]]
                gcol[a] = self.ms.pool_get()
                gout[a] = &vv[a, 0]
            engine_column4(self.ms, self.kernel, self.store, grp, n, self.c_status, kc, gcol,
                           &pid[0] if pm else NULL, &Vv[c, 0] if pm else NULL, pm, pm,
                           False, self.kidx, gout)
            for a in range(4):
                self._f_column_out(K, c + a, grp[a], gcol[a])
            c += 4
        return KF

    cdef int _f_column_out(self, double[:, ::1] K, Py_ssize_t c, Py_ssize_t j,
                           double* col) except -1:
        """Column c of KF from j's column col (0 where unknown); col then goes to the
        cache (for j's join, not evaluated again)."""
        cdef Py_ssize_t l
        cdef double v
        for l in range(self.part.n):
            v = col[l]
            K[l, c] = 0.0 if isnan(v) else v
        self._cache_put_c(j, col)
        return 0

    # ------------------------------------------------------------------ the column cache
    def _cache_put(self, Py_ssize_t i, col):
        """Keep the column of an example that left I_s (reference ``_cache_put``)."""
        cdef double* buf
        cdef const double[::1] c = np.ascontiguousarray(col, dtype=np.float64)
        self.bind()
        buf = self.ms.pool_get()
        if self.part.n:
            memcpy(buf, &c[0], min(self.part.n, c.shape[0]) * sizeof(double))
        self._cache_put_c(i, buf)

    def _cache_drop(self, Py_ssize_t i):
        """Forget the cached column of i (reference ``_cache_drop``)."""
        self._cache_drop_c(i)

    def _cache_arrays(self):
        """The cache as arrays (reference ``_cache_arrays``): ids oldest first, lengths,
        the columns one after another."""
        ids, lens, cols = self.ccache.arrays()
        return {"cache_ids": ids, "cache_len": lens, "cache_cols": cols}

    def _cache_load(self, ids, lengths, cols):
        """The cache from the arrays of :meth:`_cache_arrays`."""
        self.ccache.clear()
        for i, L in zip(np.asarray(ids).tolist(), np.asarray(lengths).tolist()):
            self._reserve(max(i + 1, L))
        self.ccache.load(ids, lengths, cols)

    @property
    def cache(self):
        """The column cache as the reference holds it (a
        :class:`refsvm.core.column_cache.ColumnCache`, a copy)."""
        return _column_cache.ColumnCache.from_arrays(*self.ccache.arrays())

    @cache.setter
    def cache(self, value):
        if len(value):
            raise ValueError("set the cache through _cache_load")
        self._cache_load([], [], np.zeros(0))

    # ------------------------------------------------------------------ the polish
    def _newton(self, r):
        """The Newton step of the polish (the reference's ``EndOfChunk._newton``) by the
        core's: [db; dalpha_s] = -R r through the margin set's R, by rows
        (``polish_step``), taken by ``polish_refine`` with POKER's sign of the bias unless
        an alpha_s leaves [0, c].  True if taken."""
        cdef const double[::1] rv = np.ascontiguousarray(r, dtype=np.float64)
        cdef double[::1] av = self.alpha
        cdef Py_ssize_t nn = self.ms.ns + 1
        if rv.shape[0] != nn or av.shape[0] < self.part.n:
            raise ValueError("the residual does not match I_s")
        work = np.empty(2 * nn)
        cdef double[::1] wv = work
        polish_step(self.ms, &rv[0], &wv[0], NULL)
        return bool(polish_refine(self.ms, &av[0], &self.b, &wv[0], self.C, -1.0, -1.0,
                                  INFINITY, &wv[nn]))

    # the correctly rounded sums of the check and the polish (the reference's
    # ``EndOfChunk`` methods of the same names): the core's compiled sum
    # (refsvm/_csrc/refsvm_fsum.c), the bits of ``math.fsum``
    def _fsum(self, values):
        """sum(values), correctly rounded."""
        return _core_fsum(values)

    # the ordered sums of the end check (the reference's ``EndOfChunk`` methods of the
    # same names): the core's compiled ``end_balance`` and ``end_wrong_side``
    def _end_balance(self):
        """y'alpha at the end of a path (C times the sum of y at C, the other terms
        summed left to right)."""
        cdef Py_ssize_t n = self.part.n
        cdef const signed char[::1] sv = self.status
        cdef const double[::1] yv = self.y
        cdef const double[::1] av = self.alpha
        if min(sv.shape[0], yv.shape[0], av.shape[0]) < n:
            raise ValueError("the per-example arrays are shorter than n")
        if not n:
            return end_balance(NULL, NULL, NULL, 0, self.C)
        return end_balance(&sv[0], &yv[0], &av[0], n, self.C)

    def _end_wrong_side(self, double level):
        """How many examples of I_o and I_c have their kept g on the wrong side of 0 by
        more than ``level``."""
        cdef Py_ssize_t n = self.part.n
        cdef const signed char[::1] sv = self.status
        cdef const double[::1] gv = self.g
        if min(sv.shape[0], gv.shape[0]) < n:
            raise ValueError("the per-example arrays are shorter than n")
        if not n:
            return 0
        return int(end_wrong_side(&sv[0], &gv[0], n, level))

    def _exact_balance(self, y, alpha):
        """y'alpha, correctly rounded."""
        return _core_fsum(np.asarray(y, dtype=np.float64) * np.asarray(alpha, dtype=np.float64))

    def _g_exact(self, coef, K, y, b):
        """g of the rows of the kernel block K, correctly rounded, with POKER's sign of
        the bias."""
        return _core_g_exact(coef, K, y, b, -1.0)

    def _polish_g(self, ids, sv, double[::1] out):
        """out[i] = g_i for the examples i of ``ids`` in order, correctly rounded from
        alpha_j y_j of the support vectors ``sv``, their kernel values (counted; k(x_i,
        x_i) from ``kdiag``) and b: the core's ``g_exact_rows``, one nogil loop over the
        rows."""
        cdef const Py_ssize_t[::1] iv = np.ascontiguousarray(ids, dtype=np.intp)
        cdef const Py_ssize_t[::1] svv = np.ascontiguousarray(sv, dtype=np.intp)
        cdef Py_ssize_t nids = iv.shape[0], m = svv.shape[0]
        cdef const double[::1] cv = np.ascontiguousarray(self.alpha[sv] * self.y[sv],
                                                         dtype=np.float64)
        cdef const double[::1] yv = self.y
        cdef const double[::1] kd = self.kdiag
        cdef double[::1] kv = np.empty(max(m, 1))
        cdef CKernel kern = self.kernel
        cdef RowStore store = self.store
        cdef double b = self.b
        cdef int status
        if not nids:
            return
        if min(np.min(iv), np.min(svv) if m else 0) < 0 or max(
                np.max(iv), np.max(svv) if m else 0) >= min(out.shape[0], yv.shape[0],
                                                             kd.shape[0], self.part.n):
            raise ValueError("an id outside the examples")
        with nogil:
            status = g_exact_rows(kern, store, &iv[0], nids, &svv[0] if m else NULL, m,
                                  &cv[0] if m else NULL, &yv[0], &kd[0], b, -1.0, &kv[0],
                                  &out[0])
        fsum_check(status)

    # ------------------------------------------------------------------ I_s, R, KS
    @property
    def S(self):
        """I_s, the members in joining order (a list; a copy)."""
        return [self.ms.S[j] for j in range(self.ms.ns)]

    @S.setter
    def S(self, value):
        """I_s (persistence): the members in joining order; their columns are set by KS."""
        cdef Py_ssize_t j
        S = [int(s) for s in value]
        self.bind()
        for j in range(self.ms.ns):
            self.spos[self.ms.S[j]] = -1
            self.ms.pool_put(self.ms.KS[j], self.cap)
        self.ms.ns = 0
        self._reserve_s(len(S))
        for j, s in enumerate(S):
            self.ms.S[j] = s
            self.spos[s] = j
            self.ms.KS[j] = self.ms.pool_get()
            self.ms.ns = j + 1
        self._zero_rows(0, self.cap)
        self._dep_clear()

    @property
    def R(self):
        """The bordered inverse (a copy)."""
        cdef Py_ssize_t a, nn = self.ms.ns + 1 if self.ms.ns else 0
        out = np.zeros((nn, nn))
        cdef double[:, ::1] o = out
        for a in range(nn):
            memcpy(&o[a, 0], self.ms.R + a * self.ms.ld, nn * sizeof(double))
        return out

    @R.setter
    def R(self, R):
        R = np.asarray(R, dtype=np.float64)
        cdef Py_ssize_t a, bb, nn = R.shape[0]
        if nn and nn != self.ms.ns + 1:
            raise ValueError("R does not match I_s")
        self._reserve_s(max(nn - 1, 1))
        cdef const double[:, :] Rv = R
        for a in range(nn):
            for bb in range(nn):
                self.ms.R[a * self.ms.ld + bb] = Rv[a, bb]

    @property
    def KS(self):
        """KS[i, j] = k(x_i, x_S[j]) for the n examples (0 for ids not in the problem; a
        copy)."""
        return self._get_KS(self.part.n)

    @KS.setter
    def KS(self, KS):
        cdef const double[:, ::1] K = np.ascontiguousarray(KS, dtype=np.float64)
        if K.shape[1] < self.ms.ns and K.shape[0] > 0:
            raise ValueError("KS does not match I_s")
        if K.shape[0] and self.ms.ns:
            refsvm_rows_to_cols(self.ms.KS, &K[0, 0], K.shape[1], self.ms.ns,
                                min(K.shape[0], self.cap))

    def _get_KS(self, Py_ssize_t n):
        out = np.zeros((n, self.ms.ns))
        cdef double[:, ::1] o = out
        if n and self.ms.ns:
            refsvm_cols_to_rows(&o[0, 0], self.ms.ns, self.ms.KS, self.ms.ns, min(n, self.cap))
        return out

    def _saved_KS_R(self, n):
        """KS and R for ``save_state`` (reference ``_saved_KS_R``): the properties build
        fresh arrays, no second copy."""
        return {"KS": self._get_KS(n), "R": self.R}

    @property
    def dependent(self):
        """The examples left dependent by an exchange (a list; a copy)."""
        return [self.blist[j] for j in range(self.nblk)]

    @dependent.setter
    def dependent(self, ids):
        self._dep_clear()
        for i in ids:
            self._reserve(int(i) + 1)
            self._dep_add(int(i))

    # ------------------------------------------------------------------ storage and sums
    def _activate(self, ids):
        """KS rows of the pending ``ids`` (kernel values with every member), status I_o
        (reference ``_activate``)."""
        cdef const Py_ssize_t[::1] idx = np.ascontiguousarray(ids, dtype=np.intp)
        cdef Py_ssize_t r, j, m = idx.shape[0]
        cdef double[::1] tmp = np.empty(max(m, 1))
        self.bind()
        if m:
            for j in range(self.ms.ns):      # one member against all the ids (k_rows's bits)
                kernel_many(self.kernel, self.store, self.ms.S[j], &idx[0], m, &tmp[0])
                for r in range(m):
                    self.ms.KS[j][idx[r]] = tmp[r]
        for r in range(m):
            self.c_status[idx[r]] = C_IO

    def _f_of(self, ids, bint values=False):
        """w'phi(x_j) for the new ids (reference ``_f_of``): the support vectors in id
        order, the kernel values with I_s from its columns for the ids in the problem
        (a pending pool id has no row there yet).  The other values of one id come from
        one ``kernel_many`` call (``k_rows``'s bits, the same count), summed in the
        reference's order.  ``values``: ``(f, sv_off, V)``, V's row r the values of
        ids[r] with the support vectors off I_s."""
        cdef const Py_ssize_t[::1] idx = np.ascontiguousarray(ids, dtype=np.intp)
        cdef Py_ssize_t r, l, j, m = idx.shape[0], nsv = 0, nsx = 0, q
        cdef double acc, comp, kv
        self.bind()
        new = np.zeros(self.part.n, dtype=np.int8)
        cdef signed char[::1] isnew = new
        for r in range(m):
            isnew[idx[r]] = 1
        sv = np.empty(self.part.n, dtype=np.intp)
        coef = np.empty(self.part.n)
        cdef Py_ssize_t[::1] svv = sv
        cdef double[::1] cf = coef
        for l in range(self.part.n):
            if self.c_alpha[l] > 0.0 and self.c_status[l] >= 0 and not isnew[l]:
                svv[nsv] = l
                cf[nsv] = self.c_alpha[l] * self.c_y[l]
                nsv += 1
        svx = np.empty(max(nsv, 1), dtype=np.intp)   # the support vectors off I_s
        cdef Py_ssize_t[::1] sxv = svx
        for l in range(nsv):
            if self.spos[svv[l]] < 0:
                sxv[nsx] = svv[l]
                nsx += 1
        cdef double[::1] kv_buf = np.empty(max(nsv, 1))
        cdef double* kv_row
        V = np.empty((m, nsx)) if values else np.empty((0, 0))
        cdef double[:, ::1] Vv = V
        # the ids in the problem: their values with the support vectors off I_s four ids
        # at a time (``kernel_many4``, the same values and count as one by one), into V's
        # rows or a block of four
        kb = np.empty((4, max(nsx, 1)))
        cdef double[:, ::1] kbv = kb
        cdef Py_ssize_t grp[4]
        cdef Py_ssize_t grow[4]
        cdef double* gout[4]
        cdef Py_ssize_t ng = 0, a, rr
        out = np.zeros(m)
        cdef double[::1] o = out
        for rr in range(m + 1):
            if rr < m and self.c_status[idx[rr]] >= 0:
                grp[ng] = idx[rr]
                grow[ng] = rr
                ng += 1
            if ng == 4 or (rr == m and ng > 0):
                for a in range(ng):
                    gout[a] = &Vv[grow[a], 0] if (values and nsx) else &kbv[a, 0]
                if nsx and ng == 4:
                    kernel_many4(self.kernel, self.store, grp, &sxv[0], nsx, gout)
                elif nsx:
                    for a in range(ng):
                        kernel_many(self.kernel, self.store, grp[a], &sxv[0], nsx, gout[a])
                for a in range(ng):
                    # its kernel values with I_s are in the columns; summed compensated
                    # in id order (reference)
                    j = grp[a]
                    kv_row = gout[a]
                    acc = 0.0
                    comp = 0.0
                    q = 0
                    for l in range(nsv):
                        if self.spos[svv[l]] >= 0:
                            kv = self.ms.KS[self.spos[svv[l]]][j]
                        else:
                            kv = kv_row[q]
                            q += 1
                        neumaier_add(&acc, &comp, cf[l] * kv)
                    o[grow[a]] = acc + comp
                ng = 0
        for r in range(m):
            j = idx[r]
            if self.c_status[j] >= 0:
                continue
            acc = 0.0
            comp = 0.0                        # compensated (reference)
            kv_row = &kv_buf[0]
            if nsv:
                kernel_many(self.kernel, self.store, j, &svv[0], nsv, kv_row)
            q = 0
            for l in range(nsv):
                neumaier_add(&acc, &comp, cf[l] * kv_row[l])
                if values and self.spos[svv[l]] < 0:
                    Vv[r, q] = kv_row[l]
                    q += 1
            o[r] = acc + comp
        if values:
            return out, svx[:nsx].copy(), V
        return out

    def _kdiag_rows(self, Py_ssize_t start, Py_ssize_t stop):
        """k(x_i, x_i) of the stored rows start..stop-1 (counted)."""
        out = np.empty(stop - start)
        cdef double[::1] o = out
        cdef Py_ssize_t i
        for i in range(start, stop):
            o[i - start] = self.kernel.k_rows(self.store, i, i)
        return out



    def _class_sums(self, ids, at_c):
        """F_r = sum_{j at c} c y_j k(x_ids[r], x_j), compensated (reference
        ``_class_sums``; module function ``_class_sums``)."""
        idx = np.ascontiguousarray(ids, dtype=np.intp)
        ac = np.ascontiguousarray(at_c, dtype=np.intp)
        cy = self.C * self.y[ac]
        F = np.zeros(idx.shape[0])
        Fc = np.zeros(idx.shape[0])
        cdef const Py_ssize_t[::1] ids_v = idx
        cdef const Py_ssize_t[::1] ac_v = ac
        cdef const double[::1] cy_v = cy
        cdef const double[::1] kd = self.kdiag
        cdef double[::1] F_v = F
        cdef double[::1] Fc_v = Fc
        cdef double[::1] tmp = np.empty(4 * idx.shape[0])
        cdef RowStore store = self.store
        cdef CKernel kern = self.kernel
        with nogil:
            _class_sums(store, kern, ids_v, ac_v, cy_v, kd, F_v, Fc_v, tmp)
        return F + Fc

    def _append_rows(self, X, y):
        """Store the rows of X (2-D array or CSR) with labels y, pending; their ids
        (reference ``_append_rows``): the rows in the compiled row store too."""
        m = X.shape[0]
        n0, n1 = self.part.n, self.part.n + X.shape[0]
        if len(self.store) > n0:
            # a copy (_trial_copy) put back after its original stored more rows
            self.store.keep_rows(np.arange(n0, dtype=np.intp))
        if self.sparse:
            M = sp.csr_matrix(X, dtype=np.float64)
            M.indices = np.ascontiguousarray(M.indices, dtype=np.int32)
            rows = [get_row(M, r) for r in range(m)]
            self.rows.extend(SparseRow(np.array(x.indices, dtype=np.int32),
                                       np.array(x.data, dtype=np.float64)) for x in rows)
        else:
            M = np.ascontiguousarray(X, dtype=np.float64).reshape(m, self.n_features)
            self.rows.extend(M[r].copy() for r in range(m))
        for r in range(m):
            self.store.append(M, r)
        self.part.room(n1)                # the holder grows as grow_array: 0 and GONE beyond
        for name in ("y", "alpha", "g", "p", "d", "a0", "kdiag"):
            getattr(self, name)[n0:n1] = 0.0
        self.status[n0:n1] = PENDING
        self.y[n0:n1] = np.asarray(y, dtype=np.float64)
        self.kdiag[n0:n1] = self._kdiag_rows(n0, n1)
        for v in self.kdiag[n0:n1].tolist():
            self.kmax = max(self.kmax, abs(v))
        self.part.n = n1
        self._zero_rows(n0, n1)
        return np.arange(n0, n1, dtype=np.intp)

    def _append(self, x, y):
        """Store one example (reference ``_append``); its id."""
        if self.sparse:
            X = sp.csr_matrix((x.data, x.indices, [0, x.indices.shape[0]]),
                              shape=(1, self.n_features))
        else:
            X = np.asarray(x, dtype=np.float64).reshape(1, -1)
        return int(self._append_rows(X, [y])[0])

    def _k(self, Py_ssize_t a, Py_ssize_t b):
        """k(x_a, x_b) of two stored ids, counted."""
        cdef CKernel kern = self.kernel
        cdef RowStore store = self.store
        return kern.k_rows(store, a, b)

    def _kernel_value(self, Py_ssize_t a, Py_ssize_t b):
        """k(x_a, x_b), not counted (diagnostics)."""
        cdef CKernel kern = self.kernel
        cdef RowStore store = self.store
        n0 = kern.n_evals
        v = kern.k_rows(store, a, b)
        kern.n_evals = n0
        return v

    def decision_function(self, X):
        """f(x) = sum_j alpha_j y_j k(x_j, x) - b (compiled expansion, not counted)."""
        ids = self.support_ids()
        coef = np.zeros(self.part.n)
        coef[ids] = self.alpha[ids] * self.y[ids]
        if self.sparse:
            X = sp.csr_matrix(X)
            X.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
        return self.store.expansion(self.kernel, coef, X) - self.b

    # ------------------------------------------------------------------ copies, persistence
    def _trial_copy(self):
        """An independent copy (a dObj look-ahead, the estimator's backup before a
        chunk) without the persistence round trip: the arrays, the list of rows and the
        declared data are copied (``_clone_into``), the row store is shared (a copy that
        appends rows first drops those stored after its own n: ``_append_rows``)."""
        new = type(self).__new__(type(self))
        new.__dict__.update(vars(self))
        cdef POKERState trial = new
        trial.rows = list(self.rows)       # the per-example arrays: _clone_into
        k = self.kernel
        trial.kernel = CKernel(k.kind, k.gamma, k.degree, k.coef0)
        trial.kernel.n_evals = k.n_evals
        self._clone_into(trial)
        trial.breakpoint_hook = None
        return trial

    def _backup(self):
        """An independent copy to put back if a chunk fails (the estimator's)."""
        return self._trial_copy()

    def load_state(self, data):
        """Restore what ``save_state`` returned (the reference's ``load_state``, then
        the rows into the compiled row store)."""
        self._forget_kr()
        POKERStorage.load_state(self, data)
        self.store = RowStore(self.n_features, self.sparse)
        self._configure()
        for x in self.rows:
            if self.sparse:
                nnz = x.indices.shape[0]
                M = sp.csr_matrix((x.data, x.indices, np.array([0, nnz], dtype=np.int32)),
                                  shape=(1, self.n_features))
                M.indices = np.ascontiguousarray(M.indices, dtype=np.int32)
                self.store.append(M, 0)
            else:
                self.store.append(np.ascontiguousarray(x, dtype=np.float64).reshape(1, -1), 0)
        self.bind()

    def __reduce__(self):
        return POKERStorage.__reduce__(self)

    # ------------------------------------------------------------------ Fig. 1: AltPOKER
    def add_chunk(self, X, y, joint=False):
        """AltPOKER (Fig. 1; reference ``add_chunk``): the rows of X with labels y, one
        chunk.  Returns the number of violated points."""
        self._refuse_joint(joint)                         # departure: joint increment
        return self.learn_ids(self._append_rows(X, y).tolist(), joint=joint)

    def learn_ids(self, ids, joint=False):
        """AltPOKER (Fig. 1, lines 0-4) on stored pending examples ``ids`` (reference
        ``learn_ids``)."""
        cdef Py_ssize_t r, j, violated = 0
        cdef double yj, s, b
        cdef const double[::1] f
        self._refuse_joint(joint)
        ids = [int(i) for i in ids]
        if not ids:
            return 0
        if not np.any(self.status[: self.part.n] >= 0):
            # the first chunk of an empty model: SelfInit
            self._self_init_ids(np.array(ids, dtype=np.intp))
            return len(ids)
        self._activate(ids)
        if joint:
            return self._learn_joint(ids)                 # departure: joint increment
        # Fig. 1 line 1: alpha_j = 0, xi_j = 0, s_j = y_j (w'x_j - b) - 1
        f = self._f_of(ids)
        self.bind()
        b = self.b
        for r in range(len(ids)):
            j = ids[r]
            yj = self.c_y[j]
            s = yj * (f[r] - b) - 1.0
            if s >= 0.0:                                  # margin met: p_j = -1 - b y_j
                self.c_g[j] = s
                self.c_p[j] = -1.0 - b * yj
                self.c_d[j] = 0.0
            else:                                         # violated: s_j = 1 at u = 0
                violated += 1
                self.c_g[j] = 1.0
                self.c_p[j] = -yj * f[r] + 1.0            # p_j = -(Q alpha)_j + 1
                self.c_d[j] = -1.0 - yj * b - self.c_p[j]
            self.c_status[j] = C_IO
        # Fig. 1 line 3: if p != -e - b y, POKERfixedbias (u: 0 -> 1)
        if violated:
            # Fig. 1 line 0: p = -e - b y on the old points
            old = np.flatnonzero(self.status[: self.part.n] >= 0)
            old = old[~np.isin(old, ids)]
            self.p[old] = -1.0 - self.b * self.y[old]
            self.d[old] = 0.0
            self.fixed_bias()
        # Fig. 1 line 4: POKERadjustbias
        self.adjust_bias()
        self._end_chunk("AltPOKER")                       # departures: end of a chunk
        return violated

    def fixed_bias(self):
        """POKERfixedbias (Fig. 1 line 3; Eq. 3): u from 0 to 1 with b fixed (reference
        ``fixed_bias``)."""
        self.u = 0.0
        self._follow(M_FIXED)
        self.d[: self.part.n] = 0.0

    def adjust_bias(self):
        """POKERadjustbias (Fig. 1 line 4; Sec. 3, Eq. 4): b moves until y'alpha = 0
        (reference ``adjust_bias``)."""
        self.tau = self._y_alpha()
        if fabs(self.tau) > self.aw:
            self._follow(M_BIAS)
        self.tau = 0.0
        self.phase = M_IDLE

    # ------------------------------------------------------------------ shared with the reference
    # What is neither the printed method nor the paths is the reference's own code,
    # called on this state (it reads and writes the reference's attribute names, which
    # this class keeps): one code for both twins.
    # SelfInit and the selective sampling of Sec. 5: run once per call, on this state's
    # methods (the paths in them are this class's)
    self_init = _ref.POKERState.self_init
    _self_init_ids = _ref.POKERState._self_init_ids
    _dobj = _ref.POKERState._dobj
    learn_selective = _ref.POKERState.learn_selective
    # persistence, the stream API, the read-outs and the KKT check (refsvm.poker.storage)
    init_params = POKERStorage.init_params
    save_state = POKERStorage.save_state
    step = POKERStorage.step
    run = POKERStorage.run
    run_checked = _stream.StreamLearner.run_checked
    n_kernel_evals = POKERStorage.n_kernel_evals
    dual_objective = POKERStorage.dual_objective
    active_ids = POKERStorage.active_ids
    support_ids = POKERStorage.support_ids
    support = POKERStorage.support
    get_state = POKERStorage.get_state
    check = POKERStorage.check
    _known = POKERStorage._known
    _bordered = POKERStorage._bordered
    _inverse_residual = POKERStorage._inverse_residual
    _y_alpha = POKERStorage._y_alpha
    # the departures' Python (refsvm.poker.departures): once per chunk or operation
    _refuse_joint = JointIncrement._refuse_joint
    _learn_joint = JointIncrement._learn_joint
    unlearn = ChunkUnlearning.unlearn
    _end_chunk = EndOfChunk._end_chunk
    _check_end = EndOfChunk._check_end
    exactness = EndOfChunk.exactness
    _fresh_g = EndOfChunk._fresh_g

    def _dot2_rows(self, coef, K):
        """The reference's ``_dot2_rows`` by the core's compiled Dot2 (the same bits)."""
        return _core_dot2_rows(coef, K)
    _polish = EndOfChunk._polish
    _centre_bias = BiasCentring._centre_bias
