/* The RBF kernels' exponential: exp(-gamma * d2) of a whole kernel column, the C
   library's exp bit for bit, several values at a time where a vector form was checked
   to give the same bits (refsvm_exp.c). */
#ifndef REFSVM_EXP_H
#define REFSVM_EXP_H

#include "refsvm_cpu.h"

/* The check of the vector forms, once (the core calls it at import). */
REFSVM_API void refsvm_exp_init(void);
/* out[j] = exp(-gamma * out[j]) for j < m, refsvm_exp_get_width() values at a time */
REFSVM_API void refsvm_exp_neg_many(double* out, Py_ssize_t m, double gamma);
/* 1 when the form of that width (8, 4; 1 is the library's exp) passed the check */
REFSVM_API int refsvm_exp_form_ok(int width);
/* the width the kernels take, and a setter for the tests (a width that passed) */
REFSVM_API int refsvm_exp_get_width(void);
REFSVM_API void refsvm_exp_set_width(int width);
/* the vector form's table: 256 words, (tail, bits) for each i < 128 */
REFSVM_API const unsigned long long* refsvm_exp_table(void);

#endif /* REFSVM_EXP_H */
