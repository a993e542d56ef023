// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk run CONFIG`: the ensemble job.
 */
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "cli_common.hpp"
#include "config.hpp"
#include "ensemble.hpp"
#include "input_limits.hpp"
#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "pipeline/comm.hpp"
#include "pipeline/output_folder.hpp"
#include "pipeline/partial_state.hpp"
#include "pipeline/run_plan.hpp"
#include "pipeline/write_stage.hpp"
#include "registry.hpp"
#include "sweep_design.hpp"

namespace nhvk {

std::string run_command_line();

namespace {

struct RunCliOptions {
    std::string config;
    std::vector<std::string> sets;
    std::string trajectories, seed, backend, threads, out, chunk, save_trajectories;
    bool save_samples = false, save_members = false;
    bool quiet = false;
    std::string shard, progress_every, checkpoint_every, summary_md;
    bool resume = false;
};

/** @brief `--shard i/N`: 0 <= i < N, N >= 1. */
std::pair<int, int> parse_shard(const std::string& text) {
    const std::size_t slash = text.find('/');
    auto whole = [](const std::string& t, long long& v) {
        if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
        v = std::stoll(t);
        return true;
    };
    long long i = 0, n = 0;
    if (slash == std::string::npos || !whole(text.substr(0, slash), i) || !whole(text.substr(slash + 1), n) || n < 1 ||
        i >= n)
        throw UsageError("--shard: expected i/N with whole numbers 0 <= i < N (e.g. 0/4 … 3/4), got '" + text + "'");
    return {static_cast<int>(i), static_cast<int>(n)};
}

double parse_seconds(const std::string& text, const char* option, double min) {
    const double v = parse_number(text, option);
    if (!(v >= min) || v > 1e6)
        throw UsageError(std::string(option) + ": expected seconds in [" + std::to_string(min) + ", 1e6], got '" +
                         text + "'");
    return v;
}

/** @brief Refuses a sweep with a point whose energy shell none of its first members reaches (a point that would
 *         only fail), before any work: those members are drawn as the run would draw them. */
void check_sweep_energy(const RunConfig& cfg, const std::string& file) {
    const ModelOps* ops = find_model_ops(cfg.model.name);
    if (!ops) return; // the run says so
    constexpr long long probe = 32;
    for (std::size_t p = 0; p < cfg.sweep->configs.size(); ++p) {
        const RunConfig& point = cfg.sweep->configs[p];
        if (!point.energy) continue;
        const long long m = std::min<long long>(probe, point.run.trajectories);
        const RunPlan plan = make_run_plan(point, m);
        const ChunkBlock block(plan.layout);
        std::vector<double> storage((block.total + sizeof(double) - 1) / sizeof(double));
        ChunkArgs a = common_args(plan.layout, plan.common);
        block.bind(a, reinterpret_cast<char*>(storage.data()), plan.layout);
        a.m = m;
        ops->sample_chunk_cpu(plan.common, a, 0, 1);
        long long unreachable = 0;
        for (long long j = 0; j < m; ++j)
            unreachable += a.sample_status[j] == static_cast<std::uint8_t>(SampleStatus::energy_unreachable);
        if (unreachable == m)
            throw UsageError(file + ": [sweep] point " + std::to_string(p) + " of " +
                             std::to_string(cfg.sweep->configs.size()) + " (" + cfg.sweep->label(p) +
                             "): initial.energy: no state reaches the energy shell E0 = " +
                             sweep_value_text(*point.energy) + " (the first " + std::to_string(m) +
                             " members all ended energy_unreachable: E0 lies below the least energy of the "
                             "constraint set at their coordinates)");
    }
}

/** @brief A sweep's lines: each point's counts, growth exponent and amplitude of d_q with their intervals and its
 *         median onset (the first and last 8 points of a longer sweep); the lines after them pool every point. */
void print_sweep(const RunConfig& cfg, const EnsembleResult& r, std::ostream& os) {
    const Sweep& sw = *cfg.sweep;
    os << "  sweep: " << sw.values.size() << " points (" << sw.combine << ") x " << cfg.run.trajectories
       << " trajectories; per point (sweep_points.csv, sweep.csv), then the pooled statistics:\n";
    const std::size_t P = r.points.size();
    for (std::size_t p = 0; p < P; ++p) {
        if (P > 16 && p == 8) os << "    ... " << (P - 16) << " more points in sweep_points.csv ...\n";
        if (P > 16 && p >= 8 && p < P - 8) continue;
        const EnsembleResult& x = r.points[p];
        os << std::setprecision(4) << "    [" << p << "] " << sw.label(p) << ": valid " << x.valid << "/"
           << x.requested;
        if (x.diverged) os << ", diverged " << x.diverged;
        if (x.failed()) os << ", failed " << x.failed();
        os << "; p = " << x.growth_fit_q.slope;
        if (std::isfinite(x.growth_ci_q.lo)) os << " (" << x.growth_ci_q.lo << " to " << x.growth_ci_q.hi << ")";
        os << ", C = " << x.growth_fit_q.amplitude;
        if (std::isfinite(x.amplitude_ci_q.lo))
            os << " (" << x.amplitude_ci_q.lo << " to " << x.amplitude_ci_q.hi << ")";
        if (x.onset_times().count > 0) os << "; onset median t = " << x.onset_times().p50;
        os << "\n";
    }
}

void print_summary(const RunConfig& cfg, const EnsembleResult& r) {
    std::ostream& os = std::cerr;
    const int nt = static_cast<int>(r.times.size());
    os << "nhvk run: model " << cfg.model.name << ", " << r.requested << " trajectories on " << r.backend << " ("
       << (r.ranks > 1 ? std::to_string(r.ranks) + " MPI ranks × " : std::string()) << r.threads << " threads), "
       << std::setprecision(3) << r.seconds << " s (" << std::setprecision(4)
       << (r.seconds > 0 ? r.requested / r.seconds : 0.0) << " traj/s)\n";
    if (cfg.sweep) print_sweep(cfg, r, os);
    os << "  valid " << r.valid;
    if (std::isfinite(cfg.stop_at)) os << ", diverged " << r.diverged << " (stopped at d_q > " << cfg.stop_at << ")";
    os << ", failed " << r.failed();
    if (r.failed()) {
        os << " (";
        bool first = true;
        for (int s = 1; s < status_count; ++s)
            if (r.failed_by_status[s]) {
                os << (first ? "" : ", ") << status_name(static_cast<Status>(s)) << " " << r.failed_by_status[s];
                first = false;
            }
        for (int s = 1; s < sample_status_count; ++s)
            if (r.sampling[s]) {
                os << (first ? "" : ", ") << "sampling " << sample_status_name(static_cast<SampleStatus>(s)) << " "
                   << r.sampling[s];
                first = false;
            }
        os << ")";
    }
    os << "\n";
    const int lim = static_cast<int>(Status::step_limit), under = static_cast<int>(Status::step_underflow);
    if (r.failed_by_status[lim] || r.failed_by_status[under])
        os << "  limits hit: max_steps " << cfg.integrator.max_steps << " (nonholonomic "
           << r.failed_by_dynamics_status[1][lim] << ", vakonomic " << r.failed_by_dynamics_status[2][lim]
           << "), min_step " << cfg.integrator.min_step << " (nonholonomic " << r.failed_by_dynamics_status[1][under]
           << ", vakonomic " << r.failed_by_dynamics_status[2][under] << ")\n";
    if (nt > 0 && r.valid + r.diverged > 0) {
        const stats::SeriesSummary& last = r.at(metric_dq, nt - 1);
        os << std::setprecision(4) << "  d_q at t = " << r.times.back() << ": ";
        if (last.count == 0u) os << "no member left (each stopped or failed earlier)\n";
        else {
            os << "median " << last.p50;
            if (std::isfinite(last.q_lo[3])) os << " (95% CI " << last.q_lo[3] << " to " << last.q_hi[3] << ")";
            os << ", p95 " << last.p95 << ", max " << last.max << "\n";
        }
        if (!r.coincide.empty()) os << "  " << r.coincide_statement << "\n";
        for (const auto& [name, f] :
             {std::pair<const char*, const stats::GrowthFit*>{"d_q", &r.growth_fit_q}, {"d_v", &r.growth_fit_v}}) {
            if (!r.coincide.empty() && !std::isfinite(f->slope)) continue; // the statement above says why
            const bool q = f == &r.growth_fit_q;
            const stats::ReplicaInterval& pc = q ? r.growth_ci_q : r.growth_ci_v;
            const stats::ReplicaInterval& cc = q ? r.amplitude_ci_q : r.amplitude_ci_v;
            os << "  growth of " << law_text(cfg, name, false, true) << ": p = " << f->slope;
            if (std::isfinite(pc.lo)) os << " (95% CI " << pc.lo << " to " << pc.hi << ")";
            os << ", C = " << f->amplitude;
            if (std::isfinite(cc.lo)) os << " (95% CI " << cc.lo << " to " << cc.hi << ")";
            if (std::isfinite(pc.lo)) {
                os << " [sampling intervals from " << pc.groups << " replica groups";
                // NOTE: the groups' own fits spread less than the pooled fit varies when a group holds few members
                // (README "Error bars"); the jackknife does not need the warning
                if (r.growth_interval_method == "batch_means" &&
                    r.integrated() < 1000u * static_cast<std::uint64_t>(r.replicas))
                    os << " of fewer than 1000 members: p's interval runs narrow, see README Error bars";
                os << "]";
            } else if (!r.growth_interval_withheld.empty() && std::isfinite(f->slope))
                os << " [" << r.growth_interval_withheld << "]";
            if (const std::string why = fit_undefined_reason(cfg, r, q); !why.empty()) os << " (" << why << ")";
            if (f->points > 0) os << "; fit R² " << f->r_squared << ", " << f->points << " points";
            if (r.growth_at_rounding_level && f == &r.growth_fit_q)
                os << "; the divergence is at rounding level there (median d_q <= " << f->max_median
                   << "): p and C mean nothing";
            os << "\n";
        }
        if (cfg.rate_fit)
            for (const auto& [name, f, lc, ac] :
                 {std::tuple<const char*, const stats::GrowthFit*, const stats::ReplicaInterval*,
                             const stats::ReplicaInterval*>{"d_q", &r.rate.q, &r.rate.slope_ci_q,
                                                            &r.rate.amplitude_ci_q},
                  {"d_v", &r.rate.v, &r.rate.slope_ci_v, &r.rate.amplitude_ci_v}}) {
                os << "  long-time rate of " << law_text(cfg, name, true, true) << ": lambda = " << f->slope;
                if (std::isfinite(lc->lo)) os << " (95% CI " << lc->lo << " to " << lc->hi << ")";
                os << ", A = " << f->amplitude;
                if (std::isfinite(ac->lo)) os << " (95% CI " << ac->lo << " to " << ac->hi << ")";
                if (!r.rate.method.empty()) os << " [" << r.rate.method << ", " << lc->groups << " replica groups]";
                else if (!r.rate.withheld.empty() && std::isfinite(f->slope)) os << " [" << r.rate.withheld << "]";
                if (f->points > 0) os << "; fit R² " << f->r_squared << ", " << f->points << " points";
                else os << "; no output time with a positive " << cfg.rate_statistic << " in the window";
                os << "\n";
            }
        os << "  onset (d_q > " << cfg.onset_threshold << "): " << onset_text(cfg, r) << "\n";
        os << "  energy balance residual (relative): " << balance_max_text(r);
        if (r.balance_flagged) os << "; WARNING: " << balance_flag_text(cfg, r);
        os << "\n";
        if (!r.nonfinite_warning.empty()) os << "  WARNING: " << r.nonfinite_warning << "\n";
    }
    if (!r.exact_quantiles && r.outside_range() > 0)
        os << "  warning: " << r.outside_range() << " values lie more than " << r.histogram_window_decades
           << " decades below the largest magnitude of their series and sign, under the histogram's resolved window: "
           << "quantiles among them are interpolated towards 0, not within the stated resolution (stats.csv "
           << "outside_range; raise run.exact_memory_mb for exact quantiles)\n";
    os << "  quantiles: " << (r.exact_quantiles ? "exact" : "log histogram") << "; outputs in " << cfg.run.out << "/ (";
    const std::vector<std::string> names = run_output_names(cfg);
    for (std::size_t i = 0; i < names.size(); ++i) os << (i ? ", " : "") << names[i];
    os << ")\n";
    if (!r.low_population.empty() || r.diverged) os << "  population: " << population_text(cfg, r, false) << "\n";
    // NOTE: last, so that it is the line a user sees when most members failed (the exit code stays 0: the
    // statistics of the rest are complete and stated as such)
    if (!r.failure_warning.empty()) os << "  warning: " << r.failure_warning << "\n";
}

/** @brief Everything a run needs before it starts (config, checks, options), or a UsageError. */
void prepare_run(const RunCliOptions& o, const CLI::App& cmd, RunConfig& cfg, EnsembleOptions& eo) {
    refuse_empty_values(cmd);
    // NOTE: each option sets its config key as typed (not parsed as TOML), so errors name the option and --out
    // takes any path; the config's checks apply to it as to the file.
    std::vector<OptionOverride> options;
    auto option = [&](const std::string& value, const char* name, const char* key, bool is_string) {
        if (cmd.count(name) > 0) options.push_back({name, key, value, is_string});
    };
    option(o.trajectories, "--trajectories", "run.trajectories", false);
    option(o.seed, "--seed", "run.seed", false);
    option(o.backend, "--backend", "run.backend", true);
    option(o.threads, "--threads", "run.threads", false);
    option(o.out, "--out", "run.out", true);
    option(o.chunk, "--chunk", "run.chunk", false);
    option(o.save_trajectories, "--save-trajectories", "run.save_trajectories", false);
    std::vector<std::string> sets = o.sets;
    if (o.save_samples) sets.push_back("run.save_samples=true");
    if (o.save_members) sets.push_back("run.save_members=true");
    modelfile::quiet_compiles(o.quiet);
    try {
        cfg = load_config(o.config, sets, model_registry(), options);
    } catch (const ConfigError& e) {
        throw UsageError(e.what());
    }
    // NOTE: every path the run writes is checked before any work (the model's compile included), so that a run
    // never ends at its commit, and never writes over what it reads.
    std::vector<std::string> inputs = {o.config};
    if (const std::string m = model_file_of(cfg); !m.empty()) inputs.push_back(m);
    // NOTE: a folder that cannot be created is an I/O failure (exit 1), as the claim's would be; an input in the way
    // is a bad command line (exit 2)
    if (const std::string p = output_folder_problem(cfg.run.out, "run.out"); !p.empty()) throw std::runtime_error(p);
    if (const std::string p = output_folder_input_problem(cfg.run.out, "run.out", inputs); !p.empty())
        throw UsageError(p);
    if (!o.summary_md.empty())
        if (const std::string p = side_file_problem(o.summary_md, inputs, {cfg.run.out}); !p.empty())
            throw UsageError("--summary-md: " + p);
    // NOTE: a model file is compiled (or loaded from the cache) here, before the run's clock starts: its compile time
    // is reported on its own (stderr, summary.json model_file), not inside the run's trajectories per second.
    if (modelfile::find_registered(cfg.model.name)) {
        // NOTE: a run integrates with one precision, method and equations: its model compiles only those
        find_run_model_ops(cfg.model.name, cfg.integrator.precision, cfg.integrator.method, cfg.integrator.equations);
        // NOTE: an interpreted model (no C++ compiler) integrates the reference equations whatever the config says;
        // the summary says what ran
        if (modelfile::is_interpreted(cfg.model.name)) cfg.integrator.equations = EquationsKind::ad;
    }
    // NOTE: so are the CUDA kernels a run compiles at run time (a model file's, or a built-in model's)
    if (runs_on_device(cfg))
        modelfile::prepare_cuda_kernels(cfg.model.name, modelfile::CudaKernels::ensemble, cfg.integrator.precision,
                                        cfg.integrator.method);
    // NOTE: under `ulimit -v` or `-d` the limit may be the smaller: refused here with the advice that helps rather
    // than failing an allocation later
    const double machine = physical_memory_bytes(), limit = process_limit_bytes();
    if (const std::optional<SettingProblem> e =
            check_memory(cfg, std::min(machine, limit), runs_on_device(cfg),
                         limit < machine ? "this process may use (ulimit -v or -d)" : "of memory of this machine"))
        throw UsageError(e->key + ": " + e->expected);
    // NOTE: under `ulimit -v` the address space runs out before the memory: every thread reserves a stack and an
    // allocator arena however little it uses, and libgomp ends the process with "Thread creation failed" after the
    // run has begun. Refused here with the thread count that fits.
    {
        const int cores = std::max(1, omp_get_num_procs());
        const int threads = cfg.run.threads > 0 ? std::min(cfg.run.threads, cores) : cores;
        if (const std::optional<std::string> p = address_space_problem(
                threads, estimate_memory(cfg, runs_on_device(cfg)).total() - MemoryEstimate{}.program, mapped_bytes(),
                thread_reservation_bytes(), limit))
            throw UsageError("run.threads: " + *p);
    }
    if (cfg.sweep) check_sweep_energy(cfg, o.config);
    eo.quiet = o.quiet;
    if (!o.shard.empty()) {
        std::tie(eo.shard_index, eo.shard_count) = parse_shard(o.shard);
        eo.sharded = true;
    }
    if (!o.progress_every.empty()) eo.progress_seconds = parse_seconds(o.progress_every, "--progress-every", 0.1);
    if (!o.checkpoint_every.empty())
        eo.checkpoint_seconds = parse_seconds(o.checkpoint_every, "--checkpoint-every", 0.0);
    eo.resume = o.resume;
    eo.config_text = read_config_text(o.config);
    eo.sets = sets;
    eo.options = options;
    eo.command_line = run_command_line();
}

} // namespace

/** @brief This process's command line as typed (from /proc), for "resume with: …". */
std::string run_command_line() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), out;
    std::size_t at = 0;
    while (at < all.size()) {
        const std::size_t end = all.find('\0', at);
        std::string arg = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? all.size() : end + 1;
        const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                 "0123456789-_./=:,+@%") == std::string::npos;
        if (!out.empty()) out += ' ';
        if (plain) {
            out += arg;
        } else {
            out += '\'';
            for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
            out += '\'';
        }
    }
    return out.empty() ? "nhvk run CONFIG" : out;
}

void add_run_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<RunCliOptions>();
    auto* cmd = app.add_subcommand("run", "Run an ensemble from a TOML config; statistics into --out");
    cmd->add_option("config", o->config, "the TOML config (see configs/ and the README)")->required();
    cmd->add_option("--trajectories", o->trajectories, "number of trajectories (run.trajectories)");
    cmd->add_option("--seed", o->seed, "random seed (run.seed)");
    cmd->add_option("--backend", o->backend, "cpu | cuda | auto (run.backend)");
    cmd->add_option("--threads", o->threads, "CPU threads, 0 = all cores (run.threads)");
    cmd->add_option("--out", o->out, "output folder (run.out)");
    cmd->add_option("--chunk", o->chunk, "trajectories per chunk (run.chunk)");
    cmd->add_option("--save-trajectories", o->save_trajectories, "write the first M trajectories in full");
    cmd->add_flag("--save-samples", o->save_samples, "write samples.csv: initial state, status, final divergence");
    cmd->add_flag("--save-members", o->save_members,
                  "write members.nc: every member's metrics at every output time, initial state and status");
    // NOTE: one value per use (a vector option takes every following word by default): `--set k=v CONFIG` leaves
    // CONFIG to the positional argument
    cmd->add_option("--set", o->sets, "override any config key: dotted.key=value (TOML value), repeatable")
        ->allow_extra_args(false);
    cmd->add_flag("-q,--quiet", o->quiet, "no progress line and no summary on stderr");
    cmd->add_option("--shard", o->shard,
                    "run part i of N (0 <= i < N) and write partial.nhvk for `nhvk merge` (e.g. a job-array task)");
    cmd->add_flag("--resume", o->resume,
                  "go on from the output folder's resume record (after Ctrl-C, kill or a lost node); starts over "
                  "when there is none");
    cmd->add_option("--progress-every", o->progress_every,
                    "seconds between progress lines when stderr is not a terminal (default 5)");
    cmd->add_option("--summary-md", o->summary_md,
                    "also write the Markdown summary (summary.md) to this file, e.g. for a lab notebook");
    cmd->add_option("--checkpoint-every", o->checkpoint_every,
                    "seconds between resume records (default 60; 0: after every chunk)");
    cmd->callback([o, cmd, &exit_code]() {
        // NOTE: first, while this is the only thread: the threads started later inherit the blocked signals.
        clean_up_outputs_on_signals();
        RunConfig cfg;
        EnsembleOptions eo;
        // NOTE: under MPI a rank that finds a problem here still takes part in the ranks' check below, with its
        // problem in place of its run: every rank then ends with the usage code, none waiting for the others.
        std::string problem;
        std::exception_ptr failure;
        int problem_code = exit_usage;
        try {
            prepare_run(*o, *cmd, cfg, eo);
        } catch (const std::exception& e) {
            failure = std::current_exception();
            problem = e.what();
            if (!dynamic_cast<const UsageError*>(&e)) problem_code = exit_runtime;
        }
        Comm& comm = Comm::world();
        if (comm.parallel()) {
            // Every rank's run, compared on rank 0 as `nhvk merge` compares its parts, before any work.
            RankFields mine;
            if (!problem.empty()) {
                mine.push_back({"error", problem, ""});
            } else {
                const RunIdentity id = run_identity(cfg);
                // NOTE: the config hash covers the seed and the count too: they come first, to be named when they
                // are the difference.
                mine = {{"run.trajectories", std::to_string(id.trajectories), ""},
                        {"run.seed", std::to_string(id.seed), ""},
                        {"--shard", std::to_string(eo.shard_index) + "/" + std::to_string(eo.shard_count), ""},
                        {"run.out", "'" + cfg.run.out + "'", ""},
                        {"--resume", eo.resume ? "given" : "not given", ""},
                        // NOTE: before the config hash, which covers it: a model file that differs between the
                        // ranks' nodes is named as such
                        {"model", id.model_hash ? "text hash " + hash_text(id.model_hash) : "built-in",
                         model_file_of(cfg).empty() ? "" : " (model file '" + clip(model_file_of(cfg)) + "')"},
                        {"resolved config hash", hash_text(id.config_hash), " (from '" + clip(cfg.source_path) + "')"}};
            }
            const std::string verdict = comm.agree(mine);
            comm.started();
            if (!verdict.empty()) {
                // NOTE: rank 0 says why; every rank ends with the code, MPI finalised at exit.
                if (comm.rank() == 0) std::cerr << "nhvk: error: " << verdict << "\n";
                exit_code = problem.empty() ? exit_usage : problem_code;
                return;
            }
            // NOTE: every rank finds the same problem; each says so and the job ends with the usage code, before any
            // work (a thrown error would end one rank and leave the others waiting).
            const std::string p = parallel_run_problem(cfg);
            if (!p.empty()) {
                if (comm.rank() == 0) std::cerr << "nhvk: error: " << p << "\n";
                exit_code = exit_usage;
                return;
            }
        } else if (failure) {
            std::rethrow_exception(failure);
        }
        try {
            const EnsembleResult r = run_ensemble(cfg, eo);
            if (comm.rank() != 0) return;
            if (!o->quiet) print_summary(cfg, r);
            if (!o->summary_md.empty()) write_file_atomic(o->summary_md, summary_markdown(cfg, r));
            // NOTE: an empty shard (more shards than trajectories) has nothing to fail: it succeeds with an empty part.
            // NOTE: a member stopped at divergence.stop_at is an answer (it diverged), not a failure
            const bool none_valid = r.valid == 0 && r.diverged == 0 && r.requested > 0;
            exit_code = none_valid ? exit_no_valid : exit_ok;
            if (none_valid) std::cerr << "nhvk: error: no valid trajectory (see summary.json trajectories.failed)\n";
        } catch (const RootFailed&) {
            // NOTE: the rank that failed says why and ends with its exit code, which mpiexec returns; this one ends
            // without a word.
            exit_code = exit_ok;
        } catch (const ResumeRefused& e) {
            // NOTE: every rank knows of the refusal (EnsembleRun), so each ends on its own: no MPI_Abort
            if (comm.parallel()) {
                std::cerr << "nhvk: error: rank " << comm.rank() << ": " << e.what() << "\n";
                exit_code = exit_usage;
                return;
            }
            throw UsageError(e.what());
        } catch (const Interrupted& e) {
            if (comm.rank() == 0) std::cerr << "nhvk: " << e.what() << "\n";
            exit_code = 128 + e.signal;
        } catch (const std::exception& e) {
            if (!comm.parallel()) throw;
            // NOTE: the other ranks would wait for this one forever: end the whole job.
            std::cerr << "nhvk: error: rank " << comm.rank() << ": " << e.what() << "\n";
            comm.abort(dynamic_cast<const FolderBusy*>(&e) ? exit_folder_busy : exit_runtime);
        }
    });
}

} // namespace nhvk
