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

#include <omp.h>

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

/** @brief Test hook: `NHVK_TEST_CHUNK_PAUSE_MS=ms` pauses the CPU backend for `ms` milliseconds after it integrated
 *         each chunk, outside the time it reports (so the run still sizes its chunks from the work alone), so that a
 *         test of what happens during a run (progress lines, a signal mid-run, the chunks that finish after a stop
 *         request) sees it on any machine, however fast (tests/host/test_scaleout.cpp,
 *         tests/host/test_output_folder.cpp, tests/host/test_time_limit.cpp). 0 or unset: no pause. */
double test_chunk_pause_seconds() {
    static const double s = [] {
        const char* v = std::getenv("NHVK_TEST_CHUNK_PAUSE_MS");
        const double ms = v ? std::atof(v) : 0.0;
        return ms > 0.0 ? ms / 1000.0 : 0.0;
    }();
    return s;
}

class CpuBackend final : public EnsembleBackend {
public:
    CpuBackend(const ChunkLayout& L, const ChunkCommon& c, int threads)
        : layout_(L), common_(c), threads_(threads), block_(L), storage_(block_.total / sizeof(double) + 1),
          ops_(find_run_model_ops(c.model, c.precision, c.method, c.equations)) {
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
        {
            ScopeTimer timer{seconds_.integrate};
            args_.m = m;
            ops_->run_chunk_cpu(common_, args_, threads_);
        }
        if (pause_ > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(pause_));
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
    ChunkPacing pacing(long long capacity) const override {
        // NOTE: chunks of about half a second: a stop request, a checkpoint and the progress line wait for the chunk
        // in flight, and a resume record holds whole chunks. Shorter chunks spend a larger share in what each chunk
        // costs besides its members (the reduction's pass over every series, the parallel regions' ends). One member
        // per thread at least; sixteen per thread to measure the first.
        const long long t = threads_ > 0 ? threads_ : std::max(1, omp_get_max_threads());
        const long long least = std::min(capacity, t);
        return {0.5, std::max(least, std::min(capacity, 16 * t)), least};
    }

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
    double pause_ = test_chunk_pause_seconds();
};
} // namespace

std::unique_ptr<EnsembleBackend> make_cpu_backend(const ChunkLayout& layout, const ChunkCommon& common, int threads) {
    return std::make_unique<CpuBackend>(layout, common, threads);
}

} // namespace nhvk
