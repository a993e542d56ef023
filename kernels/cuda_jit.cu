// SPDX-License-Identifier: MIT
#include "cuda_jit.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "kernel_templates.cuh" // block_size, and the layouts the flat kernels take
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/cuda_device.hpp"
#include "nhvk/backend/trajectory.hpp"

namespace nhvk {

namespace {

/** @brief The driver API functions this file calls, found through the runtime (cudaGetDriverEntryPointByVersion)
 *         rather than linked: linking libcuda.so.1 would make every nhvk binary fail to start on a machine without a
 *         driver (CI's), while the runtime API only opens it when a device is used. */
struct Driver {
    decltype(&cuGetErrorString) get_error_string = nullptr;
    decltype(&cuModuleLoadData) module_load_data = nullptr;
    decltype(&cuModuleGetFunction) module_get_function = nullptr;
    decltype(&cuLaunchKernel) launch_kernel = nullptr;
#if CUDA_VERSION >= 12040
    decltype(&cuFuncGetParamInfo) func_get_param_info = nullptr;
#endif
};

template <class F> void entry_point(const char* name, F& f) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    // NOTE: the version of the prototypes in the cuda.h this file was compiled with
    NHVK_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &p, CUDA_VERSION, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !p)
        throw std::runtime_error(std::string("CUDA driver: no entry point '") + name +
                                 "' (the driver is older than "
                                 "the toolkit nhvk was built with?)");
    f = reinterpret_cast<F>(p);
}

const Driver& driver() {
    static const Driver d = [] {
        Driver r;
        entry_point("cuGetErrorString", r.get_error_string);
        entry_point("cuModuleLoadData", r.module_load_data);
        entry_point("cuModuleGetFunction", r.module_get_function);
        entry_point("cuLaunchKernel", r.launch_kernel);
#if CUDA_VERSION >= 12040
        entry_point("cuFuncGetParamInfo", r.func_get_param_info);
#endif
        return r;
    }();
    return d;
}

void check(CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return;
    const char* s = nullptr;
    driver().get_error_string(r, &s);
    throw std::runtime_error(std::string("CUDA driver: ") + what + ": " + (s ? s : "unknown error"));
}

/** @brief A registered module, loaded into the context that was current at its first use. */
struct Loaded {
    CudaJitModule m;
    CUmodule module = nullptr;
    std::vector<CUfunction> fn;
};

using Key = std::tuple<std::string, bool, Precision, Method>;

std::mutex registry_mutex;
std::map<Key, std::unique_ptr<Loaded>>& registry() {
    static std::map<Key, std::unique_ptr<Loaded>> r;
    return r;
}

std::atomic<CudaModuleProvider> provider{nullptr};

/** @brief The loaded module of `model` for the run's choices: registered by the host before the run, or else asked of
 *         the provider now; throws when there is none. */
Loaded& module_for(const std::string& model, bool trajectory, Precision precision, Method method) {
    const CudaModuleProvider p = provider.load();
    bool known = false;
    {
        std::lock_guard<std::mutex> lock(registry_mutex);
        known = registry().count(Key{model, trajectory, precision, method}) > 0;
    }
    // NOTE: without the lock: the provider compiles, then registers the module (which takes it)
    if (!known && p) p(model, trajectory, precision, method);
    std::lock_guard<std::mutex> lock(registry_mutex);
    const auto it = registry().find(Key{model, trajectory, precision, method});
    if (it == registry().end())
        throw std::logic_error("backend 'cuda': no compiled " + std::string(trajectory ? "trajectory" : "ensemble") +
                               " kernels of model '" + model + "' for this precision and method");
    Loaded& l = *it->second;
    if (!l.module) {
        // NOTE: the runtime API's calls before this one made the device's primary context current; the module
        // lives in it, as the built-in models' kernels do.
        NHVK_CUDA_CHECK(cudaFree(nullptr));
        check(driver().module_load_data(&l.module, l.m.image.data()), "cuModuleLoadData (a model file's CUBIN)");
        for (const std::string& name : l.m.kernels) {
            CUfunction f = nullptr;
            check(driver().module_get_function(&f, l.module, name.c_str()), name.c_str());
            l.fn.push_back(f);
        }
    }
    return l;
}

unsigned blocks_for(long long m) {
    return static_cast<unsigned>((m + cuda_detail::block_size - 1) / cuda_detail::block_size);
}

void launch(CUfunction f, unsigned blocks, unsigned threads, void* stream, void** args) {
    check(driver().launch_kernel(f, blocks, 1, 1, threads, 1, 1, 0, static_cast<CUstream>(stream), args, nullptr),
          "cuLaunchKernel (a model file's kernel)");
}

void jit_launch_chunk(const ChunkCommon& common, const ChunkArgs& device_args, void* stream) {
    if (device_args.m <= 0) return;
    Loaded& l = module_for(common.model, false, common.precision, common.method);
    ChunkArgs a = device_args;
    void* args[] = {&a};
    launch(l.fn.at(0), blocks_for(a.m), cuda_detail::block_size, stream, args);
}

void jit_launch_sample(const ChunkCommon& common, const ChunkArgs& device_args, std::uint64_t first, void* stream) {
    if (device_args.m <= 0) return;
    Loaded& l = module_for(common.model, false, common.precision, common.method);
    if (!l.m.sample_spec) throw std::logic_error("backend 'cuda': model '" + common.model + "' has no SampleSpec");
    const std::size_t size = l.m.sample_spec(nullptr, nullptr, 0);
#if CUDA_VERSION >= 12040
    // The kernel's first argument is the model's SampleSpec as NVRTC laid it out; the host compiler's must match.
    std::size_t offset = 0, param_size = 0;
    check(driver().func_get_param_info(l.fn.at(1), 0, &offset, &param_size), "cuFuncGetParamInfo");
    if (param_size != size)
        throw std::logic_error("backend 'cuda': model '" + common.model + "': SampleSpec is " + std::to_string(size) +
                               " bytes on the host, " + std::to_string(param_size) + " in the kernel");
#endif
    std::vector<unsigned char> spec(size);
    // NOTE: a chunk of a sweep is drawn point by point, as launch_sample of the built-in models does
    for_each_point_run(common, first, device_args.m,
                       [&](const SamplingPlan& plan, std::uint64_t member, long long j0, long long len) {
                           l.m.sample_spec(&plan, spec.data(), spec.size());
                           ChunkArgs range = member_range(device_args, j0, len);
                           void* args[] = {spec.data(), &range, &member};
                           launch(l.fn.at(1), blocks_for(len), cuda_detail::block_size, stream, args);
                       });
}

template <class T> TrajectoryResult flat_trajectory(Loaded& l, const TrajectoryRequest& req) {
    const int n = l.m.n, k = l.m.k, nt = static_cast<int>(req.times.size()), row = 4 * n + k;
    std::vector<double> init(static_cast<std::size_t>(2 * n + k + 1));
    for (int j = 0; j < n; ++j) {
        init[static_cast<std::size_t>(j)] = req.q0.at(static_cast<std::size_t>(j));
        init[static_cast<std::size_t>(n + j)] = req.v0.at(static_cast<std::size_t>(j));
    }
    for (int c = 0; c < k; ++c) init[static_cast<std::size_t>(2 * n + c)] = req.mu0.empty() ? 0.0 : req.mu0.at(c);
    init.back() = req.t0;
    cuda_detail::DeviceBuffer d_init(sizeof(double) * init.size()),
        d_times(sizeof(double) * static_cast<std::size_t>(nt)), d_params(sizeof(double) * req.params.size()),
        d_out(sizeof(T) * static_cast<std::size_t>((nt + 1) * row)), d_outcome(sizeof(MemberOutcome));
    NHVK_CUDA_CHECK(cudaMemcpy(d_init.p, init.data(), sizeof(double) * init.size(), cudaMemcpyHostToDevice));
    NHVK_CUDA_CHECK(cudaMemcpy(d_times.p, req.times.data(), sizeof(double) * nt, cudaMemcpyHostToDevice));
    if (!req.params.empty())
        NHVK_CUDA_CHECK(
            cudaMemcpy(d_params.p, req.params.data(), sizeof(double) * req.params.size(), cudaMemcpyHostToDevice));
    NHVK_CUDA_CHECK(cudaMemset(d_out.p, 0, sizeof(T) * static_cast<std::size_t>((nt + 1) * row)));
    const double* params = req.params.empty() ? nullptr : static_cast<const double*>(d_params.p);
    const double* init_p = static_cast<const double*>(d_init.p);
    const double* times = static_cast<const double*>(d_times.p);
    StepControl ctl = req.ctl;
    T* out = static_cast<T*>(d_out.p);
    MemberOutcome* outcome = static_cast<MemberOutcome*>(d_outcome.p);
    int nt_arg = nt;
    void* args[] = {&params, &init_p, &times, &nt_arg, &ctl, &out, &outcome};
    launch(l.fn.at(0), 1, 1, nullptr, args);
    return cuda_detail::read_trajectory<T>(d_out, d_outcome, nt, row);
}

TrajectoryResult jit_trajectory(const TrajectoryRequest& req) {
    if (req.equations != EquationsKind::generated)
        throw std::runtime_error("backend 'cuda' integrates the generated equations only (--equations ad runs on the "
                                 "CPU backend)");
    Loaded& l = module_for(req.model, true, req.precision, req.method);
    return req.precision == Precision::f64 ? flat_trajectory<double>(l, req) : flat_trajectory<float>(l, req);
}

const CudaModelOps jit_ops{"(model file)", &jit_launch_sample, &jit_launch_chunk, &jit_trajectory};

} // namespace

const CudaModelOps* jit_cuda_ops(const std::string& model) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    for (const auto& [key, loaded] : registry())
        if (std::get<0>(key) == model) return &jit_ops;
    return nullptr;
}

const CudaModelOps* provided_cuda_ops() { return provider.load() ? &jit_ops : nullptr; }

void set_cuda_module_provider(CudaModuleProvider p) { provider.store(p); }

void register_cuda_jit_module(CudaJitModule m) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    const Key key{m.model, m.trajectory, m.precision, m.method};
    const auto it = registry().find(key);
    if (it != registry().end() && it->second->m.image == m.image && it->second->m.kernels == m.kernels) return;
    auto l = std::make_unique<Loaded>();
    l->m = std::move(m);
    // NOTE: a replaced module stays loaded (a backend may still hold its functions); a process registers a few
    registry()[key].swap(l);
    l.release();
}

std::string cuda_device_arch() {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw std::runtime_error("backend 'cuda': " + why);
    int device = 0, major = 0, minor = 0;
    NHVK_CUDA_CHECK(cudaGetDevice(&device));
    NHVK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    NHVK_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return "sm_" + std::to_string(major) + std::to_string(minor);
}

} // namespace nhvk
