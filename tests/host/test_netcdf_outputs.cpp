// SPDX-License-Identifier: MIT
// stats.nc and sweep.nc (issue 42 item 1) with the built `nhvk`: every number of the NetCDF files equals its CSV twin
// bit for bit, every CSV column has its variable, the labels and attributes are there, and `nhvk merge` writes them.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/netcdf_output.hpp"

#if NHVK_HAVE_NETCDF
#include "nc_read.hpp"
#endif

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_netcdf_") {}
};

nhvk_test::CliRun run_nhvk(const std::vector<std::string>& args, const TempDir& tmp) {
    return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
}

const std::string source_dir = NHVK_SOURCE_DIR;

#if NHVK_HAVE_NETCDF

using nhvk_test::Nc;

/** True when the CSV field `text` is the very double `x`: the same bits, or empty for NaN (the CSV writes 17
 *  significant digits, which read back to the same double). */
::testing::AssertionResult same_number(const std::string& text, double x) {
    if (text.empty()) {
        if (std::isnan(x)) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "empty field, NetCDF " << x;
    }
    const double y = std::strtod(text.c_str(), nullptr);
    if (std::memcmp(&x, &y, sizeof x) == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "CSV " << text << ", NetCDF " << std::hexfloat << x;
}

/** Every field of the stats rows of `csv` (stats.csv, or sweep.csv with `points`) against the NetCDF variable of its
 *  column; returns how many numbers were compared. */
std::size_t expect_series_equal(const nhvk_test::Csv& csv, const Nc& nc, bool points) {
    const std::vector<double> time = nc.doubles("time");
    const std::vector<std::string> metric = nc.strings("metric");
    const std::size_t T = time.size(), M = metric.size();
    EXPECT_EQ(M, 10u);
    std::map<std::string, std::vector<double>> doubles;
    std::map<std::string, std::vector<unsigned long long>> counts;
    std::size_t compared = 0;
    for (std::size_t r = 0; r < csv.rows.size(); ++r) {
        const std::size_t i = std::stoul(csv.at(r, "time_index")), p = points ? std::stoul(csv.at(r, "point")) : 0;
        std::size_t m = 0;
        while (m < M && metric[m] != csv.at(r, "metric")) ++m;
        if (m == M) {
            ADD_FAILURE() << "metric " << csv.at(r, "metric") << " is not in the NetCDF file";
            return compared;
        }
        EXPECT_TRUE(same_number(csv.at(r, "t"), time[i])) << "row " << r;
        for (std::size_t c = 0; c < csv.header.size(); ++c) {
            const std::string& name = csv.header[c];
            if (name == "time_index" || name == "t" || name == "metric" || name == "point") continue;
            if (!nc.has(name)) {
                if (r == 0) ADD_FAILURE() << "CSV column " << name << " has no NetCDF variable";
                continue;
            }
            // a variable along fewer dimensions is read at the row's point (a sweep axis) or point and time
            const std::size_t rank = nc.dims(name).size() - (points ? 1 : 0);
            const std::size_t at = rank == 0 ? p : rank == 1 ? p * T + i : (p * T + i) * M + m;
            if (nc.type(name) == NC_UINT64) {
                auto it = counts.find(name);
                if (it == counts.end()) it = counts.emplace(name, nc.counts(name)).first;
                EXPECT_EQ(std::to_string(it->second.at(at)), csv.rows[r][c]) << name << " row " << r;
            } else {
                auto it = doubles.find(name);
                if (it == doubles.end()) it = doubles.emplace(name, nc.doubles(name)).first;
                EXPECT_TRUE(same_number(csv.rows[r][c], it->second.at(at))) << name << " row " << r;
            }
            ++compared;
        }
    }
    EXPECT_EQ(csv.rows.size(), (points ? nc.size("point") : 1) * T * M);
    return compared;
}

TEST(NetcdfOutputs, StatsNcHoldsStatsCsvBitForBitWithItsLabels) {
    ASSERT_TRUE(nhvk::netcdf_outputs_built());
    TempDir tmp;
    const fs::path out = tmp.path() / "run";
    const auto r = run_nhvk({"run", source_dir + "/configs/quickstart.toml", "--trajectories", "300", "--threads", "1",
                             "--out", out.string(), "-q"},
                            tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const Nc nc(out / "stats.nc");
    const nhvk_test::Csv csv = nhvk_test::read_csv(out / "stats.csv");
    EXPECT_EQ(expect_series_equal(csv, nc, false), csv.rows.size() * (csv.header.size() - 3));
    EXPECT_EQ(nc.dims("p50"), (std::vector<std::string>{"time", "metric"}));
    EXPECT_EQ(nc.dims("alive_fraction"), (std::vector<std::string>{"time"}));
    // a quantity with no valid value is NaN, as its CSV field is empty: min of res_nh is 0 or more, its p01_se is
    // NaN at small counts; at least one empty field must be among those compared for the NaN rule to be tested
    bool some_empty = false;
    for (const auto& row : csv.rows)
        for (const std::string& f : row) some_empty = some_empty || f.empty();
    EXPECT_TRUE(some_empty);
    // labels: units and definitions along metric, long names, and the run's summary and config as attributes
    const std::vector<std::string> units = nc.strings("metric_unit");
    EXPECT_EQ(units.at(0), "coordinate");
    EXPECT_EQ(units.at(1), "velocity");
    EXPECT_NE(nc.strings("metric_definition").at(0).find("angles wrapped"), std::string::npos);
    EXPECT_EQ(nc.attribute("p50", "long_name"), "quantile 0.5 (median) (type 7)");
    EXPECT_EQ(nc.attribute("p50", "coordinates"), "metric_unit metric_label metric_definition");
    EXPECT_EQ(nc.attribute("", "summary_json"), nhvk_test::read_text(out / "summary.json"));
    const nlohmann::json summary = nhvk_test::read_json(out / "summary.json");
    EXPECT_EQ(nlohmann::json::parse(nc.attribute("", "config")), summary["config"]);
    EXPECT_EQ(nc.attribute("", "model"), "nh_particle");
    EXPECT_EQ(nc.attribute("", "quantiles"), summary["statistics"]["quantiles"].get<std::string>());
}

TEST(NetcdfOutputs, SweepNcHoldsSweepCsvAndSweepPointsCsvBitForBit) {
    TempDir tmp;
    const fs::path out = tmp.path() / "sweep";
    const auto r = run_nhvk({"run", source_dir + "/configs/sweep_particle_mu0.toml", "--trajectories", "60",
                             "--threads", "1", "--out", out.string(), "-q"},
                            tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const Nc nc(out / "sweep.nc");
    const nhvk_test::Csv csv = nhvk_test::read_csv(out / "sweep.csv");
    ASSERT_EQ(csv.header.at(1), "mu_scale");
    // sweep.csv's columns but point, time_index, t and metric (the axis is compared at its point)
    EXPECT_EQ(expect_series_equal(csv, nc, true), csv.rows.size() * (csv.header.size() - 4));
    EXPECT_EQ(nc.dims("p50"), (std::vector<std::string>{"point", "time", "metric"}));
    EXPECT_EQ(nc.attribute("p50", "coordinates"), "point mu_scale metric_unit metric_label metric_definition");
    const nhvk_test::Csv pts = nhvk_test::read_csv(out / "sweep_points.csv");
    ASSERT_EQ(pts.rows.size(), 9u);
    EXPECT_EQ(nc.size("point"), 9u);
    const std::vector<double> axis = nc.doubles("mu_scale");
    EXPECT_EQ(nc.attribute("mu_scale", "sweep_key"), "initial.mu.std");
    std::size_t compared = 0;
    for (std::size_t p = 0; p < pts.rows.size(); ++p) {
        EXPECT_EQ(pts.at(p, "point"), std::to_string(p));
        EXPECT_TRUE(same_number(pts.at(p, "mu_scale"), axis[p])) << p;
        for (std::size_t c = 0; c < pts.header.size(); ++c) {
            const std::string& name = pts.header[c];
            if (name == "point" || name == "mu_scale") continue;
            ASSERT_TRUE(nc.has(name)) << "sweep_points.csv column " << name << " has no NetCDF variable";
            if (nc.type(name) == NC_UINT64)
                EXPECT_EQ(std::to_string(nc.counts(name).at(p)), pts.rows[p][c]) << name << " point " << p;
            else if (nc.type(name) == NC_STRING)
                EXPECT_EQ(nc.strings(name).at(p), pts.rows[p][c]) << name << " point " << p;
            else EXPECT_TRUE(same_number(pts.rows[p][c], nc.doubles(name).at(p))) << name << " point " << p;
            ++compared;
        }
    }
    EXPECT_EQ(compared, 9u * (pts.header.size() - 2));
    // the pooled statistics have their own twin; both files hold summary.json without the points' part, whose
    // numbers are sweep.nc's variables
    EXPECT_TRUE(fs::exists(out / "stats.nc"));
    nlohmann::json summary = nhvk_test::read_json(out / "summary.json");
    ASSERT_EQ(summary["sweep"]["points"].size(), 9u);
    summary["sweep"].erase("points");
    EXPECT_EQ(nlohmann::json::parse(nc.attribute("", "summary_json")), summary);
    EXPECT_EQ(nlohmann::json::parse(Nc(out / "stats.nc").attribute("", "summary_json")), summary);
}

TEST(NetcdfOutputs, MergeWritesTheNcFilesOfTheUnshardedRun) {
    TempDir tmp;
    const std::string config = source_dir + "/configs/sweep_particle_mu0.toml";
    const auto base = [&](const std::string& dir, std::vector<std::string> more) {
        std::vector<std::string> a = {
            "run", config, "--trajectories", "40", "--threads", "1", "--out", (tmp.path() / dir).string(), "-q"};
        a.insert(a.end(), more.begin(), more.end());
        return a;
    };
    ASSERT_EQ(run_nhvk(base("whole", {}), tmp).rc, 0);
    ASSERT_EQ(run_nhvk(base("part0", {"--shard", "0/2"}), tmp).rc, 0);
    ASSERT_EQ(run_nhvk(base("part1", {"--shard", "1/2"}), tmp).rc, 0);
    const auto m = run_nhvk({"merge", (tmp.path() / "part0").string(), (tmp.path() / "part1").string(), "--out",
                             (tmp.path() / "merged").string(), "-q"},
                            tmp);
    ASSERT_EQ(m.rc, 0) << m.err;
    for (const char* file : {"stats.nc", "sweep.nc"}) {
        const Nc a(tmp.path() / "whole" / file), b(tmp.path() / "merged" / file);
        const std::vector<std::string> vars = a.variables();
        EXPECT_EQ(vars, b.variables()) << file;
        EXPECT_GT(vars.size(), 40u);
        for (const std::string& v : vars) {
            const nc_type t = a.type(v);
            if (t == NC_DOUBLE) {
                const std::vector<double> x = a.doubles(v), y = b.doubles(v);
                ASSERT_EQ(x.size(), y.size()) << v;
                EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)), 0) << file << " " << v;
            } else if (t == NC_STRING) {
                EXPECT_EQ(a.strings(v), b.strings(v)) << file << " " << v;
            } else {
                EXPECT_EQ(a.counts(v), b.counts(v)) << file << " " << v;
            }
        }
    }
    // and the merged files are their own CSVs' twins
    const Nc merged(tmp.path() / "merged" / "stats.nc");
    const nhvk_test::Csv csv = nhvk_test::read_csv(tmp.path() / "merged" / "stats.csv");
    EXPECT_GT(expect_series_equal(csv, merged, false), 10000u);
}

#else

TEST(NetcdfOutputs, WithoutTheLibraryNoNcFileIsWritten) {
    EXPECT_FALSE(nhvk::netcdf_outputs_built());
    TempDir tmp;
    const fs::path out = tmp.path() / "run";
    const auto r = run_nhvk(
        {"run", source_dir + "/configs/quickstart.toml", "--trajectories", "100", "--out", out.string(), "-q"}, tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(fs::exists(out / "stats.csv"));
    EXPECT_FALSE(fs::exists(out / "stats.nc"));
}

#endif

} // namespace
