// SPDX-License-Identifier: MIT
// The Jacobian that the linearly implicit steppers solve with (nhvk/jacobian.hpp), for every catalogue model and both
// dynamics: by forward tangents through the generated equations, against the same through the dual-number reference
// (a different derivation of the same derivative) and against fourth-order central differences of the plain right-hand
// side (a check that owes nothing to the dual numbers).
#include <nhvk/dynamics.hpp>
#include <nhvk/generated.hpp>
#include <nhvk/generated/all.hpp>
#include <nhvk/jacobian.hpp>
#include <nhvk/models/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

namespace {

template <class List> struct AsTypes;
template <class... Ms> struct AsTypes<nhvk::ModelList<Ms...>> { using type = ::testing::Types<Ms...>; };

template <class M> class RhsJacobian : public ::testing::Test {};
TYPED_TEST_SUITE(RhsJacobian, AsTypes<nhvk::BuiltinModels>::type);

struct Worst {
    double gen_vs_ad = 0.0, gen_vs_fd = 0.0;
    int compared = 0;
    long entries = 0, entries_fd = 0; ///< Jacobian entries, and those the differences were trusted for
};

/** @brief Compare the three Jacobians of one system at `(t, y)`; false when the state is outside the system's domain.
 */
template <class GenSys, class AdSys>
bool compare_at(const GenSys& gen, const AdSys& ad, double t, const double* y, Worst& w) {
    constexpr int dim = GenSys::dim;
    double Jg[dim][dim], Ja[dim][dim], fg[dim], fa[dim];
    if (nhvk::rhs_jacobian(gen, t, y, Jg, fg) != nhvk::Status::ok) return false;
    EXPECT_EQ(nhvk::rhs_jacobian(ad, t, y, Ja, fa), nhvk::Status::ok);
    // Fourth-order central differences, (8 (f(+h) − f(−h)) − (f(+2h) − f(−2h))) / 12h, column `dim` the time, at two
    // steps: an entry is compared where the two agree (near a singular saddle matrix the higher derivatives are large
    // and neither is trusted; the test counts how many entries that leaves out).
    double scale = 1.0;
    for (int i = 0; i < dim; ++i)
        for (int j = 0; j < dim; ++j) scale = std::max(scale, std::fabs(Ja[i][j]));
    for (int c = 0; c <= dim; ++c) {
        double fd[2][dim];
        for (int e = 0; e < 2; ++e) {
            const double h = (e == 0 ? 1e-3 : 1e-4) * std::max(1.0, c < dim ? std::fabs(y[c]) : std::fabs(t));
            double f[4][dim];
            const double offsets[4] = {h, -h, 2 * h, -2 * h};
            for (int o = 0; o < 4; ++o) {
                double yo[dim];
                for (int j = 0; j < dim; ++j) yo[j] = y[j] + (j == c ? offsets[o] : 0.0);
                const double to = t + (c == dim ? offsets[o] : 0.0);
                if (gen.rhs(to, yo, f[o]) != nhvk::Status::ok) return false;
            }
            for (int i = 0; i < dim; ++i) fd[e][i] = (8.0 * (f[0][i] - f[1][i]) - (f[2][i] - f[3][i])) / (12.0 * h);
        }
        for (int i = 0; i < dim; ++i) {
            const double g = c < dim ? Jg[i][c] : fg[i], a = c < dim ? Ja[i][c] : fa[i];
            w.gen_vs_ad = std::max(w.gen_vs_ad, std::fabs(g - a) / scale);
            ++w.entries;
            if (std::fabs(fd[0][i] - fd[1][i]) > 1e-8 * scale) continue;
            ++w.entries_fd;
            w.gen_vs_fd = std::max(w.gen_vs_fd, std::fabs(g - fd[1][i]) / scale);
        }
    }
    ++w.compared;
    return true;
}

TYPED_TEST(RhsJacobian, AgreesWithTheReferenceAndWithDifferences) {
    using M = TypeParam;
    constexpr int n = M::n, k = M::k;
    using NhGen = nhvk::BalancedNonholonomicSystem<M, double, nhvk::GenEquations<M, double>>;
    using NhAd = nhvk::BalancedNonholonomicSystem<M, double, nhvk::AdEquations<M, double>>;
    using VkGen = nhvk::VakonomicSystem<M, double, nhvk::GenEquations<M, double>>;
    using VkAd = nhvk::VakonomicSystem<M, double, nhvk::AdEquations<M, double>>;
    const M model{};
    const NhGen nh_gen(model);
    const NhAd nh_ad(model);
    const VkGen vk_gen(model);
    const VkAd vk_ad(model);
    std::mt19937_64 rng(20261129);
    std::normal_distribution<double> N(0.0, 1.0);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    Worst w;
    for (int trial = 0; trial < 40; ++trial) {
        double y_nh[NhGen::dim] = {}, y_vk[VkGen::dim] = {};
        for (int i = 0; i < n; ++i) {
            y_nh[i] = y_vk[i] = U(rng); // |q| < 1 keeps the Euler-angle chart of ball_on_turntable
            y_nh[n + i] = y_vk[n + i] = N(rng);
        }
        for (int a = 0; a < k; ++a) y_vk[2 * n + a] = 0.5 * N(rng);
        const double t = U(rng);
        SCOPED_TRACE(std::string(M::name) + " trial " + std::to_string(trial));
        compare_at(nh_gen, nh_ad, t, y_nh, w);
        compare_at(vk_gen, vk_ad, t, y_vk, w);
    }
    std::printf("    %s: over %d Jacobians, max |gen - ad| %.3g; max |gen - central difference| %.3g (of max |J|) over "
                "%ld of %ld entries\n",
                M::name, w.compared, w.gen_vs_ad, w.gen_vs_fd, w.entries_fd, w.entries);
    EXPECT_LE(w.gen_vs_ad, 1e-12);
    // NOTE: where the two steps agree to 1e-8, the smaller is good to about that; a wrong entry is off by O(1).
    EXPECT_LE(w.gen_vs_fd, 1e-7);
    EXPECT_GE(w.entries_fd, w.entries * 9 / 10);
    EXPECT_GE(w.compared, 40);
}

} // namespace
