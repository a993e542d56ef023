// SPDX-License-Identifier: MIT
// The laws fitted to the divergence (host/stats/fit_law.hpp): exact laws are recovered, a fixed exponent fits the
// amplitude alone, the window selects the points, and the free power law is the growth fit it always was.
#include "stats/fit_law.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using nhvk::stats::fit_law;
using nhvk::stats::FitLaw;
using nhvk::stats::FitSpec;
using nhvk::stats::GrowthFit;

std::vector<double> times() { return {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0}; }

TEST(FitLaw, APowerLawIsRecoveredWithItsAmplitude) {
    const std::vector<double> t = times();
    std::vector<double> y;
    for (double x : t) y.push_back(0.3 * std::pow(x, 2.5));
    const GrowthFit f = fit_law(t, y, FitSpec{});
    EXPECT_NEAR(f.slope, 2.5, 1e-12);
    EXPECT_NEAR(f.amplitude, 0.3, 1e-12);
    EXPECT_EQ(f.points, t.size());
    EXPECT_NEAR(f.r_squared, 1.0, 1e-12);
}

TEST(FitLaw, AFixedExponentFitsTheAmplitudeAloneAsTheMeanOfTheLogResiduals) {
    const std::vector<double> t = times();
    // a law of exponent 3 with scatter: log C = mean(log y − 3 log t), computed here term by term
    std::vector<double> y;
    double sum = 0.0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        y.push_back(2.0 * std::pow(t[i], 3.0) * (1.0 + 0.1 * ((i % 3) - 1.0)));
        sum += std::log(y.back()) - 3.0 * std::log(t[i]);
    }
    FitSpec spec;
    spec.fixed_slope = 3.0;
    const GrowthFit f = fit_law(t, y, spec);
    EXPECT_EQ(f.slope, 3.0);
    EXPECT_NEAR(std::log(f.amplitude), sum / static_cast<double>(t.size()), 1e-13);
    // its interval: Student t with n − 1 degrees of freedom about log C, and around the value it covers
    EXPECT_LT(f.amplitude_ci_low, f.amplitude);
    EXPECT_GT(f.amplitude_ci_high, f.amplitude);
    EXPECT_LT(f.amplitude_ci_low, 2.0);
    EXPECT_GT(f.amplitude_ci_high, 2.0);
    // the free fit of the same points finds another amplitude: the fixed exponent is used
    EXPECT_NE(fit_law(t, y, FitSpec{}).amplitude, f.amplitude);
    // one point is enough for an amplitude
    const GrowthFit one = fit_law({0.5}, {2.0 * 0.125}, spec);
    EXPECT_NEAR(one.amplitude, 2.0, 1e-15);
    EXPECT_EQ(one.points, 1u);
}

TEST(FitLaw, AnExponentialIsRecoveredOverItsWindow) {
    const std::vector<double> t = times();
    std::vector<double> y;
    // t^3 early, 1e-2 e^{1.7 t} from t = 0.5 on: only the late window sees the exponential
    for (double x : t) y.push_back(x < 0.4 ? std::pow(x, 3.0) : 1e-2 * std::exp(1.7 * x));
    FitSpec spec;
    spec.law = FitLaw::exponential;
    spec.t_min = 0.4;
    spec.t_max = 3.0;
    const GrowthFit f = fit_law(t, y, spec);
    EXPECT_EQ(f.points, 4u);
    EXPECT_NEAR(f.slope, 1.7, 1e-12);
    EXPECT_NEAR(f.amplitude, 1e-2, 1e-14);
    // over every point it is not an exponential
    spec.t_min = 0.0;
    EXPECT_GT(std::fabs(fit_law(t, y, spec).slope - 1.7), 0.1);
}

TEST(FitLaw, TheWindowExcludesItsLowEndAndKeepsItsHighEnd) {
    const std::vector<double> t = times();
    std::vector<double> y(t.size(), 1.0);
    FitSpec spec;
    spec.t_min = 0.05;                         // excluded
    spec.t_max = 1.0;                          // included
    EXPECT_EQ(fit_law(t, y, spec).points, 4u); // 0.1, 0.2, 0.5, 1
    // non-positive and non-finite values are left out
    y[4] = 0.0;
    y[5] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(fit_law(t, y, spec).points, 2u);
}

TEST(FitLaw, TheFreePowerLawIsTheGrowthFit) {
    const std::vector<double> t = times();
    std::vector<double> y;
    for (std::size_t i = 0; i < t.size(); ++i) y.push_back(std::pow(t[i], 2.0) * (1.0 + 0.05 * std::sin(3.0 * i)));
    const GrowthFit a = nhvk::stats::growth_fit(t, y, 0.5);
    FitSpec spec;
    spec.t_max = 0.5;
    const GrowthFit b = fit_law(t, y, spec);
    EXPECT_EQ(a.slope, b.slope);
    EXPECT_EQ(a.amplitude, b.amplitude);
    EXPECT_EQ(a.ci_low, b.ci_low);
    EXPECT_EQ(a.amplitude_ci_high, b.amplitude_ci_high);
    EXPECT_EQ(a.points, 6u);
}

} // namespace
