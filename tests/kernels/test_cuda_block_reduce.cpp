// SPDX-License-Identifier: MIT
// The device's block reduction (kernels/cuda_backend.cu) against its host twin (block_reduce_host), bit for bit:
// the same tile partials and histogram rows from the same chunk, for the cases at the kernel's edges (one member, a
// chunk smaller than a block, every member failed, every value zero, values over every binade, a metric that
// crosses zero, replica groups starting mid-cycle, batches smaller than a row's targets). The device path adds the
// same integers as the twin, but in warp-wide sums and shared-memory atomics the twin does not run: this is where
// they are refereed. Skipped without a device.
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/cuda_reduce.hpp"
#include "nhvk/stats/block_reduce.hpp"
#include "stats_chunk_testing.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nhvk::stats::LogBinner;
using nhvk::stats::LogHistogramSpec;
using nhvk::stats::SeriesPartial;
using nhvk_test::ChunkRows;
using nhvk_test::one_series;
using nhvk_test::random_rows;
using nhvk_test::view;

/** @brief The chunk reduced on the device and by the twin (each into tiles that already hold one pass of it, so the
 *         merge into non-empty partials and rows is exercised too): every tile partial and row word must agree. */
void expect_device_equals_twin(const ChunkRows& c, std::size_t replicas, std::size_t replicated, std::uint64_t first,
                               std::size_t n_tiles, std::size_t batch, unsigned threads, bool rows,
                               const std::string& what) {
    SCOPED_TRACE(what);
    const nhvk::stats::LogBinTable table = LogHistogramSpec{}.table();
    const LogBinner b = LogBinner::make(table);
    const nhvk::stats::ChunkView in = view(c, 0, c.n, replicas, replicated, first);
    // NOTE: a histogram row is 34 KB, so with rows the batch is the one the backend takes on this device: a larger
    // one would ask a block for more shared memory than the device has
    if (rows) batch = nhvk::cuda_block_batch(nhvk::stats::block_plan(in, n_tiles, batch, &b).target_bytes(), batch);
    const nhvk::stats::BlockPlan P = nhvk::stats::block_plan(in, n_tiles, batch, rows ? &b : nullptr);
    const std::size_t n_series = c.n_series + replicas * replicated;
    std::vector<SeriesPartial> host(n_series * P.n_tiles);
    std::vector<std::uint64_t> host_rows(rows ? host.size() * b.row_words() : 0u, 0u);
    nhvk::stats::block_reduce_host(P, host.data(), rows ? host_rows.data() : nullptr, threads);
    std::vector<SeriesPartial> dev = host;
    std::vector<std::uint64_t> dev_rows = host_rows;
    nhvk::stats::block_reduce_host(P, host.data(), rows ? host_rows.data() : nullptr, threads);
    nhvk::cuda_block_reduce(P, &table, threads, dev, dev_rows);
    for (std::size_t i = 0; i < host.size(); ++i) {
        EXPECT_TRUE(dev[i] == host[i]) << "tile " << i << ": count " << dev[i].count << " vs " << host[i].count
                                       << ", sum " << dev[i].sum.value() << " vs " << host[i].sum.value();
    }
    EXPECT_EQ(dev_rows, host_rows);
}

TEST(CudaBlockReduce, DeviceEqualsItsHostTwinBitForBit) {
    if (!nhvk::cuda_available()) GTEST_SKIP() << nhvk::cuda_unavailable_reason();
    // random metrics of three output times and a per-member series, failures, replica groups
    const ChunkRows c = random_rows(5003, 11);
    for (const bool rows : {false, true}) {
        expect_device_equals_twin(c, 0, 0, 0, 3, 24, 256, rows, "no groups");
        expect_device_equals_twin(c, 10, 3, 7, 4, 24, 256, rows, "10 groups, one pass");
        expect_device_equals_twin(c, 10, 3, 7, 2, 4, 128, rows, "10 groups, passes of 4");
        expect_device_equals_twin(c, 3, 7, 5, 64, 2, 32, rows, "3 groups of every row, 64 tiles");
    }
    // the same metric in every member: the warps' common-limb sums
    const ChunkRows same = one_series(std::vector<double>(4096, 0.375));
    expect_device_equals_twin(same, 0, 0, 0, 2, 24, 256, true, "equal values");
    // neighbouring members in neighbouring binades: warps whose values start at two limbs
    std::vector<double> ramp;
    for (int j = 0; j < 4096; ++j) ramp.push_back(std::ldexp(1.0 + j / 4096.0, j % 70 - 35) * (j % 3 == 0 ? -1 : 1));
    expect_device_equals_twin(one_series(ramp), 0, 0, 0, 3, 24, 256, true, "mixed binades");
}

TEST(CudaBlockReduce, Edges) {
    if (!nhvk::cuda_available()) GTEST_SKIP() << nhvk::cuda_unavailable_reason();
    {
        // a batch whose rows the device cannot keep in a block's shared memory is refused, not launched
        const ChunkRows c = random_rows(64, 11);
        const nhvk::stats::LogBinTable table = LogHistogramSpec{}.table();
        const LogBinner b = LogBinner::make(table);
        const nhvk::stats::BlockPlan P = nhvk::stats::block_plan(view(c, 0, c.n, 10, 3, 7), 1, 24, &b);
        ASSERT_LT(nhvk::cuda_block_batch(P.target_bytes(), P.batch), P.batch);
        std::vector<SeriesPartial> tiles((c.n_series + 30) * P.n_tiles);
        std::vector<std::uint64_t> rows(tiles.size() * b.row_words(), 0u);
        EXPECT_THROW(nhvk::cuda_block_reduce(P, &table, 256, tiles, rows), std::invalid_argument);
    }
    expect_device_equals_twin(one_series({-2.5}), 0, 0, 0, 1, 24, 256, true, "one member");
    expect_device_equals_twin(one_series({1.0, -0.0, 3.0, 0.5, 1e-300}), 0, 0, 0, 4, 24, 256, true,
                              "a chunk smaller than a block");
    expect_device_equals_twin(one_series(std::vector<double>(300, -0.0)), 0, 0, 0, 2, 24, 256, true, "all zero");
    ChunkRows failed = one_series(std::vector<double>(50, 1.0));
    failed.status.assign(50, 1u);
    failed.fail_index.assign(50, 0);
    expect_device_equals_twin(failed, 0, 0, 0, 3, 24, 64, true, "every member failed");
    std::vector<double> binades;
    for (int e = -1022; e <= 1023; ++e) {
        binades.push_back(std::ldexp(1.0 + DBL_EPSILON, e));
        binades.push_back(-std::ldexp(1.0 + DBL_EPSILON, e));
    }
    binades.push_back(std::ldexp(1.0, -1074));
    binades.push_back(-DBL_MAX);
    expect_device_equals_twin(one_series(binades), 0, 0, 0, 3, 24, 256, true, "every binade");
    std::vector<double> across;
    for (int k = -500; k <= 600; ++k) across.push_back(std::ldexp(k, -10));
    expect_device_equals_twin(one_series(across), 0, 0, 0, 5, 24, 256, true, "across zero");
}

} // namespace
