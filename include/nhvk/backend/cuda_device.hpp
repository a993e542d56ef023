// SPDX-License-Identifier: MIT
/** @file
 *  @brief The device of an MPI rank: the ranks on a node take its CUDA devices in turn (node-local rank modulo the
 *         device count); and the kernels of models compiled at run time (model files), handed to the CUDA backend.
 *         Defined by the CUDA backend, and as no-ops (or errors that say why) without it.
 */
#pragma once

#include <string>
#include <vector>

#include "nhvk/numerics.hpp"

namespace nhvk {

struct SamplingPlan;

/** @brief A model's kernels compiled at run time for the current device (NVRTC's CUBIN of a model file,
 *         host/modelfile/cuda_compile.hpp), for one precision and method. */
struct CudaJitModule {
    std::string model;       ///< the model's name (ChunkCommon::model, TrajectoryRequest::model)
    int n = 0, k = 0;        ///< its sizes: the flat trajectory kernel's arguments depend on nothing else
    bool trajectory = false; ///< false: the chunk kernel, then the sampling kernel; true: the flat trajectory kernel
    Precision precision = Precision::f64;
    Method method = Method::rk4;
    std::string image;                ///< the CUBIN
    std::vector<std::string> kernels; ///< the kernels' symbols, in the order above
    /// the model's `SampleSpec` for a plan (the sampling kernel's argument, laid out by the host compiler): writes it
    /// when it fits `capacity` and returns its size (see host/modelfile/model_file.hpp, sample_spec_symbol)
    unsigned long (*sample_spec)(const SamplingPlan* plan, void* out, unsigned long capacity) = nullptr;
};

/** @brief Hand `m` to the CUDA backend (replacing a module of the same model, kind, precision and method): runs and
 *         trajectories of `m.model` then use it. Loaded into the current device's context at first use. */
void register_cuda_jit_module(CudaJitModule m);

/** @brief Compiles and registers (register_cuda_jit_module) the module of a model that has none yet: the host's
 *         NVRTC path for the built-in models a build did not compile ahead of time, and for model files. */
using CudaModuleProvider = void (*)(const std::string& model, bool trajectory, Precision precision, Method method);

/** @brief Set by the host at start-up: the CUDA backend asks it for a module it lacks, so that every way into the
 *         backend (a run, `run_trajectory_cuda`, `make_cuda_backend` from a program) finds the kernels compiled. */
void set_cuda_module_provider(CudaModuleProvider provider);

/** @brief The architecture NVRTC compiles for: the current device's, e.g. "sm_90". Throws without a device. */
std::string cuda_device_arch();

/** @brief Makes device `local_rank % count` current for this process; returns it (−1 without a device). */
int select_cuda_device(int local_rank);

} // namespace nhvk
