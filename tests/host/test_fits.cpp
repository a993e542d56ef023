// SPDX-License-Identifier: MIT
// Fits the user controls (issue 42 item 4): [divergence.fit] (statistic, window, fixed exponent) and
// [divergence.rate] (d ~ A e^{λ(t − t0)} over a late window), each checked against the same least squares computed
// here from stats.csv, with the sampling interval method named; a sweep's rate survives shards and merge.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk_test::CliRun;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_fits_") {}
};

CliRun run_nhvk(const std::vector<std::string>& args, const TempDir& tmp) {
    return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
}

/** configs/quickstart.toml without its growth_t_max, with `divergence` appended (its [divergence.*] tables). */
fs::path write_config(const TempDir& tmp, const std::string& name, const std::string& divergence,
                      const std::string& more = "") {
    const fs::path p = tmp.path() / name;
    std::ofstream(p) << "[model]\nname = \"nh_particle\"\n"
                     << "[initial.q]\nx = 0.0\ny = { dist = \"uniform\", low = -1.0, high = 1.0 }\nz = 0.0\n"
                     << "[initial.v]\nx = { dist = \"normal\", mean = 0.0, std = 1.0 }\n"
                     << "y = { dist = \"normal\", mean = 0.0, std = 1.0 }\n"
                     << "z = { dist = \"normal\", mean = 0.0, std = 1.0 }\n"
                     << "[initial.mu]\ndist = \"normal\"\nmean = 0.0\nstd = 0.1\n"
                     << "[times]\nt_end = 5.0\nspacing = \"log\"\ncount = 40\nt_first = 1e-3\n"
                     << "[run]\ntrajectories = 600\nseed = 3\n"
                     << divergence << "\n"
                     << more;
    return p;
}

struct FitRun {
    nlohmann::json summary;
    nhvk_test::Csv stats;
    std::string err;
};

FitRun run_config(const TempDir& tmp, const fs::path& config, const std::string& out) {
    const CliRun r = run_nhvk({"run", config.string(), "--threads", "1", "--out", (tmp.path() / out).string()}, tmp);
    EXPECT_EQ(r.rc, 0) << r.err;
    return {nhvk_test::read_json(tmp.path() / out / "summary.json"),
            nhvk_test::read_csv(tmp.path() / out / "stats.csv"), r.err};
}

/** (t, statistic) of d_q from stats.csv over lo < t <= hi where the statistic is positive. */
void series(const nhvk_test::Csv& csv, const std::string& column, double lo, double hi, std::vector<double>& t,
            std::vector<double>& y) {
    for (std::size_t r = 0; r < csv.rows.size(); ++r) {
        if (csv.at(r, "metric") != "d_q" || csv.at(r, column).empty()) continue;
        const double x = std::stod(csv.at(r, "t")), v = std::stod(csv.at(r, column));
        if (x > lo && x <= hi && v > 0.0) {
            t.push_back(x);
            y.push_back(v);
        }
    }
}

/** Least squares of log y against x: {slope, intercept}. */
std::pair<double, double> line(const std::vector<double>& x, const std::vector<double>& log_y) {
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        mx += x[i];
        my += log_y[i];
    }
    mx /= double(x.size());
    my /= double(x.size());
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (log_y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    return {sxy / sxx, my - sxy / sxx * mx};
}

TEST(Fits, AFixedExponentOverAWindowFitsTheAmplitudeAlone) {
    TempDir tmp;
    const FitRun r =
        run_config(tmp, write_config(tmp, "c.toml", "[divergence.fit]\nexponent = 2.0\nwindow = [0.002, 0.05]"), "out");
    const nlohmann::json& g = r.summary["growth_exponent"];
    EXPECT_EQ(g["q"].get<double>(), 2.0);
    // d_v, the derivative's divergence, one power lower unless exponent_v says otherwise
    EXPECT_EQ(g["v"].get<double>(), 1.0);
    EXPECT_EQ(g["exponent_fixed"], (nlohmann::json{{"q", 2.0}, {"v", 1.0}}));
    EXPECT_EQ(g["window"], nlohmann::json::array({0.002, 0.05}));
    EXPECT_EQ(g["statistic"], "median");
    std::vector<double> t, y;
    series(r.stats, "p50", 0.002, 0.05, t, y);
    ASSERT_GE(t.size(), 5u);
    EXPECT_EQ(g["fit"]["q"]["points"].get<std::size_t>(), t.size());
    double mean_log_c = 0;
    for (std::size_t i = 0; i < t.size(); ++i) mean_log_c += std::log(y[i]) - 2.0 * std::log(t[i]);
    mean_log_c /= double(t.size());
    EXPECT_NEAR(std::log(g["amplitude"]["q"].get<double>()), mean_log_c, 1e-12);
    // the sampling interval: the exponent's is the fixed value, the amplitude's brackets it (jackknife of medians)
    const nlohmann::json& s = g["sampling"];
    EXPECT_EQ(s["interval_method"], "jackknife");
    EXPECT_EQ(s["q"]["ci95"], nlohmann::json::array({2.0, 2.0}));
    EXPECT_LT(s["q"]["amplitude_ci95"][0].get<double>(), g["amplitude"]["q"].get<double>());
    EXPECT_GT(s["q"]["amplitude_ci95"][1].get<double>(), g["amplitude"]["q"].get<double>());
    EXPECT_NE(r.err.find("growth of median d_q ~ C (t - t0)^2 (exponent fixed) (0.002 < t <= 0.05)"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("growth of median d_v ~ C (t - t0)^1 (exponent fixed) (0.002 < t <= 0.05)"), std::string::npos)
        << r.err;
    // exponent_v alone fixes d_v's and leaves d_q's fitted
    const FitRun v = run_config(tmp, write_config(tmp, "v.toml", "[divergence.fit]\nexponent_v = 1.5"), "v");
    EXPECT_EQ(v.summary["growth_exponent"]["v"].get<double>(), 1.5);
    EXPECT_NE(v.summary["growth_exponent"]["q"].get<double>(), 2.0);
    EXPECT_EQ(v.summary["growth_exponent"]["exponent_fixed"], (nlohmann::json{{"q", nullptr}, {"v", 1.5}}));
}

TEST(Fits, TheMeanIsFittedWithJackknifeIntervalsAndAQuantileWithBatchMeans) {
    TempDir tmp;
    const FitRun mean = run_config(
        tmp, write_config(tmp, "mean.toml", "[divergence.fit]\nstatistic = \"mean\"\nwindow = [0.0, 0.05]"), "mean");
    std::vector<double> t, y, lt, ly;
    series(mean.stats, "mean", 0.0, 0.05, t, y);
    for (std::size_t i = 0; i < t.size(); ++i) {
        lt.push_back(std::log(t[i]));
        ly.push_back(std::log(y[i]));
    }
    const auto [p, log_c] = line(lt, ly);
    const nlohmann::json& g = mean.summary["growth_exponent"];
    EXPECT_NEAR(g["q"].get<double>(), p, 1e-10);
    EXPECT_NEAR(std::log(g["amplitude"]["q"].get<double>()), log_c, 1e-9);
    EXPECT_EQ(g["sampling"]["interval_method"], "jackknife");
    EXPECT_LT(g["sampling"]["q"]["ci95"][0].get<double>(), p);
    EXPECT_GT(g["sampling"]["q"]["ci95"][1].get<double>(), p);
    EXPECT_NE(mean.err.find("growth of mean d_q ~ C (t - t0)^p (t <= 0.05)"), std::string::npos) << mean.err;

    const FitRun p75 = run_config(
        tmp, write_config(tmp, "p75.toml", "[divergence.fit]\nstatistic = \"p75\"\nwindow = [0.0, 0.05]"), "p75");
    std::vector<double> t75, y75;
    series(p75.stats, "p75", 0.0, 0.05, t75, y75);
    for (double& x : t75) x = std::log(x);
    for (double& x : y75) x = std::log(x);
    EXPECT_NEAR(p75.summary["growth_exponent"]["q"].get<double>(), line(t75, y75).first, 1e-10);
    EXPECT_EQ(p75.summary["growth_exponent"]["sampling"]["interval_method"], "batch_means");
    EXPECT_NE(p75.summary["growth_exponent"]["q"], g["q"]);
}

TEST(Fits, TheLongTimeRateIsTheSlopeOfTheLogStatisticAgainstTime) {
    TempDir tmp;
    const FitRun r = run_config(tmp, write_config(tmp, "rate.toml", "[divergence.rate]\nwindow = [1.0, 5.0]"), "rate");
    std::vector<double> t, y;
    series(r.stats, "p50", 1.0, 5.0, t, y);
    ASSERT_GE(t.size(), 5u);
    for (double& v : y) v = std::log(v);
    const auto [lambda, log_a] = line(t, y); // t0 = 0
    const nlohmann::json& g = r.summary["growth_rate"];
    EXPECT_NEAR(g["q"]["rate"].get<double>(), lambda, 1e-10);
    EXPECT_NEAR(std::log(g["q"]["amplitude"].get<double>()), log_a, 1e-9);
    EXPECT_EQ(g["q"]["points"].get<std::size_t>(), t.size());
    EXPECT_EQ(g["interval_method"], "jackknife");
    EXPECT_LT(g["q"]["ci95"][0].get<double>(), lambda);
    EXPECT_GT(g["q"]["ci95"][1].get<double>(), lambda);
    EXPECT_EQ(g["q"]["group_rates"].size(), 10u);
    EXPECT_EQ(g["window"], nlohmann::json::array({1.0, 5.0}));
    EXPECT_NE(r.err.find("long-time rate of median d_q ~ A e^(lambda (t - t0)) (1 < t <= 5): lambda = "),
              std::string::npos)
        << r.err;
    // without [divergence.rate]: null, and the growth law is the default one
    const FitRun plain = run_config(tmp, write_config(tmp, "plain.toml", ""), "plain");
    EXPECT_TRUE(plain.summary["growth_rate"].is_null());
    EXPECT_EQ(plain.summary["growth_exponent"]["statistic"], "median");
    EXPECT_EQ(plain.summary["growth_exponent"]["exponent_fixed"], (nlohmann::json{{"q", nullptr}, {"v", nullptr}}));
}

// Physics (docs/physics.md §4.2): with μ0 ≠ 0 each member's Δq grows as c t² at small times, so Δv = 2c t: the mean
// d_q is C t² and the mean d_v is 2C t. With the exponents fixed at 2 and 1 (the default exponent_v) the fitted
// amplitudes must stand in the ratio 2 up to the next order in t over the window.
TEST(Fits, FixedExponentsGiveTheDerivativesAmplitude) {
    TempDir tmp;
    const FitRun r = run_config(
        tmp,
        write_config(tmp, "d.toml", "[divergence.fit]\nstatistic = \"mean\"\nwindow = [0.0, 0.05]\nexponent = 2.0"),
        "d");
    const nlohmann::json& a = r.summary["growth_exponent"]["amplitude"];
    EXPECT_NEAR(a["v"].get<double>() / (2.0 * a["q"].get<double>()), 1.0, 0.02);
    EXPECT_GT(r.summary["growth_exponent"]["fit"]["v"]["r_squared"].get<double>(), 0.99);
}

TEST(Fits, BadFitSettingsAreRefusedByKey) {
    TempDir tmp;
    const auto refused = [&](const std::string& divergence, const std::string& message) {
        const fs::path c = write_config(tmp, "bad.toml", divergence);
        const CliRun r = run_nhvk({"run", c.string(), "--out", (tmp.path() / "bad").string()}, tmp);
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << divergence << "\n" << r.err;
        EXPECT_FALSE(fs::exists(tmp.path() / "bad" / "summary.json"));
    };
    refused("[divergence]\ngrowth_t_max = 0.05\n[divergence.fit]\nwindow = [0.0, 0.1]",
            "divergence.fit.window: give the fit window either as divergence.growth_t_max or as "
            "divergence.fit.window, not both (they disagree: growth_t_max = 0.05, window ends at 0.1)");
    refused("[divergence.rate]\nstatistic = \"mean\"", "divergence.rate.window: required key is missing");
    refused("[divergence.fit]\nstatistic = \"p50\"", "divergence.fit.statistic");
    refused("[divergence.rate]\nwindow = [2.0, 1.0]", "divergence.rate.window[1]: expected a finite time > t_min = 2");
    refused("[divergence.rate]\nwindow = [-1.0, 1.0]", "divergence.rate.window[0]: expected a time >= t0 = 0");
    refused("[divergence.fit]\nexponents = 2", "divergence.fit");
}

TEST(Fits, ASweepsRatesAreThoseOfItsShardsMerged) {
    TempDir tmp;
    const std::string sweep = "[sweep]\n[[sweep.axes]]\nkey = \"initial.mu.std\"\nname = \"s\"\nvalues = [0.05, 0.2]\n";
    const fs::path c = write_config(tmp, "sweep.toml", "[divergence.rate]\nwindow = [1.0, 5.0]", sweep);
    const auto run = [&](const std::string& out, std::vector<std::string> more) {
        std::vector<std::string> a = {
            "run", c.string(), "--trajectories", "200", "--threads", "1", "--out", (tmp.path() / out).string(), "-q"};
        a.insert(a.end(), more.begin(), more.end());
        const CliRun r = run_nhvk(a, tmp);
        EXPECT_EQ(r.rc, 0) << r.err;
    };
    run("whole", {});
    run("a", {"--shard", "0/3"});
    run("b", {"--shard", "1/3"});
    run("c", {"--shard", "2/3"});
    const CliRun m = run_nhvk({"merge", (tmp.path() / "a").string(), (tmp.path() / "b").string(),
                               (tmp.path() / "c").string(), "--out", (tmp.path() / "merged").string(), "-q"},
                              tmp);
    ASSERT_EQ(m.rc, 0) << m.err;
    const std::string whole = nhvk_test::read_text(tmp.path() / "whole" / "sweep_points.csv");
    EXPECT_EQ(whole, nhvk_test::read_text(tmp.path() / "merged" / "sweep_points.csv"));
    EXPECT_EQ(nhvk_test::run_statistics(tmp.path() / "whole"), nhvk_test::run_statistics(tmp.path() / "merged"));
    const nhvk_test::Csv pts = nhvk_test::parse_csv(whole);
    ASSERT_EQ(pts.rows.size(), 2u);
    const nlohmann::json points = nhvk_test::read_json(tmp.path() / "whole" / "summary.json")["sweep"]["points"];
    for (std::size_t p = 0; p < 2; ++p) {
        ASSERT_FALSE(pts.at(p, "rate_q").empty());
        EXPECT_EQ(std::stod(pts.at(p, "rate_q")), points[p]["growth_rate"]["q"]["rate"].get<double>());
        EXPECT_FALSE(pts.at(p, "rate_lo_q").empty());
    }
    // a sweep without [divergence.rate] leaves the columns empty
    const fs::path plain = write_config(tmp, "plain.toml", "", sweep);
    const CliRun r = run_nhvk({"run", plain.string(), "--trajectories", "100", "--threads", "1", "--out",
                               (tmp.path() / "plain").string(), "-q"},
                              tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const nhvk_test::Csv none = nhvk_test::read_csv(tmp.path() / "plain" / "sweep_points.csv");
    EXPECT_TRUE(none.at(0, "rate_q").empty());
    EXPECT_TRUE(none.at(1, "rate_hi_v").empty());
}

} // namespace
