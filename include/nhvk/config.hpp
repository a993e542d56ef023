// SPDX-License-Identifier: MIT
/** @file
 *  @brief Host/device portability macros shared by every header of the core.
 */
#pragma once

#if defined(__CUDACC__)
#define NHVK_HD __host__ __device__
#define NHVK_FORCEINLINE __forceinline__
#else
#define NHVK_HD
#define NHVK_FORCEINLINE inline __attribute__((always_inline))
#endif

#if defined(__CUDACC__) || defined(__clang__)
#define NHVK_UNROLL _Pragma("unroll")
#else
#define NHVK_UNROLL _Pragma("GCC unroll 16")
#endif
