// SPDX-License-Identifier: MIT
// nh_particle (docs/models.md): the nonholonomic closed form, the vakonomic conserved momenta, energies, and the
// t³/t² divergence laws of docs/physics.md §4.2.
#include "model_testing.hpp"
#include "nhvk/models/nh_particle.hpp"

namespace nhvk::testing {
namespace {

using M = models::NhParticle;

/** @brief Random (q0, v0) on φ = 0: ż0 = y0 ẋ0 solved analytically. */
void random_state(Draw& d, std::array<double, 3>& q, std::array<double, 3>& v) {
    q = {d(-1, 1), d(-1, 1), d(-1, 1)};
    v = {d(-1, 1), d(0.3, 1.0) * (d(0, 1) < 0.5 ? -1 : 1), 0.0};
    v[2] = q[1] * v[0];
}

TEST(NhParticle, NonholonomicClosedForm) {
    // ÿ = 0, C = ẋ √(1 + y²); x = x0 + (C/ẏ0)(asinh y − asinh y0), z = z0 + (C/ẏ0)(√(1+y²) − √(1+y0²)).
    Draw d(101);
    double worst = 0.0;
    for (int s = 0; s < 6; ++s) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(M{}, q0, v0, {0.0}, linear_times(2.0, 20));
        ASSERT_EQ(r.outcome.status, Status::ok);
        const double C = v0[0] * std::sqrt(1 + q0[1] * q0[1]);
        for (int i = 1; i < r.rows(); ++i) {
            const double t = r.t[i], y = q0[1] + v0[1] * t;
            const double x = q0[0] + C / v0[1] * (std::asinh(y) - std::asinh(q0[1]));
            const double z = q0[2] + C / v0[1] * (std::sqrt(1 + y * y) - std::sqrt(1 + q0[1] * q0[1]));
            worst = std::max({worst, std::fabs(r.q_nh(i)[0] - x), std::fabs(r.q_nh(i)[1] - y),
                              std::fabs(r.q_nh(i)[2] - z), std::fabs(r.v_nh(i)[0] - C / std::sqrt(1 + y * y))});
        }
    }
    EXPECT_LT(worst, 1e-9);
    measured("max_error_closed_form", worst);
}

TEST(NhParticle, VakonomicMomentaOfCyclicCoordinates) {
    // L̃ = ½|v|² − μ(ż − y ẋ): x and z are cyclic, so p_x = ẋ + μ y and p_z = ż − μ are conserved.
    Draw d(102);
    double worst = 0.0, least_p = 1e300, least_motion = 1e300;
    for (double mu0 : {0.0, 0.4, -0.9}) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(M{}, q0, v0, {mu0}, linear_times(2.0, 20));
        ASSERT_EQ(r.outcome.status, Status::ok);
        auto px = [&](int i) { return r.v_vk(i)[0] + r.mu(i)[0] * r.q_vk(i)[1]; };
        auto pz = [&](int i) { return r.v_vk(i)[2] - r.mu(i)[0]; };
        worst = std::max({worst, r.max_change(px), r.max_change(pz)});
        // not vacuous: the momenta are not 0 and the motion moves (ẋ, ż change with y and μ)
        least_p = std::min({least_p, std::fabs(px(0)), std::fabs(pz(0))});
        least_motion = std::min(least_motion, r.least_motion());
    }
    EXPECT_LT(worst, 1e-10);
    EXPECT_GT(least_p, 1e-3);
    expect_moves(least_motion);
    measured("max_change_px_pz", worst);
    measured("min_abs_px_pz", least_p);
}

TEST(NhParticle, EnergiesConserved) { check_conservation(M{}, random_state, 103, /*nh_energy=*/true); }

TEST(NhParticle, DivergenceLaws) { check_divergence_laws(M{}, random_state, 104); }

TEST(NhParticle, HomogeneousOfDegreeOne) {
    const double q[3] = {0.3, -0.7, 0.2}, v[3] = {0.5, 0.1, -0.4};
    EXPECT_NEAR(homogeneity_degree(M{}, q, v)[0], 1.0, 1e-12);
}

} // namespace
} // namespace nhvk::testing
