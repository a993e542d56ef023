// SPDX-License-Identifier: MIT
// A sweep's memory per point (issue 38 item 10): a point costs what its statistics need, and the memory check's
// estimate covers it. Before the fix every point kept its own accumulator from the start to the end of the run
// (the exact sums of every series, 1.6 kB each: about 0.5 MB a point at 10 output times, whatever its trajectory
// count), the check counted none of it, and the advice on running out of memory named settings that did not help.
#include "ensemble_testing.hpp"

#include "checks.hpp"
#include "nhvk/member.hpp"
#include "nhvk/stats/onset.hpp"
#include "pipeline/reduce_stage.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using nhvk::EnsembleResult;
using nhvk::RunConfig;

/** A sweep of nh_particle over `points` values of initial.mu.std, `trajectories` members each, 10 output times. */
RunConfig sweep_config(int points, int trajectories) {
    return nhvk_test::parse(
        nhvk_test::model_table("nh_particle") + nhvk_test::nh_particle_states() + nhvk_test::mu_normal_table("0.1") +
        "[times]\nt_end = 1.0\ncount = 10\n[divergence]\ngrowth_t_max = 0.5\n[run]\ntrajectories = " +
        std::to_string(trajectories) +
        "\nseed = 1\n[sweep]\n[[sweep.axes]]\nkey = \"initial.mu.std\"\nrange = [0.01, 1.0]\ncount = " +
        std::to_string(points) + "\n");
}

/** Bytes the heap holds now (every arena; glibc). */
double heap_in_use() {
    const struct mallinfo2 m = mallinfo2();
    return static_cast<double>(m.uordblks) + static_cast<double>(m.hblkhd);
}

/** The memory check's estimate for `cfg` on the CPU backend, found from its verdicts: the least available memory it
 *  accepts. */
double estimate(const RunConfig& cfg) {
    double lo = 0.0, hi = 1e15;
    for (int i = 0; i < 64 && hi - lo > 1.0; ++i) {
        const double mid = 0.5 * (lo + hi);
        (nhvk::check_memory(cfg, mid, false) ? lo : hi) = mid;
    }
    return hi;
}

/** The largest heap the reduce stage of `cfg`'s sweep holds between chunks of 7 members (synthetic metrics, every
 *  member valid), from its construction through `finish`, over what was in use before it. */
double stage_peak(const RunConfig& cfg) {
    const int nt = static_cast<int>(cfg.times.size());
    const long long c = 7, rows = nhvk::metric_rows(nt);
    std::vector<double> metrics(static_cast<std::size_t>(rows * c));
    std::vector<std::uint8_t> ok(c, 0u); // Status::ok, SampleStatus::ok, Dynamics::none
    std::vector<std::int32_t> fail_index(c, 0), onset(c, nhvk::stats::onset_never);
    nhvk::ChunkArgs a;
    a.ld = c;
    a.nt = nt;
    a.times = cfg.times.data();
    a.replicas = cfg.replicas;
    a.alive_population = cfg.alive_population;
    a.metrics = metrics.data();
    a.status = ok.data();
    a.failed = ok.data();
    a.sample_status = ok.data();
    a.fail_index = fail_index.data();
    a.onset = onset.data();

    EnsembleResult r;
    const double before = heap_in_use();
    double peak = 0.0;
    {
        nhvk::ReduceStage stage(cfg, r);
        peak = std::max(peak, heap_in_use() - before);
        const std::uint64_t members = cfg.members();
        r.requested = members;
        r.end = members;
        for (std::uint64_t first = 0; first < members; first += c) {
            a.first_member = first;
            a.m = static_cast<long long>(std::min<std::uint64_t>(c, members - first));
            for (long long s = 0; s < rows; ++s)
                for (long long j = 0; j < a.m; ++j)
                    metrics[s * c + j] = 1e-3 * static_cast<double>((first + j) % 97 + 1) * static_cast<double>(s + 1);
            stage.add_chunk(a, a.m);
            peak = std::max(peak, heap_in_use() - before);
        }
        stage.finish();
        peak = std::max(peak, heap_in_use() - before);
    }
    EXPECT_EQ(r.valid, cfg.members());
    EXPECT_EQ(r.points.size(), cfg.points());
    return peak;
}

// The reduce stage's memory grows per point by a point's summaries, kilobytes at 10 output times (401 numbers of
// stats.csv's rows), not by an accumulator per point; and the estimate's share per point covers what it measures.
TEST(SweepMemory, APointCostsItsSummariesAndTheEstimateCoversIt) {
    for (const int trajectories : {1, 10}) {
        const RunConfig small = sweep_config(30, trajectories), large = sweep_config(90, trajectories);
        const double per_point = (stage_peak(large) - stage_peak(small)) / 60.0;
        const double estimated = (estimate(large) - estimate(small)) / 60.0;
        const std::string what = std::to_string(trajectories) +
                                 " trajectories per point: " + std::to_string(per_point) + " bytes a point measured, " +
                                 std::to_string(estimated) + " estimated";
        // a point's summaries: 101 series of 336 bytes; its values (10 output times, exact quantiles) 8 bytes each
        EXPECT_LT(per_point, 64.0 * 1024.0) << what;
        EXPECT_GE(estimated, per_point) << what;
    }
}

// Running out of memory in a sweep: the advice names what lowers a sweep's memory (its points per process, its output
// times), not run.chunk alone.
TEST(SweepMemory, TheCheckNamesWhatLowersASweepsMemory) {
    const RunConfig cfg = sweep_config(300, 1);
    const auto problem = nhvk::check_memory(cfg, 1024.0, false);
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->expected.find("fewer points"), std::string::npos) << problem->expected;
    EXPECT_NE(problem->expected.find("times.count"), std::string::npos) << problem->expected;
    // the chunk buffers of one member at a time are not what fills the memory here
    EXPECT_EQ(problem->expected.find("run.chunk"), std::string::npos) << problem->expected;
    EXPECT_EQ(problem->key, "sweep");
}

} // namespace
