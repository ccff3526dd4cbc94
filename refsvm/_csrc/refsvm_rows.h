/* Row arithmetic of the compiled core (declared for Cython in refsvm/_core.pxd).

   A row is (idx, val, n): for a CSR row, idx/val point at its n column indices and
   values; for a dense row, idx is NULL and val points at its n values.  Every function
   below gives the same bits whichever body the dispatcher (refsvm_cpu.h) picks: the
   wider bodies round every product and every sum as the baseline does (no fused
   multiply-add), except where a comment says otherwise. */
#ifndef REFSVM_ROWS_H
#define REFSVM_ROWS_H

#include "refsvm_cpu.h"

/* <w, x> (returned) and ||x||^2 (*sq) of a dense row: four partial sums each, lane k
   summing the entries p = k mod 4 in order, then (s0 + s1) + (s2 + s3) -- the sums of
   row_dot and row_sqnorm (_core.pxd), bit for bit. */
REFSVM_API double refsvm_dense_dot_sqnorm(const double* w, const double* x, Py_ssize_t n,
                                          double* sq);
/* <w, x> alone, the same sums (row_dot's dense rows of 16 values or more) */
REFSVM_API double refsvm_dense_dot(const double* w, const double* x, Py_ssize_t n);
/* <w, x> exactly as refsvm_dense_dot, and in *sq a sum of the squares x_p^2 in any order
   and rounding (fused multiply-adds where the CPU has them): enough for the row check of
   row_screen, whose proof needs only a computed sum of non-negative terms that is
   monotone in each of them -- not for a step that uses ||x||^2. */
REFSVM_API double refsvm_dense_dot_bound(const double* w, const double* x, Py_ssize_t n,
                                         double* sq);

/* 1 when refsvm_csr_dot may be called (AVX2 gathers on this CPU), else 0: the callers
   keep their scalar loops */
static REFSVM_INLINE int refsvm_csr_fast(void) {
#if REFSVM_X86_GNUC
    return refsvm_cpu_has(REFSVM_CPU_AVX2);
#else
    return 0;
#endif
}
/* <w, x> and ||x||^2 (sq != NULL) of a CSR row: lane k sums the entries p = k mod 4 in
   order, the tail goes into lane 0, then (s0 + s1) + (s2 + s3) -- the sums of the scalar
   loops of row_dot and _row_dot_sqnorm, bit for bit -- with w gathered four entries at a
   time.  ``checked``: a column index outside [0, d) sets *bad and reads w[0] instead
   (d >= 1).  Only when refsvm_csr_fast() is 1. */
REFSVM_API double refsvm_csr_dot(const double* w, const int* idx, const double* val,
                                 Py_ssize_t n, Py_ssize_t d, double* sq, int* bad,
                                 int checked);

/* out[i] = sum_j cols[j][i] v[j] for i < n, every sum from 0 and left to right over j,
   eight columns per pass, then four, then one (the reference's refsvm.core.bordered.matvec
   order), in blocks of rows (see refsvm_rows.c); ``back`` walks the blocks from the last.
   The O(n |S|) sweeps of the path-following twins (IDSVM's rates, POKER's
   sensitivities). */
REFSVM_API void refsvm_cols_matvec(double* out, double** cols, const double* v,
                                   Py_ssize_t k, Py_ssize_t n, int back);
/* The widest body the sweep and axpy take where the CPU has it: 8 (AVX-512F), 4 (AVX2)
   or 1 (the baseline); every body gives the same bits.  The widest by default; the set
   is for the tests (refsvm._core.sweep_width). */
REFSVM_API int refsvm_rows_get_width(void);
REFSVM_API void refsvm_rows_set_width(int width);
/* dst[i] = src[i] + s * x[i], i < n (dst may be src itself, or lie wholly before it in
   the same buffer): the row update of the rank-one grow and shrink of a bordered
   inverse. */
REFSVM_API void refsvm_axpy(double* dst, const double* src, double s, const double* x,
                            Py_ssize_t n);
/* max(m, max_i |x_i|), i < n, NaN entries passed over (an entry counts only when it is
   greater): a maximum is one of the values, so every order of the comparisons gives the
   same result. */
REFSVM_API double refsvm_max_abs(const double* x, Py_ssize_t n, double m);
/* max(m, max_i x_i), i < n, NaN entries passed over (an entry counts only when it is
   greater): refsvm_max_abs without the absolute value, the same result in every order. */
REFSVM_API double refsvm_max(const double* x, Py_ssize_t n, double m);
/* The join candidates of C&P's event scan (IncrementalSVM's ``_events``, pass 1): for
   i < n in order, with sd = (status_i == err) - (status_i == rest) and ar = sd r_i, i is
   taken when ar > tol0, blk_i == 0, (-sd) g_i <= (ar best + eg) (1 + 1e-9) and ar >
   gam (kroot_i rtb + rt0); its step t = max(-g_i / r_i, 0) goes to tb[ntl], i to
   tlist[ntl], and t < best makes it the best (*best, *bi).  Returns ntl.  Each i is
   decided by exactly that scalar arithmetic; the AVX2 body only skips, four at a time,
   the entries that the test with the best at the start of the four rejects (a larger
   best only widens the test), so the result is the plain loop's bit for bit. */
REFSVM_API Py_ssize_t refsvm_join_scan(const signed char* status, const signed char* blk,
                                       const double* r, const double* g,
                                       const double* kroot, Py_ssize_t n, signed char err,
                                       signed char rest, double tol0, double eg, double gam,
                                       double rtb, double rt0, double* best, Py_ssize_t* bi,
                                       double* tb, Py_ssize_t* tlist);
/* Kernel columns to and from an n x k row-major array (leading dimension ld), as the
   path-following twins save and restore their margin sets: rows[i ld + j] = cols[j][i]
   and back, i < n, j < k, in blocks of 64 rows so that the strided side stays in the
   cache. */
REFSVM_API void refsvm_cols_to_rows(double* rows, Py_ssize_t ld, double* const* cols,
                                    Py_ssize_t k, Py_ssize_t n);
REFSVM_API void refsvm_rows_to_cols(double** cols, const double* rows, Py_ssize_t ld,
                                    Py_ssize_t k, Py_ssize_t n);
/* out[j] = <row pos[j], x> over the first d entries of rows ld doubles apart from base
   (pos NULL: the rows 0 .. m-1), each one sequential sum from 0 in dense_dot's order (the
   reference's matvec, row by row), eight rows in flight.  The dense kernel rows (ld = d)
   and the rows of a bordered inverse (``rows_dot``). */
REFSVM_API void refsvm_dots(const double* base, Py_ssize_t ld, const Py_ssize_t* pos,
                            Py_ssize_t m, const double* x, Py_ssize_t d, double* out);

/* The row checks of run_checked: some |v_p| is not <= limit (NaN, an infinity or a value
   above the bound); some column index is outside [0, d). */
REFSVM_API int refsvm_values_bad(const double* v, Py_ssize_t n, double limit);
REFSVM_API int refsvm_indices_bad(const int* idx, Py_ssize_t n, Py_ssize_t d);

#endif /* REFSVM_ROWS_H */
