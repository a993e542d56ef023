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
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iomanip>
#include <set>
#include <sstream>
#include <stdexcept>

#include "cpu_backend.hpp"
#include "model_ops.hpp"
#include "nhvk/backend/cuda_device.hpp"
#include "pipeline/comm.hpp"
#include "pipeline/output_folder.hpp"
#include "pipeline/partial_state.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/run_log.hpp"
#include "pipeline/run_plan.hpp"
#include "pipeline/write_stage.hpp"

namespace nhvk {

namespace fs = std::filesystem;

double EnsembleResult::max_over_times(int metric) const {
    double m = NAN;
    for (std::size_t i = 0; i < times.size(); ++i) {
        const double x = at(metric, static_cast<int>(i)).max;
        if (std::isfinite(x)) m = std::isfinite(m) ? std::max(m, x) : x;
    }
    return m;
}

const char* metric_name(int metric) {
    if (metric >= 0 && metric < metric_count) return metric_info(metric).name;
    // NOTE: the per-member series follow the per-time ones (series row / nt lands here for them)
    return metric == metric_count + member_onset_time ? "onset_time" : "unknown";
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

/** @brief Progress of the whole job: on a terminal a line redrawn at most every 0.25 s; otherwise (a batch job's
 *         log) a plain line every `every` seconds; into run.log every 30 s. */
class Progress {
public:
    Progress(std::uint64_t total, std::uint64_t already, bool enabled, double every, RunLog* log)
        : total_(total), already_(already), enabled_(enabled), tty_(::isatty(2) != 0), every_(every), log_(log),
          t0_(Clock::now()) {}
    void update(std::uint64_t done, bool force = false) {
        const double s = seconds_since(t0_);
        const bool draw = enabled_ && (force || s - last_ >= (tty_ ? 0.25 : every_));
        const bool log = log_ && (force || s - last_log_ >= 30.0);
        if (!draw && !log) return;
        // NOTE: the rate counts only the work of this process's run (a resumed run's earlier part excluded).
        const double rate = s > 0 && done > already_ ? static_cast<double>(done - already_) / s : 0.0;
        const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : NAN;
        char line[160];
        std::snprintf(line, sizeof line, "%llu/%llu (%5.1f%%)  %.4g traj/s  ETA %s",
                      static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                      total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0, rate,
                      format_duration(eta).c_str());
        if (draw) {
            last_ = s;
            if (tty_) std::fprintf(stderr, "\r[nhvk] %s   ", line);
            else std::fprintf(stderr, "[nhvk] progress %s\n", line);
            std::fflush(stderr);
            drawn_ = true;
        }
        if (log) {
            last_log_ = s;
            log_->line(std::string("progress ") + line);
        }
    }
    void finish() {
        if (enabled_ && tty_ && drawn_) std::fprintf(stderr, "\n");
    }

private:
    std::uint64_t total_, already_;
    bool enabled_, tty_;
    double every_;
    RunLog* log_;
    Clock::time_point t0_;
    double last_ = -1e9, last_log_ = 0.0;
    bool drawn_ = false;
};

} // namespace

std::string parallel_run_problem(const RunConfig& cfg) {
    if (!cfg.run.save_samples) return {};
    return "run.save_samples is not available with several MPI ranks (every row would travel to rank 0); run "
           "--shard i/N jobs instead: each writes its samples.csv and `nhvk merge` joins them";
}

bool runs_on_device(const RunConfig& cfg) {
    return cfg.run.backend == Backend::cuda ||
           (cfg.run.backend == Backend::automatic && cfg.integrator.equations == EquationsKind::generated &&
            cuda_available());
}

namespace {

/** @brief `layout` with the host regions a device backend needs for `cfg`: the inputs for samples.csv and saved
 *         trajectories, the metrics for samples.csv (the values of exact quantiles stay on the device). */
ChunkLayout device_layout(const RunConfig& cfg, ChunkLayout layout) {
    layout.host_inputs = cfg.run.save_samples || cfg.run.save_trajectories > 0;
    layout.host_metrics = cfg.run.save_samples;
    return layout;
}

/** @brief The backend of a run: CUDA when asked for, or `auto` with a device present and the generated equations. */
std::unique_ptr<EnsembleBackend> make_backend(const RunConfig& cfg, const RunPlan& plan, int threads, const Comm& comm,
                                              ChunkWatch watch) {
    // NOTE: the dual-number reference equations run on the CPU only; `auto` picks the CPU for them.
    if (cfg.run.backend == Backend::cuda && plan.common.equations == EquationsKind::ad)
        throw std::runtime_error("run.backend = \"cuda\" integrates the generated equations only; "
                                 "integrator.equations = \"ad\" needs run.backend = \"cpu\" or \"auto\"");
    if (runs_on_device(cfg)) {
        // NOTE: the ranks on a node take the node's devices in turn.
        if (comm.parallel()) select_cuda_device(comm.local_rank());
        return make_cuda_backend(device_layout(cfg, plan.layout), plan.common);
    }
    return make_cpu_backend(plan.layout, plan.common, threads, std::move(watch));
}

/** @brief Test hook: `NHVK_TEST_SIGNAL_AFTER_CHUNK=k,SIG` sends signal SIG to this process once its k-th chunk is
 *         issued (and its resume record written, when due): a deterministic Ctrl-C or kill -9 for the tests of
 *         resume (tests/host/test_scaleout.cpp). */
void test_signal_after_chunk(int chunks) {
    static const char* hook = std::getenv("NHVK_TEST_SIGNAL_AFTER_CHUNK");
    if (!hook) return;
    int k = 0, sig = 0;
    if (std::sscanf(hook, "%d,%d", &k, &sig) == 2 && chunks == k) ::kill(::getpid(), sig);
}

/** @brief The name of rank `rank`'s resume record in a run of `ranks` processes. */
std::string resume_record_name(int rank, int ranks) {
    if (ranks == 1) return "resume.nhvk";
    return "resume.rank" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".nhvk";
}

/** @brief Rank 0, holding the folder: removes the temporaries of records a killed process was writing; a new run
 *         (no --resume) removes every earlier record and the rows kept for it; a resumed run refuses records of
 *         another number of ranks when none of its own is there. */
void tidy_resume_records(const fs::path& dir, bool resume, int ranks) {
    std::set<std::string> own;
    for (int k = 0; k < ranks; ++k) own.insert(resume_record_name(k, ranks));
    std::error_code ec;
    std::vector<std::string> foreign;
    bool any_own = false;
    for (fs::directory_iterator it(dir, ec), e; !ec && it != e; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("resume", 0) != 0) continue;
        const bool record = name.size() > 5 && name.compare(name.size() - 5, 5, ".nhvk") == 0;
        std::error_code ec2;
        if (name.find(".nhvk.tmp.") != std::string::npos || (record && !resume)) fs::remove(it->path(), ec2);
        else if (record && own.count(name)) any_own = true;
        else if (record) foreign.push_back(name);
    }
    if (!resume) fs::remove(dir / "samples.csv.resume", ec);
    if (resume && !any_own && !foreign.empty())
        throw ResumeRefused("--resume: the resume record '" + (dir / foreign.front()).string() +
                            "' is of a run with another number of MPI ranks than this one (" + std::to_string(ranks) +
                            "); resume with the same number of ranks, or run without --resume to start over");
}

/** @brief The refusal of a resume whose record, or the samples kept for it, cannot be used as they are. */
ResumeRefused unusable_resume(const std::exception& e) {
    return ResumeRefused("--resume: " + std::string(e.what()) +
                         "; run without --resume to start over (that removes the record)");
}

std::string range_text(IndexRange r) { return "[" + std::to_string(r.first) + ", " + std::to_string(r.end) + ")"; }

} // namespace

EnsembleResult run_ensemble(const RunConfig& cfg, const EnsembleOptions& opt) {
    const auto t_start = Clock::now();
    if (!find_model_ops(cfg.model.name)) throw std::runtime_error("unknown model '" + cfg.model.name + "'");
    if (static_cast<int>(cfg.params.size()) > max_params)
        throw std::runtime_error("model has more than " + std::to_string(max_params) + " parameters");
    Comm& comm = Comm::world();
    const bool root = comm.rank() == 0;
    const std::uint64_t N = static_cast<std::uint64_t>(cfg.run.trajectories);
    const IndexRange shard = split_range({0, N}, opt.shard_index, opt.shard_count);
    const IndexRange mine = split_range(shard, comm.rank(), comm.size());
    if (comm.parallel())
        if (const std::string problem = parallel_run_problem(cfg); !problem.empty()) throw std::runtime_error(problem);
    // NOTE: the OpenMP default is process-wide; restore it on return so one run's thread count does not leak into
    // the next run of the same process.
    struct OmpThreadsGuard {
        int saved = omp_get_max_threads();
        ~OmpThreadsGuard() { omp_set_num_threads(saved); }
    } omp_guard;
    // NOTE: more threads than cores cannot speed anything up (the results do not depend on the thread count) and a
    // count in the thousands can fail to start: lowered to the cores, said on stderr and in summary.json `threads`.
    // The ranks on a node share its cores.
    const int cores = std::max(1, omp_get_num_procs());
    int threads = cfg.run.threads > 0
                      ? cfg.run.threads
                      : (comm.local_size() > 1 ? std::max(1, cores / comm.local_size()) : omp_guard.saved);
    std::string threads_note;
    if (cfg.run.threads > cores) {
        threads = cores;
        threads_note = "run.threads = " + std::to_string(cfg.run.threads) + " is more than the " +
                       std::to_string(cores) + " cores; using " + std::to_string(cores);
        if (!opt.quiet && root) std::fprintf(stderr, "nhvk: note: %s\n", threads_note.c_str());
    }
    omp_set_num_threads(threads);

    // The stop request (first SIGINT/SIGTERM/SIGHUP).
    std::atomic<int> stop{0};
    struct StopGuard {
        explicit StopGuard(std::atomic<int>* f) { set_stop_request(f); }
        ~StopGuard() { set_stop_request(nullptr); }
    } stop_guard(&stop);

    std::uint64_t done = 0;           // members of [mine.first, mine.end) done, a resumed part included
    std::uint64_t in_chunk = 0;       // members of the CPU chunk in progress done so far
    std::function<void(bool)> report; // progress (set below)
    bool chunk_cut = false;           // the CPU backend left its chunk unfinished on the stop request
    ChunkWatch watch;
    watch.stop = &stop;
    watch.cut = &chunk_cut;
    watch.progress = [&](long long members) {
        in_chunk = static_cast<std::uint64_t>(members);
        if (report) report(false);
    };

    const RunPlan plan =
        make_run_plan(cfg, static_cast<long long>(std::max<std::uint64_t>(
                               1, std::min<std::uint64_t>(static_cast<std::uint64_t>(cfg.run.chunk), mine.size()))));
    std::unique_ptr<EnsembleBackend> backend = make_backend(cfg, plan, threads, comm, watch);
    // NOTE: after the backend, so a backend error leaves no folder behind. Rank 0 claims; the others write only
    // their resume records into it.
    std::unique_ptr<OutputFolder> out;
    std::exception_ptr claim_failure;
    if (root) {
        try {
            out = claim_output_folder(cfg, opt.sharded);
            tidy_resume_records(cfg.run.out, opt.resume, comm.size());
        } catch (...) {
            if (!comm.parallel()) throw;
            claim_failure = std::current_exception();
        }
    }
    if (!comm.broadcast(!claim_failure)) {
        if (root) std::rethrow_exception(claim_failure);
        throw RootFailed("rank 0 could not claim the output folder '" + cfg.run.out + "'");
    }
    const fs::path dir = cfg.run.out;
    std::unique_ptr<RunLog> log;
    if (root) log = std::make_unique<RunLog>(dir / "run.log");
    bool recorded = false; // a resume record of this run exists (written, or resumed from)
    try {

        EnsembleResult r;
        r.backend = backend->name();
        r.threads = threads;
        r.requested = mine.size();
        r.times = cfg.times;
        const RunIdentity id = run_identity(cfg);
        r.config_hash = hash_text(id.config_hash);
        r.ranks = comm.size();
        r.shard_index = opt.shard_index;
        r.shard_count = opt.shard_count;
        r.first = mine.first;
        r.end = mine.end;
        ReduceStage reduce(cfg, r);
        SavedTrajectories saved(cfg, plan);

        // ---- resume: the record of this process, checked against this run ----
        const fs::path record = dir / resume_record_name(comm.rank(), comm.size());
        std::uint64_t next = mine.first, samples_bytes = 0;
        std::error_code ec;
        if (opt.resume && fs::exists(record, ec)) {
            // NOTE: a record that cannot be read (damaged, truncated, of another version, unreadable) is a usage
            // error like a record of another run: refused with exit 2, everything left as it is.
            PartialState st;
            try {
                st = read_state_file(record);
            } catch (const std::exception& e) {
                throw unusable_resume(e);
            }
            if (st.id.config_hash != id.config_hash || st.id.trajectories != id.trajectories || st.id.seed != id.seed)
                throw ResumeRefused("--resume: the resume record '" + record.string() +
                                    "' was written by a run of another configuration (config hash " +
                                    hash_text(st.id.config_hash) + ", this run's " + hash_text(id.config_hash) +
                                    "); run without --resume to start over");
            if (st.range.first != mine.first || st.range.end != mine.end || st.ranks != comm.size() ||
                st.shard_index != opt.shard_index || st.shard_count != opt.shard_count)
                throw ResumeRefused("--resume: the resume record '" + record.string() + "' covers trajectories " +
                                    range_text(st.range) + " (shard " + std::to_string(st.shard_index) + "/" +
                                    std::to_string(st.shard_count) + ", " + std::to_string(st.ranks) +
                                    " ranks); this run covers " + range_text(mine) +
                                    ": resume with the same --shard and number of ranks");
            recorded = true;
            reduce.restore(st.statistics, record.string());
            add_tally(r, st.tally);
            saved.load(st.saved, record.string());
            next = st.next;
            samples_bytes = st.samples_bytes;
            r.resumed = true;
            r.resumed_at = next;
        } else if (opt.resume && !opt.quiet && root) {
            std::fprintf(stderr, "nhvk: note: --resume: no resume record in '%s'; starting from the beginning\n",
                         cfg.run.out.c_str());
        }
        reduce.start(*backend, mine.end - next);
        std::unique_ptr<SamplesWriter> samples;
        if (cfg.run.save_samples) {
            try {
                samples = std::make_unique<SamplesWriter>(cfg, plan.layout, *out, samples_bytes);
            } catch (const ResumableTooShort& e) {
                throw unusable_resume(e);
            }
        }
        done = next - mine.first;
        if (log) {
            log->line("start nhvk " + std::string(nhvk_version) + " run " + cfg.source_path + ": model " +
                      cfg.model.name + ", trajectories " + std::to_string(N) + ", seed " +
                      std::to_string(cfg.run.seed) + ", config hash " + r.config_hash + ", backend " + r.backend +
                      ", threads " + std::to_string(threads) + ", ranks " + std::to_string(comm.size()) +
                      (opt.sharded ? ", shard " + std::to_string(opt.shard_index) + "/" +
                                         std::to_string(opt.shard_count) + " " + range_text(shard)
                                   : std::string()) +
                      (r.resumed ? ", resumed at trajectory " + std::to_string(next) : std::string()));
            if (!threads_note.empty()) log->line("note " + threads_note);
        }

        Progress progress(shard.size(), done, opt.progress && !opt.quiet && root, opt.progress_seconds, log.get());
        auto last_sent = Clock::now();
        report = [&](bool force) {
            const std::uint64_t own = done + in_chunk;
            if (root) {
                progress.update(own + comm.poll_progress(), force);
            } else if (force || seconds_since(last_sent) >= 0.5) {
                last_sent = Clock::now();
                comm.send_progress(own);
            }
        };

        const int slots = backend->slots();
        std::vector<std::uint64_t> slot_first(slots, 0);
        std::vector<long long> slot_m(slots, 0);
        std::vector<bool> slot_busy(slots, false);

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
            in_chunk = 0;
            slot_busy[s] = false;
            host_seconds += seconds_since(tr);
            report(false);
        };
        int chunk_index = 0;
        auto finish_all = [&] {
            for (int c = 0; c < slots; ++c) {
                const int s = (chunk_index + c) % slots;
                if (slot_busy[s]) finish_slot(s);
            }
        };
        // The state of [mine.first, next) (every slot finished).
        auto state = [&](std::uint64_t upto) {
            PartialState st;
            st.id = id;
            st.source = {cfg.source_path, opt.config_text, opt.sets, opt.options};
            st.shard_index = opt.shard_index;
            st.shard_count = opt.shard_count;
            st.rank = comm.rank();
            st.ranks = comm.size();
            st.range = mine;
            st.next = upto;
            st.backend = backend->name();
            const StageSeconds bs = backend->stage_seconds();
            st.seconds = seconds_since(t_start);
            st.sampling_seconds = bs.sample;
            st.integration_seconds = bs.integrate;
            st.reduction_seconds = bs.reduce + host_seconds;
            st.transfer_seconds = bs.transfer;
            add_tally(st.tally, r);
            st.statistics = reduce.snapshot(*backend);
            st.saved = saved.save();
            if (samples) st.samples_bytes = samples->sync_size();
            return st;
        };

        auto save_record = [&] {
            write_state_file(record, state(next));
            recorded = true;
        };

        // ---- the chunk loop: sample → integrate → reduce (backend) → download; the host finishes the other slot ----
        auto last_record = Clock::now();
        while (next < mine.end && stop.load() == 0) {
            const int s = chunk_index % slots;
            if (slot_busy[s]) finish_slot(s);
            const long long m = static_cast<long long>(std::min<std::uint64_t>(plan.layout.capacity, mine.end - next));
            slot_first[s] = next;
            slot_m[s] = m;
            backend->sample(s, next, m);
            backend->integrate(s, m);
            // NOTE: a chunk the CPU backend gave up on a stop request is not counted: redone on resume.
            if (chunk_cut) break;
            if (!reduce.on_host()) backend->reduce(s, m);
            Downloads d;
            d.metrics = reduce.on_host() || samples != nullptr;
            d.inputs = samples != nullptr || saved.wants(next);
            backend->download(s, m, d);
            slot_busy[s] = true;
            next += static_cast<std::uint64_t>(m);
            ++chunk_index;
            if (next < mine.end && seconds_since(last_record) >= opt.checkpoint_seconds) {
                finish_all();
                save_record();
                last_record = Clock::now();
            }
            test_signal_after_chunk(chunk_index);
        }
        finish_all();
        in_chunk = 0;
        const bool stopped_here = next < mine.end;
        if (stopped_here) save_record();
        const bool stopped =
            comm.finish_loop(done, stopped_here, [&](std::uint64_t others) { progress.update(done + others, false); });
        if (stopped) {
            // NOTE: a rank that completed its part leaves a complete record: a resume skips it.
            if (!stopped_here) save_record();
            progress.finish();
            const int sig = stop.load();
            const std::string why = sig ? std::string(sig == SIGINT    ? "SIGINT"
                                                      : sig == SIGTERM ? "SIGTERM"
                                                                       : "SIGHUP")
                                        : std::string("another rank's stop");
            if (log)
                log->line("stopped by " + why + " at trajectory " + std::to_string(next) + "; resume record " +
                          record.string());
            throw Interrupted("stopped by " + why + " after " + std::to_string(done) + " of " +
                                  std::to_string(mine.size()) + " trajectories; the resume record is in '" +
                                  cfg.run.out + "'; resume with: " + opt.command_line +
                                  (opt.command_line.find("--resume") == std::string::npos ? " --resume" : ""),
                              sig ? sig : SIGTERM);
        }
        progress.update(done + (root ? comm.poll_progress() : 0), true);
        progress.finish();

        auto tf = Clock::now();
        // NOTE: the values of exact quantiles stay on the backend (selected there) unless another part of the run
        // (an MPI rank's, the shard's partial state) needs them on the host.
        reduce.collect(*backend, !comm.parallel() && !opt.sharded);
        const StageSeconds bs = backend->stage_seconds();
        r.sampling_seconds = bs.sample;
        r.integration_seconds = bs.integrate;
        r.reduction_seconds = bs.reduce + host_seconds;
        r.transfer_seconds = bs.transfer;

        // ---- MPI: every other rank's part to rank 0, merged in rank order ----
        if (comm.parallel()) {
            if (!root) {
                comm.send_to_root(encode_state(state(next)));
                return r;
            }
            r.requested = shard.size();
            r.first = shard.first;
            r.end = shard.end;
            for (int k = 1; k < comm.size(); ++k) {
                const std::string what = "rank " + std::to_string(k) + "'s state";
                const PartialState st = decode_state(comm.receive_from(k), what);
                reduce.add_part(st, what); // NOTE: the job's stage times are the ranks' sums (CPU or device seconds)
                saved.load(st.saved, what);
            }
        }
        reduce.finish();
        r.reduction_seconds += seconds_since(tf);
        saved.write(*out);
        r.seconds = seconds_since(t_start);
        if (opt.sharded) {
            // NOTE: state() takes r's counts and the statistics, the other ranks' included; the stage times are r's
            // sums.
            PartialState whole = state(next);
            whole.range = shard;
            whole.next = shard.end;
            whole.rank = 0;
            whole.seconds = r.seconds;
            whole.sampling_seconds = r.sampling_seconds;
            whole.integration_seconds = r.integration_seconds;
            whole.reduction_seconds = r.reduction_seconds;
            whole.transfer_seconds = r.transfer_seconds;
            write_partial_state(encode_state(whole), *out);
        }
        write_statistics(cfg, r, *out);
        out->commit();
        // NOTE: after the commit: a run killed in between has its complete outputs and a record that redoes nothing.
        for (int k = 0; k < comm.size(); ++k) fs::remove(dir / resume_record_name(k, comm.size()), ec);
        if (log) {
            if (!r.exact_quantiles && r.outside_range() > 0)
                log->line("warning " + std::to_string(r.outside_range()) +
                          " values lie below the histogram's resolved window (stats.csv outside_range)");
            if (!r.failure_warning.empty()) log->line("warning " + r.failure_warning);
            log->line("end complete in " + format_duration(r.seconds) + ": valid " + std::to_string(r.valid) +
                      ", failed " + std::to_string(r.failed()));
        }
        return r;

    } catch (const Interrupted&) {
        throw;
    } catch (const ResumeRefused&) {
        throw; // the record is another run's: left as it is, said by the message
    } catch (const std::exception& e) {
        // NOTE: a failed run keeps its resume record (a full disk or a lost device can be fixed, then --resume goes
        // on); without one, it leaves nothing of its own: no rows, and no run.log it created (the folder it created
        // is then removed as before).
        if (log) log->line(std::string("failed: ") + e.what() + (recorded ? "; the resume record is kept" : ""));
        std::error_code ec2;
        if (!recorded) {
            if (root) fs::remove(dir / "samples.csv.resume", ec2);
            if (log && log->created()) {
                log.reset();
                fs::remove(dir / "run.log", ec2);
            }
            throw;
        }
        throw std::runtime_error(std::string(e.what()) + "; the resume record in '" + cfg.run.out +
                                 "' is kept: rerun with --resume once the cause is fixed");
    }
}

} // namespace nhvk
