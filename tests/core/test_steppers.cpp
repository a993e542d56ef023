// SPDX-License-Identifier: MIT
// Orders of accuracy of the steppers (include/nhvk/steppers.hpp) by step halving on problems with a known solution:
// the harmonic oscillator (a plain ODE system) and the nonholonomic particle (closed form of docs/models.md).
#include "core_test_util.hpp"
#include "stepper_order.hpp"

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

using nhvk_test::expect_order;
using nhvk_test::harmonic_error;
using nhvk_test::nh_particle_error;
using nhvk_test::observed_orders;

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
