// SPDX-License-Identifier: MIT
/** @file
 *  @brief `run.log` in the output folder: one timestamped line per event (start with the resolved config's hash,
 *         progress every 30 s, warnings, the end or the reason it stopped). Written as it goes, so a batch job's
 *         state can be read while it runs. Every run into the folder appends its lines, so the log is the folder's
 *         history (a failed run that leaves nothing else removes a log it created).
 */
#pragma once

#include <filesystem>
#include <string>

namespace nhvk {

class RunLog {
public:
    /** @brief Opens `path` for appending (created if absent); throws std::runtime_error when it cannot. */
    explicit RunLog(const std::filesystem::path& path);
    /** @brief True when this run created the file. */
    bool created() const { return created_; }
    ~RunLog();
    RunLog(const RunLog&) = delete;
    RunLog& operator=(const RunLog&) = delete;
    /** @brief One line `YYYY-MM-DDTHH:MM:SSZ text`. A failed write is reported once on stderr (the run goes on: the
     *         log is not a result). */
    void line(const std::string& text);

private:
    int fd_ = -1;
    std::string path_;
    bool warned_ = false, created_ = false;
};

} // namespace nhvk
