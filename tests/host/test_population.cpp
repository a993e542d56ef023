// SPDX-License-Identifier: MIT
// One population rule on every path (issue 21 item 1): every config of configs/ is sampled and integrated once on the
// CPU backend, failing members are injected into the chunk (sampler rejections, failures late in the run and at the
// first output time, onsets that never happened), and the same chunk is reduced by the reduce stage in exact mode
// (values on the host) and in histogram mode (the backend's own reduction). Both must agree with each other, count
// for count and bit for bit in the moments, and with a reference computed here from the chunk's arrays by the rule
// the documentation states (README, "population"): a member the sampler placed counts at an output time when it
// reached that time (statistics.population = "alive") or when it finished (population = "survivors"); its onset time
// counts when it exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "checks.hpp"
#include "config.hpp"
#include "ensemble.hpp"
#include "ensemble_testing.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/stats/block_reduce.hpp"
#include "nhvk/stats/chunk_metrics.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/run_plan.hpp"
#include "registry.hpp"
#include "stats/ensemble_stats.hpp"

#include <thrust/system/cpp/execution_policy.h>

namespace {

namespace fs = std::filesystem;
using nhvk::Dynamics;
using nhvk::SampleStatus;
using nhvk::Status;

constexpr long long members = 240;
constexpr double levels[7] = {0.01, 0.05, 0.25, 0.50, 0.75, 0.95, 0.99};

/** @brief Which injected failure member j gets (none for most). */
enum class Inject { none, rejected, late, first, never_crossed };
Inject injected(long long j) {
    if (j % 7 == 3) return Inject::rejected;
    if (j % 7 == 5) return Inject::late;
    if (j % 11 == 4) return Inject::first;
    if (j % 13 == 6) return Inject::never_crossed;
    return Inject::none;
}

/** @brief The values of series s that the documented rule admits, from the chunk's own arrays. */
std::vector<double> reference_values(const nhvk::ChunkArgs& a, long long m, long long s, bool alive) {
    const long long timed = static_cast<long long>(nhvk::metric_count) * a.nt;
    std::vector<double> v;
    for (long long j = 0; j < m; ++j) {
        if (a.sample_status[j] != static_cast<std::uint8_t>(SampleStatus::ok)) continue;
        const bool ok = a.status[j] == static_cast<std::uint8_t>(Status::ok);
        const double x = a.metrics[s * a.ld + j];
        const bool counts = s >= timed ? !std::isnan(x) && (ok || alive) : ok || (alive && s % a.nt < a.fail_index[j]);
        if (counts && std::isfinite(x)) v.push_back(x == 0.0 ? 0.0 : x);
    }
    std::sort(v.begin(), v.end());
    return v;
}

double type7(const std::vector<double>& v, double p) { return nhvk::stats::quantile_type7(v.data(), v.size(), p); }

nhvk::EnsembleResult reduce(const nhvk::RunConfig& cfg, nhvk::EnsembleBackend& backend, long long m, bool histogram) {
    nhvk::EnsembleResult r;
    r.times = cfg.times;
    nhvk::ReduceStage stage(cfg, r);
    // a sweep reduces every point on the host, in histogram mode too (its points are fed by the sweep's stage)
    EXPECT_EQ(stage.on_host(), !histogram || static_cast<bool>(cfg.sweep));
    stage.start(backend, static_cast<std::uint64_t>(m));
    if (!stage.on_host()) backend.reduce(0, m);
    stage.add_chunk(backend.slot(0), m);
    stage.collect(backend, true);
    stage.finish();
    return r;
}

class Population : public ::testing::TestWithParam<std::string> {};

TEST_P(Population, ExactAndHistogramModesReduceTheSameMembers) {
    for (const char* population : {"alive", "survivors"}) {
        const std::string tag = fs::path(GetParam()).filename().string() + " population " + population;
        SCOPED_TRACE(tag);
        const std::vector<std::string> sets = {"run.trajectories=" + std::to_string(members),
                                               "statistics.population=\"" + std::string(population) + "\""};
        std::vector<std::string> exact_sets = sets, hist_sets = sets;
        exact_sets.push_back("run.exact_memory_mb=1024");
        hist_sets.push_back("run.exact_memory_mb=0");
        const nhvk::RunConfig exact_cfg = nhvk::load_config(GetParam(), exact_sets, nhvk::model_registry());
        const nhvk::RunConfig hist_cfg = nhvk::load_config(GetParam(), hist_sets, nhvk::model_registry());
        const nhvk::RunPlan plan = nhvk::make_run_plan(exact_cfg, members);
        auto backend = nhvk::make_cpu_backend(plan.layout, plan.common, 2);
        nhvk::ChunkArgs& a = backend->slot(0);
        const int nt = a.nt;

        // sample, then reject some placed members the way the sampler does (NaN in q0 and a reason)
        backend->sample(0, 0, members);
        for (long long j = 0; j < members; ++j) {
            if (injected(j) != Inject::rejected) continue;
            a.sample_status[j] = static_cast<std::uint8_t>(SampleStatus::energy_unreachable);
            for (int c = 0; c < plan.layout.n; ++c) const_cast<double*>(a.q0)[c * a.ld + j] = NAN;
        }
        backend->integrate(0, members);
        // failures after the fact: the metrics of the times the member "did not reach" stay in the buffer, so a path
        // that counts them gives other statistics
        const long long onset_row = nhvk::member_series_row(nt, nhvk::member_onset_time);
        int late = 0, first = 0, never = 0;
        for (long long j = 0; j < members; ++j) {
            if (a.sample_status[j] != static_cast<std::uint8_t>(SampleStatus::ok) ||
                a.status[j] != static_cast<std::uint8_t>(Status::ok))
                continue;
            const Inject what = injected(j);
            if (what == Inject::late || what == Inject::first) {
                a.status[j] = static_cast<std::uint8_t>(Status::step_limit);
                a.failed[j] = static_cast<std::uint8_t>(Dynamics::vakonomic);
                a.fail_index[j] = what == Inject::late ? std::max(1, nt / 2) : 0;
                ++(what == Inject::late ? late : first);
            } else if (what == Inject::never_crossed) {
                a.onset[j] = nhvk::stats::onset_never;
                a.metrics[onset_row * a.ld + j] = NAN;
                ++never;
            }
        }
        ASSERT_GT(late, 0);
        ASSERT_GT(first, 0);
        ASSERT_GT(never, 0);

        const nhvk::EnsembleResult ex = reduce(exact_cfg, *backend, members, false);
        const nhvk::EnsembleResult hi = reduce(hist_cfg, *backend, members, true);
        ASSERT_TRUE(ex.exact_quantiles);
        ASSERT_FALSE(hi.exact_quantiles);
        ASSERT_EQ(ex.series.size(), static_cast<std::size_t>(nhvk::metric_rows(nt)));
        ASSERT_EQ(hi.series.size(), ex.series.size());
        EXPECT_EQ(ex.valid, hi.valid);
        EXPECT_EQ(ex.onset.counts, hi.onset.counts);
        const double resolution = hi.histogram_resolution;
        for (std::size_t s = 0; s < ex.series.size(); ++s) {
            const auto& e = ex.series[s];
            const auto& h = hi.series[s];
            const std::vector<double> ref =
                reference_values(a, members, static_cast<long long>(s), population[0] == 'a');
            SCOPED_TRACE("series " + std::to_string(s));
            ASSERT_EQ(e.count, ref.size());
            EXPECT_EQ(h.count, e.count);
            EXPECT_EQ(h.nonfinite, e.nonfinite);
            EXPECT_EQ(e.nonfinite, 0u); // the rule admits no NaN (a never-crossed onset is not a value)
            const auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
            EXPECT_PRED2(same, h.mean, e.mean);
            EXPECT_PRED2(same, h.std, e.std);
            EXPECT_PRED2(same, h.min, e.min);
            EXPECT_PRED2(same, h.max, e.max);
            if (ref.empty()) continue;
            EXPECT_EQ(e.min, ref.front());
            EXPECT_EQ(e.max, ref.back());
            const double eq[7] = {e.p01, e.p05, e.p25, e.p50, e.p75, e.p95, e.p99};
            const double hq[7] = {h.p01, h.p05, h.p25, h.p50, h.p75, h.p95, h.p99};
            for (int i = 0; i < 7; ++i) {
                EXPECT_EQ(eq[i], type7(ref, levels[i])) << "level " << levels[i];
                if (h.outside_range != 0u) continue; // no resolution is promised there
                // each estimated order statistic lies in its true value's bin, so the interpolation is within the
                // resolution of the larger neighbour
                const double at = static_cast<double>(ref.size() - 1) * levels[i];
                const std::size_t k = static_cast<std::size_t>(std::floor(at));
                const double scale = std::max(std::fabs(ref[k]), std::fabs(ref[std::min(k + 1, ref.size() - 1)]));
                EXPECT_LE(std::fabs(hq[i] - eq[i]), resolution * scale * (1.0 + 1e-12)) << "level " << levels[i];
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Configs, Population, ::testing::ValuesIn(nhvk_test::bundled_configs()),
                         nhvk_test::config_test_name);

/** @brief Every stage run by the CPU backend it wraps: the base of the test backends below, which each change what
 *         the host sees of one path of the CUDA backend. */
class OverCpu : public nhvk::EnsembleBackend {
public:
    explicit OverCpu(std::unique_ptr<nhvk::EnsembleBackend> cpu) : cpu_(std::move(cpu)) {}
    int slots() const override { return cpu_->slots(); }
    nhvk::ChunkArgs& slot(int s) override { return cpu_->slot(s); }
    void sample(int s, std::uint64_t first, long long m) override { cpu_->sample(s, first, m); }
    void upload(int s, long long m) override { cpu_->upload(s, m); }
    void integrate(int s, long long m) override { cpu_->integrate(s, m); }
    void start_reduction(std::size_t n_series, const nhvk::stats::LogBinTable& table, std::uint64_t capacity) override {
        cpu_->start_reduction(n_series, table, capacity);
    }
    void reduce(int s, long long m) override { cpu_->reduce(s, m); }
    void download(int s, long long m, nhvk::Downloads d) override { cpu_->download(s, m, d); }
    void wait(int s) override { cpu_->wait(s); }
    void collect(nhvk::stats::SeriesPartial* p, std::uint64_t* c) override { cpu_->collect(p, c); }
    nhvk::StageSeconds stage_seconds() const override { return cpu_->stage_seconds(); }

protected:
    std::unique_ptr<nhvk::EnsembleBackend> cpu_;
};

/**
 * @brief The CPU backend keeping the values of exact quantiles as the CUDA backend does: stored unfiltered by the
 *        same stats::store_chunk_values, selected by sorting. Lets the host's side of that path (ReduceStage,
 *        EnsembleAccumulator) be tested without a device.
 */
class KeepsValues final : public OverCpu {
public:
    using OverCpu::OverCpu;
    std::string name() const override { return "keeps-values"; }
    void start_reduction(std::size_t n_series, const nhvk::stats::LogBinTable& table, std::uint64_t capacity) override {
        cpu_->start_reduction(n_series, table, 0);
        n_series_ = n_series;
        capacity_ = static_cast<std::size_t>(capacity);
        filled_ = 0;
        values_.assign(n_series * capacity_, -1.0); // never read: every stored place is written first
    }
    void reduce(int s, long long m) override {
        cpu_->reduce(s, m);
        ASSERT_LE(filled_ + static_cast<std::size_t>(m), capacity_);
        nhvk::stats::store_chunk_values(thrust::cpp::par, nhvk::stats::metrics_view(slot(s), m), values_.data(),
                                        capacity_, filled_);
        filled_ += static_cast<std::size_t>(m);
    }
    bool keeps_values() const override { return true; }
    void order_statistics(const std::vector<std::vector<std::uint64_t>>& ranks,
                          std::vector<std::vector<double>>& out) override {
        ++selections;
        out.assign(n_series_, {});
        for (std::size_t i = 0; i < n_series_; ++i) {
            std::vector<double> v(values_.begin() + i * capacity_, values_.begin() + i * capacity_ + filled_);
            std::sort(v.begin(), v.end());
            for (const std::uint64_t r : ranks[i]) out[i].push_back(v[r]);
        }
    }
    void download_values(std::vector<std::vector<double>>& out) override {
        ++downloads;
        for (std::size_t i = 0; i < n_series_; ++i)
            for (std::size_t j = 0; j < filled_; ++j)
                if (!std::isinf(values_[i * capacity_ + j])) out[i].push_back(values_[i * capacity_ + j]);
    }
    void band_order_statistics(const std::vector<std::size_t>& groups, double a, double b,
                               const std::vector<std::vector<std::uint64_t>>& ranks,
                               std::vector<std::vector<double>>& out) override {
        // by sorting every group but g whole: the definition, not the device's way through the band
        ++bands;
        out.assign(groups.size(), {});
        for (std::size_t g = 0; g < groups.size(); ++g) {
            if (ranks[g].empty()) continue;
            std::vector<double> others;
            for (std::size_t h = 0; h < groups.size(); ++h)
                if (h != g)
                    others.insert(others.end(), values_.begin() + groups[h] * capacity_,
                                  values_.begin() + groups[h] * capacity_ + filled_);
            std::sort(others.begin(), others.end());
            for (const std::uint64_t r : ranks[g]) {
                const double x = others.at(r);
                // the caller's promise, which lets a backend look at the band alone
                EXPECT_TRUE(x >= a && x <= b)
                    << "group " << g << ", rank " << r << ": " << x << " outside [" << a << ", " << b << "]";
                out[g].push_back(x);
            }
        }
    }
    int selections = 0, downloads = 0, bands = 0;

private:
    std::size_t n_series_ = 0, capacity_ = 0, filled_ = 0;
    std::vector<double> values_;
};

/** The growth law's sampling intervals (replica groups): the same method and the same doubles. */
void expect_same_growth_intervals(const nhvk::EnsembleResult& a, const nhvk::EnsembleResult& b) {
    EXPECT_EQ(a.growth_interval_method, b.growth_interval_method);
    const auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
    for (const auto& [name, x, y] :
         {std::tuple<const char*, const nhvk::stats::ReplicaInterval&, const nhvk::stats::ReplicaInterval&>{
              "p of d_q", a.growth_ci_q, b.growth_ci_q},
          {"p of d_v", a.growth_ci_v, b.growth_ci_v},
          {"C of d_q", a.amplitude_ci_q, b.amplitude_ci_q},
          {"C of d_v", a.amplitude_ci_v, b.amplitude_ci_v}}) {
        EXPECT_EQ(x.groups, y.groups) << name;
        EXPECT_PRED2(same, x.se, y.se) << name;
        EXPECT_PRED2(same, x.lo, y.lo) << name;
        EXPECT_PRED2(same, x.hi, y.hi) << name;
    }
}

// Exact quantiles whose values a backend keeps (the CUDA path) equal the host's exact quantiles: selected on the
// backend, brought to the host at the end (an MPI rank, a shard), or through a snapshot restored into a new stage (a
// resume record). Two chunks, so that the second lands after the first in every series.
TEST(PopulationValuesOnBackend, SelectedThereBroughtHereOrSnapshottedEqualTheHostsExactStatistics) {
    const std::string path = std::string(NHVK_SOURCE_DIR) + "/configs/quickstart.toml";
    const nhvk::RunConfig cfg = nhvk::load_config(path, {"run.trajectories=400"}, nhvk::model_registry());
    const long long m = 200;
    const nhvk::RunPlan plan = nhvk::make_run_plan(cfg, m);
    KeepsValues kv(nhvk::make_cpu_backend(plan.layout, plan.common, 2));
    KeepsValues kv2(nhvk::make_cpu_backend(plan.layout, plan.common, 2));

    nhvk::EnsembleResult host_r, there_r, here_r, resumed_r;
    for (auto* r : {&host_r, &there_r, &here_r, &resumed_r}) r->times = cfg.times;
    nhvk::ReduceStage host(cfg, host_r), there(cfg, there_r), here(cfg, here_r);
    ASSERT_TRUE(host.on_host());
    there.start(kv, 400);
    EXPECT_FALSE(there.on_host()) << "the backend keeps the values: no metrics to the host";
    here.start(kv2, 400);
    std::string snapshot;
    for (long long c = 0; c < 2; ++c) {
        kv.sample(0, static_cast<std::uint64_t>(c * m), m);
        kv.integrate(0, m);
        // both value-keeping backends see the same chunk (the second one's slot gets a copy of the integrated chunk)
        kv2.sample(0, static_cast<std::uint64_t>(c * m), m);
        kv2.integrate(0, m);
        host.add_chunk(kv.slot(0), m);
        kv.reduce(0, m);
        there.add_chunk(kv.slot(0), m);
        kv2.reduce(0, m);
        here.add_chunk(kv2.slot(0), m);
        if (c == 0) snapshot = there.snapshot(kv);
    }
    EXPECT_EQ(kv.downloads, 1) << "the snapshot brings the values to the host";
    host.finish();
    there.collect(kv, true);
    there.finish();
    // one selection, for the quantiles and the jackknife's bands around the rows' medians (selected with the rows'
    // quantiles); the groups' medians among the others are selected by the backend too
    EXPECT_EQ(kv.selections, 1);
    EXPECT_GT(kv.bands, 0);
    here.collect(kv2, false);
    here.finish();
    EXPECT_EQ(kv2.downloads, 1);
    EXPECT_EQ(kv2.selections, 0);
    ASSERT_TRUE(host_r.exact_quantiles);
    nhvk_test::expect_same_series(there_r, host_r);
    nhvk_test::expect_same_series(here_r, host_r);
    // the growth law's intervals too: the jackknife on every path (it was the batch means where the values stayed on
    // the backend, so that a GPU run and its resumed or merged twin disagreed)
    EXPECT_EQ(host_r.growth_interval_method, "jackknife");
    expect_same_growth_intervals(there_r, host_r);
    expect_same_growth_intervals(here_r, host_r);

    // a resume from the first chunk's snapshot: the host holds values, so the second chunk's come here too
    KeepsValues kv3(nhvk::make_cpu_backend(plan.layout, plan.common, 2));
    nhvk::ReduceStage resumed(cfg, resumed_r);
    resumed.restore(snapshot, "snapshot");
    resumed.start(kv3, 200);
    kv3.sample(0, static_cast<std::uint64_t>(m), m);
    kv3.integrate(0, m);
    kv3.reduce(0, m);
    resumed.add_chunk(kv3.slot(0), m);
    resumed.collect(kv3, true);
    resumed.finish();
    EXPECT_EQ(kv3.selections, 0);
    EXPECT_EQ(kv3.downloads, 1);
    // the counts of the first chunk came with the snapshot's statistics, not its tally: compare the series only
    nhvk_test::expect_same_series(resumed_r, host_r);
    expect_same_growth_intervals(resumed_r, host_r);
}

/**
 * @brief The CPU backend with its metrics kept where the CUDA backend keeps them: a "device" copy of each chunk's
 *        metrics, the slot's own left NaN unless `download` asks for them, and a sweep's parts reduced from the copy
 *        by the device's block reduction (its host twin, block_reduce_host, then combine_tiles into the part's key)
 *        when they are enqueued. Lets the host's side of a sweep reduced in parts (ReduceStage, the pipeline's
 *        downloads) be tested without a device: a part read from the slot instead would carry NaN into the
 *        statistics.
 */
class PartsOnDevice final : public OverCpu {
public:
    using OverCpu::OverCpu;
    std::string name() const override { return "parts-on-device"; }
    void integrate(int s, long long m) override {
        cpu_->integrate(s, m);
        nhvk::ChunkArgs& a = slot(s);
        const std::size_t n = static_cast<std::size_t>(nhvk::metric_rows(a.nt)) * static_cast<std::size_t>(a.ld);
        device_.assign(a.metrics, a.metrics + n);
        std::fill(a.metrics, a.metrics + n, std::numeric_limits<double>::quiet_NaN());
    }
    void start_reduction(std::size_t n_series, const nhvk::stats::LogBinTable& table, std::uint64_t capacity) override {
        EXPECT_EQ(capacity, 0u) << "a sweep's parts keep no values";
        n_series_ = n_series;
        table_ = table;
    }
    void reduce(int, long long) override { ADD_FAILURE() << "a sweep reduced in parts runs no running reduction"; }
    bool reduces_parts() const override { return true; }
    void reduce_part(int s, long long j0, long long len, std::uint64_t first_member, std::uint64_t key) override {
        ++parts;
        nhvk::ChunkArgs a = slot(s);
        a.metrics = device_.data();
        const nhvk::stats::ChunkView in = nhvk::part_view(a, j0, len, first_member);
        ASSERT_EQ(in.n_series, n_series_);
        const nhvk::stats::LogBinner b = nhvk::stats::LogBinner::make(table_);
        // three tiles and batches of five targets: several blocks per row and several passes per block
        const std::size_t tiles = 3;
        const nhvk::stats::BlockPlan plan = nhvk::stats::block_plan(in, tiles, 5, &b);
        std::vector<nhvk::stats::SeriesPartial> tile_partials(n_series_ * tiles);
        std::vector<std::uint64_t> tile_rows(n_series_ * tiles * b.row_words(), 0u);
        nhvk::stats::block_reduce_host(plan, tile_partials.data(), tile_rows.data(), 64);
        Key& k = keys_[key];
        k.partials.resize(n_series_);
        k.counts.resize(n_series_ * b.row_words(), 0u);
        nhvk::stats::combine_tiles(thrust::cpp::par, n_series_, tiles, b, tile_partials.data(), tile_rows.data(),
                                   k.partials.data(), k.counts.data());
    }
    void take_part(std::uint64_t key, nhvk::stats::SeriesPartial* partials, std::uint64_t* counts,
                   bool release) override {
        ++(release ? takes : peeks);
        const auto it = keys_.find(key);
        ASSERT_NE(it, keys_.end()) << "the stage takes only the points it enqueued parts of";
        std::copy(it->second.partials.begin(), it->second.partials.end(), partials);
        std::copy(it->second.counts.begin(), it->second.counts.end(), counts);
        if (release) keys_.erase(it);
    }
    void download(int s, long long m, nhvk::Downloads d) override {
        cpu_->download(s, m, d);
        if (!d.metrics) return;
        ++metric_downloads;
        std::copy(device_.begin(), device_.end(), slot(s).metrics);
    }
    /** @brief The last chunk's metrics as integrated. */
    const double* device_metrics() const { return device_.data(); }
    /** @brief Keys whose statistics the backend still keeps. */
    std::size_t keys() const { return keys_.size(); }
    int parts = 0, takes = 0, peeks = 0, metric_downloads = 0;

private:
    struct Key {
        std::vector<nhvk::stats::SeriesPartial> partials;
        std::vector<std::uint64_t> counts;
    };
    std::vector<double> device_;
    std::size_t n_series_ = 0;
    nhvk::stats::LogBinTable table_;
    std::map<std::uint64_t, Key> keys_;
};

// A sweep whose points hold too many values for exact quantiles is reduced part by part where the metrics are (the
// CUDA backend), each point's parts kept there until the point is complete, and no metrics come to the host. Its
// statistics equal the host's reduction of the same metrics, bit for bit, at every point and pooled: when run to the
// end, when resumed from a snapshot taken with a point open on the backend, and when only a part of the sweep runs
// (a shard's or an MPI rank's, which ends with a point open). Chunks of 3700 members split the points of 4500 into
// parts of every kind: a whole chunk in one point, a point's end and the next one's start.
TEST(SweepParts, ReducedWhereTheMetricsAreEqualTheHostsStatisticsAtEveryPoint) {
    const std::string path = std::string(NHVK_SOURCE_DIR) + "/tests/host/data/sweep_parts.toml";
    const auto load = [&](const std::vector<std::string>& sets) {
        return nhvk::load_config(path, sets, nhvk::model_registry());
    };
    const nhvk::RunConfig cfg = load({});
    ASSERT_TRUE(nhvk::sweep_reduced_in_parts(cfg));
    // the rule's edges: exact quantiles, and one member fewer per point than a part's statistics weigh, keep the
    // host's reduction
    EXPECT_FALSE(nhvk::sweep_reduced_in_parts(load({"run.exact_memory_mb=1024"})));
    const std::size_t part_members =
        (sizeof(nhvk::stats::SeriesPartial) + 8u * nhvk::stats::LogHistogramSpec{}.row_words() + 7u) / 8u;
    EXPECT_TRUE(nhvk::sweep_reduced_in_parts(load({"run.trajectories=" + std::to_string(part_members)})));
    EXPECT_FALSE(nhvk::sweep_reduced_in_parts(load({"run.trajectories=" + std::to_string(part_members - 1)})));

    const long long chunk = 3700;
    const nhvk::RunPlan plan = nhvk::make_run_plan(cfg, chunk);
    PartsOnDevice dev(nhvk::make_cpu_backend(plan.layout, plan.common, 2));
    PartsOnDevice dev2(nhvk::make_cpu_backend(plan.layout, plan.common, 2));
    PartsOnDevice dev3(nhvk::make_cpu_backend(plan.layout, plan.common, 2));
    nhvk::EnsembleResult host_r, parts_r, resumed_r, shard_r, host_shard_r;
    nhvk::ReduceStage host(cfg, host_r), parts(cfg, parts_r), shard(cfg, shard_r), host_shard(cfg, host_shard_r);
    std::optional<nhvk::ReduceStage> resumed;
    const std::uint64_t total = cfg.members();
    parts.start(dev, total);
    shard.start(dev3, 2 * chunk);
    EXPECT_FALSE(parts.needs_metrics());
    EXPECT_TRUE(host.needs_metrics());
    int ranges = 0, chunks = 0;
    for (std::uint64_t first = 0; first < total; first += static_cast<std::uint64_t>(chunk)) {
        const long long m = static_cast<long long>(std::min<std::uint64_t>(chunk, total - first));
        nhvk::for_each_point_range(static_cast<std::uint64_t>(cfg.run.trajectories), first, m,
                                   [&](std::uint64_t, std::uint64_t, long long, long long) { ++ranges; });
        dev.sample(0, first, m);
        dev.integrate(0, m);
        parts.enqueue(dev, 0, first, m);
        dev.download(0, m, nhvk::Downloads{false, parts.needs_metrics()});
        parts.add_chunk(dev.slot(0), m);
        if (resumed) {
            // the resumed run's own backend, which integrates the same chunk
            dev2.sample(0, first, m);
            dev2.integrate(0, m);
            resumed->enqueue(dev2, 0, first, m);
            dev2.download(0, m, nhvk::Downloads{false, resumed->needs_metrics()});
            resumed->add_chunk(dev2.slot(0), m);
        }
        nhvk::ChunkArgs integrated = dev.slot(0);
        integrated.metrics = const_cast<double*>(dev.device_metrics());
        host.add_chunk(integrated, m);
        if (chunks < 2) {
            // a part of the sweep that ends after two chunks, with a point open (its own backend)
            dev3.sample(0, first, m);
            dev3.integrate(0, m);
            shard.enqueue(dev3, 0, first, m);
            dev3.download(0, m, nhvk::Downloads{false, shard.needs_metrics()});
            shard.add_chunk(dev3.slot(0), m);
            host_shard.add_chunk(integrated, m);
        }
        if (++chunks == 2) {
            // a resume record's statistics, after the first point finished and with the second one open, its parts so
            // far on the backend
            EXPECT_EQ(dev.keys(), 1u);
            const int taken = dev.takes;
            resumed.emplace(cfg, resumed_r);
            resumed->restore(parts.snapshot(dev), "snapshot");
            EXPECT_EQ(dev.peeks, 1);
            EXPECT_EQ(dev.takes, taken) << "a snapshot leaves the point's parts on the backend";
            resumed->start(dev2, total - first - static_cast<std::uint64_t>(m));
            EXPECT_FALSE(resumed->needs_metrics());
        }
    }
    EXPECT_EQ(dev.metric_downloads, 0);
    EXPECT_EQ(dev2.metric_downloads, 0);
    EXPECT_EQ(dev.parts, ranges);
    EXPECT_EQ(dev2.parts, ranges - 3) << "the parts of the chunks after the snapshot (the first two chunks hold three)";
    EXPECT_EQ(dev.takes, 3) << "each point taken once, when complete";
    EXPECT_EQ(dev.keys(), 0u);
    ASSERT_TRUE(resumed.has_value());
    EXPECT_EQ(dev3.keys(), 1u);
    shard.collect(dev3, false);
    EXPECT_EQ(dev3.keys(), 0u) << "collect takes the open point's parts";
    EXPECT_EQ(dev3.takes, 2);
    for (nhvk::ReduceStage* st : {&host, &parts, &*resumed, &shard, &host_shard}) st->finish();
    EXPECT_EQ(dev2.keys(), 0u);
    ASSERT_EQ(parts_r.points.size(), 3u);
    for (std::size_t p = 0; p < 3; ++p) {
        SCOPED_TRACE("point " + std::to_string(p));
        EXPECT_FALSE(host_r.points[p].exact_quantiles);
        EXPECT_GT(host_r.points[p].valid, 4000u);
        // the replica groups' std intervals are compared too (member j's group comes from its index in the point)
        EXPECT_GE(std::count_if(host_r.points[p].series.begin(), host_r.points[p].series.end(),
                                [](const nhvk::stats::SeriesSummary& x) { return std::isfinite(x.std_se); }),
                  8)
            << "d_q and d_v at each of the 4 output times";
        nhvk_test::expect_same_series(parts_r.points[p], host_r.points[p]);
        nhvk_test::expect_same_series(resumed_r.points[p], host_r.points[p]);
        expect_same_growth_intervals(parts_r.points[p], host_r.points[p]);
        // the part of the sweep of the first two chunks: point 0 complete, point 1 open, point 2 not begun
        nhvk_test::expect_same_series(shard_r.points[p], host_shard_r.points[p]);
    }
    EXPECT_GT(host_shard_r.points[1].series.at(0).count, 0u);
    nhvk_test::expect_same_series(parts_r, host_r);
    nhvk_test::expect_same_series(resumed_r, host_r);
    nhvk_test::expect_same_series(shard_r, host_shard_r);
}

} // namespace
