// SPDX-License-Identifier: MIT
#include "modelfile/runtime_compile.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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
 *         a collision of two cache entries of one user is out of reach. */
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

/// Run argv with stdout and stderr into `log`; the exit status (or -1 when it could not start).
int run_command(const std::vector<std::string>& argv, const std::string& log) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string compiler_version(const std::string& cxx) {
    static std::mutex m;
    static std::string for_cxx, version;
    std::lock_guard<std::mutex> lock(m);
    if (for_cxx == cxx && !version.empty()) return version;
    const std::string log = (fs::temp_directory_path() / ("nhvk-cxx-version-" + std::to_string(getpid()))).string();
    const int rc = run_command({cxx, "--version"}, log);
    std::string out = read_file(log);
    std::remove(log.c_str());
    if (rc != 0)
        throw std::runtime_error("the C++ compiler '" + cxx + "' does not run (`" + cxx +
                                 " --version` failed): model files are compiled at run time; set NHVK_CXX to a "
                                 "working compiler (the one nhvk was built with: " NHVK_JIT_CXX ")");
    for_cxx = cxx;
    version = out;
    return version;
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

/// An exclusive fcntl lock on a file, released (with the descriptor) on destruction.
class FileLock {
public:
    explicit FileLock(const std::string& path) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) return;
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
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

} // namespace

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

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes;
    f.flush();
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
}

std::string headers_hash(const std::vector<std::string>& roots) { return headers_hash_impl(roots); }

std::string hash_hex(const std::vector<std::string>& parts) {
    Hash h;
    for (const std::string& p : parts) h.add(p);
    return h.hex();
}

CompilerSpec host_compiler() {
    CompilerSpec s;
    const char* env = std::getenv("NHVK_CXX");
    s.cxx = env && *env ? env : NHVK_JIT_CXX;
    s.flags = split_list(NHVK_JIT_FLAGS);
    s.header_roots = split_list(NHVK_JIT_HEADER_ROOTS);
    return s;
}

std::string compiler_problem(const CompilerSpec& spec) {
    for (const std::string& root : spec.header_roots)
        if (!fs::is_directory(root))
            return "nhvk's engine headers are not at " + root + " (where this nhvk was built from)";
    try {
        compiler_version(spec.cxx);
    } catch (const std::runtime_error&) {
        return "the C++ compiler '" + spec.cxx + "' does not run";
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

std::string cache_key(const std::string& source, const CompilerSpec& spec) {
    Hash h;
    h.add(std::string(nhvk_version));
    h.add(spec.cxx);
    h.add(compiler_version(spec.cxx));
    for (const std::string& f : spec.flags) h.add(f);
    h.add(headers_hash_impl(spec.header_roots));
    h.add(source);
    return h.hex();
}

Artefact cached_artefact(const std::string& key, const std::string& kind, const std::string& ext,
                         const std::function<void()>& on_miss, const std::function<void(const Entry&)>& build) {
    Artefact a;
    a.key = key;
    const fs::path dir = fs::path(cache_root()) / kind;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot create the cache folder '" + dir.string() + "': " + ec.message());
    const fs::path out = dir / (a.key + ext);
    a.path = out.string();
    if (fs::exists(out)) {
        a.cached = true;
        return a;
    }
    if (on_miss) on_miss();
    const auto t_wait = std::chrono::steady_clock::now();
    FileLock lock((dir / (a.key + ".lock")).string());
    a.wait_seconds = seconds_since(t_wait);
    if (fs::exists(out)) { // another process built it while this one waited
        a.cached = true;
        return a;
    }
    const std::string stem = (dir / (a.key + "." + std::to_string(getpid()))).string();
    const Entry e{dir.string() + "/" + a.key, stem, stem + ext + ".tmp"};
    const auto t0 = std::chrono::steady_clock::now();
    build(e);
    a.compile_seconds = seconds_since(t0);
    fs::rename(e.tmp, out, ec);
    if (ec)
        throw std::runtime_error("cannot move the compiled model into the cache '" + out.string() +
                                 "': " + ec.message());
    return a;
}

Artefact compile_shared_object(const std::string& source, const CompilerSpec& spec, const std::string& kind,
                               const std::string& label, const std::function<void()>& on_miss) {
    return cached_artefact(cache_key(source, spec), kind, ".so", on_miss, [&](const Entry& e) {
        const std::string src = e.stem + ".cpp", log = e.stem + ".log";
        write_file(src, source);
        std::vector<std::string> argv{spec.cxx};
        argv.insert(argv.end(), spec.flags.begin(), spec.flags.end());
        argv.push_back(src);
        argv.push_back("-o");
        argv.push_back(e.tmp);
        const int rc = run_command(argv, log);
        std::error_code ec;
        if (rc != 0) {
            std::string out = read_file(log);
            if (out.size() > 4000) out = out.substr(0, 4000) + "\n[...]";
            fs::remove(e.tmp, ec);
            // NOTE: the source and the log stay, named in the message, for a bug report.
            throw std::runtime_error(label + ": the C++ compiler failed on the emitted equations (" + spec.cxx +
                                     ", exit " + std::to_string(rc) + "; source " + src + ", log " + log + "):\n" +
                                     out);
        }
        fs::remove(log, ec);
        // The source under the entry's own name, for a user who wants to read what was compiled.
        fs::rename(src, e.name + ".cpp", ec);
    });
}

void* load_symbol(const Artefact& a, const char* symbol) {
    void* handle = dlopen(a.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw std::runtime_error("cannot load the compiled model '" + a.path + "': " + dlerror());
    void* p = dlsym(handle, symbol);
    if (!p) throw std::runtime_error("the compiled model '" + a.path + "' has no symbol '" + symbol + "'");
    return p;
}

} // namespace nhvk::jit
