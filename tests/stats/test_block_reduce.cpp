// SPDX-License-Identifier: MIT
// The device's block-cooperative reduction (block_reduce.hpp) through its host twin, which runs the kernel's phases
// with a block's threads one after the other: its tile partials, merged, must equal bit for bit a direct pass of
// SeriesPartial::add over each series' own members (the population rule of ChunkView written out below), and
// accumulate_chunk's (today's reduction, which the CUDA-vs-CPU tests referee on a device), for every block size,
// tiling, batch of targets and chunk cut.
#include "nhvk/stats/block_reduce.hpp"
#include "stats_chunk_testing.hpp"

#include <gtest/gtest.h>
#include <thrust/system/cpp/execution_policy.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using nhvk::stats::BlockPlan;
using nhvk::stats::ChunkView;
using nhvk::stats::LogBinner;
using nhvk::stats::LogHistogramSpec;
using nhvk::stats::SeriesPartial;
using nhvk_test::ChunkRows;
using nhvk_test::one_series;
using nhvk_test::random_rows;
using nhvk_test::view;

/** @brief Whether row `row` counts member j's value x: ChunkView's documented rule, spelled out here. A timed
 *         series counts a member that did not fail, or one that failed after reaching its output time (fail_index
 *         given); the per-member series counts a non-NaN value of a member that did not fail, or of any member when
 *         fail_index is given. */
bool counts(const ChunkRows& d, std::size_t row, std::size_t j, double x) {
    const bool failed = !d.status.empty() && d.status[j] != 0u;
    if (row < d.timed) {
        const long long reached = !failed ? static_cast<long long>(d.nt) : d.fail_index.empty() ? 0 : d.fail_index[j];
        return static_cast<long long>(row % d.nt) < reached;
    }
    return !std::isnan(x) && (!failed || !d.fail_index.empty());
}

/** @brief SeriesPartial::add over each series' own members: series n_series + g·replicated + r is row r over the
 *         members whose run-wide index first_member + j is g modulo replicas. */
std::vector<SeriesPartial> direct(const ChunkRows& d, std::size_t replicas, std::size_t replicated,
                                  std::uint64_t first_member, const LogBinner* b = nullptr,
                                  std::vector<std::uint64_t>* hist = nullptr) {
    std::vector<SeriesPartial> ref(d.n_series + replicas * replicated);
    if (hist != nullptr) hist->assign(ref.size() * b->row_words(), 0u);
    for (std::size_t s = 0; s < ref.size(); ++s)
        for (std::size_t j = 0; j < d.n; ++j) {
            std::size_t row = s;
            if (s >= d.n_series) {
                if ((first_member + j) % replicas != (s - d.n_series) / replicated) continue;
                row = (s - d.n_series) % replicated;
            }
            const double x = d.values[row * d.ld + j];
            if (!counts(d, row, j, x)) continue;
            ref[s].add(x);
            if (hist != nullptr && std::isfinite(x)) b->add(hist->data() + s * b->row_words(), x);
        }
    return ref;
}

/** @brief The twin's merged partials (and histogram rows, with a binner) over the chunks cut at `cuts` (member
 *         offsets, ascending, first 0). */
std::vector<SeriesPartial> twin(const ChunkRows& d, const std::vector<std::size_t>& cuts, std::size_t replicas,
                                std::size_t replicated, std::uint64_t first_member, std::size_t n_tiles,
                                std::size_t batch, unsigned threads, const LogBinner* b = nullptr,
                                std::vector<std::uint64_t>* hist = nullptr) {
    const std::size_t n_series = d.n_series + replicas * replicated;
    const std::size_t W = b != nullptr ? b->row_words() : 0u;
    std::vector<SeriesPartial> tiles(n_series * n_tiles);
    std::vector<std::uint64_t> tile_rows(n_series * n_tiles * W, 0u);
    for (std::size_t c = 0; c < cuts.size(); ++c) {
        const std::size_t end = c + 1 < cuts.size() ? cuts[c + 1] : d.n;
        const ChunkView in = view(d, cuts[c], end - cuts[c], replicas, replicated, first_member);
        nhvk::stats::block_reduce_host(nhvk::stats::block_plan(in, n_tiles, batch, b), tiles.data(), tile_rows.data(),
                                       threads);
    }
    std::vector<SeriesPartial> out(n_series);
    if (hist != nullptr) hist->assign(n_series * W, 0u);
    nhvk::stats::combine_tiles(thrust::cpp::par, n_series, n_tiles, b != nullptr ? *b : LogBinner{}, tiles.data(),
                               b != nullptr ? tile_rows.data() : nullptr, out.data(),
                               hist != nullptr ? hist->data() : nullptr);
    return out;
}

void expect_equal(const std::vector<SeriesPartial>& got, const std::vector<SeriesPartial>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t s = 0; s < got.size(); ++s) {
        EXPECT_TRUE(got[s] == want[s]) << what << ", series " << s << ": count " << got[s].count << " vs "
                                       << want[s].count << ", sum " << got[s].sum.value() << " vs "
                                       << want[s].sum.value();
    }
}

TEST(BlockReduce, TwinEqualsTheDirectPassForEveryBlockTilingAndBatch) {
    ChunkRows d = random_rows();
    const std::uint64_t first_member = 7; // not a multiple of any R: a chunk's groups start mid-cycle
    // coarse bins and a 12.8-decade window for 30 decades of values: the windows move, and values fall below them
    const nhvk::stats::LogBinTable table = LogHistogramSpec{5, 64}.table();
    const LogBinner b = LogBinner::make(table);
    for (const std::size_t replicas : {std::size_t{0}, std::size_t{3}, std::size_t{10}}) {
        const std::size_t replicated = replicas > 0u ? 3u : 0u;
        const std::vector<SeriesPartial> ref = direct(d, replicas, replicated, first_member);
        for (const std::size_t s : {0u, 3u, 6u}) EXPECT_GT(ref[s].count, 0u) << "the data exercise every series";
        EXPECT_GT(ref[6].nonfinite, 0u) << "a per-member series counts its infinities";
        std::vector<std::uint64_t> ref_rows;
        direct(d, replicas, replicated, first_member, &b, &ref_rows);
        for (const unsigned threads : {1u, 32u, 256u})
            for (const std::size_t n_tiles : {std::size_t{1}, std::size_t{3}, std::size_t{64}, std::size_t{4000}})
                for (const std::size_t batch : {std::size_t{1}, std::size_t{4}, std::size_t{24}}) {
                    if (threads * n_tiles > 20000u) continue; // the twin runs every thread of every block
                    SCOPED_TRACE(::testing::Message() << "replicas " << replicas << ", threads " << threads
                                                      << ", tiles " << n_tiles << ", batch " << batch);
                    expect_equal(twin(d, {0, 700}, replicas, replicated, first_member, n_tiles, batch, threads), ref,
                                 "twin vs direct");
                    if (threads * n_tiles > 2000u) continue;
                    std::vector<std::uint64_t> rows;
                    expect_equal(
                        twin(d, {0, 700}, replicas, replicated, first_member, n_tiles, batch, threads, &b, &rows), ref,
                        "twin with rows vs direct");
                    EXPECT_EQ(rows, ref_rows) << "histogram rows";
                }
    }
}

// Against accumulate_chunk, today's reduction, with the default histogram (50 bins a decade, a 2048-bin window), in
// chunks of 1, 1, 255, 743, 998 and 1 members.
TEST(BlockReduce, TwinEqualsAccumulateChunkAcrossChunkCuts) {
    ChunkRows d = random_rows();
    const std::size_t replicas = 10, replicated = 3, n_series = d.n_series + replicas * replicated;
    const std::uint64_t first_member = 123;
    const nhvk::stats::LogBinTable table = LogHistogramSpec{}.table();
    const LogBinner b = LogBinner::make(table);
    const std::size_t W = b.row_words();
    std::vector<SeriesPartial> tiles(n_series * 5);
    std::vector<std::uint64_t> tile_rows(n_series * 5 * W, 0u);
    const std::vector<std::size_t> cuts = {0, 1, 2, 257, 1000, 1998};
    for (std::size_t c = 0; c < cuts.size(); ++c) {
        const std::size_t end = c + 1 < cuts.size() ? cuts[c + 1] : d.n;
        nhvk::stats::accumulate_chunk(thrust::cpp::par,
                                      view(d, cuts[c], end - cuts[c], replicas, replicated, first_member), 5,
                                      tiles.data(), tile_rows.data(), b);
    }
    std::vector<SeriesPartial> ref(n_series);
    std::vector<std::uint64_t> ref_rows(n_series * W, 0u);
    nhvk::stats::combine_tiles(thrust::cpp::par, n_series, 5, b, tiles.data(), tile_rows.data(), ref.data(),
                               ref_rows.data());
    std::vector<std::uint64_t> rows;
    expect_equal(twin(d, cuts, replicas, replicated, first_member, 7, 3, 128, &b, &rows), ref,
                 "cuts vs accumulate_chunk");
    EXPECT_EQ(rows, ref_rows);
    expect_equal(twin(d, {0}, replicas, replicated, first_member, 2, 5, 64), ref, "one chunk vs accumulate_chunk");
}

TEST(BlockReduce, Edges) {
    // one member; a chunk smaller than a block; every value zero (of both signs: min and max are +0)
    for (const std::vector<double>& x : {std::vector<double>{-2.5}, std::vector<double>{1.0, -0.0, 3.0, 0.5, 1e-300},
                                         std::vector<double>(300, -0.0)}) {
        const ChunkRows d = one_series(x);
        const std::vector<SeriesPartial> got = twin(d, {0}, 0, 0, 0, 4, 24, 256);
        expect_equal(got, direct(d, 0, 0, 0), "edge");
        EXPECT_EQ(got[0].count, x.size());
        EXPECT_EQ(got[0].min, *std::min_element(x.begin(), x.end()));
        if (x.size() == 300u) {
            EXPECT_FALSE(std::signbit(got[0].min) || std::signbit(got[0].max)) << "−0 reads as +0";
        }
    }
    {
        // every member failed before its first output time: nothing counts, and nothing is written
        ChunkRows d = one_series(std::vector<double>(50, 1.0));
        d.status.assign(50, 1u);
        d.fail_index.assign(50, 0);
        const std::vector<SeriesPartial> got = twin(d, {0}, 0, 0, 0, 3, 24, 32);
        EXPECT_EQ(got[0].count, 0u);
        EXPECT_EQ(got[0].nonfinite, 0u);
        EXPECT_EQ(got[0].sum.value(), 0.0);
    }
}

// Values whose sums are known in closed form: every binade's ±(1 + 2^-52)·2^e and the subnormals ±2^-1074 and
// ±(2^-1022 − 2^-1074) cancel exactly (Σx = 0); a metric that crosses zero, k·2^-10 for k = −500 … 600, has
// Σx = 55050·2^-10 and Σx² = (Σ_{k=-500}^{600} k²)·2^-20, both exact in double.
TEST(BlockReduce, ClosedFormSumsOverEveryBinadeAndAcrossZero) {
    std::vector<double> x;
    for (int e = -1022; e <= 1023; ++e) {
        const double v = std::ldexp(1.0 + DBL_EPSILON, e);
        x.push_back(v);
        x.push_back(-v);
    }
    for (const double v : {std::ldexp(1.0, -1074), DBL_MIN - std::ldexp(1.0, -1074), DBL_MAX}) {
        x.push_back(v);
        x.push_back(-v);
    }
    const ChunkRows d = one_series(x);
    for (const unsigned threads : {7u, 256u}) {
        const std::vector<SeriesPartial> got = twin(d, {0, 1000}, 0, 0, 0, 3, 24, threads);
        EXPECT_EQ(got[0].count, x.size());
        EXPECT_EQ(got[0].sum.value(), 0.0);
        EXPECT_EQ(got[0].min, -DBL_MAX);
        EXPECT_EQ(got[0].max, DBL_MAX);
        EXPECT_TRUE(std::isinf(got[0].sum_sq.value())) << "Σx² exceeds DBL_MAX (2·DBL_MAX² alone)";
        expect_equal(got, direct(d, 0, 0, 0), "every binade");
        // the default histogram: 40.96 of the 616 decades in each store's window, the rest below it
        const nhvk::stats::LogBinTable table = LogHistogramSpec{}.table();
        const LogBinner b = LogBinner::make(table);
        std::vector<std::uint64_t> rows, ref_rows;
        twin(d, {0, 1000}, 0, 0, 0, 3, 24, threads, &b, &rows);
        direct(d, 0, 0, 0, &b, &ref_rows);
        EXPECT_EQ(rows, ref_rows);
        EXPECT_GT(LogBinner::below(rows.data()), x.size() / 2);
    }
    std::vector<double> y;
    double sq = 0.0;
    for (int k = -500; k <= 600; ++k) {
        y.push_back(std::ldexp(k, -10));
        sq += static_cast<double>(k) * k;
    }
    const std::vector<SeriesPartial> got = twin(one_series(y), {0}, 0, 0, 0, 5, 24, 64);
    EXPECT_EQ(got[0].sum.value(), std::ldexp(55050.0, -10));
    EXPECT_EQ(got[0].sum_sq.value(), std::ldexp(sq, -20));
    EXPECT_EQ(got[0].min, -500.0 / 1024);
    EXPECT_EQ(got[0].max, 600.0 / 1024);
}

// A tile partial near FixedAccumulator's bound (as after 2^29 additions) takes a block's limbs after propagating its
// carries, and still reads the exact sum.
TEST(BlockReduce, PartialNearTheCarryBoundStaysExact) {
    std::vector<double> x;
    for (int k = 1; k <= 100; ++k) x.push_back(std::ldexp(3.0, 40) + k);
    const ChunkRows d = one_series(x);
    std::vector<SeriesPartial> tiles(1);
    for (const double v : x) tiles[0].add(v);
    SeriesPartial ref = tiles[0];
    for (const double v : x) ref.add(v);
    tiles[0].sum.fixed().pending = nhvk::stats::ExactSum::kNormalizeEvery - 5;
    tiles[0].sum_sq.fixed().pending = nhvk::stats::ExactSum::kNormalizeEvery - 5;
    nhvk::stats::block_reduce_host(nhvk::stats::block_plan(view(d, 0, d.n, 0, 0, 0), 1, 24), tiles.data(), nullptr, 32);
    EXPECT_LT(tiles[0].sum.fixed().pending, nhvk::stats::ExactSum::kNormalizeEvery);
    EXPECT_TRUE(tiles[0] == ref);
    EXPECT_EQ(tiles[0].sum.value(), 2.0 * (100 * std::ldexp(3.0, 40) + 5050));
}

TEST(BlockReduce, TilesFillTheDeviceAndBoundTheirMembers) {
    // 401 rows (the DOPRI5 bench) or 11 (the RK4 yardstick) on 132 SMs: at least 4 blocks per SM when chunks are large
    for (const std::size_t rows : {std::size_t{11}, std::size_t{401}}) {
        const std::size_t tiles = nhvk::stats::block_tiles(rows, 1u << 20, 132);
        EXPECT_GE(rows * tiles, 4u * 132u) << rows;
    }
    // small chunks: no tile under 1024 members of a full chunk, and never no tile
    EXPECT_EQ(nhvk::stats::block_tiles(11, 65536, 132), 64u);
    EXPECT_EQ(nhvk::stats::block_tiles(11, 100, 132), 1u);
    ChunkView huge{nullptr, std::size_t{1} << 29, std::size_t{1} << 29, nullptr, 1};
    EXPECT_THROW(nhvk::stats::block_plan(huge, 1, 24), std::length_error);
    EXPECT_EQ(nhvk::stats::block_plan(huge, 2, 24).tile_members, BlockPlan::kMaxTileMembers);
}

} // namespace
