// SPDX-License-Identifier: MIT
// The AD-built terms of the equations of motion (include/nhvk/dynamics.hpp: lagrangian_parts, constraint_parts,
// energy, diagnose) against derivatives written out by hand for local models and catalogue models.
//
// Hand derivation for ModelA (core_test_util.hpp), L = ½(1+q0²)v0² + sin(q1)v0v1 + ½v1² − cos q0 + t q1 + t² q0 v1:
//   L_v = ((1+q0²)v0 + sin q1 v1,  sin q1 v0 + v1 + t² q0),   W = [[1+q0², sin q1], [sin q1, 1]]
//   L_q = (q0 v0² + sin q0 + t² v1,  cos q1 v0 v1 + t),       ∂L_v/∂t = (0, 2 t q0)
//   (∂L_v/∂q)·v = (2 q0 v0² + cos q1 v1²,  t² v0 + cos q1 v0 v1)
//   b = (q0 v0² + cos q1 v1² − sin q0 − t² v1,  t² v0 + 2 t q0 − t) − F
// φ = v0² + q0 v0 v1 + q1 v1 + t q0 v1 − t:
//   J = (2 v0 + q0 v1,  q0 v0 + q1 + t q0),  H = [[2, q0], [q0, 0]]
//   φ_q = (v0 v1 + t v1,  v1),  φ_t = q0 v1 − 1,  γ = −(φ_q·v + φ_t)
//   c = (∂J/∂q)·v + ∂J/∂t − φ_q = (v1 v0 − v0 v1 − t v1,  (v0 + t) v0 + v1 + q0 − v1) = (−t v1,  v0² + t v0 + q0)
// and for L̃ = L − μφ: W̃ = W − μH, b̃ = b − μc, L̃_v = L_v − μJ.
#include "core_test_util.hpp"

#include <nhvk/models/nh_particle.hpp>
#include <nhvk/models/perpendicular_velocities.hpp>
#include <nhvk/models/rolling_disc.hpp>
#include <nhvk/models/sphere_holonomic.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using nhvk_test::ModelA;
using nhvk_test::ModelAHand;

template <bool F> void check_model_a(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    const ModelA<F> model{};
    for (int trial = 0; trial < 20; ++trial) {
        const double q[2] = {u(rng), u(rng)}, v[2] = {u(rng), u(rng)}, t = u(rng), mu[1] = {u(rng)};
        SCOPED_TRACE("trial " + std::to_string(trial));
        const ModelAHand h(q, v, t, F);
        const auto lp = nhvk::lagrangian_parts(model, q, v, t, static_cast<const double*>(nullptr));
        const auto cp = nhvk::constraint_parts(model, q, v, t);
        const auto lv = nhvk::lagrangian_parts(model, q, v, t, mu);
        const double tol = 1e-13;
        for (int i = 0; i < 2; ++i) {
            EXPECT_NEAR(lp.Lv[i], h.Lv[i], tol);
            EXPECT_NEAR(lp.b[i], h.b[i], tol);
            EXPECT_NEAR(cp.J[0][i], h.J[i], tol);
            EXPECT_NEAR(lv.Lv[i], h.Lv[i] - mu[0] * h.J[i], tol);
            EXPECT_NEAR(lv.b[i], h.b[i] - mu[0] * h.c[i], tol);
            for (int j = 0; j < 2; ++j) {
                EXPECT_NEAR(lp.W[i][j], h.W[i][j], tol);
                EXPECT_NEAR(lv.W[i][j], h.W[i][j] - mu[0] * h.H[i][j], tol);
            }
        }
        EXPECT_NEAR(cp.phi[0], h.phi, tol);
        EXPECT_NEAR(cp.gamma[0], h.gamma, tol);
        EXPECT_NEAR(nhvk::energy(model, q, v, t), h.E, tol);
        const auto d = nhvk::diagnose_with(nhvk::AdEquations<ModelA<F>, double>(model), q, v, t, mu);
        // the residual in velocity units: |φ| / |∂φ/∂v|
        EXPECT_NEAR(d.residual, std::fabs(h.phi) / std::hypot(h.J[0], h.J[1]), tol);
        EXPECT_NEAR(d.energy, h.E, tol);
        EXPECT_NEAR(d.vk_energy, h.E - mu[0] * (h.J[0] * v[0] + h.J[1] * v[1]), tol);
    }
}

TEST(AdParts, LocalModelWithoutForce) {
    std::mt19937_64 rng(11);
    check_model_a<false>(rng);
}

TEST(AdParts, LocalModelWithForce) {
    std::mt19937_64 rng(12);
    check_model_a<true>(rng);
}

// Float instantiation of the same derivation: the nested duals over float give the same terms to float accuracy.
TEST(AdParts, LocalModelInFloat) {
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const ModelA<true> model{};
    for (int trial = 0; trial < 10; ++trial) {
        const float qf[2] = {float(u(rng)), float(u(rng))}, vf[2] = {float(u(rng)), float(u(rng))};
        const float tf = float(u(rng)), muf[1] = {float(u(rng))};
        const double q[2] = {qf[0], qf[1]}, v[2] = {vf[0], vf[1]};
        const ModelAHand h(q, v, double(tf), true);
        const auto lv = nhvk::lagrangian_parts(model, qf, vf, tf, muf);
        const auto cp = nhvk::constraint_parts(model, qf, vf, tf);
        const double tol = 2e-6;
        for (int i = 0; i < 2; ++i) {
            EXPECT_NEAR(lv.b[i], h.b[i] - muf[0] * h.c[i], tol);
            EXPECT_NEAR(cp.J[0][i], h.J[i], tol);
            for (int j = 0; j < 2; ++j) EXPECT_NEAR(lv.W[i][j], h.W[i][j] - muf[0] * h.H[i][j], tol);
        }
        EXPECT_NEAR(cp.gamma[0], h.gamma, tol);
    }
}

// rolling_disc with non-default parameters (m, R, α, g) = (1.7, 0.4, 0.3, 9.81):
//   W = diag(m, m, I, J), I = mR²/2, J = mR²/4;  L_q = (m g sin α, 0, 0, 0), so b = (−m g sin α, 0, 0, 0)
//   φ1 = ẋ − R θ̇ cos ϕ, φ2 = ẏ − R θ̇ sin ϕ:  J1 = (1, 0, −R cos ϕ, 0), J2 = (0, 1, −R sin ϕ, 0), H = 0
//   φ1_ϕ = R θ̇ sin ϕ, φ2_ϕ = −R θ̇ cos ϕ:  γ = (−R θ̇ ϕ̇ sin ϕ, R θ̇ ϕ̇ cos ϕ)
//   c1 = (0, 0, R ϕ̇ sin ϕ, −R θ̇ sin ϕ), c2 = (0, 0, −R ϕ̇ cos ϕ, R θ̇ cos ϕ)  (the antisymmetric M_AB v_B)
TEST(AdParts, RollingDisc) {
    nhvk::models::RollingDisc model;
    model.m = 1.7;
    model.R = 0.4;
    model.alpha = 0.3;
    const double m = 1.7, R = 0.4, I = 0.5 * m * R * R, Jm = 0.25 * m * R * R;
    std::mt19937_64 rng(21);
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    for (int trial = 0; trial < 20; ++trial) {
        const double q[4] = {u(rng), u(rng), u(rng), u(rng)}, v[4] = {u(rng), u(rng), u(rng), u(rng)};
        const double mu[2] = {u(rng), u(rng)}, t = 0.5;
        const double th = v[2], ph = v[3], s = std::sin(q[3]), c = std::cos(q[3]);
        const double W[4] = {m, m, I, Jm};
        const double b[4] = {-m * 9.81 * std::sin(0.3), 0, 0, 0};
        const double J[2][4] = {{1, 0, -R * c, 0}, {0, 1, -R * s, 0}};
        const double gam[2] = {-R * th * ph * s, R * th * ph * c};
        const double cc[2][4] = {{0, 0, R * ph * s, -R * th * s}, {0, 0, -R * ph * c, R * th * c}};
        const double phi[2] = {v[0] - R * th * c, v[1] - R * th * s};
        const auto lp = nhvk::lagrangian_parts(model, q, v, t, static_cast<const double*>(nullptr));
        const auto lv = nhvk::lagrangian_parts(model, q, v, t, mu);
        const auto cp = nhvk::constraint_parts(model, q, v, t);
        for (int i = 0; i < 4; ++i) {
            EXPECT_NEAR(lp.b[i], b[i], 1e-13);
            EXPECT_NEAR(lp.Lv[i], W[i] * v[i], 1e-13);
            EXPECT_NEAR(lv.b[i], b[i] - mu[0] * cc[0][i] - mu[1] * cc[1][i], 1e-13);
            EXPECT_NEAR(lv.Lv[i], W[i] * v[i] - mu[0] * J[0][i] - mu[1] * J[1][i], 1e-13);
            for (int j = 0; j < 4; ++j) {
                EXPECT_NEAR(lp.W[i][j], i == j ? W[i] : 0.0, 1e-14);
                EXPECT_NEAR(lv.W[i][j], i == j ? W[i] : 0.0, 1e-14); // linear constraints: H = 0
            }
            for (int a = 0; a < 2; ++a) EXPECT_NEAR(cp.J[a][i], J[a][i], 1e-14);
        }
        for (int a = 0; a < 2; ++a) {
            EXPECT_NEAR(cp.gamma[a], gam[a], 1e-13);
            EXPECT_NEAR(cp.phi[a], phi[a], 1e-14);
        }
        // E = ½m(ẋ²+ẏ²) + ½Iθ̇² + ½Jϕ̇² − m g sin α · x
        const double E = 0.5 * m * (v[0] * v[0] + v[1] * v[1]) + 0.5 * I * th * th + 0.5 * Jm * ph * ph -
                         m * 9.81 * std::sin(0.3) * q[0];
        EXPECT_NEAR(nhvk::energy(model, q, v, t), E, 1e-12);
    }
}

// perpendicular_velocities with (m1, m2, κ, ℓ) = (1.3, 0.7, 2.0, 0.8); d = p1 − p2, r = |d|:
//   W = diag(m1 I3, m2 I3),  L_q = (−κ(r−ℓ) d/r,  +κ(r−ℓ) d/r),  b = −L_q
//   φ = ṗ1·ṗ2:  J = (ṗ2, ṗ1),  H = [[0, I3], [I3, 0]],  γ = 0,  c = 0
TEST(AdParts, PerpendicularVelocities) {
    nhvk::models::PerpendicularVelocities model;
    model.m1 = 1.3;
    model.m2 = 0.7;
    model.kappa = 2.0;
    model.ell = 0.8;
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int trial = 0; trial < 20; ++trial) {
        double q[6], v[6];
        for (int j = 0; j < 6; ++j) {
            q[j] = u(rng);
            v[j] = u(rng);
        }
        const double mu[1] = {u(rng)};
        double d[3], r = 0;
        for (int j = 0; j < 3; ++j) {
            d[j] = q[j] - q[3 + j];
            r += d[j] * d[j];
        }
        r = std::sqrt(r);
        const double f = 2.0 * (r - 0.8) / r;
        const auto lp = nhvk::lagrangian_parts(model, q, v, 0.0, static_cast<const double*>(nullptr));
        const auto lv = nhvk::lagrangian_parts(model, q, v, 0.0, mu);
        const auto cp = nhvk::constraint_parts(model, q, v, 0.0);
        for (int i = 0; i < 6; ++i) {
            const double mass = i < 3 ? 1.3 : 0.7;
            const double bi = i < 3 ? f * d[i] : -f * d[i - 3];
            EXPECT_NEAR(lp.b[i], bi, 1e-13);
            EXPECT_NEAR(lv.b[i], bi, 1e-13); // c = 0
            EXPECT_NEAR(cp.J[0][i], v[(i + 3) % 6], 1e-15);
            EXPECT_NEAR(lv.Lv[i], mass * v[i] - mu[0] * v[(i + 3) % 6], 1e-14);
            for (int j = 0; j < 6; ++j) {
                const double Wij = i == j ? mass : 0.0;
                const double Hij = (j == (i + 3) % 6) ? 1.0 : 0.0;
                EXPECT_NEAR(lp.W[i][j], Wij, 1e-15);
                EXPECT_NEAR(lv.W[i][j], Wij - mu[0] * Hij, 1e-15);
            }
        }
        EXPECT_NEAR(cp.gamma[0], 0.0, 1e-15);
        EXPECT_NEAR(cp.phi[0], v[0] * v[3] + v[1] * v[4] + v[2] * v[5], 1e-15);
    }
}

// nh_particle: W = I, b = 0, J = (−y, 0, 1), γ = ẋ ẏ, c = (∂J/∂q)·v − φ_q = (−ẏ, 0, 0) − (0, −ẋ, 0) = (−ẏ, ẋ, 0).
// sphere_holonomic: W = I, b = (0, 0, g), J = q, γ = −|v|², c = (∂J/∂q)·v − φ_q = v − v = 0 (integrable).
TEST(AdParts, NhParticleAndSphere) {
    std::mt19937_64 rng(41);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (int trial = 0; trial < 10; ++trial) {
        const double q[3] = {u(rng), u(rng), u(rng)}, v[3] = {u(rng), u(rng), u(rng)}, mu[1] = {u(rng)};
        {
            const nhvk::models::NhParticle model;
            const auto lv = nhvk::lagrangian_parts(model, q, v, 0.0, mu);
            const auto cp = nhvk::constraint_parts(model, q, v, 0.0);
            const double c[3] = {-v[1], v[0], 0};
            const double J[3] = {-q[1], 0, 1};
            for (int i = 0; i < 3; ++i) {
                EXPECT_NEAR(lv.b[i], -mu[0] * c[i], 1e-14);
                EXPECT_NEAR(cp.J[0][i], J[i], 1e-15);
            }
            EXPECT_NEAR(cp.gamma[0], v[0] * v[1], 1e-14);
        }
        {
            nhvk::models::SphereHolonomic model;
            model.g = 3.5;
            const auto lv = nhvk::lagrangian_parts(model, q, v, 0.0, mu);
            const auto cp = nhvk::constraint_parts(model, q, v, 0.0);
            for (int i = 0; i < 3; ++i) {
                EXPECT_NEAR(lv.b[i], i == 2 ? 3.5 : 0.0, 1e-14);
                EXPECT_NEAR(cp.J[0][i], q[i], 1e-15);
            }
            EXPECT_NEAR(cp.gamma[0], -(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 1e-13);
        }
    }
}

} // namespace
