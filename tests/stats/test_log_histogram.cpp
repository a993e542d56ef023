// SPDX-License-Identifier: MIT
#include "nhvk/stats/log_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using namespace nhvk::stats; // LogHistogram, LogHistogramSpec, LogBinner and the row words k*Word

// type 7 on a copy, written independently of the library, with the resolution bound of a histogram estimate: the
// estimates of x[k] and x[k+1] lie in their bins, so q is off by at most r·((1−f)|x[k]| + f|x[k+1]|)
struct Exact {
    double q, bound;
};
Exact type7(std::vector<double> v, double p, double r) {
    std::sort(v.begin(), v.end());
    const double h = static_cast<double>(v.size() - 1) * p, f = h - std::floor(h);
    const auto k = static_cast<std::size_t>(std::floor(h));
    if (k + 1 >= v.size()) {
        return {v.back(), r * std::fabs(v.back())};
    }
    return {v[k] + f * (v[k + 1] - v[k]), r * ((1.0 - f) * std::fabs(v[k]) + f * std::fabs(v[k + 1]))};
}

// the bin of a magnitude by binary search on the edges (bin g: [e_g, e_{g+1}); subnormals in bin 0)
std::uint32_t search_bin(const std::vector<double>& e, double m) {
    if (m < e[0]) return 0u;
    return static_cast<std::uint32_t>(std::upper_bound(e.begin(), e.end(), m) - e.begin() - 1);
}

const double kLevels[] = {0.0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0};

// every quantile of h against the exact type-7 quantile of v, within the stated resolution
void expect_within_resolution(const LogHistogram& h, const std::vector<double>& v, const char* what) {
    for (const double p : kLevels) {
        const Exact e = type7(v, p, h.relative_resolution());
        EXPECT_LE(std::fabs(h.quantile(p) - e.q), e.bound * (1.0 + 1e-9) + 1e-300)
            << what << " p " << p << ": " << h.quantile(p) << " vs exact " << e.q;
    }
}

TEST(LogHistogramSpec, DefaultsAndResolution) {
    const LogHistogramSpec spec;
    EXPECT_EQ(spec.bins_per_decade, 50);
    EXPECT_EQ(spec.window, 2048u);
    EXPECT_NEAR(spec.relative_resolution(), 0.0471285480508996, 1e-15);
    EXPECT_DOUBLE_EQ(spec.window_decades(), 2048.0 / 50.0);
    // bins cut [DBL_MIN, DBL_MAX] at 10^(j/50): one per j with DBL_MIN < 10^(j/50) <= DBL_MAX, plus the first
    const long long j0 = static_cast<long long>(std::ceil(50.0 * std::log10(DBL_MIN)));
    const long long j1 = static_cast<long long>(std::floor(50.0 * std::log10(DBL_MAX)));
    EXPECT_EQ(spec.n_log_bins(), static_cast<std::uint32_t>(j1 - j0 + 2));
    EXPECT_EQ(spec.row_words(), 5u + 2u * 2048u);
    const std::vector<double> e = spec.edges();
    ASSERT_EQ(e.size(), spec.n_log_bins() + 1u);
    EXPECT_EQ(e.front(), DBL_MIN);
    EXPECT_EQ(e.back(), std::numeric_limits<double>::infinity());
    EXPECT_LE(e[e.size() - 2], DBL_MAX);
    for (std::size_t k = 1; k + 1 < e.size(); ++k) {
        ASSERT_LT(e[k - 1], e[k]);
        ASSERT_NEAR(std::log10(e[k]) * 50.0, std::round(std::log10(e[k]) * 50.0), 1e-9) << k;
    }
    EXPECT_TRUE(std::binary_search(e.begin(), e.end(), 1.0));
    EXPECT_TRUE(std::binary_search(e.begin(), e.end(), 1e10));
}

TEST(LogHistogramSpec, RejectsInvalid) {
    EXPECT_THROW((LogHistogramSpec{0, 2048}.row_words()), std::invalid_argument);
    EXPECT_THROW((LogHistogramSpec{50, 3}.row_words()), std::invalid_argument);
    EXPECT_THROW((LogHistogramSpec{50, 1}.row_words()), std::invalid_argument);
    EXPECT_THROW((LogHistogramSpec{50, 1u << 21}.row_words()), std::invalid_argument);
    EXPECT_THROW((LogHistogramSpec{20000, 2048}.n_log_bins()), std::invalid_argument);
    EXPECT_EQ((LogHistogramSpec{7, 64}.row_words()), 133u);
}

TEST(LogBinner, TableBinsMatchBinarySearchOverEveryMagnitude) {
    std::mt19937_64 rng(5);
    for (const LogHistogramSpec spec : {LogHistogramSpec{50, 2048}, LogHistogramSpec{7, 64}, LogHistogramSpec{1, 2},
                                        LogHistogramSpec{1000, 4096}, LogHistogramSpec{3, 8}}) {
        const LogBinTable t = spec.table();
        const LogBinner b = LogBinner::make(t);
        const std::vector<double>& e = t.edges;
        // edges, their neighbours, the ends of the double range, subnormals
        for (std::size_t k = 0; k + 1 < e.size(); ++k) {
            ASSERT_EQ(b.bin(e[k]), k);
            ASSERT_EQ(b.bin(std::nextafter(e[k + 1], 0.0)), k) << spec.bins_per_decade;
        }
        EXPECT_EQ(b.bin(DBL_MAX), e.size() - 2);
        EXPECT_EQ(b.bin(DBL_MIN), 0u);
        EXPECT_EQ(b.bin(std::numeric_limits<double>::denorm_min()), 0u);
        EXPECT_EQ(b.bin(DBL_MIN / 3.0), 0u);
        // random doubles, uniform in exponent and significand
        std::uniform_int_distribution<std::uint64_t> bits(0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull);
        for (int i = 0; i < 200000; ++i) {
            const double x = nhvk::stats::detail::bits_double(bits(rng));
            ASSERT_EQ(b.bin(x), search_bin(e, x)) << x;
        }
    }
}

TEST(LogHistogram, EmptyAndSingle) {
    LogHistogram h;
    EXPECT_TRUE(std::isnan(h.quantile(0.5)));
    EXPECT_TRUE(std::isnan(h.min()));
    h.add(std::numeric_limits<double>::infinity());
    h.add(std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(h.nonfinite(), 2u);
    EXPECT_EQ(h.total(), 0u);
    for (const double x : {3.7, -2.5e250, 0.0}) {
        LogHistogram g;
        g.add(x);
        for (const double p : {0.0, 0.01, 0.5, 0.99, 1.0}) {
            EXPECT_EQ(g.quantile(p), x);
        }
    }
}

TEST(LogHistogram, EndpointsAreExactMinMax) {
    LogHistogram h;
    for (const double x : {-1.0, 100.0}) {
        h.add(x);
    }
    EXPECT_EQ(h.quantile(0.0), -1.0);
    EXPECT_EQ(h.quantile(1.0), 100.0);
    EXPECT_EQ(h.quantile(0.5), 49.5); // exact: both order statistics are min and max
}

// Quantiles of every kind of data against exact type-7 quantiles: positive over 38 decades, values far above 1e10,
// tiny values, negative only, signed across zero, with exact zeros; at three resolutions.
TEST(LogHistogram, QuantilesWithinResolutionOfExactForEveryKindOfData) {
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    struct Kind {
        const char* name;
        double lo_exp, hi_exp; // |x| = 10^U(lo_exp, hi_exp)
        double negative;       // share of negative values
        double zeros;          // share of exact zeros (half of them −0)
    };
    const Kind kinds[] = {
        {"positive", -25.0, 8.0, 0.0, 0.0},         {"above 1e10", 150.0, 200.0, 0.0, 0.0},
        {"near DBL_MAX", 290.0, 308.0, 0.0, 0.0},   {"tiny", -305.0, -290.0, 0.0, 0.0},
        {"negative", -12.0, 3.0, 1.0, 0.0},         {"signed", -6.0, 2.0, 0.5, 0.0},
        {"signed with zeros", -6.0, 2.0, 0.3, 0.2}, {"mostly zeros", -3.0, 3.0, 0.5, 0.9},
        {"signed, huge", 180.0, 200.0, 0.45, 0.05},
    };
    for (const int bpd : {50, 10, 200}) {
        for (const Kind& kind : kinds) {
            LogHistogram h(LogHistogramSpec{bpd, 16384}); // windows of 82 decades and more: nothing below
            std::vector<double> v;
            for (int i = 0; i < 20001; ++i) {
                double x = std::pow(10.0, kind.lo_exp + (kind.hi_exp - kind.lo_exp) * u(rng));
                x = u(rng) < kind.negative ? -x : x;
                const double z = u(rng);
                x = z < kind.zeros / 2 ? 0.0 : (z < kind.zeros ? -0.0 : x);
                v.push_back(x == 0.0 ? 0.0 : x);
                h.add(x);
            }
            EXPECT_EQ(h.below(), 0u) << kind.name;
            expect_within_resolution(h, v, kind.name);
        }
    }
}

TEST(LogHistogram, ZeroCountMixesLinearly) {
    LogHistogram h;
    for (int i = 0; i < 10; ++i) {
        h.add(i < 5 ? 0.0 : -0.0);
    }
    h.add(2.0);
    EXPECT_EQ(h.row()[kZeroWord], 10u);
    EXPECT_EQ(h.min(), 0.0);
    EXPECT_FALSE(std::signbit(h.min()));
    EXPECT_EQ(h.quantile(0.5), 0.0);
    EXPECT_EQ(h.quantile(0.95), 1.0); // h = 9.5: 0 + 0.5·(2 − 0)
}

// Data over 100 decades, more than the window: values more than K bins below the largest magnitude of their sign
// count in `below` (checked against a binary search on the edges), quantiles among the rest keep the resolution,
// and quantiles among the `below` values stay between 0 and the window's lowest edge (no resolution promised).
TEST(LogHistogram, WindowKeepsTheTopBinsAndCountsTheRestBelow) {
    const LogHistogramSpec spec{10, 256}; // 25.6 decades per store
    std::mt19937_64 rng(29);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    LogHistogram h(spec);
    std::vector<double> v;
    for (int i = 0; i < 30000; ++i) {
        double x = std::pow(10.0, -50.0 + 100.0 * u(rng));
        x = u(rng) < 0.3 ? -x : x;
        v.push_back(x);
        h.add(x);
    }
    const std::vector<double>& e = h.edges();
    long long top[2] = {-1, -1};
    for (const double x : v) {
        long long& t = top[x < 0.0];
        t = std::max<long long>(t, search_bin(e, std::fabs(x)));
    }
    std::uint64_t below = 0;
    for (const double x : v) {
        below += search_bin(e, std::fabs(x)) + static_cast<long long>(spec.window) <= top[x < 0.0] ? 1u : 0u;
    }
    EXPECT_GT(below, 10000u);
    EXPECT_EQ(h.below(), below);
    const double lowest_pos = e[static_cast<std::size_t>(top[0] - spec.window + 1)];
    const double lowest_neg = e[static_cast<std::size_t>(top[1] - spec.window + 1)];
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (const double p : {0.0, 0.005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0}) {
        const Exact ex = type7(v, p, h.relative_resolution());
        const auto k = static_cast<std::size_t>(std::floor(static_cast<double>(v.size() - 1) * p));
        const double a = sorted[k], b = sorted[std::min(k + 1, v.size() - 1)];
        const auto resolved = [&](double x) { return x >= lowest_pos || x <= -lowest_neg; };
        const double q = h.quantile(p);
        if (resolved(a) && resolved(b)) {
            EXPECT_LE(std::fabs(q - ex.q), ex.bound * (1.0 + 1e-9)) << "p " << p;
        } else if (b > 0.0 && b < lowest_pos) { // both in the positive `below`
            EXPECT_GT(q, 0.0) << "p " << p;
            EXPECT_LE(q, lowest_pos) << "p " << p;
        } else if (a < 0.0 && a > -lowest_neg) { // both in the negative `below`
            EXPECT_GE(q, -lowest_neg) << "p " << p;
            EXPECT_LT(q, 0.0) << "p " << p;
        }
        EXPECT_GE(q, h.min());
        EXPECT_LE(q, h.max());
    }
}

// The state after any chunking and merge order equals the state defined by the multiset of values alone: each value
// in its bin when that is at least top_final − K + 1 (per sign), else in `below`. Built here from a binary search on
// the edges, independently of LogBinner's add and merge.
TEST(LogHistogram, MergesAreExactAndOrderIndependent) {
    const LogHistogramSpec spec{10, 64}; // 6.4 decades per store, so windows move during the adds and the merges
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> v;
    for (int i = 0; i < 6000; ++i) {
        double x = std::pow(10.0, -20.0 + 40.0 * u(rng) * u(rng));
        x = u(rng) < 0.4 ? -x : x;
        x = u(rng) < 0.05 ? 0.0 : x;
        v.push_back(x);
    }
    LogHistogram ref(spec);
    const std::vector<double>& e = ref.edges();
    std::vector<std::uint64_t> expected(spec.row_words(), 0u);
    long long top[2] = {-1, -1};
    for (const double x : v) {
        if (x != 0.0) top[x < 0.0] = std::max<long long>(top[x < 0.0], search_bin(e, std::fabs(x)));
    }
    for (const double x : v) {
        if (x == 0.0) {
            ++expected[kZeroWord];
            continue;
        }
        const int s = x < 0.0;
        const long long g = search_bin(e, std::fabs(x));
        if (g >= top[s] - static_cast<long long>(spec.window) + 1) {
            ++expected[kFirstCount + s * spec.window + static_cast<std::size_t>(g) % spec.window];
        } else {
            ++expected[kStoreWords + 2 * s + 1];
        }
    }
    for (int s = 0; s < 2; ++s) expected[kStoreWords + 2 * s] = static_cast<std::uint64_t>(top[s] + 1);

    for (int trial = 0; trial < 30; ++trial) {
        // a random permutation cut into random chunks, merged in a random order
        std::vector<double> w = v;
        std::shuffle(w.begin(), w.end(), rng);
        std::vector<LogHistogram> parts;
        const LogHistogram empty(spec); // copied: cheaper than building the tables again
        for (std::size_t j = 0; j < w.size();) {
            const std::size_t len = 1 + static_cast<std::size_t>(u(rng) * (trial % 3 == 0 ? 30 : 900));
            parts.push_back(empty);
            for (std::size_t i = j; i < std::min(w.size(), j + len); ++i) parts.back().add(w[i]);
            j += len;
        }
        while (parts.size() > 1) {
            const auto a = static_cast<std::size_t>(u(rng) * parts.size());
            auto b = static_cast<std::size_t>(u(rng) * (parts.size() - 1));
            b += b >= a ? 1 : 0;
            parts[a].merge(parts[b]);
            parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(b));
        }
        ASSERT_EQ(parts[0].row(), expected) << "trial " << trial;
        ASSERT_EQ(parts[0].total(), v.size());
        if (trial == 0) {
            for (const double x : v) ref.add(x);
            EXPECT_EQ(ref.row(), expected);
        }
        for (const double p : kLevels) ASSERT_EQ(parts[0].quantile(p), ref.quantile(p)) << "trial " << trial;
    }
    LogHistogram other(LogHistogramSpec{10, 128});
    EXPECT_THROW(ref.merge(other), std::invalid_argument);
}

} // namespace
