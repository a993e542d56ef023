// SPDX-License-Identifier: MIT
// summary.md quotes the config path as a CommonMark code span that no character of the path can end early.
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

/** The content of the code span that starts at `at` in `line`, as CommonMark reads it: the opening run of n
 *  backticks closes at the next run of exactly n; one space is stripped from each side when both sides have one and
 *  the content is not all spaces. Sets `end` past the closing run; "(unclosed)" when none closes it. */
std::string code_span_at(const std::string& line, std::size_t at, std::size_t& end) {
    std::size_t n = 0;
    while (at + n < line.size() && line[at + n] == '`') ++n;
    for (std::size_t i = at + n; i < line.size();) {
        if (line[i] != '`') {
            ++i;
            continue;
        }
        std::size_t m = 0;
        while (i + m < line.size() && line[i + m] == '`') ++m;
        if (m == n) {
            std::string content = line.substr(at + n, i - at - n);
            if (content.size() >= 2 && content.front() == ' ' && content.back() == ' ' &&
                content.find_first_not_of(' ') != std::string::npos)
                content = content.substr(1, content.size() - 2);
            end = i + m;
            return content;
        }
        i += m;
    }
    end = line.size();
    return "(unclosed)";
}

TEST(SummaryMarkdown, AConfigPathWithBackticksStaysOneCodeSpan) {
    nhvk_test::TempDir tmp;
    const std::string config = nhvk_test::read_text(fs::path(NHVK_SOURCE_DIR) / "configs" / "quickstart.toml");
    for (const std::string& name :
         {std::string("a`b.toml"), std::string("``c``` *d* <b>e<b> [f](g) | x.toml"), std::string("`h` .toml")}) {
        const fs::path path = tmp.path() / name;
        { std::ofstream(path) << config; }
        const fs::path out = tmp.path() / "out";
        const nhvk_test::CliRun r = nhvk_test::run_captured(
            "", NHVK_BINARY, {"run", path.string(), "--trajectories", "20", "--out", out.string(), "-q"},
            tmp.path() / "io");
        ASSERT_EQ(r.rc, 0) << r.err;
        const std::string md = nhvk_test::read_text(out / "summary.md");
        const std::string lead = ", config ";
        const std::size_t at = md.find(lead);
        ASSERT_NE(at, std::string::npos) << md;
        std::size_t end = 0;
        EXPECT_EQ(code_span_at(md, at + lead.size(), end), path.string()) << md.substr(0, 400);
        EXPECT_EQ(md.compare(end, 7, " (hash "), 0) << "the text after the span: " << md.substr(end, 40);
    }
}

} // namespace
