// SPDX-License-Identifier: MIT
// Orders of accuracy by step halving, shared by the stepper tests (test_steppers.cpp, test_dense_steppers.cpp): a
// stepper made to take fixed steps, and the errors on the harmonic oscillator and the nonholonomic particle, whose
// closed forms are known.
#pragma once

#include "core_test_util.hpp"

#include <nhvk/models/nh_particle.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace nhvk_test {

/**
 * Integrate `sys` from y0 over [0, t_end] with a fixed step h and return the final state.
 *
 * Rk4 takes `ctl.dt = h`. The adaptive steppers get huge tolerances, so every step is accepted and the controller only
 * ever proposes to grow the step, and an output time at every grid point t_i = i·h: Dopri5 clips each step to land on
 * the next output time; an interpolating stepper is told that t_i is its last output time (`land_last_on`), so its
 * step ends there. Either way every step has length h (up to the rounding of t_i); one step per grid interval is
 * checked.
 */
template <template <class, class> class Stepper, class Sys>
std::vector<double> run_fixed(const Sys& sys, const double* y0, double t_end, int steps) {
    nhvk::StepControl ctl;
    const double h = t_end / steps;
    ctl.dt = h;
    ctl.rtol = ctl.atol = 1e10;
    ctl.min_step = 0.0;
    Stepper<Sys, double> st;
    EXPECT_EQ(st.init(sys, 0.0, y0, ctl), nhvk::Status::ok);
    for (int i = 1; i <= steps; ++i) {
        const double ti = i == steps ? t_end : i * h;
        if constexpr (nhvk::dense_stepper<Stepper<Sys, double>>) st.land_last_on(ti);
        EXPECT_EQ(st.advance_to(sys, ti), nhvk::Status::ok);
    }
    EXPECT_EQ(st.steps, steps) << "not one step per grid interval";
    EXPECT_EQ(st.t, t_end);
    return std::vector<double>(st.y, st.y + Sys::dim);
}

/** Observed orders log2(e(h)/e(h/2)) for the given error function of the step count. */
template <class ErrFn> std::vector<double> observed_orders(ErrFn err, int n0, int levels) {
    std::vector<double> e, p;
    for (int l = 0; l < levels; ++l) e.push_back(err(n0 << l));
    for (int l = 0; l + 1 < levels; ++l) p.push_back(std::log2(e[l] / e[l + 1]));
    std::printf("    errors:");
    for (double x : e) std::printf(" %.3e", x);
    std::printf("\n    orders:");
    for (double x : p) std::printf(" %.3f", x);
    std::printf("\n");
    return p;
}

template <template <class, class> class Stepper> double harmonic_error(int steps) {
    HarmonicSys<double> sys;
    sys.omega = 1.3;
    const double y0[2] = {1.0, 0.0}, t_end = 5.0;
    const std::vector<double> y = run_fixed<Stepper>(sys, y0, t_end, steps);
    return std::hypot(y[0] - std::cos(1.3 * t_end), y[1] + 1.3 * std::sin(1.3 * t_end));
}

template <template <class, class> class Stepper> double nh_particle_error(int steps) {
    using Sys = nhvk::NonholonomicSystem<nhvk::models::NhParticle, double>;
    const Sys sys{};
    const double q0[3] = {0.2, -0.4, 0.1}, v0[3] = {0.9, 0.7, -0.4 * 0.9};
    const double y0[6] = {q0[0], q0[1], q0[2], v0[0], v0[1], v0[2]};
    const double t_end = 3.0;
    const std::vector<double> y = run_fixed<Stepper>(sys, y0, t_end, steps);
    double qe[3];
    nh_particle_exact(q0, v0, t_end, qe);
    return std::sqrt(std::pow(y[0] - qe[0], 2) + std::pow(y[1] - qe[1], 2) + std::pow(y[2] - qe[2], 2));
}

inline void expect_order(const std::vector<double>& p, double order, double tolerance = 0.3) {
    for (double x : p) EXPECT_NEAR(x, order, tolerance);
}

} // namespace nhvk_test
