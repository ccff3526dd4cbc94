/* The hand-written C of the POKER twin (refsvm/poker/_poker.pyx, declared in
   refsvm/_clib.pxd). */
#ifndef REFSVM_POKER_H
#define REFSVM_POKER_H

#include "refsvm_cpu.h"

/* 1 when refsvm_poker_scan8 may be called (AVX-512F on this CPU), else 0: the engine
   keeps its scalar scan */
REFSVM_API int refsvm_poker_scan_vector(void);
/* The event scan of one piece (``_Engine._scan``), eight examples per pass: the same
   operations in the same order on each example as the scalar loop (IEEE multiply,
   subtract, add, divide and compare give the same bits in a vector lane; no fused
   multiply-add), the candidates and their steps written in id order by compress-stores.
   Returns the candidates written; *done: the examples scanned (the caller scans the rest),
   *tmin and *gmin the smallest step and |g'| among the candidates. */
REFSVM_API Py_ssize_t refsvm_poker_scan8(
        Py_ssize_t n, int fixed, const double* y, const double* inner, double* gdot,
        double* g, const double* kr, const double* d, const signed char* status,
        const signed char* blk, Py_ssize_t* cand, double* cts, double bd, double terms,
        double base, double tp, int pend, double eps_rate, signed char io,
        signed char is_, signed char ic, double* tmin, double* gmin, Py_ssize_t* done,
        const signed char* y8);

#endif /* REFSVM_POKER_H */
