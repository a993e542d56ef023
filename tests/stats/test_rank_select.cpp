// SPDX-License-Identifier: MIT
// The device's selection of order statistics (rank_select.hpp), through its host twin: every rank's value equals
// the full sort's, bit for bit, on series chosen for the bucket map's edges (one value, all equal, all +inf but a
// few, values over every binade, values crowded into one bucket, zeros beside tiny values, a metric across zero),
// whatever order the gathering takes the values in; and the plan of step 3 against counts worked out by hand.
#include "nhvk/stats/rank_select.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using nhvk::stats::kSelectBuckets;
using nhvk::stats::kSelectNone;
using nhvk::stats::kSelectSlots;
using nhvk::stats::select_plan;
using nhvk::stats::select_ranks_host;
using nhvk::stats::SelectRange;

const double inf = HUGE_VAL;

/** @brief Bits of a double: the comparison the tests make (0 and −0, say, would compare equal). */
std::uint64_t bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

/** @brief Ranks: both ends, the middle, a run of neighbours, and some at random. */
std::vector<std::uint64_t> some_ranks(std::size_t n, std::mt19937_64& rng) {
    std::vector<std::uint64_t> r{0, n - 1, n / 2};
    for (std::uint64_t k = n / 3; k < std::min<std::uint64_t>(n, n / 3 + 5); ++k) r.push_back(k);
    std::uniform_int_distribution<std::uint64_t> any(0, n - 1);
    for (int i = 0; i < 6; ++i) r.push_back(any(rng));
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    return r;
}

/** @brief Every series' ranks selected by the twin (in index order and in a shuffled order) against std::sort. */
void expect_sorts_values(const std::vector<std::vector<double>>& values, const std::string& what) {
    SCOPED_TRACE(what);
    std::mt19937_64 rng(7);
    std::vector<std::vector<std::uint64_t>> ranks;
    for (const auto& v : values) ranks.push_back(some_ranks(v.size(), rng));
    for (int shuffled = 0; shuffled < 2; ++shuffled) {
        std::vector<std::vector<double>> got;
        if (shuffled == 0) {
            select_ranks_host(values, ranks, {}, got);
        } else {
            // NOTE: one order for every series, so the series must share a size here
            std::vector<std::size_t> order(values[0].size());
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::shuffle(order.begin(), order.end(), rng);
            select_ranks_host(values, ranks, order, got);
        }
        ASSERT_EQ(got.size(), values.size());
        for (std::size_t s = 0; s < values.size(); ++s) {
            std::vector<double> sorted = values[s];
            std::sort(sorted.begin(), sorted.end());
            ASSERT_EQ(got[s].size(), ranks[s].size());
            for (std::size_t i = 0; i < ranks[s].size(); ++i)
                EXPECT_EQ(bits(got[s][i]), bits(sorted[ranks[s][i]]))
                    << "series " << s << ", rank " << ranks[s][i] << ": " << got[s][i] << " vs " << sorted[ranks[s][i]]
                    << (shuffled ? " (shuffled)" : "");
        }
    }
}

TEST(RankSelect, TheRanksOfEveryKindOfSeriesAreTheFullSortsValues) {
    std::mt19937_64 rng(2026);
    const std::size_t n = 20000;
    std::vector<std::vector<double>> values(9, std::vector<double>(n));
    std::uniform_real_distribution<double> u(0.0, 1.0), e(-1074.0, 1023.0), w(-40.0, 2.0);
    for (std::size_t j = 0; j < n; ++j) {
        values[0][j] = u(rng);                                                           // one binade and below
        values[1][j] = std::ldexp(u(rng) + 0.5, static_cast<int>(e(rng)));               // every binade, subnormals too
        values[2][j] = (j % 2 ? -1.0 : 1.0) * std::exp(w(rng));                          // across zero, 40 decades
        values[3][j] = 1.0 + 1e-15 * static_cast<double>(j % 7);                         // crowded into a few keys
        values[4][j] = 3.25;                                                             // all equal
        values[5][j] = j % 10 ? 0.0 : std::ldexp(1.0, -1000 - static_cast<int>(j % 50)); // zeros beside tiny values
        values[6][j] = j % 3 ? inf : u(rng);             // excluded members (+inf) among values
        values[7][j] = j == 17 ? DBL_MAX : u(rng);       // one outlier stretching the range
        values[8][j] = static_cast<double>(j % 5) - 2.0; // few values, many ties
    }
    expect_sorts_values(values, "20000 values");
}

TEST(RankSelect, SmallSeriesAndSeriesWithoutFiniteValues) {
    expect_sorts_values({{5.0}}, "one value");
    expect_sorts_values({{inf}}, "one +inf");
    expect_sorts_values({{inf, inf, inf, inf}}, "only +inf");
    expect_sorts_values({{2.0, inf, -DBL_MAX, DBL_MAX, 0.0}}, "the extremes");
    expect_sorts_values({{-0.5, 0.5}, {0.5, -0.5}}, "two series, two orders");
}

TEST(RankSelect, TheBucketMapCoversTheRangeAndNoMore) {
    using nhvk::stats::detail::order_key;
    const SelectRange none = SelectRange::of(nhvk::stats::kSelectNoLo, nhvk::stats::kSelectNoHi);
    EXPECT_EQ(none.finite_buckets, 0u);
    EXPECT_EQ(none.bucket(inf), kSelectBuckets);
    const SelectRange one = SelectRange::of(order_key(1.5), order_key(1.5));
    EXPECT_EQ(one.finite_buckets, 1u);
    EXPECT_EQ(one.bucket(1.5), 0u);
    // kSelectBuckets keys exactly: one key a bucket; one key more: two keys a bucket
    const std::uint64_t lo = order_key(1.0);
    const SelectRange exact = SelectRange::of(lo, lo + kSelectBuckets - 1);
    EXPECT_EQ(exact.shift, 0);
    EXPECT_EQ(exact.finite_buckets, kSelectBuckets);
    EXPECT_EQ(exact.bucket(std::nextafter(1.0, 2.0)), 1u);
    const SelectRange more = SelectRange::of(lo, lo + kSelectBuckets);
    EXPECT_EQ(more.shift, 1);
    EXPECT_EQ(more.finite_buckets, kSelectBuckets / 2 + 1);
    EXPECT_EQ(more.bucket(std::nextafter(1.0, 2.0)), 0u);
    // the whole line of finite doubles
    const SelectRange all = SelectRange::of(order_key(-DBL_MAX), order_key(DBL_MAX));
    EXPECT_LE(all.finite_buckets, kSelectBuckets);
    EXPECT_EQ(all.bucket(-DBL_MAX), 0u);
    EXPECT_EQ(all.bucket(DBL_MAX), all.finite_buckets - 1);
    EXPECT_LT(all.bucket(-1.0), all.bucket(0.0));
    EXPECT_LT(all.bucket(0.0), all.bucket(1e300));
}

TEST(RankSelect, ThePlanGathersOnlyTheRanksBuckets) {
    // counts: bucket 0 holds 3, bucket 2 holds 2, bucket 5 holds 4, +inf holds 6 (15 values)
    std::vector<std::uint32_t> count(kSelectSlots, 0u), start(kSelectSlots);
    count[0] = 3;
    count[2] = 2;
    count[5] = 4;
    count[kSelectBuckets] = 6;
    // ranks 1 and 2 in bucket 0, rank 3 opens bucket 2, rank 7 is bucket 5's third, rank 10 among the +inf
    const std::vector<std::uint64_t> ranks{1, 2, 3, 7, 10};
    std::vector<std::uint32_t> pos(ranks.size());
    const std::uint32_t total = select_plan(count.data(), ranks.data(), ranks.size(), start.data(), pos.data());
    EXPECT_EQ(total, 3u + 2u + 4u);
    EXPECT_EQ(start[0], 0u);
    EXPECT_EQ(start[2], 3u);
    EXPECT_EQ(start[5], 5u);
    for (std::uint32_t b = 0; b < kSelectSlots; ++b) {
        if (b != 0 && b != 2 && b != 5) {
            EXPECT_EQ(start[b], kSelectNone) << "bucket " << b;
        }
    }
    EXPECT_EQ(pos, (std::vector<std::uint32_t>{1, 2, 3, 7, kSelectNone}));
    // a rank alone in the last finite bucket: only that bucket
    const std::vector<std::uint64_t> last{8};
    std::uint32_t p = 0;
    EXPECT_EQ(select_plan(count.data(), last.data(), 1, start.data(), &p), 4u);
    EXPECT_EQ(start[5], 0u);
    EXPECT_EQ(start[0], kSelectNone);
    EXPECT_EQ(p, 3u);
}

TEST(RankSelect, SpreadValuesGatherAFewBucketsNotTheSeries) {
    // what makes the selection cheaper than a sort: 10^5 values spread over 20 decades, 7 quantile ranks, gather a
    // few of the 8192 buckets' values
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> w(-30.0, 15.0);
    const std::size_t n = 100000;
    std::vector<double> v(n);
    std::uint64_t lo = nhvk::stats::kSelectNoLo, hi = nhvk::stats::kSelectNoHi;
    for (double& x : v) {
        x = std::exp(w(rng));
        lo = std::min(lo, nhvk::stats::detail::order_key(x));
        hi = std::max(hi, nhvk::stats::detail::order_key(x));
    }
    const SelectRange r = SelectRange::of(lo, hi);
    std::vector<std::uint32_t> count(kSelectSlots, 0u), start(kSelectSlots);
    for (const double x : v) ++count[r.bucket(x)];
    std::vector<std::uint64_t> ranks;
    for (const double p : {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99}) ranks.push_back(static_cast<std::uint64_t>(p * n));
    std::vector<std::uint32_t> pos(ranks.size());
    const std::uint32_t total = select_plan(count.data(), ranks.data(), ranks.size(), start.data(), pos.data());
    EXPECT_GT(total, 0u);
    EXPECT_LT(total, n / 50) << "gathered " << total << " of " << n;
}

TEST(RankSelect, TheBandGivesEachGroupsOrderStatisticsAmongTheOthers) {
    // 4 groups of unequal sizes (one empty), with ties and excluded members (+inf); the band [a, b] is the row's
    // order statistics L and U around the median, and every group's ranks among the others near its median
    std::mt19937_64 rng(3);
    std::normal_distribution<double> law(0.0, 1.0);
    const std::size_t sizes[] = {700, 0, 1200, 950};
    std::vector<std::vector<double>> groups;
    std::vector<double> all;
    for (const std::size_t n : sizes) {
        std::vector<double> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = i % 9 == 0 ? inf : std::round(law(rng) * 20.0) / 20.0 + 0.0;
        groups.push_back(v);
        for (const double x : v)
            if (x != inf) all.push_back(x);
    }
    std::sort(all.begin(), all.end());
    const std::size_t N = all.size();
    std::vector<std::vector<std::uint64_t>> ranks(groups.size());
    std::vector<std::uint64_t> counts;
    std::uint64_t L = N, U = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::uint64_t n_g = static_cast<std::uint64_t>(
            std::count_if(groups[g].begin(), groups[g].end(), [](double x) { return x != inf; }));
        counts.push_back(n_g);
        const std::uint64_t k = (N - n_g - 1) / 2;
        ranks[g] = {k, k + 1};
        L = std::min(L, k);
        U = std::max(U, std::min<std::uint64_t>(N - 1, k + 1 + n_g));
    }
    std::vector<std::vector<double>> got;
    nhvk::stats::band_select_host(groups, all[L], all[U], ranks, got);
    ASSERT_EQ(got.size(), groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
        std::vector<double> others;
        for (std::size_t h = 0; h < groups.size(); ++h)
            if (h != g) others.insert(others.end(), groups[h].begin(), groups[h].end());
        std::sort(others.begin(), others.end());
        ASSERT_EQ(got[g].size(), 2u);
        for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(bits(got[g][i]), bits(others[ranks[g][i]])) << "group " << g;
    }
    // a rank whose value lies outside the band is refused, not guessed
    std::vector<std::vector<std::uint64_t>> far(groups.size());
    far[0] = {0};
    EXPECT_THROW(nhvk::stats::band_select_host(groups, all[L], all[U], far, got), std::logic_error);
    far[0] = {N - counts[0] - 1}; // the greatest of the others
    EXPECT_THROW(nhvk::stats::band_select_host(groups, all[L], all[U], far, got), std::logic_error);
}

TEST(RankSelect, RefusesRanksThatDoNotAscendBelowTheSize) {
    std::vector<std::vector<double>> out;
    EXPECT_THROW(select_ranks_host({{1.0, 2.0}}, {{2}}, {}, out), std::invalid_argument);
    EXPECT_THROW(select_ranks_host({{1.0, 2.0}}, {{1, 0}}, {}, out), std::invalid_argument);
    EXPECT_THROW(select_ranks_host({{1.0, 2.0}}, {}, {}, out), std::invalid_argument);
}

} // namespace
