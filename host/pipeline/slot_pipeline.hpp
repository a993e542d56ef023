// SPDX-License-Identifier: MIT
/** @file
 *  @brief The chunks of a run in flight: the backend's slots used in turn (the CUDA backend has two, so the host
 *         finishes one chunk while the device runs the next; the CPU backend one), and the host's part of each chunk
 *         (reduce stage, samples.csv, saved trajectories) in the order the chunks were issued.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "nhvk/backend/backend.hpp"
#include "pipeline/chunk_sizer.hpp"
#include "pipeline/members_output.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/write_stage.hpp"

namespace nhvk {

/** @brief A chunk of the run: the members of trajectory indices [first, first + m). */
struct Chunk {
    std::uint64_t first = 0;
    long long m = 0;
};

/** @brief The host's stages of a completed chunk: the reduce stage, the rows of samples.csv (none when `samples`
 *         is null), the records of members.nc (none when `members` is null) and the saved trajectories. */
class HostStages {
public:
    HostStages(ReduceStage& reduce, SamplesWriter* samples, MembersWriter* members, SavedTrajectories& saved)
        : reduce_(reduce), samples_(samples), members_(members), saved_(saved) {}
    /** @brief Stage 3 of chunk `c` issued in slot `s` of `backend`, where the backend reduces (ReduceStage::enqueue).
     */
    void reduce(EnsembleBackend& backend, int s, const Chunk& c) { reduce_.enqueue(backend, s, c.first, c.m); }
    /** @brief The regions of chunk `c` the host needs back. */
    Downloads downloads(const Chunk& c) const;
    /** @brief The host's part of chunk `c`, whose results are in `a`. */
    void add(const ChunkArgs& a, const Chunk& c);

private:
    ReduceStage& reduce_;
    SamplesWriter* samples_;
    MembersWriter* members_;
    SavedTrajectories& saved_;
};

/** @brief The backend's slots of a run, each holding the chunk last issued into it until the host has finished it:
 *         a chunk's host part runs when its slot is needed again or at `finish_all`, so with two slots the host works
 *         on one chunk while the backend runs the next. The order of the host parts is the order of issue. The sizes
 *         of the chunks follow the backend's pacing (ChunkSizer), measured on the chunks finished so far. */
class SlotPipeline {
public:
    /** @brief Chunks of at most `capacity` members. `stop`, when given and non-zero, is a stop request: no chunk is
     *         started after it, so the chunks that finish after it are those in flight when it came (at most one per
     *         slot). `finished`, when given, counts the chunks finished (the stop request's measure of that). */
    SlotPipeline(EnsembleBackend& backend, HostStages& host, Progress& progress, long long capacity,
                 const std::atomic<int>* stop = nullptr, std::atomic<std::uint64_t>* finished = nullptr);
    /** @brief Members of the next chunk to issue when `remaining` are left. */
    long long next_size(std::uint64_t remaining) const { return sizer_.next(remaining); }
    /** @brief Issues `c` into the next slot once the host has finished the chunk that slot held: the backend samples,
     *         integrates, reduces on its side (when it does) and downloads, without waiting. False, and `c` not
     *         started, when a stop request came before it could start. */
    bool issue(const Chunk& c);
    /** @brief The host finishes every chunk still in a slot, the earliest issued first. */
    void finish_all();
    /** @brief Chunks issued so far. */
    int issued() const { return issued_; }
    /** @brief Time the host spent on its part of the chunks. */
    double host_seconds() const { return host_seconds_; }

private:
    struct Slot {
        Chunk chunk;
        bool busy = false;
    };
    EnsembleBackend& backend_;
    HostStages& host_;
    Progress& progress_;
    ChunkSizer sizer_;
    const std::atomic<int>* stop_;
    std::atomic<std::uint64_t>* finished_;
    std::vector<Slot> slots_;
    int issued_ = 0;
    double host_seconds_ = 0.0;
    double backend_seconds_ = 0.0; ///< the backend's stage seconds when the last chunk finished
    void finish(int s);
};

} // namespace nhvk
