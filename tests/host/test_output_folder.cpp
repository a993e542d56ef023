// SPDX-License-Identifier: MIT
// The output folder of `nhvk run` holds exactly one run (issue 7 item 3; README "Outputs" and "Exit codes"): it is
// claimed with a lock (a second run into it is refused with exit code 5, a dead run's lock is taken over), a run
// replaces the outputs of an earlier one and removes those it does not rewrite, and a run that fails or is
// interrupted (disk full, file size limit, a folder in the way, SIGINT, SIGTERM, kill -9 at any step of the final
// moves) leaves the earlier complete run or nothing that looks complete, and no temporary behind. A first SIGINT or
// SIGTERM stops the run at a chunk boundary and leaves its resume record beside the earlier outputs (issue 8).
#include "netcdf_names.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_common.hpp"
#include "report/report.hpp"

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY (the path of the built nhvk)"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk_test::TempDir;

const std::string small_config = std::string(NHVK_SOURCE_DIR) + "/tests/host/data/ensemble/small.toml";

/** Every regular file under `dir` (recursive, relative path → content). */
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> out;
    std::error_code ec;
    if (!fs::exists(dir, ec)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_directory()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        out[fs::relative(e.path(), dir).string()] = ss.str();
    }
    return out;
}

/** Only the outputs of `s`: not run.log (every run appends to it) nor a resume record and its rows. */
std::map<std::string, std::string> outputs_only(std::map<std::string, std::string> s) {
    for (auto it = s.begin(); it != s.end();) {
        const std::string& k = it->first;
        const bool side = k == "run.log" || k == "resume.nhvk" || k == "samples.csv.resume";
        it = side ? s.erase(it) : std::next(it);
    }
    return s;
}

std::vector<std::string> names(const std::map<std::string, std::string>& s) {
    std::vector<std::string> v;
    for (const auto& [k, x] : s) v.push_back(k);
    return v;
}

std::string text_of(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/** A started `nhvk` process (nhvk_test::spawn: SIGINT/SIGTERM at their defaults whatever the test's are). */
using nhvk_test::Child;

struct Limits {
    long long file_size = -1;     ///< RLIMIT_FSIZE in bytes (SIGXFSZ ignored: writes fail with EFBIG)
    std::vector<std::string> env; ///< extra NAME=VALUE
};

Child start(const std::vector<std::string>& args, const TempDir& tmp, const Limits& lim = {}) {
    static int n = 0;
    Child c;
    c.err_file = tmp.str("stderr_" + std::to_string(n++) + ".txt");
    const long long file_size = lim.file_size;
    c.pid = nhvk_test::spawn(NHVK_BINARY, args, c.err_file, lim.env, [file_size] {
        if (file_size >= 0) {
            ::signal(SIGXFSZ, SIG_IGN);
            const rlimit r{static_cast<rlim_t>(file_size), static_cast<rlim_t>(file_size)};
            ::setrlimit(RLIMIT_FSIZE, &r);
        }
    });
    return c;
}

Child run(const std::vector<std::string>& args, const TempDir& tmp, const Limits& lim = {}) {
    Child c = start(args, tmp, lim);
    c.wait();
    return c;
}

/** `nhvk run small.toml --out OUT -q --seed SEED` on one thread (quick on a loaded machine) plus `extra`. */
std::vector<std::string> run_args(const std::string& out, int seed, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> a = {
        "run", small_config, "--out", out, "-q", "--backend", "cpu", "--threads", "1", "--seed", std::to_string(seed)};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

/** A long run (about 7 s on one core if not stopped) that writes samples.csv as it goes. */
std::vector<std::string> long_run_args(const std::string& out, int seed) {
    return run_args(out, seed, {"--trajectories", "200000", "--chunk", "64", "--save-samples"});
}

/** The test hook that makes a long run outlast any test that stops it, however fast the machine: a 20 ms pause after
 *  each chunk of the CPU backend, here chunks of at most 64, so the 3125 or more chunks take over a minute while a
 *  stop request is still honoured within one pause. */
const std::string long_run_pause = "NHVK_TEST_CHUNK_PAUSE_MS=20";

/** Wait until `p` exists (at most 10 s). */
bool wait_for_file(const fs::path& p) {
    for (int i = 0; i < 2000; ++i) {
        std::error_code ec;
        if (fs::exists(p, ec)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

/** A long run of `seed` into `out`, returned once it is mid-way (its samples.csv rows have begun). */
Child start_long_run(const std::string& out, int seed, const TempDir& tmp) {
    Limits lim;
    lim.env = {long_run_pause};
    Child c = start(long_run_args(out, seed), tmp, lim);
    EXPECT_TRUE(wait_for_file(fs::path(out) / "samples.csv.resume")) << "the run never got going";
    return c;
}

/** Send `sig` to `c` and wait for its end. */
void stop(Child& c, int sig) {
    ::kill(c.pid, sig);
    c.wait();
}

/** A complete run of `seed` into `out`: its files. */
std::map<std::string, std::string> complete_run(const std::string& out, int seed, const TempDir& tmp,
                                                const std::vector<std::string>& extra = {}) {
    const Child c = run(run_args(out, seed, extra), tmp);
    EXPECT_EQ(c.code(), nhvk::exit_ok) << c.err();
    const std::map<std::string, std::string> s = snapshot(out);
    EXPECT_TRUE(s.count("summary.json")) << out;
    return s;
}

// ---------------------------------------------------------------------------------------------------------------

// A second run into a folder that a live run holds is refused (exit code 5, the holder's pid in the message) and
// touches nothing; SIGTERM to the first stops it cleanly (exit 128 + 15, its temporaries and lock removed, a resume
// record left); afterwards the folder can be claimed.
TEST(OutputFolder, SecondRunIntoAHeldFolderIsRefused) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    const auto before = complete_run(out, 4, tmp);
    Child first = start_long_run(out, 5, tmp);
    const Child second = run(run_args(out, 6), tmp);
    EXPECT_EQ(second.code(), nhvk::exit_folder_busy) << second.err();
    EXPECT_NE(second.err().find("in use by another nhvk run (pid " + std::to_string(first.pid)), std::string::npos)
        << second.err();
    EXPECT_NE(second.err().find(out), std::string::npos) << second.err();
    stop(first, SIGTERM);
    EXPECT_EQ(first.code(), 128 + SIGTERM) << "status " << first.status << ": " << first.err();
    EXPECT_NE(first.err().find("stopped by SIGTERM"), std::string::npos) << first.err();
    EXPECT_EQ(outputs_only(snapshot(out)), outputs_only(before))
        << "the refused or the stopped run changed the outputs";
    EXPECT_TRUE(fs::exists(fs::path(out) / "resume.nhvk"));
    EXPECT_FALSE(fs::exists(fs::path(out) / ".nhvk.lock"));
    const auto after = complete_run(out, 6, tmp);
    EXPECT_EQ(names(after), names(before));
}

// A lock file left by a dead process (not locked by anyone) and its temporaries are taken over and removed.
TEST(OutputFolder, StaleLockAndTemporariesOfADeadRunAreTakenOver) {
    TempDir tmp;
    const fs::path out = tmp.path() / "out";
    fs::create_directories(out / "trajectories");
    std::ofstream(out / ".nhvk.lock") << "999999999\n";
    std::ofstream(out / "summary.json.tmp.999999999") << "{\"half\": ";
    std::ofstream(out / "trajectories" / "trajectory_000000.csv.tmp.999999999") << "t,";
    std::ofstream(out / "notes.txt") << "mine\n";
    const Child c = run(run_args(out.string(), 4), tmp);
    ASSERT_EQ(c.code(), nhvk::exit_ok) << c.err();
    EXPECT_EQ(names(snapshot(out)), nhvk_test::with_stats_nc({"notes.txt", "report.html", "run.log", "stats.csv",
                                                              "summary.json", "summary.md"}))
        << "lock and stale temporaries removed, the user's file kept";
    EXPECT_EQ(text_of(out / "notes.txt"), "mine\n");
    EXPECT_FALSE(fs::exists(out / "trajectories")) << "the dead run's emptied trajectories/ goes too";
}

// A run replaces an earlier run: outputs it does not write (samples.csv, surplus trajectories) are removed.
TEST(OutputFolder, OutputsOfAnEarlierRunThatThisRunDoesNotWriteAreRemoved) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    complete_run(out, 4, tmp, {"--save-samples", "--save-trajectories", "3"});
    const auto after = complete_run(out, 5, tmp, {"--save-trajectories", "1"});
    EXPECT_EQ(names(after), nhvk_test::with_stats_nc({"report.html", "run.log", "stats.csv", "summary.json",
                                                      "summary.md", "trajectories/trajectory_000000.csv"}));
    const nlohmann::json j = nlohmann::json::parse(after.at("summary.json"));
    EXPECT_EQ(j["config"]["run"]["seed"], 5);
    complete_run(out, 6, tmp);
    EXPECT_FALSE(fs::exists(fs::path(out) / "trajectories"));
}

// A folder in the way of one output (here one trajectory file) fails the run before anything is moved: the folder
// is exactly as before, and the message says why.
TEST(OutputFolder, AFolderInTheWayLeavesTheEarlierRunUntouched) {
    TempDir tmp;
    const fs::path out = tmp.path() / "out";
    complete_run(out.string(), 4, tmp, {"--save-trajectories", "2"});
    fs::remove(out / "trajectories" / "trajectory_000001.csv");
    fs::create_directory(out / "trajectories" / "trajectory_000001.csv");
    const auto before = snapshot(out);
    const Child c = run(run_args(out.string(), 5, {"--save-trajectories", "2"}), tmp);
    EXPECT_EQ(c.code(), nhvk::exit_runtime) << c.err();
    EXPECT_NE(c.err().find("trajectory_000001.csv"), std::string::npos) << c.err();
    EXPECT_NE(c.err().find(std::strerror(EISDIR)), std::string::npos) << c.err();
    auto after = snapshot(out);
    EXPECT_NE(after["run.log"].find("failed: "), std::string::npos) << after["run.log"];
    after["run.log"] = before.at("run.log"); // the log has the failure's lines; nothing else changed
    EXPECT_EQ(outputs_only(after), outputs_only(before));
    EXPECT_EQ(names(after), names(before));
}

// A write that fails after the computation (the file size limit: EFBIG, as any user can set it) leaves the earlier
// run as it was, no temporary, and says why.
TEST(OutputFolder, FailedWriteAfterTheComputationLeavesTheEarlierRun) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    const auto before = complete_run(out, 4, tmp);
    ASSERT_GT(before.at("stats.csv").size(), 12000u) << "the limit below must cut stats.csv";
    Limits lim;
    lim.file_size = 12000;
    const Child c = run(run_args(out, 5), tmp, lim);
    EXPECT_EQ(c.code(), nhvk::exit_runtime) << c.err();
    EXPECT_NE(c.err().find(std::strerror(EFBIG)), std::string::npos) << c.err();
    EXPECT_NE(c.err().find("stats.csv"), std::string::npos) << c.err();
    EXPECT_EQ(outputs_only(snapshot(out)), outputs_only(before));
    EXPECT_EQ(names(snapshot(out)), names(before));
}

// A write that fails during the computation (samples.csv past the file size limit) stops the run there (it does not
// integrate 200,000 trajectories first), says why, and removes the folder that the run created.
TEST(OutputFolder, FailedWriteDuringTheRunStopsItAndRemovesTheNewFolder) {
    TempDir tmp;
    const std::string out = tmp.str("new/out");
    Limits lim;
    lim.file_size = 100000;
    const auto t0 = std::chrono::steady_clock::now();
    const Child c = run(long_run_args(out, 5), tmp, lim);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(c.code(), nhvk::exit_runtime) << c.err();
    EXPECT_NE(c.err().find(std::strerror(EFBIG)), std::string::npos) << c.err();
    EXPECT_NE(c.err().find("samples.csv"), std::string::npos) << c.err();
    EXPECT_FALSE(fs::exists(out));
    std::cout << "[ folder ] the run stopped after " << seconds << " s\n";
}

/** A tmpfs of `kib` KiB mounted at `dir` for the scope (root only); `ok()` false where it cannot be mounted. */
class TinyTmpfs {
public:
    TinyTmpfs(const fs::path& dir, int kib) : dir_(dir) {
        fs::create_directories(dir);
        ok_ = ::geteuid() == 0 &&
              ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + std::to_string(kib) + "k").c_str()) == 0;
    }
    ~TinyTmpfs() {
        if (ok_) ::umount2(dir_.c_str(), MNT_DETACH);
    }
    bool ok() const { return ok_; }

private:
    fs::path dir_;
    bool ok_ = false;
};

// A full disk (a tiny tmpfs, filled up after a first complete run but for two pages): the next run fails with
// "No space left on device", leaving the first run as it was and no temporary; with room again it succeeds.
TEST(OutputFolder, FullDiskLeavesTheEarlierRun) {
    TempDir tmp;
    const fs::path mnt = tmp.path() / "mnt";
    TinyTmpfs fs_guard(mnt, 1024);
    if (!fs_guard.ok())
        GTEST_SKIP() << "cannot mount a tmpfs here (needs root and mount permission); "
                        "FailedWriteAfterTheComputationLeavesTheEarlierRun covers a failed write";
    const std::string out = (mnt / "out").string();
    const auto before = complete_run(out, 4, tmp);
    struct statvfs sv {};
    ASSERT_EQ(::statvfs(mnt.c_str(), &sv), 0);
    const long long room = static_cast<long long>(sv.f_bavail) * static_cast<long long>(sv.f_bsize);
    const long long page = static_cast<long long>(sv.f_bsize);
    ASSERT_GT(room, 2 * page);
    {
        std::ofstream fill(mnt / "filler", std::ios::binary);
        const std::string block(static_cast<std::size_t>(room - 2 * page), 'x');
        fill << block;
        ASSERT_TRUE(fill.flush()) << "could not fill the tmpfs";
    }
    const Child c = run(run_args(out, 5), tmp);
    EXPECT_EQ(c.code(), nhvk::exit_runtime) << c.err();
    EXPECT_NE(c.err().find(std::strerror(ENOSPC)), std::string::npos) << c.err();
    EXPECT_EQ(outputs_only(snapshot(out)), outputs_only(before));
    EXPECT_EQ(names(snapshot(out)), names(before));
    fs::remove(mnt / "filler");
    complete_run(out, 5, tmp);
}

// kill -9 in the middle of the computation: the earlier run is intact (its temporary and lock may stay); the next
// run takes the folder over and leaves only its own outputs.
TEST(OutputFolder, KillNineMidRunLeavesTheEarlierRun) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    const auto before = complete_run(out, 4, tmp, {"--save-samples"});
    Child c = start_long_run(out, 5, tmp);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop(c, SIGKILL);
    ASSERT_EQ(c.signal(), SIGKILL);
    auto left = outputs_only(snapshot(out));
    left.erase(".nhvk.lock");
    EXPECT_EQ(left, outputs_only(before));
    const auto after = complete_run(out, 6, tmp, {"--save-samples"});
    EXPECT_EQ(names(after), names(before)) << "the dead run's temporary and lock are gone";
}

/** The outputs among `files` (no temporary, no lock), with what differs between two runs of one ensemble into two
 *  folders (summary.json's timing and config.run.out) taken out; report.html (which shows them) stands as whether it
 *  is the page of the summary.json and stats.csv beside it. */
std::map<std::string, std::string> outputs_of(const std::map<std::string, std::string>& files) {
    std::map<std::string, std::string> out;
    for (const auto& [rel, content] : files) {
        if (rel.find(".tmp.") != std::string::npos || rel == ".nhvk.lock" || rel == "run.log") continue;
        out[rel] = content;
        if (rel == "summary.json") {
            nlohmann::json j = nlohmann::json::parse(content);
            j.erase("timing");
            j["config"]["run"].erase("out");
            out[rel] = j.dump();
        }
    }
    // NOTE: stats.nc holds the text of its run's summary.json (an attribute, stored as is): it belongs to the
    // summary.json beside it when it holds exactly that text
    if (out.count("stats.nc")) {
        const auto s = files.find("summary.json");
        out["stats.nc"] = s == files.end() ? "beside no summary.json"
                          : files.at("stats.nc").find(s->second) != std::string::npos
                              ? "the twin of the summary.json beside it"
                              : "the twin of another run";
    }
    if (out.count("report.html")) {
        const auto s = files.find("summary.json"), c = files.find("stats.csv");
        out["report.html"] = s == files.end() || c == files.end() ? "beside no summary.json and stats.csv"
                             : files.at("report.html") == nhvk::render_report(s->second, c->second)
                                 ? "the page of the summary.json and stats.csv beside it"
                                 : "the page of another run";
    }
    return out;
}

// kill -9 before each change that the final moves make (test hook NHVK_TEST_KILL_AT_COMMIT_STEP): whenever a
// summary.json is there, every output beside it belongs to the same run; the earlier run stays until its summary.json
// is removed, first of all changes.
TEST(OutputFolder, KillNineAtEveryStepOfTheFinalMovesLeavesNoMixedRun) {
    TempDir tmp;
    const std::vector<std::string> a_extra = {"--save-samples", "--save-trajectories", "2"};
    const std::vector<std::string> b_extra = {"--save-trajectories", "1"};
    std::map<int, std::map<std::string, std::string>> ref; // seed → the outputs of its complete run
    ref[4] = outputs_of(complete_run(tmp.str("ref_a"), 4, tmp, a_extra));
    ref[5] = outputs_of(complete_run(tmp.str("ref_b"), 5, tmp, b_extra));
    ASSERT_NE(ref[4], ref[5]);
    bool completed = false;
    int steps = 0;
    for (int step = 0; step < 12 && !completed; ++step) {
        SCOPED_TRACE("killed before step " + std::to_string(step));
        const std::string out = tmp.str("out" + std::to_string(step));
        fs::copy(tmp.path() / "ref_a", out, fs::copy_options::recursive); // the earlier run
        Limits lim;
        lim.env = {"NHVK_TEST_KILL_AT_COMMIT_STEP=" + std::to_string(step)};
        const Child c = run(run_args(out, 5, b_extra), tmp, lim);
        completed = c.exited();
        if (completed) EXPECT_EQ(c.code(), nhvk::exit_ok) << c.err();
        else ASSERT_EQ(c.signal(), SIGKILL) << "status " << c.status << ": " << c.err();
        steps = step;
        const std::map<std::string, std::string> outputs = outputs_of(snapshot(out));
        if (step == 0) EXPECT_EQ(outputs, ref[4]) << "killed before any change";
        if (!outputs.count("summary.json")) continue; // nothing that looks complete
        const int seed = nlohmann::json::parse(outputs.at("summary.json"))["config"]["run"]["seed"];
        ASSERT_TRUE(ref.count(seed)) << seed;
        EXPECT_EQ(outputs, ref[seed]) << "a summary.json beside outputs of another run";
        EXPECT_TRUE(step == 0 || seed == 5) << "the earlier summary.json must go first";
    }
    EXPECT_TRUE(completed) << "the commit has more steps than tried";
    // remove summary.json, samples.csv, trajectory 1; move trajectory 0, stats.csv, stats.nc, summary.md,
    // report.html, summary.json; remove the resume record (the run is complete from summary.json on)
    EXPECT_EQ(steps, nhvk::netcdf_outputs_built() ? 10 : 9);
}

// SIGINT (Ctrl-C) mid-run: the run stops at a chunk boundary (exit 128 + 2), no temporary and no lock remain, the
// earlier outputs are exactly as they were, and the resume record and rows so far wait for --resume; into a fresh
// folder, only those.
TEST(OutputFolder, SigintStopsCleanlyAndLeavesNoTemporary) {
    TempDir tmp;
    const std::string out = tmp.str("out");
    const auto before = complete_run(out, 4, tmp, {"--save-samples"});
    Child c = start_long_run(out, 5, tmp);
    stop(c, SIGINT);
    EXPECT_EQ(c.code(), 128 + SIGINT) << "status " << c.status << ": " << c.err();
    EXPECT_NE(c.err().find("--resume"), std::string::npos) << c.err();
    const auto after = snapshot(out);
    EXPECT_EQ(outputs_only(after), outputs_only(before));
    for (const auto& [rel, content] : after)
        EXPECT_TRUE(rel.find(".tmp.") == std::string::npos && rel != ".nhvk.lock") << rel;
    const std::string fresh = tmp.str("fresh");
    Child d = start_long_run(fresh, 5, tmp);
    stop(d, SIGINT);
    EXPECT_EQ(d.code(), 128 + SIGINT) << d.err();
    EXPECT_EQ(names(snapshot(fresh)), (std::vector<std::string>{"resume.nhvk", "run.log", "samples.csv.resume"}));
}

} // namespace
