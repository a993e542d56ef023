// SPDX-License-Identifier: MIT
/** @file
 *  @brief Host/device portability macros shared by every header of the core.
 */
#pragma once

#if defined(__CUDACC__)
#define NHVK_HD __host__ __device__
#define NHVK_FORCEINLINE __forceinline__
// NOTE: the right-hand sides are called from 7 stages of DOPRI5; inlining each copy multiplies device compile
// time (cicc, ptxas) and code size, for no measurable gain against thousands of flops per call.
#define NHVK_NOINLINE __noinline__
#else
#define NHVK_HD
#define NHVK_FORCEINLINE inline __attribute__((always_inline))
#define NHVK_NOINLINE
#endif

// NOTE: a whole step of the interpolating steppers (DOP853: 16 stages) and their calls of the equations: inlined on the
// device, where registers and local memory are allocated across them, but one out-of-line copy per instantiation on
// the host. Inlined there, the equations' straight-line code is compiled again for every stage of every caller, most
// of a model unit's compile time, for no gain against the cost of a right-hand side.
#if defined(__CUDA_ARCH__)
#define NHVK_STEP_INLINE __forceinline__
#else
#define NHVK_STEP_INLINE inline __attribute__((noinline))
#endif

#if defined(__CUDACC__) || defined(__clang__)
#define NHVK_UNROLL _Pragma("unroll")
#else
#define NHVK_UNROLL _Pragma("GCC unroll 16")
#endif
