// SPDX-License-Identifier: MIT
/** @file
 *  @brief Per-model CUDA entry points behind a table (one generated .cu per model, like the host's ModelOps).
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/trajectory.hpp"

namespace nhvk {

/** @brief What the CUDA runner needs of one model, type-erased. `stream` is a `cudaStream_t`. */
struct CudaModelOps {
    const char* name;
    /** @brief The sampling stage: members [first, first + device_args.m) into the chunk's inputs on the device. */
    void (*launch_sample)(const ChunkCommon& common, const ChunkArgs& device_args, std::uint64_t first, void* stream);
    /** @brief The integration stage: both dynamics of the chunk's members. */
    void (*launch_chunk)(const ChunkCommon& common, const ChunkArgs& device_args, void* stream);
    TrajectoryResult (*trajectory)(const TrajectoryRequest& req);
};

/** @brief The CUDA ops of model `M` (instantiated in its generated translation unit, build/gen/cuda_model_*.cu). */
template <class M> CudaModelOps make_cuda_model_ops();

} // namespace nhvk
