// SPDX-License-Identifier: MIT
// The generated equations (nhvk/generated/<model>.hpp, derived at build time by host/sym/) against the dual-number
// reference (AdEquations) for every catalogue model: accelerations and multipliers of both dynamics, φ, J, γ, W and
// E at random states, random parameters and every value of the boolean parameters. They are computed by different
// code (straight-line folded expressions and a Schur-complement or LU solve, versus nested duals and the full LU), so
// agreement to 1e-12 relative checks the derivation, the folding, the emitter and the structured solve together.
#include <nhvk/dynamics.hpp>
#include <nhvk/generated.hpp>
#include <nhvk/generated/all.hpp>
#include <nhvk/models/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

template <class List> struct AsTypes;
template <class... Ms> struct AsTypes<nhvk::ModelList<Ms...>> { using type = ::testing::Types<Ms...>; };

template <class M> class GeneratedEquations : public ::testing::Test {};
TYPED_TEST_SUITE(GeneratedEquations, AsTypes<nhvk::BuiltinModels>::type);

/** @brief max |x − y| / max(1, max |y|) over a vector. */
double rel_err(const double* x, const double* y, int m) {
    double e = 0.0, s = 1.0;
    for (int i = 0; i < m; ++i) {
        e = std::max(e, std::fabs(x[i] - y[i]));
        s = std::max(s, std::fabs(y[i]));
    }
    return e / s;
}

/** @brief The model's parameters perturbed by up to ±20 % (booleans set from `bits`). */
template <class M> M random_model(std::mt19937_64& rng, unsigned bits) {
    M m{};
    std::uniform_real_distribution<double> f(0.8, 1.2);
    int bit = 0;
    m.visit_params([&](const char*, auto& value, auto...) {
        using V = std::decay_t<decltype(value)>;
        if constexpr (std::is_same<V, bool>::value) value = ((bits >> bit++) & 1u) != 0;
        else value = value == 0.0 ? 0.1 * (f(rng) - 1.0) : value * f(rng);
    });
    return m;
}

TYPED_TEST(GeneratedEquations, AgreeWithTheDualNumberReference) {
    using M = TypeParam;
    constexpr int n = M::n, k = M::k;
    using Gen = nhvk::GenEquations<M, double>;
    using Ad = nhvk::AdEquations<M, double>;
    std::mt19937_64 rng(20261123);
    std::normal_distribution<double> N(0.0, 1.0);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    double worst = 0.0;
    int compared = 0, singular = 0;
    for (unsigned bits = 0; bits < static_cast<unsigned>(nhvk::Generated<M>::n_variants); ++bits) {
        for (int trial = 0; trial < 200; ++trial) {
            const M model = random_model<M>(rng, bits);
            double q[n], v[n], mu[k];
            for (int i = 0; i < n; ++i) {
                q[i] = U(rng); // |q| < 1 keeps the Euler-angle chart of ball_on_turntable (cos θ > 0.54)
                v[i] = N(rng);
            }
            for (int a = 0; a < k; ++a) mu[a] = 0.5 * N(rng);
            const double t = U(rng);
            const Gen gen(model);
            const Ad ad(model);
            SCOPED_TRACE(std::string(M::name) + " variant " + std::to_string(bits) + " trial " + std::to_string(trial));

            double ag[n], aa[n], mg[k], ma[k];
            const nhvk::Status sg = gen.nh_accel(t, q, v, ag, mg), sa = ad.nh_accel(t, q, v, aa, ma);
            ASSERT_EQ(sg, sa);
            if (sg == nhvk::Status::ok) {
                worst = std::max({worst, rel_err(ag, aa, n), rel_err(mg, ma, k)});
                ++compared;
            } else {
                ++singular;
            }
            const nhvk::Status vg = gen.vk_accel(t, q, v, mu, ag, mg), va = ad.vk_accel(t, q, v, mu, aa, ma);
            ASSERT_EQ(vg, va);
            if (vg == nhvk::Status::ok) {
                worst = std::max({worst, rel_err(ag, aa, n), rel_err(mg, ma, k)});
                ++compared;
            } else {
                ++singular;
            }
            const auto cg = gen.constraint_parts(q, v, t), ca = ad.constraint_parts(q, v, t);
            worst = std::max({worst, rel_err(cg.phi, ca.phi, k), rel_err(&cg.J[0][0], &ca.J[0][0], k * n),
                              rel_err(cg.gamma, ca.gamma, k)});
            double Wg[n][n], Wa[n][n];
            gen.kinetic_metric(q, v, t, Wg);
            ad.kinetic_metric(q, v, t, Wa);
            worst = std::max(worst, rel_err(&Wg[0][0], &Wa[0][0], n * n));
            const double eg = gen.energy(q, v, t), ea = ad.energy(q, v, t);
            worst = std::max(worst, rel_err(&eg, &ea, 1));
        }
    }
    this->RecordProperty("max_relative_difference", std::to_string(worst));
    std::printf("    %s: max relative difference %.3g over %d solves (%d singular)\n", M::name, worst, compared,
                singular);
    EXPECT_LE(worst, 1e-12) << M::name;
    // NOTE: the random states are regular: a test that compared nothing would pass by accident.
    EXPECT_GE(compared, 300) << M::name << ": " << singular << " singular states";
}

TYPED_TEST(GeneratedEquations, FloatAgreesToFloatRounding) {
    using M = TypeParam;
    constexpr int n = M::n, k = M::k;
    std::mt19937_64 rng(7);
    std::normal_distribution<double> N(0.0, 1.0);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    const M model{};
    const nhvk::GenEquations<M, float> gen(model);
    const nhvk::AdEquations<M, double> ad(model);
    double worst = 0.0;
    int compared = 0;
    for (int trial = 0; trial < 100; ++trial) {
        double q[n], v[n], mu[k];
        float qf[n], vf[n], muf[k];
        for (int i = 0; i < n; ++i) {
            qf[i] = static_cast<float>(U(rng));
            vf[i] = static_cast<float>(N(rng));
            q[i] = qf[i];
            v[i] = vf[i];
        }
        for (int a = 0; a < k; ++a) mu[a] = muf[a] = static_cast<float>(0.5 * N(rng));
        float ag[n], mg[k];
        double aa[n], ma[k];
        if (gen.vk_accel(0.25f, qf, vf, muf, ag, mg) != nhvk::Status::ok) continue;
        if (ad.vk_accel(0.25, q, v, mu, aa, ma) != nhvk::Status::ok) continue;
        double agd[n], mgd[k];
        for (int i = 0; i < n; ++i) agd[i] = ag[i];
        for (int a = 0; a < k; ++a) mgd[a] = mg[a];
        worst = std::max({worst, rel_err(agd, aa, n), rel_err(mgd, ma, k)});
        ++compared;
    }
    EXPECT_GE(compared, 50) << M::name;
    EXPECT_LE(worst, 1e-4) << M::name; // float rounding of a handful of operations, amplified by the solve
}

// ball_on_turntable's metric is block-diagonal (x, y, and the 3×3 block of the Euler angles, whose determinant is
// ∝ cos²θ), so its generated equations take the `schur_blocks` path: the 3×3 block by adjugate over determinant, then
// the 2×2 Schur complement, where the reference solves the whole 7×7 saddle-point matrix by LU. Near the chart's edge
// both lose digits as the block's condition number ~1/cos²θ grows; the closed form must lose no more than that, and it
// must report `singular` rather than a wrong answer where the determinant has no digit left (θ = π/2).
TEST(GeneratedBlocks, BallNearGimbalLockIsAsAccurateAsTheConditionAllows) {
    using M = nhvk::models::BallOnTurntable;
    static_assert(std::string_view(nhvk::Generated<M>::nh_solve) == "schur_blocks");
    const M model{};
    const nhvk::GenEquations<M, double> gen(model);
    const nhvk::AdEquations<M, double> ad(model);
    std::mt19937_64 rng(11);
    std::normal_distribution<double> N(0.0, 1.0);
    for (const double c : {1e-1, 1e-2, 1e-3, 1e-4}) { // 1e-4 is the chart margin in double
        double worst = 0.0;
        for (int trial = 0; trial < 100; ++trial) {
            double q[5] = {N(rng), N(rng), N(rng), std::acos(c), N(rng)}, v[5], mu[2] = {0.5 * N(rng), 0.5 * N(rng)};
            for (double& x : v) x = N(rng);
            double ag[5], aa[5], mg[2], ma[2];
            ASSERT_EQ(gen.nh_accel(0.0, q, v, ag, mg), nhvk::Status::ok) << "cos θ = " << c;
            ASSERT_EQ(ad.nh_accel(0.0, q, v, aa, ma), nhvk::Status::ok) << "cos θ = " << c;
            worst = std::max({worst, rel_err(ag, aa, 5), rel_err(mg, ma, 2)});
            ASSERT_EQ(gen.vk_accel(0.0, q, v, mu, ag, mg), nhvk::Status::ok) << "cos θ = " << c;
            ASSERT_EQ(ad.vk_accel(0.0, q, v, mu, aa, ma), nhvk::Status::ok) << "cos θ = " << c;
            worst = std::max({worst, rel_err(ag, aa, 5), rel_err(mg, ma, 2)});
        }
        std::printf("    cos θ = %g: max relative difference %.3g (ε/cos²θ = %.3g)\n", c, worst, DBL_EPSILON / (c * c));
        EXPECT_LE(worst, 4.0 * DBL_EPSILON / (c * c)) << "cos θ = " << c;
    }
    double q[5] = {0.3, -0.2, 0.7, std::acos(0.0), -0.4}, v[5] = {0.1, 0.5, -0.3, 0.8, 0.2}, a[5], lam[2];
    EXPECT_EQ(gen.nh_accel(0.0, q, v, a, lam), nhvk::Status::singular) << "cos θ = " << std::cos(q[3]);
}

} // namespace
