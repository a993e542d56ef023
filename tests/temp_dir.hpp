// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: a fresh folder under the system temporary directory, named after the running test and
 *         removed with everything in it at scope exit.
 */
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
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

} // namespace nhvk_test
