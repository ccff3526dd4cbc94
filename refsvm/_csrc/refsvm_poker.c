/* The hand-written C of the POKER twin (refsvm_poker.h). */
#include <math.h>
#include "refsvm_poker.h"

#if REFSVM_X86_GNUC
#include <immintrin.h>

__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static Py_ssize_t refsvm_poker_scan8_avx512(
        Py_ssize_t n, int fixed, const double* y, const double* inner, double* gdot,
        double* g, const double* kr, const double* d, const signed char* status,
        const signed char* blk, Py_ssize_t* cand, double* cts, double bd, double terms,
        double base, double tp, int pend, double eps_rate, signed char io,
        signed char is_, signed char ic, double* tmin, double* gmin, Py_ssize_t* done,
        const signed char* y8) {
    const __m512d vbd = _mm512_set1_pd(bd), vterms = _mm512_set1_pd(terms);
    const __m512d vbase = _mm512_set1_pd(base), vtp = _mm512_set1_pd(tp);
    const __m512d veps = _mm512_set1_pd(eps_rate), zero = _mm512_setzero_pd();
    const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ULL);
    const __m512i vio = _mm512_set1_epi64(io), vis = _mm512_set1_epi64(is_);
    const __m512i vic = _mm512_set1_epi64(ic), izero = _mm512_setzero_si512();
    const __m512i step = _mm512_set1_epi64(8);
    __m512i idx = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    __m512d vtmin = _mm512_set1_pd(INFINITY), vgmin = _mm512_set1_pd(INFINITY);
    Py_ssize_t i = 0, nc = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i st = _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i*)(status + i)));
        __m512i bk = _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i*)(blk + i)));
        /* y8: the labels as bytes when all are -1 or +1 (the same doubles) */
        __m512d yy = y8 ? _mm512_cvtepi32_pd(_mm256_cvtepi8_epi32(
                              _mm_loadl_epi64((const __m128i*)(y8 + i))))
                        : _mm512_loadu_pd(y + i);
        __m512d gd = _mm512_sub_pd(_mm512_mul_pd(yy, _mm512_loadu_pd(inner + i)),
                                   _mm512_mul_pd(yy, vbd));
        /* kr NULL: every k(x, x) is 1 (RBF), and 1 * terms is terms */
        __m512d rt = _mm512_add_pd(kr ? _mm512_mul_pd(_mm512_loadu_pd(kr + i), vterms) : vterms, vbase);
        __m512d gg = _mm512_loadu_pd(g + i);
        __m512d ts, nrt;
        __mmask8 pm, cm;
        if (fixed) {
            __m512d dd = _mm512_loadu_pd(d + i);
            gd = _mm512_add_pd(gd, dd);
            rt = _mm512_add_pd(rt, _mm512_castsi512_pd(_mm512_andnot_si512(
                     sign, _mm512_castpd_si512(dd))));
        } else {
            rt = _mm512_add_pd(rt, zero);
        }
        rt = _mm512_mul_pd(veps, rt);
        if (pend) {
            pm = _mm512_cmpneq_epi64_mask(st, vis) & _mm512_cmpge_epi64_mask(st, izero);
            gg = _mm512_mask_add_pd(gg, pm, gg,
                                    _mm512_mul_pd(_mm512_loadu_pd(gdot + i), vtp));
            _mm512_storeu_pd(g + i, gg);
        }
        _mm512_storeu_pd(gdot + i, gd);
        nrt = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(rt), sign));
        cm = ((_mm512_cmpeq_epi64_mask(st, vio) & _mm512_cmp_pd_mask(gd, nrt, _CMP_LT_OQ))
              | (_mm512_cmpeq_epi64_mask(st, vic) & _mm512_cmp_pd_mask(gd, rt, _CMP_GT_OQ)))
             & _mm512_cmpeq_epi64_mask(bk, izero);
        if (cm) {
            ts = _mm512_div_pd(_mm512_castsi512_pd(_mm512_xor_si512(
                     _mm512_castpd_si512(gg), sign)), gd);
            ts = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(ts, zero, _CMP_GE_OQ), zero, ts);
            _mm512_mask_compressstoreu_epi64(cand + nc, cm, idx);
            _mm512_mask_compressstoreu_pd(cts + nc, cm, ts);
            vtmin = _mm512_mask_min_pd(vtmin, cm, ts, vtmin);
            vgmin = _mm512_mask_min_pd(vgmin, cm, _mm512_castsi512_pd(_mm512_andnot_si512(
                        sign, _mm512_castpd_si512(gd))), vgmin);
            nc += __builtin_popcount((unsigned)cm);
        }
        idx = _mm512_add_epi64(idx, step);
    }
    *tmin = _mm512_reduce_min_pd(vtmin);
    *gmin = _mm512_reduce_min_pd(vgmin);
    *done = i;
    return nc;
}
#endif

REFSVM_API int refsvm_poker_scan_vector(void) {
#if REFSVM_X86_GNUC
    return refsvm_cpu_has(REFSVM_CPU_AVX512F);
#else
    return 0;
#endif
}

REFSVM_API Py_ssize_t refsvm_poker_scan8(
        Py_ssize_t n, int fixed, const double* y, const double* inner, double* gdot,
        double* g, const double* kr, const double* d, const signed char* status,
        const signed char* blk, Py_ssize_t* cand, double* cts, double bd, double terms,
        double base, double tp, int pend, double eps_rate, signed char io,
        signed char is_, signed char ic, double* tmin, double* gmin, Py_ssize_t* done,
        const signed char* y8) {
#if REFSVM_X86_GNUC
    return refsvm_poker_scan8_avx512(n, fixed, y, inner, gdot, g, kr, d, status, blk, cand,
                                     cts, bd, terms, base, tp, pend, eps_rate, io, is_, ic,
                                     tmin, gmin, done, y8);
#else
    (void) n; (void) fixed; (void) y; (void) inner; (void) gdot; (void) g; (void) kr;
    (void) d; (void) status; (void) blk; (void) cand; (void) cts; (void) bd; (void) terms;
    (void) base; (void) tp; (void) pend; (void) eps_rate; (void) io; (void) is_; (void) ic;
    (void) y8;
    *tmin = INFINITY; *gmin = INFINITY; *done = 0;
    return 0;   /* never called: refsvm_poker_scan_vector() is 0 */
#endif
}
