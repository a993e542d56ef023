// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CUDA kernels of a built-in model compiled at run time: by NVRTC, from the model's own header and
 *         generated equations (the same templates an ahead-of-time build instantiates), into the cache that model
 *         files use. A build compiles ahead of time only the models of CMake's NHVK_AOT_MODELS.
 */
#pragma once

#include <optional>
#include <string>

#include "modelfile/cuda_compile.hpp"
#include "modelfile/model_file.hpp"

namespace nhvk {

struct SamplingPlan;

namespace modelfile {

/** @brief What NVRTC compiles for one built-in model. */
struct BuiltinKernelSource {
    std::string name;   ///< the model's name, e.g. "rolling_disc"
    std::string type;   ///< its C++ type, e.g. "nhvk::models::RollingDisc"
    std::string header; ///< its generated equations, e.g. "nhvk/generated/rolling_disc.hpp"
    int n = 0, k = 0;
    /// the model's SampleSpec of a plan, laid out by this build's host compiler (CudaJitModule::sample_spec)
    unsigned long (*sample_spec)(const SamplingPlan*, void*, unsigned long) = nullptr;
    bool ahead_of_time = false; ///< its kernels are in this binary (NHVK_AOT_MODELS)
};

/** @brief The built-in model `name`, or nothing when there is none. */
std::optional<BuiltinKernelSource> builtin_kernel_source(const std::string& name);

/** @brief The CUDA translation unit of a built-in model for NVRTC: its generated equations, then the kernel templates
 *         (kernels/kernel_templates.cuh). Its kernels are `cuda_kernel_names(..., s.type)`. */
std::string emit_builtin_cuda_unit(const BuiltinKernelSource& s);

/** @brief The kernels of one precision and method of built-in model `s`, compiled for `arch` (e.g. "sm_90"; no
 *         device needed) or loaded from the cache. */
jit::CudaArtefact compile_builtin_cuda(const BuiltinKernelSource& s, CudaKernels which, Precision precision,
                                       Method method, const std::string& arch, const jit::Reporter& report = {});

} // namespace modelfile
} // namespace nhvk
