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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__AVX2__)
/* AVX2, four positions at a time, chosen at run time on processors that have it (the
   build targets baseline x86-64).  target("avx2") does not enable FMA, so the compiler
   cannot fuse the product and the difference: the same two roundings as SSE2. */
#define REFSVM_RAMP_AVX2 1
#include <immintrin.h>
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
        mask = _mm256_movemask_pd(
                   _mm256_or_pd(_mm256_cmp_pd(g0, _mm256_loadu_pd(ut + k), _CMP_GT_OQ),
                                _mm256_cmp_pd(g0, _mm256_loadu_pd(lt + k), _CMP_LT_OQ)))
            | (_mm256_movemask_pd(
                   _mm256_or_pd(_mm256_cmp_pd(g1, _mm256_loadu_pd(ut + k + 4), _CMP_GT_OQ),
                                _mm256_cmp_pd(g1, _mm256_loadu_pd(lt + k + 4), _CMP_LT_OQ)))
               << 4);
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

#if defined(__GNUC__)
#define refsvm_ramp_prefetch(p) __builtin_prefetch(p)
#else
#define refsvm_ramp_prefetch(p) ((void)0)
#endif

#endif  /* REFSVM_RAMP_EQ15_SIMD_H */
