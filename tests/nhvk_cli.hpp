// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: run the built `nhvk` (or any command line) with stdout and stderr captured.
 */
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

} // namespace nhvk_test
