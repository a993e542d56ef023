// SPDX-License-Identifier: MIT
// One divergence definition (issue 42 item 5): `nhvk trajectory`'s d_q covers the coordinates a run's d_q covers by
// default, its header says which, and --coordinates, --weight and --divergence-metric set them as
// [divergence] does in a config.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk_test::CliRun;
using nhvk_test::Csv;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_trajdiv_") {}
};

CliRun run_nhvk(const std::vector<std::string>& args, const TempDir& tmp) {
    return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
}

/** A member of a run of configs/rolling_disc.toml (angles theta, phi beside lengths x, y) and the arguments of
 *  `nhvk trajectory` that integrate the same member alone: its initial state, the run's parameters, output times and
 *  tolerances, all as the run's files spell them (17 significant digits). */
struct RunMember {
    double d_q_final = 0, d_v_final = 0;
    std::vector<std::string> trajectory_args;
};

RunMember member_of_a_run(const TempDir& tmp, std::size_t g) {
    const fs::path out = tmp.path() / "run";
    const CliRun r = run_nhvk({"run", std::string(NHVK_SOURCE_DIR) + "/configs/rolling_disc.toml", "--trajectories",
                               "4", "--threads", "1", "--save-samples", "--out", out.string(), "-q"},
                              tmp);
    EXPECT_EQ(r.rc, 0) << r.err;
    const Csv s = nhvk_test::read_csv(out / "samples.csv");
    const nlohmann::json summary = nhvk_test::read_json(out / "summary.json");
    EXPECT_EQ(s.at(g, "status"), "ok");
    RunMember m;
    m.d_q_final = std::stod(s.at(g, "d_q_final"));
    m.d_v_final = std::stod(s.at(g, "d_v_final"));
    const auto list = [&](const char* prefix, const std::vector<std::string>& names) {
        std::string v;
        for (const std::string& n : names) v += (v.empty() ? "" : ",") + s.at(g, prefix + n);
        return v;
    };
    const std::vector<std::string> coords = {"x", "y", "theta", "phi"};
    std::ostringstream times;
    times.precision(17);
    for (const auto& t : summary["times"]) times << (times.tellp() > 0 ? "," : "") << t.get<double>();
    const nlohmann::json& integrator = summary["config"]["integrator"];
    std::ostringstream rtol, atol;
    rtol.precision(17);
    atol.precision(17);
    rtol << integrator["rtol"].get<double>();
    atol << integrator["atol"].get<double>();
    m.trajectory_args = {"trajectory",
                         "--model",
                         "rolling_disc",
                         "--q0",
                         list("q0_", coords),
                         "--v0",
                         list("v0_", coords),
                         "--mu0",
                         s.at(g, "mu0_0") + "," + s.at(g, "mu0_1"),
                         "--t-end",
                         times.str().substr(times.str().rfind(',') + 1),
                         "--times",
                         times.str(),
                         "--rtol",
                         rtol.str(),
                         "--atol",
                         atol.str()};
    for (const auto& [name, value] : summary["model"]["params"].items()) {
        std::ostringstream v;
        v.precision(17);
        if (value.is_boolean()) v << (value.get<bool>() ? "true" : "false");
        else v << value.get<double>();
        m.trajectory_args.insert(m.trajectory_args.end(), {"--param", name + "=" + v.str()});
    }
    return m;
}

TEST(TrajectoryDivergence, DqEqualsTheRunsForTheSameMemberAndTheHeaderSaysWhatItCovers) {
    TempDir tmp;
    const RunMember m = member_of_a_run(tmp, 1);
    const CliRun t = run_nhvk(m.trajectory_args, tmp);
    ASSERT_EQ(t.rc, 0) << t.err;
    const Csv c = nhvk_test::parse_csv(t.out);
    // the run leaves the angles out of a model that mixes angles and lengths, and so does trajectory now
    ASSERT_TRUE(c.col.count("d_q[x y]")) << t.out.substr(0, t.out.find('\n'));
    ASSERT_TRUE(c.col.count("d_v[x y]"));
    EXPECT_GT(m.d_q_final, 0.0);
    // the same member code on the same inputs: the same bits
    EXPECT_EQ(std::stod(c.at(c.rows.size() - 1, "d_q[x y]")), m.d_q_final);
    EXPECT_EQ(std::stod(c.at(c.rows.size() - 1, "d_v[x y]")), m.d_v_final);

    // --coordinates with the angles: another quantity, named so
    std::vector<std::string> all = m.trajectory_args;
    all.insert(all.end(), {"--coordinates", "x,y,theta,phi"});
    const CliRun a = run_nhvk(all, tmp);
    ASSERT_EQ(a.rc, 0) << a.err;
    const Csv ca = nhvk_test::parse_csv(a.out);
    ASSERT_TRUE(ca.col.count("d_q[x y theta phi]"));
    EXPECT_GT(std::stod(ca.at(ca.rows.size() - 1, "d_q[x y theta phi]")), m.d_q_final);

    // a weight shows in the header and scales its coordinate's difference: with x alone, d_q doubles
    std::vector<std::string> x1 = m.trajectory_args, x2 = m.trajectory_args;
    x1.insert(x1.end(), {"--coordinates", "x"});
    x2.insert(x2.end(), {"--coordinates", "x", "--weight", "x=2"});
    const CliRun r1 = run_nhvk(x1, tmp), r2 = run_nhvk(x2, tmp);
    ASSERT_EQ(r1.rc, 0) << r1.err;
    ASSERT_EQ(r2.rc, 0) << r2.err;
    const Csv c1 = nhvk_test::parse_csv(r1.out), c2 = nhvk_test::parse_csv(r2.out);
    ASSERT_TRUE(c2.col.count("d_q[2*x]"));
    const double d1 = std::stod(c1.at(c1.rows.size() - 1, "d_q[x]"));
    EXPECT_GT(d1, 0.0);
    EXPECT_EQ(std::stod(c2.at(c2.rows.size() - 1, "d_q[2*x]")), 2.0 * d1);
}

TEST(TrajectoryDivergence, BadCoordinatesAndWeightsAreRefusedByName) {
    TempDir tmp;
    const std::vector<std::string> base = {"trajectory", "--model", "rolling_disc", "--q0", "0,0,0,0",
                                           "--v0",       "0,0,1,0", "--t-end",      "1"};
    const auto refused = [&](std::vector<std::string> more, const std::string& message) {
        std::vector<std::string> args = base;
        args.insert(args.end(), more.begin(), more.end());
        const CliRun r = run_nhvk(args, tmp);
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty()) << "no half-written CSV";
    };
    refused({"--coordinates", "x,w"},
            "--coordinates: unknown coordinate 'w' of model 'rolling_disc'; coordinates: x, y, theta, phi");
    refused({"--coordinates", "x,x"}, "--coordinates: coordinate 'x' is listed twice");
    refused({"--weight", "theta=2"}, "--weight: coordinate 'theta' is not among the divergence coordinates");
    refused({"--weight", "x=0"}, "--weight x: expected a finite number > 0, got 0");
    refused({"--weight", "x"}, "--weight: expected coordinate=value");
    refused({"--divergence-metric", "manhattan"}, "--divergence-metric: expected euclidean or kinetic");
}

} // namespace
