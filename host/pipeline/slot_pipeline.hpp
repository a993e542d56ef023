// SPDX-License-Identifier: MIT
/** @file
 *  @brief The chunks of a run in flight: the backend's slots used in turn (the CUDA backend has two, so the host
 *         finishes one chunk while the device runs the next; the CPU backend one), and the host's part of each chunk
 *         (reduce stage, samples.csv, saved trajectories) in the order the chunks were issued.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "nhvk/backend/backend.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/write_stage.hpp"

namespace nhvk {

/** @brief A chunk of the run: the members of trajectory indices [first, first + m). */
struct Chunk {
    std::uint64_t first = 0;
    long long m = 0;
};

/** @brief The host's stages of a completed chunk: the reduce stage, and the rows of samples.csv (none when `samples`
 *         is null) and of the saved trajectories. */
class HostStages {
public:
    HostStages(ReduceStage& reduce, SamplesWriter* samples, SavedTrajectories& saved)
        : reduce_(reduce), samples_(samples), saved_(saved) {}
    /** @brief True when the backend reduces each chunk on its side (only its partials come back). */
    bool reduce_on_backend() const { return !reduce_.on_host(); }
    /** @brief The regions of chunk `c` the host needs back. */
    Downloads downloads(const Chunk& c) const;
    /** @brief The host's part of chunk `c`, whose results are in `a`. */
    void add(const ChunkArgs& a, const Chunk& c);

private:
    ReduceStage& reduce_;
    SamplesWriter* samples_;
    SavedTrajectories& saved_;
};

/** @brief The backend's slots of a run, each holding the chunk last issued into it until the host has finished it:
 *         a chunk's host part runs when its slot is needed again or at `finish_all`, so with two slots the host works
 *         on one chunk while the backend runs the next. The order of the host parts is the order of issue. */
class SlotPipeline {
public:
    /** @brief `cut` is the flag the CPU backend sets when it gave up a chunk on a stop request (ChunkWatch::cut). */
    SlotPipeline(EnsembleBackend& backend, HostStages& host, Progress& progress, const bool& cut);
    /** @brief Issues `c` into the next slot once the host has finished the chunk that slot held: the backend samples,
     *         integrates, reduces on its side (when it does) and downloads, without waiting. False when the backend
     *         gave the chunk up on a stop request: it is not counted (a resume redoes it). */
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
    const bool& cut_;
    std::vector<Slot> slots_;
    int issued_ = 0;
    double host_seconds_ = 0.0;
    void finish(int s);
};

} // namespace nhvk
