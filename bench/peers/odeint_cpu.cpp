// SPDX-License-Identifier: MIT
// Peer 2: the same right-hand sides (peer_common.hpp) integrated by Boost.Odeint's runge_kutta4 with a std::array
// state and a manual do_step loop, OpenMP over trajectories. Build (Boost is header-only):
//   g++ -std=c++17 -O3 -march=x86-64-v2 -fopenmp odeint_cpu.cpp
// Run: ./odeint_cpu --n 20000 --threads 1   (prints one JSON line; --threads 0 = all cores)
#include "peer_common.hpp"

#include <array>
#include <boost/numeric/odeint.hpp>
#include <chrono>
#include <omp.h>

namespace {

namespace odeint = boost::numeric::odeint;

template <class Rhs> struct OdeintSystem {
    using State = std::array<double, Rhs::dim>;
    void operator()(const State& x, State& dxdt, double /*t*/) const { Rhs{}(x.data(), dxdt.data()); }
};

template <class Rhs> void integrate(std::array<double, Rhs::dim>& x, double dt, int steps) {
    odeint::runge_kutta4<std::array<double, Rhs::dim>> stepper;
    for (int i = 0; i < steps; ++i) stepper.do_step(OdeintSystem<Rhs>{}, x, i * dt, dt);
}

peers::PairResult odeint_pair(const peers::InitialState& s, double dt, int steps) {
    std::array<double, 6> nh0, nh;
    std::array<double, 7> vk0, vk;
    peers::start_states(s, nh0.data(), vk0.data());
    nh = nh0;
    vk = vk0;
    integrate<peers::Nonholonomic>(nh, dt, steps);
    integrate<peers::Vakonomic>(vk, dt, steps);
    return peers::finish(nh0.data(), vk0.data(), nh.data(), vk.data());
}

} // namespace

int main(int argc, char** argv) {
    const auto o = peers::parse_options(argc, argv, "odeint_cpu [--n N] [--threads T] [--seed S] [--steps K]");
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
        const peers::PairResult r = odeint_pair(init[i], peers::default_dt, o.steps);
        d_q[i] = r.d_q;
        drift[i] = r.drift;
    }
    const auto t2 = clock::now();
    const peers::Checksums c = peers::checksums(d_q, drift);
    const auto t3 = clock::now();

    const auto seconds = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
    peers::print_result("odeint_cpu", "rk4", "cpu", threads, o, seconds(t2 - t1), seconds(t3 - t0), c);
    return 0;
}
