// SPDX-License-Identifier: MIT
/** @file
 *  @brief The size of each chunk of a run, from the backend's pacing (`ChunkPacing`) and the time per member measured
 *         on the chunks before it. A run's statistics do not depend on its chunks (every draw depends on (seed,
 *         index) alone and every reduction is exact), so the sizes may follow the machine's speed.
 */
#pragma once

#include <algorithm>
#include <cstdint>

#include "nhvk/backend/backend.hpp"

namespace nhvk {

/** @brief Sizes chunks of at most `capacity` members to take about the pacing's target each. */
class ChunkSizer {
public:
    ChunkSizer(const ChunkPacing& p, long long capacity)
        : pacing_(p), capacity_(std::max(1LL, capacity)), least_(std::clamp(p.least, 1LL, capacity_)),
          size_(std::clamp(p.first, least_, capacity_)) {}

    /** @brief Members of the next chunk when `remaining` are left (at least 1 when any are). */
    long long next(std::uint64_t remaining) const {
        return static_cast<long long>(std::min<std::uint64_t>(remaining, static_cast<std::uint64_t>(size_)));
    }
    /** @brief A chunk of `m` members took `seconds` of the backend's (and the host's) time. */
    void observe(long long m, double seconds) {
        if (pacing_.target_seconds <= 0.0 || m <= 0) return;
        // NOTE: growth is at most twofold per chunk: a short chunk's time is mostly what every chunk costs besides
        // its members, so its rate says little about a chunk many times larger; a slow chunk shrinks the next at
        // once, since the target bounds how long a stop request waits.
        const double ideal = seconds > 0.0 ? static_cast<double>(m) * pacing_.target_seconds / seconds : 1e300;
        const double grown = 2.0 * static_cast<double>(std::max(m, size_));
        const double s = std::min({ideal, grown, static_cast<double>(capacity_)});
        size_ = std::max(least_, static_cast<long long>(s));
    }
    long long size() const { return size_; }

private:
    ChunkPacing pacing_;
    long long capacity_, least_, size_;
};

} // namespace nhvk
