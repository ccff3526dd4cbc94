/* The hand-written C of the OnlineSVMR twin (refsvm/ramp/_online_svmr.pyx, declared in
   refsvm/_clib.pxd): Eq. (15) fused with the Eq. (3) filter of step 11 (refsvm_ramp.c),
   the scalar rules of steps 11-14 (inline, below) and a prefetch hint. */
#ifndef REFSVM_RAMP_H
#define REFSVM_RAMP_H

#include <math.h>
#include "refsvm_cpu.h"

/* The scalar rules of steps 11-14, one definition for every loop of the twin
   (_online_svmr.pyx declares them as eq14, eq13_gain and cannot_win): the reference's
   operations, in its order. */

/* 1/2 (1 + 1e-12): the bound g^2 / (2 Q) of an Eq. (13) gain with a relative margin far
   above the few ulps by which the computed gain of the clipped step can exceed it */
#define REFSVM_RAMP_GAIN_BOUND_HALF (0.5 * (1.0 + 1e-12))

/* Eq. (14): clip(alpha + g / Q_ii, 0, C). */
static REFSVM_INLINE double refsvm_ramp_eq14(double alpha, double g, double q, double C) {
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
static REFSVM_INLINE double refsvm_ramp_eq13_gain(double g, double q, double d) {
    return g * d - 0.5 * q * d * d;
}

/* Step 11: no step of Eq. (14) gains more than g^2 / (2 Q) (the unclipped Newton step;
   clipping only loses), so a violator whose bound, with a margin far above round-off, is
   not above the best gain so far bg cannot win (a win needs gain > bg): skipped without
   its division. */
static REFSVM_INLINE int refsvm_ramp_cannot_win(double g, double q, double bg) {
    return bg > 0.0 && g * g * REFSVM_RAMP_GAIN_BOUND_HALF <= q * bg;
}

/* The scan's rule: j (gain of Eq. 13 gain) is kept when it is the first of the largest
   gain (*best < 0: none yet). */
static REFSVM_INLINE void refsvm_ramp_keep(Py_ssize_t j, double gain, Py_ssize_t* best,
                                           double* bg) {
    if (*best < 0 || gain > *bg) {
        *best = j;
        *bg = gain;
    }
}

/* Step 11 on one violator j of the working set (rank j, g value gk, Q_jj q, alpha a): the
   twin's scan; keeps j when it is the first of the largest gain (*best < 0: none yet). */
static REFSVM_INLINE void refsvm_ramp_pick(Py_ssize_t j, double gk, double q, double a, double C,
                                    Py_ssize_t* best, double* bg) {
    if (refsvm_ramp_cannot_win(gk, q, *bg))
        return;
    refsvm_ramp_keep(j, refsvm_ramp_eq13_gain(gk, q, refsvm_ramp_eq14(a, gk, q, C) - a), best,
                     bg);
}

/* refsvm_ramp_pick with the gain of j already computed (by the same operations) */
static REFSVM_INLINE void refsvm_ramp_pick_gain(Py_ssize_t j, double gk, double q, double gain,
                                                Py_ssize_t* best, double* bg) {
    if (!refsvm_ramp_cannot_win(gk, q, *bg))
        refsvm_ramp_keep(j, gain, best, bg);
}

/* a hint that *p is read soon (nothing where the compiler has no such hint) */
static REFSVM_INLINE void refsvm_ramp_prefetch(const void* p) {
#if REFSVM_GNUC
    __builtin_prefetch(p);
#else
    (void) p;
#endif
}

/* Steps 11-14 of Algorithm 1 (Wang & Vucetic): Eq. (15) on every position of I, fused
   with a branch-free filter for Eq. (3).  srow is a signed kernel row, srow[k] = y_k
   k(x_p, x_k) with y_k = +-1 (see OnlineSVMR.krow), so g[k] = g[k] - c * srow[k] is bit
   for bit the reference's g[k] - (c * y_k) * k(x_p, x_k).  The positions k with
   g[k] > ut[k] or g[k] < lt[k] (the violators, see OnlineSVMR.ut) are written to cand in
   increasing order (cand must hold n entries); returns their number.  SSE2 (baseline on
   x86-64) two positions at a time, AVX2 four, a plain loop elsewhere: the same IEEE
   operations in every case. */
REFSVM_API Py_ssize_t refsvm_ramp_eq15(double* g, const double* srow, const double* ut,
                                       const double* lt, double c, Py_ssize_t n,
                                       Py_ssize_t* cand);
/* Steps 11-14 in a shrinking round of the twin (OnlineSVMR._optimize_shrunk): Eq. (15) on
   the working set A in rank order with the moved coordinate's full signed row read
   through the positions of A, g[j] -= c * row[A[j]], fused with step 11: the violators
   of Eq. (3) in increasing rank, each passed to refsvm_ramp_pick (qa the Q_jj of A by
   rank, alpha read at A[j]).  AVX-512F eight positions at a time, AVX2 four, a plain loop
   elsewhere: the same IEEE operations and the same choice in every case. */
REFSVM_API void refsvm_ramp_eq15_pick_idx(double* g, const double* row, const Py_ssize_t* A,
                                          const double* ut, const double* lt,
                                          const double* qa, const double* alpha, double c,
                                          double C, Py_ssize_t n, Py_ssize_t* best,
                                          double* bg);
/* Step 10 of a shrinking round of the twin (OnlineSVMR._optimize_shrunk): the working set
   A of V (in_v[p] set) without the examples shrunk by the margin theta (alpha_p = 0 with
   g_p < -theta, alpha_p = C with g_p > theta), in increasing p: A[j] = p, rank[p] = j and
   the copies ga, uta, lta, qa of g, ut, lt, qdiag at rank j; fused with the scan of step
   11 over A (OnlineSVMR._consider: the violators of Eq. (3) with tolerance tol, each
   passed to refsvm_ramp_keep with its gain, in increasing p).  Returns the size of A and
   sets nv to the size of V.  A, ga, uta, lta, qa must hold n entries.  AVX-512F eight
   positions at a time, a plain loop elsewhere: the same operations and the same choice. */
typedef struct {
    /* read: the n positions of I */
    const char* in_v;
    const double* alpha;
    const double* g;
    const double* ut;
    const double* lt;
    const double* qdiag;
    double C, theta, tol;
    Py_ssize_t n;
    /* written: the set A (n entries each) */
    Py_ssize_t* A;
    Py_ssize_t* rank;
    double* ga;
    double* uta;
    double* lta;
    double* qa;
    /* out: the size of V; in and out: refsvm_ramp_keep's best violator and its gain */
    Py_ssize_t nv, best;
    double bg;
} refsvm_ramp_ws;
REFSVM_API Py_ssize_t refsvm_ramp_working_set(refsvm_ramp_ws* w);
/* Eq. (15) on every position for nr (1 to 4) signed rows at once, the end of a shrinking
   round: g[k] -= c[0] * rows[0][k], then c[1] * rows[1][k], ... in that order for every
   k -- the same operations in the same order for every value as one pass per row. */
REFSVM_API void refsvm_ramp_eq15_rows(double* g, const double* const* rows, const double* c,
                                      int nr, Py_ssize_t n);
/* Which loops the passes above take (a test hook, OnlineSVMR's _simd_level): 2 the
   AVX-512F loops (refsvm_ramp_eq15_pick_idx, refsvm_ramp_working_set) and the AVX2 loops of
   the others, 1 the AVX2 loops, 0 the SSE2 / plain ones, each as far as the CPU has them.
   _set caps the level (2: what the CPU has, the default); _get is the level in force. */
REFSVM_API int refsvm_ramp_simd_get(void);
REFSVM_API void refsvm_ramp_simd_set(int level);

#endif /* REFSVM_RAMP_H */
