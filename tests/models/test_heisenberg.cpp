// SPDX-License-Identifier: MIT
// heisenberg (docs/models.md): Euclidean L — uniform straight nonholonomic motion with λ ≡ 0, equal to the vakonomic
// motion with μ0 = 0; sub-Riemannian L — the vakonomic circles ζ(t) = ζ0 + (ζ̇0/(iμ))(1 − e^{−iμt}) with μ constant.
#include <complex>

#include "model_testing.hpp"
#include "nhvk/models/heisenberg.hpp"

namespace nhvk::testing {
namespace {

using M = models::Heisenberg;
using cd = std::complex<double>;

M sub_riemannian() {
    M m;
    m.sub_riemannian = true;
    return m;
}

/** @brief Random (q0, v0) on φ = 0: ż0 = ½(x0 ẏ0 − y0 ẋ0). */
void random_state(Draw& d, std::array<double, 3>& q, std::array<double, 3>& v) {
    q = {d(-1, 1), d(-1, 1), d(-1, 1)};
    v = {d(-1, 1), d(-1, 1), 0.0};
    v[2] = 0.5 * (q[0] * v[1] - q[1] * v[0]);
}

TEST(Heisenberg, ParameterIsBoolAndDefaultsToEuclidean) {
    M m;
    EXPECT_FALSE(m.sub_riemannian);
    int count = 0;
    m.visit_params([&](const char* name, auto& value) {
        EXPECT_STREQ(name, "sub_riemannian");
        EXPECT_TRUE((std::is_same<std::decay_t<decltype(value)>, bool>::value));
        ++count;
    });
    EXPECT_EQ(count, 1);
}

TEST(Heisenberg, EuclideanNonholonomicIsUniformStraightWithZeroMultiplier) {
    Draw d(201);
    double worst = 0.0, worst_lambda = 0.0;
    for (int s = 0; s < 4; ++s) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(M{}, q0, v0, {0.0}, linear_times(3.0, 15));
        ASSERT_EQ(r.outcome.status, Status::ok);
        for (int i = 1; i < r.rows(); ++i) {
            for (int j = 0; j < 3; ++j) worst = std::max(worst, std::fabs(r.q_nh(i)[j] - (q0[j] + v0[j] * r.t[i])));
            double y[6], dy[6], lambda[1] = {1e300};
            for (int j = 0; j < 6; ++j) y[j] = r.q_nh(i)[j];
            ASSERT_EQ((NonholonomicSystem<M, double>{M{}}.rhs(r.t[i], y, dy, lambda)), Status::ok);
            worst_lambda = std::max(worst_lambda, std::fabs(lambda[0]));
        }
    }
    EXPECT_LT(worst, 1e-12);
    EXPECT_LT(worst_lambda, 1e-13);
    measured("max_error_straight_line", worst);
    measured("max_abs_lambda", worst_lambda);
}

TEST(Heisenberg, EuclideanVakonomicWithZeroMuCoincides) {
    // NOTE: λ ≡ 0 along the straight lines, and μ0 = 0 gives W̃ = W, b̃ = b, μ̇ = λ = 0: the same motion, so the
    // generic O(t³) law of docs/physics.md §4.2 does not apply here (the divergence vanishes identically).
    check_coincide(M{}, random_state, 202, {0.0}, 3.0, 1e-12, 4, /*uniform=*/true);
}

TEST(Heisenberg, EuclideanVakonomicWithNonzeroMuDivergesAsTSquared) {
    check_divergence_laws(M{}, random_state, 203, 3, 1.0, /*expect_t3=*/false);
}

TEST(Heisenberg, EuclideanConservation) { check_conservation(M{}, random_state, 204, true); }

TEST(Heisenberg, SubRiemannianSaddlePointSystemIsRegular) {
    // W = diag(1, 1, 0) is singular, [W −Jᵀ; J 0] is not.
    const double q[3] = {0.4, -0.3, 0.1}, v[3] = {0.2, 0.5, 0.5 * (0.4 * 0.5 + 0.3 * 0.2)};
    const auto lp = lagrangian_parts(sub_riemannian(), q, v, 0.0, static_cast<const double*>(nullptr));
    EXPECT_EQ(lp.W[2][2], 0.0);
    double y[6] = {q[0], q[1], q[2], v[0], v[1], v[2]}, dy[6];
    EXPECT_EQ((NonholonomicSystem<M, double>{sub_riemannian()}.rhs(0.0, y, dy)), Status::ok);
    double yk[7] = {q[0], q[1], q[2], v[0], v[1], v[2], 0.7}, dyk[7];
    EXPECT_EQ((VakonomicSystem<M, double>{sub_riemannian()}.rhs(0.0, yk, dyk)), Status::ok);
}

TEST(Heisenberg, SubRiemannianVakonomicCircles) {
    // μ constant; ζ = x + i y: ζ(t) = ζ0 + (ζ̇0/(iμ))(1 − e^{−iμt}); z from ż = ½ Im(conj(ζ) ζ̇):
    // z(t) = z0 + ½ Im[ conj(ζ0) ζ̇0 (1 − e^{−iμt})/(iμ) + (i/μ)|ζ̇0|² ((1 − e^{−iμt})/(iμ) − t) ].
    Draw d(205);
    double worst_q = 0.0, worst_mu = 0.0;
    for (int s = 0; s < 5; ++s) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const double mu = d(0.5, 3.0) * (s % 2 ? -1 : 1);
        const Recorded<M> r = run_member(sub_riemannian(), q0, v0, {mu}, linear_times(4.0, 40));
        ASSERT_EQ(r.outcome.status, Status::ok);
        const cd I(0, 1), z0(q0[0], q0[1]), zd0(v0[0], v0[1]);
        for (int i = 1; i < r.rows(); ++i) {
            const double t = r.t[i];
            const cd e = std::exp(-I * mu * t);
            const cd zeta = z0 + zd0 / (I * mu) * (1.0 - e);
            const cd area =
                std::conj(z0) * zd0 * (1.0 - e) / (I * mu) + (I / mu) * std::norm(zd0) * ((1.0 - e) / (I * mu) - t);
            const double z = q0[2] + 0.5 * area.imag();
            worst_q = std::max({worst_q, std::abs(cd(r.q_vk(i)[0], r.q_vk(i)[1]) - zeta), std::fabs(r.q_vk(i)[2] - z)});
            worst_mu = std::max(worst_mu, std::fabs(r.mu(i)[0] - mu));
        }
    }
    EXPECT_LT(worst_q, 1e-9);
    EXPECT_LT(worst_mu, 1e-10);
    measured("max_error_circle", worst_q);
    measured("max_change_mu", worst_mu);
}

TEST(Heisenberg, SubRiemannianNonholonomicIsStraightInThePlane) {
    // λ = 0 from the ż-row of the saddle-point system (W_zz = 0, b_z = 0), so ẋ and ẏ are constant.
    Draw d(206);
    double worst = 0.0;
    for (int s = 0; s < 3; ++s) {
        std::array<double, 3> q0, v0;
        random_state(d, q0, v0);
        const Recorded<M> r = run_member(sub_riemannian(), q0, v0, {0.0}, linear_times(3.0, 15));
        ASSERT_EQ(r.outcome.status, Status::ok);
        for (int i = 1; i < r.rows(); ++i)
            for (int j = 0; j < 2; ++j) worst = std::max(worst, std::fabs(r.q_nh(i)[j] - (q0[j] + v0[j] * r.t[i])));
    }
    EXPECT_LT(worst, 1e-12);
    measured("max_error_straight_xy", worst);
}

TEST(Heisenberg, SubRiemannianConservation) {
    check_conservation(sub_riemannian(), random_state, 207, true, 3.0, 4, 2.0);
}

TEST(Heisenberg, SubRiemannianVakonomicWithNonzeroMuDivergesAsTSquared) {
    // NOTE: with μ0 = 0 both motions are the same straight lines (μ stays 0), so only the O(t²) law is generic.
    check_divergence_laws(sub_riemannian(), random_state, 208, 3, 1.0, /*expect_t3=*/false);
    check_coincide(sub_riemannian(), random_state, 209, {0.0}, 3.0, 1e-12, 3, /*uniform=*/true);
}

} // namespace
} // namespace nhvk::testing
