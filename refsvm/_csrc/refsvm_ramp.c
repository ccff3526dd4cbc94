/* The hand-written C of the OnlineSVMR twin (refsvm_ramp.h). */
#include "refsvm_ramp.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if REFSVM_X86_GNUC
#include <immintrin.h>

/* The widest loops that may run (the test hook refsvm_ramp_simd_set lowers it): 2 the
   AVX-512F loop of refsvm_ramp_eq15_pick_idx and the AVX2 loops of the others, 1 the AVX2
   loops, 0 the SSE2 / plain ones. */
static int refsvm_ramp_simd_max = 2;

static int refsvm_ramp_use_avx2(void) {
    return refsvm_ramp_simd_max >= 1 && refsvm_cpu_has(REFSVM_CPU_AVX2);
}

static int refsvm_ramp_use_avx512(void) {
    return refsvm_ramp_simd_max >= 2 && refsvm_cpu_has(REFSVM_CPU_AVX512F);
}

/* AVX2, four positions at a time, chosen at run time on processors that have it (the
   build targets baseline x86-64).  target("avx2") does not enable FMA, so the compiler
   cannot fuse the product and the difference: the same two roundings as SSE2. */
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
#endif

REFSVM_API Py_ssize_t refsvm_ramp_eq15(double* g, const double* srow,
                                       const double* ut, const double* lt, double c,
                                   Py_ssize_t n, Py_ssize_t* cand) {
    Py_ssize_t k = 0, m = 0;
#if REFSVM_X86_GNUC
    if (refsvm_ramp_use_avx2())
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

#if REFSVM_X86_GNUC
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

/* row[A[0]], ..., row[A[7]] as one vector, from eight scalar loads: on processors such as
   AMD Zen 5 these are faster than a gather of eight (or two of four). */
__attribute__((target("avx512f")))
static inline __m512d refsvm_ramp_load8_idx(const double* row, const Py_ssize_t* A) {
    __m128d r01 = _mm_loadh_pd(_mm_load_sd(row + A[0]), row + A[1]);
    __m128d r23 = _mm_loadh_pd(_mm_load_sd(row + A[2]), row + A[3]);
    __m128d r45 = _mm_loadh_pd(_mm_load_sd(row + A[4]), row + A[5]);
    __m128d r67 = _mm_loadh_pd(_mm_load_sd(row + A[6]), row + A[7]);
    return _mm512_insertf64x4(
        _mm512_castpd256_pd512(_mm256_insertf128_pd(_mm256_castpd128_pd256(r01), r23, 1)),
        _mm256_insertf128_pd(_mm256_castpd128_pd256(r45), r67, 1), 1);
}

/* AVX-512F, eight positions at a time, the operations of the AVX2 body: the product and
   the difference of Eq. (15) as two roundings (REFSVM_NO_CONTRACT: AVX-512F has fused
   multiply-adds the compiler could otherwise contract into), the violators as a mask,
   the same bound against bg before the scan, and refsvm_ramp_pick on the set bits in
   increasing position. */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static void refsvm_ramp_eq15_pick_idx_avx512(double* g, const double* row,
                                             const Py_ssize_t* A, const double* ut,
                                             const double* lt, const double* qa,
                                             const double* alpha, double c, double C,
                                             Py_ssize_t n, Py_ssize_t* best, double* bg) {
    Py_ssize_t k = 0, bk = *best;
    double bgk = *bg;
    const __m512d cv = _mm512_set1_pd(c), hv = _mm512_set1_pd(REFSVM_RAMP_GAIN_BOUND_HALF);
    for (; k + 8 <= n; k += 8) {
        __m512d gk = _mm512_sub_pd(_mm512_loadu_pd(g + k),
                                   _mm512_mul_pd(cv, refsvm_ramp_load8_idx(row, A + k)));
        unsigned mask;
        _mm512_storeu_pd(g + k, gk);
        mask = _mm512_cmp_pd_mask(gk, _mm512_loadu_pd(ut + k), _CMP_GT_OQ)
               | _mm512_cmp_pd_mask(gk, _mm512_loadu_pd(lt + k), _CMP_LT_OQ);
        if (mask && bgk > 0.0)
            mask &= ~(unsigned) _mm512_cmp_pd_mask(
                _mm512_mul_pd(_mm512_mul_pd(gk, gk), hv),
                _mm512_mul_pd(_mm512_loadu_pd(qa + k), _mm512_set1_pd(bgk)), _CMP_LE_OQ);
        while (mask) {
            int b = __builtin_ctz(mask);
            mask &= mask - 1;
            refsvm_ramp_pick(k + b, g[k + b], qa[k + b], alpha[A[k + b]], C, &bk, &bgk);
        }
    }
    for (; k < n; k++) {
        double gk = g[k] - c * row[A[k]];
        g[k] = gk;
        if (gk > ut[k] || gk < lt[k])
            refsvm_ramp_pick(k, gk, qa[k], alpha[A[k]], C, &bk, &bgk);
    }
    *best = bk;
    *bg = bgk;
}
#endif
REFSVM_API void refsvm_ramp_eq15_pick_idx(double* g, const double* row, const Py_ssize_t* A,
                                      const double* ut, const double* lt, const double* qa,
                                      const double* alpha, double c, double C, Py_ssize_t n,
                                      Py_ssize_t* best, double* bg) {
    Py_ssize_t k;
#if REFSVM_X86_GNUC
    if (refsvm_ramp_use_avx512()) {
        refsvm_ramp_eq15_pick_idx_avx512(g, row, A, ut, lt, qa, alpha, c, C, n, best, bg);
        return;
    }
    if (refsvm_ramp_use_avx2()) {
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
#if REFSVM_X86_GNUC
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
REFSVM_API void refsvm_ramp_eq15_rows(double* g, const double* const* rows, const double* c,
                                  int nr, Py_ssize_t n) {
    Py_ssize_t k;
    int r;
#if REFSVM_X86_GNUC
    if (refsvm_ramp_use_avx2()) {
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

REFSVM_API int refsvm_ramp_simd_get(void) {
#if REFSVM_X86_GNUC
    return refsvm_ramp_use_avx512() ? 2 : refsvm_ramp_use_avx2();
#else
    return 0;
#endif
}

REFSVM_API void refsvm_ramp_simd_set(int level) {
#if REFSVM_X86_GNUC
    refsvm_ramp_simd_max = level < 0 ? 0 : level > 2 ? 2 : level;
#else
    (void) level;
#endif
}
