// SPDX-License-Identifier: MIT
// rigid_pair (Talamucci Example 1, control case): both dynamics coincide for every μ0; the distance is constant, the
// centre of mass falls freely, the relative speed is constant; energies.
#include "model_testing.hpp"
#include "nhvk/models/rigid_pair.hpp"

namespace nhvk::testing {
namespace {

using M = models::RigidPair;

M unequal() {
    M m;
    m.m1 = 1.0;
    m.m2 = 2.5;
    return m;
}

/** @brief Random positions and velocities; the relative velocity's component along p1 − p2 is removed with mass
 *         weights (the centre-of-mass velocity is kept), which lands on φ = 0 exactly. */
auto sampler(const M& m) {
    return [m](Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
        for (double& x : q) x = d(-1, 1);
        for (double& x : v) x = d(-1.5, 1.5);
        double dd = 0, dw = 0;
        for (int j = 0; j < 3; ++j) {
            const double dj = q[j] - q[3 + j];
            dd += dj * dj;
            dw += dj * (v[j] - v[3 + j]);
        }
        const double M_ = m.m1 + m.m2;
        for (int j = 0; j < 3; ++j) {
            const double dj = q[j] - q[3 + j];
            v[j] -= m.m2 / M_ * dw / dd * dj;
            v[3 + j] += m.m1 / M_ * dw / dd * dj;
        }
    };
}

TEST(RigidPair, BothDynamicsCoincideForEveryMu) {
    check_coincide(M{}, sampler(M{}), 1101, {-3.0, -0.5, 0.0, 0.5, 3.0}, 3.0, 1e-10, 3);
    check_coincide(unequal(), sampler(unequal()), 1102, {-1.0, 2.0}, 3.0, 1e-10, 2);
}

TEST(RigidPair, DistanceConstantCentreOfMassFallsFreely) {
    Draw d(1103);
    const M m = unequal();
    double worst_dist = 0.0, worst_com = 0.0, worst_rel = 0.0, least_size = 1e300;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 6> q0, v0;
        sampler(m)(d, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, {0.8}, linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok);
        auto dist = [](const double* q) {
            return std::sqrt(std::pow(q[0] - q[3], 2) + std::pow(q[1] - q[4], 2) + std::pow(q[2] - q[5], 2));
        };
        auto rel_speed = [](const double* v) {
            return std::sqrt(std::pow(v[0] - v[3], 2) + std::pow(v[1] - v[4], 2) + std::pow(v[2] - v[5], 2));
        };
        worst_dist = std::max({worst_dist, r.max_change([&](int i) { return dist(r.q_nh(i)); }),
                               r.max_change([&](int i) { return dist(r.q_vk(i)); })});
        worst_rel = std::max(worst_rel, r.max_change([&](int i) { return rel_speed(r.v_nh(i)); }));
        least_size = std::min({least_size, dist(q0.data()), rel_speed(v0.data())}); // constants that are not 0
        const double Mt = m.m1 + m.m2;
        for (int i = 1; i < r.rows(); ++i) {
            const double t = r.t[i];
            for (int j = 0; j < 3; ++j) {
                const double R0 = (m.m1 * q0[j] + m.m2 * q0[3 + j]) / Mt, V0 = (m.m1 * v0[j] + m.m2 * v0[3 + j]) / Mt;
                const double R = (m.m1 * r.q_nh(i)[j] + m.m2 * r.q_nh(i)[3 + j]) / Mt;
                worst_com = std::max(worst_com, std::fabs(R - (R0 + V0 * t - (j == 2 ? 0.5 * m.g * t * t : 0.0))));
            }
        }
    }
    EXPECT_LT(worst_dist, 1e-10);
    EXPECT_LT(worst_com, 1e-10);
    EXPECT_LT(worst_rel, 1e-10);
    EXPECT_GT(least_size, 1e-2);
    measured("min_distance_or_relative_speed", least_size);
    measured("max_change_distance", worst_dist);
    measured("max_error_centre_of_mass", worst_com);
    measured("max_change_relative_speed", worst_rel);
}

TEST(RigidPair, Conservation) { check_conservation(unequal(), sampler(unequal()), 1104, true, 3.0, 4, 2.0); }

} // namespace
} // namespace nhvk::testing
