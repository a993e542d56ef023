// SPDX-License-Identifier: MIT
// ball_on_turntable (docs/models.md; Deressa Example 1): the centre runs on a circle at the rate ν = k²Ω/(k² + a²) in
// the sense of the table, ω_z is constant, the energy changes (affine constraint) while the vakonomic E − μ·(J·v) is
// conserved, the divergence laws, and leaving the Euler-angle chart ends a trajectory with Status::chart_singular.
#include <complex>

#include "model_testing.hpp"
#include "nhvk/models/ball_on_turntable.hpp"

namespace nhvk::testing {
namespace {

using M = models::BallOnTurntable;
using cd = std::complex<double>;

/** @brief Random (q0, v0) on φ = 0: angle rates drawn, then ẋ = a ω_y − Ω y, ẏ = −a ω_x + Ω x. θ stays in
 *         [−1, 1], far from the chart's singular set cos θ = 0. */
template <class Model = M> auto sampler(const Model& m) {
    return [m](Draw& d, std::array<double, 5>& q, std::array<double, 5>& v) {
        q = {d(-1, 1), d(-1, 1), d(-3, 3), d(-1, 1), d(-3, 3)};
        v = {0.0, 0.0, d(-1, 1), d(-1, 1), d(-1, 1)};
        double w[3];
        M::angular_velocity(q.data(), v.data(), w);
        v[0] = m.a * w[1] - m.Omega * q[1];
        v[1] = -m.a * w[0] + m.Omega * q[0];
    };
}

TEST(BallOnTurntable, CentreRunsOnCircleAtRateNu) {
    // ẍ = −ν ẏ, ÿ = ν ẋ: with V = ẋ + iẏ, V(t) = V0 e^{iνt}, r(t) = r0 + V0 (e^{iνt} − 1)/(iν); ω_z constant.
    Draw d(501);
    double worst_r = 0.0, worst_wz = 0.0, least_wz = 1e300;
    for (int s = 0; s < 5; ++s) {
        M m;
        if (s > 0) {
            m.Omega = d(0.5, 2.0) * (s % 2 ? -1 : 1);
            m.a = d(0.5, 1.5);
            m.k2 = d(0.2, 0.7);
        }
        std::array<double, 5> q0, v0;
        sampler(m)(d, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, {0.0, 0.0}, linear_times(5.0, 50));
        ASSERT_EQ(r.outcome.status, Status::ok);
        const double nu = m.k2 * m.Omega / (m.k2 + m.a * m.a);
        if (s == 0) {
            EXPECT_NEAR(nu, 2.0 / 7.0, 1e-15); // solid sphere, a = 1, Ω = 1
        }
        const cd I(0, 1), r0(q0[0], q0[1]), V0(v0[0], v0[1]);
        double w[3];
        M::angular_velocity(q0.data(), v0.data(), w);
        const double wz0 = w[2];
        least_wz = std::min(least_wz, std::fabs(wz0)); // a constant 0 would prove nothing
        for (int i = 1; i < r.rows(); ++i) {
            const cd rt = r0 + V0 * (std::exp(I * nu * r.t[i]) - 1.0) / (I * nu);
            worst_r = std::max(worst_r, std::abs(cd(r.q_nh(i)[0], r.q_nh(i)[1]) - rt));
            M::angular_velocity(r.q_nh(i), r.v_nh(i), w);
            worst_wz = std::max(worst_wz, std::fabs(w[2] - wz0));
        }
    }
    EXPECT_LT(worst_r, 1e-9);
    EXPECT_LT(worst_wz, 1e-10);
    EXPECT_GT(least_wz, 1e-2);
    measured("max_error_circle", worst_r);
    measured("max_change_omega_z", worst_wz);
    measured("min_abs_omega_z", least_wz);
}

TEST(BallOnTurntable, CircleIsTraversedInTheSenseOfTheTable) {
    // NOTE: Deressa eq. (2.17) prints ẋ = ν y, ẏ = −ν x (the opposite sense); the integrated motion turns with Ω.
    // The velocity direction's angle advances by ν t: check its sign and rate for Ω > 0 and Ω < 0.
    for (double Omega : {1.0, -1.0}) {
        M m;
        m.Omega = Omega;
        Draw d(502);
        std::array<double, 5> q0, v0;
        sampler(m)(d, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, {0.0, 0.0}, {1.0});
        ASSERT_EQ(r.outcome.status, Status::ok);
        const double turned = std::arg(cd(r.v_nh(1)[0], r.v_nh(1)[1]) / cd(v0[0], v0[1]));
        EXPECT_NEAR(turned, 2.0 / 7.0 * Omega, 1e-10);
        measured(Omega > 0 ? "velocity_turn_in_1s_Omega_plus1" : "velocity_turn_in_1s_Omega_minus1", turned);
    }
}

TEST(BallOnTurntable, EnergyChangesAsTheClosedFormSays) {
    // Affine constraint: E is not conserved. On the motion, E = ½m|V0|² + ½m k²(ω_z² + |ω_h|²) with
    // a ω_y = ẋ + Ω y, a ω_x = Ω x − ẏ taken from the closed-form r(t) and V(t).
    Draw d(503);
    const M m;
    double worst = 0.0, change = 0.0;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 5> q0, v0;
        sampler(m)(d, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, {0.0, 0.0}, linear_times(5.0, 25));
        ASSERT_EQ(r.outcome.status, Status::ok);
        double w[3];
        M::angular_velocity(q0.data(), v0.data(), w);
        const double nu = m.k2 * m.Omega / (m.k2 + m.a * m.a);
        const cd I(0, 1), r0(q0[0], q0[1]), V0(v0[0], v0[1]);
        for (int i = 0; i < r.rows(); ++i) {
            const cd e = std::exp(I * nu * r.t[i]), rt = r0 + V0 * (e - 1.0) / (I * nu), V = V0 * e;
            const double wy = (V.real() + m.Omega * rt.imag()) / m.a, wx = (m.Omega * rt.real() - V.imag()) / m.a;
            const double E = 0.5 * m.m * std::norm(V0) + 0.5 * m.m * m.k2 * (w[2] * w[2] + wx * wx + wy * wy);
            worst = std::max(worst, std::fabs(r.energy_nh(i) - E));
        }
        change = std::max(change, r.max_energy_drift_nh());
    }
    EXPECT_LT(worst, 1e-9);
    EXPECT_GT(change, 1e-2);
    measured("max_error_energy_closed_form", worst);
    measured("max_energy_change_nh", change);
}

TEST(BallOnTurntable, VakonomicEnergyConserved) {
    // docs/physics.md §4.4: E − μ·(J·v) is conserved for the autonomous affine system although E itself changes.
    check_conservation(M{}, sampler(M{}), 504, /*nh_energy=*/false, 3.0, 4, 0.5);
}

TEST(BallOnTurntable, DivergenceLaws) { check_divergence_laws(M{}, sampler(M{}), 505); }

TEST(BallOnTurntable, ChartPredicate) {
    const M m;
    double q[5] = {0, 0, 0, 0, 0};
    EXPECT_TRUE(m.in_chart(q));
    q[3] = std::acos(2e-4);
    EXPECT_TRUE(m.in_chart(q));
    q[3] = std::acos(5e-5);
    EXPECT_FALSE(m.in_chart(q));
    q[3] = -M_PI / 2;
    EXPECT_FALSE(m.in_chart(q));
    q[3] = 3 * M_PI / 2 + 1e-3; // the other branch is fine
    EXPECT_TRUE(m.in_chart(q));
    float qf[5] = {0, 0, 0, 0, 0};
    qf[3] = std::acos(2e-3f);
    EXPECT_TRUE(m.in_chart(qf));
    qf[3] = std::acos(5e-4f);
    EXPECT_FALSE(m.in_chart(qf));
}

/** @brief (q0, v0) on a table at rest (Ω = 0, so ω stays constant) with ω = (0, 1, 0) and heading ψ0: the body
 *         x-axis turns about ŷ and passes the vertical at |cos θ| ≈ |sin ψ0| cos θ0 (θ0 = 1.45, at t ≈ 0.12). */
void near_pole_state(const M& m, double psi0, std::array<double, 5>& q0, std::array<double, 5>& v0) {
    q0 = {0.2, -0.1, psi0, 1.45, 0.4};
    // θ̇ = ω_y cos ψ − ω_x sin ψ, ϕ̇ cos θ = ω_x cos ψ + ω_y sin ψ, ψ̇ = ω_z + ϕ̇ sin θ; ẋ = a ω_y, ẏ = −a ω_x.
    v0 = {m.a, 0.0, 0.0, std::cos(psi0), std::sin(psi0) / std::cos(q0[3])};
    v0[2] = v0[4] * std::sin(q0[3]);
}

TEST(BallOnTurntable, StartOnSingularChartReportsChartSingular) {
    const M m;
    const std::array<double, 5> q0 = {0.2, -0.1, 0.3, M_PI / 2 - 1e-8, 0.4};
    std::array<double, 5> v0 = {0.0, 0.0, 0.2, 0.1, -0.3};
    double w[3];
    M::angular_velocity(q0.data(), v0.data(), w);
    v0[0] = m.a * w[1] - m.Omega * q0[1];
    v0[1] = -m.a * w[0] + m.Omega * q0[0];
    const Recorded<M> r = run_member(m, q0, v0, {0.0, 0.0}, {0.5, 1.0});
    EXPECT_EQ(r.outcome.status, Status::chart_singular);
    EXPECT_EQ(r.outcome.failed, Dynamics::nonholonomic);
    EXPECT_EQ(r.outcome.time_index, -1);
}

TEST(BallOnTurntable, RunningIntoTheSingularChartReportsChartSingular) {
    // Passes at |cos θ| ≈ 1.2e-6 … 1.2e-11 (inside the 1e-4 margin): ψ̇ and ϕ̇ spike like 1/cos θ, the steps shrink
    // and a stage lands inside the margin, so both dynamics end with chart_singular before the output time 0.13
    // — not NaN, not a crash, not 10⁵ steps — and every state recorded before is finite.
    M m;
    m.Omega = 0.0;
    const std::vector<double> times = linear_times(0.3, 30);
    for (double psi0 : {1e-5, 1e-7, 1e-10}) {
        std::array<double, 5> q0, v0;
        near_pole_state(m, psi0, q0, v0);
        const Recorded<M> r = run_member(m, q0, v0, {0.0, 0.0}, times);
        EXPECT_EQ(r.outcome.status, Status::chart_singular) << status_name(r.outcome.status) << " psi0 " << psi0;
        EXPECT_EQ(r.outcome.failed, Dynamics::nonholonomic);
        EXPECT_EQ(r.outcome.time_index, 12);            // t = 0.13: the pass is at t ≈ 0.1208
        for (int i = 0; i <= r.outcome.time_index; ++i) // rows 0 … time_index: t0 and the output times reached
            for (int j = 0; j < Recorded<M>::row; ++j) EXPECT_TRUE(std::isfinite(r.q_nh(i)[j]));

        // The vakonomic system alone, stepped directly.
        VakonomicSystem<M, double> vk{m};
        Dopri5<VakonomicSystem<M, double>, double> st;
        double y[12];
        for (int j = 0; j < 5; ++j) {
            y[j] = q0[j];
            y[5 + j] = v0[j];
        }
        y[10] = 0.1;
        y[11] = -0.1;
        ASSERT_EQ(st.init(vk, 0.0, y, tight()), Status::ok);
        EXPECT_EQ(st.advance_to(vk, 0.3), Status::chart_singular);
        for (int j = 0; j < 12; ++j) EXPECT_TRUE(std::isfinite(st.y[j]));
        EXPECT_LT(st.steps, 20000);
        EXPECT_NEAR(st.t, 0.1208, 2e-3);
        if (psi0 == 1e-5) {
            measured("vk_stopped_at_t", st.t);
            measured("vk_steps_to_chart_exit", double(st.steps));
        }
    }
}

TEST(BallOnTurntable, NearMissOutsideTheMarginIsIntegrated) {
    // ψ0 = 3e-3: the pass is at |cos θ| ≈ 3.6e-4, outside the margin; ψ̇, ϕ̇ spike to ~3·10³, the adaptive steps
    // resolve it and the constraint residual stays small.
    M m;
    m.Omega = 0.0;
    std::array<double, 5> q0, v0;
    near_pole_state(m, 3e-3, q0, v0);
    const Recorded<M> r = run_member(m, q0, v0, {0.0, 0.0}, linear_times(0.3, 30), tight(1e-10, 1e-12));
    ASSERT_EQ(r.outcome.status, Status::ok) << status_name(r.outcome.status);
    EXPECT_LT(r.max_residual(), 1e-8);
    measured("near_miss_max_residual", r.max_residual());
}

TEST(BallOnTurntable, FloatChartMarginIsWider) {
    // In float the LU itself flags the saddle-point matrix near |cos θ| ≈ 1e-4; the float margin 1e-3 comes first.
    const M m;
    const std::array<float, 5> q0 = {0.2f, -0.1f, 0.3f, std::acos(5e-4f), 0.4f};
    const std::array<float, 5> v0 = {0.1f, 0.1f, 0.0f, 0.0f, 0.0f};
    const Recorded<M, float> r = run_member<M, float>(m, q0, v0, {0.0f, 0.0f}, {0.5}, tight(1e-6, 1e-7));
    EXPECT_EQ(r.outcome.status, Status::chart_singular);
}

} // namespace
} // namespace nhvk::testing
