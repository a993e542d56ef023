// SPDX-License-Identifier: MIT
/** @file
 *  @brief Ensemble statistics over trajectories arriving in chunks: per series count, mean, std, min, max and
 *         quantiles (exact or histogram-interpolated), the onset-time distribution and the growth exponent.
 *
 *  Reproducibility contract: for the same multiset of (valid, finite) values per series the summaries are
 *  bit-identical whatever the chunk boundaries, the thread count, or how shards were merged.
 */
#pragma once

#include "nhvk/stats/log_histogram.hpp"
#include "nhvk/stats/onset.hpp"
#include "nhvk/stats/series_partial.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "stats/byte_io.hpp"

namespace nhvk::stats {

struct ChunkView; // nhvk/stats/chunk_reduce.hpp

/**
 * @brief Statistics of one series (one metric at one output time) over the valid trajectories.
 *
 * count == 0 (no valid finite value): every double is NaN, which the JSON writer prints as null. count == 1: std is
 * NaN (one value has no sample std) and every quantile equals the value. mean is Σx/n correctly rounded; std is the
 * sample (n−1) standard deviation from the exact n·Σx² − (Σx)² (see mean_std()); quantiles are type 7 (numpy's
 * default), exact when `exact`, else interpolated in the signed log histogram (within histogram_relative_resolution()
 * of the order statistics they interpolate, for values in the histogram's windows; see histogram_quantiles()).
 */
struct SeriesSummary {
    std::uint64_t count;     ///< valid trajectories with a finite value
    std::uint64_t nonfinite; ///< valid trajectories with a non-finite value (a caller bug; excluded)
    /** Finite values outside the histogram's resolved window: magnitudes more than LogHistogramSpec::window bins
     *  (about 41 decades) below the largest magnitude of the same sign (the stores' `below` counts). Histogram
     *  quantiles among them are interpolated linearly towards 0, without the stated relative resolution. Counted
     *  in both modes, from the same histogram rows on the CPU and the CUDA path. */
    std::uint64_t outside_range;
    double mean, std, min, max;
    double p01, p05, p25, p50, p75, p95, p99;
    bool exact; ///< quantiles from the stored values (true) or the histogram (false)
    /// 95 % interval of the mean: mean ∓ t(0.975, n − 1)·mean_se, mean_se = std/√n (NaN below 2 values)
    double mean_se, mean_lo, mean_hi;
    /// 95 % interval of the std from the replica groups (ReduceStage; NaN for a series without replicas, or where a
    /// group holds fewer than min_group_members members); std_lo is clipped at 0
    double std_se, std_lo, std_hi;
    /// 95 % distribution-free intervals of the seven quantiles, [x_(l), x_(u)] (quantile_interval_ranks; exact or
    /// interpolated in the histogram like the quantiles), and q_se = (hi − lo)/(2·1.96); NaN where n is too small
    /// for the interval to exist at 95 %
    double q_lo[7], q_hi[7], q_se[7];
};

/**
 * @brief Accumulates ensemble output chunk by chunk and summarises it per series.
 *
 * Mode: exact when n_series·n_total_expected·8 <= exact_memory_budget_bytes (every valid finite value is kept for
 * exact quantiles); otherwise histogram mode (memory independent of the number of trajectories). An exact
 * accumulator that receives more values than the budget holds switches to histogram mode for good; since that
 * depends only on how many values arrived, the final mode does too. count, nonfinite, mean, std, min and max come
 * from exact partials and are identical in both modes. All reductions are deterministic.
 */
/** @brief std::allocator, except that value-initialisation (resize) leaves trivial elements uninitialised: the stored
 *         values of exact quantiles are written once, by the reduction, so zeroing them first is a wasted pass. */
template <class T> struct UninitializedAllocator : std::allocator<T> {
    template <class U> struct rebind { using other = UninitializedAllocator<U>; };
    UninitializedAllocator() = default;
    template <class U> UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
    template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
    template <class U, class... A> void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }
};

/** @brief Series from `from` on are replica groups: each receives about 1/`groups` of the values (sizes the exact
 *         mode's budget and reservations; ChunkView says which values). */
struct ReplicaShape {
    std::size_t from = static_cast<std::size_t>(-1);
    std::size_t groups = 1;
};

/** @brief A spec's bin table and an empty row (row_words() zeros), shared: see shared_bins(). */
struct SharedBins {
    LogBinTable table;                   ///< LogHistogramSpec::table()
    std::vector<std::uint64_t> zero_row; ///< the row of a series whose accumulator keeps no rows
};

/** @brief The bins of `spec`, built once and shared while anything holds them: every accumulator of a run has the
 *         same spec (a sweep has one per point), and building the table costs about 30000 long-double powers.
 *         Immutable, so shared across threads; thread-safe. */
std::shared_ptr<const SharedBins> shared_bins(const LogHistogramSpec& spec);

class EnsembleAccumulator {
public:
    /** @brief Sets up n_series empty series; throws std::invalid_argument on an invalid spec. */
    EnsembleAccumulator(std::size_t n_series, std::uint64_t n_total_expected, std::size_t exact_memory_budget_bytes,
                        LogHistogramSpec spec = {}, ReplicaShape replicas = {});

    /** @brief The values exact mode keeps for n_series series of n_total_expected members each (a replica group's
     *         series none of its own: its values are part of its row's); the accumulator is exact when they fit
     *         exact_memory_budget_bytes / 8. */
    static long double expected_values(std::size_t n_series, std::uint64_t n_total_expected, ReplicaShape replicas);

    /**
     * @brief Adds a chunk of trajectories: series s of trajectory j is values[s·ld + j]; valid[j] != 0 includes it
     *        (valid may be nullptr: all valid). Parallel over series with Thrust's OpenMP system.
     */
    void add_chunk(const double* values, std::size_t chunk, std::size_t ld, const std::uint8_t* valid);
    /** @brief Adds a chunk described by a ChunkView (nhvk/stats/chunk_reduce.hpp): which series of which trajectory
     *  count is its `included` (the per-time population, per-member series); `in.n_series` must equal n_series(). */
    void add_chunk(const ChunkView& in);

    /**
     * @brief Adds per-series partials and histogram rows reduced elsewhere (e.g. on the GPU with accumulate_chunk and
     *        combine_tiles): partials[s], the row of series s at counts[s·row_words()] (merged exactly). Values are not
     * available this way, so an exact accumulator switches to histogram mode (unless the partials are all empty).
     */
    void add_partials(const SeriesPartial* partials, const std::uint64_t* counts);

    /**
     * @brief Adds partials and histogram rows reduced elsewhere whose values for exact quantiles are kept there too
     *        (the CUDA backend's device memory): the accumulator stays exact, and finalize() asks for the order
     *        statistics it needs instead of selecting them from stored values. Only on an accumulator that stores no
     *        values; save() and merge() then refuse (the values are not here to save or merge).
     */
    void add_partials_values_elsewhere(const SeriesPartial* partials, const std::uint64_t* counts);

    /**
     * @brief Adds partials and histogram rows reduced elsewhere together with the values they were reduced from
     *        (values[s]: the included finite values of series s, −0 folded to +0, in any order): an exact
     *        accumulator stays exact while the values fit its budget.
     */
    void add_partials_with_values(const SeriesPartial* partials, const std::uint64_t* counts,
                                  const std::vector<std::vector<double>>& values);

    /** @brief Adds another accumulator's data (exact in both modes). The result stays exact only when both are
     *  exact and the combined values fit this accumulator's budget. Throws std::invalid_argument when the series
     *  count or histogram spec differ. */
    void merge(const EnsembleAccumulator& other);

    /** @brief merge() of each of `parts` (accumulators of this shape), except that while the result stays exact the
     *         values stay in the parts instead of being copied here: finalize(), median_of(), save() and merge() read
     *         them there. The parts must then live, unchanged, as long as this accumulator is used (or until it
     *         leaves exact mode, which bins their values here). For a sweep's pooled statistics, whose values are
     *         the points'. */
    void merge_referencing(const std::vector<const EnsembleAccumulator*>& parts);

    /** @brief Appends the whole state (mode, partials, histogram rows, stored values) to `out` (stats/byte_io.hpp),
     *  for a partial-state file (`nhvk merge`, resume records). */
    void save(std::string& out) const;
    /** @brief Replaces the data with a state written by save() of an accumulator of the same shape (series count,
     *  histogram spec, exact-memory budget); throws std::runtime_error saying what differs, or that the data ends
     *  early. */
    void load(bytes::Reader& in);

    /** @brief Where the order statistics come from when the values are kept elsewhere: given, per series, the
     *         ascending distinct 0-based ranks finalize() needs, fill out[s][i] with the ranks[s][i]-th smallest
     *         value of series s. */
    using OrderStatistics = std::function<void(const std::vector<std::vector<std::uint64_t>>& ranks,
                                               std::vector<std::vector<double>>& out)>;

    /** @brief Summaries of every series. Exact mode selects the order statistics of the quantiles from the stored
     *  values (reordering them; series in parallel), or asks `elsewhere` for them when the values are kept elsewhere
     *  (add_partials_values_elsewhere); with them, each replicated row's two order statistics around its
     *  delete-one-group medians, which leave_one_out_medians() of that row's groups then reads instead of selecting
     *  them again. The accumulator stays usable. */
    std::vector<SeriesSummary> finalize(const OrderStatistics& elsewhere = {});

    /** @brief The type-7 median of the union of the values of `series` (exact mode: from the stored values; histogram
     *         mode: interpolated in the merged rows). NaN when they hold no value, or when the values are kept
     *         elsewhere. For leave-one-group-out statistics of replica groups. */
    double median_of(const std::vector<std::size_t>& series) const;

    /** @brief out[g] = median_of(every series of `groups` but groups[g]), the same doubles, for every g at once: the
     *         delete-one-group medians of replica groups. In exact mode from one selection over the union (a band of
     *         ranks around the median that holds every out[g]) instead of one selection per g; in histogram mode
     *         through median_of. */
    std::vector<double> leave_one_out_medians(const std::vector<std::size_t>& groups) const;

    /** @brief Of the values kept elsewhere of the series `groups`: out[g][i] = the ranks[g][i]-th smallest value of
     *         every series but groups[g], each rank's value known to lie in [a, b]
     *         (EnsembleBackend::band_order_statistics). */
    using BandOrderStatistics = std::function<void(const std::vector<std::size_t>& groups, double a, double b,
                                                   const std::vector<std::vector<std::uint64_t>>& ranks,
                                                   std::vector<std::vector<double>>& out)>;

    /** @brief out[k] = leave_one_out_medians(groups[k]) for several sets of groups (in parallel), rows[k] the
     *         series that is the union of groups[k] (the row the replica groups split; rows distinct): the same
     *         doubles also where the values are kept elsewhere (a backend), read through `select` (the rows' two
     *         order statistics around the medians, as finalize's `elsewhere`) and `band` (each delete-one-group
     *         median's order statistics, selected among the values between those two), which are called only then. */
    std::vector<std::vector<double>> leave_one_out_medians(const std::vector<std::vector<std::size_t>>& groups,
                                                           const std::vector<std::size_t>& rows,
                                                           const OrderStatistics& select,
                                                           const BandOrderStatistics& band) const;

    /** @brief True in exact mode. */
    bool exact() const { return exact_; }
    /** @brief Values stored for exact quantiles, over all series (those of merge_referencing()'s parts included). */
    std::uint64_t stored_values() const;
    /** @brief Relative bin width 10^(1/bins_per_decade) − 1 of the histogram quantiles. */
    double histogram_relative_resolution() const { return spec_.relative_resolution(); }
    /** @brief Number of series. */
    std::size_t n_series() const { return n_series_; }
    /** @brief uint64 words of the histogram row of a series (see log_histogram.hpp for the layout). */
    std::size_t row_words() const { return row_words_; }
    /** @brief The histogram specification. */
    const LogHistogramSpec& spec() const { return spec_; }
    /** @brief The histogram bin edges and lookup table (a CUDA backend mirrors edges and start on the device). */
    const LogBinTable& bin_table() const { return bins_->table; }
    /** @brief Bin-index view into bin_table() (host memory). */
    LogBinner binner() const { return LogBinner::make(bins_->table); }
    /** @brief Partial statistics of series s. */
    const SeriesPartial& partial(std::size_t s) const { return partials_[s]; }
    /** @brief Histogram row of series s (row_words() entries): all zero in exact mode on the host (the values give
     *  the quantiles), made from the values if the accumulator leaves exact mode; rows reduced elsewhere (the CUDA
     *  backend's) are kept in both modes. */
    const std::uint64_t* histogram(std::size_t s) const {
        return counts_.empty() ? bins_->zero_row.data() : counts_.data() + s * row_words_;
    }
    /** @brief True when the accumulator holds histogram rows (histogram mode, or rows reduced elsewhere); otherwise
     *  every row is zero and takes no memory. */
    bool has_rows() const { return !counts_.empty(); }

private:
    void add_chunk_parallel(const ChunkView& in, bool parallel);
    std::uint64_t stored_total() const;
    /** @brief Merges partials and histogram rows reduced elsewhere; true when any series received a value. */
    bool merge_reduced(const SeriesPartial* partials, const std::uint64_t* counts);
    void drop_values();
    void reserve_values();
    /** @brief Bins the stored values of `src` (this accumulator or an exact one of the same shape) into the rows. */
    void bin_values_of(const EnsembleAccumulator& src);
    /** @brief Adds other's partials and histogram rows (not its values). */
    void merge_partials_and_rows(const EnsembleAccumulator& other);
    /** @brief Allocates the histogram rows (zero) if they are not there yet. */
    void make_rows();
    /** @brief Calls f(pointer, count) for each run of stored values of series s: this accumulator's, then each
     *         referenced part's (a replica group's: its segment of each block of its row's values). */
    template <class F> void for_each_values(std::size_t s, F&& f) const;
    /** @brief Appends one block to replicated row s0's values: for each group g, of(series of group g, sink) calls
     *         sink(pointer, count) with that group's values, and the block records where each group's part ends. */
    template <class ValuesOfGroup> void append_group_block(std::size_t s0, ValuesOfGroup&& of);
    /** @brief True when each replicated row of `values` (one vector per series) holds as many values as its groups. */
    template <class PerSeries> bool groups_add_up(const PerSeries& values) const;
    /** @brief append_group_block() for every replicated row, from `values` (one vector per series). */
    template <class PerSeries> void append_group_blocks(const PerSeries& values);
    /** @brief The series that keep values: those below the first replica group's series (all without groups). */
    std::size_t value_series() const { return std::min(n_series_, replicas_.from); }
    /** @brief True when `other` has the same replica groups (series that keep values, rows and groups). */
    bool same_groups(const EnsembleAccumulator& other) const {
        return value_series() == other.value_series() &&
               (replicated_rows() == 0u || replicas_.groups == other.replicas_.groups);
    }
    /** @brief Rows with replica groups: series 0 … replicated_rows() − 1 (ChunkView's replicated). */
    std::size_t replicated_rows() const {
        return value_series() < n_series_ ? (n_series_ - value_series()) / replicas_.groups : 0u;
    }
    /** @brief The stored values of `series` (their union), referenced parts' included, copied into `out` (replacing
     *         it). */
    void gather_values(const std::vector<std::size_t>& series, std::vector<double>& out) const;

    std::size_t n_series_;
    std::size_t budget_values_; // exact mode keeps at most this many values in all (budget / 8)
    LogHistogramSpec spec_;
    std::shared_ptr<const SharedBins> bins_; // shared_bins(spec_): never changed, so copies share it too
    std::size_t row_words_;
    std::uint64_t n_expected_; // values per series expected in exact mode (reserved at the first chunk)
    ReplicaShape replicas_;    // series from replicas_.from on expect n_expected_ / groups
    bool exact_;
    bool values_elsewhere_ = false;       // exact, with the values kept by a backend
    std::vector<SeriesPartial> partials_; // per series
    // n_series histogram rows of row_words_, or empty (every row zero)
    // NOTE: empty until a row is needed: an exact accumulator on the host bins nothing, and a sweep holds one
    // accumulator per point (9.3 MB of rows each for 282 series)
    std::vector<std::uint64_t> counts_;
    using Values = std::vector<double, UninitializedAllocator<double>>;
    // exact mode: valid finite values per series below value_series(); a replicated row's in blocks (one per chunk
    // or merge), each holding the row's values of that block group by group, group 0's first
    std::vector<Values> values_;
    // exact mode, per replicated row: for each block the end of each group's part in values_[row], `groups` per block
    // NOTE: a replica group's values are a segment of each block of its row's rather than a copy: the groups of the
    // divergence rows would otherwise be a second copy of a sixth of the values (and of their first-touch cost)
    std::vector<std::vector<std::uint64_t>> group_ends_;
    // exact mode: accumulators whose values count as this one's too (merge_referencing), in merge order
    std::vector<const EnsembleAccumulator*> parts_;
    /** @brief A replicated row's band of delete-one-group medians, x_(L) and x_(U) of its n values, selected by
     *         finalize() with the row's quantiles. */
    struct RowBand {
        std::uint64_t n = 0; ///< the row's count when selected, 0: none (values are only ever added, so another
                             ///< count: stale)
        double lo = 0.0, hi = 0.0;
    };
    // per replicated row: the band finalize() selected, for leave_one_out_medians() of exactly that row's groups
    // NOTE: the jackknife of the growth law asks for these after finalize(); selecting them with the row's own order
    // statistics saves a copy of the row and a selection of its own (on a backend: a second round of selections)
    std::vector<RowBand> row_bands_;
    /** @brief The band finalize() selected for `groups` when they are a replicated row's groups in order (g = 0 …)
     *         and the row still holds n values; nullptr otherwise. */
    const RowBand* selected_band(const std::vector<std::size_t>& groups, std::uint64_t n) const;
};

/**
 * @brief Distribution of the onset time (first output time with d_q above threshold) over trajectories: a count per
 *        output-time index plus a "never" count. Mergeable exactly; deterministic.
 */
struct OnsetHistogram {
    std::vector<std::uint64_t> counts; ///< counts[i]: onset at output time index i
    std::uint64_t never = 0;           ///< never exceeded the threshold
    /// failed before d_q exceeded the threshold (its onset is unknown; counted by the "alive" population only,
    /// the survivors-only view leaves every failed member out)
    std::uint64_t censored = 0;

    OnsetHistogram() = default;
    /** @brief Empty histogram over n_times output times. */
    explicit OnsetHistogram(std::size_t n_times) : counts(n_times, 0u) {}

    /** @brief Adds one trajectory; `onset_never` (or an index >= counts.size()) counts as never. */
    void add(std::int32_t time_index);
    /** @brief Adds onset indices of a chunk; valid[j] != 0 includes trajectory j (valid may be nullptr). */
    void add_chunk(const std::int32_t* onset_index, std::size_t chunk, const std::uint8_t* valid);
    /** @brief Adds another histogram over the same number of output times (throws std::invalid_argument if not). */
    void merge(const OnsetHistogram& other);
    /** @brief Trajectories counted, including never. */
    std::uint64_t total() const;
    /**
     * @brief Onset-time quantile p ∈ [0, 1] as an output time: the r-th smallest onset with r = max(1, ⌈p·n⌉) (the
     *        inverted-CDF definition, so the result is always one of the output times). With include_never, "never"
     *        counts as later than every output time and a quantile falling there is +inf; without, only trajectories
     *        with an onset are ranked. NaN when no trajectory is ranked. t holds the output times (t.size() ==
     *        counts.size()).
     */
    double quantile(double p, const std::vector<double>& t, bool include_never = true) const;
};

/**
 * @brief Least-squares slope of log(median) against log(t) over the points with 0 < t <= t_max and median > 0
 *        (finite). NaN when fewer than two such points (or all their t equal); the caller reports it. Deterministic.
 */
double growth_exponent(const std::vector<double>& t, const std::vector<double>& median, double t_max);

/** @brief The growth law d ≈ C·t^p fitted with its quality: the slope p and intercept log C of
 *         log(median) = log(C) + p·log(t) over the points growth_exponent() uses, their number, R², and for the slope
 *         and the amplitude C their 95 % intervals from the scatter of the points about the fitted line (Student t
 *         with n − 2 degrees of freedom; NaN below 3 points), and the largest median in the window.
 *
 *  NOTE: the intervals measure how far the medians stray from a straight line in log-log axes, not how much the
 *  medians themselves would move with another sample of the ensemble: they are not the estimate's sampling error. */
struct GrowthFit {
    double slope = 0.0;
    double amplitude = 0.0; ///< C = exp(intercept); in the unit of the median per (unit of t)^p
    std::size_t points = 0;
    double r_squared = 0.0, standard_error = 0.0, ci_low = 0.0, ci_high = 0.0;
    /// exp(intercept ∓ t(0.975, n − 2)·se(intercept)), se(intercept)² = RSS/(n − 2)·(1/n + x̄²/Sxx)
    double amplitude_ci_low = 0.0, amplitude_ci_high = 0.0;
    double max_median = 0.0; ///< the largest median among the points (0 when none)
};
GrowthFit growth_fit(const std::vector<double>& t, const std::vector<double>& median, double t_max);

/** @brief The sampling error of a statistic from its values in replica groups (batch means): the groups are
 *         disjoint random subsets of equal size (member index mod R), so the spread of the statistic over the groups
 *         estimates its spread over repeated ensembles of 1/R the size; the pooled statistic's standard error is
 *         that spread over √g. se = sd(group values)/√g over the g finite group values, and the 95 % interval
 *         pooled ∓ t(0.975, g − 1)·se. NaN (groups = g) below 2 finite group values or for a non-finite pooled
 *         value. Deterministic (sums in group order). */
struct ReplicaInterval {
    std::size_t groups = 0; ///< group values that entered (finite)
    double se = 0.0, lo = 0.0, hi = 0.0;
};
ReplicaInterval replica_interval(double pooled, const std::vector<double>& group_values);

/** @brief The fewest members each replica group must hold in every series an interval reads for the interval to be
 *         reported (the std's: that series; the growth law's: every output time in the fit window); below it the
 *         interval is NaN and the run says why. Groups: at least 2 (statistics.replicas), the t quantile pays for
 *         few of them.
 *
 *  NOTE: a group's std needs 2 members, but a group of 1 or 2 makes the batch means the spread of single values and
 *  the delete-one-group jackknife of a median the delete-1 jackknife, which is inconsistent for a median (it needs
 *  many members left out at a time), and its interval shrinks toward zero width as the groups shrink. 10 members is
 *  the least at which a group's median and spread mean something (coverage: bench/results/2026-11-24-error-bars.md).
 */
inline constexpr std::uint64_t min_group_members = 10;
/** @brief The delete-one-group jackknife's interval: `leave_one_out[g]` is the statistic of every group but g, and
 *         se² = (g − 1)/g · Σ (x − x̄)² over the g finite values; the same interval as replica_interval otherwise. */
ReplicaInterval jackknife_interval(double pooled, const std::vector<double>& leave_one_out);

/** @brief The 0.975 quantile of Student's t with `dof` ≥ 1 degrees of freedom (a table to 30 at 12 digits, then a
 * Cornish–Fisher expansion, within 1e-4). */
double student_t975(std::size_t dof);

/** @brief The levels p of the seven reported quantiles (p01 … p99). */
inline constexpr double quantile_levels[7] = {0.01, 0.05, 0.25, 0.50, 0.75, 0.95, 0.99};

/** @brief Type-7 quantile (numpy's default) of sorted values: h = (n−1)p, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]). NaN
 *  when n == 0. */
double quantile_type7(const double* sorted, std::size_t n, double p);

/** @brief The ascending distinct 0-based ranks whose order statistics the seven type-7 quantiles of n values read
 *         (⌊h⌋ and, where it exists, ⌊h⌋ + 1, with h = (n−1)p as quantile_type7 computes it). */
std::vector<std::uint64_t> quantile_ranks(std::uint64_t n);

/** @brief The 0-based ranks of the distribution-free 95 % interval [x_(l), x_(u)] of the p-quantile of n values: with
 *         B ~ Binomial(n, p) the number of values at or below the true quantile, P(l < B ≤ u) ≥ 0.95 in the normal
 *         approximation, l = ⌊np − 1.96·√(np(1−p))⌋ − 1, u = ⌈np + 1.96·√(np(1−p))⌉ (0-based, so x_(l) is the
 *         (l+1)-th smallest). `ok` is false when one of them falls outside the sample (too few values for the
 *         interval to exist at 95 %). */
struct QuantileInterval {
    std::uint64_t lo = 0, hi = 0;
    bool ok = false;
};
QuantileInterval quantile_interval_ranks(std::uint64_t n, double p);

/** @brief The seven type-7 quantiles of n values from their order statistics at quantile_ranks(n) (`stats[i]` the
 *         ranks[i]-th smallest): the same doubles quantile_type7 gives on the sorted values. NaN when n == 0. */
void quantiles_from_order_statistics(std::uint64_t n, const std::vector<std::uint64_t>& ranks, const double* stats,
                                     double (&q)[7]);

/**
 * @brief The host's reduction of a chunk, one pass per series row, the rows in parallel when `parallel` (OpenMP):
 *        adds row s to partials[s] and, when `counts` is not null, to its histogram row at
 *        counts[s·binner.row_words()]; when `out` is not null, writes the row's included finite values (−0 folded to
 *        +0) to out[s] in trajectory order and their number to n_out[s]. The same partials, rows and values as
 *        accumulate_chunk (one tile) and compact_chunk (nhvk/stats/chunk_reduce.hpp), with the exact sums gathered
 *        per binade (nhvk/stats/host_row_reduce.hpp). Deterministic. With replica groups a replicated row's values
 *        are written group by group instead (group 0's first, each in trajectory order; the union is the row's
 *        values), each group's number to n_out of the group's series, and out of a group's series is not read: a
 *        group's values are a part of its row's, not a copy.
 */
void reduce_chunk_host(const ChunkView& in, SeriesPartial* partials, std::uint64_t* counts, const LogBinner& binner,
                       double* const* out, std::size_t* n_out, bool parallel);

/** @brief The order statistics at the ascending distinct `ranks`: out[i] = the ranks[i]-th smallest of the finite
 *         values v, in O(n) passes rather than a sort: one counting pass over 2^12 to 2^16 buckets of the doubles'
 *         order-preserving integer image, one gathering the ranks' buckets, and recursive std::nth_element inside
 *         those. Below 8192 values nth_element alone, which reorders v; from 8192 on v is only read. Deterministic:
 *         an order statistic is a value, whatever finds it. */
void select_order_statistics(std::vector<double>& v, const std::vector<std::uint64_t>& ranks, double* out);
/** @brief The same for the n values at v, given their smallest and largest (which spares a pass; a value outside
 *         [min, max] is refused with std::invalid_argument). */
void select_order_statistics(double* v, std::size_t n, double min, double max, const std::vector<std::uint64_t>& ranks,
                             double* out);

} // namespace nhvk::stats
