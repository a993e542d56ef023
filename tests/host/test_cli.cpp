// SPDX-License-Identifier: MIT
// The `nhvk` binary end to end: every shipped config runs, bad configs and command lines give the documented exit
// codes and messages and leave nothing behind, `nhvk trajectory` against a closed form, and the layout of the run
// outputs (summary.json, stats.csv, samples.csv, trajectories/).
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "config.hpp"
#include "ensemble.hpp"
#include "registry.hpp"

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY (the path of the built nhvk)"
#endif
#ifndef NHVK_SOURCE_DIR
#error "tests/CMakeLists.txt defines NHVK_SOURCE_DIR"
#endif

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------------------------
// helpers

/** A fresh per-test temporary folder (tests/temp_dir.hpp). */
struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_cli_") {}
};

using nhvk_test::CliRun;
using nhvk_test::read_text;
using nhvk_test::shell_quote;

/** Runs `nhvk ARGS...` with stdout and stderr captured into files of `tmp` (under io/, outside any --out). */
CliRun nhvk(const std::vector<std::string>& args, const TempDir& tmp) {
    return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
}

std::string fixture(const std::string& name) {
    return std::string(NHVK_SOURCE_DIR) + "/tests/host/data/ensemble/" + name;
}

using nhvk_test::read_json;

using nhvk_test::Csv;
using nhvk_test::parse_csv;
using nhvk_test::read_csv;

/** Every regular file under `dir` (relative paths), empty if `dir` does not exist. */
std::vector<std::string> files_under(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (!e.is_directory())
            out.push_back(fs::relative(e.path(), dir).string());
    std::sort(out.begin(), out.end());
    return out;
}

/** Nothing a run writes (summary.json, stats.csv, samples.csv, trajectories, *.tmp.*, the write probe) is under
 *  `tmp` outside io/. */
void expect_no_outputs(const TempDir& tmp, const std::string& what) {
    for (const std::string& f : files_under(tmp.path())) {
        if (f.rfind("io/", 0) == 0 || f == "file")
            continue;
        ADD_FAILURE() << what << ": left behind " << f;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// 6. Every config in configs/ loads and runs (small).

TEST(CliConfigs, EveryShippedConfigRunsSmall) {
    const fs::path dir = fs::path(NHVK_SOURCE_DIR) / "configs";
    std::vector<fs::path> configs;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".toml")
            configs.push_back(e.path());
    std::sort(configs.begin(), configs.end());
    ASSERT_FALSE(configs.empty()) << "no configs in " << dir;
    for (const fs::path& c : configs) {
        SCOPED_TRACE(c.string());
        // It loads in process (against the real registry) ...
        nhvk::RunConfig cfg;
        ASSERT_NO_THROW(cfg = nhvk::load_config(c.string(), {}, nhvk::model_registry()));
        // ... and runs through the binary with 20 trajectories and its own grid.
        TempDir tmp;
        const std::string out = tmp.str("out");
        const CliRun r =
            nhvk({"run", c.string(), "--trajectories", "20", "--out", out, "--backend", "auto", "-q"}, tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        const nlohmann::json j = read_json(fs::path(out) / "summary.json");
        EXPECT_EQ(j["model"]["name"], cfg.model.name);
        EXPECT_EQ(j["trajectories"]["requested"], 20);
        EXPECT_GT(j["trajectories"]["valid"].get<long long>(), 0);
        EXPECT_TRUE(fs::is_regular_file(fs::path(out) / "stats.csv"));
        // The nonholonomic energy balance E(t) − E(t0) − ∫(λ·(J·v) + F·v − ∂L/∂t) dt is at integration tolerance on
        // every catalogue model (issue 10 item 2), also on the affine ball_on_turntable, whose energy changes.
        const nlohmann::json& d = j["diagnostics"];
        EXPECT_FALSE(d["balance_flagged"].get<bool>()) << d["balance_max"];
        EXPECT_LT(d["balance_max"].get<double>(), 1e-7);
        if (cfg.model.name == "ball_on_turntable")
            EXPECT_GT(j["energy_drift"]["relative"]["max"]["nh"].get<double>(), 1e3 * d["balance_max"].get<double>());
        std::cout << "[ configs ] " << c.filename().string() << ": valid " << j["trajectories"]["valid"] << "/20, "
                  << "balance " << d["balance_max"] << ", " << j["timing"]["seconds"] << " s\n";
    }
}

// ---------------------------------------------------------------------------------------------------------------
// 7. Bad configs and bad command lines.

struct BadConfig {
    const char* file;
    int line;          ///< line of the offending key or value
    const char* key;   ///< dotted key named in the message ("" for a syntax error)
    const char* words; ///< a further substring the message must contain
};

const BadConfig bad_configs[] = {
    {"unknown_model.toml", 3, "model.name", "nh_partcle"},
    {"unknown_param.toml", 5, "model.params.radius", "radius"},
    {"negative_std.toml", 8, "initial.v.y.std", "-0.5"},
    {"malformed.toml", 6, "", ""},
};

class CliBadConfig : public ::testing::TestWithParam<int> {};

TEST_P(CliBadConfig, ExitsTwoNamingFileLineAndKeyAndWritesNothing) {
    const BadConfig& b = bad_configs[GetParam()];
    TempDir tmp;
    const CliRun r = nhvk({"run", fixture(b.file), "--out", tmp.str("out"), "--trajectories", "5"}, tmp);
    EXPECT_EQ(r.rc, nhvk::exit_usage) << r.err;
    EXPECT_EQ(r.rc, nhvk::config_error_exit_code);
    const std::string where = std::string(b.file) + ":" + std::to_string(b.line) + ":";
    EXPECT_NE(r.err.find(where), std::string::npos) << "expected '" << where << "' in: " << r.err;
    if (*b.key)
        EXPECT_NE(r.err.find(b.key), std::string::npos) << "expected key '" << b.key << "' in: " << r.err;
    if (*b.words)
        EXPECT_NE(r.err.find(b.words), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    expect_no_outputs(tmp, b.file);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CliBadConfig, ::testing::Range(0, static_cast<int>(std::size(bad_configs))),
                         [](const ::testing::TestParamInfo<int>& p) {
                             std::string n = bad_configs[p.param].file;
                             return n.substr(0, n.find('.'));
                         });

TEST(CliBadConfig, UnknownModelListsTheKnownOnes) {
    TempDir tmp;
    const CliRun r = nhvk({"run", fixture("unknown_model.toml"), "--out", tmp.str("out")}, tmp);
    EXPECT_EQ(r.rc, nhvk::exit_usage);
    for (const nhvk::ModelInfo& m : nhvk::model_registry())
        EXPECT_NE(r.err.find(m.name), std::string::npos) << m.name << " not listed in: " << r.err;
}

// run.out under a regular file cannot be created. That is an I/O failure, which cli_common.hpp documents as exit
// code 1 (exit_runtime), not a config error: the key exists and has a valid value. The message names the key and
// the path; there is no file:line because the folder, not the config, is at fault (the value may come from --out).
TEST(CliBadConfig, UnwritableOutputFolderExitsOneAndWritesNothing) {
    TempDir tmp;
    const fs::path file = tmp.path() / "file";
    std::ofstream(file) << "not a folder\n";
    for (const std::string& out : {(file / "sub").string(), file.string()}) {
        SCOPED_TRACE(out);
        const CliRun r = nhvk({"run", fixture("small.toml"), "--out", out, "--trajectories", "5"}, tmp);
        EXPECT_EQ(r.rc, nhvk::exit_runtime) << r.err;
        EXPECT_NE(r.err.find("run.out"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(out), std::string::npos) << r.err;
        EXPECT_TRUE(fs::is_regular_file(file));
        EXPECT_EQ(read_text(file), "not a folder\n");
        expect_no_outputs(tmp, out);
    }
}

struct BadCommandLine {
    const char* name;
    std::vector<std::string> args; ///< after "run small.toml --out DIR" unless `bare`
    bool bare;                     ///< args are the whole command line (no config, no --out)
    const char* words;             ///< the message must contain this
};

const BadCommandLine bad_command_lines[] = {
    {"missing_config", {"run", "/nonexistent/nhvk/config.toml"}, true, "cannot open config"},
    {"zero_trajectories", {"--trajectories", "0"}, false, "run.trajectories"},
    {"negative_trajectories", {"--trajectories", "-3"}, false, "run.trajectories"},
    {"bad_backend", {"--backend", "gpu"}, false, "run.backend"},
    {"bad_threads", {"--threads", "many"}, false, "run.threads"},
    {"bad_chunk", {"--chunk", "0"}, false, "run.chunk"},
    {"bad_set_key", {"--set", "integrator.rtoll=1e-8"}, false, "integrator.rtoll"},
    {"bad_set_value", {"--set", "integrator.rtol=-1e-8"}, false, "integrator.rtol"},
    {"bad_set_syntax", {"--set", "integrator.rtol"}, false, "integrator.rtol"},
    {"unknown_option", {"--frobnicate"}, false, "frobnicate"},
    // issue 7: an option's error names the option as typed; an empty value is an error, not the default
    {"seed_names_the_option", {"--seed", "-1"}, false, "--seed: run.seed: expected an integer >= 0, got -1"},
    {"threads_names_the_option", {"--threads", "many"}, false, "--threads: run.threads: expected an integer"},
    {"empty_seed", {"--seed", ""}, false, "--seed: expected a non-empty value"},
    {"empty_backend", {"--backend", ""}, false, "--backend: expected a non-empty value"},
    {"empty_out", {"run", fixture("small.toml"), "--out", ""}, true, "--out: expected a non-empty value"},
    {"set_rk4_steps_beyond_max_steps",
     {"--set", "integrator.method=\"rk4\"", "--set", "integrator.dt=1e-300"},
     false,
     "integrator.dt: expected a step that reaches the last output time within integrator.max_steps"},
    {"set_atol_zero", {"--set", "integrator.atol=0"}, false, "integrator.atol: expected a number > 0"},
    {"memory_beyond_the_machine", {"--set", "times.count=1000000"}, false, "MiB of memory of this machine"},
    {"unknown_subcommand", {"frobnicate"}, true, "subcommand"},
    {"no_subcommand", {}, true, "subcommand"},
};

class CliBadCommandLine : public ::testing::TestWithParam<int> {};

TEST_P(CliBadCommandLine, ExitsTwoWithAMessageAndWritesNothing) {
    const BadCommandLine& b = bad_command_lines[GetParam()];
    TempDir tmp;
    std::vector<std::string> args = b.args;
    if (!b.bare) {
        args = {"run", fixture("small.toml"), "--out", tmp.str("out")};
        args.insert(args.end(), b.args.begin(), b.args.end());
    }
    const CliRun r = nhvk(args, tmp);
    EXPECT_EQ(r.rc, nhvk::exit_usage) << r.err;
    EXPECT_NE(r.err.find(b.words), std::string::npos) << "expected '" << b.words << "' in: " << r.err;
    expect_no_outputs(tmp, b.name);
}

INSTANTIATE_TEST_SUITE_P(Cases, CliBadCommandLine, ::testing::Range(0, static_cast<int>(std::size(bad_command_lines))),
                         [](const ::testing::TestParamInfo<int>& p) {
                             return std::string(bad_command_lines[p.param].name);
                         });

// `nhvk trajectory` refuses what `nhvk run` refuses (issue 7 item 2), naming the option: each case is a good command
// line plus one bad option, and exits 2 with nothing on stdout.
struct BadTrajectoryOption {
    const char* name;
    std::vector<std::string> extra;
    const char* words;
};

const BadTrajectoryOption bad_trajectory_options[] = {
    {"t_end_infinite", {"--t-end", "inf"}, "--t-end: expected a finite time"},
    {"t0_nan", {"--t0", "nan"}, "--t0: expected a finite number"},
    {"rtol_infinite", {"--rtol", "inf"}, "--rtol: expected a number > 0"},
    {"rtol_below_float", {"--precision", "float", "--rtol", "1e-10"}, "--rtol: expected rtol >= "},
    {"atol_zero", {"--atol", "0"}, "--atol: expected a number > 0"},
    {"max_steps_zero", {"--max-steps", "0"}, "--max-steps: expected an integer >= 1, got 0"},
    {"rk4_steps_overflow", {"--method", "rk4", "--dt", "1e-300"}, "--dt: expected a step that reaches"},
    {"constraint_tol_negative", {"--constraint-tol", "-1"}, "--constraint-tol: expected a finite number >= 0"},
    {"constraint_tol_nan", {"--constraint-tol", "nan"}, "--constraint-tol: expected a finite number >= 0"},
    {"times_count_overflow", {"--times", "99999999999"}, "--times: expected a count in [1, 1000000]"},
    {"mu0_empty", {"--mu0", ""}, "--mu0: expected a non-empty value"},
};

class CliBadTrajectoryOption : public ::testing::TestWithParam<int> {};

TEST_P(CliBadTrajectoryOption, ExitsTwoNamingTheOption) {
    const BadTrajectoryOption& b = bad_trajectory_options[GetParam()];
    TempDir tmp;
    std::vector<std::string> args = {"trajectory", "--model", "nh_particle", "--q0",    "0,0.5,0", "--v0",
                                     "1,0.7,0.5",  "--t-end", "1",           "--times", "4"};
    for (const std::string& a : b.extra) {
        // an option given twice would be refused by CLI11 for that reason alone: replace the default ones
        const auto it = std::find(args.begin(), args.end(), a);
        if (a.rfind("--", 0) == 0 && it != args.end())
            args.erase(it, it + 2);
    }
    args.insert(args.end(), b.extra.begin(), b.extra.end());
    const CliRun r = nhvk(args, tmp);
    EXPECT_EQ(r.rc, nhvk::exit_usage) << r.err;
    EXPECT_NE(r.err.find(b.words), std::string::npos) << "expected '" << b.words << "' in: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Cases, CliBadTrajectoryOption,
                         ::testing::Range(0, static_cast<int>(std::size(bad_trajectory_options))),
                         [](const ::testing::TestParamInfo<int>& p) {
                             return std::string(bad_trajectory_options[p.param].name);
                         });

// Parameter ranges (declared with each model's parameters) hold for `trajectory` and `run` alike; the control: the
// same command with a mass in range runs.
TEST(CliParameterRanges, NegativeMassIsRefusedByBothCommands) {
    TempDir tmp;
    // rolling_disc (R = 0.5): ẋ = R θ̇ cos φ, ẏ = R θ̇ sin φ hold for q0 = 0, v0 = (0.5, 0, 1, 0)
    const std::vector<std::string> traj = {"trajectory", "--model", "rolling_disc", "--q0",    "0,0,0,0", "--v0",
                                           "0.5,0,1,0",  "--t-end", "0.1",          "--times", "2",       "--param"};
    auto with_param = [&](const std::string& p) {
        auto a = traj;
        a.push_back(p);
        return a;
    };
    const CliRun bad = nhvk(with_param("m=-1"), tmp);
    EXPECT_EQ(bad.rc, nhvk::exit_usage) << bad.err;
    EXPECT_NE(bad.err.find("--param m=-1: expected a number > 0"), std::string::npos) << bad.err;
    const CliRun ok = nhvk(with_param("m=2"), tmp);
    EXPECT_EQ(ok.rc, nhvk::exit_ok) << ok.err;

    const CliRun run = nhvk({"run", NHVK_SOURCE_DIR "/configs/rolling_disc.toml", "--out", tmp.str("out"), "--set",
                             "model.params.R=0", "--trajectories", "2"},
                            tmp);
    EXPECT_EQ(run.rc, nhvk::exit_usage) << run.err;
    EXPECT_NE(run.err.find("model.params.R: expected a number > 0"), std::string::npos) << run.err;
    expect_no_outputs(tmp, "run with R = 0");
}

// `--out` takes the path as typed: quotes, backslashes and '=' are folder-name characters, not TOML.
TEST(CliRunOptions, OutTakesAnyPathLiterally) {
    TempDir tmp;
    const std::string out = tmp.str("we\"ird\\dir = x'");
    const CliRun r = nhvk({"run", fixture("small.toml"), "--out", out, "--trajectories", "4", "-q"}, tmp);
    ASSERT_EQ(r.rc, nhvk::exit_ok) << r.err;
    EXPECT_TRUE(fs::exists(fs::path(out) / "summary.json"));
    EXPECT_EQ(read_json(fs::path(out) / "summary.json")["config"]["run"]["out"], out);
}

// A thread count above the cores is lowered to them (said on stderr and in summary.json), not attempted.
TEST(CliRunOptions, ThreadsAboveTheCoresAreLoweredToThem) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    const CliRun r =
        nhvk({"run", fixture("small.toml"), "--out", out, "--threads", "65536", "--trajectories", "4"}, tmp);
    ASSERT_EQ(r.rc, nhvk::exit_ok) << r.err;
    const int threads = read_json(fs::path(out) / "summary.json")["threads"].get<int>();
    EXPECT_GE(threads, 1);
    EXPECT_LE(threads, static_cast<int>(sysconf(_SC_NPROCESSORS_CONF)));
    EXPECT_NE(r.err.find("run.threads = 65536 is more than the"), std::string::npos) << r.err;
}

// `nhvk trajectory`: a v0 off the constraint set is a usage error (exit 2), nothing on stdout.
TEST(CliTrajectory, VelocityViolatingTheConstraintsExitsTwo) {
    TempDir tmp;
    // nh_particle: ż = y ẋ requires ż = 0.5 here.
    const CliRun r =
        nhvk({"trajectory", "--model", "nh_particle", "--q0", "0,0.5,0", "--v0", "1,0.7,0", "--t-end", "1"}, tmp);
    EXPECT_EQ(r.rc, nhvk::exit_usage) << r.err;
    EXPECT_NE(r.err.find("--v0"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    // ... and the same state on the constraint set is accepted.
    const CliRun ok = nhvk({"trajectory", "--model", "nh_particle", "--q0", "0,0.5,0", "--v0", "1,0.7,0.5", "--t-end",
                            "1", "--times", "2"},
                           tmp);
    EXPECT_EQ(ok.rc, nhvk::exit_ok) << ok.err;
}

// parallel_velocities with ṗ1 vertical: the model's two-equation chart vanishes for every ṗ2, so the residual of φ
// is 0 although ṗ1 ⟂ ṗ2 (issue 7): the source's ṗ1 × ṗ2 = 0 is checked too, a usage error (exit 2) naming --v0.
TEST(CliTrajectory, VelocityBreakingTheSourceConstraintsExitsTwo) {
    TempDir tmp;
    const CliRun r = nhvk(
        {"trajectory", "--model", "parallel_velocities", "--q0", "0,0,0,1,0,0", "--v0", "0,0,1,1,0,0", "--t-end", "1"},
        tmp);
    EXPECT_EQ(r.rc, nhvk::exit_usage) << r.err;
    EXPECT_NE(r.err.find("--v0"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("source"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    // Parallel and vertical: the source holds, but the state is outside the chart: chart_singular at t0.
    const CliRun c = nhvk(
        {"trajectory", "--model", "parallel_velocities", "--q0", "0,0,0,1,0,0", "--v0", "0,0,1,0,0,2", "--t-end", "1"},
        tmp);
    EXPECT_EQ(c.rc, nhvk::exit_integration) << c.err;
    EXPECT_NE(c.err.find("chart_singular"), std::string::npos) << c.err;
}

// No trajectory can stall a job: a vakonomic μ0 of 1e10 makes nh_particle's vakonomic motion turn ~10^10 times per
// second. With the default budget (100000 + 1000 per output time, README) it ends with step_limit after
// 104000 steps (a few tens of ms) instead of 10^7 steps (~3 s); the message names the limit.
TEST(CliTrajectory, StiffTrajectoryStopsAtTheDefaultStepBudget) {
    TempDir tmp;
    const CliRun r = nhvk({"trajectory", "--model", "nh_particle", "--q0", "0,0,0", "--v0", "1,1,0", "--mu0", "1e10",
                           "--t-end", "1", "--times", "4"},
                          tmp);
    EXPECT_EQ(r.rc, nhvk::exit_integration) << r.err;
    EXPECT_NE(r.err.find("step_limit in the vakonomic dynamics"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("max_steps = " + std::to_string(100000 + 1000 * 4)), std::string::npos) << r.err;
    // an explicit --max-steps is the limit
    const CliRun e = nhvk({"trajectory", "--model", "nh_particle", "--q0", "0,0,0", "--v0", "1,1,0", "--mu0", "1e10",
                           "--t-end", "1", "--max-steps", "500"},
                          tmp);
    EXPECT_NE(e.err.find("max_steps = 500"), std::string::npos) << e.err;
}

// A failed write to standard output (here /dev/full: every write fails with ENOSPC) is an error with a message and
// exit code 1, not a silent success; `nhvk models` likewise. The same commands to a file succeed (the control).
TEST(CliOutput, FailedWriteToStandardOutputExitsOne) {
    if (!fs::exists("/dev/full"))
        GTEST_SKIP() << "no /dev/full on this system";
    TempDir tmp;
    const std::vector<std::vector<std::string>> commands = {
        {"trajectory", "--model", "nh_particle", "--q0", "0,0.5,0", "--v0", "1,0.7,0.5", "--t-end", "1", "--times",
         "200"},
        {"models"}};
    for (const std::vector<std::string>& args : commands) {
        SCOPED_TRACE(args[0]);
        std::string cmd = shell_quote(NHVK_BINARY);
        for (const std::string& a : args)
            cmd += " " + shell_quote(a);
        const std::string e = tmp.str("stderr.txt");
        const int st = std::system((cmd + " >/dev/full 2>" + shell_quote(e) + " </dev/null").c_str());
        ASSERT_TRUE(st != -1 && WIFEXITED(st));
        EXPECT_EQ(WEXITSTATUS(st), nhvk::exit_runtime);
        const std::string err = read_text(e);
        EXPECT_NE(err.find("cannot write to standard output"), std::string::npos) << err;
        EXPECT_NE(err.find(std::strerror(ENOSPC)), std::string::npos) << err; // the reason, as the house rules ask
        const CliRun ok = nhvk(args, tmp);
        EXPECT_EQ(ok.rc, nhvk::exit_ok) << ok.err;
        EXPECT_FALSE(ok.out.empty());
    }
}

TEST(CliTrajectory, UnknownModelExitsTwoListingTheKnownOnes) {
    TempDir tmp;
    const CliRun r =
        nhvk({"trajectory", "--model", "nh_partcle", "--q0", "0,0,0", "--v0", "0,0,0", "--t-end", "1"}, tmp);
    EXPECT_EQ(r.rc, nhvk::exit_usage);
    for (const nhvk::ModelInfo& m : nhvk::model_registry())
        EXPECT_NE(r.err.find(m.name), std::string::npos) << m.name << " not listed in: " << r.err;
}

// Issue 2's acceptance: the nonholonomic particle against its closed form (docs/models.md):
// y = y0 + ẏ0 t, x = x0 + (C/ẏ0)(asinh y − asinh y0), z = z0 + (C/ẏ0)(√(1+y²) − √(1+y0²)), C = ẋ0 √(1+y0²).
TEST(CliTrajectory, NhParticleMatchesTheClosedForm) {
    TempDir tmp;
    const CliRun r = nhvk({"trajectory", "--model", "nh_particle", "--q0", "0,0.5,0", "--v0", "1,0.7,0.5", "--t-end",
                           "5", "--method", "dopri5", "--rtol", "1e-12", "--atol", "1e-14"},
                          tmp);
    ASSERT_EQ(r.rc, nhvk::exit_ok) << r.err;
    const Csv csv = parse_csv(r.out);
    ASSERT_GE(csv.rows.size(), 2u);
    const std::size_t last = csv.rows.size() - 1;
    const double t = std::stod(csv.at(last, "t"));
    EXPECT_EQ(t, 5.0);
    const double x0 = 0.0, y0 = 0.5, z0 = 0.0, xd0 = 1.0, yd0 = 0.7;
    const double C = xd0 * std::sqrt(1.0 + y0 * y0);
    const double y = y0 + yd0 * t;
    const double x = x0 + C / yd0 * (std::asinh(y) - std::asinh(y0));
    const double z = z0 + C / yd0 * (std::sqrt(1.0 + y * y) - std::sqrt(1.0 + y0 * y0));
    const double xn = std::stod(csv.at(last, "nh_q0")), yn = std::stod(csv.at(last, "nh_q1")),
                 zn = std::stod(csv.at(last, "nh_q2"));
    std::cout << "[ closed form ] t = 5: |dx| = " << std::fabs(xn - x) << ", |dy| = " << std::fabs(yn - y)
              << ", |dz| = " << std::fabs(zn - z) << "\n";
    EXPECT_NEAR(xn, x, 1e-9);
    EXPECT_NEAR(yn, y, 1e-9);
    EXPECT_NEAR(zn, z, 1e-9);
}

// ---------------------------------------------------------------------------------------------------------------
// 9. The outputs of `nhvk run`.

const char* const series_fields[] = {"mean", "std", "min", "max", "p01",   "p05",          "p25",
                                     "p50",  "p75", "p95", "p99", "count", "outside_range"};

TEST(CliRunOutputs, SummaryJsonHasEveryDocumentedField) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    const CliRun r = nhvk({"run", fixture("small.toml"), "--out", out, "--backend", "cpu", "-q"}, tmp);
    ASSERT_EQ(r.rc, nhvk::exit_ok) << r.err;
    const nlohmann::json j = read_json(fs::path(out) / "summary.json");

    ASSERT_TRUE(j.contains("schema"));
    EXPECT_TRUE(j["schema"].is_string() && !j["schema"].get<std::string>().empty());
    EXPECT_EQ(j["model"]["name"], "nh_particle");
    EXPECT_TRUE(j["model"]["params"].is_object());
    const nlohmann::json& tr = j["trajectories"];
    EXPECT_EQ(tr["requested"], 40);
    ASSERT_TRUE(tr["valid"].is_number_unsigned());
    ASSERT_TRUE(tr["failed"].is_object());
    ASSERT_TRUE(tr["failed"]["by_status"].is_object());
    for (int s = 1; s < nhvk::status_count; ++s)
        EXPECT_TRUE(tr["failed"]["by_status"].contains(nhvk::status_name(static_cast<nhvk::Status>(s))))
            << nhvk::status_name(static_cast<nhvk::Status>(s));
    EXPECT_FALSE(tr["failed"]["by_status"].contains("ok"));
    // the limits this run applied, and the failures per dynamics and status (which dynamics hit which limit)
    EXPECT_EQ(tr["limits"]["max_steps"], 100000 + 1000 * 12); // the default rule, 12 output times
    EXPECT_TRUE(tr["limits"]["min_step"].is_number());
    for (const char* d : {"nonholonomic", "vakonomic"})
        for (int s = 1; s < nhvk::status_count; ++s)
            EXPECT_TRUE(tr["failed"]["by_dynamics_status"][d].contains(nhvk::status_name(static_cast<nhvk::Status>(s))))
                << d;

    ASSERT_TRUE(j["times"].is_array());
    const std::size_t nt = j["times"].size();
    EXPECT_EQ(nt, 12u);
    for (std::size_t i = 1; i < nt; ++i)
        EXPECT_LT(j["times"][i - 1].get<double>(), j["times"][i].get<double>());
    EXPECT_EQ(j["times"][nt - 1].get<double>(), 1.0);
    EXPECT_EQ(j["times"][0].get<double>(), 1e-3);

    for (const char* d : {"q", "v"}) {
        const nlohmann::json& s = j["divergence"][d];
        ASSERT_TRUE(s.is_object()) << d;
        for (const char* f : series_fields) {
            ASSERT_TRUE(s.contains(f)) << "divergence." << d << "." << f;
            ASSERT_TRUE(s[f].is_array()) << "divergence." << d << "." << f;
            EXPECT_EQ(s[f].size(), nt) << "divergence." << d << "." << f;
            for (const auto& x : s[f])
                EXPECT_TRUE(x.is_number()) << "divergence." << d << "." << f;
        }
        // quantiles ordered, inside [min, max]
        for (std::size_t i = 0; i < nt; ++i) {
            double prev = s["min"][i].get<double>();
            for (const char* f : {"p01", "p05", "p25", "p50", "p75", "p95", "p99", "max"}) {
                EXPECT_LE(prev, s[f][i].get<double>()) << d << " " << f << " at " << i;
                prev = s[f][i].get<double>();
            }
        }
    }
    EXPECT_TRUE(j["growth_exponent"]["q"].is_number());
    EXPECT_TRUE(j["constraint_residual"]["max"]["nh"].is_number());
    EXPECT_TRUE(j["constraint_residual"]["max"]["vk"].is_number());
    EXPECT_LT(j["constraint_residual"]["max"]["nh"].get<double>(), 1e-6);
    EXPECT_TRUE(j.contains("energy_drift"));
    EXPECT_TRUE(j["energy_drift"]["nh"]["max"].is_array());
    EXPECT_EQ(j["backend"], "cpu");
    EXPECT_TRUE(j["timing"]["seconds"].is_number());
    EXPECT_GE(j["timing"]["seconds"].get<double>(), 0.0);
    ASSERT_TRUE(j["config"].is_object());
    EXPECT_EQ(j["config"]["model"]["name"], "nh_particle");
    EXPECT_EQ(j["config"]["run"]["trajectories"], 40);
    EXPECT_EQ(j["config"]["run"]["out"], out) << "the resolved config records the --out override";

    // stats.csv: one row per output time and metric, times as in summary.json, d_q consistent with it.
    const Csv csv = read_csv(fs::path(out) / "stats.csv");
    ASSERT_EQ(csv.rows.size(), nt * nhvk::metric_count);
    EXPECT_TRUE(j["statistics"]["histogram_range"].is_array());
    EXPECT_TRUE(j["statistics"]["values_outside_range"].is_number_unsigned());
    for (const char* c : {"time_index", "t", "metric", "count", "mean", "std", "min", "max", "p01", "p05", "p25", "p50",
                          "p75", "p95", "p99", "outside_range"})
        EXPECT_TRUE(csv.col.count(c)) << "stats.csv lacks column " << c;
    std::set<std::pair<std::size_t, std::string>> seen;
    for (std::size_t r = 0; r < csv.rows.size(); ++r) {
        const std::size_t i = std::stoul(csv.at(r, "time_index"));
        ASSERT_LT(i, nt);
        EXPECT_TRUE(seen.emplace(i, csv.at(r, "metric")).second) << "duplicate row " << i << " " << csv.at(r, "metric");
        EXPECT_EQ(std::stod(csv.at(r, "t")), j["times"][i].get<double>());
        if (csv.at(r, "metric") == "d_q") {
            EXPECT_EQ(std::stod(csv.at(r, "mean")), j["divergence"]["q"]["mean"][i].get<double>());
            EXPECT_EQ(std::stod(csv.at(r, "p50")), j["divergence"]["q"]["p50"][i].get<double>());
        }
    }
    for (int m = 0; m < nhvk::metric_count; ++m)
        for (std::size_t i = 0; i < nt; ++i)
            EXPECT_TRUE(seen.count({i, nhvk::metric_name(m)})) << "missing row " << i << " " << nhvk::metric_name(m);
    // no samples.csv, no trajectories/ unless asked for
    EXPECT_FALSE(fs::exists(fs::path(out) / "samples.csv"));
    EXPECT_FALSE(fs::exists(fs::path(out) / "trajectories"));
    for (const std::string& f : files_under(out))
        EXPECT_EQ(f.find(".tmp."), std::string::npos) << f;
}

/** Runs small.toml with --save-samples --save-trajectories 2 (plus `extra`), and checks that the last row of each
 *  saved trajectory carries the member's final d_q from samples.csv, and its first row the member's initial state. */
void check_saved_trajectories(const std::vector<std::string>& extra) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    std::vector<std::string> args = {
        "run", fixture("small.toml"), "--out", out, "--backend", "cpu", "-q", "--save-samples", "--save-trajectories",
        "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliRun r = nhvk(args, tmp);
    ASSERT_EQ(r.rc, nhvk::exit_ok) << r.err;
    const Csv samples = read_csv(fs::path(out) / "samples.csv");
    ASSERT_EQ(samples.rows.size(), 40u);
    const std::vector<std::string> files = files_under(fs::path(out) / "trajectories");
    ASSERT_EQ(files, (std::vector<std::string>{"trajectory_000000.csv", "trajectory_000001.csv"}));
    for (std::size_t g = 0; g < 2; ++g) {
        SCOPED_TRACE("member " + std::to_string(g));
        ASSERT_EQ(samples.at(g, "status"), "ok");
        const Csv tr = read_csv(fs::path(out) / "trajectories" / files[g]);
        ASSERT_EQ(tr.rows.size(), 13u); // t0 and the 12 output times
        EXPECT_EQ(std::stod(tr.at(0, "t")), 0.0);
        EXPECT_EQ(std::stod(tr.at(12, "t")), 1.0);
        const char* coords[] = {"x", "y", "z"};
        for (int c = 0; c < 3; ++c) {
            EXPECT_EQ(std::stod(tr.at(0, "nh_q" + std::to_string(c))),
                      std::stod(samples.at(g, std::string("q0_") + coords[c])));
            EXPECT_EQ(std::stod(tr.at(0, "nh_v" + std::to_string(c))),
                      std::stod(samples.at(g, std::string("v0_") + coords[c])));
        }
        EXPECT_EQ(std::stod(tr.at(0, "vk_mu0")), std::stod(samples.at(g, "mu0_0")));
        const double dq_traj = std::stod(tr.at(12, "d_q")), dq_member = std::stod(samples.at(g, "d_q_final"));
        EXPECT_GT(dq_member, 0.0);
        EXPECT_EQ(dq_traj, dq_member) << "saved trajectory's final d_q vs the ensemble member's";
        EXPECT_EQ(std::stod(tr.at(12, "d_v")), std::stod(samples.at(g, "d_v_final")));
    }
}

TEST(CliRunOutputs, SavedTrajectoriesEndAtTheMembersFinalDivergence) {
    check_saved_trajectories({});
}

// The same with a divergence over a subset of the coordinates: d_q of the saved trajectory must be the run's d_q
// (divergence.coordinates), not the distance over all coordinates.
TEST(CliRunOutputs, SavedTrajectoriesUseTheConfiguredDivergenceCoordinates) {
    check_saved_trajectories({"--set", "divergence.coordinates=[\"x\", \"y\"]"});
}

// 1. through the command line: --threads and --chunk change nothing in the outputs but timing, threads and the
// resolved config (which records them); likewise in histogram mode (--set run.exact_memory_mb=0).
TEST(CliRunOutputs, SameSeedGivesIdenticalOutputsForAnyThreadsAndChunks) {
    TempDir tmp;
    auto run = [&](const std::string& name, const std::vector<std::string>& extra) {
        std::vector<std::string> args = {"run", fixture("small.toml"), "--out", tmp.str(name), "--backend", "cpu",
                                         "-q"};
        args.insert(args.end(), extra.begin(), extra.end());
        const CliRun r = nhvk(args, tmp);
        EXPECT_EQ(r.rc, nhvk::exit_ok) << name << ": " << r.err;
        nlohmann::json j = read_json(fs::path(tmp.str(name)) / "summary.json");
        j.erase("timing");
        j.erase("threads");
        j.erase("config");
        return std::make_pair(j, read_text(fs::path(tmp.str(name)) / "stats.csv"));
    };
    for (const bool histogram : {false, true}) {
        const std::vector<std::string> mode =
            histogram ? std::vector<std::string>{"--set", "run.exact_memory_mb=0"} : std::vector<std::string>{};
        const std::string h = histogram ? "_h" : "";
        auto with = [&](std::vector<std::string> v) {
            v.insert(v.end(), mode.begin(), mode.end());
            return v;
        };
        const auto ref = run("t1_c1000" + h, with({"--threads", "1", "--chunk", "1000"}));
        EXPECT_EQ(ref.first["statistics"]["quantiles"], histogram ? "histogram" : "exact");
        EXPECT_GT(ref.first["trajectories"]["valid"].get<int>(), 0);
        for (const auto& [name, extra] : std::vector<std::pair<std::string, std::vector<std::string>>>{
                 {"t4_c7", {"--threads", "4", "--chunk", "7"}}, {"t2_c1", {"--threads", "2", "--chunk", "1"}}}) {
            const auto other = run(name + h, with(extra));
            EXPECT_EQ(other.first, ref.first) << name << h;
            EXPECT_EQ(other.second, ref.second) << name << h;
        }
    }
}

// An unreachable energy shell: every member is counted as energy_unreachable, summary.json is still written, and the
// exit code is 4 (no valid trajectory).
TEST(CliRunOutputs, UnreachableEnergyShellIsCountedAndExitsFour) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    const CliRun r = nhvk({"run", fixture("small.toml"), "--out", out, "--set", "initial.energy=-1.0", "-q"}, tmp);
    EXPECT_EQ(r.rc, nhvk::exit_no_valid) << r.err;
    EXPECT_NE(r.err.find("no valid trajectory"), std::string::npos) << r.err;
    const nlohmann::json j = read_json(fs::path(out) / "summary.json");
    EXPECT_EQ(j["trajectories"]["requested"], 40);
    EXPECT_EQ(j["trajectories"]["valid"], 0);
    EXPECT_EQ(j["trajectories"]["failed"]["sampling"]["energy_unreachable"], 40);
}

} // namespace

namespace {
// The growth exponent's flag (issue 10 item 4): the holonomic sphere's divergence is rounding noise
// (docs/physics.md §4.1: both dynamics coincide), so its exponent is flagged; a nonholonomic particle's t^3
// growth is not, and its fit is tight (docs/physics.md §4.2: exponent 3 for mu0 = 0).
TEST(CliGrowth, ExponentAtRoundingLevelIsFlagged) {
    TempDir tmp;
    for (const std::string model : {"sphere_holonomic", "nh_particle"}) {
        const std::string out = tmp.str(model);
        const std::string md_copy = tmp.str(model + "_notebook.md");
        const CliRun r = nhvk({"run", std::string(NHVK_SOURCE_DIR) + "/configs/" + model + ".toml", "--trajectories",
                               "200", "--out", out, "--summary-md", md_copy},
                              tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        const nlohmann::json g = read_json(fs::path(out) / "summary.json")["growth_exponent"];
        const bool noise = model == "sphere_holonomic";
        EXPECT_EQ(g["at_rounding_level"], noise) << model;
        EXPECT_EQ(r.err.find("at rounding level") != std::string::npos, noise) << r.err;
        // summary.md (and its copy): the counts, the exponent with 4 digits, the flag, the final median d_q
        const std::string md = read_text(fs::path(out) / "summary.md");
        EXPECT_EQ(md, read_text(md_copy));
        EXPECT_NE(md.find("### nhvk run: " + model), std::string::npos) << md;
        EXPECT_NE(md.find("200 requested, 200 valid, 0 failed"), std::string::npos) << md;
        std::ostringstream p;
        p << std::setprecision(4) << g["q"].get<double>();
        EXPECT_NE(md.find("d_q (t ≤ " ), std::string::npos) << md;
        EXPECT_NE(md.find("): " + p.str()), std::string::npos) << p.str() << "\n" << md;
        EXPECT_EQ(md.find("at rounding level") != std::string::npos, noise) << md;
        const nlohmann::json s = read_json(fs::path(out) / "summary.json");
        std::ostringstream last;
        last << std::setprecision(4) << s["divergence"]["q"]["p50"].back().get<double>();
        EXPECT_NE(md.find("| " + last.str() + " |"), std::string::npos) << last.str() << "\n" << md;
        if (!noise) {
            EXPECT_NEAR(g["q"].get<double>(), 3.0, 0.02);
            EXPECT_GT(g["fit"]["q"]["r_squared"].get<double>(), 0.999);
            EXPECT_LT(g["fit"]["q"]["ci95"][0].get<double>(), g["q"].get<double>());
            EXPECT_GT(g["fit"]["q"]["ci95"][1].get<double>(), g["q"].get<double>());
        }
    }
}
} // namespace

namespace {
std::string config_path(const std::string& model) { return std::string(NHVK_SOURCE_DIR) + "/configs/" + model + ".toml"; }

// The energy balance (issue 10 item 2): at integration tolerance with the default settings; flagged, on stderr, in
// summary.json and in summary.md, when the tolerance is loose and nothing projects the motion back.
TEST(CliDiagnostics, EnergyBalanceFlaggedOnlyWhenTheIntegrationIsLoose) {
    TempDir tmp;
    for (const bool loose : {false, true}) {
        const std::string out = tmp.str(loose ? "loose" : "tight");
        // knife_edge on its incline: DOPRI5's steps follow the tolerance (nh_particle's are set by the output grid)
        std::vector<std::string> args = {"run", config_path("knife_edge"), "--trajectories", "100", "--out", out};
        if (loose)
            for (const char* s : {"integrator.rtol=1e-4", "integrator.atol=1e-4", "integrator.project=false"})
                args.insert(args.end(), {"--set", s});
        const CliRun r = nhvk(args, tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        const nlohmann::json d = read_json(fs::path(out) / "summary.json")["diagnostics"];
        EXPECT_EQ(d["balance_flagged"], loose) << d.dump();
        EXPECT_EQ(d["balance_tolerance"], 1e-6);
        if (loose) {
            EXPECT_GT(d["balance_max"].get<double>(), 1e-4);
        } else {
            EXPECT_LT(d["balance_max"].get<double>(), 1e-8);
            // the knife edge's constraint is linear and homogeneous: the reactions do no work (J·v = φ = 0)
            for (const char* f : {"min", "max"})
                for (const auto& x : d["reaction_work_nh"][f]) EXPECT_LT(std::fabs(x.get<double>()), 1e-9) << f;
        }
        EXPECT_EQ(r.err.find("WARNING: above diagnostics.balance_tolerance") != std::string::npos, loose) << r.err;
        const std::string md = read_text(fs::path(out) / "summary.md");
        EXPECT_EQ(md.find("above diagnostics.balance_tolerance") != std::string::npos, loose) << md;
    }
}

// Per-time statistics over the members alive at each time (issue 10 item 4): the count at output time i is the
// number of sampled members that are valid or failed after reaching t_i, recounted here from samples.csv; with
// population = "survivors" every count is the valid count. The onset quantiles are those of samples.csv's
// interpolated onset times (type 7), which are not snapped to the output grid.
TEST(CliStatistics, AlivePopulationCountsEachMemberUntilItFails) {
    TempDir tmp;
    for (const std::string population : {"alive", "survivors"}) {
        const std::string out = tmp.str(population);
        // to t = 10 some vakonomic motions of parallel_velocities leave the chart or underflow the step (the model's
        // header counts them) after some output times
        const CliRun r = nhvk({"run", config_path("parallel_velocities"), "--trajectories", "200", "--out", out,
                               "--save-samples", "--set", "times.t_end=10", "--set",
                               "statistics.population=\"" + population + "\"", "-q"},
                              tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        const nlohmann::json j = read_json(fs::path(out) / "summary.json");
        EXPECT_EQ(j["statistics"]["population"], population);
        const Csv samples = read_csv(fs::path(out) / "samples.csv");
        const std::size_t nt = j["times"].size();
        std::vector<std::uint64_t> alive(nt, 0);
        std::uint64_t valid = 0, failed_late = 0;
        std::vector<double> onsets;
        for (std::size_t k = 0; k < samples.rows.size(); ++k) {
            if (samples.at(k, "sample_status") != "ok") continue;
            const bool ok = samples.at(k, "status") == "ok";
            const long fail = std::stol(samples.at(k, "fail_time_index"));
            valid += ok;
            failed_late += !ok && fail > 0;
            for (std::size_t i = 0; i < nt; ++i) alive[i] += ok || fail > static_cast<long>(i);
            const std::string o = samples.at(k, "onset_time");
            if (!o.empty() && (ok || population == "alive")) onsets.push_back(std::stod(o));
        }
        ASSERT_GT(failed_late, 0u) << "the test needs members that fail after the first output time";
        EXPECT_EQ(j["trajectories"]["valid"].get<std::uint64_t>(), valid);
        for (std::size_t i = 0; i < nt; ++i)
            EXPECT_EQ(j["divergence"]["q"]["count"][i].get<std::uint64_t>(), population == "alive" ? alive[i] : valid)
                << "time index " << i;
        // onset: quantiles over the members that crossed (type 7), from the per-member interpolated times
        ASSERT_GE(onsets.size(), 2u);
        EXPECT_EQ(j["onset"]["crossed"].get<std::size_t>(), onsets.size());
        std::sort(onsets.begin(), onsets.end());
        const double h = 0.5 * static_cast<double>(onsets.size() - 1);
        const std::size_t lo = static_cast<std::size_t>(h);
        const double med = onsets[lo] + (h - lo) * (onsets[std::min(lo + 1, onsets.size() - 1)] - onsets[lo]);
        EXPECT_DOUBLE_EQ(j["onset"]["quantiles"]["p50"].get<double>(), med);
        std::size_t off_grid = 0;
        for (double t : onsets) {
            bool on = false;
            for (const auto& g : j["times"]) on = on || g.get<double>() == t;
            off_grid += !on;
        }
        EXPECT_GT(off_grid, onsets.size() / 2) << "onset times are interpolated, not snapped to the output grid";
    }
}

// The divergence metric (issue 10 item 4): rolling_disc has lengths and angles, so by default d_q is over x, y only;
// weights multiply each difference (weight 2 doubles d_q exactly); the kinetic metric of L = ½m(ẋ² + ẏ²) + … over
// x, y is m times the identity, so with m = 4 it doubles the Euclidean d_q exactly.
TEST(CliDivergence, WeightsAndKineticMetricScaleAsDocumented) {
    TempDir tmp;
    auto run = [&](const std::string& name, const std::vector<std::string>& sets) {
        std::vector<std::string> args = {"run", config_path("rolling_disc"), "--trajectories", "40", "--out",
                                         tmp.str(name), "-q"};
        for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
        const CliRun r = nhvk(args, tmp);
        EXPECT_EQ(r.rc, 0) << name << ": " << r.err;
        return read_json(fs::path(tmp.str(name)) / "summary.json");
    };
    const nlohmann::json plain = run("plain", {});
    EXPECT_EQ(plain["divergence"]["coordinates"], (nlohmann::json{"x", "y"}));
    EXPECT_EQ(plain["divergence"]["metric"], "euclidean");
    const nlohmann::json weighted = run("weighted", {"divergence.weights={x = 2.0, y = 2.0}"});
    const nlohmann::json heavy = run("heavy", {"model.params.m=4.0"});
    const nlohmann::json kinetic = run("kinetic", {"model.params.m=4.0", "divergence.metric=\"kinetic\""});
    EXPECT_EQ(kinetic["divergence"]["metric"], "kinetic");
    const std::size_t nt = plain["times"].size();
    for (std::size_t i = 0; i < nt; ++i) {
        const double p = plain["divergence"]["q"]["p50"][i].get<double>();
        EXPECT_EQ(weighted["divergence"]["q"]["p50"][i].get<double>(), 2.0 * p) << i;
        EXPECT_EQ(kinetic["divergence"]["q"]["p50"][i].get<double>(),
                  2.0 * heavy["divergence"]["q"]["p50"][i].get<double>())
            << i;
    }
}
} // namespace
