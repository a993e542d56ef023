// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: run the built `nhvk` (or any command line) with stdout and stderr captured.
 */
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace nhvk_test {

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/** @brief The JSON file at `p` (a test failure and an empty object when it cannot be opened). */
inline nlohmann::json read_json(const std::filesystem::path& p) {
    std::ifstream in(p);
    if (!in) {
        ADD_FAILURE() << "cannot open " << p;
        return nlohmann::json::object();
    }
    return nlohmann::json::parse(in);
}

/** @brief The value of `j` at a dotted path as the metric table writes them (`energy_drift.relative.nh`); throws
 *         nlohmann's out_of_range where there is none. */
inline const nlohmann::json& at_dotted(const nlohmann::json& j, const std::string& dotted) {
    std::string p = "/" + dotted;
    for (char& c : p) c = c == '.' ? '/' : c;
    return j.at(nlohmann::json::json_pointer(p));
}

struct CliRun {
    int rc = -1; ///< exit code; 128 + n when ended by signal n
    std::string out, err;
};

/** @brief Runs `prefix` (a shell fragment, e.g. an `mpirun …`, may be empty) then `program ARGS...` with stdout and
 *         stderr captured into files of `io` (created), stdin from /dev/null. */
inline CliRun run_captured(const std::string& prefix, const std::string& program, const std::vector<std::string>& args,
                           const std::filesystem::path& io) {
    std::filesystem::create_directories(io);
    const std::string o = (io / "stdout.txt").string(), e = (io / "stderr.txt").string();
    std::string cmd = prefix.empty() ? shell_quote(program) : prefix + " " + shell_quote(program);
    for (const std::string& a : args) cmd += " " + shell_quote(a);
    cmd += " >" + shell_quote(o) + " 2>" + shell_quote(e) + " </dev/null";
    const int st = std::system(cmd.c_str());
    CliRun r;
    r.rc = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    r.out = read_text(o);
    r.err = read_text(e);
    return r;
}

/** @brief The statistics of a run's summary.json in `dir`: everything but how the run was made (backend, threads,
 *         timing, job, the output folder), which runs of the same configuration must agree on bit for bit. */
inline nlohmann::json run_statistics(const std::filesystem::path& dir) {
    nlohmann::json j = read_json(dir / "summary.json");
    for (const char* k : {"backend", "threads", "timing", "job"}) j.erase(k);
    if (j.contains("config")) j["config"]["run"].erase("out");
    return j;
}

/** @brief Starts `program ARGS...` as a child process and returns at once with its pid: stdin and stdout from and to
 *         /dev/null, stderr into the file `err`; the environment without the test hooks (NHVK_TEST_*) plus `env`
 *         (NAME=VALUE each); SIGINT and SIGTERM at their defaults and no signal blocked, whatever the test process
 *         does with them; `in_child`, when given, runs in the child just before the program (limits). */
inline pid_t spawn(const std::string& program, const std::vector<std::string>& args, const std::string& err,
                   const std::vector<std::string>& env, const std::function<void()>& in_child = {}) {
    std::vector<std::string> argv_s = {program};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "NHVK_TEST_", 10) != 0) env_s.emplace_back(*e);
    env_s.insert(env_s.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(fd, 2);
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (in_child) in_child();
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    return pid;
}

/** @brief A started child process (spawn) whose stderr goes to the file `err_file`. */
struct Child {
    pid_t pid = -1;
    std::string err_file;
    int status = 0;

    /** @brief Wait for the end (at most `limit_s`, then SIGKILL and a failure). */
    void wait(double limit_s = 20.0) {
        const auto t0 = std::chrono::steady_clock::now();
        for (;;) {
            if (::waitpid(pid, &status, WNOHANG) == pid) return;
            if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) {
                ::kill(pid, SIGKILL);
                ::waitpid(pid, &status, 0);
                ADD_FAILURE() << "the child process did not end within " << limit_s << " s";
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    /** @brief Whether it has ended, without reaping it (wait() still gives its status). */
    bool ended() const {
        siginfo_t info{};
        return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
    }
    bool exited() const { return WIFEXITED(status); }
    int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
    int signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
    /** @brief The exit code, or 128 + n when signal n ended it (as a shell reports it, and CliRun::rc). */
    int rc() const { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }
    std::string err() const { return read_text(err_file); }
};

} // namespace nhvk_test
