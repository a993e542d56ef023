// SPDX-License-Identifier: MIT
// both_perpendicular (Talamucci Example 2 (vi), with the paper's misprinted (q1 − q2) read as (q1 − q4)):
// φ = (d·ṗ1, d·ṗ2), linear of degree 1; the integrable combination φ1 − φ2 = ½ d/dt |d|² keeps |p1 − p2| in both
// dynamics; the nonholonomic laws derived below (d × ḋ, each particle's speed), the vakonomic Noether momenta of
// L̃ = L − μ·φ; energies and divergence laws.
#include "nhvk/models/both_perpendicular.hpp"
#include "spring_pair_testing.hpp"

namespace nhvk::testing {
namespace {

using M = models::BothPerpendicular;

/** @brief On d·ṗ1 = d·ṗ2 = 0: remove from each velocity its component along d. */
void random_state(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    random_spring_pair(d, q, v);
    const Vec3 dd = separation(q.data());
    const double c1 = dot(dd, first(v.data())) / dot(dd, dd), c2 = dot(dd, second(v.data())) / dot(dd, dd);
    for (int j = 0; j < 3; ++j) {
        v[j] -= c1 * dd[j];
        v[3 + j] -= c2 * dd[j];
    }
}

TEST(BothPerpendicular, LinearOfDegreeOne) { expect_linear_of_degree_one<M>(); }
TEST(BothPerpendicular, DistanceIsConservedInBothDynamics) {
    // φ1 − φ2 = d·ḋ = ½ d/dt |d|²: the spring's length stays at its initial value along both motions, for μ0 = 0
    // and μ0 ≠ 0 and unequal masses. (With the paper's printed (q1 − q2) in place of (q1 − q4) it would not.)
    Draw d(1401);
    double worst = 0.0, least_other = 1e9;
    for (int s = 0; s < 4; ++s) {
        std::array<double, 6> q0, v0;
        random_state(d, q0, v0);
        const std::array<double, 2> mu0 = {s < 2 ? 0.0 : d(-0.8, 0.8), s < 2 ? 0.0 : d(-0.8, 0.8)};
        const Recorded<M> r = run_member(unequal_masses<M>(), q0, v0, mu0, linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status);
        worst = std::max({worst, r.max_change([&](int i) { return norm(separation(r.q_nh(i))); }),
                          r.max_change([&](int i) { return norm(separation(r.q_vk(i))); })});
        // the midpoint does move (else |d| constant would be a property of a motion at rest)
        least_other = std::min(
            least_other, max_vec_change(r.rows(), [&](int i) { return 0.5 * (first(r.q_nh(i)) + second(r.q_nh(i))); }));
    }
    EXPECT_LT(worst, 1e-9);
    EXPECT_GT(least_other, 1e-2);
    measured("max_change_distance_both_dynamics", worst);
    measured("min_midpoint_displacement", least_other);
}

TEST(BothPerpendicular, NonholonomicRelativeAngularMomentumAndSpeedsAreConserved) {
    // mᵢp̈ᵢ = ±F1 + λᵢd with F1 ∥ d: both accelerations are ∥ d. So d̈ ∥ d (d × ḋ constant, hence |ḋ|, as ḋ ⊥ d),
    // and ṗᵢ ⊥ d gives d/dt |ṗᵢ|² = 0: each speed is constant. The total momentum is not (Ṗ = (λ1 + λ2)d).
    Draw d(1402);
    const M m = unequal_masses<M>();
    double worst_l = 0.0, worst_speed = 0.0, least_dp = 1e9;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 6> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, {0.3, -0.2}, linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status);
        worst_l = std::max(worst_l, max_change_relative_angular_momentum(r));
        worst_speed = std::max({worst_speed, r.max_change([&](int i) { return norm(first(r.v_nh(i))); }),
                                r.max_change([&](int i) { return norm(second(r.v_nh(i))); })});
        least_dp = std::min(least_dp, max_vec_change(r.rows(), [&](int i) { return momentum(m, r.v_nh(i)); }));
    }
    EXPECT_LT(worst_l, 1e-9);
    EXPECT_LT(worst_speed, 1e-9);
    EXPECT_GT(least_dp, 1e-2);
    measured("max_change_d_cross_ddot", worst_l);
    measured("max_change_particle_speeds", worst_speed);
    measured("min_change_total_momentum", least_dp);
}

TEST(BothPerpendicular, VakonomicNoetherMomenta) {
    // L̃ = L − μ1 d·ṗ1 − μ2 d·ṗ2 is invariant under translations and rotations: m1ṗ1 + m2ṗ2 − (μ1 + μ2)d and
    // p1 × (m1ṗ1 − μ1d) + p2 × (m2ṗ2 − μ2d) are constant along the vakonomic motion.
    check_vakonomic_momenta<M>(
        random_state, 1403,
        [](Draw& d) {
            return std::array<double, 2>{d(0.2, 0.8), d(-0.8, -0.2)};
        },
        [](const Recorded<M>& r, int i, int particle) { return r.mu(i)[particle - 1] * separation(r.q_vk(i)); });
}
TEST(BothPerpendicular, Conservation) { check_conservation(M{}, random_state, 1404, true, 3.0, 4, 0.3); }

TEST(BothPerpendicular, DivergenceLaws) { check_divergence_laws(M{}, random_state, 1405, 3, 0.5); }

} // namespace
} // namespace nhvk::testing
