/* The hand-written C of the OnlineSVMR twin (refsvm_ramp.h). */

/* Every loop here gives the baseline's bits: Clang, which contracts a product and a sum
   into a fused multiply-add by default wherever the target has FMA (the AVX-512F loops,
   aarch64), must not (as refsvm_rows.c).  The build says so for every file
   (-ffp-contract=off, setup.py); this holds without it too, before the header, whose
   inline functions the loops call. */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

#include "refsvm_ramp.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if REFSVM_X86_GNUC
#include <immintrin.h>

/* The widest loops that may run (the test hook refsvm_ramp_simd_set lowers it): 2 the
   AVX-512F loops (refsvm_ramp_eq15_pick_idx, refsvm_ramp_working_set) and the AVX2 loops of
   the others, 1 the AVX2 loops, 0 the SSE2 / plain ones. */
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

/* Bit b set when position b of gk violates Eq. (3) (gk > ut or gk < lt) and, with
   bg > 0, its bound is above bg (not refsvm_ramp_cannot_win: gk^2 h <= q bg false) */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static inline unsigned refsvm_ramp_survivors8(__m512d gk, const double* ut, const double* lt,
                                              const double* qa, double bg, __m512d hv) {
    __mmask8 m = _mm512_cmp_pd_mask(gk, _mm512_loadu_pd(ut), _CMP_GT_OQ)
                 | _mm512_cmp_pd_mask(gk, _mm512_loadu_pd(lt), _CMP_LT_OQ);
    if (bg > 0.0)
        m = _mm512_mask_cmp_pd_mask(m, _mm512_mul_pd(_mm512_mul_pd(gk, gk), hv),
                                    _mm512_mul_pd(_mm512_loadu_pd(qa), _mm512_set1_pd(bg)),
                                    _CMP_NLE_UQ);
    return m;
}

/* refsvm_ramp_eq13_gain(gk, q, refsvm_ramp_eq14(a, gk, q, C) - a) at eight positions,
   the same operations lane by lane */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static inline __m512d refsvm_ramp_gain8(__m512d gk, __m512d q, __m512d a, __m512d Cv) {
    const __m512d zero = _mm512_setzero_pd();
    __m512d step = _mm512_mask_blend_pd(
        _mm512_cmp_pd_mask(gk, zero, _CMP_GT_OQ), _mm512_set1_pd(-INFINITY),
        _mm512_set1_pd(INFINITY));                   /* Eq. (14): g / q, or +-inf */
    __m512d nw, d;
    step = _mm512_mask_div_pd(step, _mm512_cmp_pd_mask(q, zero, _CMP_GT_OQ), gk, q);
    nw = _mm512_add_pd(a, step);                     /* clipped to [0, C] */
    d = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(nw, Cv, _CMP_GT_OQ), nw, Cv);
    d = _mm512_sub_pd(_mm512_mask_blend_pd(_mm512_cmp_pd_mask(nw, zero, _CMP_LT_OQ), d, zero),
                      a);
    return _mm512_sub_pd(_mm512_mul_pd(gk, d),       /* Eq. (13) */
                         _mm512_mul_pd(_mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(0.5), q), d),
                                       d));
}

/* Step 11 on the positions k + b of the set bits b of mask (gk their g): the gains of all
   eight at once, then refsvm_ramp_pick's rule in increasing b */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static inline void refsvm_ramp_scan8(Py_ssize_t k, unsigned mask, __m512d gk,
                                     const double* qa, const double* alpha,
                                     const Py_ssize_t* A, __m512d Cv, Py_ssize_t* best,
                                     double* bg) {
    double gs[8], gains[8];
    __m512d q = _mm512_loadu_pd(qa + k);
    _mm512_storeu_pd(gains, refsvm_ramp_gain8(gk, q, refsvm_ramp_load8_idx(alpha, A + k), Cv));
    _mm512_storeu_pd(gs, gk);
    while (mask) {
        int b = __builtin_ctz(mask);
        mask &= mask - 1;
        refsvm_ramp_pick_gain(k + b, gs[b], qa[k + b], gains[b], best, bg);
    }
}

/* AVX-512F, sixteen positions at a time (then eight), the operations of the AVX2 body:
   the product and the difference of Eq. (15) as two roundings (REFSVM_NO_CONTRACT:
   AVX-512F has fused multiply-adds the compiler could otherwise contract into), the
   violators as a mask, the same bound against bg before the scan, and refsvm_ramp_pick
   on the set bits in increasing position. */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static void refsvm_ramp_eq15_pick_idx_avx512(double* g, const double* row,
                                             const Py_ssize_t* A, const double* ut,
                                             const double* lt, const double* qa,
                                             const double* alpha, double c, double C,
                                             Py_ssize_t n, Py_ssize_t* best, double* bg) {
    Py_ssize_t k = 0, bk = *best;
    double bgk = *bg;
    const __m512d cv = _mm512_set1_pd(c), hv = _mm512_set1_pd(REFSVM_RAMP_GAIN_BOUND_HALF);
    const __m512d Cv = _mm512_set1_pd(C);
    for (; k + 8 <= n; k += 16) {
        __m512d g0 = _mm512_sub_pd(_mm512_loadu_pd(g + k),
                                   _mm512_mul_pd(cv, refsvm_ramp_load8_idx(row, A + k)));
        unsigned mask;
        _mm512_storeu_pd(g + k, g0);
        if (k + 16 <= n) {
            __m512d g1 = _mm512_sub_pd(_mm512_loadu_pd(g + k + 8),
                                       _mm512_mul_pd(cv, refsvm_ramp_load8_idx(row, A + k + 8)));
            _mm512_storeu_pd(g + k + 8, g1);
            mask = refsvm_ramp_survivors8(g0, ut + k, lt + k, qa + k, bgk, hv)
                   | (refsvm_ramp_survivors8(g1, ut + k + 8, lt + k + 8, qa + k + 8, bgk, hv)
                      << 8);
            if (mask) {
                if (mask & 0xff)
                    refsvm_ramp_scan8(k, mask & 0xff, g0, qa, alpha, A, Cv, &bk, &bgk);
                if (mask >> 8)
                    refsvm_ramp_scan8(k + 8, mask >> 8, g1, qa, alpha, A, Cv, &bk, &bgk);
            }
        } else {
            mask = refsvm_ramp_survivors8(g0, ut + k, lt + k, qa + k, bgk, hv);
            if (mask)
                refsvm_ramp_scan8(k, mask, g0, qa, alpha, A, Cv, &bk, &bgk);
        }
    }
    for (k = n - n % 8; k < n; k++) {
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
/* refsvm_ramp_working_set from position p0 on, with na members of A and w->nv of V so
   far */
static Py_ssize_t refsvm_ramp_working_set_from(refsvm_ramp_ws* w, Py_ssize_t p0,
                                               Py_ssize_t na) {
    const char* in_v = w->in_v;
    const double *alpha = w->alpha, *g = w->g, *ut = w->ut, *lt = w->lt, *qdiag = w->qdiag;
    const double C = w->C, theta = w->theta, tol = w->tol;
    const Py_ssize_t n = w->n;
    Py_ssize_t *A = w->A, *rank = w->rank, nv = w->nv, best = w->best;
    double *ga = w->ga, *uta = w->uta, *lta = w->lta, *qa = w->qa, bg = w->bg;
    Py_ssize_t p;
    for (p = p0; p < n; p++) {
        double a = alpha[p], gg = g[p];
        if (!in_v[p])
            continue;
        nv += 1;
        if ((a == 0.0 && gg < -theta) || (a == C && gg > theta))
            continue;
        A[na] = p;
        rank[p] = na;
        ga[na] = gg;
        uta[na] = ut[p];
        lta[na] = lt[p];
        qa[na] = qdiag[p];
        na++;
        if ((a < C && gg > tol) || (a > 0.0 && gg < -tol))
            refsvm_ramp_keep(p, refsvm_ramp_eq13_gain(gg, qdiag[p],
                                                      refsvm_ramp_eq14(a, gg, qdiag[p], C) - a),
                             &best, &bg);
    }
    w->nv = nv;
    w->best = best;
    w->bg = bg;
    return na;
}

#if REFSVM_X86_GNUC
/* AVX-512F, eight positions at a time: the members of A as a mask, put in place by
   compressions (each stored whole: na + 8 <= p + 8 <= n), the violators' gains by
   refsvm_ramp_gain8, then refsvm_ramp_keep per set bit in increasing p */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static Py_ssize_t refsvm_ramp_working_set_avx512(refsvm_ramp_ws* w) {
    const char* in_v = w->in_v;
    const double *alpha = w->alpha, *g = w->g, *ut = w->ut, *lt = w->lt, *qdiag = w->qdiag;
    const double C = w->C;
    const Py_ssize_t n = w->n;
    Py_ssize_t *A = w->A, *rank = w->rank, nv = 0, best = w->best;
    double *ga = w->ga, *uta = w->uta, *lta = w->lta, *qa = w->qa, bg = w->bg;
    Py_ssize_t p = 0, na = 0;
    const __m512d zero = _mm512_setzero_pd(), Cv = _mm512_set1_pd(C);
    const __m512d th = _mm512_set1_pd(w->theta), nth = _mm512_set1_pd(-w->theta);
    const __m512d tl = _mm512_set1_pd(w->tol), ntl = _mm512_set1_pd(-w->tol);
    __m512i idx = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    for (; p + 8 <= n; p += 8, idx = _mm512_add_epi64(idx, _mm512_set1_epi64(8))) {
        __m512i iv = _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i*) (in_v + p)));
        __mmask8 in = _mm512_test_epi64_mask(iv, iv), keep, viol;
        __m512d a, gg, q;
        unsigned bits;
        Py_ssize_t r;
        if (!in)
            continue;
        nv += __builtin_popcount((unsigned) in);
        a = _mm512_loadu_pd(alpha + p);
        gg = _mm512_loadu_pd(g + p);
        keep = in & ~((_mm512_cmp_pd_mask(a, zero, _CMP_EQ_OQ)
                       & _mm512_cmp_pd_mask(gg, nth, _CMP_LT_OQ))
                      | (_mm512_cmp_pd_mask(a, Cv, _CMP_EQ_OQ)
                         & _mm512_cmp_pd_mask(gg, th, _CMP_GT_OQ)));
        if (!keep)
            continue;
        q = _mm512_loadu_pd(qdiag + p);
        _mm512_storeu_si512(A + na, _mm512_maskz_compress_epi64(keep, idx));
        _mm512_storeu_pd(ga + na, _mm512_maskz_compress_pd(keep, gg));
        _mm512_storeu_pd(uta + na, _mm512_maskz_compress_pd(keep, _mm512_loadu_pd(ut + p)));
        _mm512_storeu_pd(lta + na, _mm512_maskz_compress_pd(keep, _mm512_loadu_pd(lt + p)));
        _mm512_storeu_pd(qa + na, _mm512_maskz_compress_pd(keep, q));
        for (bits = keep, r = na; bits; bits &= bits - 1, r++)
            rank[p + __builtin_ctz(bits)] = r;
        na = r;
        viol = keep & ((_mm512_cmp_pd_mask(a, Cv, _CMP_LT_OQ)
                        & _mm512_cmp_pd_mask(gg, tl, _CMP_GT_OQ))
                       | (_mm512_cmp_pd_mask(a, zero, _CMP_GT_OQ)
                          & _mm512_cmp_pd_mask(gg, ntl, _CMP_LT_OQ)));
        if (viol) {
            double gains[8];
            _mm512_storeu_pd(gains, refsvm_ramp_gain8(gg, q, a, Cv));
            for (bits = viol; bits; bits &= bits - 1)
                refsvm_ramp_keep(p + __builtin_ctz(bits), gains[__builtin_ctz(bits)], &best,
                                 &bg);
        }
    }
    /* the upper halves cleared before the baseline code (GCC 12 leaves them set here, and
       the SSE2 code that follows, such as the core's refsvm_dots, then runs slower) */
    _mm256_zeroupper();
    w->nv = nv;
    w->best = best;
    w->bg = bg;
    return refsvm_ramp_working_set_from(w, p, na);
}
#endif

REFSVM_API Py_ssize_t refsvm_ramp_working_set(refsvm_ramp_ws* w) {
#if REFSVM_X86_GNUC
    if (refsvm_ramp_use_avx512())
        return refsvm_ramp_working_set_avx512(w);
#endif
    w->nv = 0;
    return refsvm_ramp_working_set_from(w, 0, 0);
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
