// SPDX-License-Identifier: MIT
/** @file
 *  @brief The per-chunk reduction of the ensemble statistics, written once with Thrust and templated on the
 *         execution policy: thrust::omp::par / thrust::cpp::par on host memory, thrust::cuda::par.on(stream) on
 *         device memory.
 *
 *  Work decomposition: item (s, t) of n_series × n_tiles reduces trajectories j ≡ t (mod n_tiles) of series s into
 *  its own SeriesPartial and its own histogram row (no atomics, no shared output: one thread updates an item's row
 *  sequentially, so the move of a store's window needs no atomics either). A replica group's series visits its own
 *  members, every R-th, over about n_tiles/R tiles, the R groups of a row in neighbouring items. The strided split
 *  keeps a warp's reads coalesced on the GPU; on the host, n_tiles = 1 gives one sequential pass per series. All
 *  reductions here are deterministic: they only add integers and exact sums, so the result does not depend on
 *  n_tiles, on the policy or on the number of threads.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/stats/exact_sum.hpp"
#include "nhvk/stats/log_histogram.hpp"
#include "nhvk/stats/series_partial.hpp"

#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstddef>
#include <cstdint>

namespace nhvk::stats {

/** @brief One chunk of ensemble output: value of series s for trajectory j is values[s·ld + j]. */
struct ChunkView {
    const double* values = nullptr;      ///< n_series rows of stride ld
    std::size_t chunk = 0;               ///< trajectories in this chunk
    std::size_t ld = 0;                  ///< row stride (>= chunk)
    const std::uint8_t* valid = nullptr; ///< valid[j] != 0: include trajectory j; nullptr: all valid
    std::size_t n_series = 0;
    const std::uint8_t* status = nullptr; ///< status[j] != 0 (a failed member): see fail_index; nullptr: none failed
    /** Per-time statistics over the members alive at each time: series s of a failed member j counts while its time
     *  index s mod nt is below fail_index[j] (the output times it reached). nullptr: a failed member counts nowhere
     *  (the survivors-only view). */
    const std::int32_t* fail_index = nullptr;
    std::size_t nt = 1;                                      ///< output times (series s is at time index s mod nt)
    std::size_t timed_series = static_cast<std::size_t>(-1); ///< series >= this are per-member (NaN: no value)
    /** Replica groups: series base_series + r·replicated + s0 (r < replicas, s0 < replicated) is row s0 over the
     *  members whose run-wide index first_member + j is r modulo `replicas`. 0 replicas: every series is its row. */
    std::size_t base_series = static_cast<std::size_t>(-1);
    std::size_t replicated = 0;
    std::size_t replicas = 0;
    std::uint64_t first_member = 0; ///< the run-wide index of trajectory 0 of this chunk
    /** @brief The row that series s reads. */
    NHVK_HD std::size_t source(std::size_t s) const { return s < base_series ? s : (s - base_series) % replicated; }
    /** @brief The values of series s: trajectory j's is row(s)[j]. */
    NHVK_HD const double* row(std::size_t s) const { return values + source(s) * ld; }
    /** @brief The members series s can include are j = first_in_group(s) + k·group_stride(s), k = 0, 1, …: every
     *         member for a series that is not a replica's, every `replicas`-th for a group's (so a reduction reads
     *         1/replicas of the row for it, not the whole row). */
    NHVK_HD std::size_t group_stride(std::size_t s) const { return s < base_series ? 1u : replicas; }
    NHVK_HD std::size_t first_in_group(std::size_t s) const {
        if (s < base_series) return 0u;
        const std::size_t g = (s - base_series) / replicated, f = static_cast<std::size_t>(first_member % replicas);
        return (g + replicas - f) % replicas;
    }
    /** @brief Is trajectory j in the group of series s (every trajectory is, for a series that is not a replica's)? */
    NHVK_HD bool in_group(std::size_t j, std::size_t s) const {
        return s < base_series || (first_member + j) % replicas == (s - base_series) / replicated;
    }
    /** @brief How many output times trajectory j counts at: all nt when it is valid and did not fail; the times a
     *  failed member reached when fail_index is given; none otherwise (may be negative: none). */
    NHVK_HD long long times_counted(std::size_t j) const {
        if (valid != nullptr && valid[j] == 0u) return 0;
        if (status == nullptr || status[j] == 0u) return static_cast<long long>(nt);
        return fail_index != nullptr ? static_cast<long long>(fail_index[j]) : 0;
    }
    /** @brief Does series s of trajectory j, with value x, enter the statistics? */
    NHVK_HD bool included(std::size_t j, std::size_t s, double x) const {
        if (!in_group(j, s)) return false;
        s = source(s);
        if (s < timed_series) return static_cast<long long>(s % nt) < times_counted(j);
        if (valid != nullptr && valid[j] == 0u) return false;
        return x == x && (status == nullptr || status[j] == 0u || fail_index != nullptr);
    }
};

namespace detail {

/** @brief How many tiles a replica group's series is reduced in: about 1/replicas of a row's, so that a group's
 *         tile sees as many members per chunk as a row's (each tile loads and stores its partial once per chunk). */
NHVK_HD inline std::size_t group_tiles(const ChunkView& in, std::size_t n_tiles) {
    if (in.replicas == 0u) return n_tiles;
    const std::size_t t = n_tiles / in.replicas;
    return t > 0u ? t : 1u;
}

/** @brief The series that come before the replica groups' (all of them without groups). */
NHVK_HD inline std::size_t ungrouped_series(const ChunkView& in) {
    return in.replicas == 0u || in.base_series + in.replicas * in.replicated != in.n_series ? in.n_series
                                                                                            : in.base_series;
}

struct AccumulateTile {
    ChunkView in;
    LogBinner binner;
    std::size_t n_tiles;
    std::size_t g_tiles; // group_tiles(in, n_tiles)
    SeriesPartial* partials;
    std::uint64_t* counts; // nullptr: no histogram

    NHVK_HD void operator()(std::size_t item) const {
        const std::size_t base = ungrouped_series(in);
        std::size_t s = 0, t = 0, tiles = n_tiles;
        if (item < base * n_tiles) {
            s = item / n_tiles;
            t = item % n_tiles;
        } else {
            // NOTE: a row's R groups side by side, then their tiles: group g's members are R apart, so the R
            // neighbouring items read R neighbouring members (coalesced on the GPU); a group has g_tiles tiles, its
            // others stay empty
            const std::size_t q = item - base * n_tiles, R = in.replicas;
            const std::size_t g = q % R, s0 = q / (R * g_tiles);
            t = (q / R) % g_tiles;
            s = base + g * in.replicated + s0;
            tiles = g_tiles;
        }
        const std::size_t at = s * n_tiles + t;
        const double* row = in.row(s);
        std::uint64_t* hist = counts == nullptr ? nullptr : counts + at * binner.row_words();
        SeriesPartial p = partials[at];
        // NOTE: a replica group's series visits only its own members (every replicas-th), split over its tiles
        const std::size_t stride = in.group_stride(s), step = stride * tiles;
        for (std::size_t j = in.first_in_group(s) + t * stride; j < in.chunk; j += step) {
            const double x = row[j];
            if (!in.included(j, s, x)) {
                continue;
            }
            p.add(x);
            if (hist != nullptr && is_finite(x)) {
                binner.add(hist, x);
            }
        }
        partials[at] = p;
    }
};

struct CombinePartials {
    std::size_t n_tiles;
    const SeriesPartial* tiles;
    SeriesPartial* out;

    NHVK_HD void operator()(std::size_t s) const {
        SeriesPartial p = out[s];
        for (std::size_t t = 0; t < n_tiles; ++t) {
            p.merge(tiles[s * n_tiles + t]);
        }
        out[s] = p;
    }
};

struct CombineCounts {
    std::size_t n_tiles;
    LogBinner binner;
    const std::uint64_t* tiles;
    std::uint64_t* out;

    NHVK_HD void operator()(std::size_t s) const {
        const std::size_t w = binner.row_words();
        for (std::size_t t = 0; t < n_tiles; ++t) {
            binner.merge(out + s * w, tiles + (s * n_tiles + t) * w);
        }
    }
};

struct CompactRow {
    ChunkView in;
    double* const* out;
    std::size_t* n_out;

    NHVK_HD void operator()(std::size_t s) const {
        const double* row = in.row(s);
        double* dst = out[s];
        std::size_t n = 0;
        for (std::size_t j = 0; j < in.chunk; ++j) {
            if (in.included(j, s, row[j]) && is_finite(row[j])) {
                dst[n++] = row[j] == 0.0 ? 0.0 : row[j];
            }
        }
        n_out[s] = n;
    }
};

/** @brief Item i = (s, j) of n_series × chunk: the value of series s for trajectory j where it enters the statistics,
 *         +inf where it does not (sorted last; the series' exact count says how many values lead). */
struct StoreValue {
    ChunkView in;
    double* out;
    std::size_t capacity;
    std::size_t offset;

    NHVK_HD void operator()(std::size_t i) const {
        const std::size_t s = i / in.chunk;
        const std::size_t j = i % in.chunk;
        const double x = in.row(s)[j];
        const bool keep = in.included(j, s, x) && is_finite(x);
        out[s * capacity + offset + j] = keep ? (x == 0.0 ? 0.0 : x) : __builtin_huge_val();
    }
};

} // namespace detail

/**
 * @brief Adds a chunk into per-(series, tile) partials and, when counts is not null, histogram rows.
 *
 * partials has n_series·n_tiles entries (tile t of series s at s·n_tiles + t), counts has
 * n_series·n_tiles·binner.row_words() entries (row of entry i at i·row_words, see log_histogram.hpp); both are
 * accumulated into, so initialise them once (SeriesPartial{} and zeros) and keep adding chunks. A replica group's
 * series uses only its first detail::group_tiles(in, n_tiles) tiles (the rest stay empty and merge as nothing). All
 * pointers, including binner.edges and binner.start, must be accessible under `policy`. Deterministic.
 */
template <class Policy>
void accumulate_chunk(const Policy& policy, const ChunkView& in, std::size_t n_tiles, SeriesPartial* partials,
                      std::uint64_t* counts, const LogBinner& binner) {
    if (in.n_series == 0u || in.chunk == 0u || n_tiles == 0u) {
        return;
    }
    const std::size_t base = detail::ungrouped_series(in), g_tiles = detail::group_tiles(in, n_tiles);
    const thrust::counting_iterator<std::size_t> first(0);
    thrust::for_each(policy, first, first + base * n_tiles + (in.n_series - base) * g_tiles,
                     detail::AccumulateTile{in, binner, n_tiles, g_tiles, partials, counts});
}

/**
 * @brief Merges the n_tiles tiles of each series into partials[s] and the histogram row of series s in counts
 *        (merged into, not overwritten; outputs must not alias the tiles). One thread per series merges its tiles in
 *        order; the result does not depend on the order anyway. Deterministic.
 */
template <class Policy>
void combine_tiles(const Policy& policy, std::size_t n_series, std::size_t n_tiles, const LogBinner& binner,
                   const SeriesPartial* tile_partials, const std::uint64_t* tile_counts, SeriesPartial* partials,
                   std::uint64_t* counts) {
    const thrust::counting_iterator<std::size_t> first(0);
    thrust::for_each(policy, first, first + n_series, detail::CombinePartials{n_tiles, tile_partials, partials});
    if (tile_counts != nullptr && counts != nullptr) {
        thrust::for_each(policy, first, first + n_series, detail::CombineCounts{n_tiles, binner, tile_counts, counts});
    }
}

/**
 * @brief Compacts every series at once, one sequential pass per series: out[s] (room for in.chunk values) receives
 *        the valid finite values of series s (−0 folded to +0) in trajectory order, n_out[s] their number. Suited to
 *        host policies (one parallel region per chunk; the quantiles are taken on the host). Deterministic.
 */
template <class Policy>
void compact_chunk(const Policy& policy, const ChunkView& in, double* const* out, std::size_t* n_out) {
    const thrust::counting_iterator<std::size_t> first(0);
    thrust::for_each(policy, first, first + in.n_series, detail::CompactRow{in, out, n_out});
}

/**
 * @brief Stores the chunk's values for exact quantiles without compacting: member j's value of series s goes to
 *        out[s·capacity + offset + j] (offset + in.chunk <= capacity), +inf where it does not enter the statistics
 *        (excluded, or not finite). The order of a series' values is irrelevant to its order statistics, and every
 *        real value is finite and −0 is folded to +0, so after sorting the first `count` entries of a series (its
 *        exact partial's count) are exactly its included values: no per-series counter, no atomics, coalesced writes
 *        on the GPU. Deterministic.
 */
template <class Policy>
void store_chunk_values(const Policy& policy, const ChunkView& in, double* out, std::size_t capacity,
                        std::size_t offset) {
    if (in.n_series == 0u || in.chunk == 0u) {
        return;
    }
    const thrust::counting_iterator<std::size_t> first(0);
    thrust::for_each(policy, first, first + in.n_series * in.chunk, detail::StoreValue{in, out, capacity, offset});
}

} // namespace nhvk::stats
