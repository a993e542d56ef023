// SPDX-License-Identifier: MIT
#include "stats/ensemble_stats.hpp"

#include "nhvk/stats/chunk_reduce.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using nhvk::stats::EnsembleAccumulator;
using nhvk::stats::LogHistogramSpec;
using nhvk::stats::quantile_type7;
using nhvk::stats::SeriesSummary;

constexpr std::size_t kUnlimited = std::size_t{1} << 40;

std::uint64_t bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// bitwise comparison of every field (NaN == NaN when the bits agree)
void expect_identical(const std::vector<SeriesSummary>& a, const std::vector<SeriesSummary>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t s = 0; s < a.size(); ++s) {
        const SeriesSummary& x = a[s];
        const SeriesSummary& y = b[s];
        EXPECT_EQ(x.count, y.count) << "series " << s;
        EXPECT_EQ(x.nonfinite, y.nonfinite) << "series " << s;
        EXPECT_EQ(x.outside_range, y.outside_range) << "series " << s;
        EXPECT_EQ(x.exact, y.exact) << "series " << s;
        const double xs[] = {x.mean, x.std, x.min, x.max, x.p01, x.p05, x.p25, x.p50, x.p75, x.p95, x.p99};
        const double ys[] = {y.mean, y.std, y.min, y.max, y.p01, y.p05, y.p25, y.p50, y.p75, y.p95, y.p99};
        for (int i = 0; i < 11; ++i) {
            EXPECT_EQ(bits(xs[i]), bits(ys[i])) << "series " << s << " field " << i << ": " << xs[i] << " vs " << ys[i];
        }
    }
}

// an ensemble: n_series rows of n trajectories (series-major), a validity mask, some zeros, −0, non-finite values;
// series s ≡ 1 (mod 3) are signed (about 40 % negative), series s ≡ 3 (mod 4) are scaled by 1e100
struct Ensemble {
    std::size_t n_series;
    std::size_t n;
    std::vector<double> values; // values[s*n + j]
    std::vector<std::uint8_t> valid;
};

Ensemble make_ensemble(std::size_t n_series, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Ensemble e{n_series, n, std::vector<double>(n_series * n), std::vector<std::uint8_t>(n)};
    for (auto& v : e.valid) {
        v = u(rng) < 0.85 ? 1 : 0;
    }
    for (std::size_t s = 0; s < n_series; ++s) {
        const double decades = 1.0 + 4.0 * static_cast<double>(s % 5); // narrow to wide spreads
        for (std::size_t j = 0; j < n; ++j) {
            double x = std::pow(10.0, -20.0 + static_cast<double>(s % 10) + decades * u(rng));
            x *= s % 4 == 3 ? 1e100 : 1.0;
            x = s % 3 == 1 && u(rng) < 0.4 ? -x : x;
            const double r = u(rng);
            if (r < 0.03) {
                x = 0.0;
            } else if (r < 0.04) {
                x = -0.0;
            } else if (r < 0.045) {
                x = std::numeric_limits<double>::quiet_NaN();
            } else if (r < 0.05) {
                x = std::numeric_limits<double>::infinity();
            }
            e.values[s * n + j] = x;
        }
    }
    return e;
}

// feeds trajectories [first, first+count) of the ensemble in chunks of the given sizes (cycled), copying each chunk
// into a buffer with a padded leading dimension as a backend would
void feed(EnsembleAccumulator& acc, const Ensemble& e, std::size_t first, std::size_t count,
          const std::vector<std::size_t>& chunk_sizes, std::size_t pad = 3) {
    std::size_t j0 = first;
    std::size_t c = 0;
    while (j0 < first + count) {
        const std::size_t len = std::min(chunk_sizes[c++ % chunk_sizes.size()], first + count - j0);
        const std::size_t ld = len + pad;
        std::vector<double> buf(e.n_series * ld, -12345.0);
        for (std::size_t s = 0; s < e.n_series; ++s) {
            std::copy(e.values.begin() + s * e.n + j0, e.values.begin() + s * e.n + j0 + len, buf.begin() + s * ld);
        }
        acc.add_chunk(buf.data(), len, ld, e.valid.data() + j0);
        j0 += len;
    }
}

std::vector<SeriesSummary> summarise(const Ensemble& e, std::size_t budget, const std::vector<std::size_t>& chunks) {
    EnsembleAccumulator acc(e.n_series, e.n, budget, LogHistogramSpec{});
    feed(acc, e, 0, e.n, chunks);
    return acc.finalize();
}

TEST(QuantileType7, HandComputedSets) {
    const double a[] = {1, 2, 3, 4, 5};
    EXPECT_EQ(quantile_type7(a, 5, 0.5), 3.0);
    EXPECT_EQ(quantile_type7(a, 5, 0.25), 2.0);
    EXPECT_DOUBLE_EQ(quantile_type7(a, 5, 0.01), 1.04); // h = 0.04
    EXPECT_DOUBLE_EQ(quantile_type7(a, 5, 0.99), 4.96); // h = 3.96
    EXPECT_EQ(quantile_type7(a, 5, 0.0), 1.0);
    EXPECT_EQ(quantile_type7(a, 5, 1.0), 5.0);
    const double b[] = {1, 2, 3, 4};
    EXPECT_EQ(quantile_type7(b, 4, 0.25), 1.75); // numpy.percentile([1,2,3,4], 25)
    EXPECT_EQ(quantile_type7(b, 4, 0.75), 3.25);
    const double c[] = {15, 20, 35, 40, 50};
    EXPECT_DOUBLE_EQ(quantile_type7(c, 5, 0.40), 29.0); // h = 1.6: 20 + 0.6·15
    const double d[] = {10, 20};
    EXPECT_DOUBLE_EQ(quantile_type7(d, 2, 0.05), 10.5);
    EXPECT_TRUE(std::isnan(quantile_type7(d, 0, 0.5)));
}

TEST(EnsembleAccumulator, ExactQuantilesMatchIndependentType7) {
    std::mt19937_64 rng(101);
    std::lognormal_distribution<double> ln(0.0, 3.0);
    const std::size_t n = 1237;
    std::vector<double> v(n);
    for (auto& x : v) {
        x = ln(rng);
    }
    EnsembleAccumulator acc(1, n, kUnlimited);
    ASSERT_TRUE(acc.exact());
    acc.add_chunk(v.data(), n, n, nullptr);
    const SeriesSummary r = acc.finalize()[0];
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end()); // std::sort is fine in a test
    const double ps[] = {0.01, 0.05, 0.25, 0.50, 0.75, 0.95, 0.99};
    const double got[] = {r.p01, r.p05, r.p25, r.p50, r.p75, r.p95, r.p99};
    for (int i = 0; i < 7; ++i) {
        const double h = (n - 1) * ps[i];
        const std::size_t k = static_cast<std::size_t>(h);
        const double expected = sorted[k] + (h - k) * (sorted[k + 1] - sorted[k]);
        EXPECT_EQ(got[i], expected) << ps[i];
    }
    EXPECT_EQ(r.min, sorted.front());
    EXPECT_EQ(r.max, sorted.back());
    EXPECT_EQ(r.count, n);
    EXPECT_TRUE(r.exact);
    long double m = 0;
    for (const double x : v) {
        m += x;
    }
    m /= n;
    EXPECT_NEAR(r.mean / static_cast<double>(m), 1.0, 1e-15);
    long double ss = 0;
    for (const double x : v) {
        ss += (x - m) * (x - m);
    }
    EXPECT_NEAR(r.std / std::sqrt(static_cast<double>(ss / (n - 1))), 1.0, 1e-14);
}

// Determinism tests, not validations: the same values through the same accumulator in other chunkings or thread
// counts must give the same bits; the values themselves are checked against independent references above
// (ExactQuantilesMatchIndependentType7) and below (ModesAgree…, MergeEqualsConcatenation).
TEST(EnsembleAccumulator, ChunkingDoesNotChangeBitsExactMode) {
    // the whole-ensemble chunk (9 × 4001 values) takes the OpenMP path, the small ones the sequential path
    const Ensemble e = make_ensemble(9, 4001, 1);
    const auto ref = summarise(e, kUnlimited, {4001});
    ASSERT_TRUE(ref[0].exact);
    expect_identical(ref, summarise(e, kUnlimited, {1}));
    expect_identical(ref, summarise(e, kUnlimited, {7}));
    expect_identical(ref, summarise(e, kUnlimited, {1000, 3, 17, 500}));
    expect_identical(ref, summarise(e, kUnlimited, {64}));
}

TEST(EnsembleAccumulator, ChunkingDoesNotChangeBitsHistogramMode) {
    const Ensemble e = make_ensemble(9, 4001, 2);
    const auto ref = summarise(e, 0, {4001});
    ASSERT_FALSE(ref[0].exact);
    expect_identical(ref, summarise(e, 0, {1}));
    expect_identical(ref, summarise(e, 0, {13}));
    expect_identical(ref, summarise(e, 0, {999, 5, 250}));
}

TEST(EnsembleAccumulator, ThreadCountDoesNotChangeBits) {
    // chunks of >= 2777 × 12 values take the OpenMP path
    const Ensemble e = make_ensemble(12, 9001, 3);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const auto one_exact = summarise(e, kUnlimited, {3001});
    const auto one_hist = summarise(e, 0, {3001});
    omp_set_num_threads(4);
    const auto four_exact = summarise(e, kUnlimited, {2777, 4000});
    const auto four_hist = summarise(e, 0, {2777, 4000});
    omp_set_num_threads(saved);
    expect_identical(one_exact, four_exact);
    expect_identical(one_hist, four_hist);
}

TEST(EnsembleAccumulator, ModesAgreeOnMomentsAndHistogramQuantilesAreWithinResolution) {
    const Ensemble e = make_ensemble(10, 4000, 4);
    const auto ex = summarise(e, kUnlimited, {500});
    EnsembleAccumulator hist_acc(e.n_series, e.n, 0, LogHistogramSpec{});
    feed(hist_acc, e, 0, e.n, {500});
    const double r = hist_acc.histogram_relative_resolution();
    EXPECT_NEAR(r, std::pow(10.0, 0.02) - 1.0, 1e-15);
    const auto hi = hist_acc.finalize();
    for (std::size_t s = 0; s < e.n_series; ++s) {
        EXPECT_TRUE(ex[s].exact);
        EXPECT_FALSE(hi[s].exact);
        EXPECT_EQ(ex[s].count, hi[s].count);
        EXPECT_EQ(ex[s].nonfinite, hi[s].nonfinite);
        EXPECT_GT(ex[s].nonfinite, 0u);
        EXPECT_EQ(bits(ex[s].mean), bits(hi[s].mean));
        EXPECT_EQ(bits(ex[s].std), bits(hi[s].std));
        EXPECT_EQ(bits(ex[s].min), bits(hi[s].min));
        EXPECT_EQ(bits(ex[s].max), bits(hi[s].max));
        EXPECT_FALSE(ex[s].min == 0.0 && std::signbit(ex[s].min)); // −0 folded to +0
        EXPECT_EQ(hi[s].outside_range, 0u);                        // every series spans at most 17 decades
        // the order statistics around each quantile, sorted here: the histogram's estimate of each lies in its bin,
        // so the type-7 quantile is off by at most r·((1−f)|x[k]| + f|x[k+1]|) (r·|q| unless the two straddle 0)
        std::vector<double> v;
        for (std::size_t j = 0; j < e.n; ++j) {
            const double x = e.values[s * e.n + j];
            if (e.valid[j] && std::isfinite(x)) v.push_back(x);
        }
        std::sort(v.begin(), v.end());
        ASSERT_EQ(v.size(), ex[s].count);
        const double ps[] = {0.01, 0.05, 0.25, 0.50, 0.75, 0.95, 0.99};
        const double xe[] = {ex[s].p01, ex[s].p05, ex[s].p25, ex[s].p50, ex[s].p75, ex[s].p95, ex[s].p99};
        const double xh[] = {hi[s].p01, hi[s].p05, hi[s].p25, hi[s].p50, hi[s].p75, hi[s].p95, hi[s].p99};
        for (int i = 0; i < 7; ++i) {
            const double h = static_cast<double>(v.size() - 1) * ps[i], f = h - std::floor(h);
            const auto k = static_cast<std::size_t>(h);
            const double bound = r * ((1.0 - f) * std::fabs(v[k]) + f * std::fabs(v[std::min(k + 1, v.size() - 1)]));
            EXPECT_LE(std::fabs(xh[i] - xe[i]), bound * (1.0 + 1e-9)) << "series " << s << " q " << i;
        }
    }
}

TEST(EnsembleAccumulator, SummaryAgainstDirectComputation) {
    const Ensemble e = make_ensemble(4, 1500, 5);
    const auto got = summarise(e, kUnlimited, {128});
    for (std::size_t s = 0; s < e.n_series; ++s) {
        std::vector<double> v;
        std::uint64_t nonfinite = 0;
        for (std::size_t j = 0; j < e.n; ++j) {
            if (!e.valid[j]) {
                continue;
            }
            const double x = e.values[s * e.n + j];
            if (std::isfinite(x)) {
                v.push_back(x);
            } else {
                ++nonfinite;
            }
        }
        EXPECT_EQ(got[s].count, v.size());
        EXPECT_EQ(got[s].nonfinite, nonfinite);
        std::sort(v.begin(), v.end());
        EXPECT_EQ(got[s].min, v.front());
        EXPECT_EQ(got[s].max, v.back());
        const double h = (v.size() - 1) * 0.5;
        const std::size_t k = static_cast<std::size_t>(h);
        EXPECT_EQ(got[s].p50, v[k] + (h - k) * (v[k + 1] - v[k]));
        __float128 m = 0;
        for (const double x : v) {
            m += x;
        }
        m /= v.size();
        EXPECT_NEAR(got[s].mean / static_cast<double>(m), 1.0, 2.3e-16);
    }
}

TEST(EnsembleAccumulator, MergeEqualsConcatenation) {
    const Ensemble e = make_ensemble(6, 2500, 6);
    for (const std::size_t budget : {kUnlimited, std::size_t{0}}) {
        EnsembleAccumulator all(e.n_series, e.n, budget);
        feed(all, e, 0, e.n, {300});
        EnsembleAccumulator a(e.n_series, e.n, budget);
        EnsembleAccumulator b(e.n_series, e.n, budget);
        EnsembleAccumulator c(e.n_series, e.n, budget);
        feed(a, e, 0, 1000, {64});
        feed(b, e, 1000, 1, {1});
        feed(c, e, 1001, 1499, {1499});
        c.merge(a); // any order
        c.merge(b);
        EXPECT_EQ(c.exact(), all.exact());
        expect_identical(all.finalize(), c.finalize());
    }
}

// the state as bytes (partial.nhvk, resume records, MPI): saved parts loaded into fresh accumulators merge into the
// whole run's summaries bit for bit, in both modes; a state of another shape or a cut one is refused
TEST(EnsembleAccumulator, SavedStatesLoadAndMergeExactly) {
    const Ensemble e = make_ensemble(6, 2500, 8);
    for (const std::size_t budget : {kUnlimited, std::size_t{0}}) {
        EnsembleAccumulator all(e.n_series, e.n, budget);
        feed(all, e, 0, e.n, {300});
        std::string bytes_a, bytes_b;
        {
            EnsembleAccumulator a(e.n_series, e.n, budget), b(e.n_series, e.n, budget);
            feed(a, e, 0, 1234, {100});
            feed(b, e, 1234, e.n - 1234, {77});
            a.save(bytes_a);
            b.save(bytes_b);
        }
        EnsembleAccumulator merged(e.n_series, e.n, budget), part(e.n_series, e.n, budget);
        nhvk::bytes::Reader ra(bytes_a, "a"), rb(bytes_b, "b");
        merged.load(ra);
        part.load(rb);
        merged.merge(part);
        EXPECT_EQ(merged.exact(), all.exact());
        expect_identical(all.finalize(), merged.finalize());

        EnsembleAccumulator other_shape(e.n_series + 1, e.n, budget);
        nhvk::bytes::Reader again(bytes_a, "a");
        EXPECT_THROW(other_shape.load(again), std::runtime_error);
        const std::string cut = bytes_a.substr(0, bytes_a.size() - 9);
        nhvk::bytes::Reader rc(cut, "cut");
        EnsembleAccumulator fresh(e.n_series, e.n, budget);
        EXPECT_THROW(fresh.load(rc), std::runtime_error);
    }
}

// exact mode on the host bins nothing, so it keeps no histogram rows (a sweep holds an accumulator per point); its
// state then carries no rows, and a state that does carry them (all zero, as written before rows were made only when
// needed) reads back the same; either restores and merges with exact or histogram accumulators bit for bit
TEST(EnsembleAccumulator, StatesWithoutRowsRestoreAndMerge) {
    const Ensemble e = make_ensemble(5, 2000, 12);
    const std::size_t half = 1100;
    EnsembleAccumulator exact_all(e.n_series, e.n, kUnlimited), hist_all(e.n_series, e.n, 0);
    feed(exact_all, e, 0, e.n, {500});
    feed(hist_all, e, 0, e.n, {500});
    EnsembleAccumulator first(e.n_series, e.n, kUnlimited);
    feed(first, e, 0, half, {300});
    ASSERT_TRUE(first.exact());
    EXPECT_FALSE(first.has_rows());
    EXPECT_TRUE(hist_all.has_rows());
    for (std::size_t s = 0; s < e.n_series; ++s)
        EXPECT_TRUE(std::all_of(first.histogram(s), first.histogram(s) + first.row_words(),
                                [](std::uint64_t c) { return c == 0u; }));

    std::string saved;
    first.save(saved);
    // the same state with every row written out (zeros): the counts vector follows the header (33 bytes) and the
    // partials (a length and n_series partials); here it is empty, a length of 0
    const std::size_t at = 33 + 8 + e.n_series * sizeof(nhvk::stats::SeriesPartial);
    std::uint64_t len = 1;
    std::memcpy(&len, saved.data() + at, sizeof len);
    ASSERT_EQ(len, 0u);
    std::string with_rows = saved.substr(0, at);
    nhvk::bytes::put_vector(with_rows, std::vector<std::uint64_t>(e.n_series * first.row_words(), 0u));
    with_rows += saved.substr(at + 8);
    EXPECT_GT(with_rows.size(), saved.size() + e.n_series * first.row_words() * 8 - 1);

    for (const std::string* state : {&saved, &with_rows}) {
        const auto restored = [&](std::size_t budget) {
            EnsembleAccumulator acc(e.n_series, e.n, budget);
            nhvk::bytes::Reader in(*state, "state");
            acc.load(in);
            return acc;
        };
        EnsembleAccumulator a = restored(kUnlimited);
        EXPECT_TRUE(a.exact());
        EXPECT_FALSE(a.has_rows()) << "zero rows of an exact state are not kept";
        std::string again;
        a.save(again); // before finalize(), which reorders the values
        EXPECT_TRUE(again == saved);
        expect_identical(a.finalize(), first.finalize());
        // + an exact rest: exact; + a histogram-mode rest (either way round): the histogram of them all
        EnsembleAccumulator exact_rest(e.n_series, e.n, kUnlimited), hist_rest(e.n_series, e.n, 0);
        feed(exact_rest, e, half, e.n - half, {256});
        feed(hist_rest, e, half, e.n - half, {256});
        a.merge(exact_rest);
        EXPECT_TRUE(a.exact());
        expect_identical(a.finalize(), exact_all.finalize());
        EnsembleAccumulator b = restored(kUnlimited);
        b.merge(hist_rest);
        EXPECT_FALSE(b.exact());
        EXPECT_TRUE(b.has_rows());
        expect_identical(b.finalize(), hist_all.finalize());
        hist_rest.merge(restored(kUnlimited));
        expect_identical(hist_rest.finalize(), hist_all.finalize());
    }
}

// a sweep's pooled statistics: merge_referencing() leaves the points' values where they are and summarises (finalize,
// median_of, save) as merge() of every point would, in exact mode, in histogram mode, with a point in histogram mode,
// with a pooled budget the points' values outgrow, and when more values come after it
TEST(EnsembleAccumulator, MergeReferencingEqualsMergeOfEveryPart) {
    const Ensemble e = make_ensemble(4, 3000, 13);
    const std::size_t cuts[] = {0, 700, 1500, 2600, 3000};
    enum class Budget { unlimited, parts_exactly, below_parts, none };
    struct Case {
        Budget budget;
        int hist_part; // a part in histogram mode (−1: none)
    };
    for (const Case c : {Case{Budget::unlimited, -1}, Case{Budget::unlimited, 2}, Case{Budget::parts_exactly, -1},
                         Case{Budget::below_parts, -1}, Case{Budget::none, -1}}) {
        std::vector<EnsembleAccumulator> parts;
        std::size_t values = 0;
        for (int p = 0; p < 4; ++p) {
            parts.emplace_back(e.n_series, e.n, p == c.hist_part ? 0 : kUnlimited);
            feed(parts.back(), e, cuts[p], cuts[p + 1] - cuts[p], {400});
            values += parts.back().stored_values();
        }
        const std::vector<SeriesSummary> part0 = parts[0].finalize();
        // the pooled accumulator expects 100 members a series, so that it starts exact under the smaller budgets
        const std::size_t budget = c.budget == Budget::unlimited       ? kUnlimited
                                   : c.budget == Budget::parts_exactly ? values * sizeof(double)
                                   : c.budget == Budget::below_parts   ? (values - 1) * sizeof(double)
                                                                       : 0;
        EnsembleAccumulator copied(e.n_series, 100, budget), referencing(e.n_series, 100, budget);
        std::vector<const EnsembleAccumulator*> ptrs;
        for (const EnsembleAccumulator& p : parts) {
            copied.merge(p);
            ptrs.push_back(&p);
        }
        referencing.merge_referencing(ptrs);
        std::string a, b;
        referencing.save(a); // before finalize(), which reorders the values
        copied.save(b);
        EXPECT_TRUE(a == b) << "the same state bytes";
        EXPECT_EQ(referencing.exact(), copied.exact());
        EXPECT_EQ(referencing.stored_values(), copied.stored_values());
        EXPECT_EQ(referencing.exact(),
                  c.hist_part < 0 && (c.budget == Budget::unlimited || c.budget == Budget::parts_exactly));
        expect_identical(referencing.finalize(), copied.finalize());
        for (const std::vector<std::size_t>& series : {std::vector<std::size_t>{0, 2}, {1}, {0, 1, 2, 3}})
            EXPECT_EQ(bits(referencing.median_of(series)), bits(copied.median_of(series)));
        expect_identical(parts[0].finalize(), part0); // the parts are read, not changed
        // more values after it (beyond a budget the parts fill exactly: the referenced values are binned with them)
        EnsembleAccumulator more(e.n_series, e.n, kUnlimited);
        feed(more, e, 0, 500, {500});
        EnsembleAccumulator copied_more = copied, referencing_more = referencing;
        copied_more.merge(more);
        referencing_more.merge(more);
        EXPECT_EQ(referencing_more.exact(), copied_more.exact());
        expect_identical(referencing_more.finalize(), copied_more.finalize());
    }
}

// Replica groups: an accumulator of 4 series whose rows 0 and 1 have 3 groups (series 4 + g·2 + s0 over the members
// whose index is g modulo 3), fed chunk by chunk, against accumulators without groups: the rows' statistics are those
// of the 4 series over every valid member, a group's those of its row over the valid members of the group (fed as a
// validity mask). Every field equal in exact and in histogram mode, whether the accumulator was fed in chunks,
// merged, merged by reference or saved and loaded; its stored values are the rows' only; the groups' union is the
// row; and finalize() leaves the groups' values intact (a second finalize() gives the same).
TEST(EnsembleAccumulator, ReplicaGroupsAreSegmentsOfTheirRows) {
    using nhvk::stats::ChunkView;
    using nhvk::stats::ReplicaShape;
    const std::size_t base = 4, rows = 2, R = 3, n_series = base + R * rows;
    EXPECT_EQ(EnsembleAccumulator::expected_values(n_series, 1000, ReplicaShape{base, R}), 4000.0L);
    for (const std::size_t n : {std::size_t{3000}, std::size_t{10000}}) // the values of a row below and above 8192
        for (const std::size_t budget : {kUnlimited, std::size_t{0}}) {
            const std::string what = std::to_string(n) + (budget == 0u ? " histogram" : " exact");
            const Ensemble e = make_ensemble(base, n, 31);
            // the references: every valid member, and each group's valid members
            EnsembleAccumulator all(base, n, budget);
            feed(all, e, 0, n, {n});
            std::vector<SeriesSummary> expected = all.finalize();
            std::vector<std::vector<std::uint8_t>> in_group(R, e.valid);
            for (std::size_t g = 0; g < R; ++g) {
                for (std::size_t j = 0; j < n; ++j)
                    if (j % R != g) in_group[g][j] = 0u;
                Ensemble eg = e;
                eg.valid = in_group[g];
                EnsembleAccumulator group(base, n, budget);
                feed(group, eg, 0, n, {n});
                const std::vector<SeriesSummary> sg = group.finalize();
                expected.insert(expected.end(), sg.begin(), sg.begin() + rows);
            }
            // members [first, first + count) in chunks of 700 (the last shorter), as a backend's view describes them
            const auto feed_groups = [&](EnsembleAccumulator& acc, std::size_t first, std::size_t count) {
                for (std::size_t j0 = first; j0 < first + count; j0 += 700) {
                    const std::size_t len = std::min<std::size_t>(700, first + count - j0);
                    std::vector<double> buf(base * len);
                    for (std::size_t s = 0; s < base; ++s)
                        std::copy_n(e.values.begin() + s * n + j0, len, buf.begin() + s * len);
                    ChunkView in{buf.data(), len, len, e.valid.data() + j0, n_series};
                    in.base_series = base;
                    in.replicated = rows;
                    in.replicas = R;
                    in.first_member = j0;
                    acc.add_chunk(in);
                }
            };
            EnsembleAccumulator grouped(n_series, n, budget, {}, ReplicaShape{base, R});
            feed_groups(grouped, 0, n);
            EXPECT_EQ(grouped.exact(), budget != 0u) << what;
            if (grouped.exact()) EXPECT_EQ(grouped.stored_values(), all.stored_values()) << what;
            std::string state;
            grouped.save(state);
            {
                SCOPED_TRACE(what + ", fed in chunks");
                expect_identical(grouped.finalize(), expected);
                expect_identical(grouped.finalize(), expected);
            }
            std::vector<std::size_t> groups_of_row[rows];
            for (std::size_t s0 = 0; s0 < rows; ++s0) {
                for (std::size_t g = 0; g < R; ++g) groups_of_row[s0].push_back(base + g * rows + s0);
                EXPECT_EQ(bits(grouped.median_of(groups_of_row[s0])), bits(expected[s0].p50)) << what;
                const std::vector<double> loo = grouped.leave_one_out_medians(groups_of_row[s0]);
                for (std::size_t g = 0; g < R; ++g) {
                    // without group g: the row over the valid members of the other groups
                    Ensemble others = e;
                    for (std::size_t j = 0; j < n; ++j)
                        if (j % R == g) others.valid[j] = 0u;
                    EnsembleAccumulator rest(base, n, budget);
                    feed(rest, others, 0, n, {n});
                    EXPECT_EQ(bits(loo[g]), bits(rest.finalize()[s0].p50))
                        << what << ", row " << s0 << " without " << g;
                }
            }
            {
                SCOPED_TRACE(what + ", saved and loaded");
                EnsembleAccumulator loaded(n_series, n, budget, {}, ReplicaShape{base, R});
                nhvk::bytes::Reader reader(state, "state");
                loaded.load(reader);
                expect_identical(loaded.finalize(), expected);
            }
            EnsembleAccumulator a(n_series, n, budget, {}, ReplicaShape{base, R});
            EnsembleAccumulator b(n_series, n, budget, {}, ReplicaShape{base, R});
            EnsembleAccumulator c(n_series, n, budget, {}, ReplicaShape{base, R});
            feed_groups(a, 0, 1000);
            feed_groups(b, 1000, 1234);
            feed_groups(c, 2234, n - 2234);
            {
                SCOPED_TRACE(what + ", merged");
                EnsembleAccumulator merged(n_series, n, budget, {}, ReplicaShape{base, R});
                merged.merge(a);
                merged.merge(b);
                merged.merge(c);
                expect_identical(merged.finalize(), expected);
            }
            {
                SCOPED_TRACE(what + ", merged by reference");
                EnsembleAccumulator referencing(n_series, n, budget, {}, ReplicaShape{base, R});
                referencing.merge_referencing({&a, &b, &c});
                expect_identical(referencing.finalize(), expected);
            }
            // the groups must be described by the chunk, and merged only with the same groups
            EnsembleAccumulator other_groups(n_series, n, budget, {}, ReplicaShape{base, 2});
            EXPECT_THROW(grouped.merge(other_groups), std::invalid_argument) << what;
            if (budget != 0u) {
                std::vector<double> buf(base * 10, 1.0);
                EXPECT_THROW(grouped.add_chunk(buf.data(), 10, 10, nullptr), std::invalid_argument) << what;
            }
        }
}

// one bin table per spec, shared by the accumulators that use it (equal to the spec's own)
TEST(EnsembleAccumulator, AccumulatorsOfOneSpecShareTheirBinTable) {
    EnsembleAccumulator a(3, 10, kUnlimited), b(5, 10, 0);
    EnsembleAccumulator c(3, 10, kUnlimited, LogHistogramSpec{50, 1024});
    EXPECT_EQ(&a.bin_table(), &b.bin_table());
    EXPECT_NE(&a.bin_table(), &c.bin_table());
    EXPECT_TRUE(a.bin_table() == LogHistogramSpec{}.table());
    EXPECT_TRUE(c.bin_table() == (LogHistogramSpec{50, 1024}).table());
}

TEST(EnsembleAccumulator, MergeMixedModesFallsBackToHistogram) {
    const Ensemble e = make_ensemble(3, 800, 7);
    EnsembleAccumulator hist_all(e.n_series, e.n, 0);
    feed(hist_all, e, 0, e.n, {800});
    EnsembleAccumulator a(e.n_series, e.n, kUnlimited);
    EnsembleAccumulator b(e.n_series, e.n, 0);
    feed(a, e, 0, 400, {50});
    feed(b, e, 400, 400, {50});
    ASSERT_TRUE(a.exact());
    a.merge(b);
    EXPECT_FALSE(a.exact());
    expect_identical(hist_all.finalize(), a.finalize());
}

TEST(EnsembleAccumulator, ModeSelectionAndBudgetOverflow) {
    EXPECT_TRUE(EnsembleAccumulator(240, 1000, 240 * 1000 * 8).exact());
    EXPECT_FALSE(EnsembleAccumulator(240, 1000, 240 * 1000 * 8 - 1).exact());
    EXPECT_FALSE(EnsembleAccumulator(240, std::uint64_t{1} << 62, kUnlimited).exact()); // no overflow in the check
    // more values than announced: switches to histogram mode, identically to a histogram accumulator
    const Ensemble e = make_ensemble(2, 1000, 8);
    EnsembleAccumulator small(e.n_series, 100, e.n_series * 100 * 8);
    ASSERT_TRUE(small.exact());
    feed(small, e, 0, e.n, {37});
    EXPECT_FALSE(small.exact());
    expect_identical(summarise(e, 0, {1000}), small.finalize());
}

TEST(EnsembleAccumulator, AllInvalidAndAllNonFiniteSeries) {
    const std::size_t n = 50;
    std::vector<double> values(3 * n, 1.0);
    std::vector<std::uint8_t> valid(n, 0);
    for (std::size_t j = 0; j < n; ++j) {
        values[n + j] = std::numeric_limits<double>::quiet_NaN();                   // series 1: valid but non-finite
        values[2 * n + j] = j == 7 ? 2.5 : std::numeric_limits<double>::infinity(); // series 2: one finite value
    }
    for (const std::size_t budget : {kUnlimited, std::size_t{0}}) {
        EnsembleAccumulator none(3, n, budget);
        none.add_chunk(values.data(), n, n, valid.data());
        for (const SeriesSummary& r : none.finalize()) {
            EXPECT_EQ(r.count, 0u);
            EXPECT_EQ(r.nonfinite, 0u);
            for (const double x : {r.mean, r.std, r.min, r.max, r.p01, r.p05, r.p25, r.p50, r.p75, r.p95, r.p99}) {
                EXPECT_TRUE(std::isnan(x));
            }
        }
        EnsembleAccumulator all(3, n, budget);
        all.add_chunk(values.data(), n, n, nullptr);
        const auto r = all.finalize();
        EXPECT_EQ(r[0].count, n);
        EXPECT_EQ(r[0].std, 0.0);
        EXPECT_EQ(r[0].p50, 1.0);
        EXPECT_EQ(r[1].count, 0u);
        EXPECT_EQ(r[1].nonfinite, n);
        EXPECT_TRUE(std::isnan(r[1].mean));
        EXPECT_TRUE(std::isnan(r[1].p99));
        EXPECT_EQ(r[2].count, 1u);
        EXPECT_EQ(r[2].nonfinite, n - 1);
        EXPECT_EQ(r[2].mean, 2.5);
        EXPECT_TRUE(std::isnan(r[2].std)) << "one value has no sample standard deviation";
        for (const double x : {r[2].min, r[2].max, r[2].p01, r[2].p50, r[2].p99}) {
            EXPECT_EQ(x, 2.5);
        }
    }
}

TEST(EnsembleAccumulator, FinalizeTwiceAndKeepAdding) {
    const Ensemble e = make_ensemble(3, 600, 9);
    EnsembleAccumulator acc(e.n_series, e.n, kUnlimited);
    feed(acc, e, 0, 300, {100});
    const auto first = acc.finalize();
    expect_identical(first, acc.finalize());
    feed(acc, e, 300, 300, {70});
    expect_identical(summarise(e, kUnlimited, {600}), acc.finalize());
}

TEST(EnsembleAccumulator, AddPartialsEqualsAddChunk) {
    const Ensemble e = make_ensemble(5, 900, 10);
    EnsembleAccumulator ref(e.n_series, e.n, 0);
    feed(ref, e, 0, e.n, {900}, 0);
    EnsembleAccumulator acc(e.n_series, e.n, kUnlimited);
    std::vector<nhvk::stats::SeriesPartial> partials(e.n_series);
    std::vector<std::uint64_t> counts(e.n_series * acc.row_words(), 0u);
    const auto binner = acc.binner();
    for (std::size_t s = 0; s < e.n_series; ++s) {
        for (std::size_t j = 0; j < e.n; ++j) {
            if (e.valid[j]) {
                const double x = e.values[s * e.n + j];
                partials[s].add(x);
                if (std::isfinite(x)) {
                    binner.add(counts.data() + s * acc.row_words(), x);
                }
            }
        }
    }
    acc.add_partials(partials.data(), counts.data());
    EXPECT_FALSE(acc.exact());
    expect_identical(ref.finalize(), acc.finalize());
}

// Values below the histogram's resolved window (more than `window` bins under the largest magnitude of their sign)
// are counted per series: histogram quantiles among them have no relative guarantee. Negatives, values above 1e10
// and tiny values within the window are not counted. In both modes and through add_partials (the path of the CUDA
// backend's rows), so the count does not depend on where the reduction ran.
TEST(EnsembleAccumulator, CountsValuesBelowTheHistogramWindow) {
    const LogHistogramSpec spec; // 2048 bins of 50 per decade: 40.96 decades under the top
    // series 0: positives up to 1e300, so 1e-40, 1e-31, 3 and 1e200 lie more than 41 decades below it; negatives
    //           down to −1e-30 stay within 41 decades of −2e10; 0 is exact
    // series 1: negatives under −1e300: −1e250, −1e-9 and −7 lie more than 41 decades below it; the positives
    //           (1e-300 … 5e-300) share a decade
    const std::vector<double> values = {1e-40,  1e-31, 3.0,    1e300,  1e200, 0.0,    -1e-30, -2e10, //
                                        -1e300, -1e-9, 1e-300, 2e-300, 0.0,   -1e250, 5e-300, -7.0};
    const std::size_t n = 8;
    EnsembleAccumulator hist(2, n, 0, spec);
    hist.add_chunk(values.data(), n, n, nullptr);
    const std::vector<SeriesSummary> h = hist.finalize();
    ASSERT_FALSE(h[0].exact);
    EXPECT_EQ(h[0].outside_range, 4u);
    EXPECT_EQ(h[1].outside_range, 3u);
    EXPECT_EQ(h[0].count, 8u);
    // exact mode keeps no histogram: nothing is outside anything
    EnsembleAccumulator exact(2, n, kUnlimited, spec);
    exact.add_chunk(values.data(), n, n, nullptr);
    const std::vector<SeriesSummary> e = exact.finalize();
    ASSERT_TRUE(e[0].exact);
    EXPECT_EQ(e[0].outside_range, 0u);
    EXPECT_EQ(e[1].outside_range, 0u);
    // an exact accumulator that receives more values than its budget holds (4 expected per series, 8 arrive) bins the
    // values it held and the chunk's: the histogram accumulator's summaries exactly
    EnsembleAccumulator switched(2, 4, 2 * 4 * sizeof(double), spec);
    ASSERT_TRUE(switched.exact());
    switched.add_chunk(values.data(), 4, n, nullptr);
    ASSERT_TRUE(switched.exact());
    switched.add_chunk(values.data() + 4, 4, n, nullptr);
    ASSERT_FALSE(switched.exact());
    expect_identical(switched.finalize(), h);
    // the same from per-series rows (add_partials)
    EnsembleAccumulator acc(2, n, 0, spec);
    std::vector<nhvk::stats::SeriesPartial> partials(2);
    std::vector<std::uint64_t> counts(2 * acc.row_words(), 0u);
    for (std::size_t s = 0; s < 2; ++s)
        for (std::size_t j = 0; j < n; ++j) {
            partials[s].add(values[s * n + j]);
            acc.binner().add(counts.data() + s * acc.row_words(), values[s * n + j]);
        }
    acc.add_partials(partials.data(), counts.data());
    EXPECT_EQ(acc.finalize()[0].outside_range, 4u);
}

TEST(EnsembleAccumulator, RejectsMismatchedMerge) {
    EnsembleAccumulator a(3, 10, 0);
    EnsembleAccumulator b(4, 10, 0);
    EnsembleAccumulator c(3, 10, 0, LogHistogramSpec{50, 1024});
    EXPECT_THROW(a.merge(b), std::invalid_argument);
    EXPECT_THROW(a.merge(c), std::invalid_argument);
}

} // namespace

// ---- exact quantiles by selection (issue 21 item 3) ----------------------------------------------------------------

namespace selection {

using nhvk::stats::quantile_levels;
using nhvk::stats::quantile_ranks;
using nhvk::stats::quantiles_from_order_statistics;
using nhvk::stats::select_order_statistics;

TEST(ExactSelection, OrderStatisticsAndQuantilesEqualThoseOfTheSortedValues) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> unit;
    // below and above the size where the bucket pass starts (8192), with ties, one value, signed values over 600
    // decades, and values packed into one binade; and those that take the bucket pass into a bucket again: rounding
    // errors (exact zeros, and a few multiples of 2^-53 each taken by many members), a run of equal values strictly
    // inside the range, distinct values crowded into 1e-12 of a range of 600 decades, and such a crowd whose own
    // min is a run of equal values with another run two units in the last place above it
    for (std::size_t n : {1u, 2u, 3u, 7u, 100u, 101u, 1000u, 4097u, 8192u, 30001u, 100000u}) {
        for (int kind = 0; kind < 9; ++kind) {
            std::vector<double> v(n);
            for (double& x : v) {
                const double z = normal(rng), u = unit(rng);
                x = kind == 0   ? z * std::exp(normal(rng))
                    : kind == 1 ? std::round(3.0 * z) // few distinct values: ranks inside runs of equal values
                    : kind == 2 ? 2.5
                    : kind == 3 ? std::copysign(std::pow(10.0, 300.0 * std::tanh(z)), normal(rng))
                    : kind == 4 ? 1.0 + 1e-3 * std::fabs(z)
                    : kind == 5 ? (u < 0.3 ? 0.0 : std::ldexp(std::floor(1.0 + 4.0 * u * u), -53))
                    : kind == 6 ? (u < 0.1 ? 0.0 : (u < 0.8 ? 0x1p-52 : std::pow(10.0, -20.0 + 10.0 * unit(rng))))
                    : kind == 7 ? (u < 0.9 ? 1.0 + 1e-12 * unit(rng) : std::pow(10.0, 600.0 * unit(rng) - 300.0))
                                : (u < 0.3   ? 1.0
                                   : u < 0.6 ? 1.0 + 0x1p-51
                                   : u < 0.9 ? 1.0 + 1e-10 * unit(rng)
                                             : std::pow(10.0, 600.0 * unit(rng) - 300.0));
                x = x == 0.0 ? 0.0 : x; // as the accumulator stores them
            }
            std::vector<double> sorted = v;
            std::sort(sorted.begin(), sorted.end());
            const std::vector<std::uint64_t> ranks = quantile_ranks(n);
            ASSERT_FALSE(ranks.empty());
            ASSERT_TRUE(std::is_sorted(ranks.begin(), ranks.end()));
            EXPECT_EQ(std::adjacent_find(ranks.begin(), ranks.end()), ranks.end()) << "ranks must be distinct";
            EXPECT_LT(ranks.back(), n);
            std::vector<double> stats(ranks.size());
            select_order_statistics(v, ranks, stats.data());
            for (std::size_t i = 0; i < ranks.size(); ++i)
                EXPECT_EQ(stats[i], sorted[ranks[i]]) << "n " << n << " rank " << ranks[i];
            double q[7];
            quantiles_from_order_statistics(n, ranks, stats.data(), q);
            for (int i = 0; i < 7; ++i)
                EXPECT_EQ(bits(q[i]), bits(quantile_type7(sorted.data(), n, quantile_levels[i])))
                    << "n " << n << " kind " << kind << " level " << quantile_levels[i];
        }
    }
    EXPECT_TRUE(quantile_ranks(0).empty());
}

// The overload given the values' bounds (the exact partial's min and max) selects the same order statistics, and
// bounds that do not hold every value are refused rather than read out of range.
TEST(ExactSelection, GivenBoundsSelectTheSameAndWrongBoundsAreRefused) {
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal;
    std::vector<double> v(20000);
    for (double& x : v) x = std::copysign(std::exp(5.0 * normal(rng)), normal(rng));
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<std::uint64_t> ranks = quantile_ranks(v.size());
    std::vector<double> stats(ranks.size());
    std::vector<double> w = v;
    select_order_statistics(w.data(), w.size(), sorted.front(), sorted.back(), ranks, stats.data());
    for (std::size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(stats[i], sorted[ranks[i]]) << "rank " << ranks[i];
    w = v;
    EXPECT_THROW(select_order_statistics(w.data(), w.size(), sorted[1], sorted.back(), ranks, stats.data()),
                 std::invalid_argument);
    w = v;
    EXPECT_THROW(select_order_statistics(w.data(), w.size(), sorted.front(), sorted[w.size() - 2], ranks, stats.data()),
                 std::invalid_argument);
}

// Values kept elsewhere (the CUDA backend's device memory): the accumulator asks for the order statistics and gives
// the summaries the host's own exact path gives.
TEST(ExactSelection, ValuesKeptElsewhereGiveTheHostsExactSummaries) {
    const std::size_t n_series = 3, n = 5000;
    std::mt19937_64 rng(11);
    std::normal_distribution<double> normal;
    std::vector<double> values(n_series * n);
    for (double& x : values) x = normal(rng) * std::exp(2.0 * normal(rng));
    values[3] = 0.0;
    values[n + 5] = -0.0;

    EnsembleAccumulator host(n_series, n, kUnlimited, LogHistogramSpec{});
    host.add_chunk(values.data(), n, n, nullptr);
    ASSERT_TRUE(host.exact());

    // "elsewhere": the partials and rows of an identical accumulator, the values kept in this test
    EnsembleAccumulator reduced(n_series, n, kUnlimited, LogHistogramSpec{});
    reduced.add_chunk(values.data(), n, n, nullptr);
    std::vector<nhvk::stats::SeriesPartial> partials;
    for (std::size_t s = 0; s < n_series; ++s) partials.push_back(reduced.partial(s));
    std::vector<std::uint64_t> counts(n_series * reduced.row_words());
    for (std::size_t s = 0; s < n_series; ++s)
        std::copy(reduced.histogram(s), reduced.histogram(s) + reduced.row_words(),
                  counts.begin() + s * reduced.row_words());

    EnsembleAccumulator elsewhere(n_series, n, kUnlimited, LogHistogramSpec{});
    elsewhere.add_partials_values_elsewhere(partials.data(), counts.data());
    EXPECT_TRUE(elsewhere.exact());
    int asked = 0;
    const auto select = [&](const std::vector<std::vector<std::uint64_t>>& ranks,
                            std::vector<std::vector<double>>& out) {
        ++asked;
        ASSERT_EQ(ranks.size(), n_series);
        out.assign(n_series, {});
        for (std::size_t s = 0; s < n_series; ++s) {
            std::vector<double> v(values.begin() + s * n, values.begin() + (s + 1) * n);
            for (double& x : v) x = x == 0.0 ? 0.0 : x;
            std::sort(v.begin(), v.end());
            for (const std::uint64_t r : ranks[s]) out[s].push_back(v[r]);
        }
    };
    expect_identical(elsewhere.finalize(select), host.finalize());
    EXPECT_EQ(asked, 1);
    std::string bytes;
    EXPECT_THROW(elsewhere.save(bytes), std::logic_error) << "no values here to save";
    EXPECT_THROW(elsewhere.finalize(), std::logic_error) << "nobody to ask";

    // the values brought to the host instead (a snapshot, an MPI part): the same summaries again
    std::vector<std::vector<double>> kept(n_series);
    for (std::size_t s = 0; s < n_series; ++s)
        for (std::size_t j = n; j-- > 0;) kept[s].push_back(values[s * n + j] == 0.0 ? 0.0 : values[s * n + j]);
    EnsembleAccumulator brought(n_series, n, kUnlimited, LogHistogramSpec{});
    brought.add_partials_with_values(partials.data(), counts.data(), kept);
    EXPECT_TRUE(brought.exact());
    expect_identical(brought.finalize(), host.finalize());
}

} // namespace selection
