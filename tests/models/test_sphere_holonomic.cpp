// SPDX-License-Identifier: MIT
// sphere_holonomic (docs/models.md, control case): |q| constant, and both dynamics coincide for every μ0.
#include "model_testing.hpp"
#include "nhvk/models/sphere_holonomic.hpp"

namespace nhvk::testing {
namespace {

using M = models::SphereHolonomic;

/** @brief Random q0 (|q0| ∈ [0.5, 1.5]) and v0 tangent to the sphere (radial part removed). */
void random_state(Draw& d, std::array<double, 3>& q, std::array<double, 3>& v) {
    q = {d(-1, 1), d(-1, 1), d(-1, 1)};
    const double scale = d(0.5, 1.5) / std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    for (double& x : q) x *= scale;
    v = {d(-2, 2), d(-2, 2), d(-2, 2)};
    const double qv = (q[0] * v[0] + q[1] * v[1] + q[2] * v[2]) / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    for (int j = 0; j < 3; ++j) v[j] -= qv * q[j];
}

TEST(SphereHolonomic, BothDynamicsCoincideForEveryMu) {
    check_coincide(M{}, random_state, 901, {-3.0, -0.5, 0.0, 0.5, 3.0}, 4.0, 1e-10, 3);
}

TEST(SphereHolonomic, RadiusConstant) {
    Draw d(902);
    double worst = 0.0, least_motion = 1e300;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(M{}, q0, v0, {0.7}, linear_times(4.0, 40));
        ASSERT_EQ(r.outcome.status, Status::ok);
        auto radius = [](const double* q) { return std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]); };
        worst = std::max(worst, r.max_change([&](int i) { return radius(r.q_nh(i)); }));
        worst = std::max(worst, r.max_change([&](int i) { return radius(r.q_vk(i)); }));
        least_motion = std::min(least_motion, r.least_motion()); // the radius itself is 1 + O(1e-16)
    }
    EXPECT_LT(worst, 1e-10);
    expect_moves(least_motion, "a constant radius would hold trivially");
    measured("max_change_radius", worst);
}

TEST(SphereHolonomic, Conservation) { check_conservation(M{}, random_state, 903, true, 4.0, 4, 2.0); }

} // namespace
} // namespace nhvk::testing
