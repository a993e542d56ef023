// SPDX-License-Identifier: MIT
/** @file
 *  @brief `members.nc` (`run.save_members`): every member's metrics at every output time, its initial state, its
 *         parameters and its status (README "Outputs").
 *
 *  During the run each process appends fixed-size binary records, one per member in index order, to its own
 *  resumable scratch file in the output folder (`members.raw.resume`, `members.rank<r>-of-<R>.raw.resume` for MPI
 *  ranks): a chunk's records cost one buffered write, a resume record counts their bytes, and a killed run keeps them.
 *  At the end rank 0 streams the scratch files, in rank order, block by block into members.nc; `nhvk merge` streams
 *  the shards' members.nc files into one. Every value is copied, never recomputed, so the data are the same bytes
 *  whatever the split into chunks, threads, ranks, shards and resumes.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "nhvk/backend/backend.hpp"
#include "pipeline/output_folder.hpp"

namespace nhvk {

/** @brief The shape of one member's record (and of members.nc's per-member variables) for a run of `cfg`. */
struct MemberRecordShape {
    int n = 0, k = 0, nt = 0;
    int n_params = 0;             ///< per-member parameters (0: the run's parameters are the same for all)
    std::vector<int> metrics;     ///< Metric indices (run.member_metrics)
    std::uint64_t point_size = 0; ///< a sweep's members per point (0: no sweep)
    std::size_t doubles() const;  ///< q0, v0, mu0, parameters, onset time, the metrics' series
    std::uint64_t bytes() const;  ///< one record: 8 bytes of statuses, then the doubles
};
MemberRecordShape member_record_shape(const RunConfig& cfg, const ChunkLayout& layout);

/** @brief The scratch file of `rank` of `ranks` in the folder `dir` (the name a resumed run finds again). */
std::filesystem::path members_scratch_path(const std::filesystem::path& dir, int rank, int ranks);
/** @brief The file on disk of that scratch output (`OutputFile` adds `.resume` to its path). */
std::filesystem::path members_scratch_file(const std::filesystem::path& dir, int rank, int ranks);
/** @brief True for the name of a scratch file (any number of ranks): what a run without --resume removes. */
bool is_members_scratch_name(const std::string& file);

/** @brief The bytes members.nc and the scratch files take for `members` members, about (checked against the free
 *         space of the output folder's file system before the run). */
std::uint64_t members_disk_estimate(const MemberRecordShape& s, std::uint64_t members);
/** @brief Why `members` members cannot be saved into `dir` (the file system's free space), or empty. */
std::string members_disk_problem(const RunConfig& cfg, const MemberRecordShape& s, std::uint64_t members,
                                 const std::filesystem::path& dir);

/** @brief One process's records, chunk by chunk. */
class MembersWriter {
public:
    /** @brief The scratch file at `path`, whose first `keep_bytes` bytes (a resumed run's `keep_members` records) are
     *         kept; `ResumableTooShort` when it does not hold them. */
    MembersWriter(const RunConfig& cfg, const ChunkLayout& layout, std::filesystem::path path,
                  std::uint64_t keep_bytes = 0, std::uint64_t keep_members = 0);
    /** @brief The records of a chunk whose member 0 has global index `first` (inputs and metrics on the host). The
     *         times a member did not reach hold NaN (its chunk's slots hold whatever they held before). */
    void add_chunk(const ChunkArgs& a, std::uint64_t first, long long m);
    /** @brief Flushed and synced: the bytes written, for a resume record (after `close`, those it had). */
    std::uint64_t sync_size() {
        if (!closed_) bytes_ = file_->sync_size();
        return bytes_;
    }
    void close() {
        sync_size();
        file_->close();
        closed_ = true;
    }
    const std::filesystem::path& path() const { return path_; }
    const MemberRecordShape& shape() const { return shape_; }

private:
    MemberRecordShape shape_;
    std::filesystem::path path_;
    std::unique_ptr<OutputFile> file_;
    std::vector<char> buf_;
    std::uint64_t bytes_ = 0;
    void add_records(const ChunkArgs& a, long long j0, long long j1);
    bool closed_ = false;
};

/** @brief A part of members.nc's data: the records of `count` members from trajectory `first` on, in `path` (a
 *         scratch file of `bytes` bytes, or a shard's members.nc when `netcdf`). */
struct MembersSource {
    std::filesystem::path path;
    std::uint64_t first = 0, count = 0;
    std::uint64_t bytes = 0;
    bool netcdf = false;
};

/** @brief Writes members.nc to `path` (an output's temporary) from `sources`, in order (their ranges consecutive),
 *         block by block; throws naming the file when a source is short or the library fails. */
void write_members_netcdf(const std::string& path, const RunConfig& cfg, const MemberRecordShape& shape,
                          const std::vector<MembersSource>& sources);

/** @brief The members a shard's members.nc at `path` holds and the first one's index; throws naming the file when
 *         it cannot be read or is not one. */
MembersSource read_members_extent(const std::filesystem::path& path);

} // namespace nhvk
