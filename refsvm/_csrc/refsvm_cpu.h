/* The CPU-feature dispatcher: the one place that asks the processor what it runs.  Every
   vectorised function of the library compiles a baseline body and, on x86-64 with GCC or
   Clang, a body for a wider instruction set, and picks one at run time by
   refsvm_cpu_has(feature).  The features are detected once (at the first call) and
   kept; elsewhere (another architecture, MSVC) no feature is reported and the baseline
   bodies run. */
#ifndef REFSVM_CPU_H
#define REFSVM_CPU_H

#include "refsvm_common.h"

enum {
    REFSVM_CPU_AVX2 = 1,          /* AVX2 (the 4-wide double bodies, gathers) */
    REFSVM_CPU_FMA = 2,           /* fused multiply-add (with AVX2: exp's 4-wide form) */
    REFSVM_CPU_AVX512F = 4,       /* AVX-512F (8-wide exp, POKER's scan, 8-row distances) */
    REFSVM_CPU_AVX512DQ = 8,      /* AVX-512DQ (detected; no body needs it at present) */
    REFSVM_CPU_X86_64_V3 = 16,    /* the x86-64-v3 level (AVX2, FMA, BMI1/2, ...): RKPA */
    REFSVM_CPU_X86_64_V4 = 32,    /* the x86-64-v4 level (v3 and AVX-512F/BW/CD/DQ/VL): RKPA */
    REFSVM_CPU_DETECTED = 1 << 30 /* set once the features above were read */
};

/* The feature bits, detected on the first call. */
REFSVM_API int refsvm_cpu_detect(void);
extern REFSVM_API int refsvm_cpu_flags;

static REFSVM_INLINE int refsvm_cpu_has(int features) {
    int f = refsvm_cpu_flags;
    if (!f)
        f = refsvm_cpu_detect();
    return (f & features) == features;
}

#endif /* REFSVM_CPU_H */
