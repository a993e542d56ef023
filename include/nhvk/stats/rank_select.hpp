// SPDX-License-Identifier: MIT
/** @file
 *  @brief Order statistics of the values a device keeps for exact quantiles, selected without sorting whole series:
 *         the steps the CUDA backend's selection kernels take (kernels/cuda_backend.cu) and their host twin, so that
 *         the twin's tests referee the device's bookkeeping.
 *
 *  A series' values are its members' metric values, finite (−0 folded to +0) or +inf where the member does not count
 *  (store_chunk_values). For ranks r_1 < … < r_m of one series:
 *   1. the least and greatest finite value (as detail::order_key) over the series;
 *   2. counts of kSelectBuckets equal-width buckets of order_key between them (and one bucket for +inf): the key grows
 *      like the logarithm of the magnitude, so values spread over many decades spread over the buckets too;
 *   3. from the counts, each rank's bucket and its rank inside it (select_plan): only the ranks' buckets are kept;
 *   4. the kept buckets' values gathered, each bucket into its own place (a counter per bucket);
 *   5. the gathered values of a series sorted (a handful of buckets, not the series) and the ranks read off.
 *  Buckets are disjoint intervals of the order, taken in increasing order, so sorting the gathered values puts each
 *  rank at (its bucket's start) + (its rank inside it). Every step moves values, never computes one, so the results
 *  are the ranks' values themselves: those of a full sort, bit for bit, whatever the tiling or the order the gathering
 *  takes them in.
 *
 *  The replica groups' delete-one-group medians (band_select_host) are selected the same way in a row's band, the
 *  values between the row's two order statistics around its median that hold every one of them.
 *
 *  Why: a few ranks of each series are read, and a radix sort of the whole series reads and writes each value on
 *  every one of its digit passes; here each value is read three times and written only where it is near a rank.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/stats/exact_sum.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace nhvk::stats {

/** @brief Buckets of finite values in one series' selection; one more holds +inf. 8192 counts of 32 bits fit a
 *         block's shared memory (32 KiB) with room for several blocks per multiprocessor. */
inline constexpr std::uint32_t kSelectBuckets = 8192;
/** @brief The count arrays' stride per series: the finite buckets and the +inf one. */
inline constexpr std::uint32_t kSelectSlots = kSelectBuckets + 1;
/** @brief A bucket not gathered (select_plan's start) or a rank with no gathered value (its value is +inf). */
inline constexpr std::uint32_t kSelectNone = 0xFFFFFFFFu;

/** @brief The bucket map of one series: finite keys [lo, hi] in buckets of width 2^shift, +inf in the last. */
struct SelectRange {
    std::uint64_t lo = 0;
    int shift = 0;
    std::uint32_t finite_buckets = 0; ///< buckets of finite values (0: the series holds none)

    /** @brief The range of finite keys [lo, hi]; lo > hi (the extremes' initial values) for a series without one. */
    NHVK_HD static SelectRange of(std::uint64_t lo, std::uint64_t hi) {
        SelectRange r;
        if (lo > hi) return r;
        r.lo = lo;
        while (((hi - lo) >> r.shift) >= kSelectBuckets) ++r.shift;
        r.finite_buckets = static_cast<std::uint32_t>((hi - lo) >> r.shift) + 1u;
        return r;
    }
    /** @brief The bucket of a stored value: +inf (the only non-finite value stored) in slot kSelectBuckets. */
    NHVK_HD std::uint32_t bucket(double x) const {
        if (!detail::is_finite(x)) return kSelectBuckets;
        return static_cast<std::uint32_t>((detail::order_key(x) - lo) >> shift);
    }
};

/** @brief The initial extremes of a series (no finite value yet): lo all ones, hi zero. */
inline constexpr std::uint64_t kSelectNoLo = ~std::uint64_t{0};
inline constexpr std::uint64_t kSelectNoHi = 0;

/**
 * @brief Step 3 for one series: from its bucket counts (kSelectSlots of them) and its ranks (ascending, distinct),
 *        start[b] = the offset of bucket b among the series' gathered values, or kSelectNone where no rank falls in
 *        it, and pos[i] = the place of rank i among the gathered values once sorted (kSelectNone: the rank is among
 *        the +inf entries, or beyond the values). Returns how many values are gathered.
 */
NHVK_HD inline std::uint32_t select_plan(const std::uint32_t* count, const std::uint64_t* ranks, std::size_t n_ranks,
                                         std::uint32_t* start, std::uint32_t* pos) {
    for (std::uint32_t b = 0; b < kSelectSlots; ++b) start[b] = kSelectNone;
    std::uint64_t before = 0;
    std::uint32_t b = 0, gathered = 0;
    for (std::size_t i = 0; i < n_ranks; ++i) {
        while (b < kSelectBuckets && before + count[b] <= ranks[i]) before += count[b++];
        if (b == kSelectBuckets) {
            // NOTE: the +inf bucket: every value there is +inf, nothing to gather
            pos[i] = kSelectNone;
            continue;
        }
        if (start[b] == kSelectNone) {
            start[b] = gathered;
            gathered += count[b];
        }
        pos[i] = start[b] + static_cast<std::uint32_t>(ranks[i] - before);
    }
    return gathered;
}

/**
 * @brief The host twin: the ranks of each series of `values` (series s: values[s], finite or +inf) selected by the
 *        device's steps, one thread after another, the gathering taking the values in the order `order` gives
 *        (a permutation of the value indices, or empty: in index order), as the device's atomics may. out[s][i] = the
 *        ranks[s][i]-th smallest value of series s.
 */
inline void select_ranks_host(const std::vector<std::vector<double>>& values,
                              const std::vector<std::vector<std::uint64_t>>& ranks,
                              const std::vector<std::size_t>& order, std::vector<std::vector<double>>& out) {
    if (values.size() != ranks.size()) throw std::invalid_argument("select_ranks_host: one rank list per series");
    out.assign(values.size(), {});
    for (std::size_t s = 0; s < values.size(); ++s) {
        const std::vector<double>& v = values[s];
        const std::vector<std::uint64_t>& r = ranks[s];
        for (std::size_t i = 0; i < r.size(); ++i)
            if (r[i] >= v.size() || (i > 0 && r[i] <= r[i - 1]))
                throw std::invalid_argument("select_ranks_host: ranks must ascend below the series' size");
        if (!order.empty() && order.size() != v.size())
            throw std::invalid_argument("select_ranks_host: the order must permute the values");
        // step 1
        std::uint64_t lo = kSelectNoLo, hi = kSelectNoHi;
        for (const double x : v)
            if (detail::is_finite(x)) {
                lo = std::min(lo, detail::order_key(x));
                hi = std::max(hi, detail::order_key(x));
            }
        const SelectRange range = SelectRange::of(lo, hi);
        // step 2
        std::vector<std::uint32_t> count(kSelectSlots, 0u), start(kSelectSlots), fill(kSelectSlots, 0u);
        for (const double x : v) ++count[range.bucket(x)];
        // step 3
        std::vector<std::uint32_t> pos(r.size());
        const std::uint32_t total = select_plan(count.data(), r.data(), r.size(), start.data(), pos.data());
        // step 4
        std::vector<double> gathered(total);
        for (std::size_t k = 0; k < v.size(); ++k) {
            const double x = v[order.empty() ? k : order[k]];
            const std::uint32_t b = range.bucket(x);
            if (start[b] != kSelectNone) gathered[start[b] + fill[b]++] = x;
        }
        // step 5
        std::sort(gathered.begin(), gathered.end());
        out[s].resize(r.size());
        for (std::size_t i = 0; i < r.size(); ++i)
            out[s][i] = pos[i] == kSelectNone ? detail::infinity() : gathered[pos[i]];
    }
}

/**
 * @brief Each group's order statistics among the other groups, read in a band: from below[g] (g's values under the
 *        band) and the band's values with their groups, sorted by value (ties in any order: equal values are the same
 *        double), out[g][i] = the ranks[g][i]-th smallest value of every group but g (ranks ascending). One walk of the
 *        band per group, skipping its own values, from rank (the others' values under the band). Throws
 *        std::logic_error where a rank's value is not in the band.
 */
inline void band_ranks_among_others(const std::vector<std::uint64_t>& below,
                                    const std::vector<std::pair<double, std::uint32_t>>& sorted_band,
                                    const std::vector<std::vector<std::uint64_t>>& ranks,
                                    std::vector<std::vector<double>>& out) {
    const std::size_t R = below.size();
    if (ranks.size() != R) throw std::invalid_argument("band_ranks_among_others: one rank list per group");
    std::uint64_t below_all = 0u;
    for (const std::uint64_t c : below) below_all += c;
    out.assign(R, {});
    for (std::size_t g = 0; g < R; ++g) {
        const std::vector<std::uint64_t>& want = ranks[g];
        std::uint64_t r = below_all - below[g]; // rank among the others of the band's next value not in g
        std::size_t next = 0;
        for (std::size_t i = 0; i < sorted_band.size() && next < want.size(); ++i) {
            if (sorted_band[i].second == g) continue;
            if (r == want[next]) {
                out[g].push_back(sorted_band[i].first);
                ++next;
            }
            ++r;
        }
        if (next < want.size()) throw std::logic_error("band_select: an order statistic outside the band");
    }
}

/**
 * @brief The host twin of the device's delete-one-group order statistics of one row (the CUDA backend's
 *        band_order_statistics): from each group's kept values group_values[g] (finite, −0 folded to +0, or +inf)
 *        and the band [a, b] (finite), out[g][i] = the ranks[g][i]-th smallest value of every group but g. The steps:
 *        below[g] = g's values under a; the band's values, tagged with their group, sorted by value; then
 *        band_ranks_among_others. Throws std::logic_error where a rank's value is not in the band.
 */
inline void band_select_host(const std::vector<std::vector<double>>& group_values, double a, double b,
                             const std::vector<std::vector<std::uint64_t>>& ranks,
                             std::vector<std::vector<double>>& out) {
    const std::size_t R = group_values.size();
    if (ranks.size() != R) throw std::invalid_argument("band_select_host: one rank list per group");
    std::vector<std::uint64_t> below(R, 0u);
    std::vector<std::pair<double, std::uint32_t>> band;
    for (std::size_t g = 0; g < R; ++g)
        for (const double x : group_values[g]) {
            if (x < a) ++below[g];
            else if (x <= b) band.emplace_back(x, static_cast<std::uint32_t>(g));
        }
    std::stable_sort(band.begin(), band.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    band_ranks_among_others(below, band, ranks, out);
}

} // namespace nhvk::stats
