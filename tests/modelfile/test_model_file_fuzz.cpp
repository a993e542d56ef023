// SPDX-License-Identifier: MIT
// The config fuzzer (tests/host/test_config_fuzz.cpp) extended to model files (issue 38): seeded random mutations of
// models/*.toml and hand-made model files (the issue's injection payloads, control characters, deep and long
// expressions, numbers at a double's edges) go through the model-file loader and, when one loads, the emitters of
// its C++ and CUDA units, each input in a forked child with a time limit. The mutations edit the expressions (tokens,
// nesting, repeated terms), replace the value of every string key of a model (and the file's path and stem, which
// reach the emitted source too) with payloads, and edit the TOML bytes. Every input must end in a loaded and emitted
// model or a std::runtime_error with a message: no crash, no hang, no other exception, and in an AddressSanitizer
// build no leak. The emitted units must hold no control character but the line feed: user text reaches them only as
// an identifier or an escaped literal (issue 38 item 1), and a raw carriage return or form feed is where a payload
// escapes a literal or a comment. NHVK_FUZZ_SECONDS (default 3), NHVK_FUZZ_SEED (default 1),
// NHVK_FUZZ_INPUT_LIMIT_S (default 20). A failing input is written to the temporary folder as
// nhvk_model_fuzz_finding_<seed>_<n>.toml and printed.
#include "child_outcome.hpp"
#include "fuzz_mutations.hpp"
#include "modelfile/model_file.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nhvk::modelfile::FileModel;

double env_number(const char* name, double fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtod(v, nullptr) : fallback;
}

/** A model that sets every key (forces, both charts, the source residual, ranged and boolean parameters,
 *  definitions in an order that needs sorting), so that mutations start from each of them. */
const std::string kEveryKey = R"toml(name = "every_key"
description = "every key of a model file"
coordinates = ["x", "y", "th"]
angles = ["th"]
lagrangian = """0.5*m*(x'^2 + y'^2)
  + 0.5*I*th'^2 - if(tilted, m*g*sin(alpha)*x, 0)"""
constraints = ["y' - tan(th)*x'"]
forces = ["0", "-c*y'", "-c*th'^3"]
chart = ["abs(cos(th)) > margin(1e-4, 1e-3)", "r2 < 100"]
velocity_chart = ["x'^2 + y'^2 > vfloor^2"]
source_residual = "abs(y' - tan(th)*x') / max(1, abs(x'))"
[parameters]
m = { default = 1.0, range = "> 0" }
c = { default = 0.1, range = ">= 0" }
alpha = { default = 0.2, range = "finite" }
g = 9.81
tilted = { default = true }
[definitions]
I = "0.5*m*R2"
R2 = "0.25"
r2 = "x^2 + y^2"
)toml";

// The issue's payloads: a description that escapes its literal with a raw carriage return, a harmless one with
// "\r\n", control characters in every string key, a stem and a path with line breaks.
const std::string kPayloadDescription =
    R"toml(description = "\\\r\"; static inline int pwn_ = [](){ char c[] = {'i','d',' ','>',' ','P','W','N','E','D',0}; return system(c); }(); //")toml";

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> seed_corpus() {
    std::vector<std::string> seeds;
    for (const auto& e : fs::directory_iterator(fs::path(NHVK_SOURCE_DIR) / "models"))
        if (e.path().extension() == ".toml") seeds.push_back(read_file(e.path()));
    std::sort(seeds.begin(), seeds.end()); // NOTE: the directory's order is the file system's: a seed reproduces
    seeds.push_back(kEveryKey);
    const std::string particle = "name = \"nh_particle\"\ncoordinates = [\"x\", \"y\", \"z\"]\n"
                                 "lagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\nconstraints = [\"z' - y*x'\"]\n";
    const auto with_line = [&](const std::string& line) { return particle + line + "\n"; };
    std::string sum = "0.5*(x'^2 + y'^2 + z'^2)", signs(100000, '-');
    for (int i = 0; i < 100000; ++i) sum += " + " + std::to_string(i % 97 + 2) + "*x";
    const std::string deep = std::string(30000, '(') + "x" + std::string(30000, ')');
    std::string sins, tower;
    for (int i = 0; i < 30000; ++i) sins += "sin(";
    for (int i = 0; i < 20000; ++i) tower += "x^";
    seeds.insert(
        seeds.end(),
        {particle, with_line(kPayloadDescription), with_line("description = \"speed 5\\r\\n\""),
         with_line("description = \"\\u0000\\u0001\\u0007\\b\\t\\n\\f\\r\\u000b\\u001b[31m\\u007f\\u0085\\u2028\""),
         with_line("description = \"*/ #include <cstdlib>\\n#define x y\\n?\?/\\n\\\\\""),
         with_line("description = '''raw \\ \" ' ''' + \"\"\""),
         // every string key with a line break or a quote: the loader refuses what is not a name
         "name = \"evil\\r\\nstatic int x = 0;\"\n" + particle.substr(particle.find('\n') + 1),
         "coordinates = [\"x\\r\", \"y\", \"z\"]\nlagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\n"
         "constraints = [\"z' - y*x'\"]\n",
         with_line("angles = [\"x\\\"\"]"), with_line("chart = [\"x > 0\\r\\n; system(0)\"]"),
         with_line("[parameters]\n\"p\\r\\n\" = 1.0"),
         with_line("[parameters]\nq = { default = 1.0, range = \"\\r\" }"),
         with_line("[definitions]\n\"d\\\"; //\" = \"x\""),
         // expressions at the limits of the parser and the loader
         "name = \"s\"\ncoordinates = [\"x\", \"y\", \"z\"]\nlagrangian = \"" + sum +
             "\"\nconstraints = [\"z' - y*x'\"]\n",
         with_line("forces = [\"" + deep + "\", \"0\", \"0\"]"),
         with_line("forces = [\"" + sins + "x" + std::string(30000, ')') + "\", \"0\", \"0\"]"),
         with_line("source_residual = \"" + signs + "x\""), with_line("source_residual = \"" + tower + "x\""),
         with_line("source_residual = \"1e-400 + 1e999 + 5e-324 + 0e-999 + 1e308*1e308\""),
         with_line("source_residual = \"sqrt(-1) + log(0) + 1/0 + 0/0 + atan2(0, 0) + x^-1\""),
         with_line("[parameters]\nm = nan\n"), with_line("[parameters]\nm = { default = 1e-400 }\n"),
         with_line("[parameters]\nm = { default = 1e999 }\n"), with_line("[definitions]\na = \"b\"\nb = \"a\"\n"),
         with_line("x = " + std::string(5000, '[') + std::string(5000, ']')), "", "\xEF\xBB\xBF" + particle,
         particle + "\"\xFF\xFE\" = 1\n", std::string("name = \"a\0b\"\n", 13) + particle});
    return seeds;
}

// Values a string key is given: control characters (as TOML escapes), quotes and backslashes, C++ that would run
// if it escaped a literal, long text, and ordinary names and expressions.
const std::vector<std::string> kPayloads = {
    "x",
    "x'",
    "evil",
    "",
    " ",
    "\\r",
    "\\n",
    "\\r\\n",
    "\\f",
    "\\t",
    "\\b",
    "\\u0000",
    "\\u0001",
    "\\u000b",
    "\\u001b",
    "\\u007f",
    "\\u0085",
    "\\u2028",
    "\\\\",
    "\\\"",
    "'",
    "\\\\\\r\\\"; int pwn_ = system(\\\"id\\\"); //",
    "*/ int pwn_; /*",
    "?\?/",
    "\\\\\\n#define T int",
    "R\\\"(",
    "%s%n",
    "\xC3\xA9t\xC3\xA9",
    "\xE2\x88\x92",
    "x\\u0000y",
    "0.5*(x'^2 + y'^2)",
    "sin(x)^2 + cos(y)",
    "if(flag, x, y)",
    "margin(1e-4, 1e-3)",
    "vfloor",
    "1e-400",
    "1e999",
    "> 0",
    ">= 0",
    "finite",
};

// Tokens inserted into an expression.
const std::vector<std::string> kTokens = {
    "+",     "-",    "*",      "/",     "^",      "(",       ")",      ",",       "'",    "x",    "x'",
    "y",     "y'",   "z'",     "t",     "pi",     "m",       "sin(",   "atan2(",  "min(", "max(", "abs(",
    "sqrt(", "log(", "if(",    "sign(", "asinh(", "margin(", "vfloor", ">",       ">=",   "<",    "0",
    "1",     "2",    "1e-400", "1e999", "5e-324", "0.5",     ".5",     "2.",      "1e",   "--",   "^-",
    "x^x",   " ",    "\\n",    "\\t",   "#",      "$",       "=",      "\xC3\xA9"};

const std::vector<std::string> kFunctions = {"sin(", "cos(", "exp(", "log(", "abs(", "sqrt(", "tanh(", "sign(", "("};

/** The [begin, end) of the contents of each one-line basic string ("…") of `s`. */
std::vector<std::pair<std::size_t, std::size_t>> strings_of(const std::string& s) {
    std::vector<std::pair<std::size_t, std::size_t>> r;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '#') { // a comment: to the end of the line
            while (i < s.size() && s[i] != '\n') ++i;
            continue;
        }
        if (s[i] != '"') continue;
        const std::size_t begin = i + 1;
        std::size_t j = begin;
        while (j < s.size() && s[j] != '"' && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
        if (j >= s.size()) break;
        if (s[j] == '"') r.emplace_back(begin, j); // else a line break: not a one-line string
        i = j;
    }
    return r;
}

/** One random edit of `s`. */
void mutate_once(std::string& s, std::mt19937_64& rng, const std::vector<std::string>& seeds) {
    auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
    const auto strings = strings_of(s);
    const bool has_string = !strings.empty();
    const auto [b, e] = has_string ? strings[pick(strings.size())] : std::pair<std::size_t, std::size_t>{0, 0};
    switch (rng() % 12) {
    case 0: // a byte flipped, inserted or deleted
        if (!s.empty() && rng() % 2) s[pick(s.size())] = static_cast<char>(rng());
        else s.insert(pick(s.size() + 1), 1, static_cast<char>(rng()));
        break;
    case 1: // a string's value replaced by a payload
        if (has_string) s.replace(b, e - b, kPayloads[pick(kPayloads.size())]);
        break;
    case 2: // a payload inserted into a string
        if (has_string) s.insert(b + pick(e - b + 1), kPayloads[pick(kPayloads.size())]);
        break;
    case 3:
    case 4: // a token inserted into an expression
        if (has_string) s.insert(b + pick(e - b + 1), kTokens[pick(kTokens.size())]);
        break;
    case 5: { // an expression wrapped in calls, up to past the nesting limit
        if (!has_string) break;
        const int depth = static_cast<int>(1 + pick(rng() % 4 == 0 ? 400 : 20));
        std::string open, close(static_cast<std::size_t>(depth), ')');
        for (int i = 0; i < depth; ++i) open += kFunctions[pick(kFunctions.size())];
        s.insert(e, close);
        s.insert(b, open);
        break;
    }
    case 6: { // an expression repeated as the terms of a sum, up to past the node limit
        if (!has_string || e == b) break;
        const std::string term = s.substr(b, e - b);
        const std::size_t times = 1 + pick(rng() % 4 == 0 ? 3000 : 10);
        std::string sum = term;
        for (std::size_t i = 1; i < times; ++i) sum += (rng() % 2 ? " + " : " * ") + std::to_string(i) + "*" + term;
        if (sum.size() < 4000000) s.replace(b, e - b, sum);
        break;
    }
    case 7: { // a number replaced
        static const std::vector<std::string> numbers = {"0",   "-0",   "1e-400", "1e999", "5e-324", "nan",
                                                         "inf", "-1",   "1e308",  "2",     "0.0",    "1e-320",
                                                         "1_0", "0x10", "1e+",    ".",     "-inf",   "9e9999"};
        nhvk_test::replace_a_number(s, rng, numbers);
        break;
    }
    case 8: { // a key of a model set to a payload (a string key, or an array of one)
        const std::vector<std::string>& keys = nhvk::modelfile::model_keys();
        const std::string key = keys[pick(keys.size())];
        const std::string value = "\"" + kPayloads[pick(kPayloads.size())] + "\"";
        const std::string line = key + " = " + (rng() % 2 ? value : "[" + value + "]") + "\n";
        const std::size_t table = s.find("\n[");
        s.insert(table == std::string::npos ? s.size() : table + 1, line);
        break;
    }
    case 9:
    case 10: { // a line of any seed spliced in
        const std::string& from = seeds[pick(seeds.size())];
        std::vector<std::string> lines;
        std::istringstream in(from);
        for (std::string l; std::getline(in, l);)
            if (l.size() < 10000) lines.push_back(l);
        if (lines.empty()) break;
        std::size_t at = pick(s.size() + 1);
        while (at < s.size() && at > 0 && s[at - 1] != '\n') --at;
        s.insert(at, lines[pick(lines.size())] + "\n");
        break;
    }
    default: { // a line deleted
        const std::size_t at = pick(s.size() + 1);
        const std::size_t from = s.rfind('\n', at == 0 ? 0 : at - 1);
        const std::size_t to = s.find('\n', at);
        const std::size_t a = from == std::string::npos ? 0 : from + 1;
        if (a < s.size()) s.erase(a, (to == std::string::npos ? s.size() : to + 1) - a);
        break;
    }
    }
}

/** A control character of an emitted unit: where user text escaped its literal or comment. */
struct ControlCharacter : std::logic_error {
    using std::logic_error::logic_error;
};

/** Throws ControlCharacter for a byte below 0x20 (the line feed aside) or 0x7f in `unit`. */
void check_unit(const std::string& unit, const char* which) {
    for (std::size_t i = 0; i < unit.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(unit[i]);
        if ((c < 0x20 && c != '\n') || c == 0x7f) {
            const std::size_t from = unit.rfind('\n', i), to = unit.find('\n', i);
            std::string line = unit.substr(from == std::string::npos ? 0 : from + 1,
                                           std::min<std::size_t>(200, (to == std::string::npos ? unit.size() : to) -
                                                                          (from == std::string::npos ? 0 : from + 1)));
            for (char& ch : line)
                if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
            char code[8];
            std::snprintf(code, sizeof code, "0x%02x", c);
            throw ControlCharacter(std::string("the emitted ") + which + " unit has the control character " + code +
                                   " at byte " + std::to_string(i) + ", in the line: " + line);
        }
    }
}

/** The file's path and stem a mutated input is loaded under: the fuzzer's own, or a payload. */
struct Origin {
    std::string source = "fuzz/model.toml", stem = "model";
};

/** Load `text` as a model file, then emit its units (the CPU one for one combination, and the CUDA one) and check
 *  them, in a child (child_outcome.hpp): a std::runtime_error is the refused outcome. */
nhvk_test::ChildOutcome load_in_child(const std::string& text, const Origin& origin, unsigned limit_s) {
    return nhvk_test::run_in_child<std::runtime_error>(
        [&] {
            const FileModel m = nhvk::modelfile::load_model_text(text, origin.source, "", origin.stem, {});
            using nhvk::modelfile::Scope;
            check_unit(nhvk::modelfile::emit_model_unit(
                           m, Scope::only(nhvk::Precision::f64, nhvk::Method::dopri5, nhvk::EquationsKind::generated)),
                       "C++");
            check_unit(nhvk::modelfile::emit_model_cuda_unit(m), "CUDA");
        },
        limit_s);
}

TEST(ModelFileFuzz, MutatedModelFilesLoadAndEmitOrFailCleanly) {
    const double seconds = env_number("NHVK_FUZZ_SECONDS", 3.0);
    const auto seed = static_cast<std::uint64_t>(env_number("NHVK_FUZZ_SEED", 1.0));
    const auto limit_s = static_cast<unsigned>(std::max(1.0, env_number("NHVK_FUZZ_INPUT_LIMIT_S", 20.0)));
    const std::vector<std::string> seeds = seed_corpus();
    ASSERT_GE(seeds.size(), 40u) << "models/ not found under " << NHVK_SOURCE_DIR;
    std::mt19937_64 rng(seed);
    const auto t0 = std::chrono::steady_clock::now();
    long long inputs = 0, emitted = 0, refused = 0, crashes = 0, escapes = 0;
    // NOTE: the seeds and 100 mutated inputs whatever the machine's speed, then until `seconds` have passed.
    const long long min_inputs = static_cast<long long>(seeds.size()) + 100;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds ||
           inputs < min_inputs) {
        std::string text;
        Origin origin;
        if (inputs < static_cast<long long>(seeds.size())) {
            text = seeds[static_cast<std::size_t>(inputs)];
        } else {
            text = seeds[rng() % seeds.size()];
            for (int m = rng() % 4 == 0 ? 2 + static_cast<int>(rng() % 7) : 1; m > 0; --m)
                mutate_once(text, rng, seeds);
            // a tenth of the inputs come from a path or a stem with a payload (line breaks, quotes, C++)
            if (rng() % 10 == 0) {
                static const std::vector<std::string> odd = {
                    "a\nb", "a\rb", "x\r\"; int pwn_; //", "*/", "a\\", "\x01", "\xC3\xA9", "a b", "?\?/\n", "\f"};
                const std::string p = odd[rng() % odd.size()];
                if (rng() % 2) origin.source = "fuzz/" + p + "/model.toml";
                else origin.stem = p;
            }
        }
        const nhvk_test::ChildOutcome o = load_in_child(text, origin, limit_s);
        ++inputs;
        if (std::getenv("NHVK_FUZZ_VERBOSE"))
            std::fprintf(stderr, "%s | %.300s\n", nhvk_test::describe(o).c_str(), o.message.c_str());
        if (o.clean()) {
            (o.refused() ? refused : emitted) += 1;
            continue;
        }
        const bool escape = o.message.find("the emitted ") != std::string::npos &&
                            o.message.find("control character") != std::string::npos;
        (escape ? escapes : crashes) += 1;
        // NOTE: the first escapes are shown; the rest only counted, so that the run goes on looking for crashes
        if (escape && escapes > 3) continue;
        const fs::path file = fs::temp_directory_path() / ("nhvk_model_fuzz_finding_" + std::to_string(seed) + "_" +
                                                           std::to_string(inputs) + ".toml");
        std::ofstream(file, std::ios::binary) << text;
        ADD_FAILURE() << nhvk_test::describe(o) << " " << o.message.substr(0, 2000) << "\n  input (input " << inputs
                      << ", seed " << seed << ", path '" << origin.source << "', stem '" << origin.stem
                      << "') saved as " << file.string();
        if (crashes >= 5) break;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("model-file fuzz: %lld inputs in %.1f s (%.1f/s), %lld loaded and emitted, %lld refused with a "
                "message, %lld crashes/hangs/other exceptions, %lld control characters in an emitted unit, seed %llu\n",
                inputs, elapsed, static_cast<double>(inputs) / elapsed, emitted, refused, crashes, escapes,
                static_cast<unsigned long long>(seed));
    // Both outcomes must occur, or the mutator is not reaching the loader's checks (or breaks every input).
    EXPECT_GT(emitted, 0);
    EXPECT_GT(refused, 0);
    EXPECT_EQ(escapes, 0) << "text of a model file, its path or its stem reached an emitted unit unescaped";
}

// The seeds reach every key of a model: each is set in some seed, and the seed that sets them all loads and emits.
TEST(ModelFileFuzz, SeedsCoverEveryKeyAndTheFullSeedLoads) {
    const std::vector<std::string> seeds = seed_corpus();
    for (const std::string& key : nhvk::modelfile::model_keys()) {
        const bool table = key == "parameters" || key == "definitions";
        EXPECT_NE(("\n" + kEveryKey).find(table ? "\n[" + key + "]\n" : "\n" + key + " = "), std::string::npos)
            << "the full seed does not set " << key;
    }
    const nhvk_test::ChildOutcome o = load_in_child(kEveryKey, Origin{}, 60);
    EXPECT_EQ(o.status, 0) << nhvk_test::describe(o) << " " << o.message;
}

} // namespace
