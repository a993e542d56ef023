// SPDX-License-Identifier: MIT
// Peer 3: the hand-written closed-form RK4 of both nh_particle dynamics (peer_common.hpp) as a CUDA kernel, one
// thread per trajectory, initial states generated on the device into structure-of-arrays buffers.
// Build: nvcc -std=c++17 -O3 -arch=sm_90 closed_form_cuda.cu   (check spills with -Xptxas -v)
// Run: ./closed_form_cuda --n 1000000   (prints one JSON line; exits 1 with a message when there is no device)
// integration_seconds: cudaEvents around the integration kernel only. total_seconds: host clock from the first
// allocation to the checksums: state generation kernel, integration kernel, copy of d_q and the drift to the host
// and the host reduction (in index order, as the CPU peers). CUDA context creation and module loading are excluded
// (a warm-up launch of both kernels on one trajectory runs first).
// NOTE: nvcc contracts a*b+c into FMA by default, so the checksums match the CPU peers to ~1e-15, not bit for bit.
#include "peer_common.hpp"

#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

namespace {

constexpr int block_size = 128;

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "error: %s: %s (%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
        std::exit(1);
    }
}

/** @brief Device buffers, structure of arrays. */
struct Buffers {
    double *d_y, *d_vx, *d_vy, *d_vz, *d_mu, *d_dq, *d_drift;
};

__global__ void __launch_bounds__(block_size) init_kernel(Buffers b, long long n, unsigned long long seed) {
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const peers::InitialState s = peers::initial_state(seed, static_cast<unsigned long long>(i));
    b.d_y[i] = s.y;
    b.d_vx[i] = s.vx;
    b.d_vy[i] = s.vy;
    b.d_vz[i] = s.vz;
    b.d_mu[i] = s.mu;
}

__global__ void __launch_bounds__(block_size) rk4_kernel(Buffers b, long long n, double dt, int steps) {
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const peers::InitialState s{b.d_y[i], b.d_vx[i], b.d_vy[i], b.d_vz[i], b.d_mu[i]};
    const peers::PairResult r = peers::integrate_pair(s, dt, steps);
    b.d_dq[i] = r.d_q;
    b.d_drift[i] = r.drift;
}

unsigned grid_for(long long n) { return static_cast<unsigned>((n + block_size - 1) / block_size); }

} // namespace

int main(int argc, char** argv) {
    const auto o = peers::parse_options(argc, argv, "closed_form_cuda [--n N] [--seed S] [--steps K]");
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::fprintf(stderr, "error: closed_form_cuda needs a CUDA device, none found (cudaGetDeviceCount: %s)\n",
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 1;
    }
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    check(cudaFree(nullptr), "creating the CUDA context");
    if (grid_for(o.n) > static_cast<unsigned>(prop.maxGridSize[0])) {
        std::fprintf(stderr, "error: --n %lld needs more blocks than the device allows\n", o.n);
        return 2;
    }

    // Warm-up on one trajectory: loads the module, so that neither timing below contains it.
    Buffers b{};
    double** bufs[] = {&b.d_y, &b.d_vx, &b.d_vy, &b.d_vz, &b.d_mu, &b.d_dq, &b.d_drift};
    for (double** p : bufs) check(cudaMalloc(p, sizeof(double)), "cudaMalloc (warm-up)");
    init_kernel<<<1, block_size>>>(b, 1, o.seed);
    rk4_kernel<<<1, block_size>>>(b, 1, peers::default_dt, 1);
    check(cudaDeviceSynchronize(), "warm-up kernels");
    for (double** p : bufs) check(cudaFree(*p), "cudaFree (warm-up)");

    using clock = std::chrono::steady_clock;
    const auto n = static_cast<std::size_t>(o.n);
    const auto t0 = clock::now();
    for (double** p : bufs) check(cudaMalloc(p, n * sizeof(double)), "cudaMalloc");
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    init_kernel<<<grid_for(o.n), block_size>>>(b, o.n, o.seed);
    check(cudaGetLastError(), "init_kernel launch");
    check(cudaEventRecord(start), "cudaEventRecord");
    rk4_kernel<<<grid_for(o.n), block_size>>>(b, o.n, peers::default_dt, o.steps);
    check(cudaGetLastError(), "rk4_kernel launch");
    check(cudaEventRecord(stop), "cudaEventRecord");
    std::vector<double> d_q(n), drift(n);
    check(cudaMemcpy(d_q.data(), b.d_dq, n * sizeof(double), cudaMemcpyDeviceToHost), "copying d_q");
    check(cudaMemcpy(drift.data(), b.d_drift, n * sizeof(double), cudaMemcpyDeviceToHost), "copying the drift");
    const peers::Checksums c = peers::checksums(d_q, drift);
    const auto t1 = clock::now();
    float kernel_ms = 0.0f;
    check(cudaEventElapsedTime(&kernel_ms, start, stop), "cudaEventElapsedTime");
    for (double** p : bufs) check(cudaFree(*p), "cudaFree");

    const std::string device = std::string("cuda:") + prop.name;
    peers::print_result("closed_form_cuda", "rk4", device, 0, o, 1e-3 * kernel_ms,
                        std::chrono::duration<double>(t1 - t0).count(), c);
    return 0;
}
