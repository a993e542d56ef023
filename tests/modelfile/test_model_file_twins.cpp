// SPDX-License-Identifier: MIT
// The model files models/<name>.toml against the built-in models they re-express (include/nhvk/models/<name>.hpp):
// one test per model (so ctest runs them in parallel), each with one compile of its file. A file and its header are
// two independent spellings of the same model, so every comparison here is between them, never against a number
// taken from either: the descriptions, trajectories from sampled constrained states (every combination of the
// boolean parameters; every method and both kinds of equations for one model and the interpreted files, DOPRI5 with
// the generated equations for the others), the residuals and the chart decisions at random states,
// and a whole `nhvk run` of the model's config with the file in place of the built-in. Each model twice: compiled (the
// run-time compiler), and interpreted (modelfile/interpreted.hpp, what runs where no compiler does), which integrates
// the dual-number reference equations and so is compared with the built-in model's reference equations.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "config.hpp"
#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "modelfile/interpreted.hpp"
#include "modelfile/model_file.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "nhvk/status.hpp"
#include "registry.hpp"

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY (the path of the built nhvk)"
#endif
#ifndef NHVK_SOURCE_DIR
#error "tests/CMakeLists.txt defines NHVK_SOURCE_DIR"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk::ModelInfo;
using nhvk::ModelOps;

/** Every built-in model has a twin file (the list is checked against the registry below). */
const char* const twin_names[] = {
    "nh_particle",         "heisenberg",        "rolling_disc",           "knife_edge",
    "chaplygin_sleigh",    "ball_on_turntable", "appell_hamel",           "perpendicular_velocities",
    "equal_speeds",        "sphere_holonomic",  "pfaffian_particle",      "rigid_pair",
    "parallel_velocities", "midpoint_parallel", "midpoint_perpendicular", "both_perpendicular"};

/** Print a measured number (so the log documents the margins) and record it in the XML report. */
void measured(const std::string& what, double value) {
    std::printf("    [measured] %s = %.3g\n", what.c_str(), value);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", value);
    ::testing::Test::RecordProperty(what, buf);
}

/** The one model whose compiled twin is compared with every method and both kinds of equations (one compile of every
 *  combination). The others compile and compare DOPRI5 with the generated equations, what a run of their configs
 *  integrates: a method is the same template for a file as for a header, so one model shows that each reaches a
 *  file, while a compile of every combination grows with the methods and, for every twin, would be the largest
 *  part of the suite's time. */
const std::string every_combination_twin = "rolling_disc";

/** The file of model `name`, loaded and registered (so it replaces the built-in of its name in this process), and its
 *  compiled ops (compiled on the first call, then from the build tree's cache): every combination, or DOPRI5 in
 *  double with the generated equations alone. */
const ModelOps* twin_ops(const std::string& name, bool every_combination) {
    const fs::path file = fs::path(NHVK_SOURCE_DIR) / "models" / (name + ".toml");
    nhvk::modelfile::register_model(nhvk::modelfile::load_model_file(file.string()));
    if (!every_combination)
        nhvk::modelfile::set_scope(name, nhvk::modelfile::Scope::only(nhvk::Precision::f64, nhvk::Method::dopri5,
                                                                      nhvk::EquationsKind::generated));
    return nhvk::modelfile::find_ops(name);
}

/** The file of model `name` interpreted (not registered: the built-in keeps its name in this process). */
const ModelOps* interpreted_twin_ops(const std::string& name) {
    static std::deque<ModelOps> held;
    const fs::path file = fs::path(NHVK_SOURCE_DIR) / "models" / (name + ".toml");
    held.push_back(nhvk::modelfile::interpreted_ops(nhvk::modelfile::load_model_file(file.string())));
    return &held.back();
}

void expect_same_info(const ModelInfo& b, const ModelInfo& f) {
    EXPECT_EQ(f.name, b.name);
    EXPECT_EQ(f.description, b.description);
    EXPECT_EQ(f.n, b.n);
    EXPECT_EQ(f.k, b.k);
    EXPECT_EQ(f.coords, b.coords);
    EXPECT_EQ(f.angles, b.angles);
    ASSERT_EQ(f.params.size(), b.params.size());
    for (std::size_t i = 0; i < b.params.size(); ++i) {
        SCOPED_TRACE("parameter " + std::to_string(i) + " (" + b.params[i].name + ")");
        EXPECT_EQ(f.params[i].name, b.params[i].name);
        EXPECT_EQ(f.params[i].default_value, b.params[i].default_value);
        EXPECT_EQ(f.params[i].is_bool, b.params[i].is_bool);
        EXPECT_EQ(std::string(nhvk::to_string(f.params[i].domain)), std::string(nhvk::to_string(b.params[i].domain)));
    }
}

/** `params` once per combination of the boolean parameters (a model without them: `params` alone). */
std::vector<std::vector<double>> boolean_variants(const ModelInfo& info, const std::vector<double>& params) {
    std::vector<std::vector<double>> out = {params};
    for (std::size_t i = 0; i < info.params.size(); ++i) {
        if (!info.params[i].is_bool) continue;
        std::vector<std::vector<double>> next;
        for (const std::vector<double>& p : out)
            for (double b : {0.0, 1.0}) {
                next.push_back(p);
                next.back()[i] = b;
            }
        out = next;
    }
    return out;
}

std::string variant_label(const ModelInfo& info, const std::vector<double>& params) {
    std::string s;
    for (std::size_t i = 0; i < info.params.size(); ++i)
        if (info.params[i].is_bool) s += " " + info.params[i].name + (params[i] != 0.0 ? "=true" : "=false");
    return s.empty() ? std::string(" (no boolean parameters)") : s;
}

/** A sampled member of a run: its initial state, from samples.csv. */
struct Member {
    std::vector<double> q0, v0, mu0;
};

/** The first `count` members of samples.csv that were sampled and integrated without failure. */
std::vector<Member> sampled_members(const nhvk_test::Csv& s, const ModelInfo& info, std::size_t count) {
    std::vector<Member> out;
    for (std::size_t r = 0; r < s.rows.size() && out.size() < count; ++r) {
        if (s.at(r, "sample_status") != "ok" || s.at(r, "status") != "ok") continue;
        Member m;
        for (const std::string& c : info.coords) m.q0.push_back(std::stod(s.at(r, "q0_" + c)));
        for (const std::string& c : info.coords) m.v0.push_back(std::stod(s.at(r, "v0_" + c)));
        for (int a = 0; a < info.k; ++a) m.mu0.push_back(std::stod(s.at(r, "mu0_" + std::to_string(a))));
        out.push_back(m);
    }
    return out;
}

/** The largest difference between the rows of two recorded trajectories, each element relative to its row's scale
 *  max(1, max_i |row_i|) (the state's own size: a rolling angle grows without bound); +inf when their shapes differ. */
double max_row_difference(const nhvk::TrajectoryResult& a, const nhvk::TrajectoryResult& b) {
    if (a.rows != b.rows || a.row_size != b.row_size) return INFINITY;
    double worst = 0.0;
    for (int r = 0; r < a.rows; ++r) {
        const double* x = &a.states[static_cast<std::size_t>(r) * a.row_size];
        const double* y = &b.states[static_cast<std::size_t>(r) * b.row_size];
        double scale = 1.0;
        for (int i = 0; i < a.row_size; ++i) scale = std::max(scale, std::fabs(x[i]));
        for (int i = 0; i < a.row_size; ++i) {
            const double d = std::fabs(x[i] - y[i]) / scale;
            worst = std::max(worst, d == d ? d : INFINITY);
        }
    }
    return worst;
}

/** The model's config with its `name = "<name>"` line under [model] replaced by `file = "<path>"`. */
std::string twin_config_text(const std::string& config_text, const std::string& name, const std::string& file) {
    const std::string line = "name = \"" + name + "\"";
    std::istringstream in(config_text);
    std::ostringstream out;
    std::string l;
    int replaced = 0;
    while (std::getline(in, l)) {
        if (l == line) {
            out << "file = \"" << file << "\"\n";
            ++replaced;
        } else {
            out << l << "\n";
        }
    }
    EXPECT_EQ(replaced, 1) << "configs/" << name << ".toml should name its model once, as '" << line << "'";
    return out.str();
}

bool is_number(const std::string& s, double& x) {
    if (s.empty()) return false;
    char* end = nullptr;
    x = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
}

/** How two CSV tables of one ensemble differ: the fields that are not the same text, and the largest difference of
 *  those that are numbers, |a − b| / max(floor, |a|, |b|) (+inf where a field differs and is not a number in both). */
struct CsvDifference {
    std::size_t fields = 0, differing = 0;
    double max_scaled = 0.0;
};

/** `columns`: the columns compared (all when null). */
CsvDifference compare_tables(const nhvk_test::Csv& a, const nhvk_test::Csv& b, double floor,
                             bool (*columns)(const std::string&) = nullptr) {
    CsvDifference d;
    EXPECT_EQ(a.header, b.header);
    EXPECT_EQ(a.rows.size(), b.rows.size());
    for (std::size_t r = 0; r < std::min(a.rows.size(), b.rows.size()); ++r) {
        EXPECT_EQ(a.rows[r].size(), b.rows[r].size()) << "row " << r;
        for (std::size_t c = 0; c < std::min(a.rows[r].size(), b.rows[r].size()); ++c) {
            if (columns && !columns(a.header[c])) continue;
            ++d.fields;
            const std::string &x = a.rows[r][c], &y = b.rows[r][c];
            if (x == y) continue;
            ++d.differing;
            double u = 0.0, v = 0.0;
            if (is_number(x, u) && is_number(y, v)) {
                const double e = std::fabs(u - v) / std::max({floor, std::fabs(u), std::fabs(v)});
                d.max_scaled = std::max(d.max_scaled, e == e ? e : INFINITY);
            } else {
                d.max_scaled = INFINITY;
                ADD_FAILURE() << "row " << r << " column " << a.header[c] << ": '" << x << "' vs '" << y << "'";
            }
        }
    }
    return d;
}

bool initial_state_column(const std::string& c) {
    return c.rfind("q0_", 0) == 0 || c.rfind("v0_", 0) == 0 || c.rfind("mu0_", 0) == 0;
}
bool outcome_column(const std::string& c) { return !initial_state_column(c); }

/** A model and how its file runs: compiled or interpreted. */
struct Twin {
    std::string name;
    bool interpreted;
};

/** How ctest and gtest print a case ("nh_particle (interpreted)"), instead of the struct's bytes. */
void PrintTo(const Twin& t, std::ostream* os) { *os << t.name << (t.interpreted ? " (interpreted)" : ""); }

class ModelFileTwin : public ::testing::TestWithParam<Twin> {};

TEST(ModelFileTwins, EveryBuiltinModelHasAFile) {
    std::vector<std::string> listed(std::begin(twin_names), std::end(twin_names));
    std::sort(listed.begin(), listed.end());
    std::vector<std::string> builtin;
    for (const ModelInfo& m : nhvk::detail::infos(nhvk::BuiltinModels{})) builtin.push_back(m.name);
    std::sort(builtin.begin(), builtin.end());
    EXPECT_EQ(listed, builtin) << "twin_names must list every built-in model";
    for (const std::string& n : builtin)
        EXPECT_TRUE(fs::is_regular_file(fs::path(NHVK_SOURCE_DIR) / "models" / (n + ".toml"))) << n;
}

TEST_P(ModelFileTwin, EqualsTheBuiltinModel) {
    const std::string name = GetParam().name;
    const bool interpreted = GetParam().interpreted;
    const ModelOps* builtin = nhvk::find_builtin_model_ops(name);
    ASSERT_NE(builtin, nullptr) << name << " is not a built-in model";
    // NOTE: the interpreted twin compiles nothing: every method and both kinds of equations for every model
    const bool every_combination = interpreted || name == every_combination_twin;
    const ModelOps* twin = interpreted ? interpreted_twin_ops(name) : twin_ops(name, every_combination);
    ASSERT_NE(twin, nullptr);
    ASSERT_NE(twin, builtin);
    // NOTE: the file replaces the built-in of its name for every later lookup of this process (what `nhvk run` with
    // model.file relies on).
    if (!interpreted) EXPECT_EQ(nhvk::find_model_ops(name), twin);
    // The interpreted file integrates the reference equations: the built-in's are what it must equal.
    const auto builtin_equations = [&](nhvk::EquationsKind eq) { return interpreted ? nhvk::EquationsKind::ad : eq; };
    const ModelInfo info = builtin->info();

    // 1. The description: name, sizes, coordinates, angles, parameters (order, defaults, ranges, booleans).
    {
        SCOPED_TRACE("info");
        expect_same_info(info, twin->info());
        if (HasFatalFailure()) return;
    }

    // 2. A whole run of the model's config, with the built-in and with the file (the binary, as a user runs it).
    const nhvk_test::TempDir tmp("nhvk_twin_");
    const fs::path config = fs::path(NHVK_SOURCE_DIR) / "configs" / (name + ".toml");
    const fs::path twin_config = tmp.path() / (name + "_file.toml");
    {
        std::ofstream(twin_config) << twin_config_text(
            nhvk_test::read_text(config), name, (fs::path(NHVK_SOURCE_DIR) / "models" / (name + ".toml")).string());
    }
    const auto run = [&](const fs::path& cfg, const std::string& out) {
        std::vector<std::string> args{"run",       cfg.string(), "--trajectories", "24", "--out", tmp.str(out),
                                      "--backend", "cpu",        "--save-samples", "-q"};
        if (interpreted && out == "builtin") args.insert(args.end(), {"--set", "integrator.equations=\"ad\""});
        // NOTE: a compiler that does not run is what makes nhvk interpret the file
        std::optional<nhvk_test::ScopedEnv> cxx;
        if (interpreted && out == "file") cxx.emplace("NHVK_CXX", std::string("/nonexistent/c++"));
        const nhvk_test::CliRun r = nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / ("io_" + out));
        EXPECT_EQ(r.rc, 0) << r.err;
        return r.rc == 0;
    };
    if (!run(config, "builtin") || !run(twin_config, "file")) return;
    const nlohmann::json jb = nhvk_test::read_json(tmp.path() / "builtin" / "summary.json");
    const nlohmann::json jf = nhvk_test::read_json(tmp.path() / "file" / "summary.json");
    EXPECT_EQ(jf["model_file"]["path"], interpreted ? "interpreted" : "compiled");
    EXPECT_EQ(jf["equations"], jb["equations"]);
    EXPECT_EQ(jf["model"]["name"], jb["model"]["name"]);
    EXPECT_EQ(jf["trajectories"], jb["trajectories"]) << "the same members are valid and fail the same way";
    const nhvk_test::Csv sb = nhvk_test::read_csv(tmp.path() / "builtin" / "samples.csv");
    const nhvk_test::Csv sf = nhvk_test::read_csv(tmp.path() / "file" / "samples.csv");
    ASSERT_EQ(sb.rows.size(), 24u);
    // The sampled initial states: the sampler projects trial velocities with the model's own equations, so they may
    // differ by rounding (relative to the state's size: a projected velocity may be ~0); the statuses must not. Then
    // the members' final divergences and onsets, and the statistics.
    const CsvDifference samples = compare_tables(sb, sf, 1.0, initial_state_column);
    const CsvDifference outcomes = compare_tables(sb, sf, 1e-4, outcome_column);
    const CsvDifference stats = compare_tables(nhvk_test::read_csv(tmp.path() / "builtin" / "stats.csv"),
                                               nhvk_test::read_csv(tmp.path() / "file" / "stats.csv"), 1e-4);
    measured(name + ".samples_fields_differing",
             double(samples.differing) / double(std::max<std::size_t>(1, samples.fields)));
    measured(name + ".samples_max_difference", samples.max_scaled);
    measured(name + ".outcomes_max_difference", outcomes.max_scaled);
    measured(name + ".stats_fields_differing",
             double(stats.differing) / double(std::max<std::size_t>(1, stats.fields)));
    measured(name + ".stats_max_difference", stats.max_scaled);
    EXPECT_LT(samples.max_scaled, 1e-12) << "initial states differ by more than rounding";
    // NOTE: the tolerance of the statistics. The two right-hand sides agree to a few ulps (the file's expressions
    // group some operations differently from the header's), so two motions agree to ~1e-14 of their size over a run.
    // A statistic of d_q = |q_NH − q_VK| differs by that much in absolute terms, which is large relative to d_q at the
    // first output times (~1e-13 at t = 1e-3, the t³ law), and so do the rounding-level metrics (the residuals). So
    // the differences are relative to max(1e-4, |value|): ≤ 1e-6 is ≤ 1e-10 absolute for the small values, a decade
    // above what rounding gives there, and far below any change of the model (which moves d_q by O(1) relative).
    EXPECT_LT(outcomes.max_scaled, 1e-6);
    EXPECT_LT(stats.max_scaled, 1e-6);

    // 3. Trajectories from sampled members, every boolean variant: every method with generated and AD equations, or
    // DOPRI5 with the generated equations (`every_combination_twin`).
    nhvk::RunConfig cfg;
    ASSERT_NO_THROW(cfg = nhvk::load_config(config.string(), {}, nhvk::model_registry()));
    const std::vector<Member> members = sampled_members(sb, info, 3);
    ASSERT_FALSE(members.empty()) << "no member of the run was sampled and integrated";
    std::vector<double> times;
    for (double t : cfg.times)
        if (t <= std::min(cfg.time_grid.t_end, 1.0)) times.push_back(t);
    double worst = 0.0;
    for (const std::vector<double>& params : boolean_variants(info, cfg.params))
        for (const Member& m : members)
            for (nhvk::Method method : every_combination ? nhvk::all_methods() : std::vector{nhvk::Method::dopri5})
                for (nhvk::EquationsKind eq : every_combination
                                                  ? std::vector{nhvk::EquationsKind::generated, nhvk::EquationsKind::ad}
                                                  : std::vector{nhvk::EquationsKind::generated}) {
                    SCOPED_TRACE(std::string(nhvk::to_string(method)) + ", " + nhvk::to_string(eq) + "," +
                                 variant_label(info, params));
                    nhvk::TrajectoryRequest req;
                    req.model = name;
                    req.params = params;
                    req.q0 = m.q0;
                    req.v0 = m.v0;
                    req.mu0 = m.mu0;
                    req.t0 = cfg.t0;
                    req.times = times;
                    req.method = method;
                    req.equations = builtin_equations(eq);
                    req.ctl.rtol = cfg.integrator.rtol;
                    req.ctl.atol = cfg.integrator.atol;
                    req.ctl.min_step = cfg.integrator.min_step;
                    req.ctl.max_steps = cfg.integrator.max_steps;
                    req.ctl.dt = nhvk::adaptive_method(method) ? 0.0 : 1e-3;
                    const nhvk::TrajectoryResult a = builtin->trajectory_cpu(req);
                    const nhvk::TrajectoryResult b = twin->trajectory_cpu(req);
                    EXPECT_EQ(nhvk::status_name(b.outcome.status), nhvk::status_name(a.outcome.status));
                    EXPECT_EQ(b.outcome.time_index, a.outcome.time_index);
                    EXPECT_GT(a.rows, 1) << "the trajectory should reach some output time";
                    const double d = max_row_difference(a, b);
                    // NOTE: rounding-level right-hand sides, integrated over ≤ 1 time unit (hundreds to thousands of
                    // steps): each step adds a few ulps and the flow amplifies what is there; 1e-11 is two decades
                    // above the largest difference seen (see the measured values) and ten below the integration
                    // tolerance.
                    EXPECT_LT(d, 1e-11);
                    worst = std::max(worst, d);
                }
    measured(name + ".trajectory_max_relative", worst);

    // 4. The residuals and the chart decisions at random states, every boolean variant. Each component is drawn from
    // U(−2, 2) or, with probability 1/2, set near a value where charts end (0 for a length or a velocity, π/2 for an
    // angle), at an offset on either side of the charts' margins (1e-4 and 1e-3 of a ratio, ~1.5e-8 of a velocity):
    // the chart decision, read from the status of a short trajectory, then tells the margins apart.
    std::mt19937_64 rng(20261124);
    std::uniform_real_distribution<double> uni(-2.0, 2.0);
    std::bernoulli_distribution special(0.5);
    const double offsets[] = {0.0, 1e-9, -1e-9, 1e-7, -1e-7, 5e-5, -5e-5, 2e-4, -2e-4, 2e-3, -2e-3};
    std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(offsets)) - 1);
    const auto near_an_end = [&](bool angle) { return (angle ? 1.5707963267948966 : 0.0) + offsets[pick(rng)]; };
    int outside = 0, states = 0;
    double residual_worst = 0.0;
    for (const std::vector<double>& params : boolean_variants(info, cfg.params))
        for (int s = 0; s < 200; ++s) {
            std::vector<double> q(info.n), v(info.n);
            for (int j = 0; j < info.n; ++j) {
                q[j] = special(rng) ? near_an_end(info.angles[j]) : uni(rng);
                v[j] = special(rng) ? near_an_end(false) : uni(rng);
            }
            const double t = 0.25;
            for (auto f : {&ModelOps::constraint_violation, &ModelOps::source_violation}) {
                const double a = (builtin->*f)(params.data(), q.data(), v.data(), t);
                const double b = (twin->*f)(params.data(), q.data(), v.data(), t);
                const double d = std::fabs(a - b) / std::max(1.0, std::fabs(a));
                residual_worst = std::max(residual_worst, d == d ? d : INFINITY);
            }
            nhvk::TrajectoryRequest req;
            req.model = name;
            req.params = params;
            req.q0 = q;
            req.v0 = v;
            req.mu0.assign(static_cast<std::size_t>(info.k), 0.0);
            req.times = {t + 1e-3};
            req.t0 = t;
            req.equations = builtin_equations(req.equations);
            const nhvk::TrajectoryResult a = builtin->trajectory_cpu(req);
            const nhvk::TrajectoryResult b = twin->trajectory_cpu(req);
            EXPECT_EQ(nhvk::status_name(b.outcome.status), nhvk::status_name(a.outcome.status))
                << "state " << s << variant_label(info, params);
            ++states;
            if (a.outcome.status == nhvk::Status::chart_singular) ++outside;
        }
    measured(name + ".residual_max_relative", residual_worst);
    measured(name + ".states_outside_a_chart", double(outside) / states);
    // NOTE: the residuals are the same formulas evaluated once: a few ulps of grouping at most.
    EXPECT_LT(residual_worst, 1e-14);
}

std::vector<Twin> twins() {
    std::vector<Twin> v;
    for (bool interpreted : {false, true})
        for (const char* name : twin_names) v.push_back({name, interpreted});
    return v;
}

INSTANTIATE_TEST_SUITE_P(Models, ModelFileTwin, ::testing::ValuesIn(twins()),
                         [](const ::testing::TestParamInfo<Twin>& p) {
                             return p.param.name + (p.param.interpreted ? "_interpreted" : "");
                         });

} // namespace
