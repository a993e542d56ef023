// SPDX-License-Identifier: MIT
/** @file
 *  @brief The mergeable state of a part of a run: which trajectories it covers, its counts and its statistics before
 *         they are summarised. It is what a `--shard i/N` run leaves in `partial.nhvk` for `nhvk merge`, what each
 *         MPI rank sends to rank 0, and what a resume record holds. Every statistic in it merges exactly (integer
 *         counts, exact sums, min/max, stored values), so any set of parts covering [0, N) merges, in index order,
 *         into the statistics of one run bit for bit.
 *
 *  File layout (README "Partial states and resume records"): the 16-byte magic `NHVK-STATE-v5\n\0\0`, the payload
 *  length (8 bytes), the payload, and its FNV-1a-64 checksum (8 bytes). Little-endian, this build's layout: a state
 *  is read back by the same nhvk version on the same kind of machine (the version is checked).
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "nhvk_version.hpp" // nhvk_version, generated from CMakeLists.txt's project() version
#include "pipeline/ensemble_result.hpp"
#include "stats/byte_io.hpp"

namespace nhvk {

/** @brief Where a run's configuration came from, kept in its state so that `nhvk merge` reads the same
 *         configuration back (the file's text, `--set` overrides and options, in their order). */
struct ConfigSource {
    std::string name; ///< the path the config was read from (messages, summary.json)
    std::string text;
    std::vector<std::string> sets;
    std::vector<OptionOverride> options;
};

/** @brief What makes two parts parts of the same run: the version, and a hash of the resolved configuration
 *         without the keys that do not change any result (run.out, run.threads, run.chunk, run.backend), with the
 *         canonical text of its model when that is a model file or an inline model. */
struct RunIdentity {
    std::string version;
    std::uint64_t config_hash = 0;
    std::uint64_t trajectories = 0, seed = 0;
    /// the model's canonical text alone (0: a built-in model), for messages; not kept in state files
    std::uint64_t model_hash = 0;
};
RunIdentity run_identity(const RunConfig& cfg);
/** @brief The model file that `cfg`'s model was read from (an input of the run), or empty: a built-in or inline
 *         model. */
std::string model_file_of(const RunConfig& cfg);
/** @brief Whether two runs were given the same configuration: its text, and its `--set` overrides and options but
 *         those of keys outside the identity (`--out`). When they were and their config hashes still differ, the
 *         model file that the configuration names differed. */
bool same_config_source(const ConfigSource& a, const ConfigSource& b);
/** @brief The hash as 16 hex digits (run.log, summary.json, messages). */
std::string hash_text(std::uint64_t h);

/** @brief Trajectory indices [first, end). */
struct IndexRange {
    std::uint64_t first = 0, end = 0;
    std::uint64_t size() const { return end - first; }
};
/** @brief Part `part` of `parts` equal parts of `r` (sizes differ by at most one; the larger ones first). */
IndexRange split_range(IndexRange r, int part, int parts);

/** @brief A part of a run (see the file comment). */
struct PartialState {
    RunIdentity id;
    ConfigSource source;
    int shard_index = 0, shard_count = 1; ///< `--shard i/N`
    int rank = 0, ranks = 1;              ///< MPI rank of the process that wrote it (resume records)
    IndexRange range;                     ///< the trajectories this part covers
    std::uint64_t next = 0;               ///< [range.first, next) are done (== range.end when complete)
    std::string backend;
    double seconds = 0.0, sampling_seconds = 0.0, integration_seconds = 0.0, reduction_seconds = 0.0,
           transfer_seconds = 0.0;
    EnsembleResult tally;            ///< valid, failed_*, sampling, onset (the rest unused)
    std::string statistics;          ///< stats::EnsembleAccumulator::save
    std::uint64_t samples_bytes = 0; ///< resume: bytes of samples.csv written by [range.first, next)
    std::uint64_t members_bytes = 0; ///< resume / MPI: bytes of the members' scratch file (pipeline/members_output)
    std::string saved;               ///< resume / MPI: SavedTrajectories::save

    bool complete() const { return next == range.end; }
};

/** @brief Adds the counts of `from` (valid, failures, sampling, onset) into `into`. */
void add_tally(EnsembleResult& into, const EnsembleResult& from);
/** @brief Those counts as bytes, and back (a state's tally; a sweep's per-point ones). */
void put_tally(std::string& out, const EnsembleResult& r);
void get_tally(bytes::Reader& in, EnsembleResult& r);

/** @brief The state as bytes (magic, length, payload, checksum) and back; `what` names the source in errors. */
std::string encode_state(const PartialState& s);
PartialState decode_state(const std::string& bytes, const std::string& what);

/** @brief Writes atomically: a temporary next to `path`, fsync, rename, fsync of the folder. */
void write_state_file(const std::filesystem::path& path, const PartialState& s);
/** @brief `data` into `path` the same way (the file appears whole or not at all); throws naming the file. */
void write_file_atomic(const std::filesystem::path& path, const std::string& data);
/** @brief The same for data in pieces, written one after the other (nothing joined in memory). */
void write_file_atomic(const std::filesystem::path& path, const std::vector<std::string_view>& pieces);
/** @brief Reads and checks (magic, length, checksum, version); throws std::runtime_error naming the file. */
PartialState read_state_file(const std::filesystem::path& path);

} // namespace nhvk
