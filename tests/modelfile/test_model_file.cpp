// SPDX-License-Identifier: MIT
// Model files (host/modelfile/model_file.hpp): what the loader refuses, with the file, key, line and column of each
// documented error, and a model file run end to end (`nhvk run`, `nhvk trajectory`, `nhvk inspect`) against the
// built-in model it re-expresses.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "config.hpp"
#include "csv_table.hpp"
#include "inspect.hpp"
#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "modelfile/model_file.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "nhvk_cli.hpp"
#include "pipeline/run_plan.hpp"
#include "registry.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk::modelfile::load_model_text;

const char* const particle = R"toml(name = "particle_file"
coordinates = ["x", "y", "z"]
lagrangian = "0.5*m*(x'^2 + y'^2 + z'^2)"
constraints = ["z' - y*x'"]
[parameters]
m = { default = 1.0, range = "> 0" }
)toml";

/** The message of loading `text` as the model file "m.toml" (empty when it loads). */
std::string error_of(const std::string& text) {
    try {
        load_model_text(text, "m.toml", "", "m", {});
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return {};
}

/** `text` with `from` replaced by `to` (the one occurrence). */
std::string with(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

TEST(ModelFileLoad, TheParticleLoadsWithItsSizesAndParameters) {
    const nhvk::modelfile::FileModel m = load_model_text(particle, "m.toml", "", "m", {});
    EXPECT_EQ(m.info.name, "particle_file");
    EXPECT_EQ(m.info.n, 3);
    EXPECT_EQ(m.info.k, 1);
    ASSERT_EQ(m.info.params.size(), 1u);
    EXPECT_EQ(m.info.params[0].name, "m");
    EXPECT_EQ(m.info.params[0].domain, nhvk::ParamDomain::positive);
    EXPECT_EQ(m.variants.size(), 1u);
    EXPECT_FALSE(m.lagrangian_depends_on_t);
}

TEST(ModelFileErrors, AnUnknownNameSuggestsTheNearestAndPointsAtIt) {
    const std::string e = error_of(with(particle, "0.5*m*", "0.5*mm*"));
    // line 3, the string starts at column 14: `lagrangian = "` then `0.5*` (4 characters) before `mm`
    EXPECT_HAS(e, "m.toml:3:19: lagrangian:");
    EXPECT_HAS(e, "'mm'");
    EXPECT_HAS(e, "did you mean 'm'");
}

TEST(ModelFileErrors, AFunctionWithTheWrongNumberOfArguments) {
    const std::string e = error_of(with(particle, "z' - y*x'", "z' - atan2(y)*x'"));
    EXPECT_HAS(e, "m.toml:4:");
    EXPECT_HAS(e, "constraints[0]");
    EXPECT_HAS(e, "atan2");
    EXPECT_HAS(e, "2 arguments");
}

TEST(ModelFileErrors, AVelocityInAChartCondition) {
    const std::string e = error_of(std::string(particle) + "");
    EXPECT_TRUE(e.empty()) << e;
    std::string text = particle;
    text = with(text, "[parameters]", "chart = [\"x' > 0\"]\n[parameters]");
    const std::string c = error_of(text);
    EXPECT_HAS(c, "chart[0]");
    EXPECT_HAS(c, "velocit");
    EXPECT_HAS(c, "m.toml:5:");
}

TEST(ModelFileErrors, AVelocityInNeitherTheLagrangianNorAConstraintMakesASingularSystem) {
    const std::string e = error_of(with(with(particle, " + z'^2", ""), "z' - y*x'", "y' - z*x'"));
    EXPECT_HAS(e, "lagrangian");
    EXPECT_HAS(e, "z'");
    EXPECT_HAS(e, "singular");
    // Without z' in L but with z' in the constraint, W is singular and the saddle-point matrix is not (the built-in
    // heisenberg's sub-Riemannian Lagrangian): that model loads.
    EXPECT_EQ(error_of(with(particle, " + z'^2", "")), "");
}

TEST(ModelFileErrors, AConstraintThatDependsOnNothing) {
    const std::string e = error_of(with(particle, "z' - y*x'", "2*pi"));
    EXPECT_HAS(e, "m.toml:4:");
    EXPECT_HAS(e, "constraints[0]");
    EXPECT_HAS(e, "depends on nothing");
    const std::string h = error_of(with(particle, "z' - y*x'", "z - y*x"));
    EXPECT_HAS(h, "depends on no velocity");
}

TEST(ModelFileErrors, MalformedExpressionsPointAtTheProblem) {
    EXPECT_HAS(error_of(with(particle, "z' - y*x'", "z' - (y*x'")), "constraints[0]");
    EXPECT_HAS(error_of(with(particle, "z' - y*x'", "z' - y*x' $")), "m.toml:4:");
    EXPECT_HAS(error_of(with(particle, "z' - y*x'", "m' - y*x'")), "constraints[0]");
}

TEST(ModelFileErrors, TheTableItselfIsChecked) {
    EXPECT_HAS(error_of(with(particle, "lagrangian", "lagrangain")), "unknown key");
    EXPECT_HAS(error_of(with(particle, "range = \"> 0\"", "range = \"positive\"")), "parameters.m.range");
    EXPECT_HAS(error_of(with(particle, "default = 1.0", "default = -1.0")), "outside the range");
    EXPECT_HAS(error_of(with(particle, "[\"x\", \"y\", \"z\"]", "[\"x\", \"y\", \"x\"]")), "listed twice");
    EXPECT_HAS(error_of(with(particle, "[\"x\", \"y\", \"z\"]", "[\"x\", \"t\", \"z\"]")), "reserved");
    EXPECT_HAS(
        error_of(with(particle, "constraints = [\"z' - y*x'\"]", "constraints = [\"z' - y*x'\", \"x'\", \"y'\"]")),
        "fewer constraints than coordinates");
    EXPECT_HAS(error_of(std::string(particle) + "[definitions]\na = \"b + x\"\nb = \"a*y\"\n"), "cycle");
    EXPECT_HAS(error_of(with(particle, "coordinates = [\"x\", \"y\", \"z\"]\n", "")), "coordinates: required");
}

TEST(ModelFileLoad, DefinitionsMayComeInAnyOrderAndFlagsMakeVariants) {
    const std::string text = R"toml(coordinates = ["x", "y", "z"]
lagrangian = "kin + if(heavy, -g*z, 0)"
constraints = ["z' - half*(x*y' - y*x')"]
[parameters]
heavy = { default = false }
g = 9.81
[definitions]
kin = "half*(x'^2 + y'^2 + z'^2)"
half = "0.5"
)toml";
    const nhvk::modelfile::FileModel m = load_model_text(text, "m.toml", "", "m", {});
    ASSERT_EQ(m.variants.size(), 2u);
    const auto L = [&](int variant, double z) {
        return m.graph->evaluate(m.variants[static_cast<std::size_t>(variant)].lagrangian,
                                 [&](nhvk::sym::Var var, int i) {
                                     if (var == nhvk::sym::Var::q) return i == 2 ? z : 0.0;
                                     if (var == nhvk::sym::Var::v) return 1.0;
                                     if (var == nhvk::sym::Var::param) return 9.81;
                                     return 0.0;
                                 });
    };
    EXPECT_DOUBLE_EQ(L(0, 2.0), 1.5);
    EXPECT_DOUBLE_EQ(L(1, 2.0), 1.5 - 9.81 * 2.0);
}

// ---- end to end: the particle as a file, against the built-in nh_particle ----

TEST(ModelFileRun, AnInlineModelRunsAndMatchesTheBuiltInModel) {
    nhvk_test::TempDir dir;
    const std::string base = nhvk_test::read_text(std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml");
    // The same config with the model inline (nh_particle's L = ½|v|², φ = ż − y ẋ) under another name.
    std::string inline_cfg = base;
    const std::size_t at = inline_cfg.find("[model]");
    ASSERT_NE(at, std::string::npos);
    const std::size_t end = inline_cfg.find('\n', inline_cfg.find("name", at));
    inline_cfg.replace(at, end - at,
                       "[model]\nname = \"particle_inline\"\ncoordinates = [\"x\", \"y\", \"z\"]\n"
                       "lagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\nconstraints = [\"z' - y*x'\"]");
    std::ofstream(dir.path() / "inline.toml") << inline_cfg;
    const auto a = nhvk_test::run_captured("", NHVK_BINARY,
                                           {"run", (dir.path() / "inline.toml").string(), "--trajectories", "40",
                                            "--threads", "2", "--out", dir.str("file")},
                                           dir.path() / "io_file");
    ASSERT_EQ(a.rc, 0) << a.err;
    EXPECT_HAS(a.err, "model file");
    const auto b = nhvk_test::run_captured("", NHVK_BINARY,
                                           {"run", std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml",
                                            "--trajectories", "40", "--threads", "2", "--out", dir.str("builtin")},
                                           dir.path() / "io_builtin");
    ASSERT_EQ(b.rc, 0) << b.err;
    const nhvk_test::Csv fa = nhvk_test::read_csv(dir.path() / "file" / "stats.csv");
    const nhvk_test::Csv fb = nhvk_test::read_csv(dir.path() / "builtin" / "stats.csv");
    ASSERT_EQ(fa.rows.size(), fb.rows.size());
    ASSERT_FALSE(fa.rows.empty());
    // The same draws through the same derivation: equal to rounding (the emitted code may order its temporaries
    // differently, so the last bits may differ).
    for (std::size_t r = 0; r < fa.rows.size(); ++r)
        for (std::size_t c = 0; c < fa.header.size(); ++c) {
            const std::string& x = fa.rows[r][c];
            const std::string& y = fb.rows[r][c];
            char* e1 = nullptr;
            char* e2 = nullptr;
            const double dx = std::strtod(x.c_str(), &e1), dy = std::strtod(y.c_str(), &e2);
            if (e1 == x.c_str() || e2 == y.c_str() || !std::isfinite(dx) || !std::isfinite(dy)) {
                EXPECT_EQ(x, y) << fa.header[c] << " row " << r;
                continue;
            }
            EXPECT_NEAR(dx, dy, 1e-9 * std::max(1.0, std::fabs(dy))) << fa.header[c] << " row " << r;
        }
    const nlohmann::json s = nhvk_test::read_json(dir.path() / "file" / "summary.json");
    ASSERT_TRUE(s.contains("model_file"));
    EXPECT_TRUE(s["model_file"].is_object());
    EXPECT_TRUE(s["model_file"]["cached"].is_boolean());
    // the run's settings alone are compiled (configs/nh_particle.toml: DOPRI5 in double, the generated equations)
    EXPECT_EQ(s["model_file"]["compiled_for"], "double, dopri5, generated");
    EXPECT_EQ(s["model_file"]["path"], "compiled");
    EXPECT_GE(s["model_file"]["compile_seconds"].get<double>(), 0.0);
    EXPECT_TRUE(nhvk_test::read_json(dir.path() / "builtin" / "summary.json")["model_file"].is_null());

    // A second run loads the compiled model from the cache.
    const auto c = nhvk_test::run_captured("", NHVK_BINARY,
                                           {"run", (dir.path() / "inline.toml").string(), "--trajectories", "40",
                                            "--threads", "2", "--out", dir.str("again")},
                                           dir.path() / "io_again");
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_TRUE(nhvk_test::read_json(dir.path() / "again" / "summary.json")["model_file"]["cached"].get<bool>());
    EXPECT_EQ(nhvk_test::read_text(dir.path() / "again" / "stats.csv"),
              nhvk_test::read_text(dir.path() / "file" / "stats.csv"));
}

// A model file compiled for one precision, method and equations (what a run or a trajectory asks for) integrates
// with those and refuses others with a message; a scope it does not cover makes the next lookup compile them all.
TEST(ModelFileScope, OneCombinationIsCompiledAndAnotherIsRefusedUntilWidened) {
    const nhvk::modelfile::FileModel m =
        load_model_text(with(particle, "particle_file", "particle_scope"), "m.toml", "", "m", {});
    nhvk::modelfile::register_model(m);
    using nhvk::modelfile::Scope;
    nhvk::modelfile::set_scope("particle_scope",
                               Scope::only(nhvk::Precision::f64, nhvk::Method::rk4, nhvk::EquationsKind::generated));
    const nhvk::ModelOps* ops = nhvk::modelfile::find_ops("particle_scope");
    ASSERT_NE(ops, nullptr);
    EXPECT_EQ(nhvk::modelfile::compile_report("particle_scope")->compiled_for, "double, rk4, generated");
    nhvk::TrajectoryRequest req;
    req.model = "particle_scope";
    req.params = {1.0};
    req.q0 = {0.0, 0.5, 0.0};
    req.v0 = {1.0, 0.0, 0.5};
    req.mu0 = {0.0};
    req.times = {0.5, 1.0};
    req.method = nhvk::Method::rk4;
    req.ctl.dt = 1e-3;
    const auto y_stays = [&](const nhvk::TrajectoryResult& r) {
        // the nonholonomic particle with ẏ(0) = 0: y stays 0.5 (docs/models.md)
        ASSERT_EQ(r.rows, 3);
        for (int row = 0; row < r.rows; ++row)
            EXPECT_NEAR(r.states[static_cast<std::size_t>(row) * r.row_size + 1], 0.5, 1e-12);
    };
    y_stays(ops->trajectory_cpu(req));
    req.method = nhvk::Method::dopri5;
    try {
        ops->trajectory_cpu(req);
        ADD_FAILURE() << "a unit compiled for RK4 integrated with DOPRI5";
    } catch (const std::logic_error& e) {
        EXPECT_HAS(
            std::string(e.what()),
            "'particle_scope' was compiled for double, rk4, generated only; asked for double, dopri5, generated");
    }
    nhvk::modelfile::set_scope("particle_scope",
                               Scope::only(nhvk::Precision::f64, nhvk::Method::dopri5, nhvk::EquationsKind::generated));
    ASSERT_EQ(nhvk::modelfile::find_ops("particle_scope"), ops) << "the ops change in place";
    EXPECT_EQ(nhvk::modelfile::compile_report("particle_scope")->compiled_for, "every combination");
    y_stays(ops->trajectory_cpu(req));
}

// A model file classified first (what `nhvk inspect` compiles: no integrators) and then run in the same process
// through the library, a plan and a CPU backend, without the CLI's own scope call: the backend has the integrators
// of its run compiled, so the members are sampled and integrated (it called a missing function and crashed when a
// test suite ran in one process). Each member keeps the constraint ż = y ẋ: its residual at the last output time.
TEST(ModelFileScope, ARunAfterAnInspectionCompilesWhatItIntegrates) {
    nhvk_test::TempDir dir;
    std::ofstream(dir.path() / "m.toml") << with(particle, "particle_file", "particle_inspected");
    std::string cfg_text = nhvk_test::read_text(std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml");
    const std::size_t at = cfg_text.find("[model]");
    ASSERT_NE(at, std::string::npos);
    const std::size_t end = cfg_text.find('\n', cfg_text.find("name", at));
    cfg_text.replace(at, end - at, "[model]\nfile = \"m.toml\"");
    std::ofstream(dir.path() / "run.toml") << cfg_text;
    const nhvk::RunConfig cfg =
        nhvk::load_config((dir.path() / "run.toml").string(), {"run.trajectories=16"}, nhvk::model_registry());
    ASSERT_EQ(cfg.model.name, "particle_inspected");
    const nlohmann::json c = nhvk::classification_json(cfg.model.name, cfg.params);
    EXPECT_FALSE(c.is_null());
    EXPECT_EQ(nhvk::modelfile::compile_report("particle_inspected")->compiled_for, "inspection");
    const long long m = 16;
    const nhvk::RunPlan plan = nhvk::make_run_plan(cfg, m);
    auto backend = nhvk::make_cpu_backend(plan.layout, plan.common, 1);
    backend->sample(0, 0, m);
    backend->integrate(0, m);
    // (a unit that does not cover a run is widened to every combination, as ModelFileScope above shows)
    EXPECT_EQ(nhvk::modelfile::compile_report("particle_inspected")->compiled_for, "every combination");
    const nhvk::ChunkArgs& a = backend->slot(0);
    const long long residual_row = static_cast<long long>(nhvk::metric_res_nh) * a.nt + (a.nt - 1);
    for (long long j = 0; j < m; ++j) {
        ASSERT_EQ(a.sample_status[j], 0u) << "member " << j;
        EXPECT_EQ(a.status[j], 0u) << "member " << j;
        EXPECT_LT(std::abs(a.metrics[residual_row * a.ld + j]), 1e-8) << "member " << j;
    }
}

TEST(ModelFileRun, TrajectoryAndInspectTakeAModelFile) {
    nhvk_test::TempDir dir;
    std::ofstream(dir.path() / "particle.toml") << particle;
    const auto t = nhvk_test::run_captured("", NHVK_BINARY,
                                           {"trajectory", "--model", (dir.path() / "particle.toml").string(), "--q0",
                                            "0,0.5,0", "--v0", "1,0,0.5", "--t-end", "1"},
                                           dir.path() / "io_t");
    ASSERT_EQ(t.rc, 0) << t.err;
    // The nonholonomic particle: ÿ = 0 and ẋ √(1 + y²) constant (docs/models.md), here ẏ(0) = 0 so y stays 0.5.
    const nhvk_test::Csv tr = nhvk_test::parse_csv(t.out);
    ASSERT_GT(tr.rows.size(), 1u);
    const std::size_t y = tr.col.at("nh_q1");
    for (const auto& row : tr.rows) EXPECT_NEAR(std::stod(row[y]), 0.5, 1e-12);
    const auto i = nhvk_test::run_captured("", NHVK_BINARY, {"inspect", (dir.path() / "particle.toml").string()},
                                           dir.path() / "io_i");
    ASSERT_EQ(i.rc, 0) << i.err;
    EXPECT_HAS(i.out, "particle_file");
    EXPECT_HAS(i.out, "integrable (holonomic):      no");
}

// Without a device (or without CUDA in this build) a model file asked to run on the CUDA backend says why, exits
// non-zero and writes nothing; with a device the CUDA suite (tests/kernels) runs it.
TEST(ModelFileRun, TheCudaBackendWithoutADeviceSaysWhyAndWritesNothing) {
    if (nhvk::cuda_available()) GTEST_SKIP() << "a device is present: tests/kernels runs model files on it";
    nhvk_test::TempDir dir;
    std::ofstream(dir.path() / "particle.toml") << particle;
    std::string cfg = nhvk_test::read_text(std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml");
    cfg = with(cfg, "name = \"nh_particle\"", "file = \"particle.toml\"");
    std::ofstream(dir.path() / "run.toml") << cfg;
    const auto r = nhvk_test::run_captured(
        "", NHVK_BINARY, {"run", (dir.path() / "run.toml").string(), "--backend", "cuda", "--out", dir.str("out")},
        dir.path() / "io");
    EXPECT_NE(r.rc, 0) << r.err;
    EXPECT_HAS(r.err, "backend 'cuda': " + nhvk::cuda_unavailable_reason());
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
    const auto t = nhvk_test::run_captured("", NHVK_BINARY,
                                           {"trajectory", "--model", (dir.path() / "particle.toml").string(), "--q0",
                                            "0,0.5,0", "--v0", "1,0,0.5", "--t-end", "1", "--backend", "cuda"},
                                           dir.path() / "io_t");
    EXPECT_NE(t.rc, 0) << t.err;
    EXPECT_HAS(t.err, "backend 'cuda': " + nhvk::cuda_unavailable_reason());
}

TEST(ModelFileRun, ABadModelFileExitsWithItsPositionAndNoOutputFolder) {
    nhvk_test::TempDir dir;
    std::ofstream(dir.path() / "bad.toml") << with(particle, "0.5*m*", "0.5*mass*");
    std::string cfg = nhvk_test::read_text(std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml");
    cfg = with(cfg, "name = \"nh_particle\"", "file = \"bad.toml\"");
    std::ofstream(dir.path() / "run.toml") << cfg;
    const auto r = nhvk_test::run_captured(
        "", NHVK_BINARY, {"run", (dir.path() / "run.toml").string(), "--out", dir.str("out")}, dir.path() / "io");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_HAS(r.err, "bad.toml:3:");
    EXPECT_HAS(r.err, "'mass'");
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
    const auto i = nhvk_test::run_captured("", NHVK_BINARY, {"inspect", (dir.path() / "bad.toml").string()},
                                           dir.path() / "io_inspect");
    EXPECT_EQ(i.rc, 2) << i.err;
    EXPECT_HAS(i.err, "unknown name 'mass'");
}

} // namespace

namespace {

TEST(ModelFileRun, ASweepOverAModelFilesParameterGivesEachPointItsOwnRun) {
    // driven_rolling_disc exists only as a file; its torque tau sets the rolling rate's limit tau/c, so the points
    // must differ, and a point must be the run of that point alone (as for a built-in model,
    // tests/host/test_sweep.cpp).
    nhvk_test::TempDir dir;
    std::string cfg = nhvk_test::read_text(std::string(NHVK_SOURCE_DIR) + "/configs/driven_rolling_disc.toml");
    cfg = with(cfg, "file = \"../models/driven_rolling_disc.toml\"",
               "file = \"" + std::string(NHVK_SOURCE_DIR) + "/models/driven_rolling_disc.toml\"");
    std::ofstream(dir.path() / "base.toml") << cfg;
    std::ofstream(dir.path() / "sweep.toml")
        << cfg << "\n[sweep]\n[[sweep.axes]]\nkey = \"model.params.tau\"\nvalues = [0.2, 1.0]\n";
    const auto s = nhvk_test::run_captured("", NHVK_BINARY,
                                           {"run", (dir.path() / "sweep.toml").string(), "--trajectories", "12",
                                            "--threads", "2", "--out", dir.str("sweep")},
                                           dir.path() / "io_sweep");
    ASSERT_EQ(s.rc, 0) << s.err;
    const nhvk_test::Csv points = nhvk_test::read_csv(dir.path() / "sweep" / "sweep_points.csv");
    ASSERT_EQ(points.rows.size(), 2u);
    EXPECT_EQ(std::stod(points.at(0, "tau")), 0.2);
    EXPECT_EQ(std::stod(points.at(1, "tau")), 1.0);
    const auto one =
        nhvk_test::run_captured("", NHVK_BINARY,
                                {"run", (dir.path() / "base.toml").string(), "--trajectories", "12", "--threads", "2",
                                 "--set", "model.params.tau=1.0", "--out", dir.str("one")},
                                dir.path() / "io_one");
    ASSERT_EQ(one.rc, 0) << one.err;
    const nhvk_test::Csv sweep = nhvk_test::read_csv(dir.path() / "sweep" / "sweep.csv");
    const nhvk_test::Csv alone = nhvk_test::read_csv(dir.path() / "one" / "stats.csv");
    std::vector<std::size_t> rows[2];
    for (std::size_t r = 0; r < sweep.rows.size(); ++r) rows[sweep.at(r, "point") == "1"].push_back(r);
    ASSERT_EQ(rows[1].size(), alone.rows.size());
    ASSERT_EQ(rows[0].size(), alone.rows.size());
    bool points_differ = false;
    for (std::size_t i = 0; i < alone.rows.size(); ++i) {
        for (const std::string& c : alone.header)
            EXPECT_EQ(sweep.at(rows[1][i], c), alone.at(i, c)) << c << " row " << i;
        points_differ = points_differ || sweep.at(rows[0][i], "mean") != sweep.at(rows[1][i], "mean");
    }
    EXPECT_TRUE(points_differ) << "tau changes the motion, so the two points' statistics must differ";
}

} // namespace
