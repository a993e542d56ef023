// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CUDA entry points of a build without CUDA: each says so instead of pretending to run.
 */
#ifndef NHVK_HAVE_CUDA
#include <stdexcept>

#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/cuda_device.hpp"
#include "nhvk/backend/cuda_reduce.hpp"
#include "nhvk/backend/trajectory.hpp"

namespace nhvk {

bool cuda_available() { return false; }
int select_cuda_device(int) { return -1; }
std::string cuda_unavailable_reason() { return "this nhvk was built without CUDA (NHVK_ENABLE_CUDA=OFF)"; }
TrajectoryResult run_trajectory_cuda(const TrajectoryRequest&) {
    throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
}
std::unique_ptr<EnsembleBackend> make_cuda_backend(const ChunkLayout&, const ChunkCommon&) {
    throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
}
void register_cuda_jit_module(CudaJitModule) {
    throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
}
void set_cuda_module_provider(CudaModuleProvider) {}
std::string cuda_device_arch() { throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason()); }
std::size_t cuda_block_batch(std::size_t, std::size_t) {
    throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
}
void cuda_block_reduce(const stats::BlockPlan&, const stats::LogBinTable*, unsigned, std::vector<stats::SeriesPartial>&,
                       std::vector<std::uint64_t>&) {
    throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
}
void cuda_select_ranks(const std::vector<std::vector<double>>&, const std::vector<std::vector<std::uint64_t>>&,
                       std::vector<std::vector<double>>&) {
    throw std::runtime_error("backend 'cuda': " + cuda_unavailable_reason());
}

} // namespace nhvk
#endif
