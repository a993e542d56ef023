// SPDX-License-Identifier: MIT
/** @file
 *  @brief The reduce stage: per-member statuses counted, the onset histogram, and the per-time statistics, either on
 *         the host from the values (exact quantiles) or on the backend (histogram quantiles: only the partials of
 *         each series come back). Every reduction is exact, so the statistics do not depend on where they ran.
 */
#pragma once

#include "config.hpp"
#include "ensemble.hpp"
#include "nhvk/backend/backend.hpp"
#include "pipeline/partial_state.hpp"
#include "stats/ensemble_stats.hpp"

namespace nhvk {

class ReduceStage {
public:
    /** @brief Statistics of `cfg`'s run into `r` (its counts, onset histogram and, at `finish`, its series). */
    ReduceStage(const RunConfig& cfg, EnsembleResult& r);
    /** @brief True when the statistics need every value on the host (exact quantiles within `run.exact_memory_mb`). */
    bool on_host() const { return acc_.exact(); }
    /** @brief Prepares the backend's running statistics when they are kept there. */
    void start(EnsembleBackend& backend);
    /** @brief Counts the statuses and onsets of a completed chunk (on the host), and adds its metrics when
     *         `on_host()`. */
    void add_chunk(const ChunkArgs& a, long long m);
    /** @brief The statistics so far (after every slot completed), the backend's included, as bytes
     *         (stats::EnsembleAccumulator::save); the stage goes on unchanged. */
    std::string snapshot(EnsembleBackend& backend) const;
    /** @brief Replaces the host's statistics with a snapshot (resume); `what` names the source in errors. */
    void restore(const std::string& bytes, const std::string& what);
    /** @brief Adds a snapshot of another part of the run (exact). */
    void merge(const std::string& bytes, const std::string& what);
    /** @brief Adds another part of the run (an MPI rank's, a shard's): its counts, its statistics (exact) and its
     *         stage times (summed: the parts ran side by side). */
    void add_part(const PartialState& part, const std::string& what);
    /** @brief Moves the backend's running statistics into the host's (once, after every slot completed). */
    void collect(EnsembleBackend& backend);
    /** @brief Final summaries and growth exponents (call `collect` first when a backend kept statistics). */
    void finish();

private:
    const RunConfig& cfg_;
    EnsembleResult& r_;
    stats::EnsembleAccumulator acc_;
    std::vector<std::uint8_t> onset_in_; ///< per member: enters the onset histogram
    bool collected_ = false;
};

} // namespace nhvk
