/* The SIMD block of the OnlineSVMR twin (refsvm/ramp/_online_svmr.pyx, cdef extern from
   "_eq15_simd.h"): Eq. (15) fused with the Eq. (3) filter of step 11, and a prefetch hint.
   Included after Python.h (Py_ssize_t). */
#ifndef REFSVM_RAMP_EQ15_SIMD_H
#define REFSVM_RAMP_EQ15_SIMD_H

/* Steps 11-14 of Algorithm 1 (Wang & Vucetic): Eq. (15) on every position of I, fused
   with a branch-free filter for Eq. (3).  srow is a signed kernel row, srow[k] = y_k k(x_p, x_k) with
   y_k = +-1 (see OnlineSVMR.krow), so g[k] = g[k] - c * srow[k] is bit for bit the
   reference's g[k] - (c * y_k) * k(x_p, x_k).  The positions k with g[k] > ut[k] or
   g[k] < lt[k] (the violators, see OnlineSVMR.ut) are written to cand in increasing
   order (without a branch per position: on dense data about half of the positions
   violate, in no predictable pattern; cand must hold n entries); returns their number.  SSE2 (baseline on x86-64) two positions at a time, AVX2
   four, a plain loop elsewhere: the same IEEE operations in every case. */
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__AVX2__)
/* AVX2, four positions at a time, chosen at run time on processors that have it (the
   build targets baseline x86-64).  target("avx2") does not enable FMA, so the compiler
   cannot fuse the product and the difference: the same two roundings as SSE2. */
#define REFSVM_RAMP_AVX2 1
#include <immintrin.h>
/* Bit b (b < 8) set when position b of the two vectors g0, g1 violates Eq. (3):
   g > ut or g < lt (ut, lt at the same positions). */
__attribute__((target("avx2")))
static inline int refsvm_ramp_violators8(__m256d g0, __m256d g1, const double* ut,
                                         const double* lt) {
    return _mm256_movemask_pd(
               _mm256_or_pd(_mm256_cmp_pd(g0, _mm256_loadu_pd(ut), _CMP_GT_OQ),
                            _mm256_cmp_pd(g0, _mm256_loadu_pd(lt), _CMP_LT_OQ)))
        | (_mm256_movemask_pd(
               _mm256_or_pd(_mm256_cmp_pd(g1, _mm256_loadu_pd(ut + 4), _CMP_GT_OQ),
                            _mm256_cmp_pd(g1, _mm256_loadu_pd(lt + 4), _CMP_LT_OQ)))
           << 4);
}
__attribute__((target("avx2")))
static Py_ssize_t refsvm_ramp_eq15_avx2(double* g, const double* srow,
                                        const double* ut, const double* lt, double c,
                                        Py_ssize_t n, Py_ssize_t* cand) {
    Py_ssize_t k = 0, m = 0;
    __m256d cv = _mm256_set1_pd(c);
    for (; k + 8 <= n; k += 8) {      /* two vectors, one branch */
        __m256d g0 = _mm256_sub_pd(_mm256_loadu_pd(g + k),
                                   _mm256_mul_pd(cv, _mm256_loadu_pd(srow + k)));
        __m256d g1 = _mm256_sub_pd(_mm256_loadu_pd(g + k + 4),
                                   _mm256_mul_pd(cv, _mm256_loadu_pd(srow + k + 4)));
        int mask;
        _mm256_storeu_pd(g + k, g0);
        _mm256_storeu_pd(g + k + 4, g1);
        mask = refsvm_ramp_violators8(g0, g1, ut + k, lt + k);
        if (mask) {   /* the positions of the set bits, without a branch per bit */
            int b;
            for (b = 0; b < 8; b++) {
                cand[m] = k + b;
                m += (mask >> b) & 1;
            }
        }
    }
    for (; k < n; k++) {
        double gk = g[k] - c * srow[k];
        g[k] = gk;
        cand[m] = k;
        m += (gk > ut[k]) | (gk < lt[k]);
    }
    return m;
}
static int refsvm_ramp_avx2 = -1;
#endif
static Py_ssize_t refsvm_ramp_eq15(double* g, const double* srow,
                                   const double* ut, const double* lt, double c,
                                   Py_ssize_t n, Py_ssize_t* cand) {
    Py_ssize_t k = 0, m = 0;
#if defined(REFSVM_RAMP_AVX2)
    if (refsvm_ramp_avx2 < 0)
        refsvm_ramp_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (refsvm_ramp_avx2)
        return refsvm_ramp_eq15_avx2(g, srow, ut, lt, c, n, cand);
#endif
#if defined(__SSE2__)
    __m128d cv = _mm_set1_pd(c);
    for (; k + 2 <= n; k += 2) {
        __m128d gk = _mm_sub_pd(_mm_loadu_pd(g + k), _mm_mul_pd(cv, _mm_loadu_pd(srow + k)));
        int mask;
        _mm_storeu_pd(g + k, gk);
        mask = _mm_movemask_pd(_mm_or_pd(_mm_cmpgt_pd(gk, _mm_loadu_pd(ut + k)),
                                         _mm_cmplt_pd(gk, _mm_loadu_pd(lt + k))));
        if (mask) {
            cand[m] = k;
            m += mask & 1;
            cand[m] = k + 1;
            m += (mask >> 1) & 1;
        }
    }
#endif
    for (; k < n; k++) {   /* the violators, without a branch (see the AVX2 loop) */
        double gk = g[k] - c * srow[k];
        g[k] = gk;
        cand[m] = k;
        m += (gk > ut[k]) | (gk < lt[k]);
    }
    return m;
}

/* The scalar rules of steps 11-14, one definition for every loop of the twin
   (_online_svmr.pyx declares them as eq14, eq13_gain and cannot_win): the reference's
   operations, in its order. */

/* 1/2 (1 + 1e-12): the bound g^2 / (2 Q) of an Eq. (13) gain with a relative margin far
   above the few ulps by which the computed gain of the clipped step can exceed it */
#define REFSVM_RAMP_GAIN_BOUND_HALF (0.5 * (1.0 + 1e-12))

/* Eq. (14): clip(alpha + g / Q_ii, 0, C). */
static inline double refsvm_ramp_eq14(double alpha, double g, double q, double C) {
    double step, nw;
    if (q > 0)
        step = g / q;
    else if (g > 0)
        step = INFINITY;
    else
        step = -INFINITY;
    nw = alpha + step;
    if (nw < 0.0)
        return 0.0;
    if (nw > C)
        return C;
    return nw;
}

/* Eq. (13): dual gain g d - 1/2 Q_ii d^2 of a one-coordinate step. */
static inline double refsvm_ramp_eq13_gain(double g, double q, double d) {
    return g * d - 0.5 * q * d * d;
}

/* Step 11: no step of Eq. (14) gains more than g^2 / (2 Q) (the unclipped Newton step;
   clipping only loses), so a violator whose bound, with a margin far above round-off, is
   not above the best gain so far bg cannot win (a win needs gain > bg): skipped without
   its division. */
static inline int refsvm_ramp_cannot_win(double g, double q, double bg) {
    return bg > 0.0 && g * g * REFSVM_RAMP_GAIN_BOUND_HALF <= q * bg;
}

/* Step 11 on one violator j of the working set (rank j, g value gk, Q_jj q, alpha a): the
   twin's scan; keeps j when it is the first of the largest gain (*best < 0: none yet). */
static inline void refsvm_ramp_pick(Py_ssize_t j, double gk, double q, double a, double C,
                                    Py_ssize_t* best, double* bg) {
    double gain;
    if (refsvm_ramp_cannot_win(gk, q, *bg))
        return;
    gain = refsvm_ramp_eq13_gain(gk, q, refsvm_ramp_eq14(a, gk, q, C) - a);
    if (*best < 0 || gain > *bg) {
        *best = j;
        *bg = gain;
    }
}

/* Steps 11-14 in a shrinking round of the twin (OnlineSVMR._optimize_shrunk): Eq. (15) on
   the working set A in rank order with the moved coordinate's full signed row read
   through the positions of A, g[j] -= c * row[A[j]] (AVX2: four at a time by gathers),
   fused with step 11: the violators of Eq. (3) (g > ut or g < lt) in increasing rank,
   each passed to refsvm_ramp_pick (qa the Q_jj of A by rank, alpha read at A[j]).  The
   same operations and the same choice as refsvm_ramp_eq15's filter followed by the scan
   over its candidates: a violator is skipped only when cannot_win holds for the best
   gain so far, and the vector test below is that test for a best gain no larger, so it
   keeps every violator the scan would reach. */
#if defined(REFSVM_RAMP_AVX2)
__attribute__((target("avx2")))
static void refsvm_ramp_eq15_pick_idx_avx2(double* g, const double* row, const Py_ssize_t* A,
                                           const double* ut, const double* lt,
                                           const double* qa, const double* alpha, double c,
                                           double C, Py_ssize_t n, Py_ssize_t* best,
                                           double* bg) {
    Py_ssize_t k = 0;
    __m256d cv = _mm256_set1_pd(c), hv = _mm256_set1_pd(REFSVM_RAMP_GAIN_BOUND_HALF);
    for (; k + 8 <= n; k += 8) {
        __m256d s0 = _mm256_i64gather_pd(row, _mm256_loadu_si256((const __m256i*) (A + k)), 8);
        __m256d s1 = _mm256_i64gather_pd(row, _mm256_loadu_si256((const __m256i*) (A + k + 4)), 8);
        __m256d g0 = _mm256_sub_pd(_mm256_loadu_pd(g + k), _mm256_mul_pd(cv, s0));
        __m256d g1 = _mm256_sub_pd(_mm256_loadu_pd(g + k + 4), _mm256_mul_pd(cv, s1));
        int mask;
        _mm256_storeu_pd(g + k, g0);
        _mm256_storeu_pd(g + k + 4, g1);
        mask = refsvm_ramp_violators8(g0, g1, ut + k, lt + k);
        if (mask) {
            if (*bg > 0.0) {
                __m256d bv = _mm256_set1_pd(*bg);
                mask &= ~(_mm256_movemask_pd(_mm256_cmp_pd(
                              _mm256_mul_pd(_mm256_mul_pd(g0, g0), hv),
                              _mm256_mul_pd(_mm256_loadu_pd(qa + k), bv), _CMP_LE_OQ))
                          | (_mm256_movemask_pd(_mm256_cmp_pd(
                              _mm256_mul_pd(_mm256_mul_pd(g1, g1), hv),
                              _mm256_mul_pd(_mm256_loadu_pd(qa + k + 4), bv), _CMP_LE_OQ))
                             << 4));
            }
            while (mask) {
                int b = __builtin_ctz(mask);
                mask &= mask - 1;
                refsvm_ramp_pick(k + b, g[k + b], qa[k + b], alpha[A[k + b]], C, best, bg);
            }
        }
    }
    for (; k < n; k++) {
        double gk = g[k] - c * row[A[k]];
        g[k] = gk;
        if (gk > ut[k] || gk < lt[k])
            refsvm_ramp_pick(k, gk, qa[k], alpha[A[k]], C, best, bg);
    }
}
#endif
static void refsvm_ramp_eq15_pick_idx(double* g, const double* row, const Py_ssize_t* A,
                                      const double* ut, const double* lt, const double* qa,
                                      const double* alpha, double c, double C, Py_ssize_t n,
                                      Py_ssize_t* best, double* bg) {
    Py_ssize_t k;
#if defined(REFSVM_RAMP_AVX2)
    if (refsvm_ramp_avx2 < 0)
        refsvm_ramp_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (refsvm_ramp_avx2) {
        refsvm_ramp_eq15_pick_idx_avx2(g, row, A, ut, lt, qa, alpha, c, C, n, best, bg);
        return;
    }
#endif
    for (k = 0; k < n; k++) {
        double gk = g[k] - c * row[A[k]];
        g[k] = gk;
        if (gk > ut[k] || gk < lt[k])
            refsvm_ramp_pick(k, gk, qa[k], alpha[A[k]], C, best, bg);
    }
}
/* Eq. (15) on every position for nr (1 to 4) signed rows at once, the end of a shrinking
   round (OnlineSVMR._optimize_shrunk): g[k] -= c[0] * rows[0][k], then c[1] * rows[1][k],
   ... in that order for every k -- the same operations in the same order for every value
   as one pass per row (the twin's _eq15), with g read and written once. */
#if defined(REFSVM_RAMP_AVX2)
__attribute__((target("avx2")))
static void refsvm_ramp_eq15_rows_avx2(double* g, const double* const* rows, const double* c,
                                       int nr, Py_ssize_t n) {
    Py_ssize_t k = 0;
    int r;
    __m256d cv[4];
    for (r = 0; r < nr; r++)
        cv[r] = _mm256_set1_pd(c[r]);
    if (nr == 4) {
        const double *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
        for (; k + 4 <= n; k += 4) {
            __m256d gk = _mm256_loadu_pd(g + k);
            gk = _mm256_sub_pd(gk, _mm256_mul_pd(cv[0], _mm256_loadu_pd(r0 + k)));
            gk = _mm256_sub_pd(gk, _mm256_mul_pd(cv[1], _mm256_loadu_pd(r1 + k)));
            gk = _mm256_sub_pd(gk, _mm256_mul_pd(cv[2], _mm256_loadu_pd(r2 + k)));
            gk = _mm256_sub_pd(gk, _mm256_mul_pd(cv[3], _mm256_loadu_pd(r3 + k)));
            _mm256_storeu_pd(g + k, gk);
        }
    } else {
        for (; k + 4 <= n; k += 4) {
            __m256d gk = _mm256_loadu_pd(g + k);
            for (r = 0; r < nr; r++)
                gk = _mm256_sub_pd(gk, _mm256_mul_pd(cv[r], _mm256_loadu_pd(rows[r] + k)));
            _mm256_storeu_pd(g + k, gk);
        }
    }
    for (; k < n; k++) {
        double gk = g[k];
        for (r = 0; r < nr; r++)
            gk = gk - c[r] * rows[r][k];
        g[k] = gk;
    }
}
#endif
static void refsvm_ramp_eq15_rows(double* g, const double* const* rows, const double* c,
                                  int nr, Py_ssize_t n) {
    Py_ssize_t k;
    int r;
#if defined(REFSVM_RAMP_AVX2)
    if (refsvm_ramp_avx2 < 0)
        refsvm_ramp_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (refsvm_ramp_avx2) {
        refsvm_ramp_eq15_rows_avx2(g, rows, c, nr, n);
        return;
    }
#endif
    for (k = 0; k < n; k++) {
        double gk = g[k];
        for (r = 0; r < nr; r++)
            gk = gk - c[r] * rows[r][k];
        g[k] = gk;
    }
}

/* Which loops the passes above take (a test hook, OnlineSVMR's _simd_avx2): 1 the AVX2
   loops, 0 the SSE2 / plain ones; set to 0, or back to what the CPU has. */
static int refsvm_ramp_simd_get(void) {
#if defined(REFSVM_RAMP_AVX2)
    if (refsvm_ramp_avx2 < 0)
        refsvm_ramp_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    return refsvm_ramp_avx2;
#else
    return 0;
#endif
}
static void refsvm_ramp_simd_set(int on) {
#if defined(REFSVM_RAMP_AVX2)
    refsvm_ramp_avx2 = (on && __builtin_cpu_supports("avx2")) ? 1 : 0;
#else
    (void) on;
#endif
}

#if defined(__GNUC__)
#define refsvm_ramp_prefetch(p) __builtin_prefetch(p)
#else
#define refsvm_ramp_prefetch(p) ((void)0)
#endif

#endif  /* REFSVM_RAMP_EQ15_SIMD_H */
