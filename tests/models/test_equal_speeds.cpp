// SPDX-License-Identifier: MIT
// equal_speeds (docs/models.md; Talamucci Example 2 (iii)) and perpendicular_velocities (Example 2 (ii)): homogeneity
// degrees 1 and 2, conserved nonholonomic energy (Proposition 1), conserved vakonomic energy, divergence laws.
#include "model_testing.hpp"
#include "nhvk/models/equal_speeds.hpp"
#include "nhvk/models/perpendicular_velocities.hpp"

namespace nhvk::testing {
namespace {

/** @brief Two particles about ℓ apart, speeds ~1. */
void random_pair(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    q = {d(-0.2, 0.2), d(-0.2, 0.2), d(-0.2, 0.2), d(0.8, 1.4), d(-0.3, 0.3), d(-0.3, 0.3)};
    for (double& x : v) x = d(-1, 1);
}

/** @brief On |ṗ1| = |ṗ2|: rescale ṗ2 to the speed of ṗ1. */
void random_equal_speeds(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    random_pair(d, q, v);
    const double s1 = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double s2 = std::sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
    for (int j = 3; j < 6; ++j) v[j] *= s1 / s2;
}

/** @brief On ṗ1 · ṗ2 = 0: remove from ṗ2 its component along ṗ1. */
void random_perpendicular(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    random_pair(d, q, v);
    const double uu = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    const double uw = v[0] * v[3] + v[1] * v[4] + v[2] * v[5];
    for (int j = 0; j < 3; ++j) v[3 + j] -= uw / uu * v[j];
}

TEST(EqualSpeeds, HomogeneousOfDegreeOne) {
    const double q[6] = {0, 0, 0, 1, 0, 0}, v[6] = {0.5, 0.1, -0.4, 0.2, 0.3, 0.9};
    EXPECT_NEAR(homogeneity_degree(models::EqualSpeeds{}, q, v)[0], 1.0, 1e-12);
}

TEST(EqualSpeeds, SpeedsStayEqual) {
    Draw d(701);
    double worst = 0.0, least_off = 1e300, least_motion = 1e300;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 6> q0, v0;
        random_equal_speeds(d, q0, v0);
        const Recorded<models::EqualSpeeds> r = run_member(models::EqualSpeeds{}, q0, v0, {0.2}, linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok);
        worst = std::max(worst, r.max_residual());
        // not vacuous: the speeds change (else they would stay equal trivially) and φ sees unequal ones
        least_motion = std::min(least_motion, r.most_acceleration());
        least_off = std::min(least_off, r.residual_off_manifold(r.rows() - 1));
    }
    EXPECT_LT(worst, 1e-9);
    expect_moves(least_motion);
    EXPECT_GT(least_off, 1e-3);
    measured("max_residual", worst);
    measured("min_acceleration", least_motion);
    measured("min_residual_off_manifold", least_off);
}

TEST(EqualSpeeds, Conservation) {
    check_conservation(models::EqualSpeeds{}, random_equal_speeds, 702, true, 3.0, 4, 0.3);
}

TEST(EqualSpeeds, DivergenceLaws) { check_divergence_laws(models::EqualSpeeds{}, random_equal_speeds, 703, 3, 0.5); }

TEST(PerpendicularVelocities, HomogeneousOfDegreeTwo) {
    const double q[6] = {0, 0, 0, 1, 0, 0}, v[6] = {0.5, 0.1, -0.4, 0.2, 0.3, 0.9};
    EXPECT_NEAR(homogeneity_degree(models::PerpendicularVelocities{}, q, v)[0], 2.0, 1e-12);
}

TEST(PerpendicularVelocities, Conservation) {
    check_conservation(models::PerpendicularVelocities{}, random_perpendicular, 704, true, 3.0, 4, 0.3);
}

TEST(PerpendicularVelocities, DivergenceLaws) {
    check_divergence_laws(models::PerpendicularVelocities{}, random_perpendicular, 705, 3, 0.5);
}

TEST(EqualSpeeds, ParticlesAtRestAreOutsideTheVelocityChart) {
    // |ṗ1| = |ṗ2| = 0 is on φ = 0, but neither norm is differentiable there: chart_singular (before: `singular` from
    // the LU, or a motion through the kink).
    const double q[6] = {0, 0, 0, 1, 0, 0}, rest[6] = {0, 0, 0, 0, 0, 0}, moving[6] = {0.3, 0, 0, 0, 0.3, 0};
    EXPECT_FALSE(models::EqualSpeeds{}.in_velocity_chart(q, rest));
    EXPECT_TRUE(models::EqualSpeeds{}.in_velocity_chart(q, moving));
    double y[12] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, dy[12];
    EXPECT_EQ((NonholonomicSystem<models::EqualSpeeds, double>{}.rhs(0.0, y, dy)), Status::chart_singular);
}

} // namespace
} // namespace nhvk::testing
