// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CPU backend with a watch on its chunks: it integrates a chunk in batches of members (sized to take
 *         about a quarter of a second), reports the members done after each batch, and gives up the chunk when asked
 *         to stop. The results do not depend on the batches (each member writes only its own column).
 */
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "nhvk/backend/backend.hpp"

namespace nhvk {

struct ChunkWatch {
    std::function<void(long long members_done)> progress; ///< called in the calling thread after each batch
    const std::atomic<int>* stop = nullptr;               ///< non-zero: leave the chunk unfinished
    bool* cut = nullptr; ///< set after each `integrate`: true when it left the chunk unfinished
};

std::unique_ptr<EnsembleBackend> make_cpu_backend(const ChunkLayout& layout, const ChunkCommon& common, int threads,
                                                  ChunkWatch watch);

} // namespace nhvk
