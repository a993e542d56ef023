// SPDX-License-Identifier: MIT
// Issue 8 end to end with the built `nhvk`: MPI ranks, --shard + `nhvk merge`, resume after kill -9 and Ctrl-C,
// progress lines and run.log. Every comparison is against a plain single-process run of the same config: the
// statistics must be equal bit for bit (the draws depend only on (seed, index) and every reduction is exact).
#include "netcdf_names.hpp"
#include "nhvk_cli.hpp"
#include "pipeline/partial_state.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk_test::CliRun;
using nhvk_test::read_text;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_scale_") {}
};

const std::string config = std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml";

CliRun run_nhvk(const std::vector<std::string>& args, const TempDir& tmp, const std::string& env = "") {
    return nhvk_test::run_captured(env, NHVK_BINARY, args, tmp.path() / "io");
}

using nhvk_test::read_json;

using nhvk_test::run_statistics;

/** The base arguments of the runs compared here: 403 trajectories in chunks of 50 (so parts split chunks). */
std::vector<std::string> run_args(const fs::path& out, std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"run",       config, "--trajectories", "403",        "--chunk", "50",
                                  "--threads", "1",    "--out",          out.string(), "-q"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

void expect_same_run(const fs::path& a, const fs::path& b, bool samples) {
    // the replica groups (member index mod 10) are part of what must agree: present, and not all alike
    const nlohmann::json groups = run_statistics(a)["growth_exponent"]["sampling"]["q"]["group_exponents"];
    ASSERT_EQ(groups.size(), 10u) << a;
    EXPECT_NE(groups[0], groups[1]) << a;
    EXPECT_EQ(run_statistics(a), run_statistics(b)) << a << " vs " << b;
    EXPECT_EQ(read_text(a / "stats.csv"), read_text(b / "stats.csv")) << a << " vs " << b;
    if (samples) {
        const std::string sa = read_text(a / "samples.csv");
        EXPECT_GT(sa.size(), 403u * 20u);
        EXPECT_EQ(sa, read_text(b / "samples.csv")) << a << " vs " << b;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// MPI

#ifdef NHVK_MPIEXEC
std::string mpirun(int ranks) {
    std::string p = std::string(NHVK_MPIEXEC) + " --oversubscribe -np " + std::to_string(ranks);
    if (::geteuid() == 0) p += " --allow-run-as-root";
#ifdef NHVK_LSAN_SUPPRESSIONS
    // NOTE: the sanitizer build: OpenMPI keeps what MPI_Init allocated until exit, in plug-ins it has unloaded by then,
    // so LeakSanitizer sees those stacks only with the slow unwinder, and its suppressions name OpenMPI's libraries
    // (through env(1), so that the prefix also works after `timeout`)
    p = std::string("env ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=") + NHVK_LSAN_SUPPRESSIONS +
        " " + p;
#endif
    return p;
}
#endif

TEST(ScaleOutMpi, OneTwoAndThreeRanksGiveTheStatisticsOfOneProcess) {
#ifndef NHVK_MPIEXEC
    GTEST_SKIP() << "built without MPI (NHVK_ENABLE_MPI=OFF)";
#else
    TempDir tmp;
    // exact quantiles (the default budget), then histogram quantiles (no budget): both merge exactly
    for (const std::string& budget : {"1024", "0"}) {
        const fs::path single = tmp.path() / ("single_" + budget);
        ASSERT_EQ(run_nhvk(run_args(single, {"--set", "run.exact_memory_mb=" + budget}), tmp).rc, 0);
        for (int ranks : {1, 2, 3}) {
            const fs::path d = tmp.path() / ("mpi" + std::to_string(ranks) + "_" + budget);
            const CliRun r = nhvk_test::run_captured(
                mpirun(ranks), NHVK_BINARY, run_args(d, {"--set", "run.exact_memory_mb=" + budget}), tmp.path() / "io");
            ASSERT_EQ(r.rc, 0) << r.err;
            expect_same_run(single, d, false);
            const nlohmann::json s = read_json(d / "summary.json");
            EXPECT_EQ(s["job"]["ranks"], ranks);
            EXPECT_EQ(s["statistics"]["quantiles"], budget == "0" ? "histogram" : "exact");
            EXPECT_EQ(s["trajectories"]["requested"], 403);
            // only rank 0 writes: one summary, no rank's resume record left
            for (const auto& e : fs::directory_iterator(d))
                EXPECT_EQ(e.path().filename().string().find("resume"), std::string::npos) << e.path();
        }
    }
#endif
}

// every rank killed (kill -9) after its second chunk's resume record; the same mpirun with --resume goes on from
// each rank's record and ends with the statistics of one process
TEST(ScaleOutMpi, KilledJobResumesFromEveryRanksRecord) {
#ifndef NHVK_MPIEXEC
    GTEST_SKIP() << "built without MPI (NHVK_ENABLE_MPI=OFF)";
#else
    TempDir tmp;
    const fs::path single = tmp.path() / "single", d = tmp.path() / "mpi";
    ASSERT_EQ(run_nhvk(run_args(single), tmp).rc, 0);
    const CliRun k =
        nhvk_test::run_captured("NHVK_TEST_SIGNAL_AFTER_CHUNK=2,9 " + mpirun(2) + " -x NHVK_TEST_SIGNAL_AFTER_CHUNK",
                                NHVK_BINARY, run_args(d, {"--checkpoint-every", "0"}), tmp.path() / "io");
    ASSERT_NE(k.rc, 0) << k.err;
    EXPECT_FALSE(fs::exists(d / "summary.json"));
    EXPECT_TRUE(fs::exists(d / "resume.rank0-of-2.nhvk"));
    EXPECT_TRUE(fs::exists(d / "resume.rank1-of-2.nhvk"));
    // another number of ranks does not fit the records
    const CliRun three = nhvk_test::run_captured(mpirun(3), NHVK_BINARY, run_args(d, {"--resume"}), tmp.path() / "io");
    EXPECT_EQ(three.rc, 2) << three.err;
    EXPECT_NE(three.err.find("another number of MPI ranks"), std::string::npos) << three.err;
    const CliRun one = run_nhvk(run_args(d, {"--resume"}), tmp);
    EXPECT_EQ(one.rc, 2) << one.err;
    const CliRun r = nhvk_test::run_captured(mpirun(2), NHVK_BINARY, run_args(d, {"--resume"}), tmp.path() / "io");
    ASSERT_EQ(r.rc, 0) << r.err;
    expect_same_run(single, d, false);
    EXPECT_FALSE(fs::exists(d / "resume.rank1-of-2.nhvk"));
#endif
}

TEST(ScaleOutMpi, SamplesWithSeveralRanksAreRefusedWithAMessage) {
#ifndef NHVK_MPIEXEC
    GTEST_SKIP() << "built without MPI (NHVK_ENABLE_MPI=OFF)";
#else
    TempDir tmp;
    const fs::path d = tmp.path() / "out";
    const CliRun r =
        nhvk_test::run_captured(mpirun(2), NHVK_BINARY, run_args(d, {"--save-samples"}), tmp.path() / "io");
    EXPECT_EQ(r.rc, 2) << "the usage code (issue 25 item 13: it was 1)";
    EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "summary.json"));
#endif
}

// Every rank's run is checked against the others' before any work (issue 25 item 1): a rank with another config, seed
// or command, or one whose config does not load, ends the job with exit 2 and a message naming the field and the
// ranks; a rank that never joins (another program) ends it after NHVK_MPI_START_SECONDS. `timeout` turns the old
// endless wait into a failure.
TEST(ScaleOutMpi, MismatchedRanksAreRefusedBeforeAnyWork) {
#ifndef NHVK_MPIEXEC
    GTEST_SKIP() << "built without MPI (NHVK_ENABLE_MPI=OFF)";
#else
    TempDir tmp;
    const fs::path d = tmp.path() / "out";
    const std::string other = std::string(NHVK_SOURCE_DIR) + "/configs/parallel_velocities.toml";
    struct Case {
        std::vector<std::string> rank1; ///< rank 1's program and arguments (rank 0 runs run_args(d))
        std::string expect, env;
    };
    std::vector<std::string> other_config = run_args(d);
    other_config[1] = other;
    auto nhvk_with = [](std::vector<std::string> args) {
        args.insert(args.begin(), NHVK_BINARY);
        return args;
    };
    const std::vector<Case> cases = {
        {nhvk_with(other_config), "differ in resolved config hash: rank 0 ", ""},
        {nhvk_with(run_args(d, {"--seed", "7"})), "differ in run.seed: rank 0 1; rank 1 7", ""},
        {nhvk_with(run_args(d, {"--resume"})), "differ in --resume", ""},
        {nhvk_with({"models"}), "differ in command: rank 0 `nhvk run`; rank 1 `nhvk models`", ""},
        {nhvk_with(run_args(d, {"--seed", "-1"})), "rank 1: --seed: run.seed: expected an integer", ""},
        // a program that never starts MPI
        {{"true"}, "did not all join it within 2 s", "NHVK_MPI_START_SECONDS=2 "},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = run_args(d);
        args.insert(args.end(), {":", "-np", "1"});
        args.insert(args.end(), c.rank1.begin(), c.rank1.end());
        const CliRun r = nhvk_test::run_captured(c.env + "timeout 300 " + mpirun(1) + " -x NHVK_MPI_START_SECONDS",
                                                 NHVK_BINARY, args, tmp.path() / "io");
        EXPECT_EQ(r.rc, 2) << c.expect << ": " << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(d)) << c.expect << ": work started";
    }
#endif
}

// ---------------------------------------------------------------------------------------------------------------
// Shards and merge

// Indexing tests, not validations: shards, merges and resumes re-run the same code over other ranges of
// trajectories, so they must give the bits of one uninterrupted run.
TEST(ScaleOutShards, FourShardsMergedEqualOneRun) {
    TempDir tmp;
    const std::vector<std::string> extra = {"--save-samples", "--save-trajectories", "3"};
    const fs::path single = tmp.path() / "single";
    ASSERT_EQ(run_nhvk(run_args(single, extra), tmp).rc, 0);
    std::vector<std::string> merge = {"merge"};
    for (int i : {2, 0, 3, 1}) { // any order
        const fs::path d = tmp.path() / ("shard" + std::to_string(i));
        std::vector<std::string> a = extra;
        a.insert(a.end(), {"--shard", std::to_string(i) + "/4"});
        const CliRun r = run_nhvk(run_args(d, a), tmp);
        ASSERT_EQ(r.rc, 0) << r.err;
        ASSERT_TRUE(fs::exists(d / "partial.nhvk"));
        const nlohmann::json s = read_json(d / "summary.json");
        EXPECT_EQ(s["job"]["shard"]["index"], i);
        merge.push_back(d.string());
    }
    // the shards' own parts: 101, 101, 101, 100 trajectories
    EXPECT_EQ(read_json(tmp.path() / "shard3" / "summary.json")["trajectories"]["requested"], 100);
    const fs::path merged = tmp.path() / "merged";
    merge.insert(merge.end(), {"--out", merged.string(), "-q"});
    const CliRun m = run_nhvk(merge, tmp);
    ASSERT_EQ(m.rc, 0) << m.err;
    expect_same_run(single, merged, true);
    for (const char* t : {"trajectory_000000.csv", "trajectory_000001.csv", "trajectory_000002.csv"})
        EXPECT_EQ(read_text(single / "trajectories" / t), read_text(merged / "trajectories" / t)) << t;
    EXPECT_EQ(read_json(merged / "summary.json")["job"]["merged_from"].size(), 4u);
}

// An empty shard (more shards than trajectories) is a success: it exits 0 with an empty part, and the merge of every
// shard, the empty ones included, is the run of all trajectories (issue 25 item 13: a SLURM array marks a task that
// exits non-zero as failed).
TEST(ScaleOutShards, EmptyShardsSucceedAndMergeIntoTheWholeRun) {
    TempDir tmp;
    const auto three = [](const fs::path& out, std::vector<std::string> more) { // run_args with 3 trajectories
        std::vector<std::string> a = run_args(out, std::move(more));
        *std::find(a.begin(), a.end(), "403") = "3";
        return a;
    };
    const fs::path single = tmp.path() / "single";
    ASSERT_EQ(run_nhvk(three(single, {}), tmp).rc, 0);
    std::vector<std::string> merge = {"merge"};
    for (int i = 0; i < 5; ++i) {
        const fs::path d = tmp.path() / ("shard" + std::to_string(i));
        const CliRun r = run_nhvk(three(d, {"--shard", std::to_string(i) + "/5"}), tmp);
        EXPECT_EQ(r.rc, 0) << "shard " << i << ": " << r.err;
        EXPECT_EQ(read_json(d / "summary.json")["trajectories"]["requested"], i < 3 ? 1 : 0) << "shard " << i;
        merge.push_back(d.string());
    }
    const fs::path merged = tmp.path() / "merged";
    merge.insert(merge.end(), {"--out", merged.string(), "-q"});
    const CliRun m = run_nhvk(merge, tmp);
    ASSERT_EQ(m.rc, 0) << m.err;
    expect_same_run(single, merged, false);
}

// Merge's errors about its output folder name its own option, --out, not a config's run.out (issue 25 item 14).
TEST(ScaleOutShards, MergeFolderErrorsNameTheOutOption) {
    TempDir tmp;
    std::vector<std::string> merge = {"merge"};
    for (int i = 0; i < 2; ++i) {
        const fs::path d = tmp.path() / ("shard" + std::to_string(i));
        ASSERT_EQ(run_nhvk(run_args(d, {"--shard", std::to_string(i) + "/2"}), tmp).rc, 0);
        merge.push_back(d.string());
    }
    const fs::path file = tmp.path() / "a_file";
    std::ofstream(file) << "not a folder\n";
    merge.insert(merge.end(), {"--out", file.string(), "-q"});
    const CliRun m = run_nhvk(merge, tmp);
    EXPECT_NE(m.rc, 0);
    EXPECT_NE(m.err.find("--out: cannot create output folder"), std::string::npos) << m.err;
    EXPECT_EQ(m.err.find("run.out"), std::string::npos) << m.err;
}

TEST(ScaleOutShards, MergeRefusesIncompleteRepeatedAndMismatchedSets) {
    TempDir tmp;
    auto shard = [&](int i, const std::string& name, std::vector<std::string> more = {}) {
        const fs::path d = tmp.path() / name;
        more.insert(more.end(), {"--shard", std::to_string(i) + "/3"});
        EXPECT_EQ(run_nhvk(run_args(d, more), tmp).rc, 0);
        return d.string();
    };
    const std::string s0 = shard(0, "s0"), s1 = shard(1, "s1"), s2 = shard(2, "s2");
    const std::string seed2 = shard(2, "seed2", {"--seed", "7"});
    const std::string other = shard(2, "other", {"--set", "divergence.onset_threshold=0.5"});
    const std::string out = (tmp.path() / "merged").string();
    struct Case {
        std::vector<std::string> dirs;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {{s0, s2}, "shard 1 of 3 missing"},
        {{s0, s1, s1, s2}, "given twice"},
        {{s0, s1, seed2}, "different seeds"},
        {{s0, s1, other}, "different configurations"},
        {{s0, s1, (tmp.path() / "io").string()}, "no partial.nhvk"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> a = {"merge"};
        a.insert(a.end(), c.dirs.begin(), c.dirs.end());
        a.insert(a.end(), {"--out", out});
        const CliRun r = run_nhvk(a, tmp);
        EXPECT_EQ(r.rc, 2) << c.expect << ": " << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(tmp.path() / "merged" / "summary.json")) << c.expect;
    }
    // --out is one of the parts
    const CliRun same = run_nhvk({"merge", s0, s1, s2, "--out", s2}, tmp);
    EXPECT_EQ(same.rc, 2);
    EXPECT_NE(same.err.find("is one of the folders"), std::string::npos) << same.err;
    EXPECT_TRUE(fs::exists(fs::path(s2) / "partial.nhvk"));
    // a damaged partial state: one byte of its payload changed
    {
        const fs::path p = fs::path(s2) / "partial.nhvk";
        std::string bytes = read_text(p);
        bytes[bytes.size() / 2] ^= 0x20;
        std::ofstream(p, std::ios::binary) << bytes;
    }
    const CliRun damaged = run_nhvk({"merge", s0, s1, s2, "--out", out}, tmp);
    EXPECT_EQ(damaged.rc, 2);
    EXPECT_NE(damaged.err.find("checksum mismatch"), std::string::npos) << damaged.err;
    EXPECT_FALSE(fs::exists(tmp.path() / "merged" / "summary.json"));
}

/** Every file under `dir` with its bytes (to show that a refused command changed nothing). */
std::map<std::string, std::string> contents(const fs::path& dir) {
    std::map<std::string, std::string> m;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) m[fs::relative(e.path(), dir).string()] = read_text(e.path());
    return m;
}

/** Two shards of run_args with samples and three saved trajectories (all in shard 0), and the merge arguments. */
std::vector<std::string> two_shards_with_files(const TempDir& tmp) {
    std::vector<std::string> dirs;
    for (int i = 0; i < 2; ++i) {
        const fs::path d = tmp.path() / ("shard" + std::to_string(i));
        EXPECT_EQ(
            run_nhvk(run_args(d, {"--save-samples", "--save-trajectories", "3", "--shard", std::to_string(i) + "/2"}),
                     tmp)
                .rc,
            0);
        dirs.push_back(d.string());
    }
    return dirs;
}

CliRun merge_into(const std::vector<std::string>& dirs, const fs::path& out, const TempDir& tmp) {
    std::vector<std::string> a = {"merge"};
    a.insert(a.end(), dirs.begin(), dirs.end());
    a.insert(a.end(), {"--out", out.string(), "-q"});
    return run_nhvk(a, tmp);
}

// What merge copies is checked against what the partial states recorded: a shard's samples.csv cut short (mid-row) or
// missing is refused, naming the file and what was expected, and nothing is written (issue 25 item 3).
TEST(ScaleOutShards, MergeChecksSamplesAgainstThePartialStates) {
    TempDir tmp;
    const std::vector<std::string> dirs = two_shards_with_files(tmp);
    const fs::path samples = fs::path(dirs[1]) / "samples.csv";
    const std::string whole = read_text(samples);
    ASSERT_GT(whole.size(), 100u);
    const fs::path out = tmp.path() / "merged";
    std::ofstream(samples, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() - 7);
    const CliRun cut = merge_into(dirs, out, tmp);
    EXPECT_EQ(cut.rc, 2) << cut.err;
    EXPECT_NE(cut.err.find(samples.string()), std::string::npos) << cut.err;
    EXPECT_NE(cut.err.find("records " + std::to_string(whole.size())), std::string::npos) << cut.err;
    EXPECT_FALSE(fs::exists(out / "summary.json"));
    // the same length with a row end gone: the row count tells
    std::string joined = whole;
    joined[joined.find('\n', joined.size() / 2)] = ',';
    std::ofstream(samples, std::ios::binary | std::ios::trunc) << joined;
    const CliRun rows = merge_into(dirs, out, tmp);
    EXPECT_EQ(rows.rc, 2) << rows.err;
    EXPECT_NE(rows.err.find("rows"), std::string::npos) << rows.err;
    EXPECT_FALSE(fs::exists(out / "summary.json"));
    fs::remove(samples);
    const CliRun missing = merge_into(dirs, out, tmp);
    EXPECT_EQ(missing.rc, 2) << missing.err;
    EXPECT_NE(missing.err.find(samples.string() + "' is missing"), std::string::npos) << missing.err;
    EXPECT_FALSE(fs::exists(out / "summary.json"));
    // a saved trajectory missing from its part is refused the same way
    std::ofstream(samples, std::ios::binary) << whole;
    const fs::path traj = fs::path(dirs[0]) / "trajectories" / "trajectory_000002.csv";
    fs::remove(traj);
    const CliRun no_traj = merge_into(dirs, out, tmp);
    EXPECT_EQ(no_traj.rc, 2) << no_traj.err;
    EXPECT_NE(no_traj.err.find(traj.string() + "' is missing"), std::string::npos) << no_traj.err;
    EXPECT_FALSE(fs::exists(out / "summary.json"));
}

// A merge into a folder that holds a complete merge checks everything that can make it fail before the old outputs are
// touched: a stray duplicate trajectory file name is refused and the old folder stays byte for byte (issue 25 item 8).
TEST(ScaleOutShards, RefusedMergeLeavesTheEarlierMergeIntact) {
    TempDir tmp;
    const std::vector<std::string> dirs = two_shards_with_files(tmp);
    const fs::path out = tmp.path() / "merged";
    ASSERT_EQ(merge_into(dirs, out, tmp).rc, 0);
    const std::map<std::string, std::string> before = contents(out);
    ASSERT_TRUE(before.count("trajectories/trajectory_000000.csv"));
    // shard 1 saved no trajectory; a copy of shard 0's first one put there by hand is a duplicate name
    fs::create_directories(fs::path(dirs[1]) / "trajectories");
    fs::copy_file(fs::path(dirs[0]) / "trajectories" / "trajectory_000000.csv",
                  fs::path(dirs[1]) / "trajectories" / "trajectory_000000.csv");
    const CliRun r = merge_into(dirs, out, tmp);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("is not a trajectory this part saved"), std::string::npos) << r.err;
    EXPECT_EQ(contents(out), before);
}

// --summary-md FILE is checked before any work: never an input (the config, through a link too) nor inside the output
// folder or a merge's parts, and its folder must exist and take files; refused with exit 2, nothing written (issue 25
// item 7: it overwrote the config, summary.json and partial.nhvk, and an unwritable path failed only at the end).
TEST(ScaleOutShards, SummaryMdPathIsCheckedBeforeTheRun) {
    TempDir tmp;
    const fs::path cfg = tmp.path() / "c.toml", out = tmp.path() / "out";
    fs::copy_file(config, cfg);
    fs::create_symlink(cfg, tmp.path() / "link.md");
    const std::string cfg_text = read_text(cfg);
    auto run = [&](const fs::path& md) {
        std::vector<std::string> a = run_args(out, {"--summary-md", md.string()});
        a[1] = cfg.string();
        return run_nhvk(a, tmp);
    };
    struct Case {
        fs::path md;
        std::string expect;
    };
    for (const Case& c : std::vector<Case>{{cfg, "an input of this command"},
                                           {tmp.path() / "link.md", "an input of this command"},
                                           {out / "summary.json", "inside '" + out.string()},
                                           {tmp.path() / "no_such_folder" / "s.md", "does not exist"}}) {
        const CliRun r = run(c.md);
        EXPECT_EQ(r.rc, 2) << c.md << ": " << r.err;
        EXPECT_NE(r.err.find("--summary-md: "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.md << ": the run started";
    }
    EXPECT_EQ(read_text(cfg), cfg_text);
    // into a folder that holds a complete run: refused, the folder as it was
    ASSERT_EQ(run(tmp.path() / "notes.md").rc, 0);
    EXPECT_NE(read_text(tmp.path() / "notes.md").find("nh_particle"), std::string::npos);
    const std::map<std::string, std::string> before = contents(out);
    EXPECT_EQ(run(out / "summary.json").rc, 2);
    EXPECT_EQ(contents(out), before);
    // merge: a part's partial.nhvk, or a file inside --out
    std::vector<std::string> dirs;
    for (int i = 0; i < 2; ++i) {
        const fs::path d = tmp.path() / ("shard" + std::to_string(i));
        ASSERT_EQ(run_nhvk(run_args(d, {"--shard", std::to_string(i) + "/2"}), tmp).rc, 0);
        dirs.push_back(d.string());
    }
    const std::string partial = read_text(fs::path(dirs[0]) / "partial.nhvk");
    for (const fs::path& md : {fs::path(dirs[0]) / "partial.nhvk", tmp.path() / "merged" / "summary.json"}) {
        const CliRun m = run_nhvk(
            {"merge", dirs[0], dirs[1], "--out", (tmp.path() / "merged").string(), "--summary-md", md.string(), "-q"},
            tmp);
        EXPECT_EQ(m.rc, 2) << md << ": " << m.err;
        EXPECT_NE(m.err.find("inside"), std::string::npos) << m.err;
    }
    EXPECT_EQ(read_text(fs::path(dirs[0]) / "partial.nhvk"), partial);
    EXPECT_FALSE(fs::exists(tmp.path() / "merged"));
}

TEST(ScaleOutShards, ShardArgumentIsChecked) {
    TempDir tmp;
    for (const std::string& bad : {"4/4", "1", "a/3", "-1/3", "1/0", "1/3/4"}) {
        const CliRun r = run_nhvk(run_args(tmp.path() / "out", {"--shard", bad}), tmp);
        EXPECT_EQ(r.rc, 2) << bad;
        EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
    }
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

// ---------------------------------------------------------------------------------------------------------------
// Resume

/** Files of `dir` a run writes as it goes, or leaves for --resume. */
std::vector<std::string> names(const fs::path& dir) {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
}

TEST(ScaleOutResume, RunKilledWithSigkillResumesToTheSameOutputs) {
    TempDir tmp;
    const fs::path clean = tmp.path() / "clean", d = tmp.path() / "killed";
    ASSERT_EQ(run_nhvk(run_args(clean, {"--save-samples"}), tmp).rc, 0);
    // kill -9 right after the resume record of the 4th chunk (paced chunks of at most 50: fewer than 200
    // trajectories)
    const std::vector<std::string> a = run_args(d, {"--save-samples", "--checkpoint-every", "0"});
    const CliRun k = run_nhvk(a, tmp, "NHVK_TEST_SIGNAL_AFTER_CHUNK=4,9");
    ASSERT_EQ(k.rc, 128 + 9) << k.err;
    EXPECT_FALSE(fs::exists(d / "summary.json"));
    ASSERT_TRUE(fs::exists(d / "resume.nhvk"));
    const std::uint64_t recorded = ::nhvk::read_state_file(d / "resume.nhvk").next;
    EXPECT_GT(recorded, 0u);
    EXPECT_LE(recorded, 200u);
    // a resume against a changed configuration is refused, and leaves the record
    const CliRun changed = run_nhvk(run_args(d, {"--save-samples", "--resume", "--seed", "2"}), tmp);
    EXPECT_EQ(changed.rc, 2);
    EXPECT_NE(changed.err.find("another configuration"), std::string::npos) << changed.err;
    EXPECT_TRUE(fs::exists(d / "resume.nhvk"));
    const CliRun r = run_nhvk(run_args(d, {"--save-samples", "--resume"}), tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    expect_same_run(clean, d, true);
    EXPECT_EQ(read_json(d / "summary.json")["job"]["resumed_at"], recorded);
    // the record and the resumable temporary are gone after the commit
    EXPECT_EQ(names(d), nhvk_test::with_stats_nc(
                            {"report.html", "run.log", "samples.csv", "stats.csv", "summary.json", "summary.md"}));
}

/** A run killed (-9) right after the resume record of its 4th chunk, with samples.csv, and what it left. */
struct Killed {
    fs::path dir;
    std::vector<std::string> resume; ///< the same command with --resume
    std::string record, samples;     ///< resume.nhvk and samples.csv.resume as the kill left them
    std::uint64_t recorded = 0;      ///< the trajectories the record holds
};
Killed killed_after_a_record(const TempDir& tmp) {
    Killed k;
    k.dir = tmp.path() / "killed";
    k.resume = run_args(k.dir, {"--save-samples", "--checkpoint-every", "0"});
    EXPECT_EQ(run_nhvk(k.resume, tmp, "NHVK_TEST_SIGNAL_AFTER_CHUNK=4,9").rc, 128 + 9);
    k.resume.push_back("--resume");
    k.record = read_text(k.dir / "resume.nhvk");
    k.recorded = ::nhvk::read_state_file(k.dir / "resume.nhvk").next;
    k.samples = read_text(k.dir / "samples.csv.resume");
    EXPECT_GT(k.record.size(), 100u);
    EXPECT_GT(k.samples.size(), 100u);
    return k;
}

// A record that cannot be read is refused like one of another run: exit 2, a message that says how to start over,
// and every file left as it was (issue 25 items 6 and 12).
TEST(ScaleOutResume, DamagedRecordIsRefusedAndLeavesEveryFile) {
    TempDir tmp;
    const Killed k = killed_after_a_record(tmp);
    std::ofstream(k.dir / "resume.nhvk", std::ios::binary | std::ios::trunc) << k.record.substr(0, 100);
    // the killed run's lock file is a stale claim, which any later claim of the folder removes: not compared
    const auto files = [&] {
        std::vector<std::string> v = names(k.dir);
        v.erase(std::remove(v.begin(), v.end(), ".nhvk.lock"), v.end());
        return v;
    };
    const std::vector<std::string> before = files();
    const CliRun r = run_nhvk(k.resume, tmp);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("run without --resume to start over"), std::string::npos) << r.err;
    EXPECT_EQ(files(), before);
    EXPECT_EQ(read_text(k.dir / "resume.nhvk"), k.record.substr(0, 100));
    EXPECT_EQ(read_text(k.dir / "samples.csv.resume"), k.samples);
}

// A samples.csv.resume shorter than its record says is refused the same way, and the message carries no stale errno
// text (issue 25 item 12).
TEST(ScaleOutResume, ShortSamplesAreRefusedAndLeaveEveryFile) {
    TempDir tmp;
    const Killed k = killed_after_a_record(tmp);
    std::ofstream(k.dir / "samples.csv.resume", std::ios::binary | std::ios::trunc) << k.samples.substr(0, 100);
    const CliRun r = run_nhvk(k.resume, tmp);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("holds 100 bytes, fewer than the " + std::to_string(k.samples.size())), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("run without --resume to start over"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("No such file"), std::string::npos) << r.err;
    EXPECT_EQ(read_text(k.dir / "resume.nhvk"), k.record);
    EXPECT_EQ(read_text(k.dir / "samples.csv.resume"), k.samples.substr(0, 100));
}

// samples.csv.resume is checked against its record as merge checks a part: the counted bytes must be the counted rows,
// whole, and a missing file is refused without creating one (issue 25 item 3).
TEST(ScaleOutResume, SamplesOfAnotherShapeOrMissingAreRefusedAndLeaveEveryFile) {
    TempDir tmp;
    const Killed k = killed_after_a_record(tmp);
    std::string joined = k.samples;
    joined[joined.find('\n', 200)] = ','; // the same length, one row end fewer
    std::ofstream(k.dir / "samples.csv.resume", std::ios::binary | std::ios::trunc) << joined;
    const CliRun r = run_nhvk(k.resume, tmp);
    EXPECT_EQ(r.rc, 2) << r.err;
    // the header and one row per trajectory recorded
    EXPECT_NE(r.err.find("the resume record counted " + std::to_string(k.recorded + 1) + " whole lines"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(read_text(k.dir / "samples.csv.resume"), joined);
    EXPECT_EQ(read_text(k.dir / "resume.nhvk"), k.record);
    fs::remove(k.dir / "samples.csv.resume");
    const CliRun missing = run_nhvk(k.resume, tmp);
    EXPECT_EQ(missing.rc, 2) << missing.err;
    EXPECT_NE(missing.err.find("samples.csv.resume' is missing"), std::string::npos) << missing.err;
    EXPECT_FALSE(fs::exists(k.dir / "samples.csv.resume"));
    EXPECT_EQ(read_text(k.dir / "resume.nhvk"), k.record);
}

// A run into a folder holding another run's resume state, or another run's samples.csv and trajectories/, says in one
// line what it removed (issue 25 item 17: the replacement was silent); a plain rerun says nothing.
TEST(ScaleOutResume, RemovedFilesOfAnEarlierRunAreSaidInOneLine) {
    TempDir tmp;
    const Killed k = killed_after_a_record(tmp);
    std::vector<std::string> fresh = k.resume;
    fresh.erase(std::find(fresh.begin(), fresh.end(), "--resume"));
    fresh.insert(fresh.end(), {"--seed", "9", "--save-trajectories", "2"}); // another config
    const CliRun r = run_nhvk(fresh, tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("nhvk: note: removed an earlier unfinished run's resume state from '" + k.dir.string() +
                         "': resume.nhvk, samples.csv.resume"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    const CliRun again = run_nhvk(fresh, tmp);
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_EQ(again.err, "");
    // without samples and trajectories: the earlier run's are removed at the commit, and said so
    const CliRun plain = run_nhvk(run_args(k.dir), tmp);
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_NE(plain.err.find("nhvk: note: removed the earlier run's outputs that this run does not write from '" +
                             k.dir.string() + "': samples.csv, trajectories/ (2 files)"),
              std::string::npos)
        << plain.err;
    EXPECT_FALSE(fs::exists(k.dir / "samples.csv"));
}

/** The names under `dir` but the lock file (a killed run's stale claim, which any later claim removes). */
std::vector<std::string> names_but_lock(const fs::path& dir) {
    std::vector<std::string> v = names(dir);
    v.erase(std::remove(v.begin(), v.end(), ".nhvk.lock"), v.end());
    return v;
}

// A resume refused for a record of another version, or for a samples.csv.resume that is missing or unreadable,
// leaves every file as it found it: no file created, none removed or changed (issue 25 item 6).
TEST(ScaleOutResume, RefusedResumesLeaveEveryFileAsTheyFoundIt) {
    TempDir tmp;
    const Killed k = killed_after_a_record(tmp);
    const auto refused = [&](const std::string& why) {
        const std::vector<std::string> before = names_but_lock(k.dir);
        const std::string log = read_text(k.dir / "run.log");
        const CliRun r = run_nhvk(k.resume, tmp);
        EXPECT_EQ(r.rc, 2) << why << ": " << r.err;
        EXPECT_NE(r.err.find("run without --resume to start over"), std::string::npos) << why << ": " << r.err;
        EXPECT_EQ(names_but_lock(k.dir), before) << why;
        EXPECT_EQ(read_text(k.dir / "run.log"), log) << why;
    };
    // a record of the previous format version
    std::string v2 = k.record;
    v2[12] = '2';
    std::ofstream(k.dir / "resume.nhvk", std::ios::binary | std::ios::trunc) << v2;
    refused("a record of another version");
    EXPECT_EQ(read_text(k.dir / "resume.nhvk"), v2);
    EXPECT_EQ(read_text(k.dir / "samples.csv.resume"), k.samples);
    std::ofstream(k.dir / "resume.nhvk", std::ios::binary | std::ios::trunc) << k.record;
    // the record is fine, the rows it counted are gone: refused, and no empty samples.csv.resume appears
    fs::rename(k.dir / "samples.csv.resume", k.dir / "kept");
    refused("a missing samples.csv.resume");
    EXPECT_FALSE(fs::exists(k.dir / "samples.csv.resume"));
    EXPECT_EQ(read_text(k.dir / "resume.nhvk"), k.record);
    fs::rename(k.dir / "kept", k.dir / "samples.csv.resume");
    // a record that cannot be read (root reads it anyway: that case is left out)
    if (::geteuid() != 0) {
        fs::permissions(k.dir / "resume.nhvk", fs::perms::none);
        refused("an unreadable record");
        fs::permissions(k.dir / "resume.nhvk", fs::perms::owner_read | fs::perms::owner_write);
        EXPECT_EQ(read_text(k.dir / "samples.csv.resume"), k.samples);
    }
    // what was left alone still resumes
    const CliRun r = run_nhvk(k.resume, tmp);
    EXPECT_EQ(r.rc, 0) << r.err;
}

/** The shell prefix that runs `nhvk` under strace and kills it (SIGKILL) at its K-th call of `call` (strace counts
 *  each system call apart). */
std::string strace_kill_prefix(const std::string& call, int K) {
    std::string p =
        "strace -f -o /dev/null -e trace=" + call + " -e inject=" + call + ":signal=SIGKILL:when=" + std::to_string(K);
#ifdef NHVK_LSAN_SUPPRESSIONS
    // NOTE: the sanitizer build: LeakSanitizer cannot stop the threads of a traced process and ends a run that went
    // through with a fatal error (exit 1); leaks are checked in every untraced run, memory errors here too
    p = "ASAN_OPTIONS=detect_leaks=0 " + p;
#endif
    return p;
}

// kill -9 at every rename, link and unlink of a run, those of its final commit included (issue 25 item 5): every
// folder left behind either is complete with the uninterrupted outputs, or resumes to them, bit for bit.
TEST(ScaleOutResume, KillAtEveryStepOfTheCommitLeavesAResumableOrCompleteFolder) {
    if (std::system("strace -f -o /dev/null true >/dev/null 2>&1") != 0) GTEST_SKIP() << "strace cannot run here";
    TempDir tmp;
    const std::vector<std::string> more = {"--save-samples", "--save-trajectories", "2", "--checkpoint-every", "0"};
    const fs::path clean = tmp.path() / "clean";
    ASSERT_EQ(run_nhvk(run_args(clean, more), tmp).rc, 0);
    const auto same_outputs = [&](const fs::path& d, const std::string& when) {
        expect_same_run(clean, d, true);
        for (const char* t : {"trajectories/trajectory_000000.csv", "trajectories/trajectory_000001.csv"})
            EXPECT_EQ(read_text(clean / t), read_text(d / t)) << when << ": " << t;
    };
    int killed = 0, complete = 0;
    for (const std::string call : {"rename", "link", "unlink"}) {
        bool finished = false;
        for (int K = 1; K <= 100 && !finished; ++K) {
            const std::string when = "a kill at " + call + " " + std::to_string(K);
            const fs::path d = tmp.path() / "killed";
            std::vector<std::string> a = run_args(d, more);
            const CliRun k = run_nhvk(a, tmp, strace_kill_prefix(call, K));
            if (k.rc == 0) { // fewer such calls than K: the run went through
                finished = true;
                same_outputs(d, "not killed");
            } else {
                ASSERT_EQ(k.rc, 128 + 9) << when << ": " << k.err;
                ++killed;
                if (fs::exists(d / "summary.json")) {
                    ++complete;
                    same_outputs(d, "complete after " + when);
                }
                a.push_back("--resume");
                const CliRun r = run_nhvk(a, tmp);
                ASSERT_EQ(r.rc, 0) << "resume after " << when << ": " << r.err;
                same_outputs(d, "resumed after " + when);
            }
            fs::remove_all(d);
        }
        EXPECT_TRUE(finished) << call;
    }
    EXPECT_GT(killed, 15);  // a record per chunk, and the commit's steps
    EXPECT_GE(complete, 3); // kills after summary.json is in place: the record, samples.csv.resume, the lock
}

TEST(ScaleOutResume, CtrlCStopsCleanlyAndResumes) {
    TempDir tmp;
    const fs::path clean = tmp.path() / "clean", d = tmp.path() / "stopped";
    ASSERT_EQ(run_nhvk(run_args(clean, {"--save-samples", "--save-trajectories", "2"}), tmp).rc, 0);
    const CliRun k =
        run_nhvk(run_args(d, {"--save-samples", "--save-trajectories", "2"}), tmp, "NHVK_TEST_SIGNAL_AFTER_CHUNK=3,2");
    ASSERT_EQ(k.rc, 128 + 2) << k.err;
    EXPECT_NE(k.err.find("--resume"), std::string::npos) << k.err;
    EXPECT_NE(k.err.find("stopped by SIGINT"), std::string::npos) << k.err;
    // no half-written outputs: only the log, the record and the resumable samples
    EXPECT_EQ(names(d), (std::vector<std::string>{"resume.nhvk", "run.log", "samples.csv.resume"}));
    const CliRun r = run_nhvk(run_args(d, {"--save-samples", "--save-trajectories", "2", "--resume"}), tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    expect_same_run(clean, d, true);
    EXPECT_EQ(read_text(clean / "trajectories" / "trajectory_000001.csv"),
              read_text(d / "trajectories" / "trajectory_000001.csv"));
    const std::string log = read_text(d / "run.log");
    EXPECT_NE(log.find("stopped by SIGINT"), std::string::npos) << log;
    EXPECT_NE(log.find("resumed at trajectory"), std::string::npos) << log;
}

TEST(ScaleOutResume, ResumeWithoutARecordStartsOver) {
    TempDir tmp;
    const fs::path clean = tmp.path() / "clean", d = tmp.path() / "fresh";
    ASSERT_EQ(run_nhvk(run_args(clean), tmp).rc, 0);
    const CliRun r = run_nhvk(run_args(d, {"--resume"}), tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    expect_same_run(clean, d, false);
    EXPECT_TRUE(read_json(d / "summary.json")["job"]["resumed_at"].is_null());
}

// ---------------------------------------------------------------------------------------------------------------
// Progress and run.log

TEST(ScaleOutProgress, LinesWithinWhatOneLargeChunkWouldHoldAndARunLog) {
    TempDir tmp;
    const fs::path d = tmp.path() / "out";
    // Chunks of at most 4000 trajectories, the whole run: progress must not wait for the run's end. The CPU backend's
    // chunks are paced (16 members per thread first, at most twice the one before: at least eight for 4000) and the
    // progress line comes after each; the test hook pauses 250 ms after each chunk, longer than --progress-every, so
    // every report after the first is a line however fast the machine. --backend cpu: the pause is the CPU
    // backend's (on a GPU machine `auto` picks CUDA).
    const CliRun r = run_nhvk({"run", config, "--trajectories", "4000", "--chunk", "4000", "--threads", "1",
                               "--backend", "cpu", "--out", d.string(), "--progress-every", "0.2"},
                              tmp, "NHVK_TEST_CHUNK_PAUSE_MS=250");
    ASSERT_EQ(r.rc, 0) << r.err;
    int lines = 0, partial = 0;
    std::istringstream err(r.err);
    for (std::string l; std::getline(err, l);) {
        if (l.rfind("[nhvk] progress ", 0) != 0) continue;
        ++lines;
        if (l.find("/4000 (100.0%)") == std::string::npos) ++partial;
    }
    EXPECT_GE(partial, 2) << r.err; // seen before the end of the run
    EXPECT_GE(lines, partial + 1) << r.err;
    const std::string log = read_text(d / "run.log");
    const std::string hash = read_json(d / "summary.json")["job"]["config_hash"];
    EXPECT_EQ(hash.size(), 16u);
    EXPECT_NE(log.find(" start nhvk "), std::string::npos) << log;
    EXPECT_NE(log.find("config hash " + hash), std::string::npos) << log;
    EXPECT_NE(log.find(" end complete"), std::string::npos) << log;
}

} // namespace

// A sweep's points split over MPI ranks, shards and a killed run's resume exactly as a run's members do: every
// point's statistics and the pooled ones equal the single process's (issue 22 item 2). The loader test's product
// sweep: 6 points of 60 members in chunks of 50, so ranks, shards and chunks all cut points.
namespace sweep_parts {

const std::string sweep_config = std::string(NHVK_SOURCE_DIR) + "/tests/host/data/sweep_product.toml";

std::vector<std::string> sweep_args(const fs::path& out, std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"run", sweep_config, "--threads", "1", "--out", out.string(), "-q"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

void expect_same_sweep(const fs::path& a, const fs::path& b) {
    EXPECT_EQ(read_text(a / "sweep.csv"), read_text(b / "sweep.csv")) << a << " vs " << b;
    EXPECT_EQ(read_text(a / "sweep_points.csv"), read_text(b / "sweep_points.csv")) << a << " vs " << b;
    EXPECT_EQ(run_statistics(a), run_statistics(b)) << a << " vs " << b;
    EXPECT_EQ(read_json(b / "summary.json")["sweep"]["points"].size(), 6u);
}

TEST(ScaleOutSweep, RanksShardsAndResumeGiveEveryPointsStatistics) {
    TempDir tmp;
    const fs::path single = tmp.path() / "single";
    ASSERT_EQ(run_nhvk(sweep_args(single), tmp).rc, 0);
#ifdef NHVK_MPIEXEC
    for (int ranks : {1, 2}) {
        const fs::path d = tmp.path() / ("mpi" + std::to_string(ranks));
        const CliRun r = nhvk_test::run_captured(mpirun(ranks), NHVK_BINARY, sweep_args(d), tmp.path() / "io");
        ASSERT_EQ(r.rc, 0) << r.err;
        expect_same_sweep(single, d);
    }
#endif
    // shards merged, with exact quantiles and with histograms (no exact budget): both merge exactly
    const fs::path single_hist = tmp.path() / "single_hist";
    ASSERT_EQ(run_nhvk(sweep_args(single_hist, {"--set", "run.exact_memory_mb=0"}), tmp).rc, 0);
    for (const std::string budget : {"1024", "0"}) {
        std::vector<std::string> merge = {"merge"};
        for (int i : {1, 0, 2}) {
            const fs::path d = tmp.path() / ("shard" + std::to_string(i) + "_" + budget);
            const CliRun r = run_nhvk(
                sweep_args(d, {"--shard", std::to_string(i) + "/3", "--set", "run.exact_memory_mb=" + budget}), tmp);
            ASSERT_EQ(r.rc, 0) << r.err;
            merge.push_back(d.string());
        }
        const fs::path merged = tmp.path() / ("merged_" + budget);
        merge.insert(merge.end(), {"--out", merged.string(), "-q"});
        const CliRun m = run_nhvk(merge, tmp);
        ASSERT_EQ(m.rc, 0) << m.err;
        expect_same_sweep(budget == "0" ? single_hist : single, merged);
    }
    EXPECT_EQ(read_json(single_hist / "summary.json")["sweep"]["points"][0]["quantiles"], "histogram");
    // kill -9 after the record of the 3rd chunk (paced chunks of at most 50: inside point 1 or 2), then --resume
    const fs::path killed = tmp.path() / "killed";
    const CliRun k = run_nhvk(sweep_args(killed, {"--checkpoint-every", "0"}), tmp, "NHVK_TEST_SIGNAL_AFTER_CHUNK=3,9");
    ASSERT_EQ(k.rc, 128 + 9) << k.err;
    ASSERT_TRUE(fs::exists(killed / "resume.nhvk"));
    const std::uint64_t recorded = ::nhvk::read_state_file(killed / "resume.nhvk").next;
    EXPECT_GT(recorded, 60u); // past the first point: the record holds a finished point and part of the next
    EXPECT_LE(recorded, 150u);
    EXPECT_NE(recorded % 60, 0u);
    const CliRun r = run_nhvk(sweep_args(killed, {"--checkpoint-every", "0", "--resume"}), tmp);
    ASSERT_EQ(r.rc, 0) << r.err;
    expect_same_sweep(single, killed);
    EXPECT_EQ(read_json(killed / "summary.json")["job"]["resumed_at"], recorded);
}

} // namespace sweep_parts
