// SPDX-License-Identifier: MIT
/** @file
 *  @brief The README's "Adding a model" example, extracted verbatim from README.md by CMake, compiled and run:
 *         registration metadata, the closed form of its nonholonomic motion, energy conservation and the O(t³)/O(t²)
 *         divergence laws of docs/physics.md §4.2.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dopri5_control.hpp"
#include "loglog_slope.hpp"
#include "nhvk/member.hpp"
#include "readme_example_model.hpp"
#include "registry.hpp"

namespace {

using nhvk::Dopri5;
using nhvk::models::SwappedParticle;

struct Recorder {
    std::vector<std::vector<double>> rows;
    void operator()(int, double, const double* y_nh, const double* y_vk) {
        std::vector<double> r(y_nh, y_nh + 6);
        r.insert(r.end(), y_vk, y_vk + 7);
        rows.push_back(r);
    }
};

TEST(ReadmeExample, RegistersNameCoordinatesAndParameters) {
    const nhvk::ModelInfo info = nhvk::model_info<SwappedParticle>();
    EXPECT_EQ(info.name, "swapped_particle");
    EXPECT_EQ(info.n, 3);
    EXPECT_EQ(info.k, 1);
    ASSERT_EQ(info.params.size(), 1u);
    EXPECT_EQ(info.params[0].name, "m");
    EXPECT_EQ(info.params[0].default_value, 1.0);
    const double p[1] = {2.5};
    EXPECT_EQ(nhvk::make_model<SwappedParticle>(p).m, 2.5);
}

// By the x <-> y mirror of the nonholonomic particle (docs/models.md): ẍ = 0, C = ẏ √(1 + x²) is constant,
// y = y0 + (C/ẋ0)(asinh x − asinh x0), z = z0 + (C/ẋ0)(√(1+x²) − √(1+x0²)), for any mass m.
TEST(ReadmeExample, NonholonomicMotionMatchesClosedForm) {
    SwappedParticle model;
    model.m = 1.7;
    const double x0 = 0.3, xd = 0.8, y0 = -0.2, yd = 0.6, z0 = 0.1;
    const double q0[3] = {x0, y0, z0}, v0[3] = {xd, yd, x0 * yd}, mu0[1] = {0.0};
    const double T = 4.0, times[1] = {T};
    Recorder rec;
    const auto out =
        nhvk::integrate_member<Dopri5>(model, q0, v0, mu0, 0.0, times, 1, nhvk_test::dopri5_control(), rec);
    ASSERT_EQ(out.status, nhvk::Status::ok);
    const double x = x0 + xd * T, C = yd * std::sqrt(1 + x0 * x0);
    const double y = y0 + (C / xd) * (std::asinh(x) - std::asinh(x0));
    const double z = z0 + (C / xd) * (std::sqrt(1 + x * x) - std::sqrt(1 + x0 * x0));
    const std::vector<double>& last = rec.rows.back();
    EXPECT_NEAR(last[0], x, 1e-9);
    EXPECT_NEAR(last[1], y, 1e-9);
    EXPECT_NEAR(last[2], z, 1e-9);
    // energy ½ m |v|² is conserved (the constraint is homogeneous of degree 1)
    const double E0 = nhvk::energy(model, q0, v0, 0.0);
    EXPECT_NEAR(nhvk::energy(model, last.data(), last.data() + 3, T), E0, 1e-11 * E0);
}

double divergence_slope(double mu0) {
    const SwappedParticle model;
    const double q0[3] = {0.4, -0.3, 0.2}, v0[3] = {0.7, 0.5, 0.4 * 0.5}, mu[1] = {mu0};
    std::vector<double> t;
    for (int i = 0; i <= 12; ++i) t.push_back(1e-3 * std::pow(30.0, i / 12.0));
    Recorder rec;
    const auto out = nhvk::integrate_member<Dopri5>(model, q0, v0, mu, 0.0, t.data(), static_cast<int>(t.size()),
                                                    nhvk_test::dopri5_control(), rec);
    EXPECT_EQ(out.status, nhvk::Status::ok);
    std::vector<double> d(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
        const std::vector<double>& r = rec.rows[i + 1]; // row 0 is t0
        double s = 0;
        for (int j = 0; j < 3; ++j) s += (r[j] - r[6 + j]) * (r[j] - r[6 + j]);
        d[i] = std::sqrt(s);
    }
    return nhvk_test::loglog_slope(t, d);
}

TEST(ReadmeExample, DivergenceLawsCubicForZeroMultiplierQuadraticOtherwise) {
    EXPECT_NEAR(divergence_slope(0.0), 3.0, 0.05);
    EXPECT_NEAR(divergence_slope(0.6), 2.0, 0.05);
}

} // namespace
