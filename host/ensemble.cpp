// SPDX-License-Identifier: MIT
/** @file
 *  @brief The driver of `nhvk run`: plan → loop over chunks → merge → write. The plan takes this process's share of
 *         the trajectory indices, its threads and backend, and claims the output folder; the loop issues chunks into
 *         the backend's slots (pipeline/slot_pipeline), whose host part feeds the reduce and write stages
 *         (pipeline/reduce_stage, pipeline/write_stage), with resume records at checkpoints (pipeline/resume_record)
 *         and progress (pipeline/progress); the merge brings the MPI ranks' parts to rank 0; the write stage commits
 *         the outputs. Every draw depends only on (seed, global index) and every reduction is exact, so the
 *         statistics are bit-identical for any chunk size, thread count and backend schedule.
 */
#include "ensemble.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

#include "checks.hpp"
#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "nhvk/backend/cuda_device.hpp"
#include "pipeline/comm.hpp"
#include "pipeline/members_output.hpp"
#include "pipeline/netcdf_output.hpp"
#include "pipeline/output_folder.hpp"
#include "pipeline/partial_state.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/resume_record.hpp"
#include "pipeline/run_log.hpp"
#include "pipeline/run_plan.hpp"
#include "pipeline/slot_pipeline.hpp"
#include "pipeline/write_stage.hpp"

namespace nhvk {

namespace fs = std::filesystem;

std::string parallel_run_problem(const RunConfig& cfg) {
    if (!cfg.run.save_samples) return {};
    return "run.save_samples is not available with several MPI ranks (every row would travel to rank 0); run "
           "--shard i/N jobs instead: each writes its samples.csv and `nhvk merge` joins them";
}

bool runs_on_device(const RunConfig& cfg) {
    // NOTE: a model file's kernels are compiled by NVRTC: without it (a build with no CUDA toolkit) `auto` picks the
    // CPU for a model file, and `cuda` is refused with a message (make_backend); so it does for an interpreted one.
    return cfg.run.backend == Backend::cuda ||
           (cfg.run.backend == Backend::automatic && cfg.integrator.equations == EquationsKind::generated &&
            modelfile::cuda_kernels_available(cfg.model.name) && cuda_available());
}

namespace {

/** @brief `layout` with the host regions a device backend needs for `cfg` (device_host_regions; the values of exact
 *         quantiles stay on the device). */
ChunkLayout device_layout(const RunConfig& cfg, ChunkLayout layout) {
    const HostRegions host = device_host_regions(cfg);
    layout.host_inputs = host.inputs;
    layout.host_metrics = host.metrics;
    return layout;
}

/** @brief The backend of a run: CUDA when asked for, or `auto` with a device present and the generated equations. */
std::unique_ptr<EnsembleBackend> make_backend(const RunConfig& cfg, const RunPlan& plan, int threads,
                                              const Comm& comm) {
    // NOTE: the dual-number reference equations run on the CPU only; `auto` picks the CPU for them.
    if (cfg.run.backend == Backend::cuda && plan.common.equations == EquationsKind::ad)
        throw std::runtime_error("run.backend = \"cuda\" integrates the generated equations only; "
                                 "integrator.equations = \"ad\" needs run.backend = \"cpu\" or \"auto\"");
    if (runs_on_device(cfg)) {
        // NOTE: the ranks on a node take the node's devices in turn.
        if (comm.parallel()) select_cuda_device(comm.local_rank());
        // NOTE: kernels compiled at run time are compiled for the device just selected (its architecture); cli_run
        // prepared them before the clock started (for device 0), so this does nothing unless the node mixes devices.
        modelfile::prepare_cuda_kernels(cfg.model.name, modelfile::CudaKernels::ensemble, plan.common.precision,
                                        plan.common.method);
        return make_cuda_backend(device_layout(cfg, plan.layout), plan.common);
    }
    return make_cpu_backend(plan.layout, plan.common, threads);
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

/** @brief The model of `cfg` exists and its parameters fit the per-member parameter arrays. */
const RunConfig& checked_model(const RunConfig& cfg) {
    if (!find_model_ops(cfg.model.name)) throw std::runtime_error("unknown model '" + cfg.model.name + "'");
    if (static_cast<int>(cfg.params.size()) > max_params)
        throw std::runtime_error("model has more than " + std::to_string(max_params) + " parameters");
    return cfg;
}

/** @brief The OpenMP thread count of a run, set for its duration: the OpenMP default is process-wide, so it is
 *         restored at the end and one run's count does not leak into the next run of the same process. */
class RunThreads {
public:
    RunThreads(const RunConfig& cfg, const Comm& comm, bool say) {
        // NOTE: more threads than cores cannot speed anything up (the results do not depend on the thread count)
        // and a count in the thousands can fail to start: lowered to the cores, said on stderr and in summary.json
        // `threads`. The ranks on a node share its cores.
        const int cores = std::max(1, omp_get_num_procs());
        count_ = cfg.run.threads > 0 ? cfg.run.threads
                                     : (comm.local_size() > 1 ? std::max(1, cores / comm.local_size()) : saved_);
        if (cfg.run.threads > cores) {
            count_ = cores;
            note_ = "run.threads = " + std::to_string(cfg.run.threads) + " is more than the " + std::to_string(cores) +
                    " cores; using " + std::to_string(cores);
            if (say) std::fprintf(stderr, "nhvk: note: %s\n", note_.c_str());
        }
        omp_set_num_threads(count_);
    }
    ~RunThreads() { omp_set_num_threads(saved_); }
    RunThreads(const RunThreads&) = delete;
    RunThreads& operator=(const RunThreads&) = delete;
    int count() const { return count_; }
    const std::string& note() const { return note_; }

private:
    int saved_ = omp_get_max_threads();
    int count_ = 0;
    std::string note_;
};

/** @brief The stop request of a run (the first SIGINT, SIGTERM or SIGHUP's number; 0 while none), taken while the
 *         run can stop at a chunk boundary, with what measures how long the run took to honour it. */
class StopRequest {
public:
    StopRequest() { set_stop_request(&state_); }
    ~StopRequest() { set_stop_request(nullptr); }
    StopRequest(const StopRequest&) = delete;
    StopRequest& operator=(const StopRequest&) = delete;
    int signal() const { return state_.signal.load(); }
    const std::atomic<int>* flag() const { return &state_.signal; }
    /** @brief The count of finished chunks, kept by the run's slots. */
    std::atomic<std::uint64_t>* finished() { return &state_.chunks_finished; }
    /** @brief Chunks finished since the signal came (0 without one). */
    std::uint64_t finished_since() const {
        return signal() ? state_.chunks_finished.load() - state_.finished_at_signal.load() : 0u;
    }
    /** @brief Seconds since the signal came (0 without one). */
    double seconds_since_signal() const {
        if (!signal()) return 0.0;
        const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch());
        return 1e-9 * static_cast<double>(now.count() - state_.signal_steady_ns.load());
    }

private:
    StopRequestState state_;
};

/** @brief One `nhvk run` in this process: plan (the constructor) → loop over chunks → merge → write (`run`). */
class EnsembleRun {
public:
    EnsembleRun(const RunConfig& cfg, const EnsembleOptions& opt);
    EnsembleResult run();

private:
    // ---- the plan ----
    const Clock::time_point t_start_ = Clock::now();
    const RunConfig& cfg_;
    const EnsembleOptions& opt_;
    Comm& comm_ = Comm::world();
    const bool root_ = comm_.rank() == 0;
    IndexRange shard_, mine_; ///< the job's part (`--shard`), this process's part of it (MPI rank)
    std::optional<RunThreads> threads_;
    StopRequest stop_;
    std::optional<RunPlan> plan_;
    std::unique_ptr<EnsembleBackend> backend_;
    std::unique_ptr<OutputFolder> out_; ///< rank 0's: the others write only their resume records into it
    std::unique_ptr<RunLog> log_;       ///< rank 0's
    std::optional<ResumeRecord> record_;

    // ---- the run's result and stages (made in `run`, where a failure is handled) ----
    EnsembleResult r_;
    std::optional<ReduceStage> reduce_;
    std::optional<SavedTrajectories> saved_;
    std::unique_ptr<SamplesWriter> samples_;
    std::unique_ptr<MembersWriter> members_;
    std::vector<std::uint64_t> members_bytes_; ///< rank 0: every rank's scratch bytes, in rank order (merge)
    std::uint64_t next_ = 0;                   ///< the first trajectory index of this process's part not done
    std::optional<Progress> progress_;
    std::optional<HostStages> host_;
    std::optional<SlotPipeline> slots_;
    std::uint64_t chunks_after_signal_ = 0; ///< chunks finished after a stop signal, when the record was written
    double record_after_signal_s_ = 0.0;    ///< seconds from the signal to the record

    void start();
    bool loop();
    [[noreturn]] void stopped();
    void merge();
    void write();
    void write_record();
    void write_members();
    PartialState state() const;
    void release_stages();
};

EnsembleRun::EnsembleRun(const RunConfig& cfg, const EnsembleOptions& opt) : cfg_(checked_model(cfg)), opt_(opt) {
    // NOTE: a sweep's points are consecutive ranges of the job's trajectory indices, so every split stays exact
    shard_ = split_range({0, cfg.members()}, opt.shard_index, opt.shard_count);
    mine_ = split_range(shard_, comm_.rank(), comm_.size());
    if (comm_.parallel())
        if (const std::string problem = parallel_run_problem(cfg); !problem.empty()) throw std::runtime_error(problem);
    if (cfg.run.save_members && !netcdf_outputs_built())
        throw std::runtime_error("run.save_members writes members.nc, and this nhvk was built without the netCDF "
                                 "library (libnetcdf-dev; CMake option NHVK_ENABLE_NETCDF)");
    threads_.emplace(cfg, comm_, !opt.quiet && root_);

    plan_.emplace(
        make_run_plan(cfg, static_cast<long long>(std::max<std::uint64_t>(
                               1, std::min<std::uint64_t>(static_cast<std::uint64_t>(cfg.run.chunk), mine_.size())))));
    backend_ = make_backend(cfg, *plan_, threads_->count(), comm_);

    // NOTE: after the backend, so a backend error leaves no folder behind. Rank 0 claims; the others write only
    // their resume records into it.
    std::exception_ptr claim_failure;
    if (root_) {
        try {
            out_ = claim_output_folder(cfg, opt.sharded);
            ResumeRecord::tidy(cfg.run.out, opt.resume, comm_.size());
            // NOTE: checked once the folder exists (its file system's free space), before any work
            if (cfg.run.save_members)
                if (const std::string problem =
                        members_disk_problem(cfg, member_record_shape(cfg, plan_->layout), shard_.size(), cfg.run.out);
                    !problem.empty())
                    throw std::runtime_error(problem);
        } catch (...) {
            if (!comm_.parallel()) throw;
            claim_failure = std::current_exception();
        }
    }
    if (!comm_.broadcast(!claim_failure)) {
        if (root_) std::rethrow_exception(claim_failure);
        throw RootFailed("rank 0 could not claim the output folder '" + cfg.run.out + "'");
    }
    if (root_) log_ = std::make_unique<RunLog>(fs::path(cfg.run.out) / "run.log");
    record_.emplace(cfg.run.out, comm_.rank(), comm_.size());
}

EnsembleResult EnsembleRun::run() {
    try {
        start();
        if (loop()) stopped();
        merge();
        // NOTE: moved, not copied: a sweep's result holds every point's summaries
        if (!root_) return std::move(r_);
        write();
        return std::move(r_);
    } catch (const Interrupted&) {
        throw;
    } catch (const ResumeRefused&) {
        throw; // the record is another run's: left as it is, said by the message
    } catch (const std::exception& e) {
        // NOTE: a failed run keeps its resume record (a full disk or a lost device can be fixed, then --resume goes
        // on); without one, it leaves nothing of its own: no rows, and no run.log it created (the folder it created
        // is then removed as before).
        release_stages();
        const bool recorded = record_->exists();
        if (log_) log_->line(std::string("failed: ") + e.what() + (recorded ? "; the resume record is kept" : ""));
        std::error_code ec;
        if (!recorded) {
            const fs::path dir = cfg_.run.out;
            if (root_) fs::remove(dir / "samples.csv.resume", ec);
            if (cfg_.run.save_members) fs::remove(members_scratch_file(dir, comm_.rank(), comm_.size()), ec);
            if (log_ && log_->created()) {
                log_.reset();
                fs::remove(dir / "run.log", ec);
            }
            throw;
        }
        throw std::runtime_error(std::string(e.what()) + "; the resume record in '" + cfg_.run.out +
                                 "' is kept: rerun with --resume once the cause is fixed");
    }
}

/** @brief The result's description of the run, its stages, and, with `--resume`, the state of the record to go on
 *         from; then the run.log line of its start. */
void EnsembleRun::start() {
    r_.backend = backend_->name();
    r_.threads = threads_->count();
    r_.requested = mine_.size();
    r_.times = cfg_.times;
    const RunIdentity id = run_identity(cfg_);
    r_.config_hash = hash_text(id.config_hash);
    r_.ranks = comm_.size();
    r_.shard_index = opt_.shard_index;
    r_.shard_count = opt_.shard_count;
    r_.first = mine_.first;
    r_.end = mine_.end;
    reduce_.emplace(cfg_, r_);
    saved_.emplace(cfg_, *plan_);

    next_ = mine_.first;
    std::uint64_t samples_bytes = 0, members_bytes = 0;
    std::optional<PartialState> st;
    // NOTE: every rank learns whether any rank's record was refused, so that all end with that exit code instead of
    // one ending the job with MPI_Abort, after which mpiexec itself can crash in its own shutdown and lose the exit
    // code
    std::exception_ptr refused;
    if (opt_.resume) {
        try {
            st = record_->read(id, {cfg_.source_path, opt_.config_text, opt_.sets, opt_.options}, mine_,
                               opt_.shard_index, opt_.shard_count);
        } catch (const ResumeRefused&) {
            if (!comm_.parallel()) throw;
            refused = std::current_exception();
        }
    }
    if (comm_.parallel() && comm_.any(refused != nullptr)) {
        if (refused) std::rethrow_exception(refused);
        throw RootFailed("another rank's resume record was refused");
    }
    if (st) {
        reduce_->restore(st->statistics, record_->path().string());
        add_tally(r_, st->tally);
        saved_->load(st->saved, record_->path().string());
        next_ = st->next;
        samples_bytes = st->samples_bytes;
        members_bytes = st->members_bytes;
        r_.resumed = true;
        r_.resumed_at = next_;
    } else if (opt_.resume && !opt_.quiet && root_) {
        std::fprintf(stderr, "nhvk: note: --resume: no resume record in '%s'; starting from the beginning\n",
                     cfg_.run.out.c_str());
    }
    reduce_->start(*backend_, mine_.end - next_);
    if (cfg_.run.save_samples) {
        try {
            samples_ = std::make_unique<SamplesWriter>(cfg_, plan_->layout, *out_, samples_bytes, next_ - mine_.first);
        } catch (const ResumableTooShort& e) {
            throw unusable_resume(e);
        }
    }
    if (cfg_.run.save_members) {
        try {
            members_ = std::make_unique<MembersWriter>(cfg_, plan_->layout,
                                                       members_scratch_path(cfg_.run.out, comm_.rank(), comm_.size()),
                                                       members_bytes, next_ - mine_.first);
        } catch (const ResumableTooShort& e) {
            throw unusable_resume(e);
        }
    }
    if (log_) {
        log_->line("start nhvk " + std::string(nhvk_version) + " run " + cfg_.source_path + ": model " +
                   cfg_.model.name + ", trajectories " + std::to_string(cfg_.run.trajectories) +
                   (cfg_.sweep ? " per point, sweep points " + std::to_string(cfg_.points()) : std::string()) +
                   ", seed " + std::to_string(cfg_.run.seed) + ", config hash " + r_.config_hash + ", backend " +
                   r_.backend + ", threads " + std::to_string(threads_->count()) + ", ranks " +
                   std::to_string(comm_.size()) +
                   (opt_.sharded ? ", shard " + std::to_string(opt_.shard_index) + "/" +
                                       std::to_string(opt_.shard_count) + " " + range_text(shard_)
                                 : std::string()) +
                   (r_.resumed ? ", resumed at trajectory " + std::to_string(next_) : std::string()));
        if (!threads_->note().empty()) log_->line("note " + threads_->note());
    }
}

/** @brief The chunks of [next_, mine_.end) through the backend's slots, sized by the backend's pacing, with a resume
 *         record every `checkpoint_seconds` and when this process stops early. True when the job stopped (a signal
 *         here or another rank's stop); then every rank has left a record, which holds every member it finished. */
bool EnsembleRun::loop() {
    Progress& progress = progress_.emplace(comm_, shard_.size(), next_ - mine_.first,
                                           opt_.progress && !opt_.quiet && root_, opt_.progress_seconds, log_.get());
    host_.emplace(*reduce_, samples_.get(), members_.get(), *saved_);
    SlotPipeline& slots =
        slots_.emplace(*backend_, *host_, progress, plan_->layout.capacity, stop_.flag(), stop_.finished());

    // ---- sample → integrate → reduce (backend) → download; the host finishes the other slot meanwhile ----
    auto last_record = Clock::now();
    while (next_ < mine_.end && stop_.signal() == 0) {
        const Chunk chunk{next_, slots.next_size(mine_.end - next_)};
        if (!slots.issue(chunk)) break;
        next_ += static_cast<std::uint64_t>(chunk.m);
        if (next_ < mine_.end && seconds_since(last_record) >= opt_.checkpoint_seconds) {
            slots.finish_all();
            write_record();
            last_record = Clock::now();
        }
        test_signal_after_chunk(slots.issued());
    }
    // NOTE: the chunks in flight when a stop request came are finished and kept, not given up: the chunks are paced
    // to be short, and the record then holds every member integrated.
    slots.finish_all();

    const bool stopped_here = next_ < mine_.end;
    if (stopped_here) write_record();
    const bool stopped = comm_.finish_loop(
        progress.own(), stopped_here, [&](ProgressCount others) { progress.draw(progress.own() + others, false); });
    // NOTE: a rank that completed its part leaves a complete record when the job stopped: a resume skips it.
    if (stopped && !stopped_here) write_record();
    progress.finish(!stopped);
    return stopped;
}

/** @brief The resume record of [mine_.first, next_) (every slot finished), and what the progress line and a stop
 *         say of it. */
void EnsembleRun::write_record() {
    record_->write(state());
    progress_->record_written(next_ - mine_.first);
    if (stop_.signal()) {
        chunks_after_signal_ = stop_.finished_since();
        record_after_signal_s_ = stop_.seconds_since_signal();
    }
}

/** @brief The job stopped at a chunk boundary: said in run.log and by `Interrupted` (the exit code 128 + signal). */
void EnsembleRun::stopped() {
    const int sig = stop_.signal();
    const std::string why = sig ? std::string(sig == SIGINT    ? "SIGINT"
                                              : sig == SIGTERM ? "SIGTERM"
                                                               : "SIGHUP")
                                : std::string("another rank's stop");
    // NOTE: how long the stop took, as the chunks that finished after the signal (machine-independent: at most the
    // backend's slots) and the seconds until the record was written
    char after[160] = "";
    if (sig)
        std::snprintf(after, sizeof after,
                      "; %llu chunk%s finished after the signal, the record was written %.2f s after it",
                      static_cast<unsigned long long>(chunks_after_signal_), chunks_after_signal_ == 1 ? "" : "s",
                      record_after_signal_s_);
    if (log_)
        log_->line("stopped by " + why + " at trajectory " + std::to_string(next_) + after + "; resume record " +
                   record_->path().string() + " holds " + std::to_string(progress_->recorded()) + " of " +
                   std::to_string(mine_.size()) + " trajectories");
    throw Interrupted("stopped by " + why + " after " + std::to_string(progress_->done()) + " of " +
                          std::to_string(mine_.size()) + " trajectories, all of them in the resume record in '" +
                          cfg_.run.out + "'" + after + "; resume with: " + opt_.command_line +
                          (opt_.command_line.find("--resume") == std::string::npos ? " --resume" : ""),
                      sig ? sig : SIGTERM);
}

/** @brief The statistics brought together: the backend's running ones collected, then, in an MPI job, every other
 *         rank's part sent to rank 0 and merged there in rank order (ranks > 0 are done after sending). */
void EnsembleRun::merge() {
    const auto t = Clock::now();
    // NOTE: the values of exact quantiles stay on the backend (selected there) unless another part of the run
    // (an MPI rank's, the shard's partial state) needs them on the host.
    reduce_->collect(*backend_, !comm_.parallel() && !opt_.sharded);
    const StageSeconds bs = backend_->stage_seconds();
    r_.sampling_seconds = bs.sample;
    r_.integration_seconds = bs.integrate;
    r_.reduction_seconds = bs.reduce + slots_->host_seconds();
    r_.transfer_seconds = bs.transfer;
    if (comm_.parallel()) {
        if (!root_) {
            comm_.send_to_root(encode_state(state()));
            if (members_) members_->close();
            return;
        }
        r_.requested = shard_.size();
        r_.first = shard_.first;
        r_.end = shard_.end;
        for (int k = 1; k < comm_.size(); ++k) {
            const std::string what = "rank " + std::to_string(k) + "'s state";
            const PartialState st = decode_state(comm_.receive_from(k), what);
            reduce_->add_part(st, what); // NOTE: the job's stage times are the ranks' sums (CPU or device seconds)
            saved_->load(st.saved, what);
            members_bytes_.push_back(st.members_bytes);
        }
    }
    reduce_->finish();
    r_.reduction_seconds += seconds_since(t);
}

/** @brief Rank 0: every output into the claimed folder, committed together; then the resume records removed. */
void EnsembleRun::write() {
    saved_->write(*out_);
    if (members_) write_members();
    r_.seconds = seconds_since(t_start_);
    if (opt_.sharded) {
        // NOTE: state() takes r_'s counts and the statistics, the other ranks' included; the stage times are r_'s
        // sums.
        PartialState whole = state();
        whole.range = shard_;
        whole.next = shard_.end;
        whole.rank = 0;
        whole.seconds = r_.seconds;
        whole.sampling_seconds = r_.sampling_seconds;
        whole.integration_seconds = r_.integration_seconds;
        whole.reduction_seconds = r_.reduction_seconds;
        whole.transfer_seconds = r_.transfer_seconds;
        write_partial_state(encode_state(whole), *out_);
    }
    write_statistics(cfg_, r_, *out_);
    // NOTE: the records go within the commit, after summary.json and before samples.csv.resume
    for (int k = 0; k < comm_.size(); ++k)
        out_->remove_after_commit(fs::path(cfg_.run.out) / ResumeRecord::name(k, comm_.size()));
    if (members_)
        for (int k = 0; k < comm_.size(); ++k)
            out_->remove_after_commit(members_scratch_file(cfg_.run.out, k, comm_.size()));
    if (const std::string note =
            removed_note(cfg_.run.out, out_->commit(), "the earlier run's outputs that this run does not write");
        !note.empty())
        std::fprintf(stderr, "%s\n", note.c_str());
    if (log_) {
        if (!r_.exact_quantiles && r_.outside_range() > 0)
            log_->line("warning " + std::to_string(r_.outside_range()) +
                       " values lie below the histogram's resolved window (stats.csv outside_range)");
        if (!r_.failure_warning.empty()) log_->line("warning " + r_.failure_warning);
        log_->line("end complete in " + format_duration(r_.seconds) + ": valid " + std::to_string(r_.valid) +
                   (r_.diverged ? ", diverged " + std::to_string(r_.diverged) : std::string()) + ", failed " +
                   std::to_string(r_.failed()));
    }
}

/** @brief Rank 0: members.nc from every rank's scratch file, in rank order (their ranges are consecutive). */
void EnsembleRun::write_members() {
    members_bytes_.insert(members_bytes_.begin(), members_->sync_size());
    members_->close();
    std::vector<MembersSource> sources;
    for (int k = 0; k < comm_.size(); ++k) {
        MembersSource s;
        s.path = members_scratch_file(cfg_.run.out, k, comm_.size());
        const IndexRange part = split_range(shard_, k, comm_.size());
        s.first = part.first;
        s.count = part.size();
        s.bytes = members_bytes_[static_cast<std::size_t>(k)];
        sources.push_back(s);
    }
    OutputFile& f = out_->create("members.nc");
    write_members_netcdf(f.temp_path(), cfg_, members_->shape(), sources);
    f.close();
}

/** @brief The state of [mine_.first, next_) (every slot finished): a resume record, or an MPI rank's part. */
PartialState EnsembleRun::state() const {
    PartialState st;
    st.id = run_identity(cfg_);
    st.source = {cfg_.source_path, opt_.config_text, opt_.sets, opt_.options};
    st.shard_index = opt_.shard_index;
    st.shard_count = opt_.shard_count;
    st.rank = comm_.rank();
    st.ranks = comm_.size();
    st.range = mine_;
    st.next = next_;
    st.backend = backend_->name();
    const StageSeconds bs = backend_->stage_seconds();
    st.seconds = seconds_since(t_start_);
    st.sampling_seconds = bs.sample;
    st.integration_seconds = bs.integrate;
    st.reduction_seconds = bs.reduce + slots_->host_seconds();
    st.transfer_seconds = bs.transfer;
    add_tally(st.tally, r_);
    st.statistics = reduce_->snapshot(*backend_);
    st.saved = saved_->save();
    if (samples_) st.samples_bytes = samples_->sync_size();
    if (members_) st.members_bytes = members_->sync_size();
    return st;
}

/** @brief The stages end before a failure is handled (as they would leaving a scope): their files are closed. */
void EnsembleRun::release_stages() {
    slots_.reset();
    host_.reset();
    progress_.reset();
    samples_.reset();
    members_.reset();
    saved_.reset();
    reduce_.reset();
}

} // namespace

EnsembleResult run_ensemble(const RunConfig& cfg, const EnsembleOptions& opt) {
    EnsembleRun job(cfg, opt);
    return job.run();
}

} // namespace nhvk
