// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CUDA kernels, templated on the model, and nothing else: no runtime API, no host code. nvcc compiles
 *         them for the built-in models (through cuda_model_ops_impl.cuh) and NVRTC compiles the same text for a model
 *         file at run time (host/modelfile/cuda_compile.cpp), so this header and what it includes must stay within
 *         what NVRTC accepts: the standard headers it maps onto libcu++ there, and Random123.
 */
#pragma once

#include "nhvk/dispatch.hpp"
#include "nhvk/generated.hpp"
#include "nhvk/sample_member.hpp"

namespace nhvk {

namespace cuda_detail {
constexpr int block_size = 128;

template <template <class, class> class A, template <class, class> class B> struct SameStepper {
    static constexpr bool value = false;
};
template <template <class, class> class A> struct SameStepper<A, A> { static constexpr bool value = true; };

constexpr bool same_name(const char* a, const char* b) {
    while (*a != '\0' && *a == *b) ++a, ++b;
    return *a == *b;
}

/**
 * @brief The blocks of `block_size` threads that ptxas is asked to fit on one multiprocessor (`__launch_bounds__`'
 *        second argument: registers a thread ≤ 65536 / (128 · blocks), the rest spilled) for the ensemble kernel of
 *        model `M` (by name, so a model file of the same name gets the same) in `T` with `St`. 1, ptxas' own choice,
 *        except where a device ran a kernel faster with more blocks and spills than with fewer registers spilled
 *        (bench/results/2026-11-30-h200-kernels.md); a model or method not listed has not been measured.
 */
template <class M, class T, template <class, class> class St> constexpr int ensemble_min_blocks() {
#ifdef NHVK_ENSEMBLE_MIN_BLOCKS
    // NOTE: NHVK_CUDA_MIN_BLOCKS sets it for NVRTC's kernels (host/modelfile/cuda_compile.cpp), to measure other
    // values (bench/gpu_min_blocks.sh)
    return NHVK_ENSEMBLE_MIN_BLOCKS;
#else
    if (sizeof(T) != 8 || !SameStepper<St, Dopri5>::value) return 1;
    if (same_name(M::name, "ball_on_turntable")) return 4;
    if (same_name(M::name, "rolling_disc")) return 3;
    return 1;
#endif
}

/** @brief One thread per trajectory of the chunk. */
template <class M, class T, template <class, class> class St>
__global__ void __launch_bounds__(block_size, ensemble_min_blocks<M, T, St>()) ensemble_chunk_kernel(ChunkArgs a) {
    const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j < a.m) run_chunk_member<M, T, St, GenEquations>(a, j);
}

/** @brief One thread per member drawn: the sampling stage on the device (the same code as the CPU's). */
template <class M>
__global__ void __launch_bounds__(block_size)
    sample_chunk_kernel(SampleSpec<M> spec, ChunkArgs a, std::uint64_t first) {
    const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j < a.m) sample_chunk_member<M, GenEquations<M, double>>(spec, a, first, j);
}

template <class M, class T> struct TrajectoryArgs {
    T q0[M::n], v0[M::n], mu0[M::k];
    T t0;
    const double* times;
    int nt;
    StepControl ctl;
    T* out;
    MemberOutcome* outcome;
};

template <class M, class T, template <class, class> class St>
__global__ void trajectory_kernel(M model, TrajectoryArgs<M, T> a) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    StateRecorder<M, T> rec{a.out};
    *a.outcome = integrate_member<St, GenEquations>(model, a.q0, a.v0, a.mu0, a.t0, a.times, a.nt, a.ctl, rec);
}

/** @brief `trajectory_kernel` with arguments whose layout does not depend on the model: a model compiled at run time
 *         is launched by host code that knows only its sizes. `init` holds q0 (n), v0 (n), μ0 (k) and t0; `params`
 *         the model's parameters in order, or nullptr for its defaults. */
template <class M, class T, template <class, class> class St>
__global__ void trajectory_flat_kernel(const double* params, const double* init, const double* times, int nt,
                                       StepControl ctl, T* out, MemberOutcome* outcome) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const M model = make_model<M>(params);
    T q0[M::n], v0[M::n], mu0[M::k > 0 ? M::k : 1];
    for (int j = 0; j < M::n; ++j) {
        q0[j] = T(init[j]);
        v0[j] = T(init[M::n + j]);
    }
    for (int c = 0; c < M::k; ++c) mu0[c] = T(init[2 * M::n + c]);
    StateRecorder<M, T> rec{out};
    *outcome = integrate_member<St, GenEquations>(model, q0, v0, mu0, T(init[2 * M::n + M::k]), times, nt, ctl, rec);
}

} // namespace cuda_detail

} // namespace nhvk
