// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk run`: sample the ensemble chunk by chunk, integrate both dynamics on a backend, reduce the divergence
 *         into statistics as the chunks come back, write the outputs atomically.
 */
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "config.hpp"
#include "pipeline/ensemble_result.hpp"
#include "pipeline/resume_record.hpp"

namespace nhvk {

/** @brief Command-line switches of `nhvk run` that are not config keys. */
struct EnsembleOptions {
    bool quiet = false;   ///< no progress on stderr, no human summary
    bool progress = true; ///< progress on stderr: a redrawn line on a terminal, else a line every progress_seconds
    double progress_seconds = 5.0;    ///< between progress lines when stderr is not a terminal
    double checkpoint_seconds = 60.0; ///< between resume records (0: after every chunk)
    bool sharded = false;             ///< `--shard` given: also write `partial.nhvk` for `nhvk merge`
    int shard_index = 0, shard_count = 1;
    bool resume = false;     ///< `--resume`: go on from the folder's resume record, if any
    std::string config_text; ///< the config file's text, `--set`s and options (kept in partial states)
    std::vector<std::string> sets;
    std::vector<OptionOverride> options;
    std::string command_line; ///< as typed, for "resume with: … --resume"
};

/** @brief Another rank failed before the run began (rank 0 claiming the folder, or a rank whose resume record was
 *         refused): that rank says why and ends with its exit code; this one ends quietly. */
struct RootFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief The run stopped at a chunk boundary on a signal and left a resume record (exit code 128 + signal). */
struct Interrupted : std::runtime_error {
    int signal;
    Interrupted(const std::string& what, int sig) : std::runtime_error(what), signal(sig) {}
};

/** @brief True when `cfg`'s run integrates on the CUDA backend: `run.backend = "cuda"`, or `"auto"` with the
 *         generated equations and a device present. */
bool runs_on_device(const RunConfig& cfg);

/** @brief Why `cfg` cannot run as one job over several MPI ranks, or empty when it can (a usage error, to be said
 *         before any work). */
std::string parallel_run_problem(const RunConfig& cfg);

/** @brief Run the ensemble of `cfg` and write its outputs into `cfg.run.out`, claimed for the run and committed at
 *         the end (pipeline/output_folder.hpp). Throws on I/O or backend errors, `FolderBusy` when another run holds
 *         the folder; no output file is left half-written. */
EnsembleResult run_ensemble(const RunConfig& cfg, const EnsembleOptions& opt);

} // namespace nhvk
