// SPDX-License-Identifier: MIT
/** @file
 *  @brief The reduction's view of one chunk's metrics (`ChunkArgs`), the same on the host and on the device: which
 *         series of which member enter the statistics (the per-time population, the per-member onset time).
 */
#pragma once

#include "nhvk/ensemble_chunk.hpp"
#include "nhvk/stats/chunk_reduce.hpp"

namespace nhvk::stats {

/**
 * @brief The population rule of the per-time statistics, the one view every backend and both quantile modes reduce
 *        through: the `metric_rows(nt)` series of the first `m` members of chunk `a` (pointers as `a`'s: host or
 *        device). A failed member counts at the output times it reached when `a.alive_population`, nowhere
 *        otherwise; the onset time counts where it is not NaN.
 *
 * NOTE: no separate validity array: a member the sampler could not place is marked by `run_chunk_member` itself
 * (status non_finite, fail_index −1, onset time NaN), so it counts nowhere under either population, on the host and
 * on the device alike, from the chunk's own arrays.
 */
inline ChunkView metrics_view(const ChunkArgs& a, long long m) {
    ChunkView in;
    in.values = a.metrics;
    in.chunk = static_cast<std::size_t>(m);
    in.ld = static_cast<std::size_t>(a.ld);
    in.status = a.status;
    in.nt = static_cast<std::size_t>(a.nt);
    in.base_series = static_cast<std::size_t>(metric_rows(a.nt));
    in.timed_series = static_cast<std::size_t>(metric_count) * static_cast<std::size_t>(a.nt);
    in.replicas = a.replicas > 1 ? static_cast<std::size_t>(a.replicas) : 0u;
    in.replicated = in.replicas > 0u ? replicated_rows(a.nt) : 0u;
    in.first_member = a.first_member;
    in.n_series = in.base_series + in.replicas * in.replicated;
    in.fail_index = a.alive_population ? a.fail_index : nullptr;
    return in;
}

} // namespace nhvk::stats
