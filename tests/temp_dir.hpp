// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: a fresh folder under the system temporary directory, named after the running test and
 *         removed with everything in it at scope exit; an environment variable set for a scope.
 */
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace nhvk_test {

class TempDir {
public:
    explicit TempDir(const std::string& prefix = "nhvk_test_") {
        static std::atomic<int> counter{0};
        const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = prefix;
        if (info) name += std::string(info->test_suite_name()) + "_" + info->name();
        for (char& c : name)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
        name += "_" + std::to_string(static_cast<long long>(::getpid())) + "_" + std::to_string(counter++);
        path_ = std::filesystem::temp_directory_path() / name;
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string str(const std::string& sub) const { return (path_ / sub).string(); }

private:
    std::filesystem::path path_;
};

/** @brief Sets (or, with std::nullopt, unsets) an environment variable, and puts back its earlier value (or its
 *         absence) at scope exit, so a test does not change what later tests of the same process see. */
class ScopedEnv {
public:
    ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
        if (const char* old = std::getenv(name_.c_str())) old_ = old;
        set(value);
    }
    ~ScopedEnv() { set(old_); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    void set(const std::optional<std::string>& value) const {
        if (value) setenv(name_.c_str(), value->c_str(), 1);
        else unsetenv(name_.c_str());
    }

private:
    std::string name_;
    std::optional<std::string> old_;
};

} // namespace nhvk_test
