// SPDX-License-Identifier: MIT
/** @file
 *  @brief The host's per-chunk reduction: one pass per series row that adds the row to its SeriesPartial (with the
 *         exact sums gathered per binade first), to its histogram row, and copies its included values out for exact
 *         quantiles. Host only (uses unsigned __int128); the device keeps chunk_reduce.hpp's per-value path.
 *
 *  Why per binade: SeriesPartial::add puts every value into the 67- and 134-limb fixed-point sums (eight limb
 *  updates, a 106-bit square and a normalisation counter per value). A row's values fall in few binades, so here a
 *  value only adds its 53-bit significand and the significand's square to 128-bit integers indexed by its exponent,
 *  and each binade's total goes into the fixed-point sums once per row. Both are exact integer sums, so the partial
 *  is the same exact Σx and Σx² as value by value (SeriesPartial's operator== holds; the limbs are left normalised).
 */
#pragma once

#include "nhvk/stats/chunk_reduce.hpp"
#include "nhvk/stats/exact_sum.hpp"
#include "nhvk/stats/log_histogram.hpp"
#include "nhvk/stats/series_partial.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nhvk::stats {

#if defined(__SIZEOF_INT128__) && !defined(__CUDA_ARCH__)

/**
 * @brief Exact Σx and Σx² of a stream of finite doubles, kept per binade p (x = ±m·2^(p − 1074), see
 *        detail::decode) as 128-bit integers, and moved into an ExactSum and ExactSquareSum by flush().
 */
class BinadeSums {
public:
    using U128 = detail::U128;
    static constexpr int kBinades = 2046; ///< p ∈ [0, 2045]
    /// m² < 2^106, so a binade's Σm² fits 128 bits for 2^22 values: flush() at least every kFlushEvery additions.
    static constexpr std::size_t kFlushEvery = std::size_t{1} << 21;

    /**
     * @brief Adds the finite values x = row[j] for which `counts(j, x)` holds, j ∈ [j0, j1) (at most kFlushEvery of
     *        them), −0 folded to +0: their significands go to the binade sums, and the caller's count, non-finite
     *        count, min and max are updated; when `out` is not null the finite ones are written to out[n++]. Returns n.
     */
    template <class Counts>
    std::size_t add_values(const double* row, std::size_t j0, std::size_t j1, Counts counts, std::uint64_t& count,
                           std::uint64_t& nonfinite, double& min, double& max, std::uint64_t* hist,
                           const LogBinner& binner, double* out, std::size_t n) {
        // NOTE: one loop per combination of a histogram and an output, so that the loop tests neither per value
        if (hist != nullptr)
            return out != nullptr
                       ? add<true, true>(row, j0, j1, counts, count, nonfinite, min, max, hist, binner, out, n)
                       : add<true, false>(row, j0, j1, counts, count, nonfinite, min, max, hist, binner, out, n);
        return out != nullptr
                   ? add<false, true>(row, j0, j1, counts, count, nonfinite, min, max, hist, binner, out, n)
                   : add<false, false>(row, j0, j1, counts, count, nonfinite, min, max, hist, binner, out, n);
    }

    /** @brief Adds every binade's totals to `sum` and `sum_sq` (exactly) and empties this. */
    void flush(ExactSum& sum, ExactSquareSum& sum_sq) {
        for (int p = lo_; p <= hi_; ++p) {
            if (sig_[p] != 0u) sum.add_scaled(sig_[p], p, false);
            if (sig_[kBinades + p] != 0u) sum.add_scaled(sig_[kBinades + p], p, true);
            if (sq_[p] != 0u) sum_sq.add_scaled(sq_[p], 2 * p);
            sig_[p] = sig_[kBinades + p] = sq_[p] = 0u;
        }
        lo_ = kBinades;
        hi_ = -1;
    }

private:
    template <bool kHist, bool kOut, class Counts>
    std::size_t add(const double* row, std::size_t j0, std::size_t j1, Counts counts, std::uint64_t& count,
                    std::uint64_t& nonfinite, double& min, double& max, std::uint64_t* hist, const LogBinner& binner,
                    double* out, std::size_t n) {
        // NOTE: everything the loop updates is a local, so that it stays in registers at any optimisation level
        int lo = lo_, hi = hi_;
        double vmin = min, vmax = max;
        std::uint64_t c = count, bad = nonfinite;
        // NOTE: the positive and the negative significands in sums of their own: a 64-bit significand then adds to
        // an unsigned 128-bit sum in two instructions, where a signed one needs its sign spread over 128 bits first
        // (and a branch on the sign mispredicts on signed rows). The table is indexed by p + sign·kBinades.
        U128* const s1 = sig_;
        U128* const s2 = sq_;
        for (std::size_t j = j0; j < j1; ++j) {
            const double x = row[j] + 0.0; // −0 + 0 = +0; every other value unchanged
            if (!counts(j, x)) continue;
            const detail::Decoded d = detail::decode(x);
            if (!d.finite) {
                ++bad;
                continue;
            }
            vmin = x < vmin ? x : vmin;
            vmax = x > vmax ? x : vmax;
            ++c;
            s1[d.p + kBinades * static_cast<int>(d.negative)] += d.m;
            s2[d.p] += static_cast<U128>(d.m) * d.m;
            lo = d.p < lo ? d.p : lo;
            hi = d.p > hi ? d.p : hi;
            if constexpr (kHist) binner.add(hist, x);
            if constexpr (kOut) out[n++] = x;
        }
        lo_ = lo;
        hi_ = hi;
        min = vmin;
        max = vmax;
        count = c;
        nonfinite = bad;
        return n;
    }

    // sig_[p] and sig_[kBinades + p]: Σm of the positive and the negative values of binade p
    U128 sig_[2 * kBinades] = {};
    U128 sq_[kBinades] = {};
    int lo_ = kBinades;
    int hi_ = -1;
};

/**
 * @brief Adds the values x = row[j] of one series for which `counts(j, x)` holds to `partial` and, when `hist` is not
 *        null, to its histogram row; when `out` is not null, writes those of them that are finite (−0 folded to +0)
 *        there in trajectory order and returns their number. The statistics of detail::AccumulateTile and
 *        detail::CompactRow for that row, in one pass. `sums` is scratch (empty on entry and on return).
 */
template <class Counts>
std::size_t reduce_row_host(const double* row, std::size_t chunk, Counts counts, SeriesPartial& partial,
                            std::uint64_t* hist, const LogBinner& binner, double* out, BinadeSums& sums) {
    // NOTE: the row's own partial is merged at the end, so that SeriesPartial::merge keeps the min/max rule in one
    // place; min and max start at ±inf so that the loop has no first-value branch.
    SeriesPartial here;
    here.min = __builtin_huge_val();
    here.max = -__builtin_huge_val();
    std::size_t n = 0;
    for (std::size_t j0 = 0; j0 < chunk; j0 += BinadeSums::kFlushEvery) {
        const std::size_t j1 = chunk - j0 < BinadeSums::kFlushEvery ? chunk : j0 + BinadeSums::kFlushEvery;
        n = sums.add_values(row, j0, j1, counts, here.count, here.nonfinite, here.min, here.max, hist, binner, out, n);
        sums.flush(here.sum, here.sum_sq);
    }
    partial.merge(here);
    return n;
}

/**
 * @brief Series s of a chunk (neither a replica group's nor a replicated row: reduce_replicated_row_host reduces
 *        those) through reduce_row_host with the chunk's population rule (ChunkView::included). `times_counted`,
 *        when not null, holds in.times_counted(j) for every member (computed once per chunk); `all_counted` says that
 *        every member counts at every output time.
 */
inline std::size_t reduce_series_host(const ChunkView& in, std::size_t s, const std::int32_t* times_counted,
                                      bool all_counted, SeriesPartial& partial, std::uint64_t* hist,
                                      const LogBinner& binner, double* out, BinadeSums& sums) {
    const double* row = in.row(s);
    if (s >= in.timed_series || times_counted == nullptr) {
        return reduce_row_host(
            row, in.chunk, [&in, s](std::size_t j, double x) { return in.included(j, s, x); }, partial, hist, binner,
            out, sums);
    }
    if (all_counted) {
        return reduce_row_host(
            row, in.chunk, [](std::size_t, double) { return true; }, partial, hist, binner, out, sums);
    }
    const auto t = static_cast<std::int32_t>(s % in.nt);
    return reduce_row_host(
        row, in.chunk, [times_counted, t](std::size_t j, double) { return t < times_counted[j]; }, partial, hist,
        binner, out, sums);
}

/**
 * @brief Replicated row s0 < in.replicated and its in.replicas groups (series in.base_series + g·in.replicated + s0),
 *        in one pass over the row: each group's series as reduce_series_host would reduce it (partials[s], the
 *        histogram row at hist[s·row_words]; hist may be null), and series s0 as the union of its groups, which it
 *        is under ChunkView::included: its partial is the merge of the groups' (the same exact sums), its histogram row
 *        is binned from the same values. When `out` is not null the kept values go to out[s0] group by group (group
 *        0's first, each in trajectory order), their number to n_out[s0] and each group's to n_out of its series.
 */
inline void reduce_replicated_row_host(const ChunkView& in, std::size_t s0, const std::int32_t* times_counted,
                                       SeriesPartial* partials, std::uint64_t* hist, const LogBinner& binner,
                                       double* const* out, std::size_t* n_out, BinadeSums& sums) {
    const std::size_t R = in.replicas;
    const auto series = [&](std::size_t g) { return in.base_series + g * in.replicated + s0; };
    // NOTE: the R groups in one pass over the row: a group's every R-th member sits on another cache line, so
    // gathering the groups one by one would read the whole row R times
    thread_local std::vector<std::vector<double>> groups;
    groups.resize(R);
    for (std::vector<double>& v : groups) v.clear();
    const double* row = in.row(s0);
    const bool timed = s0 < in.timed_series && times_counted != nullptr;
    const auto t = static_cast<std::int32_t>(s0 % in.nt);
    auto g = static_cast<std::size_t>(in.first_member % R); // the group of member j: (first_member + j) mod R
    for (std::size_t j = 0; j < in.chunk; ++j) {
        const double x = row[j];
        if (timed ? t < times_counted[j] : in.included(j, series(g), x)) groups[g].push_back(x);
        g = g + 1u == R ? 0u : g + 1u;
    }
    std::uint64_t* const base_hist = hist != nullptr ? hist + s0 * binner.row_words() : nullptr;
    double* const kept = out != nullptr ? out[s0] : nullptr;
    std::size_t n = 0;
    for (g = 0; g < R; ++g) {
        const std::size_t s = series(g);
        SeriesPartial here;
        const std::size_t k = reduce_row_host(
            groups[g].data(), groups[g].size(), [](std::size_t, double) { return true; }, here,
            hist != nullptr ? hist + s * binner.row_words() : nullptr, binner, kept != nullptr ? kept + n : nullptr,
            sums);
        partials[s].merge(here);
        partials[s0].merge(here);
        if (base_hist != nullptr)
            for (const double x : groups[g])
                if (detail::is_finite(x)) binner.add(base_hist, x + 0.0); // as reduce_row_host bins: −0 folded to +0
        if (n_out != nullptr) n_out[s] = k;
        n += k;
    }
    if (n_out != nullptr) n_out[s0] = n;
}

#endif // __SIZEOF_INT128__

} // namespace nhvk::stats
