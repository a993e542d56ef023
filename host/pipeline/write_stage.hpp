// SPDX-License-Identifier: MIT
/** @file
 *  @brief The write stage: every output file of a run, each written under a temporary name and renamed into place
 *         (`summary.json` last, the marker of a complete run).
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "ensemble.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "pipeline/run_plan.hpp"

namespace nhvk {

/** @brief `path` with this process's temporary suffix. */
std::string temp_name(const std::string& path);

/** @brief A file written under a temporary name and renamed into place by `commit()`; removed otherwise. */
class AtomicFile {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    std::ofstream& stream() { return out_; }
    void commit();

private:
    std::string path_, tmp_;
    std::ofstream out_;
    bool committed_ = false;
};

/** @brief Create `cfg.run.out` and check that it is writable (before any work is done). */
std::filesystem::path prepare_output_folder(const RunConfig& cfg);

/** @brief `samples.csv` (`run.save_samples`): one row per member, chunk by chunk. */
class SamplesWriter {
public:
    SamplesWriter(const RunConfig& cfg, const ChunkLayout& layout, const std::filesystem::path& out_dir);
    /** @brief The rows of a chunk whose member 0 has global index `first` (inputs and metrics on the host). */
    void add_chunk(const ChunkArgs& a, std::uint64_t first, long long m);
    void commit() { file_.commit(); }

private:
    const RunConfig& cfg_;
    ChunkLayout layout_;
    AtomicFile file_;
};

/** @brief `trajectories/trajectory_NNNNNN.csv` for the first `run.save_trajectories` members: their states are
 *         recorded from the chunk's inputs and re-integrated with full states at the end (CPU, same member code). */
class SavedTrajectories {
public:
    SavedTrajectories(const RunConfig& cfg, const RunPlan& plan);
    /** @brief True when a chunk starting at `first` holds members to save (its inputs are needed on the host). */
    bool wants(std::uint64_t first) const;
    void add_chunk(const ChunkArgs& a, std::uint64_t first, long long m);
    void write(const std::filesystem::path& out_dir) const;

private:
    const RunConfig& cfg_;
    const RunPlan& plan_;
    std::vector<std::pair<std::uint64_t, TrajectoryRequest>> requests_;
};

/** @brief `stats.csv` and `summary.json` (last). */
void write_statistics(const RunConfig& cfg, const EnsembleResult& r, const std::filesystem::path& out_dir);

} // namespace nhvk
