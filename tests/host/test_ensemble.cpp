// SPDX-License-Identifier: MIT
// The ensemble pipeline in process (host/ensemble.hpp, host/sampling_impl.hpp): reproducibility of the statistics,
// sampling on the constraint set and on an energy shell (docs/physics.md §6), the divergence laws of its §4 seen
// through the ensemble statistics (docs/numerics.md §7), and the accounting of failed trajectories (there, §1, §7.5).
#include "csv_table.hpp"
#include "ensemble_testing.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "ensemble.hpp"
#include "model_ops.hpp"
#include "nhvk/distribution.hpp"
#include "nhvk/generated/all.hpp"
#include "nhvk/rng.hpp"
#include "registry.hpp"
#include "sampling_impl.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk::EnsembleResult;
using nhvk::RunConfig;
using nhvk::SampleStatus;
using nhvk::stats::SeriesSummary;

// ---------------------------------------------------------------------------------------------------------------
// helpers

/** A fresh per-test temporary folder (tests/temp_dir.hpp). */
struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_test_") {}
};

using nhvk_test::model_table;
using nhvk_test::mu_normal_table;
using nhvk_test::parse;
using nhvk_test::quiet;

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

nlohmann::json read_json(const fs::path& p) {
    std::ifstream in(p);
    EXPECT_TRUE(in.good()) << "cannot open " << p;
    return nlohmann::json::parse(in);
}

using nhvk_test::bits;

/** Field-by-field bit equality of two summaries (NaN == NaN when the bits agree). */
void expect_bit_identical(const SeriesSummary& a, const SeriesSummary& b, const std::string& where) {
    EXPECT_EQ(a.count, b.count) << where;
    EXPECT_EQ(a.nonfinite, b.nonfinite) << where;
    EXPECT_EQ(a.exact, b.exact) << where;
    const double SeriesSummary::*fields[] = {&SeriesSummary::mean, &SeriesSummary::std, &SeriesSummary::min,
                                             &SeriesSummary::max,  &SeriesSummary::p01, &SeriesSummary::p05,
                                             &SeriesSummary::p25,  &SeriesSummary::p50, &SeriesSummary::p75,
                                             &SeriesSummary::p95,  &SeriesSummary::p99};
    const char* names[] = {"mean", "std", "min", "max", "p01", "p05", "p25", "p50", "p75", "p95", "p99"};
    for (std::size_t f = 0; f < sizeof fields / sizeof fields[0]; ++f)
        EXPECT_EQ(bits(a.*fields[f]), bits(b.*fields[f]))
            << where << " " << names[f] << ": " << a.*fields[f] << " vs " << b.*fields[f];
    const double SeriesSummary::*intervals[] = {&SeriesSummary::mean_se, &SeriesSummary::mean_lo,
                                                &SeriesSummary::mean_hi, &SeriesSummary::std_se,
                                                &SeriesSummary::std_lo,  &SeriesSummary::std_hi};
    for (const auto f : intervals) EXPECT_EQ(bits(a.*f), bits(b.*f)) << where << " interval of mean/std";
    for (int i = 0; i < 7; ++i) {
        EXPECT_EQ(bits(a.q_lo[i]), bits(b.q_lo[i])) << where << " quantile " << i << " lo";
        EXPECT_EQ(bits(a.q_hi[i]), bits(b.q_hi[i])) << where << " quantile " << i << " hi";
    }
}

/** The replica groups' statistics, bit for bit: each group's exponent and amplitude and the intervals from them. */
void expect_same_replicas(const EnsembleResult& a, const EnsembleResult& b, const std::string& where) {
    EXPECT_EQ(a.replicas, b.replicas) << where;
    for (const auto& [x, y] : {std::pair{&a.replica_growth_q, &b.replica_growth_q},
                               {&a.replica_growth_v, &b.replica_growth_v},
                               {&a.replica_amplitude_q, &b.replica_amplitude_q},
                               {&a.replica_amplitude_v, &b.replica_amplitude_v}}) {
        ASSERT_EQ(x->size(), y->size()) << where;
        for (std::size_t g = 0; g < x->size(); ++g) EXPECT_EQ(bits((*x)[g]), bits((*y)[g])) << where << " group " << g;
    }
    for (const auto& [x, y] : {std::pair{&a.growth_ci_q, &b.growth_ci_q}, {&a.amplitude_ci_v, &b.amplitude_ci_v}}) {
        EXPECT_EQ(x->groups, y->groups) << where;
        EXPECT_EQ(bits(x->lo), bits(y->lo)) << where;
        EXPECT_EQ(bits(x->hi), bits(y->hi)) << where;
    }
}

/** summary.json without what legitimately differs between runs of the same ensemble. */
nlohmann::json comparable_summary(nlohmann::json j) {
    j.erase("timing");
    j.erase("threads");
    j.erase("config");
    return j;
}

using nhvk_test::Csv;
using nhvk_test::read_csv;

/** Generic config text for `model`: every coordinate and trial velocity normal, short linear time grid. */
std::string generic_config(const nhvk::ModelInfo& m, const std::string& extra = "") {
    std::ostringstream os;
    os << "[model]\nname = \"" << m.name << "\"\n[initial.q]\n";
    for (int j = 0; j < m.n; ++j)
        os << m.coords[j] << " = { dist = \"normal\", mean = " << 0.1 * (j + 1) << ", std = 0.7 }\n";
    os << "[initial.v]\n";
    for (int j = 0; j < m.n; ++j) os << m.coords[j] << " = { dist = \"normal\", mean = 0.3, std = 1.0 }\n";
    os << "[times]\nt_end = 0.01\ncount = 2\n" << extra;
    return os.str();
}

double max_abs(const double* x, int n) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s = std::max(s, std::fabs(x[j]));
    return s;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. The same seed gives bit-identical statistics for any thread count and chunk size, in both quantile modes.

struct DeterminismCase {
    const char* name;
    std::string toml;
};

// nh_particle with μ0 drawn (the quickstart shape), and rolling_disc with a parameter sweep (per-member parameters)
// and a step limit that makes a fraction of the members fail, so the failure counts are part of what must agree.
const DeterminismCase determinism_cases[] = {
    {"nh_particle", model_table("nh_particle") + nhvk_test::nh_particle_states() + mu_normal_table("0.5") + R"(
[times]
t_end = 0.5
spacing = "log"
count = 8
t_first = 1e-3
[statistics]
replicas = 4
[run]
trajectories = 240
seed = 7
save_samples = true
)"},
    {"rolling_disc_sweep",
     model_table("rolling_disc") + nhvk_test::rolling_disc_sweep_states() + mu_normal_table("0.3") + R"(
[integrator]
max_steps = 80
[times]
t_end = 0.5
count = 5
[statistics]
replicas = 4
[run]
trajectories = 120
seed = 3
)"},
};

class EnsembleDeterminism : public ::testing::TestWithParam<std::tuple<int, bool>> {};

// A determinism (indexing) test, not a validation: the same run under other thread counts and chunk sizes must give
// the same bits; what the statistics are worth is checked by the closed-form and reference tests elsewhere.
TEST_P(EnsembleDeterminism, SameSeedGivesBitIdenticalStatisticsForAnyThreadsAndChunks) {
    const DeterminismCase& dc = determinism_cases[std::get<0>(GetParam())];
    const bool histogram = std::get<1>(GetParam());
    TempDir tmp;
    struct Variant {
        int threads;
        long long chunk;
    };
    const Variant variants[] = {{1, 1000}, {2, 1000}, {4, 1000}, {2, 77}, {4, 77}, {1, 1}, {4, 1}};
    std::vector<EnsembleResult> results;
    std::vector<std::string> dirs;
    for (const Variant& v : variants) {
        RunConfig cfg = parse(dc.toml);
        cfg.run.threads = v.threads;
        cfg.run.chunk = v.chunk;
        cfg.run.backend = nhvk::Backend::cpu;
        if (histogram) cfg.run.exact_memory_mb = 0;
        cfg.run.out = tmp.str("t" + std::to_string(v.threads) + "_c" + std::to_string(v.chunk));
        dirs.push_back(cfg.run.out);
        results.push_back(nhvk::run_ensemble(cfg, quiet()));
    }
    const EnsembleResult& ref = results[0];
    // The test must be able to fail: the statistics are non-trivial and the requested mode is the one in force.
    ASSERT_GT(ref.valid, 0u);
    EXPECT_EQ(ref.exact_quantiles, !histogram);
    ASSERT_EQ(ref.series.size(), static_cast<std::size_t>(nhvk::metric_rows(int(ref.times.size()))));
    if (std::string(dc.name) == "rolling_disc_sweep") EXPECT_GT(ref.failed(), 0u) << "the step limit should bite";
    // the replica groups hold different members, so their exponents differ (and chunk 1 or 77 splits them apart);
    // 4 groups, so that each keeps the 10 members an interval needs where the step limit fails some (README, Error
    // bars)
    ASSERT_EQ(ref.replicas, 4);
    ASSERT_EQ(ref.replica_growth_q.size(), 4u);
    EXPECT_NE(bits(ref.replica_growth_q[0]), bits(ref.replica_growth_q[1]));
    EXPECT_TRUE(std::isfinite(ref.growth_ci_q.lo) && ref.growth_ci_q.lo < ref.growth_q &&
                ref.growth_q < ref.growth_ci_q.hi);

    const nlohmann::json ref_summary = comparable_summary(read_json(fs::path(dirs[0]) / "summary.json"));
    EXPECT_EQ(ref_summary["statistics"]["quantiles"], histogram ? "histogram" : "exact");
    const std::string ref_stats = read_text(fs::path(dirs[0]) / "stats.csv");
    const bool samples = fs::exists(fs::path(dirs[0]) / "samples.csv");
    const std::string ref_samples = samples ? read_text(fs::path(dirs[0]) / "samples.csv") : "";

    for (std::size_t v = 1; v < results.size(); ++v) {
        const EnsembleResult& r = results[v];
        const std::string tag = std::string(dc.name) + " threads=" + std::to_string(variants[v].threads) +
                                " chunk=" + std::to_string(variants[v].chunk);
        nhvk_test::expect_same_counts(r, ref, tag);
        EXPECT_EQ(bits(r.growth_q), bits(ref.growth_q)) << tag;
        EXPECT_EQ(bits(r.growth_v), bits(ref.growth_v)) << tag;
        expect_same_replicas(r, ref, tag);
        ASSERT_EQ(r.series.size(), ref.series.size()) << tag;
        for (std::size_t s = 0; s < r.series.size(); ++s)
            expect_bit_identical(r.series[s], ref.series[s], tag + " series " + std::to_string(s));
        EXPECT_EQ(comparable_summary(read_json(fs::path(dirs[v]) / "summary.json")), ref_summary) << tag;
        EXPECT_EQ(read_text(fs::path(dirs[v]) / "stats.csv"), ref_stats) << tag;
        if (samples) EXPECT_EQ(read_text(fs::path(dirs[v]) / "samples.csv"), ref_samples) << tag;
    }
}

INSTANTIATE_TEST_SUITE_P(Modes, EnsembleDeterminism, ::testing::Combine(::testing::Values(0, 1), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool>>& p) {
                             return std::string(determinism_cases[std::get<0>(p.param)].name) +
                                    (std::get<1>(p.param) ? "_histogram" : "_exact");
                         });

/** The nh_particle ensemble (determinism_cases[0]) on 2 threads, configured twice, to write into the folders `first`
 *  and `second` of `tmp`: a test changes the second and compares the two runs. */
std::pair<RunConfig, RunConfig> config_pair(const TempDir& tmp, const std::string& first, const std::string& second) {
    RunConfig a = parse(determinism_cases[0].toml);
    a.run.out = tmp.str(first);
    a.run.threads = 2;
    RunConfig b = a;
    b.run.out = tmp.str(second);
    return {a, b};
}

// count, mean, std, min and max come from exact partials: identical whichever quantile mode is in force.
TEST(EnsembleDeterminism, MomentsAgreeBetweenExactAndHistogramModes) {
    TempDir tmp;
    auto [a, b] = config_pair(tmp, "exact", "histogram");
    b.run.exact_memory_mb = 0;
    const EnsembleResult ra = nhvk::run_ensemble(a, quiet()), rb = nhvk::run_ensemble(b, quiet());
    ASSERT_TRUE(ra.exact_quantiles);
    ASSERT_FALSE(rb.exact_quantiles);
    ASSERT_EQ(ra.series.size(), rb.series.size());
    for (std::size_t s = 0; s < ra.series.size(); ++s) {
        EXPECT_EQ(ra.series[s].count, rb.series[s].count) << s;
        EXPECT_EQ(bits(ra.series[s].mean), bits(rb.series[s].mean)) << s;
        EXPECT_EQ(bits(ra.series[s].std), bits(rb.series[s].std)) << s;
        EXPECT_EQ(bits(ra.series[s].min), bits(rb.series[s].min)) << s;
        EXPECT_EQ(bits(ra.series[s].max), bits(rb.series[s].max)) << s;
    }
    // The histogram quantiles approximate the exact ones within the documented resolution (median of d_q, last
    // time).
    const int last = static_cast<int>(ra.times.size()) - 1;
    const double e = ra.at(nhvk::metric_dq, last).p50, h = rb.at(nhvk::metric_dq, last).p50;
    EXPECT_LE(std::fabs(h - e), 2.0 * rb.histogram_resolution * e) << e << " vs " << h;
}

// The ensemble integrated with the generated equations (the default) and with the dual-number reference
// (`integrator.equations = "ad"`): same statuses and onsets, statistics equal to integration-level rounding. The two
// differ in the order of their floating-point operations, so they are not bit-identical; a zero difference everywhere
// would mean the option did nothing, which the bit comparison of one statistic rules out.
TEST(EnsembleEquations, GeneratedAgreesWithTheDualNumberReference) {
    TempDir tmp;
    auto [a, b] = config_pair(tmp, "generated", "ad");
    b.integrator.equations = nhvk::EquationsKind::ad;
    b.run.backend = nhvk::Backend::automatic; // `auto` runs the reference on the CPU
    const EnsembleResult ra = nhvk::run_ensemble(a, quiet()), rb = nhvk::run_ensemble(b, quiet());
    EXPECT_EQ(rb.backend, "cpu");
    ASSERT_GT(ra.valid, 0u);
    EXPECT_EQ(ra.valid, rb.valid);
    EXPECT_EQ(ra.failed_by_status, rb.failed_by_status);
    EXPECT_EQ(ra.onset.counts, rb.onset.counts);
    bool any_bit_differs = false;
    for (std::size_t s = 0; s < ra.series.size(); ++s) {
        const double x = ra.series[s].mean, y = rb.series[s].mean;
        EXPECT_NEAR(x, y, 1e-9 * std::max(1.0, std::fabs(y))) << s;
        any_bit_differs = any_bit_differs || bits(x) != bits(y);
    }
    EXPECT_TRUE(any_bit_differs) << "generated and AD runs were bit-identical: was the option ignored?";
    const auto summary = nlohmann::json::parse(std::ifstream(tmp.str("ad") + "/summary.json"));
    EXPECT_EQ(summary["equations"], "ad");
    RunConfig c = b;
    c.run.backend = nhvk::Backend::cuda;
    c.run.out = tmp.str("cuda_ad");
    EXPECT_THROW(nhvk::run_ensemble(c, quiet()), std::runtime_error); // the reference runs on the CPU only
}

// A different seed gives different statistics (otherwise the equalities above would prove nothing).
TEST(EnsembleDeterminism, DifferentSeedGivesDifferentStatistics) {
    TempDir tmp;
    auto [a, b] = config_pair(tmp, "a", "b");
    b.run.seed = a.run.seed + 1;
    const EnsembleResult ra = nhvk::run_ensemble(a, quiet()), rb = nhvk::run_ensemble(b, quiet());
    const int last = static_cast<int>(ra.times.size()) - 1;
    EXPECT_NE(ra.at(nhvk::metric_dq, last).mean, rb.at(nhvk::metric_dq, last).mean);
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Every sampled initial state lies on the constraint set, and the projection is the W-closest point.

struct ProjectionReport {
    int ok = 0, other = 0;
    double worst_phi = 0.0; ///< max |φ| / max(1, |v|∞) over the ok samples
    double worst_kkt = 0.0; ///< max relative KKT residual over the ok samples
    bool linear = true;     ///< J does not depend on v (linear or affine constraints)
    std::map<std::string, int> statuses;
};

/** Samples `N` members of `cfg` with `sample_member<M>` and checks them against the trial velocities. */
template <class M> ProjectionReport check_projection(const RunConfig& cfg, int N) {
    constexpr int n = M::n, k = M::k;
    ProjectionReport rep;
    for (int g = 0; g < N; ++g) {
        double p[nhvk::max_params], q[n], v[n], mu[k];
        const SampleStatus s = nhvk::sample_member<M>(cfg, static_cast<std::uint64_t>(g), p, q, v, mu);
        ++rep.statuses[nhvk::sample_status_name(s)];
        if (s != SampleStatus::ok) {
            ++rep.other;
            continue;
        }
        ++rep.ok;
        // The trial velocity ṽ, drawn as the sampler draws it: stream v0 of (seed, g), draw j for coordinate j.
        double vt[n];
        const nhvk::DrawKey kv = nhvk::make_draw_key(cfg.run.seed, static_cast<std::uint64_t>(g), nhvk::Stream::v0);
        for (int j = 0; j < n; ++j) vt[j] = nhvk::sample(cfg.v0[j], kv, static_cast<std::uint32_t>(j));
        const M model = nhvk::make_model<M>(cfg.params.empty() ? nullptr : p);
        const auto cp =
            nhvk::constraint_parts(model, static_cast<const double*>(q), static_cast<const double*>(v), cfg.t0);
        rep.worst_phi = std::max(rep.worst_phi, max_abs(cp.phi, k) / std::max(1.0, max_abs(v, n)));
        // J independent of v? (compare with J at 2v + 1)
        double v2[n];
        for (int j = 0; j < n; ++j) v2[j] = 2.0 * v[j] + 1.0;
        const auto cp2 =
            nhvk::constraint_parts(model, static_cast<const double*>(q), static_cast<const double*>(v2), cfg.t0);
        for (int a = 0; a < k; ++a)
            for (int j = 0; j < n; ++j)
                if (std::fabs(cp.J[a][j] - cp2.J[a][j]) > 1e-13 * (1.0 + std::fabs(cp.J[a][j]))) rep.linear = false;
        // KKT: W(v − ṽ) ∈ range(Jᵀ). Residual of the least-squares fit r ≈ Jᵀν, relative to |W ṽ| + |W v|.
        const auto lp = nhvk::lagrangian_parts(model, static_cast<const double*>(q), static_cast<const double*>(v),
                                               cfg.t0, static_cast<const double*>(nullptr));
        Eigen::Matrix<double, n, 1> r, wv, wvt;
        Eigen::Matrix<double, n, k> Jt;
        for (int i = 0; i < n; ++i) {
            r(i) = wv(i) = wvt(i) = 0.0;
            for (int j = 0; j < n; ++j) {
                r(i) += lp.W[i][j] * (v[j] - vt[j]);
                wv(i) += lp.W[i][j] * v[j];
                wvt(i) += lp.W[i][j] * vt[j];
            }
            for (int a = 0; a < k; ++a) Jt(i, a) = cp.J[a][i];
        }
        const Eigen::Matrix<double, k, 1> nu = Jt.colPivHouseholderQr().solve(r);
        const double kkt = (r - Jt * nu).norm() / (wv.norm() + wvt.norm() + 1e-300);
        rep.worst_kkt = std::max(rep.worst_kkt, kkt);
    }
    return rep;
}

std::string describe(const ProjectionReport& r) {
    std::ostringstream os;
    os << "ok " << r.ok << ", failed " << r.other << " (";
    for (const auto& [name, count] : r.statuses) os << name << " " << count << " ";
    os << "), max |phi|/max(1,|v|) " << r.worst_phi << ", max KKT residual " << r.worst_kkt
       << (r.linear ? " (J independent of v)" : " (nonlinear)");
    return os.str();
}

// Every model of the registry (new models are picked up automatically).
TEST(EnsembleSampling, EverySampleSatisfiesTheConstraintsAndIsTheWClosestPoint) {
    constexpr int N = 200;
    int models = 0;
    for (const nhvk::ModelInfo& info : nhvk::builtin_model_registry()) {
        const RunConfig cfg = parse(generic_config(info));
        ProjectionReport rep;
        const bool found = nhvk::visit_model(info.name, [&](auto tag) {
            using M = typename decltype(tag)::type;
            rep = check_projection<M>(cfg, N);
        });
        ASSERT_TRUE(found) << info.name;
        ++models;
        std::cout << "[ sampling ] " << info.name << ": " << describe(rep) << "\n";
        // Most draws must succeed, or the test would check nothing (a model with a singular set of measure zero
        // loses none; ball_on_turntable's chart is not a sampling matter).
        // NOTE: parallel_velocities: from these wide trial velocities the W-closest zero of its chart φ is, for about a
        // third of the draws (65 of 200), on the chart's spurious zero set (ṗ1 vertical, φ = 0 for every ṗ2); those
        // are chart_singular (issue 7: before, they were accepted with ṗ1 × ṗ2 ≠ 0).
        EXPECT_GE(rep.ok, info.name == "parallel_velocities" ? N / 2 : N * 9 / 10)
            << info.name << ": " << describe(rep);
        EXPECT_LE(rep.worst_phi, 1e-12) << info.name << ": " << describe(rep);
        // For constraints linear (or affine) in v one Gauss–Newton step is the exact W-projection: KKT to rounding.
        if (rep.linear) EXPECT_LE(rep.worst_kkt, 1e-10) << info.name << ": " << describe(rep);
        // NOTE: for nonlinear constraints the sampler stops Gauss–Newton once |φ| is small, before the tangential
        // optimality has converged (it does not use the constraint curvature), so W(v − ṽ) is only close to
        // range(Jᵀ): measured up to 5e-7 (parallel_velocities), 1e-9 (perpendicular_velocities). A loose bound still
        // catches a projection that is not a projection.
        else EXPECT_LE(rep.worst_kkt, 1e-5) << info.name << ": " << describe(rep);
    }
    EXPECT_GE(models, 4);
}

// The same through the whole pipeline: the initial states written to samples.csv satisfy the constraints.
TEST(EnsembleSampling, SavedSamplesSatisfyTheConstraints) {
    TempDir tmp;
    for (const nhvk::ModelInfo& info : nhvk::builtin_model_registry()) {
        // NOTE: a step limit well above what t_end = 0.01 needs: appell_hamel's motion can reach its singular set
        // ẋ = ẏ = 0 within t_end (the horizontal speed falls at a g/(1 + a²)), and with the default 10^7 steps one
        // such member alone costs ~30 s before it ends with step_limit.
        RunConfig cfg = parse(
            generic_config(info, "[integrator]\nmax_steps = 20000\n[run]\ntrajectories = 40\nsave_samples = true\n"));
        cfg.run.out = tmp.str(info.name);
        cfg.run.backend = nhvk::Backend::cpu;
        const EnsembleResult r = nhvk::run_ensemble(cfg, quiet());
        const Csv csv = read_csv(fs::path(cfg.run.out) / "samples.csv");
        ASSERT_EQ(csv.rows.size(), 40u) << info.name;
        const nhvk::ModelOps* ops = nhvk::find_model_ops(info.name);
        ASSERT_NE(ops, nullptr);
        int ok = 0;
        double worst = 0.0;
        for (std::size_t i = 0; i < csv.rows.size(); ++i) {
            EXPECT_EQ(std::stoull(csv.at(i, "index")), i);
            if (csv.at(i, "sample_status") != "ok") continue;
            ++ok;
            std::vector<double> q, v;
            for (const std::string& c : info.coords) {
                q.push_back(std::stod(csv.at(i, "q0_" + c)));
                v.push_back(std::stod(csv.at(i, "v0_" + c)));
            }
            const double phi = ops->constraint_violation(cfg.params.data(), q.data(), v.data(), cfg.t0);
            worst = std::max(worst, phi / std::max(1.0, max_abs(v.data(), info.n)));
            // and the constraints as the model's source states them (parallel_velocities: all of ṗ1 × ṗ2)
            EXPECT_LE(ops->source_violation(cfg.params.data(), q.data(), v.data(), cfg.t0), 1e-9) << info.name;
        }
        // NOTE: from these wide, far-from-parallel trial velocities the projection of parallel_velocities lands on
        // the chart's spurious zero set (ṗ1 vertical, where φ = 0 for any ṗ2) in 14 of 40 members; before issue 7
        // they were accepted as samples with ṗ1 × ṗ2 ≠ 0, now they are counted as chart_singular.
        EXPECT_GE(ok, info.name == "parallel_velocities" ? 20 : 36) << info.name;
        EXPECT_LE(worst, 1e-12) << info.name;
        EXPECT_EQ(r.requested, 40u);
    }
}

// A sampled state must be a state of the model as its source states it, not only a zero of its chart φ:
// parallel_velocities with ṗ1 within 10^-4 of the vertical (most draws here) has φ = 0 for any ṗ2, and is counted
// as a sampling failure `chart_singular`. samples.csv reports every member with the status summary.json counts it
// under: sampling failures by sample_status (no integration status), integration failures by status and dynamics.
TEST(EnsembleSampling, SamplesCsvAgreesWithSummaryJsonAndChartFailuresAreCounted) {
    TempDir tmp;
    RunConfig cfg = parse(model_table("parallel_velocities") + R"(
[initial.q]
x2 = 1.0
[initial.v]
x1 = { dist = "uniform", low = 0.0, high = 2e-4 }
z1 = 1.0
z2 = 0.5
[integrator]
max_steps = 60
[times]
t_end = 1.0
count = 5
[run]
trajectories = 60
seed = 5
save_samples = true
)");
    cfg.run.out = tmp.str("out");
    cfg.run.backend = nhvk::Backend::cpu;
    const EnsembleResult r = nhvk::run_ensemble(cfg, quiet());
    const Csv csv = read_csv(fs::path(cfg.run.out) / "samples.csv");
    const nlohmann::json failed =
        nlohmann::json::parse(read_text(fs::path(cfg.run.out) / "summary.json"))["trajectories"]["failed"];
    ASSERT_EQ(csv.rows.size(), 60u);
    std::map<std::string, std::uint64_t> sampling, by_status, valid;
    std::map<std::string, std::map<std::string, std::uint64_t>> by_dynamics_status;
    const nhvk::ModelOps* ops = nhvk::find_model_ops("parallel_velocities");
    for (std::size_t i = 0; i < csv.rows.size(); ++i) {
        const std::string ss = csv.at(i, "sample_status"), st = csv.at(i, "status");
        if (ss != "ok") {
            ++sampling[ss];
            EXPECT_EQ(st, "") << "row " << i << ": a member that was not sampled has no integration status";
            continue;
        }
        // every accepted sample satisfies the source's ṗ1 × ṗ2 = 0 (relative to max(1, |ṗ1| |ṗ2|))
        std::vector<double> q, v;
        for (const std::string& c : cfg.model.coords) {
            q.push_back(std::stod(csv.at(i, "q0_" + c)));
            v.push_back(std::stod(csv.at(i, "v0_" + c)));
        }
        EXPECT_LE(ops->source_violation(cfg.params.data(), q.data(), v.data(), cfg.t0), 1e-9) << "row " << i;
        if (st == "ok") {
            ++valid["ok"];
            continue;
        }
        ++by_status[st];
        ++by_dynamics_status[csv.at(i, "failed_dynamics")][st];
    }
    EXPECT_GE(sampling["chart_singular"], 15u);
    EXPECT_GE(csv.rows.size() - sampling["chart_singular"], 15u) << "members sampled and integrated";
    EXPECT_EQ(valid["ok"], r.valid);
    for (int s = 1; s < nhvk::sample_status_count; ++s) {
        const std::string name = nhvk::sample_status_name(static_cast<SampleStatus>(s));
        EXPECT_EQ(failed["sampling"][name].get<std::uint64_t>(), sampling[name]) << name;
    }
    for (int s = 1; s < nhvk::status_count; ++s) {
        const std::string name = nhvk::status_name(static_cast<nhvk::Status>(s));
        EXPECT_EQ(failed["by_status"][name].get<std::uint64_t>(), by_status[name]) << name;
        for (const char* d : {"nonholonomic", "vakonomic"})
            EXPECT_EQ(failed["by_dynamics_status"][d][name].get<std::uint64_t>(), by_dynamics_status[d][name])
                << d << " " << name;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// 3. Energy shells.

struct ShellReport {
    int ok = 0, unreachable = 0, other = 0;
    double worst_dE = 0.0, worst_phi = 0.0;
    int misclassified = 0;           ///< status disagrees with the independent reachability test
    int reachable_but_flagged = 0;   ///< energy_unreachable although E0 ≥ E_min(q0) + 1 %
    double worst_flagged_emin = 0.0; ///< the largest E_min(q0) among those
};

/**
 * Samples on the shell E0 and checks each member: ok ⇒ |E − E0| ≤ 1e-12·max(1, |E0|) and |φ| ≤ 1e-12; the status is
 * energy_unreachable exactly when the shell cannot be reached at that q0 (independently: E0 below the least energy
 * on the constraint set at q0, min ½vᵀWv + V s.t. φ = 0, which for a quadratic kinetic energy and constraints
 * affine in v is the KKT solution of [W Jᵀ; J 0][v; ν] = [0; −φ(q, 0)]; with homogeneous constraints it is V(q)).
 * A 1 % band around the boundary is not judged.
 */
template <class M> ShellReport check_shell(const RunConfig& cfg, int N) {
    constexpr int n = M::n, k = M::k;
    const double E0 = *cfg.energy;
    ShellReport rep;
    for (int g = 0; g < N; ++g) {
        double p[nhvk::max_params], q[n], v[n], mu[k];
        const SampleStatus s = nhvk::sample_member<M>(cfg, static_cast<std::uint64_t>(g), p, q, v, mu);
        const M model = nhvk::make_model<M>(cfg.params.empty() ? nullptr : p);
        // least energy on the constraint set at q
        double zero[n] = {};
        const auto cp =
            nhvk::constraint_parts(model, static_cast<const double*>(q), static_cast<const double*>(zero), cfg.t0);
        const auto lp = nhvk::lagrangian_parts(model, static_cast<const double*>(q), static_cast<const double*>(zero),
                                               cfg.t0, static_cast<const double*>(nullptr));
        Eigen::Matrix<double, n + k, n + k> K = Eigen::Matrix<double, n + k, n + k>::Zero();
        Eigen::Matrix<double, n + k, 1> rhs = Eigen::Matrix<double, n + k, 1>::Zero();
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) K(i, j) = lp.W[i][j];
            for (int a = 0; a < k; ++a) K(i, n + a) = K(n + a, i) = cp.J[a][i];
        }
        for (int a = 0; a < k; ++a) rhs(n + a) = -cp.phi[a];
        const Eigen::Matrix<double, n + k, 1> sol = K.fullPivLu().solve(rhs);
        double vmin[n];
        for (int j = 0; j < n; ++j) vmin[j] = sol(j);
        const double Emin =
            nhvk::energy(model, static_cast<const double*>(q), static_cast<const double*>(vmin), cfg.t0);
        const double band = 0.01 * std::max(1.0, std::fabs(E0));
        if (s == SampleStatus::ok) {
            ++rep.ok;
            const double E = nhvk::energy(model, static_cast<const double*>(q), static_cast<const double*>(v), cfg.t0);
            rep.worst_dE = std::max(rep.worst_dE, std::fabs(E - E0) / std::max(1.0, std::fabs(E0)));
            double phi[k];
            model.constraints(q, v, cfg.t0, phi);
            rep.worst_phi = std::max(rep.worst_phi, max_abs(phi, k) / std::max(1.0, max_abs(v, n)));
            if (Emin > E0 + band) ++rep.misclassified;
        } else if (s == SampleStatus::energy_unreachable) {
            ++rep.unreachable;
            if (Emin < E0 - band) {
                ++rep.misclassified;
                ++rep.reachable_but_flagged;
                rep.worst_flagged_emin = std::max(rep.worst_flagged_emin, Emin);
            }
        } else {
            ++rep.other;
        }
    }
    return rep;
}

struct ShellCase {
    const char* name;
    std::string toml;
    bool expect_unreachable; ///< the distribution puts some q0 where E0 is unreachable
};

using nhvk_test::standard_normal_table;
const char* const shell_times = "[times]\nt_end = 1.0\n";

const ShellCase shell_cases[] = {
    // homogeneous (linear), no potential: every draw reaches E0 > 0
    {"nh_particle",
     model_table("nh_particle") + "[initial]\nenergy = 2.0\n" + standard_normal_table("initial.q", {"x", "y"}) +
         standard_normal_table("initial.v", {"x", "y", "z"}) + shell_times,
     false},
    // homogeneous, with potential g z: E0 = 0 is unreachable exactly where z0 > 0
    {"sphere_holonomic",
     model_table("sphere_holonomic") + "[initial]\nenergy = 0.0\n" + nhvk_test::sphere_states() + shell_times, true},
    // homogeneous of degree 2 (nonlinear), spring potential
    {"perpendicular_velocities",
     model_table("perpendicular_velocities") + "[initial]\nenergy = 1.5\n" +
         standard_normal_table("initial.q", {"x1", "y1", "z1"}) + nhvk_test::normal_line("x2", "0.5") +
         nhvk_test::normal_line("y2") + nhvk_test::normal_line("z2") +
         standard_normal_table("initial.v", {"x1", "y1", "z1", "x2", "y2", "z2"}) + shell_times,
     true},
    // affine (not homogeneous): scale and re-project; E0 unreachable where the least energy on φ = 0 exceeds it
    {"ball_on_turntable",
     model_table("ball_on_turntable") + "[initial]\nenergy = 0.6\n" + nhvk_test::ball_on_turntable_states() +
         shell_times,
     true},
};

class EnergyShell : public ::testing::TestWithParam<int> {};

TEST_P(EnergyShell, SamplesHitE0AndUnreachableShellsAreCounted) {
    const ShellCase& sc = shell_cases[GetParam()];
    if (!nhvk::find_model(nhvk::model_registry(), sc.name)) GTEST_SKIP() << sc.name << " is not in the registry";
    const RunConfig cfg = parse(sc.toml);
    constexpr int N = 300;
    ShellReport rep;
    ASSERT_TRUE(nhvk::visit_model(sc.name, [&](auto tag) {
        using M = typename decltype(tag)::type;
        rep = check_shell<M>(cfg, N);
    }));
    std::cout << "[ shell ] " << sc.name << " E0 = " << *cfg.energy << ": ok " << rep.ok << ", energy_unreachable "
              << rep.unreachable << ", other " << rep.other << ", max |E-E0|/max(1,|E0|) " << rep.worst_dE
              << ", max |phi| " << rep.worst_phi << ", misclassified " << rep.misclassified
              << " (of which energy_unreachable although reachable: " << rep.reachable_but_flagged
              << ", largest E_min among them " << rep.worst_flagged_emin << ")\n";
    EXPECT_GT(rep.ok, N / 10);
    EXPECT_LE(rep.worst_dE, 1e-12);
    EXPECT_LE(rep.worst_phi, 1e-12);
    // A reachable shell reported as energy_unreachable is a sampler failure mislabelled (see the report printed
    // above); an unreachable one reported ok would contradict |E − E0| ≤ 1e-12.
    EXPECT_EQ(rep.misclassified, 0) << rep.reachable_but_flagged
                                    << " members flagged energy_unreachable have E_min(q0) < E0 (largest "
                                    << rep.worst_flagged_emin << " < " << *cfg.energy << ")";
    EXPECT_EQ(rep.other, 0);
    if (sc.expect_unreachable) EXPECT_GT(rep.unreachable, 0);
    else EXPECT_EQ(rep.unreachable, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, EnergyShell, ::testing::Range(0, static_cast<int>(std::size(shell_cases))),
                         [](const ::testing::TestParamInfo<int>& p) { return std::string(shell_cases[p.param].name); });

// An unreachable shell (E0 below the potential minimum) is counted per member as energy_unreachable, in the result
// and in summary.json, never dropped: requested = valid + failed.
TEST(EnergyShell, UnreachableShellIsCountedNotDropped) {
    TempDir tmp;
    // nh_particle has no potential: E ≥ 0 everywhere, so E0 = −1 is below its minimum for every member.
    RunConfig all = parse(shell_cases[0].toml + "[run]\ntrajectories = 50\n", {"initial.energy=-1.0"});
    all.run.out = tmp.str("all");
    const EnsembleResult ra = nhvk::run_ensemble(all, quiet());
    EXPECT_EQ(ra.requested, 50u);
    EXPECT_EQ(ra.valid, 0u);
    EXPECT_EQ(ra.sampling[static_cast<int>(SampleStatus::energy_unreachable)], 50u);
    const nlohmann::json ja = read_json(fs::path(all.run.out) / "summary.json");
    EXPECT_EQ(ja["trajectories"]["requested"], 50);
    EXPECT_EQ(ja["trajectories"]["valid"], 0);
    EXPECT_EQ(ja["trajectories"]["failed"]["total"], 50);
    EXPECT_EQ(ja["trajectories"]["failed"]["sampling"]["energy_unreachable"], 50);
    // No valid value at any time: counts 0, statistics null (not NaN numbers, not dropped series).
    for (const auto& c : ja["divergence"]["q"]["count"]) EXPECT_EQ(c, 0);
    for (const auto& m : ja["divergence"]["q"]["mean"]) EXPECT_TRUE(m.is_null());

    // sphere_holonomic at E0 = 0: unreachable exactly for z0 > 0, so a mixed ensemble.
    RunConfig mixed = parse(shell_cases[1].toml + "[run]\ntrajectories = 100\n");
    mixed.run.out = tmp.str("mixed");
    const EnsembleResult rm = nhvk::run_ensemble(mixed, quiet());
    const std::uint64_t unreachable = rm.sampling[static_cast<int>(SampleStatus::energy_unreachable)];
    std::cout << "[ shell ] sphere_holonomic E0 = 0 ensemble: valid " << rm.valid << ", energy_unreachable "
              << unreachable << " of " << rm.requested << "\n";
    EXPECT_GT(rm.valid, 0u);
    EXPECT_GT(unreachable, 0u);
    std::uint64_t by_status = 0;
    for (std::uint64_t c : rm.failed_by_status) by_status += c;
    std::uint64_t sampling = 0;
    for (std::uint64_t c : rm.sampling) sampling += c;
    EXPECT_EQ(rm.valid + by_status + sampling, rm.requested);
    EXPECT_EQ(rm.at(nhvk::metric_dq, 0).count, rm.valid);
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Growth exponent of the median divergence: t³ with μ0 = 0, t² with μ0 ≠ 0 (docs/physics.md §4.2).

const std::string growth_config = model_table("nh_particle") + nhvk_test::nh_particle_states() + R"(
[integrator]
rtol = 1e-12
atol = 1e-15
[times]
t_end = 3e-2
spacing = "log"
count = 10
t_first = 1e-3
[divergence]
growth_t_max = 3e-2
[run]
trajectories = 200
seed = 11
)";

TEST(EnsembleGrowth, MedianDivergenceGrowsLikeTCubedWithZeroMu0) {
    TempDir tmp;
    RunConfig cfg = parse(growth_config);
    cfg.run.out = tmp.str("out");
    const EnsembleResult r = nhvk::run_ensemble(cfg, quiet());
    std::cout << "[ growth ] mu0 = 0: growth_q = " << r.growth_q << " (valid " << r.valid << ")\n";
    ASSERT_EQ(r.valid, r.requested);
    EXPECT_NEAR(r.growth_q, 3.0, 0.1);
}

TEST(EnsembleGrowth, MedianDivergenceGrowsLikeTSquaredWithNormalMu0) {
    TempDir tmp;
    RunConfig cfg = parse(growth_config + mu_normal_table("1.0"));
    cfg.run.out = tmp.str("out");
    const EnsembleResult r = nhvk::run_ensemble(cfg, quiet());
    std::cout << "[ growth ] mu0 ~ N(0, 1): growth_q = " << r.growth_q << " (valid " << r.valid << ")\n";
    ASSERT_EQ(r.valid, r.requested);
    EXPECT_NEAR(r.growth_q, 2.0, 0.1);
}

// ---------------------------------------------------------------------------------------------------------------
// 5. Holonomic control: sphere_holonomic's two dynamics coincide for every μ0 (docs/physics.md §4.1).

const std::string sphere_config = model_table("sphere_holonomic") + nhvk_test::sphere_states() + R"(
[integrator]
rtol = 1e-12
atol = 1e-14
[times]
t_end = 2.0
count = 8
[run]
trajectories = 40
seed = 5
)";

class SphereHolonomic : public ::testing::TestWithParam<std::string> {};

std::string sphere_case_name(std::size_t i) {
    static const char* const names[] = {"fixed_m2", "fixed_0p5", "fixed_3", "normal"};
    return names[i];
}

TEST_P(SphereHolonomic, DivergenceStaysAtIntegrationTolerance) {
    TempDir tmp;
    RunConfig cfg = parse(sphere_config, {GetParam()});
    cfg.run.out = tmp.str("out");
    const EnsembleResult r = nhvk::run_ensemble(cfg, quiet());
    ASSERT_EQ(r.valid, r.requested);
    double worst = 0.0, mu_spread = 0.0;
    for (std::size_t i = 0; i < r.times.size(); ++i)
        worst = std::max(worst, r.at(nhvk::metric_dq, static_cast<int>(i)).max);
    mu_spread = cfg.mu0[0].kind == nhvk::DistKind::normal ? cfg.mu0[0].b : std::fabs(cfg.mu0[0].a);
    std::cout << "[ sphere ] " << GetParam() << ": max d_q over all times = " << worst << "\n";
    EXPECT_GT(mu_spread, 0.0) << "the vakonomic multiplier must be nonzero for the test to mean anything";
    EXPECT_LT(worst, 1e-8);
}

INSTANTIATE_TEST_SUITE_P(Mu0, SphereHolonomic,
                         ::testing::Values("initial.mu=[-2.0]", "initial.mu=[0.5]", "initial.mu=[3.0]",
                                           "initial.mu={dist=\"normal\", mean=0.0, std=1.0}"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return sphere_case_name(p.index); });

// The sphere check is not vacuous: the same ensemble on a truly nonholonomic model diverges far above 1e-8.
TEST(SphereHolonomicControl, NonholonomicModelDivergesWithTheSameSettings) {
    TempDir tmp;
    std::string text = sphere_config;
    text.replace(text.find("sphere_holonomic"), std::string("sphere_holonomic").size(), "nh_particle");
    RunConfig cfg = parse(text, {"initial.mu=[0.5]"});
    cfg.run.out = tmp.str("out");
    const EnsembleResult r = nhvk::run_ensemble(cfg, quiet());
    const int last = static_cast<int>(r.times.size()) - 1;
    EXPECT_GT(r.at(nhvk::metric_dq, last).p50, 1e-3);
}

// ---------------------------------------------------------------------------------------------------------------
// 8. Failed trajectories are counted and never poison the statistics.

TEST(EnsembleFailures, FailedTrajectoriesAreCountedAndExcluded) {
    TempDir tmp;
    // Wide velocities and a small step limit: fast members run out of steps, slow ones finish.
    RunConfig cfg = parse(model_table("nh_particle") + R"(
[initial.q]
y = { dist = "uniform", low = -1.0, high = 1.0 }
[initial.v]
x = { dist = "normal", mean = 0.0, std = 10.0 }
y = { dist = "normal", mean = 0.0, std = 10.0 }
z = { dist = "normal", mean = 0.0, std = 10.0 }
[initial.mu]
dist = "normal"
mean = 0.0
std = 1.0
[integrator]
max_steps = 150
[times]
t_end = 2.0
count = 6
[run]
trajectories = 100
seed = 2
save_samples = true
)");
    cfg.run.out = tmp.str("out");
    const EnsembleResult r = nhvk::run_ensemble(cfg, quiet());
    std::uint64_t by_status = 0, sampling = 0;
    for (std::uint64_t c : r.failed_by_status) by_status += c;
    for (std::uint64_t c : r.sampling) sampling += c;
    std::cout << "[ failures ] valid " << r.valid << ", failed " << r.failed() << " (step_limit "
              << r.failed_by_status[static_cast<int>(nhvk::Status::step_limit)] << ", sampling " << sampling << ")\n";
    ASSERT_GT(r.valid, 0u);
    ASSERT_GT(r.failed(), 0u);
    EXPECT_EQ(by_status + sampling, r.requested - r.valid);
    EXPECT_EQ(r.failed_by_dynamics[1] + r.failed_by_dynamics[2] + r.failed_by_dynamics[0], r.failed());

    const nlohmann::json j = read_json(fs::path(cfg.run.out) / "summary.json");
    std::uint64_t json_by_status = 0, json_sampling = 0;
    for (const auto& [name, c] : j["trajectories"]["failed"]["by_status"].items())
        json_by_status += c.get<std::uint64_t>();
    for (const auto& [name, c] : j["trajectories"]["failed"]["sampling"].items())
        json_sampling += c.get<std::uint64_t>();
    EXPECT_EQ(json_by_status + json_sampling,
              j["trajectories"]["requested"].get<std::uint64_t>() - j["trajectories"]["valid"].get<std::uint64_t>());
    EXPECT_EQ(j["trajectories"]["failed"]["total"].get<std::uint64_t>(), r.failed());

    // Every statistic at every time is a finite number (count > 0 there: all valid members reach every time), and
    // every count is exactly the number of members alive there (statistics.population = "alive", the default): the
    // valid ones and those that failed after reaching that output time (samples.csv's fail_time_index); a failed
    // member never counts at or after the time it could not reach.
    const std::size_t nt = r.times.size();
    const Csv alive_csv = read_csv(fs::path(cfg.run.out) / "samples.csv");
    std::vector<std::uint64_t> alive(nt, 0);
    for (std::size_t k = 0; k < alive_csv.rows.size(); ++k)
        for (std::size_t i = 0; i < nt; ++i)
            alive[i] += alive_csv.at(k, "sample_status") == "ok" &&
                        (alive_csv.at(k, "status") == "ok" || std::stol(alive_csv.at(k, "fail_time_index")) > long(i));
    EXPECT_GT(alive[0], r.valid) << "members that fail after the first output time";
    EXPECT_EQ(alive[nt - 1], r.valid);
    EXPECT_EQ(j["statistics"]["population"], "alive");
    for (const nhvk::MetricInfo& d : nhvk::metric_table) { // each metric's statistics where metric_table puts them
        const nlohmann::json& series = nhvk_test::at_dotted(j, d.statistics);
        for (std::size_t i = 0; i < nt; ++i) {
            ASSERT_EQ(series["count"][i].get<std::uint64_t>(), alive[i]) << d.statistics << " at " << i;
            for (const char* f : {"mean", "std", "min", "max", "p01", "p05", "p25", "p50", "p75", "p95", "p99"})
                EXPECT_TRUE(series[f][i].is_number()) << d.statistics << "." << f << "[" << i << "]";
        }
    }
    for (const auto& s : r.series) {
        EXPECT_EQ(s.nonfinite, 0u);
        EXPECT_TRUE(std::isfinite(s.mean) && std::isfinite(s.std) && std::isfinite(s.max));
    }
    EXPECT_TRUE(std::isfinite(r.growth_q));

    // samples.csv agrees member by member: status names counted as in summary.json, no divergence for failures.
    const Csv csv = read_csv(fs::path(cfg.run.out) / "samples.csv");
    ASSERT_EQ(csv.rows.size(), r.requested);
    std::map<std::string, std::uint64_t> counted;
    for (std::size_t i = 0; i < csv.rows.size(); ++i) {
        const bool ok = csv.at(i, "sample_status") == "ok" && csv.at(i, "status") == "ok";
        if (!ok && csv.at(i, "sample_status") == "ok") ++counted[csv.at(i, "status")];
        EXPECT_EQ(csv.at(i, "d_q_final").empty(), !ok) << "row " << i;
    }
    for (const auto& [name, c] : counted)
        EXPECT_EQ(j["trajectories"]["failed"]["by_status"][name].get<std::uint64_t>(), c) << name;
}

// ---------------------------------------------------------------------------------------------------------------
// run.threads = 0 means "all cores" (host/config.hpp); a run with an explicit thread count must not change what a
// later run in the same process gets for 0 (run_ensemble is a library function: tests, benchmarks and sweeps call it
// repeatedly).
TEST(EnsembleThreads, ExplicitThreadCountDoesNotLeakIntoLaterRuns) {
    // NOTE: the process's OpenMP default set here (3, restored at the end) rather than read from the machine, so
    // that the test means the same on any number of cores.
    struct Restore {
        int saved = omp_get_max_threads();
        ~Restore() { omp_set_num_threads(saved); }
    } restore;
    omp_set_num_threads(3);
    const int before = omp_get_max_threads();
    ASSERT_EQ(before, 3);
    TempDir tmp;
    RunConfig one = parse(determinism_cases[0].toml, {"run.trajectories=4", "run.save_samples=false"});
    one.run.out = tmp.str("one");
    one.run.threads = 1;
    EXPECT_EQ(nhvk::run_ensemble(one, quiet()).threads, 1);
    RunConfig all = one;
    all.run.out = tmp.str("all");
    all.run.threads = 0;
    const EnsembleResult r = nhvk::run_ensemble(all, quiet());
    EXPECT_EQ(r.threads, before) << "run.threads = 0 after a run with run.threads = 1";
    EXPECT_EQ(omp_get_max_threads(), before) << "run_ensemble changed the process-wide OpenMP default";
}

} // namespace
