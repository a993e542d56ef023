// SPDX-License-Identifier: MIT
/** @file
 *  @brief Loading and validating `nhvk run` configurations (TOML), with `--set` overrides.
 *
 *  The schema, every key with its default (the README copies this block):
 *  @code{.toml}
 *  [model]
 *  name = "nh_particle"            # required; one of the registry's model names
 *  [model.params]                  # optional; keys are parameters of the model; missing ones take the model default
 *  m = 1.0                         #   a number in the parameter's range (`nhvk models`; an is_bool parameter takes
 *                                  #   true/false, or 0/1),
 *  g = { dist = "uniform", low = 9.0, high = 10.0 }  # or a distribution: a sweep, drawn per trajectory
 *
 *  [initial]
 *  t0 = 0.0                        # default 0
 *  energy = 1.0                    # optional energy shell E0 (any finite number); absent: no rescaling
 *  [initial.q]                     # per coordinate, by coordinate name; missing coordinates: fixed 0
 *  x = { dist = "uniform", low = -1.0, high = 1.0 }
 *  y = { dist = "normal", mean = 0.0, std = 0.5 }
 *  z = 0.25                        # a bare number = fixed; so is { dist = "fixed", value = 0.25 }
 *  [initial.v]                     # trial velocity (projected onto the constraints later); same form as initial.q
 *  [initial.mu]                    # vakonomic multiplier μ0, default fixed 0; either one distribution for all k
 *  dist = "normal"                 #   components, written as the keys of this table (or a bare number),
 *  mean = 0.0                      #   or, instead of this table, `mu = [ {dist = ...}, 0.0, ... ]` under [initial]:
 *  std = 0.1                       #   an array of exactly k entries, one per constraint
 *
 *  [integrator]
 *  method = "dopri5"               # "dopri5" | "rk4" | "tsit5" | "dop853" | "rodas5p" | "midpoint"; default "dopri5"
 *  rtol = 1e-10                    # adaptive: >= 2e-15 (double) or 1e-6 (float), what the precision reaches;
 *                                  #   default 1e-10 (1e-6 with precision = "float"); any number > 0 with a fixed step
 *  atol = 1e-12                    # > 0 (0 would let the error scale vanish); default 1e-12 (1e-8 with
 *                                  #   precision = "float"; used by the adaptive methods)
 *  dt = 1e-3                       # fixed step (rk4, midpoint): the step, > 0, default 1e-3, and the steps to
 *                                  #   t_end must fit max_steps; adaptive: initial step, 0 = automatic (default 0)
 *  min_step = 1e-14                # >= 0; default 1e-14
 *  max_steps = 130000              # >= 1; default 100000 + 1000 per output time (per trajectory, per dynamics)
 *  project = false                 # project v back onto phi = 0 after each step; default false
 *  precision = "double"            # "double" | "float"; default "double"
 *  equations = "generated"         # "generated" | "ad" (dual-number reference, CPU only); default "generated"
 *
 *  [times]
 *  t_end = 5.0                     # required, > t0
 *  spacing = "log"                 # "linear" | "log" | "list"; default "linear"
 *  count = 40                      # linear (>= 1) and log (>= 2), <= 10^6: number of output times; default 50
 *  t_first = 5e-3                  # log only: first output time, t0 < t_first < t_end; default t0 + (t_end - t0)·1e-3
 *  list = [0.1, 0.2, 5.0]          # list only: strictly increasing, first > t0, last == t_end
 *
 *  [divergence]
 *  coordinates = ["x", "y", "z"]   # coordinates entering |q_NH - q_VK|; default: all, except that a model with
 *                                  #   both angles and lengths leaves its angles out; no repeats
 *  weights = { theta = 0.5 }       # a factor per listed coordinate (> 0), e.g. a radius to turn an angle into an
 *                                  #   arc length; default 1
 *  metric = "euclidean"            # "euclidean" (sum of squares) | "kinetic" (Δᵀ W(q_NH) Δ, W the kinetic
 *                                  #   metric of L); default "euclidean"
 *  onset_threshold = 1e-3          # > 0; default 1e-3
 *  stop_at = 1.0                   # optional, > onset_threshold: a member whose d_q passes it at an output time
 *                                  #   before the last stops there (status "diverged", not a failure)
 *  growth_t_max = 0.25             # > t0: the early window (t0, growth_t_max] for the growth exponent; default:
 *                                  #   the later of t0 + (t_end - t0)·0.05 and the 4th output time (the last
 *                                  #   one if there are fewer), so the fit sees at least 4 points
 *
 *  [divergence.fit]                # the growth law d ≈ C·(t − t0)^p of d_q and d_v; every key optional
 *  statistic = "median"            # fit_statistics(): "median" (jackknife intervals), "mean" (jackknife),
 *                                  #   "p05" … "p95" (batch means); default "median"
 *  window = [0.0, 0.25]            # [t_min, t_max], t0 <= t_min < t_max: fit over t_min < t <= t_max; instead of
 *                                  #   growth_t_max (both only where they agree); default [t0, growth_t_max]
 *  exponent = 2.0                  # d_q's exponent, fixed: only C is fitted; default: p is fitted
 *  exponent_v = 1.0                # d_v's, fixed; default exponent − 1 (Δv is Δq's derivative), or fitted
 *
 *  [divergence.rate]               # the long-time rate d ≈ A·e^{λ(t − t0)}; off unless given
 *  window = [1.0, 3.0]             # required, [t_min, t_max] with t0 <= t_min < t_max
 *  statistic = "median"            # as for [divergence.fit]
 *
 *  [statistics]
 *  population = "alive"            # "alive": per-time statistics over the members alive at each time (a member
 *                                  #   that fails counts at the times it reached) | "survivors": only members
 *                                  #   that reached t_end; default "alive"
 *  low_population_fraction = 0.5   # 0 … 1: flag the output times whose statistics cover fewer than this fraction
 *                                  #   of the members integrated (0: never); default 0.5
 *  replicas = 10                   # 0 | 2 … 1000: replica groups (member index mod R) of d_q and d_v, whose
 *                                  #   spread gives the intervals of std, growth exponent and amplitude; default 10
 *
 *  [diagnostics]
 *  balance_tolerance = 1e-6        # > 0: flag the run when the energy balance residual (relative to the energy
 *                                  #   scale) exceeds it at any output time; default 1e-6
 *
 *  [run]
 *  trajectories = 10000            # >= 1; default 1000
 *  seed = 1                        # >= 0 (an integer TOML can hold: < 2^63); default 1
 *  backend = "auto"                # "cpu" | "cuda" | "auto"; default "auto"
 *  chunk = 65536                   # trajectories per chunk, >= 1; default 65536
 *  threads = 0                     # CPU threads, 0 … 65536, 0 = all cores; more than the cores are lowered to them
 *                                  #   (with a note on stderr); default 0
 *  out = "nhvk_out"                # output folder, non-empty; default "nhvk_out"
 *  exact_memory_mb = 1024          # 0 … 2^40: exact quantiles while all values fit, else log histogram; default 1024
 *  save_trajectories = 0           # >= 0: write the first M trajectories in full (M is capped at trajectories)
 *  save_samples = false            # per-trajectory initial state, status, final divergence; default false
 *  save_members = false            # members.nc: every member's metrics at every output time; default false
 *  member_metrics = ["d_q", "d_v"] # the metrics members.nc holds (stats.csv's names); default d_q and d_v
 *  members_deflate = 0             # 0 … 9: members.nc's deflate level (with shuffle); default 0 (not compressed)
 *  @endcode
 *
 *  Distributions: `{ dist = "fixed", value = x }`, `{ dist = "uniform", low = a, high = b }` (a < b),
 *  `{ dist = "normal", mean = m, std = s }` (s >= 0), or a bare number (fixed). All numbers must be finite;
 *  an integer is accepted where a float is expected, and a float with an integral value where an integer is.
 *
 *  Output times: linear t_i = t0 + (t_end − t0)·i/count, i = 1…count (t0 itself is not an output time);
 *  log t_i = t0 + τ_first·(τ_end/τ_first)^(i/(count−1)), i = 0…count−1, with τ = t − t0, i.e. geometric in the
 *  elapsed time from t_first to t_end (for t0 = 0: geometric from t_first to t_end); list: as given.
 *  The last output time is t_end exactly in every spacing.
 *
 *  Strictness: a key the schema does not know is an error that lists the allowed keys, and so is a key that
 *  belongs to another spacing (`list` unless spacing = "list", `t_first` unless "log", `count` with "list"),
 *  since it would silently do nothing. rtol/atol are accepted with rk4 (and validated), so that
 *  `--set integrator.method="rk4"` works on any config.
 */
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <nhvk/distribution.hpp>
#include <nhvk/metrics.hpp>
#include <nhvk/numerics.hpp> // Method, Precision: the core's own enums, so a config maps onto a run directly

#include "model_info.hpp"

namespace nhvk {

/** @brief The statistics a fit can be made of ([divergence.fit], [divergence.rate] `statistic`). */
const std::vector<std::string>& fit_statistics();

/** @brief Process exit status for a configuration error: the CLI catches `ConfigError` and exits with it. */
inline constexpr int config_error_exit_code = 2;

/** @brief A bad configuration: syntax, unknown key, wrong type or out-of-range value.
 *
 *  `what()` is one line, ready to print: `FILE:LINE:COL: dotted.key: expected …, got …` (location of the
 *  offending value or key), `FILE: dotted.key: …` where there is no position (a missing required key in a table
 *  written nowhere), or `--set KEY=VALUE: dotted.key: …` for a value that came from an override.
 *  The CLI maps it to exit code 2 (`config_error_exit_code`).
 */
class ConfigError : public std::runtime_error {
public:
    ConfigError(const std::string& message, std::string key = {}, int line = 0, int column = 0)
        : std::runtime_error(message), key_(std::move(key)), line_(line), column_(column) {}
    /** @brief Dotted key of the offending entry, e.g. "initial.q.x.std"; empty for syntax or file errors. */
    const std::string& key() const noexcept { return key_; }
    /** @brief 1-based line in the file, 0 when unknown or when the value came from `--set`. */
    int line() const noexcept { return line_; }
    /** @brief 1-based column in the file, 0 when unknown. */
    int column() const noexcept { return column_; }

private:
    std::string key_;
    int line_ = 0;
    int column_ = 0;
};

/** @brief `times.spacing`. */
enum class Spacing { linear, log, list };
/** @brief `run.backend`. */
enum class Backend { cpu, cuda, automatic };

// NOTE: inline, as the combination's name below: a model file's compiled object (host/model_ops_impl.hpp) spells them
// too, and calls nothing of the nhvk binary.
/** @brief The spelling in configs of `integrator.method` (core enum `nhvk::Method`): its `method_table` name. */
inline const char* to_string(Method m) { return method_info(m).name; }
/** @brief Every method, in `method_table`'s order. */
inline std::vector<Method> all_methods() {
    std::vector<Method> v;
    for (const MethodInfo& m : method_table) v.push_back(m.id);
    return v;
}
/** @brief The method named `name` (a `method_table` name), or nullptr. */
inline const MethodInfo* find_method(std::string_view name) {
    for (const MethodInfo& m : method_table)
        if (name == m.name) return &m;
    return nullptr;
}
/** @brief The method names as a message lists them: "dopri5 or rk4" (`sep` between all but the last two). */
inline std::string method_names(const char* sep = ", ", const char* last = " or ") {
    std::string s;
    for (int i = 0; i < method_count; ++i)
        s += (i == 0 ? "" : i + 1 == method_count ? last : sep) + std::string(method_table[i].name);
    return s;
}
/** @brief `integrator.precision` (core enum `nhvk::Precision`): "double", "float". */
inline const char* to_string(Precision p) { return p == Precision::f32 ? "float" : "double"; }
/** @brief `integrator.equations` (core enum `nhvk::EquationsKind`): "generated", "ad". */
inline const char* to_string(EquationsKind e) { return e == EquationsKind::ad ? "ad" : "generated"; }
/** @brief "double, dopri5, generated": what a model file was compiled for (summary.json `model_file.compiled_for`). */
inline std::string combination_name(Precision p, Method m, EquationsKind e) {
    return std::string(to_string(p)) + ", " + to_string(m) + ", " + to_string(e);
}
/** @brief "linear", "log", "list". */
const char* to_string(Spacing s);
/** @brief "cpu", "cuda", "auto". */
const char* to_string(Backend b);

/** @brief `[integrator]`, defaults filled. */
struct IntegratorSettings {
    Method method = Method::dopri5;
    double rtol = StepDefaults::rtol; ///< default_rtol(precision) after parsing
    double atol = StepDefaults::atol; ///< default_atol(precision) after parsing
    /// a fixed-step method (rk4): the step (> 0, default StepDefaults::rk4_dt); an adaptive one: the first step, 0 =
    /// automatic
    double dt = 0.0;
    double min_step = StepDefaults::min_step;
    std::int64_t max_steps = 0; ///< after parsing: the key's value or default_max_steps(output times)
    bool project = false;
    Precision precision = Precision::f64;
    EquationsKind equations = EquationsKind::generated;
};

/** @brief `[times]` as configured; the resolved output times are `RunConfig::times`. */
struct TimeGrid {
    double t_end = 0.0;
    Spacing spacing = Spacing::linear;
    int count = 50;       ///< number of output times (for `list`: the length of the list)
    double t_first = 0.0; ///< log: first output time; otherwise the first resolved output time
};

/** @brief `[run]`, defaults filled. */
struct RunSettings {
    std::int64_t trajectories = 1000;
    std::uint64_t seed = 1;
    Backend backend = Backend::automatic;
    std::int64_t chunk = 65536;
    int threads = 0; ///< 0 = all cores
    std::string out = "nhvk_out";
    std::int64_t exact_memory_mb = 1024;
    std::int64_t save_trajectories = 0; ///< already capped at `trajectories`
    bool save_samples = false;
    bool save_members = false;                                ///< members.nc (pipeline/members_output.hpp)
    std::vector<int> member_metrics = {metric_dq, metric_dv}; ///< the Metric series members.nc holds, in this order
    int members_deflate = 0;                                  ///< members.nc's deflate level (0: not compressed)
};

struct Sweep; // below

/** @brief A fully resolved run configuration: every default filled, names resolved to indices of `model`. */
struct RunConfig {
    std::string source_path; ///< the file (or source name) it was read from

    ModelInfo model;                       ///< the registry entry named by model.name
    std::vector<double> params;            ///< size model.params.size(): fixed value, or the default if absent;
                                           ///<   for a swept parameter its distribution's mean/centre
    std::vector<Distribution> param_dists; ///< same size: make_fixed(params[i]) unless swept

    double t0 = 0.0;
    std::optional<double> energy;  ///< energy shell E0, if any
    std::vector<Distribution> q0;  ///< size model.n, ModelInfo coordinate order
    std::vector<Distribution> v0;  ///< size model.n
    std::vector<Distribution> mu0; ///< size model.k

    IntegratorSettings integrator;

    TimeGrid time_grid;
    std::vector<double> times; ///< output times, strictly increasing, all > t0, last == t_end

    std::vector<int> divergence_coords;     ///< coordinate indices, in the configured order, no repeats
    std::vector<double> divergence_weights; ///< size model.n: each coordinate's factor (1 unless configured)
    bool divergence_kinetic = false;        ///< metric = "kinetic": Δᵀ W(q_NH) Δ instead of the sum of squares
    double onset_threshold = 1e-3;
    double stop_at = std::numeric_limits<double>::infinity(); ///< divergence.stop_at (inf: never stop a member)
    double growth_t_max = 0.0;                                ///< resolved (default filled)
    /// [divergence.fit]: the growth law's window (growth_t_min, growth_t_max] (default t0), the statistic fitted
    /// (fit_statistics(): "median" by default) and a fixed exponent (NaN: fitted)
    double growth_t_min = 0.0;
    std::string growth_statistic = "median";
    double growth_exponent = std::numeric_limits<double>::quiet_NaN();
    /// divergence.fit.exponent_v: d_v's fixed exponent (NaN: fitted); exponent − 1 where only exponent is given
    double growth_exponent_v = std::numeric_limits<double>::quiet_NaN();
    /// [divergence.rate]: d ≈ A·e^{λ(t − t0)} fitted to rate_statistic over (rate_t_min, rate_t_max]; off by default
    bool rate_fit = false;
    double rate_t_min = 0.0, rate_t_max = 0.0;
    std::string rate_statistic = "median";
    bool alive_population = true;         ///< statistics.population = "alive" (else "survivors")
    double low_population_fraction = 0.5; ///< statistics.low_population_fraction: the population flag's level
    int replicas = 10;                    ///< statistics.replicas: replica groups of d_q and d_v (0: none)
    double balance_tolerance = 1e-6;      ///< diagnostics.balance_tolerance: the flag's level

    RunSettings run;

    /** @brief `[sweep]`: the points and each point's own configuration; null without a sweep. Shared, so that a
     *  copy of the configuration is cheap. */
    std::shared_ptr<const Sweep> sweep;
    /** @brief Points of the sweep (1 without one). */
    std::size_t points() const;
    /** @brief Members of the whole job: run.trajectories per point, over every point. */
    std::uint64_t members() const { return static_cast<std::uint64_t>(run.trajectories) * points(); }

    /** @brief The whole resolved configuration in the layout of the TOML (every key, defaults filled), for
     *  summary.json. Fixed distributions are bare numbers (booleans for is_bool parameters), others tables;
     *  initial.mu is always an array of k entries; absent energy is null; times carries only the keys valid for
     *  its spacing. Converted back to TOML (dropping nulls) it loads to the same configuration. */
    nlohmann::json resolved_json() const;
};

/** @brief One axis of a `[sweep]`: a config key and the values it takes. */
struct SweepAxis {
    std::string key;  ///< the dotted config key it sets, e.g. "model.params.Omega" or "initial.mu.std"
    std::string name; ///< its column in sweep.csv and its label in plots (the parameter's name, or the key)
    std::string kind; ///< "list", "range" or "sample" (a random design's coordinate)
    bool log = false; ///< a logarithmic range (plots use log axes)
    double low = std::numeric_limits<double>::quiet_NaN(), high = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> values; ///< the axis' own values (list or range; a random design has none)
};

/** @brief A `[sweep]`: its axes, how they combine into points, every point's values and configuration. Point p's
 *         members are the job's trajectory indices [p·N, (p+1)·N), N = run.trajectories, and member i of it is drawn
 *         as member i of a run of point p's configuration alone (`nhvk run` with the point's `--set`s). */
struct Sweep {
    std::string combine; ///< "product", "zip", "sobol" or "latin_hypercube"
    std::vector<SweepAxis> axes;
    std::vector<std::vector<double>> values; ///< values[p][a]: axis a's value at point p
    std::vector<RunConfig> configs;          ///< configs[p]: the base configuration with point p's values set
    /** @brief Point p's values as `--set` arguments ("model.params.Omega=0.25", one per axis): the command line
     *  of a run of that point alone. */
    std::vector<std::string> sets(std::size_t p) const;
    /** @brief "Omega = 0.25, alpha = 0.1": point p's values for messages. */
    std::string label(std::size_t p) const;
    /** @brief A random design ("sobol", "latin_hypercube"): its points are drawn in the axes' ranges. */
    bool random_design() const { return combine == "sobol" || combine == "latin_hypercube"; }
};

/** @brief Largest number of points of a sweep. */
inline constexpr std::size_t max_sweep_points = 100000;

/** @brief Largest config file `load_config` reads (16 MiB): a run configuration is a few kB, the longest one (a
 *  `times.list` of the most output times) about 10 MB. */
inline constexpr std::int64_t max_config_bytes = 16 * 1024 * 1024;

/** @brief A command-line option that sets one config key (`nhvk run --out DIR` sets run.out). Unlike `--set`, the
 *  value is not TOML: a string key takes the text exactly as typed (any path), a numeric key the number the text
 *  spells; errors about it name the option (`--seed: run.seed: expected an integer >= 0, got -1`), and an empty
 *  value is an error. Applied after the `--set` overrides. */
struct OptionOverride {
    std::string option; ///< as the user typed it, e.g. "--out"
    std::string key;    ///< dotted config key, e.g. "run.out"
    std::string value;  ///< the text after the option
    bool is_string = false;
};

/** @brief Reads the file at `path` (at most `max_config_bytes`), applies `set_overrides` (`dotted.key=value`, value
 *  in TOML syntax) and then `options`, and validates against `registry`.
 *  @throws ConfigError on any error, including `cannot open config 'PATH': <reason>`. */
RunConfig load_config(const std::string& path, const std::vector<std::string>& set_overrides,
                      const std::vector<ModelInfo>& registry, const std::vector<OptionOverride>& options = {});

/** @brief The text of the config file at `path` (at most `max_config_bytes`); throws ConfigError. */
std::string read_config_text(const std::string& path);

/** @brief As `load_config`, from text; `source_name` is used in messages and as `source_path`. */
RunConfig parse_config(std::string_view toml_text, const std::string& source_name,
                       const std::vector<std::string>& set_overrides, const std::vector<ModelInfo>& registry,
                       const std::vector<OptionOverride>& options = {});

} // namespace nhvk
