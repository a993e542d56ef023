// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk run CONFIG`: the ensemble job.
 */
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>

#include "checks.hpp"
#include "cli_common.hpp"
#include "config.hpp"
#include "ensemble.hpp"
#include "pipeline/output_folder.hpp"
#include "registry.hpp"

namespace nhvk {

namespace {

struct RunCliOptions {
    std::string config;
    std::vector<std::string> sets;
    std::string trajectories, seed, backend, threads, out, chunk, save_trajectories;
    bool save_samples = false;
    bool quiet = false;
};

void print_summary(const RunConfig& cfg, const EnsembleResult& r) {
    std::ostream& os = std::cerr;
    const int nt = static_cast<int>(r.times.size());
    os << "nhvk run: model " << cfg.model.name << ", " << r.requested << " trajectories on " << r.backend << " ("
       << r.threads << " threads), " << std::setprecision(3) << r.seconds << " s ("
       << std::setprecision(4) << (r.seconds > 0 ? r.requested / r.seconds : 0.0) << " traj/s)\n";
    os << "  valid " << r.valid << ", failed " << r.failed();
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
    if (nt > 0 && r.valid > 0) {
        const stats::SeriesSummary& last = r.at(metric_dq, nt - 1);
        os << std::setprecision(4) << "  d_q at t = " << r.times.back() << ": median " << last.p50 << ", p95 "
           << last.p95 << ", max " << last.max << "\n";
        os << "  growth exponent of median d_q (t <= " << cfg.growth_t_max << "): " << r.growth_q << "\n";
        os << "  onset (d_q > " << cfg.onset_threshold << "): median t = " << r.onset.quantile(0.5, r.times, true)
           << ", never " << r.onset.never << "\n";
    }
    if (!r.exact_quantiles && r.outside_range() > 0)
        os << "  warning: " << r.outside_range() << " values lie outside the histogram range [" << r.histogram_lo
           << ", " << r.histogram_hi << "): quantiles among them are clamped to min/max, not within the stated "
           << "resolution (stats.csv outside_range; raise run.exact_memory_mb for exact quantiles)\n";
    os << "  quantiles: " << (r.exact_quantiles ? "exact" : "log histogram") << "; outputs in " << cfg.run.out
       << "/ (summary.json, stats.csv" << (cfg.run.save_samples ? ", samples.csv" : "")
       << (cfg.run.save_trajectories > 0 ? ", trajectories/" : "") << ")\n";
}

} // namespace

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
    cmd->add_option("--set", o->sets, "override any config key: dotted.key=value (TOML value), repeatable");
    cmd->add_flag("-q,--quiet", o->quiet, "no progress line and no summary on stderr");
    cmd->callback([o, cmd, &exit_code]() {
        // NOTE: first, while this is the only thread: the threads started later inherit the blocked signals.
        clean_up_outputs_on_signals();
        refuse_empty_values(*cmd);
        // NOTE: each option sets its config key as typed (not parsed as TOML), so errors name the option and --out
        // takes any path; the config's checks apply to it as to the file.
        std::vector<OptionOverride> options;
        auto option = [&](const std::string& value, const char* name, const char* key, bool is_string) {
            if (cmd->count(name) > 0) options.push_back({name, key, value, is_string});
        };
        option(o->trajectories, "--trajectories", "run.trajectories", false);
        option(o->seed, "--seed", "run.seed", false);
        option(o->backend, "--backend", "run.backend", true);
        option(o->threads, "--threads", "run.threads", false);
        option(o->out, "--out", "run.out", true);
        option(o->chunk, "--chunk", "run.chunk", false);
        option(o->save_trajectories, "--save-trajectories", "run.save_trajectories", false);
        std::vector<std::string> sets = o->sets;
        if (o->save_samples) sets.push_back("run.save_samples=true");
        RunConfig cfg;
        try {
            cfg = load_config(o->config, sets, model_registry(), options);
        } catch (const ConfigError& e) {
            throw UsageError(e.what());
        }
        if (const std::optional<SettingProblem> e = check_memory(cfg, physical_memory_bytes()))
            throw UsageError(e->key + ": " + e->expected);
        EnsembleOptions eo;
        eo.quiet = o->quiet;
        const EnsembleResult r = run_ensemble(cfg, eo);
        if (!o->quiet) print_summary(cfg, r);
        exit_code = r.valid > 0 ? exit_ok : exit_no_valid;
        if (r.valid == 0) std::cerr << "nhvk: error: no valid trajectory (see summary.json trajectories.failed)\n";
    });
}

} // namespace nhvk
