// SPDX-License-Identifier: MIT
// midpoint_parallel (Talamucci Example 2 (iv)): the rank-2 formulation of Ḃ × (p1 − p2) = 0 on the chart "d not
// vertical". Linear of degree 1, the whole of s × d stays 0, the formulation does not change the motions (compared
// with the (x, y)-component one: nonholonomic, same Četaev reactions; vakonomic, same extremals with transformed
// μ0), the laws derived below (equal masses: free relative motion, |Ḃ|; vakonomic momenta), d vertical is
// outside the chart, chart exits are counted, energies and divergence laws.
#include "nhvk/models/midpoint_parallel.hpp"
#include "spring_pair_testing.hpp"

namespace nhvk::testing {
namespace {

using M = models::MidpointParallel;

/** @brief The same system written with two components of s × d, (s × d)_x and (s × d)_y (valid only where
 *         d_z ≠ 0): test-only, to show that the choice of the formulation does not change the motions. */
struct MidpointXY : M {
    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S&, S* phi) const {
        const S dx = q[0] - q[3], dy = q[1] - q[4], dz = q[2] - q[5];
        const S sx = v[0] + v[3], sy = v[1] + v[4], sz = v[2] + v[5];
        phi[0] = sy * dz - sz * dy;
        phi[1] = sz * dx - sx * dz;
    }
};

/** @brief On s ∥ d: replace s = ṗ1 + ṗ2 by its component along d (half the change on each particle). */
void project(const std::array<double, 6>& q, std::array<double, 6>& v) {
    const Vec3 dd = separation(q.data()), s = first(v.data()) + second(v.data());
    const Vec3 change = (dot(dd, s) / dot(dd, dd)) * dd - s;
    for (int j = 0; j < 3; ++j) {
        v[j] += 0.5 * change[j];
        v[3 + j] += 0.5 * change[j];
    }
}

/** @brief Random positions about ℓ apart with |d_z| ∈ [0.3, 0.6] (inside both charts), velocities on s ∥ d. */
void random_state(Draw& d, std::array<double, 6>& q, std::array<double, 6>& v) {
    random_spring_pair(d, q, v);
    q[5] = q[2] + d(0.3, 0.6) * (d(0, 1) < 0.5 ? -1 : 1);
    project(q, v);
}

/** @brief The frame of the model's φ: e1 = ẑ × d, e2 = |d|² ẑ − d_z d. */
std::array<Vec3, 2> frame(const double* q) {
    const Vec3 d = separation(q);
    return {Vec3{-d[1], d[0], 0.0}, Vec3{-d[2] * d[0], -d[2] * d[1], d[0] * d[0] + d[1] * d[1]}};
}

TEST(MidpointParallel, LinearOfDegreeOne) { expect_linear_of_degree_one<M>(); }
TEST(MidpointParallel, WholeCrossProductStaysZero) {
    // All three components of s × d stay zero (only two equations are imposed), t ∈ [0, 3], both dynamics.
    Draw d(1501);
    double worst = 0.0, least_motion = 1e300;
    for (int s = 0; s < 4; ++s) {
        std::array<double, 6> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(unequal_masses<M>(), q0, v0, {0.1, -0.1}, linear_times(3.0, 60));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status) << " sample " << s;
        for (int i = 0; i < r.rows(); ++i)
            for (const double* q : {r.q_nh(i), r.q_vk(i)}) {
                const double* v = q + 6;
                worst = std::max(worst, norm(cross(first(v) + second(v), separation(q))));
            }
        // not vacuous: both motions move and change their velocities (a zero cross product of constant vectors
        // would prove nothing)
        least_motion = std::min({least_motion, r.least_motion(), r.max_state_change([&](int i) { return r.v_nh(i); }),
                                 r.max_state_change([&](int i) { return r.v_vk(i); })});
    }
    EXPECT_LT(worst, 1e-9);
    expect_moves(least_motion);
    measured("max_abs_cross", worst);
}

/** @brief The (x, y)-form multipliers equivalent to the model's ν at positions q (see FormulationDoesNotChange…). */
std::array<double, 2> xy_multipliers(const double* q, const double* nu) {
    const Vec3 d = separation(q);
    return {-nu[1] * d[1] + nu[0] * d[0] / d[2], nu[1] * d[0] + nu[0] * d[1] / d[2]};
}

TEST(MidpointParallel, FormulationDoesNotChangeTheMotions) {
    // With c = s × d (c·d ≡ 0): the model's φ = (e1·s, e2·s) = (−ẑ·c, (ẑ × d)·c), the other form (x̂·c, ŷ·c).
    // Nonholonomic: same reaction space, same motion. Vakonomic: ν1 φ1 + ν2 φ2 = μx c_x + μy c_y for all c ⊥ d iff
    // μx x̂ + μy ŷ = −ν1 ẑ + ν2 ẑ × d (mod d), i.e. μx = −ν2 d_y + ν1 d_x/d_z, μy = ν2 d_x + ν1 d_y/d_z.
    check_same_motions<M, MidpointXY>(
        random_state, 1502, [](const double* q, const double*, const double* nu) { return xy_multipliers(q, nu); });
}

TEST(MidpointParallel, EqualMassesRelativeMotionIsFreeAndMidpointSpeedConserved) {
    // The reactions on the two particles are one vector R ⊥ d; the spring's forces ±F1 are ∥ d. With m1 = m2 = m,
    // d̈ = 2F1/m (R cancels: the free spring's relative motion, d × ḋ constant) and B̈ = R/m ⊥ d ∥ Ḃ (|Ḃ| constant).
    // With m1 ≠ m2, Ḃ·B̈ = ½(1/m1 − 1/m2) F1·Ḃ ≠ 0: checked to change.
    Draw d(1503);
    M equal;
    equal.kappa = 2.0;
    double worst_l = 0.0, worst_b = 0.0, least_b_unequal = 1e9, least_motion = 1e9, least_size = 1e9;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 6> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(equal, q0, v0, {0.3, -0.2}, linear_times(3.0, 30));
        ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status);
        auto midpoint_speed = [](const double* v) { return norm(0.5 * (first(v) + second(v))); };
        worst_l = std::max(worst_l, max_change_relative_angular_momentum(r));
        worst_b = std::max(worst_b, r.max_change([&](int i) { return midpoint_speed(r.v_nh(i)); }));
        // not vacuous: the equal-mass motion moves, and d × ḋ and |Ḃ| are not 0
        least_motion = std::min(least_motion, r.least_motion());
        least_size = std::min(
            {least_size, midpoint_speed(r.v_nh(0)), norm(cross(separation(r.q_nh(0)), separation(r.v_nh(0))))});
        const Recorded<M> u = run_member(unequal_masses<M>(), q0, v0, {0.3, -0.2}, linear_times(3.0, 30));
        ASSERT_EQ(u.outcome.status, Status::ok) << status_name(u.outcome.status);
        least_b_unequal = std::min(least_b_unequal, u.max_change([&](int i) { return midpoint_speed(u.v_nh(i)); }));
    }
    EXPECT_LT(worst_l, 1e-9);
    EXPECT_LT(worst_b, 1e-9);
    EXPECT_GT(least_b_unequal, 1e-3);
    expect_moves(least_motion);
    EXPECT_GT(least_size, 1e-2);
    measured("min_motion_equal_masses", least_motion);
    measured("min_abs_conserved_equal_masses", least_size);
    measured("max_change_d_cross_ddot_equal_masses", worst_l);
    measured("max_change_midpoint_speed_equal_masses", worst_b);
    measured("min_change_midpoint_speed_unequal_masses", least_b_unequal);
}

TEST(MidpointParallel, VakonomicMomenta) {
    // L̃ = L − ν·φ, φ_a = e_a(d)·s: with g = Σ ν_a e_a(d) and πᵢ = mᵢṗᵢ − g (= ∂L̃/∂ṗᵢ), the Euler–Lagrange
    // equations give π̇1 = F1 − G, π̇2 = −F1 + G with G = (∂g/∂d)ᵀ s, F1 ∥ d. So π1 + π2 is constant (translations),
    // and d/dt Σ pᵢ × πᵢ = −s × g − d × G; on the set s = a d this is −a d × (g + (∂g/∂d)ᵀ d), which is 0 because
    // d·g ≡ 0 (differentiate: g + (∂g/∂d)ᵀ d = 0). So the whole Σ pᵢ × πᵢ is constant, although the frame, built
    // from ẑ, makes L̃ invariant only under rotations about ẑ.
    check_vakonomic_momenta<M>(
        random_state, 1504,
        [](Draw& d) {
            return std::array<double, 2>{d(0.2, 0.8), d(-0.8, -0.2)};
        },
        [](const Recorded<M>& r, int i, int) {
            const auto e = frame(r.q_vk(i));
            return r.mu(i)[0] * e[0] + r.mu(i)[1] * e[1];
        });
}

TEST(MidpointParallel, VerticalSeparationLeavesTheChart) {
    // d ∥ ẑ: e1 = e2 = 0, so φ1 = φ2 = 0 for every velocity and the chart does not represent s × d = 0 there; the
    // state is outside the chart and the trajectory ends at t0 with Status::chart_singular.
    const std::array<double, 6> q0 = {0.2, -0.1, 1.0, 0.2, -0.1, 0.0};
    const std::array<double, 6> along = {0.0, 0.0, 0.7, 0.0, 0.0, -0.4}, across = {1.0, 0.0, 0.0, 0.0, 0.5, 0.0};
    double phi[2];
    M{}.constraints(q0.data(), across.data(), 0.0, phi);
    EXPECT_EQ(phi[0], 0.0); // the chart vanishes ...
    EXPECT_EQ(phi[1], 0.0);
    EXPECT_GT(M{}.source_residual(q0.data(), across.data(), 0.0), 0.5); // ... the source does not
    for (const auto& v0 : {along, across}) {
        EXPECT_EQ(check_model_state(M{}, q0.data(), v0.data(), 0.0), Status::chart_singular);
        const Recorded<M> r = run_member(M{}, q0, v0, {0.0, 0.0}, {0.5});
        EXPECT_EQ(r.outcome.status, Status::chart_singular) << status_name(r.outcome.status);
        EXPECT_EQ(r.outcome.time_index, -1);
    }
    // Within 10^-4 of the vertical is outside too; 10^-3 is inside; p1 = p2 is outside.
    const double near[6] = {0.5e-4, 0, 1, 0, 0, 0}, off[6] = {1e-3, 0, 1, 0, 0, 0}, same[6] = {1, 2, 3, 1, 2, 3};
    EXPECT_FALSE(M{}.in_chart(near));
    EXPECT_TRUE(M{}.in_chart(off));
    EXPECT_FALSE(M{}.in_chart(same));
    // A motion through the vertical: with κ = 0 and m1 = m2 the relative motion is free, d(t) = d0 + t ḋ0, here
    // (0.5, 0, 0) + t (−0.5, 0, 1), vertical at t = 1. The nonholonomic motion is right before (t = 0.5) and ends
    // there with chart_singular (measured: no stage is stepped over the margin here).
    M free;
    free.kappa = 0.0;
    const std::array<double, 6> qf = {0.5, 0, 0, 0, 0, 0}, vf = {0.05, 0, 0.5, 0.55, 0, -0.5};
    const Recorded<M> f = run_member(free, qf, vf, {0.0, 0.0}, {0.5, 2.0});
    EXPECT_EQ(f.outcome.status, Status::chart_singular) << status_name(f.outcome.status);
    EXPECT_EQ(f.outcome.time_index, 1);
    const Vec3 d_half = separation(f.q_nh(1));
    EXPECT_NEAR(d_half[0], 0.25, 1e-9);
    EXPECT_NEAR(d_half[1], 0.0, 1e-9);
    EXPECT_NEAR(d_half[2], 0.5, 1e-9);
    // Horizontal d (the other form's degenerate case, d_z = 0) is inside this chart.
    const std::array<double, 6> qh = {0, 0, 0, 1, 0.3, 0}, vh = {0.6, 0.1, -0.2, 0.4, 0.2, 0.2};
    EXPECT_EQ(run_member(M{}, qh, vh, {0.0, 0.0}, {0.5}).outcome.status, Status::ok);
}

TEST(MidpointParallel, SourceResidualIsTheWholeCrossProduct) {
    // max_i |(s × d)_i| relative to max(1, |s| |d|): s ∥ d gives 0, unit s ⊥ unit d gives 1, and so do larger ones.
    const double q[6] = {1, 0, 0, 0, 0, 0}, par[6] = {0.3, 0, 0, 0.5, 0, 0}, perp[6] = {0, 0.5, 0, 0, 0.5, 0};
    const double big[6] = {0, 2, 0, 0, 1, 0};
    EXPECT_EQ(M{}.source_residual(q, par, 0.0), 0.0);
    EXPECT_EQ(M{}.source_residual(q, perp, 0.0), 1.0);
    EXPECT_EQ(M{}.source_residual(q, big, 0.0), 1.0);
}

TEST(MidpointParallel, ChartExitsAreCounted) {
    // 100 random states like the shipped config's (p1 near the origin, p2 near x̂, velocities uniform in [−1, 1]³
    // projected onto s ∥ d, μ0 = 0), t ∈ [0, 5], the default step control: d rarely comes within 10^-4 of the
    // vertical (a codimension-2 event; measured 0 of 100 in both dynamics, and 0 of 200 by t = 10), and when it does
    // the trajectory ends with chart_singular.
    Draw d(1505);
    int nh_exits = 0, vk_exits = 0;
    for (int s = 0; s < 100; ++s) {
        std::array<double, 6> q, v;
        random_spring_pair(d, q, v);
        project(q, v);
        const BothStepped<M> run(q, v, 5.0);
        for (const auto& [st, exits] : {std::pair{run.nh_status, &nh_exits}, std::pair{run.vk_status, &vk_exits}})
            if (st != Status::ok) {
                EXPECT_EQ(st, Status::chart_singular) << status_name(st);
                ++*exits;
            }
    }
    EXPECT_LE(nh_exits, 2);
    EXPECT_LE(vk_exits, 2);
    measured("nh_chart_exits_of_100", nh_exits);
    measured("vk_chart_exits_of_100", vk_exits);
}

TEST(MidpointParallel, Conservation) { check_conservation(M{}, random_state, 1506, true, 2.0, 4, 0.3); }

TEST(MidpointParallel, DivergenceLaws) { check_divergence_laws(M{}, random_state, 1507, 3, 0.5); }

} // namespace
} // namespace nhvk::testing
