// SPDX-License-Identifier: MIT
/** @file
 *  @brief Per-series partial statistics (count, non-finite count, exact Σx and Σx², min, max): trivially
 *         copyable, mergeable exactly, usable on host and device.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/stats/exact_sum.hpp"

#include <cstdint>
#include <type_traits>

namespace nhvk::stats {

/**
 * @brief Running statistics of one series over a set of values.
 *
 * Deterministic: every member is an exact, order-independent function of the multiset of values added (integer
 * counts, exact sums, min/max with −0 folded to +0), so chunking, tiling, thread count and merge order never change
 * a bit.
 */
struct SeriesPartial {
    std::uint64_t count = 0;     ///< finite values added
    std::uint64_t nonfinite = 0; ///< non-finite values rejected
    ExactSum sum;                ///< Σx
    ExactSquareSum sum_sq;       ///< Σx², exactly (no rounding of the squares)
    double min = 0.0;            ///< meaningful only when count > 0
    double max = 0.0;            ///< meaningful only when count > 0

    /** @brief Adds one value; a non-finite value only increments nonfinite. */
    NHVK_HD void add(double x) {
        const detail::Decoded d = detail::decode(x);
        if (!d.finite) {
            ++nonfinite;
            return;
        }
        x = x == 0.0 ? 0.0 : x; // −0 → +0: min/max must not depend on which zero came first
        if (count == 0u) {
            min = x;
            max = x;
        } else {
            min = x < min ? x : min;
            max = x > max ? x : max;
        }
        ++count;
        sum.add(d);
        sum_sq.add(d);
    }

    /** @brief Adds the values of another partial (exact). */
    NHVK_HD void merge(const SeriesPartial& other) {
        if (other.count != 0u) {
            if (count == 0u) {
                min = other.min;
                max = other.max;
            } else {
                min = other.min < min ? other.min : min;
                max = other.max > max ? other.max : max;
            }
        }
        count += other.count;
        nonfinite += other.nonfinite;
        sum.merge(other.sum);
        sum_sq.merge(other.sum_sq);
    }

    /** @brief Same count, non-finite count, exact sums, min and max (bitwise). */
    NHVK_HD friend bool operator==(const SeriesPartial& a, const SeriesPartial& b) {
        return a.count == b.count && a.nonfinite == b.nonfinite && a.sum == b.sum && a.sum_sq == b.sum_sq &&
               (a.count == 0u || (detail::double_bits(a.min) == detail::double_bits(b.min) &&
                                  detail::double_bits(a.max) == detail::double_bits(b.max)));
    }
};

static_assert(std::is_trivially_copyable_v<SeriesPartial>, "SeriesPartial must be trivially copyable");

} // namespace nhvk::stats
