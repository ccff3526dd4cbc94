/* The bodies of refsvm_rkpa.c, compiled for the baseline and, on x86-64 with GCC 12 or
   later, for the x86-64-v3 level (AVX2 and FMA: a product and a sum are one fused
   multiply-add there, so those bodies round otherwise than the baseline ones) and for
   the x86-64-v4 level (RKPA_WIDE defined: eight-wide loops in exp, matvec and matmat,
   the same operations per entry as v3, so the same bits; the functions under
   "#ifndef RKPA_WIDE" have no v4 body).  Included by refsvm_rkpa.c with REFSVM_VEC(name)
   naming the body and REFSVM_VEC_ATTR its attributes; no include guard. */

#ifndef RKPA_EXP_GROUP
/* NQ vectors of W entries (type VT; MT and UT: the same lanes as int64 and uint64, BC a
   double in every lane) at v + i through the steps of the scalar loop of exp, side by
   side: the polynomial is a chain of 13 dependent multiply-adds per entry, and NQ
   independent chains keep the multiply-add units busy.  Each entry gets the operations
   of the scalar loop, in its order (the same bits). */
#define RKPA_EXP_STEP(c) for (q = 0; q < NQ_; q++) p[q] = p[q] * r[q] + (c)
#define RKPA_EXP_GROUP(VT, MT, UT, BC, W, NQ) do { \
    enum { NQ_ = (NQ) }; \
    VT x0[NQ_], x[NQ_], t[NQ_], r[NQ_], p[NQ_]; \
    int q; \
    for (q = 0; q < NQ_; q++) { \
        x0[q] = *(const VT *) (v + i + (W) * q); \
        const MT lo = x0[q] < -708.0; \
        x[q] = (VT) ((lo & (MT) BC(-708.0)) | (~lo & (MT) x0[q])); \
        const MT hi = x[q] > 709.0; \
        x[q] = (VT) ((hi & (MT) BC(709.0)) | (~hi & (MT) x[q])); \
        t[q] = x[q] * log2e + shift; \
    } \
    for (q = 0; q < NQ_; q++) { \
        const VT k = t[q] - shift; \
        r[q] = (x[q] - k * ln2hi) - k * ln2lo; \
        p[q] = BC(1.0 / 6227020800.0); \
    } \
    RKPA_EXP_STEP(1.0 / 479001600.0); RKPA_EXP_STEP(1.0 / 39916800.0); \
    RKPA_EXP_STEP(1.0 / 3628800.0); RKPA_EXP_STEP(1.0 / 362880.0); \
    RKPA_EXP_STEP(1.0 / 40320.0); RKPA_EXP_STEP(1.0 / 5040.0); \
    RKPA_EXP_STEP(1.0 / 720.0); RKPA_EXP_STEP(1.0 / 120.0); \
    RKPA_EXP_STEP(1.0 / 24.0); RKPA_EXP_STEP(1.0 / 6.0); \
    RKPA_EXP_STEP(0.5); RKPA_EXP_STEP(1.0); RKPA_EXP_STEP(1.0); \
    for (q = 0; q < NQ_; q++) { \
        UT b = (UT) t[q]; \
        b = (b + (uint64_t)(1023 - 0x4338000000000000LL)) << 52; \
        const VT y = p[q] * (VT) b; \
        const MT under = x0[q] < -708.0; \
        *(VT *) (v + i + (W) * q) = (VT) (~under & (MT) y); \
    } \
} while (0)
#endif

/* v[i] = exp(v[i]): x = n ln2 + r (Cody-Waite, |r| <= ln2/2), e^r by its Taylor
   polynomial of degree 13 (truncation < 5e-18), 2^n by the exponent bits.  Below
   -708 the result is 0 (libm gives subnormals < 3.3e-308 there). */
static REFSVM_VEC_ATTR void REFSVM_VEC(exp)(double *REFSVM_RESTRICT v, Py_ssize_t n) {
    const double log2e = 1.4426950408889634, shift = 6755399441055744.0;
    const double ln2hi = 6.93147180369123816490e-01, ln2lo = 1.90821492927058770002e-10;
    Py_ssize_t i = 0;
#if REFSVM_GNUC
#ifdef RKPA_WIDE
    /* thirty-two entries at a time (four vectors of eight), then eight */
    for (; i + 32 <= n; i += 32) RKPA_EXP_GROUP(rkpa_v8, rkpa_m8, rkpa_u8, rkpa_bc8, 8, 4);
    for (; i + 8 <= n; i += 8) RKPA_EXP_GROUP(rkpa_v8, rkpa_m8, rkpa_u8, rkpa_bc8, 8, 1);
#endif
    /* sixteen entries at a time (four vectors of four) */
    for (; i + 16 <= n; i += 16) RKPA_EXP_GROUP(rkpa_v4, rkpa_m4, rkpa_u4, rkpa_bc, 4, 4);
#ifdef RKPA_WIDE
    for (; i + 4 <= n; i += 4) RKPA_EXP_GROUP(rkpa_v4, rkpa_m4, rkpa_u4, rkpa_bc, 4, 1);
#endif
#endif
    for (; i < n; i++) {
        double x0 = v[i];
        double x = x0 < -708.0 ? -708.0 : x0;
        x = x > 709.0 ? 709.0 : x;
        double t = x * log2e + shift;
        double k = t - shift;
        double r = (x - k * ln2hi) - k * ln2lo;
        double p = 1.0 / 6227020800.0;
        p = p * r + 1.0 / 479001600.0;
        p = p * r + 1.0 / 39916800.0;
        p = p * r + 1.0 / 3628800.0;
        p = p * r + 1.0 / 362880.0;
        p = p * r + 1.0 / 40320.0;
        p = p * r + 1.0 / 5040.0;
        p = p * r + 1.0 / 720.0;
        p = p * r + 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
        uint64_t b;
        memcpy(&b, &t, 8);
        b = (b + (uint64_t)(1023 - 0x4338000000000000LL)) << 52;
        double s;
        memcpy(&s, &b, 8);
        v[i] = x0 < -708.0 ? 0.0 : p * s;
    }
}

/* out[i] = scale * sum_j (AT[j m + i] - x[j])^2: squared distances summed directly */
static REFSVM_VEC_ATTR void REFSVM_VEC(sqdist)(const double *REFSVM_RESTRICT AT, Py_ssize_t m, Py_ssize_t d,
                         const double *REFSVM_RESTRICT x, double scale,
                         double *REFSVM_RESTRICT out) {
    for (Py_ssize_t i = 0; i < m; i++) out[i] = 0.0;
    for (Py_ssize_t j = 0; j < d; j++) {
        const double xj = x[j];
        const double *REFSVM_RESTRICT a = AT + j * m;
        for (Py_ssize_t i = 0; i < m; i++) {
            double t = a[i] - xj;
            out[i] += t * t;
        }
    }
    for (Py_ssize_t i = 0; i < m; i++) out[i] *= scale;
}

#ifndef RKPA_WIDE
/* The outputs i .. m-1 of matvec, one at a time (the v4 bodies call the v3 one: the
   compiler's code for these loops, whichever way it vectorises them, is then the same
   code at both levels). */
static REFSVM_VEC_ATTR REFSVM_NOINLINE void REFSVM_VEC(matvec_tail)(
        const double *REFSVM_RESTRICT A, Py_ssize_t n_in, Py_ssize_t m,
        const double *REFSVM_RESTRICT x, double *REFSVM_RESTRICT out, Py_ssize_t i) {
    Py_ssize_t j;
    for (; i < m; i++) {
        double a = 0.0;
        for (j = 0; j < n_in; j++) a = a + x[j] * A[j * m + i];
        out[i] = a;
    }
}

#if REFSVM_GNUC
/* The outputs i .. m-1 of four rows of matmat, one output of the four at a time (as
   matvec_tail). */
static REFSVM_VEC_ATTR REFSVM_NOINLINE void REFSVM_VEC(matmat_tail4)(
        const double *REFSVM_RESTRICT A, Py_ssize_t n_in, Py_ssize_t m,
        const double *const *xs, double *out, Py_ssize_t i) {
    const double *REFSVM_RESTRICT x0 = xs[0], *REFSVM_RESTRICT x1 = xs[1];
    const double *REFSVM_RESTRICT x2 = xs[2], *REFSVM_RESTRICT x3 = xs[3];
    double *o0 = out, *o1 = o0 + m, *o2 = o1 + m, *o3 = o2 + m;
    Py_ssize_t j;
    for (; i < m; i++) {
        double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
        for (j = 0; j < n_in; j++) {
            const double aj = A[j * m + i];
            c0 = c0 + x0[j] * aj;
            c1 = c1 + x1[j] * aj;
            c2 = c2 + x2[j] * aj;
            c3 = c3 + x3[j] * aj;
        }
        o0[i] = c0;
        o1[i] = c1;
        o2[i] = c2;
        o3[i] = c3;
    }
}
#endif /* REFSVM_GNUC */
#endif /* !RKPA_WIDE */

/* out[i] = sum_{j < n_in} x[j] A[j m + i] (= A^T x for a row-major n_in x m matrix A).
   Each out[i] is accumulated over j in order, one multiply-add (fused in the x86-64-v3
   body) per term, whatever the tile it falls in: the result of a row never depends on
   how rows are grouped.  Tiles of 16 outputs stay in registers while A streams by. */
static REFSVM_VEC_ATTR void REFSVM_VEC(matvec)(const double *REFSVM_RESTRICT A, Py_ssize_t n_in, Py_ssize_t m,
                         const double *REFSVM_RESTRICT x, double *REFSVM_RESTRICT out) {
    Py_ssize_t i = 0;
#if REFSVM_GNUC
    Py_ssize_t j;
    const rkpa_v4 zero = {0.0, 0.0, 0.0, 0.0};
#ifdef RKPA_WIDE
    /* tiles of NQ vectors of eight outputs (NQ chains): 96, 64, 32, then 8 */
#define RKPA_MV8(NQ) do { \
        rkpa_v8 a[NQ]; \
        int q; \
        for (q = 0; q < (NQ); q++) a[q] = rkpa_bc8(0.0); \
        for (j = 0; j < n_in; j++) { \
            const double *p = A + j * m + i; \
            const rkpa_v8 xj = rkpa_bc8(x[j]); \
            for (q = 0; q < (NQ); q++) a[q] = a[q] + xj * *(const rkpa_v8 *) (p + 8 * q); \
        } \
        for (q = 0; q < (NQ); q++) memcpy(out + i + 8 * q, &a[q], 64); \
    } while (0)
    for (; i + 96 <= m; i += 96) RKPA_MV8(12);
    for (; i + 64 <= m; i += 64) RKPA_MV8(8);
    for (; i + 32 <= m; i += 32) RKPA_MV8(4);
    for (; i + 8 <= m; i += 8) RKPA_MV8(1);
#undef RKPA_MV8
#endif
    for (; i + 16 <= m; i += 16) {
        rkpa_v4 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        for (j = 0; j < n_in; j++) {
            const double *p = A + j * m + i;
            const rkpa_v4 xj = {x[j], x[j], x[j], x[j]};
            a0 = a0 + xj * *(const rkpa_v4 *) p;
            a1 = a1 + xj * *(const rkpa_v4 *) (p + 4);
            a2 = a2 + xj * *(const rkpa_v4 *) (p + 8);
            a3 = a3 + xj * *(const rkpa_v4 *) (p + 12);
        }
        memcpy(out + i, &a0, 32);
        memcpy(out + i + 4, &a1, 32);
        memcpy(out + i + 8, &a2, 32);
        memcpy(out + i + 12, &a3, 32);
    }
    for (; i + 4 <= m; i += 4) {
        rkpa_v4 a0 = zero;
        for (j = 0; j < n_in; j++) {
            const rkpa_v4 xj = {x[j], x[j], x[j], x[j]};
            a0 = a0 + xj * *(const rkpa_v4 *) (A + j * m + i);
        }
        memcpy(out + i, &a0, 32);
    }
#endif
    RKPA_TAIL(matvec_tail)(A, n_in, m, x, out, i);
}

/* out[r m + i] = sum_{j < n_in} xs[r][j] A[j m + i] for the n_rows rows xs[r]: the matvec
   of each row, with each output accumulated over j in order by one multiply-add per term
   (fused in the x86-64-v3 body) from 0, as matvec does, so that a row gets the same bits
   whichever of the two computes it and whatever rows share its tile.  Tiles of 4 rows x
   12 outputs (twelve accumulators: enough independent chains to cover the latency of
   the multiply-adds), then the outputs left over in fours by tiles of 8 rows x 4 (eight
   chains; 4 x 4 for the last four rows), then single outputs: A streams by once per 4
   rows instead of once per row (a 100 x 100 A does not fit in L1). */
#define RKPA_MM_BCAST(xr) const rkpa_v4 b = {xr[j], xr[j], xr[j], xr[j]}
static REFSVM_VEC_ATTR void REFSVM_VEC(matmat)(const double *REFSVM_RESTRICT A, Py_ssize_t n_in, Py_ssize_t m,
                         const double *const *xs, Py_ssize_t n_rows,
                         double *REFSVM_RESTRICT out) {
    Py_ssize_t r = 0;
#if REFSVM_GNUC
    Py_ssize_t i, j;
    const Py_ssize_t m12 = m - m % 12, m4 = m - m % 4, n4 = n_rows - n_rows % 4;
    const rkpa_v4 zero = {0.0, 0.0, 0.0, 0.0};
    for (; r + 4 <= n_rows; r += 4) {
        const double *REFSVM_RESTRICT x0 = xs[r], *REFSVM_RESTRICT x1 = xs[r + 1];
        const double *REFSVM_RESTRICT x2 = xs[r + 2], *REFSVM_RESTRICT x3 = xs[r + 3];
        double *o0 = out + r * m, *o1 = o0 + m, *o2 = o1 + m, *o3 = o2 + m;
        i = 0;
#ifdef RKPA_WIDE
        /* tiles of 4 rows x 24 outputs (three vectors of eight per row), then of 12 */
        for (; i + 24 <= m; i += 24) {
            rkpa_v8 a[4][3];
            const double *xr[4] = {x0, x1, x2, x3};
            int q, t;
            for (q = 0; q < 4; q++)
                for (t = 0; t < 3; t++) a[q][t] = rkpa_bc8(0.0);
            for (j = 0; j < n_in; j++) {
                const double *p = A + j * m + i;
                const rkpa_v8 p0 = *(const rkpa_v8 *) p, p1 = *(const rkpa_v8 *) (p + 8);
                const rkpa_v8 p2 = *(const rkpa_v8 *) (p + 16);
                for (q = 0; q < 4; q++) {
                    const rkpa_v8 b = rkpa_bc8(xr[q][j]);
                    a[q][0] = a[q][0] + b * p0;
                    a[q][1] = a[q][1] + b * p1;
                    a[q][2] = a[q][2] + b * p2;
                }
            }
            for (q = 0; q < 4; q++)
                for (t = 0; t < 3; t++) memcpy(o0 + q * m + i + 8 * t, &a[q][t], 64);
        }
#endif
        for (; i < m12; i += 12) {
            rkpa_v4 a00 = zero, a01 = zero, a02 = zero, a10 = zero, a11 = zero, a12 = zero;
            rkpa_v4 a20 = zero, a21 = zero, a22 = zero, a30 = zero, a31 = zero, a32 = zero;
            for (j = 0; j < n_in; j++) {
                const double *p = A + j * m + i;
                const rkpa_v4 p0 = *(const rkpa_v4 *) p, p1 = *(const rkpa_v4 *) (p + 4);
                const rkpa_v4 p2 = *(const rkpa_v4 *) (p + 8);
                { RKPA_MM_BCAST(x0); a00 = a00 + b * p0; a01 = a01 + b * p1; a02 = a02 + b * p2; }
                { RKPA_MM_BCAST(x1); a10 = a10 + b * p0; a11 = a11 + b * p1; a12 = a12 + b * p2; }
                { RKPA_MM_BCAST(x2); a20 = a20 + b * p0; a21 = a21 + b * p1; a22 = a22 + b * p2; }
                { RKPA_MM_BCAST(x3); a30 = a30 + b * p0; a31 = a31 + b * p1; a32 = a32 + b * p2; }
            }
            memcpy(o0 + i, &a00, 32); memcpy(o0 + i + 4, &a01, 32); memcpy(o0 + i + 8, &a02, 32);
            memcpy(o1 + i, &a10, 32); memcpy(o1 + i + 4, &a11, 32); memcpy(o1 + i + 8, &a12, 32);
            memcpy(o2 + i, &a20, 32); memcpy(o2 + i + 4, &a21, 32); memcpy(o2 + i + 8, &a22, 32);
            memcpy(o3 + i, &a30, 32); memcpy(o3 + i + 4, &a31, 32); memcpy(o3 + i + 8, &a32, 32);
        }
        RKPA_TAIL(matmat_tail4)(A, n_in, m, xs + r, o0, m4);
    }
    /* the outputs m12 .. m4 of the rows above */
    for (r = 0; r + 8 <= n4; r += 8) {
        const double *const *x = xs + r;
        for (i = m12; i < m4; i += 4) {
            rkpa_v4 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            rkpa_v4 a4 = zero, a5 = zero, a6 = zero, a7 = zero;
            for (j = 0; j < n_in; j++) {
                const rkpa_v4 p0 = *(const rkpa_v4 *) (A + j * m + i);
                { RKPA_MM_BCAST(x[0]); a0 = a0 + b * p0; }
                { RKPA_MM_BCAST(x[1]); a1 = a1 + b * p0; }
                { RKPA_MM_BCAST(x[2]); a2 = a2 + b * p0; }
                { RKPA_MM_BCAST(x[3]); a3 = a3 + b * p0; }
                { RKPA_MM_BCAST(x[4]); a4 = a4 + b * p0; }
                { RKPA_MM_BCAST(x[5]); a5 = a5 + b * p0; }
                { RKPA_MM_BCAST(x[6]); a6 = a6 + b * p0; }
                { RKPA_MM_BCAST(x[7]); a7 = a7 + b * p0; }
            }
            double *o = out + r * m + i;
            memcpy(o, &a0, 32); memcpy(o + m, &a1, 32);
            memcpy(o + 2 * m, &a2, 32); memcpy(o + 3 * m, &a3, 32);
            memcpy(o + 4 * m, &a4, 32); memcpy(o + 5 * m, &a5, 32);
            memcpy(o + 6 * m, &a6, 32); memcpy(o + 7 * m, &a7, 32);
        }
    }
    for (; r < n4; r += 4) {
        const double *REFSVM_RESTRICT x0 = xs[r], *REFSVM_RESTRICT x1 = xs[r + 1];
        const double *REFSVM_RESTRICT x2 = xs[r + 2], *REFSVM_RESTRICT x3 = xs[r + 3];
        double *o0 = out + r * m, *o1 = o0 + m, *o2 = o1 + m, *o3 = o2 + m;
        for (i = m12; i < m4; i += 4) {
            rkpa_v4 a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            for (j = 0; j < n_in; j++) {
                const rkpa_v4 p0 = *(const rkpa_v4 *) (A + j * m + i);
                { RKPA_MM_BCAST(x0); a0 = a0 + b * p0; }
                { RKPA_MM_BCAST(x1); a1 = a1 + b * p0; }
                { RKPA_MM_BCAST(x2); a2 = a2 + b * p0; }
                { RKPA_MM_BCAST(x3); a3 = a3 + b * p0; }
            }
            memcpy(o0 + i, &a0, 32);
            memcpy(o1 + i, &a1, 32);
            memcpy(o2 + i, &a2, 32);
            memcpy(o3 + i, &a3, 32);
        }
    }
#endif
    for (; r < n_rows; r++) REFSVM_VEC(matvec)(A, n_in, m, xs[r], out + r * m);
}
#undef RKPA_MM_BCAST

#ifndef RKPA_WIDE
/* (not in the x86-64-v4 bodies: these run their v3 bodies there) */

/* (sum_i v[i] k[i], sum_i k[i]^2) in four lanes: the screen's numbers (any order of
   summation will do there) */
static REFSVM_VEC_ATTR void REFSVM_VEC(dot_and_sqnorm)(const double *REFSVM_RESTRICT v, const double *REFSVM_RESTRICT k,
                                 Py_ssize_t m, double *dot, double *sq) {
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    Py_ssize_t i = 0;
    for (; i + 4 <= m; i += 4) {
        d0 += v[i] * k[i]; d1 += v[i + 1] * k[i + 1];
        d2 += v[i + 2] * k[i + 2]; d3 += v[i + 3] * k[i + 3];
        s0 += k[i] * k[i]; s1 += k[i + 1] * k[i + 1];
        s2 += k[i + 2] * k[i + 2]; s3 += k[i + 3] * k[i + 3];
    }
    for (; i < m; i++) { d0 += v[i] * k[i]; s0 += k[i] * k[i]; }
    *dot = (d0 + d1) + (d2 + d3);
    *sq = (s0 + s1) + (s2 + s3);
}

/* (sum_i z[i] phi[i], sum_i |z[i] phi[i]|) in four lanes: the passive test's first try
   (refsvm_rkpa.h) */
static REFSVM_VEC_ATTR void REFSVM_VEC(dot_abs)(const double *REFSVM_RESTRICT z, const double *REFSVM_RESTRICT phi,
                          Py_ssize_t m, double *dot, double *abs_sum) {
    double d[4] = {0.0, 0.0, 0.0, 0.0}, a[4] = {0.0, 0.0, 0.0, 0.0};
    Py_ssize_t i = 0;
#if REFSVM_GNUC
    const rkpa_m4 magnitude = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    rkpa_v4 dv = {0.0, 0.0, 0.0, 0.0}, av = dv;
    for (; i + 4 <= m; i += 4) {
        const rkpa_v4 t = *(const rkpa_v4 *) (z + i) * *(const rkpa_v4 *) (phi + i);
        dv = dv + t;
        av = av + (rkpa_v4) ((rkpa_m4) t & magnitude);
    }
    memcpy(d, &dv, 32);
    memcpy(a, &av, 32);
#endif
    for (; i < m; i++) {
        const double t = z[i] * phi[i];
        d[0] += t;
        a[0] += fabs(t);
    }
    *dot = (d[0] + d[1]) + (d[2] + d[3]);
    *abs_sum = (a[0] + a[1]) + (a[2] + a[3]);
}

/* out[i] = sum_nz AT[xi m + i] xv (a CSR row) */
static REFSVM_VEC_ATTR void REFSVM_VEC(dots_csr)(const double *REFSVM_RESTRICT AT, Py_ssize_t m, const int *xi,
                           const double *REFSVM_RESTRICT xv, Py_ssize_t nnz,
                           double *REFSVM_RESTRICT out) {
    for (Py_ssize_t i = 0; i < m; i++) out[i] = 0.0;
    for (Py_ssize_t q = 0; q < nnz; q++) {
        const double v = xv[q];
        const double *REFSVM_RESTRICT a = AT + (Py_ssize_t) xi[q] * m;
        for (Py_ssize_t i = 0; i < m; i++) out[i] += a[i] * v;
    }
}

/* S (row-major upper triangle) += sum_j w_j d_j d_j^T for the p rows d_j of D (m
   each), entry by entry in the order of j: S_ab <- S_ab + (w_j d_ja) d_jb (Welford's
   updates of a class scatter, deferred).  Every entry gets the same operations in the
   same order however the terms are cut into calls.  Rows of 32 entries stay in eight
   registers while the p terms pass (wa: p doubles of scratch). */
static REFSVM_VEC_ATTR void REFSVM_VEC(syr_batch)(double *REFSVM_RESTRICT S, Py_ssize_t m, const double *REFSVM_RESTRICT D,
                            const double *REFSVM_RESTRICT W, Py_ssize_t p,
                            double *REFSVM_RESTRICT wa) {
    Py_ssize_t a, b, j;
    for (a = 0; a < m; a++) {
        double *REFSVM_RESTRICT row = S + a * m;
        for (j = 0; j < p; j++) wa[j] = W[j] * D[j * m + a];
        b = a;
#if REFSVM_GNUC
        for (; b + 32 <= m; b += 32) {
            rkpa_v4 s[8];
            Py_ssize_t q;
            for (q = 0; q < 8; q++) memcpy(&s[q], row + b + 4 * q, 32);
            for (j = 0; j < p; j++) {
                const rkpa_v4 wj = {wa[j], wa[j], wa[j], wa[j]};
                const double *REFSVM_RESTRICT dj = D + j * m + b;
                for (q = 0; q < 8; q++) s[q] = s[q] + wj * *(const rkpa_v4 *) (dj + 4 * q);
            }
            for (q = 0; q < 8; q++) memcpy(row + b + 4 * q, &s[q], 32);
        }
        for (; b + 4 <= m; b += 4) {
            rkpa_v4 s0;
            memcpy(&s0, row + b, 32);
            for (j = 0; j < p; j++) {
                const rkpa_v4 wj = {wa[j], wa[j], wa[j], wa[j]};
                s0 = s0 + wj * *(const rkpa_v4 *) (D + j * m + b);
            }
            memcpy(row + b, &s0, 32);
        }
#endif
        /* (term after term over the last entries: a loop summing the terms into one
           entry would be vectorised as an in-order reduction, products rounded apart
           from their sums, and the result would depend on p) */
        const Py_ssize_t tail = b;
        for (j = 0; j < p; j++)
            for (b = tail; b < m; b++) row[b] = row[b] + wa[j] * D[j * m + b];
    }
}

/* The factor of the full covariance is kept as L D L^T, L unit lower triangular and D
   diagonal, in U (row-major upper: U_kk = D_k, U_ki = L_ik for i > k; row k of U is
   column k of L).  refsvm_rkpa_ldl_update_batch: L D L^T <- L D L^T + sum_j alpha_j x_j x_j^T
   for the p rows x_j of X, one rank-one update after the other (Bennett's; Gill,
   Golub, Murray, Saunders 1974, method C1: positive updates, nothing subtracted from
   D), carrying t = 1/alpha: column k for one x, with p = x_k:
       q = p / D_k, t' = t + p q, D_k <- D_k (t'/t), beta = q / t';
       below it x_i <- x_i - p L_ik, then L_ik <- L_ik + beta x_i (the new x_i)
   (the reference's ldl_rank_one_update).  Two fused multiply-adds per entry and no
   square root; the chain from one column to the next is one multiply-add (x_k+1).
   In blocks of REFSVM_RKPA_NB columns: first each x_j in turn on the block's diagonal
   triangle (pb: p and beta of each of its columns and x_j), then the block's rows
   to the right of it, eight or four columns at a time, kept in registers while every
   x_j passes, so that U is read and written once per call, not once per x_j.  Every
   entry gets the same operations in the same order as by p calls with one x each:
   the result does not depend on how the updates are batched.  X (overwritten): p
   rows of m; T (overwritten): t_j = 1/alpha_j; pb: 4 REFSVM_RKPA_NB p doubles. */
static REFSVM_RKPA_INLINE REFSVM_VEC_ATTR void REFSVM_VEC(ldl_diag)(double *REFSVM_RESTRICT U, Py_ssize_t m, double *REFSVM_RESTRICT X, double *REFSVM_RESTRICT T,
               Py_ssize_t p, double *REFSVM_RESTRICT pb, Py_ssize_t k0, Py_ssize_t kb) {
    Py_ssize_t j, kk, k, i;
    for (j = 0; j < p; j++) {
        double *REFSVM_RESTRICT x = X + j * m;
        double *REFSVM_RESTRICT cs = pb + 2 * REFSVM_RKPA_NB * j;
        double t = T[j];
        for (kk = 0; kk < kb; kk++) {
            k = k0 + kk;
            double *REFSVM_RESTRICT r = U + k * m;
            const double pk = x[k], dk = r[k];
            const double q = pk / dk;
            const double tn = t + pk * q;
            const double beta = q / tn;
            r[k] = dk * (tn / t);
            t = tn;
            cs[2 * kk] = pk;
            cs[2 * kk + 1] = beta;
            for (i = k + 1; i < k0 + kb; i++) {
                const double xi = x[i] - pk * r[i];
                r[i] = r[i] + beta * xi;
                x[i] = xi;
            }
        }
        T[j] = t;
    }
}

static REFSVM_RKPA_INLINE REFSVM_VEC_ATTR void REFSVM_VEC(ldl_right)(double *REFSVM_RESTRICT U, Py_ssize_t m, double *REFSVM_RESTRICT X, Py_ssize_t p,
                const double *REFSVM_RESTRICT pb, Py_ssize_t k0, Py_ssize_t kb, Py_ssize_t lo,
                Py_ssize_t hi) {
    Py_ssize_t i = lo, j, kk;
#if REFSVM_GNUC
    if (kb == REFSVM_RKPA_NB) {
        double *REFSVM_RESTRICT r0 = U + k0 * m, *REFSVM_RESTRICT r1 = r0 + m, *REFSVM_RESTRICT r2 = r1 + m,
               *REFSVM_RESTRICT r3 = r2 + m;
        for (; i + 8 <= hi; i += 8) {
            rkpa_v4 u0, u1, u2, u3, w0, w1, w2, w3;
            memcpy(&u0, r0 + i, 32); memcpy(&u1, r1 + i, 32);
            memcpy(&u2, r2 + i, 32); memcpy(&u3, r3 + i, 32);
            memcpy(&w0, r0 + i + 4, 32); memcpy(&w1, r1 + i + 4, 32);
            memcpy(&w2, r2 + i + 4, 32); memcpy(&w3, r3 + i + 4, 32);
            for (j = 0; j < p; j++) {
                const double *REFSVM_RESTRICT cs = pb + 2 * REFSVM_RKPA_NB * j;
                double *REFSVM_RESTRICT x = X + j * m + i;
                rkpa_v4 xv, yv;
                memcpy(&xv, x, 32); memcpy(&yv, x + 4, 32);
                RKPA_LDL4(u0, xv, 0); RKPA_LDL4(w0, yv, 0);
                RKPA_LDL4(u1, xv, 1); RKPA_LDL4(w1, yv, 1);
                RKPA_LDL4(u2, xv, 2); RKPA_LDL4(w2, yv, 2);
                RKPA_LDL4(u3, xv, 3); RKPA_LDL4(w3, yv, 3);
                memcpy(x, &xv, 32); memcpy(x + 4, &yv, 32);
            }
            memcpy(r0 + i, &u0, 32); memcpy(r1 + i, &u1, 32);
            memcpy(r2 + i, &u2, 32); memcpy(r3 + i, &u3, 32);
            memcpy(r0 + i + 4, &w0, 32); memcpy(r1 + i + 4, &w1, 32);
            memcpy(r2 + i + 4, &w2, 32); memcpy(r3 + i + 4, &w3, 32);
        }
        for (; i + 4 <= hi; i += 4) {
            rkpa_v4 u0, u1, u2, u3;
            memcpy(&u0, r0 + i, 32); memcpy(&u1, r1 + i, 32);
            memcpy(&u2, r2 + i, 32); memcpy(&u3, r3 + i, 32);
            for (j = 0; j < p; j++) {
                const double *REFSVM_RESTRICT cs = pb + 2 * REFSVM_RKPA_NB * j;
                double *REFSVM_RESTRICT x = X + j * m + i;
                rkpa_v4 xv;
                memcpy(&xv, x, 32);
                RKPA_LDL4(u0, xv, 0); RKPA_LDL4(u1, xv, 1);
                RKPA_LDL4(u2, xv, 2); RKPA_LDL4(u3, xv, 3);
                memcpy(x, &xv, 32);
            }
            memcpy(r0 + i, &u0, 32); memcpy(r1 + i, &u1, 32);
            memcpy(r2 + i, &u2, 32); memcpy(r3 + i, &u3, 32);
        }
    }
#endif
    for (; i < hi; i++) {
        for (j = 0; j < p; j++) {
            const double *REFSVM_RESTRICT cs = pb + 2 * REFSVM_RKPA_NB * j;
            double xi = X[j * m + i];
            for (kk = 0; kk < kb; kk++) {
                double *REFSVM_RESTRICT u = U + (k0 + kk) * m + i;
                xi = xi - cs[2 * kk] * *u;
                *u = *u + cs[2 * kk + 1] * xi;
            }
            X[j * m + i] = xi;
        }
    }
}

/* (software-pipelined: the rows of block b right of block b + 1 are updated after
   block b + 1's diagonal triangle, whose chain of divisions they then overlap) */
static REFSVM_VEC_ATTR void REFSVM_VEC(ldl_update_batch)(double *REFSVM_RESTRICT U, Py_ssize_t m, double *REFSVM_RESTRICT X,
                                   double *REFSVM_RESTRICT T, Py_ssize_t p,
                                   double *REFSVM_RESTRICT pb) {
    Py_ssize_t k0, k1, kb, kb1;
    double *cur = pb, *nxt = pb + 2 * REFSVM_RKPA_NB * p, *tmp;
    if (m == 0 || p == 0) return;
    kb = m < REFSVM_RKPA_NB ? m : REFSVM_RKPA_NB;
    REFSVM_VEC(ldl_diag)(U, m, X, T, p, cur, 0, kb);
    for (k0 = 0; k0 + kb < m; k0 = k1) {
        k1 = k0 + kb;
        kb1 = m - k1 < REFSVM_RKPA_NB ? m - k1 : REFSVM_RKPA_NB;
        REFSVM_VEC(ldl_right)(U, m, X, p, cur, k0, kb, k1, k1 + kb1);
        REFSVM_VEC(ldl_diag)(U, m, X, T, p, nxt, k1, kb1);
        REFSVM_VEC(ldl_right)(U, m, X, p, cur, k0, kb, k1 + kb1, m);
        tmp = cur; cur = nxt; nxt = tmp;
        kb = kb1;
    }
}

/* b <- (L D L^T)^{-1} b for U as above: L y = b by columns of L (rows of U,
   contiguous axpys), y <- y / D, then L^T u = y by rows (dot products in vector
   lanes: a fixed order, not a chain of m dependent additions); two rows at a time, so
   that the chain from one row to the next is short. */
static REFSVM_VEC_ATTR void REFSVM_VEC(ldl_solve)(const double *REFSVM_RESTRICT U, Py_ssize_t m, double *REFSVM_RESTRICT b) {
    Py_ssize_t k, i;
    for (k = 0; k + 1 < m; k += 2) {
        const double *REFSVM_RESTRICT r0 = U + k * m, *REFSVM_RESTRICT r1 = r0 + m;
        const double b0 = b[k];
        const double b1 = b[k + 1] - b0 * r0[k + 1];
        b[k + 1] = b1;
        for (i = k + 2; i < m; i++) b[i] = (b[i] - b0 * r0[i]) - b1 * r1[i];
    }
    for (k = 0; k < m; k++) b[k] = b[k] / U[k * m + k];
#if REFSVM_GNUC
    const rkpa_v4 zero = {0.0, 0.0, 0.0, 0.0};
#endif
    for (k = m - 1; k >= 1; k -= 2) {
        const double *REFSVM_RESTRICT r0 = U + k * m, *REFSVM_RESTRICT r1 = r0 - m;  /* rows k, k-1 */
#if REFSVM_GNUC
        rkpa_v4 a0 = zero, a1 = zero, c0 = zero, c1 = zero;
        for (i = k + 1; i + 8 <= m; i += 8) {
            const rkpa_v4 u0 = *(const rkpa_v4 *) (b + i), u1 = *(const rkpa_v4 *) (b + i + 4);
            a0 = a0 + *(const rkpa_v4 *) (r0 + i) * u0;
            a1 = a1 + *(const rkpa_v4 *) (r0 + i + 4) * u1;
            c0 = c0 + *(const rkpa_v4 *) (r1 + i) * u0;
            c1 = c1 + *(const rkpa_v4 *) (r1 + i + 4) * u1;
        }
        a0 = a0 + a1;
        c0 = c0 + c1;
#else
        /* the four lanes of the vector form, one array entry each */
        double a0[4] = {0.0, 0.0, 0.0, 0.0}, a1[4] = {0.0, 0.0, 0.0, 0.0};
        double c0[4] = {0.0, 0.0, 0.0, 0.0}, c1[4] = {0.0, 0.0, 0.0, 0.0};
        int q;
        for (i = k + 1; i + 8 <= m; i += 8) {
            for (q = 0; q < 4; q++) {
                a0[q] = a0[q] + r0[i + q] * b[i + q];
                a1[q] = a1[q] + r0[i + 4 + q] * b[i + 4 + q];
                c0[q] = c0[q] + r1[i + q] * b[i + q];
                c1[q] = c1[q] + r1[i + 4 + q] * b[i + 4 + q];
            }
        }
        for (q = 0; q < 4; q++) {
            a0[q] = a0[q] + a1[q];
            c0[q] = c0[q] + c1[q];
        }
#endif
        double t0 = (a0[0] + a0[1]) + (a0[2] + a0[3]);
        double t1 = (c0[0] + c0[1]) + (c0[2] + c0[3]);
        for (; i < m; i++) {
            t0 += r0[i] * b[i];
            t1 += r1[i] * b[i];
        }
        const double uk = b[k] - t0;
        b[k] = uk;
        b[k - 1] = (b[k - 1] - t1) - r1[k] * uk;
    }
    if (k == 0) {
        double t = 0.0;
        for (i = 1; i < m; i++) t += U[i] * b[i];
        b[0] = b[0] - t;
    }
}

#endif /* !RKPA_WIDE */

/* out[i] = -gamma * max(xn + an[i] - 2 out[i], 0): RBF exponent from cross products */
static REFSVM_VEC_ATTR void REFSVM_VEC(expanded)(const double *REFSVM_RESTRICT an, Py_ssize_t m, double xn,
                           double gamma, double *REFSVM_RESTRICT out) {
    for (Py_ssize_t i = 0; i < m; i++) {
        double s = (xn + an[i]) - 2.0 * out[i];
        out[i] = -gamma * (s > 0.0 ? s : 0.0);
    }
}
