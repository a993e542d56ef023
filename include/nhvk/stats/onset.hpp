// SPDX-License-Identifier: MIT
/** @file
 *  @brief The onset index of a member: the first output time at which its d_q exceeds the threshold (the observer in
 *         nhvk/member.hpp finds it).
 */
#pragma once

#include "nhvk/config.hpp"

#include <cstdint>

namespace nhvk::stats {

/** @brief The onset index of a member whose d_q never exceeded the threshold (or that failed before it did): the one
 *         "never" of the chunk arrays (`ChunkArgs::onset`), the observer and the onset histogram. */
inline constexpr std::int32_t onset_never = -1;

} // namespace nhvk::stats
