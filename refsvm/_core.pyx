"""The shared compiled core (twin of the package :mod:`refsvm.core`).

Every compiled twin cimports from here (see ``_core.pxd``): the row convention and
row arithmetic, kernels with evaluation counts, the growable row store and kernel
expansion, the stream driver (``StreamLearner``: ``step`` and a ``nogil`` ``run``),
buffer growth, the PA step size and the scaled weight vector (inline, in the .pxd).

Every function here computes exactly what its reference counterpart computes,
in the same order of summation where it matters (the RBF squared distance comes from
the norms and the inner product, ``refsvm.core.kernels.sqdist``: the same bits for a
dense row and its CSR form).
"""
from libc.math cimport exp, fabs, pow
from libc.stdlib cimport calloc, malloc, realloc, free
from libc.string cimport memcpy

import numpy as np
cimport numpy as cnp
import scipy.sparse as sp

cnp.import_array()

from refsvm.core.kernels import KERNEL_CODES, SparseRow


# ---------------------------------------------------------------- row arithmetic
cdef double dense_dot(const double* x, const double* z, Py_ssize_t n) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        s += x[i] * z[i]
    return s


cdef double dense_sqnorm(const double* x, Py_ssize_t n) noexcept nogil:
    return dense_dot(x, x, n)


cdef double dense_sqdist(const double* x, const double* z, Py_ssize_t n) noexcept nogil:
    cdef double s = 0.0, d
    cdef Py_ssize_t i
    for i in range(n):
        d = x[i] - z[i]
        s += d * d
    return s


cdef double csr_dot_dense(const int* idx, const double* val, Py_ssize_t nnz,
                          const double* w) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t p
    for p in range(nnz):
        s += val[p] * w[idx[p]]
    return s


cdef double csr_dot_csr(const int* xi, const double* xv, Py_ssize_t xn,
                        const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    cdef double s = 0.0
    cdef Py_ssize_t a = 0, b = 0
    while a < xn and b < zn:
        if xi[a] == zi[b]:
            s += xv[a] * zv[b]
            a += 1
            b += 1
        elif xi[a] < zi[b]:
            a += 1
        else:
            b += 1
    return s


cdef double csr_sqdist_direct(const int* xi, const double* xv, Py_ssize_t xn,
                              const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    """||x - z||^2 summed directly over the union of the two index lists, in index order
    (the differences of a dense row pair, whose common zeros add +0.0)."""
    cdef double s = 0.0, d
    cdef Py_ssize_t a = 0, b = 0
    while a < xn or b < zn:
        if b >= zn or (a < xn and xi[a] < zi[b]):
            d = xv[a]
            a += 1
        elif a >= xn or zi[b] < xi[a]:
            d = -zv[b]
            b += 1
        else:
            d = xv[a] - zv[b]
            a += 1
            b += 1
        s += d * d
    return s


cdef inline double seq_sqnorm(const double* v, Py_ssize_t n) noexcept nogil:
    """v[0]^2 + v[1]^2 + ..., added left to right (the reference's ``sqnorm``)."""
    cdef double s = 0.0
    cdef Py_ssize_t p
    for p in range(n):
        s += v[p] * v[p]
    return s


cdef inline double sqdist_from_norms(double sx, double sz, double dot) noexcept nogil:
    """||x - z||^2 = (||x||^2 + ||z||^2) - 2 <x, z> when it exceeds (||x||^2 + ||z||^2) / 4,
    where its round-off (a few units of the norms') is a few units of its own; else -1.0,
    and the caller sums (x_k - z_k)^2 directly (``refsvm.core.kernels.sqdist``: close
    points far from the origin keep the direct sum's accuracy)."""
    cdef double d = (sx + sz) - 2.0 * dot
    return d if d > 0.25 * (sx + sz) else -1.0


cdef inline double _dense_dist(double sx, double sz, double dot, const double* x,
                              const double* z, Py_ssize_t n) noexcept nogil:
    """||x - z||^2 of dense rows from their squared norms and inner product, or summed
    directly where that is not accurate (the reference's ``sqdist``)."""
    cdef double t = sqdist_from_norms(sx, sz, dot)
    return t if t >= 0.0 else dense_sqdist(x, z, n)


cdef inline double _csr_dist(double sx, double sz, double dot, const int* xi,
                            const double* xv, Py_ssize_t xn, const int* zi, const double* zv,
                            Py_ssize_t zn) noexcept nogil:
    """The same for CSR rows (the direct sum over the union of their indices)."""
    cdef double t = sqdist_from_norms(sx, sz, dot)
    return t if t >= 0.0 else csr_sqdist_direct(xi, xv, xn, zi, zv, zn)


cdef double csr_sqdist(const int* xi, const double* xv, Py_ssize_t xn,
                       const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    """||x - z||^2 of two CSR rows (``_csr_dist`` with both norms computed)."""
    return _csr_dist(seq_sqnorm(xv, xn), seq_sqnorm(zv, zn),
                     csr_dot_csr(xi, xv, xn, zi, zv, zn), xi, xv, xn, zi, zv, zn)


cdef inline double _finish(const KernelSpec* k, double dot_or_dist) noexcept nogil:
    if k.kind == 0:
        return dot_or_dist
    if k.kind == 1:
        return exp(-k.gamma * dot_or_dist)
    return pow(k.gamma * dot_or_dist + k.coef0, k.degree)


cdef inline double _rbf_dense(const KernelSpec* k, const double* x, const double* z,
                              Py_ssize_t n, double sx, double sz) noexcept nogil:
    """exp(-gamma ||x - z||^2) of dense rows: the sums not given (a squared norm < 0 is
    not given; the store keeps its rows') in one pass, independent chains."""
    cdef double sxx = 0.0, szz = 0.0, sxz = 0.0, t
    cdef Py_ssize_t i
    if sx >= 0.0 and sz >= 0.0:
        for i in range(n):
            sxz += x[i] * z[i]
        sxx = sx
        szz = sz
    elif sx >= 0.0:
        for i in range(n):
            szz += z[i] * z[i]
            sxz += x[i] * z[i]
        sxx = sx
    else:
        for i in range(n):
            sxx += x[i] * x[i]
            szz += z[i] * z[i]
            sxz += x[i] * z[i]
    return exp(-k.gamma * _dense_dist(sxx, szz, sxz, x, z, n))


cdef double kernel_dense(const KernelSpec* k, const double* x, const double* z,
                         Py_ssize_t n) noexcept nogil:
    if k.kind == 1:
        return _rbf_dense(k, x, z, n, -1.0, -1.0)
    return _finish(k, dense_dot(x, z, n))


cdef double kernel_csr(const KernelSpec* k, const int* xi, const double* xv, Py_ssize_t xn,
                       const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    if k.kind == 1:
        return _finish(k, csr_sqdist(xi, xv, xn, zi, zv, zn))
    return _finish(k, csr_dot_csr(xi, xv, xn, zi, zv, zn))


cdef extern from *:
    """
    #ifndef REFSVM_SQDIST_SMALL
    #define REFSVM_SQDIST_SMALL
    #include <stdint.h>
    /* out[j] = ||x_pos[j] - z||^2 for rows of d <= 8 features, the choice of
       sqdist_from_norms made on bits (no branch: close pairs are common in few dimensions
       and a branch on them mispredicts): the norms' form when it exceeds a quarter of the
       norms' sum, else the direct sum; both in the reference's order. */
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #include <immintrin.h>
    #define REFSVM_SQDIST8 1
    static int refsvm_sqdist8_ok = -1;
    /* Eight rows at a time: each lane the scalar loop's operations in its order (no fused
       multiply-add), so the same bits; the rows' values gathered.  Returns the rows done. */
    __attribute__((target("avx512f,avx512dq"), optimize("fp-contract=off")))
    static Py_ssize_t refsvm_sqdist_small8(const double* dense, const Py_ssize_t* pos,
                                           Py_ssize_t m, const double* z, Py_ssize_t d,
                                           const double* sqn, double sz, double* out) {
        Py_ssize_t j, i;
        const __m512d vsz = _mm512_set1_pd(sz), two = _mm512_set1_pd(2.0);
        const __m512d quarter = _mm512_set1_pd(0.25);
        const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
        for (j = 0; j + 8 <= m; j += 8) {
            __m512i pj = pos ? _mm512_loadu_si512((const void*) (pos + j))
                             : _mm512_add_epi64(_mm512_set1_epi64((long long) j), iota);
            __m512i at = _mm512_mullo_epi64(pj, _mm512_set1_epi64((long long) d));
            __m512d dot = _mm512_setzero_pd(), dir = _mm512_setzero_pd();
            for (i = 0; i < d; i++) {
                __m512d r = _mm512_i64gather_pd(at, (const void*) (dense + i), 8);
                __m512d zi = _mm512_set1_pd(z[i]);
                __m512d t = _mm512_sub_pd(r, zi);
                dot = _mm512_add_pd(dot, _mm512_mul_pd(r, zi));
                dir = _mm512_add_pd(dir, _mm512_mul_pd(t, t));
            }
            __m512d tt = _mm512_add_pd(_mm512_i64gather_pd(pj, (const void*) sqn, 8), vsz);
            __m512d nrm = _mm512_sub_pd(tt, _mm512_mul_pd(two, dot));
            __mmask8 big = _mm512_cmp_pd_mask(nrm, _mm512_mul_pd(quarter, tt), _CMP_GT_OQ);
            _mm512_storeu_pd(out + j, _mm512_mask_blend_pd(big, dir, nrm));
        }
        return j;
    }
    #else
    #define REFSVM_SQDIST8 0
    #endif
    /* Whether the CPU runs the eight-row form (once, at import). */
    static void refsvm_sqdist_init(void) {
    #if REFSVM_SQDIST8
        __builtin_cpu_init();
        refsvm_sqdist8_ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    #endif
    }
    static void refsvm_sqdist_small(const double* dense, const Py_ssize_t* pos, Py_ssize_t m,
                                    const double* z, Py_ssize_t d, const double* sqn,
                                    double sz, double* out) {
        Py_ssize_t j = 0, i;
    #if REFSVM_SQDIST8
        if (refsvm_sqdist8_ok < 0)
            refsvm_sqdist_init();
        if (refsvm_sqdist8_ok && m >= 8)
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
            mask = (uint64_t)0 - (uint64_t)(nrm > 0.25 * t);
            __builtin_memcpy(&a, &nrm, 8);
            __builtin_memcpy(&b, &dir, 8);
            a = (a & mask) | (b & ~mask);
            __builtin_memcpy(&out[j], &a, 8);
        }
    }
    /* out_r[j] = <row pos[j], z_r> for the four rows z_r given feature-major in x4
       (x4[4 i + r] = z_r[i]) and j < m: lane r is refsvm_dots's sum for z_r (from +0.0,
       left to right over the features, one rounded product and one rounded sum a term),
       so the same bits.  Four stored rows in flight, each read once for the four z: the
       sums of sixteen values advance together (rows in L3, 4,000 x 256: 11 ns a value
       against 36-42 one z at a time).  One C body for the baseline and, on x86-64 with GCC
       or Clang, for AVX2 without FMA (chosen at run time as refsvm_cols_matvec). */
    #if defined(__GNUC__)
    #define REFSVM_DOTS4X_BODY                                                              \
        Py_ssize_t j = 0, i;                                                                \
        refsvm_v4d a0, a1, a2, a3, z, w;                                                    \
        const double *r0, *r1, *r2, *r3;                                                    \
        for (; j < m; j += 4) {                                                             \
            r0 = base + (pos ? pos[j] : j) * d;                                             \
            r1 = j + 1 < m ? base + (pos ? pos[j + 1] : j + 1) * d : r0;                    \
            r2 = j + 2 < m ? base + (pos ? pos[j + 2] : j + 2) * d : r0;                    \
            r3 = j + 3 < m ? base + (pos ? pos[j + 3] : j + 3) * d : r0;                    \
            a0 = (refsvm_v4d) {0.0, 0.0, 0.0, 0.0};                                         \
            a1 = a0; a2 = a0; a3 = a0;                                                      \
            for (i = 0; i < d; i++) {                                                       \
                __builtin_memcpy(&z, x4 + 4 * i, sizeof z);                                 \
                w = (refsvm_v4d) {r0[i], r0[i], r0[i], r0[i]}; a0 = a0 + w * z;             \
                w = (refsvm_v4d) {r1[i], r1[i], r1[i], r1[i]}; a1 = a1 + w * z;             \
                w = (refsvm_v4d) {r2[i], r2[i], r2[i], r2[i]}; a2 = a2 + w * z;             \
                w = (refsvm_v4d) {r3[i], r3[i], r3[i], r3[i]}; a3 = a3 + w * z;             \
            }                                                                               \
            out0[j] = a0[0]; out1[j] = a0[1]; out2[j] = a0[2]; out3[j] = a0[3];             \
            if (j + 1 < m) {                                                                \
                out0[j + 1] = a1[0]; out1[j + 1] = a1[1];                                   \
                out2[j + 1] = a1[2]; out3[j + 1] = a1[3]; }                                 \
            if (j + 2 < m) {                                                                \
                out0[j + 2] = a2[0]; out1[j + 2] = a2[1];                                   \
                out2[j + 2] = a2[2]; out3[j + 2] = a2[3]; }                                 \
            if (j + 3 < m) {                                                                \
                out0[j + 3] = a3[0]; out1[j + 3] = a3[1];                                   \
                out2[j + 3] = a3[2]; out3[j + 3] = a3[3]; }                                 \
        }
    #else
    #define REFSVM_DOTS4X_BODY                                                              \
        Py_ssize_t j, i, q;                                                                 \
        double a[4];                                                                        \
        const double* r;                                                                    \
        for (j = 0; j < m; j++) {                                                           \
            r = base + (pos ? pos[j] : j) * d;                                              \
            a[0] = a[1] = a[2] = a[3] = 0.0;                                                \
            for (i = 0; i < d; i++)                                                         \
                for (q = 0; q < 4; q++)                                                     \
                    a[q] = a[q] + r[i] * x4[4 * i + q];                                     \
            out0[j] = a[0]; out1[j] = a[1]; out2[j] = a[2]; out3[j] = a[3];                 \
        }
    #endif
    static void refsvm_dots4x_base(const double* base, const Py_ssize_t* pos, Py_ssize_t m,
                                   const double* x4, Py_ssize_t d, double* out0,
                                   double* out1, double* out2, double* out3) {
        REFSVM_DOTS4X_BODY }
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __attribute__((target("avx2")))
    static void refsvm_dots4x_avx2(const double* base, const Py_ssize_t* pos, Py_ssize_t m,
                                   const double* x4, Py_ssize_t d, double* out0,
                                   double* out1, double* out2, double* out3) {
        REFSVM_DOTS4X_BODY }
    #endif
    static void refsvm_dots4x(const double* base, const Py_ssize_t* pos, Py_ssize_t m,
                              const double* x4, Py_ssize_t d, double* out0, double* out1,
                              double* out2, double* out3) {
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
        if (refsvm_vec_avx2()) {
            refsvm_dots4x_avx2(base, pos, m, x4, d, out0, out1, out2, out3);
            return;
        }
    #endif
        refsvm_dots4x_base(base, pos, m, x4, d, out0, out1, out2, out3);
    }
    #endif
    /* out[j] = exp(-gamma * out[j]) for j < m, the C library's exp bit for bit, eight at a
       time with AVX-512F (four with AVX2 and FMA) where it is the same function.

       The C library of most Linux systems (glibc >= 2.28, on a CPU with FMA) computes exp
       by a table of 2^(i/128) and a degree-5 polynomial: k = round(x 128/ln2), r = x - k
       ln2/128 in two fused steps, 2^(k/128) e^r = s + s tmp with s built from the table and
       the bits of k, tmp = (tail + r) + r^2 (C2 + C3 r) + r^4 (C4 + C5 r), each step one
       IEEE operation or one fused multiply-add, which give the same bits in a vector lane.
       The lanes outside its main range (|x| < 2^-54 or |x| >= 512, infinities, NaN) call
       the library's exp.  Whether the library is that function is not assumed: the first
       check at import compares each form the CPU can run with exp on 65,536 arguments
       spread over (-1024, 0] and uses the widest form whose every result is the same bits
       (``refsvm_exp_init``); otherwise, or on other CPUs, the loop calls exp one value at
       a time, as before.  The table
       holds, for i < 128, the relative tail (2^(i/128) - T_i) / T_i and the bits of
       T_i = 2^(i/128) rounded, less i << 45 (regenerated from these definitions by
       tests/core/test_exp.py). */
    #ifndef REFSVM_EXP_MANY
    #define REFSVM_EXP_MANY
    #include <math.h>
    #include <string.h>
    #include <stdint.h>
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #include <immintrin.h>
    #define REFSVM_EXP8 1
    #define REFSVM_EXP8_TARGET __attribute__((target("avx512f"), optimize("fp-contract=off")))
    #define REFSVM_EXP4_TARGET __attribute__((target("avx2,fma"), optimize("fp-contract=off")))
    #else
    #define REFSVM_EXP4_TARGET
    #define REFSVM_EXP8 0
    #define REFSVM_EXP8_TARGET
    #endif
    static const uint64_t refsvm_exp_tab[256] = {
        0x0000000000000000ULL, 0x3ff0000000000000ULL, 0x3c9b3b4f1a88bf6eULL, 0x3feff63da9fb3335ULL,
        0xbc7160139cd8dc5dULL, 0x3fefec9a3e778061ULL, 0xbc905e7a108766d1ULL, 0x3fefe315e86e7f85ULL,
        0x3c8cd2523567f613ULL, 0x3fefd9b0d3158574ULL, 0xbc8bce8023f98efaULL, 0x3fefd06b29ddf6deULL,
        0x3c60f74e61e6c861ULL, 0x3fefc74518759bc8ULL, 0x3c90a3e45b33d399ULL, 0x3fefbe3ecac6f383ULL,
        0x3c979aa65d837b6dULL, 0x3fefb5586cf9890fULL, 0x3c8eb51a92fdeffcULL, 0x3fefac922b7247f7ULL,
        0x3c3ebe3d702f9cd1ULL, 0x3fefa3ec32d3d1a2ULL, 0xbc6a033489906e0bULL, 0x3fef9b66affed31bULL,
        0xbc9556522a2fbd0eULL, 0x3fef9301d0125b51ULL, 0xbc5080ef8c4eea55ULL, 0x3fef8abdc06c31ccULL,
        0xbc91c923b9d5f416ULL, 0x3fef829aaea92de0ULL, 0x3c80d3e3e95c55afULL, 0x3fef7a98c8a58e51ULL,
        0xbc801b15eaa59348ULL, 0x3fef72b83c7d517bULL, 0xbc8f1ff055de323dULL, 0x3fef6af9388c8deaULL,
        0x3c8b898c3f1353bfULL, 0x3fef635beb6fcb75ULL, 0xbc96d99c7611eb26ULL, 0x3fef5be084045cd4ULL,
        0x3c9aecf73e3a2f60ULL, 0x3fef54873168b9aaULL, 0xbc8fe782cb86389dULL, 0x3fef4d5022fcd91dULL,
        0x3c8a6f4144a6c38dULL, 0x3fef463b88628cd6ULL, 0x3c807a05b0e4047dULL, 0x3fef3f49917ddc96ULL,
        0x3c968efde3a8a894ULL, 0x3fef387a6e756238ULL, 0x3c875e18f274487dULL, 0x3fef31ce4fb2a63fULL,
        0x3c80472b981fe7f2ULL, 0x3fef2b4565e27cddULL, 0xbc96b87b3f71085eULL, 0x3fef24dfe1f56381ULL,
        0x3c82f7e16d09ab31ULL, 0x3fef1e9df51fdee1ULL, 0xbc3d219b1a6fbffaULL, 0x3fef187fd0dad990ULL,
        0x3c8b3782720c0ab4ULL, 0x3fef1285a6e4030bULL, 0x3c6e149289cecb8fULL, 0x3fef0cafa93e2f56ULL,
        0x3c834d754db0abb6ULL, 0x3fef06fe0a31b715ULL, 0x3c864201e2ac744cULL, 0x3fef0170fc4cd831ULL,
        0x3c8fdd395dd3f84aULL, 0x3feefc08b26416ffULL, 0xbc86a3803b8e5b04ULL, 0x3feef6c55f929ff1ULL,
        0xbc924aedcc4b5068ULL, 0x3feef1a7373aa9cbULL, 0xbc9907f81b512d8eULL, 0x3feeecae6d05d866ULL,
        0xbc71d1e83e9436d2ULL, 0x3feee7db34e59ff7ULL, 0xbc991919b3ce1b15ULL, 0x3feee32dc313a8e5ULL,
        0x3c859f48a72a4c6dULL, 0x3feedea64c123422ULL, 0xbc9312607a28698aULL, 0x3feeda4504ac801cULL,
        0xbc58a78f4817895bULL, 0x3feed60a21f72e2aULL, 0xbc7c2c9b67499a1bULL, 0x3feed1f5d950a897ULL,
        0x3c4363ed60c2ac11ULL, 0x3feece086061892dULL, 0x3c9666093b0664efULL, 0x3feeca41ed1d0057ULL,
        0x3c6ecce1daa10379ULL, 0x3feec6a2b5c13cd0ULL, 0x3c93ff8e3f0f1230ULL, 0x3feec32af0d7d3deULL,
        0x3c7690cebb7aafb0ULL, 0x3feebfdad5362a27ULL, 0x3c931dbdeb54e077ULL, 0x3feebcb299fddd0dULL,
        0xbc8f94340071a38eULL, 0x3feeb9b2769d2ca7ULL, 0xbc87deccdc93a349ULL, 0x3feeb6daa2cf6642ULL,
        0xbc78dec6bd0f385fULL, 0x3feeb42b569d4f82ULL, 0xbc861246ec7b5cf6ULL, 0x3feeb1a4ca5d920fULL,
        0x3c93350518fdd78eULL, 0x3feeaf4736b527daULL, 0x3c7b98b72f8a9b05ULL, 0x3feead12d497c7fdULL,
        0x3c9063e1e21c5409ULL, 0x3feeab07dd485429ULL, 0x3c34c7855019c6eaULL, 0x3feea9268a5946b7ULL,
        0x3c9432e62b64c035ULL, 0x3feea76f15ad2148ULL, 0xbc8ce44a6199769fULL, 0x3feea5e1b976dc09ULL,
        0xbc8c33c53bef4da8ULL, 0x3feea47eb03a5585ULL, 0xbc845378892be9aeULL, 0x3feea34634ccc320ULL,
        0xbc93cedd78565858ULL, 0x3feea23882552225ULL, 0x3c5710aa807e1964ULL, 0x3feea155d44ca973ULL,
        0xbc93b3efbf5e2228ULL, 0x3feea09e667f3bcdULL, 0xbc6a12ad8734b982ULL, 0x3feea012750bdabfULL,
        0xbc6367efb86da9eeULL, 0x3fee9fb23c651a2fULL, 0xbc80dc3d54e08851ULL, 0x3fee9f7df9519484ULL,
        0xbc781f647e5a3ecfULL, 0x3fee9f75e8ec5f74ULL, 0xbc86ee4ac08b7db0ULL, 0x3fee9f9a48a58174ULL,
        0xbc8619321e55e68aULL, 0x3fee9feb564267c9ULL, 0x3c909ccb5e09d4d3ULL, 0x3feea0694fde5d3fULL,
        0xbc7b32dcb94da51dULL, 0x3feea11473eb0187ULL, 0x3c94ecfd5467c06bULL, 0x3feea1ed0130c132ULL,
        0x3c65ebe1abd66c55ULL, 0x3feea2f336cf4e62ULL, 0xbc88a1c52fb3cf42ULL, 0x3feea427543e1a12ULL,
        0xbc9369b6f13b3734ULL, 0x3feea589994cce13ULL, 0xbc805e843a19ff1eULL, 0x3feea71a4623c7adULL,
        0xbc94d450d872576eULL, 0x3feea8d99b4492edULL, 0x3c90ad675b0e8a00ULL, 0x3feeaac7d98a6699ULL,
        0x3c8db72fc1f0eab4ULL, 0x3feeace5422aa0dbULL, 0xbc65b6609cc5e7ffULL, 0x3feeaf3216b5448cULL,
        0x3c7bf68359f35f44ULL, 0x3feeb1ae99157736ULL, 0xbc93091fa71e3d83ULL, 0x3feeb45b0b91ffc6ULL,
        0xbc5da9b88b6c1e29ULL, 0x3feeb737b0cdc5e5ULL, 0xbc6c23f97c90b959ULL, 0x3feeba44cbc8520fULL,
        0xbc92434322f4f9aaULL, 0x3feebd829fde4e50ULL, 0xbc85ca6cd7668e4bULL, 0x3feec0f170ca07baULL,
        0x3c71affc2b91ce27ULL, 0x3feec49182a3f090ULL, 0x3c6dd235e10a73bbULL, 0x3feec86319e32323ULL,
        0xbc87c50422622263ULL, 0x3feecc667b5de565ULL, 0x3c8b1c86e3e231d5ULL, 0x3feed09bec4a2d33ULL,
        0xbc91bbd1d3bcbb15ULL, 0x3feed503b23e255dULL, 0x3c90cc319cee31d2ULL, 0x3feed99e1330b358ULL,
        0x3c8469846e735ab3ULL, 0x3feede6b5579fdbfULL, 0xbc82dfcd978e9db4ULL, 0x3feee36bbfd3f37aULL,
        0x3c8c1a7792cb3387ULL, 0x3feee89f995ad3adULL, 0xbc907b8f4ad1d9faULL, 0x3feeee07298db666ULL,
        0xbc55c3d956dcaebaULL, 0x3feef3a2b84f15fbULL, 0xbc90a40e3da6f640ULL, 0x3feef9728de5593aULL,
        0xbc68d6f438ad9334ULL, 0x3feeff76f2fb5e47ULL, 0xbc91eee26b588a35ULL, 0x3fef05b030a1064aULL,
        0x3c74ffd70a5fddcdULL, 0x3fef0c1e904bc1d2ULL, 0xbc91bdfbfa9298acULL, 0x3fef12c25bd71e09ULL,
        0x3c736eae30af0cb3ULL, 0x3fef199bdd85529cULL, 0x3c8ee3325c9ffd94ULL, 0x3fef20ab5fffd07aULL,
        0x3c84e08fd10959acULL, 0x3fef27f12e57d14bULL, 0x3c63cdaf384e1a67ULL, 0x3fef2f6d9406e7b5ULL,
        0x3c676b2c6c921968ULL, 0x3fef3720dcef9069ULL, 0xbc808a1883ccb5d2ULL, 0x3fef3f0b555dc3faULL,
        0xbc8fad5d3ffffa6fULL, 0x3fef472d4a07897cULL, 0xbc900dae3875a949ULL, 0x3fef4f87080d89f2ULL,
        0x3c74a385a63d07a7ULL, 0x3fef5818dcfba487ULL, 0xbc82919e2040220fULL, 0x3fef60e316c98398ULL,
        0x3c8e5a50d5c192acULL, 0x3fef69e603db3285ULL, 0x3c843a59ac016b4bULL, 0x3fef7321f301b460ULL,
        0xbc82d52107b43e1fULL, 0x3fef7c97337b9b5fULL, 0xbc892ab93b470dc9ULL, 0x3fef864614f5a129ULL,
        0x3c74b604603a88d3ULL, 0x3fef902ee78b3ff6ULL, 0x3c83c5ec519d7271ULL, 0x3fef9a51fbc74c83ULL,
        0xbc8ff7128fd391f0ULL, 0x3fefa4afa2a490daULL, 0xbc8dae98e223747dULL, 0x3fefaf482d8e67f1ULL,
        0x3c8ec3bc41aa2008ULL, 0x3fefba1bee615a27ULL, 0x3c842b94c3a9eb32ULL, 0x3fefc52b376bba97ULL,
        0x3c8a64a931d185eeULL, 0x3fefd0765b6e4540ULL, 0xbc8e37bae43be3edULL, 0x3fefdbfdad9cbe14ULL,
        0x3c77893b4d91cd9dULL, 0x3fefe7c1819e90d8ULL, 0x3c5305c14160cc89ULL, 0x3feff3c22b8f71f1ULL,
    };
    /* 128/ln2, 1.5 * 2^52 (rounds to an integer by addition), -ln2/128 split in a high part
       of 37 bits and the rest, and the polynomial's C2 .. C5 */
    static const uint64_t refsvm_exp_k[8] = {
        0x40671547652b82feULL, 0x4338000000000000ULL, 0xbf762e42fefa0000ULL,
        0xbd0cf79abc9e3b3aULL, 0x3fdffffffffffdbdULL, 0x3fc555555555543cULL,
        0x3fa55555cf172b91ULL, 0x3f81111167a4d017ULL};
    static int refsvm_exp_ok8 = 0, refsvm_exp_ok4 = 0;   /* the forms that passed the check */
    static int refsvm_exp_width = 1;      /* the form the kernels take: 8, 4 or 1 (exp) */
    REFSVM_EXP8_TARGET
    static void refsvm_exp8(double* out, Py_ssize_t m, double ng, int scale) {
    #if REFSVM_EXP8
        Py_ssize_t j = 0;
        int l;
        double c[8];
        memcpy(c, refsvm_exp_k, sizeof c);
        const __m512d vng = _mm512_set1_pd(ng);
        const __m512d inv = _mm512_set1_pd(c[0]), shift = _mm512_set1_pd(c[1]);
        const __m512d hi = _mm512_set1_pd(c[2]), lo = _mm512_set1_pd(c[3]);
        const __m512d C2 = _mm512_set1_pd(c[4]), C3 = _mm512_set1_pd(c[5]);
        const __m512d C4 = _mm512_set1_pd(c[6]), C5 = _mm512_set1_pd(c[7]);
        const __m512i bottom = _mm512_set1_epi64(0x3c9), span = _mm512_set1_epi64(0x3e);
        const __m512i e11 = _mm512_set1_epi64(0x7ff), m127 = _mm512_set1_epi64(127);
        const __m512i one = _mm512_set1_epi64(1);
        for (; j + 8 <= m; j += 8) {
            __m512d x = _mm512_loadu_pd(out + j);
            if (scale)
                x = _mm512_mul_pd(vng, x);            /* -gamma * d2, one rounding */
            __m512i top = _mm512_and_epi64(_mm512_srli_epi64(_mm512_castpd_si512(x), 52), e11);
            __mmask8 off = _mm512_cmpgt_epu64_mask(_mm512_sub_epi64(top, bottom), span);
            __m512d kd = _mm512_fmadd_pd(x, inv, shift);
            __m512i ki = _mm512_castpd_si512(kd);
            kd = _mm512_sub_pd(kd, shift);
            __m512d r = _mm512_fmadd_pd(kd, hi, x);
            r = _mm512_fmadd_pd(kd, lo, r);
            __m512i idx = _mm512_slli_epi64(_mm512_and_epi64(ki, m127), 1);
            __m512d tail = _mm512_i64gather_pd(idx, (const void*) refsvm_exp_tab, 8);
            __m512i sb = _mm512_i64gather_epi64(_mm512_add_epi64(idx, one),
                                                (const void*) refsvm_exp_tab, 8);
            __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(sb, _mm512_slli_epi64(ki, 45)));
            __m512d t0 = _mm512_add_pd(r, tail);
            __m512d r2 = _mm512_mul_pd(r, r);
            __m512d p = _mm512_fmadd_pd(_mm512_fmadd_pd(r, C3, C2), r2, t0);
            __m512d tmp = _mm512_fmadd_pd(_mm512_mul_pd(r2, r2), _mm512_fmadd_pd(r, C5, C4), p);
            __m512d res = _mm512_fmadd_pd(s, tmp, s);
            if (off) {
                double xs[8];
                _mm512_storeu_pd(xs, x);
                _mm512_storeu_pd(out + j, res);
                for (l = 0; l < 8; l++)
                    if (off >> l & 1)
                        out[j + l] = exp(xs[l]);
            } else {
                _mm512_storeu_pd(out + j, res);
            }
        }
        for (; j < m; j++)
            out[j] = exp(scale ? ng * out[j] : out[j]);
    #endif
    }
    REFSVM_EXP4_TARGET
    static void refsvm_exp4(double* out, Py_ssize_t m, double ng, int scale) {
    #if REFSVM_EXP8
        Py_ssize_t j = 0;
        int l, off;
        double c[8];
        memcpy(c, refsvm_exp_k, sizeof c);
        const __m256d vng = _mm256_set1_pd(ng);
        const __m256d inv = _mm256_set1_pd(c[0]), shift = _mm256_set1_pd(c[1]);
        const __m256d hi = _mm256_set1_pd(c[2]), lo = _mm256_set1_pd(c[3]);
        const __m256d C2 = _mm256_set1_pd(c[4]), C3 = _mm256_set1_pd(c[5]);
        const __m256d C4 = _mm256_set1_pd(c[6]), C5 = _mm256_set1_pd(c[7]);
        const __m256i bottom = _mm256_set1_epi64x(0x3c9), top_ = _mm256_set1_epi64x(0x407);
        const __m256i e11 = _mm256_set1_epi64x(0x7ff), m127 = _mm256_set1_epi64x(127);
        const __m256i one = _mm256_set1_epi64x(1);
        for (; j + 4 <= m; j += 4) {
            __m256d x = _mm256_loadu_pd(out + j);
            if (scale)
                x = _mm256_mul_pd(vng, x);
            __m256i top = _mm256_and_si256(_mm256_srli_epi64(_mm256_castpd_si256(x), 52), e11);
            off = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_or_si256(
                _mm256_cmpgt_epi64(bottom, top), _mm256_cmpgt_epi64(top, top_))));
            __m256d kd = _mm256_fmadd_pd(x, inv, shift);
            __m256i ki = _mm256_castpd_si256(kd);
            kd = _mm256_sub_pd(kd, shift);
            __m256d r = _mm256_fmadd_pd(kd, hi, x);
            r = _mm256_fmadd_pd(kd, lo, r);
            __m256i idx = _mm256_slli_epi64(_mm256_and_si256(ki, m127), 1);
            __m256d tail = _mm256_i64gather_pd((const double*) refsvm_exp_tab, idx, 8);
            __m256i sb = _mm256_i64gather_epi64((const long long*) refsvm_exp_tab,
                                                _mm256_add_epi64(idx, one), 8);
            __m256d s = _mm256_castsi256_pd(_mm256_add_epi64(sb, _mm256_slli_epi64(ki, 45)));
            __m256d t0 = _mm256_add_pd(r, tail);
            __m256d r2 = _mm256_mul_pd(r, r);
            __m256d p = _mm256_fmadd_pd(_mm256_fmadd_pd(r, C3, C2), r2, t0);
            __m256d tmp = _mm256_fmadd_pd(_mm256_mul_pd(r2, r2), _mm256_fmadd_pd(r, C5, C4), p);
            __m256d res = _mm256_fmadd_pd(s, tmp, s);
            _mm256_storeu_pd(out + j, res);
            if (off) {
                double xs[4];
                _mm256_storeu_pd(xs, x);
                for (l = 0; l < 4; l++)
                    if (off >> l & 1)
                        out[j + l] = exp(xs[l]);
            }
        }
        for (; j < m; j++)
            out[j] = exp(scale ? ng * out[j] : out[j]);
    #endif
    }
    /* Whether a form gives exp's bits on the 65,536 arguments of the check. */
    static int refsvm_exp_check(void (*form)(double*, Py_ssize_t, double, int)) {
        double* a = (double*) malloc(65536 * sizeof(double));
        uint64_t z = 0x9e3779b97f4a7c15ULL;
        Py_ssize_t i;
        int ok = a != NULL;
        if (!ok)
            return 0;
        for (i = 0; i < 65536; i++) {     /* -2^e u, e uniform in [-40, 10), and edges */
            z ^= z << 13; z ^= z >> 7; z ^= z << 17;
            a[i] = -ldexp((double) (z >> 11) * 0x1.0p-53, (int) (z % 50) - 40);
        }
        a[0] = 0.0; a[1] = -0.0; a[2] = -745.2; a[3] = -708.5; a[4] = -1.0e-300;
        a[5] = -512.0; a[6] = -0x1.0p-54; a[7] = -0x1.0p-55;
        {
            double* b = (double*) malloc(65536 * sizeof(double));
            if (b == NULL) {
                free(a);
                return 0;
            }
            memcpy(b, a, 65536 * sizeof(double));
            form(a, 65536, 1.0, 0);
            for (i = 0; i < 65536 && ok; i++) {
                double e = exp(b[i]);
                ok = memcmp(&e, a + i, sizeof e) == 0;
            }
            free(b);
        }
        free(a);
        return ok;
    }
    /* The check, once (at import): the widest form that passed is taken. */
    static void refsvm_exp_init(void) {
    #if REFSVM_EXP8
        static int done = 0;
        if (done)
            return;
        done = 1;
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f"))
            refsvm_exp_ok8 = refsvm_exp_check(refsvm_exp8);
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            refsvm_exp_ok4 = refsvm_exp_check(refsvm_exp4);
        refsvm_exp_width = refsvm_exp_ok8 ? 8 : refsvm_exp_ok4 ? 4 : 1;
    #endif
    }
    static const unsigned long long* refsvm_exp_table(void) {
        return (const unsigned long long*) refsvm_exp_tab;
    }
    static void refsvm_exp_neg_many(double* out, Py_ssize_t m, double gamma) {
        double ng = -gamma;
        Py_ssize_t j;
    #if REFSVM_EXP8
        if (m >= 8 && refsvm_exp_width == 8) {
            refsvm_exp8(out, m, ng, 1);
            return;
        }
        if (m >= 4 && refsvm_exp_width == 4) {
            refsvm_exp4(out, m, ng, 1);
            return;
        }
    #endif
        for (j = 0; j < m; j++)
            out[j] = exp(ng * out[j]);
    }
    #endif
    """
    void refsvm_dots4x(const double* base, const Py_ssize_t* pos, Py_ssize_t m,
                       const double* x4, Py_ssize_t d, double* out0, double* out1,
                       double* out2, double* out3) noexcept nogil
    void refsvm_sqdist_small(const double* dense, const Py_ssize_t* pos, Py_ssize_t m,
                             const double* z, Py_ssize_t d, const double* sqn, double sz,
                             double* out) noexcept nogil
    void refsvm_exp_init() noexcept nogil
    void refsvm_sqdist_init() noexcept nogil
    int refsvm_exp_ok8, refsvm_exp_ok4, refsvm_exp_width
    const unsigned long long* refsvm_exp_table() noexcept nogil
    void refsvm_exp_neg_many(double* out, Py_ssize_t m, double gamma) noexcept nogil


cdef inline Py_ssize_t _at(const Py_ssize_t* pos, Py_ssize_t j) noexcept nogil:
    """Row pos[j], or j when pos is NULL (the stored rows 0, 1, ... in order)."""
    return pos[j] if pos != NULL else j


cdef inline double _csr_rbf_dist(RowStore s, Py_ssize_t r, double sz, double dot,
                                 const int* zi, const double* zv, Py_ssize_t zn) noexcept nogil:
    """||x_r - z||^2 of the stored CSR row r and a row z, from the kept norm of x_r, the
    squared norm sz of z and their inner product (``csr_sqdist``'s value); the kernel is
    exp(-gamma times it), taken for a whole column at once (``refsvm_exp_neg_many``)."""
    cdef Py_ssize_t q = s.indptr[r]
    return _csr_dist(s.sqn[r], sz, dot, s.indices + q, s.data + q, s.indptr[r + 1] - q,
                     zi, zv, zn)


cdef void kernel_csr_many(const KernelSpec* k, RowStore s, const Py_ssize_t* pos, Py_ssize_t m,
                          const int* zi, const double* zv, Py_ssize_t zn,
                          double* out) noexcept nogil:
    """out[j] = k(stored CSR row pos[j], z) for j < m (the rows 0 .. m-1 if pos is NULL;
    not counted), each value ``kernel_csr(k, row pos[j], z)``'s bit for bit.

    ``csr_dot_csr`` walks two index lists with a branch on every comparison (about 50 ns
    an evaluation on a9a, most of it mispredicted branches).  Here z is scattered once
    into a dense buffer and each row's inner product is a gather over the row's own
    indices, four rows in flight (four independent sums).  A row index that z lacks adds
    x_k * 0.0 = +-0.0, a no-op on a sum that is never -0.0 (it starts at +0.0 and rounds to
    nearest), so each sum is ``csr_dot_csr``'s, added in the same order.  The squared
    norms of stored rows are kept by the store (``sqn``).  Below a few rows per feature
    (the buffer would cost more than it saves), for a z or a stored row with an index
    outside the store's features (``wide``: malformed input reaches no buffer), or without
    memory: ``kernel_csr`` per row (the same values)."""
    cdef Py_ssize_t j = 0, p, q, n0, n1, n2, n3, nmin, d = s.n_features
    cdef const int* i0
    cdef const int* i1
    cdef const int* i2
    cdef const int* i3
    cdef const double* v0
    cdef const double* v1
    cdef const double* v2
    cdef const double* v3
    cdef double a0, a1, a2, a3, sz
    cdef double* zd = NULL
    if m >= 4 and d <= 64 * m and not s.wide:
        for q in range(zn):
            if not 0 <= zi[q] < d:        # an index beyond the store's features: merge
                d = -1
                break
        if d >= 0:
            zd = <double*> calloc(max(d, 1), sizeof(double))
    if zd == NULL:
        for j in range(m):
            q = s.indptr[_at(pos, j)]
            out[j] = kernel_csr(k, s.indices + q, s.data + q, s.indptr[_at(pos, j) + 1] - q,
                                zi, zv, zn)
        return
    for q in range(zn):
        zd[zi[q]] = zv[q]
    sz = seq_sqnorm(zv, zn)
    while j < m:
        if j + 4 <= m:
            q = s.indptr[_at(pos, j)]
            i0 = s.indices + q
            v0 = s.data + q
            n0 = s.indptr[_at(pos, j) + 1] - q
            q = s.indptr[_at(pos, j + 1)]
            i1 = s.indices + q
            v1 = s.data + q
            n1 = s.indptr[_at(pos, j + 1) + 1] - q
            q = s.indptr[_at(pos, j + 2)]
            i2 = s.indices + q
            v2 = s.data + q
            n2 = s.indptr[_at(pos, j + 2) + 1] - q
            q = s.indptr[_at(pos, j + 3)]
            i3 = s.indices + q
            v3 = s.data + q
            n3 = s.indptr[_at(pos, j + 3) + 1] - q
            nmin = min(min(n0, n1), min(n2, n3))
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for p in range(nmin):
                a0 = a0 + v0[p] * zd[i0[p]]
                a1 = a1 + v1[p] * zd[i1[p]]
                a2 = a2 + v2[p] * zd[i2[p]]
                a3 = a3 + v3[p] * zd[i3[p]]
            for p in range(nmin, n0):
                a0 = a0 + v0[p] * zd[i0[p]]
            for p in range(nmin, n1):
                a1 = a1 + v1[p] * zd[i1[p]]
            for p in range(nmin, n2):
                a2 = a2 + v2[p] * zd[i2[p]]
            for p in range(nmin, n3):
                a3 = a3 + v3[p] * zd[i3[p]]
            if k.kind == 1:
                out[j] = _csr_rbf_dist(s, _at(pos, j), sz, a0, zi, zv, zn)
                out[j + 1] = _csr_rbf_dist(s, _at(pos, j + 1), sz, a1, zi, zv, zn)
                out[j + 2] = _csr_rbf_dist(s, _at(pos, j + 2), sz, a2, zi, zv, zn)
                out[j + 3] = _csr_rbf_dist(s, _at(pos, j + 3), sz, a3, zi, zv, zn)
            else:
                out[j] = _finish(k, a0)
                out[j + 1] = _finish(k, a1)
                out[j + 2] = _finish(k, a2)
                out[j + 3] = _finish(k, a3)
            j += 4
        else:
            q = s.indptr[_at(pos, j)]
            i0 = s.indices + q
            v0 = s.data + q
            n0 = s.indptr[_at(pos, j) + 1] - q
            a0 = 0.0
            for p in range(n0):
                a0 = a0 + v0[p] * zd[i0[p]]
            if k.kind == 1:
                out[j] = _csr_rbf_dist(s, _at(pos, j), sz, a0, zi, zv, zn)
            else:
                out[j] = _finish(k, a0)
            j += 1
    free(zd)
    if k.kind == 1:
        refsvm_exp_neg_many(out, m, k.gamma)      # exp(-gamma d2), the library's bits


cdef extern from *:
    """
    #ifndef REFSVM_CSR_DOTS4
    #define REFSVM_CSR_DOTS4
    /* out_r[j] = sum_p data[p] zd4[4 indices[p] + r] over the stored CSR row pos[j] (j < m;
       row j when pos is NULL), for the four rows r < 4 scattered feature-major into zd4:
       lane r is kernel_csr_many's sum for z_r (from +0.0, in the row's own order, one
       rounded product and one rounded sum a term), so the same bits.  The index and the
       value of a term are loaded once for four rows z, and two stored rows are in flight.
       One C body for the baseline and, on x86-64 with GCC or Clang, for AVX2 without FMA
       (chosen at run time as refsvm_cols_matvec). */
    #if defined(__GNUC__)
    #define REFSVM_CSR_DOTS4_BODY                                                          \
        Py_ssize_t j = 0, p, r0, r1, n0, n1, nmin;                                         \
        const int *i0, *i1;                                                                \
        const double *v0, *v1;                                                             \
        refsvm_v4d a0, a1, z0, z1, w0, w1;                                                 \
        for (; j < m; j += 2) {                                                            \
            r0 = pos ? pos[j] : j;                                                         \
            r1 = j + 1 < m ? (pos ? pos[j + 1] : j + 1) : r0;                              \
            i0 = indices + indptr[r0]; v0 = data + indptr[r0];                             \
            n0 = indptr[r0 + 1] - indptr[r0];                                              \
            i1 = indices + indptr[r1]; v1 = data + indptr[r1];                             \
            n1 = j + 1 < m ? indptr[r1 + 1] - indptr[r1] : 0;                              \
            nmin = n0 < n1 ? n0 : n1;                                                      \
            a0 = (refsvm_v4d) {0.0, 0.0, 0.0, 0.0};                                        \
            a1 = a0;                                                                       \
            for (p = 0; p < nmin; p++) {                                                   \
                w0 = (refsvm_v4d) {v0[p], v0[p], v0[p], v0[p]};                            \
                w1 = (refsvm_v4d) {v1[p], v1[p], v1[p], v1[p]};                            \
                __builtin_memcpy(&z0, zd4 + 4 * (Py_ssize_t) i0[p], sizeof z0);            \
                __builtin_memcpy(&z1, zd4 + 4 * (Py_ssize_t) i1[p], sizeof z1);            \
                a0 = a0 + w0 * z0;                                                         \
                a1 = a1 + w1 * z1;                                                         \
            }                                                                              \
            for (p = nmin; p < n0; p++) {                                                  \
                w0 = (refsvm_v4d) {v0[p], v0[p], v0[p], v0[p]};                            \
                __builtin_memcpy(&z0, zd4 + 4 * (Py_ssize_t) i0[p], sizeof z0);            \
                a0 = a0 + w0 * z0;                                                         \
            }                                                                              \
            for (p = nmin; p < n1; p++) {                                                  \
                w1 = (refsvm_v4d) {v1[p], v1[p], v1[p], v1[p]};                            \
                __builtin_memcpy(&z1, zd4 + 4 * (Py_ssize_t) i1[p], sizeof z1);            \
                a1 = a1 + w1 * z1;                                                         \
            }                                                                              \
            out0[j] = a0[0]; out1[j] = a0[1]; out2[j] = a0[2]; out3[j] = a0[3];            \
            if (j + 1 < m) {                                                               \
                out0[j + 1] = a1[0]; out1[j + 1] = a1[1];                                  \
                out2[j + 1] = a1[2]; out3[j + 1] = a1[3];                                  \
            }                                                                              \
        }
    #else
    #define REFSVM_CSR_DOTS4_BODY                                                          \
        Py_ssize_t j, p, r, q;                                                             \
        double a[4];                                                                       \
        for (j = 0; j < m; j++) {                                                          \
            r = pos ? pos[j] : j;                                                          \
            a[0] = a[1] = a[2] = a[3] = 0.0;                                               \
            for (p = indptr[r]; p < indptr[r + 1]; p++)                                    \
                for (q = 0; q < 4; q++)                                                    \
                    a[q] = a[q] + data[p] * zd4[4 * (Py_ssize_t) indices[p] + q];          \
            out0[j] = a[0]; out1[j] = a[1]; out2[j] = a[2]; out3[j] = a[3];                \
        }
    #endif
    static void refsvm_csr_dots4_base(const Py_ssize_t* indptr, const int* indices,
                                      const double* data, const Py_ssize_t* pos, Py_ssize_t m,
                                      const double* zd4, double* out0, double* out1,
                                      double* out2, double* out3) {
        REFSVM_CSR_DOTS4_BODY }
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __attribute__((target("avx2")))
    static void refsvm_csr_dots4_avx2(const Py_ssize_t* indptr, const int* indices,
                                      const double* data, const Py_ssize_t* pos, Py_ssize_t m,
                                      const double* zd4, double* out0, double* out1,
                                      double* out2, double* out3) {
        REFSVM_CSR_DOTS4_BODY }
    #endif
    static void refsvm_csr_dots4(const Py_ssize_t* indptr, const int* indices,
                                 const double* data, const Py_ssize_t* pos, Py_ssize_t m,
                                 const double* zd4, double* out0, double* out1,
                                 double* out2, double* out3) {
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
        if (refsvm_vec_avx2()) {
            refsvm_csr_dots4_avx2(indptr, indices, data, pos, m, zd4, out0, out1, out2, out3);
            return;
        }
    #endif
        refsvm_csr_dots4_base(indptr, indices, data, pos, m, zd4, out0, out1, out2, out3);
    }
    #endif
    """
    void refsvm_csr_dots4(const Py_ssize_t* indptr, const int* indices, const double* data,
                          const Py_ssize_t* pos, Py_ssize_t m, const double* zd4,
                          double* out0, double* out1, double* out2,
                          double* out3) noexcept nogil


cdef void kernel_csr_many4(const KernelSpec* k, RowStore s, const Py_ssize_t* pos,
                           Py_ssize_t m, const int** zi, const double** zv,
                           const Py_ssize_t* zn, double** out) noexcept nogil:
    """out[r][j] = k(stored CSR row pos[j], z_r) for four rows z_r (r < 4) and j < m (not
    counted): ``kernel_csr_many``'s values for each z_r bit for bit, with the inner
    products of the four taken in one pass over the stored rows (``refsvm_csr_dots4``:
    a row's indices and values read once for four, which halves the time of a block of
    new rows against the support vectors).  Where ``kernel_csr_many`` would not scatter
    (few rows, a wide store, an index outside the features, no memory): it, per z_r."""
    cdef Py_ssize_t j, q, r, d = s.n_features
    cdef double* zd4 = NULL
    cdef double sz
    if m >= 4 and d <= 64 * m and not s.wide:
        for r in range(4):
            for q in range(zn[r]):
                if not 0 <= zi[r][q] < d:
                    d = -1
        if d >= 0:
            zd4 = <double*> calloc(max(4 * d, 1), sizeof(double))
    if zd4 == NULL:
        for r in range(4):
            kernel_csr_many(k, s, pos, m, zi[r], zv[r], zn[r], out[r])
        return
    for r in range(4):
        for q in range(zn[r]):
            zd4[4 * zi[r][q] + r] = zv[r][q]
    refsvm_csr_dots4(s.indptr, s.indices, s.data, pos, m, zd4, out[0], out[1], out[2],
                     out[3])
    free(zd4)
    for r in range(4):
        if k.kind == 1:
            sz = seq_sqnorm(zv[r], zn[r])
            for j in range(m):
                out[r][j] = _csr_rbf_dist(s, _at(pos, j), sz, out[r][j], zi[r], zv[r], zn[r])
            refsvm_exp_neg_many(out[r], m, k.gamma)    # exp(-gamma d2), the library's bits
        else:
            for j in range(m):
                out[r][j] = _finish(k, out[r][j])


cdef void kernel_many4(CKernel kern, RowStore s, const Py_ssize_t* z, const Py_ssize_t* pos,
                       Py_ssize_t m, double** out) noexcept nogil:
    """out[r][j] = k(x_pos[j], x_z[r]) for four stored rows z[r] and j < m: four
    ``kernel_many`` calls' values bit for bit (4 m counted evaluations), the inner
    products in one pass over the rows (CSR: ``kernel_csr_many4``; dense with more than 8
    features: ``refsvm_dots4x``, then ``kernel_row_many``'s finish)."""
    cdef const int* zi[4]
    cdef const double* zv[4]
    cdef Py_ssize_t zn[4]
    cdef Py_ssize_t r, i, d = s.n_features
    cdef double* x4
    if not s.sparse:
        x4 = NULL
        if m > 0 and d > 8:
            x4 = <double*> malloc(4 * d * sizeof(double))
        if x4 == NULL:         # no memory (or few features: refsvm_sqdist_small's path)
            for r in range(4):
                kernel_many(kern, s, z[r], pos, m, out[r])
            return
        kern.n_evals += 4 * m
        for i in range(d):
            for r in range(4):
                x4[4 * i + r] = s.dense[z[r] * d + i]
        refsvm_dots4x(s.dense, pos, m, x4, d, out[0], out[1], out[2], out[3])
        for r in range(4):
            _dense_finish(&kern.spec, s, pos, m, s.dense + z[r] * d, out[r])
        free(x4)
        return
    kern.n_evals += 4 * m
    if m <= 0:
        return
    for r in range(4):
        zi[r] = s.indices + s.indptr[z[r]]
        zv[r] = s.data + s.indptr[z[r]]
        zn[r] = s.indptr[z[r] + 1] - s.indptr[z[r]]
    kernel_csr_many4(&kern.spec, s, pos, m, zi, zv, zn, out)


cdef void kernel_row_many(CKernel kern, RowStore s, const Py_ssize_t* pos, Py_ssize_t m,
                          const int* xi, const double* xv, Py_ssize_t xn,
                          double* out) noexcept nogil:
    """out[j] = k(stored row pos[j], x) for j < m (the rows 0 .. m-1 if pos is NULL):
    ``k_row_csr`` / ``k_row_dense``'s values bit for bit, m counted evaluations, in one call
    (a kernel column, an arrival's score, prediction).  CSR: ``kernel_csr_many``.  Dense
    (xi NULL, xn = n_features): ||x||^2 once, the inner products four stored rows at a
    time (independent sums in the order of ``dense_dot``), the store's squared norms, then
    the finish of ``kernel_dense`` (with at most 8 features both sums of every row and the
    choice made on bits: ``refsvm_sqdist_small``)."""
    cdef const KernelSpec* k = &kern.spec
    cdef Py_ssize_t j = 0, d = s.n_features
    cdef double sz
    kern.n_evals += m
    if m <= 0:
        return
    if s.sparse:
        kernel_csr_many(k, s, pos, m, xi, xv, xn, out)
        return
    if k.kind == 1 and d <= 8:
        refsvm_sqdist_small(s.dense, pos, m, xv, d, s.sqn, dense_dot(xv, xv, d), out)
        refsvm_exp_neg_many(out, m, k.gamma)
        return
    refsvm_dots(s.dense, d, pos, m, xv, d, out)  # eight inner products in flight
    _dense_finish(k, s, pos, m, xv, out)


cdef inline void _dense_finish(const KernelSpec* k, RowStore s, const Py_ssize_t* pos,
                               Py_ssize_t m, const double* xv, double* out) noexcept nogil:
    """out[j] = k(stored row pos[j], x) from out[j] = <stored row pos[j], x> (dense rows,
    more than 8 features): ``kernel_dense``'s finish, for ``kernel_row_many`` and the dense
    ``kernel_many4``."""
    cdef Py_ssize_t j, d = s.n_features
    cdef double sz
    if k.kind == 1:
        sz = dense_dot(xv, xv, d)
        for j in range(m):
            out[j] = _dense_dist(s.sqn[_at(pos, j)], sz, out[j], s.dense + _at(pos, j) * d,
                                 xv, d)
        refsvm_exp_neg_many(out, m, k.gamma)
    elif k.kind == 2:
        for j in range(m):
            out[j] = pow(k.gamma * out[j] + k.coef0, k.degree)


# ---------------------------------------------------------------- buffer growth
cdef int grow(void** buf, Py_ssize_t* capacity, Py_ssize_t need,
              size_t itemsize) except -1 nogil:
    """Make ``*buf`` hold at least ``need`` items of ``itemsize`` bytes (realloc to
    max(need, 2 * capacity, 16)); MemoryError on failure, the old buffer kept."""
    cdef Py_ssize_t cap
    cdef void* p
    if need <= capacity[0]:
        return 0
    cap = max(need, 2 * capacity[0], 16)
    p = realloc(buf[0], cap * itemsize)
    if p == NULL:
        with gil:
            raise MemoryError()
    buf[0] = p
    capacity[0] = cap
    return 0


# ---------------------------------------------------------------- inline helpers, from Python
def pa_step_value(int variant, double loss, double sqnorm, double C):
    """The compiled ``pa_step`` (inline in _core.pxd), callable from Python."""
    return pa_step(variant, loss, sqnorm, C)


cdef class ScaledVectorArray:
    """A :class:`refsvm.core.scaled.ScaledVector` held by the compiled ``sv_*`` functions.

    The twins embed the ``ScaledVector`` struct directly; this class exposes the same
    operations to Python (tests compare it with the reference, step by step).
    """

    cdef ScaledVector sv
    cdef object v_arr

    def __init__(self, Py_ssize_t n, bint track_norm=False):
        self.v_arr = np.zeros(n)
        cdef double[::1] v = self.v_arr
        sv_init(&self.sv, &v[0] if n else NULL, n, track_norm)

    def _row(self, x):
        if isinstance(x, SparseRow):
            return (np.ascontiguousarray(x.indices, dtype=np.int32),
                    np.ascontiguousarray(x.data, dtype=np.float64), True)
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape[0] != self.sv.n:
            raise ValueError(f"row of length {x.shape[0]}, expected {self.sv.n}")
        return None, x, False

    def dot(self, x):
        """<w, x> (sv_dot)."""
        return self.sv.s * self._vdot(x)

    def _vdot(self, x):
        """<v, x> (row_dot on the direction)."""
        cdef const int[::1] xi
        cdef const double[::1] xv
        idx, val, sparse = self._row(x)
        xv = val
        if sparse:
            xi = idx
            return row_dot(self.sv.v, &xi[0] if xi.shape[0] else NULL,
                           &xv[0] if xv.shape[0] else NULL, xv.shape[0])
        return row_dot(self.sv.v, NULL, &xv[0] if xv.shape[0] else NULL, xv.shape[0])

    def scale(self, double a):
        sv_scale(&self.sv, a)

    def add(self, double a, x, vx=None):
        cdef const int[::1] xi
        cdef const double[::1] xv
        if vx is None:
            vx = self._vdot(x)
        idx, val, sparse = self._row(x)
        xv = val
        if sparse:
            xi = idx
            sv_add_row(&self.sv, a, &xi[0] if xi.shape[0] else NULL,
                       &xv[0] if xv.shape[0] else NULL, xv.shape[0], vx)
        else:
            sv_add_row(&self.sv, a, NULL, &xv[0] if xv.shape[0] else NULL, xv.shape[0], vx)

    def sqnorm(self):
        return sv_sqnorm(&self.sv)

    def fold(self, double threshold=1e-9):
        sv_fold(&self.sv, threshold)

    @property
    def s(self):
        return self.sv.s

    @property
    def vnorm2(self):
        return self.sv.vnorm2

    @property
    def v(self):
        return self.v_arr.copy()

    @property
    def w(self):
        return self.sv.s * self.v_arr


# ---------------------------------------------------------------- row store
cdef class RowStore:
    """Growable store of examples, dense or CSR, in C buffers (appendable nogil).

    Parameters
    ----------
    n_features : int
    sparse : bool
        Store CSR rows (True) or dense rows (False).
    """

    def __cinit__(self, Py_ssize_t n_features, bint sparse=False):
        self.n_features = n_features
        self.sparse = sparse
        self.n_rows = 0
        self.capacity = 0
        self.nnz_capacity = 0
        self.dense = NULL
        self.data = NULL
        self.indices = NULL
        self.sqn = NULL
        self.wide = False
        self.indptr = <Py_ssize_t*> malloc(sizeof(Py_ssize_t))
        if self.indptr == NULL:
            raise MemoryError()
        self.indptr[0] = 0

    def __dealloc__(self):
        free(self.dense)
        free(self.data)
        free(self.indices)
        free(self.indptr)
        free(self.sqn)

    cdef int _reserve(self, Py_ssize_t rows, Py_ssize_t nnz) except -1 nogil:
        cdef Py_ssize_t cap
        cdef void* p
        if rows > self.capacity:
            cap = max(rows, 2 * self.capacity, 16)
            if self.sparse:
                p = realloc(self.indptr, (cap + 1) * sizeof(Py_ssize_t))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.indptr = <Py_ssize_t*> p
                p = realloc(self.sqn, cap * sizeof(double))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.sqn = <double*> p
            else:
                p = realloc(self.dense, cap * max(self.n_features, 1) * sizeof(double))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.dense = <double*> p
                p = realloc(self.sqn, cap * sizeof(double))
                if p == NULL:
                    with gil:
                        raise MemoryError()
                self.sqn = <double*> p
            self.capacity = cap
        if self.sparse and nnz > self.nnz_capacity:
            cap = max(nnz, 2 * self.nnz_capacity, 64)
            p = realloc(self.data, cap * sizeof(double))
            if p == NULL:
                with gil:
                    raise MemoryError()
            self.data = <double*> p
            p = realloc(self.indices, cap * sizeof(int))
            if p == NULL:
                with gil:
                    raise MemoryError()
            self.indices = <int*> p
            self.nnz_capacity = cap
        return 0

    cdef int append_dense(self, const double* x) except -1 nogil:
        self._reserve(self.n_rows + 1, 0)
        memcpy(self.dense + self.n_rows * self.n_features, x, self.n_features * sizeof(double))
        self.sqn[self.n_rows] = dense_dot(x, x, self.n_features)
        self.n_rows += 1
        return 0

    cdef int append_csr(self, const int* idx, const double* val, Py_ssize_t nnz) except -1 nogil:
        cdef Py_ssize_t start = self.indptr[self.n_rows], p
        self._reserve(self.n_rows + 1, start + nnz)
        memcpy(self.data + start, val, nnz * sizeof(double))
        memcpy(self.indices + start, idx, nnz * sizeof(int))
        self.indptr[self.n_rows + 1] = start + nnz
        self.sqn[self.n_rows] = seq_sqnorm(val, nnz)
        if not self.wide:
            for p in range(nnz):
                if not 0 <= idx[p] < self.n_features:
                    self.wide = True
                    break
        self.n_rows += 1
        return 0

    cdef int keep(self, const Py_ssize_t* rows, Py_ssize_t n) except -1 nogil:
        """Keep only the listed rows, in that order (rows must be increasing)."""
        cdef Py_ssize_t r, src, start, nnz, pos = 0
        for r in range(n):
            src = rows[r]
            if self.sparse:
                start = self.indptr[src]
                nnz = self.indptr[src + 1] - start
                if pos != start:
                    memcpy(self.data + pos, self.data + start, nnz * sizeof(double))
                    memcpy(self.indices + pos, self.indices + start, nnz * sizeof(int))
                self.indptr[r] = pos
                self.sqn[r] = self.sqn[src]
                pos += nnz
            elif src != r:
                memcpy(self.dense + r * self.n_features, self.dense + src * self.n_features,
                       self.n_features * sizeof(double))
                self.sqn[r] = self.sqn[src]
        if self.sparse:
            self.indptr[n] = pos
        self.n_rows = n
        return 0

    cdef double kernel_rows(self, const KernelSpec* k, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t d = self.n_features
        if k.kind == 1:             # the kept squared norms: the same values, fewer sums
            if self.sparse:
                return exp(-k.gamma * _csr_rbf_dist(self, i, self.sqn[j], csr_dot_csr(
                    self.indices + self.indptr[i], self.data + self.indptr[i],
                    self.indptr[i + 1] - self.indptr[i], self.indices + self.indptr[j],
                    self.data + self.indptr[j], self.indptr[j + 1] - self.indptr[j]),
                    self.indices + self.indptr[j], self.data + self.indptr[j],
                    self.indptr[j + 1] - self.indptr[j]))
            return _rbf_dense(k, self.dense + i * d, self.dense + j * d, d, self.sqn[i],
                              self.sqn[j])
        if self.sparse:
            return kernel_csr(k, self.indices + self.indptr[i], self.data + self.indptr[i],
                              self.indptr[i + 1] - self.indptr[i],
                              self.indices + self.indptr[j], self.data + self.indptr[j],
                              self.indptr[j + 1] - self.indptr[j])
        return kernel_dense(k, self.dense + i * d, self.dense + j * d, d)

    cdef double kernel_row_dense(self, const KernelSpec* k, Py_ssize_t i,
                                 const double* x) noexcept nogil:
        if k.kind == 1:
            return _rbf_dense(k, self.dense + i * self.n_features, x, self.n_features,
                              self.sqn[i], -1.0)
        return kernel_dense(k, self.dense + i * self.n_features, x, self.n_features)

    cdef double kernel_row_csr(self, const KernelSpec* k, Py_ssize_t i, const int* xi,
                               const double* xv, Py_ssize_t xn) noexcept nogil:
        if k.kind == 1:
            return exp(-k.gamma * _csr_rbf_dist(self, i, seq_sqnorm(xv, xn), csr_dot_csr(
                self.indices + self.indptr[i], self.data + self.indptr[i],
                self.indptr[i + 1] - self.indptr[i], xi, xv, xn), xi, xv, xn))
        return kernel_csr(k, self.indices + self.indptr[i], self.data + self.indptr[i],
                          self.indptr[i + 1] - self.indptr[i], xi, xv, xn)

    # ---- Python-level helpers (tests, estimators, pickling) ----
    def append(self, X, Py_ssize_t i):
        """Append row ``i`` of a C-contiguous float64 array or a CSR matrix."""
        cdef const double[:, ::1] Xd
        cdef const double[::1] data
        cdef const int[::1] indices
        cdef Py_ssize_t start, stop
        if self.sparse:
            data = X.data
            indices = X.indices
            start = X.indptr[i]
            stop = X.indptr[i + 1]
            self.append_csr(&indices[start] if stop > start else NULL,
                            &data[start] if stop > start else NULL, stop - start)
        else:
            Xd = X
            self.append_dense(&Xd[i, 0])

    def keep_rows(self, rows):
        cdef Py_ssize_t[::1] r = np.ascontiguousarray(rows, dtype=np.intp)
        if r.shape[0]:
            self.keep(&r[0], r.shape[0])
        else:
            self.n_rows = 0
            if self.sparse:
                self.indptr[0] = 0

    def get_row(self, Py_ssize_t i):
        """Row ``i`` as a dense array or a SparseRow (copies)."""
        cdef Py_ssize_t j, start, stop
        if i < 0 or i >= self.n_rows:
            raise IndexError(i)
        if self.sparse:
            start, stop = self.indptr[i], self.indptr[i + 1]
            idx = np.empty(stop - start, dtype=np.int32)
            val = np.empty(stop - start, dtype=np.float64)
            for j in range(stop - start):
                idx[j] = self.indices[start + j]
                val[j] = self.data[start + j]
            return SparseRow(idx, val)
        out = np.empty(self.n_features, dtype=np.float64)
        for j in range(self.n_features):
            out[j] = self.dense[i * self.n_features + j]
        return out

    def to_matrix(self, rows=None):
        """The stored rows (all, or those listed) as a 2-D array or a CSR matrix."""
        if rows is None:
            rows = range(self.n_rows)
        got = [self.get_row(i) for i in rows]
        if not self.sparse:
            if not got:
                return np.zeros((0, self.n_features))
            return np.vstack(got)
        indptr = np.zeros(len(got) + 1, dtype=np.int64)
        for r, row in enumerate(got):
            indptr[r + 1] = indptr[r] + row.indices.shape[0]
        if got:
            indices = np.concatenate([g.indices for g in got])
            data = np.concatenate([g.data for g in got])
        else:
            indices, data = np.zeros(0, np.int32), np.zeros(0)
        return sp.csr_matrix((data, indices, indptr), shape=(len(got), self.n_features))

    def expansion(self, CKernel kern, coef, X, double start=0.0):
        """f(x) = start + sum_j coef[j] k(row_j, x) for every row of X (same format as the
        store), added left to right from ``start``.

        Only the first ``len(coef)`` stored rows take part; rows whose
        coefficient is 0 are skipped.  Prediction: the evaluations are not counted.
        """
        cdef const double[::1] c = np.ascontiguousarray(coef, dtype=np.float64)
        cdef Py_ssize_t r, j, m = X.shape[0], n = c.shape[0]
        cdef double f
        cdef double[::1] out = np.zeros(m)
        cdef const double[:, ::1] Xd
        cdef const double[::1] data
        cdef const int[::1] indices
        cdef const Py_ssize_t[::1] indptr
        cdef const int* xi
        cdef const double* xv
        cdef const Py_ssize_t[::1] pos
        cdef double[::1] kv
        if n > self.n_rows:
            raise ValueError("more coefficients than stored rows")
        if not self.sparse and m and X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, the store {self.n_features}")
        if m == 0:
            return np.asarray(out)
        pos = np.flatnonzero(np.asarray(c)).astype(np.intp)   # the rows with c[j] != 0
        kv = np.empty(max(pos.shape[0], 1))
        # k(row pos[j], x) by kernel_row_many (kernel_row_csr / kernel_row_dense's values),
        # summed with j ascending as before; prediction: the evaluations are not counted
        if self.sparse:
            data = np.ascontiguousarray(X.data, dtype=np.float64)
            indices = np.ascontiguousarray(X.indices, dtype=np.int32)
            indptr = np.ascontiguousarray(X.indptr, dtype=np.intp)
            with nogil:
                for r in range(m):
                    xi = &indices[indptr[r]] if indptr[r + 1] > indptr[r] else NULL
                    xv = &data[indptr[r]] if indptr[r + 1] > indptr[r] else NULL
                    kernel_row_many(kern, self, &pos[0] if pos.shape[0] else NULL,
                                    pos.shape[0], xi, xv, indptr[r + 1] - indptr[r], &kv[0])
                    kern.n_evals -= pos.shape[0]
                    f = start
                    for j in range(pos.shape[0]):
                        f += c[pos[j]] * kv[j]
                    out[r] = f
        else:
            Xd = X
            with nogil:
                for r in range(m):
                    kernel_row_many(kern, self, &pos[0] if pos.shape[0] else NULL,
                                    pos.shape[0], NULL, &Xd[r, 0], self.n_features, &kv[0])
                    kern.n_evals -= pos.shape[0]
                    f = start
                    for j in range(pos.shape[0]):
                        f += c[pos[j]] * kv[j]
                    out[r] = f
        return np.asarray(out)

    def __len__(self):
        return self.n_rows

    def __reduce__(self):
        return (_rebuild_store, (self.n_features, self.sparse, self.to_matrix()))


def _rebuild_store(n_features, sparse, M):
    s = RowStore(n_features, sparse)
    if sparse:
        M = sp.csr_matrix(M)
        M.indices = M.indices.astype(np.int32)
    for i in range(M.shape[0]):
        s.append(M, i)
    return s


# ---------------------------------------------------------------- counting kernel
cdef class CKernel:
    """Compiled twin of :class:`refsvm.core.kernels.Kernel` (counts ``n_evals``)."""

    def __init__(self, kind="rbf", gamma=1.0, degree=3, coef0=0.0):
        if kind not in KERNEL_CODES:
            raise ValueError(f"unknown kernel {kind!r}")
        self.spec.kind = KERNEL_CODES[kind]
        self.spec.gamma = gamma
        self.spec.degree = degree
        self.spec.coef0 = coef0
        self.n_evals = 0

    @property
    def kind(self):
        return ("linear", "rbf", "poly")[self.spec.kind]

    @property
    def gamma(self):
        return self.spec.gamma

    @property
    def degree(self):
        return self.spec.degree

    @property
    def coef0(self):
        return self.spec.coef0

    cdef double k_rows(self, RowStore s, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        self.n_evals += 1
        return s.kernel_rows(&self.spec, i, j)

    cdef double k_row_dense(self, RowStore s, Py_ssize_t i, const double* x) noexcept nogil:
        self.n_evals += 1
        return s.kernel_row_dense(&self.spec, i, x)

    cdef double k_row_csr(self, RowStore s, Py_ssize_t i, const int* xi, const double* xv,
                          Py_ssize_t xn) noexcept nogil:
        self.n_evals += 1
        return s.kernel_row_csr(&self.spec, i, xi, xv, xn)

    def __call__(self, x, z):
        """k(x, z) for two dense arrays or two SparseRows; one counted evaluation."""
        cdef const double[::1] xd, zd, xv, zv
        cdef const int[::1] xi, zi
        self.n_evals += 1
        if isinstance(x, SparseRow):
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            zi = np.ascontiguousarray(z.indices, dtype=np.int32)
            zv = np.ascontiguousarray(z.data, dtype=np.float64)
            return kernel_csr(&self.spec, &xi[0] if xi.shape[0] else NULL,
                              &xv[0] if xv.shape[0] else NULL, xi.shape[0],
                              &zi[0] if zi.shape[0] else NULL,
                              &zv[0] if zv.shape[0] else NULL, zi.shape[0])
        xd = np.ascontiguousarray(x, dtype=np.float64)
        zd = np.ascontiguousarray(z, dtype=np.float64)
        if xd.shape[0] != zd.shape[0]:
            raise ValueError("rows of different lengths")
        if xd.shape[0] == 0:
            return kernel_dense(&self.spec, NULL, NULL, 0)
        return kernel_dense(&self.spec, &xd[0], &zd[0], xd.shape[0])

    def row(self, RowStore store, x, bint many=False):
        """[k(store[i], x) for every stored row], counted as n_rows evaluations: by
        ``k_row_csr`` / ``k_row_dense`` one by one, or (``many``) by one
        ``kernel_row_many`` call (the same values)."""
        cdef Py_ssize_t i, n = store.n_rows
        cdef double[::1] out = np.empty(max(n, 1))
        cdef const double[::1] xd, xv
        cdef const int[::1] xi
        if store.sparse:
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            if many:
                kernel_row_many(self, store, NULL, n, &xi[0] if xi.shape[0] else NULL,
                                &xv[0] if xv.shape[0] else NULL, xi.shape[0], &out[0])
            else:
                for i in range(n):
                    out[i] = self.k_row_csr(store, i, &xi[0] if xi.shape[0] else NULL,
                                            &xv[0] if xv.shape[0] else NULL, xi.shape[0])
        else:
            xd = np.ascontiguousarray(x, dtype=np.float64)
            if xd.shape[0] != store.n_features:
                raise ValueError(f"x has {xd.shape[0]} features, the store "
                                 f"{store.n_features}")
            if many:
                kernel_row_many(self, store, NULL, n, NULL, &xd[0] if xd.shape[0] else NULL,
                                xd.shape[0], &out[0])
            else:
                for i in range(n):
                    out[i] = self.k_row_dense(store, i, &xd[0])
        return np.asarray(out)[:n]

    def rows_pairs(self, RowStore store, Py_ssize_t z, pos, bint many=True):
        """[k(store[pos[j]], store[z])]: by ``kernel_many`` (one call), or (``many``
        False) by ``k_rows`` one by one; len(pos) counted evaluations either way."""
        cdef const Py_ssize_t[::1] p = np.ascontiguousarray(pos, dtype=np.intp)
        cdef Py_ssize_t j, m = p.shape[0]
        if not 0 <= z < store.n_rows or (m and not (0 <= np.min(pos) and np.max(pos) < store.n_rows)):
            raise IndexError("row id out of range")
        cdef double[::1] out = np.empty(max(m, 1))
        if many:
            kernel_many(self, store, z, &p[0] if m else NULL, m, &out[0])
        else:
            for j in range(m):
                out[j] = self.k_rows(store, p[j], z)
        return np.asarray(out)[:m]

    def rows_pairs4(self, RowStore store, z, pos):
        """[[k(store[pos[j]], store[z[r]]) for j] for r < 4] by one ``kernel_many4`` call
        (4 len(pos) counted evaluations): the values of ``rows_pairs`` for each z[r]."""
        cdef const Py_ssize_t[::1] zz = np.ascontiguousarray(z, dtype=np.intp)
        cdef const Py_ssize_t[::1] p = np.ascontiguousarray(pos, dtype=np.intp)
        cdef Py_ssize_t r, m = p.shape[0]
        cdef double* outs[4]
        if zz.shape[0] != 4:
            raise ValueError("rows_pairs4 takes four rows z")
        if (not (0 <= np.min(z) and np.max(z) < store.n_rows)
                or (m and not (0 <= np.min(pos) and np.max(pos) < store.n_rows))):
            raise IndexError("row id out of range")
        out = np.empty((4, max(m, 1)))
        cdef double[:, ::1] o = out
        for r in range(4):
            outs[r] = &o[r, 0]
        kernel_many4(self, store, &zz[0], &p[0] if m else NULL, m, outs)
        return out[:, :m]


# ---------------------------------------------------------------- row checks
# The row checks of run_checked, in C: written as counts (no branch) so that they
# vectorise, and compiled twice where GCC can (AVX2 and the baseline, chosen at load
# time): with SSE2 alone GCC does not vectorise the double comparison, and the check
# would cost a third of a linear step instead of a few per cent.
cdef extern from *:
    """
    #include <math.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    #define REFSVM_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define REFSVM_CLONES
    #endif
    /* some |v_p| is not <= limit: NaN, an infinity or a value above the bound */
    REFSVM_CLONES static int refsvm_values_bad(const double* v, Py_ssize_t n, double limit) {
        Py_ssize_t p;
        long long bad = 0;
        #pragma GCC unroll 4
        for (p = 0; p < n; p++) bad |= !(fabs(v[p]) <= limit);
        return bad != 0;
    }
    /* some column index is outside [0, d) (one unsigned comparison each) */
    REFSVM_CLONES static int refsvm_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d) {
        Py_ssize_t p;
        long long bad = 0;
        /* a negative index is a large unsigned one; d >= 2**31 leaves only those bad */
        unsigned int ud = d > 2147483647 ? 2147483648u : (unsigned int) d;
        #pragma GCC unroll 4
        for (p = 0; p < n; p++) bad |= ((unsigned int) idx[p] >= ud);
        return bad != 0;
    }
    """
    bint refsvm_values_bad(const double* v, Py_ssize_t n, double limit) noexcept nogil
    bint refsvm_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d) noexcept nogil


cdef bint row_values_bad(const double* v, Py_ssize_t n, double limit) noexcept nogil:
    """Some |v_p| is not <= limit: NaN, an infinity or a value above the bound."""
    return refsvm_values_bad(v, n, limit)


cdef bint row_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d) noexcept nogil:
    """Some column index is outside [0, d)."""
    return refsvm_indices_bad(idx, n, d)


def row_check_value(x, double limit, Py_ssize_t n_features):
    """The compiled row check, callable from Python (tests): True when the dense row or
    SparseRow ``x`` is bad (see ``StreamLearner.run_checked``)."""
    cdef const double[::1] xv
    cdef const int[::1] xi
    if isinstance(x, SparseRow):
        xi = np.ascontiguousarray(x.indices, dtype=np.int32)
        xv = np.ascontiguousarray(x.data, dtype=np.float64)
        if xv.shape[0] == 0:
            return False
        return bool(row_values_bad(&xv[0], xv.shape[0], limit)
                    or row_indices_bad(&xi[0], xi.shape[0], n_features))
    xv = np.ascontiguousarray(x, dtype=np.float64)
    if xv.shape[0] == 0:
        return False
    return bool(row_values_bad(&xv[0], xv.shape[0], limit))


def csr_row_dot_values(w, indices, data):
    """The CSR row arithmetic, callable from Python (tests): ``(row_dot,
    row_dot_sqnorm_trusted and its squared norm, row_dot_sqnorm and its squared norm and
    bad-index flag)`` of the row (``indices``, ``data``) against w (d = len(w) >= 1).  An
    index outside [0, d) is read as 0 by the checked form only; the others must not be
    given one."""
    cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
    cdef const int[::1] xi = np.ascontiguousarray(indices, dtype=np.int32)
    cdef const double[::1] xv = np.ascontiguousarray(data, dtype=np.float64)
    cdef Py_ssize_t n = xv.shape[0], d = wv.shape[0]
    cdef double dot = 0.0, dot_t = 0.0, sq_t = 0.0, dot_c, sq_c
    cdef bint bad = False
    if xi.shape[0] != n or d < 1:
        raise ValueError("indices and data differ in length, or w is empty")
    if n == 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, False
    if not row_indices_bad(&xi[0], n, d):  # the unchecked forms only on a good row
        dot = row_dot(&wv[0], &xi[0], &xv[0], n)
        dot_t = row_dot_sqnorm_trusted(&wv[0], &xi[0], &xv[0], n, &sq_t)
    dot_c = row_dot_sqnorm(&wv[0], &xi[0], &xv[0], n, d, &sq_c, &bad)
    return dot, dot_t, sq_t, dot_c, sq_c, bool(bad)


# ---------------------------------------------------------------- CSR input
cdef object csr_view(CSRView* view, object X):
    """Point ``view`` at the arrays of the CSR matrix X: float64 data, int32 column indices,
    an int32 or int64 ``indptr`` (read as it is: no pass over X when the dtypes already
    fit; other dtypes are converted).  Returns the arrays the view points into: keep that
    object alive while the view is used."""
    cdef cnp.ndarray data = np.ascontiguousarray(X.data, dtype=np.float64)
    cdef cnp.ndarray indices = np.ascontiguousarray(X.indices, dtype=np.int32)
    cdef cnp.ndarray indptr = X.indptr
    if not (indptr.dtype == np.int32 and indptr.flags.c_contiguous):
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    view.data = <const double*> cnp.PyArray_DATA(data)
    view.indices = <const int*> cnp.PyArray_DATA(indices)
    view.n_rows = indptr.shape[0] - 1
    if indptr.dtype == np.int32:
        view.indptr32 = <const int*> cnp.PyArray_DATA(indptr)
        view.indptr64 = NULL
    else:
        view.indptr32 = NULL
        view.indptr64 = <const long long*> cnp.PyArray_DATA(indptr)
    return (data, indices, indptr)


def max_row_sqnorm(X, double limit, Py_ssize_t n_features):
    """``(R2, n_done)``: the largest squared norm ``||x_j||^2`` over the rows of X
    (C-contiguous float64 array, or CSR with float64 data and int32 indices), each row
    checked as :meth:`StreamLearner.run_checked` checks it (values finite with
    ``|x_j| <= limit``; CSR column indices in ``[0, n_features)``); stops before the first
    bad row: rows ``0 .. n_done - 1`` were read, ``R2`` is their maximum, and row
    ``n_done`` (when ``n_done < n``) is bad.  One compiled read of X: the radius that the
    Perceptron's ``fit`` needs before its first pass, with the input check of that pass.
    Squared norms as ``row_sqnorm`` (four partial sums), as the compiled Perceptron's step."""
    cdef const double[:, ::1] Xd
    cdef CSRView view
    cdef const int* xi
    cdef const double* xv
    cdef Py_ssize_t i = 0, n = X.shape[0], nnz, d = n_features
    cdef double R2 = 0.0, sq
    if sp.issparse(X):
        keep = csr_view(&view, X)
        with nogil:
            while i < n:
                nnz = csr_row(&view, i, &xi, &xv)
                if nnz:
                    if row_indices_bad(xi, nnz, d) or row_values_bad(xv, nnz, limit):
                        break
                    sq = row_sqnorm(xv, nnz)
                    if sq > R2:
                        R2 = sq
                i += 1
    else:
        Xd = X
        if Xd.shape[1] != d:
            raise ValueError(f"X has {Xd.shape[1]} features, expected {d}")
        if d == 0:
            return 0.0, n
        with nogil:
            while i < n:
                if row_values_bad(&Xd[i, 0], d, limit):
                    break
                sq = row_sqnorm(&Xd[i, 0], d)
                if sq > R2:
                    R2 = sq
                i += 1
    return R2, i


def two_values(y):
    """The distinct values of a 1-D float64 or int64 array y, sorted, when it holds one or
    two (the common binary stream), in one compiled read without a branch per value (the
    labels of a stream alternate at random: a branch would be mispredicted half the time);
    None otherwise (more values, NaN, another dtype or layout: ask ``np.unique``)."""
    cdef const double[::1] yd
    cdef const long long[::1] yl
    cdef Py_ssize_t i = 1, j, n
    cdef double a, b, v
    cdef long long la, lb, lv
    cdef double bad = 0.0        # the count of other values (a double: the loop vectorises)
    cdef int lbad = 0
    if not isinstance(y, np.ndarray) or y.ndim != 1 or y.shape[0] == 0:
        return None
    if y.dtype == np.float64 and y.flags.c_contiguous:
        yd = y
        n = yd.shape[0]
        a = yd[0]
        if a != a:
            return None
        with nogil:
            while i < n and yd[i] == a:
                i += 1
            b = yd[i] if i < n else a
            for j in range(i, n):
                v = yd[j]
                bad += 0.0 if (v == a) | (v == b) else 1.0   # NaN is neither
        if bad:
            return None
        return np.array([min(a, b), max(a, b)] if b != a else [a], dtype=y.dtype)
    if y.dtype == np.int64 and y.flags.c_contiguous:
        yl = y
        n = yl.shape[0]
        la = yl[0]
        with nogil:
            while i < n and yl[i] == la:
                i += 1
            lb = yl[i] if i < n else la
            for j in range(i, n):
                lv = yl[j]
                lbad |= (lv != la) & (lv != lb)
        if lbad:
            return None
        return np.array([min(la, lb), max(la, lb)] if lb != la else [la], dtype=y.dtype)
    return None


# ---------------------------------------------------------------- stream driver
cdef inline Py_ssize_t* _order_view(object order, Py_ssize_t* first, Py_ssize_t* n,
                                    list keep) except? NULL:
    """The examples to learn: a ``range`` with step 1 (no array: ``*first`` is its start,
    NULL returned) or an array of row numbers (its intp buffer, kept alive in ``keep``)."""
    cdef cnp.ndarray od
    if isinstance(order, range) and order.step == 1:
        first[0] = order.start
        n[0] = max(0, order.stop - order.start)
        return NULL
    od = np.ascontiguousarray(order, dtype=np.intp)
    keep.append(od)
    first[0] = 0
    n[0] = od.shape[0]
    return <Py_ssize_t*> cnp.PyArray_DATA(od) if n[0] else NULL


cdef inline object _result(bint checked, long long changes, Py_ssize_t n_done):
    """What ``run`` (changes) and ``run_checked`` ((changes, n_done)) return."""
    if checked:
        return changes, n_done
    return changes


cdef object _drive(StreamLearner self, X, y, order, bint checked, double limit):
    """``run`` (``checked`` False) and ``run_checked`` of ``self``."""
    cdef const double[:, ::1] Xd
    cdef CSRView view
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    cdef list keep = []
    cdef Py_ssize_t first = 0, n = 0
    cdef const Py_ssize_t* od = _order_view(order, &first, &n, keep)
    cdef Py_ssize_t t = 0, i, nnz, d = self.n_features
    cdef long long changes = 0
    cdef int r
    cdef const int* xi
    cdef const double* xv
    if n == 0:
        return _result(checked, 0, 0)
    if self.sparse:
        keep.append(csr_view(&view, X))
        with nogil:
            while t < n:
                i = od[t] if od != NULL else first + t
                nnz = csr_row(&view, i, &xi, &xv)
                if checked:
                    r = self._step_checked(xi, xv, nnz, yv[i], limit)
                    if r == STEP_BAD:
                        break
                else:
                    r = self._step(xi, xv, nnz, yv[i])
                changes += r
                t += 1
    else:
        Xd = X
        if Xd.shape[1] != d:
            raise ValueError(f"X has {Xd.shape[1]} features, expected {d}")
        if Xd.shape[0] == 0:
            return _result(checked, 0, 0)
        with nogil:
            while t < n:
                i = od[t] if od != NULL else first + t
                xv = &Xd[i, 0] if d else NULL
                if checked:
                    r = self._step_checked(NULL, xv, d, yv[i], limit)
                    if r == STEP_BAD:
                        break
                else:
                    r = self._step(NULL, xv, d, yv[i])
                changes += r
                t += 1
    return _result(checked, changes, t)


cdef class StreamLearner:
    """Base of the compiled states that learn one example at a time.

    A subclass sets ``n_features`` and ``sparse`` and implements ``_step`` for one example
    in the core's row convention: a CSR row (indices ``xi``, values ``xv``, ``nnz``
    entries) when ``sparse``, else the ``n_features`` values at ``xv`` (``xi`` NULL,
    ``nnz == n_features``).  ``_step`` returns 1 when the example changed the model,
    else 0.  ``step`` (one example from Python) and ``run`` (a whole stream, without the
    GIL) are written once, here; the reference driver is
    :class:`refsvm.core.stream.StreamLearner`.

    ``run_checked`` calls ``_step_checked``: here the row check, then ``_step``.  A state
    whose step reads the whole row before it changes anything (the linear twins: <w, x>
    first) overrides it with the check fused into that read (``row_dot_sqnorm`` and
    ``row_screen``: one compare per CSR index in the loop that uses it, the squared norm
    beside the dot; for a dense row with any finite value accepted, <w, x> alone,
    ``row_bad_by_dot``), so that the checked pass costs about what the plain one does.
    """

    cdef int _step(self, const int* xi, const double* xv, Py_ssize_t nnz,
                   double y) except -1 nogil:
        with gil:
            raise NotImplementedError("StreamLearner._step")

    cdef int _step_checked(self, const int* xi, const double* xv, Py_ssize_t nnz,
                           double y, double limit) except -1 nogil:
        """The row check, then ``_step``: STEP_BAD (nothing changed) for a bad row."""
        if nnz > 0:
            if xi != NULL and row_indices_bad(xi, nnz, self.n_features):
                return STEP_BAD
            if row_values_bad(xv, nnz, limit):
                return STEP_BAD
        return self._step(xi, xv, nnz, y)

    def step(self, x, double y):
        """Learn one example: x a dense row, or a :class:`refsvm.core.kernels.SparseRow`.
        Returns 1 when the model changed, else 0."""
        cdef const double[::1] xd, xv
        cdef const int[::1] xi
        if self.sparse:
            xi = np.ascontiguousarray(x.indices, dtype=np.int32)
            xv = np.ascontiguousarray(x.data, dtype=np.float64)
            return self._step(&xi[0] if xi.shape[0] else NULL,
                              &xv[0] if xv.shape[0] else NULL, xi.shape[0], y)
        xd = np.ascontiguousarray(x, dtype=np.float64)
        if xd.shape[0] != self.n_features:
            raise ValueError(f"row of length {xd.shape[0]}, expected {self.n_features}")
        return self._step(NULL, &xd[0] if xd.shape[0] else NULL, self.n_features, y)

    def run(self, X, y, order):
        """Learn the rows of X (C-contiguous float64 array, or CSR) in ``order`` (an array
        of row numbers, or a ``range``); return the number of examples that changed the
        model.

        CSR input: float64 data, int32 column indices, an int32 or int64 ``indptr``
        (read as it is: a call over a slice of ``order`` costs no pass over X)."""
        return _drive(self, X, y, order, False, 0.0)

    def run_checked(self, X, y, order, double limit):
        """``run`` with the input check fused into the pass: each row is checked as it is
        read, before it changes anything -- every value finite with ``|x_j| <= limit``,
        and for CSR every column index in ``[0, n_features)`` (``indptr`` must already be
        valid: non-decreasing, within the index arrays).  Stops before the first bad row.

        Returns ``(changes, n_done)``: the examples ``order[:n_done]`` were learned
        (``changes`` counts their changes); when ``n_done < len(order)``, row
        ``order[n_done]`` is bad and the state is the state after ``order[:n_done]``.
        One pass over X (``_step_checked``).  Reference:
        :meth:`refsvm.core.stream.StreamLearner.run_checked` (which checks each row
        before its step)."""
        return _drive(self, X, y, order, True, limit)

    # ---- the persistence protocol of every state (both twins, one format) ----
    def init_params(self):
        """The constructor's keyword arguments (plain numbers, strings, booleans)."""
        raise NotImplementedError(f"{type(self).__name__}.init_params")

    def save_state(self):
        """Everything learned, as a dict of NumPy arrays and plain scalars, in a format
        that both twins share (so a state saved by one loads into the other)."""
        raise NotImplementedError(f"{type(self).__name__}.save_state")

    def load_state(self, data):
        """Restore what ``save_state`` returned (into a freshly constructed state)."""
        raise NotImplementedError(f"{type(self).__name__}.load_state")

    def __reduce__(self):
        return (restore_state, (type(self), self.init_params(), self.save_state()))


def restore_state(cls, params, data):
    """A state of class ``cls`` built with ``params`` and loaded with ``data`` (the
    unpickling half of the persistence protocol; the reference's is the same)."""
    obj = cls(**params)
    obj.load_state(data)
    return obj


# ================================================================ bordered inverse
# Section owned by the IDSVM family: Python access to the inline bordered-inverse
# functions of _core.pxd (for tests against refsvm.core.bordered; the twins call the
# inline functions directly).

def bordered_start_array(double a, double q):
    """The compiled ``bordered_start``: inverse of [[0, a], [a, q]]."""
    out = np.zeros((2, 2))
    cdef double[:, ::1] R = out
    bordered_start(&R[0, 0], 2, a, q)
    return out


def bordered_grow_array(Rinv, beta, double kappa):
    """The compiled ``bordered_grow`` on copies: the inverse grown by one row/column."""
    cdef Py_ssize_t n = Rinv.shape[0]
    out = np.zeros((n + 1, n + 1))
    out[:n, :n] = Rinv
    b = np.zeros(n + 1)
    b[:n] = beta
    cdef double[:, ::1] R = out
    cdef double[::1] bv = b
    bordered_grow(&R[0, 0], n + 1, n, &bv[0], kappa)
    return out


def bordered_shrink_array(Rinv, Py_ssize_t p, double eps):
    """The compiled ``bordered_shrink`` on a copy: the inverse without row/column p, or
    None when the pivot is too small."""
    cdef Py_ssize_t n = Rinv.shape[0]
    out = np.array(Rinv, dtype=np.float64, order="C", copy=True)
    work = np.empty(n)
    cdef double[:, ::1] R = out
    cdef double[::1] w = work
    if bordered_shrink(&R[0, 0], n, n, p, eps, &w[0]):
        return None
    return out[: n - 1, : n - 1].copy()


def bordered_max_abs_value(R, Py_ssize_t n):
    """The compiled ``bordered_max_abs`` of the leading n x n block of R (rows of R as
    stored, leading dimension its number of columns)."""
    cdef const double[:, ::1] Rv = np.ascontiguousarray(R, dtype=np.float64)
    if n < 0 or n > Rv.shape[0] or n > Rv.shape[1]:
        raise ValueError(f"n = {n} outside the {Rv.shape[0]} x {Rv.shape[1]} matrix")
    if n == 0:
        return 0.0
    return bordered_max_abs(&Rv[0, 0], Rv.shape[1], n)


def bordered_drift_value(Rinv, y, KS, S):
    """The compiled ``bordered_drift`` of Rinv against M = [[0, y_S'], [y_S, Q_SS]],
    with Q read from the kernel columns ``KS`` (row = example id, column = position
    in S), as the twins hold them."""
    cdef const double[:, ::1] R = np.ascontiguousarray(Rinv, dtype=np.float64)
    cdef const double[::1] yv = np.ascontiguousarray(y, dtype=np.float64)
    cdef const Py_ssize_t[::1] Sv = np.ascontiguousarray(S, dtype=np.intp)
    cols = [np.ascontiguousarray(KS[:, j], dtype=np.float64) for j in range(len(S))]
    cdef Py_ssize_t k = Sv.shape[0], j
    cdef double** cp = <double**> malloc(max(k, 1) * sizeof(double*))
    cdef double[::1] c
    u = np.empty(k + 1)
    w = np.empty(k + 1)
    cdef double[::1] uv = u, wv = w
    if cp == NULL:
        raise MemoryError()
    try:
        for j in range(k):
            c = cols[j]
            cp[j] = &c[0]
        return bordered_drift(&R[0, 0], R.shape[1], k, &yv[0], &Sv[0], cp, &uv[0], &wv[0])
    finally:
        free(cp)


def cols_matvec_array(KS, v, bint back=False):
    """The compiled sweep ``refsvm_cols_matvec``: out = KS v over the columns of ``KS``
    (n x k), every row's sum from 0 left to right; ``back`` walks the row blocks from the
    last (the same sums)."""
    cols = [np.ascontiguousarray(KS[:, j], dtype=np.float64) for j in range(KS.shape[1])]
    cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
    cdef Py_ssize_t k = len(cols), n = KS.shape[0], j
    cdef double** cp = <double**> malloc(max(k, 1) * sizeof(double*))
    cdef const double[::1] c
    out = np.empty(n)
    cdef double[::1] o = out
    if cp == NULL:
        raise MemoryError()
    try:
        for j in range(k):
            c = cols[j]
            cp[j] = <double*> &c[0]
        if n:
            refsvm_cols_matvec(&o[0], cp, &vv[0] if k else NULL, k, n, back)
        return out
    finally:
        free(cp)


def exp_width(width=None):
    """How many exp values the kernels take at a time: 8 (AVX-512F), 4 (AVX2 and FMA) or 1
    (the C library's exp one by one); each vector form reproduces the library's exp and is
    taken only if it passed the check at import (``refsvm_exp_neg_many``).  ``width``
    sets it (1 always; 4 or 8 only where that form passed: ValueError otherwise), for the
    tests and the benchmark of the gain: the values are the same bits at every width."""
    global refsvm_exp_width
    if width is not None:
        if width not in exp_widths():
            raise ValueError(f"exp width {width!r} is not available here: {exp_widths()}")
        refsvm_exp_width = width
    return refsvm_exp_width


def exp_widths():
    """The widths that passed the check at import (1 always)."""
    return [w for w, ok in ((8, refsvm_exp_ok8), (4, refsvm_exp_ok4), (1, True)) if ok]


def exp_table():
    """The vector exp's table as 256 unsigned 64-bit words (tail, bits) per i < 128."""
    cdef const unsigned long long* t = refsvm_exp_table()
    return np.array([t[i] for i in range(256)], dtype=np.uint64)


def exp_neg_array(d2, double gamma):
    """exp(-gamma * d2) of every value, as the RBF kernels take it (``refsvm_exp_neg_many``:
    the C library's exp bit for bit, ``exp_width()`` values at a time)."""
    out = np.array(d2, dtype=np.float64, order="C", copy=True).ravel()
    cdef double[::1] o = out
    if out.size:
        refsvm_exp_neg_many(&o[0], out.size, gamma)
    return out


refsvm_exp_init()      # the checks once, at import (not raced by the first nogil callers)
refsvm_sqdist_init()


def bordered_beta_array(Rinv, m):
    """The compiled ``bordered_beta``: -Rinv m."""
    cdef const double[:, ::1] R = np.ascontiguousarray(Rinv, dtype=np.float64)
    cdef const double[::1] mv = np.ascontiguousarray(m, dtype=np.float64)
    cdef Py_ssize_t n = R.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    bordered_beta(&R[0, 0], n, n, &mv[0], &o[0])
    return out


def rows_matvec_array(A, v, bint negate=False):
    """The compiled ``rows_matvec``: A' v, each sum left to right; ``negate``: the
    compiled ``bordered_beta_sym``, -A' v."""
    cdef const double[:, ::1] R = np.ascontiguousarray(A, dtype=np.float64)
    cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
    cdef Py_ssize_t n = R.shape[0]
    out = np.empty(n)
    cdef double[::1] o = out
    cdef double** rows = <double**> malloc(max(n, 1) * sizeof(double*))
    if rows == NULL:
        raise MemoryError()
    if n and negate:
        bordered_beta_sym(&R[0, 0], n, n, &vv[0], &o[0], rows)
    elif n:
        rows_matvec(&o[0], &R[0, 0], n, n, &vv[0], rows)
    free(rows)
    return out


def bordered_beta_sym_array(Rinv, m):
    """The compiled ``bordered_beta_sym``: -Rinv' m."""
    return rows_matvec_array(Rinv, m, True)


def bordered_symmetrize_array(Rinv):
    """The compiled ``bordered_symmetrize`` (on a copy)."""
    out = np.array(Rinv, dtype=np.float64, order="C", copy=True)
    cdef double[:, ::1] o = out
    if o.shape[0]:
        bordered_symmetrize(&o[0, 0], o.shape[0], o.shape[0])
    return out


def bordered_pivot_value(double q, m, beta):
    """The compiled ``bordered_pivot``: q + m' beta."""
    cdef const double[::1] mv = np.ascontiguousarray(m, dtype=np.float64)
    cdef const double[::1] bv = np.ascontiguousarray(beta, dtype=np.float64)
    return bordered_pivot(q, &mv[0], &bv[0], mv.shape[0])


def pivot_bound_value(double q, beta, border, root):
    """The compiled ``pivot_bound`` (idx NULL)."""
    cdef const double[::1] bv = np.ascontiguousarray(beta, dtype=np.float64)
    cdef const double[::1] av = np.ascontiguousarray(border, dtype=np.float64)
    cdef const double[::1] rv = np.ascontiguousarray(root, dtype=np.float64)
    cdef Py_ssize_t k = av.shape[0]
    return pivot_bound(q, &bv[0], k, &av[0] if k else NULL, &rv[0] if k else NULL, NULL)


def pivot_round_off_scale_value(double q, beta, M):
    """The compiled ``pivot_round_off_scale``."""
    cdef const double[::1] bv = np.ascontiguousarray(beta, dtype=np.float64)
    cdef const double[:, ::1] Mv = np.ascontiguousarray(M, dtype=np.float64)
    return pivot_round_off_scale(q, &bv[0], &Mv[0, 0], Mv.shape[1], Mv.shape[0])


def pivot_tests_value(double kappa, double scale, double abs_scale, double eps_doubt,
                      double eps_rel, double eps_abs):
    """(pivot_doubtful, pivot_is_zero) of the compiled core."""
    return (bool(pivot_doubtful(kappa, scale, eps_doubt)),
            bool(pivot_is_zero(kappa, scale, abs_scale, eps_rel, eps_abs)))


def least_index_event_value(events, double tmin, fallback=None):
    """The compiled least-index choice over (t, kind, index, window, priority) events,
    as refsvm.core.bordered.least_index_event: returns (kind, index)."""
    cdef EventChoice e
    event_start(&e, tmin)
    for t, kind, index, window, priority in events:
        if event_tied(t, tmin, window):
            if priority:
                event_take(&e, kind, index)
                return e.kind, e.index
            event_least_index(&e, kind, index)
    if e.kind < 0 and fallback is not None and event_tied(fallback[0], tmin, fallback[3]):
        event_take(&e, fallback[1], fallback[2])
    return e.kind, e.index


def smallest_event_value(events, double tmax=float("inf")):
    """Pass 1 of the compiled choice: (t, kind, index) of the strictly smallest step."""
    cdef EventChoice e
    event_start(&e, tmax)
    for t, kind, index in events:
        event_smaller(&e, t, kind, index)
    return e.t, e.kind, e.index
