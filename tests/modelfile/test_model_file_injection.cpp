// SPDX-License-Identifier: MIT
// A model file is data (issue 38, item 1): nothing from it, its path or its file name reaches the generated C++ or
// CUDA source except a checked name or a fully escaped literal. Each route is tested with a payload that runs a
// command when it gets through: the description (as a file and as an inline [model]), the folder the file lies in,
// the file's stem when it names the model, and every string key of a model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "modelfile/model_file.hpp"
#include "modelfile/runtime_compile.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk::modelfile::cpp_literal;
using nhvk::modelfile::load_model_text;

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

/** The issue's payload: a backslash and a raw carriage return (GCC takes a lone CR as a line break, so the escaped
 *  quote of the old c_string ended the literal), then a static initialiser that runs `touch PWNED`. */
const std::string payload = std::string("\\\r\"; static inline int pwn_ = [](){ char c[] = "
                                        "{'t','o','u','c','h',' ','P','W','N','E','D',0}; return system(c); }(); //");

/** TOML's basic-string escape of `s` (quotes, backslashes and control characters), so the payload's bytes reach the
 *  loader exactly. */
std::string toml_string(const std::string& s) {
    std::string r = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            r += '\\';
            r += ch;
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            r += buf;
        } else {
            r += ch;
        }
    }
    return r + "\"";
}

std::string particle(const std::string& extra) {
    return extra + "\ncoordinates = [\"x\", \"y\", \"z\"]\nlagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\n"
                   "constraints = [\"z' - y*x'\"]\n";
}

/** The bytes of `src` that are neither printable ASCII nor a newline, as "offset:byte" (empty: none); with
 *  `controls_only`, the control characters only (nhvk's own comments in an emitted unit use UTF-8 mathematics). */
std::string raw_bytes(const std::string& src, bool controls_only = false) {
    std::string bad;
    for (std::size_t i = 0; i < src.size(); ++i) {
        const auto c = static_cast<unsigned char>(src[i]);
        if (c != '\n' && (c < 0x20 || c == 0x7f || (!controls_only && c > 0x7e)))
            bad += std::to_string(i) + ":" + std::to_string(c) + " ";
    }
    return bad;
}

/** Every line of `src` that mentions `needle` outside a string literal (a crude C++ lexer: enough for the emitted
 *  code, which has no character literals holding quotes and no raw strings). */
std::vector<std::string> code_mentions(const std::string& src, const std::string& needle) {
    std::vector<std::string> hits;
    std::string code; // the source with every literal's contents blanked
    bool in_string = false;
    for (std::size_t i = 0; i < src.size(); ++i) {
        const char c = src[i];
        if (in_string) {
            if (c == '\\' && i + 1 < src.size()) {
                code += "  ";
                ++i;
                continue;
            }
            if (c == '"') in_string = false;
            code += c == '"' ? '"' : (c == '\n' ? '\n' : ' ');
            continue;
        }
        if (c == '"') in_string = true;
        code += c;
    }
    std::size_t start = 0;
    while (start < code.size()) {
        const std::size_t end = std::min(code.find('\n', start), code.size());
        const std::string line = code.substr(start, end - start);
        if (line.find(needle) != std::string::npos) hits.push_back(src.substr(start, end - start));
        start = end + 1;
    }
    return hits;
}

/** What an emitted unit must be: no control character but newlines, the payload's code nowhere outside a literal
 *  (that user text is written fully escaped is checked where it is printed: `cpp_literal`'s own test). */
void expect_inert(const std::string& src, const std::string& what) {
    EXPECT_EQ(raw_bytes(src, true), "") << what << ": raw control bytes in the emitted source";
    for (const std::string& line : code_mentions(src, "pwn_"))
        ADD_FAILURE() << what << ": the payload is code in the emitted source: " << line;
    for (const std::string& line : code_mentions(src, "system("))
        ADD_FAILURE() << what << ": the payload is code in the emitted source: " << line;
}

// ---- the escaping itself ----

TEST(ModelFileLiteral, EveryByteSurvivesACompileAndOnlyPrintableAsciiIsWritten) {
    std::string all;
    for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
    // the sequences that end or bend a literal: a line splice, trigraphs (under a strict -std), a hex digit after an
    // escape, a lone CR, a quote
    const std::vector<std::string> cases = {all,
                                            "a\\",
                                            "??=??/??'",
                                            "\x01"
                                            "7f",
                                            "\r\"",
                                            "\\\r\"",
                                            ""};
    std::string unit = "#include <cstddef>\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string lit = cpp_literal(cases[i]);
        EXPECT_EQ(raw_bytes(lit), "") << i;
        ASSERT_EQ(lit.front(), '"');
        ASSERT_EQ(lit.back(), '"');
        unit += "static const char s" + std::to_string(i) + "[] = " + lit + ";\n";
    }
    unit += "extern \"C\" __attribute__((visibility(\"default\"))) const char* get(int i, std::size_t* n) {\n"
            "    switch (i) {\n";
    for (std::size_t i = 0; i < cases.size(); ++i)
        unit += "    case " + std::to_string(i) + ": *n = sizeof s" + std::to_string(i) + " - 1; return s" +
                std::to_string(i) + ";\n";
    unit += "    }\n    return nullptr;\n}\n";

    nhvk_test::TempDir dir;
    nhvk_test::ScopedEnv cache("NHVK_CACHE_DIR", dir.str("cache"));
    nhvk::jit::CompilerSpec spec;
    spec.cxx = "c++";
    // -std=c++11 -pedantic: trigraphs are read under a strict standard before C++17, the strictest reading of the text
    spec.flags = {"-std=c++11", "-pedantic-errors", "-O0", "-fPIC", "-shared", "-fvisibility=hidden"};
    const nhvk::jit::Artefact a = nhvk::jit::compile_shared_object(unit, spec, "cpu", "literal test");
    using Get = const char* (*)(int, std::size_t*);
    const auto get = reinterpret_cast<Get>(nhvk::jit::load_symbol(a, "get"));
    for (std::size_t i = 0; i < cases.size(); ++i) {
        std::size_t n = 0;
        const char* s = get(static_cast<int>(i), &n);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(std::string(s, n), cases[i]) << "case " << i;
    }
}

TEST(ModelFileLiteral, MessagesShowUserTextEscapedAndClipped) {
    EXPECT_EQ(nhvk::modelfile::shown("a\rb"), "\"a\\015b\"");
    const std::string big(100000, 'n');
    const std::string s = nhvk::modelfile::shown(big);
    EXPECT_LT(s.size(), 200u);
    EXPECT_HAS(s, "100000 bytes");
}

// ---- each route, in the emitted source ----

TEST(ModelFileInjection, TheDescriptionIsALiteralInTheCppAndCudaSources) {
    const std::string text = payload + " \xc3\xa9\x7f"; // and UTF-8 and DEL: written as octal escapes too
    const auto m =
        load_model_text(particle("name = \"evil\"\ndescription = " + toml_string(text)), "evil.toml", "", "evil", {});
    EXPECT_EQ(m.info.description, text);
    const std::string cpp = nhvk::modelfile::emit_model_unit(m), cuda = nhvk::modelfile::emit_model_cuda_unit(m);
    expect_inert(cpp, "C++ unit");
    expect_inert(nhvk::modelfile::emit_model_unit(m, {nhvk::modelfile::Scope::inspection}), "inspection unit");
    expect_inert(cuda, "CUDA unit");
    EXPECT_HAS(cpp, "description = " + cpp_literal(text) + ";");
    EXPECT_HAS(cuda, "description = " + cpp_literal(text) + ";");
    EXPECT_HAS(cpp_literal(text), "\\303\\251\\177\"");
}

TEST(ModelFileInjection, ThePathIsALiteralInTheComment) {
    // a folder name with a newline, then code, then a comment that swallows the rest of the line
    const std::string source = "/tmp/a\nextern \"C\" int system(const char*); static int pwn_ = system(\"touch "
                               "PWNED\"); //\r\n#define x y\\/m.toml";
    const auto m = load_model_text(particle("name = \"p\""), source, "", "p", {});
    const std::string unit = nhvk::modelfile::emit_model_unit(m);
    expect_inert(unit, "C++ unit");
    EXPECT_HAS(unit, "// Emitted by nhvk from the model file " + cpp_literal(source) + ": do not edit");
    expect_inert(nhvk::modelfile::emit_model_cuda_unit(m), "CUDA unit");
    // the default description names the path too
    EXPECT_HAS(unit, cpp_literal("model file " + source));
}

TEST(ModelFileInjection, AFileStemThatIsNotANameIsRefusedWhenItNamesTheModel) {
    for (const std::string stem : {std::string("a\rstatic int pwn_ = system(\"id\");//"), std::string("my-model"),
                                   std::string(65, 'a'), std::string("9lives")}) {
        try {
            load_model_text(particle(""), "/models/" + stem + ".toml", "", stem, {});
            ADD_FAILURE() << "the stem " << cpp_literal(stem) << " was taken as the model's name";
        } catch (const std::runtime_error& e) {
            const std::string msg = e.what();
            EXPECT_HAS(msg, "the model is named after the file");
            EXPECT_HAS(msg, "name = ");
            EXPECT_EQ(raw_bytes(msg), "") << "the message prints the stem escaped";
        }
    }
    // with a `name`, any file name will do
    const auto m = load_model_text(particle("name = \"ok\""), "/models/my-model\r.toml", "", "my-model\r", {});
    EXPECT_EQ(m.info.name, "ok");
}

TEST(ModelFileInjection, EveryNameKeyTakesOnlyANameAndSaysSoEscaped) {
    const std::string evil = "x\r\"); system(\"id\"); //";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"name", "name = " + toml_string(evil) + "\ncoordinates = [\"x\", \"y\", \"z\"]\n"},
        {"coordinates", "coordinates = [\"x\", \"y\", " + toml_string(evil) + "]\n"},
        {"angles", "coordinates = [\"x\", \"y\", \"z\"]\nangles = [" + toml_string(evil) + "]\n"},
        {"parameters", "coordinates = [\"x\", \"y\", \"z\"]\n[parameters]\n" + toml_string(evil) + " = 1.0\n"},
        {"definitions", "coordinates = [\"x\", \"y\", \"z\"]\n[definitions]\n" + toml_string(evil) + " = \"x\"\n"},
        {"name (too long)", "name = \"" + std::string(100000, 'n') + "\"\ncoordinates = [\"x\", \"y\", \"z\"]\n"},
    };
    for (const auto& [key, head] : cases) {
        const std::string text = head + "lagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\nconstraints = [\"z' - y*x'\"]\n";
        try {
            load_model_text(text, "m.toml", "", "m", {});
            ADD_FAILURE() << key << ": loaded";
        } catch (const std::runtime_error& e) {
            const std::string msg = e.what();
            EXPECT_EQ(raw_bytes(msg), "") << key << ": " << msg;
            EXPECT_LT(msg.size(), 2000u) << key << ": the message echoes the whole value";
            EXPECT_HAS(msg, "m.toml");
        }
    }
}

TEST(ModelFileInjection, ExpressionKeysAreParsedNeverPrinted) {
    // each expression key with the payload appended: refused by the parser, whatever its bytes
    for (const std::string key :
         {"lagrangian", "constraints", "forces", "chart", "velocity_chart", "source_residual"}) {
        std::string text = "coordinates = [\"x\", \"y\", \"z\"]\n";
        const std::string expr = toml_string("x + 1" + payload);
        const bool list = key == "constraints" || key == "forces";
        text += key + " = " + (list ? "[" + expr + "]" : expr) + "\n";
        if (key != "lagrangian") text += "lagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\n";
        if (key != "constraints") text += "constraints = [\"z' - y*x'\"]\n";
        try {
            load_model_text(text, "m.toml", "", "m", {});
            ADD_FAILURE() << key << ": loaded";
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(raw_bytes(e.what()), "") << key << ": " << e.what();
        }
    }
}

// ---- end to end: the payloads do not run, and a harmless CR compiles ----

TEST(ModelFileInjection, InspectAndRunLoadTheIssuesPayloadsAsData) {
    nhvk_test::TempDir dir;
    // The model file in a folder whose name holds a newline and code, with the payload as its description.
    const fs::path folder =
        dir.path() / "d\nextern \"C\" int system(const char*); static int pwn_ = system(\"touch PWNED\"); //";
    fs::create_directories(folder);
    std::ofstream(folder / "evil.toml") << particle("name = \"evil\"\ndescription = " + toml_string(payload));
    // `nhvk inspect` runs in `dir`, where a payload that ran would leave PWNED.
    const auto i = nhvk_test::run_captured("cd " + nhvk_test::shell_quote(dir.path().string()) + " &&", NHVK_BINARY,
                                           {"inspect", (folder / "evil.toml").string()}, dir.path() / "io_inspect");
    EXPECT_EQ(i.rc, 0) << i.err;
    EXPECT_HAS(i.out, "evil");
    EXPECT_FALSE(fs::exists(dir.path() / "PWNED")) << "the model file ran a command through `nhvk inspect`";
    EXPECT_EQ(raw_bytes(i.err), "") << "stderr prints the folder's name escaped";

    // An inline [model] whose description holds a harmless CR LF and then the payload: compiles, runs, no command.
    std::string cfg = nhvk_test::read_text(std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml");
    const std::size_t at = cfg.find("[model]");
    ASSERT_NE(at, std::string::npos);
    const std::size_t end = cfg.find('\n', cfg.find("name", at));
    cfg.replace(at, end - at,
                "[model]\nname = \"evil_inline\"\ndescription = " + toml_string("speed 5\r\n" + payload) +
                    "\ncoordinates = [\"x\", \"y\", \"z\"]\nlagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\n"
                    "constraints = [\"z' - y*x'\"]");
    std::ofstream(dir.path() / "run.toml") << cfg;
    const auto r = nhvk_test::run_captured(
        "cd " + nhvk_test::shell_quote(dir.path().string()) + " &&", NHVK_BINARY,
        {"run", (dir.path() / "run.toml").string(), "--trajectories", "8", "--threads", "1", "--out", dir.str("out")},
        dir.path() / "io_run");
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir.path() / "out" / "stats.csv"));
    EXPECT_FALSE(fs::exists(dir.path() / "PWNED")) << "the inline model ran a command through `nhvk run`";
}

} // namespace
