// SPDX-License-Identifier: MIT
// nhvk under the limits and settings of the process it runs in: a file-size limit (`ulimit -f`, SIGXFSZ) is a
// failed write like a full disk; OpenMP threads wait passively unless the user chose otherwise; `nhvk merge
// --threads`.
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

} // namespace
