# The hand-written C of the twins (refsvm/_csrc: compiled once into the static library
# refsvm_c that every extension links), declared for cimport.  The core's own C functions
# are declared in refsvm/_core.pxd.  One CPU dispatcher (refsvm/_csrc/refsvm_cpu.h) picks
# each function's wider body where the processor has it.

# ---------------------------------------------------------------- OnlineSVMR (ramp)
cdef extern from "refsvm_ramp.h":
    # Eq. (15) on every position of I fused with the Eq. (3) filter of step 11 (SSE2, AVX2
    # chosen at run time, a plain loop elsewhere: the same IEEE operations in every case)
    Py_ssize_t refsvm_ramp_eq15(double* g, const double* srow,
                                const double* ut, const double* lt, double c,
                                Py_ssize_t n, Py_ssize_t* cand) noexcept nogil
    # The scalar rules of steps 11-14 (inline, one C definition for every loop): Eq. (14),
    # the Eq. (13) gain, and the bound that skips a violator that cannot win the scan
    double refsvm_ramp_eq14(double alpha, double g, double q, double C) noexcept nogil
    double refsvm_ramp_eq13_gain(double g, double q, double d) noexcept nogil
    bint refsvm_ramp_cannot_win(double g, double q, double bg) noexcept nogil
    # Eq. (15) on the working set of a shrinking round, the row read through A, fused
    # with step 11 (the scan over the violators)
    void refsvm_ramp_eq15_pick_idx(double* g, const double* row, const Py_ssize_t* A,
                                   const double* ut, const double* lt, const double* qa,
                                   const double* alpha, double c, double C, Py_ssize_t n,
                                   Py_ssize_t* best, double* bg) noexcept nogil
    # Step 10 of a shrinking round (the working set A of V and its copies) fused with the
    # scan of step 11 over A
    ctypedef struct refsvm_ramp_ws:
        const char* in_v
        const double* alpha
        const double* g
        const double* ut
        const double* lt
        const double* qdiag
        double C, theta, tol
        Py_ssize_t n
        Py_ssize_t* A
        Py_ssize_t* rank
        double* ga
        double* uta
        double* lta
        double* qa
        Py_ssize_t nv, best
        double bg
    Py_ssize_t refsvm_ramp_working_set(refsvm_ramp_ws* w) noexcept nogil
    # Eq. (15) on every position for up to four rows at once (the end of a shrinking round)
    void refsvm_ramp_eq15_rows(double* g, const double* const* rows, const double* c, int nr,
                               Py_ssize_t n) noexcept nogil
    void refsvm_ramp_prefetch(const void* p) noexcept nogil
    int refsvm_ramp_simd_get() noexcept nogil
    void refsvm_ramp_simd_set(int level) noexcept nogil


# ---------------------------------------------------------------- POKER
cdef extern from "refsvm_poker.h":
    # 1 when the eight-wide event scan may run (AVX-512F), else 0
    int refsvm_poker_scan_vector() noexcept nogil
    # the event scan of one piece, eight examples per pass (the scalar loop's operations)
    Py_ssize_t refsvm_poker_scan8(
        Py_ssize_t n, int fixed, const double* y, const double* inner, double* gdot,
        double* g, const double* kr, const double* d, const signed char* status,
        const signed char* blk, Py_ssize_t* cand, double* cts, double bd, double terms,
        double base, double tp, int pend, double eps_rate, signed char io,
        signed char is_, signed char ic, double* tmin, double* gmin, Py_ssize_t* done,
        const signed char* y8) noexcept nogil


# ---------------------------------------------------------------- reduced-kernel PA
cdef extern from "refsvm_rkpa.h":
    enum: REFSVM_RKPA_NB
    void refsvm_rkpa_exp(double* v, Py_ssize_t n) noexcept nogil
    void refsvm_rkpa_sqdist(const double* AT, Py_ssize_t m, Py_ssize_t d, const double* x,
                            double scale, double* out) noexcept nogil
    void refsvm_rkpa_matvec(const double* A, Py_ssize_t n_in, Py_ssize_t m, const double* x,
                            double* out) noexcept nogil
    void refsvm_rkpa_matmat(const double* A, Py_ssize_t n_in, Py_ssize_t m,
                            const double* const* xs, Py_ssize_t n_rows,
                            double* out) noexcept nogil
    void refsvm_rkpa_dots_csr(const double* AT, Py_ssize_t m, const int* xi, const double* xv,
                              Py_ssize_t nnz, double* out) noexcept nogil
    void refsvm_rkpa_expanded(const double* an, Py_ssize_t m, double xn, double gamma,
                              double* out) noexcept nogil
    void refsvm_rkpa_dot_and_sqnorm(const double* v, const double* k, Py_ssize_t m,
                                    double* dot, double* sq) noexcept nogil
    void refsvm_rkpa_dot_abs(const double* z, const double* phi, Py_ssize_t m, double* dot,
                             double* abs_sum) noexcept nogil
    void refsvm_rkpa_syr_batch(double* S, Py_ssize_t m, const double* D, const double* W,
                               Py_ssize_t p, double* wa) noexcept nogil
    void refsvm_rkpa_ldl_update_batch(double* U, Py_ssize_t m, double* X, double* T,
                                      Py_ssize_t p, double* pb) noexcept nogil
    void refsvm_rkpa_ldl_solve(const double* U, Py_ssize_t m, double* b) noexcept nogil
    int refsvm_rkpa_set_level(int cap) noexcept nogil
    int refsvm_rkpa_get_level() noexcept nogil
