// SPDX-License-Identifier: MIT
// Orders of accuracy of the steppers (include/nhvk/steppers.hpp) by step halving on problems with a known solution:
// the harmonic oscillator (a plain ODE system) and the nonholonomic particle (closed form of docs/models.md).
#include "core_test_util.hpp"

#include <nhvk/models/nh_particle.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

using nhvk::Dopri5;
using nhvk::Rk4;
using nhvk::Status;
using nhvk::StepControl;

/**
 * Integrate `sys` from y0 over [0, t_end] with a fixed step h and return the final state.
 *
 * Rk4 takes `ctl.dt = h` and one `advance_to(t_end)`. Dopri5 is adaptive; to use it as a fixed-step method we
 * (i) set huge tolerances, so every step is accepted and the controller only ever proposes to grow the step, and
 * (ii) request an output at every grid point t_i = i·h: `advance_to` clips each step to land exactly on the next
 * output time, so every step has length h (up to the rounding of t_i). The test checks that exactly one step was
 * taken per grid interval.
 */
template <template <class, class> class Stepper, class Sys>
std::vector<double> run_fixed(const Sys& sys, const double* y0, double t_end, int steps) {
    StepControl ctl;
    const double h = t_end / steps;
    ctl.dt = h;
    ctl.rtol = 1e10;
    ctl.atol = 1e10;
    ctl.min_step = 0.0;
    Stepper<Sys, double> st;
    EXPECT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
    for (int i = 1; i <= steps; ++i) EXPECT_EQ(st.advance_to(sys, i == steps ? t_end : i * h), Status::ok);
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
    nhvk_test::HarmonicSys<double> sys;
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
    nhvk_test::nh_particle_exact(q0, v0, t_end, qe);
    return std::sqrt(std::pow(y[0] - qe[0], 2) + std::pow(y[1] - qe[1], 2) + std::pow(y[2] - qe[2], 2));
}

void expect_order(const std::vector<double>& p, double order) {
    for (double x : p) EXPECT_NEAR(x, order, 0.3);
}

TEST(StepperOrder, Rk4HarmonicOscillator) { expect_order(observed_orders(harmonic_error<Rk4>, 20, 5), 4.0); }

TEST(StepperOrder, Dopri5HarmonicOscillator) { expect_order(observed_orders(harmonic_error<Dopri5>, 20, 4), 5.0); }

TEST(StepperOrder, Rk4NonholonomicParticle) { expect_order(observed_orders(nh_particle_error<Rk4>, 15, 5), 4.0); }

TEST(StepperOrder, Dopri5NonholonomicParticle) { expect_order(observed_orders(nh_particle_error<Dopri5>, 16, 4), 5.0); }

// The adaptive controller meets its tolerance: the global error on the harmonic oscillator shrinks with rtol and
// stays within a modest multiple of it (a loose check of the step control, not of the order).
TEST(StepperAdaptive, Dopri5ErrorTracksTolerance) {
    nhvk_test::HarmonicSys<double> sys;
    const double y0[2] = {1.0, 0.0};
    double prev = 1.0;
    for (double tol : {1e-6, 1e-8, 1e-10, 1e-12}) {
        StepControl ctl;
        ctl.rtol = tol;
        ctl.atol = tol;
        ctl.dt = 0.0; // automatic first step
        Dopri5<nhvk_test::HarmonicSys<double>, double> st;
        ASSERT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
        ASSERT_EQ(st.advance_to(sys, 10.0), Status::ok);
        EXPECT_EQ(st.t, 10.0);
        const double err = std::hypot(st.y[0] - std::cos(10.0), st.y[1] + std::sin(10.0));
        std::printf("    tol %.0e: error %.3e, %lld steps (%lld rejected)\n", tol, err, st.steps, st.rejected);
        EXPECT_LT(err, 100 * tol);
        EXPECT_LT(err, prev);
        prev = err;
    }
}

// Rk4 lands exactly on output times that are not multiples of dt.
TEST(StepperAdaptive, Rk4LandsOnOutputTimes) {
    nhvk_test::HarmonicSys<double> sys;
    const double y0[2] = {1.0, 0.0};
    StepControl ctl;
    ctl.dt = 0.03;
    Rk4<nhvk_test::HarmonicSys<double>, double> st;
    ASSERT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
    for (double t : {0.1, 0.37, 1.0, 2.718281828}) {
        ASSERT_EQ(st.advance_to(sys, t), Status::ok);
        EXPECT_EQ(st.t, t);
        EXPECT_NEAR(st.y[0], std::cos(t), 1e-7);
    }
}

// A step so small that the step count does not fit a long long is step_limit, not one wrapped step (issue 7: RK4 with
// a tiny dt used to take one step per output interval and report ok).
TEST(StepperAdaptive, Rk4StepCountBeyondTheBudgetIsStepLimitNotOneStep) {
    nhvk_test::HarmonicSys<double> sys;
    const double y0[2] = {1.0, 0.0};
    for (double dt : {1e-300, 1e-12}) { // 1e300 steps (beyond 2^63), 1e12 steps (beyond max_steps)
        StepControl ctl;
        ctl.dt = dt;
        Rk4<nhvk_test::HarmonicSys<double>, double> st;
        ASSERT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
        EXPECT_EQ(st.advance_to(sys, 1.0), Status::step_limit) << "dt = " << dt;
        EXPECT_EQ(st.steps, 0) << "dt = " << dt;
    }
    StepControl ctl; // the budget is exact: 1000 steps of 1e-3 fit max_steps = 1000, not 999
    ctl.dt = 1e-3;
    ctl.max_steps = 1000;
    Rk4<nhvk_test::HarmonicSys<double>, double> st;
    ASSERT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
    EXPECT_EQ(st.advance_to(sys, 1.0), Status::ok);
    EXPECT_EQ(st.steps, 1000);
    ctl.max_steps = 999;
    ASSERT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
    EXPECT_EQ(st.advance_to(sys, 1.0), Status::step_limit);
}

} // namespace
