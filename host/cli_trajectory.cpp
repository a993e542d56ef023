// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk models` and `nhvk trajectory`.
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "checks.hpp"
#include "cli_common.hpp"
#include "config.hpp"
#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "nhvk/step_budget.hpp"
#include "pipeline/output_folder.hpp"
#include "registry.hpp"

namespace nhvk {

std::vector<double> parse_number_list(const std::string& text, const std::string& what) {
    std::vector<double> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(parse_number(item, what));
    if (out.empty()) throw UsageError(what + ": expected a comma-separated list of numbers, got '" + text + "'");
    return out;
}

double parse_number(const std::string& text, const std::string& what) {
    // NOTE: strtod, not std::stod: stod throws on ERANGE, which strtod also sets for a subnormal result (4.9e-324 is
    // a finite number, the nearest double to it); an overflow gives ±inf, refused below as not finite.
    const char* begin = text.c_str();
    char* end = nullptr;
    const double x = std::strtod(begin, &end);
    std::size_t used = static_cast<std::size_t>(end - begin);
    while (used < text.size() && std::isspace(static_cast<unsigned char>(text[used]))) ++used;
    if (used == 0 || used != text.size() || !std::isfinite(x))
        throw UsageError(what + ": expected a finite number, got '" + text + "'");
    return x;
}

void refuse_empty_values(const CLI::App& cmd) {
    for (const CLI::Option* opt : cmd.get_options()) {
        if (opt->count() == 0 || opt->get_type_size() == 0) continue; // absent, or a flag
        for (const std::string& r : opt->results())
            if (r.empty()) {
                const std::vector<std::string>& longs = opt->get_lnames();
                const std::string name = longs.empty() ? opt->get_name() : "--" + longs.front();
                throw UsageError(name + ": expected a non-empty value, got ''");
            }
    }
}

void add_models_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("models", "List the built-in models: n, k, coordinates (a = angle), parameters");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "print the list as JSON (every default in full precision)");
    cmd->callback([&exit_code, json]() {
        if (*json) {
            // NOTE: for programs (the Python package): the text's defaults have 6 significant digits, these 17
            nlohmann::json list = nlohmann::json::array();
            for (const ModelInfo& m : model_registry()) {
                nlohmann::json o = {{"name", m.name},
                                    {"n", m.n},
                                    {"k", m.k},
                                    {"coordinates", m.coords},
                                    {"angles", m.angles},
                                    {"description", m.description},
                                    {"parameters", nlohmann::json::array()}};
                for (const ParamInfo& p : m.params)
                    o["parameters"].push_back(
                        {{"name", p.name},
                         {"default",
                          p.is_bool ? nlohmann::json(p.default_value != 0.0) : nlohmann::json(p.default_value)},
                         {"boolean", p.is_bool},
                         {"range", p.is_bool || p.domain == ParamDomain::any ? nlohmann::json(nullptr)
                                                                             : nlohmann::json(to_string(p.domain))}});
                list.push_back(o);
            }
            std::cout << list.dump(2) << "\n";
            exit_code = exit_ok;
            return;
        }
        for (const ModelInfo& m : model_registry()) {
            std::cout << m.name << "  n=" << m.n << " k=" << m.k << "  q=(";
            for (int j = 0; j < m.n; ++j) std::cout << (j ? ", " : "") << m.coords[j] << (m.angles[j] ? " (a)" : "");
            std::cout << ")";
            if (!m.params.empty()) {
                std::cout << "  params:";
                for (const ParamInfo& p : m.params) {
                    std::cout << " " << p.name << "=";
                    if (p.is_bool) std::cout << (p.default_value != 0.0 ? "true" : "false");
                    else std::cout << p.default_value;
                    if (!p.is_bool && p.domain != ParamDomain::any) std::cout << " (" << to_string(p.domain) << ")";
                }
            }
            std::cout << "\n    " << m.description << "\n";
        }
        exit_code = exit_ok;
    });
}

std::vector<double> resolve_params(const ModelInfo& info, const std::vector<std::string>& assignments) {
    std::vector<double> p;
    for (const ParamInfo& pi : info.params) p.push_back(pi.default_value);
    for (const std::string& a : assignments) {
        const auto eq = a.find('=');
        if (eq == std::string::npos) throw UsageError("--param " + a + ": expected name=value");
        const std::string name = a.substr(0, eq), val = a.substr(eq + 1);
        const int i = info.param_index(name);
        if (i < 0) {
            std::string valid;
            for (const ParamInfo& pi : info.params) valid += (valid.empty() ? "" : ", ") + pi.name;
            throw UsageError("--param " + a + ": model '" + info.name + "' has no parameter '" + name +
                             "' (valid: " + (valid.empty() ? "none" : valid) + ")");
        }
        if (info.params[i].is_bool) {
            if (val != "true" && val != "false" && val != "0" && val != "1")
                throw UsageError("--param " + a + ": expected true or false (a boolean parameter), got '" + val + "'");
            p[i] = (val == "true" || val == "1") ? 1.0 : 0.0;
            continue;
        }
        p[i] = parse_number(val, "--param " + name);
        if (const std::optional<std::string> e = check_param(info.params[i], p[i]))
            throw UsageError("--param " + a + ": expected " + *e + ", got " + val);
    }
    return p;
}

const ModelInfo& require_model(const std::vector<ModelInfo>& reg, const std::string& name, const std::string& what) {
    if (const ModelInfo* info = find_model(reg, name)) return *info;
    std::string names;
    for (const ModelInfo& m : reg) names += (names.empty() ? "" : ", ") + m.name;
    throw UsageError(what + ": unknown model '" + name + "' (known: " + names + ")");
}

namespace {

struct TrajectoryOptions {
    std::string model;
    std::vector<std::string> params;
    std::string q0, v0, mu0;
    double t0 = 0.0;
    double t_end = 0.0;
    std::string method = "dopri5";
    double dt = 0.0;
    bool dt_given = false;
    bool max_steps_given = false;
    double rtol = 1e-10, atol = 1e-12;
    bool rtol_given = false, atol_given = false;
    std::string times = "100";
    bool project = false;
    bool steps = false; ///< --steps: print the step counts to stderr
    double constraint_tol = 1e-10;
    std::string backend = "cpu";
    std::string precision = "double";
    std::string equations = "generated";
    long long max_steps = 0;          ///< 0: default_max_steps(output times)
    std::string coordinates;          ///< empty: default_divergence_coords (the run's default)
    std::vector<std::string> weights; ///< name=value
    std::string divergence_metric = "euclidean";
};

/** The divergence of the d_q, d_v columns from --coordinates, --weight and --divergence-metric, by the rules of the
 *  config's [divergence] (README "Config reference"), with the same default coordinates as `nhvk run`. */
void resolve_divergence(const TrajectoryOptions& o, const ModelInfo& m, TrajectoryRequest& req) {
    std::string names;
    for (const std::string& c : m.coords) names += (names.empty() ? "" : ", ") + c;
    std::vector<int> coords;
    if (o.coordinates.empty()) coords = default_divergence_coords(m);
    else {
        std::stringstream ss(o.coordinates);
        std::string name;
        while (std::getline(ss, name, ',')) {
            const int i = m.coord_index(name);
            if (i < 0)
                throw UsageError("--coordinates: unknown coordinate '" + name + "' of model '" + m.name +
                                 "'; coordinates: " + names);
            if (std::find(coords.begin(), coords.end(), i) != coords.end())
                throw UsageError("--coordinates: coordinate '" + name + "' is listed twice");
            coords.push_back(i);
        }
        if (coords.empty()) throw UsageError("--coordinates: expected coordinate names a,b of model '" + m.name + "'");
    }
    std::vector<double> weights(static_cast<std::size_t>(m.n), 1.0);
    for (const std::string& w : o.weights) {
        const std::size_t eq = w.find('=');
        const std::string name = w.substr(0, eq);
        const int i = eq == std::string::npos ? -1 : m.coord_index(name);
        if (i < 0)
            throw UsageError("--weight: expected coordinate=value with a coordinate of model '" + m.name + "' (" +
                             names + "), got '" + w + "'");
        if (std::find(coords.begin(), coords.end(), i) == coords.end())
            throw UsageError("--weight: coordinate '" + name +
                             "' is not among the divergence coordinates; list it in --coordinates to weigh it");
        const double x = parse_number(w.substr(eq + 1), "--weight " + name);
        if (!(x > 0.0 && std::isfinite(x)))
            throw UsageError("--weight " + name + ": expected a finite number > 0, got " + format_number(x));
        weights[static_cast<std::size_t>(i)] = x;
    }
    if (o.divergence_metric != "euclidean" && o.divergence_metric != "kinetic")
        throw UsageError("--divergence-metric: expected euclidean or kinetic, got '" + o.divergence_metric + "'");
    const bool kinetic = o.divergence_metric == "kinetic";
    // the weights of the coordinates left out are 0, as a run's (pipeline/run_plan.cpp divergence_spec)
    for (int j = 0; j < max_divergence_coords; ++j) req.divergence.weight[j] = 0.0;
    for (int i : coords) req.divergence.weight[i] = weights[static_cast<std::size_t>(i)];
    for (int i = 0; i < m.n; ++i)
        if (m.angles[i]) req.divergence.angle_mask |= 1u << i;
    req.divergence.kinetic = kinetic;
    req.divergence_label = divergence_label(m, coords, weights, kinetic);
}

std::vector<double> resolve_times(const std::string& spec, double t0, double t_end) {
    const bool is_count = spec.find_first_of(".,eE") == std::string::npos;
    std::vector<double> times;
    if (is_count) {
        const double n = parse_number(spec, "--times");
        if (n < 1 || n != std::floor(n) || n > max_output_times)
            throw UsageError("--times: expected a count in [1, " + std::to_string(max_output_times) +
                             "] or a list, got '" + spec + "'");
        const int count = static_cast<int>(n);
        for (int i = 1; i <= count; ++i) times.push_back(i == count ? t_end : t0 + (t_end - t0) * i / count);
    } else {
        times = parse_number_list(spec, "--times");
        if (times.size() > static_cast<std::size_t>(max_output_times))
            throw UsageError("--times: at most " + std::to_string(max_output_times) + " output times, got " +
                             std::to_string(times.size()));
        for (std::size_t i = 0; i < times.size(); ++i)
            if (times[i] <= (i ? times[i - 1] : t0))
                throw UsageError("--times: output times must be strictly increasing and > t0 (" + format_number(t0) +
                                 ")");
        if (times.back() > t_end) throw UsageError("--times: the last output time exceeds --t-end");
    }
    return times;
}

int run_trajectory_command(const TrajectoryOptions& o) {
    // NOTE: a model file that does not load is bad input (exit 2), as an unknown model name is.
    std::string model;
    try {
        model = modelfile::resolve_model_argument(o.model);
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }
    const std::vector<ModelInfo> reg = model_registry();
    const ModelInfo* info = &require_model(reg, model, "--model");
    TrajectoryRequest req;
    req.model = model;
    req.params = resolve_params(*info, o.params);
    req.q0 = parse_number_list(o.q0, "--q0");
    req.v0 = parse_number_list(o.v0, "--v0");
    if (static_cast<int>(req.q0.size()) != info->n || static_cast<int>(req.v0.size()) != info->n)
        throw UsageError("--q0/--v0: model '" + o.model + "' has n = " + std::to_string(info->n) +
                         " coordinates, got " + std::to_string(req.q0.size()) + " and " +
                         std::to_string(req.v0.size()) + " values");
    req.mu0 = o.mu0.empty() ? std::vector<double>(info->k, 0.0) : parse_number_list(o.mu0, "--mu0");
    if (static_cast<int>(req.mu0.size()) != info->k)
        throw UsageError("--mu0: model '" + o.model + "' has k = " + std::to_string(info->k) + " constraints, got " +
                         std::to_string(req.mu0.size()) + " values");
    if (!std::isfinite(o.t0)) throw UsageError("--t0: expected a finite number, got " + format_number(o.t0));
    if (!(std::isfinite(o.t_end) && o.t_end > o.t0))
        throw UsageError("--t-end: expected a finite time > t0 = " + format_number(o.t0) + ", got " +
                         format_number(o.t_end));
    if (!(std::isfinite(o.constraint_tol) && o.constraint_tol >= 0.0))
        throw UsageError("--constraint-tol: expected a finite number >= 0, got " + format_number(o.constraint_tol));
    req.t0 = o.t0;
    req.times = resolve_times(o.times, o.t0, o.t_end);
    resolve_divergence(o, *info, req);
    const MethodInfo* method = find_method(o.method);
    if (!method) throw UsageError("--method: expected " + method_names() + ", got '" + o.method + "'");
    req.method = method->id;
    if (o.precision != "double" && o.precision != "float")
        throw UsageError("--precision: expected double or float, got '" + o.precision + "'");
    req.precision = o.precision == "float" ? Precision::f32 : Precision::f64;
    if (o.equations != "generated" && o.equations != "ad")
        throw UsageError("--equations: expected generated or ad, got '" + o.equations + "'");
    req.equations = o.equations == "ad" ? EquationsKind::ad : EquationsKind::generated;
    if (req.equations == EquationsKind::ad && o.backend == "cuda")
        throw UsageError("--equations ad: the dual-number reference runs on the CPU only (use --backend cpu)");
    // The integrator settings pass the config's checks (checks.hpp); a problem is reported under the option.
    IntegratorSettings is;
    is.method = req.method;
    is.precision = req.precision;
    is.rtol = o.rtol_given ? o.rtol : default_rtol(req.precision);
    is.atol = o.atol_given ? o.atol : default_atol(req.precision);
    is.dt = o.dt_given ? o.dt : default_dt(req.method);
    is.max_steps = o.max_steps_given ? o.max_steps : default_max_steps(static_cast<long long>(req.times.size()));
    std::optional<SettingProblem> problem = check_integrator(is);
    if (!problem) problem = check_step_count(is, req.t0, req.times);
    if (problem) {
        const struct {
            const char* key;
            const char* option;
            double value;
        } named[] = {
            {"integrator.rtol", "--rtol", is.rtol},
            {"integrator.atol", "--atol", is.atol},
            {"integrator.dt", "--dt", is.dt},
            {"integrator.max_steps", "--max-steps", static_cast<double>(is.max_steps)},
        };
        for (const auto& n : named)
            if (problem->key == n.key)
                throw UsageError(std::string(n.option) + ": expected " + problem->expected + ", got " +
                                 format_number(n.value));
        throw UsageError(problem->key + ": expected " + problem->expected);
    }
    req.ctl.rtol = is.rtol;
    req.ctl.atol = is.atol;
    req.ctl.dt = is.dt;
    req.ctl.min_step = is.min_step;
    req.ctl.max_steps = is.max_steps;
    req.ctl.project = o.project;

    // The initial velocity must satisfy the constraints, unless --project asks to project it. (A model file compiles
    // for this one trajectory's precision, method and equations.)
    modelfile::set_scope(model, modelfile::Scope::only(req.precision, req.method, req.equations));
    const ModelOps* ops = find_model_ops(model);
    double scale = 1.0;
    for (double x : req.v0) scale = std::max(scale, std::fabs(x));
    const double worst = ops->constraint_violation(req.params.data(), req.q0.data(), req.v0.data(), req.t0);
    const bool violates = !(worst <= o.constraint_tol * scale);
    if (violates && !o.project) {
        std::ostringstream os;
        os << "--v0: violates the constraints: max |phi(q0, v0, t0)| / |dphi/dv| = " << worst << " > "
           << o.constraint_tol << " (pass --project to project v0 onto phi = 0 in the kinetic metric)";
        throw UsageError(os.str());
    }
    // NOTE: φ may be a chart of the source's constraints that vanishes where they do not (parallel_velocities with
    // ṗ1 vertical): the source's own residual is checked too, --project or not (a projection onto φ = 0 cannot fix
    // it). A state outside a chart with φ = 0 is refused by the integration (chart_singular at t0).
    const double source = ops->source_violation(req.params.data(), req.q0.data(), req.v0.data(), req.t0);
    if (!(source <= o.constraint_tol)) {
        std::ostringstream os;
        os << "--v0: violates the constraints as the model's source states them: residual " << source << " > "
           << o.constraint_tol << " (the model's chart phi = 0 does not represent them at this state)";
        throw UsageError(os.str());
    }

    if (o.steps && o.backend != "cpu")
        throw UsageError("--steps: the steps are counted on the cpu backend only (the same steps as on cuda, to "
                         "within the rounding of the two backends' arithmetic)");
    TrajectoryResult r;
    if (o.backend == "cpu") r = run_trajectory_cpu(req);
    else if (o.backend == "cuda") {
        modelfile::prepare_cuda_kernels(req.model, modelfile::CudaKernels::trajectory, req.precision, req.method);
        r = run_trajectory_cuda(req);
    } else throw UsageError("--backend: expected cpu or cuda, got '" + o.backend + "'");

    // NOTE: the CSV's writes fail inside the C library's buffer (a full disk, /dev/full): the reason is the errno of
    // that failure, still set here (no later call succeeds in between), not at the final flush in main.
    errno = 0;
    ops->write_trajectory_csv(req, r, stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
        const int e = errno;
        throw std::runtime_error(std::string("cannot write to standard output") +
                                 (e != 0 ? std::string(": ") + std::strerror(e) : std::string()));
    }
    if (o.steps) {
        const double reached = r.rows >= 2 ? req.times[static_cast<std::size_t>(r.rows - 2)] : req.t0;
        std::cerr << "nhvk trajectory: steps to t = " << reached << ": nonholonomic " << r.steps[0] << " ("
                  << r.rejected[0] << " rejected), vakonomic " << r.steps[1] << " (" << r.rejected[1] << " rejected)\n";
    }
    if (r.outcome.status != Status::ok) {
        std::cerr << "nhvk: trajectory failed: " << status_name(r.outcome.status) << " in the "
                  << (r.outcome.failed == Dynamics::nonholonomic ? "nonholonomic" : "vakonomic")
                  << " dynamics before t = " << (r.outcome.time_index >= 0 ? req.times[r.outcome.time_index] : req.t0);
        if (r.outcome.status == Status::step_limit) std::cerr << " (max_steps = " << req.ctl.max_steps << ")";
        std::cerr << "\n";
        return exit_integration;
    }
    return exit_ok;
}

} // namespace

void add_trajectory_command(CLI::App& app, int& exit_code) {
    auto opt = std::make_shared<TrajectoryOptions>();
    auto* cmd = app.add_subcommand("trajectory", "Integrate one initial state with both dynamics; CSV to stdout");
    cmd->add_option("--model", opt->model, "model name (see `nhvk models`) or model file (*.toml)")->required();
    cmd->add_option("--param", opt->params, "model parameter name=value (repeatable)");
    cmd->add_option("--q0", opt->q0, "initial coordinates a,b,c")->required();
    cmd->add_option("--v0", opt->v0, "initial velocities a,b,c (must satisfy the constraints)")->required();
    cmd->add_option("--mu0", opt->mu0, "initial vakonomic multipliers (default zeros)");
    cmd->add_option("--t0", opt->t0, "initial time")->capture_default_str();
    cmd->add_option("--t-end", opt->t_end, "final time")->required();
    cmd->add_option("--method", opt->method, method_names(" | ", " | "))->capture_default_str();
    cmd->add_option("--dt", opt->dt,
                    "a fixed-step method's step (rk4, midpoint; default 1e-3); an adaptive method's first step "
                    "(default automatic)");
    cmd->add_option("--rtol", opt->rtol,
                    "relative tolerance of an adaptive method (default 1e-10; 1e-6 with --precision float)");
    cmd->add_option("--atol", opt->atol,
                    "absolute tolerance of an adaptive method, > 0 (default 1e-12; 1e-8 with --precision float)");
    cmd->add_option("--times", opt->times, "output times: a count N (uniform in (t0, t_end]) or a list t1,t2,...")
        ->capture_default_str();
    cmd->add_flag("--project", opt->project, "project v0 and, after every step, v onto phi = 0");
    cmd->add_flag("--steps", opt->steps,
                  "print each dynamics' attempted and rejected steps to standard error (cpu backend)");
    cmd->add_option("--constraint-tol", opt->constraint_tol,
                    "largest max |phi(q0,v0)| / |dphi/dv| / max(1,|v0|) accepted")
        ->capture_default_str();
    cmd->add_option("--max-steps", opt->max_steps,
                    "attempted-step limit per dynamics (default 100000 + 1000 per output time)");
    cmd->add_option("--precision", opt->precision, "double | float")->capture_default_str();
    cmd->add_option("--coordinates", opt->coordinates,
                    "coordinates d_q and d_v cover, a,b (default: as nhvk run's divergence.coordinates: all, but the "
                    "angles of a model that mixes angles and lengths)");
    cmd->add_option("--weight", opt->weights, "a divergence coordinate's weight, name=value (repeatable)");
    cmd->add_option("--divergence-metric", opt->divergence_metric, "euclidean | kinetic (divergence.metric)")
        ->capture_default_str();
    cmd->add_option("--backend", opt->backend, "cpu | cuda")->capture_default_str();
    cmd->add_option("--equations", opt->equations,
                    "generated (code derived at build time) | ad (dual-number reference, CPU only)")
        ->capture_default_str();
    cmd->callback([opt, cmd, &exit_code]() {
        // NOTE: first, while this is the only thread: a signal during a model file's compile ends the compiler too
        clean_up_outputs_on_signals();
        refuse_empty_values(*cmd);
        opt->dt_given = cmd->count("--dt") > 0;
        opt->rtol_given = cmd->count("--rtol") > 0;
        opt->atol_given = cmd->count("--atol") > 0;
        opt->max_steps_given = cmd->count("--max-steps") > 0;
        exit_code = run_trajectory_command(*opt);
    });
}

} // namespace nhvk
