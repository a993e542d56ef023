// SPDX-License-Identifier: MIT
// Peer 1: the hand-written closed-form RK4 of both nh_particle dynamics (peer_common.hpp), plain C++ and OpenMP,
// one trajectory per loop iteration. Build: g++ -std=c++17 -O3 -march=x86-64-v2 -fopenmp closed_form_cpu.cpp
// Run: ./closed_form_cpu --n 20000 --threads 1   (prints one JSON line; --threads 0 = all cores)
#include "cpu_driver.hpp"

int main(int argc, char** argv) {
    return peers::run_cpu_peer(argc, argv, "closed_form_cpu", [](const peers::InitialState& s, double dt, int steps) {
        return peers::integrate_pair(s, dt, steps);
    });
}
