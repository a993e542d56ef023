// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CUDA backend: one thread per trajectory running the same `run_chunk_member` / `integrate_member` as
 *         the CPU, pinned host buffers and two streams so transfers and host work overlap device compute.
 */
#include <cuda_runtime.h>

#include <cstring>
#include <utility>
#include <stdexcept>
#include <vector>

#include "chunk_buffers.hpp"
#include "cuda_check.hpp"
#include "cuda_model_ops.hpp"
#include "chunk_runner.hpp"
#include "nhvk/models/all.hpp"
#include "trajectory.hpp"

namespace nhvk {

namespace {
template <class... Ms> std::vector<CudaModelOps> make_table(ModelList<Ms...>) { return {make_cuda_model_ops<Ms>()...}; }

const CudaModelOps& cuda_ops(const std::string& model) {
    static const std::vector<CudaModelOps> table = make_table(BuiltinModels{});
    for (const CudaModelOps& o : table)
        if (model == o.name) return o;
    throw std::invalid_argument("unknown model '" + model + "'");
}

/**
 * @brief Two slots, each a pinned host block, a device block and a stream: `submit` enqueues H2D of the inputs,
 *        the kernel and D2H of the outputs and returns at once, so the host samples/reduces the other slot meanwhile.
 */
class CudaRunner final : public ChunkRunner {
public:
    CudaRunner(const ChunkLayout& L, const ChunkCommon& c) : layout_(L), common_(c), block_(L) {
        NHVK_CUDA_CHECK(cudaMalloc(&d_times_, sizeof(double) * (c.nt > 0 ? c.nt : 1)));
        NHVK_CUDA_CHECK(cudaMemcpy(d_times_, c.times, sizeof(double) * c.nt, cudaMemcpyHostToDevice));
        if (c.shared_params && L.n_params > 0 && !L.per_member_params) {
            NHVK_CUDA_CHECK(cudaMalloc(&d_params_, sizeof(double) * L.n_params));
            NHVK_CUDA_CHECK(
                cudaMemcpy(d_params_, c.shared_params, sizeof(double) * L.n_params, cudaMemcpyHostToDevice));
        }
        for (int s = 0; s < 2; ++s) {
            NHVK_CUDA_CHECK(cudaMallocHost(&h_[s], block_.total));
            NHVK_CUDA_CHECK(cudaMalloc(&d_[s], block_.total));
            NHVK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_[s], cudaStreamNonBlocking));
            host_args_[s] = common_args(L, c);
            block_.bind(host_args_[s], h_[s], L);
            dev_args_[s] = common_args(L, c);
            block_.bind(dev_args_[s], d_[s], L);
            dev_args_[s].times = d_times_;
            if (!L.per_member_params) dev_args_[s].params = d_params_;
        }
    }
    ~CudaRunner() override {
        for (int s = 0; s < 2; ++s) {
            if (stream_[s]) {
                cudaStreamSynchronize(stream_[s]);
                cudaStreamDestroy(stream_[s]);
            }
            cudaFreeHost(h_[s]);
            cudaFree(d_[s]);
        }
        cudaFree(d_times_);
        cudaFree(d_params_);
    }
    int slots() const override { return 2; }
    ChunkArgs& slot(int s) override { return host_args_[s]; }
    void submit(int s, long long m) override {
        if (common_.equations != EquationsKind::generated)
            throw std::runtime_error("backend 'cuda' integrates the generated equations only "
                                     "(integrator.equations = \"ad\" runs on the CPU backend)");
        host_args_[s].m = m;
        dev_args_[s].m = m;
        // NOTE: one copy of the whole input region (its layout is identical on both sides).
        NHVK_CUDA_CHECK(cudaMemcpyAsync(d_[s], h_[s], block_.input_bytes, cudaMemcpyHostToDevice, stream_[s]));
        cuda_ops(common_.model).launch_chunk(common_, dev_args_[s], stream_[s]);
        NHVK_CUDA_CHECK(cudaMemcpyAsync(h_[s] + block_.input_bytes, d_[s] + block_.input_bytes, block_.output_bytes,
                                        cudaMemcpyDeviceToHost, stream_[s]));
    }
    void wait(int s) override { NHVK_CUDA_CHECK(cudaStreamSynchronize(stream_[s])); }
    std::string name() const override { return "cuda"; }

private:
    ChunkLayout layout_;
    ChunkCommon common_;
    ChunkBlock block_;
    char* h_[2] = {nullptr, nullptr};
    char* d_[2] = {nullptr, nullptr};
    cudaStream_t stream_[2] = {nullptr, nullptr};
    ChunkArgs host_args_[2], dev_args_[2];
    double* d_times_ = nullptr;
    double* d_params_ = nullptr;
};
} // namespace

bool cuda_available() { return cuda_unavailable_reason().empty(); }

std::string cuda_unavailable_reason() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(e);
    if (count == 0) return "no CUDA device present";
    return {};
}

TrajectoryResult run_trajectory_cuda(const TrajectoryRequest& req) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw std::runtime_error("backend 'cuda': " + why);
    return cuda_ops(req.model).trajectory(req);
}

std::unique_ptr<ChunkRunner> make_cuda_runner(const ChunkLayout& layout, const ChunkCommon& common) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw std::runtime_error("backend 'cuda': " + why);
    return std::make_unique<CudaRunner>(layout, common);
}

} // namespace nhvk
