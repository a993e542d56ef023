// SPDX-License-Identifier: MIT
/** @file
 *  @brief Where DOPRI5 keeps the stage vectors of a step: in the thread's registers (local arrays), or, on the device
 *         for the larger models in double (`shared_stages_on_device`), in columns of the block's dynamic shared
 *         memory, one column per thread. The kernels' host code sizes that memory with `shared_stage_bytes`.
 *
 *  Why: a DOPRI5 step of the larger models keeps the state, the first stage and three running sums (or three more
 *  stages) live across every evaluation of the equations, on top of the equations' own working set, and their kernels
 *  spilled (bench/results/2026-11-29-shared-stages.md). In shared memory these vectors cost no registers. Their
 *  accesses are volatile: otherwise the compiler forwards a stored stage to its later reads, and keeps it in registers
 *  after all.
 */
#pragma once

#include <cstddef>
#include <type_traits>

#include "nhvk/config.hpp"
#include "nhvk/numerics.hpp"

namespace nhvk {

/// Threads per block of every kernel that integrates members: the stride of the shared-memory stage columns.
constexpr int device_block_size = 128;

/// The largest dimension of the systems integrated for a model: the vakonomic 2n + k, or 2n + 2 for the nonholonomic
/// one with its energy balance and applied power.
NHVK_HD constexpr int shared_stage_dim(int n, int k) { return 2 * n + (k > 2 ? k : 2); }

/// Columns of one thread: k1, the stages k2 … k4 (later the running sums), and the state.
constexpr int shared_stage_columns = 5;

/** @brief The most values per vector for the compute capability `arch` (major · 10 + minor): 19 (95 KiB a block in
 *         double), within what every GPU from compute capability 8.0 on grants a block (99 KiB on the smallest,
 *         8.6 and 8.9) and 7.0's 96 KiB; 12 (60 KiB) on Turing (7.5), which grants 64 KiB. */
NHVK_HD constexpr int shared_stage_max_dim(int arch) { return arch == 75 ? 12 : 19; }

/** @brief True where the device of compute capability `arch` keeps DOPRI5's stage vectors in shared memory: double
 *         precision, and a model with 2n + k ≥ 10 (rolling_disc, ball_on_turntable and larger) whose vectors fit
 *         (`shared_stage_max_dim`). In float, and for the smaller models, the stages fit the registers, and ptxas
 *         traded spills for occupancy when they moved (bench/results/2026-11-29-shared-stages.md). */
NHVK_HD constexpr bool shared_stages_on_device(int n, int k, int scalar_bytes, Method method, int arch) {
    return method == Method::dopri5 && scalar_bytes == 8 && 2 * n + k >= 10 &&
           shared_stage_dim(n, k) <= shared_stage_max_dim(arch);
}

/** @brief The dynamic shared memory a block of an integrating kernel compiled for `arch` needs (0: none). */
NHVK_HD constexpr std::size_t shared_stage_bytes(int n, int k, int scalar_bytes, Method method, int arch) {
    return shared_stages_on_device(n, k, scalar_bytes, method, arch)
               ? std::size_t(shared_stage_columns) * std::size_t(shared_stage_dim(n, k)) * std::size_t(scalar_bytes) *
                     std::size_t(device_block_size)
               : 0;
}

#if defined(__CUDACC__)
extern __shared__ double nhvk_stage_smem[];
#endif

namespace detail {

#if !defined(__CUDA_ARCH__)
/** @brief The host's stand-in for a block's stage memory (the tests' emulation): one buffer per thread, scalar and
 *         dimension, shared by all the columns of a stepper as the block's memory is on the device, so that columns
 *         that would overlap there overlap here too; thread 0's column of it is used. */
template <class T, int D> T* host_columns() {
    static thread_local T columns[shared_stage_columns * D * device_block_size];
    return columns;
}
#endif

/** @brief Column `C` of the thread: the vector `j ↦ smem[(C · D + j) · device_block_size + threadIdx.x]` of the block's
 *         shared memory, so that a warp's access to a component touches consecutive words (no bank conflicts). */
template <class T, int D, int C> struct SharedColumn {
    static_assert(C < shared_stage_columns, "more columns than shared_stage_bytes provides");
    NHVK_HD NHVK_FORCEINLINE volatile T& operator[](int j) const {
#if defined(__CUDA_ARCH__)
        return reinterpret_cast<T*>(nhvk_stage_smem)[(C * D + j) * device_block_size + threadIdx.x];
#else
        return host_columns<T, D>()[(C * D + j) * device_block_size];
#endif
    }
};

/** @brief A stage vector of `D` values: a local array (registers on the device), or (`Shared`) column `C`. */
template <class T, int D, bool Shared, int C>
using StageVector = std::conditional_t<Shared, SharedColumn<T, D, C>, T[D]>;

/** @brief True for a system that asks for shared stages on the host too (the tests' emulation). */
template <class Sys, class = void> struct ForcesSharedStages : std::false_type {};
template <class Sys>
struct ForcesSharedStages<Sys, std::void_t<decltype(Sys::force_shared_stages)>>
    : std::bool_constant<Sys::force_shared_stages> {};

/** @brief Whether `Stepper` keeps its stages of `Sys` in columns: on the device by `shared_stages_on_device`; on the
 *         host only where the system asks (the tests). */
template <class Sys, class T, Method method> constexpr bool uses_shared_stages() {
#if defined(__CUDA_ARCH__)
    return shared_stages_on_device(Sys::Model::n, Sys::Model::k, int(sizeof(T)), method, __CUDA_ARCH__ / 10);
#else
    return ForcesSharedStages<Sys>::value;
#endif
}

/** @brief `sys.rhs(t, y, dst)`, through a local array when `dst` is a column. */
template <class Sys, class T, class V> NHVK_HD NHVK_FORCEINLINE auto rhs_into(const Sys& sys, T t, const T* y, V dst) {
    if constexpr (std::is_pointer_v<V>) {
        return sys.rhs(t, y, dst);
    } else {
        T k[Sys::dim];
        const auto s = sys.rhs(t, y, k);
        NHVK_UNROLL
        for (int j = 0; j < Sys::dim; ++j) dst[j] = k[j];
        return s;
    }
}

/** @brief `rhs_into` from a state `y` that may be a column. */
template <class Sys, class T, class Y, class V> NHVK_HD NHVK_FORCEINLINE auto rhs_at(const Sys& sys, T t, Y y, V dst) {
    if constexpr (std::is_pointer_v<Y>) {
        return rhs_into(sys, t, static_cast<const T*>(y), dst);
    } else {
        T x[Sys::dim];
        NHVK_UNROLL
        for (int j = 0; j < Sys::dim; ++j) x[j] = y[j];
        return rhs_into(sys, t, static_cast<const T*>(x), dst);
    }
}

/** @brief `sys.project(t, y)` on a state that may be a column. */
template <class Sys, class T, class Y> NHVK_HD NHVK_FORCEINLINE auto project_at(const Sys& sys, T t, Y y) {
    if constexpr (std::is_pointer_v<Y>) {
        return sys.project(t, y);
    } else {
        T x[Sys::dim];
        NHVK_UNROLL
        for (int j = 0; j < Sys::dim; ++j) x[j] = y[j];
        const auto s = sys.project(t, x);
        NHVK_UNROLL
        for (int j = 0; j < Sys::dim; ++j) y[j] = x[j];
        return s;
    }
}

} // namespace detail
} // namespace nhvk
