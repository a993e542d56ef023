// SPDX-License-Identifier: MIT
// The compile cache is loaded only when nobody but its user could have written it (issue 38, items 2, 3, 11 and the
// cache's messages of item 15; host/modelfile/runtime_compile.hpp). The "other user" of these tests is uid 65534
// (nobody): as root, a test plants that user's files with chown, and runs a victim of its own as that user in a
// child. Without root they skip, saying so.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "answer_source.hpp"
#include "child_outcome.hpp"
#include "modelfile/runtime_compile.hpp"
#include "nhvk_cli.hpp"
#include "nhvk_version.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nhvk::jit::Artefact;
using nhvk::jit::CompilerSpec;

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

constexpr uid_t other_uid = 65534;
constexpr gid_t other_gid = 65534;

using nhvk_test::call_answer;
std::string source(int answer) { return nhvk_test::answer_source(answer); }

std::string read(const fs::path& p) { return nhvk::jit::read_file(p.string()); }

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

mode_t mode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
}

/** A compiler script in `dir`: `--version` is c++'s (with `tag`, so each script is its own compiler), a compile runs
 *  `body` (a shell fragment) and then c++ unless the body exits. */
std::string script(const fs::path& dir, const std::string& name, const std::string& body, const std::string& tag) {
    const fs::path w = dir / name;
    std::ofstream f(w);
    f << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'script " << tag << "'; exec c++ --version; fi\n"
      << body << "\nexec c++ \"$@\"\n";
    f.close();
    fs::permissions(w, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
    return w.string();
}

class CacheTrust : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(dir_.path() / "headers");
        std::ofstream(dir_.path() / "headers" / "engine.hpp") << "// engine\n";
        // the other user must reach the test's folder (a TempDir is made under the umask)
        fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                         fs::perms::others_read | fs::perms::others_exec);
    }
    CompilerSpec spec(const std::string& cxx = "c++") const {
        CompilerSpec s;
        s.cxx = cxx;
        s.flags = {"-std=c++17", "-O0", "-fPIC", "-shared", "-fvisibility=hidden"};
        s.header_roots = {(dir_.path() / "headers").string()};
        return s;
    }
    nhvk::jit::Reporter reporter() {
        nhvk::jit::Reporter r;
        r.note = [this](const std::string& s) { notes_.push_back(s); };
        r.on_miss = [this] { ++misses_; };
        return r;
    }
    std::string notes() const {
        std::string s;
        for (const std::string& n : notes_) s += n + "\n";
        return s;
    }
    static bool root() { return ::geteuid() == 0; }

    /** Another user's object at `where`, made to pass every check but ownership: the victim's key in a valid trailer,
     *  the victim's identity exported, a constructor that leaves `PWNED` in the test's folder, answer() = 666. */
    void plant(const fs::path& where, const std::string& key) {
        const fs::path src = dir_.path() / "evil.cpp", obj = dir_.path() / "evil.so";
        std::ofstream(src) << "#include <cstdio>\n__attribute__((constructor)) static void pwn() { std::FILE* f = "
                              "std::fopen(\""
                           << (dir_.path() / "PWNED").string()
                           << "\", \"w\"); if (f) std::fclose(f); }\n"
                              "extern \"C\" __attribute__((visibility(\"default\"))) int answer() { return 666; }\n"
                              "extern \"C\" __attribute__((visibility(\"default\"))) const char* nhvk_entry_identity() "
                              "{ return \""
                           << key << " test " << nhvk::nhvk_version << "\"; }\n";
        ASSERT_EQ(std::system(("c++ -shared -fPIC -O0 " + src.string() + " -o " + obj.string()).c_str()), 0);
        const std::string bytes = read(obj);
        fs::create_directories(where.parent_path());
        fs::remove(where);
        write(where, bytes + nhvk::jit::entry_trailer(key, bytes));
        ASSERT_EQ(::chown(where.c_str(), other_uid, other_gid), 0);
        ::chmod(where.c_str(), 0666);
    }
    bool pwned() const { return fs::exists(dir_.path() / "PWNED"); }

    nhvk_test::TempDir dir_;
    nhvk_test::ScopedEnv cache_{"NHVK_CACHE_DIR", dir_.str("cache")};
    nhvk_test::ScopedEnv group_{"NHVK_CACHE_GROUP", std::nullopt};
    std::vector<std::string> notes_;
    int misses_ = 0;
};

// ---- item 2: whose entries are loaded ----

TEST_F(CacheTrust, AnotherUsersPlantedEntryIsNeverLoaded) {
    if (!root()) GTEST_SKIP() << "needs root to act as a second user (uid 65534)";
    const CompilerSpec s = spec();
    const std::string key = nhvk::jit::cache_key(source(42), s);
    // 1. a cache folder writable by every user (a shared NHVK_CACHE_DIR): not used at all
    fs::create_directories(dir_.path() / "cache" / "cpu");
    ::chmod((dir_.path() / "cache").c_str(), 0777);
    ::chmod((dir_.path() / "cache" / "cpu").c_str(), 0777);
    plant(dir_.path() / "cache" / "cpu" / (key + ".so"), key);
    const Artefact a = nhvk::jit::compile_shared_object(source(42), s, "cpu", "test", "test", reporter());
    EXPECT_EQ(call_answer(a), 42);
    EXPECT_FALSE(pwned()) << "another user's object ran in this process";
    EXPECT_FALSE(a.cached);
    EXPECT_HAS(a.private_because, "writable by every user");
    EXPECT_HAS(notes(), "compiling privately");
    EXPECT_EQ(notes_.size(), 1u) << notes();
    EXPECT_EQ(fs::path(a.path).parent_path().parent_path().parent_path(),
              fs::path(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp"))
        << a.path;
    EXPECT_EQ(mode_of(fs::path(a.path).parent_path().parent_path()), 0700u);

    // 2. this user's private cache folder, an entry in it owned by the other user (copied in by a bad script, or a
    // folder that was once shared): not loaded, rebuilt in its place
    notes_.clear();
    ::chmod((dir_.path() / "cache").c_str(), 0700);
    ::chmod((dir_.path() / "cache" / "cpu").c_str(), 0700);
    const Artefact b = nhvk::jit::compile_shared_object(source(42), s, "cpu", "test", "test", reporter());
    EXPECT_EQ(call_answer(b), 42);
    EXPECT_FALSE(pwned());
    EXPECT_FALSE(b.cached);
    EXPECT_TRUE(b.private_because.empty()) << b.private_because;
    EXPECT_HAS(notes(), "belongs to user id 65534");
    struct stat st {};
    ASSERT_EQ(::stat(b.path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, ::geteuid()) << "the rebuilt entry replaces the planted one";
    const Artefact c = nhvk::jit::compile_shared_object(source(42), s, "cpu", "test", "test", reporter());
    EXPECT_TRUE(c.cached);
}

TEST_F(CacheTrust, ACacheThatOthersCouldWriteIsNotUsed) {
    if (!root()) GTEST_SKIP() << "needs root to give folders to a second user (uid 65534)";
    const CompilerSpec s = spec();
    const fs::path cache = dir_.path() / "cache", cpu = cache / "cpu";
    const std::string key = nhvk::jit::cache_key(source(7), s);
    struct Case {
        const char* what;
        std::function<void()> make;
        const char* why;
    };
    const std::vector<Case> cases = {
        {"a kind folder writable by its group", [&] { ::chmod(cpu.c_str(), 0770); }, "writable by its group"},
        {"a cache folder owned by the other user", [&] { ASSERT_EQ(::chown(cache.c_str(), other_uid, other_gid), 0); },
         "belongs to user id 65534"},
        {"a folder above the cache writable by every user (not sticky)", [&] { ::chmod(dir_.path().c_str(), 0777); },
         "writable by every user"},
    };
    for (const Case& c : cases) {
        notes_.clear();
        fs::remove_all(cache);
        fs::create_directories(cpu);
        ::chmod(cache.c_str(), 0700);
        ::chmod(cpu.c_str(), 0700);
        ::chmod(dir_.path().c_str(), 0755);
        plant(cpu / (key + ".so"), key);
        ::chown((cpu / (key + ".so")).c_str(), ::geteuid(), ::getegid()); // even an entry of this user's
        c.make();
        const Artefact a = nhvk::jit::compile_shared_object(source(7), s, "cpu", "test", "test", reporter());
        EXPECT_EQ(call_answer(a), 7) << c.what;
        EXPECT_FALSE(pwned()) << c.what;
        EXPECT_HAS(a.private_because, c.why) << c.what;
        EXPECT_EQ(notes_.size(), 1u) << c.what << ": " << notes();
    }
    ::chmod(dir_.path().c_str(), 0755);
    // a cache folder that is a symbolic link made by another user
    notes_.clear();
    fs::remove_all(cache);
    fs::create_directories(dir_.path() / "elsewhere" / "cpu");
    fs::create_directory_symlink(dir_.path() / "elsewhere", cache);
    ASSERT_EQ(::lchown(cache.c_str(), other_uid, other_gid), 0);
    const Artefact l = nhvk::jit::compile_shared_object(source(7), s, "cpu", "test", "test", reporter());
    EXPECT_EQ(call_answer(l), 7);
    EXPECT_HAS(l.private_because, "symbolic link");
}

TEST_F(CacheTrust, FoldersAndFilesAreOwnerOnlyWhateverTheUmask) {
    const mode_t old = ::umask(0);
    const Artefact a = nhvk::jit::compile_shared_object(source(3), spec(), "cpu", "test", "test", reporter());
    ::umask(old);
    EXPECT_EQ(call_answer(a), 3);
    EXPECT_EQ(mode_of(dir_.path() / "cache"), 0700u);
    EXPECT_EQ(mode_of(dir_.path() / "cache" / "cpu"), 0700u);
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir_.path() / "cache" / "cpu")) {
        ++files;
        EXPECT_EQ(mode_of(e.path()) & 077, 0u) << e.path() << " is open to others";
        EXPECT_TRUE(e.is_regular_file()) << e.path() << ": a build folder was left behind";
    }
    EXPECT_EQ(files, 3) << "the entry, its source and its lock";
}

TEST_F(CacheTrust, AGroupSharedCacheIsOptIn) {
    const struct group* g = ::getgrgid(::getegid());
    ASSERT_NE(g, nullptr);
    group_.set(std::string(g->gr_name));
    const Artefact a = nhvk::jit::compile_shared_object(source(11), spec(), "cpu", "test", "test", reporter());
    EXPECT_EQ(call_answer(a), 11);
    EXPECT_TRUE(a.private_because.empty()) << a.private_because;
    EXPECT_EQ(mode_of(dir_.path() / "cache" / "cpu"), 02770u);
    EXPECT_EQ(mode_of(a.path), 0640u);
    struct stat st {};
    ASSERT_EQ(::stat(a.path.c_str(), &st), 0);
    EXPECT_EQ(st.st_gid, ::getegid());
    if (root()) {
        // an entry written by another member of the group is trusted in this mode (and only in this mode)
        const std::string key = nhvk::jit::cache_key(source(12), spec());
        plant(dir_.path() / "cache" / "cpu" / (key + ".so"), key);
        ASSERT_EQ(::chown((dir_.path() / "cache" / "cpu" / (key + ".so")).c_str(), other_uid, ::getegid()), 0);
        ::chmod((dir_.path() / "cache" / "cpu" / (key + ".so")).c_str(), 0640);
        const Artefact b = nhvk::jit::compile_shared_object(source(12), spec(), "cpu", "test", "test", reporter());
        EXPECT_TRUE(b.cached);
        EXPECT_EQ(call_answer(b), 666) << "the group member's entry is the one loaded";
    }
    // a group that does not exist is an error naming the setting
    group_.set(std::string("nhvk-no-such-group"));
    try {
        nhvk::jit::compile_shared_object(source(13), spec(), "cpu", "test", "test", reporter());
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_HAS(std::string(e.what()), "NHVK_CACHE_GROUP");
    }
}

// ---- item 2: damaged and swapped entries ----

TEST_F(CacheTrust, DamagedEntriesAreRebuiltNeverCrashedOn) {
    const CompilerSpec s = spec();
    const Artefact first = nhvk::jit::compile_shared_object(source(5), s, "cpu", "test");
    const std::string whole = read(first.path);
    // Each damage in a child: a damaged object that reached the loader could end the process (SIGBUS), which must be
    // an outcome the test reports, not the end of the test program.
    const std::vector<std::pair<std::string, std::string>> damages = {
        {"truncated", whole.substr(0, whole.size() / 2)}, {"empty", ""}, {"a byte changed", [&] {
                                                                              std::string b = whole;
                                                                              b[b.size() / 3] ^= 0x20;
                                                                              return b;
                                                                          }()}};
    for (const auto& [what, bytes] : damages) {
        fs::remove(first.path);
        write(first.path, bytes);
        std::vector<std::string>* seen = &notes_;
        const auto out = nhvk_test::run_in_child<std::runtime_error>(
            [&] {
                nhvk::jit::Reporter r;
                r.note = [seen](const std::string& n) { seen->push_back(n); };
                const Artefact a = nhvk::jit::compile_shared_object(source(5), s, "cpu", "test", "test", r);
                if (a.cached) throw std::runtime_error("the damaged entry was used");
                if (call_answer(a) != 5) throw std::runtime_error("wrong answer");
                if (seen->size() != 1 || seen->front().find("damaged") == std::string::npos)
                    throw std::runtime_error("no note of the damage");
            },
            60);
        EXPECT_TRUE(WIFEXITED(out.status) && WEXITSTATUS(out.status) == 0)
            << what << ": status " << out.status << " " << out.message;
    }
    // the rebuilt entry serves the next run
    EXPECT_TRUE(nhvk::jit::compile_shared_object(source(5), s, "cpu", "test").cached);
}

TEST_F(CacheTrust, AnEntryOfAnotherKeyOrModelIsNotUsed) {
    const CompilerSpec s = spec();
    const Artefact one = nhvk::jit::compile_shared_object(source(1), s, "cpu", "test");
    const Artefact two = nhvk::jit::compile_shared_object(source(2), s, "cpu", "test");
    // another model's entry copied over this one's: its trailer names another key
    fs::copy_file(one.path, two.path, fs::copy_options::overwrite_existing);
    const Artefact again = nhvk::jit::compile_shared_object(source(2), s, "cpu", "test", "test", reporter());
    EXPECT_FALSE(again.cached);
    EXPECT_HAS(notes(), "another key");
    EXPECT_EQ(call_answer(again), 2);
    // the same with a forged trailer: the object's exported identity (key, model, version) still tells
    const std::string whole = read(one.path);
    const std::string body = whole.substr(0, whole.size() - nhvk::jit::entry_trailer(one.key, "").size());
    fs::remove(two.path);
    write(two.path, body + nhvk::jit::entry_trailer(two.key, body));
    ::chmod(two.path.c_str(), 0600);
    const Artefact forged = nhvk::jit::compile_shared_object(source(2), s, "cpu", "test");
    try {
        call_answer(forged);
        FAIL() << "an object that says it is another entry was used";
    } catch (const std::runtime_error& e) {
        EXPECT_HAS(std::string(e.what()), one.key);
        EXPECT_HAS(std::string(e.what()), "delete it");
    }
}

TEST_F(CacheTrust, ALinkAtAnEntrysNameIsNotFollowed) {
    const CompilerSpec s = spec();
    nhvk_test::ScopedEnv other("NHVK_CACHE_DIR", dir_.str("other"));
    const Artefact elsewhere = nhvk::jit::compile_shared_object(source(9), s, "cpu", "test");
    other.set(dir_.str("cache"));
    fs::create_directories(dir_.path() / "cache" / "cpu");
    ::chmod((dir_.path() / "cache").c_str(), 0700);
    ::chmod((dir_.path() / "cache" / "cpu").c_str(), 0700);
    const fs::path name = dir_.path() / "cache" / "cpu" / (elsewhere.key + ".so");
    fs::create_symlink(elsewhere.path, name);
    const std::string target = read(elsewhere.path);
    const Artefact a = nhvk::jit::compile_shared_object(source(9), s, "cpu", "test", "test", reporter());
    EXPECT_FALSE(a.cached);
    EXPECT_HAS(notes(), "symbolic link");
    EXPECT_EQ(call_answer(a), 9);
    EXPECT_FALSE(fs::is_symlink(name)) << "the rebuilt entry replaces the link";
    EXPECT_EQ(read(elsewhere.path), target) << "the link's target was written";
}

// ---- item 3: no name another user can predict ----

TEST_F(CacheTrust, PlantedLinksAtPredictableNamesAreNeverWritten) {
    const fs::path precious = dir_.path() / "precious.txt";
    write(precious, "precious\n");
    const std::string cxx = script(dir_.path(), "cxx_links", "", "links");
    const CompilerSpec s = spec(cxx);
    const std::string key = nhvk::jit::cache_key(source(4), s);
    fs::create_directories(dir_.path() / "cache" / "cpu");
    ::chmod((dir_.path() / "cache").c_str(), 0700);
    ::chmod((dir_.path() / "cache" / "cpu").c_str(), 0700);
    // names a compile could predictably write (the entry's key and this process's pid, a compiler version file in
    // /tmp): a link planted there must never be written through
    const std::string pid = std::to_string(::getpid());
    std::vector<fs::path> links;
    for (const std::string ext : {".cpp", ".so.tmp", ".log", ".so"})
        links.push_back(dir_.path() / "cache" / "cpu" / (key + "." + pid + ext));
    links.push_back(fs::path("/tmp") / ("nhvk-cxx-version-" + pid));
    for (const fs::path& l : links) {
        fs::remove(l);
        fs::create_symlink(precious, l);
    }
    const CompilerSpec v = spec(script(dir_.path(), "cxx_links2", "", "links2")); // a compiler not yet asked
    EXPECT_EQ(nhvk::jit::compiler_problem(v), "");
    const Artefact a = nhvk::jit::compile_shared_object(source(4), s, "cpu", "test");
    EXPECT_EQ(call_answer(a), 4);
    EXPECT_EQ(read(precious), "precious\n") << "a compile wrote through a planted link";
    for (const fs::path& l : links) fs::remove(l);
}

TEST_F(CacheTrust, AMissingOrReadOnlyTmpdirDoesNotStopACompile) {
    nhvk_test::ScopedEnv tmp("TMPDIR", dir_.str("no-such-folder"));
    const Artefact a =
        nhvk::jit::compile_shared_object(source(6), spec(script(dir_.path(), "cxx_t", "", "t")), "cpu", "test");
    EXPECT_EQ(call_answer(a), 6);
}

TEST_F(CacheTrust, AReadOnlyCacheServesItsEntriesAndOtherwiseCompilesPrivately) {
    if (!root()) GTEST_SKIP() << "needs root to run as a second user (uid 65534); root may write any folder";
    const fs::path cache = dir_.path() / "ro";
    fs::create_directories(cache);
    ASSERT_EQ(::chown(cache.c_str(), other_uid, other_gid), 0);
    ::chmod(cache.c_str(), 0700);
    const CompilerSpec s = spec();
    const auto out = nhvk_test::run_in_child<std::runtime_error>(
        [&] {
            if (::setgroups(0, nullptr) != 0 || ::setgid(other_gid) != 0 || ::setuid(other_uid) != 0)
                throw std::runtime_error("cannot become uid 65534");
            ::setenv("NHVK_CACHE_DIR", cache.c_str(), 1);
            ::setenv("TMPDIR", "/nonexistent-tmpdir", 1); // and a missing TMPDIR on the way
            const Artefact first = nhvk::jit::compile_shared_object(source(8), s, "cpu", "test");
            if (call_answer(first) != 8 || !first.private_because.empty())
                throw std::runtime_error("the first compile: " + first.private_because);
            ::chmod((cache / "cpu").c_str(), 0500);
            const Artefact again = nhvk::jit::compile_shared_object(source(8), s, "cpu", "test");
            if (!again.cached) throw std::runtime_error("a read-only cache did not serve its entry");
            std::string said;
            nhvk::jit::Reporter r;
            r.note = [&](const std::string& n) { said += n; };
            r.fill_command = "nhvk compile m --precision double --method rk4";
            const Artefact other = nhvk::jit::compile_shared_object(source(10), s, "cpu", "test", "test", r);
            if (call_answer(other) != 10) throw std::runtime_error("wrong answer");
            if (other.private_because.find("cannot write") == std::string::npos ||
                other.private_because.find("Permission denied") == std::string::npos)
                throw std::runtime_error("no reason: " + other.private_because);
            if (said.find("compiling privately") == std::string::npos) throw std::runtime_error("no note: " + said);
            // the note says what the cache lacks and the command that fills it
            if (said.find("does not hold this entry") == std::string::npos ||
                said.find("fills it with `nhvk compile m --precision double --method rk4`") == std::string::npos)
                throw std::runtime_error("the note names no fill command: " + said);
        },
        120);
    EXPECT_TRUE(WIFEXITED(out.status) && WEXITSTATUS(out.status) == 0) << out.status << " " << out.message;
}

// ---- item 15: the cache's messages ----

TEST_F(CacheTrust, AWaitForAnotherProcesssCompileIsSaid) {
    const CompilerSpec s = spec();
    const std::string key = nhvk::jit::cache_key(source(14), s);
    fs::create_directories(dir_.path() / "cache" / "cpu");
    ::chmod((dir_.path() / "cache").c_str(), 0700);
    ::chmod((dir_.path() / "cache" / "cpu").c_str(), 0700);
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t holder = ::fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {
        const int fd = ::open((dir_.path() / "cache" / "cpu" / (key + ".lock")).c_str(), O_RDWR | O_CREAT, 0600);
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        const char ok = (fd >= 0 && ::fcntl(fd, F_SETLK, &fl) == 0) ? 'y' : 'n';
        (void)!::write(ready[1], &ok, 1);
        ::sleep(1);
        ::_exit(0);
    }
    char ok = 0;
    ASSERT_EQ(::read(ready[0], &ok, 1), 1);
    ASSERT_EQ(ok, 'y');
    const Artefact a = nhvk::jit::compile_shared_object(source(14), s, "cpu", "test", "test", reporter());
    int status = 0;
    ::waitpid(holder, &status, 0);
    EXPECT_EQ(call_answer(a), 14);
    EXPECT_HAS(notes(), "waiting for another process's compile");
    EXPECT_GT(a.wait_seconds, 0.0);
}

TEST_F(CacheTrust, ACompilerWithArgumentsAndOneThatWritesNothing) {
    {
        nhvk_test::ScopedEnv cxx("NHVK_CXX", std::string("c++ -DANSWER=5"));
        CompilerSpec s = nhvk::jit::host_compiler();
        EXPECT_EQ(s.cxx, "c++");
        EXPECT_EQ(s.cxx_args, std::vector<std::string>{"-DANSWER=5"});
        s.flags = spec().flags;
        s.header_roots = spec().header_roots;
        EXPECT_EQ(nhvk::jit::compiler_problem(s), "");
        const Artefact a = nhvk::jit::compile_shared_object(
            "extern \"C\" __attribute__((visibility(\"default\"))) int answer() { return ANSWER; }\n", s, "cpu",
            "test");
        EXPECT_EQ(call_answer(a), 5);
    }
    const CompilerSpec silent = spec(script(dir_.path(), "cxx_silent", "exit 0", "silent"));
    try {
        nhvk::jit::compile_shared_object(source(15), silent, "cpu", "m.toml");
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_HAS(std::string(e.what()), "wrote no");
        EXPECT_EQ(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
    }
}

// ---- item 11: a signal during a compile ends the compiler and removes its temporaries ----

bool alive(pid_t pid) {
    // a zombie (nobody reaps it in a container without init) counts as ended
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) return false;
    const std::size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST_F(CacheTrust, SigtermDuringACompileEndsTheCompilerAndLeavesNoTemporaries) {
    const fs::path pids = dir_.path() / "pids";
    // a compiler that starts a long child (as cc1plus is c++'s) and waits for it
    const std::string cxx = script(
        dir_.path(), "cxx_slow",
        "echo $$ >> '" + pids.string() + "'; sleep 300 & echo $! >> '" + pids.string() + "'; wait; exit 1", "slow");
    std::ofstream(dir_.path() / "m.toml")
        << "name = \"slow\"\ncoordinates = [\"x\", \"y\", \"z\"]\n"
           "lagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\nconstraints = [\"z' - y*x'\"]\n";
    const pid_t nhvk = ::fork();
    ASSERT_GE(nhvk, 0);
    if (nhvk == 0) {
        ::setenv("NHVK_CXX", cxx.c_str(), 1);
        const int out = ::open((dir_.path() / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(out, 2);
        ::dup2(out, 1);
        ::execl(NHVK_BINARY, NHVK_BINARY, "inspect", (dir_.path() / "m.toml").c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // wait (up to 2 minutes: the model is derived first) for the compiler and its child to start
    std::vector<pid_t> started;
    for (int i = 0; i < 1200 && started.size() < 2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        started.clear();
        std::ifstream f(pids);
        for (pid_t p; f >> p;) started.push_back(p);
    }
    ASSERT_EQ(started.size(), 2u) << read(dir_.path() / "stderr.txt");
    ::kill(nhvk, SIGTERM);
    int status = 0;
    ASSERT_EQ(::waitpid(nhvk, &status, 0), nhvk);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
        << "status " << status << ": " << read(dir_.path() / "stderr.txt");
    for (int i = 0; i < 50 && (alive(started[0]) || alive(started[1])); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const pid_t p : started) {
        EXPECT_FALSE(alive(p)) << "process " << p << " of the compile outlived nhvk";
        if (alive(p)) ::kill(p, SIGKILL);
    }
    for (const auto& e : fs::recursive_directory_iterator(dir_.path() / "cache")) {
        const std::string n = e.path().filename().string();
        EXPECT_EQ(n.find(".build-"), std::string::npos) << e.path() << " was left behind";
        EXPECT_EQ(n.find(".tmp"), std::string::npos) << e.path() << " was left behind";
        EXPECT_NE(e.path().extension(), ".log") << e.path() << " was left behind";
    }
}

} // namespace
