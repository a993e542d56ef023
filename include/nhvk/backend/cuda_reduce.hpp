// SPDX-License-Identifier: MIT
/** @file
 *  @brief The device's block reduction and selection run on data held on the host: what tests use to hold the
 *         device's kernels to their host twins (block_reduce_host, select_ranks_host) bit for bit. Defined by the CUDA
 * backend; without it, an error that says why.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nhvk {

// NOTE: declared, not included: the CUDA stub's build (no toolkit) need not reach Thrust through block_reduce.hpp.
namespace stats {
struct BlockPlan;
struct LogBinTable;
struct SeriesPartial;
} // namespace stats

/**
 * @brief The batch of the device's block reduction for targets of `target_bytes` (a row and its replica groups'
 *        accumulators in shared memory): `max_batch`, or as many as fit half of the current device's multiprocessor
 *        (its opt-in limit per block at most), so that two blocks share one; 0 where not one fits. Throws without a
 *        device.
 */
std::size_t cuda_block_batch(std::size_t target_bytes, std::size_t max_batch);

/**
 * @brief Copies the chunk `P.in` describes (its host arrays: the values of P.rows() rows of stride ld, and the
 *        validity, statuses and fail indices of its members where given), `tiles` (n_series·n_tiles partials) and,
 *        when P.with_rows, `rows` (as many tile rows) and the binner's tables from `table` to the current device, runs
 *        the device's block reduction there with `threads` threads a block (a multiple of 32, at most 256), and copies
 *        `tiles` and `rows` back: block_reduce_host(P, tiles, rows, threads)'s results, if the two agree.
 *        Throws without a device, and std::invalid_argument for a batch whose shared memory the device cannot give
 *        a block (P.batch above cuda_block_batch's).
 */
void cuda_block_reduce(const stats::BlockPlan& P, const stats::LogBinTable* table, unsigned threads,
                       std::vector<stats::SeriesPartial>& tiles, std::vector<std::uint64_t>& rows);

/**
 * @brief The device's selection of order statistics (rank_select.hpp) on series held on the host: out[s][i] = the
 *        ranks[s][i]-th smallest of values[s] (finite values, −0 folded to +0, or +inf; ranks ascending and below
 *        the series' size), as the CUDA backend selects its kept values; select_ranks_host's results, if the two
 *        agree. Throws without a device.
 */
void cuda_select_ranks(const std::vector<std::vector<double>>& values,
                       const std::vector<std::vector<std::uint64_t>>& ranks, std::vector<std::vector<double>>& out);

} // namespace nhvk
