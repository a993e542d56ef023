// SPDX-License-Identifier: MIT
// Peer 2: the same right-hand sides (peer_common.hpp) integrated by Boost.Odeint's runge_kutta4 with a std::array
// state and a manual do_step loop, OpenMP over trajectories. Build (Boost is header-only):
//   g++ -std=c++17 -O3 -march=x86-64-v2 -fopenmp odeint_cpu.cpp
// Run: ./odeint_cpu --n 20000 --threads 1   (prints one JSON line; --threads 0 = all cores)
#include "cpu_driver.hpp"

#include <array>
#include <boost/numeric/odeint.hpp>

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

int main(int argc, char** argv) { return peers::run_cpu_peer(argc, argv, "odeint_cpu", odeint_pair); }
