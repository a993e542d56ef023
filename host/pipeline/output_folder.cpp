// SPDX-License-Identifier: MIT
#include "pipeline/output_folder.hpp"

#include "input_limits.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

namespace nhvk {

namespace fs = std::filesystem;

namespace {

/** Guards every claimed folder's list of temporaries against the signal watcher (which never lets go of it). */
std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}
std::atomic<StopRequestState*> stop_request{nullptr};

std::vector<OutputFolder*>& active_folders() {
    static std::vector<OutputFolder*> v;
    return v;
}

std::string errno_text(int e) { return std::strerror(e); }

bool all_digits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/** True for `<output>.tmp.<pid>`. */
bool is_output_temp(const std::string& rel) {
    const std::size_t at = rel.rfind(".tmp.");
    return at != std::string::npos && all_digits(rel.substr(at + 5)) && is_output_name(rel.substr(0, at));
}

/** The names under `dir` (its top level and `trajectories/`) that `keep` selects, relative, regular files only. */
template <class Keep> std::vector<std::string> outputs_in(const fs::path& dir, Keep keep) {
    std::vector<std::string> out;
    for (const char* sub : {"", "trajectories"}) {
        std::error_code ec;
        for (fs::directory_iterator it(dir / sub, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string rel = (*sub ? std::string(sub) + "/" : std::string()) + it->path().filename().string();
            std::error_code ec2;
            if (it->is_regular_file(ec2) && keep(rel)) out.push_back(rel);
        }
    }
    return out;
}

/** fsync a folder so the renames in it are durable (file systems that cannot sync a folder say EINVAL). */
int sync_folder(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    int e = ::fsync(fd) == 0 || errno == EINVAL || errno == EROFS ? 0 : errno;
    ::close(fd);
    return e;
}

/** Test hook: `NHVK_TEST_KILL_AT_COMMIT_STEP=k` kills the process with SIGKILL before the k-th change (0-based) that
 *  a commit makes to the folder, to test the state each step leaves (tests/host/test_output_folder.cpp). */
void commit_step(int& step) {
    static const char* k = std::getenv("NHVK_TEST_KILL_AT_COMMIT_STEP");
    if (k && std::atoi(k) == step) ::kill(::getpid(), SIGKILL);
    ++step;
}

} // namespace

std::string temp_name(const std::string& path) {
    return path + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
}

bool is_output_name(const std::string& rel) {
    if (rel == "summary.json" || rel == "stats.csv" || rel == "samples.csv" || rel == "partial.nhvk" ||
        rel == "summary.md" || rel == "report.html" || rel == "sweep.csv" || rel == "sweep_points.csv" ||
        rel == "stats.nc" || rel == "sweep.nc" || rel == "members.nc")
        return true;
    const std::string pre = "trajectories/trajectory_", suf = ".csv";
    return rel.size() > pre.size() + suf.size() && rel.compare(0, pre.size(), pre) == 0 &&
           rel.compare(rel.size() - suf.size(), suf.size(), suf) == 0 &&
           all_digits(rel.substr(pre.size(), rel.size() - pre.size() - suf.size()));
}

// ---- OutputFile ----------------------------------------------------------------------------------------------

/** A stream buffer on a file descriptor that keeps the errno of the first failed write. */
class OutputFile::Buffer : public std::streambuf {
public:
    explicit Buffer(int fd) : fd_(fd), data_(1 << 16) { setp(data_.data(), data_.data() + data_.size()); }
    ~Buffer() override {
        if (fd_ >= 0) ::close(fd_);
    }
    int fd() const { return fd_; }
    int error() const { return err_; }
    /** Write out the buffer; false (and `error()`) on failure. */
    bool drain() {
        if (err_ == 0) err_ = write_fully(fd_, pbase(), static_cast<std::size_t>(pptr() - pbase()));
        setp(data_.data(), data_.data() + data_.size());
        return err_ == 0;
    }
    /** Drain, fsync and close; the errno of the first failure, 0 on success. */
    int finish() {
        drain();
        int e = err_;
        if (e == 0 && ::fsync(fd_) != 0 && errno != EINVAL) e = errno;
        if (::close(fd_) != 0 && e == 0) e = errno;
        fd_ = -1;
        return err_ = e;
    }

protected:
    int_type overflow(int_type c) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    int fd_;
    std::vector<char> data_;
    int err_ = 0;
};

OutputFile::OutputFile(fs::path final_path, std::string rel)
    : final_(std::move(final_path)), rel_(std::move(rel)), tmp_(temp_name(final_.string())) {
    const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create '" + tmp_ + "': " + errno_text(errno));
    buf_ = std::make_unique<Buffer>(fd);
    os_ = std::make_unique<std::ostream>(buf_.get());
}

OutputFile::OutputFile(fs::path final_path, std::string rel, std::uint64_t keep_bytes, std::uint64_t keep_lines)
    : final_(std::move(final_path)), rel_(std::move(rel)), tmp_(final_.string() + ".resume"), resumable_(true) {
    // NOTE: a resumed file must already exist (no O_CREAT): a refused resume leaves the folder as it found it.
    const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CLOEXEC | (keep_bytes > 0 ? 0 : O_CREAT), 0644);
    if (fd < 0 && errno == ENOENT)
        throw ResumableTooShort("cannot resume: '" + tmp_ + "' is missing; the resume record counted " +
                                std::to_string(keep_bytes) + " bytes of it");
    if (fd < 0) throw std::runtime_error("cannot open '" + tmp_ + "': " + errno_text(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error("cannot resume '" + tmp_ + "': " + errno_text(e));
    }
    if (static_cast<std::uint64_t>(st.st_size) < keep_bytes) {
        ::close(fd);
        // NOTE: no errno here: the file was read fine, it is shorter than the record says
        throw ResumableTooShort("cannot resume '" + tmp_ + "': it holds " + std::to_string(st.st_size) +
                                " bytes, fewer than the " + std::to_string(keep_bytes) + " the resume record counted");
    }
    if (keep_bytes > 0 && keep_lines != binary) {
        // The kept part must be the counted lines, whole: a changed or damaged file would splice wrong rows in.
        errno = 0;
        const int rd = ::open(tmp_.c_str(), O_RDONLY | O_CLOEXEC);
        std::uint64_t lines = 0, at = 0;
        char last = 0;
        std::vector<char> block(1 << 16);
        while (rd >= 0 && at < keep_bytes) {
            const ssize_t n = ::pread(rd, block.data(), std::min<std::uint64_t>(block.size(), keep_bytes - at),
                                      static_cast<off_t>(at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            lines += static_cast<std::uint64_t>(std::count(block.data(), block.data() + n, '\n'));
            last = block[static_cast<std::size_t>(n - 1)];
            at += static_cast<std::uint64_t>(n);
        }
        const int e = rd < 0 || at < keep_bytes ? (errno ? errno : EIO) : 0;
        if (rd >= 0) ::close(rd);
        if (e != 0) {
            ::close(fd);
            throw std::runtime_error("cannot read '" + tmp_ + "': " + errno_text(e));
        }
        if (lines != keep_lines || last != '\n') {
            ::close(fd);
            throw ResumableTooShort("cannot resume '" + tmp_ + "': its first " + std::to_string(keep_bytes) +
                                    " bytes hold " + std::to_string(lines) + " lines" +
                                    (last != '\n' ? ", the last cut short" : "") + "; the resume record counted " +
                                    std::to_string(keep_lines) + " whole lines");
        }
    }
    if (::ftruncate(fd, static_cast<off_t>(keep_bytes)) != 0 ||
        ::lseek(fd, static_cast<off_t>(keep_bytes), SEEK_SET) < 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error("cannot resume '" + tmp_ + "': " + errno_text(e));
    }
    buf_ = std::make_unique<Buffer>(fd);
    os_ = std::make_unique<std::ostream>(buf_.get());
}

OutputFile::~OutputFile() = default;

std::uint64_t OutputFile::sync_size() {
    os_->flush();
    buf_->drain();
    check();
    if (::fsync(buf_->fd()) != 0 && errno != EINVAL)
        throw std::runtime_error("cannot sync '" + tmp_ + "': " + errno_text(errno));
    const off_t at = ::lseek(buf_->fd(), 0, SEEK_CUR);
    if (at < 0) throw std::runtime_error("cannot tell the size of '" + tmp_ + "': " + errno_text(errno));
    return static_cast<std::uint64_t>(at);
}

std::ostream& OutputFile::stream() { return *os_; }

void OutputFile::check() {
    if (buf_->error() != 0)
        throw std::runtime_error("cannot write '" + final_.string() + "' (temporary '" + tmp_ +
                                 "'): " + errno_text(buf_->error()));
}

void OutputFile::close() {
    if (closed_) return;
    closed_ = true;
    os_->flush();
    buf_->finish();
    check();
}

// ---- OutputFolder --------------------------------------------------------------------------------------------

OutputFolder::OutputFolder(const std::string& dir, const std::vector<std::string>& writes, const std::string& key)
    : dir_(dir), key_(key) {
    std::error_code ec;
    const bool existed = fs::exists(dir_, ec);
    if (!existed) created_ = fs::create_directories(dir_, ec);
    if (ec || !fs::is_directory(dir_))
        throw std::runtime_error(key + ": cannot create output folder '" + dir +
                                 "': " + (ec ? ec.message() : errno_text(ENOTDIR)));
    try {
        // Claim: open the lock file, lock it, and make sure it is still the file of that name (a run that ended in
        // between removes it after our open; then try again on the new one).
        const std::string lock = (dir_ / lock_file_name).string();
        for (;;) {
            const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0)
                throw std::runtime_error(key + ": output folder '" + dir + "' is not writable: cannot create '" + lock +
                                         "': " + errno_text(errno));
            if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
                const int e = errno;
                char pid[32] = {0};
                const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
                std::string holder = n > 0 ? std::string(pid, static_cast<std::size_t>(n)) : std::string("?");
                holder.erase(std::remove(holder.begin(), holder.end(), '\n'), holder.end());
                ::close(fd);
                if (e == EWOULDBLOCK)
                    throw FolderBusy(key + ": output folder '" + dir + "' is in use by another nhvk run (pid " +
                                     holder + ", lock file '" + lock +
                                     "'); wait for that run to end or choose another folder");
                throw std::runtime_error(key + ": cannot lock '" + lock + "': " + errno_text(e));
            }
            struct stat a {
            }, b{};
            if (::fstat(fd, &a) == 0 && ::stat(lock.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
                lock_fd_ = fd;
                break;
            }
            ::close(fd);
        }
        {
            std::lock_guard<std::mutex> g(registry_mutex());
            active_folders().push_back(this);
        }
        const std::string pid = std::to_string(static_cast<long long>(::getpid())) + "\n";
        if (::ftruncate(lock_fd_, 0) != 0 ||
            ::pwrite(lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
            throw std::runtime_error(key + ": cannot write the lock file '" + lock + "': " + errno_text(errno));
        // Holding the lock, no live run writes here: every temporary is a dead process's leftover.
        for (const std::string& rel : outputs_in(dir_, is_output_temp)) fs::remove(dir_ / rel, ec);
        for (const std::string& w : writes) {
            const bool folder = !w.empty() && w.back() == '/';
            const fs::path p = dir_ / (folder ? w.substr(0, w.size() - 1) : w);
            const fs::file_status st = folder ? fs::status(p, ec) : fs::symlink_status(p, ec);
            if (folder && fs::exists(st) && !fs::is_directory(st))
                throw std::runtime_error("cannot write into '" + p.string() + "': " + errno_text(ENOTDIR) +
                                         " (a file has the name of the output folder; remove or rename it)");
            if (!folder && fs::is_directory(st))
                throw std::runtime_error("cannot write '" + p.string() + "': " + errno_text(EISDIR) +
                                         " (a folder has the name of an output; remove or rename it)");
        }
    } catch (...) {
        std::lock_guard<std::mutex> g(registry_mutex());
        abandon();
        auto& v = active_folders();
        v.erase(std::remove(v.begin(), v.end(), this), v.end());
        throw;
    }
}

OutputFolder::~OutputFolder() {
    std::lock_guard<std::mutex> g(registry_mutex());
    abandon();
    auto& v = active_folders();
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
}

OutputFile& OutputFolder::create(const std::string& rel) {
    std::lock_guard<std::mutex> g(registry_mutex());
    if (rel.rfind("trajectories/", 0) == 0 && !fs::is_directory(dir_ / "trajectories")) {
        std::error_code ec;
        fs::create_directory(dir_ / "trajectories", ec);
        if (ec) throw std::runtime_error("cannot create '" + (dir_ / "trajectories").string() + "': " + ec.message());
        trajectories_created_ = true;
    }
    files_.reserve(files_.size() + 1);
    files_.push_back(std::make_unique<OutputFile>(dir_ / rel, rel));
    return *files_.back();
}

OutputFile& OutputFolder::create_resumable(const std::string& rel, std::uint64_t keep_bytes, std::uint64_t keep_lines) {
    std::lock_guard<std::mutex> g(registry_mutex());
    files_.reserve(files_.size() + 1);
    files_.push_back(std::make_unique<OutputFile>(dir_ / rel, rel, keep_bytes, keep_lines));
    return *files_.back();
}

std::vector<std::string> OutputFolder::commit() {
    for (auto& f : files_) f->close();
    {
        // Summary last (under the lock: the signal watcher reads the list).
        std::lock_guard<std::mutex> g(registry_mutex());
        std::stable_partition(files_.begin(), files_.end(), [](const auto& f) { return f->rel() != "summary.json"; });
    }
    // Every name checked before the first change, so a folder in the way keeps the earlier run.
    for (auto& f : files_) {
        std::error_code ec;
        if (fs::is_directory(fs::symlink_status(f->final_path(), ec)))
            throw std::runtime_error("cannot write '" + f->final_path().string() + "': " + errno_text(EISDIR) +
                                     " (a folder has the name of an output; remove or rename it); the folder keeps "
                                     "its earlier contents");
    }
    std::lock_guard<std::mutex> g(registry_mutex());
    int step = 0;
    auto fail = [&](const std::string& what, int e) {
        throw std::runtime_error(what + ": " + errno_text(e) + "; the output folder '" + dir_.string() +
                                 "' now holds no complete run (its summary.json was removed first)");
    };
    const fs::path summary = dir_ / "summary.json";
    commit_step(step);
    if (::unlink(summary.c_str()) != 0 && errno != ENOENT)
        throw std::runtime_error("cannot replace '" + summary.string() + "': " + errno_text(errno) +
                                 "; the folder keeps its earlier contents");
    if (const int e = sync_folder(dir_)) fail("cannot sync '" + dir_.string() + "'", e);
    std::set<std::string> written;
    for (auto& f : files_) written.insert(f->rel());
    std::vector<std::string> removed;
    for (const std::string& rel : outputs_in(dir_, is_output_name)) {
        if (written.count(rel)) continue;
        removed.push_back(rel);
        commit_step(step);
        if (::unlink((dir_ / rel).c_str()) != 0 && errno != ENOENT)
            fail("cannot remove '" + (dir_ / rel).string() + "' of the earlier run", errno);
    }
    for (auto& f : files_) {
        if (f->rel() == "summary.json") {
            if (const int e = sync_folder(dir_ / "trajectories"); e && e != ENOENT)
                fail("cannot sync '" + (dir_ / "trajectories").string() + "'", e);
            if (const int e = sync_folder(dir_)) fail("cannot sync '" + dir_.string() + "'", e);
        }
        commit_step(step);
        // NOTE: a resumable output stays under its `.resume` name until summary.json is in place: a run killed
        // before that still has what its resume record counted. It gets its final name through a hard link of its
        // own (renamed over the final name); a file system without hard links renames it, as before.
        std::string from = f->temp_path();
        if (f->resumable()) {
            const std::string link = temp_name(f->final_path().string());
            if (::link(from.c_str(), link.c_str()) == 0) {
                from = link;
                commit_step(step);
            } else if (errno != EPERM && errno != EOPNOTSUPP && errno != EXDEV) {
                fail("cannot link '" + from + "' to '" + link + "'", errno);
            }
        }
        if (::rename(from.c_str(), f->final_path().c_str()) != 0)
            fail("cannot rename '" + from + "' to '" + f->final_path().string() + "'", errno);
    }
    if (const int e = sync_folder(dir_)) fail("cannot sync '" + dir_.string() + "'", e);
    // The run is complete from here on. The resume records go before the resumable temporaries: a record left
    // alone would count bytes that are no longer there, a temporary left alone is started anew.
    for (const fs::path& p : remove_after_commit_) {
        commit_step(step);
        ::unlink(p.c_str());
    }
    for (auto& f : files_)
        if (f->resumable()) {
            commit_step(step);
            ::unlink(f->temp_path().c_str());
        }
    files_.clear();
    remove_after_commit_.clear();
    if (const int e = sync_folder(dir_)) fail("cannot sync '" + dir_.string() + "'", e);
    // An earlier run's trajectories/ that this run emptied goes too (rmdir: only when empty).
    ::rmdir((dir_ / "trajectories").c_str());
    created_ = trajectories_created_ = false;
    release();
    return removed;
}

std::string removed_note(const fs::path& dir, const std::vector<std::string>& removed, const std::string& what) {
    if (removed.empty()) return {};
    std::string list;
    std::size_t trajectories = 0;
    for (const std::string& rel : removed) {
        if (rel.rfind("trajectories/", 0) == 0) {
            ++trajectories;
            continue;
        }
        list += (list.empty() ? "" : ", ") + rel;
    }
    if (trajectories > 0)
        list += (list.empty() ? "" : ", ") + std::string("trajectories/ (") + std::to_string(trajectories) +
                (trajectories > 1 ? " files)" : " file)");
    return "nhvk: note: removed " + what + " from '" + dir.string() + "': " + list;
}

void OutputFolder::remove_after_commit(const fs::path& path) { remove_after_commit_.push_back(path); }

void OutputFolder::abandon() noexcept {
    if (released_) return;
    for (auto& f : files_)
        if (!f->resumable()) // NOTE: kept for `--resume`; a run without it starts the file anew
            ::unlink(f->temp_path().c_str());
    if (trajectories_created_) ::rmdir((dir_ / "trajectories").c_str());
    release();
    if (created_) ::rmdir(dir_.c_str()); // only if empty
}

void OutputFolder::release() noexcept {
    if (lock_fd_ >= 0) {
        ::unlink((dir_ / lock_file_name).c_str()); // under the lock: a waiting claim then retries on a new file
        ::close(lock_fd_);
        lock_fd_ = -1;
    }
    released_ = true;
}

namespace {

/** The nearest existing folder at or above `p` (lexically; "." for a relative path with none). */
fs::path nearest_folder(const fs::path& p) {
    std::error_code ec;
    fs::path at = p;
    while (!at.empty() && !fs::is_directory(at, ec)) at = at.parent_path();
    return at.empty() ? (p.is_absolute() ? fs::path("/") : fs::path(".")) : at;
}

/** Why `path` (as given) cannot be opened once `extra` more bytes are appended to it: a component longer than the
 *  file system's NAME_MAX, or the whole past PATH_MAX. Empty when it can. */
std::string path_length_problem(const std::string& path, std::size_t extra) {
    const fs::path p(path);
    const long name_max = ::pathconf(nearest_folder(p).c_str(), _PC_NAME_MAX);
    const std::size_t limit = name_max > 0 ? static_cast<std::size_t>(name_max) : NAME_MAX;
    for (const fs::path& part : p) {
        const std::string name = part.string();
        if (name.size() > limit)
            return "its component '" + clip(name, 60) + "' is " + std::to_string(name.size()) +
                   " bytes long, more than the " + std::to_string(limit) +
                   " a file name may have here (NAME_MAX); choose a shorter name";
    }
    if (path.size() + extra >= PATH_MAX)
        return "it is " + std::to_string(path.size()) + " bytes long" +
               (extra ? ", and with the names written under it (up to " + std::to_string(extra) + " bytes more)"
                      : std::string()) +
               " passes the system's limit on a path of " + std::to_string(PATH_MAX) +
               " bytes (PATH_MAX); choose a shorter path";
    return {};
}

/** True for a name (relative, `/`-separated) that a run writes in its folder or removes from it, besides its
 *  outputs: its log, its resume records and the lock. */
bool is_run_file(const std::string& rel) {
    const bool record = rel.rfind("resume", 0) == 0 && rel.size() > 11 && rel.compare(rel.size() - 5, 5, ".nhvk") == 0;
    return is_output_name(rel) || rel == "run.log" || rel == lock_file_name || record ||
           rel.find(".nhvk.tmp.") != std::string::npos || rel.find(".resume") != std::string::npos;
}

} // namespace

std::string output_folder_problem(const std::string& dir, const std::string& key) {
    const std::string what = key + ": cannot create output folder '" + clip(dir) + "': ";
    if (const std::string p = path_length_problem(dir, longest_run_file_name + 1); !p.empty()) return what + p;
    std::error_code ec;
    const fs::path d(dir);
    if (fs::exists(d, ec) && !fs::is_directory(d, ec))
        return what + "it is a file (" + errno_text(ENOTDIR) + "); choose a folder for the outputs";
    const fs::path at = nearest_folder(d);
    if (::access(at.c_str(), W_OK | X_OK) != 0)
        return what + (at == d ? std::string("it") : "the folder '" + clip(at.string()) + "' above it") +
               " is not writable (" + errno_text(errno) + ")";
    return {};
}

std::string output_folder_input_problem(const std::string& dir, const std::string& key,
                                        const std::vector<std::string>& inputs) {
    // NOTE: a run replaces its outputs and removes an earlier run's: an input of the run must not be one of them
    std::error_code ec;
    const fs::path full = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    for (const std::string& in : inputs) {
        std::error_code e;
        const fs::path f = fs::weakly_canonical(fs::absolute(in, e), e);
        const auto rest = std::mismatch(full.begin(), full.end(), f.begin(), f.end());
        if (rest.first != full.end() || rest.second == f.end()) continue;
        const std::string rel = f.lexically_relative(full).generic_string();
        if (is_run_file(rel))
            return key + ": the output folder '" + clip(dir) + "' holds '" + clip(rel) + "', an input of this " +
                   "run, under a name the run writes or removes; move that file or choose another folder";
    }
    return {};
}

std::string side_file_problem(const std::string& path, const std::vector<std::string>& inputs,
                              const std::vector<std::string>& folders) {
    std::error_code ec;
    const fs::path p(path);
    // NOTE: the file is written as `<path>.tmp.<pid>`, then renamed
    if (const std::string why = path_length_problem(path, temp_name("").size()); !why.empty())
        return "'" + clip(path) + "': " + why;
    const fs::path full = fs::weakly_canonical(fs::absolute(p, ec), ec);
    for (const std::string& in : inputs) {
        std::error_code e1, e2;
        const bool same = fs::exists(p, e1) && fs::exists(in, e2) ? fs::equivalent(p, in, e1)
                                                                  : full == fs::weakly_canonical(fs::absolute(in), e2);
        if (same) return "'" + clip(path) + "' is '" + clip(in) + "', an input of this command; choose another file";
    }
    for (const std::string& d : folders) {
        std::error_code e;
        const fs::path dir = fs::weakly_canonical(fs::absolute(d, e), e);
        const auto rest = std::mismatch(dir.begin(), dir.end(), full.begin(), full.end());
        if (rest.first == dir.end())
            return "'" + clip(path) + "' is or lies inside '" + clip(d) +
                   "', a folder whose files this command reads or writes; choose a file outside it";
    }
    if (fs::is_directory(p, ec)) return "'" + clip(path) + "' is a folder; expected a file name";
    const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    if (!fs::is_directory(parent, ec))
        return "the folder '" + clip(parent.string()) + "' of '" + clip(path) + "' does not exist";
    // NOTE: a probe file, not access(): the file is written as a temporary beside it and renamed, and a probe also
    // tells a read-only mount or a file system that takes no new files, whoever runs the command.
    const std::string probe = temp_name(path);
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return "cannot write into the folder '" + clip(parent.string()) + "' of '" + clip(path) +
               "': " + errno_text(errno);
    ::close(fd);
    ::unlink(probe.c_str());
    return {};
}

void set_stop_request(StopRequestState* state) { stop_request.store(state); }

int write_fully(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return 0;
}

namespace {
std::atomic<void (*)()> signal_exit_actions[8] = {};
} // namespace

void at_signal_exit(void (*fn)()) {
    for (auto& slot : signal_exit_actions) {
        void (*none)() = nullptr;
        if (slot.load() == fn || slot.compare_exchange_strong(none, fn)) return;
    }
    throw std::logic_error("at_signal_exit: more than 8 actions");
}

// ---- signals -------------------------------------------------------------------------------------------------

void clean_up_outputs_on_signals() {
    static std::once_flag once;
    std::call_once(once, [] {
        sigset_t set;
        sigemptyset(&set);
        int watched = 0;
        for (int s : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction old {};
            // NOTE: a signal the process was started ignoring (nohup, a background job) stays ignored.
            if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) {
                sigaddset(&set, s);
                ++watched;
            }
        }
        if (watched == 0) return;
        pthread_sigmask(SIG_BLOCK, &set, nullptr); // inherited by every thread started from here on
        std::thread([set] {
            int sig = 0;
            for (;;) {
                while (sigwait(&set, &sig) != 0) {}
                StopRequestState* stop = stop_request.load();
                if (!stop || stop->signal.load() != 0) break;
                // NOTE: this thread alone writes the state, and the signal last: whoever sees it sees the rest
                stop->finished_at_signal.store(stop->chunks_finished.load());
                stop->signal_steady_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now().time_since_epoch())
                                                 .count());
                stop->signal.store(sig);
                const std::string msg =
                    std::string(::isatty(2) ? "\n" : "") + "nhvk: " +
                    (sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                                      : "SIGHUP") +
                    ": stopping once the chunk in flight is done and writing a resume record that holds every "
                    "finished member (send it again to stop at once)\n";
                if (::write(2, msg.data(), msg.size()) < 0) {
                    // the stop itself is the report
                }
            }
            registry_mutex().lock(); // kept: no temporary can appear or be renamed after the clean-up
            bool any = false;
            for (OutputFolder* f : active_folders()) {
                f->abandon();
                any = true;
            }
            for (auto& slot : signal_exit_actions)
                if (void (*fn)() = slot.load()) fn();
            const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
            const std::string msg = std::string(::isatty(2) ? "\n" : "") + "nhvk: interrupted by " + name +
                                    (any ? ": removed this run's temporary files and lock; the output folder holds its "
                                           "earlier complete run, if any\n"
                                         : "\n");
            if (::write(2, msg.data(), msg.size()) < 0) {
                // nothing more to do: ending by the signal below is the report
            }
            ::signal(sig, SIG_DFL);
            sigset_t one;
            sigemptyset(&one);
            sigaddset(&one, sig);
            pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
            ::raise(sig); // ends the process as the signal would have
            ::_exit(128 + sig);
        }).detach();
    });
}

} // namespace nhvk
