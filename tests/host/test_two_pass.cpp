// SPDX-License-Identifier: MIT
// With an explicit method the device integrates a member's two motions one after the other
// (integrate_member_in_two_passes: the nonholonomic one through every output time, its states stashed, then the
// vakonomic one), and the CPU runs that path for a chunk that has a stash. Here every bundled config's members are
// integrated both ways on the CPU backend, with the generated equations as on the device, in both precisions and with
// every method: the outcome of every member (status, failed dynamics, output index, onset) and every metric at every
// output time it reached must be the same, bit for bit. Step limits and a divergence stop make members end at every
// output time, and in either dynamics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "config.hpp"
#include "ensemble_testing.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/member.hpp"
#include "pipeline/run_plan.hpp"
#include "registry.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk::Status;

constexpr long long members = 16;

using nhvk_test::bits;

/** How the members of one run ended: counts by status, and by the dynamics that failed. */
struct Endings {
    std::map<Status, int> status;
    int nonholonomic = 0, vakonomic = 0;
    int reached_some = 0; ///< failed or stopped members that reached at least one output time first
};

/**
 * Sample the config's members once on the CPU backend and integrate them twice: at once (no stash), then in two passes
 * (a stash, NaN before). Compares what the run keeps of each member; returns how they ended.
 */
Endings integrate_both_ways(const std::string& path, const std::vector<std::string>& sets) {
    const nhvk::RunConfig cfg = nhvk::load_config(path, sets, nhvk::model_registry());
    const nhvk::RunPlan plan = nhvk::make_run_plan(cfg, members);
    auto backend = nhvk::make_cpu_backend(plan.layout, plan.common, 2);
    nhvk::ChunkArgs& a = backend->slot(0);
    const int nt = a.nt;
    const long long m = std::min<long long>(members, static_cast<long long>(cfg.members()));
    backend->sample(0, 0, m);
    EXPECT_EQ(a.stash, nullptr) << "the CPU backend integrates both motions at once";
    backend->integrate(0, m);
    const std::size_t rows = static_cast<std::size_t>(nhvk::metric_rows(nt)) * static_cast<std::size_t>(a.ld);
    const std::vector<double> metrics(a.metrics, a.metrics + rows);
    const std::vector<std::uint8_t> status(a.status, a.status + m), failed(a.failed, a.failed + m);
    const std::vector<std::int32_t> fail_index(a.fail_index, a.fail_index + m), onset(a.onset, a.onset + m);

    std::vector<double> stash(static_cast<std::size_t>(nhvk::stash_values(plan.layout.n, nt) * a.ld),
                              std::numeric_limits<double>::quiet_NaN());
    std::fill(a.metrics, a.metrics + rows, -1.0);
    a.stash = stash.data();
    backend->integrate(0, m);
    a.stash = nullptr;

    Endings e;
    const long long onset_row = nhvk::member_series_row(nt, nhvk::member_onset_time);
    for (long long j = 0; j < m; ++j) {
        SCOPED_TRACE("member " + std::to_string(j));
        EXPECT_EQ(a.status[j], status[j])
            << nhvk::status_name(Status(a.status[j])) << " against " << nhvk::status_name(Status(status[j]));
        EXPECT_EQ(a.failed[j], failed[j]);
        EXPECT_EQ(a.fail_index[j], fail_index[j]);
        EXPECT_EQ(a.onset[j], onset[j]);
        EXPECT_EQ(bits(a.metrics[onset_row * a.ld + j]), bits(metrics[onset_row * a.ld + j])) << "onset time";
        const bool ok = status[j] == static_cast<std::uint8_t>(Status::ok);
        const long long reached = ok ? nt : std::max(0, fail_index[j]);
        int differ = 0, unstashed = 0;
        for (int r = 0; r < nhvk::metric_count; ++r)
            for (long long i = 0; i < reached; ++i) {
                const long long at = (r * nt + i) * a.ld + j;
                if (bits(a.metrics[at]) != bits(metrics[at]) && differ++ == 0)
                    ADD_FAILURE() << "metric " << r << " at output time " << i << ": " << a.metrics[at] << " against "
                                  << metrics[at];
            }
        EXPECT_EQ(differ, 0) << "metrics that differ";
        // the two-pass path ran: it stashed the nonholonomic state of every output time the member reached
        for (long long i = 0; i < reached; ++i) unstashed += std::isnan(stash[i * a.ld + j]) ? 1 : 0;
        EXPECT_EQ(unstashed, 0) << "output times reached without a stashed state";
        if (a.sample_status[j] != 0u) continue; // not placed by the sampler: not integrated
        ++e.status[Status(status[j])];
        if (failed[j] == static_cast<std::uint8_t>(nhvk::Dynamics::nonholonomic)) ++e.nonholonomic;
        if (failed[j] == static_cast<std::uint8_t>(nhvk::Dynamics::vakonomic)) ++e.vakonomic;
        if (!ok && reached > 0) ++e.reached_some;
    }
    return e;
}

/** The method settings of each variant: a fixed-step method takes dt, an adaptive one the config's tolerances. */
std::vector<std::vector<std::string>> variants() {
    // float needs tolerances it can reach (some configs ask for less)
    const std::string f = "integrator.precision=\"float\"", loose = "integrator.rtol=1e-5";
    const auto method = [](const char* name) { return "integrator.method=\"" + std::string(name) + "\""; };
    const std::string dt = "integrator.dt=0.01";
    return {
        {method("dopri5")},
        {method("dopri5"), f, loose},
        {method("rk4"), dt},
        {method("rk4"), dt, f},
        {method("tsit5")},
        {method("tsit5"), f, loose},
        {method("dop853")},
        {method("rodas5p")},
        {method("rodas5p"), f, loose},
        {method("midpoint"), dt},
        {method("midpoint"), dt, f},
        // members that end early: a step limit inside the run (a fixed step's config must reach the end, so the core
        // tests end RK4 early), and a stop on the divergence
        {method("dopri5"), "integrator.max_steps=60"},
        {method("dopri5"), "divergence.onset_threshold=1e-3", "divergence.stop_at=0.01"},
    };
}

class TwoPasses : public ::testing::TestWithParam<std::string> {};

TEST_P(TwoPasses, EqualBothMotionsAtOnce) {
    // NOTE: a stiff config's explicit steps are held to their stability bound (about 1e5 per member): it runs its own
    // method only, to keep the suite short
    const bool stiff =
        nhvk::load_config(GetParam(), {}, nhvk::model_registry()).integrator.method == nhvk::Method::rodas5p;
    for (const std::vector<std::string>& v : variants()) {
        if (stiff && v.front() != "integrator.method=\"rodas5p\"") continue;
        std::vector<std::string> sets = v;
        sets.push_back("run.trajectories=" + std::to_string(members));
        std::string tag;
        for (const std::string& s : v) tag += s + " ";
        SCOPED_TRACE(fs::path(GetParam()).filename().string() + ": " + tag);
        integrate_both_ways(GetParam(), sets);
    }
}

INSTANTIATE_TEST_SUITE_P(Configs, TwoPasses, ::testing::ValuesIn(nhvk_test::bundled_configs()),
                         nhvk_test::config_test_name);

// The comparison above sees every way a member ends: on the ball, a step limit ends members in either dynamics after
// some output times, and a divergence stop ends others; the rest run to the end.
TEST(TwoPasses, SeeMembersEndInEachWay) {
    const std::string ball = std::string(NHVK_SOURCE_DIR) + "/configs/ball_on_turntable.toml";
    const std::string n = "run.trajectories=" + std::to_string(members);
    const Endings limit = integrate_both_ways(ball, {n, "integrator.method=\"dopri5\"", "integrator.max_steps=60"});
    EXPECT_GT(limit.status.count(Status::step_limit) ? limit.status.at(Status::step_limit) : 0, 0);
    EXPECT_GT(limit.nonholonomic, 0);
    EXPECT_GT(limit.vakonomic, 0);
    EXPECT_GT(limit.reached_some, 0);
    const Endings stop = integrate_both_ways(ball, {n, "integrator.method=\"dopri5\"", "divergence.stop_at=0.01"});
    EXPECT_GT(stop.status.count(Status::diverged) ? stop.status.at(Status::diverged) : 0, 0);
    EXPECT_GT(stop.status.count(Status::ok) ? stop.status.at(Status::ok) : 0, 0);
}

} // namespace
