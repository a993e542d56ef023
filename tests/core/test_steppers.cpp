// SPDX-License-Identifier: MIT
// Orders of accuracy of the steppers (include/nhvk/steppers.hpp) by step halving on problems with a known solution:
// the harmonic oscillator (a plain ODE system) and the nonholonomic particle (closed form of docs/models.md).
#include "core_test_util.hpp"
#include "stepper_order.hpp"

#include <nhvk/models/nh_particle.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
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

/** A forced oscillator whose right-hand side is singular from `t_fail` on, and whose projection is the identity,
 *  counts its calls and fails from `t_project_fail` on: what a fixed-step stepper does with it shows its stage times,
 *  its step count and where it ends. */
struct ForcedSys {
    static constexpr int dim = 2;
    double t_fail = HUGE_VAL, t_project_fail = HUGE_VAL;
    mutable long long projections = 0;
    Status rhs(double t, const double* y, double* dy) const {
        if (t >= t_fail) return Status::singular;
        dy[0] = y[1];
        dy[1] = -y[0] + std::cos(3.0 * t);
        return Status::ok;
    }
    Status project(double t, double*) const {
        ++projections;
        return t >= t_project_fail ? Status::singular : Status::ok;
    }
};

// The time and the step count are set once after an interval's steps (FixedStep::settle), not in each: with the
// projection on (the identity here) or off, the stage times, the states, the count and the time reached, at every
// output time and where a step fails, are the same, and the counts those of the plan: ⌈span / dt⌉ steps an interval.
TEST(StepperFixed, Rk4TakesTheSameStepsWithTheProjectionOnOrOff) {
    const double y0[2] = {1.0, 0.0}, targets[3] = {0.1, 0.37, 1.0};
    for (const double t_fail : {HUGE_VAL, 0.8}) {
        struct Reached {
            Status s;
            double t, y0, y1;
            long long steps;
        } reached[2][3];
        for (int project = 0; project < 2; ++project) {
            ForcedSys sys;
            sys.t_fail = t_fail;
            StepControl ctl;
            ctl.dt = 0.03;
            ctl.project = project == 1;
            Rk4<ForcedSys, double> st;
            ASSERT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
            for (int i = 0; i < 3; ++i) {
                const Status s = st.advance_to(sys, targets[i]);
                reached[project][i] = {s, st.t, st.y[0], st.y[1], st.steps};
            }
            // init projects once, then each completed step once
            EXPECT_EQ(sys.projections, project ? 1 + st.steps : 0) << "t_fail " << t_fail;
        }
        for (int i = 0; i < 3; ++i) {
            SCOPED_TRACE("t_fail " + std::to_string(t_fail) + ", output time " + std::to_string(targets[i]));
            const Reached &a = reached[0][i], &b = reached[1][i];
            EXPECT_EQ(a.s, b.s);
            EXPECT_EQ(a.steps, b.steps);
            EXPECT_EQ(a.t, b.t); // bit for bit, as the states
            EXPECT_EQ(a.y0, b.y0);
            EXPECT_EQ(a.y1, b.y1);
        }
        const long long planned[3] = {4, 4 + 9, 4 + 9 + 21}; // ⌈0.1/0.03⌉, ⌈0.27/0.03⌉, ⌈0.63/0.03⌉
        if (t_fail > 1.0) {
            for (int i = 0; i < 3; ++i) {
                EXPECT_EQ(reached[0][i].s, Status::ok);
                EXPECT_EQ(reached[0][i].t, targets[i]) << "lands on the output time exactly";
                EXPECT_EQ(reached[0][i].steps, planned[i]);
            }
        } else {
            // the third interval's steps of 0.03 from 0.37: step 14 (from 0.79) has a stage at 0.82 ≥ t_fail; 14 done
            EXPECT_EQ(reached[0][1].s, Status::ok);
            EXPECT_EQ(reached[0][2].s, Status::singular);
            EXPECT_EQ(reached[0][2].steps, planned[1] + 14);
            EXPECT_NEAR(reached[0][2].t, 0.79, 1e-12) << "the time of the last completed step";
        }
    }
}

// A step whose projection fails counts as taken (its state is the stepper's), as when the time and the count were
// kept step by step: the third interval's steps of 0.03 from 0.37 land at 0.40, …, 0.52 ≥ t_project_fail (step 4).
TEST(StepperFixed, Rk4StepWhoseProjectionFailsIsCounted) {
    const double y0[2] = {1.0, 0.0};
    ForcedSys sys;
    sys.t_project_fail = 0.5;
    StepControl ctl;
    ctl.dt = 0.03;
    ctl.project = true;
    Rk4<ForcedSys, double> st;
    ASSERT_EQ(st.init(sys, 0.0, y0, ctl), Status::ok);
    ASSERT_EQ(st.advance_to(sys, 0.1), Status::ok);
    ASSERT_EQ(st.advance_to(sys, 0.37), Status::ok);
    EXPECT_EQ(st.advance_to(sys, 1.0), Status::singular);
    EXPECT_EQ(st.steps, 4 + 9 + 5);
    EXPECT_NEAR(st.t, 0.52, 1e-12);
    EXPECT_EQ(sys.projections, 1 + 4 + 9 + 5);
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
