// SPDX-License-Identifier: MIT
// Peer 1: the hand-written closed-form RK4 of both nh_particle dynamics (peer_common.hpp), plain C++ and OpenMP,
// one trajectory per loop iteration. Build: g++ -std=c++17 -O3 -march=x86-64-v2 -fopenmp closed_form_cpu.cpp
// Run: ./closed_form_cpu --n 20000 --threads 1   (prints one JSON line; --threads 0 = all cores)
#include "peer_common.hpp"

#include <chrono>
#include <omp.h>

int main(int argc, char** argv) {
    const auto o = peers::parse_options(argc, argv, "closed_form_cpu [--n N] [--threads T] [--seed S] [--steps K]");
    const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    const auto n = static_cast<std::size_t>(o.n);
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();

    std::vector<peers::InitialState> init(n);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long i = 0; i < o.n; ++i) init[i] = peers::initial_state(o.seed, static_cast<std::uint64_t>(i));

    std::vector<double> d_q(n), drift(n);
    const auto t1 = clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long i = 0; i < o.n; ++i) {
        const peers::PairResult r = peers::integrate_pair(init[i], peers::default_dt, o.steps);
        d_q[i] = r.d_q;
        drift[i] = r.drift;
    }
    const auto t2 = clock::now();
    const peers::Checksums c = peers::checksums(d_q, drift);
    const auto t3 = clock::now();

    const auto seconds = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
    peers::print_result("closed_form_cpu", "rk4", "cpu", threads, o, seconds(t2 - t1), seconds(t3 - t0), c);
    return 0;
}
