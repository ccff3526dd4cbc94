/* A correctly rounded sum of doubles, and the error-free products that feed it: the
   compiled form of ``math.fsum`` and of ``refsvm.core.active_set.exact_sum`` (declared
   for Cython in refsvm/_core.pxd, the polish section).

   The sum keeps Shewchuk's exact partials (J. R. Shewchuk, "Adaptive precision
   floating-point arithmetic and fast robust geometric predicates", 1997: Grow-Expansion
   with Fast-Two-Sum and zero elimination): after every term the partials are
   nonoverlapping, in increasing magnitude, and add up to the terms' sum exactly.  The
   result is their sum rounded once, to nearest with ties to even, taken from the top
   partial down (refsvm_fsum.c).  A correctly rounded result is unique, so on finite terms
   whose partial sums stay finite it is ``math.fsum``'s bit for bit; an exact zero is +0.0
   (as ``math.fsum`` of CPython 3.11).

   Special values, as ``math.fsum``:
   - a NaN or an infinite term: the finite partials so far are dropped, the term is added
     to a plain sum of the non-finite terms, and that plain sum is the result (NaN in, NaN
     out; +inf and -inf both in: REFSVM_FSUM_INVALID, ``math.fsum``'s ValueError);
   - a finite term whose addition to the partials overflows: REFSVM_FSUM_OVERFLOW at once
     (``math.fsum``'s OverflowError "intermediate overflow"), the later terms ignored.
   The caller turns a status into the same Python exception (``fsum_check`` in
   _core.pyx). */
#ifndef REFSVM_FSUM_H
#define REFSVM_FSUM_H

#include "refsvm_common.h"

#define REFSVM_FSUM_OK 0
#define REFSVM_FSUM_INVALID 1    /* +inf and -inf among the terms */
#define REFSVM_FSUM_OVERFLOW 2   /* finite terms whose partial sum overflows */
#define REFSVM_FSUM_FULL 3       /* more partials than room (cannot happen: see below) */

/* Nonoverlapping nonzero partials occupy disjoint ranges of the 2098 bit positions of a
   finite double (2^-1074 .. 2^1023), so there are never more than 2098. */
#define REFSVM_FSUM_MAX 2112

typedef struct {
    Py_ssize_t n;                /* partials in use, p[0] the smallest */
    int status;                  /* REFSVM_FSUM_OK, or the first error (later terms ignored) */
    int nonfinite;               /* a NaN or infinite term was seen */
    double special;              /* the plain sum of the non-finite terms */
    double inf;                  /* the plain sum of the infinite terms (NaN: both signs) */
    double p[REFSVM_FSUM_MAX];
} refsvm_fsum_acc;

/* the accumulator emptied */
REFSVM_API void refsvm_fsum_init(refsvm_fsum_acc* acc);
/* one term added, exactly */
REFSVM_API void refsvm_fsum_add(refsvm_fsum_acc* acc, double x);
/* the sum of the terms added, correctly rounded; *status: REFSVM_FSUM_OK or the error
   (the value returned is then NaN) */
REFSVM_API double refsvm_fsum_result(const refsvm_fsum_acc* acc, int* status);

/* *out = the sum of x[0..n-1], correctly rounded; returns the status */
REFSVM_API int refsvm_fsum(const double* x, Py_ssize_t n, double* out);

/* Dekker's error-free product (split by 2^27 + 1, no fused multiply-add): a * b = *p + *e
   exactly for finite a, b well inside the range; *e is 0 where the split overflowed (the
   reference's ``two_product``, the same operations). */
REFSVM_API void refsvm_two_product(double a, double b, double* p, double* e);

/* *out = sign * sum_j a_j b_j + sum_i extra_i, correctly rounded (the reference's
   ``exact_sum``): the terms sign * p_j (j < m), then sign * e_j (j < m) of the products
   a_j b_j = p_j + e_j, then the extras, in that order (which matters only for the special
   values).  Returns the status; *out is written only when it is REFSVM_FSUM_OK. */
REFSVM_API int refsvm_exact_sum(const double* a, const double* b, Py_ssize_t m, double sign,
                                const double* extra, Py_ssize_t nextra, double* out);

/* g_r = y_r sum_j coef_j K[r, j] + (bias_sign y_r) b - 1, correctly rounded, for the rows
   r < nrows of K (row-major, leading dimension ldk, m columns): ``g_exact`` of
   refsvm.core.exactness, terms [y_r p, y_r e, -1, (bias_sign y_r) b].  Stops at the first
   row whose sum fails (*bad = that row; the rows before are written); returns the
   status. */
REFSVM_API int refsvm_g_exact(const double* coef, const double* K, Py_ssize_t ldk,
                              Py_ssize_t nrows, Py_ssize_t m, const double* y, double b,
                              double bias_sign, double* out, Py_ssize_t* bad);
/* the same on POKER's fixed-bias path: g_r = y_r sum_j coef_j K[r, j] + p_r + u d_r, terms
   [y_r p, y_r e, p_r, hi_r, lo_r] with u d_r = hi_r + lo_r error-free (no bias, no -1) */
REFSVM_API int refsvm_g_exact_fixed(const double* coef, const double* K, Py_ssize_t ldk,
                                    Py_ssize_t nrows, Py_ssize_t m, const double* y,
                                    const double* p, double u, const double* d,
                                    double* out, Py_ssize_t* bad);

#endif /* REFSVM_FSUM_H */
