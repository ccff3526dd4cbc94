/* The CPU-feature dispatcher (refsvm_cpu.h). */
#include "refsvm_cpu.h"

/* 0 until detected; a race between two first callers writes the same value twice */
REFSVM_API int refsvm_cpu_flags = 0;

REFSVM_API int refsvm_cpu_detect(void) {
    int f = REFSVM_CPU_DETECTED;
#if REFSVM_X86_GNUC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        f |= REFSVM_CPU_AVX2;
    if (__builtin_cpu_supports("fma"))
        f |= REFSVM_CPU_FMA;
    if (__builtin_cpu_supports("avx512f"))
        f |= REFSVM_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512dq"))
        f |= REFSVM_CPU_AVX512DQ;
#if REFSVM_GCC && __GNUC__ >= 12
    if (__builtin_cpu_supports("x86-64-v3"))
        f |= REFSVM_CPU_X86_64_V3;
    if (__builtin_cpu_supports("x86-64-v4"))
        f |= REFSVM_CPU_X86_64_V4;
#endif
#endif
    refsvm_cpu_flags = f;
    return f;
}
