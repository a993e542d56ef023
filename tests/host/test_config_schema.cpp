// SPDX-License-Identifier: MIT
// The config schema (host/config_schema.hpp: config_sections, distribution_kinds, the one list the loader checks keys
// against) against README.md's config reference, both ways: every key the loader accepts is documented there, and
// every documented key is accepted by the loader.
#include "config.hpp"
#include "config_schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Tables = std::map<std::string, std::vector<std::string>>;

std::string readme_text() {
    std::ifstream in(std::string(NHVK_SOURCE_DIR) + "/README.md");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/** The README's config reference: the ```toml block after "## Config reference", and the paragraph after it that
 *  starts with "Distributions:". */
struct Reference {
    std::string block, distributions;
};

Reference reference(const std::string& text) {
    Reference r;
    const std::size_t heading = text.find("\n## Config reference\n");
    if (heading == std::string::npos) return r;
    const std::size_t open = text.find("```toml\n", heading);
    const std::size_t close = open == std::string::npos ? open : text.find("\n```", open + 8);
    if (close == std::string::npos) return r;
    r.block = text.substr(open + 8, close - open - 8);
    const std::size_t dist = text.find("\nDistributions:", close);
    if (dist != std::string::npos) r.distributions = text.substr(dist, text.find("\n\n", dist + 1) - dist);
    return r;
}

/** Tables and keys of the block: `[a.b]` starts table a.b and documents key b of table a (a top-level `[a]`
 *  documents section a of the top level ""); `key = ...` at the start of a line documents a key of the current
 *  table, and `values` gets its example value (the text up to the comment). So does `# key = ...` at the start of a
 *  line: the block runs as written, so a key that is an alternative to another (`times.list` beside `count`) is
 *  shown commented out. */
Tables documented_tables(const std::string& block, std::map<std::string, std::string>* values = nullptr) {
    Tables tables;
    std::string current;
    const std::regex header(R"(^\[\[?([A-Za-z0-9_.]+)\]\]?\s*(#.*)?$)"),
        key(R"(^(?:# )?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([^#]*))");
    std::istringstream in(block);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, header)) {
            current = m[1];
            tables[current];
            const std::size_t dot = current.rfind('.');
            tables[dot == std::string::npos ? "" : current.substr(0, dot)].push_back(
                dot == std::string::npos ? current : current.substr(dot + 1));
        } else if (std::regex_search(line, m, key)) {
            tables[current].push_back(m[1]);
            if (values) {
                std::string v = m[2];
                v.erase(v.find_last_not_of(" \t") + 1);
                (*values)[current + "." + std::string(m[1])] = v;
            }
        }
    }
    return tables;
}

/** Kinds of the "Distributions:" paragraph: `{ dist = "kind", a = …, b = … }` documents keys dist, a, b of kind. */
Tables documented_kinds(const std::string& paragraph) {
    Tables kinds;
    const std::regex table(R"re(\{\s*dist\s*=\s*"(\w+)"([^}]*)\})re"), key(R"((\w+)\s*=)");
    for (std::sregex_iterator it(paragraph.begin(), paragraph.end(), table), end; it != end; ++it) {
        std::vector<std::string>& keys = kinds[(*it)[1]];
        keys.push_back("dist");
        const std::string rest = (*it)[2];
        for (std::sregex_iterator k(rest.begin(), rest.end(), key); k != end; ++k) keys.push_back((*k)[1]);
    }
    return kinds;
}

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

/** The tables keyed by the model, or by a distribution, which the schema does not list. */
const std::set<std::string> model_keyed = {"model.params", "initial.q", "initial.v", "initial.mu"};

std::vector<nhvk::ModelInfo> registry() {
    nhvk::ModelInfo m;
    m.name = "fake_particle";
    m.n = 3;
    m.k = 1;
    m.coords = {"x", "y", "z"};
    m.angles = {false, false, false};
    m.params = {{"m", 1.0, false, nhvk::ParamDomain::positive}};
    return {m};
}

/** The loader's message for `text` ("" when it loads). */
std::string load_error(const std::string& text) {
    try {
        nhvk::parse_config(text, "schema.toml", {}, registry());
    } catch (const nhvk::ConfigError& e) {
        return e.what();
    }
    return "";
}

bool refused_as_unknown(const std::string& message) {
    return message.find("unknown key") != std::string::npos || message.find("unknown section") != std::string::npos;
}

TEST(ConfigSchema, ReadmeHasTheReference) {
    const Reference r = reference(readme_text());
    ASSERT_FALSE(r.block.empty()) << "README.md: no ```toml block after \"## Config reference\"";
    EXPECT_FALSE(r.distributions.empty()) << "README.md: no \"Distributions:\" paragraph after the config block";
    // the parser of this test reads what it should: a known line of each kind
    const Tables t = documented_tables(r.block);
    ASSERT_TRUE(t.count("run"));
    EXPECT_TRUE(as_set(t.at("run")).count("seed"));
    EXPECT_TRUE(as_set(t.at("")).count("run"));
}

TEST(ConfigSchema, EverySectionAndKeyTheLoaderAcceptsIsDocumentedAndNoOther) {
    const Tables doc = documented_tables(reference(readme_text()).block);
    std::set<std::string> schema_names;
    for (const nhvk::ConfigTable& t : nhvk::config_sections()) {
        schema_names.insert(t.name);
        const auto it = doc.find(t.name);
        ASSERT_NE(it, doc.end()) << "section [" << t.name << "] is not in README.md's config reference";
        const std::set<std::string> documented = as_set(it->second), accepted = as_set(t.keys);
        for (const std::string& k : accepted)
            EXPECT_TRUE(documented.count(k)) << "accepted key " << t.name << "." << k << " is not in README.md";
        for (const std::string& k : documented)
            EXPECT_TRUE(accepted.count(k))
                << "README.md documents " << t.name << "." << k << ", which the loader does not accept";
    }
    for (const auto& [name, keys] : doc)
        EXPECT_TRUE(schema_names.count(name) || model_keyed.count(name))
            << "README.md documents a table [" << name << "] that is not in the schema";
}

TEST(ConfigSchema, DistributionKindsAreDocumentedWithTheirKeys) {
    const Reference r = reference(readme_text());
    const Tables doc = documented_kinds(r.distributions);
    EXPECT_EQ(doc.size(), nhvk::distribution_kinds().size());
    std::set<std::string> any;
    for (const nhvk::ConfigTable& kind : nhvk::distribution_kinds()) {
        const auto it = doc.find(kind.name);
        ASSERT_NE(it, doc.end()) << "dist = \"" << kind.name << "\" is not in README.md's Distributions paragraph";
        EXPECT_EQ(as_set(it->second), as_set(kind.keys)) << "keys of dist = \"" << kind.name << "\"";
        any.insert(kind.keys.begin(), kind.keys.end());
    }
    // [initial.mu] in the block is written as the keys of one distribution
    const Tables block = documented_tables(r.block);
    ASSERT_TRUE(block.count("initial.mu"));
    for (const std::string& k : block.at("initial.mu"))
        EXPECT_TRUE(any.count(k)) << "initial.mu." << k << " is not a distribution key";
}

TEST(ConfigSchema, EveryDocumentedKeyIsAcceptedByTheLoader) {
    // Each documented section, and each key of a section with the README's own example value, added to a minimal
    // config: the loader may refuse the value in this context (a `list` without spacing = "list"), never the key.
    std::map<std::string, std::string> values;
    const Tables doc = documented_tables(reference(readme_text()).block, &values);
    const std::map<std::string, std::map<std::string, std::string>> base = {{"model", {{"name", "\"fake_particle\""}}},
                                                                            {"times", {{"t_end", "5.0"}}}};
    int checked = 0;
    for (const auto& [section, keys] : doc) {
        if (model_keyed.count(section)) continue;
        for (const std::string& key : keys) {
            auto tables = base;
            const auto value = values.find(section + "." + key);
            if (section.empty()) tables[key];                            // a section
            else if (value == values.end()) tables[section + "." + key]; // a sub-table: [model.params], [initial.q], …
            else tables[section][key] = value->second;
            std::string text;
            for (const auto& [name, entries] : tables) {
                text += "[" + name + "]\n";
                for (const auto& [k, v] : entries) text += k + " = " + v + "\n";
            }
            EXPECT_FALSE(refused_as_unknown(load_error(text))) << text << "\n→ " << load_error(text);
            ++checked;
        }
    }
    EXPECT_GT(checked, 40);
    // and the check can fail: a key the README does not document is refused as unknown
    EXPECT_TRUE(refused_as_unknown(load_error("[model]\nname = \"fake_particle\"\n[times]\nt_end = 5.0\n"
                                              "[run]\nnot_a_key = 1\n")));
    EXPECT_TRUE(refused_as_unknown(load_error("[model]\nname = \"fake_particle\"\n[times]\nt_end = 5.0\n[runs]\n")));
}

TEST(ConfigSchema, ConfigKeysRefusesATableThatIsNotThere) {
    EXPECT_EQ(nhvk::config_keys(nhvk::config_sections(), "run").front(), "trajectories");
    EXPECT_THROW(nhvk::config_keys(nhvk::config_sections(), "no_such_section"), std::logic_error);
}

} // namespace
