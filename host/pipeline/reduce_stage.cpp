// SPDX-License-Identifier: MIT
#include "pipeline/reduce_stage.hpp"

#include "nhvk/stats/chunk_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace nhvk {

ReduceStage::ReduceStage(const RunConfig& cfg, EnsembleResult& r)
    : cfg_(cfg), r_(r), acc_(static_cast<std::size_t>(metric_rows(static_cast<int>(cfg.times.size()))),
                             static_cast<std::uint64_t>(cfg.run.trajectories),
                             static_cast<std::size_t>(cfg.run.exact_memory_mb) * 1024u * 1024u) {
    r_.onset = stats::OnsetHistogram(cfg.times.size());
}

void ReduceStage::start(EnsembleBackend& backend) {
    if (!on_host()) backend.start_reduction(acc_.n_series(), acc_.bin_table());
}

void ReduceStage::add_chunk(const ChunkArgs& a, long long m) {
    valid_.resize(static_cast<std::size_t>(m));
    onset_in_.resize(static_cast<std::size_t>(m));
    for (long long j = 0; j < m; ++j) {
        const auto ss = static_cast<SampleStatus>(a.sample_status[j]);
        const auto st = static_cast<Status>(a.status[j]);
        const bool ok = ss == SampleStatus::ok && st == Status::ok;
        // NOTE: valid_ is the sampler's verdict; a failed integration still counts at the times it reached when the
        // population is "alive" (ChunkView::fail_index).
        valid_[j] = ss == SampleStatus::ok ? 1u : 0u;
        onset_in_[j] =
            ok || (cfg_.alive_population && ss == SampleStatus::ok && a.onset[j] != stats::onset_never) ? 1u : 0u;
        if (ok) {
            ++r_.valid;
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
    if (on_host()) acc_.add_chunk(stats::metrics_view(a, m, valid_.data()));
    r_.onset.add_chunk(a.onset, static_cast<std::size_t>(m), onset_in_.data());
}

namespace {
void add_backend_statistics(stats::EnsembleAccumulator& acc, EnsembleBackend& backend) {
    std::vector<stats::SeriesPartial> partials(acc.n_series());
    std::vector<std::uint64_t> counts(acc.n_series() * acc.row_words(), 0u);
    backend.collect(partials.data(), counts.data());
    acc.add_partials(partials.data(), counts.data());
}
} // namespace

std::string ReduceStage::snapshot(EnsembleBackend& backend) const {
    std::string out;
    if (on_host() || collected_) {
        acc_.save(out);
    } else {
        stats::EnsembleAccumulator copy = acc_;
        add_backend_statistics(copy, backend);
        copy.save(out);
    }
    return out;
}

void ReduceStage::restore(const std::string& bytes, const std::string& what) {
    bytes::Reader in(bytes, what);
    acc_.load(in);
}

void ReduceStage::merge(const std::string& bytes, const std::string& what) {
    stats::EnsembleAccumulator other = acc_;
    bytes::Reader in(bytes, what);
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

void ReduceStage::collect(EnsembleBackend& backend) {
    if (!on_host() && !collected_) add_backend_statistics(acc_, backend);
    collected_ = true;
}

void ReduceStage::finish() {
    const int nt = static_cast<int>(cfg_.times.size());
    r_.series = acc_.finalize();
    r_.exact_quantiles = acc_.exact();
    r_.histogram_resolution = acc_.histogram_relative_resolution();
    r_.histogram_lo = std::numeric_limits<double>::min();
    r_.histogram_hi = std::numeric_limits<double>::max();
    r_.histogram_window_decades = acc_.spec().window_decades();
    std::vector<double> med_q(nt), med_v(nt), rel_t(nt);
    for (int i = 0; i < nt; ++i) {
        med_q[i] = r_.at(metric_dq, i).p50;
        med_v[i] = r_.at(metric_dv, i).p50;
        rel_t[i] = cfg_.times[i] - cfg_.t0;
    }
    r_.growth_fit_q = stats::growth_fit(rel_t, med_q, cfg_.growth_t_max - cfg_.t0);
    r_.growth_fit_v = stats::growth_fit(rel_t, med_v, cfg_.growth_t_max - cfg_.t0);
    r_.growth_q = r_.growth_fit_q.slope;
    r_.growth_v = r_.growth_fit_v.slope;
    r_.alive_population = cfg_.alive_population;
    const double balance = r_.max_over_times(metric_balance_nh);
    r_.balance_flagged = std::isfinite(balance) && balance > cfg_.balance_tolerance;
    const double eps = cfg_.integrator.precision == Precision::f32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
    // NOTE: rounding can accumulate to about ε per step, and a run takes at most max_steps steps (states of order 1)
    r_.growth_at_rounding_level =
        r_.growth_fit_q.points > 0 && r_.growth_fit_q.max_median < eps * static_cast<double>(cfg_.integrator.max_steps);
}

} // namespace nhvk
