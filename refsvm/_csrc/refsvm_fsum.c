/* A correctly rounded sum of doubles and Dekker's error-free products (refsvm_fsum.h).

   Every function here performs its IEEE operations as written: the error-free
   transformations are exact only when a product is rounded before it is added, so
   contraction into fused multiply-adds is off (REFSVM_NO_CONTRACT for GCC, the pragma for
   Clang). */
#include <math.h>

#include "refsvm_fsum.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

REFSVM_API void refsvm_fsum_init(refsvm_fsum_acc* acc) {
    acc->n = 0;
    acc->status = REFSVM_FSUM_OK;
    acc->nonfinite = 0;
    acc->special = 0.0;
    acc->inf = 0.0;
}

/* Grow-Expansion: x is added to the partials from the smallest up.  At each partial y,
   Fast-Two-Sum of the larger and the smaller in magnitude gives the rounded sum hi and
   its exact error lo; a nonzero lo stays as a partial (in place: the new partials never
   outnumber the old ones read so far) and hi goes on up.  The last hi is the new top
   partial. */
REFSVM_API REFSVM_NO_CONTRACT void refsvm_fsum_add(refsvm_fsum_acc* acc, double x) {
    Py_ssize_t i, kept = 0;
    double y, big, small, hi, lo;
    if (acc->status != REFSVM_FSUM_OK)
        return;
    if (!isfinite(x)) {
        /* a NaN or an infinity decides the result: the finite partials go */
        acc->nonfinite = 1;
        acc->special += x;
        if (isinf(x))
            acc->inf += x;
        acc->n = 0;
        return;
    }
    for (i = 0; i < acc->n; i++) {
        y = acc->p[i];
        if (fabs(x) < fabs(y)) {
            big = y;
            small = x;
        } else {
            big = x;
            small = y;
        }
        hi = big + small;
        lo = small - (hi - big);
        if (lo != 0.0)
            acc->p[kept++] = lo;
        x = hi;
    }
    if (!isfinite(x)) {
        acc->status = REFSVM_FSUM_OVERFLOW;
        return;
    }
    acc->n = kept;
    if (x != 0.0) {
        if (kept >= REFSVM_FSUM_MAX) {
            acc->status = REFSVM_FSUM_FULL;
            return;
        }
        acc->p[acc->n++] = x;
    }
}

/* The partials from the top down while their sum stays exact; at the first partial that
   makes it inexact, hi is the sum rounded to nearest and lo its error.  hi is then the
   correctly rounded sum unless lo is exactly half an ulp of hi (a tie, which the addition
   broke to even) and the partials below push the sum past the tie, the way lo points:
   then the neighbour hi + 2 lo, which is exact exactly in that case. */
REFSVM_API REFSVM_NO_CONTRACT double refsvm_fsum_result(const refsvm_fsum_acc* acc,
                                                        int* status) {
    Py_ssize_t i;
    double hi, lo = 0.0, x, y, up;
    *status = acc->status;
    if (acc->status != REFSVM_FSUM_OK)
        return NAN;
    if (acc->nonfinite) {
        if (isnan(acc->inf)) {
            *status = REFSVM_FSUM_INVALID;
            return NAN;
        }
        return acc->special;
    }
    if (acc->n == 0)
        return 0.0;
    i = acc->n - 1;
    hi = acc->p[i];
    while (i > 0) {
        x = hi;
        y = acc->p[--i];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0)
            break;
    }
    if (i > 0 && ((lo < 0.0 && acc->p[i - 1] < 0.0) || (lo > 0.0 && acc->p[i - 1] > 0.0))) {
        y = 2.0 * lo;
        up = hi + y;
        if (up - hi == y)
            hi = up;
    }
    return hi;
}

REFSVM_API int refsvm_fsum(const double* x, Py_ssize_t n, double* out) {
    refsvm_fsum_acc acc;
    Py_ssize_t i;
    int status;
    double s;
    refsvm_fsum_init(&acc);
    for (i = 0; i < n; i++)
        refsvm_fsum_add(&acc, x[i]);
    s = refsvm_fsum_result(&acc, &status);
    if (status == REFSVM_FSUM_OK)
        *out = s;
    return status;
}

REFSVM_API REFSVM_NO_CONTRACT void refsvm_two_product(double a, double b, double* p,
                                                      double* e) {
    double h = a * b, c, ah, al, bh, bl, r;
    c = 134217729.0 * a;                                  /* 2^27 + 1 */
    ah = c - (c - a);
    al = a - ah;
    c = 134217729.0 * b;
    bh = c - (c - b);
    bl = b - bh;
    r = ((ah * bh - h) + ah * bl + al * bh) + al * bl;
    *p = h;
    *e = isfinite(r) ? r : 0.0;
}

/* the terms sign * p_j, then sign * e_j, into acc */
static REFSVM_NO_CONTRACT void add_products(refsvm_fsum_acc* acc, const double* a,
                                            const double* b, Py_ssize_t m, double sign) {
    Py_ssize_t j;
    double p, e;
    for (j = 0; j < m; j++) {
        refsvm_two_product(a[j], b[j], &p, &e);
        refsvm_fsum_add(acc, sign * p);
    }
    for (j = 0; j < m; j++) {
        refsvm_two_product(a[j], b[j], &p, &e);
        refsvm_fsum_add(acc, sign * e);
    }
}

REFSVM_API int refsvm_exact_sum(const double* a, const double* b, Py_ssize_t m, double sign,
                                const double* extra, Py_ssize_t nextra, double* out) {
    refsvm_fsum_acc acc;
    Py_ssize_t i;
    int status;
    double s;
    refsvm_fsum_init(&acc);
    add_products(&acc, a, b, m, sign);
    for (i = 0; i < nextra; i++)
        refsvm_fsum_add(&acc, extra[i]);
    s = refsvm_fsum_result(&acc, &status);
    if (status == REFSVM_FSUM_OK)
        *out = s;
    return status;
}

REFSVM_API REFSVM_NO_CONTRACT int refsvm_g_exact(const double* coef, const double* K,
                                                 Py_ssize_t ldk, Py_ssize_t nrows,
                                                 Py_ssize_t m, const double* y, double b,
                                                 double bias_sign, double* out,
                                                 Py_ssize_t* bad) {
    double extra[2];
    Py_ssize_t r;
    int status;
    for (r = 0; r < nrows; r++) {
        extra[0] = -1.0;
        extra[1] = bias_sign * y[r] * b;
        status = refsvm_exact_sum(coef, K + r * ldk, m, y[r], extra, 2, out + r);
        if (status != REFSVM_FSUM_OK) {
            *bad = r;
            return status;
        }
    }
    return REFSVM_FSUM_OK;
}

REFSVM_API int refsvm_g_exact_fixed(const double* coef, const double* K, Py_ssize_t ldk,
                                    Py_ssize_t nrows, Py_ssize_t m, const double* y,
                                    const double* p, double u, const double* d,
                                    double* out, Py_ssize_t* bad) {
    double extra[3];
    Py_ssize_t r;
    int status;
    for (r = 0; r < nrows; r++) {
        extra[0] = p[r];
        refsvm_two_product(u, d[r], &extra[1], &extra[2]);
        status = refsvm_exact_sum(coef, K + r * ldk, m, y[r], extra, 3, out + r);
        if (status != REFSVM_FSUM_OK) {
            *bad = r;
            return status;
        }
    }
    return REFSVM_FSUM_OK;
}
