// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk run`: sample the ensemble chunk by chunk, integrate both dynamics on a backend, reduce the divergence
 *         into statistics as the chunks come back, write the outputs atomically.
 */
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.hpp"
#include "nhvk/member.hpp"
#include "nhvk/sample_member.hpp"
#include "stats/ensemble_stats.hpp"

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

/** @brief `--resume` refused: the folder's resume record belongs to another configuration or split (exit code 2). */
struct ResumeRefused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief MPI ranks > 0: rank 0 failed before the run began and reports why (then ends the job). */
struct RootFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief The run stopped at a chunk boundary on a signal and left a resume record (exit code 128 + signal). */
struct Interrupted : std::runtime_error {
    int signal;
    Interrupted(const std::string& what, int sig) : std::runtime_error(what), signal(sig) {}
};

/** @brief Everything a run produced (what summary.json holds), for the writers and for tests. */
struct EnsembleResult {
    std::string backend;
    int threads = 0;
    std::uint64_t requested = 0, valid = 0;
    std::array<std::uint64_t, status_count> failed_by_status{}; ///< index: Status (ok unused)
    std::array<std::uint64_t, 3> failed_by_dynamics{};          ///< index: Dynamics (none = sampling)
    /// failed integrations per dynamics and status: [Dynamics][Status] (which limit each dynamics hit)
    std::array<std::array<std::uint64_t, status_count>, 3> failed_by_dynamics_status{};
    std::array<std::uint64_t, sample_status_count> sampling{}; ///< index: SampleStatus (ok unused)
    std::vector<double> times;
    /// metric_rows(nt): series (metric * nt + i), then the per-member series (metric_count * nt + MemberSeries)
    std::vector<stats::SeriesSummary> series;
    bool exact_quantiles = true;
    double histogram_resolution = 0.0;
    /// the magnitudes the histogram bins, [DBL_MIN, DBL_MAX] (each sign in its own store; 0 counted exactly)
    double histogram_lo = 0.0, histogram_hi = 0.0;
    /// decades of magnitude a store resolves below the largest magnitude of its series and sign
    double histogram_window_decades = 0.0;
    /** @brief Finite values, over every series, below the histogram's resolved window (SeriesSummary::outside_range).
     */
    std::uint64_t outside_range() const {
        std::uint64_t n = 0;
        for (const stats::SeriesSummary& s : series) n += s.outside_range;
        return n;
    }
    double growth_q = 0.0, growth_v = 0.0;
    stats::GrowthFit growth_fit_q, growth_fit_v; ///< the fits behind growth_q, growth_v
    /// the largest median of d_q in the fit window is below ε · integrator.max_steps (the rounding a run of at most
    /// max_steps steps can accumulate, states of order 1): the divergence may be rounding noise there and its
    /// exponent means nothing
    bool growth_at_rounding_level = false;
    /// the two dynamics coincide for this ensemble over the fit window (t0, growth_t_max]: "exact" (d_q = 0 for every
    /// member at every output time there) or "rounding_level" (growth_at_rounding_level); empty when they do not
    std::string coincide;
    /// with `coincide`: what the summaries say, the basis and the reason from the constraints' classification
    /// (`nhvk inspect`: its statement where the dynamics must coincide, else that the constraints do not force it)
    std::string coincide_statement;
    stats::OnsetHistogram onset;
    /// per output time: the members its statistics cover (d_q's count) over integrated(); under population "alive"
    /// the share of the members alive at that time (NaN when no member was integrated)
    std::vector<double> alive_fraction;
    /// the output-time indices whose alive_fraction is below statistics.low_population_fraction: statistics over
    /// a remnant of the ensemble, which may differ from the whole by who survived rather than by the dynamics
    std::vector<int> low_population;
    /// when more than half the members failed: a warning naming the most common failure (status and dynamics, or
    /// sampling status) and its count; empty otherwise
    std::string failure_warning;
    /// members whose integration began (requested less those that could not be sampled)
    std::uint64_t integrated() const { return requested - failed_by_dynamics[0]; }
    /// wall time of the run; time per stage as the backend measured it (device time on the GPU), the reduction
    /// including the host's part, and the host ↔ device transfers
    double seconds = 0.0, sampling_seconds = 0.0, integration_seconds = 0.0, reduction_seconds = 0.0,
           transfer_seconds = 0.0;

    const stats::SeriesSummary& at(int metric, int i) const {
        return series[static_cast<std::size_t>(metric) * times.size() + i];
    }
    /** @brief The interpolated onset times of the members whose d_q crossed the threshold. */
    const stats::SeriesSummary& onset_times() const {
        return series[static_cast<std::size_t>(member_series_row(static_cast<int>(times.size()), member_onset_time))];
    }
    /** @brief The largest `max` of `metric` over every output time (NaN when no time has a finite one). */
    double max_over_times(int metric) const;
    bool alive_population = true; ///< per-time statistics over the members alive at each time (else survivors)
    /// max_over_times(metric_balance_nh) above diagnostics.balance_tolerance
    bool balance_flagged = false;
    std::uint64_t failed() const { return requested - valid; }

    // How it was produced (summary.json "job").
    std::string config_hash;
    int ranks = 1;                        ///< MPI ranks
    int shard_index = 0, shard_count = 1; ///< `--shard i/N` (count 1: the whole run)
    std::uint64_t first = 0, end = 0;     ///< the trajectory indices covered [first, end)
    bool resumed = false;                 ///< went on from a resume record
    std::uint64_t resumed_at = 0;         ///< its first index not done
    std::vector<std::string> merged_from; ///< `nhvk merge`: the folders merged, in shard order
};

/** @brief Metric names as outputs spell them (index: `Metric`; `metric_info(m).name`), "onset_time" for
 *         `metric_count + member_onset_time`, "unknown" otherwise. */
const char* metric_name(int metric);

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
