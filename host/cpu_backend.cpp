// SPDX-License-Identifier: MIT
/** @file
 *  @brief The CPU reference backend: the same per-member sampling and integration code as the CUDA kernels, in
 *         OpenMP loops, and the same Thrust reduction source on Thrust's OpenMP system. Synchronous: every stage is
 *         done when its call returns.
 */
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu_backend.hpp"
#include "model_ops.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/stats/chunk_metrics.hpp"
#include "stats/ensemble_stats.hpp"

namespace nhvk {

namespace {
using Clock = std::chrono::steady_clock;

/** @brief Adds the wall time of its scope to `into`. */
struct ScopeTimer {
    double& into;
    Clock::time_point t0 = Clock::now();
    ~ScopeTimer() { into += std::chrono::duration<double>(Clock::now() - t0).count(); }
};

/** @brief Test hook: `NHVK_TEST_CPU_BATCH_PAUSE_MS=ms` pauses the CPU backend for `ms` milliseconds after each batch
 *         of a chunk (the batches that report progress and honour a stop request), so that a test of what happens
 *         within or during a chunk (progress lines, a signal mid-run) sees it on any machine, however fast
 *         (tests/host/test_scaleout.cpp, tests/host/test_output_folder.cpp). 0 or unset: no pause. */
double test_batch_pause_seconds() {
    static const double s = [] {
        const char* v = std::getenv("NHVK_TEST_CPU_BATCH_PAUSE_MS");
        const double ms = v ? std::atof(v) : 0.0;
        return ms > 0.0 ? ms / 1000.0 : 0.0;
    }();
    return s;
}

/** @brief Members [j0, j0 + m) of a chunk as a chunk of their own (same buffers, same leading dimension). */
ChunkArgs member_window(const ChunkArgs& a, long long j0, long long m) {
    ChunkArgs w = a;
    w.m = m;
    w.first_member += static_cast<std::uint64_t>(j0);
    w.q0 += j0;
    w.v0 += j0;
    if (w.mu0) w.mu0 += j0;
    if (w.params && w.params_ld != 0) w.params += j0;
    w.metrics += j0;
    w.status += j0;
    w.failed += j0;
    w.fail_index += j0;
    w.onset += j0;
    w.sample_status += j0;
    return w;
}

class CpuBackend final : public EnsembleBackend {
public:
    CpuBackend(const ChunkLayout& L, const ChunkCommon& c, int threads, ChunkWatch watch = {})
        : layout_(L), common_(c), threads_(threads), block_(L), storage_(block_.total / sizeof(double) + 1),
          ops_(find_run_model_ops(c.model, c.precision, c.method, c.equations)), watch_(std::move(watch)) {
        if (!ops_) throw std::invalid_argument("unknown model '" + c.model + "'");
        args_ = common_args(L, c);
        block_.bind(args_, reinterpret_cast<char*>(storage_.data()), L);
    }
    std::string name() const override { return "cpu"; }
    int slots() const override { return 1; }
    ChunkArgs& slot(int) override { return args_; }
    void sample(int, std::uint64_t first, long long m) override {
        ScopeTimer timer{seconds_.sample};
        args_.m = m;
        args_.first_member = first;
        ops_->sample_chunk_cpu(common_, args_, first, threads_);
    }
    void upload(int, long long m) override { args_.m = m; }
    void integrate(int, long long m) override {
        ScopeTimer timer{seconds_.integrate};
        args_.m = m;
        if (watch_.cut) *watch_.cut = false;
        if (!watch_.progress && !watch_.stop) {
            ops_->run_chunk_cpu(common_, args_, threads_);
            return;
        }
        // NOTE: in batches, so that progress is seen and a stop is honoured within about a quarter of a second
        // whatever the chunk size; the batch grows or shrinks towards that duration.
        const long long min_batch = 16LL * (threads_ > 0 ? threads_ : 1);
        for (long long j0 = 0; j0 < m;) {
            if (watch_.stop && watch_.stop->load() != 0) {
                if (watch_.cut) *watch_.cut = true;
                return;
            }
            const long long mb = std::min(batch_, m - j0);
            const auto t0 = Clock::now();
            ops_->run_chunk_cpu(common_, member_window(args_, j0, mb), threads_);
            const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
            j0 += mb;
            if (watch_.progress) watch_.progress(j0);
            if (pause_ > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(pause_));
            if (dt < 0.1 && mb == batch_) batch_ = std::min<long long>(batch_ * 2, 1LL << 24);
            else if (dt > 0.4) batch_ = std::max(min_batch, batch_ / 2);
        }
    }
    void start_reduction(std::size_t n_series, const stats::LogBinTable& table, std::uint64_t value_capacity) override {
        if (value_capacity != 0u) throw std::logic_error("the CPU backend keeps no values: the host holds them");
        table_ = table;
        n_series_ = n_series;
        partials_.assign(n_series, stats::SeriesPartial{});
        counts_.assign(n_series * table_.spec.row_words(), 0u);
    }
    void reduce(int, long long m) override {
        ScopeTimer timer{seconds_.reduce};
        if (partials_.size() != n_series_ || n_series_ == 0) throw std::logic_error("reduce before start_reduction");
        const stats::ChunkView in = stats::metrics_view(args_, m);
        if (in.n_series != n_series_)
            throw std::logic_error("reduce: the chunk's series differ from start_reduction's");
        // NOTE: one sequential pass per series, the series in parallel (the device's reduction, on the host).
        stats::reduce_chunk_host(in, partials_.data(), counts_.data(), stats::LogBinner::make(table_), nullptr, nullptr,
                                 true);
    }
    void download(int, long long, Downloads) override {}
    void wait(int) override {}
    void collect(stats::SeriesPartial* partials, std::uint64_t* counts) override {
        const stats::LogBinner b = stats::LogBinner::make(table_);
        for (std::size_t s = 0; s < partials_.size(); ++s) {
            partials[s].merge(partials_[s]);
            b.merge(counts + s * b.row_words(), counts_.data() + s * b.row_words());
        }
    }

    StageSeconds stage_seconds() const override { return seconds_; }

private:
    ChunkLayout layout_;
    ChunkCommon common_;
    int threads_;
    ChunkBlock block_;
    std::vector<double> storage_;
    const ModelOps* ops_;
    ChunkArgs args_;
    stats::LogBinTable table_;
    std::size_t n_series_ = 0;
    std::vector<stats::SeriesPartial> partials_;
    std::vector<std::uint64_t> counts_;
    StageSeconds seconds_;
    ChunkWatch watch_;
    long long batch_ = 256;
    double pause_ = test_batch_pause_seconds();
};
} // namespace

std::unique_ptr<EnsembleBackend> make_cpu_backend(const ChunkLayout& layout, const ChunkCommon& common, int threads) {
    return std::make_unique<CpuBackend>(layout, common, threads);
}

std::unique_ptr<EnsembleBackend> make_cpu_backend(const ChunkLayout& layout, const ChunkCommon& common, int threads,
                                                  ChunkWatch watch) {
    return std::make_unique<CpuBackend>(layout, common, threads, std::move(watch));
}

} // namespace nhvk
