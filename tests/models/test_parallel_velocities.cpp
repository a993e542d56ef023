// SPDX-License-Identifier: MIT
// parallel_velocities (Talamucci Example 2 (i)): the rank-2 formulation. Degrees 2 and 3, the whole of ṗ1 × ṗ2
// stays 0, the formulation does not change the motions (compared with the (x, y)-component one: nonholonomic, same
// Četaev reactions; vakonomic, same extremals with transformed μ0), leaving the chart (ṗ1 vertical, or particle 1
// at rest along vakonomic motions) gives Status::singular, energies and divergence laws.
#include "model_testing.hpp"
#include "nhvk/models/parallel_velocities.hpp"

namespace nhvk::testing {
namespace {

using M = models::ParallelVelocities;

/** @brief The same system written with two components of u × w, (u × w)_x and (u × w)_y (valid only where
 *         u_z ≠ 0, the formulation the model header rejects for long runs): test-only, to show that the choice of
 *         the formulation does not change the motions. */
struct ParallelXY : M {
    template <class S> NHVK_HD void constraints(const S*, const S* v, const S&, S* phi) const {
        phi[0] = v[1] * v[5] - v[2] * v[4];
        phi[1] = v[2] * v[3] - v[0] * v[5];
    }
};

/** @brief Random positions about ℓ apart, u = ṗ1 with |u_x|, |u_z| ≥ 0.3, ṗ2 = s u with |s| ∈ [0.45, 1.5]. */
void random_state(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    q = {d(-0.2, 0.2), d(-0.2, 0.2), d(-0.2, 0.2), d(0.8, 1.4), d(-0.3, 0.3), d(-0.3, 0.3)};
    auto away = [&](double lo) { return d(lo, 1.0) * (d(0, 1) < 0.5 ? -1 : 1); };
    const double u[3] = {away(0.3), d(-1, 1), away(0.3)}, s = away(0.3) * 1.5;
    v = {u[0], u[1], u[2], s * u[0], s * u[1], s * u[2]};
}

double cross_norm(const double* v) {
    const double cx = v[1] * v[5] - v[2] * v[4], cy = v[2] * v[3] - v[0] * v[5], cz = v[0] * v[4] - v[1] * v[3];
    return std::sqrt(cx * cx + cy * cy + cz * cz);
}

TEST(ParallelVelocities, HomogeneousOfDegreesTwoAndThree) {
    const double q[6] = {0, 0, 0, 1, 0, 0}, v[6] = {0.5, 0.1, -0.4, 0.2, 0.3, 0.9};
    const auto s = homogeneity_degree(M{}, q, v);
    EXPECT_NEAR(s[0], 2.0, 1e-12);
    EXPECT_NEAR(s[1], 3.0, 1e-12);
}

/** @brief The (x, y)-form multipliers equivalent to the model's ν at velocity u (see FormulationDoesNotChange…). */
std::array<double, 2> xy_multipliers(const double* u, const double* nu) {
    return {nu[1] * u[1] - nu[0] * u[0] / u[2], -nu[1] * u[0] - nu[0] * u[1] / u[2]};
}

TEST(ParallelVelocities, WholeCrossProductStaysZero) {
    // All three components of ṗ1 × ṗ2 stay zero (only two equations are imposed), over t ∈ [0, 3], both dynamics.
    Draw d(1201);
    double worst = 0.0, least_motion = 1e300;
    for (int s = 0; s < 4; ++s) {
        std::array<double, 6> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(M{}, q0, v0, {0.1, -0.1}, linear_times(3.0, 60));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status) << " sample " << s;
        for (int i = 0; i < r.rows(); ++i) worst = std::max({worst, cross_norm(r.v_nh(i)), cross_norm(r.v_vk(i))});
        // not vacuous: both motions move and change their velocities (a zero cross product of constant vectors
        // would prove nothing)
        least_motion = std::min({least_motion, r.least_motion(), r.max_state_change([&](int i) { return r.v_nh(i); }),
                                 r.max_state_change([&](int i) { return r.v_vk(i); })});
    }
    EXPECT_LT(worst, 1e-9);
    expect_moves(least_motion);
    measured("max_abs_cross", worst);
}

TEST(ParallelVelocities, ChartExitsAreRareForNonholonomicAndAtRestForVakonomic) {
    // 200 random states (u uniform in the cube [−1, 1]³, ṗ2 = s u, s ∈ [−1.5, 1.5], μ0 = 0), t ∈ [0, 2], the
    // default step control: the nonholonomic motion stays in the chart; every vakonomic exit (step underflow or
    // singular) happens as particle 1 comes to rest, where the model's multiplier ν2 is large but the equivalent
    // (x, y)-form multipliers stay O(1) (a formulation artefact, documented in the header with these numbers).
    Draw d(1205);
    int nh_exits = 0, vk_exits = 0;
    double max_speed_at_exit = 0.0, max_nu2 = 0.0, max_mu_xy = 0.0;
    for (int s = 0; s < 200; ++s) {
        std::array<double, 6> q, v;
        q = {d(-0.2, 0.2), d(-0.2, 0.2), d(-0.2, 0.2), d(0.8, 1.4), d(-0.3, 0.3), d(-0.3, 0.3)};
        const double u[3] = {d(-1, 1), d(-1, 1), d(-1, 1)}, sc = d(-1.5, 1.5);
        v = {u[0], u[1], u[2], sc * u[0], sc * u[1], sc * u[2]};
        const BothStepped<M> run(q, v, 2.0);
        const Status sa = run.nh_status, sb = run.vk_status;
        const auto& b = run.vk;
        if (sa != Status::ok) {
            EXPECT_TRUE(sa == Status::singular || sa == Status::chart_singular) << status_name(sa);
            ++nh_exits;
        }
        if (sb != Status::ok) {
            EXPECT_TRUE(sb == Status::step_underflow || sb == Status::singular || sb == Status::chart_singular)
                << status_name(sb);
            ++vk_exits;
            const double* uu = b.y + 6;
            max_speed_at_exit = std::max(max_speed_at_exit, std::sqrt(uu[0] * uu[0] + uu[1] * uu[1] + uu[2] * uu[2]));
            max_nu2 = std::max(max_nu2, std::fabs(b.y[13]));
            const auto mu_xy = xy_multipliers(uu, b.y + 12);
            max_mu_xy = std::max({max_mu_xy, std::fabs(mu_xy[0]), std::fabs(mu_xy[1])});
        }
    }
    EXPECT_LE(nh_exits, 2);
    EXPECT_LE(vk_exits, 20);
    EXPECT_LT(max_speed_at_exit, 1e-2);
    EXPECT_LT(max_mu_xy, 5.0);
    measured("nh_chart_exits_of_200", nh_exits);
    measured("vk_chart_exits_of_200", vk_exits);
    measured("max_speed1_at_vk_exit", max_speed_at_exit);
    measured("max_abs_nu2_at_vk_exit", max_nu2);
    measured("max_abs_xy_multiplier_at_vk_exit", max_mu_xy);
}

TEST(ParallelVelocities, FormulationDoesNotChangeTheMotions) {
    // Where both are valid (u_z ≠ 0), the model's (ẑ·c, −e1·c) and the (x̂·c, ŷ·c) of c = u × w (u·c ≡ 0) are
    // related by an invertible v-dependent matrix. Nonholonomic: same reaction space, same motion. Vakonomic: the
    // term ν1 ẑ·c − ν2 e1·c equals μx c_x + μy c_y for all c ⊥ u iff μx x̂ + μy ŷ = ν1 ẑ − ν2 e1 (mod u), i.e.
    // μx = ν2 u_y − ν1 u_x/u_z, μy = −ν2 u_x − ν1 u_y/u_z: the (x, y) system started there follows the same curve.
    check_same_motions<M, ParallelXY>(
        random_state, 1202, [](const double*, const double* v, const double* nu) { return xy_multipliers(v, nu); });
}

TEST(ParallelVelocities, VerticalVelocityLeavesTheChart) {
    // ṗ1 ∥ ẑ: φ1 = φ2 = 0 for every ṗ2, so the chart does not represent ṗ1 × ṗ2 = 0 there; the state is outside the
    // velocity chart and the trajectory ends at t0 with Status::chart_singular (before: `singular` when ṗ2 ∥ ṗ1, and
    // accepted and integrated when ṗ2 ⊥ ṗ1, the state of issue 7).
    const std::array<double, 6> q0 = {0, 0, 0, 1, 0.2, 0.1}, v0 = {0.0, 0.0, 0.7, 0.0, 0.0, -0.4};
    const Recorded<M> r = run_member(M{}, q0, v0, {0.0, 0.0}, {0.5});
    EXPECT_EQ(r.outcome.status, Status::chart_singular) << status_name(r.outcome.status);
    EXPECT_EQ(r.outcome.time_index, -1);
    const std::array<double, 6> perpendicular = {0.0, 0.0, 1.0, 1.0, 0.0, 0.0};
    double phi[2];
    M{}.constraints(q0.data(), perpendicular.data(), 0.0, phi);
    EXPECT_EQ(phi[0], 0.0); // the chart vanishes ...
    EXPECT_EQ(phi[1], 0.0);
    EXPECT_EQ(cross_norm(perpendicular.data()), 1.0); // ... the source does not
    EXPECT_EQ(check_model_state(M{}, q0.data(), perpendicular.data(), 0.0), Status::chart_singular);
    const Recorded<M> p = run_member(M{}, q0, perpendicular, {0.0, 0.0}, {0.5});
    EXPECT_EQ(p.outcome.status, Status::chart_singular) << status_name(p.outcome.status);
    EXPECT_EQ(p.outcome.time_index, -1);
    // Within 10^-4 of the vertical is outside too; 10^-3 is inside.
    const std::array<double, 6> near = {0.5e-4, 0.0, 1.0, 0.5e-4, 0.0, 1.0}, off = {1e-3, 0.0, 1.0, 1e-3, 0.0, 1.0};
    EXPECT_FALSE(M{}.in_velocity_chart(q0.data(), near.data()));
    EXPECT_TRUE(M{}.in_velocity_chart(q0.data(), off.data()));
    // Horizontal parallel velocities are inside this chart.
    const std::array<double, 6> v1 = {0.6, -0.3, 0.0, 1.2, -0.6, 0.0};
    EXPECT_EQ(run_member(M{}, q0, v1, {0.0, 0.0}, {0.5}).outcome.status, Status::ok);
}

TEST(ParallelVelocities, SourceResidualIsTheWholeCrossProduct) {
    // Relative to max(1, |u| |w|): parallel 0, perpendicular unit vectors 1, and scaled by |u| |w| above 1.
    const double q[6] = {0, 0, 0, 1, 0, 0};
    const double par[6] = {0.3, -0.2, 0.5, 0.6, -0.4, 1.0}, perp[6] = {1, 0, 0, 0, 1, 0}, big[6] = {2, 0, 0, 0, 3, 0};
    EXPECT_LT(M{}.source_residual(q, par, 0.0), 1e-16);
    EXPECT_EQ(M{}.source_residual(q, perp, 0.0), 1.0);
    EXPECT_EQ(M{}.source_residual(q, big, 0.0), 1.0);
}

TEST(ParallelVelocities, Conservation) { check_conservation(M{}, random_state, 1203, true, 2.0, 4, 0.3); }

TEST(ParallelVelocities, DivergenceLaws) { check_divergence_laws(M{}, random_state, 1204, 3, 0.5); }

} // namespace
} // namespace nhvk::testing
