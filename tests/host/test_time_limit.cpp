// SPDX-License-Identifier: MIT
// Issue 44: a batch job ended at its time limit keeps its work. A CPU run with the default chunk (65536, which holds
// the whole run of 12,000 members) is sent SIGTERM once its progress line shows a third done; the resume record must
// then hold at least that third, the stop must wait for no more than the chunk in flight, and the resumed run's
// outputs must equal an uninterrupted run's byte for byte; the same for a sweep. The progress line's `recorded`
// count must be what a resume keeps after kill -9. And the chunk sizer's rules, against their arithmetic.
//
// Timing never decides a verdict here: the test hook NHVK_TEST_CHUNK_PAUSE_MS pauses the CPU backend after each
// chunk, so the run outlasts the test's reaction on any machine, and the bound on the stop is counted in chunks.
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/chunk_sizer.hpp"

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

namespace fs = std::filesystem;
using nhvk_test::read_json;
using nhvk_test::read_text;

struct TempDir : nhvk_test::TempDir {
    TempDir() : nhvk_test::TempDir("nhvk_time_limit_") {}
};

const std::string particle = std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml";
const std::string sweep = std::string(NHVK_SOURCE_DIR) + "/tests/host/data/sweep_product.toml";

using nhvk_test::Child;

/** `nhvk run` as a child process, its stderr in the file `err`, which the test reads while it runs. */
Child start(const std::vector<std::string>& args, const fs::path& err, const std::string& env) {
    Child c;
    c.err_file = err.string();
    c.pid = nhvk_test::spawn(NHVK_BINARY, args, c.err_file, {env});
    return c;
}

/** One progress line's counts. */
struct Line {
    unsigned long long done = 0, total = 0, recorded = 0;
};

/** Every `[nhvk] progress` line of `text`. */
std::vector<Line> progress_lines(const std::string& text) {
    static const std::regex re(R"(\[nhvk\] progress (\d+)/(\d+) \(\s*[0-9.]+%\)  recorded (\d+) )");
    std::vector<Line> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        std::smatch m;
        if (std::regex_search(l, m, re)) v.push_back({std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3])});
    }
    return v;
}

/** Waits (at most 60 s) for a progress line of `c` whose done count (its recorded count, with `recorded`) reaches
 *  `at_least`; that line, or a failure and an empty line when the run ended first. */
Line wait_for_progress(const Child& c, unsigned long long at_least, bool recorded) {
    for (int i = 0; i < 12000; ++i) {
        for (const Line& l : progress_lines(c.err()))
            if ((recorded ? l.recorded : l.done) >= at_least) return l;
        if (c.ended()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ADD_FAILURE() << "no progress line reached " << at_least << (recorded ? " recorded" : " done") << ":\n" << c.err();
    return {};
}

/** What run.log says of a stop by SIGTERM: the chunks that finished after the signal, and the members the record
 *  holds; -1 where the line is missing. */
struct StopLine {
    long long chunks_after = -1, holds = -1;
};
StopLine stop_line(const fs::path& dir) {
    const std::string log = read_text(dir / "run.log");
    static const std::regex re(
        R"(stopped by SIGTERM at trajectory \d+; (\d+) chunks? finished after the signal, the record was written [0-9.]+ s after it; resume record .* holds (\d+) of \d+ trajectories)");
    std::smatch m;
    if (!std::regex_search(log, m, re)) {
        ADD_FAILURE() << "run.log has no stop line:\n" << log;
        return {};
    }
    return {std::stoll(m[1]), std::stoll(m[2])};
}

/** The pause after each chunk: longer than the test takes to see a line and send a signal, on any machine. */
const std::string pause = "NHVK_TEST_CHUNK_PAUSE_MS=500";

/** Runs `args` once uninterrupted into `clean`, and once into `stopped`, sent SIGTERM as soon as its progress line
 *  shows a third of its `total` members done; then checks the record and the bound, resumes, and returns the
 *  resumed run's summary. */
nlohmann::json stop_at_a_third_and_resume(const std::vector<std::string>& args, unsigned long long total,
                                          const fs::path& clean, const fs::path& stopped, const TempDir& tmp) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--out", clean.string(), "-q"});
    const nhvk_test::CliRun c = nhvk_test::run_captured("", NHVK_BINARY, a, tmp.path() / "io");
    EXPECT_EQ(c.rc, 0) << c.err;

    a = args;
    a.insert(a.end(), {"--out", stopped.string(), "--progress-every", "0.1"});
    Child run = start(a, tmp.path() / "stopped.err", pause);
    const Line seen = wait_for_progress(run, (total + 2) / 3, false);
    ::kill(run.pid, SIGTERM);
    run.wait(60);
    EXPECT_EQ(run.rc(), 128 + SIGTERM) << run.err();
    EXPECT_GE(seen.done, total / 3);
    EXPECT_EQ(seen.total, total);
    EXPECT_TRUE(fs::exists(stopped / "resume.nhvk"));
    EXPECT_FALSE(fs::exists(stopped / "summary.json"));

    // The record holds at least the third seen (and not the whole run: the stop came before the end), and the stop
    // waited for the chunk in flight at most: the CPU backend has one slot.
    const StopLine s = stop_line(stopped);
    EXPECT_GE(s.holds, static_cast<long long>(seen.done));
    EXPECT_LT(s.holds, static_cast<long long>(total));
    EXPECT_GE(s.chunks_after, 0);
    EXPECT_LE(s.chunks_after, 1);
    const std::string err = run.err();
    EXPECT_NE(err.find("all of them in the resume record"), std::string::npos) << err;

    a = args;
    a.insert(a.end(), {"--out", stopped.string(), "-q", "--resume"});
    const nhvk_test::CliRun r = nhvk_test::run_captured("", NHVK_BINARY, a, tmp.path() / "io");
    EXPECT_EQ(r.rc, 0) << r.err;
    const nlohmann::json summary = read_json(stopped / "summary.json");
    EXPECT_EQ(summary["job"]["resumed_at"], s.holds);
    EXPECT_EQ(read_text(clean / "stats.csv"), read_text(stopped / "stats.csv"));
    EXPECT_EQ(nhvk_test::run_statistics(clean), nhvk_test::run_statistics(stopped));
    return summary;
}

TEST(TimeLimit, SigtermAfterAThirdKeepsItAndTheResumeEqualsAnUninterruptedRun) {
    TempDir tmp;
    const fs::path clean = tmp.path() / "clean", stopped = tmp.path() / "stopped";
    // the default chunk (65536) and threads; --backend cpu: on a GPU machine `auto` picks CUDA, which runs 12,000
    // members as one launch
    stop_at_a_third_and_resume({"run", particle, "--trajectories", "12000", "--backend", "cpu"}, 12000, clean, stopped,
                               tmp);
    EXPECT_EQ(read_json(clean / "summary.json")["config"]["run"]["chunk"], 65536);
}

TEST(TimeLimit, SigtermAfterAThirdOfASweepKeepsItAndTheResumeEqualsAnUninterruptedSweep) {
    TempDir tmp;
    const fs::path clean = tmp.path() / "clean", stopped = tmp.path() / "stopped";
    // 6 points of 2000 members, the default chunk (the file's 50 set back to 65536)
    const nlohmann::json s = stop_at_a_third_and_resume(
        {"run", sweep, "--trajectories", "2000", "--chunk", "65536", "--backend", "cpu"}, 12000, clean, stopped, tmp);
    EXPECT_EQ(s["sweep"]["points"].size(), 6u);
    for (const char* f : {"sweep.csv", "sweep_points.csv"})
        EXPECT_EQ(read_text(clean / f), read_text(stopped / f)) << f;
}

// What the progress line calls recorded is what a resume keeps when the process dies without a word (kill -9): a
// record every second (--checkpoint-every 1), so with the pause every record is some chunks behind the members done,
// killed once a line shows a sixth recorded (the records come a few chunks apart, and the kill must come before
// the end).
TEST(TimeLimit, TheRecordedCountOfTheProgressLineIsWhatAResumeKeepsAfterKill9) {
    TempDir tmp;
    const fs::path clean = tmp.path() / "clean", d = tmp.path() / "killed";
    const std::vector<std::string> args = {"run", particle, "--trajectories", "12000", "--backend", "cpu"};
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--out", clean.string(), "-q"});
    ASSERT_EQ(nhvk_test::run_captured("", NHVK_BINARY, a, tmp.path() / "io").rc, 0);

    a = args;
    a.insert(a.end(), {"--out", d.string(), "--progress-every", "0.1", "--checkpoint-every", "1"});
    Child run = start(a, tmp.path() / "killed.err", pause);
    const Line seen = wait_for_progress(run, 2000, true);
    ::kill(run.pid, SIGKILL);
    run.wait(60);
    EXPECT_EQ(run.rc(), 128 + SIGKILL);
    const std::vector<Line> lines = progress_lines(run.err());
    ASSERT_FALSE(lines.empty());
    unsigned long long last_recorded = 0;
    int behind = 0;
    for (const Line& l : lines) {
        EXPECT_LE(l.recorded, l.done);
        EXPECT_GE(l.recorded, last_recorded); // never goes back
        last_recorded = l.recorded;
        if (l.recorded < l.done) ++behind;
    }
    EXPECT_GT(behind, 0) << run.err(); // the two counts are told apart
    EXPECT_LT(last_recorded, 12000u);

    a = args;
    a.insert(a.end(), {"--out", d.string(), "-q", "--resume"});
    const nhvk_test::CliRun r = nhvk_test::run_captured("", NHVK_BINARY, a, tmp.path() / "io");
    ASSERT_EQ(r.rc, 0) << r.err;
    // the kill may come after a newer record than the line seen, never before the one the last line shows
    const unsigned long long resumed_at = read_json(d / "summary.json")["job"]["resumed_at"];
    EXPECT_GE(resumed_at, seen.recorded);
    EXPECT_GE(resumed_at, last_recorded);
    EXPECT_EQ(read_text(clean / "stats.csv"), read_text(d / "stats.csv"));
    EXPECT_EQ(nhvk_test::run_statistics(clean), nhvk_test::run_statistics(d));
}

// ---- the chunk sizer (pipeline/chunk_sizer.hpp) ----

TEST(ChunkSizer, StartsAtTheFirstSizeAndNeverPassesTheCapacityOrTheRemainder) {
    const nhvk::ChunkSizer s({0.25, 32, 2}, 1000);
    EXPECT_EQ(s.next(100000), 32);
    EXPECT_EQ(s.next(7), 7);
    EXPECT_EQ(nhvk::ChunkSizer({0.25, 5000, 2}, 1000).next(100000), 1000);
    EXPECT_EQ(nhvk::ChunkSizer({0.25, 1, 50}, 1000).next(100000), 50);      // never below `least`
    EXPECT_EQ(nhvk::ChunkSizer({0.25, 32, 5000}, 1000).next(100000), 1000); // `least` above the capacity
}

TEST(ChunkSizer, GrowsAtMostTwofoldAndShrinksAtOnceToTheTarget) {
    nhvk::ChunkSizer s({0.25, 100, 4}, 1 << 20);
    s.observe(100, 0.001); // 250 times faster than the target: only twice as many
    EXPECT_EQ(s.size(), 200);
    s.observe(200, 0.002);
    EXPECT_EQ(s.size(), 400);
    s.observe(400, 0.2); // 1.25 times faster: the target's size, below twofold
    EXPECT_EQ(s.size(), 500);
    s.observe(500, 0.25);
    EXPECT_EQ(s.size(), 500);
    s.observe(500, 2.0); // 8 times the target: an eighth
    EXPECT_EQ(s.size(), 62);
    s.observe(62, 100.0); // far slower: down to `least`
    EXPECT_EQ(s.size(), 4);
    s.observe(4, 0.0); // no time measured: twofold
    EXPECT_EQ(s.size(), 8);
}

TEST(ChunkSizer, ATargetOfZeroKeepsEveryChunkAtTheFirstSize) {
    nhvk::ChunkSizer s({0.0, 500, 500}, 500);
    s.observe(500, 100.0);
    EXPECT_EQ(s.size(), 500);
    s.observe(500, 1e-9);
    EXPECT_EQ(s.size(), 500);
}

} // namespace
