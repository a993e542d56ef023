// SPDX-License-Identifier: MIT
// A program outside nhvk, built against the installed nhvk::core only (tests/consumer/check_consumer.sh): integrates
// the nonholonomic particle (docs/models.md) with RK4 and the dual-number equations from a few initial states, and
// reduces the constraint residuals with the statistics kernel on the host (Thrust's C++ system). Exit 0 when the
// motions are physical: φ = ż − y ẋ stays below 1e-9, and ẏ and C = ẋ √(1 + y²) stay constant (the closed form).
#include <nhvk/dynamics.hpp>
#include <nhvk/models/nh_particle.hpp>
#include <nhvk/stats/chunk_reduce.hpp>
#include <nhvk/steppers.hpp>

#include <thrust/system/cpp/execution_policy.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    using Model = nhvk::models::NhParticle;
    using Sys = nhvk::NonholonomicSystem<Model, double, nhvk::AdEquations<Model, double>>;
    constexpr int members = 4, steps = 200;
    constexpr double dt = 0.01;
    const Sys sys{};
    std::vector<double> residual(static_cast<std::size_t>(steps) * members); // series = step, one column per member
    double worst_drift = 0.0, least_travel = 1e300;
    for (int j = 0; j < members; ++j) {
        const double x = 0.2, y = -0.4, z = 0.1, vx = 0.9, vy = 0.3 + 0.2 * j;
        const double y0[6] = {x, y, z, vx, vy, y * vx}; // ż = y ẋ: on the constraint
        const double c0 = vx * std::sqrt(1.0 + y * y);
        nhvk::StepControl ctl;
        ctl.dt = dt;
        ctl.project = false;
        nhvk::Rk4<Sys, double> st;
        if (st.init(sys, 0.0, y0, ctl) != nhvk::Status::ok) {
            std::fprintf(stderr, "member %d: init failed\n", j);
            return 1;
        }
        for (int s = 0; s < steps; ++s) {
            if (st.advance_to(sys, (s + 1) * dt) != nhvk::Status::ok) {
                std::fprintf(stderr, "member %d: step %d failed\n", j, s);
                return 1;
            }
            double phi[Model::k];
            Model{}.constraints(st.y, st.y + Model::n, st.t, phi);
            residual[static_cast<std::size_t>(s) * members + j] = std::fabs(phi[0]);
        }
        const double c = st.y[3] * std::sqrt(1.0 + st.y[1] * st.y[1]);
        worst_drift = std::fmax(worst_drift, std::fmax(std::fabs(c - c0), std::fabs(st.y[4] - vy)));
        least_travel = std::fmin(least_travel, std::fabs(st.y[1] - y)); // y moves: the checks are not vacuous
    }

    nhvk::stats::ChunkView view;
    view.values = residual.data();
    view.chunk = members;
    view.ld = members;
    view.n_series = steps;
    std::vector<nhvk::stats::SeriesPartial> partials(steps);
    nhvk::stats::accumulate_chunk(thrust::cpp::par, view, 1, partials.data(), nullptr, nhvk::stats::LogBinner{});
    double worst_phi = 0.0;
    unsigned long long counted = 0;
    for (const nhvk::stats::SeriesPartial& p : partials) {
        worst_phi = std::fmax(worst_phi, p.max);
        counted += p.count;
    }

    std::printf("max |phi| %.3e over %llu values, max drift of C and y' %.3e, least |y(T) - y(0)| %.3f\n", worst_phi,
                counted, worst_drift, least_travel);
    const bool ok = counted == static_cast<unsigned long long>(steps) * members && worst_phi < 1e-9 &&
                    worst_drift < 1e-9 && least_travel > 0.5;
    return ok ? 0 : 1;
}
