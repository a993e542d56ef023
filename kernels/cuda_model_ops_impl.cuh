// SPDX-License-Identifier: MIT
/** @file
 *  @brief The host side of the CUDA kernels (kernel_templates.cuh), templated on the model; included only by the
 *         generated per-model .cu files, after the model's generated equations. The device integrates the generated
 * equations (`GenEquations`) only: the dual-number reference runs on the CPU.
 */
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "cuda_check.hpp"
#include "cuda_model_ops.hpp"
#include "device_buffer.hpp"
#include "kernel_templates.cuh"
#include "nhvk/backend/sample_spec.hpp"
#include "nhvk/dispatch.hpp"

namespace nhvk {

namespace cuda_detail {

template <class M, class T, template <class, class> class St>
TrajectoryResult trajectory_on_device(const TrajectoryRequest& req) {
    constexpr int n = M::n, k = M::k;
    const int nt = static_cast<int>(req.times.size());
    const int row = StateRecorder<M, T>::row_size();
    TrajectoryArgs<M, T> a{};
    for (int j = 0; j < n; ++j) {
        a.q0[j] = T(req.q0.at(j));
        a.v0[j] = T(req.v0.at(j));
    }
    for (int c = 0; c < k; ++c) a.mu0[c] = req.mu0.empty() ? T(0) : T(req.mu0.at(c));
    a.t0 = T(req.t0);
    a.nt = nt;
    a.ctl = req.ctl;
    DeviceBuffer d_times(sizeof(double) * nt), d_out(sizeof(T) * (nt + 1) * row), d_outcome(sizeof(MemberOutcome));
    NHVK_CUDA_CHECK(cudaMemcpy(d_times.p, req.times.data(), sizeof(double) * nt, cudaMemcpyHostToDevice));
    NHVK_CUDA_CHECK(cudaMemset(d_out.p, 0, sizeof(T) * (nt + 1) * row));
    a.times = static_cast<const double*>(d_times.p);
    a.out = static_cast<T*>(d_out.p);
    a.outcome = static_cast<MemberOutcome*>(d_outcome.p);
    const M model = make_model<M>(req.params.empty() ? nullptr : req.params.data());
    trajectory_kernel<M, T, St><<<1, 1>>>(model, a);
    NHVK_CUDA_CHECK(cudaGetLastError());
    return read_trajectory<T>(d_out, d_outcome, nt, row);
}

/** @brief Launch the chunk kernel for the model and numerics of `common` on `stream`. */
template <class M> void launch_chunk(const ChunkCommon& common, const ChunkArgs& device_args, void* stream_ptr) {
    const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    if (device_args.m <= 0) return;
    dispatch_numeric(common.method, common.precision, [&](auto tt, auto st) {
        using T = decltype(tt);
        using St = decltype(st);
        const long long blocks = (device_args.m + block_size - 1) / block_size;
        ensemble_chunk_kernel<M, T, St::template tmpl>
            <<<static_cast<unsigned>(blocks), block_size, 0, stream>>>(device_args);
    });
    NHVK_CUDA_CHECK(cudaGetLastError());
}

/** @brief Launch the sampling kernel for members [first, first + device_args.m) on `stream`. */
template <class M>
void launch_sample(const ChunkCommon& common, const ChunkArgs& device_args, std::uint64_t first, void* stream_ptr) {
    if (device_args.m <= 0) return;
    // NOTE: a chunk of a sweep is drawn point by point (one launch per point the chunk touches; the integration is
    // one launch per chunk), each point's members as a run of that point alone draws them
    for_each_point_run(
        common, first, device_args.m, [&](const SamplingPlan& plan, std::uint64_t member, long long j0, long long len) {
            const SampleSpec<M> spec = make_sample_spec<M>(plan);
            const long long blocks = (len + block_size - 1) / block_size;
            sample_chunk_kernel<M>
                <<<static_cast<unsigned>(blocks), block_size, 0, static_cast<cudaStream_t>(stream_ptr)>>>(
                    spec, member_range(device_args, j0, len), member);
            NHVK_CUDA_CHECK(cudaGetLastError());
        });
}

template <class M> TrajectoryResult trajectory(const TrajectoryRequest& req) {
    if (req.equations != EquationsKind::generated)
        throw std::runtime_error("backend 'cuda' integrates the generated equations only (--equations ad runs on the "
                                 "CPU backend)");
    TrajectoryResult result;
    dispatch_numeric(req.method, req.precision, [&](auto tt, auto st) {
        using T = decltype(tt);
        using St = decltype(st);
        result = trajectory_on_device<M, T, St::template tmpl>(req);
    });
    return result;
}

} // namespace cuda_detail

template <class M> CudaModelOps make_cuda_model_ops() {
    return CudaModelOps{M::name, &cuda_detail::launch_sample<M>, &cuda_detail::launch_chunk<M>,
                        &cuda_detail::trajectory<M>};
}

} // namespace nhvk
