// SPDX-License-Identifier: MIT
// midpoint_perpendicular (Talamucci Example 2 (v)): φ = (p1 − p2)·(ṗ1 + ṗ2), linear of degree 1; the laws derived
// below from the equations of motion: nonholonomic d × ḋ and |Ḃ| (any masses), vakonomic Noether
// momenta of L̃ = L − μφ; energies and divergence laws.
#include "nhvk/models/midpoint_perpendicular.hpp"
#include "spring_pair_testing.hpp"

namespace nhvk::testing {
namespace {

using M = models::MidpointPerpendicular;

/** @brief On d·s = 0: remove from s = ṗ1 + ṗ2 its component along d (half from each particle). */
void random_state(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    random_spring_pair(d, q, v);
    const Vec3 dd = separation(q.data()), s = first(v.data()) + second(v.data());
    const double c = 0.5 * dot(dd, s) / dot(dd, dd);
    for (int j = 0; j < 3; ++j) {
        v[j] -= c * dd[j];
        v[3 + j] -= c * dd[j];
    }
}

TEST(MidpointPerpendicular, LinearOfDegreeOne) {
    expect_linear_of_degree_one<M>();
    // and it is the source's printed expression (v)
    const double q[6] = {0.1, -0.2, 0.3, 1, 0.2, -0.1}, v[6] = {0.5, 0.1, -0.4, 0.2, 0.3, 0.9};
    double a;
    M{}.constraints(q, v, 0.0, &a);
    const double paper = (q[0] - q[3]) * (v[0] + v[3]) + (q[1] - q[4]) * (v[1] + v[4]) + (q[2] - q[5]) * (v[2] + v[5]);
    EXPECT_NEAR(a, paper, 1e-15);
}

TEST(MidpointPerpendicular, NonholonomicRelativeAngularMomentumAndMidpointSpeedAreConserved) {
    // m1p̈1 = F1 + λd, m2p̈2 = −F1 + λd with F1 ∥ d: both accelerations are ∥ d (any masses). So d̈ ∥ d (d × ḋ
    // constant) and B̈ ∥ d ⊥ Ḃ (φ = 0: |Ḃ| constant). Neither the total momentum (Ṗ = 2λd) nor a particle's own speed
    // (ṗ1·p̈1 ∝ ṗ1·d ≠ 0) is: checked to change, so that the laws are not properties of every motion.
    Draw d(1301);
    const M m = unequal_masses<M>();
    double worst_l = 0.0, worst_b = 0.0, least_dp = 1e9, least_speed1 = 1e9;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 6> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, {0.3}, linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status);
        worst_l = std::max(worst_l, max_change_relative_angular_momentum(r));
        worst_b =
            std::max(worst_b, r.max_change([&](int i) { return norm(0.5 * (first(r.v_nh(i)) + second(r.v_nh(i)))); }));
        least_dp = std::min(least_dp, max_vec_change(r.rows(), [&](int i) { return momentum(m, r.v_nh(i)); }));
        least_speed1 = std::min(least_speed1, r.max_change([&](int i) { return norm(first(r.v_nh(i))); }));
    }
    EXPECT_LT(worst_l, 1e-9);
    EXPECT_LT(worst_b, 1e-9);
    EXPECT_GT(least_dp, 1e-2);
    EXPECT_GT(least_speed1, 1e-2);
    measured("max_change_d_cross_ddot", worst_l);
    measured("max_change_midpoint_speed", worst_b);
    measured("min_change_total_momentum", least_dp);
    measured("min_change_speed1", least_speed1);
}

TEST(MidpointPerpendicular, VakonomicNoetherMomenta) {
    // L̃ = L − μ d·(ṗ1 + ṗ2) is invariant under translations and rotations, so along the vakonomic motion
    // Σ ∂L̃/∂ṗᵢ = m1ṗ1 + m2ṗ2 − 2μd and Σ pᵢ × ∂L̃/∂ṗᵢ = p1 × (m1ṗ1 − μd) + p2 × (m2ṗ2 − μd) are constant.
    check_vakonomic_momenta<M>(
        random_state, 1303, [](Draw& d) { return std::array<double, 1>{d(0.2, 0.8)}; },
        [](const Recorded<M>& r, int i, int) { return r.mu(i)[0] * separation(r.q_vk(i)); });
}
TEST(MidpointPerpendicular, Conservation) { check_conservation(M{}, random_state, 1304, true, 3.0, 4, 0.3); }

TEST(MidpointPerpendicular, DivergenceLaws) { check_divergence_laws(M{}, random_state, 1305, 3, 0.5); }

} // namespace
} // namespace nhvk::testing
