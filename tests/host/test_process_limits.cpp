// SPDX-License-Identifier: MIT
// nhvk under the limits and settings of the process it runs in: a file-size limit (`ulimit -f`, SIGXFSZ) is a
// failed write like a full disk; OpenMP threads wait passively unless the user chose otherwise; `nhvk merge
// --threads`. No test here measures time: the wait policy is read back from libgomp's OMP_DISPLAY_ENV report.
#include "checks.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nhvk_test::read_text;

const std::string kQuickstart = std::string(NHVK_SOURCE_DIR) + "/configs/quickstart.toml";

/** Runs the built nhvk with `args` under a file-size limit of `fsize` bytes (setrlimit in the child, as `ulimit -f`
 *  does), stdout and stderr into files of `io`. Returns the exit code, or 128 + the signal that ended it. */
nhvk_test::CliRun run_with_file_size_limit(rlim_t fsize, const std::vector<std::string>& args, const fs::path& io) {
    fs::create_directories(io);
    const std::string out = (io / "stdout.txt").string(), err = (io / "stderr.txt").string();
    std::vector<std::string> argv_s = {NHVK_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    const pid_t pid = fork();
    if (pid == 0) {
        const rlimit lim{fsize, fsize};
        const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0 || ::setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(97);
        std::vector<char*> argv;
        for (std::string& a : argv_s) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        _exit(98);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    nhvk_test::CliRun r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
}

/** The names in `dir` that no complete output folder holds: temporaries and the lock. */
std::vector<std::string> leftovers(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; ++it) {
        const std::string n = it->path().filename().string();
        if (n.find(".tmp") != std::string::npos || n == ".nhvk.lock" || n.find(".resume") != std::string::npos)
            names.push_back(n);
    }
    return names;
}

TEST(FileSizeLimit, IsAFailedWriteLikeAFullDisk) {
    nhvk_test::TempDir tmp;
    // A fresh folder: samples.csv outgrows 64 KiB; a folder holding a complete run: that run stays as it was.
    const fs::path fresh = tmp.path() / "fresh", kept = tmp.path() / "kept";
    const nhvk_test::CliRun first = nhvk_test::run_captured(
        "", NHVK_BINARY, {"run", kQuickstart, "--trajectories", "50", "--out", kept.string(), "-q"},
        tmp.path() / "io0");
    ASSERT_EQ(first.rc, 0) << first.err;
    const std::string kept_summary = read_text(kept / "summary.json");
    for (const fs::path& dir : {fresh, kept}) {
        const nhvk_test::CliRun r = run_with_file_size_limit(
            64 * 1024, {"run", kQuickstart, "--trajectories", "2000", "--save-samples", "--out", dir.string(), "-q"},
            tmp.path() / ("io_" + dir.filename().string()));
        EXPECT_EQ(r.rc, 1) << "ended by SIGXFSZ (153) instead of a write error? " << r.err;
        EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
        EXPECT_TRUE(leftovers(dir).empty()) << dir << ": " << leftovers(dir).front();
    }
    EXPECT_FALSE(fs::exists(fresh)) << "the folder this run created must go with its failure";
    EXPECT_EQ(read_text(kept / "summary.json"), kept_summary);
    EXPECT_FALSE(fs::exists(kept / "samples.csv"));
    // the lock was released: the same run without the limit goes through
    const nhvk_test::CliRun again = nhvk_test::run_captured(
        "", NHVK_BINARY,
        {"run", kQuickstart, "--trajectories", "2000", "--save-samples", "--out", fresh.string(), "-q"},
        tmp.path() / "io2");
    EXPECT_EQ(again.rc, 0) << again.err;
}

/** The value of the last `NAME = 'value'` line libgomp prints under OMP_DISPLAY_ENV, or "" when there is none. */
std::string last_display_value(const std::string& err, const std::string& name) {
    const std::size_t at = err.rfind("  " + name + " = '");
    if (at == std::string::npos) return "";
    const std::size_t from = at + name.size() + 6;
    return err.substr(from, err.find('\'', from) - from);
}

TEST(OmpWaitPolicy, PassiveUnlessTheUserChoseOne) {
    nhvk_test::TempDir tmp;
    const nhvk_test::CliRun unset = nhvk_test::run_captured("env -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose",
                                                            NHVK_BINARY, {"models"}, tmp.path() / "io1");
    ASSERT_EQ(unset.rc, 0) << unset.err;
    if (last_display_value(unset.err, "GOMP_SPINCOUNT").empty())
        GTEST_SKIP() << "the OpenMP runtime is not libgomp (no GOMP_SPINCOUNT under OMP_DISPLAY_ENV=verbose)";
    // passive: libgomp spins 0 times before it sleeps (the default spins 300000 times, active 3e10)
    EXPECT_EQ(last_display_value(unset.err, "GOMP_SPINCOUNT"), "0") << unset.err;
    const nhvk_test::CliRun chosen = nhvk_test::run_captured("env OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=verbose",
                                                             NHVK_BINARY, {"models"}, tmp.path() / "io2");
    ASSERT_EQ(chosen.rc, 0) << chosen.err;
    EXPECT_EQ(last_display_value(chosen.err, "OMP_WAIT_POLICY"), "ACTIVE") << chosen.err;
    EXPECT_NE(last_display_value(chosen.err, "GOMP_SPINCOUNT"), "0") << chosen.err;
}

TEST(MergeThreads, TakesACountAndGivesTheSameStatistics) {
    nhvk_test::TempDir tmp;
    for (const char* shard : {"0/2", "1/2"}) {
        const nhvk_test::CliRun r =
            nhvk_test::run_captured("", NHVK_BINARY,
                                    {"run", kQuickstart, "--trajectories", "60", "--shard", shard, "--out",
                                     tmp.str(std::string("s") + shard[0]), "-q"},
                                    tmp.path() / "io");
        ASSERT_EQ(r.rc, 0) << r.err;
    }
    const auto merge = [&](const std::string& out, const std::vector<std::string>& more) {
        std::vector<std::string> args = {"merge", tmp.str("s0"), tmp.str("s1"), "--out", tmp.str(out), "-q"};
        args.insert(args.end(), more.begin(), more.end());
        return nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / ("io_" + out));
    };
    const nhvk_test::CliRun one = merge("one", {"--threads", "1"}), all = merge("all", {});
    ASSERT_EQ(one.rc, 0) << one.err;
    ASSERT_EQ(all.rc, 0) << all.err;
    EXPECT_EQ(nhvk_test::read_json(tmp.path() / "one" / "summary.json").at("threads"), 1);
    EXPECT_GE(nhvk_test::read_json(tmp.path() / "all" / "summary.json").at("threads").get<int>(), 1);
    EXPECT_EQ(read_text(tmp.path() / "one" / "stats.csv"), read_text(tmp.path() / "all" / "stats.csv"));
    for (const char* bad : {"-1", "x", "70000"}) {
        const nhvk_test::CliRun r = merge("bad", {"--threads", bad});
        EXPECT_EQ(r.rc, 2) << bad << ": " << r.err;
        EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(tmp.path() / "bad"));
    }
}

} // namespace

namespace {

// ---- an address-space limit (`ulimit -v`, issue 38 item 12) ----

constexpr double kMiB = 1024.0 * 1024.0;

TEST(AddressSpaceLimit, TheThreadCountThatFitsIsNamed) {
    // 300 MiB limit, 100 mapped, 20 of run data, 72 per extra thread: 1 + floor(180 / 72) = 3 threads fit
    EXPECT_FALSE(nhvk::address_space_problem(3, 20 * kMiB, 100 * kMiB, 72 * kMiB, 300 * kMiB));
    const auto p = nhvk::address_space_problem(4, 20 * kMiB, 100 * kMiB, 72 * kMiB, 300 * kMiB);
    ASSERT_TRUE(p);
    EXPECT_NE(p->find("use --threads 3 (run.threads)"), std::string::npos) << *p;
    EXPECT_NE(p->find("ulimit -v: 300 MiB"), std::string::npos) << *p;
    // one thread is the memory check's; where the run's data already leaves no room, a second thread is refused
    EXPECT_FALSE(nhvk::address_space_problem(1, 20 * kMiB, 290 * kMiB, 72 * kMiB, 300 * kMiB));
    const auto two = nhvk::address_space_problem(2, 20 * kMiB, 290 * kMiB, 72 * kMiB, 300 * kMiB);
    ASSERT_TRUE(two);
    EXPECT_NE(two->find("use --threads 1"), std::string::npos) << *two;
    EXPECT_FALSE(nhvk::address_space_problem(64, 20 * kMiB, 100 * kMiB, 72 * kMiB, HUGE_VAL)) << "no limit";
}

} // namespace
