// SPDX-License-Identifier: MIT
// A sweep point whose share of run.exact_memory_mb cannot hold its values reduces them into histograms on the host:
// its statistics must still be those of the run of that point alone in histogram mode (README "Sweeps"). Before the
// fix a point in histogram mode waited for a backend reduction that never came, and the sweep wrote count 0 and
// empty fits everywhere, with exit 0.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nhvk_test::CliRun;

TEST(SweepReduction, HistogramModePointEqualsTheRunOfThatPointAlone) {
    nhvk_test::TempDir tmp("nhvk_sweep_reduction_");
    const std::string cfg = std::string(NHVK_SOURCE_DIR) + "/configs/sweep_particle_mu0.toml";
    const std::vector<std::string> common = {"--trajectories", "200", "--set", "run.exact_memory_mb=0", "-q"};
    std::vector<std::string> args = {"run", cfg, "--out", tmp.str("sweep")};
    args.insert(args.end(), common.begin(), common.end());
    CliRun r = nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io1");
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json s = nhvk_test::read_json(tmp.path() / "sweep" / "summary.json");
    const int p = 4;
    const nlohmann::json& point = s["sweep"]["points"][p];
    ASSERT_EQ(point["quantiles"], "histogram");

    // the run of point p alone: the config without [sweep] is that of each point's `set` arguments
    const fs::path single = tmp.path() / "single.toml";
    std::string text = nhvk_test::read_text(cfg);
    text = text.substr(0, text.find("\n[sweep]"));
    std::ofstream(single) << text << '\n';
    args = {"run", single.string(), "--out", tmp.str("single")};
    args.insert(args.end(), common.begin(), common.end());
    for (const auto& set : point["set"]) {
        args.push_back("--set");
        args.push_back(set.get<std::string>());
    }
    r = nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io2");
    ASSERT_EQ(r.rc, 0) << r.err;

    // sweep.csv's rows of point p are `p,<axis value>,` then stats.csv's row
    const std::vector<std::string> sweep_lines = [&] {
        std::vector<std::string> out;
        std::istringstream in(nhvk_test::read_text(tmp.path() / "sweep" / "sweep.csv"));
        std::string line;
        std::getline(in, line); // header
        while (std::getline(in, line))
            if (line.rfind(std::to_string(p) + ",", 0) == 0) out.push_back(line.substr(line.find(',', 2) + 1));
        return out;
    }();
    std::istringstream stats(nhvk_test::read_text(tmp.path() / "single" / "stats.csv"));
    std::string line;
    std::getline(stats, line); // header
    std::size_t i = 0;
    while (std::getline(stats, line)) {
        ASSERT_LT(i, sweep_lines.size());
        EXPECT_EQ(sweep_lines[i], line) << "row " << i;
        ++i;
    }
    EXPECT_EQ(i, sweep_lines.size());
    const nhvk_test::Csv first = nhvk_test::read_csv(tmp.path() / "single" / "stats.csv");
    EXPECT_EQ(first.at(0, "count"), "200") << "the run itself reduced its members";
}

} // namespace
