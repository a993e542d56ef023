// SPDX-License-Identifier: MIT
// The cache of run-time compiled code (host/modelfile/runtime_compile.hpp): reused, invalidated by the source, the
// compiler and the engine's headers, and safe when two processes start at once. A tiny source keeps each compile
// well under a second; a wrapper script around the compiler counts the compiles.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "answer_source.hpp"
#include "modelfile/runtime_compile.hpp"
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk::jit::Artefact;
using nhvk::jit::CompilerSpec;

/** A compiler wrapper that appends a line to `count` per compile (after `delay_s` seconds) and runs c++. */
std::string make_wrapper(const fs::path& dir, const std::string& name, const fs::path& count, double delay_s,
                         const std::string& version_tag) {
    const fs::path w = dir / name;
    std::ofstream f(w);
    f << "#!/bin/sh\n"
      << "if [ \"$1\" = --version ]; then echo 'wrapper " << version_tag << "'; exec c++ --version; fi\n"
      << "echo compile >> '" << count.string() << "'\n"
      << "sleep " << delay_s << "\n"
      << "exec c++ \"$@\"\n";
    f.close();
    fs::permissions(w, fs::perms::owner_all);
    return w.string();
}

int lines(const fs::path& p) {
    std::ifstream f(p);
    int n = 0;
    for (std::string s; std::getline(f, s);) ++n;
    return n;
}

CompilerSpec spec_with(const std::string& cxx, const fs::path& headers) {
    CompilerSpec s;
    s.cxx = cxx;
    s.flags = {"-std=c++17", "-O0", "-fPIC", "-shared", "-fvisibility=hidden"};
    s.header_roots = {headers.string()};
    return s;
}

using nhvk_test::call_answer;
std::string source(int answer) { return nhvk_test::answer_source(answer); }

class RuntimeCompile : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(dir_.path() / "headers");
        std::ofstream(dir_.path() / "headers" / "engine.hpp") << "// version 1\n";
    }
    nhvk_test::TempDir dir_;
    // the cache is this test's folder, and the caller's setting comes back for later tests of the same process
    nhvk_test::ScopedEnv cache_{"NHVK_CACHE_DIR", dir_.str("cache")};
    fs::path count() const { return dir_.path() / "count"; }
};

TEST_F(RuntimeCompile, SecondUseLoadsFromTheCacheWithoutCompiling) {
    const CompilerSpec s = spec_with(make_wrapper(dir_.path(), "cxx", count(), 0, "a"), dir_.path() / "headers");
    const Artefact first = nhvk::jit::compile_shared_object(source(42), s, "cpu", "test");
    EXPECT_FALSE(first.cached);
    EXPECT_GT(first.compile_seconds, 0.0);
    EXPECT_EQ(call_answer(first), 42);
    const Artefact second = nhvk::jit::compile_shared_object(source(42), s, "cpu", "test");
    EXPECT_TRUE(second.cached);
    EXPECT_EQ(second.compile_seconds, 0.0);
    EXPECT_EQ(second.path, first.path);
    EXPECT_EQ(lines(count()), 1);
    // The entry lies under the cache folder, with the source it came from beside it.
    EXPECT_EQ(fs::path(first.path).parent_path(), dir_.path() / "cache" / "cpu");
    EXPECT_TRUE(fs::exists(dir_.path() / "cache" / "cpu" / (first.key + ".cpp")));
}

TEST_F(RuntimeCompile, ANewSourceCompilerOrEngineHeaderIsANewEntry) {
    const fs::path headers = dir_.path() / "headers";
    const CompilerSpec a = spec_with(make_wrapper(dir_.path(), "cxx_a", count(), 0, "a"), headers);
    const std::string k0 = nhvk::jit::cache_key(source(1), a);
    EXPECT_NE(nhvk::jit::cache_key(source(2), a), k0) << "the source";
    const CompilerSpec b = spec_with(make_wrapper(dir_.path(), "cxx_b", count(), 0, "b"), headers);
    EXPECT_NE(nhvk::jit::cache_key(source(1), b), k0) << "the compiler (its path and --version)";
    CompilerSpec flags = a;
    flags.flags.push_back("-DNDEBUG");
    EXPECT_NE(nhvk::jit::cache_key(source(1), flags), k0) << "the flags";
    EXPECT_EQ(nhvk::jit::cache_key(source(1), a), k0) << "nothing changed";

    // An edited engine header (a rebuilt nhvk of the same version) is a new entry, in the same process too.
    const Artefact before = nhvk::jit::compile_shared_object(source(7), a, "cpu", "test");
    std::ofstream(headers / "engine.hpp") << "// version 2: a changed engine\n";
    const Artefact after = nhvk::jit::compile_shared_object(source(7), a, "cpu", "test");
    EXPECT_NE(after.key, before.key);
    EXPECT_FALSE(after.cached);
    EXPECT_EQ(call_answer(after), 7);
    EXPECT_EQ(lines(count()), 2);
}

TEST_F(RuntimeCompile, TwoProcessesStartingAtOnceCompileOnceAndBothLoad) {
    // A slow compiler (1 s) so that the second process certainly arrives while the first compiles.
    const CompilerSpec s = spec_with(make_wrapper(dir_.path(), "cxx", count(), 1.0, "a"), dir_.path() / "headers");
    // Hash the headers and the compiler's version before forking (each child would do it anyway).
    const std::string key = nhvk::jit::cache_key(source(99), s);
    pid_t pids[2];
    for (pid_t& pid : pids) {
        pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            try {
                const Artefact a = nhvk::jit::compile_shared_object(source(99), s, "cpu", "test");
                _exit(a.key == key && call_answer(a) == 99 ? 0 : 1);
            } catch (...) {
                _exit(2);
            }
        }
    }
    for (pid_t pid : pids) {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    EXPECT_EQ(lines(count()), 1) << "the second process must wait for the first's compile, not compile again";
    // No temporary is left behind, and only finished objects carry the entry's name.
    for (const auto& e : fs::directory_iterator(dir_.path() / "cache" / "cpu")) {
        const std::string n = e.path().filename().string();
        EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
    }
}

TEST_F(RuntimeCompile, AHalfWrittenObjectIsNeverLoaded) {
    // A crashed compile leaves its private temporary; the entry's own name is only ever made by a rename.
    const CompilerSpec s = spec_with(make_wrapper(dir_.path(), "cxx", count(), 0, "a"), dir_.path() / "headers");
    const std::string key = nhvk::jit::cache_key(source(5), s);
    fs::create_directories(dir_.path() / "cache" / "cpu");
    std::ofstream(dir_.path() / "cache" / "cpu" / (key + ".12345.so.tmp")) << "truncated";
    const Artefact a = nhvk::jit::compile_shared_object(source(5), s, "cpu", "test");
    EXPECT_FALSE(a.cached);
    EXPECT_EQ(call_answer(a), 5);
}

TEST_F(RuntimeCompile, ACompileErrorNamesTheSourceAndKeepsTheLog) {
    const CompilerSpec s = spec_with("c++", dir_.path() / "headers");
    try {
        nhvk::jit::compile_shared_object("this is not C++\n", s, "cpu", "models/broken.toml");
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("models/broken.toml"), std::string::npos) << m;
        EXPECT_NE(m.find("the C++ compiler failed"), std::string::npos) << m;
        EXPECT_NE(m.find(".log"), std::string::npos) << m;
    }
}

TEST_F(RuntimeCompile, AMissingCompilerIsExplained) {
    const CompilerSpec s = spec_with((dir_.path() / "no-such-compiler").string(), dir_.path() / "headers");
    try {
        nhvk::jit::compile_shared_object(source(1), s, "cpu", "test");
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("NHVK_CXX"), std::string::npos) << e.what();
    }
}

TEST(RuntimeCompileRoot, CacheFolderFollowsTheEnvironment) {
    nhvk_test::ScopedEnv cache("NHVK_CACHE_DIR", std::nullopt), xdg("XDG_CACHE_HOME", "/tmp/xdg-test");
    EXPECT_EQ(nhvk::jit::cache_root(), "/tmp/xdg-test/nhvk");
    cache.set("/tmp/explicit");
    EXPECT_EQ(nhvk::jit::cache_root(), "/tmp/explicit");
}

} // namespace
