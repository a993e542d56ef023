// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CUDA entry points of models compiled at run time (register_cuda_jit_module): the same table as a
 *         built-in model's, launching NVRTC's kernels through the driver API.
 */
#pragma once

#include <string>

#include "cuda_model_ops.hpp"

namespace nhvk {

/** @brief The ops of a model with a registered run-time module, or nullptr when it has none. */
const CudaModelOps* jit_cuda_ops(const std::string& model);

/** @brief The ops that compile a module through the host's provider (set_cuda_module_provider) at first use, or
 *         nullptr when no provider is set. */
const CudaModelOps* provided_cuda_ops();

} // namespace nhvk
