/* The bodies of refsvm_kernels.c that are compiled twice: for the baseline and, on
   x86-64 with GCC or Clang, for AVX2 without FMA (every product and sum rounded alike,
   so the same bits).  Included by refsvm_kernels.c with REFSVM_VEC(name) naming the body
   and REFSVM_VEC_ATTR its attributes; no include guard. */

static REFSVM_VEC_ATTR void REFSVM_VEC(dots4x)(const double* base, const Py_ssize_t* pos,
                                               Py_ssize_t m, const double* x4, Py_ssize_t d,
                                               double* out0, double* out1, double* out2,
                                               double* out3) {
#if REFSVM_GNUC
    Py_ssize_t j = 0, i;
    const refsvm_v4d zero = {0.0, 0.0, 0.0, 0.0};
    refsvm_v4d a0, a1, a2, a3, z, w;
    const double *r0, *r1, *r2, *r3;
    for (; j < m; j += 4) {
        r0 = base + (pos ? pos[j] : j) * d;
        r1 = j + 1 < m ? base + (pos ? pos[j + 1] : j + 1) * d : r0;
        r2 = j + 2 < m ? base + (pos ? pos[j + 2] : j + 2) * d : r0;
        r3 = j + 3 < m ? base + (pos ? pos[j + 3] : j + 3) * d : r0;
        a0 = zero; a1 = zero; a2 = zero; a3 = zero;
        for (i = 0; i < d; i++) {
            memcpy(&z, x4 + 4 * i, sizeof z);
            w = (refsvm_v4d) {r0[i], r0[i], r0[i], r0[i]}; a0 = a0 + w * z;
            w = (refsvm_v4d) {r1[i], r1[i], r1[i], r1[i]}; a1 = a1 + w * z;
            w = (refsvm_v4d) {r2[i], r2[i], r2[i], r2[i]}; a2 = a2 + w * z;
            w = (refsvm_v4d) {r3[i], r3[i], r3[i], r3[i]}; a3 = a3 + w * z;
        }
        out0[j] = a0[0]; out1[j] = a0[1]; out2[j] = a0[2]; out3[j] = a0[3];
        if (j + 1 < m) {
            out0[j + 1] = a1[0]; out1[j + 1] = a1[1]; out2[j + 1] = a1[2]; out3[j + 1] = a1[3];
        }
        if (j + 2 < m) {
            out0[j + 2] = a2[0]; out1[j + 2] = a2[1]; out2[j + 2] = a2[2]; out3[j + 2] = a2[3];
        }
        if (j + 3 < m) {
            out0[j + 3] = a3[0]; out1[j + 3] = a3[1]; out2[j + 3] = a3[2]; out3[j + 3] = a3[3];
        }
    }
#else
    Py_ssize_t j, i, q;
    double a[4];
    const double* r;
    for (j = 0; j < m; j++) {
        r = base + (pos ? pos[j] : j) * d;
        a[0] = a[1] = a[2] = a[3] = 0.0;
        for (i = 0; i < d; i++)
            for (q = 0; q < 4; q++)
                a[q] = a[q] + r[i] * x4[4 * i + q];
        out0[j] = a[0]; out1[j] = a[1]; out2[j] = a[2]; out3[j] = a[3];
    }
#endif
}

static REFSVM_VEC_ATTR void REFSVM_VEC(csr_dots4)(const Py_ssize_t* indptr, const int* indices,
                                                  const double* data, const Py_ssize_t* pos,
                                                  Py_ssize_t m, const double* zd4,
                                                  double* out0, double* out1, double* out2,
                                                  double* out3) {
#if REFSVM_GNUC
    Py_ssize_t j = 0, p, r0, r1, n0, n1, nmin;
    const int *i0, *i1;
    const double *v0, *v1;
    const refsvm_v4d zero = {0.0, 0.0, 0.0, 0.0};
    refsvm_v4d a0, a1, z0, z1, w0, w1;
    for (; j < m; j += 2) {
        r0 = pos ? pos[j] : j;
        r1 = j + 1 < m ? (pos ? pos[j + 1] : j + 1) : r0;
        i0 = indices + indptr[r0]; v0 = data + indptr[r0];
        n0 = indptr[r0 + 1] - indptr[r0];
        i1 = indices + indptr[r1]; v1 = data + indptr[r1];
        n1 = j + 1 < m ? indptr[r1 + 1] - indptr[r1] : 0;
        nmin = n0 < n1 ? n0 : n1;
        a0 = zero;
        a1 = zero;
        for (p = 0; p < nmin; p++) {
            w0 = (refsvm_v4d) {v0[p], v0[p], v0[p], v0[p]};
            w1 = (refsvm_v4d) {v1[p], v1[p], v1[p], v1[p]};
            memcpy(&z0, zd4 + 4 * (Py_ssize_t) i0[p], sizeof z0);
            memcpy(&z1, zd4 + 4 * (Py_ssize_t) i1[p], sizeof z1);
            a0 = a0 + w0 * z0;
            a1 = a1 + w1 * z1;
        }
        for (p = nmin; p < n0; p++) {
            w0 = (refsvm_v4d) {v0[p], v0[p], v0[p], v0[p]};
            memcpy(&z0, zd4 + 4 * (Py_ssize_t) i0[p], sizeof z0);
            a0 = a0 + w0 * z0;
        }
        for (p = nmin; p < n1; p++) {
            w1 = (refsvm_v4d) {v1[p], v1[p], v1[p], v1[p]};
            memcpy(&z1, zd4 + 4 * (Py_ssize_t) i1[p], sizeof z1);
            a1 = a1 + w1 * z1;
        }
        out0[j] = a0[0]; out1[j] = a0[1]; out2[j] = a0[2]; out3[j] = a0[3];
        if (j + 1 < m) {
            out0[j + 1] = a1[0]; out1[j + 1] = a1[1]; out2[j + 1] = a1[2]; out3[j + 1] = a1[3];
        }
    }
#else
    Py_ssize_t j, p, r, q;
    double a[4];
    for (j = 0; j < m; j++) {
        r = pos ? pos[j] : j;
        a[0] = a[1] = a[2] = a[3] = 0.0;
        for (p = indptr[r]; p < indptr[r + 1]; p++)
            for (q = 0; q < 4; q++)
                a[q] = a[q] + data[p] * zd4[4 * (Py_ssize_t) indices[p] + q];
        out0[j] = a[0]; out1[j] = a[1]; out2[j] = a[2]; out3[j] = a[3];
    }
#endif
}
