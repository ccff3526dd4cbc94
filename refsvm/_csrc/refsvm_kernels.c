/* Kernel-row helpers of the compiled core (refsvm_kernels.h). */
#include <stdint.h>
#include "refsvm_kernels.h"

#if REFSVM_X86_GNUC
#include <immintrin.h>

/* Eight rows at a time (AVX-512F): each lane the scalar loop's operations in its order
   (no fused multiply-add), so the same bits; the rows' values put together from scalar
   loads (on processors such as AMD Zen 5 faster than gathers).  Returns the rows done. */
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static Py_ssize_t refsvm_sqdist_small8(const double* dense, const Py_ssize_t* pos,
                                       Py_ssize_t m, const double* z, Py_ssize_t d,
                                       const double* sqn, double sz, double* out) {
    Py_ssize_t j, i;
    const __m512d vsz = _mm512_set1_pd(sz), two = _mm512_set1_pd(2.0);
    const __m512d quarter = _mm512_set1_pd(0.25);
    for (j = 0; j + 8 <= m; j += 8) {
        Py_ssize_t p0 = pos ? pos[j] : j, p1 = pos ? pos[j + 1] : j + 1,
                   p2 = pos ? pos[j + 2] : j + 2, p3 = pos ? pos[j + 3] : j + 3,
                   p4 = pos ? pos[j + 4] : j + 4, p5 = pos ? pos[j + 5] : j + 5,
                   p6 = pos ? pos[j + 6] : j + 6, p7 = pos ? pos[j + 7] : j + 7;
        const double *r0 = dense + p0 * d, *r1 = dense + p1 * d, *r2 = dense + p2 * d,
                     *r3 = dense + p3 * d, *r4 = dense + p4 * d, *r5 = dense + p5 * d,
                     *r6 = dense + p6 * d, *r7 = dense + p7 * d;
        __m512d dot = _mm512_setzero_pd(), dir = _mm512_setzero_pd();
        for (i = 0; i < d; i++) {
            __m512d r = _mm512_set_pd(r7[i], r6[i], r5[i], r4[i], r3[i], r2[i], r1[i], r0[i]);
            __m512d zi = _mm512_set1_pd(z[i]);
            __m512d t = _mm512_sub_pd(r, zi);
            dot = _mm512_add_pd(dot, _mm512_mul_pd(r, zi));
            dir = _mm512_add_pd(dir, _mm512_mul_pd(t, t));
        }
        __m512d tt = _mm512_add_pd(_mm512_set_pd(sqn[p7], sqn[p6], sqn[p5], sqn[p4], sqn[p3],
                                                 sqn[p2], sqn[p1], sqn[p0]), vsz);
        __m512d nrm = _mm512_sub_pd(tt, _mm512_mul_pd(two, dot));
        __mmask8 big = _mm512_cmp_pd_mask(nrm, _mm512_mul_pd(quarter, tt), _CMP_GT_OQ);
        _mm512_storeu_pd(out + j, _mm512_mask_blend_pd(big, dir, nrm));
    }
    return j;
}
#endif

REFSVM_API void refsvm_sqdist_small(const double* dense, const Py_ssize_t* pos, Py_ssize_t m,
                                    const double* z, Py_ssize_t d, const double* sqn,
                                    double sz, double* out) {
    Py_ssize_t j = 0, i;
#if REFSVM_X86_GNUC
    if (m >= 8 && refsvm_cpu_has(REFSVM_CPU_AVX512F))
        j = refsvm_sqdist_small8(dense, pos, m, z, d, sqn, sz, out);
#endif
    for (; j < m; j++) {
        Py_ssize_t pj = pos ? pos[j] : j;   /* NULL: the rows 0 .. m-1 */
        const double* r = dense + pj * d;
        double dot = 0.0, dir = 0.0, t, nrm;
        uint64_t a, b, mask;
        for (i = 0; i < d; i++) {
            dot = dot + r[i] * z[i];
            t = r[i] - z[i];
            dir = dir + t * t;
        }
        t = sqn[pj] + sz;
        nrm = t - 2.0 * dot;
        mask = (uint64_t) 0 - (uint64_t) (nrm > 0.25 * t);
        memcpy(&a, &nrm, 8);
        memcpy(&b, &dir, 8);
        a = (a & mask) | (b & ~mask);
        memcpy(&out[j], &a, 8);
    }
}

/* the baseline bodies */
#define REFSVM_VEC(name) refsvm_##name##_base
#define REFSVM_VEC_ATTR
#include "refsvm_kernels_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR

#if REFSVM_X86_GNUC
/* the AVX2 bodies (target("avx2") enables no FMA: nothing can be contracted) */
#define REFSVM_VEC(name) refsvm_##name##_avx2
#define REFSVM_VEC_ATTR __attribute__((target("avx2")))
#include "refsvm_kernels_vec.h"
#undef REFSVM_VEC
#undef REFSVM_VEC_ATTR
#endif

REFSVM_API void refsvm_dots4x(const double* base, const Py_ssize_t* pos, Py_ssize_t m,
                              const double* x4, Py_ssize_t d, double* out0, double* out1,
                              double* out2, double* out3) {
#if REFSVM_X86_GNUC
    if (refsvm_cpu_has(REFSVM_CPU_AVX2)) {
        refsvm_dots4x_avx2(base, pos, m, x4, d, out0, out1, out2, out3);
        return;
    }
#endif
    refsvm_dots4x_base(base, pos, m, x4, d, out0, out1, out2, out3);
}

REFSVM_API void refsvm_csr_dots4(const Py_ssize_t* indptr, const int* indices,
                                 const double* data, const Py_ssize_t* pos, Py_ssize_t m,
                                 const double* zd4, double* out0, double* out1,
                                 double* out2, double* out3) {
#if REFSVM_X86_GNUC
    if (refsvm_cpu_has(REFSVM_CPU_AVX2)) {
        refsvm_csr_dots4_avx2(indptr, indices, data, pos, m, zd4, out0, out1, out2, out3);
        return;
    }
#endif
    refsvm_csr_dots4_base(indptr, indices, data, pos, m, zd4, out0, out1, out2, out3);
}
