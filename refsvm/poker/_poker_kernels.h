/* The O(n |I_s|) sensitivity product of POKER's compiled breakpoint loop.
 *
 * out[i] = sum_j cols[j][i] v[j] for i < n, every sum from 0 and left to right over j
 * (the reference's refsvm.core.bordered.matvec), four columns per pass over out.  The
 * same C body is compiled twice: for the baseline target and, on x86-64 with GCC or
 * Clang, for AVX2 (chosen at run time).  AVX2 without FMA keeps every product and sum
 * rounded separately, in the same order: both give the same bits.
 */
#ifndef REFSVM_POKER_KERNELS_H
#define REFSVM_POKER_KERNELS_H
#include <stddef.h>

#define POKER_MATVEC_BODY                                                              \
    ptrdiff_t i, j = 0;                                                                 \
    for (i = 0; i < n; i++) out[i] = 0.0;                                               \
    while (j + 4 <= k) {                                                                \
        const double a0 = v[j], a1 = v[j + 1], a2 = v[j + 2], a3 = v[j + 3];            \
        const double *c0 = cols[j], *c1 = cols[j + 1], *c2 = cols[j + 2],               \
                     *c3 = cols[j + 3];                                                 \
        for (i = 0; i < n; i++)                                                         \
            out[i] = (((out[i] + a0 * c0[i]) + a1 * c1[i]) + a2 * c2[i]) + a3 * c3[i];  \
        j += 4;                                                                         \
    }                                                                                   \
    while (j < k) {                                                                     \
        const double a0 = v[j];                                                         \
        const double *c0 = cols[j];                                                     \
        for (i = 0; i < n; i++) out[i] = out[i] + a0 * c0[i];                           \
        j += 1;                                                                         \
    }

static void poker_matvec_base(double *out, double *const *cols, const double *v,
                              ptrdiff_t k, ptrdiff_t n) { POKER_MATVEC_BODY }

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
__attribute__((target("avx2")))
static void poker_matvec_avx2(double *out, double *const *cols, const double *v,
                              ptrdiff_t k, ptrdiff_t n) { POKER_MATVEC_BODY }

static int poker_use_avx2 = -1;

static void poker_matvec(double *out, double *const *cols, const double *v, ptrdiff_t k,
                         ptrdiff_t n) {
    if (poker_use_avx2 < 0) {
        __builtin_cpu_init();
        poker_use_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    if (poker_use_avx2)
        poker_matvec_avx2(out, cols, v, k, n);
    else
        poker_matvec_base(out, cols, v, k, n);
}
#else
static void poker_matvec(double *out, double *const *cols, const double *v, ptrdiff_t k,
                         ptrdiff_t n) {
    poker_matvec_base(out, cols, v, k, n);
}
#endif

#endif
