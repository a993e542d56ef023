// SPDX-License-Identifier: MIT
/** @file
 *  @brief Compile C++ source into a shared object at run time, through a cache shared by every process of a user.
 *
 *  A model file's equations are emitted as one translation unit; this compiles it with the C++ compiler nhvk was
 *  built with (or `NHVK_CXX`) and loads it. The artefact is keyed by a hash of everything that decides its bytes:
 *  the source, the compiler's path and `--version`, the flags, nhvk's version and the contents of every nhvk header
 *  the unit can include. It lives under the user's cache folder (`NHVK_CACHE_DIR`, else `$XDG_CACHE_HOME/nhvk`, else
 *  `$HOME/.cache/nhvk`), so a second run (another MPI rank, an array job, tomorrow) loads it without compiling.
 *
 *  Concurrency: many processes may start at once. Each takes an exclusive POSIX record lock on the entry's lock file
 *  (fcntl, which also works over NFS where the cluster's home folders live); the first compiles, the others wait and
 *  then find the entry. The object is written to a private temporary name and renamed into place, so a half-written
 *  entry is never loaded. Where locking is unavailable (ENOLCK) each process compiles the same bytes and the renames
 *  race harmlessly.
 */
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nhvk::jit {

/** @brief A compiler and the arguments that make a loadable shared object of one source. */
struct CompilerSpec {
    std::string cxx;                       ///< path or name of the compiler
    std::vector<std::string> flags;        ///< before the source (-O2, -fPIC, -shared, defines, include folders)
    std::vector<std::string> header_roots; ///< folders whose headers the key hashes (nhvk's own include folders)
};

/** @brief The compiler nhvk was built with and the flags and include folders of its engine (CMake records them at
 *         configure time); `NHVK_CXX` replaces the compiler. */
CompilerSpec host_compiler();

/** @brief Why `spec` cannot compile a model file here (its compiler does not run, or the engine's headers it includes
 *         are not where this build left them: an installed nhvk whose source tree is gone), or "" when it can. */
std::string compiler_problem(const CompilerSpec& spec);

/** @brief The cache folder: `NHVK_CACHE_DIR`, else `$XDG_CACHE_HOME/nhvk`, else `$HOME/.cache/nhvk`. */
std::string cache_root();

/** @brief A compiled shared object in the cache. */
struct Artefact {
    std::string path;             ///< the shared object
    std::string key;              ///< 32 hex digits
    bool cached = false;          ///< true: found in the cache, nothing compiled by this process
    double compile_seconds = 0.0; ///< this process's compile time (0 when cached)
    double wait_seconds = 0.0;    ///< time spent waiting for another process's compile of the same entry
};

/** @brief The cache key of `source` compiled with `spec` (also hashes the compiler's `--version` and the headers). */
std::string cache_key(const std::string& source, const CompilerSpec& spec);

/** @brief The names a build step writes to: `tmp` is renamed to the entry once the step returns; `stem` is private to
 *         this process (for sources and logs); `name` is the entry's path without its extension. */
struct Entry {
    std::string name, stem, tmp;
};

/** @brief The entry `cache_root()/kind/key + ext`, built now by `build` (which writes `Entry::tmp`) if it is not
 *         there: under the entry's lock, so one process of many builds it and the others wait and load it, and
 *         renamed into place, so a half-written entry is never seen. A `build` that throws leaves no entry. */
Artefact cached_artefact(const std::string& key, const std::string& kind, const std::string& ext,
                         const std::function<void()>& on_miss, const std::function<void(const Entry&)>& build);

/** @brief The hash (32 hex digits) of `parts`, each length-prefixed. */
std::string hash_hex(const std::vector<std::string>& parts);

/** @brief The hash of every header (`.hpp`, `.h`, `.cuh`) under `roots`: their relative paths and bytes. */
std::string headers_hash(const std::vector<std::string>& roots);

/** @brief The bytes of `path` (empty when it cannot be read). */
std::string read_file(const std::string& path);

/** @brief The non-empty items of a `;`-separated list (CMake's lists, as nhvk_jit_config.hpp records them). */
std::vector<std::string> split_list(const char* list);

/** @brief Write `bytes` to `path` (truncating); throws when it cannot. */
void write_file(const std::string& path, const std::string& bytes);

/** @brief The shared object of `source` under `cache_root()/kind/`, compiled now if it is not there. `label` names
 *         the source in messages (e.g. the model file). `on_miss` is called once the entry is found missing, before
 *         waiting for another process's compile or compiling (to say that this takes a while). Throws with the
 *         compiler's output on failure. */
Artefact compile_shared_object(const std::string& source, const CompilerSpec& spec, const std::string& kind,
                               const std::string& label, const std::function<void()>& on_miss = {});

/** @brief `dlopen` the artefact (kept open for the life of the process) and return the address of `symbol`. */
void* load_symbol(const Artefact& a, const char* symbol);

} // namespace nhvk::jit
