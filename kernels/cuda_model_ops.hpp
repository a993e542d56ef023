// SPDX-License-Identifier: MIT
/** @file
 *  @brief Per-model CUDA entry points behind a table (one generated .cu per model, like the host's ModelOps).
 */
#pragma once

#include <cstddef>

#include "chunk_runner.hpp"
#include "trajectory.hpp"

namespace nhvk {

/** @brief What the CUDA runner needs of one model, type-erased. `stream` is a `cudaStream_t`. */
struct CudaModelOps {
    const char* name;
    void (*launch_chunk)(const ChunkCommon& common, const ChunkArgs& device_args, void* stream);
    TrajectoryResult (*trajectory)(const TrajectoryRequest& req);
};

/** @brief The CUDA ops of model `M` (instantiated in its generated translation unit, build/gen/cuda_model_*.cu). */
template <class M> CudaModelOps make_cuda_model_ops();

} // namespace nhvk
