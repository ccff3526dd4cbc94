/* The bodies of refsvm_rows.c that are compiled twice: for the baseline and, on x86-64
   with GCC or Clang, for AVX2 without FMA (every product and sum rounded as in the
   baseline body, so the same bits).  Included by refsvm_rows.c with REFSVM_VEC(name)
   naming the body and REFSVM_VEC_ATTR its attributes; no include guard. */

static REFSVM_VEC_ATTR double REFSVM_VEC(dense_dot_sqnorm)(const double* w, const double* x,
                                                           Py_ssize_t n, double* sq) {
    double s0, s1, s2, s3, q0, q1, q2, q3;
    Py_ssize_t p = 0;
#if REFSVM_GNUC
    refsvm_v4d s = {0.0, 0.0, 0.0, 0.0}, q = {0.0, 0.0, 0.0, 0.0}, v, u;
    for (; p + 4 <= n; p += 4) {
        memcpy(&v, x + p, sizeof v);
        memcpy(&u, w + p, sizeof u);
        s += v * u;
        q += v * v;
    }
    s0 = s[0]; s1 = s[1]; s2 = s[2]; s3 = s[3];
    q0 = q[0]; q1 = q[1]; q2 = q[2]; q3 = q[3];
#else
    s0 = s1 = s2 = s3 = q0 = q1 = q2 = q3 = 0.0;
    for (; p + 4 <= n; p += 4) {
        s0 += x[p] * w[p]; s1 += x[p + 1] * w[p + 1];
        s2 += x[p + 2] * w[p + 2]; s3 += x[p + 3] * w[p + 3];
        q0 += x[p] * x[p]; q1 += x[p + 1] * x[p + 1];
        q2 += x[p + 2] * x[p + 2]; q3 += x[p + 3] * x[p + 3];
    }
#endif
    for (; p < n; p++) {
        s0 += x[p] * w[p];
        q0 += x[p] * x[p];
    }
    *sq = (q0 + q1) + (q2 + q3);
    return (s0 + s1) + (s2 + s3);
}

static REFSVM_VEC_ATTR double REFSVM_VEC(dense_dot)(const double* w, const double* x,
                                                    Py_ssize_t n) {
    double s0, s1, s2, s3;
    Py_ssize_t p = 0;
#if REFSVM_GNUC
    refsvm_v4d s = {0.0, 0.0, 0.0, 0.0}, v, u;
    for (; p + 4 <= n; p += 4) {
        memcpy(&v, x + p, sizeof v);
        memcpy(&u, w + p, sizeof u);
        s += v * u;
    }
    s0 = s[0]; s1 = s[1]; s2 = s[2]; s3 = s[3];
#else
    s0 = s1 = s2 = s3 = 0.0;
    for (; p + 4 <= n; p += 4) {
        s0 += x[p] * w[p]; s1 += x[p + 1] * w[p + 1];
        s2 += x[p + 2] * w[p + 2]; s3 += x[p + 3] * w[p + 3];
    }
#endif
    for (; p < n; p++)
        s0 += x[p] * w[p];
    return (s0 + s1) + (s2 + s3);
}

static REFSVM_VEC_ATTR void REFSVM_VEC(cols_matvec)(double* out, double* const* cols,
                                                    const double* v, Py_ssize_t k,
                                                    Py_ssize_t n, int back) {
    Py_ssize_t i, j, bb, lo, hi, BLK = refsvm_sweep_block(n, k), nb = (n + BLK - 1) / BLK;
    for (bb = 0; bb < nb; bb++) {
        lo = (back ? nb - 1 - bb : bb) * BLK;
        hi = lo + BLK < n ? lo + BLK : n;
        for (i = lo; i < hi; i++) out[i] = 0.0;
        j = 0;
        while (j + 8 <= k) {
            const double a0 = v[j], a1 = v[j + 1], a2 = v[j + 2], a3 = v[j + 3],
                         a4 = v[j + 4], a5 = v[j + 5], a6 = v[j + 6], a7 = v[j + 7];
            const double *c0 = cols[j], *c1 = cols[j + 1], *c2 = cols[j + 2],
                         *c3 = cols[j + 3], *c4 = cols[j + 4], *c5 = cols[j + 5],
                         *c6 = cols[j + 6], *c7 = cols[j + 7];
            for (i = lo; i < hi; i++)
                out[i] = (((((((out[i] + a0 * c0[i]) + a1 * c1[i]) + a2 * c2[i])
                         + a3 * c3[i]) + a4 * c4[i]) + a5 * c5[i]) + a6 * c6[i])
                         + a7 * c7[i];
            j += 8;
        }
        while (j + 4 <= k) {
            const double a0 = v[j], a1 = v[j + 1], a2 = v[j + 2], a3 = v[j + 3];
            const double *c0 = cols[j], *c1 = cols[j + 1], *c2 = cols[j + 2],
                         *c3 = cols[j + 3];
            for (i = lo; i < hi; i++)
                out[i] = (((out[i] + a0 * c0[i]) + a1 * c1[i]) + a2 * c2[i]) + a3 * c3[i];
            j += 4;
        }
        while (j < k) {
            const double a0 = v[j];
            const double* c0 = cols[j];
            for (i = lo; i < hi; i++) out[i] = out[i] + a0 * c0[i];
            j += 1;
        }
    }
}

static REFSVM_VEC_ATTR void REFSVM_VEC(axpy)(double* dst, const double* src, double s,
                                             const double* x, Py_ssize_t n) {
    Py_ssize_t i = 0;
#if REFSVM_GNUC
    /* four at a time, each block loaded before it is stored: right for dst <= src (a
       plain loop there makes the compiler's overlap check fall back to scalar code) */
    refsvm_v4d a4, x4, s4 = {s, s, s, s};
    for (; i + 4 <= n; i += 4) {
        memcpy(&a4, src + i, sizeof a4);
        memcpy(&x4, x + i, sizeof x4);
        a4 = a4 + s4 * x4;
        memcpy(dst + i, &a4, sizeof a4);
    }
#endif
    for (; i < n; i++) dst[i] = src[i] + s * x[i];
}

/* written as counts (no branch) so that they vectorise: with SSE2 alone GCC does not
   vectorise the double comparison, and the check would cost a third of a linear step
   instead of a few per cent */
static REFSVM_VEC_ATTR int REFSVM_VEC(values_bad)(const double* v, Py_ssize_t n,
                                                  double limit) {
    Py_ssize_t p;
    long long bad = 0;
    REFSVM_UNROLL4
    for (p = 0; p < n; p++) bad |= !(fabs(v[p]) <= limit);
    return bad != 0;
}

static REFSVM_VEC_ATTR int REFSVM_VEC(indices_bad)(const int* idx, Py_ssize_t n,
                                                   Py_ssize_t d) {
    Py_ssize_t p;
    long long bad = 0;
    /* a negative index is a large unsigned one; d >= 2**31 leaves only those bad */
    unsigned int ud = d > 2147483647 ? 2147483648u : (unsigned int) d;
    REFSVM_UNROLL4
    for (p = 0; p < n; p++) bad |= ((unsigned int) idx[p] >= ud);
    return bad != 0;
}
