// SPDX-License-Identifier: MIT
// The uncertainty of the statistics: the 95 % intervals of the mean and the quantiles (EnsembleAccumulator::finalize),
// their ranks, and the replica-group interval. Checked by coverage against the known truth of a distribution, and
// against the exact binomial law, not against the formulas they come from.
#include "stats/ensemble_stats.hpp"

#include "nhvk/stats/chunk_reduce.hpp"
#include "nhvk/stats/rank_select.hpp"
#include "stats/byte_io.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using nhvk::stats::EnsembleAccumulator;
using nhvk::stats::quantile_interval_ranks;
using nhvk::stats::quantile_levels;
using nhvk::stats::replica_interval;
using nhvk::stats::SeriesSummary;

/** P(lo < B <= hi) for B ~ Binomial(n, p), summed exactly from the pmf (log-gamma). */
double binomial_between(std::uint64_t n, double p, std::uint64_t lo, std::uint64_t hi) {
    double sum = 0.0;
    for (std::uint64_t k = lo + 1; k <= hi; ++k) {
        const double kk = static_cast<double>(k), nn = static_cast<double>(n);
        sum += std::exp(std::lgamma(nn + 1.0) - std::lgamma(kk + 1.0) - std::lgamma(nn - kk + 1.0) + kk * std::log(p) +
                        (nn - kk) * std::log1p(-p));
    }
    return sum;
}

TEST(QuantileInterval, RanksCoverTheTrueQuantileWithAtLeast95PercentByTheBinomialLaw) {
    // [x_(lo), x_(hi)] (0-based order statistics) holds the true p-quantile exactly when lo < B <= hi, B the number
    // of values at or below it; the law of B is known whatever the distribution.
    int checked = 0;
    for (const std::uint64_t n : {30ull, 100ull, 257ull, 1000ull, 4000ull, 20000ull})
        for (const double p : quantile_levels) {
            const auto ci = quantile_interval_ranks(n, p);
            if (!ci.ok) {
                // refused only where the interval would need an order statistic outside the sample
                EXPECT_LT(static_cast<double>(n) * std::min(p, 1.0 - p), 8.0) << n << " " << p;
                continue;
            }
            ++checked;
            ASSERT_LT(ci.lo, ci.hi);
            ASSERT_LT(ci.hi, n);
            const double cover = binomial_between(n, p, ci.lo, ci.hi);
            EXPECT_GE(cover, 0.945) << "n " << n << " p " << p;
            // and not the whole sample: the interval narrows as n grows
            if (n >= 1000u) EXPECT_LT(cover, 0.995) << "n " << n << " p " << p;
        }
    EXPECT_GE(checked, 30);
    EXPECT_FALSE(quantile_interval_ranks(0, 0.5).ok);
    EXPECT_FALSE(quantile_interval_ranks(5, 0.5).ok);
}

/** Coverage over many samples of a lognormal law (mean e^{1/2}, p-quantile e^{z_p}) of the mean's and the quantiles'
 *  intervals, exact (values kept) or from the histogram (no values kept). */
void expect_coverage(bool exact) {
    const double z[7] = {-2.3263478740408408, -1.6448536269514729, -0.6744897501960817, 0.0,
                         0.6744897501960817,  1.6448536269514729,  2.3263478740408408};
    const double true_mean = std::exp(0.5);
    const int samples = 400;
    const std::size_t n = 1000;
    int mean_in = 0, q_in[7] = {};
    double width50 = 0.0;
    std::mt19937_64 rng(20261124);
    std::normal_distribution<double> normal;
    std::vector<double> v(n);
    for (int k = 0; k < samples; ++k) {
        for (double& x : v) x = std::exp(normal(rng));
        EnsembleAccumulator acc(1, n, exact ? std::size_t{1} << 30 : 0u);
        acc.add_chunk(v.data(), n, n, nullptr);
        ASSERT_EQ(acc.exact(), exact);
        const SeriesSummary s = acc.finalize()[0];
        ASSERT_TRUE(std::isfinite(s.mean_lo) && s.mean_lo < s.mean && s.mean < s.mean_hi);
        EXPECT_NEAR(s.mean_se, s.std / std::sqrt(1000.0), 1e-15);
        mean_in += s.mean_lo <= true_mean && true_mean <= s.mean_hi;
        const double q[7] = {s.p01, s.p05, s.p25, s.p50, s.p75, s.p95, s.p99};
        for (int i = 0; i < 7; ++i) {
            ASSERT_TRUE(std::isfinite(s.q_lo[i]) && s.q_lo[i] <= q[i] && q[i] <= s.q_hi[i]) << "level " << i;
            q_in[i] += s.q_lo[i] <= std::exp(z[i]) && std::exp(z[i]) <= s.q_hi[i];
        }
        width50 += (s.q_hi[3] - s.q_lo[3]) / samples;
        EXPECT_NEAR(s.q_se[3], (s.q_hi[3] - s.q_lo[3]) / 3.919927969080108, 1e-12);
    }
    // binomial sd of a 95 % coverage over 400 samples: 1.1 %; the quantile intervals are conservative (≥ 95 %
    // by construction, more at the tails where the ranks are few)
    const double mean_cover = static_cast<double>(mean_in) / samples;
    EXPECT_GT(mean_cover, 0.92) << "mean";
    EXPECT_LT(mean_cover, 0.98) << "mean";
    for (int i = 0; i < 7; ++i) {
        const double c = static_cast<double>(q_in[i]) / samples;
        EXPECT_GT(c, 0.92) << "quantile level " << quantile_levels[i];
        EXPECT_LT(c, 0.999) << "quantile level " << quantile_levels[i];
    }
    // the median's interval is about ±1.96·sqrt(p(1−p)/n)/f(median) wide: 2·1.96·0.5/(sqrt(1000)·0.3989) = 0.155
    EXPECT_NEAR(width50, 0.155, 0.02);
}

TEST(IntervalCoverage, ExactMeanAndQuantileIntervalsCoverTheTruth) { expect_coverage(true); }
TEST(IntervalCoverage, HistogramMeanAndQuantileIntervalsCoverTheTruth) { expect_coverage(false); }

TEST(IntervalCoverage, TooFewValuesGiveNoInterval) {
    const double one = 2.0;
    EnsembleAccumulator acc(1, 1, std::size_t{1} << 20);
    acc.add_chunk(&one, 1, 1, nullptr);
    const SeriesSummary s = acc.finalize()[0];
    EXPECT_EQ(s.mean, 2.0);
    EXPECT_TRUE(std::isnan(s.std)) << "the sample standard deviation of one value is undefined, not 0";
    EXPECT_TRUE(std::isnan(s.mean_se) && std::isnan(s.mean_lo) && std::isnan(s.q_lo[3]) && std::isnan(s.q_hi[6]));
    EXPECT_TRUE(std::isnan(s.std_lo)) << "the std's interval comes from replica groups, not from one series";
}

TEST(ReplicaInterval, BatchMeansOfTheGroupValues) {
    // groups 1, 2, 3, 4: sd 1.2909944, se = sd/2, t(0.975, 3) = 3.1824463
    const auto r = replica_interval(2.5, {1.0, 2.0, 3.0, 4.0});
    EXPECT_EQ(r.groups, 4u);
    EXPECT_NEAR(r.se, 0.6454972243679028, 1e-15);
    EXPECT_NEAR(r.lo, 2.5 - 3.182446305284263 * 0.6454972243679028, 1e-9);
    EXPECT_NEAR(r.hi, 2.5 + 3.182446305284263 * 0.6454972243679028, 1e-9);
    // a group without a finite value (no fit) is left out and counted so
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto s = replica_interval(2.5, {1.0, nan, 2.0, 3.0, 4.0});
    EXPECT_EQ(s.groups, 4u);
    EXPECT_EQ(s.se, r.se);
    EXPECT_TRUE(std::isnan(replica_interval(1.0, {1.0, nan}).se));
    EXPECT_TRUE(std::isnan(replica_interval(nan, {1.0, 2.0}).lo));
}

/** The replica groups' own coverage: R groups of a sample of n, the statistic the median; over many samples the
 *  interval from the groups covers the true median about 95 % of the time. */
TEST(ReplicaInterval, GroupIntervalOfAMedianCoversTheTruth) {
    const int samples = 400, R = 10;
    const std::size_t n = 2000;
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    int in = 0;
    std::vector<double> v(n);
    for (int k = 0; k < samples; ++k) {
        for (double& x : v) x = std::exp(normal(rng));
        // the pooled and each group's median (type 7, numpy's), the groups by index mod R as the run makes them
        std::vector<std::vector<double>> groups(R);
        for (std::size_t j = 0; j < n; ++j) groups[j % R].push_back(v[j]);
        std::vector<double> medians(R);
        for (int g = 0; g < R; ++g) {
            std::sort(groups[g].begin(), groups[g].end());
            medians[g] = nhvk::stats::quantile_type7(groups[g].data(), groups[g].size(), 0.5);
        }
        std::sort(v.begin(), v.end());
        const auto r = replica_interval(nhvk::stats::quantile_type7(v.data(), n, 0.5), medians);
        in += r.lo <= 1.0 && 1.0 <= r.hi;
    }
    const double c = static_cast<double>(in) / samples;
    EXPECT_GT(c, 0.91);
    EXPECT_LT(c, 0.985);
}

// The median of a union of series (a leave-one-group-out median): the type-7 median of the values put together,
// exactly in exact mode, within the histogram's resolution otherwise.
TEST(ReplicaInterval, MedianOfAUnionOfSeries) {
    const std::size_t n = 1001;
    std::mt19937_64 rng(3);
    std::lognormal_distribution<double> law;
    std::vector<double> v(3 * n);
    for (double& x : v) x = law(rng);
    for (const bool exact : {true, false}) {
        EnsembleAccumulator acc(3, n, exact ? std::size_t{1} << 30 : 0u);
        acc.add_chunk(v.data(), n, n, nullptr); // series s holds v[s·n, (s + 1)·n)
        std::vector<double> u(v.begin(), v.begin() + n);
        u.insert(u.end(), v.begin() + 2 * n, v.end());
        std::sort(u.begin(), u.end());
        const double want = nhvk::stats::quantile_type7(u.data(), u.size(), 0.5);
        const double got = acc.median_of({0, 2});
        if (exact) EXPECT_EQ(got, want);
        else EXPECT_NEAR(got, want, acc.histogram_relative_resolution() * want);
        EXPECT_TRUE(std::isnan(EnsembleAccumulator(1, 1, 1024).median_of({0})));
    }
}

// The delete-one-group medians of replica groups, all at once: out[g] is the type-7 median of the sorted union of every
// group but g, bit for bit, with groups of unequal sizes (an empty one, one of one value), ties, signed values, and
// unions large enough for the bucketed selection; in histogram mode the same as median_of of the others.
TEST(ReplicaInterval, LeaveOneOutMediansEqualTheMediansOfTheOthers) {
    std::mt19937_64 rng(11);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<std::vector<std::size_t>> layouts = {
        {0, 1, 7, 5000, 10000}, {3000, 3001, 2999, 3000}, {1, 1}, {4, 0, 0}, {20000}, {9, 9, 9, 9, 9, 9, 9, 9, 9, 9}};
    for (const auto& sizes : layouts) {
        for (const bool ties : {false, true}) {
            const std::size_t R = sizes.size();
            const std::size_t chunk = *std::max_element(sizes.begin(), sizes.end());
            // series g holds its first sizes[g] draws; the rest of its row is NaN (not counted)
            std::vector<double> v(R * chunk, nan);
            std::vector<std::vector<double>> mine(R);
            std::normal_distribution<double> law(0.3, 1.0);
            for (std::size_t g = 0; g < R; ++g)
                for (std::size_t j = 0; j < sizes[g]; ++j) {
                    double x = law(rng);
                    if (ties) x = std::round(x * 4.0) / 4.0; // a few distinct values, zeros among them
                    v[g * chunk + j] = x;
                    mine[g].push_back(x + 0.0);
                }
            std::vector<std::size_t> groups(R);
            for (std::size_t g = 0; g < R; ++g) groups[g] = g;
            EnsembleAccumulator exact(R, chunk, std::size_t{1} << 30), hist(R, chunk, 0u);
            exact.add_chunk(v.data(), chunk, chunk, nullptr);
            hist.add_chunk(v.data(), chunk, chunk, nullptr);
            ASSERT_TRUE(exact.exact());
            ASSERT_FALSE(hist.exact());
            const std::vector<double> got = exact.leave_one_out_medians(groups);
            const std::vector<double> got_hist = hist.leave_one_out_medians(groups);
            ASSERT_EQ(got.size(), R);
            ASSERT_EQ(got_hist.size(), R);
            for (std::size_t g = 0; g < R; ++g) {
                std::vector<double> u;
                std::vector<std::size_t> others;
                for (std::size_t h = 0; h < R; ++h)
                    if (h != g) {
                        u.insert(u.end(), mine[h].begin(), mine[h].end());
                        others.push_back(h);
                    }
                std::sort(u.begin(), u.end());
                const double want = nhvk::stats::quantile_type7(u.data(), u.size(), 0.5);
                SCOPED_TRACE("R " + std::to_string(R) + ", group " + std::to_string(g) + (ties ? ", ties" : ""));
                if (u.empty()) {
                    EXPECT_TRUE(std::isnan(got[g]));
                } else {
                    EXPECT_EQ(got[g], want);
                }
                const double m = hist.median_of(others);
                if (std::isnan(m)) EXPECT_TRUE(std::isnan(got_hist[g]));
                else EXPECT_EQ(got_hist[g], m);
            }
        }
    }
}

} // namespace

namespace {

// The leave-one-out medians where a backend keeps the values (the CUDA path): the rows' order statistics and the
// groups' medians among the others selected through callbacks over values this test keeps (the latter by the CUDA
// backend's host twin, band_select_host), against the host's own selection of the same
// values, bit for bit: groups of unequal sizes (an empty one), ties and zeros of both signs, several rows at once,
// and a band that crosses group boundaries. Only the rows are asked for order statistics, each for one or two ranks.
TEST(ReplicaInterval, LeaveOneOutMediansFromValuesKeptElsewhereEqualTheHosts) {
    std::mt19937_64 rng(5);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<std::vector<std::size_t>> sets = {{3000, 0, 2999, 3001, 1}, {7, 7, 7}, {9000, 1}, {2, 2}};
    // series layout: for each set k, its groups, then its row (the union of the groups); member j of the chunk
    // belongs to at most one group of each set
    std::vector<std::vector<std::size_t>> groups;
    std::vector<std::size_t> rows;
    std::size_t n_series = 0, chunk = 0;
    for (const auto& sizes : sets) {
        std::vector<std::size_t> g(sizes.size());
        for (std::size_t h = 0; h < sizes.size(); ++h) g[h] = n_series++;
        groups.push_back(g);
        rows.push_back(n_series++);
        std::size_t total = 0;
        for (const std::size_t n : sizes) total += n;
        chunk = std::max(chunk, total);
    }
    for (const bool ties : {false, true}) {
        SCOPED_TRACE(ties ? "ties" : "distinct");
        std::vector<double> v(n_series * chunk, nan);
        std::normal_distribution<double> law(-0.1, 2.0);
        for (std::size_t k = 0; k < sets.size(); ++k) {
            std::size_t j = 0;
            for (std::size_t h = 0; h < sets[k].size(); ++h)
                for (std::size_t i = 0; i < sets[k][h]; ++i, ++j) {
                    double x = law(rng);
                    if (ties) x = std::round(x * 2.0) / 2.0; // few distinct values, ±0 among them
                    if (ties && i % 5 == 0) x = -0.0;
                    v[groups[k][h] * chunk + j] = x;
                    v[rows[k] * chunk + j] = x;
                }
        }
        EnsembleAccumulator host(n_series, chunk, std::size_t{1} << 30);
        host.add_chunk(v.data(), chunk, chunk, nullptr);
        ASSERT_TRUE(host.exact());
        std::vector<nhvk::stats::SeriesPartial> partials;
        std::vector<std::uint64_t> counts(n_series * host.row_words());
        for (std::size_t s = 0; s < n_series; ++s) {
            partials.push_back(host.partial(s));
            std::copy(host.histogram(s), host.histogram(s) + host.row_words(), counts.begin() + s * host.row_words());
        }
        EnsembleAccumulator elsewhere(n_series, chunk, std::size_t{1} << 30);
        elsewhere.add_partials_values_elsewhere(partials.data(), counts.data());
        // the values "on the backend": as the CUDA backend keeps them, finite ones with -0 folded to +0
        const auto kept = [&](std::size_t s) {
            std::vector<double> out;
            for (std::size_t j = 0; j < chunk; ++j)
                if (!std::isnan(v[s * chunk + j])) out.push_back(v[s * chunk + j] == 0.0 ? 0.0 : v[s * chunk + j]);
            return out;
        };
        int selections = 0, bands = 0;
        const auto select = [&](const std::vector<std::vector<std::uint64_t>>& ranks,
                                std::vector<std::vector<double>>& out) {
            ++selections;
            ASSERT_EQ(ranks.size(), n_series);
            out.assign(n_series, {});
            for (std::size_t s = 0; s < n_series; ++s) {
                if (ranks[s].empty()) continue;
                EXPECT_NE(std::find(rows.begin(), rows.end(), s), rows.end()) << "series " << s << " is no row";
                EXPECT_LE(ranks[s].size(), 2u);
                std::vector<double> x = kept(s);
                std::sort(x.begin(), x.end());
                for (const std::uint64_t r : ranks[s]) out[s].push_back(x[r]);
            }
        };
        // the groups' medians among the others as the CUDA backend selects them, through its host twin
        const auto band = [&](const std::vector<std::size_t>& g, double a, double b,
                              const std::vector<std::vector<std::uint64_t>>& ranks,
                              std::vector<std::vector<double>>& out) {
            ++bands;
            std::vector<std::vector<double>> values;
            for (const std::size_t s : g) values.push_back(kept(s));
            nhvk::stats::band_select_host(values, a, b, ranks, out);
        };
        const auto got = elsewhere.leave_one_out_medians(groups, rows, select, band);
        EXPECT_EQ(selections, 1);
        ASSERT_EQ(got.size(), sets.size());
        for (std::size_t k = 0; k < sets.size(); ++k) {
            const std::vector<double> want = host.leave_one_out_medians(groups[k]);
            ASSERT_EQ(got[k].size(), want.size());
            for (std::size_t g = 0; g < want.size(); ++g) {
                SCOPED_TRACE("set " + std::to_string(k) + ", group " + std::to_string(g));
                if (std::isnan(want[g])) EXPECT_TRUE(std::isnan(got[k][g]));
                else EXPECT_EQ(got[k][g], want[g]);
            }
        }
        EXPECT_GT(bands, 0);
        // the host's own values through the same call: no callback is needed
        const auto here = host.leave_one_out_medians(groups, rows, {}, {});
        for (std::size_t k = 0; k < sets.size(); ++k)
            for (std::size_t g = 0; g < here[k].size(); ++g)
                EXPECT_TRUE((std::isnan(here[k][g]) && std::isnan(got[k][g])) || here[k][g] == got[k][g]);
        // a row that is not the union of its groups is refused
        std::vector<std::size_t> wrong = rows;
        wrong[0] = rows[1];
        EXPECT_THROW(elsewhere.leave_one_out_medians(groups, wrong, select, band), std::logic_error);
    }
}

} // namespace

namespace {

// finalize() selects each replicated row's band of delete-one-group medians with the row's quantiles, and
// leave_one_out_medians() of that row's groups then reads it: the medians equal, bit for bit, those of an accumulator
// of the same values that was never finalized (which selects its own band); where the values are kept elsewhere, no
// second selection is asked for. A band stops being read once it is stale: more values after finalize(), or another
// state of the same counts loaded in their place.
TEST(ReplicaInterval, LeaveOneOutMediansReadTheBandFinalizeSelected) {
    using nhvk::stats::ChunkView;
    using nhvk::stats::ReplicaShape;
    const std::size_t base = 3, rows = 2, R = 4, n_series = base + R * rows, n = 20000;
    const std::size_t budget = std::size_t{1} << 30;
    for (const bool ties : {false, true}) {
        SCOPED_TRACE(ties ? "ties" : "distinct");
        std::mt19937_64 rng(ties ? 8 : 9);
        std::normal_distribution<double> law(0.3, 1.5);
        // members of the second half shifted by `later`: a band selected for the first half does not hold the
        // medians of both halves (a stale band read would fail or differ; a wide enough one gives the same medians)
        const auto draw = [&](std::vector<double>& v, double shift, double later) {
            v.resize(base * n);
            for (std::size_t i = 0; i < v.size(); ++i) {
                const double x = law(rng) + shift + (i % n >= n / 2 ? later : 0.0);
                v[i] = ties ? std::round(x * 4.0) / 4.0 : x;
            }
        };
        std::vector<double> v, w; // the rows of members 0 … n − 1 (series-major); w: other values of the same counts
        draw(v, 0.0, 6.0);
        draw(w, -9.0, 0.0);
        // members [first, end) of `rows_of` in chunks of 3000, as a backend's view describes them
        const auto feed = [&](EnsembleAccumulator& acc, const std::vector<double>& rows_of, std::size_t first,
                              std::size_t end) {
            for (std::size_t j0 = first; j0 < end; j0 += 3000) {
                const std::size_t len = std::min<std::size_t>(3000, end - j0);
                std::vector<double> buf(base * len);
                for (std::size_t s = 0; s < base; ++s)
                    std::copy_n(rows_of.begin() + static_cast<std::ptrdiff_t>(s * n + j0), len,
                                buf.begin() + static_cast<std::ptrdiff_t>(s * len));
                ChunkView in{buf.data(), len, len, nullptr, n_series};
                in.base_series = base;
                in.replicated = rows;
                in.replicas = R;
                in.first_member = j0;
                acc.add_chunk(in);
            }
        };
        std::vector<std::vector<std::size_t>> groups(rows);
        std::vector<std::size_t> row_of(rows);
        for (std::size_t s0 = 0; s0 < rows; ++s0) {
            row_of[s0] = s0;
            for (std::size_t g = 0; g < R; ++g) groups[s0].push_back(base + g * rows + s0);
        }
        const auto expect_same = [&](const EnsembleAccumulator& got, const EnsembleAccumulator& want,
                                     const std::string& what) {
            for (std::size_t s0 = 0; s0 < rows; ++s0) {
                const std::vector<double> a = got.leave_one_out_medians(groups[s0]);
                const std::vector<double> b = want.leave_one_out_medians(groups[s0]);
                ASSERT_EQ(a.size(), R);
                for (std::size_t g = 0; g < R; ++g) {
                    ASSERT_FALSE(std::isnan(b[g]));
                    EXPECT_EQ(a[g], b[g]) << what << ", row " << s0 << ", without group " << g;
                }
            }
        };
        EnsembleAccumulator acc(n_series, n, budget, {}, ReplicaShape{base, R});
        EnsembleAccumulator fresh(n_series, n, budget, {}, ReplicaShape{base, R});
        feed(acc, v, 0, n / 2);
        feed(fresh, v, 0, n / 2);
        ASSERT_TRUE(acc.exact());
        acc.finalize();
        expect_same(acc, fresh, "after finalize()");
        // more values: the band of the first half is stale
        feed(acc, v, n / 2, n);
        feed(fresh, v, n / 2, n);
        expect_same(acc, fresh, "more values after finalize()");
        acc.finalize();
        expect_same(acc, fresh, "finalized again");
        // another state of the same counts in place of this one
        EnsembleAccumulator other(n_series, n, budget, {}, ReplicaShape{base, R});
        feed(other, w, 0, n);
        std::string state;
        other.save(state);
        nhvk::bytes::Reader reader(state, "state");
        acc.load(reader);
        expect_same(acc, other, "another state loaded");

        // values kept elsewhere (a backend), each series' own, as finalize() and the jackknife ask for them
        const auto kept = [&](std::size_t s) {
            std::vector<double> x;
            const std::size_t s0 = s < base ? s : (s - base) % rows, g = s < base ? R : (s - base) / rows;
            for (std::size_t j = 0; j < n; ++j)
                if (g == R || j % R == g) x.push_back(v[s0 * n + j] + 0.0);
            return x;
        };
        std::vector<nhvk::stats::SeriesPartial> partials;
        std::vector<std::uint64_t> counts(n_series * fresh.row_words());
        for (std::size_t s = 0; s < n_series; ++s) {
            partials.push_back(fresh.partial(s));
            std::copy(fresh.histogram(s), fresh.histogram(s) + fresh.row_words(),
                      counts.begin() + static_cast<std::ptrdiff_t>(s * fresh.row_words()));
        }
        EnsembleAccumulator elsewhere(n_series, n, budget, {}, ReplicaShape{base, R});
        elsewhere.add_partials_values_elsewhere(partials.data(), counts.data());
        int selections = 0;
        const auto select = [&](const std::vector<std::vector<std::uint64_t>>& ranks,
                                std::vector<std::vector<double>>& out) {
            ++selections;
            out.assign(n_series, {});
            for (std::size_t s = 0; s < n_series; ++s) {
                if (ranks[s].empty()) continue;
                std::vector<double> x = kept(s);
                std::sort(x.begin(), x.end());
                for (const std::uint64_t r : ranks[s]) out[s].push_back(x[r]);
            }
        };
        const auto band = [&](const std::vector<std::size_t>& g, double a, double b,
                              const std::vector<std::vector<std::uint64_t>>& ranks,
                              std::vector<std::vector<double>>& out) {
            std::vector<std::vector<double>> values;
            for (const std::size_t s : g) values.push_back(kept(s));
            nhvk::stats::band_select_host(values, a, b, ranks, out);
        };
        const std::vector<SeriesSummary> summaries = elsewhere.finalize(select);
        EXPECT_EQ(selections, 1);
        for (std::size_t s = 0; s < n_series; ++s) EXPECT_EQ(summaries[s].p50, fresh.finalize()[s].p50) << s;
        const auto got = elsewhere.leave_one_out_medians(groups, row_of, select, band);
        EXPECT_EQ(selections, 1) << "the jackknife selected again what finalize() had selected";
        for (std::size_t s0 = 0; s0 < rows; ++s0) {
            const std::vector<double> want = fresh.leave_one_out_medians(groups[s0]);
            for (std::size_t g = 0; g < R; ++g) EXPECT_EQ(got[s0][g], want[g]) << "row " << s0 << ", group " << g;
        }
    }
}

} // namespace
