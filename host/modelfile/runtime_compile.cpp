// SPDX-License-Identifier: MIT
#include "modelfile/runtime_compile.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "nhvk_jit_config.hpp"
#include "nhvk_version.hpp"

extern char** environ;

namespace nhvk::jit {

namespace fs = std::filesystem;

namespace {

/** @brief 128 bits from two independent 64-bit hashes (FNV-1a and a multiply–xorshift mix): not cryptographic, but
 *         a collision of two cache entries of one user is out of reach. Trust does not rest on it: only the user (or
 *         the opted-in group) can write the entries it tells apart. */
class Hash {
public:
    void add(const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i) {
            a_ = (a_ ^ p[i]) * 0x100000001b3ull;
            b_ = (b_ + p[i] + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
            b_ ^= b_ >> 29;
        }
    }
    /// Every part is length-prefixed, so ("ab", "c") and ("a", "bc") differ.
    void add(const std::string& s) {
        const std::uint64_t n = s.size();
        add(&n, sizeof n);
        add(s.data(), s.size());
    }
    std::string hex() const {
        char buf[33];
        std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a_),
                      static_cast<unsigned long long>(b_));
        return buf;
    }

private:
    std::uint64_t a_ = 0xcbf29ce484222325ull, b_ = 0x2545f4914f6cdd1dull;
};

std::string errno_text(int e) { return std::strerror(e); }

// ---- the compiles in flight, for a signal that ends the process -------------------------------------------------

/// Process groups of running compilers and private folders, as plain arrays a signal's clean-up can read while the
/// thread that owns them is blocked in read() or waitpid().
struct InFlight {
    std::mutex m;
    std::map<int, pid_t> groups; // id -> process group of a running compiler
    std::map<int, std::string> folders;
    int next = 0;
};
InFlight& in_flight() {
    static InFlight f;
    return f;
}
/// Set by `abandon_compiles`: the process is ending by a signal, and a compile it killed is no error to report.
std::atomic<bool> abandoning{false};
int track_folder(const std::string& dir) {
    InFlight& f = in_flight();
    std::lock_guard<std::mutex> lock(f.m);
    f.folders[++f.next] = dir;
    return f.next;
}
void untrack_folder(int id) {
    InFlight& f = in_flight();
    std::lock_guard<std::mutex> lock(f.m);
    f.folders.erase(id);
}

/** @brief A folder made with mkdtemp (0700, a name nobody can predict), removed with its contents at scope exit unless
 *         `keep()` (a failed compile's source and log, named in the message), and by `abandon_compiles`. */
class PrivateFolder {
public:
    PrivateFolder(const std::string& parent, const std::string& prefix) {
        std::string templ = (fs::path(parent) / (prefix + "XXXXXX")).string();
        if (!::mkdtemp(templ.data())) {
            const int e = errno;
            throw std::runtime_error("cannot create a private folder in '" + parent + "': " + errno_text(e));
        }
        path_ = templ;
        id_ = track_folder(path_);
    }
    ~PrivateFolder() {
        untrack_folder(id_);
        if (keep_) return;
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    PrivateFolder(const PrivateFolder&) = delete;
    PrivateFolder& operator=(const PrivateFolder&) = delete;
    const std::string& path() const { return path_; }
    void keep() { keep_ = true; }

private:
    std::string path_;
    int id_ = 0;
    bool keep_ = false;
};

/// What a command printed and how it ended.
struct Outcome {
    int rc = -1; ///< the exit status; -1 when it did not start or ended by a signal
    std::string output;
    int start_errno = 0; ///< why it did not start (0: it started)
};

/** @brief Run argv, its stdout and stderr read through a pipe (no file another user could plant), in its own process
 *         group (so that a signal's clean-up ends the compiler's children too), with `tmpdir` as its TMPDIR when
 *         given (the compiler's own temporaries then stay in the private folder). */
Outcome run_command(const std::vector<std::string>& argv, const std::string& tmpdir = {}) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_store;
    for (char** e = environ; e && *e; ++e)
        if (tmpdir.empty() || std::strncmp(*e, "TMPDIR=", 7) != 0) env_store.emplace_back(*e);
    if (!tmpdir.empty()) env_store.push_back("TMPDIR=" + tmpdir);
    std::vector<char*> envp;
    for (std::string& e : env_store) envp.push_back(e.data());
    envp.push_back(nullptr);
    int fds[2];
    Outcome out;
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        out.start_errno = errno;
        return out;
    }
    int report[2]; // the child's exec errno, or EOF when exec succeeded
    if (::pipe2(report, O_CLOEXEC) != 0) {
        out.start_errno = errno;
        ::close(fds[0]), ::close(fds[1]);
        return out;
    }
    InFlight& f = in_flight();
    std::unique_lock<std::mutex> lock(f.m); // a signal's clean-up sees the group as soon as it exists
    const pid_t pid = ::fork();
    if (pid == 0) {
        // NOTE: only async-signal-safe calls between fork and exec (the parent may have other threads).
        ::setpgid(0, 0);
        // NOTE: the CLI blocks SIGINT/SIGTERM/SIGHUP in every thread for its signal thread; a blocked mask survives
        // exec, and the compiler must stay killable.
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL); // a parent killed by SIGKILL leaves no compiler behind
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        const int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, 0);
        ::execvpe(args[0], args.data(), envp.data());
        const int e = errno;
        if (::write(report[1], &e, sizeof e) < 0) {
            // nothing more can be said from here
        }
        ::_exit(127);
    }
    if (pid < 0) {
        out.start_errno = errno;
        lock.unlock();
        ::close(fds[0]), ::close(fds[1]), ::close(report[0]), ::close(report[1]);
        return out;
    }
    ::setpgid(pid, pid); // also here: whichever of parent and child runs first, the group exists before a kill
    const int id = ++f.next;
    f.groups[id] = pid;
    lock.unlock();
    ::close(fds[1]);
    ::close(report[1]);
    char buf[65536];
    for (;;) {
        const ssize_t r = ::read(fds[0], buf, sizeof buf);
        if (r > 0) {
            // NOTE: a compiler gone wild must not exhaust memory: the first MiB is plenty for a report.
            if (out.output.size() < (1u << 20)) out.output.append(buf, static_cast<std::size_t>(r));
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        break;
    }
    ::close(fds[0]);
    int e = 0;
    if (::read(report[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e)) out.start_errno = e;
    ::close(report[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    // NOTE: the signal thread killed this compiler and is about to end the process by the signal: this thread waits
    // for that rather than report a failed compile (and exit with another status) first.
    while (abandoning.load()) ::pause();
    {
        std::lock_guard<std::mutex> g(f.m);
        f.groups.erase(id);
    }
    if (out.start_errno == 0 && WIFEXITED(status)) out.rc = WEXITSTATUS(status);
    return out;
}

std::string command_text(const CompilerSpec& spec) {
    std::string s = spec.cxx;
    for (const std::string& a : spec.cxx_args) s += " " + a;
    return s;
}

/// A compiler whose `--version` fails: `brief` says which and why (what `compiler_problem` returns), `what()` also
/// what to do.
struct CompilerDoesNotRun : std::runtime_error {
    explicit CompilerDoesNotRun(const std::string& b)
        : std::runtime_error(b + ": model files are compiled at run time; set NHVK_CXX to a working compiler (the one "
                                 "nhvk was built with: " NHVK_JIT_CXX ")"),
          brief(b) {}
    std::string brief;
};

std::string compiler_version(const CompilerSpec& spec) {
    static std::mutex m;
    static std::map<std::vector<std::string>, std::string> known;
    std::vector<std::string> argv{spec.cxx};
    argv.insert(argv.end(), spec.cxx_args.begin(), spec.cxx_args.end());
    std::lock_guard<std::mutex> lock(m);
    if (const auto it = known.find(argv); it != known.end()) return it->second;
    std::vector<std::string> cmd = argv;
    cmd.push_back("--version");
    const Outcome o = run_command(cmd);
    if (o.rc != 0) {
        std::string why;
        if (o.start_errno != 0)
            why =
                "cannot start '" + spec.cxx + "': " + errno_text(o.start_errno) +
                (spec.cxx.find(' ') != std::string::npos ? " (a program name with a blank: NHVK_CXX takes the program "
                                                           "and its arguments separated by blanks)"
                                                         : "");
        else
            why = "`" + command_text(spec) + " --version` " +
                  (o.rc < 0 ? std::string("ended by a signal") : "exited " + std::to_string(o.rc));
        throw CompilerDoesNotRun("the C++ compiler '" + command_text(spec) + "' does not run (" + why + ")");
    }
    known[argv] = o.output;
    return o.output;
}

/// The hash of every header under the roots (relative path and bytes): the engine a unit includes. Read at every
/// call (a few milliseconds for nhvk's ~150 headers; one call per model and process), so an edit is never missed.
std::string headers_hash_impl(const std::vector<std::string>& roots) {
    Hash h;
    for (const std::string& root : roots) {
        std::vector<fs::path> files;
        std::error_code ec;
        for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string ext = it->path().extension().string();
            if (it->is_regular_file() && (ext == ".hpp" || ext == ".h" || ext == ".cuh")) files.push_back(it->path());
        }
        std::sort(files.begin(), files.end());
        h.add(root);
        for (const fs::path& f : files) {
            h.add(fs::relative(f, root).string());
            h.add(read_file(f.string()));
        }
    }
    return h.hex();
}

// ---- trust --------------------------------------------------------------------------------------------------

/// `NHVK_CACHE_GROUP`: the Unix group whose members may share one cache.
struct TrustedGroup {
    bool on = false;
    gid_t gid = 0;
    std::string name;
};

TrustedGroup trusted_group() {
    TrustedGroup t;
    const char* g = std::getenv("NHVK_CACHE_GROUP");
    if (!g || !*g) return t;
    const struct group* gr = ::getgrnam(g);
    if (!gr)
        throw std::runtime_error(std::string("NHVK_CACHE_GROUP: no Unix group named '") + g +
                                 "' (the group whose members share the model cache)");
    t.on = true;
    t.gid = gr->gr_gid;
    t.name = g;
    bool member = ::getegid() == t.gid;
    const int n = ::getgroups(0, nullptr);
    std::vector<gid_t> mine(static_cast<std::size_t>(std::max(n, 0)));
    if (n > 0 && ::getgroups(n, mine.data()) == n) member = member || std::count(mine.begin(), mine.end(), t.gid) > 0;
    if (!member) throw std::runtime_error("NHVK_CACHE_GROUP=" + t.name + ": this user is not a member of that group");
    return t;
}

std::string owner_text(uid_t uid) { return "user id " + std::to_string(uid); }

/** @brief Why `st` (of `path`) may not be trusted, or "". Trusted: owned by this user (or of the opted-in group),
 *         writable by nobody else (by the group only when it is the opted-in one); a folder above the cache may also
 *         be root's, and shared when sticky (/tmp). */
std::string distrust(const struct stat& st, const std::string& path, const TrustedGroup& g, bool ancestor) {
    const uid_t me = ::geteuid();
    const bool group_ok = g.on && st.st_gid == g.gid;
    if (S_ISLNK(st.st_mode)) return "'" + path + "' is a symbolic link";
    if (st.st_uid != me && !(ancestor && st.st_uid == 0) && !group_ok)
        return "'" + path + "' belongs to " + owner_text(st.st_uid) + ", not to this user (" + owner_text(me) + ")";
    const bool sticky = (st.st_mode & S_ISVTX) != 0;
    if ((st.st_mode & S_IWOTH) && !(ancestor && sticky)) return "'" + path + "' is writable by every user";
    if ((st.st_mode & S_IWGRP) && !group_ok && !(ancestor && sticky))
        return "'" + path + "' is writable by its group" +
               (g.on ? " (" + std::to_string(st.st_gid) + "), not NHVK_CACHE_GROUP's"
                     : std::string(" (see NHVK_CACHE_GROUP)"));
    return {};
}

mode_t folder_mode(const TrustedGroup& g) { return g.on ? 02770 : 0700; }
mode_t file_mode(const TrustedGroup& g) { return g.on ? 0640 : 0600; }

/** @brief Make the folders of `dir` that are missing, each with `mode` exactly (chmod after mkdir: the umask may
 *         clear bits but never adds them, and an owner-only folder must not depend on it). */
void make_folders(const fs::path& dir, const TrustedGroup& g) {
    std::vector<fs::path> missing;
    for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) == 0) break;
        missing.push_back(p);
        if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
            const int e = errno;
            throw std::runtime_error("cannot create the cache folder '" + it->string() + "': " + errno_text(e));
        }
        if (g.on && ::chown(it->c_str(), static_cast<uid_t>(-1), g.gid) != 0) {
            const int e = errno;
            throw std::runtime_error("cannot give the cache folder '" + it->string() + "' to the group " + g.name +
                                     ": " + errno_text(e));
        }
        ::chmod(it->c_str(), folder_mode(g));
    }
}

std::string distrust_impl(const fs::path& root, const std::string& kind, const TrustedGroup& g) {
    std::error_code ec;
    const fs::path abs = fs::absolute(root, ec);
    for (const fs::path& p : {abs / kind, abs}) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) continue; // not there yet: made private by make_folders
        if (S_ISLNK(st.st_mode) && p == abs) {
            // NOTE: the cache folder itself may be a link the user made (~/.cache to a scratch disk): judged by its
            // owner and by what it points to.
            if (const std::string w = distrust(st, p.string(), g, true); !w.empty() && st.st_uid != ::geteuid())
                return w;
            if (::stat(p.c_str(), &st) != 0) continue;
        }
        if (!S_ISDIR(st.st_mode)) return "'" + p.string() + "' is not a folder";
        if (std::string w = distrust(st, p.string(), g, false); !w.empty()) return w;
    }
    // The folders above: another user who can rename one of them can put a folder of their own in its place.
    const fs::path real = fs::weakly_canonical(abs, ec);
    for (fs::path p = real.parent_path(); !p.empty(); p = p.parent_path()) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0)
            if (std::string w = distrust(st, p.string(), g, true); !w.empty()) return w;
        if (p == p.parent_path()) break;
    }
    return {};
}

// ---- entries: their trailer ---------------------------------------------------------------------------------

// NOTE: a fixed-size trailer after the entry's bytes: "NHVK-ENTRY-1 ", the key (32 hex), " ", the hash of the bytes
// before it (32 hex), " ", their size (16 hex), "\n". A shared object ignores bytes past its last section, so the
// object loads as it is; a truncated, empty or other entry has no matching trailer.
constexpr const char* trailer_magic = "NHVK-ENTRY-1 ";
constexpr std::size_t trailer_size = 13 + 32 + 1 + 32 + 1 + 16 + 1;

std::string trailer(const std::string& key, const std::string& bytes) {
    Hash h;
    h.add(bytes);
    char size[17];
    std::snprintf(size, sizeof size, "%016llx", static_cast<unsigned long long>(bytes.size()));
    return std::string(trailer_magic) + key + " " + h.hex() + " " + size + "\n";
}

/// Why `bytes` are not the entry `key`, or "".
std::string damage(const std::string& bytes, const std::string& key) {
    if (bytes.empty()) return "it is empty";
    if (bytes.size() < trailer_size || bytes.compare(bytes.size() - trailer_size, 13, trailer_magic) != 0)
        return "it has no nhvk trailer (truncated, or not written by nhvk)";
    const std::string t = bytes.substr(bytes.size() - trailer_size);
    if (t.compare(13, 32, key) != 0) return "it is the entry of another key (" + t.substr(13, 32) + ")";
    if (t != trailer(key, bytes.substr(0, bytes.size() - trailer_size))) return "its bytes do not match its hash";
    return {};
}

/// An entry opened without following a link, its owner and mode checked on the open file, its bytes read.
struct Opened {
    int fd = -1;
    std::string bytes;
    std::string distrusted; ///< non-empty: the file may not be trusted, and why
    bool missing = false;
};

Opened open_entry(const std::string& path, const TrustedGroup& g) {
    Opened o;
    o.fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (o.fd < 0) {
        const int e = errno;
        if (e == ENOENT) o.missing = true;
        else o.distrusted = "cannot open '" + path + "': " + (e == ELOOP ? "it is a symbolic link" : errno_text(e));
        return o;
    }
    struct stat st {};
    if (::fstat(o.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        o.distrusted = "'" + path + "' is not a regular file";
    } else if (std::string w = distrust(st, path, g, false); !w.empty()) {
        o.distrusted = w;
    } else {
        o.bytes.resize(static_cast<std::size_t>(st.st_size));
        std::size_t got = 0;
        while (got < o.bytes.size()) {
            const ssize_t r = ::pread(o.fd, o.bytes.data() + got, o.bytes.size() - got, static_cast<off_t>(got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += static_cast<std::size_t>(r);
        }
        o.bytes.resize(got);
    }
    if (!o.distrusted.empty()) {
        ::close(o.fd);
        o.fd = -1;
    }
    return o;
}

/// The path that opens exactly the checked file (the descriptor stays open for the life of the process, as the
/// loaded object does).
std::string fd_path(int fd, const std::string& path) {
    const std::string p = "/proc/self/fd/" + std::to_string(fd);
    struct stat a {
    }, b{};
    if (::stat(p.c_str(), &a) == 0 && ::fstat(fd, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) return p;
    return path; // no /proc: the checked path in a folder nobody else can write
}

/** @brief The entry `out` when it is there, trusted (`g`) and whole: `a` gets its path, bytes and load path, and it
 *         is marked cached. Else false, and `note` says what was wrong with an entry that was there (empty when there
 *         was none). */
bool take_entry(const fs::path& out, const std::string& key, const std::string& ext, const TrustedGroup& g, Artefact& a,
                std::string& note) {
    Opened o = open_entry(out.string(), g);
    if (o.missing) return false;
    if (!o.distrusted.empty()) {
        // NOTE: a trusted folder holds an entry it cannot vouch for (another owner's, a link): never load it, and
        // never write over what this user may not own; a rebuild's rename replaces the name, not the file.
        note = "not loading " + out.string() + ": " + o.distrusted + "; rebuilding it";
        return false;
    }
    if (const std::string d = damage(o.bytes, key); !d.empty()) {
        ::close(o.fd);
        note = "the cached " + out.string() + " is damaged (" + d + "): rebuilding it";
        return false;
    }
    a.path = out.string();
    a.bytes = o.bytes.substr(0, o.bytes.size() - trailer_size);
    a.cached = true;
    // NOTE: a shared object is loaded through its open descriptor, so the file checked is the file loaded
    if (ext == ".so") a.load_path = fd_path(o.fd, a.path);
    else ::close(o.fd);
    return true;
}

/// An exclusive fcntl lock on a file, released (with the descriptor) on destruction.
class FileLock {
public:
    FileLock(const std::string& path, const TrustedGroup& g, const std::function<void()>& on_wait) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, file_mode(g));
        if (fd_ < 0) return;
        ::fchmod(fd_, file_mode(g));
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (fcntl(fd_, F_SETLK, &fl) == 0) return;
        if (errno == EACCES || errno == EAGAIN) {
            if (on_wait) on_wait();
        }
        while (fcntl(fd_, F_SETLKW, &fl) < 0) {
            if (errno == EINTR) continue;
            // NOTE: ENOLCK (a file system without locks): go on unlocked; the compile below writes a private name
            // and renames it, so concurrent compiles of the same entry only duplicate work.
            ::close(fd_);
            fd_ = -1;
            return;
        }
    }
    ~FileLock() {
        if (fd_ >= 0) ::close(fd_);
    }
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

private:
    int fd_ = -1;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// This process's private cache: where it compiles when the cache may not be used. Made once, removed at exit.
std::string private_root() {
    static std::mutex m;
    static std::string root;
    static uid_t owner = 0;
    std::lock_guard<std::mutex> lock(m);
    // NOTE: a process that changed its user since (a forked child that dropped root) needs a folder of its own
    if (!root.empty() && owner == ::geteuid()) return root;
    std::error_code ec;
    std::string tmp;
    if (const char* t = std::getenv("TMPDIR"); t && *t && fs::is_directory(t, ec) && ::access(t, W_OK | X_OK) == 0)
        tmp = t;
    else tmp = "/tmp"; // NOTE: a missing or read-only TMPDIR must not stop a compile: mkdtemp's folder is 0700 anyway
    std::string templ = (fs::path(tmp) / "nhvk-private-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
        const int e = errno;
        throw std::runtime_error("cannot create a private folder for compiled model files in '" + tmp +
                                 "': " + errno_text(e) + " (set TMPDIR or NHVK_CACHE_DIR to a writable folder)");
    }
    const bool first = root.empty();
    root = templ;
    owner = ::geteuid();
    track_folder(root);
    if (first)
        std::atexit([] {
            std::error_code e;
            fs::remove_all(root, e);
        });
    return root;
}

/// Write `bytes` to the new `path` with `mode`: O_EXCL and O_NOFOLLOW, so no planted file or link is ever written.
void write_new(const std::string& path, const std::string& bytes, mode_t mode) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        const int e = errno;
        throw std::runtime_error("cannot write '" + path + "': " + errno_text(e));
    }
    ::fchmod(fd, mode);
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            const int e = errno;
            ::close(fd);
            throw std::runtime_error("cannot write '" + path + "': " + errno_text(e));
        }
        done += static_cast<std::size_t>(w);
    }
    if (::close(fd) != 0) {
        const int e = errno;
        throw std::runtime_error("cannot write '" + path + "': " + errno_text(e));
    }
}

/// Build the entry in a private folder under `dir` and rename it, with its trailer, to `out`.
void build_into(const fs::path& dir, const std::string& key, const std::string& ext, const fs::path& out,
                const TrustedGroup& g, const std::function<void(const Entry&)>& build) {
    PrivateFolder work(dir.string(), "." + key + ".build-");
    Entry e;
    e.dir = work.path();
    e.stem = (fs::path(work.path()) / key).string();
    e.tmp = (fs::path(work.path()) / ("entry" + ext)).string();
    e.name = (dir / key).string();
    try {
        build(e);
    } catch (...) {
        // NOTE: a failed build's folder keeps the source and the log its message names, for a bug report.
        struct stat st {};
        if (::stat((e.stem + ".log").c_str(), &st) == 0) work.keep();
        throw;
    }
    struct stat st {};
    if (::lstat(e.tmp.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        throw std::runtime_error("the compile exited without an error but wrote no " + ext + " (expected '" + e.tmp +
                                 "'): is it a compiler for this language?");
    const std::string bytes = read_file(e.tmp);
    const std::string sealed = (fs::path(work.path()) / ("sealed" + ext)).string();
    write_new(sealed, bytes + trailer(key, bytes), file_mode(g));
    if (::rename(sealed.c_str(), out.c_str()) != 0) {
        const int err = errno;
        throw std::runtime_error("cannot move the compiled model into the cache '" + out.string() +
                                 "': " + errno_text(err));
    }
}

} // namespace

void Entry::publish(const std::string& file, const std::string& ext) const {
    // NOTE: rename replaces a link at the target rather than following it; the copy is for reading only
    ::rename(file.c_str(), (name + ext).c_str());
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::vector<std::string> split_list(const char* list) {
    std::vector<std::string> out;
    std::istringstream in(list);
    for (std::string s; std::getline(in, s, ';');)
        if (!s.empty()) out.push_back(s);
    return out;
}

void write_new_file(const std::string& path, const std::string& bytes) { write_new(path, bytes, 0600); }

std::string entry_trailer(const std::string& key, const std::string& bytes) { return trailer(key, bytes); }

std::string headers_hash(const std::vector<std::string>& roots) { return headers_hash_impl(roots); }

std::string hash_hex(const std::vector<std::string>& parts) {
    Hash h;
    for (const std::string& p : parts) h.add(p);
    return h.hex();
}

CompilerSpec host_compiler() {
    CompilerSpec s;
    s.cxx = NHVK_JIT_CXX;
    if (const char* env = std::getenv("NHVK_CXX"); env && *env) {
        std::istringstream words(env);
        std::vector<std::string> w;
        for (std::string x; words >> x;) w.push_back(x);
        if (!w.empty()) {
            s.cxx = w.front();
            s.cxx_args.assign(w.begin() + 1, w.end());
        }
    }
    s.flags = split_list(NHVK_JIT_FLAGS);
    const JitLayout& l = jit_layout();
    for (const std::string& d : l.cpu_includes) s.flags.push_back("-I" + d);
    for (const std::string& d : l.cpu_system) {
        s.flags.push_back("-isystem");
        s.flags.push_back(d);
    }
    s.header_roots = l.cpu_roots;
    return s;
}

const JitLayout& jit_layout() {
    static const JitLayout layout = [] {
        JitLayout l;
        // NOTE: an installed nhvk is <prefix>/bin/nhvk; its tree is <prefix>/share/nhvk/jit, marked by a file that
        // holds nhvk's version, so a tree of another version installed there is not taken for this one's
        std::error_code ec;
        const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
        const fs::path jit = ec ? fs::path() : exe.parent_path().parent_path() / "share" / "nhvk" / "jit";
        std::string mark = jit.empty() ? std::string() : read_file((jit / "nhvk-jit-version").string());
        while (!mark.empty() && (mark.back() == '\n' || mark.back() == '\r')) mark.pop_back();
        if (!jit.empty() && mark == nhvk_version) {
            const auto at = [&](const char* sub) { return (jit / sub).string(); };
            l.where = jit.string();
            l.cpu_includes = {at("include"), at("host"), at("gen")};
            l.cpu_system = {at("third_party")};
            l.cpu_roots = {at("include"), at("host")};
            l.cuda_includes = {at("include"), at("kernels"), at("generated"), at("third_party")};
            l.cuda_roots = {at("include"), at("kernels"), at("generated/nhvk/generated")};
            return l;
        }
        l.cpu_includes = split_list(NHVK_JIT_INCLUDES);
        l.cpu_system = split_list(NHVK_JIT_SYSTEM_INCLUDES);
        l.cpu_roots = split_list(NHVK_JIT_HEADER_ROOTS);
        l.cuda_includes = split_list(NHVK_JIT_CUDA_INCLUDES);
        l.cuda_roots = split_list(NHVK_JIT_CUDA_HEADER_ROOTS);
        return l;
    }();
    return layout;
}

std::string compiler_problem(const CompilerSpec& spec) {
    for (const std::string& root : spec.header_roots)
        if (!fs::is_directory(root))
            return "nhvk's engine headers are not at " + root +
                   (jit_layout().where.empty() ? " (where this nhvk was built from; an installed nhvk has them in "
                                                 "<prefix>/share/nhvk/jit)"
                                               : " (this nhvk's install tree)");
    try {
        compiler_version(spec);
    } catch (const CompilerDoesNotRun& e) {
        return e.brief;
    }
    return {};
}

std::string cache_root() {
    if (const char* d = std::getenv("NHVK_CACHE_DIR"); d && *d) return d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "nhvk").string();
    if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "nhvk").string();
    throw std::runtime_error("no cache folder for compiled model files: set NHVK_CACHE_DIR (or XDG_CACHE_HOME or "
                             "HOME)");
}

std::string cache_distrust(const std::string& root, const std::string& kind) {
    return distrust_impl(root, kind, trusted_group());
}

std::string cache_key(const std::string& source, const CompilerSpec& spec) {
    Hash h;
    h.add(std::string(nhvk_version));
    h.add(spec.cxx);
    for (const std::string& a : spec.cxx_args) h.add(a);
    h.add(compiler_version(spec));
    for (const std::string& f : spec.flags) h.add(f);
    h.add(headers_hash_impl(spec.header_roots));
    h.add(source);
    return h.hex();
}

Artefact cached_artefact(const std::string& key, const std::string& kind, const std::string& ext,
                         const Reporter& report, const std::function<void(const Entry&)>& build) {
    Artefact a;
    a.key = key;
    const TrustedGroup g = trusted_group();
    const auto note = [&](const std::string& s) {
        if (report.note) report.note(s);
    };
    fs::path dir = fs::path(cache_root()) / kind;
    std::string why = distrust_impl(cache_root(), kind, g);
    if (why.empty()) {
        try {
            make_folders(dir, g);
            why = distrust_impl(cache_root(), kind, g); // what was made, judged as what was found
        } catch (const std::runtime_error& e) {
            why = e.what();
        }
    }
    if (why.empty() && ::access(dir.c_str(), W_OK | X_OK) != 0) {
        // NOTE: a read-only cache (a shared install's, a read-only mount) still serves the entries it holds
        const int e = errno;
        std::string not_used;
        if (take_entry(dir / (key + ext), key, ext, g, a, not_used)) return a;
        why = "it does not hold this entry and this process cannot write into '" + dir.string() + "': " + errno_text(e);
        if (!report.fill_command.empty())
            why += " (whoever may write the cache fills it with `" + report.fill_command + "`)";
    }
    if (!why.empty()) {
        a.private_because = "not using the model cache " + cache_root() + ": " + why;
        note(a.private_because + "; compiling privately for this process (see the README's \"What nhvk trusts\")");
        dir = fs::path(private_root()) / kind;
        make_folders(dir, TrustedGroup{});
    }
    const TrustedGroup gg = a.private_because.empty() ? g : TrustedGroup{};
    const fs::path out = dir / (key + ext);
    // Use the entry when it is there and whole; say why it is not when it is damaged (once: it is looked at again
    // under the lock).
    bool told = false;
    const auto tell = [&](const std::string& s) {
        if (!told) note(s);
        told = true;
    };
    const auto take = [&] {
        std::string why_not;
        const bool taken = take_entry(out, key, ext, gg, a, why_not);
        if (!why_not.empty()) tell(why_not);
        return taken;
    };
    if (take()) return a;
    if (report.on_miss) report.on_miss();
    const auto t_wait = std::chrono::steady_clock::now();
    FileLock lock((dir / (key + ".lock")).string(), gg, [&] {
        note("waiting for another process's compile of this entry (lock " + (dir / (key + ".lock")).string() + ")");
    });
    a.wait_seconds = seconds_since(t_wait);
    if (take()) return a; // another process built it while this one waited
    const auto t0 = std::chrono::steady_clock::now();
    build_into(dir, key, ext, out, gg, build);
    a.compile_seconds = seconds_since(t0);
    if (!take()) throw std::runtime_error("the entry '" + out.string() + "' just built cannot be read back");
    a.cached = false;
    return a;
}

Artefact compile_shared_object(const std::string& source, const CompilerSpec& spec, const std::string& kind,
                               const std::string& label, const std::string& model, const Reporter& report) {
    const std::string key = cache_key(source, spec);
    // NOTE: the identity is appended after the key is taken (it holds the key); `model` is a checked name, so it
    // prints into the literal as it is.
    const std::string identity = key + " " + model + " " + nhvk_version;
    if (identity.find_first_of("\"\\\n\r") != std::string::npos)
        throw std::logic_error("compile_shared_object: the model's name is not a plain name");
    const std::string unit = source + "\nextern \"C\" __attribute__((visibility(\"default\"))) const char* " +
                             identity_symbol + "() { return \"" + identity + "\"; }\n";
    Artefact a = cached_artefact(key, kind, ".so", report, [&](const Entry& e) {
        const std::string src = e.stem + ".cpp", log = e.stem + ".log";
        write_new_file(src, unit);
        std::vector<std::string> argv{spec.cxx};
        argv.insert(argv.end(), spec.cxx_args.begin(), spec.cxx_args.end());
        argv.insert(argv.end(), spec.flags.begin(), spec.flags.end());
        argv.push_back(src);
        argv.push_back("-o");
        argv.push_back(e.tmp);
        const Outcome o = run_command(argv, e.dir);
        if (o.rc != 0) {
            write_new_file(log, o.output);
            std::string out = o.output;
            if (out.size() > 4000) out = out.substr(0, 4000) + "\n[...]";
            const std::string how = o.start_errno != 0 ? "did not start: " + errno_text(o.start_errno)
                                    : o.rc < 0         ? std::string("ended by a signal")
                                                       : "exit " + std::to_string(o.rc);
            // NOTE: the source and the log stay, named in the message, for a bug report.
            throw std::runtime_error(label + ": the C++ compiler failed on the emitted equations (" +
                                     command_text(spec) + ", " + how + "; source " + src + ", log " + log + "):\n" +
                                     out);
        }
        // The source under the entry's own name, for a user who wants to read what was compiled.
        e.publish(src, ".cpp");
    });
    a.bytes = std::string(); // the object is loaded from its file; its bytes were needed for the check only
    a.identity = identity;
    return a;
}

void* load_symbol(const Artefact& a, const char* symbol) {
    const std::string& p = a.load_path.empty() ? a.path : a.load_path;
    void* handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw std::runtime_error("cannot load the compiled model '" + a.path + "': " + dlerror());
    using Id = const char* (*)();
    const auto id = reinterpret_cast<Id>(dlsym(handle, identity_symbol));
    const std::string got = id ? id() : "(no identity)";
    if (got != a.identity)
        throw std::runtime_error("the compiled model '" + a.path + "' says it is '" + got.substr(0, 160) +
                                 "', expected '" + a.identity +
                                 "' (key, model, nhvk version): delete it and run "
                                 "again (the cache rebuilds it)");
    void* s = dlsym(handle, symbol);
    if (!s) throw std::runtime_error("the compiled model '" + a.path + "' has no symbol '" + symbol + "'");
    return s;
}

void abandon_compiles() {
    abandoning.store(true);
    InFlight& f = in_flight();
    // NOTE: try_lock: the signal thread must not wait for a thread that holds the lock across fork (a few
    // microseconds); the groups map is read as it is then.
    const bool locked = f.m.try_lock();
    for (const auto& [id, pgid] : f.groups) ::kill(-pgid, SIGKILL);
    for (const auto& [id, pgid] : f.groups) {
        int status = 0;
        ::waitpid(pgid, &status, 0);
    }
    for (const auto& [id, dir] : f.folders) {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    if (locked) f.m.unlock();
}

} // namespace nhvk::jit
