// SPDX-License-Identifier: MIT
#include "nhvk/stats/onset.hpp"
#include "stats/ensemble_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace {

using nhvk::stats::growth_exponent;
using nhvk::stats::onset_never;
using nhvk::stats::OnsetHistogram;

TEST(Onset, HistogramQuantiles) {
    const std::vector<double> t = {0.1, 0.2, 0.3, 0.4};
    OnsetHistogram h(4);
    // onsets: index 0 ×1, 1 ×2, 3 ×1, never ×1; one invalid trajectory ignored
    const std::int32_t idx[] = {1, 0, onset_never, 3, 1, 2};
    const std::uint8_t valid[] = {1, 1, 1, 1, 1, 0};
    h.add_chunk(idx, 6, valid);
    EXPECT_EQ(h.total(), 5u);
    EXPECT_EQ(h.never, 1u);
    EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{1, 2, 0, 1}));
    // ranks over n = 5: p=0.5 → r=3 → 0.2; p=0.8 → r=4 → 0.4; p=0.81 → r=5 → never (+inf); p=0 → r=1 → 0.1
    EXPECT_EQ(h.quantile(0.5, t), 0.2);
    EXPECT_EQ(h.quantile(0.8, t), 0.4);
    EXPECT_EQ(h.quantile(0.81, t), std::numeric_limits<double>::infinity());
    EXPECT_EQ(h.quantile(0.0, t), 0.1);
    // ranks over the 4 with an onset: p=1 → r=4 → 0.4; p=0.5 → r=2 → 0.2
    EXPECT_EQ(h.quantile(1.0, t, false), 0.4);
    EXPECT_EQ(h.quantile(0.5, t, false), 0.2);
    EXPECT_TRUE(std::isnan(OnsetHistogram(4).quantile(0.5, t)));
    EXPECT_THROW(h.quantile(0.5, {0.1}), std::invalid_argument);
}

TEST(Onset, MergeEqualsConcatenation) {
    OnsetHistogram a(3);
    OnsetHistogram b(3);
    OnsetHistogram all(3);
    const std::int32_t idx[] = {0, 2, 2, onset_never, 1, 7};
    for (int i = 0; i < 6; ++i) {
        (i < 2 ? a : b).add(idx[i]);
        all.add(idx[i]);
    }
    a.merge(b);
    EXPECT_EQ(a.counts, all.counts);
    EXPECT_EQ(a.never, all.never);
    EXPECT_EQ(a.never, 2u); // index 7 >= 3 counts as never
    OnsetHistogram other(4);
    EXPECT_THROW(a.merge(other), std::invalid_argument);
}

TEST(GrowthExponent, RecoversPowerLaws) {
    std::vector<double> t;
    std::vector<double> m3;
    std::vector<double> mixed;
    for (int i = 0; i <= 40; ++i) {
        t.push_back(0.05 * i); // includes t = 0, which is skipped
        m3.push_back(2.5 * std::pow(0.05 * i, 3));
        mixed.push_back(0.05 * i <= 0.5 ? 7.0 * std::pow(0.05 * i, 2) : 1.0); // t² early, saturated late
    }
    EXPECT_NEAR(growth_exponent(t, m3, 10.0), 3.0, 1e-12);
    EXPECT_NEAR(growth_exponent(t, m3, 0.3), 3.0, 1e-12);
    EXPECT_NEAR(growth_exponent(t, mixed, 0.5), 2.0, 1e-12);
    // zeros and non-positive medians are skipped
    std::vector<double> with_zero = m3;
    with_zero[5] = 0.0;
    EXPECT_NEAR(growth_exponent(t, with_zero, 10.0), 3.0, 1e-12);
}

TEST(GrowthExponent, TooFewPointsIsNaN) {
    const std::vector<double> t = {0.0, 0.1, 0.2, 0.3};
    EXPECT_TRUE(std::isnan(growth_exponent(t, {1.0, 1.0, 0.0, 0.0}, 1.0)));  // one usable point
    EXPECT_TRUE(std::isnan(growth_exponent(t, {1.0, 1.0, 2.0, 3.0}, 0.15))); // one point with t <= t_max
    EXPECT_TRUE(std::isnan(growth_exponent({}, {}, 1.0)));
    EXPECT_NEAR(growth_exponent(t, {1.0, 0.1, 0.8, 2.7}, 0.3), 3.0, 1e-12);
}

} // namespace

// the fit's quality against a regression worked by hand: x = log t = 0, 1, 2, 3 and y = log median = 0, 1, 3, 3
// give slope Sxy/Sxx = 5.5/5 = 1.1, RSS = Syy − p·Sxy = 6.75 − 6.05 = 0.7, R² = 1 − 0.7/6.75, standard error
// sqrt(0.7/2/5), and the 95 % interval ± t(0.975, 2 dof) = 4.3026527 times it; the line passes through (x̄, ȳ) =
// (1.5, 1.75), so log C = 1.75 − 1.1·1.5 = 0.1 with se² = RSS/2·(1/4 + x̄²/Sxx) = 0.35·(0.25 + 2.25/5) = 0.245
TEST(GrowthFit, QualityAgainstAHandWorkedRegression) {
    const std::vector<double> t = {1.0, std::exp(1.0), std::exp(2.0), std::exp(3.0)};
    const std::vector<double> m = {1.0, std::exp(1.0), std::exp(3.0), std::exp(3.0)};
    const nhvk::stats::GrowthFit f = nhvk::stats::growth_fit(t, m, 100.0);
    EXPECT_EQ(f.points, 4u);
    EXPECT_NEAR(f.slope, 1.1, 1e-14);
    EXPECT_NEAR(f.r_squared, 1.0 - 0.7 / 6.75, 1e-14);
    EXPECT_NEAR(f.standard_error, std::sqrt(0.07), 1e-14);
    EXPECT_NEAR(f.ci_low, 1.1 - 4.302652729749464 * std::sqrt(0.07), 1e-12);
    EXPECT_NEAR(f.ci_high, 1.1 + 4.302652729749464 * std::sqrt(0.07), 1e-12);
    EXPECT_DOUBLE_EQ(f.max_median, std::exp(3.0));
    EXPECT_NEAR(f.amplitude, std::exp(0.1), 1e-14);
    // e^{…} magnifies the last of the t table's 12 digits
    EXPECT_NEAR(f.amplitude_ci_low, std::exp(0.1 - 4.302652729749464 * std::sqrt(0.245)), 1e-11);
    EXPECT_NEAR(f.amplitude_ci_high, std::exp(0.1 + 4.302652729749464 * std::sqrt(0.245)), 1e-11);
    // an exact power law: R² = 1 and a zero-width interval; two points: no interval
    const std::vector<double> cube = {1.0, std::exp(3.0), std::exp(6.0), std::exp(9.0)};
    const nhvk::stats::GrowthFit g = nhvk::stats::growth_fit(t, cube, 100.0);
    EXPECT_NEAR(g.r_squared, 1.0, 1e-15);
    EXPECT_NEAR(g.ci_high - g.ci_low, 0.0, 1e-12);
    EXPECT_NEAR(g.amplitude, 1.0, 1e-13);
    const nhvk::stats::GrowthFit two = nhvk::stats::growth_fit(t, cube, 3.0);
    EXPECT_EQ(two.points, 2u);
    EXPECT_NEAR(two.slope, 3.0, 1e-14);
    EXPECT_TRUE(std::isnan(two.ci_low));
    EXPECT_TRUE(std::isnan(two.amplitude_ci_low));
}

// d = C·t^p exactly, C away from 1 and t not through 1: the fit returns C and p (to rounding) and zero-width intervals
TEST(GrowthFit, AmplitudeOfAnExactPowerLaw) {
    const double c = 0.0041, p = 2.5;
    std::vector<double> t, m;
    for (int i = 0; i < 12; ++i) {
        t.push_back(0.002 * std::pow(1.5, i));
        m.push_back(c * std::pow(t.back(), p));
    }
    const nhvk::stats::GrowthFit f = nhvk::stats::growth_fit(t, m, 1.0);
    EXPECT_NEAR(f.slope, p, 1e-12);
    EXPECT_NEAR(f.amplitude / c, 1.0, 1e-11);
    EXPECT_NEAR(f.amplitude_ci_high / f.amplitude_ci_low, 1.0, 1e-10);
}

// Student's t quantiles against published values (Abramowitz–Stegun table 26.10) beyond the built-in table
TEST(GrowthFit, StudentQuantiles) {
    EXPECT_NEAR(nhvk::stats::student_t975(1), 12.706, 1e-3);
    EXPECT_NEAR(nhvk::stats::student_t975(40), 2.021, 1e-3);
    EXPECT_NEAR(nhvk::stats::student_t975(60), 2.000, 1e-3);
    EXPECT_NEAR(nhvk::stats::student_t975(120), 1.980, 1e-3);
    EXPECT_NEAR(nhvk::stats::student_t975(100000), 1.960, 1e-3);
}
