// SPDX-License-Identifier: MIT
// Config fuzzer: seeded random mutations of configs/*.toml, tests/host/data/*.toml, a config setting every key of the
// schema and hand-made TOML edge cases, some with a random `--set` of a schema key, go through the config loader
// and the run plan, each in a forked child with a time limit. Every input must end in success or a clean
// ConfigError with a message (what `nhvk run` turns into exit 2): no crash, no hang, no other exception, and in an
// AddressSanitizer build no leak (the child ends with _exit, which skips LeakSanitizer's exit check, so it runs one).
// NHVK_FUZZ_SECONDS (default 3), NHVK_FUZZ_SEED (default 1), NHVK_FUZZ_INPUT_LIMIT_S (default 10; generous for
// sanitizer builds). A failing input is written to the test's temporary folder's parent as
// nhvk_fuzz_finding_<n>.toml and printed.
#include "child_outcome.hpp"
#include "config.hpp"
#include "config_schema.hpp"
#include "fuzz_mutations.hpp"
#include "pipeline/run_plan.hpp"
#include "registry.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

namespace {

using nhvk::ModelInfo;

double env_number(const char* name, double fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtod(v, nullptr) : fallback;
}

const char kNulName[] = "[model]\nname = \"nh_\0particle\"\n"; // a NUL inside a string

/** A config that sets every section and key of the schema the shipped configs leave out ([statistics],
 *  [diagnostics], every [divergence] and [run] key, rk4 settings), so that mutations start from each of them. */
const std::string kEverySection = R"([model]
name = "nh_particle"
[model.params]
[initial]
t0 = 0.0
energy = 1.0
[initial.q]
x = 0.0
y = { dist = "uniform", low = -1.0, high = 1.0 }
z = 0.0
[initial.v]
x = { dist = "normal", mean = 0.0, std = 1.0 }
y = 1.0
z = { dist = "fixed", value = 0.5 }
[initial.mu]
dist = "normal"
mean = 0.0
std = 0.1
[integrator]
method = "rk4"
dt = 1e-3
min_step = 1e-12
max_steps = 100000
project = true
precision = "double"
equations = "generated"
rtol = 1e-10
atol = 1e-12
[times]
t_end = 1.0
spacing = "linear"
count = 5
[divergence]
coordinates = ["x", "y"]
weights = { x = 2.0, y = 1.0 }
metric = "kinetic"
onset_threshold = 1e-3
growth_t_max = 0.5
stop_at = 3.0
[divergence.fit]
statistic = "mean"
window = [0.1, 0.5]
exponent = 2.0
exponent_v = 1.5
[divergence.rate]
window = [0.5, 1.0]
statistic = "p75"
[statistics]
population = "survivors"
low_population_fraction = 0.25
replicas = 4
[diagnostics]
balance_tolerance = 1e-6
[run]
trajectories = 10
seed = 3
backend = "cpu"
chunk = 4
threads = 1
out = "fuzz_out"
exact_memory_mb = 16
save_trajectories = 1
save_samples = true
save_members = true
member_metrics = ["d_q", "res_nh"]
members_deflate = 1
[sweep]
combine = "latin_hypercube"
points = 3
[[sweep.axes]]
key = "initial.mu.std"
name = "mu_scale"
range = [0.05, 0.2]
spacing = "log"
[[sweep.axes]]
key = "initial.energy"
range = [1.0, 2.0]
)";

std::vector<std::string> seed_corpus() {
    std::vector<std::string> seeds;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(NHVK_SOURCE_DIR) / "configs")) {
        if (e.path().extension() != ".toml") continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        seeds.push_back(s.str());
    }
    // tests/host/data: the loader tests' good and bad configs
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::path(NHVK_SOURCE_DIR) / "tests" / "host" / "data")) {
        if (e.path().extension() != ".toml") continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        seeds.push_back(s.str());
    }
    seeds.push_back(kEverySection);
    // Hand-made TOML edge cases: empty, comments only, deep nesting, odd numbers and strings, repeated tables,
    // CRLF, a byte order mark, NUL and invalid UTF-8, dotted keys, arrays of tables where tables are expected.
    const std::string minimal = "[model]\nname = \"nh_particle\"\n[times]\nt_end = 1.0\ncount = 3\n";
    seeds.insert(seeds.end(),
                 {"", "# nothing\n", minimal, "\xEF\xBB\xBF" + minimal, "[model]\r\nname = \"nh_particle\"\r\n",
                  std::string(2000, '[') + std::string(2000, ']'),
                  "a = " + std::string(5000, '[') + "1" + std::string(5000, ']') + "\n",
                  "x = {" + std::string(3000, '{') + "\n", minimal + "[model]\nname = \"nh_particle\"\n",
                  minimal + "[run]\ntrajectories = 9223372036854775807\nchunk = -9223372036854775808\n",
                  minimal + "[times]\ncount = 18446744073709551616\n", minimal + "run.seed = 0x7fffffffffffffff\n",
                  minimal + "[integrator]\nrtol = nan\natol = -inf\ndt = 5e-324\n",
                  minimal + "[initial.q]\nx = { dist = \"uniform\", low = inf, high = -inf }\n",
                  minimal + "[[initial.v]]\nx = 1\n", minimal + "model.params = [1, \"a\", { b = 2 }]\n",
                  std::string(kNulName, sizeof kNulName - 1), minimal + "\"\xFF\xFE\" = 1\n",
                  minimal + "[times]\nlist = [1e308, 1e-308, 0.0, -0.0]\n",
                  "[model]\nname = \"" + std::string(100000, 'x') + "\"\n", minimal + "model.name.x.y.z = 1\n",
                  // a model file and an inline model (every key of one), as "Adding a model" has them
                  "[model]\nfile = \"models/nh_particle.toml\"\n[times]\nt_end = 1.0\n",
                  "[model]\nname = \"inline\"\ndescription = \"d\"\ncoordinates = [\"x\", \"y\", \"th\"]\n"
                  "angles = [\"th\"]\nlagrangian = \"0.5*m*(x'^2 + y'^2) + 0.5*th'^2\"\n"
                  "constraints = [\"y' - tan(th)*x'\"]\nforces = [\"0\", \"0\", \"-c*th'\"]\n"
                  "chart = [\"abs(cos(th)) > margin(1e-4, 1e-3)\"]\n"
                  "velocity_chart = [\"x'^2 + y'^2 > vfloor^2\"]\nsource_residual = \"abs(r2)\"\n"
                  "[model.parameters]\nm = { default = 1.0, range = \"> 0\" }\nc = 0.1\n"
                  "[model.definitions]\nr2 = \"x^2 + y^2\"\n[times]\nt_end = 1.0\n"});
    return seeds;
}

const std::vector<std::string> kNumbers = {"0",
                                           "-0",
                                           "1",
                                           "-1",
                                           "2",
                                           "1e308",
                                           "-1e308",
                                           "1e-308",
                                           "5e-324",
                                           "nan",
                                           "inf",
                                           "-inf",
                                           "+inf",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "9223372036854775808",
                                           "4294967296",
                                           "2147483648",
                                           "0x7fffffff",
                                           "0b1",
                                           "1_000",
                                           "1.5",
                                           "1e19",
                                           "1e400",
                                           "3.0e-5"};
const std::vector<std::string> kValues = {"\"\"",
                                          "\"x\"",
                                          "true",
                                          "false",
                                          "[]",
                                          "[1, 2]",
                                          "{}",
                                          "{ dist = \"normal\" }",
                                          "1979-05-27T07:32:00Z",
                                          "'''a\nb'''",
                                          "\"\\u0000\"",
                                          "[[1], [2]]"};
const std::vector<std::string> kTokens = {"[",
                                          "]",
                                          "[[",
                                          "]]",
                                          "=",
                                          "\"",
                                          "'",
                                          ".",
                                          ",",
                                          "{",
                                          "}",
                                          "\n",
                                          "#",
                                          "\\",
                                          "[run]",
                                          "[times]",
                                          "[integrator]",
                                          "[model.params]",
                                          "[initial.q]",
                                          "dist",
                                          "spacing",
                                          "count",
                                          "t_end",
                                          "trajectories",
                                          "chunk",
                                          "method"};

/** kTokens, then every section header, key and choice of the schema (config_schema.hpp): a section or key added
 *  to the loader is fuzzed without a change here. */
const std::vector<std::string>& tokens() {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> t = kTokens;
        for (const nhvk::ConfigTable& table : nhvk::config_sections()) {
            if (!table.name.empty()) t.push_back("[" + table.name + "]");
            for (const std::string& k : table.keys) t.push_back(k + " = ");
        }
        for (const nhvk::ConfigTable& kind : nhvk::distribution_kinds()) t.push_back("\"" + kind.name + "\"");
        for (const char* choice : {"\"kinetic\"", "\"euclidean\"", "\"alive\"", "\"survivors\"", "\"float\"", "\"ad\"",
                                   "\"log\"", "\"list\"", "\"rk4\"", "\"cuda\"", "\"auto\""})
            t.push_back(choice);
        return t;
    }();
    return all;
}

/** One random edit of `s`; `seeds` supplies lines to splice in. */
void mutate_once(std::string& s, std::mt19937_64& rng, const std::vector<std::string>& seeds) {
    auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
    auto line_of = [&](const std::string& t) {
        std::vector<std::string> lines;
        std::istringstream in(t);
        for (std::string l; std::getline(in, l);) lines.push_back(l);
        return lines;
    };
    switch (rng() % 10) {
    case 0: // flip, insert or delete a byte
        if (!s.empty() && rng() % 2) s[pick(s.size())] = static_cast<char>(rng());
        else s.insert(pick(s.size() + 1), 1, static_cast<char>(rng()));
        break;
    case 1: // delete or duplicate a range
        if (!s.empty()) {
            const std::size_t a = pick(s.size()), n = 1 + pick(std::min<std::size_t>(64, s.size() - a));
            if (rng() % 2) s.erase(a, n);
            else s.insert(pick(s.size() + 1), s.substr(a, n));
        }
        break;
    case 2:
    case 3: // replace a number (a run of digits, signs, dots, exponents) by an interesting one
        nhvk_test::replace_a_number(s, rng, kNumbers);
        break;
    case 4: { // replace the value of a `key = value` line
        const std::size_t eq = s.find(" = ", pick(s.size()));
        if (eq == std::string::npos) break;
        const std::size_t end = s.find('\n', eq);
        s.replace(eq + 3, (end == std::string::npos ? s.size() : end) - eq - 3,
                  rng() % 2 ? kValues[pick(kValues.size())] : kNumbers[pick(kNumbers.size())]);
        break;
    }
    case 5: // insert a TOML token
        s.insert(pick(s.size() + 1), tokens()[pick(tokens().size())]);
        break;
    case 6:
    case 7: { // splice a line of any seed (keys of other models and tables) into a random line position
        const auto from = line_of(seeds[pick(seeds.size())]);
        if (from.empty()) break;
        auto lines = line_of(s);
        lines.insert(lines.begin() + static_cast<long>(pick(lines.size() + 1)), from[pick(from.size())]);
        s.clear();
        for (const auto& l : lines) s += l + "\n";
        break;
    }
    case 8: { // delete or swap lines
        auto lines = line_of(s);
        if (lines.size() < 2) break;
        const std::size_t i = pick(lines.size()), j = pick(lines.size());
        if (rng() % 2) lines.erase(lines.begin() + static_cast<long>(i));
        else std::swap(lines[i], lines[j]);
        s.clear();
        for (const auto& l : lines) s += l + "\n";
        break;
    }
    default: { // the model name of another config (parameters and coordinates then mismatch)
        const std::size_t at = s.find("name = \"");
        static const std::vector<ModelInfo> reg = nhvk::model_registry();
        if (at == std::string::npos || reg.empty()) break;
        const std::size_t end = s.find('"', at + 8);
        if (end != std::string::npos) s.replace(at + 8, end - at - 8, reg[pick(reg.size())].name);
        break;
    }
    }
}

using nhvk_test::ChildOutcome;
using Outcome = ChildOutcome;

/** Run `load` in a child with `limit_s` seconds of CPU and wall time (child_outcome.hpp), a ConfigError the
 *  expected exception. */
Outcome run_child(const std::function<void()>& load, unsigned limit_s) {
    return nhvk_test::run_in_child<nhvk::ConfigError>(load, limit_s);
}

/** Load `text` and build its plan, as `nhvk run` does before any work, in a child (see run_child). */
Outcome load_in_child(const std::string& text, const std::vector<std::string>& sets,
                      const std::vector<ModelInfo>& registry, unsigned limit_s) {
    return run_child(
        [&] {
            const nhvk::RunConfig cfg = nhvk::parse_config(text, "fuzz.toml", sets, registry);
            const long long capacity = std::max<long long>(1, std::min<long long>(cfg.run.chunk, 1024));
            (void)nhvk::make_run_plan(cfg, capacity);
            (void)cfg.resolved_json().dump();
        },
        limit_s);
}

std::string describe(int status) { return nhvk_test::describe(ChildOutcome{status, {}}); }

TEST(ConfigFuzz, MutatedConfigsLoadOrFailCleanly) {
    const double seconds = env_number("NHVK_FUZZ_SECONDS", 3.0);
    const auto seed = static_cast<std::uint64_t>(env_number("NHVK_FUZZ_SEED", 1.0));
    const auto limit_s = static_cast<unsigned>(std::max(1.0, env_number("NHVK_FUZZ_INPUT_LIMIT_S", 10.0)));
    const std::vector<std::string> seeds = seed_corpus();
    ASSERT_GE(seeds.size(), 30u) << "configs/ or tests/host/data/ not found under " << NHVK_SOURCE_DIR;
    const std::vector<ModelInfo> registry = nhvk::model_registry();
    std::mt19937_64 rng(seed);
    const auto t0 = std::chrono::steady_clock::now();
    long long inputs = 0, loaded = 0, refused = 0, findings = 0;
    // NOTE: at least the seeds and 200 mutated inputs whatever the machine's speed (on a slow one the time alone may
    // end before any mutation, and the assertions below would fail), then until `seconds` have passed.
    const long long min_inputs = static_cast<long long>(seeds.size()) + 200;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds ||
           inputs < min_inputs) {
        std::string text = seeds[rng() % seeds.size()];
        // The first pass feeds every seed unchanged; then mostly one edit, a quarter of the time 2 to 8 stacked.
        if (inputs >= static_cast<long long>(seeds.size()))
            for (int m = rng() % 4 == 0 ? 2 + static_cast<int>(rng() % 7) : 1; m > 0; --m)
                mutate_once(text, rng, seeds);
        else text = seeds[static_cast<std::size_t>(inputs)];
        // A quarter of the mutated inputs also get a `--set` of a random schema key, its value possibly edited too.
        std::vector<std::string> sets;
        if (inputs >= static_cast<long long>(seeds.size()) && rng() % 4 == 0) {
            const auto& sections = nhvk::config_sections();
            const nhvk::ConfigTable& t = sections[1 + rng() % (sections.size() - 1)];
            std::string value = rng() % 2 ? kValues[rng() % kValues.size()] : kNumbers[rng() % kNumbers.size()];
            if (rng() % 2) mutate_once(value, rng, seeds);
            sets.push_back(t.name + "." + t.keys[rng() % t.keys.size()] + "=" + value);
        }
        const Outcome o = load_in_child(text, sets, registry, limit_s);
        ++inputs;
        const bool ok = WIFEXITED(o.status) && (WEXITSTATUS(o.status) == 0 || WEXITSTATUS(o.status) == 2);
        if (std::getenv("NHVK_FUZZ_VERBOSE"))
            std::fprintf(stderr, "%s | %s\n", describe(o.status).c_str(), o.message.c_str());
        if (ok) {
            (WEXITSTATUS(o.status) == 0 ? loaded : refused) += 1;
            continue;
        }
        const auto file = std::filesystem::temp_directory_path() /
                          ("nhvk_fuzz_finding_" + std::to_string(seed) + "_" + std::to_string(inputs) + ".toml");
        std::ofstream(file, std::ios::binary) << text;
        for (const std::string& set : sets) ADD_FAILURE() << "  with --set " << set;
        ADD_FAILURE() << describe(o.status) << " " << o.message << "\n  input (input " << inputs << ", seed " << seed
                      << ") saved as " << file.string();
        if (++findings >= 5) break;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "config fuzz: %lld inputs in %.1f s (%.0f/s), %lld loaded, %lld refused with a ConfigError, seed %llu\n",
        inputs, elapsed, static_cast<double>(inputs) / elapsed, loaded, refused, static_cast<unsigned long long>(seed));
    // Both outcomes must occur, or the mutator is not reaching the loader's checks (or breaks every input).
    EXPECT_GT(loaded, 0);
    EXPECT_GT(refused, 0);
}

// The fuzzer reaches every section and key of the schema: each is in the seeds (as a header or `key =`) and in the
// tokens, and the seed that sets them all loads (so its mutations get past the syntax to the checks of each key).
TEST(ConfigFuzz, SeedsAndTokensCoverEverySectionAndKey) {
    const std::vector<std::string> seeds = seed_corpus();
    const auto in_seeds = [&](const std::string& text) {
        return std::any_of(seeds.begin(), seeds.end(),
                           [&](const std::string& s) { return s.find(text) != std::string::npos; });
    };
    const auto in_tokens = [&](const std::string& text) {
        return std::find(tokens().begin(), tokens().end(), text) != tokens().end();
    };
    for (const nhvk::ConfigTable& table : nhvk::config_sections()) {
        if (!table.name.empty()) {
            EXPECT_TRUE(in_seeds("\n[" + table.name + "]\n") || in_seeds("\n[[" + table.name + "]]\n"))
                << "no seed has the section [" << table.name << "]";
            EXPECT_TRUE(in_tokens("[" + table.name + "]")) << table.name;
        }
        if (table.name.empty()) continue;
        for (const std::string& k : table.keys) {
            EXPECT_TRUE(in_seeds("\n" + k + " = ") || in_seeds("[" + table.name + "." + k + "]"))
                << "no seed sets " << table.name << "." << k;
            EXPECT_TRUE(in_tokens(k + " = ")) << k;
        }
    }
    EXPECT_NO_THROW((void)nhvk::parse_config(kEverySection, "every_section.toml", {}, nhvk::model_registry()));
}

#ifdef NHVK_CHILD_LEAK_CHECK
int* volatile g_sink = nullptr;
__attribute__((noinline)) void lose_an_allocation() {
    g_sink = new int[16];
    g_sink = nullptr;
}
#endif

// The child's outcome codes the fuzzer relies on: a lost allocation must count as a finding where LeakSanitizer
// runs (before the check in run_child, the child's _exit skipped it and a leaking loader passed).
TEST(ConfigFuzz, ChildOutcomesIncludeLeaks) {
    EXPECT_EQ(run_child([] {}, 10).status, 0);
    const Outcome refused = run_child([] { throw nhvk::ConfigError("fuzz.toml:1:1: x: expected y"); }, 10);
    EXPECT_TRUE(WIFEXITED(refused.status) && WEXITSTATUS(refused.status) == 2) << describe(refused.status);
    EXPECT_EQ(refused.message, "fuzz.toml:1:1: x: expected y");
#ifdef NHVK_CHILD_LEAK_CHECK
    // The child prints LeakSanitizer's report of this deliberate leak on stderr; the test passes when it does.
    const Outcome leaked = run_child(lose_an_allocation, 10);
    EXPECT_TRUE(WIFEXITED(leaked.status) && WEXITSTATUS(leaked.status) == 6) << describe(leaked.status);
#else
    GTEST_SKIP() << "the leak outcome needs an AddressSanitizer build (NHVK_SANITIZE=ON)";
#endif
}

} // namespace
