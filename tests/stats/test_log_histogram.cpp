// SPDX-License-Identifier: MIT
#include "nhvk/stats/log_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using namespace nhvk::stats; // LogHistogram, LogHistogramSpec and the bin constants k*Bin

// type 7 on a copy, written independently of the library
double type7(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const double h = (v.size() - 1) * p;
    const std::size_t k = static_cast<std::size_t>(std::floor(h));
    if (k + 1 >= v.size()) {
        return v.back();
    }
    return v[k] + (h - std::floor(h)) * (v[k + 1] - v[k]);
}

TEST(LogHistogramSpec, DefaultsAndResolution) {
    const LogHistogramSpec spec;
    EXPECT_EQ(spec.lo, 1e-30);
    EXPECT_EQ(spec.hi, 1e10);
    EXPECT_EQ(spec.bins_per_decade, 50);
    EXPECT_EQ(spec.n_log_bins(), 2000u);
    EXPECT_EQ(spec.n_bins(), 2004u);
    EXPECT_NEAR(spec.relative_resolution(), 0.047128548050899, 1e-14);
    const std::vector<double> e = spec.edges();
    ASSERT_EQ(e.size(), 2001u);
    EXPECT_EQ(e.front(), 1e-30);
    EXPECT_EQ(e.back(), 1e10);
    EXPECT_NEAR(e[1500] / 1.0, 1.0, 1e-15); // 1e-30·10^30
    for (std::size_t k = 0; k + 1 < e.size(); ++k) {
        ASSERT_LT(e[k], e[k + 1]);
        EXPECT_NEAR(e[k + 1] / e[k], 1.0 + spec.relative_resolution(), 1e-13);
    }
}

TEST(LogHistogramSpec, RejectsInvalid) {
    EXPECT_THROW((LogHistogramSpec{1e-30, 3e9, 50}.n_log_bins()), std::invalid_argument);
    EXPECT_THROW((LogHistogramSpec{0.0, 1.0, 50}.n_log_bins()), std::invalid_argument);
    EXPECT_THROW((LogHistogramSpec{1e-310, 1e-300, 10}.n_log_bins()), std::invalid_argument); // subnormal lo
    EXPECT_THROW((LogHistogramSpec{1.0, 0.5, 50}.n_log_bins()), std::invalid_argument);
    EXPECT_THROW((LogHistogramSpec{1e-3, 1e3, 0}.n_log_bins()), std::invalid_argument);
    EXPECT_EQ((LogHistogramSpec{1e-3, 1e3, 7}.n_log_bins()), 42u);
}

TEST(LogBinner, BinsMatchBinarySearchOnEdges) {
    const LogHistogram h;
    const auto b = h.binner();
    const std::vector<double>& e = h.edges();
    EXPECT_EQ(b.bin(-1.0), kNegativeBin);
    EXPECT_EQ(b.bin(-0.0), kZeroBin);
    EXPECT_EQ(b.bin(0.0), kZeroBin);
    EXPECT_EQ(b.bin(1e-31), kUnderflowBin);
    EXPECT_EQ(b.bin(5e-324), kUnderflowBin);
    EXPECT_EQ(b.bin(std::nextafter(1e-30, 0.0)), kUnderflowBin);
    EXPECT_EQ(b.bin(1e-30), kFirstLogBin);
    EXPECT_EQ(b.bin(std::nextafter(1e10, 0.0)), kFirstLogBin + 1999u);
    EXPECT_EQ(b.bin(1e10), b.overflow_bin());
    EXPECT_EQ(b.bin(1e300), b.overflow_bin());
    for (std::size_t k = 0; k + 1 < e.size(); ++k) {
        ASSERT_EQ(b.bin(e[k]), kFirstLogBin + k);
        ASSERT_EQ(b.bin(std::nextafter(e[k + 1], 0.0)), kFirstLogBin + k);
    }
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-32.0, 12.0);
    for (int i = 0; i < 200000; ++i) {
        const double x = std::pow(10.0, u(rng));
        std::uint32_t expected;
        if (x < e.front()) {
            expected = kUnderflowBin;
        } else if (x >= e.back()) {
            expected = b.overflow_bin();
        } else {
            expected =
                kFirstLogBin + static_cast<std::uint32_t>(std::upper_bound(e.begin(), e.end(), x) - e.begin() - 1);
        }
        ASSERT_EQ(b.bin(x), expected) << x;
    }
}

TEST(LogBinner, TableBinsMatchBinarySearchForManySpecs) {
    std::mt19937_64 rng(6);
    for (const LogHistogramSpec spec :
         {LogHistogramSpec{1e-30, 1e10, 50}, LogHistogramSpec{1e-3, 1e3, 7}, LogHistogramSpec{1e-300, 1e300, 1},
          LogHistogramSpec{1e-5, 1e5, 1000}, LogHistogramSpec{0.5, 5.0, 3}, LogHistogramSpec{1e-307, 1e-299, 20}}) {
        const nhvk::stats::LogBinTable t = spec.table();
        const auto b = nhvk::stats::LogBinner::make(t);
        const std::vector<double>& e = t.edges;
        ASSERT_EQ(b.n_log, spec.n_log_bins());
        const double l0 = std::log10(spec.lo) - 1.0;
        const double l1 = std::log10(spec.hi) + 1.0;
        std::uniform_real_distribution<double> u(l0, l1);
        auto expected_bin = [&](double x) -> std::uint32_t {
            if (x < e.front()) {
                return kUnderflowBin;
            }
            if (x >= e.back()) {
                return b.overflow_bin();
            }
            return kFirstLogBin + static_cast<std::uint32_t>(std::upper_bound(e.begin(), e.end(), x) - e.begin() - 1);
        };
        for (int i = 0; i < 100000; ++i) {
            const double x = std::pow(10.0, u(rng));
            if (x > 0.0 && std::isfinite(x)) {
                ASSERT_EQ(b.bin(x), expected_bin(x)) << x;
            }
        }
        for (std::size_t k = 0; k < e.size(); ++k) {
            for (const double x : {e[k], std::nextafter(e[k], 0.0), std::nextafter(e[k], 1e308)}) {
                ASSERT_EQ(b.bin(x), expected_bin(x)) << x;
            }
        }
    }
}

TEST(LogHistogram, EmptyAndSingle) {
    LogHistogram h;
    EXPECT_TRUE(std::isnan(h.quantile(0.5)));
    EXPECT_TRUE(std::isnan(h.min()));
    h.add(std::numeric_limits<double>::infinity());
    EXPECT_EQ(h.nonfinite(), 1u);
    EXPECT_EQ(h.total(), 0u);
    h.add(3.7);
    for (const double p : {0.0, 0.01, 0.5, 0.99, 1.0}) {
        EXPECT_EQ(h.quantile(p), 3.7);
    }
}

TEST(LogHistogram, EndpointsAreExactMinMax) {
    LogHistogram h;
    for (const double x : {1.0, 100.0}) {
        h.add(x);
    }
    EXPECT_EQ(h.quantile(0.0), 1.0);
    EXPECT_EQ(h.quantile(1.0), 100.0);
    EXPECT_EQ(h.quantile(0.5), 50.5); // exact: both order statistics are min and max
}

TEST(LogHistogram, QuantilesWithinResolutionOfExact) {
    std::mt19937_64 rng(17);
    for (const int bpd : {50, 10, 200}) {
        LogHistogram h(LogHistogramSpec{1e-30, 1e10, bpd});
        const double r = h.relative_resolution();
        std::vector<double> v;
        std::uniform_real_distribution<double> u(-25.0, 8.0);
        for (int i = 0; i < 20000; ++i) {
            const double x = (i % 97 == 0) ? 0.0 : std::pow(10.0, u(rng));
            v.push_back(x);
            h.add(x);
        }
        for (const double p : {0.0, 0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0}) {
            const double exact = type7(v, p);
            const double est = h.quantile(p);
            if (exact == 0.0) {
                EXPECT_EQ(est, 0.0);
            } else {
                EXPECT_LE(std::fabs(est / exact - 1.0), r * (1 + 1e-9)) << "bpd " << bpd << " p " << p;
            }
        }
    }
}

TEST(LogHistogram, ZeroBinMixesLinearly) {
    LogHistogram h;
    for (int i = 0; i < 10; ++i) {
        h.add(i < 5 ? 0.0 : -0.0);
    }
    h.add(2.0);
    EXPECT_EQ(h.min(), 0.0);
    EXPECT_FALSE(std::signbit(h.min()));
    EXPECT_EQ(h.quantile(0.5), 0.0);
    EXPECT_EQ(h.quantile(0.95), 1.0); // h = 9.5: 0 + 0.5·(2 − 0)
}

TEST(LogHistogram, MergeEqualsConcatenation) {
    std::mt19937_64 rng(23);
    std::lognormal_distribution<double> ln(0.0, 5.0);
    LogHistogram all;
    LogHistogram a;
    LogHistogram b;
    for (int i = 0; i < 5000; ++i) {
        const double x = ln(rng);
        all.add(x);
        (i % 3 == 0 ? a : b).add(x);
    }
    a.merge(b);
    EXPECT_EQ(a.counts(), all.counts());
    EXPECT_EQ(a.total(), all.total());
    EXPECT_EQ(a.min(), all.min());
    EXPECT_EQ(a.max(), all.max());
    for (const double p : {0.01, 0.5, 0.99}) {
        EXPECT_EQ(a.quantile(p), all.quantile(p));
    }
    LogHistogram other(LogHistogramSpec{1e-30, 1e10, 10});
    EXPECT_THROW(a.merge(other), std::invalid_argument);
}

TEST(LogHistogram, OutOfRangeValuesStayWithinMinMax) {
    LogHistogram h(LogHistogramSpec{1e-3, 1e3, 5});
    for (const double x : {1e-9, 2e-9, 5e6, 7e6, 1.0}) {
        h.add(x);
    }
    for (const double p : {0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0}) {
        const double q = h.quantile(p);
        EXPECT_GE(q, 1e-9);
        EXPECT_LE(q, 7e6);
    }
    EXPECT_EQ(h.quantile(0.5), 1.0 * h.quantile(0.5)); // finite, not NaN
    EXPECT_FALSE(std::isnan(h.quantile(0.3)));
}

} // namespace
