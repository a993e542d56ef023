// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support shared by the whole-ensemble tests of the CPU pipeline (tests/host/test_ensemble.cpp) and of
 *         the CUDA backend against it (tests/kernels/test_cuda_backend.cpp): the sampled ensembles their configs are
 *         made of, config text parsed with the model registry, quiet run options, and the comparisons of the member
 *         counts of two runs of one ensemble and of two reductions' series.
 *
 *  The ensembles are config fragments (TOML text) written once here, each made of whole tables, so that a test puts
 *  them together with the integrator, output-time and run tables it needs, in any order.
 */
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "config.hpp"
#include "ensemble.hpp"
#include "registry.hpp"

namespace nhvk_test {

/** The bits of `x`: equal for equal doubles, NaN included, and unequal for 0 and −0. */
inline std::uint64_t bits(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

/** Every config of configs/, sorted: the parameters of the tests that run each bundled config. */
inline std::vector<std::string> bundled_configs() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(NHVK_SOURCE_DIR) / "configs"))
        if (e.path().extension() == ".toml") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

/** The name of a bundled config's test: the file's stem, with '_' for what a test name cannot hold. */
inline std::string config_test_name(const ::testing::TestParamInfo<std::string>& i) {
    std::string n = std::filesystem::path(i.param).stem().string();
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
}

/** `[model]` naming `name`. */
inline std::string model_table(const std::string& name) { return "[model]\nname = \"" + name + "\"\n"; }

/** One coordinate of an [initial.q] or [initial.v] table drawn from N(mean, std²). */
inline std::string normal_line(const std::string& coord, const std::string& mean = "0.0",
                               const std::string& std = "1.0") {
    return coord + " = { dist = \"normal\", mean = " + mean + ", std = " + std + " }\n";
}

/** The table `[section]` with each of `coords` drawn from N(0, 1). */
inline std::string standard_normal_table(const std::string& section, std::initializer_list<const char*> coords) {
    std::string s = "[" + section + "]\n";
    for (const char* c : coords) s += normal_line(c);
    return s;
}

/** `[initial.mu]`: every vakonomic multiplier drawn from N(0, std²). */
inline std::string mu_normal_table(const std::string& std) {
    return "[initial.mu]\ndist = \"normal\"\nmean = 0.0\nstd = " + std + "\n";
}

/** nh_particle, the quickstart shape: x ~ N(0, 1), y ~ U(−1, 1), z = 0; every velocity ~ N(0, 1). */
inline std::string nh_particle_states() {
    return "[initial.q]\n" + normal_line("x") + "y = { dist = \"uniform\", low = -1.0, high = 1.0 }\n" +
           standard_normal_table("initial.v", {"x", "y", "z"});
}

/** rolling_disc with a parameter sweep (per-member α ~ U(0, 0.5) and R ~ U(0.4, 0.6)), angles over (−3, 3), angular
 *  speeds ~ N(0, 2²), x and the linear speeds ~ N(0, 1); y = 0. */
inline std::string rolling_disc_sweep_states() {
    return R"([model.params]
alpha = { dist = "uniform", low = 0.0, high = 0.5 }
R = { dist = "uniform", low = 0.4, high = 0.6 }
[initial.q]
)" + normal_line("x") +
           R"(theta = { dist = "uniform", low = -3.0, high = 3.0 }
phi = { dist = "uniform", low = -3.0, high = 3.0 }
[initial.v]
)" + normal_line("x") +
           normal_line("y") + normal_line("theta", "0.0", "2.0") + normal_line("phi", "0.0", "2.0");
}

/** ball_on_turntable (affine constraints, angles, a chart): x, y ~ N(0, 1), ψ and φ over (−3, 3), θ over (−1.2, 1.2)
 *  (inside the chart); every velocity ~ N(0, 1). */
inline std::string ball_on_turntable_states() {
    return "[initial.q]\n" + normal_line("x") + normal_line("y") +
           R"(psi = { dist = "uniform", low = -3.0, high = 3.0 }
theta = { dist = "uniform", low = -1.2, high = 1.2 }
phi = { dist = "uniform", low = -3.0, high = 3.0 }
)" + standard_normal_table("initial.v", {"x", "y", "psi", "theta", "phi"});
}

/** sphere_holonomic: x, y, z and their velocities ~ N(0, 1). */
inline std::string sphere_states() {
    return standard_normal_table("initial.q", {"x", "y", "z"}) + standard_normal_table("initial.v", {"x", "y", "z"});
}

/** Config text parsed against the model registry (`sets`: `--set key=value` overrides). */
inline nhvk::RunConfig parse(const std::string& text, const std::vector<std::string>& sets = {}) {
    return nhvk::parse_config(text, "test.toml", sets, nhvk::model_registry());
}

/** Quiet run options: no progress line, no summary. */
inline nhvk::EnsembleOptions quiet() {
    nhvk::EnsembleOptions o;
    o.quiet = true;
    o.progress = false;
    return o;
}

/** Two runs of one ensemble account for their members alike: requested, valid, failures by status, dynamics and
 *  sampling status, onsets, and the quantile mode in force. */
inline void expect_same_counts(const nhvk::EnsembleResult& r, const nhvk::EnsembleResult& ref, const std::string& tag) {
    EXPECT_EQ(r.requested, ref.requested) << tag;
    EXPECT_EQ(r.valid, ref.valid) << tag;
    EXPECT_EQ(r.failed_by_status, ref.failed_by_status) << tag;
    EXPECT_EQ(r.failed_by_dynamics, ref.failed_by_dynamics) << tag;
    EXPECT_EQ(r.sampling, ref.sampling) << tag;
    EXPECT_EQ(r.exact_quantiles, ref.exact_quantiles) << tag;
    EXPECT_EQ(r.onset.counts, ref.onset.counts) << tag;
    EXPECT_EQ(r.onset.never, ref.onset.never) << tag;
}

/** Two reductions of the same members agree bit for bit in every series' summary: counts, moments, extremes,
 *  quantiles and their intervals, and the std's interval from the replica groups (NaN where both are NaN). */
inline void expect_same_series(const nhvk::EnsembleResult& a, const nhvk::EnsembleResult& b) {
    ASSERT_EQ(a.series.size(), b.series.size());
    ASSERT_EQ(a.exact_quantiles, b.exact_quantiles);
    for (std::size_t s = 0; s < a.series.size(); ++s) {
        const auto& x = a.series[s];
        const auto& y = b.series[s];
        EXPECT_EQ(x.count, y.count) << "series " << s;
        EXPECT_EQ(x.nonfinite, y.nonfinite) << "series " << s;
        EXPECT_EQ(x.outside_range, y.outside_range) << "series " << s;
        std::vector<double> xs = {x.mean, x.std, x.min,     x.max,     x.p01,     x.p05,    x.p25,    x.p50,   x.p75,
                                  x.p95,  x.p99, x.mean_se, x.mean_lo, x.mean_hi, x.std_se, x.std_lo, x.std_hi};
        std::vector<double> ys = {y.mean, y.std, y.min,     y.max,     y.p01,     y.p05,    y.p25,    y.p50,   y.p75,
                                  y.p95,  y.p99, y.mean_se, y.mean_lo, y.mean_hi, y.std_se, y.std_lo, y.std_hi};
        for (int q = 0; q < 7; ++q) {
            xs.insert(xs.end(), {x.q_lo[q], x.q_hi[q], x.q_se[q]});
            ys.insert(ys.end(), {y.q_lo[q], y.q_hi[q], y.q_se[q]});
        }
        for (std::size_t i = 0; i < xs.size(); ++i)
            EXPECT_TRUE((std::isnan(xs[i]) && std::isnan(ys[i])) || xs[i] == ys[i])
                << "series " << s << " field " << i << ": " << xs[i] << " vs " << ys[i];
    }
}

} // namespace nhvk_test
