// SPDX-License-Identifier: MIT
// Model files where the run-time compiler cannot run (modelfile/interpreted.hpp): what makes nhvk interpret, the
// sizes it interprets, two interpreted models of one size side by side, the classification, and `nhvk run` saying
// what it did. The interpreted motion itself is compared with every built-in model in test_model_file_twins.cpp and
// with a closed form in test_file_only_model.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model_ops.hpp"
#include "modelfile/interpreted.hpp"
#include "modelfile/model_file.hpp"
#include "modelfile/runtime_compile.hpp"
#include "nhvk/backend/trajectory.hpp"
#include "nhvk/status.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY (the path of the built nhvk)"
#endif
#ifndef NHVK_SOURCE_DIR
#error "tests/CMakeLists.txt defines NHVK_SOURCE_DIR"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk::modelfile::interpreted_ops;
using nhvk::modelfile::load_model_file;

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

std::string model_path(const std::string& name) {
    return (fs::path(NHVK_SOURCE_DIR) / "models" / (name + ".toml")).string();
}

TEST(Interpreted, TheCompilerProblemNamesWhatIsMissing) {
    const nhvk::jit::CompilerSpec ok = nhvk::jit::host_compiler();
    EXPECT_EQ(nhvk::jit::compiler_problem(ok), "") << "the compiler this nhvk was built with runs here";
    nhvk::jit::CompilerSpec no_cxx = ok;
    no_cxx.cxx = "/nonexistent/c++";
    EXPECT_HAS(nhvk::jit::compiler_problem(no_cxx), "'/nonexistent/c++' does not run");
    // An installed nhvk whose source tree is gone: the engine's headers are not where the build left them.
    nhvk::jit::CompilerSpec no_headers = ok;
    no_headers.header_roots.push_back("/nonexistent/nhvk/include");
    EXPECT_HAS(nhvk::jit::compiler_problem(no_headers), "headers are not at /nonexistent/nhvk/include");
}

TEST(Interpreted, ASizeItWasNotBuiltForIsRefusedWithTheSizesItHas) {
    const nhvk_test::TempDir dir;
    // seven free coordinates and one constraint: a well-formed model of a size outside the built ones
    std::ofstream(dir.path() / "seven.toml") << R"toml(coordinates = ["a", "b", "c", "d", "e", "f", "g"]
lagrangian = "0.5*(a'^2 + b'^2 + c'^2 + d'^2 + e'^2 + f'^2 + g'^2)"
constraints = ["g' - a*b'"]
)toml";
    const nhvk::modelfile::FileModel m = load_model_file((dir.path() / "seven.toml").string());
    ASSERT_EQ(m.info.n, 7);
    const auto sizes = nhvk::modelfile::interpreted_sizes();
    ASSERT_TRUE(std::find(sizes.begin(), sizes.end(), std::make_pair(7, 1)) == sizes.end())
        << "this build interprets (7, 1): the test needs a size it does not";
    try {
        interpreted_ops(m);
        FAIL() << "a model of 7 coordinates was interpreted";
    } catch (const std::runtime_error& e) {
        const std::string w = e.what();
        EXPECT_HAS(w, "seven.toml");
        EXPECT_HAS(w, "7 coordinates and 1 constraints");
        EXPECT_HAS(w, "(3, 1)");
        EXPECT_HAS(w, "NHVK_INTERPRETED_SIZES");
    }
}

/** The largest difference of two recorded trajectories relative to max(1, |value|); +inf when their shapes differ. */
double max_difference(const nhvk::TrajectoryResult& a, const nhvk::TrajectoryResult& b) {
    if (a.rows != b.rows || a.row_size != b.row_size) return INFINITY;
    double worst = 0.0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(a.rows) * a.row_size; ++i) {
        const double d = std::fabs(a.states[i] - b.states[i]) / std::max(1.0, std::fabs(a.states[i]));
        worst = std::max(worst, d == d ? d : INFINITY);
    }
    return worst;
}

// Each size has slots; the ops of two models of one size must each make their own model the one the engine reads,
// whatever was called last (three models of (3, 1), called in turns).
TEST(Interpreted, ModelsOfOneSizeKeepTheirOwnEquations) {
    struct Case {
        std::string name;
        std::vector<double> q0, v0;
    };
    // constrained initial states: nh_particle ż = y ẋ, heisenberg ż = (x ẏ − y ẋ)/2, knife_edge ẋ sin φ = ẏ cos φ
    const std::vector<Case> cases = {{"nh_particle", {0.1, 0.5, 0.0}, {1.0, 0.3, 0.5}},
                                     {"heisenberg", {0.2, -0.4, 0.1}, {0.7, 0.2, 0.5 * (0.2 * 0.2 + 0.4 * 0.7)}},
                                     {"knife_edge", {0.0, 0.0, 0.6}, {std::cos(0.6), std::sin(0.6), 0.4}}};
    std::vector<nhvk::ModelOps> ops;
    for (const Case& c : cases) ops.push_back(interpreted_ops(load_model_file(model_path(c.name))));
    for (int round = 0; round < 2; ++round)
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const Case& c = cases[i];
            // the second round in single precision, whose charts and tolerances are the model's float ones
            const nhvk::Precision precision = round == 0 ? nhvk::Precision::f64 : nhvk::Precision::f32;
            SCOPED_TRACE(c.name + (round == 0 ? ", double" : ", float"));
            EXPECT_EQ(ops[i].info().name, c.name);
            const nhvk::ModelOps* builtin = nhvk::find_builtin_model_ops(c.name);
            ASSERT_NE(builtin, nullptr);
            nhvk::TrajectoryRequest req;
            req.model = c.name;
            req.params = [&] {
                std::vector<double> p;
                for (const nhvk::ParamInfo& pi : builtin->info().params) p.push_back(pi.default_value);
                return p;
            }();
            req.q0 = c.q0;
            req.v0 = c.v0;
            req.mu0 = {0.0};
            req.times = {0.25, 0.5, 1.0};
            req.equations = nhvk::EquationsKind::ad;
            req.precision = precision;
            req.ctl.rtol = precision == nhvk::Precision::f64 ? 1e-10 : 1e-6;
            const nhvk::TrajectoryResult a = builtin->trajectory_cpu(req);
            const nhvk::TrajectoryResult b = ops[i].trajectory_cpu(req);
            ASSERT_EQ(nhvk::status_name(a.outcome.status), std::string("ok"));
            EXPECT_EQ(nhvk::status_name(b.outcome.status), std::string("ok"));
            // NOTE: the same arithmetic as the built-in's reference equations up to the grouping of a few operations:
            // rounding of the precision, grown over a few hundred steps
            EXPECT_LT(max_difference(a, b), precision == nhvk::Precision::f64 ? 1e-12 : 1e-4);
            EXPECT_GT(a.rows, 3);
            EXPECT_NEAR(ops[i].constraint_violation(nullptr, c.q0.data(), c.v0.data(), 0.0), 0.0, 1e-15);
        }
}

// `nhvk inspect` of an interpreted model: the built-in's classification, the applied force included (the interpreted
// model declares a force slot for every model, and reports the file's).
TEST(Interpreted, ClassifiesAsTheBuiltInModel) {
    for (const std::string name : {"nh_particle", "ball_on_turntable", "rolling_disc"}) {
        SCOPED_TRACE(name);
        const nhvk::ModelOps* builtin = nhvk::find_builtin_model_ops(name);
        ASSERT_NE(builtin, nullptr);
        const nhvk::ModelOps ops = interpreted_ops(load_model_file(model_path(name)));
        const nhvk::Classification a = builtin->classify(nullptr);
        const nhvk::Classification b = ops.classify(nullptr);
        EXPECT_EQ(b.model, a.model);
        EXPECT_EQ(b.system.has_force, a.system.has_force);
        EXPECT_EQ(b.system.energy_conserved, a.system.energy_conserved);
        EXPECT_EQ(b.system.lagrangian_time_dependent, a.system.lagrangian_time_dependent);
        ASSERT_EQ(b.constraints.size(), a.constraints.size());
        for (std::size_t c = 0; c < a.constraints.size(); ++c) {
            EXPECT_EQ(b.constraints[c].homogeneous, a.constraints[c].homogeneous) << "constraint " << c;
            EXPECT_EQ(b.constraints[c].velocity, a.constraints[c].velocity) << "constraint " << c;
        }
        EXPECT_EQ(b.statements, a.statements);
    }
}

// `nhvk run` without a working compiler: it runs, says why on stderr (with -q too), integrates the reference
// equations on the CPU (auto) and says so in summary.json; the CUDA backend is refused with the reason.
TEST(Interpreted, ARunWithoutACompilerSaysSoAndRunsOnTheCpu) {
    const nhvk_test::TempDir dir;
    const nhvk_test::ScopedEnv cxx("NHVK_CXX", std::string("/nonexistent/c++"));
    const std::string config = std::string(NHVK_SOURCE_DIR) + "/configs/driven_rolling_disc.toml";
    const auto r = nhvk_test::run_captured(
        "", NHVK_BINARY, {"run", config, "--trajectories", "40", "--out", dir.str("out"), "-q"}, dir.path() / "io");
    ASSERT_EQ(r.rc, 0) << r.err;
    // the reason comes with the compiler's name (issue 38 item 15: why it does not run)
    const std::string why =
        "the C++ compiler '/nonexistent/c++' does not run (cannot start '/nonexistent/c++': No such file or directory)";
    EXPECT_HAS(r.err, why + ": interpreting model 'driven_rolling_disc'");
    const nlohmann::json j = nhvk_test::read_json(dir.path() / "out" / "summary.json");
    EXPECT_EQ(j["backend"], "cpu");
    EXPECT_EQ(j["equations"], "ad");
    EXPECT_EQ(j["model_file"]["path"], "interpreted");
    EXPECT_EQ(j["model_file"]["interpreted_because"], why);
    EXPECT_TRUE(j["model_file"]["artefact"].is_null());
    EXPECT_EQ(j["trajectories"]["requested"], 40);

    const auto c = nhvk_test::run_captured(
        "", NHVK_BINARY, {"run", config, "--backend", "cuda", "--out", dir.str("out_cuda")}, dir.path() / "io_cuda");
    EXPECT_NE(c.rc, 0);
    EXPECT_HAS(c.err, "is interpreted (" + why + "), which runs on the CPU only");
    EXPECT_FALSE(fs::exists(dir.path() / "out_cuda"));
}

} // namespace
