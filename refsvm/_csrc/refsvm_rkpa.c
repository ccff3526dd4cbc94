/* The hand-written C of the reduced-kernel PA twin (refsvm_rkpa.h). */
#include <math.h>
#include <stdint.h>
#include "refsvm_rkpa.h"

/* no trapping math: the compiler may vectorise the clamps and selects (GCC) */
#if REFSVM_GCC
#define REFSVM_RKPA_OPT __attribute__((optimize("no-trapping-math")))
#else
#define REFSVM_RKPA_OPT
#endif

/* the block helpers of the LDL' update, inlined into their caller's body */
#if REFSVM_GNUC
#define REFSVM_RKPA_INLINE inline __attribute__((always_inline))
#else
#define REFSVM_RKPA_INLINE REFSVM_INLINE
#endif

#if REFSVM_GNUC
typedef double rkpa_v4 __attribute__((vector_size(32), aligned(8)));
/* the bits of four doubles, and the masks of their comparisons */
typedef uint64_t rkpa_u4 __attribute__((vector_size(32), aligned(8)));
typedef int64_t rkpa_m4 __attribute__((vector_size(32), aligned(8)));
/* a double in every lane */
#define rkpa_bc(c) ((rkpa_v4) {(c), (c), (c), (c)})
/* one of the packed (p, beta) pairs of a column, in every lane */
#define RKPA_BC(q) ({ const double v_ = cs[q]; (rkpa_v4) {v_, v_, v_, v_}; })
#define RKPA_LDL4(u, xv, q) do { xv = xv - RKPA_BC(2 * (q)) * u; \
                                 u = u + RKPA_BC(2 * (q) + 1) * xv; } while (0)
#endif

#if REFSVM_X86_GNUC && REFSVM_GCC && __GNUC__ >= 12
#define REFSVM_RKPA_V3 1
/* the x86-64-v3 and -v4 bodies fuse each product and sum into a multiply-add (GCC's
   contraction, asked for here: the build turns it off elsewhere, -ffp-contract=off) */
#define REFSVM_RKPA_FUSED __attribute__((optimize("no-trapping-math", "fp-contract=fast")))
#else
#define REFSVM_RKPA_V3 0
#endif

/* the baseline bodies */
#define REFSVM_VEC(name) refsvm_rkpa_##name##_base
#define RKPA_TAIL(name) REFSVM_VEC(name)
#define REFSVM_VEC_ATTR REFSVM_RKPA_OPT
#include "refsvm_rkpa_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR

#if REFSVM_RKPA_V3
/* the x86-64-v3 bodies */
#define REFSVM_VEC(name) refsvm_rkpa_##name##_v3
#define REFSVM_VEC_ATTR __attribute__((target("arch=x86-64-v3"))) REFSVM_RKPA_FUSED
#include "refsvm_rkpa_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR
/* the x86-64-v4 bodies: the v3 source, with eight-wide loops (RKPA_WIDE) in front of the
   four-wide ones in exp, matvec and matmat.  Every entry gets the operations of the v3
   body in the same order (one fused multiply-add per term, the same polynomial), so the
   two levels give the same bits; only the number of entries per instruction differs. */
typedef double rkpa_v8 __attribute__((vector_size(64), aligned(8)));
typedef uint64_t rkpa_u8 __attribute__((vector_size(64), aligned(8)));
typedef int64_t rkpa_m8 __attribute__((vector_size(64), aligned(8)));
#define rkpa_bc8(c) ((rkpa_v8) {(c), (c), (c), (c), (c), (c), (c), (c)})
#define RKPA_WIDE 1
#undef RKPA_TAIL
#define RKPA_TAIL(name) refsvm_rkpa_##name##_v3
#define REFSVM_VEC(name) refsvm_rkpa_##name##_v4
#define REFSVM_VEC_ATTR __attribute__((target("arch=x86-64-v4"))) REFSVM_RKPA_FUSED
#include "refsvm_rkpa_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR
#undef RKPA_WIDE
/* the highest level the CPU has, capped by refsvm_rkpa_set_level (a test hook) */
static int refsvm_rkpa_level_cap = 2;
REFSVM_API int refsvm_rkpa_set_level(int cap) {
    int old = refsvm_rkpa_level_cap;
    refsvm_rkpa_level_cap = cap;
    return old;
}
static REFSVM_INLINE int refsvm_rkpa_level(void) {
    if (refsvm_rkpa_level_cap >= 2 && refsvm_cpu_has(REFSVM_CPU_X86_64_V4))
        return 2;
    return refsvm_rkpa_level_cap >= 1 && refsvm_cpu_has(REFSVM_CPU_X86_64_V3);
}
REFSVM_API int refsvm_rkpa_get_level(void) {
    return refsvm_rkpa_level();
}
#define REFSVM_RKPA_PICK(name, args) \
    (refsvm_rkpa_level() == 2 ? refsvm_rkpa_##name##_v4 args \
     : refsvm_rkpa_level() == 1 ? refsvm_rkpa_##name##_v3 args \
                                : refsvm_rkpa_##name##_base args)
/* the functions without a v4 body (the covariance's updates and the lane sums) */
#define REFSVM_RKPA_PICK3(name, args) \
    (refsvm_rkpa_level() >= 1 ? refsvm_rkpa_##name##_v3 args : refsvm_rkpa_##name##_base args)
#else
REFSVM_API int refsvm_rkpa_set_level(int cap) {
    (void) cap;
    return 0;
}
REFSVM_API int refsvm_rkpa_get_level(void) {
    return 0;
}
#define REFSVM_RKPA_PICK(name, args) (refsvm_rkpa_##name##_base args)
#define REFSVM_RKPA_PICK3(name, args) (refsvm_rkpa_##name##_base args)
#endif

REFSVM_API void refsvm_rkpa_exp(double* v, Py_ssize_t n) {
    REFSVM_RKPA_PICK(exp, (v, n));
}

REFSVM_API void refsvm_rkpa_sqdist(const double* AT, Py_ssize_t m, Py_ssize_t d,
                                   const double* x, double scale, double* out) {
    REFSVM_RKPA_PICK(sqdist, (AT, m, d, x, scale, out));
}

REFSVM_API void refsvm_rkpa_matvec(const double* A, Py_ssize_t n_in, Py_ssize_t m,
                                   const double* x, double* out) {
    REFSVM_RKPA_PICK(matvec, (A, n_in, m, x, out));
}

REFSVM_API void refsvm_rkpa_matmat(const double* A, Py_ssize_t n_in, Py_ssize_t m,
                                   const double* const* xs, Py_ssize_t n_rows, double* out) {
    REFSVM_RKPA_PICK(matmat, (A, n_in, m, xs, n_rows, out));
}

REFSVM_API void refsvm_rkpa_dot_and_sqnorm(const double* v, const double* k, Py_ssize_t m,
                                           double* dot, double* sq) {
    REFSVM_RKPA_PICK3(dot_and_sqnorm, (v, k, m, dot, sq));
}

REFSVM_API void refsvm_rkpa_dot_abs(const double* z, const double* phi, Py_ssize_t m,
                                    double* dot, double* abs_sum) {
    REFSVM_RKPA_PICK3(dot_abs, (z, phi, m, dot, abs_sum));
}

REFSVM_API void refsvm_rkpa_dots_csr(const double* AT, Py_ssize_t m, const int* xi,
                                     const double* xv, Py_ssize_t nnz, double* out) {
    REFSVM_RKPA_PICK3(dots_csr, (AT, m, xi, xv, nnz, out));
}

REFSVM_API void refsvm_rkpa_syr_batch(double* S, Py_ssize_t m, const double* D,
                                      const double* W, Py_ssize_t p, double* wa) {
    REFSVM_RKPA_PICK3(syr_batch, (S, m, D, W, p, wa));
}

REFSVM_API void refsvm_rkpa_ldl_update_batch(double* U, Py_ssize_t m, double* X, double* T,
                                             Py_ssize_t p, double* pb) {
    REFSVM_RKPA_PICK3(ldl_update_batch, (U, m, X, T, p, pb));
}

REFSVM_API void refsvm_rkpa_ldl_solve(const double* U, Py_ssize_t m, double* b) {
    REFSVM_RKPA_PICK3(ldl_solve, (U, m, b));
}

REFSVM_API void refsvm_rkpa_expanded(const double* an, Py_ssize_t m, double xn, double gamma,
                                     double* out) {
    REFSVM_RKPA_PICK(expanded, (an, m, xn, gamma, out));
}
