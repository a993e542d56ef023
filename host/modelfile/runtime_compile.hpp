// SPDX-License-Identifier: MIT
/** @file
 *  @brief Compile C++ source into a shared object at run time, through a cache private to its user.
 *
 *  A model file's equations are emitted as one translation unit; this compiles it with the C++ compiler nhvk was
 *  built with (or `NHVK_CXX`) and loads it. The artefact is keyed by a hash of everything that decides its bytes:
 *  the source, the compiler's path and `--version`, the flags, nhvk's version and the contents of every nhvk header
 *  the unit can include. It lives under the user's cache folder (`NHVK_CACHE_DIR`, else `$XDG_CACHE_HOME/nhvk`, else
 *  `$HOME/.cache/nhvk`), so a second run (another MPI rank, an array job, tomorrow) loads it without compiling.
 *
 *  Trust: loading an entry runs its code, so an entry is loaded only when nobody but its user could have written it:
 *  the entry and the folders it lies in are owned by the running user and writable by nobody else (the folders above
 *  the cache may be shared only with the sticky bit, as /tmp is), and it is not a symbolic link. Folders are created
 *  0700 and files 0600, whatever the umask. `NHVK_CACHE_GROUP=<group>` opts into a cache shared by a Unix group (a
 *  project's folder on a cluster): entries and folders of that group, written by any of its members, are trusted too,
 *  and new ones are created for the group (folders 2770, files 0640). A cache that fails these rules is not used: the
 *  process compiles privately (a fresh 0700 folder under TMPDIR, removed at exit) and says why in one line.
 *
 *  Integrity: every entry ends with a fixed trailer that names its key and holds a hash of its bytes, checked before
 *  the entry is used (a truncated, empty or swapped entry is rebuilt, never loaded); a shared object also exports its
 *  key, model and nhvk version, checked after it is loaded and before it is used.
 *
 *  Concurrency: many processes may start at once. Each takes an exclusive POSIX record lock on the entry's lock file
 *  (fcntl, which also works over NFS where the cluster's home folders live); the first compiles, the others wait
 *  (saying so) and then find the entry. A compile works in a private folder made with mkdtemp (its source, log, the
 *  compiler's own temporaries through TMPDIR, and the object), whose object is renamed into place, so a half-written
 *  entry is never loaded and no name another user can predict is ever written. Where locking is unavailable (ENOLCK)
 *  each process compiles the same bytes and the renames race harmlessly. A signal that ends the process (SIGINT,
 *  SIGTERM, SIGHUP under the CLI) ends the compiler's whole process group and removes the private folder.
 */
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nhvk::jit {

/** @brief A compiler and the arguments that make a loadable shared object of one source. */
struct CompilerSpec {
    std::string cxx;                       ///< path or name of the compiler
    std::vector<std::string> cxx_args;     ///< arguments that come with the compiler (`NHVK_CXX="ccache g++"`)
    std::vector<std::string> flags;        ///< before the source (-O2, -fPIC, -shared, defines, include folders)
    std::vector<std::string> header_roots; ///< folders whose headers the key hashes (nhvk's own include folders)
};

/** @brief Where the headers that compiled models include are: an installed nhvk's own tree
 *         (`<prefix>/share/nhvk/jit/`, found beside the running binary as `../share/nhvk/jit`, with everything the
 *         emitted code includes: the engine's headers, the generated equations and the third-party headers), else the
 *         source and build trees this nhvk was built from. */
struct JitLayout {
    std::string where;                      ///< the install tree's jit folder, or "" for the build's trees
    std::vector<std::string> cpu_includes;  ///< -I folders of the CPU unit
    std::vector<std::string> cpu_system;    ///< -isystem folders of the CPU unit (third-party headers)
    std::vector<std::string> cpu_roots;     ///< the folders of nhvk's headers that the CPU unit's key hashes
    std::vector<std::string> cuda_includes; ///< -I folders of NVRTC
    std::vector<std::string> cuda_roots;    ///< the folders of nhvk's headers that a CUBIN's key hashes
};

/** @brief This process's layout (looked up once). */
const JitLayout& jit_layout();

/** @brief The compiler nhvk was built with and the flags and include folders of its engine (CMake records them at
 *         configure time); `NHVK_CXX` replaces the compiler: a program, then any arguments of its own, separated by
 *         blanks (no quoting). */
CompilerSpec host_compiler();

/** @brief Why `spec` cannot compile a model file here (its compiler does not run, or the engine's headers it includes
 *         are not where this build left them: an installed nhvk whose source tree is gone), or "" when it can. */
std::string compiler_problem(const CompilerSpec& spec);

/** @brief The cache folder: `NHVK_CACHE_DIR`, else `$XDG_CACHE_HOME/nhvk`, else `$HOME/.cache/nhvk`. */
std::string cache_root();

/** @brief Why the cache folder `root` (and `root/kind`) may not be trusted with code by this user, or "" when it may
 *         (the rules of this file's description; `NHVK_CACHE_GROUP` is read here). Folders that do not exist yet are
 *         not judged: nhvk creates them itself, private. */
std::string cache_distrust(const std::string& root, const std::string& kind);

/** @brief A compiled entry of the cache (or of this process's private folder). */
struct Artefact {
    std::string path;             ///< the entry, for messages and for users who want to read it
    std::string load_path;        ///< what to open to load exactly the checked file (`/proc/self/fd/N` where it exists)
    std::string key;              ///< 32 hex digits
    std::string bytes;            ///< the entry's checked bytes without the trailer (kept for `cached_artefact` users)
    bool cached = false;          ///< true: found in the cache, nothing compiled by this process
    double compile_seconds = 0.0; ///< this process's compile time (0 when cached)
    double wait_seconds = 0.0;    ///< time spent waiting for another process's compile of the same entry
    std::string private_because;  ///< non-empty: the cache was not used, for this reason (compiled privately)
    std::string identity;         ///< what a shared object's `identity_symbol` must say: key, model, nhvk version
};

/** @brief What a cache lookup says on the way, besides its result. */
struct Reporter {
    /// the entry must be built (by this process or another): a compile of seconds follows
    std::function<void()> on_miss;
    /// a line the user must see even when quiet: waiting for another process's lock, a damaged entry rebuilt, a cache
    /// not trusted
    std::function<void(const std::string&)> note;
    /// the `nhvk compile` command that puts this entry into a cache: named when a read-only cache lacks it
    std::string fill_command;
};

/** @brief The cache key of `source` compiled with `spec` (also hashes the compiler's `--version` and the headers). */
std::string cache_key(const std::string& source, const CompilerSpec& spec);

/** @brief The names a build step writes to, all in a private folder of this process made for this build: `tmp` is
 *         the entry's bytes (renamed into the cache once the step returns), `stem` a prefix for its sources and logs;
 *         `publish(file, ext)` moves `file` beside the entry as `<key><ext>` for users who want to read it. */
struct Entry {
    std::string dir, stem, tmp;
    std::string name; ///< the entry's path in the cache without its extension
    void publish(const std::string& file, const std::string& ext) const;
};

/** @brief The entry `cache_root()/kind/key + ext`, checked and built now by `build` (which writes `Entry::tmp`) if it
 *         is missing or damaged: under the entry's lock, so one process of many builds it and the others wait and use
 *         it, and renamed into place with its trailer, so a half-written entry is never seen. A `build` that throws
 *         leaves no entry. Where the cache may not be trusted (`cache_distrust`) or cannot be written, the entry is
 *         built in a private folder instead and `private_because` says why. */
Artefact cached_artefact(const std::string& key, const std::string& kind, const std::string& ext,
                         const Reporter& report, const std::function<void(const Entry&)>& build);

/** @brief The fixed-size trailer that ends the cache entry `key` holding `bytes`: what `cached_artefact` checks before
 *         it uses an entry (a truncated, empty or other entry has no matching trailer). It is no secret, so it guards
 *         against damage, not against another user: trust rests on who may write the cache. */
std::string entry_trailer(const std::string& key, const std::string& bytes);

/** @brief The hash (32 hex digits) of `parts`, each length-prefixed. */
std::string hash_hex(const std::vector<std::string>& parts);

/** @brief The hash of every header (`.hpp`, `.h`, `.cuh`) under `roots`: their relative paths and bytes. */
std::string headers_hash(const std::vector<std::string>& roots);

/** @brief The bytes of `path` (empty when it cannot be read). */
std::string read_file(const std::string& path);

/** @brief The non-empty items of a `;`-separated list (CMake's lists, as nhvk_jit_config.hpp records them). */
std::vector<std::string> split_list(const char* list);

/** @brief Write `bytes` to the new file `path` (O_EXCL, never through a link; mode 0600); throws when it cannot. */
void write_new_file(const std::string& path, const std::string& bytes);

/** @brief The shared object of `source` under `cache_root()/kind/`, compiled now if it is not there. `label` names
 *         the source in messages (e.g. the model file); `model` is what the object says it is (a model's name: letters,
 *         digits, '_'), checked with its key and nhvk's version when it is loaded. Throws with the compiler's output on
 *         failure. */
Artefact compile_shared_object(const std::string& source, const CompilerSpec& spec, const std::string& kind,
                               const std::string& label, const std::string& model = "test",
                               const Reporter& report = {});

/** @brief `dlopen` the artefact (kept open for the life of the process) and return the address of `symbol`, after
 *         checking that the object is the entry it should be (its exported key, model and nhvk version). */
void* load_symbol(const Artefact& a, const char* symbol);

/** @brief The exported identity of a shared object compiled by `compile_shared_object`. */
inline constexpr const char* identity_symbol = "nhvk_entry_identity";

/** @brief End every compile in flight (its compiler's process group) and remove its private folder, and this
 *         process's private cache: what the CLI's signal thread runs before the process ends by a signal. */
void abandon_compiles();

} // namespace nhvk::jit
