// SPDX-License-Identifier: MIT
// members.nc (run.save_members, issue 42 item 2) with the built `nhvk`: each member's values equal those of
// samples.csv and of its saved trajectory (re-integrated on its own) bit for bit; the data are the same bytes under
// other chunks and threads, shards with merge, kill -9 and resume, MPI ranks; a sweep's members carry their point and
// parameters; the times a member did not reach are NaN; bad settings and damaged parts are refused by name.
#include "csv_table.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "config.hpp"
#include "pipeline/members_output.hpp"
#include "pipeline/netcdf_output.hpp"

#if NHVK_HAVE_NETCDF
#include "nc_read.hpp"
#endif

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk_test::CliRun;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_members_") {}
};

CliRun run_nhvk(const std::vector<std::string>& args, const TempDir& tmp, const std::string& prefix = "") {
    return nhvk_test::run_captured(prefix, NHVK_BINARY, args, tmp.path() / "io");
}

const std::string source_dir = NHVK_SOURCE_DIR;

/** rolling_disc (angles and lengths, two constraints) at N members with three metrics saved, into `out`. */
std::vector<std::string> disc_args(const fs::path& out, std::vector<std::string> extra = {}, int n = 240) {
    std::vector<std::string> a = {"run",
                                  source_dir + "/configs/rolling_disc.toml",
                                  "--trajectories",
                                  std::to_string(n),
                                  "--out",
                                  out.string(),
                                  "-q",
                                  "--save-members",
                                  "--set",
                                  "run.member_metrics=[\"d_q\", \"d_v\", \"energy_nh\"]",
                                  "--set",
                                  "times.count=12"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

#if NHVK_HAVE_NETCDF

using nhvk_test::Nc;

/** Every variable of members.nc in `a` and `b` holds the same bytes (the global attributes are not compared: the
 *  config names run.out). */
void expect_same_members(const fs::path& a, const fs::path& b) {
    const Nc x(a / "members.nc"), y(b / "members.nc");
    ASSERT_EQ(x.variables(), y.variables()) << a << " vs " << b;
    for (const std::string& v : x.variables()) {
        if (x.type(v) == NC_STRING) {
            EXPECT_EQ(x.strings(v), y.strings(v)) << v;
            continue;
        }
        const std::vector<unsigned char> p = x.bytes(v), q = y.bytes(v);
        EXPECT_EQ(p.size(), q.size()) << v << ": " << a << " vs " << b;
        EXPECT_TRUE(p == q) << v << " differs: " << a << " vs " << b;
    }
}

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

/** The double a CSV field holds (17 significant digits read back to the same double); NaN for an empty one. */
double field(const std::string& text) { return text.empty() ? NAN : std::strtod(text.c_str(), nullptr); }

TEST(MembersNc, EachMemberEqualsSamplesCsvAndItsSavedTrajectoryBitForBit) {
    TempDir tmp;
    const fs::path out = tmp.path() / "run";
    const CliRun r = run_nhvk(disc_args(out, {"--save-samples", "--save-trajectories", "3"}), tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const Nc nc(out / "members.nc");
    const nhvk_test::Csv s = nhvk_test::read_csv(out / "samples.csv");
    const std::vector<double> time = nc.doubles("time"), dq = nc.doubles("d_q"), dv = nc.doubles("d_v"),
                              q0 = nc.doubles("q0"), v0 = nc.doubles("v0"), mu0 = nc.doubles("mu0"),
                              onset = nc.doubles("onset_time");
    const std::vector<unsigned long long> member = nc.counts("member");
    const std::vector<std::string> coords = nc.strings("coordinate");
    ASSERT_EQ(coords, (std::vector<std::string>{"x", "y", "theta", "phi"}));
    const std::size_t N = 240, T = 12, n = 4;
    ASSERT_EQ(member.size(), N);
    ASSERT_EQ(time.size(), T);
    ASSERT_EQ(s.rows.size(), N);
    ASSERT_EQ(nc.dims("d_q"), (std::vector<std::string>{"member", "time"}));
    EXPECT_EQ(nc.attribute("d_q", "units"), "coordinate");
    EXPECT_EQ(nc.attribute("energy_nh", "units"), "energy");
    std::size_t valid = 0;
    for (std::size_t j = 0; j < N; ++j) {
        EXPECT_EQ(member[j], std::stoull(s.at(j, "index")));
        for (std::size_t c = 0; c < n; ++c) {
            EXPECT_TRUE(same_bits(q0[j * n + c], field(s.at(j, "q0_" + coords[c])))) << j;
            EXPECT_TRUE(same_bits(v0[j * n + c], field(s.at(j, "v0_" + coords[c])))) << j;
        }
        for (std::size_t a = 0; a < 2; ++a)
            EXPECT_TRUE(same_bits(mu0[j * 2 + a], field(s.at(j, "mu0_" + std::to_string(a))))) << j;
        if (s.at(j, "status") == "ok") {
            ++valid;
            EXPECT_TRUE(same_bits(dq[j * T + T - 1], field(s.at(j, "d_q_final")))) << j;
            EXPECT_TRUE(same_bits(dv[j * T + T - 1], field(s.at(j, "d_v_final")))) << j;
        }
        EXPECT_TRUE(same_bits(onset[j], field(s.at(j, "onset_time"))) ||
                    (std::isnan(onset[j]) && s.at(j, "onset_time").empty()))
            << j;
    }
    EXPECT_GT(valid, N / 2);
    // the saved trajectories are integrated again, one by one, at the end: their d_q and d_v at each output time are
    // the run's
    for (std::size_t j = 0; j < 3; ++j) {
        const nhvk_test::Csv t =
            nhvk_test::read_csv(out / "trajectories" / ("trajectory_00000" + std::to_string(j) + ".csv"));
        std::size_t matched = 0;
        for (std::size_t row = 0; row < t.rows.size(); ++row) {
            const double tr = field(t.at(row, "t"));
            for (std::size_t i = 0; i < T; ++i) {
                if (!same_bits(tr, time[i])) continue;
                EXPECT_TRUE(same_bits(dq[j * T + i], field(t.at(row, "d_q[x y]")))) << "member " << j << " time " << i;
                EXPECT_TRUE(same_bits(dv[j * T + i], field(t.at(row, "d_v[x y]")))) << "member " << j << " time " << i;
                ++matched;
            }
        }
        EXPECT_EQ(matched, T) << "member " << j;
    }
}

TEST(MembersNc, SameBytesUnderChunksThreadsShardsMergeResumeAndRanks) {
    TempDir tmp;
    const fs::path whole = tmp.path() / "whole";
    ASSERT_EQ(run_nhvk(disc_args(whole, {"--threads", "1"}), tmp).rc, 0);
    // other chunks and threads
    const fs::path chunks = tmp.path() / "chunks";
    ASSERT_EQ(run_nhvk(disc_args(chunks, {"--chunk", "37", "--threads", "2"}), tmp).rc, 0);
    expect_same_members(whole, chunks);
    // three shards of other chunk sizes, merged
    std::vector<std::string> parts = {"merge"};
    for (int i = 0; i < 3; ++i) {
        const fs::path p = tmp.path() / ("shard" + std::to_string(i));
        const CliRun r = run_nhvk(disc_args(p, {"--shard", std::to_string(i) + "/3", "--chunk", "29"}), tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        parts.push_back(p.string());
    }
    const fs::path merged = tmp.path() / "merged";
    parts.insert(parts.end(), {"--out", merged.string(), "-q"});
    const CliRun m = run_nhvk(parts, tmp);
    ASSERT_EQ(m.rc, 0) << m.err;
    expect_same_members(whole, merged);
    // kill -9 after the 4th chunk's resume record, resumed with another chunk size
    const fs::path killed = tmp.path() / "killed";
    const CliRun k = run_nhvk(disc_args(killed, {"--chunk", "23", "--checkpoint-every", "0"}), tmp,
                              "NHVK_TEST_SIGNAL_AFTER_CHUNK=4,9");
    ASSERT_EQ(k.rc, 128 + 9) << k.err;
    ASSERT_TRUE(fs::exists(killed / "members.raw.resume"));
    const CliRun resumed = run_nhvk(disc_args(killed, {"--chunk", "41", "--resume"}), tmp);
    ASSERT_EQ(resumed.rc, 0) << resumed.err;
    expect_same_members(whole, killed);
    EXPECT_FALSE(fs::exists(killed / "members.raw.resume")) << "the scratch file goes with the commit";
#ifdef NHVK_MPIEXEC
    std::string mpi = std::string(NHVK_MPIEXEC) + " --oversubscribe -np 3";
    if (::geteuid() == 0) mpi += " --allow-run-as-root";
    const fs::path ranks = tmp.path() / "ranks";
    const CliRun r = run_nhvk(disc_args(ranks, {"--chunk", "31"}), tmp, mpi);
    ASSERT_EQ(r.rc, 0) << r.err;
    expect_same_members(whole, ranks);
    for (int k = 0; k < 3; ++k)
        EXPECT_FALSE(fs::exists(ranks / ("members.rank" + std::to_string(k) + "-of-3.raw.resume")));
#endif
}

TEST(MembersNc, TimesAMemberDidNotReachAreNaN) {
    TempDir tmp;
    const fs::path out = tmp.path() / "run";
    // stopped members: d_q passes stop_at before the last output time
    const CliRun r = run_nhvk(disc_args(out, {"--save-samples", "--set", "divergence.stop_at=0.5"}), tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const Nc nc(out / "members.nc");
    const nhvk_test::Csv s = nhvk_test::read_csv(out / "samples.csv");
    const std::vector<double> dq = nc.doubles("d_q"), e = nc.doubles("energy_nh");
    std::vector<std::int32_t> fail(240);
    ASSERT_EQ(nc_get_var_int(nc.id(), nc.var_id("fail_time_index"), fail.data()), NC_NOERR);
    const std::vector<unsigned char> status = nc.bytes("status");
    const std::size_t T = 12;
    std::size_t stopped = 0;
    for (std::size_t j = 0; j < 240; ++j) {
        EXPECT_EQ(fail[j], std::stoi(s.at(j, "fail_time_index"))) << j;
        if (s.at(j, "status") != "diverged") continue;
        EXPECT_EQ(status[j], 6u);
        ++stopped;
        const std::size_t reached = static_cast<std::size_t>(fail[j]);
        ASSERT_GE(reached, 1u);
        EXPECT_GT(dq[j * T + reached - 1], 0.5) << "the time it passed stop_at";
        for (std::size_t i = 0; i < T; ++i) {
            EXPECT_EQ(std::isnan(dq[j * T + i]), i >= reached) << j << " " << i;
            EXPECT_EQ(std::isnan(e[j * T + i]), i >= reached) << j << " " << i;
        }
    }
    EXPECT_GT(stopped, 10u);
}

TEST(MembersNc, SweepMembersCarryTheirPointAndParameters) {
    TempDir tmp;
    const fs::path out = tmp.path() / "sweep";
    // the catalogue's sweep at three points
    std::ifstream in(source_dir + "/configs/sweep_turntable_omega.toml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t at = text.find("count = 6\n");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 9, "count = 3");
    const fs::path config = tmp.path() / "sweep.toml";
    std::ofstream(config) << text;
    const CliRun r = run_nhvk({"run", config.string(), "--trajectories", "6", "--out", out.string(), "-q",
                               "--save-members", "--set", "times.count=5"},
                              tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    const Nc nc(out / "members.nc"), sweep(out / "sweep.nc");
    const std::vector<unsigned long long> member = nc.counts("member");
    std::vector<long long> point(member.size());
    ASSERT_EQ(nc_get_var_longlong(nc.id(), nc.var_id("point"), point.data()), NC_NOERR);
    ASSERT_EQ(member.size(), 18u);
    const std::vector<double> omega = nc.doubles("param_Omega"), axis = sweep.doubles("Omega");
    ASSERT_EQ(axis.size(), 3u);
    for (std::size_t j = 0; j < member.size(); ++j) {
        EXPECT_EQ(member[j], j);
        EXPECT_EQ(point[j], static_cast<long long>(j / 6));
        EXPECT_TRUE(same_bits(omega[j], axis[j / 6])) << j;
    }
}

TEST(MembersNc, BadSettingsAndDamagedPartsAreRefusedByName) {
    TempDir tmp;
    const fs::path out = tmp.path() / "bad";
    CliRun r = run_nhvk(disc_args(out, {"--set", "run.member_metrics=[\"d_qq\"]"}), tmp);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("run.member_metrics[0]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("unknown metric \"d_qq\" (did you mean \"d_q\"?)"), std::string::npos) << r.err;
    r = run_nhvk(disc_args(out, {"--set", "run.members_deflate=12"}), tmp);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("run.members_deflate"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    // a shard without its members.nc, and one whose members.nc belongs to another part
    std::vector<fs::path> parts;
    for (int i = 0; i < 2; ++i) {
        parts.push_back(tmp.path() / ("shard" + std::to_string(i)));
        ASSERT_EQ(run_nhvk(disc_args(parts.back(), {"--shard", std::to_string(i) + "/2"}), tmp).rc, 0);
    }
    const fs::path kept = tmp.path() / "kept.nc";
    fs::copy_file(parts[1] / "members.nc", kept);
    fs::remove(parts[1] / "members.nc");
    const fs::path merged = tmp.path() / "merged";
    r = run_nhvk({"merge", parts[0].string(), parts[1].string(), "--out", merged.string(), "-q"}, tmp);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find((parts[1] / "members.nc").string() + "' is missing"), std::string::npos) << r.err;
    fs::copy_file(parts[0] / "members.nc", parts[1] / "members.nc");
    r = run_nhvk({"merge", parts[0].string(), parts[1].string(), "--out", merged.string(), "-q"}, tmp);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("holds 120 members from trajectory 0; the part's partial.nhvk covers trajectories [120, 240)"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(merged / "summary.json"));
    // a scratch file cut short after a kill -9 is refused on --resume, and left as it was
    const fs::path killed = tmp.path() / "killed";
    ASSERT_EQ(run_nhvk(disc_args(killed, {"--chunk", "23", "--checkpoint-every", "0"}), tmp,
                       "NHVK_TEST_SIGNAL_AFTER_CHUNK=4,9")
                  .rc,
              128 + 9);
    const fs::path scratch = killed / "members.raw.resume";
    fs::resize_file(scratch, 100);
    r = run_nhvk(disc_args(killed, {"--resume"}), tmp);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("members.raw.resume"), std::string::npos) << r.err;
    EXPECT_EQ(fs::file_size(scratch), 100u);
    // a run without --resume removes it, with a note
    r = run_nhvk(disc_args(killed), tmp);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("members.raw.resume"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(scratch));
}

TEST(MembersNc, DiskNeedIsCheckedBeforeTheRun) {
    nhvk::RunConfig cfg;
    cfg.run.out = "here";
    nhvk::MemberRecordShape s;
    s.n = 4;
    s.k = 2;
    s.nt = 40;
    s.metrics = {0, 1};
    // 8 bytes of statuses and 2·4 + 2 + 1 + 2·40 doubles
    EXPECT_EQ(s.bytes(), 8u + 8u * 91u);
    EXPECT_EQ(nhvk::members_disk_estimate(s, 1000), 2u * 1000u * s.bytes());
    EXPECT_EQ(nhvk::members_disk_problem(cfg, s, 10, fs::temp_directory_path()), "");
    // a trillion members need petabytes
    const std::string p = nhvk::members_disk_problem(cfg, s, 1000000000000ull, fs::temp_directory_path());
    EXPECT_NE(p.find("run.save_members: members.nc for 1000000000000 members (2 metrics at 40 output times)"),
              std::string::npos)
        << p;
    EXPECT_NE(p.find("'here'"), std::string::npos) << p;
}

#else

TEST(MembersNc, WithoutTheLibrarySaveMembersIsRefused) {
    TempDir tmp;
    const fs::path out = tmp.path() / "run";
    const CliRun r = run_nhvk(disc_args(out), tmp);
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("built without the netCDF library"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

#endif

} // namespace
