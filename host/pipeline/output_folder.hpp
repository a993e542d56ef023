// SPDX-License-Identifier: MIT
/** @file
 *  @brief The output folder of one `nhvk run`: claimed with a lock, written as temporaries, committed together.
 *
 *  The protocol (README "Outputs"):
 *  1. Claim: the folder is created if needed and locked with `flock` on `.nhvk.lock` (the pid inside, for the
 *     message). The kernel drops the lock when its process dies, kill -9 included, so a stale lock file is simply
 *     taken over; a live holder makes the claim fail with `FolderBusy`. Holding the lock proves that no live run
 *     writes here, so every nhvk temporary found (`<output>.tmp.<pid>`) is a leftover of a dead process: removed.
 *  2. Write: every output goes to `<name>.tmp.<pid>` through `OutputFile`, whose every write, fsync and close is
 *     checked (the message carries the errno text).
 *  3. Commit: every name is checked to be free of folders; the earlier `summary.json` is removed first (from here
 *     on the folder looks incomplete), then the outputs of the earlier run that this run does not rewrite, then the
 *     temporaries are renamed into place and `summary.json` last, the marker of a complete run.
 *  Any failure or interruption before the end removes this run's temporaries, the lock, and the folder if this run
 *  created it and it is empty: the folder holds the earlier complete run, or nothing that looks complete.
 *
 *  Room for resume (issue 8): per-chunk records would be further outputs written and renamed one at a time under the
 *  same lock, and `run.log` one more name in `output_names()`.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nhvk {

/** @brief The output folder is claimed by another live run (exit code 5). */
struct FolderBusy : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief `path` with this process's temporary suffix (`.tmp.<pid>`). */
std::string temp_name(const std::string& path);

/** @brief The lock file's name inside an output folder. */
inline constexpr const char* lock_file_name = ".nhvk.lock";

/** @brief True for a name (relative to the folder, `/`-separated) that `nhvk run` writes: `summary.json`,
 *         `stats.csv`, `summary.md`, `report.html`, `samples.csv`, `partial.nhvk`,
 *         `trajectories/trajectory_<digits>.csv`. */
bool is_output_name(const std::string& rel);

/** @brief A resumable temporary is missing or does not hold what the resume record counted (shorter, or its kept part
 *         has another number of lines): the record and the file disagree, so the run cannot go on from them (a
 *         caller refuses the resume rather than failing the run). */
struct ResumableTooShort : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/** @brief One output under its temporary name. Writes are buffered; the first failed write is kept and reported. */
class OutputFile {
public:
    OutputFile(std::filesystem::path final_path, std::string rel);
    /** @brief A resumable output: written under the fixed name `<final>.resume` (kept when the run is interrupted),
     *         whose first `keep_bytes` bytes (what a resume record counted, `keep_lines` lines) are kept and the rest
     *         cut off. With `keep_bytes` > 0 the file must exist and its first `keep_bytes` bytes must be exactly
     *         `keep_lines` whole lines, else `ResumableTooShort` and the file is left as it was. */
    OutputFile(std::filesystem::path final_path, std::string rel, std::uint64_t keep_bytes, std::uint64_t keep_lines);
    /** @brief `keep_lines` of a file of binary records: its kept bytes are not checked for lines (the caller checks
     *         their count against its record size). */
    static constexpr std::uint64_t binary = ~std::uint64_t{0};
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    std::ostream& stream();
    /** @brief Throw (with the errno text) if a write has failed so far: lets a long run stop early on a full disk. */
    void check();
    /** @brief Flush and fsync (checked); the bytes written so far, for a resume record. */
    std::uint64_t sync_size();
    bool resumable() const { return resumable_; }
    /** @brief Flush, fsync and close, each checked. Idempotent. */
    void close();
    const std::filesystem::path& final_path() const { return final_; }
    const std::string& temp_path() const { return tmp_; }
    const std::string& rel() const { return rel_; }

private:
    class Buffer;
    std::filesystem::path final_;
    std::string rel_, tmp_;
    std::unique_ptr<Buffer> buf_;
    std::unique_ptr<std::ostream> os_;
    bool closed_ = false, resumable_ = false;
};

/** @brief The claimed output folder of a run (see the file comment). */
class OutputFolder {
public:
    /** @brief Create and claim `dir` (`key` names the config key in messages). `writes` lists the names this run
     *         will write (relative; a trailing `/` for a folder): checked up front not to be taken by a folder (or by
     *         a file, for a folder). Throws `FolderBusy` when another live run holds the folder, std::runtime_error
     *         otherwise. */
    OutputFolder(const std::string& dir, const std::vector<std::string>& writes, const std::string& key = "run.out");
    /** @brief Without a commit: removes this run's temporaries, the lock, and the folder if created here and empty. */
    ~OutputFolder();
    OutputFolder(const OutputFolder&) = delete;
    OutputFolder& operator=(const OutputFolder&) = delete;

    const std::filesystem::path& path() const { return dir_; }
    /** @brief A new output `rel` (e.g. `stats.csv`, `trajectories/trajectory_000003.csv`) under its temporary name. */
    OutputFile& create(const std::string& rel);
    /** @brief As `create`, for an output a resumed run goes on writing (see OutputFile's resumable constructor). */
    OutputFile& create_resumable(const std::string& rel, std::uint64_t keep_bytes, std::uint64_t keep_lines);
    /** @brief Close every output, then move them into place together, `summary.json` last, then remove the files
     *         of `remove_after_commit` and the resumable temporaries, and release the lock. Every prefix of the
     *         steps leaves a folder that is complete or resumable. Returns the earlier run's outputs it removed
     *         because this run does not write them again (relative). */
    std::vector<std::string> commit();
    /** @brief A file the commit removes once the run is complete (before the resumable temporaries): a resume
     *         record. */
    void remove_after_commit(const std::filesystem::path& path);

    /** @brief Interrupted (signal thread, registry lock held): remove temporaries and lock, no exceptions. */
    void abandon() noexcept;

private:
    std::filesystem::path dir_;
    std::string key_;
    bool created_ = false, trajectories_created_ = false, released_ = false;
    int lock_fd_ = -1;
    std::vector<std::unique_ptr<OutputFile>> files_;
    std::vector<std::filesystem::path> remove_after_commit_;
    void release() noexcept;
};

/** @brief One line for stderr on files a command removed from `dir` that the user may not expect to lose (an earlier
 *         run's outputs, resume records), `what` saying whose they were; empty when `removed` is. A trajectories/
 *         file list is counted, not listed. */
std::string removed_note(const std::filesystem::path& dir, const std::vector<std::string>& removed,
                         const std::string& what);

/** @brief At least the longest name a run writes under its folder, relative:
 *         `trajectories/trajectory_<index>.csv.tmp.<pid>` with a 20-digit index and a 10-digit pid is 63 bytes. */
inline constexpr std::size_t longest_run_file_name = 64;

/** @brief Why the output folder `dir` cannot take a run's outputs, or empty when it can (`key` names the option or
 *         config key in the message): its path, with the names written under it, must fit the system's limits
 *         (NAME_MAX per component, PATH_MAX in all), and it must be a folder or not exist yet, under a folder this
 *         process may write into. Checked before any work, so that a run does not fail at its commit. */
std::string output_folder_problem(const std::string& dir, const std::string& key);

/** @brief Why the output folder `dir` must not take a run's outputs, or empty: one of `inputs` (the config, the model
 *         file) lies in it under a name the run writes or removes. */
std::string output_folder_input_problem(const std::string& dir, const std::string& key,
                                        const std::vector<std::string>& inputs);

/** @brief Why `path` cannot take a copy of an output (`--summary-md FILE`), or empty when it can: a file name
 *         within the system's limits (NAME_MAX, PATH_MAX) in an existing folder this process may write into,
 *         neither one of `inputs` (the same file, through any link) nor inside one of `folders` (a run's output
 *         folder, a merge's parts and --out), whose files are the command's own. Checked before any work, so a bad
 *         path costs nothing and can never replace a file the command uses. */
std::string side_file_problem(const std::string& path, const std::vector<std::string>& inputs,
                              const std::vector<std::string>& folders);

/** @brief Writes the `n` bytes at `p` to `fd`, retrying after EINTR and short writes; 0, or the errno of the failure
 *         (EIO for a write that wrote nothing). */
int write_fully(int fd, const char* p, std::size_t n);

/** @brief Remove the temporaries of every claimed folder and release its lock on SIGINT, SIGTERM or SIGHUP, then
 *         end by the same signal. Call once from the main thread before any other thread starts (the signals are
 *         blocked in the threads started afterwards and taken by one watcher thread). */
void clean_up_outputs_on_signals();

/** @brief A run's stop request and what it takes to measure how long the run took to honour it. */
struct StopRequestState {
    std::atomic<int> signal{0};                       ///< the first signal's number; 0 while none came
    std::atomic<std::uint64_t> chunks_finished{0};    ///< counted by the run as its chunks finish
    std::atomic<std::uint64_t> finished_at_signal{0}; ///< `chunks_finished` when the signal came
    std::atomic<std::int64_t> signal_steady_ns{0};    ///< steady_clock's time of the signal, in ns since its epoch
};

/** @brief While a run can stop cleanly, the first SIGINT, SIGTERM or SIGHUP only stores the signal's number in
 *         `state->signal`, with the chunks finished and the time then (the run stops once its chunks in flight
 *         finish and leaves a resume record); a second one ends the process as above. nullptr: signals end the
 *         process at once again. */
void set_stop_request(StopRequestState* state);

/** @brief Also run `fn` when a signal ends the process (after the folders' clean-up, before the process ends): work
 *         outside an output folder that must not outlive the process, such as a model file's compiler. At most 8. */
void at_signal_exit(void (*fn)());

} // namespace nhvk
