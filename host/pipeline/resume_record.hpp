// SPDX-License-Identifier: MIT
/** @file
 *  @brief The resume records of `nhvk run` (README "Many processes, shards and resume"): each process's partial
 *         state in the output folder, written atomically at checkpoints and when the run stops, read back and checked
 *         by `--resume`, removed once the run's outputs are committed.
 */
#pragma once

#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "pipeline/partial_state.hpp"

namespace nhvk {

/** @brief `--resume` refused: the folder's resume record belongs to another configuration or split (exit code 2). */
struct ResumeRefused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief The refusal of a resume whose record, or the samples kept for it, cannot be used as they are. */
ResumeRefused unusable_resume(const std::exception& e);

/** @brief `[first, end)`, as messages write a range of trajectory indices. */
std::string range_text(IndexRange r);

/** @brief The resume record of one process of a run (rank `rank` of `ranks`) in the output folder `dir`. */
class ResumeRecord {
public:
    ResumeRecord(const std::filesystem::path& dir, int rank, int ranks);

    /** @brief The record's file name: `resume.nhvk`, or `resume.rank<r>-of-<R>.nhvk` in a run of several ranks. */
    static std::string name(int rank, int ranks);
    /** @brief Rank 0, holding the folder: removes the temporaries of records a killed process was writing; a new run
     *         (no --resume) removes every earlier record and the rows kept for it, and says so in one line; a resumed
     *         run refuses records of another number of ranks when none of its own is there. */
    static void tidy(const std::filesystem::path& dir, bool resume, int ranks);

    const std::filesystem::path& path() const { return path_; }
    /** @brief The record to go on from, checked to be of this run (`id`) and of the same split (`range`, the shard,
     *         the number of ranks); none when the folder holds no record of this process. Throws `ResumeRefused`
     *         when the record cannot be read or belongs to another run or split (everything is left as it is). */
    std::optional<PartialState> read(const RunIdentity& id, const ConfigSource& source, IndexRange range,
                                     int shard_index, int shard_count);
    /** @brief Writes `state` as the record, atomically. */
    void write(const PartialState& state);
    /** @brief True when a record of this run exists: written by it, or the one it resumed from. */
    bool exists() const { return exists_; }

private:
    std::filesystem::path path_;
    int ranks_;
    bool exists_ = false;
};

} // namespace nhvk
