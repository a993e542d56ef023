// SPDX-License-Identifier: MIT
// appell_hamel (docs/models.md): λ = m g/(1 + a²), fixed horizontal direction, horizontal speed decreasing at
// a g/(1 + a²); the vakonomic motion coincides for every μ0 (a nonlinear control case); energy; the singular set.
#include "model_testing.hpp"
#include "nhvk/models/appell_hamel.hpp"

namespace nhvk::testing {
namespace {

using M = models::AppellHamel;

/** @brief Random (q0, v0) on φ = 0: horizontal speed s0 ∈ [3, 5] (the singular set s = 0 is reached only at
 *         t = s0(1 + a²)/(a g) ≥ 0.76 s with the defaults), ż0 = a s0. */
void random_state(Draw& d, std::array<double, 3>& q, std::array<double, 3>& v) {
    q = {d(-1, 1), d(-1, 1), d(-1, 1)};
    const double s = d(3, 5), ang = d(-M_PI, M_PI);
    v = {s * std::cos(ang), s * std::sin(ang), 0.0};
    v[2] = M{}.a * s;
}

TEST(AppellHamel, MultiplierIsMgOverOnePlusASquared) {
    Draw d(601);
    double worst = 0.0;
    for (int s = 0; s < 6; ++s) {
        M m;
        m.m = d(0.5, 2.0);
        m.a = d(0.2, 1.5);
        std::array<double, 3> q, v;
        random_state(d, q, v);
        v[2] = m.a * std::hypot(v[0], v[1]);
        double y[6] = {q[0], q[1], q[2], v[0], v[1], v[2]}, dy[6], lambda[1] = {1e300};
        ASSERT_EQ((NonholonomicSystem<M, double>{m}.rhs(0.0, y, dy, lambda)), Status::ok);
        worst = std::max(worst, std::fabs(lambda[0] - m.m * m.g / (1 + m.a * m.a)) / (m.m * m.g));
    }
    EXPECT_LT(worst, 1e-14);
    measured("max_rel_error_lambda", worst);
}

TEST(AppellHamel, FixedDirectionAndUniformlyDeceleratingSpeed) {
    // s(t) = s0 − a g t/(1 + a²), (ẋ, ẏ) ∥ (ẋ0, ẏ0), z(t) = z0 + a(s0 t − ½ a g t²/(1 + a²)).
    Draw d(602);
    const M m;
    const double rate = m.a * m.g / (1 + m.a * m.a);
    double worst = 0.0;
    for (int s = 0; s < 5; ++s) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const double s0 = std::hypot(v0[0], v0[1]);
        const Recorded<M> r = run_member(m, q0, v0, {0.0}, linear_times(0.5, 25));
        ASSERT_EQ(r.outcome.status, Status::ok);
        for (int i = 1; i < r.rows(); ++i) {
            const double t = r.t[i], st = s0 - rate * t;
            for (int j = 0; j < 2; ++j) {
                worst = std::max(worst, std::fabs(r.v_nh(i)[j] - v0[j] / s0 * st));
                worst = std::max(worst, std::fabs(r.q_nh(i)[j] - (q0[j] + v0[j] / s0 * (s0 * t - 0.5 * rate * t * t))));
            }
            worst = std::max(worst, std::fabs(r.q_nh(i)[2] - (q0[2] + m.a * (s0 * t - 0.5 * rate * t * t))));
        }
    }
    EXPECT_LT(worst, 1e-10);
    measured("max_error_closed_form", worst);
}

TEST(AppellHamel, VakonomicCoincidesForEveryMu) {
    // m s + μ a and m ż − μ + m g t are conserved vakonomically, giving the nonholonomic s(t) for every μ0
    // (W̃ is singular only at μ = −m s/a ≤ −6 here).
    check_coincide(M{}, random_state, 603, {-2.0, -0.5, 0.0, 0.7, 3.0}, 0.5, 1e-10, 3);
}

TEST(AppellHamel, Conservation) { check_conservation(M{}, random_state, 604, true, 0.5, 4, 1.0); }

TEST(AppellHamel, HomogeneousOfDegreeOne) {
    const double q[3] = {0.3, -0.7, 0.2}, v[3] = {0.5, 0.1, -0.4};
    EXPECT_NEAR(homogeneity_degree(M{}, q, v)[0], 1.0, 1e-12);
}

TEST(AppellHamel, SingularSetIsReportedNotCrashed) {
    // ẋ = ẏ = 0: √ is not differentiable; the right-hand side must fail with a status, never return NaNs as ok: the
    // state is outside the model's velocity chart.
    double y[6] = {0, 0, 0, 0, 0, 0}, dy[6];
    EXPECT_EQ((NonholonomicSystem<M, double>{M{}}.rhs(0.0, y, dy)), Status::chart_singular);
    double yk[7] = {0, 0, 0, 0, 0, 0, 0.3}, dyk[7];
    EXPECT_EQ((VakonomicSystem<M, double>{M{}}.rhs(0.0, yk, dyk)), Status::chart_singular);
    const Recorded<M> r = run_member(M{}, {0, 0, 0}, {0, 0, 0}, {0.0}, {0.1});
    EXPECT_EQ(r.outcome.status, Status::chart_singular) << status_name(r.outcome.status);
    EXPECT_EQ(r.outcome.time_index, -1);
}

TEST(AppellHamel, ReachingTheSingularSetEndsAsChartSingularNotAtTheStepLimit) {
    // From s0 = 3 the horizontal speed reaches 0 at t* = s0 (1 + a²)/(a g) = 0.7645 s (closed form above). Before,
    // DOPRI5 crossed the kink with a wrong state and then ground to the step limit (2·10^6 steps here, ~1 s; 10^7
    // and ~20 s with the old default). Now the first output time after t* fails with chart_singular, within a few
    // hundred steps, and every output time before t* is reached.
    const M m;
    const double s0 = 3.0, t_star = s0 * (1 + m.a * m.a) / (m.a * m.g);
    const std::vector<double> times = {0.5, 0.75, 0.76, 1.0, 2.0};
    const Recorded<M> r = run_member(m, {0, 0, 0}, {s0, 0, m.a * s0}, {0.0}, times);
    EXPECT_EQ(r.outcome.status, Status::chart_singular) << status_name(r.outcome.status);
    EXPECT_EQ(r.outcome.failed, Dynamics::nonholonomic);
    ASSERT_LT(times[2], t_star);
    ASSERT_GT(times[3], t_star);
    EXPECT_EQ(r.outcome.time_index, 3);
    // The same through the chunk path with a budget of 1000 steps: chart_singular, not step_limit.
    StepControl ctl = tight();
    ctl.max_steps = 1000;
    EXPECT_EQ(run_member(m, {0, 0, 0}, {s0, 0, m.a * s0}, {0.0}, times, ctl).outcome.status, Status::chart_singular);
}

} // namespace
} // namespace nhvk::testing
