// SPDX-License-Identifier: MIT
#include "pipeline/reduce_stage.hpp"

#include "nhvk/stats/chunk_metrics.hpp"

#include "inspect.hpp"
#include "pipeline/partial_state.hpp"
#include "stats/fit_law.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <limits>
#include <sstream>
#include <vector>

namespace nhvk {

namespace {
std::size_t exact_budget_bytes(const RunConfig& cfg) {
    return static_cast<std::size_t>(cfg.run.exact_memory_mb) * 1024u * 1024u;
}
/** @brief The unit roundoff ε of the integration's precision. */
double precision_epsilon(Precision p) { return p == Precision::f32 ? 1.1920928955078125e-07 : 2.220446049250313e-16; }
/** @brief The d_q below which two integrations of coinciding dynamics cannot be told apart, for states and time
 *         scales of order 1: the tolerance each is held to (dopri5: rtol; rk4: its local error dt⁴), at least 10 ε.
 *
 *  NOTE: not ε · max_steps: that lets every allowed step add a rounding, 0.017 in float, far above the real
 *  divergence of a short fit window; two integrations of coinciding dynamics differ by about their tolerance, not by
 *  max_steps roundings (the measurements are in the commit that made this floor). */
double accuracy_floor(const IntegratorSettings& s) {
    const double tol = adaptive_method(s.method) ? s.rtol : std::pow(s.dt, method_info(s.method).order);
    return std::max(tol, 10.0 * precision_epsilon(s.precision));
}

/// leads a sweep's state ("NHVKSWP3"): the layout with each point's kind and the pooled statistics; an older one
/// began with the point count ("NHVKSWP2": the points' summaries without the long-time rate's fits)
constexpr std::uint64_t sweep_state_tag = 0x3350575348564b4eull;
/// a sweep point's state: no member in this part, an open point's statistics, or a finished point's summaries
constexpr std::uint8_t point_empty = 0u, point_open = 1u, point_done = 2u;

/** @brief What `finish` made of a point, besides its counts (put_tally): its summaries, fits and flags. */
void put_point_summaries(std::string& out, const EnsembleResult& r) {
    bytes::put_vector(out, r.series);
    for (const std::uint64_t v : {r.requested, r.first, r.end}) bytes::put(out, v);
    for (const double v :
         {r.histogram_resolution, r.histogram_lo, r.histogram_hi, r.histogram_window_decades, r.growth_q, r.growth_v})
        bytes::put(out, v);
    bytes::put(out, r.growth_fit_q);
    bytes::put(out, r.growth_fit_v);
    bytes::put<std::int32_t>(out, r.replicas);
    for (const stats::ReplicaInterval& iv : {r.growth_ci_q, r.growth_ci_v, r.amplitude_ci_q, r.amplitude_ci_v})
        bytes::put(out, iv);
    for (const std::vector<double>* v :
         {&r.replica_growth_q, &r.replica_growth_v, &r.replica_amplitude_q, &r.replica_amplitude_v, &r.alive_fraction})
        bytes::put_vector(out, *v);
    bytes::put_vector(out, r.low_population);
    for (const bool b : {r.exact_quantiles, r.growth_at_rounding_level, r.alive_population, r.balance_flagged})
        bytes::put<std::uint8_t>(out, b ? 1u : 0u);
    for (const std::string* t : {&r.growth_interval_method, &r.growth_interval_withheld, &r.std_interval_withheld,
                                 &r.coincide, &r.coincide_statement, &r.failure_warning, &r.nonfinite_warning})
        bytes::put_string(out, *t);
    bytes::put(out, r.rate.q);
    bytes::put(out, r.rate.v);
    for (const stats::ReplicaInterval& iv :
         {r.rate.slope_ci_q, r.rate.slope_ci_v, r.rate.amplitude_ci_q, r.rate.amplitude_ci_v})
        bytes::put(out, iv);
    for (const std::string* t : {&r.rate.method, &r.rate.withheld}) bytes::put_string(out, *t);
    for (const std::vector<double>* v :
         {&r.rate.group_slopes_q, &r.rate.group_slopes_v, &r.rate.group_amplitudes_q, &r.rate.group_amplitudes_v})
        bytes::put_vector(out, *v);
}

/** @brief Reads what put_point_summaries wrote into `r`. */
void get_point_summaries(bytes::Reader& in, EnsembleResult& r) {
    r.series = in.get_vector<stats::SeriesSummary>();
    for (std::uint64_t* v : {&r.requested, &r.first, &r.end}) *v = in.get<std::uint64_t>();
    for (double* v : {&r.histogram_resolution, &r.histogram_lo, &r.histogram_hi, &r.histogram_window_decades,
                      &r.growth_q, &r.growth_v})
        *v = in.get<double>();
    r.growth_fit_q = in.get<stats::GrowthFit>();
    r.growth_fit_v = in.get<stats::GrowthFit>();
    r.replicas = in.get<std::int32_t>();
    for (stats::ReplicaInterval* iv : {&r.growth_ci_q, &r.growth_ci_v, &r.amplitude_ci_q, &r.amplitude_ci_v})
        *iv = in.get<stats::ReplicaInterval>();
    for (std::vector<double>* v :
         {&r.replica_growth_q, &r.replica_growth_v, &r.replica_amplitude_q, &r.replica_amplitude_v, &r.alive_fraction})
        *v = in.get_vector<double>();
    r.low_population = in.get_vector<int>();
    for (bool* b : {&r.exact_quantiles, &r.growth_at_rounding_level, &r.alive_population, &r.balance_flagged})
        *b = in.get<std::uint8_t>() != 0u;
    for (std::string* t : {&r.growth_interval_method, &r.growth_interval_withheld, &r.std_interval_withheld,
                           &r.coincide, &r.coincide_statement, &r.failure_warning, &r.nonfinite_warning})
        *t = in.get_string();
    r.rate.q = in.get<stats::GrowthFit>();
    r.rate.v = in.get<stats::GrowthFit>();
    for (stats::ReplicaInterval* iv :
         {&r.rate.slope_ci_q, &r.rate.slope_ci_v, &r.rate.amplitude_ci_q, &r.rate.amplitude_ci_v})
        *iv = in.get<stats::ReplicaInterval>();
    for (std::string* t : {&r.rate.method, &r.rate.withheld}) *t = in.get_string();
    for (std::vector<double>* v :
         {&r.rate.group_slopes_q, &r.rate.group_slopes_v, &r.rate.group_amplitudes_q, &r.rate.group_amplitudes_v})
        *v = in.get_vector<double>();
    if (in.remaining() != 0u) throw std::runtime_error(in.what() + ": unexpected bytes after a point's summaries");
}
} // namespace

ReduceStage::ReduceStage(const RunConfig& cfg, EnsembleResult& r, std::size_t budget_bytes, bool point)
    : cfg_(cfg), r_(r), point_(point), shape_(statistics_shape(cfg)),
      acc_(shape_.series, cfg.members(), budget_bytes, {}, shape_.replica_shape()) {
    if (point) return;
    r_.times = cfg.times;
    r_.onset = stats::OnsetHistogram(cfg.times.size());
    r_.diverged_at.assign(cfg.times.size(), 0u);
}

ReduceStage::ReduceStage(const RunConfig& cfg, EnsembleResult& r)
    : ReduceStage(cfg, r, exact_budget_bytes(cfg), false) {
    if (!cfg.sweep) return;
    const std::size_t P = cfg.sweep->configs.size();
    r_.points.assign(P, EnsembleResult{});
    for (std::size_t p = 0; p < P; ++p) {
        EnsembleResult& x = r_.points[p];
        x.times = cfg.sweep->configs[p].times;
        x.onset = stats::OnsetHistogram(x.times.size());
        x.diverged_at.assign(x.times.size(), 0u);
    }
    // NOTE: a point's stage is made at its first members and released once the point is complete: one per point at
    // once would hold every point's partials (1.6 kB per series: 2.5 MB a point at the default 50 output times)
    points_.resize(P);
    done_.assign(P, 0u);
    // NOTE: run.exact_memory_mb bounds the whole job: each point keeps its values while they fit its equal share
    point_budget_ = exact_budget_bytes(cfg) / P;
}

ReduceStage::~ReduceStage() = default;

ReduceStage& ReduceStage::open_point(std::size_t p) {
    if (!points_[p]) points_[p].reset(new ReduceStage(cfg_.sweep->configs[p], r_.points[p], point_budget_, true));
    return *points_[p];
}

std::uint64_t ReduceStage::point_members(std::size_t p) const {
    const EnsembleResult& x = r_.points[p];
    std::uint64_t n = x.valid + x.diverged;
    for (const std::uint64_t f : x.failed_by_dynamics) n += f;
    return n;
}

void ReduceStage::complete_if_full(std::size_t p) {
    const auto N = static_cast<std::uint64_t>(cfg_.run.trajectories);
    if (done_[p] || !points_[p] || point_members(p) != N) return;
    // NOTE: every part of the point was enqueued before this chunk's host part: the chunks after it hold none
    take_from_backend(p);
    ReduceStage& point = *points_[p];
    point.r_.requested = N;
    point.r_.first = p * N;
    point.r_.end = (p + 1) * N;
    point.finish();
    // NOTE: the pooled statistics take the point's (exactly: the same sums, rows and values as any other order)
    acc_.merge(point.acc_);
    points_[p].reset();
    done_[p] = 1u;
}

void ReduceStage::start(EnsembleBackend& backend, std::uint64_t members) {
    if (!points_.empty()) {
        if (sweep_reduced_in_parts(cfg_) && backend.reduces_parts()) {
            // NOTE: every point has the pooled accumulator's shape and histogram (a sweep sets only parameters and
            // sampling)
            backend.start_reduction(acc_.n_series(), acc_.bin_table(), 0u);
            parts_ = &backend;
            on_backend_.assign(points_.size(), 0u);
            part_partials_.resize(acc_.n_series());
            part_counts_.resize(acc_.n_series() * acc_.row_words());
        }
        return;
    }
    values_on_backend_ = acc_.exact() && backend.keeps_values();
    if (!on_host()) backend.start_reduction(acc_.n_series(), acc_.bin_table(), values_on_backend_ ? members : 0u);
}

void ReduceStage::enqueue(EnsembleBackend& backend, int s, std::uint64_t first, long long m) {
    if (parts_) {
        // NOTE: each point's members as a run of that point alone sees them: their index within the point
        for_each_point_range(static_cast<std::uint64_t>(cfg_.run.trajectories), first, m,
                             [&](std::uint64_t p, std::uint64_t i, long long j0, long long len) {
                                 parts_->reduce_part(s, j0, len, i, p);
                                 on_backend_.at(static_cast<std::size_t>(p)) = 1u;
                             });
    } else if (!on_host()) {
        backend.reduce(s, m);
    }
}

void ReduceStage::take_from_backend(std::size_t p) {
    if (!parts_ || !on_backend_[p]) return;
    if (!points_[p]) throw std::logic_error("ReduceStage: a sweep point's parts on the backend without its stage");
    parts_->take_part(p, part_partials_.data(), part_counts_.data(), true);
    points_[p]->acc_.add_partials(part_partials_.data(), part_counts_.data());
    on_backend_[p] = 0u;
}

void ReduceStage::add_chunk(const ChunkArgs& a, long long m) {
    if (!points_.empty()) {
        // NOTE: each point's members as a run of that point alone sees them: their index within the point
        for_each_point_range(static_cast<std::uint64_t>(cfg_.run.trajectories), a.first_member, m,
                             [&](std::uint64_t p, std::uint64_t i, long long j0, long long len) {
                                 ChunkArgs part = member_range(a, j0, len);
                                 part.first_member = i;
                                 const auto q = static_cast<std::size_t>(p);
                                 if (done_.at(q))
                                     throw std::logic_error("ReduceStage: members of a completed sweep point");
                                 open_point(q).add_members(part, len, parts_ == nullptr);
                                 complete_if_full(q);
                             });
    }
    add_members(a, m, true);
}

void ReduceStage::add_members(const ChunkArgs& a, long long m, bool metrics) {
    onset_in_.resize(static_cast<std::size_t>(m));
    for (long long j = 0; j < m; ++j) {
        const auto ss = static_cast<SampleStatus>(a.sample_status[j]);
        const auto st = static_cast<Status>(a.status[j]);
        const bool ok = ss == SampleStatus::ok && st == Status::ok;
        onset_in_[j] =
            ok || (cfg_.alive_population && ss == SampleStatus::ok && a.onset[j] != stats::onset_never) ? 1u : 0u;
        if (ok) {
            ++r_.valid;
        } else if (ss == SampleStatus::ok && st == Status::diverged) {
            // NOTE: stopped by divergence.stop_at after reaching fail_index[j] >= 1 output times (the last of them
            // the one where d_q passed it); its onset lies at or before that time, since stop_at > onset_threshold
            ++r_.diverged;
            const std::int32_t reached = a.fail_index[j];
            if (reached >= 1 && static_cast<std::size_t>(reached) <= r_.diverged_at.size())
                ++r_.diverged_at[reached - 1];
        } else if (ss != SampleStatus::ok) {
            ++r_.sampling[static_cast<int>(ss)];
            ++r_.failed_by_dynamics[0];
        } else {
            const int dyn = a.failed[j] < 3 ? a.failed[j] : 0;
            ++r_.failed_by_status[static_cast<int>(st)];
            ++r_.failed_by_dynamics[dyn];
            ++r_.failed_by_dynamics_status[dyn][static_cast<int>(st)];
            if (cfg_.alive_population && a.onset[j] == stats::onset_never) ++r_.onset.censored;
        }
    }
    if (metrics && on_host() && points_.empty()) acc_.add_chunk(stats::metrics_view(a, m));
    r_.onset.add_chunk(a.onset, static_cast<std::size_t>(m), onset_in_.data());
}

namespace {
/** @brief Where the values of exact quantiles are when the backend's statistics come to the host: none (histogram
 *         quantiles), kept by the backend and brought here, or kept by the backend to select there. */
enum class Values { none, brought, elsewhere };

/** @brief The backend's running statistics into `acc`: the partials and histogram rows, and the values as `v` says
 *         (an exact accumulator stays exact unless `v` is none). */
void add_backend_statistics(stats::EnsembleAccumulator& acc, EnsembleBackend& backend, Values v) {
    std::vector<stats::SeriesPartial> partials(acc.n_series());
    std::vector<std::uint64_t> counts(acc.n_series() * acc.row_words(), 0u);
    backend.collect(partials.data(), counts.data());
    if (v == Values::none) {
        acc.add_partials(partials.data(), counts.data());
    } else if (v == Values::elsewhere) {
        acc.add_partials_values_elsewhere(partials.data(), counts.data());
    } else {
        std::vector<std::vector<double>> values(acc.n_series());
        backend.download_values(values);
        acc.add_partials_with_values(partials.data(), counts.data(), values);
    }
}
} // namespace

std::string ReduceStage::snapshot(EnsembleBackend& backend) const {
    std::string out;
    if (!points_.empty()) {
        // NOTE: a sweep's state: each point's counts and, by its kind, nothing (no member here), its open stage's
        // statistics or its finished summaries; then the pooled statistics of the finished points
        bytes::put<std::uint64_t>(out, sweep_state_tag);
        bytes::put<std::uint64_t>(out, points_.size());
        for (std::size_t p = 0; p < points_.size(); ++p) {
            std::string tally;
            put_tally(tally, r_.points[p]);
            bytes::put_string(out, tally);
            if (done_[p]) {
                bytes::put<std::uint8_t>(out, point_done);
                std::string summaries;
                put_point_summaries(summaries, r_.points[p]);
                bytes::put_string(out, summaries);
            } else if (points_[p] && parts_ && on_backend_[p]) {
                // NOTE: the point's statistics so far: the host's and the backend's parts, which the backend keeps
                bytes::put<std::uint8_t>(out, point_open);
                stats::EnsembleAccumulator copy = points_[p]->acc_;
                std::vector<stats::SeriesPartial> partials(copy.n_series());
                std::vector<std::uint64_t> counts(copy.n_series() * copy.row_words());
                parts_->take_part(p, partials.data(), counts.data(), false);
                copy.add_partials(partials.data(), counts.data());
                std::string state;
                copy.save(state);
                bytes::put_string(out, state);
            } else if (points_[p]) {
                bytes::put<std::uint8_t>(out, point_open);
                bytes::put_string(out, points_[p]->snapshot(backend));
            } else {
                bytes::put<std::uint8_t>(out, point_empty);
            }
        }
        acc_.save(out);
        return out;
    }
    if (on_host() || collected_) {
        acc_.save(out);
    } else {
        stats::EnsembleAccumulator copy = acc_;
        add_backend_statistics(copy, backend, values_on_backend_ ? Values::brought : Values::none);
        copy.save(out);
    }
    return out;
}

void ReduceStage::add_points(const std::string& data, const std::string& what, bool restore) {
    bytes::Reader in(data, what);
    if (in.get<std::uint64_t>() != sweep_state_tag)
        throw std::runtime_error(what + ": a sweep state of an older nhvk (each point's statistics kept whole); this "
                                        "nhvk cannot continue or merge it: rerun that part");
    const auto P = in.get<std::uint64_t>();
    if (P != points_.size())
        throw std::runtime_error(what + ": the state holds " + std::to_string(P) + " sweep points, this run has " +
                                 std::to_string(points_.size()));
    for (std::size_t p = 0; p < points_.size(); ++p) {
        const std::string w = what + " (sweep point " + std::to_string(p) + ")";
        const std::string tally_bytes = in.get_string();
        const auto kind = in.get<std::uint8_t>();
        bytes::Reader t(tally_bytes, w);
        EnsembleResult tally;
        get_tally(t, tally);
        const bool has_members = tally.valid + tally.diverged + tally.failed_by_dynamics[0] +
                                     tally.failed_by_dynamics[1] + tally.failed_by_dynamics[2] >
                                 0u;
        if (kind == point_done) {
            // NOTE: a point is finished only with all its members, so no other part holds any of them
            if (done_[p] || points_[p] || point_members(p) > 0u)
                throw std::runtime_error(w + ": finished in this state and begun in another part of the run");
            EnsembleResult& x = r_.points[p];
            add_tally(x, tally);
            const std::string summaries = in.get_string();
            bytes::Reader sr(summaries, w);
            get_point_summaries(sr, x);
            done_[p] = 1u;
            continue;
        }
        if (kind != point_open && kind != point_empty) throw std::runtime_error(w + ": unknown kind of point state");
        if (kind == point_empty) {
            if (has_members) throw std::runtime_error(w + ": members counted without their statistics");
            continue;
        }
        if (done_[p]) throw std::runtime_error(w + ": begun in this state and finished in another part of the run");
        const std::string statistics = in.get_string();
        add_tally(r_.points[p], tally);
        ReduceStage& point = open_point(p);
        if (restore) point.restore(statistics, w);
        else point.merge(statistics, w);
    }
    if (restore) {
        acc_.load(in);
    } else {
        // NOTE: an empty accumulator of the same shape to load into, not a copy of this one's values
        stats::EnsembleAccumulator other(shape_.series, cfg_.members(), exact_budget_bytes(cfg_), {},
                                         shape_.replica_shape());
        other.load(in);
        acc_.merge(other);
    }
    if (in.remaining() != 0u) throw std::runtime_error(what + ": unexpected bytes after the sweep state");
    for (std::size_t p = 0; p < points_.size(); ++p) complete_if_full(p);
}

void ReduceStage::restore(const std::string& data, const std::string& what) {
    if (!points_.empty()) return add_points(data, what, true);
    bytes::Reader in(data, what);
    acc_.load(in);
}

void ReduceStage::merge(const std::string& data, const std::string& what) {
    if (!points_.empty()) return add_points(data, what, false);
    stats::EnsembleAccumulator other = acc_;
    bytes::Reader in(data, what);
    other.load(in);
    acc_.merge(other);
}

void ReduceStage::add_part(const PartialState& part, const std::string& what) {
    add_tally(r_, part.tally);
    merge(part.statistics, what);
    r_.sampling_seconds += part.sampling_seconds;
    r_.integration_seconds += part.integration_seconds;
    r_.reduction_seconds += part.reduction_seconds;
    r_.transfer_seconds += part.transfer_seconds;
}

void ReduceStage::collect(EnsembleBackend& backend, bool select_there) {
    if (collected_) return;
    collected_ = true;
    // NOTE: the points still open (a part of a sweep shared with another rank or shard) keep parts on the backend
    for (std::size_t p = 0; p < on_backend_.size(); ++p) take_from_backend(p);
    if (on_host()) return;
    if (values_on_backend_ && select_there && acc_.stored_values() == 0u) {
        add_backend_statistics(acc_, backend, Values::elsewhere);
        selecting_ = &backend;
        return;
    }
    add_backend_statistics(acc_, backend, values_on_backend_ ? Values::brought : Values::none);
}

void ReduceStage::finish() {
    if (!points_.empty()) {
        // Each point's statistics, as its own run's; then the pooled ones from all of them. The points complete here
        // were finished as their last members came; the others (none, or those another part of the run shares) here.
        const std::uint64_t N = static_cast<std::uint64_t>(cfg_.run.trajectories);
        std::vector<const stats::EnsembleAccumulator*> open;
        for (std::size_t p = 0; p < points_.size(); ++p) {
            if (done_[p]) continue;
            ReduceStage& point = open_point(p);
            const std::uint64_t first = std::max<std::uint64_t>(r_.first, p * N),
                                end = std::min<std::uint64_t>(r_.end, (p + 1) * N);
            point.r_.requested = end > first ? end - first : 0u;
            point.r_.first = p * N;
            point.r_.end = (p + 1) * N;
            point.finish();
            // NOTE: a point without a member here leaves nothing to save or pool
            if (point_members(p) == 0u) points_[p].reset();
            else open.push_back(&point.acc_);
        }
        if (!open.empty()) {
            // NOTE: the open points stay as they are (a shard's partial state saves them after this), so the pooled
            // summaries read them, and the pooled accumulator, by reference rather than merged
            open.insert(open.begin(), &acc_);
            pooled_view_ =
                std::make_unique<stats::EnsembleAccumulator>(shape_.series, cfg_.members(), exact_budget_bytes(cfg_),
                                                             stats::LogHistogramSpec{}, shape_.replica_shape());
            pooled_view_->merge_referencing(open);
        }
    }
    const int nt = static_cast<int>(cfg_.times.size());
    stats::EnsembleAccumulator::OrderStatistics elsewhere;
    if (selecting_)
        elsewhere = [this](const std::vector<std::vector<std::uint64_t>>& ranks,
                           std::vector<std::vector<double>>& out) { selecting_->order_statistics(ranks, out); };
    stats::EnsembleAccumulator& acc = summarised();
    r_.series = acc.finalize(elsewhere);
    std::vector<stats::SeriesSummary> replica_series(r_.series.begin() + static_cast<std::ptrdiff_t>(shape_.base),
                                                     r_.series.end());
    r_.series.resize(shape_.base);
    // NOTE: the replica groups' summaries were copied above: a sweep point keeps its own rows only
    r_.series.shrink_to_fit();
    r_.exact_quantiles = acc.exact();
    r_.histogram_resolution = acc.histogram_relative_resolution();
    r_.histogram_lo = std::numeric_limits<double>::min();
    r_.histogram_hi = std::numeric_limits<double>::max();
    r_.histogram_window_decades = acc.spec().window_decades();
    std::vector<double> rel_t(nt);
    for (int i = 0; i < nt; ++i) rel_t[i] = cfg_.times[i] - cfg_.t0;
    replica_intervals(replica_series, rel_t);
    r_.alive_population = cfg_.alive_population;
    const double balance = r_.max_over_times(metric_balance_nh);
    // NOTE: a non-finite balance is flagged too: max_over_times sees only the finite values, so a model whose energy
    // is NaN for some members (log of a negative number) showed a clean maximum over the rest
    r_.balance_flagged =
        (std::isfinite(balance) && balance > cfg_.balance_tolerance) || r_.nonfinite_over_times(metric_balance_nh) > 0u;
    nonfinite_warning();
    const double floor = accuracy_floor(cfg_.integrator);
    r_.growth_at_rounding_level = r_.growth_fit_q.points > 0 && r_.growth_fit_q.max_median < floor;
    populations();
    coincidence(floor);
}

namespace {
/** @brief log C of a fit, NaN without a positive amplitude (the amplitude's intervals are made on log C). */
double log_amplitude(const stats::GrowthFit& f) {
    return f.amplitude > 0.0 ? std::log(f.amplitude) : std::numeric_limits<double>::quiet_NaN();
}
/** @brief An interval of log C as one of C. */
stats::ReplicaInterval exp_bounds(stats::ReplicaInterval iv) {
    iv.lo = std::exp(iv.lo);
    iv.hi = std::exp(iv.hi);
    return iv;
}
} // namespace

stats::FitSpec growth_fit_spec(const RunConfig& cfg, bool v) {
    stats::FitSpec spec;
    spec.t_min = cfg.growth_t_min - cfg.t0;
    spec.t_max = cfg.growth_t_max - cfg.t0;
    spec.fixed_slope = v ? cfg.growth_exponent_v : cfg.growth_exponent;
    return spec;
}

void ReduceStage::replica_intervals(const std::vector<stats::SeriesSummary>& rs, const std::vector<double>& rel_t) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::size_t R = shape_.replicas;
    r_.replicas = static_cast<int>(R);
    const auto group = [&](std::size_t g, std::size_t s0) -> const stats::SeriesSummary& {
        return rs[shape_.replica_series(g, s0) - shape_.base];
    };
    r_.std_interval_withheld.clear();
    // the fewest members of any group in row s0
    const auto fewest = [&](std::size_t s0) {
        std::uint64_t n = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t g = 0; g < R; ++g) n = std::min(n, group(g, s0).count);
        return n;
    };
    std::vector<double> v(R);
    std::size_t withheld = 0, fewest_std = std::numeric_limits<std::size_t>::max();
    for (std::size_t s0 = 0; s0 < shape_.replicated; ++s0) {
        stats::SeriesSummary& pooled = r_.series[s0];
        const std::uint64_t n = fewest(s0);
        if (n < stats::min_group_members) {
            // NOTE: std_se, std_lo, std_hi stay NaN (finalize's); the run says why once for all such series
            ++withheld;
            fewest_std = std::min<std::size_t>(fewest_std, static_cast<std::size_t>(n));
            continue;
        }
        for (std::size_t g = 0; g < R; ++g) v[g] = group(g, s0).std;
        const stats::ReplicaInterval iv = stats::replica_interval(pooled.std, v);
        pooled.std_se = iv.se;
        // NOTE: a standard deviation is never negative; t·se can exceed it with few groups (2 groups: t = 12.7)
        pooled.std_lo = std::isfinite(iv.lo) ? std::max(0.0, iv.lo) : iv.lo;
        pooled.std_hi = iv.hi;
    }
    if (withheld > 0) {
        std::ostringstream os;
        os << "no interval of the std at " << withheld << " of the " << shape_.replicated
           << " series of d_q and d_v: a replica group held " << fewest_std << " member" << (fewest_std == 1 ? "" : "s")
           << " there (of " << R << " groups), fewer than the " << stats::min_group_members << " an interval needs";
        r_.std_interval_withheld = os.str();
    }
    FittedLaw g = law_fits(growth_fit_spec(cfg_, false), growth_fit_spec(cfg_, true), cfg_.growth_statistic, rs, rel_t);
    r_.growth_fit_q = g.q;
    r_.growth_fit_v = g.v;
    r_.growth_q = g.q.slope;
    r_.growth_v = g.v.slope;
    r_.growth_ci_q = g.slope_ci_q;
    r_.growth_ci_v = g.slope_ci_v;
    r_.amplitude_ci_q = g.amplitude_ci_q;
    r_.amplitude_ci_v = g.amplitude_ci_v;
    r_.growth_interval_method = g.method;
    r_.growth_interval_withheld = g.withheld;
    r_.replica_growth_q = std::move(g.group_slopes_q);
    r_.replica_growth_v = std::move(g.group_slopes_v);
    r_.replica_amplitude_q = std::move(g.group_amplitudes_q);
    r_.replica_amplitude_v = std::move(g.group_amplitudes_v);
    if (cfg_.rate_fit) {
        stats::FitSpec rate;
        rate.law = stats::FitLaw::exponential;
        rate.t_min = cfg_.rate_t_min - cfg_.t0;
        rate.t_max = cfg_.rate_t_max - cfg_.t0;
        r_.rate = law_fits(rate, rate, cfg_.rate_statistic, rs, rel_t);
    } else {
        // NOTE: no rate asked for: NaN (an empty field in sweep_points.csv), not a rate of 0
        stats::GrowthFit none;
        none.slope = none.amplitude = none.r_squared = nan;
        r_.rate = FittedLaw{};
        r_.rate.q = r_.rate.v = none;
        r_.rate.slope_ci_q = r_.rate.slope_ci_v = r_.rate.amplitude_ci_q = r_.rate.amplitude_ci_v = {0u, nan, nan, nan};
    }
}

FittedLaw ReduceStage::law_fits(const stats::FitSpec& spec_q, const stats::FitSpec& spec_v,
                                const std::string& statistic, const std::vector<stats::SeriesSummary>& rs,
                                const std::vector<double>& rel_t) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::size_t R = shape_.replicas, nt = cfg_.times.size();
    FittedLaw out;
    out.slope_ci_q = out.slope_ci_v = out.amplitude_ci_q = out.amplitude_ci_v = {0u, nan, nan, nan};
    // NOTE: the two specs differ only in a fixed slope: one window for both metrics
    const stats::FitSpec& spec = spec_q;
    const auto spec_of = [&](int metric) -> const stats::FitSpec& { return metric == metric_dq ? spec_q : spec_v; };
    const auto in_window = [&](std::size_t i) { return spec.holds(rel_t[i]); };
    std::vector<double> y(nt);
    for (int metric : {metric_dq, metric_dv}) {
        for (std::size_t i = 0; i < nt; ++i) y[i] = stats::fit_statistic(r_.at(metric, static_cast<int>(i)), statistic);
        (metric == metric_dq ? out.q : out.v) = stats::fit_law(rel_t, y, spec_of(metric));
    }
    const auto group = [&](std::size_t g, std::size_t s0) -> const stats::SeriesSummary& {
        return rs[shape_.replica_series(g, s0) - shape_.base];
    };
    const auto fewest = [&](std::size_t s0) {
        std::uint64_t n = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t g = 0; g < R; ++g) n = std::min(n, group(g, s0).count);
        return n;
    };
    // The fit's intervals read every group at every output time of the fit window.
    std::uint64_t fewest_fit = std::numeric_limits<std::uint64_t>::max();
    double fewest_at = nan;
    for (int metric : {metric_dq, metric_dv})
        for (std::size_t i = 0; i < nt && R > 0u; ++i) {
            if (!in_window(i)) continue;
            const std::uint64_t n = fewest(static_cast<std::size_t>(metric) * nt + i);
            if (n < fewest_fit) {
                fewest_fit = n;
                fewest_at = cfg_.times[i];
            }
        }
    const bool fit_withheld = R > 0u && fewest_fit < stats::min_group_members;
    if (fit_withheld) {
        std::ostringstream os;
        os << std::setprecision(4) << "no sampling interval: of the statistics.replicas = " << R
           << " replica groups the smallest holds " << fewest_fit << " member" << (fewest_fit == 1u ? "" : "s")
           << " (at t = " << fewest_at << " in the fit window), fewer than the " << stats::min_group_members
           << " an interval needs (" << r_.integrated()
           << " members integrated: lower statistics.replicas or raise run.trajectories)";
        out.withheld = os.str();
    }
    // Each group's own fit (reported, and the batch means' intervals), then the fits that leave one group out.
    std::vector<double> own(nt), log_c(R);
    const auto own_fits = [&](int metric, const stats::GrowthFit& pooled, std::vector<double>& slopes,
                              std::vector<double>& amplitudes, stats::ReplicaInterval& p_ci,
                              stats::ReplicaInterval& c_ci) {
        slopes.assign(R, 0.0);
        amplitudes.assign(R, 0.0);
        for (std::size_t g = 0; g < R; ++g) {
            for (std::size_t i = 0; i < nt; ++i)
                own[i] = stats::fit_statistic(group(g, static_cast<std::size_t>(metric) * nt + i), statistic);
            const stats::GrowthFit f = stats::fit_law(rel_t, own, spec_of(metric));
            slopes[g] = f.slope;
            amplitudes[g] = f.amplitude;
            log_c[g] = log_amplitude(f);
        }
        // NOTE: a fixed exponent has no sampling error of its own: its interval is the value itself
        p_ci = spec_of(metric).fixed() ? stats::ReplicaInterval{R, 0.0, pooled.slope, pooled.slope}
                                       : stats::replica_interval(pooled.slope, slopes);
        c_ci = exp_bounds(stats::replica_interval(log_amplitude(pooled), log_c));
    };
    own_fits(metric_dq, out.q, out.group_slopes_q, out.group_amplitudes_q, out.slope_ci_q, out.amplitude_ci_q);
    own_fits(metric_dv, out.v, out.group_slopes_v, out.group_amplitudes_v, out.slope_ci_v, out.amplitude_ci_v);
    if (R == 0u) {
        out.slope_ci_q = out.slope_ci_v = out.amplitude_ci_q = out.amplitude_ci_v = {0u, nan, nan, nan};
        return out;
    }
    if (fit_withheld) {
        // NOTE: the groups' own fits stay (group_exponents), but no interval is made of them
        out.slope_ci_q = out.slope_ci_v = out.amplitude_ci_q = out.amplitude_ci_v = {0u, nan, nan, nan};
        return out;
    }
    out.method = "batch_means";
    // NOTE: the delete-one-group jackknife: each fit leaves out one group, so it sees (R − 1)/R of the ensemble rather
    // than 1/R, and its spread follows the pooled fit's sampling error where the groups are small, as the groups' own
    // fits do not (bench/results/2026-11-24-error-bars.md). The batch means stay only where the jackknife's fits are
    // not finite, and for the quantiles other than the median, whose leave-one-out values no backend selects. Where
    // a backend keeps the values (exact quantiles on the device), it selects and reads them there, so every backend
    // gives the same intervals.
    if (statistic != "median" && statistic != "mean") return out;
    std::vector<double> ps(R);
    std::vector<std::vector<double>> left_out(R, std::vector<double>(nt)); // [g][i]: the statistic without group g
    const auto jackknife = [&](int metric, const stats::GrowthFit& pooled, stats::ReplicaInterval& p_ci,
                               stats::ReplicaInterval& c_ci) {
        // NOTE: without a pooled fit there is no interval to centre, so no median is selected (a run with too few
        // output times in the window would select and band them for nothing)
        if (!std::isfinite(pooled.slope) || !std::isfinite(log_amplitude(pooled))) return false;
        for (std::size_t g = 0; g < R; ++g) std::fill(left_out[g].begin(), left_out[g].end(), nan);
        if (statistic == "mean") {
            // the mean of every group but g from the groups' counts and means: (Σ n_h m_h − n_g m_g)/(Σ n_h − n_g)
            for (std::size_t i = 0; i < nt; ++i) {
                if (!in_window(i)) continue;
                const std::size_t row = static_cast<std::size_t>(metric) * nt + i;
                double sum = 0.0, n = 0.0;
                for (std::size_t h = 0; h < R; ++h) {
                    const stats::SeriesSummary& s = group(h, row);
                    if (s.count == 0u) continue;
                    sum += static_cast<double>(s.count) * s.mean;
                    n += static_cast<double>(s.count);
                }
                for (std::size_t g = 0; g < R; ++g) {
                    const stats::SeriesSummary& s = group(g, row);
                    const double ng = static_cast<double>(s.count);
                    left_out[g][i] = n - ng > 0.0 ? (sum - (s.count ? ng * s.mean : 0.0)) / (n - ng) : nan;
                }
            }
        } else {
            // the output times in the window, all in one call: where a backend keeps the values it selects in every
            // row at once, and each group's median among the others in the row's band, there
            std::vector<std::vector<std::size_t>> sets;
            std::vector<std::size_t> rows, at;
            for (std::size_t i = 0; i < nt; ++i) {
                if (!in_window(i)) continue;
                const std::size_t row = static_cast<std::size_t>(metric) * nt + i;
                std::vector<std::size_t> groups(R);
                for (std::size_t h = 0; h < R; ++h) groups[h] = shape_.replica_series(h, row);
                sets.push_back(std::move(groups));
                rows.push_back(row);
                at.push_back(i);
            }
            const auto m = summarised().leave_one_out_medians(
                sets, rows,
                [this](const std::vector<std::vector<std::uint64_t>>& ranks, std::vector<std::vector<double>>& o) {
                    selecting_->order_statistics(ranks, o);
                },
                [this](const std::vector<std::size_t>& groups, double a, double b,
                       const std::vector<std::vector<std::uint64_t>>& ranks, std::vector<std::vector<double>>& o) {
                    selecting_->band_order_statistics(groups, a, b, ranks, o);
                });
            for (std::size_t k = 0; k < at.size(); ++k)
                for (std::size_t g = 0; g < R; ++g) left_out[g][at[k]] = m[k][g];
        }
        for (std::size_t g = 0; g < R; ++g) {
            const stats::GrowthFit f = stats::fit_law(rel_t, left_out[g], spec_of(metric));
            ps[g] = f.slope;
            log_c[g] = log_amplitude(f);
            if (!std::isfinite(ps[g]) || !std::isfinite(log_c[g])) return false;
        }
        p_ci = spec_of(metric).fixed() ? stats::ReplicaInterval{R, 0.0, pooled.slope, pooled.slope}
                                       : stats::jackknife_interval(pooled.slope, ps);
        c_ci = exp_bounds(stats::jackknife_interval(log_amplitude(pooled), log_c));
        return true;
    };
    stats::ReplicaInterval pq, cq, pv, cv;
    if (jackknife(metric_dq, out.q, pq, cq) && jackknife(metric_dv, out.v, pv, cv)) {
        out.slope_ci_q = pq;
        out.amplitude_ci_q = cq;
        out.slope_ci_v = pv;
        out.amplitude_ci_v = cv;
        out.method = "jackknife";
    }
    return out;
}

void ReduceStage::nonfinite_warning() {
    std::ostringstream os;
    bool energy = false, other = false;
    for (int m = 0; m < metric_count; ++m) {
        const std::uint64_t n = r_.nonfinite_over_times(m);
        if (n == 0u) continue;
        os << (os.tellp() > 0 ? ", " : "") << metric_name(m) << " (" << n << ")";
        const MetricGroup g = metric_info(m).group;
        if (g == MetricGroup::divergence || g == MetricGroup::residual) other = true;
        else energy = true;
    }
    r_.nonfinite_warning.clear();
    if (os.tellp() == 0) return;
    std::string why;
    if (energy)
        why = "the energy E = v·L_v − L or the work integrals are NaN or infinite at those members' states (the "
              "Lagrangian or a force is not finite there: a log or sqrt of a negative number, a division by 0)";
    if (other)
        why += std::string(why.empty() ? "" : "; ") +
               "a divergence or constraint residual is NaN or infinite although the member's integration ended ok";
    r_.nonfinite_warning = "non-finite values, most members at one output time per metric: " + os.str() + ": " + why +
                           ". They are left out of the statistics (stats.csv's nonfinite column), so the maxima and "
                           "quantiles describe only the finite values";
}

void ReduceStage::coincidence(double rounding) {
    const int nt = static_cast<int>(cfg_.times.size());
    bool any = false, zero = true;
    for (int i = 0; i < nt; ++i) {
        const stats::SeriesSummary& q = r_.at(metric_dq, i);
        if (!(cfg_.times[i] <= cfg_.growth_t_max) || q.count == 0u) continue;
        any = true;
        zero = zero && q.max == 0.0;
    }
    std::ostringstream os;
    os << std::setprecision(4);
    if (any && zero) {
        r_.coincide = "exact";
        os << "the two dynamics coincide for this ensemble: d_q = 0 for every member at every output time t <= "
           << cfg_.growth_t_max;
    } else if (r_.growth_at_rounding_level) {
        r_.coincide = "rounding_level";
        os << "the two dynamics coincide for this ensemble to rounding: the median d_q stays at or below "
           << r_.growth_fit_q.max_median << " for t <= " << cfg_.growth_t_max
           << " (under the integration's accuracy, max("
           << (adaptive_method(cfg_.integrator.method)
                   ? std::string("rtol")
                   : "dt^" + std::to_string(method_info(cfg_.integrator.method).order))
           << ", 10 eps) = " << rounding << ")";
    } else {
        r_.coincide.clear();
        r_.coincide_statement.clear();
        return;
    }
    // NOTE: the classification says whether the constraints force it; one that fails (no sample state inside the
    // model's charts) leaves the statement without a reason rather than the run without its summary
    try {
        const nlohmann::json c = classification_json(cfg_.model.name, cfg_.params);
        const nlohmann::json& must = c["system"]["dynamics_must_coincide"];
        std::string why;
        for (const auto& st : c["statements"])
            if (st.get<std::string>().find("must coincide") != std::string::npos) why = st.get<std::string>();
        const double span = cfg_.growth_t_max - cfg_.t0, eps = precision_epsilon(cfg_.integrator.precision);
        if (must.is_boolean() && must.get<bool>() && !why.empty()) os << "; nhvk inspect: " << why;
        else if (span * span < eps)
            // NOTE: not the initial states: the two dynamics separate like (t - t0)^2 or (t - t0)^3 at first, and
            // over a span whose square is below ε the separation stays under the rounding of states of order 1
            os << "; the constraints do not force it (nhvk inspect: dynamics must coincide: "
               << (must.is_boolean() ? "no" : "undecided") << "), but the fit window is too short to show a "
               << "difference: t - t0 <= " << span << ", under sqrt(eps) = " << std::sqrt(eps)
               << ", and the separation, which grows like (t - t0)^2 or (t - t0)^3 at first, stays under the rounding "
                  "of the states (raise times.t_end or divergence.growth_t_max)";
        else
            os << "; the constraints do not force it (nhvk inspect: dynamics must coincide: "
               << (must.is_boolean() ? "no" : "undecided")
               << "), so it comes from this ensemble's initial states and parameters (e.g. mu0 = 0 where the two "
                  "start alike)";
    } catch (const std::exception&) {
        os << "; the constraints could not be classified (nhvk inspect)";
    }
    r_.coincide_statement = os.str();
}

void ReduceStage::populations() {
    const int nt = static_cast<int>(cfg_.times.size());
    const std::uint64_t integrated = r_.integrated();
    r_.alive_fraction.assign(static_cast<std::size_t>(nt), std::numeric_limits<double>::quiet_NaN());
    r_.low_population.clear();
    for (int i = 0; i < nt && integrated > 0; ++i) {
        r_.alive_fraction[i] = static_cast<double>(r_.at(metric_dq, i).count) / static_cast<double>(integrated);
        if (r_.alive_fraction[i] < cfg_.low_population_fraction) r_.low_population.push_back(i);
    }
    r_.failure_warning.clear();
    if (r_.failed() * 2u <= r_.requested) return;
    // NOTE: the most common single cause, (dynamics, status) or a sampling status; ties go to the first in the
    // order of the status enums, so the message does not depend on anything but the counts
    std::uint64_t most = 0;
    std::string what;
    for (int d = 1; d < 3; ++d)
        for (int st = 1; st < status_count; ++st)
            if (r_.failed_by_dynamics_status[d][st] > most) {
                most = r_.failed_by_dynamics_status[d][st];
                what = std::string(d == 1 ? "the nonholonomic" : "the vakonomic") + " dynamics ending with " +
                       status_name(static_cast<Status>(st));
            }
    for (int st = 1; st < sample_status_count; ++st)
        if (r_.sampling[st] > most) {
            most = r_.sampling[st];
            what = std::string("sampling failed with ") + sample_status_name(static_cast<SampleStatus>(st));
        }
    r_.failure_warning = "most members failed (" + std::to_string(r_.failed()) + " of " + std::to_string(r_.requested) +
                         "), most often " + what + " (" + std::to_string(most) + "): the statistics describe the " +
                         std::to_string(r_.valid) + " that reached t_end" +
                         (cfg_.alive_population ? " and, at earlier times, the others up to their failure" : "");
}

} // namespace nhvk
