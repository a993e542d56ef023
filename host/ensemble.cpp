// SPDX-License-Identifier: MIT
/** @file
 *  @brief The ensemble pipeline behind `nhvk run`, as its stages: per chunk the backend samples, integrates and
 *         (histogram statistics) reduces on its own side; the host counts statuses, reduces exact statistics and
 *         writes per-trajectory rows (pipeline/reduce_stage, pipeline/write_stage). With the CUDA backend two slots
 *         alternate, so the host works on one chunk while the device runs the other. Every draw depends only on
 *         (seed, global index) and every reduction is exact, so the statistics are bit-identical for any chunk size,
 *         thread count and backend schedule.
 */
#include "ensemble.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "model_ops.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/run_plan.hpp"
#include "pipeline/write_stage.hpp"

namespace nhvk {

namespace fs = std::filesystem;

const char* metric_name(int metric) {
    static const char* names[metric_count] = {"d_q", "d_v", "res_nh", "res_vk", "energy_nh", "energy_vk"};
    return metric >= 0 && metric < metric_count ? names[metric] : "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    std::ostringstream os;
    const long long t = static_cast<long long>(s + 0.5);
    if (t >= 3600) os << t / 3600 << "h" << std::setw(2) << std::setfill('0') << (t % 3600) / 60 << "m";
    else if (t >= 60) os << t / 60 << "m" << std::setw(2) << std::setfill('0') << t % 60 << "s";
    else os << std::fixed << std::setprecision(1) << s << "s";
    return os.str();
}

/** @brief Progress on stderr: done/total, rate, ETA (only when stderr is a terminal). */
class Progress {
public:
    Progress(std::uint64_t total, bool enabled) : total_(total), enabled_(enabled && ::isatty(2)), t0_(Clock::now()) {}
    void update(std::uint64_t done) {
        if (!enabled_) return;
        const double s = seconds_since(t0_);
        if (done < total_ && s - last_ < 0.25) return;
        last_ = s;
        const double rate = s > 0 ? static_cast<double>(done) / s : 0.0;
        const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : NAN;
        std::fprintf(stderr, "\r[nhvk] %llu/%llu (%5.1f%%)  %.4g traj/s  ETA %s   ",
                     static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                     100.0 * static_cast<double>(done) / static_cast<double>(total_), rate,
                     format_duration(eta).c_str());
        std::fflush(stderr);
    }
    void finish() {
        if (enabled_) std::fprintf(stderr, "\n");
    }

private:
    std::uint64_t total_;
    bool enabled_;
    Clock::time_point t0_;
    double last_ = -1.0;
};

/** @brief The backend of a run: CUDA when asked for, or `auto` with a device present and the generated equations. */
std::unique_ptr<EnsembleBackend> make_backend(const RunConfig& cfg, const RunPlan& plan, int threads) {
    // NOTE: the dual-number reference equations run on the CPU only; `auto` picks the CPU for them.
    if (cfg.run.backend == Backend::cuda && plan.common.equations == EquationsKind::ad)
        throw std::runtime_error("run.backend = \"cuda\" integrates the generated equations only; "
                                 "integrator.equations = \"ad\" needs run.backend = \"cpu\" or \"auto\"");
    if (cfg.run.backend == Backend::cuda ||
        (cfg.run.backend == Backend::automatic && plan.common.equations == EquationsKind::generated &&
         cuda_available()))
        return make_cuda_backend(plan.layout, plan.common);
    return make_cpu_backend(plan.layout, plan.common, threads);
}

} // namespace

EnsembleResult run_ensemble(const RunConfig& cfg, const EnsembleOptions& opt) {
    const auto t_start = Clock::now();
    if (!find_model_ops(cfg.model.name)) throw std::runtime_error("unknown model '" + cfg.model.name + "'");
    if (static_cast<int>(cfg.params.size()) > max_params)
        throw std::runtime_error("model has more than " + std::to_string(max_params) + " parameters");
    const std::uint64_t N = static_cast<std::uint64_t>(cfg.run.trajectories);
    // NOTE: the OpenMP default is process-wide; restore it on return so one run's thread count does not leak into
    // the next run of the same process.
    struct OmpThreadsGuard {
        int saved = omp_get_max_threads();
        ~OmpThreadsGuard() { omp_set_num_threads(saved); }
    } omp_guard;
    // NOTE: more threads than cores cannot speed anything up (the results do not depend on the thread count) and a
    // count in the thousands can fail to start: lowered to the cores, said on stderr and in summary.json `threads`.
    const int cores = std::max(1, omp_get_num_procs());
    int threads = cfg.run.threads > 0 ? cfg.run.threads : omp_guard.saved;
    if (cfg.run.threads > cores) {
        threads = cores;
        if (!opt.quiet)
            std::fprintf(stderr, "nhvk: note: run.threads = %d is more than the %d cores; using %d\n", cfg.run.threads,
                         cores, cores);
    }
    omp_set_num_threads(threads);

    const RunPlan plan =
        make_run_plan(cfg, static_cast<long long>(std::min<std::uint64_t>(static_cast<std::uint64_t>(cfg.run.chunk), N)));
    std::unique_ptr<EnsembleBackend> backend = make_backend(cfg, plan, threads);
    // NOTE: after the backend, so a backend error leaves no folder behind.
    const std::unique_ptr<OutputFolder> out = claim_output_folder(cfg);

    EnsembleResult r;
    r.backend = backend->name();
    r.threads = threads;
    r.requested = N;
    r.times = cfg.times;
    ReduceStage reduce(cfg, r);
    reduce.start(*backend);
    std::unique_ptr<SamplesWriter> samples;
    if (cfg.run.save_samples) samples = std::make_unique<SamplesWriter>(cfg, plan.layout, *out);
    SavedTrajectories saved(cfg, plan);

    const int slots = backend->slots();
    std::vector<std::uint64_t> slot_first(slots, 0);
    std::vector<long long> slot_m(slots, 0);
    std::vector<bool> slot_busy(slots, false);
    Progress progress(N, opt.progress && !opt.quiet);
    std::uint64_t done = 0;

    // The host's part of a chunk, once the backend has finished it.
    double host_seconds = 0.0; // the host's part of the reduce and write stages
    auto finish_slot = [&](int s) {
        backend->wait(s);
        auto tr = Clock::now();
        const ChunkArgs& a = backend->slot(s);
        reduce.add_chunk(a, slot_m[s]);
        if (samples) samples->add_chunk(a, slot_first[s], slot_m[s]);
        if (saved.wants(slot_first[s])) saved.add_chunk(a, slot_first[s], slot_m[s]);
        done += static_cast<std::uint64_t>(slot_m[s]);
        slot_busy[s] = false;
        host_seconds += seconds_since(tr);
        progress.update(done);
    };

    // ---- the chunk loop: sample → integrate → reduce (backend) → download; the host finishes the other slot ----
    std::uint64_t next = 0;
    int chunk_index = 0;
    while (next < N) {
        const int s = chunk_index % slots;
        if (slot_busy[s]) finish_slot(s);
        const long long m = static_cast<long long>(std::min<std::uint64_t>(plan.layout.capacity, N - next));
        slot_first[s] = next;
        slot_m[s] = m;
        backend->sample(s, next, m);
        backend->integrate(s, m);
        if (!reduce.on_host()) backend->reduce(s, m);
        Downloads d;
        d.metrics = reduce.on_host() || samples != nullptr;
        d.inputs = samples != nullptr || saved.wants(next);
        backend->download(s, m, d);
        slot_busy[s] = true;
        next += static_cast<std::uint64_t>(m);
        ++chunk_index;
    }
    for (int c = 0; c < slots; ++c) {
        const int s = (chunk_index + c) % slots;
        if (slot_busy[s]) finish_slot(s);
    }
    progress.finish();

    auto tf = Clock::now();
    reduce.finish(*backend);
    host_seconds += seconds_since(tf);
    const StageSeconds bs = backend->stage_seconds();
    r.sampling_seconds = bs.sample;
    r.integration_seconds = bs.integrate;
    r.reduction_seconds = bs.reduce + host_seconds;
    r.transfer_seconds = bs.transfer;
    saved.write(*out);
    r.seconds = seconds_since(t_start);
    write_statistics(cfg, r, *out);
    out->commit();
    return r;
}

} // namespace nhvk
