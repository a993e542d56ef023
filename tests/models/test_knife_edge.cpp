// SPDX-License-Identifier: MIT
// knife_edge (docs/models.md): Bloch's closed form for the blade released from rest on the incline, φ̇ constant,
// energy, and the divergence laws.
#include "model_testing.hpp"
#include "nhvk/models/knife_edge.hpp"

namespace nhvk::testing {
namespace {

using M = models::KnifeEdge;

/** @brief Random (q0, v0) on φ = 0: the contact point moves along the blade, (ẋ, ẏ) = s (cos φ, sin φ). */
void random_state(Draw& d, std::array<double, 3>& q, std::array<double, 3>& v) {
    q = {d(-1, 1), d(-1, 1), d(-3, 3)};
    const double s = d(-1.5, 1.5);
    v = {s * std::cos(q[2]), s * std::sin(q[2]), d(0.3, 2.0) * (d(0, 1) < 0.5 ? -1 : 1)};
}

TEST(KnifeEdge, ReleasedFromRestClosedForm) {
    // φ = 0, φ̇ = ω, ẋ = ẏ = 0 at t = 0: x = (g sin α/(2ω²)) sin²(ωt), y = (g sin α/(2ω²))(ωt − ½ sin 2ωt)
    // (Bloch §1.6), shifted by the initial contact point.
    Draw d(301);
    double worst = 0.0;
    for (int s = 0; s < 5; ++s) {
        M m;
        m.alpha = d(0.1, 0.8);
        const double w = d(0.5, 3.0) * (s % 2 ? -1 : 1);
        const std::array<double, 3> q0 = {d(-1, 1), d(-1, 1), 0.0}, v0 = {0.0, 0.0, w};
        const Recorded<M> r = run_member(m, q0, v0, {0.0}, linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok);
        const double c = m.g * std::sin(m.alpha) / (2 * w * w);
        for (int i = 1; i < r.rows(); ++i) {
            const double t = r.t[i];
            const double x = q0[0] + c * std::sin(w * t) * std::sin(w * t);
            const double y = q0[1] + c * (w * t - 0.5 * std::sin(2 * w * t));
            worst = std::max(
                {worst, std::fabs(r.q_nh(i)[0] - x), std::fabs(r.q_nh(i)[1] - y), std::fabs(r.q_nh(i)[2] - w * t)});
        }
    }
    EXPECT_LT(worst, 1e-9);
    measured("max_error_closed_form", worst);
}

TEST(KnifeEdge, HeadingRateConstant) {
    // J has no φ-component, so J φ̈ = 0 along the nonholonomic motion.
    Draw d(302);
    double worst = 0.0, least_rate = 1e300, least_motion = 1e300;
    for (int s = 0; s < 4; ++s) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(M{}, q0, v0, {0.0}, linear_times(3.0, 15));
        ASSERT_EQ(r.outcome.status, Status::ok);
        worst = std::max(worst, r.max_change([&](int i) { return r.v_nh(i)[2]; }));
        // not vacuous: φ̇ is not 0 and the knife moves
        least_rate = std::min(least_rate, std::fabs(v0[2]));
        least_motion = std::min({least_motion, r.least_motion(), r.most_acceleration()}); // ẋ, ẏ turn with φ
    }
    EXPECT_LT(worst, 1e-12);
    EXPECT_GT(least_rate, 1e-2);
    expect_moves(least_motion);
    measured("max_change_phidot", worst);
    measured("min_abs_phidot", least_rate);
}

TEST(KnifeEdge, Conservation) { check_conservation(M{}, random_state, 303, true, 3.0); }

TEST(KnifeEdge, DivergenceLaws) { check_divergence_laws(M{}, random_state, 304); }

} // namespace
} // namespace nhvk::testing
