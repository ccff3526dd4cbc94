/* Row arithmetic of the compiled core (refsvm_rows.h). */
#include <math.h>
#include <string.h>
#include "refsvm_rows.h"

#if REFSVM_X86_GNUC
#include <immintrin.h>
#endif

/* Every body here gives the baseline's bits, so no product and sum may be contracted
   into a fused multiply-add unless written so (_mm256_fmadd_pd).  Clang contracts
   within an expression by default wherever the target has FMA (the AVX-512F bodies,
   the AVX2-and-FMA row bound, aarch64): off for this file.  GCC: REFSVM_NO_CONTRACT on
   each such function.  The build also says so for every file (-ffp-contract=off,
   setup.py). */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

#if REFSVM_GNUC
#define REFSVM_UNROLL4 _Pragma("GCC unroll 4")
#else
#define REFSVM_UNROLL4
#endif

/* The sweep of refsvm_cols_matvec in blocks of rows: REFSVM_SWEEP_BLOCK (the block of
   out stays in L1 across the passes) where the columns (8 n k bytes) fit in
   REFSVM_SWEEP_STREAM = 4 MB (twice L2), else REFSVM_SWEEP_LONG (the columns come from
   L3 or memory: long runs of a column are what the prefetcher streams, and out's block
   stays in L2).  ``back`` walks the blocks from the last: a caller that alternates the
   direction from one sweep to the next reads first the parts of the columns it read
   last, which are the likeliest still in the cache.  Each row's sum is the same whatever
   the order of the rows, so the bits are too. */
#define REFSVM_SWEEP_BLOCK 256
#define REFSVM_SWEEP_STREAM ((Py_ssize_t) 4 << 20)
#define REFSVM_SWEEP_LONG 65536
static Py_ssize_t refsvm_sweep_block(Py_ssize_t n, Py_ssize_t k) {
    return (Py_ssize_t) sizeof(double) * n * k > REFSVM_SWEEP_STREAM ? REFSVM_SWEEP_LONG
                                                                     : REFSVM_SWEEP_BLOCK;
}

/* the baseline bodies */
#define REFSVM_VEC(name) refsvm_##name##_base
#define REFSVM_VEC_ATTR
#include "refsvm_rows_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR

#if REFSVM_X86_GNUC
/* the AVX2 bodies (target("avx2") enables no FMA: nothing can be contracted) */
#define REFSVM_VEC(name) refsvm_##name##_avx2
#define REFSVM_VEC_ATTR __attribute__((target("avx2")))
#include "refsvm_rows_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR
#define REFSVM_AVX2 refsvm_cpu_has(REFSVM_CPU_AVX2)
/* the AVX-512F bodies, for the sweep and axpy (refsvm_rows_get_width): the baseline's
   loops vectorised eight rows wide (GCC: prefer-vector-width, which Clang's target
   attribute does not take), with no fused multiply-add (REFSVM_NO_CONTRACT: AVX-512F
   has it), so the same bits; the other functions keep the AVX2 body */
#if REFSVM_GCC
#define REFSVM_AVX512_TARGET "avx512f,prefer-vector-width=512"
#else
#define REFSVM_AVX512_TARGET "avx512f"
#endif
#define REFSVM_VEC(name) refsvm_##name##_avx512
#define REFSVM_VEC_ATTR __attribute__((target(REFSVM_AVX512_TARGET), unused)) \
    REFSVM_NO_CONTRACT
#include "refsvm_rows_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR
#else
#define REFSVM_AVX2 0
#endif

/* one dispatch per function: the AVX2 body where the CPU has AVX2, else the baseline (the
   sweep and axpy: the widest of AVX-512F, AVX2 and the baseline that
   refsvm_rows_get_width allows, below) */
#if REFSVM_X86_GNUC
#define REFSVM_PICK(name, args) (REFSVM_AVX2 ? refsvm_##name##_avx2 args \
                                             : refsvm_##name##_base args)
#else
#define REFSVM_PICK(name, args) (refsvm_##name##_base args)
#endif

REFSVM_API double refsvm_dense_dot_sqnorm(const double* w, const double* x, Py_ssize_t n,
                                          double* sq) {
    return REFSVM_PICK(dense_dot_sqnorm, (w, x, n, sq));
}

REFSVM_API double refsvm_dense_dot(const double* w, const double* x, Py_ssize_t n) {
    return REFSVM_PICK(dense_dot, (w, x, n));
}

/* the widest body the sweep and axpy take, 8 (AVX-512F), 4 (AVX2) or 1 (the baseline),
   where the CPU has it: the widest by default; the tests set each in turn
   (refsvm_rows_set_width) and compare the bits */
static int refsvm_rows_width = 8;

REFSVM_API int refsvm_rows_get_width(void) {
#if REFSVM_X86_GNUC
    if (refsvm_rows_width >= 8 && refsvm_cpu_has(REFSVM_CPU_AVX512F)) return 8;
    if (refsvm_rows_width >= 4 && REFSVM_AVX2) return 4;
#endif
    return 1;
}

REFSVM_API void refsvm_rows_set_width(int width) { refsvm_rows_width = width; }

/* the dispatch of the sweep and axpy (no value returned): the body of the width
   refsvm_rows_get_width gives */
#if REFSVM_X86_GNUC
#define REFSVM_PICK_WIDTH(name, args) do {                        \
        int width_ = refsvm_rows_get_width();                      \
        if (width_ == 8) refsvm_##name##_avx512 args;              \
        else if (width_ == 4) refsvm_##name##_avx2 args;           \
        else refsvm_##name##_base args;                            \
    } while (0)
#else
#define REFSVM_PICK_WIDTH(name, args) refsvm_##name##_base args
#endif

REFSVM_API void refsvm_cols_matvec(double* out, double** cols, const double* v,
                                   Py_ssize_t k, Py_ssize_t n, int back) {
    REFSVM_PICK_WIDTH(cols_matvec, (out, cols, v, k, n, back));
}

REFSVM_API void refsvm_axpy(double* dst, const double* src, double s, const double* x,
                            Py_ssize_t n) {
    REFSVM_PICK_WIDTH(axpy, (dst, src, s, x, n));
}

REFSVM_API int refsvm_values_bad(const double* v, Py_ssize_t n, double limit) {
    return REFSVM_PICK(values_bad, (v, n, limit));
}

REFSVM_API int refsvm_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d) {
    return REFSVM_PICK(indices_bad, (idx, n, d));
}

#if REFSVM_X86_GNUC
/* the row bound with fused squares (refsvm_dense_dot_bound): AVX2 and FMA, <w, x>
   without contraction */
__attribute__((target("avx2,fma"))) REFSVM_NO_CONTRACT
static double refsvm_dense_dot_bound_fma(const double* w, const double* x, Py_ssize_t n,
                                         double* sq) {
    __m256d s = _mm256_setzero_pd(), q = _mm256_setzero_pd(), v, u;
    double a[4], b[4], s0, s1, s2, s3, q0;
    Py_ssize_t p = 0;
    for (; p + 4 <= n; p += 4) {
        v = _mm256_loadu_pd(x + p);
        u = _mm256_loadu_pd(w + p);
        s = _mm256_add_pd(s, _mm256_mul_pd(v, u));   /* no contraction: row_dot's sums */
        q = _mm256_fmadd_pd(v, v, q);
    }
    _mm256_storeu_pd(a, s);
    _mm256_storeu_pd(b, q);
    s0 = a[0]; s1 = a[1]; s2 = a[2]; s3 = a[3];
    q0 = (b[0] + b[1]) + (b[2] + b[3]);
    for (; p < n; p++) {
        s0 += x[p] * w[p];
        q0 += x[p] * x[p];
    }
    *sq = q0;
    return (s0 + s1) + (s2 + s3);
}
#endif

REFSVM_API double refsvm_dense_dot_bound(const double* w, const double* x, Py_ssize_t n,
                                         double* sq) {
#if REFSVM_X86_GNUC
    if (refsvm_cpu_has(REFSVM_CPU_AVX2 | REFSVM_CPU_FMA))
        return refsvm_dense_dot_bound_fma(w, x, n, sq);
#endif
    return refsvm_dense_dot_sqnorm(w, x, n, sq);
}

#if REFSVM_X86_GNUC
__attribute__((target("avx2")))
static double refsvm_csr_dot_avx2(const double* w, const int* idx, const double* val,
                                  Py_ssize_t n, Py_ssize_t d, double* sq, int* bad,
                                  int checked) {
    __m256d s = _mm256_setzero_pd(), q = _mm256_setzero_pd(), v, g;
    __m128i i, ok, all_ok = _mm_set1_epi32(-1);
    const __m128i top = _mm_set1_epi32((int) (d - 1));
    double a[4], b[4], s0, q0;
    Py_ssize_t p = 0;
    for (; p + 4 <= n; p += 4) {
        i = _mm_loadu_si128((const __m128i*) (idx + p));
        if (checked) {   /* unsigned i <= d - 1, i.e. 0 <= i < d; a bad lane reads w[0] */
            ok = _mm_cmpeq_epi32(_mm_max_epu32(i, top), top);
            all_ok = _mm_and_si128(all_ok, ok);
            i = _mm_and_si128(i, ok);
        }
        g = _mm256_i32gather_pd(w, i, 8);
        v = _mm256_loadu_pd(val + p);
        s = _mm256_add_pd(s, _mm256_mul_pd(v, g));
        if (sq) q = _mm256_add_pd(q, _mm256_mul_pd(v, v));
    }
    _mm256_storeu_pd(a, s);
    _mm256_storeu_pd(b, q);
    s0 = a[0];
    q0 = b[0];
    for (; p < n; p++) {
        size_t j = (size_t) (Py_ssize_t) idx[p];
        if (checked && j >= (size_t) d) {
            all_ok = _mm_setzero_si128();
            j = 0;
        }
        s0 += val[p] * w[j];
        q0 += val[p] * val[p];
    }
    if (checked) *bad = _mm_movemask_epi8(all_ok) != 0xFFFF;
    if (sq) *sq = (q0 + b[1]) + (b[2] + b[3]);
    return (s0 + a[1]) + (a[2] + a[3]);
}
#endif

REFSVM_API double refsvm_csr_dot(const double* w, const int* idx, const double* val,
                                 Py_ssize_t n, Py_ssize_t d, double* sq, int* bad,
                                 int checked) {
#if REFSVM_X86_GNUC
    return refsvm_csr_dot_avx2(w, idx, val, n, d, sq, bad, checked);
#else
    (void) w; (void) idx; (void) val; (void) n; (void) d; (void) sq; (void) bad;
    (void) checked;
    return 0.0;   /* never called: refsvm_csr_fast() is 0 */
#endif
}

static double refsvm_max_abs_base(const double* x, Py_ssize_t n, double m) {
    Py_ssize_t i;
    double v;
    for (i = 0; i < n; i++) {
        v = x[i] < 0.0 ? -x[i] : x[i];
        if (v > m) m = v;
    }
    return m;
}

#if REFSVM_X86_GNUC
/* The vector part of refsvm_max_abs (absval) and refsvm_max: the largest of m and the
   first i entries of x (of their absolute values), i a multiple of 8, left in *done for
   the caller's scalar tail.  max_pd keeps its second operand when the first is NaN, and
   on equal values (0.0 and -0.0 too): a lane only ever holds m or an entry greater than
   it, so the result is the scalar loop's. */
__attribute__((target("avx2")))
static inline double refsvm_max_lanes_avx2(const double* x, Py_ssize_t n, double m,
                                           int absval, Py_ssize_t* done) {
    Py_ssize_t i = 0;
    int k;
    double lane[4];
    __m256d sign = _mm256_set1_pd(-0.0), m0 = _mm256_set1_pd(m), m1 = m0, v, u;
    for (; i + 8 <= n; i += 8) {
        v = _mm256_loadu_pd(x + i);
        u = _mm256_loadu_pd(x + i + 4);
        if (absval) {
            v = _mm256_andnot_pd(sign, v);
            u = _mm256_andnot_pd(sign, u);
        }
        m0 = _mm256_max_pd(v, m0);
        m1 = _mm256_max_pd(u, m1);
    }
    m0 = _mm256_max_pd(m1, m0);
    _mm256_storeu_pd(lane, m0);
    for (k = 0; k < 4; k++) if (lane[k] > m) m = lane[k];
    *done = i;
    return m;
}

__attribute__((target("avx2")))
static double refsvm_max_abs_avx2(const double* x, Py_ssize_t n, double m) {
    Py_ssize_t i;
    m = refsvm_max_lanes_avx2(x, n, m, 1, &i);
    return refsvm_max_abs_base(x + i, n - i, m);
}
#endif

REFSVM_API double refsvm_max_abs(const double* x, Py_ssize_t n, double m) {
    return REFSVM_PICK(max_abs, (x, n, m));
}

static double refsvm_max_base(const double* x, Py_ssize_t n, double m) {
    Py_ssize_t i;
    for (i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}

#if REFSVM_X86_GNUC
__attribute__((target("avx2")))
static double refsvm_max_avx2(const double* x, Py_ssize_t n, double m) {
    Py_ssize_t i;
    m = refsvm_max_lanes_avx2(x, n, m, 0, &i);
    return refsvm_max_base(x + i, n - i, m);
}
#endif

REFSVM_API double refsvm_max(const double* x, Py_ssize_t n, double m) {
    return REFSVM_PICK(max, (x, n, m));
}

/* entries lo .. hi-1 of refsvm_join_scan, one at a time: the reference loop */
static Py_ssize_t refsvm_join_scan_range(const signed char* status, const signed char* blk,
                                         const double* r, const double* g,
                                         const double* kroot, Py_ssize_t lo, Py_ssize_t hi,
                                         signed char err, signed char rest, double tol0,
                                         double eg, double gam, double rtb, double rt0,
                                         double* best, Py_ssize_t* bi, double* tb,
                                         Py_ssize_t* tlist, Py_ssize_t ntl) {
    Py_ssize_t i;
    signed char st;
    double sd, rr, ar, lim, t;
    int take;
    for (i = lo; i < hi; i++) {
        st = status[i];
        sd = (double) ((st == err) - (st == rest));
        rr = r[i];
        ar = sd * rr;
        lim = (ar * *best + eg) * (1.0 + 1e-9);
        take = (ar > tol0) & (blk[i] == 0) & ((-sd) * g[i] <= lim);
        if (take && ar > gam * (kroot[i] * rtb + rt0)) {
            t = -g[i] / rr;
            if (t < 0.0) t = 0.0;
            tb[ntl] = t;
            tlist[ntl] = i;
            ntl++;
            if (t < *best) {
                *best = t;
                *bi = i;
            }
        }
    }
    return ntl;
}

#if REFSVM_X86_GNUC
/* four entries at a time: the same products, sums and comparisons as the scalar test,
   with the best at the start of the four; a lane that may pass sends the four to the
   scalar loop */
__attribute__((target("avx2")))
static Py_ssize_t refsvm_join_scan_avx2(const signed char* status, const signed char* blk,
                                        const double* r, const double* g,
                                        const double* kroot, Py_ssize_t n, signed char err,
                                        signed char rest, double tol0, double eg, double gam,
                                        double rtb, double rt0, double* best, Py_ssize_t* bi,
                                        double* tb, Py_ssize_t* tlist) {
    Py_ssize_t i = 0, ntl = 0;
    int s4, b4;
    const __m256i verr = _mm256_set1_epi64x(err), vrest = _mm256_set1_epi64x(rest),
                  zero = _mm256_setzero_si256();
    const __m256d one = _mm256_set1_pd(1.0), sign = _mm256_set1_pd(-0.0),
                  vtol0 = _mm256_set1_pd(tol0), veg = _mm256_set1_pd(eg),
                  widen = _mm256_set1_pd(1.0 + 1e-9);
    __m256i st, bk;
    __m256d sd, ar, lim, ok;
    for (; i + 4 <= n; i += 4) {
        memcpy(&s4, status + i, 4);
        memcpy(&b4, blk + i, 4);
        st = _mm256_cvtepi8_epi64(_mm_cvtsi32_si128(s4));
        bk = _mm256_cvtepi8_epi64(_mm_cvtsi32_si128(b4));
        sd = _mm256_sub_pd(_mm256_and_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(st, verr)), one),
                           _mm256_and_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(st, vrest)), one));
        ar = _mm256_mul_pd(sd, _mm256_loadu_pd(r + i));
        lim = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(ar, _mm256_set1_pd(*best)), veg), widen);
        ok = _mm256_and_pd(_mm256_cmp_pd(ar, vtol0, _CMP_GT_OQ),
                           _mm256_cmp_pd(_mm256_mul_pd(_mm256_xor_pd(sd, sign),
                                                       _mm256_loadu_pd(g + i)), lim, _CMP_LE_OQ));
        ok = _mm256_and_pd(ok, _mm256_castsi256_pd(_mm256_cmpeq_epi64(bk, zero)));
        if (_mm256_movemask_pd(ok))
            ntl = refsvm_join_scan_range(status, blk, r, g, kroot, i, i + 4, err, rest, tol0,
                                         eg, gam, rtb, rt0, best, bi, tb, tlist, ntl);
    }
    return refsvm_join_scan_range(status, blk, r, g, kroot, i, n, err, rest, tol0, eg, gam,
                                  rtb, rt0, best, bi, tb, tlist, ntl);
}
#endif

REFSVM_API Py_ssize_t refsvm_join_scan(const signed char* status, const signed char* blk,
                                       const double* r, const double* g,
                                       const double* kroot, Py_ssize_t n, signed char err,
                                       signed char rest, double tol0, double eg, double gam,
                                       double rtb, double rt0, double* best, Py_ssize_t* bi,
                                       double* tb, Py_ssize_t* tlist) {
#if REFSVM_X86_GNUC
    if (REFSVM_AVX2)
        return refsvm_join_scan_avx2(status, blk, r, g, kroot, n, err, rest, tol0, eg, gam,
                                     rtb, rt0, best, bi, tb, tlist);
#endif
    return refsvm_join_scan_range(status, blk, r, g, kroot, 0, n, err, rest, tol0, eg, gam,
                                  rtb, rt0, best, bi, tb, tlist, 0);
}

REFSVM_API void refsvm_cols_to_rows(double* rows, Py_ssize_t ld, double* const* cols,
                                    Py_ssize_t k, Py_ssize_t n) {
    Py_ssize_t lo, hi, i, j;
    for (lo = 0; lo < n; lo += 64) {
        hi = lo + 64 < n ? lo + 64 : n;
        for (j = 0; j < k; j++)
            for (i = lo; i < hi; i++)
                rows[i * ld + j] = cols[j][i];
    }
}

REFSVM_API void refsvm_rows_to_cols(double** cols, const double* rows, Py_ssize_t ld,
                                    Py_ssize_t k, Py_ssize_t n) {
    Py_ssize_t lo, hi, i, j;
    for (lo = 0; lo < n; lo += 64) {
        hi = lo + 64 < n ? lo + 64 : n;
        for (j = 0; j < k; j++)
            for (i = lo; i < hi; i++)
                cols[j][i] = rows[i * ld + j];
    }
}

#define REFSVM_ROW(k) (base + (pos ? pos[j + (k)] : j + (k)) * ld)
#if REFSVM_X86_GNUC
/* s = s + t * x, lane by lane (two roundings) */
#define REFSVM_DOTS_STEP(t, xi) s = _mm512_add_pd(s, _mm512_mul_pd((t), _mm512_set1_pd(xi)))
/* AVX-512F, eight rows at a time, one row a lane: each lane the scalar loop's operations
   in its order from +0.0 (REFSVM_NO_CONTRACT: no fused multiply-add), so the same bits.
   Eight entries of each of the eight rows are loaded and transposed (an 8 x 8 block: 24
   shuffles), the last d % 8 entries put together one by one.  Returns the rows done. */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static Py_ssize_t refsvm_dots8_avx512(const double* base, Py_ssize_t ld,
                                      const Py_ssize_t* pos, Py_ssize_t m, const double* x,
                                      Py_ssize_t d, double* out) {
    Py_ssize_t j = 0, i;
    for (; j + 8 <= m; j += 8) {
        const double *r0 = REFSVM_ROW(0), *r1 = REFSVM_ROW(1), *r2 = REFSVM_ROW(2),
                     *r3 = REFSVM_ROW(3), *r4 = REFSVM_ROW(4), *r5 = REFSVM_ROW(5),
                     *r6 = REFSVM_ROW(6), *r7 = REFSVM_ROW(7);
        __m512d s = _mm512_setzero_pd();
        for (i = 0; i + 8 <= d; i += 8) {
            __m512d v0 = _mm512_loadu_pd(r0 + i), v1 = _mm512_loadu_pd(r1 + i);
            __m512d v2 = _mm512_loadu_pd(r2 + i), v3 = _mm512_loadu_pd(r3 + i);
            __m512d v4 = _mm512_loadu_pd(r4 + i), v5 = _mm512_loadu_pd(r5 + i);
            __m512d v6 = _mm512_loadu_pd(r6 + i), v7 = _mm512_loadu_pd(r7 + i);
            /* pairs of rows, then 128-bit lanes: b_c holds entries c and c + 4 */
            __m512d a0 = _mm512_unpacklo_pd(v0, v1), a1 = _mm512_unpackhi_pd(v0, v1);
            __m512d a2 = _mm512_unpacklo_pd(v2, v3), a3 = _mm512_unpackhi_pd(v2, v3);
            __m512d a4 = _mm512_unpacklo_pd(v4, v5), a5 = _mm512_unpackhi_pd(v4, v5);
            __m512d a6 = _mm512_unpacklo_pd(v6, v7), a7 = _mm512_unpackhi_pd(v6, v7);
            __m512d b0 = _mm512_shuffle_f64x2(a0, a2, 0x88), b1 = _mm512_shuffle_f64x2(a1, a3, 0x88);
            __m512d b2 = _mm512_shuffle_f64x2(a0, a2, 0xdd), b3 = _mm512_shuffle_f64x2(a1, a3, 0xdd);
            __m512d b4 = _mm512_shuffle_f64x2(a4, a6, 0x88), b5 = _mm512_shuffle_f64x2(a5, a7, 0x88);
            __m512d b6 = _mm512_shuffle_f64x2(a4, a6, 0xdd), b7 = _mm512_shuffle_f64x2(a5, a7, 0xdd);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b0, b4, 0x88), x[i]);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b1, b5, 0x88), x[i + 1]);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b2, b6, 0x88), x[i + 2]);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b3, b7, 0x88), x[i + 3]);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b0, b4, 0xdd), x[i + 4]);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b1, b5, 0xdd), x[i + 5]);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b2, b6, 0xdd), x[i + 6]);
            REFSVM_DOTS_STEP(_mm512_shuffle_f64x2(b3, b7, 0xdd), x[i + 7]);
        }
        for (; i < d; i++)
            REFSVM_DOTS_STEP(_mm512_set_pd(r7[i], r6[i], r5[i], r4[i], r3[i], r2[i], r1[i],
                                           r0[i]), x[i]);
        _mm512_storeu_pd(out + j, s);
    }
    return j;
}
#undef REFSVM_DOTS_STEP
#endif

/* eight rows in flight: eight independent chains of additions (the latency of one chain,
   d additions, is the bound of a single row; beyond the caches the bound is reading the
   rows); with AVX-512F the groups of eight rows as the lanes of one vector */
REFSVM_API void refsvm_dots(const double* base, Py_ssize_t ld, const Py_ssize_t* pos,
                            Py_ssize_t m, const double* x, Py_ssize_t d, double* out) {
    Py_ssize_t j = 0, i;
#if REFSVM_X86_GNUC
    if (m >= 8 && refsvm_cpu_has(REFSVM_CPU_AVX512F))
        j = refsvm_dots8_avx512(base, ld, pos, m, x, d, out);
#endif
    for (; j + 8 <= m; j += 8) {
        const double *r0 = REFSVM_ROW(0), *r1 = REFSVM_ROW(1), *r2 = REFSVM_ROW(2),
                     *r3 = REFSVM_ROW(3), *r4 = REFSVM_ROW(4), *r5 = REFSVM_ROW(5),
                     *r6 = REFSVM_ROW(6), *r7 = REFSVM_ROW(7);
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0,
               s7 = 0.0;
        for (i = 0; i < d; i++) {
            double xi = x[i];
            s0 = s0 + r0[i] * xi; s1 = s1 + r1[i] * xi;
            s2 = s2 + r2[i] * xi; s3 = s3 + r3[i] * xi;
            s4 = s4 + r4[i] * xi; s5 = s5 + r5[i] * xi;
            s6 = s6 + r6[i] * xi; s7 = s7 + r7[i] * xi;
        }
        out[j] = s0; out[j + 1] = s1; out[j + 2] = s2; out[j + 3] = s3;
        out[j + 4] = s4; out[j + 5] = s5; out[j + 6] = s6; out[j + 7] = s7;
    }
    for (; j + 4 <= m; j += 4) {
        const double *r0 = REFSVM_ROW(0), *r1 = REFSVM_ROW(1), *r2 = REFSVM_ROW(2),
                     *r3 = REFSVM_ROW(3);
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (i = 0; i < d; i++) {
            double xi = x[i];
            s0 = s0 + r0[i] * xi; s1 = s1 + r1[i] * xi;
            s2 = s2 + r2[i] * xi; s3 = s3 + r3[i] * xi;
        }
        out[j] = s0; out[j + 1] = s1; out[j + 2] = s2; out[j + 3] = s3;
    }
    for (; j + 2 <= m; j += 2) {
        const double *r0 = REFSVM_ROW(0), *r1 = REFSVM_ROW(1);
        double s0 = 0.0, s1 = 0.0;
        for (i = 0; i < d; i++) {
            s0 = s0 + r0[i] * x[i];
            s1 = s1 + r1[i] * x[i];
        }
        out[j] = s0; out[j + 1] = s1;
    }
    for (; j < m; j++) {
        const double* r0 = REFSVM_ROW(0);
        double s0 = 0.0;
        for (i = 0; i < d; i++)
            s0 = s0 + r0[i] * x[i];
        out[j] = s0;
    }
#undef REFSVM_ROW
}
