// SPDX-License-Identifier: MIT
/** @file
 *  @brief The reduce stage: per-member statuses counted, the onset histogram, and the per-time statistics, either on
 *         the host from the values (exact quantiles) or on the backend (histogram quantiles: only the partials of
 *         each series come back). Every reduction is exact, so the statistics do not depend on where they ran.
 */
#pragma once

#include <memory>
#include <vector>

#include "checks.hpp"
#include "config.hpp"
#include "nhvk/backend/backend.hpp"
#include "pipeline/ensemble_result.hpp"
#include "pipeline/partial_state.hpp"
#include "stats/ensemble_stats.hpp"
#include "stats/fit_law.hpp"

namespace nhvk {

/** @brief The growth law's fit as [divergence.fit] sets it, of d_q, or of d_v (`v`: its own fixed exponent). */
stats::FitSpec growth_fit_spec(const RunConfig& cfg, bool v);

/** A sweep's statistics are one stage per point over that point's configuration (`r.points[p]`), fed the chunk's
 *  members of that point as a run of the point alone would be (member indices within the point, which key the
 *  replica groups), so that each point's statistics are those of that run. Their counts and statistics also make the
 *  pooled ones (`r` itself): the counts as the chunks come, the accumulators merged as the points complete.
 *
 *  A point's stage lives only while the point is open: made at its first members, and, once all run.trajectories
 *  members of the point are in (here or merged from another part), finished into `r.points[p]`, merged into the
 *  pooled accumulator and released. A point then keeps its summaries only (sweep_point_bytes()). */
class ReduceStage {
public:
    /** @brief Statistics of `cfg`'s run into `r` (its counts, onset histogram and, at `finish`, its series). */
    ReduceStage(const RunConfig& cfg, EnsembleResult& r);
    ~ReduceStage();
    ReduceStage(const ReduceStage&) = delete;
    ReduceStage& operator=(const ReduceStage&) = delete;
    /** @brief True when the statistics need every value on the host (exact quantiles within `run.exact_memory_mb`,
     *         with a backend that cannot keep the values itself, or a sweep's per-point statistics); otherwise the
     *         backend reduces each chunk. */
    bool on_host() const { return point_ || !points_.empty() || (acc_.exact() && !values_on_backend_); }
    /** @brief True when the host needs every chunk's metrics: `on_host()`, unless a sweep's parts are reduced on the
     *         backend (sweep_reduced_in_parts). */
    bool needs_metrics() const { return on_host() && parts_ == nullptr; }
    /** @brief Prepares the backend's running statistics when they are kept there: the partials and histogram rows,
     *         and, for exact quantiles on a backend that keeps values, room for `members` members' values; or, for a
     *         sweep reduced in parts on a backend that reduces parts, the shape and table of those parts. */
    void start(EnsembleBackend& backend, std::uint64_t members);
    /** @brief Stage 3 of the chunk of members [first, first + m) issued in slot `s` of `backend` (the one `start`
     *         prepared): the backend's running reduction when it keeps the statistics, a sweep's parts (one per point
     *         the chunk touches, kept there by point until the point is complete) when it reduces parts, nothing when
     *         the host reduces the metrics. */
    void enqueue(EnsembleBackend& backend, int s, std::uint64_t first, long long m);
    /** @brief Counts the statuses and onsets of a completed chunk (on the host), and adds its metrics when
     *         `needs_metrics()`; a sweep's point complete here takes its statistics from the backend when its parts
     *         were reduced there. */
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
    /** @brief Moves the backend's running statistics into the host's (once, after every slot completed). Values the
     *         backend kept for exact quantiles stay there when `select_there` and the host holds no values of its own
     *         (no resumed part): `finish` then asks the backend for the order statistics, and nothing may be merged
     *         or saved afterwards. Otherwise they come to the host. */
    void collect(EnsembleBackend& backend, bool select_there);
    /** @brief Final summaries and growth exponents (call `collect` first when a backend kept statistics; the backend
     *         must still live when it kept the values). */
    void finish();

private:
    /** @brief add_chunk's counts of members [0, m) of `a`, and, with `metrics`, their metrics from `a` (when
     *         `on_host()` without a sweep: a run's or a point's stage). */
    void add_members(const ChunkArgs& a, long long m, bool metrics);
    /** @brief A sweep reduced in parts: point p's statistics on the backend into its stage (which must be open), the
     *         backend's forgotten. */
    void take_from_backend(std::size_t p);
    /** @brief The alive fraction per output time, the times flagged below statistics.low_population_fraction, and
     *         the warning of a run where most members failed. */
    void populations();
    /** @brief The warning of non-finite diagnostics: which metrics, how many members, what it means. */
    void nonfinite_warning();
    /** @brief Whether d_q says the two dynamics coincide over the fit window (exactly, or below `rounding` in the
     *         median: accuracy_floor()), and the statement of it with the classification's reason. */
    void coincidence(double rounding);

    /** @brief The replica groups' statistics: the std's interval at every replicated series, and the growth fits of
     *         each group's medians with the intervals of the exponent and the amplitude. */
    void replica_intervals(const std::vector<stats::SeriesSummary>& replica_series, const std::vector<double>& rel_t);

    /** @brief `spec_q` and `spec_v` (the same window; a fixed slope each) fitted to `statistic` (fit_statistics())
     *         of the pooled d_q and d_v, each replica group's own
     *         fit (`replica_series`), and the intervals: the delete-one-group jackknife for the median and the mean,
     *         the batch means otherwise or where a leave-one-out fit is not finite. */
    FittedLaw law_fits(const stats::FitSpec& spec_q, const stats::FitSpec& spec_v, const std::string& statistic,
                       const std::vector<stats::SeriesSummary>& replica_series, const std::vector<double>& rel_t);

    /** @brief A sweep state's points (snapshot's layout: each point's tally and statistics) into the points: a resume
     *         record's (`restore`, at the start) or another part's (merged). */
    void add_points(const std::string& data, const std::string& what, bool restore);
    /** @brief A point's stage: `budget_bytes` of exact values (its share of the sweep's run.exact_memory_mb); the
     *         result `r` is set up (output times, empty onset histogram) unless `point` (a sweep point's, whose
     *         counts the sweep's stage set up and keeps while the point's stage comes and goes). */
    ReduceStage(const RunConfig& cfg, EnsembleResult& r, std::size_t budget_bytes, bool point);
    /** @brief Point p's stage, made (empty) if it is not open. */
    ReduceStage& open_point(std::size_t p);
    /** @brief Point p's members counted here (its own and merged ones): every member is valid, diverged or failed. */
    std::uint64_t point_members(std::size_t p) const;
    /** @brief Point p finished when all its members are in: its summaries into `r.points[p]`, its statistics merged
     *         into the pooled accumulator, its stage released. */
    void complete_if_full(std::size_t p);
    /** @brief The accumulator `finish` summarises: the pooled one, or, where points are still open (a part of a
     *         sweep), a view of it and of theirs. */
    stats::EnsembleAccumulator& summarised() { return pooled_view_ ? *pooled_view_ : acc_; }

    const RunConfig& cfg_;
    EnsembleResult& r_;
    /// a sweep's, one per point (empty without a sweep): the stage of an open point, null for one not begun here or
    /// done (`done_`)
    std::vector<std::unique_ptr<ReduceStage>> points_;
    std::vector<std::uint8_t> done_; ///< a sweep's, per point: finished, its statistics in the pooled accumulator
    std::size_t point_budget_ = 0;   ///< a sweep point's share of run.exact_memory_mb
    bool point_ = false;             ///< a sweep point's stage: fed by the sweep's, on the host
    StatisticsShape shape_;
    stats::EnsembleAccumulator acc_;
    std::vector<std::uint8_t> onset_in_;   ///< per member: enters the onset histogram
    bool values_on_backend_ = false;       ///< exact quantiles whose values the backend keeps
    EnsembleBackend* selecting_ = nullptr; ///< the backend that selects the order statistics at finish
    bool collected_ = false;
    /// a sweep with points still open at `finish`: the pooled accumulator and theirs, referenced (never saved)
    std::unique_ptr<stats::EnsembleAccumulator> pooled_view_;
    /// a sweep reduced in parts: the backend that reduces them, per point whether it holds parts of it, and room
    /// for a point's statistics taken from it
    EnsembleBackend* parts_ = nullptr;
    std::vector<std::uint8_t> on_backend_;
    std::vector<stats::SeriesPartial> part_partials_;
    std::vector<std::uint64_t> part_counts_;
};

} // namespace nhvk
