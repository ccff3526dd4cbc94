/* Kernel-row helpers of the compiled core's CKernel (refsvm/_core.pyx): several stored
   rows against one or four rows z in one pass.  Each gives the bits of the core's scalar
   loops (the same operations in the same order on every value). */
#ifndef REFSVM_KERNELS_H
#define REFSVM_KERNELS_H

#include "refsvm_cpu.h"

/* out[j] = ||x_pos[j] - z||^2 for dense rows of d <= 8 features (sqn: the rows' squared
   norms, sz: z's), the choice of sqdist_from_norms made on bits (no branch: close pairs
   are common in few dimensions and a branch on them mispredicts): the norms' form when
   it exceeds a quarter of the norms' sum, else the direct sum; both in the reference's
   order.  pos NULL: the rows 0 .. m-1. */
REFSVM_API void refsvm_sqdist_small(const double* dense, const Py_ssize_t* pos, Py_ssize_t m,
                                    const double* z, Py_ssize_t d, const double* sqn,
                                    double sz, double* out);
/* out_r[j] = <row pos[j], z_r> for the four rows z_r given feature-major in x4
   (x4[4 i + r] = z_r[i]) and j < m: lane r is refsvm_dots's sum for z_r (from +0.0, left
   to right over the features, one rounded product and one rounded sum a term), so the
   same bits.  Four stored rows in flight, each read once for the four z. */
REFSVM_API void refsvm_dots4x(const double* base, const Py_ssize_t* pos, Py_ssize_t m,
                              const double* x4, Py_ssize_t d, double* out0, double* out1,
                              double* out2, double* out3);
/* out_r[j] = sum_p data[p] zd4[4 indices[p] + r] over the stored CSR row pos[j] (j < m;
   row j when pos is NULL), for the four rows r < 4 scattered feature-major into zd4:
   lane r is kernel_csr_many's sum for z_r (from +0.0, in the row's own order, one
   rounded product and one rounded sum a term), so the same bits.  The index and the
   value of a term are loaded once for four rows z, and two stored rows are in flight. */
REFSVM_API void refsvm_csr_dots4(const Py_ssize_t* indptr, const int* indices,
                                 const double* data, const Py_ssize_t* pos, Py_ssize_t m,
                                 const double* zd4, double* out0, double* out1,
                                 double* out2, double* out3);

#endif /* REFSVM_KERNELS_H */
