// SPDX-License-Identifier: MIT
// Float runs default to atol = 1e-8 (README "Step limits"; include/nhvk/numerics.hpp). At the old default, 1e-12, the
// float step control chased the rounding noise of a component near zero and ran some members out of steps: in
// configs/ball_on_turntable.toml at 10^5 members, members 11610, 27828 and 73603 ended with step_limit (a shard of
// 100 members each, here). The test runs those shards at atol = 1e-12 first (the control: each must still show its
// step_limit member, or the case says nothing) and then at the float default, where none may.
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;

/** summary.json's step_limit count of the 100-member shard `shard`/1000 of the ball at 10^5 members, in float. */
int step_limit_members(const nhvk_test::TempDir& tmp, int shard, const std::vector<std::string>& more) {
    const fs::path out = tmp.path() / ("shard" + std::to_string(shard));
    std::vector<std::string> a = {"run",
                                  std::string(NHVK_SOURCE_DIR) + "/configs/ball_on_turntable.toml",
                                  "--trajectories",
                                  "100000",
                                  "--shard",
                                  std::to_string(shard) + "/1000",
                                  "--backend",
                                  "cpu",
                                  "--out",
                                  out.string(),
                                  "-q",
                                  "--set",
                                  "integrator.precision=\"float\""};
    a.insert(a.end(), more.begin(), more.end());
    const nhvk_test::CliRun r = nhvk_test::run_captured("", NHVK_BINARY, a, tmp.path() / "io");
    EXPECT_EQ(r.rc, 0) << r.err;
    const nlohmann::json s = nhvk_test::read_json(out / "summary.json");
    EXPECT_EQ(s["config"]["integrator"]["precision"], "float");
    return s["trajectories"]["failed"]["by_status"]["step_limit"].get<int>();
}

TEST(FloatDefaults, TheBallMembersThatRanOutOfStepsAtAtol1e12FinishAtTheFloatDefault) {
    nhvk_test::TempDir tmp("nhvk_float_defaults_");
    for (int shard : {116, 278, 736}) {
        EXPECT_EQ(step_limit_members(tmp, shard, {"--set", "integrator.atol=1e-12"}), 1) << "shard " << shard;
        EXPECT_EQ(step_limit_members(tmp, shard, {}), 0) << "shard " << shard;
    }
}

} // namespace
