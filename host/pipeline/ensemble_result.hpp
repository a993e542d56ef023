// SPDX-License-Identifier: MIT
/** @file
 *  @brief What a run produced (what summary.json holds): the counts, the statistics per output time, the growth fit,
 *         the onsets and how the run was made. Filled by the reduce stage and the driver (host/ensemble.cpp) or by
 *         `nhvk merge`, read by the write stage and kept in partial states.
 */
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nhvk/member.hpp"
#include "nhvk/sample_member.hpp"
#include "stats/ensemble_stats.hpp"

namespace nhvk {

/** @brief A law fitted to a statistic of d_q and d_v (ReduceStage::law_fits), with its sampling intervals from the
 *         replica groups: the amplitude's made on log C, then exponentiated (`se` is that of log C). */
struct FittedLaw {
    stats::GrowthFit q, v;
    stats::ReplicaInterval slope_ci_q, slope_ci_v, amplitude_ci_q, amplitude_ci_v;
    std::string method;   ///< "jackknife" or "batch_means"; empty: no interval
    std::string withheld; ///< why there is no interval although there are replica groups
    std::vector<double> group_slopes_q, group_slopes_v, group_amplitudes_q, group_amplitudes_v; ///< groups' own fits
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
    /// members stopped at divergence.stop_at (Status::diverged: not valid, not failed), and per output time index
    /// how many stopped there (the first output time with d_q above stop_at)
    std::uint64_t diverged = 0;
    std::vector<std::uint64_t> diverged_at;
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
    /// statistics.replicas (0: no replica groups, and the intervals below are NaN)
    int replicas = 0;
    /// the sampling intervals of the exponents from the replica groups' fits (stats::replica_interval), and of the
    /// amplitudes (on log C, then exponentiated: `se` is that of log C)
    stats::ReplicaInterval growth_ci_q, growth_ci_v, amplitude_ci_q, amplitude_ci_v;
    /// how those intervals were made: "jackknife" (delete one group), "batch_means" (the groups' own fits, where the
    /// groups' values are not on the host), empty without groups
    std::string growth_interval_method;
    /// why the four intervals above are NaN although there are replica groups (a group with fewer than
    /// stats::min_group_members members in the fit window); empty when they are reported or there are no groups
    std::string growth_interval_withheld;
    /// why the std's intervals are NaN at some series of d_q and d_v (a group with fewer than
    /// stats::min_group_members members there); empty when every such series has one or there are no groups
    std::string std_interval_withheld;
    /// each replica group's exponent and amplitude (its own medians' fit), in group order
    std::vector<double> replica_growth_q, replica_growth_v, replica_amplitude_q, replica_amplitude_v;
    /// [divergence.rate]: the fits of d ≈ A·e^{λ(t − t0)} (`slope` λ, `amplitude` A; NaN when not asked for)
    FittedLaw rate;
    /// the largest median of d_q in the fit window is below max(rtol (rk4: dt⁴), 10 ε) (what two integrations of
    /// coinciding dynamics can differ by, states of order 1): the divergence may be rounding or integration noise
    /// there and its exponent means nothing
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
    /** @brief The most members with a non-finite value of `metric` at one output time (SeriesSummary::nonfinite:
     *         counted, left out of the statistics). */
    std::uint64_t nonfinite_over_times(int metric) const;
    /// max_over_times(metric_balance_nh) above diagnostics.balance_tolerance, or a non-finite balance_nh anywhere
    bool balance_flagged = false;
    /// which metrics were non-finite for some members and what that means; empty when every value was finite
    std::string nonfinite_warning;
    std::uint64_t failed() const { return requested - valid - diverged; }

    // How it was produced (summary.json "job").
    std::string config_hash;
    int ranks = 1;                        ///< MPI ranks
    int shard_index = 0, shard_count = 1; ///< `--shard i/N` (count 1: the whole run)
    std::uint64_t first = 0, end = 0;     ///< the trajectory indices covered [first, end)
    bool resumed = false;                 ///< went on from a resume record
    std::uint64_t resumed_at = 0;         ///< its first index not done
    std::vector<std::string> merged_from; ///< `nhvk merge`: the folders merged, in shard order

    /// a [sweep]: each point's statistics, as its own run's (this result holds the pooled ones); empty otherwise
    std::vector<EnsembleResult> points;
};

/** @brief Metric names as outputs spell them (index: `Metric`; `metric_info(m).name`), "onset_time" for
 *         `metric_count + member_onset_time`, "unknown" otherwise. */
const char* metric_name(int metric);

} // namespace nhvk
