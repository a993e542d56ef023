// SPDX-License-Identifier: MIT
/** @file
 *  @brief The write stage: every output file of a run, written as a temporary of the run's claimed output folder and
 *         moved into place with the others at the end (`summary.json` last, the marker of a complete run).
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "pipeline/ensemble_result.hpp"
#include "pipeline/output_folder.hpp"
#include "pipeline/run_plan.hpp"

namespace nhvk {

/** @brief The outputs a run of `cfg` writes into its folder, relative (a folder with a trailing `/`), in the order
 *         a user reads them; a `--shard` run adds partial.nhvk. */
std::vector<std::string> run_output_names(const RunConfig& cfg);

/** @brief Create and claim `cfg.run.out` for this run's outputs (pipeline/output_folder.hpp), before any work; `key`
 *         names the setting in errors (`run.out` for a run, `--out` for a merge). */
std::unique_ptr<OutputFolder> claim_output_folder(const RunConfig& cfg, bool partial_state = false,
                                                  const std::string& key = "run.out");

/** @brief `partial.nhvk` (a `--shard` run's mergeable state, pipeline/partial_state.hpp) among the outputs. */
void write_partial_state(const std::string& bytes, OutputFolder& out);

/** @brief `samples.csv` (`run.save_samples`): one row per member, chunk by chunk, into a resumable output (its
 *         first `keep_bytes` bytes are a resumed run's rows so far; 0: a new file with its header). */
class SamplesWriter {
public:
    /** @brief `keep_rows`: the rows those bytes hold (a resumed run's trajectories so far), checked with the header. */
    SamplesWriter(const RunConfig& cfg, const ChunkLayout& layout, OutputFolder& out, std::uint64_t keep_bytes = 0,
                  std::uint64_t keep_rows = 0);
    /** @brief Flushed and synced: the bytes written, for a resume record. */
    std::uint64_t sync_size() { return file_.sync_size(); }
    /** @brief The rows of a chunk whose member 0 has global index `first` (inputs and metrics on the host); throws
     *         as soon as a write has failed. */
    void add_chunk(const ChunkArgs& a, std::uint64_t first, long long m);

private:
    const RunConfig& cfg_;
    ChunkLayout layout_;
    OutputFile& file_;
};

/** @brief `trajectories/trajectory_NNNNNN.csv` for the first `run.save_trajectories` members: their states are
 *         recorded from the chunk's inputs and re-integrated with full states at the end (CPU, same member code). */
class SavedTrajectories {
public:
    SavedTrajectories(const RunConfig& cfg, const RunPlan& plan);
    /** @brief True when member `g` is saved: one of the first run.save_trajectories (of each point, in a sweep). */
    bool wants(std::uint64_t g) const;
    /** @brief True when the chunk [first, first + m) holds members to save (its inputs are needed on the host). */
    bool wants(std::uint64_t first, long long m) const;
    void add_chunk(const ChunkArgs& a, std::uint64_t first, long long m);
    void write(OutputFolder& out) const;
    /** @brief The recorded members as bytes (resume records, MPI), and back (appended to those held). */
    std::string save() const;
    void load(const std::string& bytes, const std::string& what);

private:
    const RunConfig& cfg_;
    const RunPlan& plan_;
    std::vector<std::pair<std::uint64_t, TrajectoryRequest>> requests_;
    TrajectoryRequest request(std::vector<double> params, std::vector<double> q0, std::vector<double> v0,
                              std::vector<double> mu0) const;
};

/** @brief `trajectories/trajectory_NNNNNN.csv` (at least six digits) of member `index`, relative to the folder. */
std::string trajectory_file_name(std::uint64_t index);
/** @brief The member indices of the trajectories recorded in `SavedTrajectories::save` bytes (`nhvk merge` checks a
 *         part's `trajectories/` against them); `what` names the source in errors. */
std::vector<std::uint64_t> saved_trajectory_indices(const std::string& bytes, const std::string& what);
/** @brief One line on the population: whether (and where) the statistics cover fewer than
 *         `statistics.low_population_fraction` of the members integrated (summary.md, bold with `markdown`; stderr). */
std::string population_text(const RunConfig& cfg, const EnsembleResult& r, bool markdown);

/** @brief The output times around the median onset: t_{i-1} < p50 <= t_i (t_{-1} = t0), which bound how well the
 *         interpolated onset is resolved; NaN without a crossing. `first`: the bracket is (t0, t_0], where d_q
 *         is interpolated linearly from 0 at t0 and the onset is not resolved. */
struct OnsetBracket {
    double lo, hi;
    bool first;
};
OnsetBracket onset_bracket(const RunConfig& cfg, const EnsembleResult& r);
/** @brief The onset line's text after "onset (d_q > threshold): " (stderr and summary.md): the median with its
 *         crossings and the resolution of its output times, or why no member crossed. */
std::string onset_text(const RunConfig& cfg, const EnsembleResult& r);
/** @brief The fitted law as the summaries name it (`ascii`: stderr; else summary.md's Unicode), for d named `name`:
 *         "median d_q ~ C (t - t0)^p (t <= 0.05)", with the configured statistic, a fixed exponent's value, and the
 *         window "(0.01 < t <= 0.05)" where it starts after t0; the rate's "median d_q ~ A e^(lambda (t - t0))
 *         (1 < t <= 3)" with `rate`. */
std::string law_text(const RunConfig& cfg, const std::string& name, bool rate, bool ascii);
/** @brief Why the growth fit of d_q (`q`) or d_v has no exponent (the fit window's output times, or its medians);
 *         empty when it has one. */
std::string fit_undefined_reason(const RunConfig& cfg, const EnsembleResult& r, bool q);
/** @brief The energy balance line's text after "energy balance residual (relative): " (stderr and summary.md): the
 *         largest finite value, or that there is none. */
std::string balance_max_text(const EnsembleResult& r);
/** @brief Why `balance_flagged` is set: above diagnostics.balance_tolerance, or not finite for some members. */
std::string balance_flag_text(const RunConfig& cfg, const EnsembleResult& r);

/** @brief The short Markdown summary of a run (`summary.md`, `--summary-md FILE`): metadata, counts, growth
 *         exponent with its fit, onset, largest residuals and drifts, and d_q/d_v quantiles at five output times. */
std::string summary_markdown(const RunConfig& cfg, const EnsembleResult& r);

/** @brief `stats.csv`, `summary.md`, `report.html` and `summary.json` (moved into place last by
 * `OutputFolder::commit`). */
void write_statistics(const RunConfig& cfg, const EnsembleResult& r, OutputFolder& out);

} // namespace nhvk
