// SPDX-License-Identifier: MIT
// [sweep]: the point sets (ranges, Sobol, Latin hypercube), the loader's checks, and, with the built `nhvk`, that
// every point's statistics are those of the run of that point alone, bit for bit.
#include "nhvk_cli.hpp"
#include "sweep_design.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "registry.hpp"

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk_test::read_json;
using nhvk_test::read_text;

// ---------------------------------------------------------------------------------------------------------------
// The point sets

TEST(SweepDesign, RangesKeepTheirEndsAndSpacing) {
    const std::vector<double> lin = nhvk::sweep_range(0.1, 0.7, 4, false);
    ASSERT_EQ(lin.size(), 4u);
    EXPECT_EQ(lin.front(), 0.1);
    EXPECT_EQ(lin.back(), 0.7);
    EXPECT_EQ(lin[1], 0.3); // 15 significant digits: not 0.30000000000000004
    const std::vector<double> lg = nhvk::sweep_range(0.25, 8.0, 6, true);
    ASSERT_EQ(lg.size(), 6u);
    for (std::size_t i = 0; i < lg.size(); ++i) EXPECT_EQ(lg[i], 0.25 * std::pow(2.0, static_cast<double>(i))) << i;
}

/** The textbook Sobol points of dimensions 1 and 2 (Joe and Kuo; Bratley and Fox): the first 8, as a set. */
TEST(SweepDesign, SobolWithoutShiftIsTheTextbookSequence) {
    const auto x = nhvk::sobol_design(8, 2, 1, false);
    std::set<std::pair<double, double>> got, want = {{0.0, 0.0},     {0.5, 0.5},     {0.75, 0.25},   {0.25, 0.75},
                                                     {0.375, 0.375}, {0.875, 0.875}, {0.625, 0.125}, {0.125, 0.625}};
    const double half_cell = 0.5 / 4294967296.0; // the points sit at the centres of their 2^-32 cells
    for (const auto& p : x) got.insert({p[0] - half_cell, p[1] - half_cell});
    EXPECT_EQ(got, want);
}

/** Every dimension of 2^k Sobol points puts one point in each of 2^k equal strata (a (0, k, 1)-net), shifted or not,
 *  and dimensions 1 and 2 together put one in each elementary box of area 2^-k (a (0, k, 2)-net). */
TEST(SweepDesign, SobolPointsAreNets) {
    const std::size_t k = 6, P = std::size_t{1} << k, D = nhvk::sobol_max_dimensions;
    for (const bool shift : {false, true}) {
        const auto x = nhvk::sobol_design(P, D, 42, shift);
        for (std::size_t d = 0; d < D; ++d) {
            std::vector<int> hits(P, 0);
            for (const auto& p : x) {
                ASSERT_GT(p[d], 0.0);
                ASSERT_LT(p[d], 1.0);
                ++hits[static_cast<std::size_t>(p[d] * static_cast<double>(P))];
            }
            EXPECT_EQ(*std::min_element(hits.begin(), hits.end()), 1) << "dimension " << d << " shift " << shift;
        }
        for (std::size_t a = 0; a <= k; ++a) {
            const std::size_t nx = std::size_t{1} << a, ny = P / nx;
            std::vector<int> box(P, 0);
            for (const auto& p : x)
                ++box[static_cast<std::size_t>(p[0] * nx) * ny + static_cast<std::size_t>(p[1] * ny)];
            EXPECT_EQ(*std::max_element(box.begin(), box.end()), 1) << "boxes " << nx << " x " << ny;
        }
    }
    // the shift comes from the seed: another seed, other points
    EXPECT_NE(nhvk::sobol_design(4, 2, 1)[1], nhvk::sobol_design(4, 2, 2)[1]);
    EXPECT_EQ(nhvk::sobol_design(4, 2, 1)[1], nhvk::sobol_design(4, 2, 1)[1]);
}

TEST(SweepDesign, LatinHypercubeHasOnePointPerStratumInEveryDimension) {
    const std::size_t P = 37, D = 4;
    const auto x = nhvk::latin_hypercube_design(P, D, 7);
    for (std::size_t d = 0; d < D; ++d) {
        std::vector<int> hits(P, 0);
        for (const auto& p : x) ++hits[static_cast<std::size_t>(p[d] * static_cast<double>(P))];
        EXPECT_EQ(*std::min_element(hits.begin(), hits.end()), 1) << d;
    }
    // the strata are shuffled (not the identity in every dimension) and the seed decides how
    int ordered = 0;
    for (std::size_t i = 0; i < P; ++i) ordered += static_cast<std::size_t>(x[i][0] * P) == i;
    EXPECT_LT(ordered, 10);
    EXPECT_NE(nhvk::latin_hypercube_design(P, D, 8)[0], x[0]);
}

// ---------------------------------------------------------------------------------------------------------------
// The loader

const std::string kBase = R"([model]
name = "knife_edge"
[model.params]
alpha = 0.3
[initial.q]
x = { dist = "uniform", low = -1.0, high = 1.0 }
[initial.v]
x = { dist = "normal", mean = 0.0, std = 1.0 }
y = { dist = "normal", mean = 0.0, std = 1.0 }
phi = { dist = "normal", mean = 0.0, std = 1.0 }
[initial.mu]
dist = "normal"
mean = 0.0
std = 0.1
[times]
t_end = 1.0
spacing = "log"
count = 8
t_first = 1e-2
[run]
trajectories = 50
chunk = 40
threads = 1
)";

nhvk::RunConfig load(const std::string& sweep) {
    return nhvk::parse_config(kBase + sweep, "sweep.toml", {}, nhvk::model_registry());
}

std::string error_of(const std::string& sweep) {
    try {
        (void)load(sweep);
    } catch (const nhvk::ConfigError& e) {
        return e.what();
    }
    return "";
}

TEST(SweepConfig, ProductVariesTheLastAxisFastestAndEveryPointIsItsOwnConfiguration) {
    const nhvk::RunConfig cfg = load("[sweep]\n[[sweep.axes]]\nkey = \"model.params.g\"\nvalues = [1.0, 2.0]\n"
                                     "[[sweep.axes]]\nkey = \"initial.mu.std\"\nrange = [0.1, 0.3]\ncount = 3\n");
    ASSERT_TRUE(cfg.sweep);
    ASSERT_EQ(cfg.points(), 6u);
    EXPECT_EQ(cfg.members(), 300u);
    const nhvk::Sweep& sw = *cfg.sweep;
    EXPECT_EQ(sw.axes[0].name, "g");
    EXPECT_EQ(sw.axes[1].name, "initial.mu.std");
    const std::vector<std::vector<double>> want = {{1.0, 0.1}, {1.0, 0.2}, {1.0, 0.3},
                                                   {2.0, 0.1}, {2.0, 0.2}, {2.0, 0.3}};
    EXPECT_EQ(sw.values, want);
    const int g = cfg.model.param_index("g");
    for (std::size_t p = 0; p < 6; ++p) {
        const nhvk::RunConfig& c = sw.configs[p];
        EXPECT_FALSE(c.sweep);
        EXPECT_EQ(c.params[static_cast<std::size_t>(g)], want[p][0]);
        EXPECT_EQ(c.mu0[0].b, want[p][1]); // the normal's std
        EXPECT_EQ(c.mu0[0].a, 0.0);
        // the point's configuration is the base one's with the point's --set: the same resolved text
        const nhvk::RunConfig alone = nhvk::parse_config(kBase, "sweep.toml", sw.sets(p), nhvk::model_registry());
        EXPECT_EQ(alone.resolved_json(), c.resolved_json()) << p;
    }
    EXPECT_EQ(sw.sets(4), (std::vector<std::string>{"model.params.g=2", "initial.mu.std=0.2"}));
    EXPECT_EQ(nhvk::sweep_value_text(-100.0), "-100");
    EXPECT_EQ(nhvk::sweep_value_text(1e-9), "1e-09");
    EXPECT_EQ(nhvk::sweep_value_text(0.1 + 0.2), "0.30000000000000004");
    for (double x : {-100.0, 1e-9, 0.1 + 0.2, 123456.789, 1e300, -0.0})
        EXPECT_EQ(std::strtod(nhvk::sweep_value_text(x).c_str(), nullptr), x) << x;
}

TEST(SweepConfig, ZipPairsTheValuesAndDesignsDrawInTheRanges) {
    const nhvk::RunConfig zip = load("[sweep]\ncombine = \"zip\"\n[[sweep.axes]]\nkey = \"model.params.g\"\n"
                                     "values = [1.0, 2.0, 3.0]\n[[sweep.axes]]\nkey = \"model.params.alpha\"\n"
                                     "values = [0.1, 0.2, 0.3]\n");
    ASSERT_EQ(zip.points(), 3u);
    EXPECT_EQ(zip.sweep->values[2], (std::vector<double>{3.0, 0.3}));
    for (const char* design : {"sobol", "latin_hypercube"}) {
        const nhvk::RunConfig d =
            load(std::string("[sweep]\ncombine = \"") + design +
                 "\"\npoints = 16\n[[sweep.axes]]\nkey = "
                 "\"model.params.g\"\nrange = [1.0, 100.0]\nspacing = \"log\"\n[[sweep.axes]]\nkey = "
                 "\"initial.q.x.high\"\nrange = [1.5, 2.0]\n");
        ASSERT_EQ(d.points(), 16u) << design;
        std::vector<int> decades(2, 0);
        for (const auto& v : d.sweep->values) {
            EXPECT_GE(v[0], 1.0);
            EXPECT_LE(v[0], 100.0);
            EXPECT_GE(v[1], 1.5);
            EXPECT_LE(v[1], 2.0);
            ++decades[v[0] < 10.0 ? 0 : 1];
        }
        // log spacing: as many points in each decade (stratified in log g)
        EXPECT_EQ(decades[0], 8) << design;
    }
}

TEST(SweepConfig, BadSweepsAreRefusedNamingTheAxisOrThePoint) {
    const std::string axis = "[sweep]\n[[sweep.axes]]\n";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {axis + "key = \"model.params.gg\"\nvalues = [1.0]\n", "sweep.axes[0].key: unknown parameter \"gg\""},
        {axis + "key = \"model.params.alpa\"\nvalues = [1.0]\n", "did you mean \"alpha\"?"},
        {axis + "key = \"run.seed\"\nvalues = [1.0]\n", "sweep.axes[0].key: expected a model parameter"},
        {axis + "key = \"initial.q.w\"\nvalues = [1.0]\n", "unknown coordinate \"w\""},
        {axis + "key = \"model.params.g\"\nvalues = []\n", "sweep.axes[0].values: expected a non-empty array"},
        {axis + "key = \"model.params.g\"\nrange = [2.0, 1.0]\ncount = 3\n", "an empty or inverted range"},
        {axis + "key = \"model.params.g\"\nrange = [1.0, 1.0]\ncount = 3\n", "an empty or inverted range"},
        {axis + "key = \"model.params.g\"\nrange = [0.0, 1.0]\ncount = 3\nspacing = \"log\"\n",
         "sweep.axes[0].range[0]: expected low > 0 with spacing = \"log\""},
        {axis + "key = \"model.params.g\"\nrange = [-1.0, 1.0]\ncount = 3\nspacing = \"log\"\n",
         "cannot reach or cross 0"},
        {axis + "key = \"model.params.g\"\nrange = [1.0, 2.0]\ncount = 1\n",
         "sweep.axes[0].count: expected an integer"},
        {axis + "key = \"model.params.g\"\nrange = [1.0, 2.0]\n", "sweep.axes[0].count: required key is missing"},
        {axis + "key = \"model.params.g\"\nvalues = [1.0]\nrange = [1.0, 2.0]\n", "not both"},
        {"[sweep]\npoints = 3\n[[sweep.axes]]\nkey = \"model.params.g\"\nvalues = [1.0]\n", "needs combine"},
        {"[sweep]\ncombine = \"sobol\"\n[[sweep.axes]]\nkey = \"model.params.g\"\nrange = [1.0, 2.0]\n",
         "sweep.points: required key is missing"},
        {"[sweep]\ncombine = \"zip\"\n[[sweep.axes]]\nkey = \"model.params.g\"\nvalues = [1.0, 2.0]\n"
         "[[sweep.axes]]\nkey = \"model.params.alpha\"\nvalues = [1.0]\n",
         "expected 2 values"},
        {axis + "key = \"model.params.g\"\nvalues = [1.0]\n[[sweep.axes]]\nkey = \"model.params.g\"\nvalues = [2.0]\n",
         "swept twice"},
        {"[sweep]\ncombine = \"product\"\n", "sweep.axes: required key is missing"},
        // a point outside a parameter's range: the point, its values, the key and the range
        {axis + "key = \"model.params.m\"\nvalues = [1.0, -2.0]\n",
         "[sweep] point 1 of 2 (m = -2): model.params.m: expected a number > 0"},
        // a point that makes another check fail: the point is named first
        {axis + "key = \"initial.q.x.high\"\nvalues = [2.0, -3.0]\n", "[sweep] point 1 of 2 (initial.q.x.high = -3): "},
    };
    for (const auto& [sweep, want] : cases) {
        const std::string e = error_of(sweep);
        EXPECT_NE(e.find(want), std::string::npos) << sweep << "\n→ " << e << "\nwanted: " << want;
    }
    // the same keys without a problem load
    EXPECT_EQ(error_of(axis + "key = \"model.params.m\"\nvalues = [1.0, 2.0]\n"), "");
}

// ---------------------------------------------------------------------------------------------------------------
// Runs: each point is the run of that point alone

struct Dir : nhvk_test::TempDir {
    Dir() : nhvk_test::TempDir("nhvk_sweep_") {}
};

nhvk_test::CliRun nhvk(const std::vector<std::string>& args, const Dir& tmp) {
    return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
}

/** `text` into `path`. */
void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/** sweep.csv's rows of point p without its leading point and axis columns, with stats.csv's header. */
std::string point_rows(const std::string& sweep_csv, std::size_t p, std::size_t axes) {
    std::istringstream in(sweep_csv);
    std::string line, out;
    const auto strip = [&](const std::string& l) {
        std::size_t at = 0;
        for (std::size_t k = 0; k <= axes; ++k) at = l.find(',', at) + 1;
        return l.substr(at);
    };
    std::getline(in, line);
    out = strip(line) + "\n";
    while (std::getline(in, line))
        if (line.compare(0, line.find(','), std::to_string(p)) == 0) out += strip(line) + "\n";
    return out;
}

/** Point p's part of summary.json against the summary of the run of that point alone. */
void expect_point_is_its_run(const nlohmann::json& point, const nlohmann::json& alone, const std::string& what) {
    EXPECT_EQ(point["trajectories"]["valid"], alone["trajectories"]["valid"]) << what;
    EXPECT_EQ(point["trajectories"]["failed"], alone["trajectories"]["failed"]["total"]) << what;
    for (const char* d : {"q", "v"}) {
        EXPECT_EQ(point["growth_exponent"][d]["exponent"], alone["growth_exponent"][d]) << what;
        EXPECT_EQ(point["growth_exponent"][d]["amplitude"], alone["growth_exponent"]["amplitude"][d]) << what;
        EXPECT_EQ(point["growth_exponent"][d]["ci95"], alone["growth_exponent"]["sampling"][d]["ci95"]) << what;
        EXPECT_EQ(point["growth_exponent"][d]["amplitude_ci95"],
                  alone["growth_exponent"]["sampling"][d]["amplitude_ci95"])
            << what;
    }
    EXPECT_EQ(point["onset"]["p50"], alone["onset"]["quantiles"]["p50"]) << what;
    EXPECT_EQ(point["onset"]["never"], alone["onset"]["never"]) << what;
}

TEST(SweepRun, EveryPointIsTheRunOfThatPointAloneBitForBit) {
    Dir tmp;
    // the loader test's product sweep (6 points of 60 members in chunks of 50: chunks span points), over a μ0
    // scale and the width of a coordinate's distribution, in exact and in histogram mode
    const std::string text = read_text(fs::path(NHVK_SOURCE_DIR) / "tests/host/data/sweep_product.toml");
    const std::string base = text.substr(0, text.find("[sweep]"));
    write(tmp.path() / "sweep.toml", text);
    write(tmp.path() / "base.toml", base);
    for (const std::string budget : {"1024", "0"}) {
        const fs::path out = tmp.path() / ("sweep_" + budget);
        const auto r = nhvk({"run", (tmp.path() / "sweep.toml").string(), "--out", out.string(), "--threads", "2",
                             "--save-trajectories", "2", "--set", "run.exact_memory_mb=" + budget},
                            tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_NE(r.err.find("sweep: 6 points (product) x 60 trajectories"), std::string::npos) << r.err;
        const nlohmann::json s = read_json(out / "summary.json");
        ASSERT_EQ(s["sweep"]["points"].size(), 6u);
        EXPECT_EQ(s["trajectories"]["requested"], 360); // the pooled statistics cover every point's members
        const std::string sweep_csv = read_text(out / "sweep.csv");
        // summary.md's table of the points: a row per point, led by its axes' values
        const std::string md = read_text(out / "summary.md");
        EXPECT_NE(md.find("| point | mu_scale | initial.q.y.high |"), std::string::npos) << md;
        EXPECT_NE(md.find("| 5 | 0.2 | 2 | 60 | 0 |"), std::string::npos) << md;
        for (const std::size_t p : {std::size_t{1}, std::size_t{5}}) {
            const nlohmann::json& point = s["sweep"]["points"][p];
            std::vector<std::string> args = {"run",
                                             (tmp.path() / "base.toml").string(),
                                             "--out",
                                             (tmp.path() / ("alone" + std::to_string(p))).string(),
                                             "--threads",
                                             "1",
                                             "--save-trajectories",
                                             "2",
                                             "--set",
                                             "run.exact_memory_mb=" + budget};
            for (const auto& set : point["set"]) args.insert(args.end(), {"--set", set.get<std::string>()});
            const auto a = nhvk(args, tmp);
            ASSERT_EQ(a.rc, 0) << a.err;
            const fs::path alone = tmp.path() / ("alone" + std::to_string(p));
            const std::string what = "point " + std::to_string(p) + " budget " + budget;
            EXPECT_EQ(point_rows(sweep_csv, p, 2), read_text(alone / "stats.csv")) << what;
            expect_point_is_its_run(point, read_json(alone / "summary.json"), what);
            EXPECT_EQ(point["quantiles"], budget == "0" ? "histogram" : "exact");
            // the saved trajectories: the point's first two members, under the job's indices
            const auto name = [](std::size_t g) {
                std::ostringstream n;
                n << "trajectories/trajectory_" << std::setw(6) << std::setfill('0') << g << ".csv";
                return n.str();
            };
            for (std::size_t i = 0; i < 2; ++i) {
                const std::string saved = read_text(out / name(60 * p + i));
                EXPECT_GT(saved.size(), 100u) << what << " member " << i;
                EXPECT_EQ(saved, read_text(alone / name(i))) << what << " member " << i;
            }
        }
    }
}

TEST(SweepRun, AParameterThatDoesNotEnterGivesTheSameStatisticsAtEveryPoint) {
    Dir tmp;
    // knife_edge on a level plane (alpha = 0): g enters only as g sin(alpha) = 0
    write(tmp.path() / "level.toml", kBase + "[sweep]\n[[sweep.axes]]\nkey = \"model.params.g\"\n"
                                             "values = [1.0, 9.81, 100.0]\n");
    const fs::path out = tmp.path() / "out";
    const auto r = nhvk(
        {"run", (tmp.path() / "level.toml").string(), "--out", out.string(), "--set", "model.params.alpha=0", "-q"},
        tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string csv = read_text(out / "sweep.csv");
    const std::string first = point_rows(csv, 0, 1);
    EXPECT_GT(std::count(first.begin(), first.end(), '\n'), 8 * 7);
    for (std::size_t p = 1; p < 3; ++p) EXPECT_EQ(point_rows(csv, p, 1), first) << p;
    // and the check can fail: on the incline g does enter
    const fs::path tilted = tmp.path() / "tilted";
    ASSERT_EQ(nhvk({"run", (tmp.path() / "level.toml").string(), "--out", tilted.string(), "-q"}, tmp).rc, 0);
    const std::string t = read_text(tilted / "sweep.csv");
    EXPECT_NE(point_rows(t, 1, 1), point_rows(t, 0, 1));
}

TEST(SweepRun, BadSweepsExit2WithoutAnOutputFolder) {
    Dir tmp;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"[sweep]\n[[sweep.axes]]\nkey = \"model.params.mm\"\nvalues = [1.0]\n", "unknown parameter \"mm\""},
        {"[sweep]\n[[sweep.axes]]\nkey = \"model.params.m\"\nrange = [-1.0, 1.0]\ncount = 3\n",
         "[sweep] point 0 of 3 (m = -1)"},
        {"[sweep]\n[[sweep.axes]]\nkey = \"model.params.g\"\nrange = [0.0, 1.0]\ncount = 3\nspacing = \"log\"\n",
         "cannot reach or cross 0"},
        // an energy shell no state reaches: E0 far below the least energy -m g sin(alpha) x of the sampled states
        {"[initial]\nenergy = 1.0\n[sweep]\n[[sweep.axes]]\nkey = \"initial.energy\"\nvalues = [1.0, -100.0]\n",
         "[sweep] point 1 of 2 (initial.energy = -100): initial.energy: no state reaches the energy shell"},
        // too much memory: 20000 points of 100 output times keep about 9 GiB of summaries, refused under a data
        // limit of 2 GiB (below) whatever the machine's memory
        {"[sweep]\n[[sweep.axes]]\nkey = \"model.params.g\"\nrange = [1.0, 2.0]\ncount = 20000\n",
         "sweep: the run needs about"},
    };
    int i = 0;
    for (const auto& [sweep, want] : cases) {
        const fs::path cfg = tmp.path() / ("bad" + std::to_string(i) + ".toml");
        const fs::path out = tmp.path() / ("out" + std::to_string(i++));
        std::string text = kBase + sweep;
        if (sweep.rfind("[initial]", 0) == 0) {
            // [initial] must come before its sub-tables: put the energy in the base's own table
            text = kBase;
            text.insert(text.find("[initial.q]"), "[initial]\nenergy = 1.0\n");
            text += sweep.substr(sweep.find("[sweep]"));
        }
        const bool large = sweep.find("20000") != std::string::npos;
        if (large) text.replace(text.find("count = 8"), 9, "count = 100");
        write(cfg, text);
        const auto r = nhvk_test::run_captured(large ? "ulimit -d 2097152 &&" : "", NHVK_BINARY,
                                               {"run", cfg.string(), "--out", out.string()}, tmp.path() / "io");
        EXPECT_EQ(r.rc, 2) << sweep << r.err;
        EXPECT_NE(r.err.find(want), std::string::npos) << r.err << "\nwanted: " << want;
        EXPECT_FALSE(fs::exists(out)) << out;
    }
}

} // namespace
