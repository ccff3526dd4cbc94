/* Shared definitions of refsvm's hand-written C (the static library ``refsvm_c`` that
   setup.py builds once and links into every compiled module).

   Portability: the baseline code is ISO C99 and builds with GCC, Clang and MSVC.  The
   vector extensions and the run-time CPU choice (``target``/``optimize`` attributes,
   ``__builtin_cpu_*``, intrinsics of a wider instruction set than the build's) sit only
   under REFSVM_X86_GNUC, that is GCC or Clang (which defines __GNUC__ too) on x86-64;
   elsewhere the baseline bodies run.  REFSVM_GNUC guards GCC/Clang extensions that are
   not CPU-specific (vector types, __builtin_memcpy, statement expressions). */
#ifndef REFSVM_COMMON_H
#define REFSVM_COMMON_H

#include <Python.h>   /* Py_ssize_t, as the Cython declarations use it */
#include <stddef.h>
#include <string.h>

#if defined(__GNUC__)
#define REFSVM_GNUC 1
#else
#define REFSVM_GNUC 0
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define REFSVM_X86_GNUC 1
#else
#define REFSVM_X86_GNUC 0
#endif

/* GCC only (Clang defines __GNUC__ but has neither target_clones nor optimize()) */
#if defined(__GNUC__) && !defined(__clang__)
#define REFSVM_GCC 1
#else
#define REFSVM_GCC 0
#endif

/* The library is linked into several extension modules: its symbols stay inside each
   (no export, direct calls within the module). */
#if defined(__GNUC__) && !defined(_WIN32) && !defined(__CYGWIN__)
#define REFSVM_API __attribute__((visibility("hidden")))
#else
#define REFSVM_API
#endif

#if defined(_MSC_VER)
#define REFSVM_INLINE __inline
#define REFSVM_RESTRICT __restrict
#else
#define REFSVM_INLINE inline
#define REFSVM_RESTRICT restrict
#endif

/* a function the compiler keeps apart (never inlined into its callers) */
#if REFSVM_GNUC
#define REFSVM_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define REFSVM_NOINLINE __declspec(noinline)
#else
#define REFSVM_NOINLINE
#endif

/* Contraction of a product and a sum into a fused multiply-add is off in a function
   that carries this (where the compiler would otherwise contract: GCC's default for
   GNU C); the baseline x86-64 build has no FMA to contract into. */
#if REFSVM_GCC
#define REFSVM_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define REFSVM_NO_CONTRACT
#endif

#if REFSVM_GNUC
/* four doubles as one value (GCC/Clang vector extension): lane-wise + and * are the
   IEEE operations of each lane */
typedef double refsvm_v4d __attribute__((vector_size(32)));
#endif

#endif /* REFSVM_COMMON_H */
