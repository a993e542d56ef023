// SPDX-License-Identifier: MIT
// Limits on what nhvk reads and echoes (host/input_limits.hpp): every parsed input refuses nesting deeper than
// max_nesting_depth with a message naming the file (a depth fuzz over TOML and JSON, each input in a forked child,
// so a stack overflow is a finding and not the end of the test program), and error messages stay short whatever the
// size of the text they repeat.
#include "child_outcome.hpp"
#include "config.hpp"
#include "input_limits.hpp"
#include "nhvk_cli.hpp"
#include "pipeline/partial_state.hpp"
#include "registry.hpp"
#include "report/report.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nhvk_test::read_text;

const std::string kMinimal = "[model]\nname = \"nh_particle\"\n[times]\nt_end = 1.0\ncount = 3\n";

std::string repeat(const std::string& s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

/** `n` parts joined by dots: a.a.a… */
std::string dotted(std::size_t n) {
    std::string s = "a";
    for (std::size_t i = 1; i < n; ++i) s += ".a";
    return s;
}

using nhvk_test::ChildOutcome;

template <class Expected> ChildOutcome in_child(const std::function<void()>& body) {
    return nhvk_test::run_in_child<Expected>(body, 60);
}

std::string outcome_text(const ChildOutcome& o) { return nhvk_test::describe(o) + ": " + o.message.substr(0, 300); }

// ---------------------------------------------------------------------------------------------------------------
// The nesting scanner, against depths counted by hand

TEST(TomlNesting, CountsHeaderPartsDottedKeysArraysAndInlineTables) {
    using nhvk::toml_nesting_excess;
    EXPECT_FALSE(toml_nesting_excess("[" + dotted(64) + "]\n"));
    EXPECT_TRUE(toml_nesting_excess("[" + dotted(65) + "]\n"));
    EXPECT_FALSE(toml_nesting_excess("[[" + dotted(64) + "]]\n"));
    EXPECT_TRUE(toml_nesting_excess("[[" + dotted(65) + "]]\n"));
    EXPECT_FALSE(toml_nesting_excess(dotted(64) + " = 1\n"));
    EXPECT_TRUE(toml_nesting_excess(dotted(65) + " = 1\n"));
    // a key below a header is as deep as both together
    EXPECT_FALSE(toml_nesting_excess("[" + dotted(32) + "]\n" + dotted(32) + " = 1\n"));
    EXPECT_TRUE(toml_nesting_excess("[" + dotted(32) + "]\n" + dotted(33) + " = 1\n"));
    // x = [[…[1]…]]: x at depth 1, each array one more
    EXPECT_FALSE(toml_nesting_excess("x = " + repeat("[", 63) + "1" + repeat("]", 63) + "\n"));
    EXPECT_TRUE(toml_nesting_excess("x = " + repeat("[", 64) + "1" + repeat("]", 64) + "\n"));
    // x = {a = {a = … {a = 1}}}: x at 1, each inline table's key one more
    EXPECT_FALSE(toml_nesting_excess("x = " + repeat("{a = ", 63) + "1" + repeat("}", 63) + "\n"));
    EXPECT_TRUE(toml_nesting_excess("x = " + repeat("{a = ", 64) + "1" + repeat("}", 64) + "\n"));
    // dotted keys inside inline tables count their parts
    EXPECT_TRUE(toml_nesting_excess("x = {" + dotted(64) + " = 1}\n"));
    EXPECT_FALSE(toml_nesting_excess("x = {" + dotted(63) + " = 1}\n"));
}

TEST(TomlNesting, IgnoresDotsAndBracketsOutsideKeysAndNestingThatIsClosed) {
    using nhvk::toml_nesting_excess;
    std::string floats = "list = [";
    for (int i = 0; i < 5000; ++i) floats += (i ? ", " : "") + std::to_string(i) + ".5";
    EXPECT_FALSE(toml_nesting_excess(kMinimal + floats + "]\n")) << "dots of numbers are no key parts";
    EXPECT_FALSE(toml_nesting_excess("s = \"" + repeat("[{.", 1000) + "\"\n"));
    EXPECT_FALSE(toml_nesting_excess("s = '" + repeat("[{.", 1000) + "'\n"));
    EXPECT_FALSE(toml_nesting_excess("s = \"\"\"\n" + repeat("[{.\\\"\n", 1000) + "\"\"\"\n"));
    EXPECT_FALSE(toml_nesting_excess("s = '''\n" + repeat("[{.\n", 1000) + "'''\n"));
    EXPECT_FALSE(toml_nesting_excess("# " + repeat("[{.", 1000) + "\n" + kMinimal));
    EXPECT_FALSE(toml_nesting_excess("\"" + repeat(".", 1000) + "\" = 1\n")) << "a quoted key is one part";
    EXPECT_FALSE(toml_nesting_excess(repeat("[a.b]\nx = [[1], [2], {c = 3}]\n", 1000))) << "siblings, not nesting";
    EXPECT_FALSE(toml_nesting_excess(repeat("x = [\n", 60) + repeat("]\n", 60)));
    // every shipped config
    for (const auto& e : fs::directory_iterator(fs::path(NHVK_SOURCE_DIR) / "configs"))
        if (e.path().extension() == ".toml") EXPECT_FALSE(toml_nesting_excess(read_text(e.path()))) << e.path();
}

TEST(TomlNesting, NamesTheLine) {
    const auto deep = nhvk::toml_nesting_excess(kMinimal + "# [[[\ns = \"\"\"\n\n\"\"\"\n[" + dotted(100) + "]\n");
    ASSERT_TRUE(deep);
    EXPECT_EQ(deep->line, 10u);
    EXPECT_EQ(deep->depth, 65);
}

// ---------------------------------------------------------------------------------------------------------------
// The depth fuzz: random nesting of every kind the parsers read, at random depths up to 100,000

/** One nested TOML construct `depth` levels deep (by the count of TomlNesting above), of a random kind. */
std::string nested_toml(std::mt19937_64& rng, std::size_t depth) {
    switch (rng() % 6) {
    case 0:
        return "[" + dotted(depth) + "]\nx = 1\n";
    case 1:
        return dotted(depth) + " = 1\n";
    case 2:
        return "x = " + repeat("[", depth) + "1" + repeat("]", depth) + "\n";
    case 3:
        return "x = " + repeat("{a = ", depth) + "1" + repeat("}", depth) + "\n";
    case 4: { // arrays and inline tables mixed, left open half of the time
        std::string s = "x = ", close;
        for (std::size_t i = 0; i < depth; ++i)
            if (rng() % 2) s += "[", close = "]" + close;
            else s += "{b.c = ", close = "}" + close;
        return s + "1" + (rng() % 2 ? close : std::string()) + "\n";
    }
    default:
        return "[[" + dotted(depth) + "]]\n";
    }
}

TEST(DepthFuzz, DeepTomlIsRefusedByTheConfigLoaderNeverCrashes) {
    const std::vector<nhvk::ModelInfo> registry = nhvk::model_registry();
    std::mt19937_64 rng(25);
    const std::vector<std::size_t> depths = {1, 2, 63, 64, 65, 66, 200, 257, 1000, 30000, 40000, 100000};
    int refused_deep = 0;
    for (int i = 0; i < 48; ++i) {
        const std::size_t depth = i < 12 ? depths[static_cast<std::size_t>(i)] : 1 + rng() % 100000;
        const std::string piece = nested_toml(rng, depth);
        const bool as_override = rng() % 4 == 0;
        const std::string text = as_override ? kMinimal : kMinimal + piece;
        std::vector<std::string> sets;
        if (as_override) sets.push_back("model.params.x=" + piece.substr(piece.find('=') + 1));
        const ChildOutcome o =
            in_child<nhvk::ConfigError>([&] { (void)nhvk::parse_config(text, "deep.toml", sets, registry); });
        ASSERT_TRUE(o.clean()) << "depth " << depth << (as_override ? " (--set)" : "") << ": " << outcome_text(o)
                               << "\n  input starts: " << piece.substr(0, 120);
        if (depth > 200) {
            EXPECT_TRUE(o.refused()) << "depth " << depth << ": " << outcome_text(o);
            if (o.message.find("nested too deep") != std::string::npos) ++refused_deep;
        }
        EXPECT_LT(o.message.size(), 1000u) << o.message.substr(0, 300);
    }
    EXPECT_GT(refused_deep, 10) << "the depth limit, not another error, should refuse most deep inputs";
}

/** A summary.json and stats.csv of a real run (small), made once. */
class RunOutputs : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new nhvk_test::TempDir("nhvk_limits_");
        const nhvk_test::CliRun r =
            nhvk_test::run_captured("", NHVK_BINARY,
                                    {"run", std::string(NHVK_SOURCE_DIR) + "/configs/quickstart.toml", "--trajectories",
                                     "20", "--out", dir_->str("run"), "-q"},
                                    dir_->path() / "io");
        ASSERT_EQ(r.rc, 0) << r.err;
        summary_ = new std::string(read_text(dir_->path() / "run" / "summary.json"));
        stats_ = new std::string(read_text(dir_->path() / "run" / "stats.csv"));
    }
    static void TearDownTestSuite() {
        delete summary_;
        delete stats_;
        delete dir_;
    }
    /** The run's summary.json with `value` (JSON text) at config.model.params.deep. */
    static std::string summary_with(const std::string& value) {
        nlohmann::json j = nlohmann::json::parse(*summary_);
        j["config"]["model"]["params"]["deep"] = 0;
        const std::string text = j.dump();
        const std::string slot = "\"deep\":0";
        const std::size_t at = text.find(slot);
        return text.substr(0, at) + "\"deep\":" + value + text.substr(at + slot.size());
    }
    static nhvk_test::TempDir* dir_;
    static std::string* summary_;
    static std::string* stats_;
};
nhvk_test::TempDir* RunOutputs::dir_ = nullptr;
std::string* RunOutputs::summary_ = nullptr;
std::string* RunOutputs::stats_ = nullptr;

TEST_F(RunOutputs, DeepJsonIsRefusedByTheReportNeverCrashes) {
    std::mt19937_64 rng(9);
    const std::vector<std::size_t> depths = {1, 50, 58, 59, 60, 64, 65, 1000, 50000, 200000};
    for (int i = 0; i < 24; ++i) {
        const std::size_t depth = i < 10 ? depths[static_cast<std::size_t>(i)] : 1 + rng() % 200000;
        std::string value, close;
        for (std::size_t k = 0; k < depth; ++k)
            if (rng() % 2) value += "[", close = "]" + close;
            else value += "{\"a\":", close = "}" + close;
        value += "1" + close;
        const std::string summary = summary_with(value);
        const ChildOutcome o = in_child<nhvk::ReportInputError>(
            [&] { (void)nhvk::render_report(summary, *stats_, "summary.json", "stats.csv"); });
        ASSERT_TRUE(o.clean()) << "depth " << depth << ": " << outcome_text(o);
        // the value sits 4 levels down (root, config, model, params)
        if (depth + 4 > static_cast<std::size_t>(nhvk::max_nesting_depth)) {
            EXPECT_TRUE(o.refused()) << "depth " << depth << ": " << outcome_text(o);
            EXPECT_NE(o.message.find("summary.json: objects and arrays nested deeper than"), std::string::npos)
                << o.message;
        } else {
            EXPECT_EQ(WEXITSTATUS(o.status), 0) << "depth " << depth << ": " << outcome_text(o);
        }
    }
}

TEST_F(RunOutputs, ReportOfADeepSummaryExitsTwoNamingTheFile) {
    const fs::path d = dir_->path() / "deep";
    fs::create_directories(d);
    std::ofstream(d / "summary.json") << summary_with(repeat("{\"a\":", 50000) + "1" + repeat("}", 50000));
    std::ofstream(d / "stats.csv") << *stats_;
    const nhvk_test::CliRun r = nhvk_test::run_captured("", NHVK_BINARY, {"report", d.string()}, dir_->path() / "io2");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find((d / "summary.json").string() + ": objects and arrays nested deeper than 64"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(d / "report.html"));
}

TEST(DepthLimits, RunOfADeepTableHeaderExitsTwoNamingFileAndLine) {
    nhvk_test::TempDir tmp;
    const fs::path cfg = tmp.path() / "deep.toml";
    std::ofstream(cfg) << kMinimal << "[" << dotted(40000) << "]\nx = 1\n";
    const nhvk_test::CliRun r = nhvk_test::run_captured(
        "", NHVK_BINARY, {"run", cfg.string(), "--out", tmp.str("out"), "--trajectories", "2"}, tmp.path() / "io");
    EXPECT_EQ(r.rc, 2) << r.err.substr(0, 500);
    EXPECT_NE(r.err.find(cfg.string() + ":6: nested too deep: expected at most 64 levels"), std::string::npos)
        << r.err.substr(0, 500);
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

/** Runs the quickstart's shard `shard` of `trajectories` into tmp/s0, lets `edit` change its partial.nhvk, then
 *  merges that folder alone into tmp/m. */
nhvk_test::CliRun merge_one_shard(const nhvk_test::TempDir& tmp, const std::string& trajectories,
                                  const std::string& shard, const std::function<void(const fs::path&)>& edit) {
    const nhvk_test::CliRun run =
        nhvk_test::run_captured("", NHVK_BINARY,
                                {"run", std::string(NHVK_SOURCE_DIR) + "/configs/quickstart.toml", "--trajectories",
                                 trajectories, "--shard", shard, "--out", tmp.str("s0"), "-q"},
                                tmp.path() / "io");
    EXPECT_EQ(run.rc, 0) << run.err;
    edit(tmp.path() / "s0" / "partial.nhvk");
    return nhvk_test::run_captured("", NHVK_BINARY, {"merge", tmp.str("s0"), "--out", tmp.str("m")},
                                   tmp.path() / "io2");
}

TEST(DepthLimits, MergeOfAPartWhoseKeptConfigIsDeepExitsTwo) {
    // The config text a partial state keeps is parsed again by merge: a forged one (its checksum made right) is
    // refused like a config file.
    nhvk_test::TempDir tmp;
    const nhvk_test::CliRun merge = merge_one_shard(tmp, "4", "0/1", [](const fs::path& state) {
        nhvk::PartialState s = nhvk::read_state_file(state);
        s.source.text += "\n[" + dotted(40000) + "]\n"; // a header toml++ itself recurses into
        nhvk::write_state_file(state, s);
    });
    EXPECT_EQ(merge.rc, 2) << merge.err.substr(0, 500);
    EXPECT_NE(merge.err.find("nested too deep"), std::string::npos) << merge.err.substr(0, 500);
    EXPECT_FALSE(fs::exists(tmp.path() / "m"));
}

// ---------------------------------------------------------------------------------------------------------------
// Bounded messages

TEST(Clip, KeepsShortTextAndCutsLongTextOnACharacterBoundary) {
    EXPECT_EQ(nhvk::clip("integrator.rtol"), "integrator.rtol");
    const std::string long_text(10'000'000, 'k');
    const std::string c = nhvk::clip(long_text);
    EXPECT_LT(c.size(), nhvk::max_echo_bytes + 40);
    EXPECT_EQ(c.substr(0, 10), "kkkkkkkkkk");
    EXPECT_NE(c.find("\u2026 (" + std::to_string(10'000'000 - nhvk::max_echo_bytes) + " more bytes)"),
              std::string::npos)
        << c;
    // two-byte characters from an odd offset: the cut must fall between characters
    const std::string accents = "x" + repeat("\u00e9", 1000);
    const std::string a = nhvk::clip(accents, 100);
    const std::string kept = a.substr(0, a.find("\u2026"));
    EXPECT_EQ(kept.size() % 2, 1u) << "a two-byte character was cut: " << kept.size() << " bytes kept";
    const std::string m = nhvk::clip_message("head " + long_text + " expected a number");
    EXPECT_LE(m.size(), nhvk::max_message_bytes + 60);
    EXPECT_EQ(m.substr(0, 5), "head ");
    EXPECT_EQ(m.substr(m.size() - 17), "expected a number");
}

TEST(BoundedMessages, AHugeConfigKeyOrOverrideIsEchoedCut) {
    const std::vector<nhvk::ModelInfo> registry = nhvk::model_registry();
    const std::string key(10'000'000, 'k');
    const auto message_of = [&](const std::string& text, const std::vector<std::string>& sets) {
        try {
            (void)nhvk::parse_config(text, "huge.toml", sets, registry);
        } catch (const nhvk::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("(loaded)");
    };
    for (const std::string& m :
         {message_of(kMinimal + "[run]\n" + key + " = 1\n", {}), message_of(kMinimal + "[" + key + "]\n", {}),
          message_of("[model]\nname = \"" + key + "\"\n[times]\nt_end = 1.0\n", {}),
          message_of(kMinimal, {"run." + key + "=1"}), message_of(kMinimal, {key}),
          message_of(kMinimal, {"run.out=" + key + " x"})}) {
        EXPECT_LT(m.size(), 1200u) << m.substr(0, 400);
        EXPECT_NE(m.find("\u2026"), std::string::npos) << m.substr(0, 400);
    }
}

TEST_F(RunOutputs, AHugeBadStatsLineIsEchoedCut) {
    const std::string bad(30'000'000, '#');
    const std::size_t row = stats_->find('\n') + 1, row_end = stats_->find('\n', row);
    /** stats.csv with field `k` of its first row replaced by `bad` */
    const auto with_field = [&](std::size_t k) {
        std::size_t a = row;
        for (std::size_t i = 0; i < k; ++i) a = stats_->find(',', a) + 1;
        const std::size_t b = std::min(stats_->find(',', a), row_end);
        return stats_->substr(0, a) + bad + stats_->substr(b);
    };
    // the header; the metric name (field 2); a number (field 3); a time (field 1)
    for (const std::string& stats : {bad + "\n" + stats_->substr(row), with_field(2), with_field(3), with_field(1)}) {
        try {
            (void)nhvk::render_report(*summary_, stats, "summary.json", "stats.csv");
            ADD_FAILURE() << "a bad stats.csv was accepted";
        } catch (const nhvk::ReportInputError& e) {
            const std::string m = e.what();
            EXPECT_LT(m.size(), 1200u) << m.substr(0, 400);
            EXPECT_EQ(m.rfind("stats.csv:", 0), 0u) << m.substr(0, 400);
        }
    }
}

TEST(BoundedMessages, MergeOfOneShardOfAMillionPrintsACount) {
    nhvk_test::TempDir tmp;
    const nhvk_test::CliRun merge = merge_one_shard(tmp, "2", "0/1000000", [](const fs::path&) {});
    EXPECT_EQ(merge.rc, 2);
    EXPECT_LT(merge.err.size(), 400u) << merge.err.substr(0, 400);
    EXPECT_NE(merge.err.find("incomplete set: shards 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 999989 more of 1000000 missing"),
              std::string::npos)
        << merge.err.substr(0, 400);
    EXPECT_FALSE(fs::exists(tmp.path() / "m"));
}

TEST(BoundedMessages, AHugeCommandLineArgumentIsEchoedCut) {
    nhvk_test::TempDir tmp;
    const std::string arg(100'000, 'x'); // below the kernel's 128 KiB limit on one argument
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"run", arg},
          {"run", std::string(NHVK_SOURCE_DIR) + "/configs/quickstart.toml", "--threads", arg, "--out", tmp.str("o")},
          {"run", std::string(NHVK_SOURCE_DIR) + "/configs/quickstart.toml", "--set", "run." + arg + "=1", "--out",
           tmp.str("o")},
          {"merge", arg, "--out", tmp.str("m")},
          {"report", arg}}) {
        const nhvk_test::CliRun r = nhvk_test::run_captured("", NHVK_BINARY, args, tmp.path() / "io");
        EXPECT_EQ(r.rc, 2) << args[0] << ": " << r.err.substr(0, 300);
        EXPECT_LT(r.err.size(), nhvk::max_message_bytes + 200) << args[0] << ": " << r.err.substr(0, 300);
    }
}

} // namespace
