// SPDX-License-Identifier: MIT
/** @file
 *  @brief A scoped device allocation, and the read-back of one trajectory kernel's output: shared by the built-in
 *         models' trajectory launcher (cuda_model_ops_impl.cuh) and the model files' (cuda_jit.cu).
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda_check.hpp"
#include "nhvk/backend/trajectory.hpp"

namespace nhvk::cuda_detail {

/** @brief A device buffer freed on scope exit. */
struct DeviceBuffer {
    void* p = nullptr;
    explicit DeviceBuffer(std::size_t bytes) { NHVK_CUDA_CHECK(cudaMalloc(&p, bytes > 0 ? bytes : 1)); }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/** @brief After the trajectory kernel: its `(nt + 1) × row` states of type `T` and its outcome, as a result whose
 *         `rows` are the rows filled. Synchronizes the device first. */
template <class T>
TrajectoryResult read_trajectory(const DeviceBuffer& out, const DeviceBuffer& outcome, int nt, int row) {
    NHVK_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> buf(static_cast<std::size_t>(nt + 1) * row);
    TrajectoryResult r;
    NHVK_CUDA_CHECK(cudaMemcpy(buf.data(), out.p, sizeof(T) * buf.size(), cudaMemcpyDeviceToHost));
    NHVK_CUDA_CHECK(cudaMemcpy(&r.outcome, outcome.p, sizeof(MemberOutcome), cudaMemcpyDeviceToHost));
    r.row_size = row;
    r.rows = r.outcome.status == Status::ok ? nt + 1 : r.outcome.time_index + 1;
    if (r.rows < 0) r.rows = 0;
    r.states.assign(buf.begin(), buf.end());
    return r;
}

} // namespace nhvk::cuda_detail
