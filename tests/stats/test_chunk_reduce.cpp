// SPDX-License-Identifier: MIT
#include "nhvk/stats/chunk_reduce.hpp"
#include "nhvk/stats/host_row_reduce.hpp"
#include "stats/ensemble_stats.hpp"

#include <gtest/gtest.h>
#include <thrust/system/cpp/execution_policy.h>
#include <thrust/system/omp/execution_policy.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

namespace {

using nhvk::stats::ChunkView;
using nhvk::stats::LogBinner;
using nhvk::stats::LogHistogramSpec;
using nhvk::stats::SeriesPartial;

struct Data {
    std::size_t n_series = 7;
    std::size_t n = 1999;
    std::size_t ld = 2003;
    std::vector<double> values;
    std::vector<std::uint8_t> valid;
};

Data make_data() {
    Data d;
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    d.values.assign(d.n_series * d.ld, std::numeric_limits<double>::quiet_NaN()); // padding must never be read
    d.valid.resize(d.n);
    for (auto& v : d.valid) {
        v = u(rng) < 0.8;
    }
    for (std::size_t s = 0; s < d.n_series; ++s) {
        for (std::size_t j = 0; j < d.n; ++j) {
            const double r = u(rng);
            d.values[s * d.ld + j] = r < 0.02   ? 0.0
                                     : r < 0.03 ? -0.0
                                     : r < 0.04 ? -INFINITY
                                     : r < 0.40 ? -std::pow(10.0, 30 * u(rng) - 25)
                                                : std::pow(10.0, 30 * u(rng) - 25);
        }
    }
    return d;
}

template <class Policy>
void reduce(const Policy& policy, const Data& d, std::size_t n_tiles, const LogBinner& b,
            std::vector<SeriesPartial>& partials, std::vector<std::uint64_t>& counts) {
    std::vector<SeriesPartial> tiles(d.n_series * n_tiles);
    std::vector<std::uint64_t> tile_counts(d.n_series * n_tiles * b.row_words(), 0u);
    // two chunks: [0, 700) and [700, n)
    const ChunkView c1{d.values.data(), 700, d.ld, d.valid.data(), d.n_series};
    const ChunkView c2{d.values.data() + 700, d.n - 700, d.ld, d.valid.data() + 700, d.n_series};
    nhvk::stats::accumulate_chunk(policy, c1, n_tiles, tiles.data(), tile_counts.data(), b);
    nhvk::stats::accumulate_chunk(policy, c2, n_tiles, tiles.data(), tile_counts.data(), b);
    partials.assign(d.n_series, SeriesPartial{});
    counts.assign(d.n_series * b.row_words(), 0u);
    nhvk::stats::combine_tiles(policy, d.n_series, n_tiles, b, tiles.data(), tile_counts.data(), partials.data(),
                               counts.data());
}

// A determinism test, not a validation: other tilings and execution policies of the same reduction give the same
// bits; the values are checked by the accumulator tests (test_ensemble_stats.cpp) against independent references.
TEST(ChunkReduce, TilesAndPoliciesGiveIdenticalPartials) {
    const Data d = make_data();
    // coarse: 4000 tiles × 133 words per series stay small; the 12.8-decade windows leave values of the 30 decades
    // below them, so the tiles' windows move differently and their merge must still agree
    const LogHistogramSpec spec{5, 64};
    const nhvk::stats::LogBinTable table = spec.table();
    const LogBinner b = LogBinner::make(table);
    std::vector<SeriesPartial> ref;
    std::vector<std::uint64_t> ref_counts;
    reduce(thrust::cpp::par, d, 1, b, ref, ref_counts);
    // direct sequential reference
    for (std::size_t s = 0; s < d.n_series; ++s) {
        SeriesPartial p;
        std::uint64_t total = 0;
        for (std::size_t j = 0; j < d.n; ++j) {
            if (d.valid[j]) {
                p.add(d.values[s * d.ld + j]);
            }
        }
        const std::uint64_t* row = ref_counts.data() + s * b.row_words();
        for (std::size_t i = 0; i < b.row_words(); ++i) {
            // every word but the two tops is a count
            total += i == nhvk::stats::kStoreWords || i == nhvk::stats::kStoreWords + 2 ? 0u : row[i];
        }
        EXPECT_TRUE(p == ref[s]) << s;
        EXPECT_EQ(total, p.count);
        EXPECT_GT(p.nonfinite, 0u);
        EXPECT_GT(row[nhvk::stats::kZeroWord], 0u);
        EXPECT_GT(LogBinner::below(row), 0u);
    }
    for (const std::size_t tiles : {1u, 2u, 5u, 64u, 4000u}) {
        std::vector<SeriesPartial> p;
        std::vector<std::uint64_t> c;
        reduce(thrust::omp::par, d, tiles, b, p, c);
        for (std::size_t s = 0; s < d.n_series; ++s) {
            EXPECT_TRUE(p[s] == ref[s]) << "tiles " << tiles << " series " << s;
        }
        EXPECT_EQ(c, ref_counts) << "tiles " << tiles;
    }
}

// The tiled reduction (the CUDA backend's) with replica groups: every tiling, with the groups' own smaller tilings
// and a row's groups in neighbouring items, gives each series exactly the partial and histogram row of a direct pass
// over its own members (group g of a row: the members whose run-wide index is g modulo R), in two chunks whose first
// members are not multiples of R.
TEST(ChunkReduce, ReplicaGroupTilesReduceEachGroupsOwnMembers) {
    const Data d = make_data();
    const LogHistogramSpec spec{5, 64};
    const nhvk::stats::LogBinTable table = spec.table();
    const LogBinner b = LogBinner::make(table);
    const std::size_t replicated = 3, first_member = 7; // the first 3 rows are replicated
    for (const std::size_t replicas : {std::size_t{3}, std::size_t{10}}) {
        const std::size_t n_series = d.n_series + replicas * replicated;
        std::vector<SeriesPartial> ref(n_series);
        std::vector<std::uint64_t> ref_rows(n_series * b.row_words(), 0u);
        for (std::size_t s = 0; s < n_series; ++s)
            for (std::size_t j = 0; j < d.n; ++j) {
                std::size_t row = s;
                if (s >= d.n_series) {
                    if ((first_member + j) % replicas != (s - d.n_series) / replicated) continue;
                    row = (s - d.n_series) % replicated;
                }
                if (!d.valid[j]) continue;
                const double x = d.values[row * d.ld + j];
                ref[s].add(x);
                if (std::isfinite(x)) b.add(ref_rows.data() + s * b.row_words(), x);
            }
        for (const std::size_t n_tiles : {1u, 2u, 3u, 7u, 64u, 4000u}) {
            std::vector<SeriesPartial> tiles(n_series * n_tiles);
            std::vector<std::uint64_t> tile_rows(n_series * n_tiles * b.row_words(), 0u);
            for (const std::size_t cut : {std::size_t{0}, std::size_t{700}}) {
                ChunkView c{d.values.data() + cut, cut == 0 ? 700 : d.n - 700, d.ld, d.valid.data() + cut, n_series};
                c.base_series = d.n_series;
                c.replicated = replicated;
                c.replicas = replicas;
                c.first_member = first_member + cut;
                nhvk::stats::accumulate_chunk(thrust::omp::par, c, n_tiles, tiles.data(), tile_rows.data(), b);
            }
            std::vector<SeriesPartial> p(n_series);
            std::vector<std::uint64_t> rows(n_series * b.row_words(), 0u);
            nhvk::stats::combine_tiles(thrust::cpp::par, n_series, n_tiles, b, tiles.data(), tile_rows.data(), p.data(),
                                       rows.data());
            for (std::size_t s = 0; s < n_series; ++s) {
                EXPECT_GT(ref[s].count, 0u) << "series " << s;
                EXPECT_TRUE(p[s] == ref[s]) << "replicas " << replicas << ", tiles " << n_tiles << ", series " << s;
            }
            EXPECT_EQ(rows, ref_rows) << "replicas " << replicas << ", tiles " << n_tiles;
        }
    }
}

// compact_chunk (what the host statistics take the quantiles from) against a loop written here: per series, the
// values of valid members that are finite, in trajectory order, -0 as +0.
TEST(ChunkReduce, CompactChunkKeepsValidFiniteInOrder) {
    const Data d = make_data();
    const ChunkView in{d.values.data(), d.n, d.ld, d.valid.data(), d.n_series};
    std::vector<std::vector<double>> rows(d.n_series, std::vector<double>(d.n, -1.0));
    std::vector<double*> out_ptr;
    for (auto& r : rows) out_ptr.push_back(r.data());
    std::vector<std::size_t> n_out(d.n_series, d.n + 1);
    nhvk::stats::compact_chunk(thrust::omp::par, in, out_ptr.data(), n_out.data());
    for (std::size_t s = 0; s < d.n_series; ++s) {
        std::vector<double> out(rows[s].begin(),
                                rows[s].begin() + static_cast<std::ptrdiff_t>(std::min(n_out[s], d.n)));
        std::vector<double> expected;
        for (std::size_t j = 0; j < d.n; ++j) {
            const double x = d.values[s * d.ld + j];
            if (d.valid[j] && std::isfinite(x)) {
                expected.push_back(x == 0.0 ? 0.0 : x);
            }
        }
        ASSERT_EQ(n_out[s], expected.size()) << "series " << s;
        ASSERT_EQ(out.size(), expected.size());
        for (std::size_t i = 0; i < out.size(); ++i) {
            EXPECT_EQ(out[i], expected[i]);
            EXPECT_FALSE(out[i] == 0.0 && std::signbit(out[i]));
        }
    }
}

// The host's one-pass reduction (reduce_chunk_host: exact sums per binade, the population rule once per member)
// against the per-value path (SeriesPartial::add, LogBinner::add), with the population rule of ChunkView's
// documentation written out here: a timed series of member j counts when j is valid and either did not fail or, with
// fail_index given, failed after reaching that output time; the per-member series counts a valid member's non-NaN
// value when it did not fail or fail_index is given. With replica groups (3 groups of every row, the per-member one
// included), series base + g·7 + r counts member j of row r by the same rule when its run-wide index (5 + j) is g
// modulo 3, and a replicated row's values come group by group in each chunk (group 0's first, each in trajectory
// order), a group's values being that segment.
TEST(ChunkReduce, HostRowPassMatchesPerValuePath) {
    const Data d = make_data();
    const std::size_t nt = 3; // series 0..5: two metrics at three output times; series 6: per member
    const std::size_t timed = 6;
    std::mt19937_64 rng(7);
    std::vector<std::uint8_t> status(d.n, 0u);
    std::vector<std::int32_t> fail_index(d.n, 0);
    for (std::size_t j = 0; j < d.n; ++j) {
        if (rng() % 5 == 0) {
            status[j] = 1u;
            fail_index[j] = static_cast<std::int32_t>(rng() % 5) - 1; // −1 … 3
        }
    }
    const LogHistogramSpec spec{5, 64};
    const nhvk::stats::LogBinTable table = spec.table();
    const LogBinner b = LogBinner::make(table);
    const std::size_t replicated = 7, first_member = 5;
    for (const std::size_t replicas : {std::size_t{0}, std::size_t{3}})
        for (const bool alive : {false, true}) {
            for (const bool all_ok : {false, true}) {
                const std::size_t n_series = d.n_series + replicas * replicated;
                ChunkView in{d.values.data(), d.n, d.ld, all_ok ? nullptr : d.valid.data(), n_series};
                in.status = all_ok ? nullptr : status.data();
                in.fail_index = alive ? fail_index.data() : nullptr;
                in.nt = nt;
                in.timed_series = timed;
                if (replicas > 0u) {
                    in.base_series = d.n_series;
                    in.replicated = replicated;
                    in.replicas = replicas;
                    in.first_member = first_member;
                }
                const auto counts = [&](std::size_t j, std::size_t s, double x) {
                    if (s >= d.n_series) { // a replica group's series: its row, its members
                        if ((first_member + j) % replicas != (s - d.n_series) / replicated) return false;
                        s = (s - d.n_series) % replicated;
                    }
                    if (!all_ok && d.valid[j] == 0u) return false;
                    const bool ok = all_ok || status[j] == 0u;
                    if (s >= timed) return x == x && (ok || alive);
                    return ok || (alive && static_cast<std::int32_t>(s % nt) < fail_index[j]);
                };
                const auto row_of = [&](std::size_t s) { return s < d.n_series ? s : (s - d.n_series) % replicated; };
                std::vector<SeriesPartial> ref(n_series);
                std::vector<std::uint64_t> ref_rows(n_series * b.row_words(), 0u);
                // the kept values of each series in each chunk, [0, 700) and [700, n), in trajectory order
                std::vector<std::vector<double>> ref_values[2];
                ref_values[0].resize(n_series);
                ref_values[1].resize(n_series);
                for (std::size_t s = 0; s < n_series; ++s) {
                    for (std::size_t j = 0; j < d.n; ++j) {
                        const double x = d.values[row_of(s) * d.ld + j];
                        if (!counts(j, s, x)) continue;
                        ref[s].add(x);
                        if (std::isfinite(x)) {
                            b.add(ref_rows.data() + s * b.row_words(), x);
                            ref_values[j < 700 ? 0 : 1][s].push_back(x == 0.0 ? 0.0 : x);
                        }
                    }
                }
                // what out[s] holds after both chunks: a row's values per chunk, group by group with replica groups
                std::vector<std::vector<double>> expected(d.n_series);
                for (std::size_t s = 0; s < d.n_series; ++s)
                    for (const auto& chunk_values : ref_values) {
                        if (replicas == 0u) {
                            expected[s].insert(expected[s].end(), chunk_values[s].begin(), chunk_values[s].end());
                            continue;
                        }
                        for (std::size_t g = 0; g < replicas; ++g) {
                            const std::vector<double>& v = chunk_values[d.n_series + g * replicated + s];
                            expected[s].insert(expected[s].end(), v.begin(), v.end());
                        }
                    }
                for (const bool parallel : {false, true}) {
                    // two chunks, [0, 700) and [700, n), added into the same partials and rows
                    std::vector<SeriesPartial> p(n_series);
                    std::vector<std::uint64_t> rows(n_series * b.row_words(), 0u);
                    std::vector<std::vector<double>> values(d.n_series, std::vector<double>(d.n, -1.0));
                    std::vector<double*> out(n_series, nullptr); // a group's is not read
                    std::vector<std::size_t> n1(n_series), n2(n_series);
                    for (std::size_t s = 0; s < d.n_series; ++s) out[s] = values[s].data();
                    ChunkView c1 = in;
                    c1.chunk = 700;
                    nhvk::stats::reduce_chunk_host(c1, p.data(), rows.data(), b, out.data(), n1.data(), parallel);
                    ChunkView c2 = in;
                    c2.values += 700;
                    c2.chunk = d.n - 700;
                    c2.first_member += 700;
                    if (c2.valid) c2.valid += 700;
                    if (c2.status) c2.status += 700;
                    if (c2.fail_index) c2.fail_index += 700;
                    for (std::size_t s = 0; s < d.n_series; ++s) out[s] += n1[s];
                    nhvk::stats::reduce_chunk_host(c2, p.data(), rows.data(), b, out.data(), n2.data(), parallel);
                    for (std::size_t s = 0; s < n_series; ++s) {
                        const std::string what = "series " + std::to_string(s) + (alive ? " alive" : " survivors") +
                                                 (all_ok ? " all ok" : "") + (parallel ? " parallel" : "") +
                                                 (replicas > 0u ? " with replica groups" : "");
                        if (s >= d.n_series) EXPECT_GT(ref[s].count, 0u) << what;
                        EXPECT_TRUE(p[s] == ref[s]) << what;
                        EXPECT_EQ(p[s].sum.value(), ref[s].sum.value()) << what;
                        ASSERT_EQ(n1[s], ref_values[0][s].size()) << what;
                        ASSERT_EQ(n2[s], ref_values[1][s].size()) << what;
                        if (s < d.n_series)
                            EXPECT_TRUE(std::equal(expected[s].begin(), expected[s].end(), values[s].begin())) << what;
                    }
                    EXPECT_EQ(rows, ref_rows);
                }
            }
        }
}

// The per-binade sums over the whole double range, with more values in one row than a binade's 128-bit square sum
// takes between flushes: the same exact Σx and Σx² (and mean and std) as value by value.
TEST(ChunkReduce, BinadeSumsExactOverTheWholeRangeAndAcrossFlushes) {
    const std::size_t n = nhvk::stats::BinadeSums::kFlushEvery + 4097;
    std::vector<double> row(n);
    std::mt19937_64 rng(11);
    for (std::size_t j = 0; j < n; ++j) {
        const std::uint64_t r = rng();
        // most values in one binade (the worst case for a binade's sums), the rest anywhere, up to ±DBL_MAX
        double x = j % 7 != 0 ? 1.0 + static_cast<double>(r >> 12) * 0x1p-52
                              : std::ldexp(1.0 + static_cast<double>(r >> 12) * 0x1p-52,
                                           static_cast<int>(rng() % 2098) - 1074);
        if (j % 1000 == 3) x = std::numeric_limits<double>::max();
        if (j % 1000 == 5) x = std::numeric_limits<double>::denorm_min();
        if ((r & 1u) != 0u) x = -x;
        row[j] = x;
    }
    SeriesPartial ref;
    for (const double x : row) ref.add(x);
    ASSERT_EQ(ref.nonfinite, 0u);
    const LogHistogramSpec spec{5, 64};
    const nhvk::stats::LogBinTable table = spec.table();
    const auto sums = std::make_unique<nhvk::stats::BinadeSums>();
    SeriesPartial p;
    const std::size_t k = nhvk::stats::reduce_row_host(
        row.data(), n, [](std::size_t, double) { return true; }, p, nullptr, LogBinner::make(table), nullptr, *sums);
    EXPECT_EQ(k, 0u);
    EXPECT_TRUE(p == ref);
    EXPECT_EQ(p.count, n);
    const nhvk::stats::MeanStd a = nhvk::stats::mean_std(p.sum, p.sum_sq, p.count);
    const nhvk::stats::MeanStd e = nhvk::stats::mean_std(ref.sum, ref.sum_sq, ref.count);
    EXPECT_EQ(a.mean, e.mean);
    EXPECT_EQ(a.std, e.std);
    EXPECT_TRUE(std::isinf(ref.sum_sq.value())); // the squares of DBL_MAX overflow a double, not the exact sum
}

} // namespace
