// SPDX-License-Identifier: MIT
// Histogram-mode quantiles of a whole run against the exact ones (issue 21, item 2): the signed metrics of the
// nh_particle bench, which the old positive-only histogram could not resolve.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace {

namespace fs = std::filesystem;

// `nhvk run bench/configs/nh_particle_bench.toml --trajectories 2000` with the given exact-memory budget: stats.csv
// and summary.json of the run
struct BenchRun {
    nhvk_test::Csv stats;
    nlohmann::json summary;
    std::string err;
};
BenchRun run_bench(const nhvk_test::TempDir& tmp, const std::string& name, const std::string& exact_memory_mb) {
    const std::string out = tmp.str(name);
    const nhvk_test::CliRun r = nhvk_test::run_captured(
        "", NHVK_BINARY,
        {"run", std::string(NHVK_SOURCE_DIR) + "/bench/configs/nh_particle_bench.toml", "--trajectories", "2000",
         "--backend", "cpu", "--set", "run.exact_memory_mb=" + exact_memory_mb, "--out", out},
        tmp.path() / ("io_" + name));
    EXPECT_EQ(r.rc, nhvk::exit_ok) << r.err;
    return {nhvk_test::read_csv(fs::path(out) / "stats.csv"), nhvk_test::read_json(fs::path(out) / "summary.json"),
            r.err};
}

TEST(HistogramQuantiles, SignedMetricsOfARunAgreeWithExactWithinResolution) {
    nhvk_test::TempDir tmp("nhvk_hist_");
    const BenchRun hist = run_bench(tmp, "histogram", "0");
    const BenchRun exact = run_bench(tmp, "exact", "1024");
    ASSERT_EQ(hist.summary["statistics"]["quantiles"], "histogram");
    ASSERT_EQ(exact.summary["statistics"]["quantiles"], "exact");
    const double r = hist.summary["statistics"]["histogram_relative_resolution"].get<double>();
    EXPECT_NEAR(r, std::pow(10.0, 0.02) - 1.0, 1e-12);
    // signed values are no longer outside the histogram: no count, no warning
    EXPECT_EQ(hist.summary["statistics"]["values_outside_range"], 0);
    EXPECT_EQ(exact.summary["statistics"]["values_outside_range"], 0);
    EXPECT_EQ(hist.err.find("warning"), std::string::npos) << hist.err;
    ASSERT_EQ(hist.stats.rows.size(), exact.stats.rows.size());
    const std::vector<std::string> levels = {"p01", "p05", "p25", "p50", "p75", "p95", "p99"};
    std::size_t negative = 0, positive = 0, compared = 0;
    for (std::size_t i = 0; i < exact.stats.rows.size(); ++i) {
        const std::string metric = exact.stats.at(i, "metric");
        ASSERT_EQ(hist.stats.at(i, "metric"), metric);
        ASSERT_EQ(hist.stats.at(i, "time_index"), exact.stats.at(i, "time_index"));
        if (metric != "reaction_work_nh" && metric != "energy_nh") continue;
        for (const std::string& level : levels) {
            const double e = std::stod(exact.stats.at(i, level)), h = std::stod(hist.stats.at(i, level));
            // NOTE: r·|q| holds when the two order statistics the quantile interpolates have the same sign (or one
            // is 0); a bracket straddling 0 would allow r·((1−f)|x[k]| + f|x[k+1]|), and none does in this run.
            EXPECT_LE(std::fabs(h - e), r * std::fabs(e) * (1.0 + 1e-9))
                << metric << " at time index " << exact.stats.at(i, "time_index") << " " << level << ": histogram " << h
                << ", exact " << e;
            negative += e < 0.0 ? 1u : 0u;
            positive += e > 0.0 ? 1u : 0u;
            ++compared;
        }
    }
    EXPECT_EQ(compared, 2u * 40u * levels.size()); // 40 output times of two metrics
    EXPECT_GT(negative, 20u);                      // the data cross zero: the negative store is exercised
    EXPECT_GT(positive, 20u);
}

} // namespace
