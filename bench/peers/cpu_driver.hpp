// SPDX-License-Identifier: MIT
// The main of the CPU peers (closed_form_cpu, odeint_cpu): draw the initial states, integrate every trajectory pair
// with `integrate` in an OpenMP loop (timed alone), reduce the checksums, print the result line.
#pragma once

#include "peer_common.hpp"

#include <chrono>
#include <omp.h>

namespace peers {

template <class Integrate> int run_cpu_peer(int argc, char** argv, const char* name, Integrate integrate) {
    const std::string usage = std::string(name) + " [--n N] [--threads T] [--seed S] [--steps K]";
    const auto o = parse_options(argc, argv, usage.c_str());
    const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    const auto n = static_cast<std::size_t>(o.n);
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();

    std::vector<InitialState> init(n);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long i = 0; i < o.n; ++i) init[i] = initial_state(o.seed, static_cast<std::uint64_t>(i));

    std::vector<double> d_q(n), drift(n);
    const auto t1 = clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long long i = 0; i < o.n; ++i) {
        const PairResult r = integrate(init[i], default_dt, o.steps);
        d_q[i] = r.d_q;
        drift[i] = r.drift;
    }
    const auto t2 = clock::now();
    const Checksums c = checksums(d_q, drift);
    const auto t3 = clock::now();

    const auto seconds = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
    print_result(name, "rk4", "cpu", threads, o, seconds(t2 - t1), seconds(t3 - t0), c);
    return 0;
}

} // namespace peers
