// SPDX-License-Identifier: MIT
/** @file
 *  @brief Onset index of a divergence series: the first output time at which d_q exceeds a threshold.
 */
#pragma once

#include "nhvk/config.hpp"

#include <cstddef>
#include <cstdint>

namespace nhvk::stats {

/** @brief Onset index meaning "never exceeded the threshold". */
inline constexpr std::uint32_t kOnsetNever = 0xFFFFFFFFu;

/** @brief First i < n_times with dq[i·stride] > threshold, or kOnsetNever (a NaN never exceeds). */
NHVK_HD inline std::uint32_t onset_index(const double *dq, std::size_t n_times, std::size_t stride, double threshold) {
    for (std::size_t i = 0; i < n_times; ++i) {
        if (dq[i * stride] > threshold) {
            return static_cast<std::uint32_t>(i);
        }
    }
    return kOnsetNever;
}

} // namespace nhvk::stats
