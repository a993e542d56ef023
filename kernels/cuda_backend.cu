// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CUDA backend: one thread per trajectory running the same `run_chunk_member` / `integrate_member` as
 *         the CPU, pinned host buffers and two streams so transfers and host work overlap device compute.
 */
#include <cuda_runtime.h>

#include <sstream>
#include <stdexcept>
#include <vector>

#include "chunk_buffers.hpp"
#include "chunk_runner.hpp"
#include "nhvk/dispatch.hpp"
#include "registry.hpp"
#include "trajectory.hpp"

#define NHVK_CUDA_CHECK(expr)                                                                                          \
    do {                                                                                                               \
        const cudaError_t nhvk_err_ = (expr);                                                                          \
        if (nhvk_err_ != cudaSuccess) {                                                                                \
            std::ostringstream os_;                                                                                    \
            os_ << "CUDA error in " #expr " (" << __FILE__ << ":" << __LINE__ << "): " << cudaGetErrorString(nhvk_err_); \
            throw std::runtime_error(os_.str());                                                                       \
        }                                                                                                              \
    } while (0)

namespace nhvk {

namespace {
constexpr int block_size = 128;

/** @brief One thread per trajectory of the chunk. */
template <class M, class T, template <class, class> class St>
__global__ void __launch_bounds__(block_size) ensemble_chunk_kernel(ChunkArgs a) {
    const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j < a.m) run_chunk_member<M, T, St>(a, j);
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
    *a.outcome = integrate_member<St>(model, a.q0, a.v0, a.mu0, a.t0, a.times, a.nt, a.ctl, rec);
}

/** @brief A device buffer freed on scope exit. */
struct DeviceBuffer {
    void* p = nullptr;
    explicit DeviceBuffer(std::size_t bytes) { NHVK_CUDA_CHECK(cudaMalloc(&p, bytes > 0 ? bytes : 1)); }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

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
    NHVK_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> buf(static_cast<std::size_t>(nt + 1) * row);
    TrajectoryResult r;
    NHVK_CUDA_CHECK(cudaMemcpy(buf.data(), d_out.p, sizeof(T) * buf.size(), cudaMemcpyDeviceToHost));
    NHVK_CUDA_CHECK(cudaMemcpy(&r.outcome, d_outcome.p, sizeof(MemberOutcome), cudaMemcpyDeviceToHost));
    r.row_size = row;
    r.rows = r.outcome.status == Status::ok ? nt + 1 : r.outcome.time_index + 1;
    if (r.rows < 0) r.rows = 0;
    r.states.assign(buf.begin(), buf.end());
    return r;
}

/** @brief Launch the chunk kernel for the model and numerics of `common` on `stream`. */
void launch_chunk(const ChunkCommon& common, const ChunkArgs& device_args, cudaStream_t stream) {
    const bool found = visit_model(common.model, [&](auto mt) {
        using M = typename decltype(mt)::type;
        dispatch_numeric(common.method, common.precision, [&](auto tt, auto st) {
            using T = decltype(tt);
            using St = decltype(st);
            const long long blocks = (device_args.m + block_size - 1) / block_size;
            ensemble_chunk_kernel<M, T, St::template tmpl>
                <<<static_cast<unsigned>(blocks), block_size, 0, stream>>>(device_args);
        });
    });
    if (!found) throw std::invalid_argument("unknown model '" + common.model + "'");
    NHVK_CUDA_CHECK(cudaGetLastError());
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
        host_args_[s].m = m;
        dev_args_[s].m = m;
        // NOTE: one copy of the whole input region (its layout is identical on both sides).
        NHVK_CUDA_CHECK(cudaMemcpyAsync(d_[s], h_[s], block_.input_bytes, cudaMemcpyHostToDevice, stream_[s]));
        launch_chunk(common_, dev_args_[s], stream_[s]);
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
    TrajectoryResult result;
    const bool found = visit_model(req.model, [&](auto mt) {
        using M = typename decltype(mt)::type;
        dispatch_numeric(req.method, req.precision, [&](auto tt, auto st) {
            using T = decltype(tt);
            using St = decltype(st);
            result = trajectory_on_device<M, T, St::template tmpl>(req);
        });
    });
    if (!found) throw std::invalid_argument("unknown model '" + req.model + "'");
    return result;
}

std::unique_ptr<ChunkRunner> make_cuda_runner(const ChunkLayout& layout, const ChunkCommon& common) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw std::runtime_error("backend 'cuda': " + why);
    return std::make_unique<CudaRunner>(layout, common);
}

} // namespace nhvk
