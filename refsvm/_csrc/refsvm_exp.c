/* The RBF kernels' exponential (refsvm_exp.h): out[j] = exp(-gamma * out[j]) for j < m, the C library's exp bit for bit, eight at a
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
   a time.  The table holds, for i < 128, the relative tail (2^(i/128) - T_i) / T_i and the bits of
   T_i = 2^(i/128) rounded, less i << 45 (regenerated from these definitions by
   tests/core/test_exp.py). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "refsvm_exp.h"

#if REFSVM_X86_GNUC
#include <immintrin.h>
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
#if REFSVM_X86_GNUC
/* 128/ln2, 1.5 * 2^52 (rounds to an integer by addition), -ln2/128 split in a high part
   of 37 bits and the rest, and the polynomial's C2 .. C5 */
static const uint64_t refsvm_exp_k[8] = {
    0x40671547652b82feULL, 0x4338000000000000ULL, 0xbf762e42fefa0000ULL,
    0xbd0cf79abc9e3b3aULL, 0x3fdffffffffffdbdULL, 0x3fc555555555543cULL,
    0x3fa55555cf172b91ULL, 0x3f81111167a4d017ULL};
#endif
/* the forms that passed the check, and the one the kernels take: 8, 4 or 1 (exp) */
static int refsvm_exp_ok8 = 0, refsvm_exp_ok4 = 0;
static int refsvm_exp_width = 1;

#if REFSVM_X86_GNUC
__attribute__((target("avx512f"))) REFSVM_NO_CONTRACT
static void refsvm_exp8(double* out, Py_ssize_t m, double ng, int scale) {
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
}

__attribute__((target("avx2,fma"))) REFSVM_NO_CONTRACT
static void refsvm_exp4(double* out, Py_ssize_t m, double ng, int scale) {
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
#endif

/* The check, once (at the core's import): the widest form that passed is taken. */
REFSVM_API void refsvm_exp_init(void) {
#if REFSVM_X86_GNUC
    static int done = 0;
    if (done)
        return;
    done = 1;
    if (refsvm_cpu_has(REFSVM_CPU_AVX512F))
        refsvm_exp_ok8 = refsvm_exp_check(refsvm_exp8);
    if (refsvm_cpu_has(REFSVM_CPU_AVX2 | REFSVM_CPU_FMA))
        refsvm_exp_ok4 = refsvm_exp_check(refsvm_exp4);
    refsvm_exp_width = refsvm_exp_ok8 ? 8 : refsvm_exp_ok4 ? 4 : 1;
#endif
}

REFSVM_API int refsvm_exp_form_ok(int width) {
    return width == 8 ? refsvm_exp_ok8 : width == 4 ? refsvm_exp_ok4 : width == 1;
}

REFSVM_API int refsvm_exp_get_width(void) {
    return refsvm_exp_width;
}

REFSVM_API void refsvm_exp_set_width(int width) {
    refsvm_exp_width = width;
}

REFSVM_API const unsigned long long* refsvm_exp_table(void) {
    return (const unsigned long long*) refsvm_exp_tab;
}

REFSVM_API void refsvm_exp_neg_many(double* out, Py_ssize_t m, double gamma) {
    double ng = -gamma;
    Py_ssize_t j;
#if REFSVM_X86_GNUC
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
