// SPDX-License-Identifier: MIT
// Every ```toml block of README.md is text a user may copy into a config (issue 24 item 6): each is loaded by the
// config loader, and each complete one is run with a few trajectories. A block that is only part of a config says so
// on its first line, `# fragment of configs/NAME.toml`: it is laid over that config (its keys replace the config's)
// and the result must load. A block that neither loads as a config nor is such a fragment fails, with its line in
// README.md and the loader's message.
#include "config.hpp"
#include "nhvk_cli.hpp"
#include "registry.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nhvk_test::read_text;

struct Block {
    int line = 0; ///< 1-based line of the opening ```toml fence
    std::string text;
};

/** The ```toml blocks of `markdown`, skipping the contents of other fenced blocks. */
std::vector<Block> toml_blocks(const std::string& markdown) {
    std::vector<Block> blocks;
    std::istringstream in(markdown);
    std::string line;
    int n = 0;
    bool in_fence = false, in_toml = false;
    const std::regex fence(R"(^\s*```\s*([A-Za-z0-9_+-]*)\s*$)");
    std::smatch m;
    while (std::getline(in, line)) {
        ++n;
        if (std::regex_match(line, m, fence)) {
            if (!in_fence) {
                in_fence = true;
                in_toml = m[1] == "toml";
                if (in_toml) blocks.push_back({n, ""});
            } else if (m[1].length() == 0) {
                in_fence = in_toml = false;
            }
            continue;
        }
        if (in_toml) blocks.back().text += line + "\n";
    }
    return blocks;
}

/** The config a fragment is laid over (`configs/NAME.toml` of its marker line), or "" when `block` is no fragment. */
std::string fragment_base(const std::string& block) {
    static const std::regex marker(R"(^# fragment of (configs/[A-Za-z0-9_]+\.toml)\b.*)");
    std::smatch m;
    const std::string first = block.substr(0, block.find('\n'));
    return std::regex_match(first, m, marker) ? std::string(m[1]) : "";
}

/** `top` with the keys of `over` set into it, tables merged key by key. */
void lay_over(toml::table& top, const toml::table& over) {
    for (const auto& [key, node] : over) {
        toml::table* inner = top[key].as_table();
        if (inner && node.is_table()) lay_over(*inner, *node.as_table());
        else top.insert_or_assign(key, node);
    }
}

/** What is wrong with `block` (line `line` of `source`) as a config; "" when nothing. A complete block is run in
 *  `dir` with 16 trajectories on one thread. */
std::string check_block(const Block& b, const std::string& source, const fs::path& dir) {
    const std::string where = source + ":" + std::to_string(b.line) + ": ";
    const std::string base = fragment_base(b.text);
    std::string text = b.text;
    if (!base.empty()) {
        const fs::path base_path = fs::path(NHVK_SOURCE_DIR) / base;
        if (!fs::is_regular_file(base_path)) return where + "fragment of " + base + ", which does not exist";
        try {
            toml::table merged = toml::parse(read_text(base_path));
            lay_over(merged, toml::parse(b.text));
            std::ostringstream os;
            os << merged;
            text = os.str();
        } catch (const toml::parse_error& e) {
            return where + "fragment of " + base + " is not TOML: " + std::string(e.description());
        }
    }
    try {
        nhvk::parse_config(text, "block", {}, nhvk::model_registry());
    } catch (const nhvk::ConfigError& e) {
        return where +
               (base.empty() ? "a ```toml block that does not load as a config (mark a part of one with a first line "
                               "`# fragment of configs/NAME.toml`): "
                             : "laid over " + base + ", the fragment does not load: ") +
               e.what();
    }
    if (!base.empty()) return "";
    const fs::path file = dir / ("block_" + std::to_string(b.line) + ".toml");
    {
        std::ofstream f(file);
        f << b.text;
    }
    const nhvk_test::CliRun r =
        nhvk_test::run_captured("", NHVK_BINARY,
                                {"run", file.string(), "--trajectories", "16", "--threads", "1", "-q", "--out",
                                 (dir / ("out_" + std::to_string(b.line))).string()},
                                dir / ("io_" + std::to_string(b.line)));
    if (r.rc != 0) return where + "loads, but `nhvk run` exits " + std::to_string(r.rc) + ": " + r.err;
    return "";
}

TEST(ReadmeToml, EveryBlockLoadsAndTheCompleteOnesRun) {
    const std::vector<Block> blocks = toml_blocks(read_text(fs::path(NHVK_SOURCE_DIR) / "README.md"));
    ASSERT_FALSE(blocks.empty()) << "README.md has no ```toml block; the config reference is one";
    nhvk_test::TempDir tmp("nhvk_readme_toml_");
    int complete = 0;
    for (const Block& b : blocks) {
        EXPECT_EQ(check_block(b, "README.md", tmp.path()), "");
        complete += fragment_base(b.text).empty();
    }
    EXPECT_GE(complete, 1) << "the config reference runs as written";
}

// The check itself, on Markdown of known blocks: it finds them (and not a config inside a ```sh block), accepts a
// complete config and a marked fragment, and refuses what the README's config reference once was (a parameter the
// model does not have), an unmarked fragment, and a fragment that does not load over its config.
TEST(ReadmeToml, TheCheckRefusesWhatDoesNotLoad) {
    const std::string md =
        "# t\n"
        "```sh\n[model]\n```\n"
        "```toml\n[model]\nname = \"nh_particle\"\n[times]\nt_end = 0.5\ncount = 3\n```\n"
        "```toml\n# fragment of configs/quickstart.toml: fewer output times\n[times]\ncount = 3\n```\n"
        "```toml\n[model]\nname = \"nh_particle\"\n[model.params]\ng = 9.81\n[times]\nt_end = 1\n```\n"
        "```toml\n[times]\ncount = 3\n```\n"
        "```toml\n# fragment of configs/quickstart.toml\n[times]\ncount = -3\n```\n"
        "```toml\n# fragment of configs/no_such_model.toml\n[times]\ncount = 3\n```\n";
    const std::vector<Block> blocks = toml_blocks(md);
    ASSERT_EQ(blocks.size(), 6u);
    EXPECT_EQ(blocks[0].line, 5);
    EXPECT_EQ(blocks[0].text, "[model]\nname = \"nh_particle\"\n[times]\nt_end = 0.5\ncount = 3\n");
    EXPECT_EQ(fragment_base(blocks[1].text), "configs/quickstart.toml");
    EXPECT_EQ(fragment_base(blocks[2].text), "");
    nhvk_test::TempDir tmp("nhvk_readme_toml_check_");
    EXPECT_EQ(check_block(blocks[0], "t.md", tmp.path()), "");
    EXPECT_TRUE(fs::is_regular_file(tmp.path() / "out_5" / "summary.json")) << "the complete block was run";
    EXPECT_EQ(check_block(blocks[1], "t.md", tmp.path()), "");
    const std::string params = check_block(blocks[2], "t.md", tmp.path());
    EXPECT_NE(params.find("t.md:17: a ```toml block that does not load"), std::string::npos) << params;
    EXPECT_NE(params.find("model.params.g: unknown parameter"), std::string::npos) << params;
    const std::string unmarked = check_block(blocks[3], "t.md", tmp.path());
    EXPECT_NE(unmarked.find("model.name"), std::string::npos) << unmarked;
    const std::string bad = check_block(blocks[4], "t.md", tmp.path());
    EXPECT_NE(bad.find("laid over configs/quickstart.toml, the fragment does not load"), std::string::npos) << bad;
    EXPECT_NE(bad.find("times.count"), std::string::npos) << bad;
    EXPECT_NE(check_block(blocks[5], "t.md", tmp.path()).find("which does not exist"), std::string::npos);
}

} // namespace
