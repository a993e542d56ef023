// SPDX-License-Identifier: MIT
// The method table (include/nhvk/numerics.hpp, issue 43 item 1): every method of the enum has its row, and every path
// reaches it by that row: the config and `nhvk trajectory --method` parse its name, the dispatch runs its stepper
// (whose own order and step kind are the row's), a model file's kernels are named with its stepper, the README's table
// lists the same rows. A fixed-step method's error falls as dt^order on the nonholonomic particle's closed form, and
// every method reaches that closed form. An ensemble of every method gives the same statistics under other chunks and
// threads, and its members' final divergence is that of `nhvk trajectory` from the same state.
#include "config.hpp"
#include "csv_table.hpp"
#include "modelfile/model_file.hpp"
#include "nhvk/dispatch.hpp"
#include "nhvk/models/nh_particle.hpp"
#include "nhvk_cli.hpp"
#include "registry.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

using nhvk::Method;
using nhvk::method_table;
using nhvk::MethodInfo;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_methods_") {}
};

nhvk_test::CliRun run_nhvk(const std::vector<std::string>& args, const TempDir& tmp) {
    return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
}

/** A system every stepper can be instantiated on (their constants are read, nothing is integrated): a mechanical one,
 *  since midpoint integrates the mechanics. */
template <class T> using MechanicalSystem = nhvk::NonholonomicSystem<nhvk::models::NhParticle, T>;

TEST(MethodTable, EveryMethodIsARowInEnumOrderWithAConsistentDescription) {
    ASSERT_GE(nhvk::method_count, 2);
    for (int i = 0; i < nhvk::method_count; ++i) {
        const MethodInfo& m = method_table[i];
        EXPECT_EQ(static_cast<int>(m.id), i) << m.name;
        EXPECT_EQ(&nhvk::method_info(m.id), &m);
        EXPECT_GT(m.order, 0) << m.name;
        EXPECT_LT(m.error_order, m.order) << m.name << ": the embedded estimate is of lower order";
        if (!m.implicit)
            EXPECT_GE(m.stages, m.order <= 4 ? m.order : m.order + 1) << m.name << ": the Butcher barriers";
        EXPECT_EQ(nhvk::adaptive_method(m.id), m.error_order > 0) << m.name;
        EXPECT_EQ(std::string(nhvk::to_string(m.id)), m.name);
        ASSERT_NE(nhvk::find_method(m.name), nullptr) << m.name;
        EXPECT_EQ(nhvk::find_method(m.name)->id, m.id);
    }
    EXPECT_EQ(nhvk::find_method("rk45"), nullptr);
}

TEST(MethodTable, DispatchRunsTheStepperOfTheRow) {
    for (const MethodInfo& m : method_table)
        for (const nhvk::Precision p : {nhvk::Precision::f64, nhvk::Precision::f32}) {
            int calls = 0;
            nhvk::dispatch_numeric(m.id, p, [&](auto tt, auto st) {
                using T = decltype(tt);
                using S = typename decltype(st)::template tmpl<MechanicalSystem<T>, T>;
                ++calls;
                EXPECT_EQ(S::method, m.id) << m.name;
                EXPECT_EQ(S::order, m.order) << m.name;
                EXPECT_EQ(S::fixed_step, !nhvk::adaptive_method(m.id)) << m.name;
                EXPECT_EQ(sizeof(T), p == nhvk::Precision::f64 ? sizeof(double) : sizeof(float));
            });
            EXPECT_EQ(calls, 1) << m.name;
        }
}

TEST(MethodTable, ConfigAndKernelNamesFollowTheRows) {
    std::string names;
    for (const MethodInfo& m : method_table) {
        const std::string text = "[model]\nname = \"nh_particle\"\n[times]\nt_end = 1.0\n[integrator]\nmethod = \"" +
                                 std::string(m.name) + "\"\n";
        const nhvk::RunConfig c = nhvk::parse_config(text, "inline.toml", {}, nhvk::model_registry());
        EXPECT_EQ(c.integrator.method, m.id);
        EXPECT_EQ(c.resolved_json()["integrator"]["method"], m.name);
        // a fixed step gets the default step, an adaptive method the automatic first step
        EXPECT_EQ(c.integrator.dt, nhvk::adaptive_method(m.id) ? 0.0 : nhvk::StepDefaults::rk4_dt) << m.name;
        for (const std::string& k : nhvk::modelfile::cuda_kernel_names(nhvk::modelfile::CudaKernels::ensemble,
                                                                       nhvk::Precision::f64, m.id, "M"))
            if (k.find("ensemble_chunk_kernel") != std::string::npos)
                EXPECT_NE(k.find(std::string(", ") + m.stepper + ">"), std::string::npos) << k;
        names += std::string(names.empty() ? "" : ", ") + "\"" + m.name + "\"";
    }
    try {
        nhvk::parse_config("[model]\nname = \"nh_particle\"\n[times]\nt_end = 1.0\n[integrator]\nmethod = \"rk45\"\n",
                           "inline.toml", {}, nhvk::model_registry());
        ADD_FAILURE() << "an unknown method loaded";
    } catch (const nhvk::ConfigError& e) {
        for (const MethodInfo& m : method_table)
            EXPECT_NE(std::string(e.what()).find(std::string("\"") + m.name + "\""), std::string::npos) << e.what();
    }
}

/** The README's table: the rows of "### Integration methods", cells trimmed. */
std::vector<std::vector<std::string>> readme_rows() {
    std::ifstream in(std::string(NHVK_SOURCE_DIR) + "/README.md");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::size_t at = text.find("\n### Integration methods\n");
    std::vector<std::vector<std::string>> rows;
    if (at == std::string::npos) return rows;
    std::istringstream sec(text.substr(at + 1, text.find("\n## ", at + 1) - at - 1));
    for (std::string line; std::getline(sec, line);) {
        if (line.size() < 2 || line.front() != '|' || line.rfind("|---", 0) == 0 || line.rfind("| method", 0) == 0)
            continue;
        std::vector<std::string> cells;
        std::istringstream cs(line.substr(1));
        for (std::string c; std::getline(cs, c, '|');) {
            const std::size_t a = c.find_first_not_of(' '), b = c.find_last_not_of(' ');
            cells.push_back(a == std::string::npos ? "" : c.substr(a, b - a + 1));
        }
        rows.push_back(cells);
    }
    return rows;
}

TEST(MethodTable, ReadmeListsEveryRowAsTheTableDoes) {
    const auto rows = readme_rows();
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(nhvk::method_count));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const MethodInfo& m = method_table[i];
        ASSERT_EQ(rows[i].size(), 8u);
        EXPECT_EQ(rows[i][0], "`" + std::string(m.name) + "`");
        EXPECT_EQ(rows[i][1], std::to_string(m.order)) << m.name;
        EXPECT_EQ(rows[i][2], m.error_order ? std::to_string(m.error_order) : "none") << m.name;
        EXPECT_EQ(rows[i][3], std::to_string(m.stages)) << m.name;
        EXPECT_EQ(rows[i][4], m.fsal ? "yes" : "no") << m.name;
        EXPECT_EQ(rows[i][5], m.dense_output ? "yes" : "no") << m.name;
        EXPECT_EQ(rows[i][6], m.implicit ? "yes" : "no") << m.name;
        EXPECT_EQ(rows[i][7], m.summary) << m.name;
    }
}

/** `nhvk trajectory` of the nonholonomic particle with `method` and `extra` options: the largest error of x, y, z at
 *  t = 5 against the closed form (docs/models.md), or NaN when the run failed. */
double particle_error(const TempDir& tmp, const std::string& method, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"trajectory", "--model", "nh_particle", "--q0", "0,0.5,0",  "--v0", "1,0.7,0.5",
                                     "--t-end",    "5",       "--times",     "1",    "--method", method};
    args.insert(args.end(), extra.begin(), extra.end());
    const nhvk_test::CliRun r = run_nhvk(args, tmp);
    EXPECT_EQ(r.rc, 0) << method << ": " << r.err;
    if (r.rc != 0) return NAN;
    const nhvk_test::Csv csv = nhvk_test::parse_csv(r.out);
    const std::size_t last = csv.rows.size() - 1;
    const double t = std::stod(csv.at(last, "t")), y0 = 0.5, C = std::sqrt(1.0 + y0 * y0), y = y0 + 0.7 * t;
    const double x = C / 0.7 * (std::asinh(y) - std::asinh(y0)), z = C / 0.7 * (std::sqrt(1.0 + y * y) - C);
    return std::max({std::fabs(std::stod(csv.at(last, "nh_q0")) - x), std::fabs(std::stod(csv.at(last, "nh_q1")) - y),
                     std::fabs(std::stod(csv.at(last, "nh_q2")) - z)});
}

TEST(MethodTable, EveryMethodReachesTheClosedFormAndAFixedStepConvergesAtItsOrder) {
    TempDir tmp;
    {
        const nhvk_test::CliRun r = run_nhvk({"trajectory", "--model", "nh_particle", "--q0", "0,0,0", "--v0", "1,0,0",
                                              "--t-end", "1", "--method", "rk45"},
                                             tmp);
        EXPECT_EQ(r.rc, 2);
        for (const MethodInfo& m : method_table) EXPECT_NE(r.err.find(m.name), std::string::npos) << r.err;
    }
    for (const MethodInfo& m : method_table) {
        if (nhvk::adaptive_method(m.id)) {
            EXPECT_LT(particle_error(tmp, m.name, {"--rtol", "1e-12", "--atol", "1e-14"}), 1e-9) << m.name;
            continue;
        }
        const double coarse = particle_error(tmp, m.name, {"--dt", "0.04"}),
                     fine = particle_error(tmp, m.name, {"--dt", "0.02"});
        EXPECT_LT(fine, 1e-4) << m.name;
        // halving the step divides the global error by about 2^order
        const double ratio = coarse / fine, expected = std::pow(2.0, m.order);
        EXPECT_GT(ratio, 0.7 * expected) << m.name << ": errors " << coarse << ", " << fine;
        EXPECT_LT(ratio, 1.4 * expected) << m.name << ": errors " << coarse << ", " << fine;
    }
}

/** The counts of `nhvk trajectory --steps`: {nonholonomic steps, rejected, vakonomic steps, rejected}; empty when the
 *  line is missing. */
std::vector<long long> step_counts(const std::string& err) {
    const std::string tag = "nhvk trajectory: steps to t = ";
    const std::size_t at = err.find(tag);
    if (at == std::string::npos) return {};
    std::vector<long long> n;
    std::istringstream line(err.substr(at + tag.size(), err.find('\n', at) - at - tag.size()));
    std::string word;
    // "5: nonholonomic 12 (0 rejected), vakonomic 13 (1 rejected)"
    while (line >> word) {
        const std::string digits = word.substr(word.find_first_not_of('('));
        if (!digits.empty() && std::isdigit(static_cast<unsigned char>(digits[0])) && word.back() != ':')
            n.push_back(std::stoll(digits));
    }
    return n;
}

TEST(MethodTable, TrajectoryCountsEachDynamicsSteps) {
    TempDir tmp;
    for (const MethodInfo& m : method_table) {
        SCOPED_TRACE(m.name);
        std::vector<std::string> args = {"trajectory", "--model",   "nh_particle", "--q0",   "0,0.5,0",
                                         "--v0",       "1,0.7,0.5", "--t-end",     "2",      "--times",
                                         "4",          "--method",  m.name,        "--steps"};
        if (!nhvk::adaptive_method(m.id)) args.insert(args.end(), {"--dt", "0.01"});
        const nhvk_test::CliRun r = run_nhvk(args, tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        const std::vector<long long> n = step_counts(r.err);
        ASSERT_EQ(n.size(), 4u) << r.err;
        EXPECT_NE(r.err.find("steps to t = 2:"), std::string::npos) << r.err;
        if (!nhvk::adaptive_method(m.id)) {
            // a fixed step: 2 / 0.01 steps for each dynamics, none rejected
            EXPECT_EQ(n[0], 200);
            EXPECT_EQ(n[1], 0);
            EXPECT_EQ(n[2], 200);
            EXPECT_EQ(n[3], 0);
        } else {
            EXPECT_GT(n[0], 4) << "at least a step per output time";
            EXPECT_GT(n[2], 4);
            EXPECT_LE(n[1], n[0]);
            EXPECT_LE(n[3], n[2]);
        }
    }
    // the device's steps are not counted: refused before anything runs
    const nhvk_test::CliRun r = run_nhvk({"trajectory", "--model", "nh_particle", "--q0", "0,0.5,0", "--v0",
                                          "1,0.7,0.5", "--t-end", "2", "--steps", "--backend", "cuda"},
                                         tmp);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("--steps: the steps are counted on the cpu backend only"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
}

/** `x` written so that it reads back exactly. */
std::string number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

/** A run of configs/rolling_disc.toml, short, with `method` in `dir`; its exit code. */
int run_rolling_disc(const TempDir& tmp, const std::string& method, const std::string& dir, const std::string& chunk,
                     const std::string& threads) {
    const nhvk_test::CliRun r =
        run_nhvk({"run", std::string(NHVK_SOURCE_DIR) + "/configs/rolling_disc.toml", "--trajectories", "40", "--chunk",
                  chunk, "--threads", threads, "--save-samples", "-q", "--out", (tmp.path() / dir).string(), "--set",
                  "integrator.method=\"" + method + "\"", "--set", "times.t_end=1.0", "--set", "times.count=12"},
                 tmp);
    EXPECT_EQ(r.rc, 0) << method << ": " << r.err;
    return r.rc;
}

TEST(MethodTable, EveryMethodsEnsembleIsDeterministicAndItsMembersAreTheirTrajectories) {
    TempDir tmp;
    for (const MethodInfo& m : method_table) {
        SCOPED_TRACE(m.name);
        const std::string a = std::string(m.name) + "_a", b = std::string(m.name) + "_b";
        if (run_rolling_disc(tmp, m.name, a, "7", "1") != 0 || run_rolling_disc(tmp, m.name, b, "40", "2") != 0)
            continue;
        EXPECT_EQ(nhvk_test::read_text(tmp.path() / a / "stats.csv"),
                  nhvk_test::read_text(tmp.path() / b / "stats.csv"));
        const std::string samples = nhvk_test::read_text(tmp.path() / a / "samples.csv");
        EXPECT_EQ(samples, nhvk_test::read_text(tmp.path() / b / "samples.csv"));
        // member 0 again, alone, through `nhvk trajectory` with the run's parameters, output times and tolerances:
        // the same d_q at the last output time, to the bit
        const nhvk_test::Csv members = nhvk_test::parse_csv(samples);
        const nlohmann::json summary = nhvk_test::read_json(tmp.path() / a / "summary.json");
        const nlohmann::json& cfg = summary["config"];
        std::string q0, v0, mu0, times;
        for (const std::string& col : members.header) {
            std::string* into = col.rfind("q0_", 0) == 0    ? &q0
                                : col.rfind("v0_", 0) == 0  ? &v0
                                : col.rfind("mu0_", 0) == 0 ? &mu0
                                                            : nullptr;
            if (into) *into += (into->empty() ? "" : ",") + members.at(0, col);
        }
        for (const double t : summary["times"]) times += (times.empty() ? "" : ",") + number(t);
        std::vector<std::string> args = {"trajectory", "--model", "rolling_disc", "--q0",     q0,
                                         "--v0",       v0,        "--mu0",        mu0,        "--t-end",
                                         "1.0",        "--times", times,          "--method", m.name};
        for (const auto& [name, value] : cfg["model"]["params"].items())
            args.insert(args.end(), {"--param", name + "=" + number(value.get<double>())});
        args.insert(args.end(),
                    {"--rtol", number(cfg["integrator"]["rtol"]), "--atol", number(cfg["integrator"]["atol"]),
                     "--max-steps", number(cfg["integrator"]["max_steps"])});
        if (cfg["integrator"]["dt"].get<double>() > 0.0)
            args.insert(args.end(), {"--dt", number(cfg["integrator"]["dt"])});
        const nhvk_test::CliRun r = run_nhvk(args, tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        const nhvk_test::Csv traj = nhvk_test::parse_csv(r.out);
        // NOTE: the column names the coordinates the model's divergence covers (rolling_disc: "d_q[x y]")
        const auto dq = std::find_if(traj.header.begin(), traj.header.end(),
                                     [](const std::string& c) { return c.rfind("d_q", 0) == 0; });
        ASSERT_NE(dq, traj.header.end()) << r.out.substr(0, r.out.find('\n'));
        EXPECT_EQ(std::stod(traj.at(traj.rows.size() - 1, *dq)), std::stod(members.at(0, "d_q_final")));
    }
}

} // namespace
