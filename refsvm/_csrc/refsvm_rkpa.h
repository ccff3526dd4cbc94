/* The hand-written C of the reduced-kernel PA twin (refsvm/linear/_reduced_kernel_pa.pyx,
   declared in refsvm/_clib.pxd).  Each function has a baseline body and, on x86-64 with
   GCC 12 or later, an x86-64-v3 body (AVX2 and FMA) and for the dense kernel rows and
   features (exp, sqdist, matvec, matmat, expanded) an x86-64-v4 body (AVX-512, the v3
   bits), which the dispatcher (refsvm_cpu.h) picks where the CPU has that level
   (refsvm_rkpa_vec.h). */
#ifndef REFSVM_RKPA_H
#define REFSVM_RKPA_H

#include "refsvm_cpu.h"

/* the columns of one block of the batched LDL' update (pb holds 4 REFSVM_RKPA_NB p
   doubles) */
#define REFSVM_RKPA_NB 4

/* Caps the level of the bodies the functions below run: 0 the baseline, 1 x86-64-v3, 2
   x86-64-v4 (each only where the CPU has it); returns the cap before.  A test hook: the
   levels give the same bits from v3 on, and tests compare them. */
REFSVM_API int refsvm_rkpa_set_level(int cap);
/* The level the functions below run at now (the CPU's highest, within the cap). */
REFSVM_API int refsvm_rkpa_get_level(void);
/* v[i] = exp(v[i]) (Cody-Waite reduction and a degree-13 polynomial; 0 below -708) */
REFSVM_API void refsvm_rkpa_exp(double* v, Py_ssize_t n);
/* out[i] = scale * sum_j (AT[j m + i] - x[j])^2 */
REFSVM_API void refsvm_rkpa_sqdist(const double* AT, Py_ssize_t m, Py_ssize_t d,
                                   const double* x, double scale, double* out);
/* out[i] = sum_{j < n_in} x[j] A[j m + i] */
REFSVM_API void refsvm_rkpa_matvec(const double* A, Py_ssize_t n_in, Py_ssize_t m,
                                   const double* x, double* out);
/* out[r m + i] = sum_{j < n_in} xs[r][j] A[j m + i] for r < n_rows: matvec of each row
   xs[r], the same bits, several rows per pass over A */
REFSVM_API void refsvm_rkpa_matmat(const double* A, Py_ssize_t n_in, Py_ssize_t m,
                                   const double* const* xs, Py_ssize_t n_rows, double* out);
/* (sum_i v[i] k[i], sum_i k[i]^2) in four lanes */
REFSVM_API void refsvm_rkpa_dot_and_sqnorm(const double* v, const double* k, Py_ssize_t m,
                                           double* dot, double* sq);
/* (sum_i z[i] phi[i], sum_i |z[i] phi[i]|), each in four lanes (a fixed order, not the
   order i = 0 .. m-1; in the x86-64-v3 body a product may be fused into its sum) */
REFSVM_API void refsvm_rkpa_dot_abs(const double* z, const double* phi, Py_ssize_t m,
                                    double* dot, double* abs_sum);
/* out[i] = sum_nz AT[xi m + i] xv (a CSR row) */
REFSVM_API void refsvm_rkpa_dots_csr(const double* AT, Py_ssize_t m, const int* xi,
                                     const double* xv, Py_ssize_t nnz, double* out);
/* S (row-major upper triangle) += sum_j W_j d_j d_j^T for the p rows d_j of D */
REFSVM_API void refsvm_rkpa_syr_batch(double* S, Py_ssize_t m, const double* D,
                                      const double* W, Py_ssize_t p, double* wa);
/* L D L^T <- L D L^T + sum_j x_j x_j^T / T_j for the p rows x_j of X (U: the factor) */
REFSVM_API void refsvm_rkpa_ldl_update_batch(double* U, Py_ssize_t m, double* X, double* T,
                                             Py_ssize_t p, double* pb);
/* b <- (L D L^T)^{-1} b */
REFSVM_API void refsvm_rkpa_ldl_solve(const double* U, Py_ssize_t m, double* b);
/* out[i] = -gamma * max(xn + an[i] - 2 out[i], 0) */
REFSVM_API void refsvm_rkpa_expanded(const double* an, Py_ssize_t m, double xn, double gamma,
                                     double* out);

#endif /* REFSVM_RKPA_H */
