// SPDX-License-Identifier: MIT
#include "pipeline/run_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace nhvk {

RunLog::RunLog(const std::filesystem::path& path) : path_(path.string()) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0 && errno == ENOENT) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        created_ = fd_ >= 0;
    }
    if (fd_ < 0) throw std::runtime_error("cannot open '" + path_ + "': " + std::strerror(errno));
}

RunLog::~RunLog() {
    if (fd_ >= 0) ::close(fd_);
}

void RunLog::line(const std::string& text) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ ", &utc);
    const std::string l = stamp + text + "\n";
    // NOTE: one write per line with O_APPEND: lines of ranks or runs never interleave within a line.
    if (::write(fd_, l.data(), l.size()) != static_cast<ssize_t>(l.size()) && !warned_) {
        warned_ = true;
        std::fprintf(stderr, "nhvk: warning: cannot write '%s': %s (the run goes on)\n", path_.c_str(),
                     std::strerror(errno));
    }
}

} // namespace nhvk
