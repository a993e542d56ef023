// SPDX-License-Identifier: MIT
#include "nhvk/stats/chunk_reduce.hpp"

#include <gtest/gtest.h>
#include <thrust/system/cpp/execution_policy.h>
#include <thrust/system/omp/execution_policy.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
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

} // namespace
