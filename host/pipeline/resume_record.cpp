// SPDX-License-Identifier: MIT
#include "pipeline/resume_record.hpp"

#include "input_limits.hpp"
#include "pipeline/members_output.hpp"
#include "pipeline/output_folder.hpp"

#include <cstdio>

#include <set>
#include <vector>

namespace nhvk {

namespace fs = std::filesystem;

ResumeRefused unusable_resume(const std::exception& e) {
    return ResumeRefused("--resume: " + std::string(e.what()) +
                         "; run without --resume to start over (that removes the record)");
}

std::string range_text(IndexRange r) { return "[" + std::to_string(r.first) + ", " + std::to_string(r.end) + ")"; }

ResumeRecord::ResumeRecord(const fs::path& dir, int rank, int ranks) : path_(dir / name(rank, ranks)), ranks_(ranks) {}

std::string ResumeRecord::name(int rank, int ranks) {
    if (ranks == 1) return "resume.nhvk";
    return "resume.rank" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".nhvk";
}

void ResumeRecord::tidy(const fs::path& dir, bool resume, int ranks) {
    std::set<std::string> own;
    for (int k = 0; k < ranks; ++k) own.insert(name(k, ranks));
    std::error_code ec;
    std::vector<std::string> foreign, removed;
    bool any_own = false;
    for (fs::directory_iterator it(dir, ec), e; !ec && it != e; it.increment(ec)) {
        const std::string file = it->path().filename().string();
        std::error_code ec2;
        // NOTE: the members' scratch files are resume state too (their byte counts are in the records)
        if (is_members_scratch_name(file)) {
            if (!resume && fs::remove(it->path(), ec2)) removed.push_back(file);
            continue;
        }
        if (file.rfind("resume", 0) != 0) continue;
        const bool record = file.size() > 5 && file.compare(file.size() - 5, 5, ".nhvk") == 0;
        if (record && !resume && fs::remove(it->path(), ec2)) removed.push_back(file);
        else if (file.find(".nhvk.tmp.") != std::string::npos) fs::remove(it->path(), ec2);
        else if (record && own.count(file)) any_own = true;
        else if (record) foreign.push_back(file);
    }
    if (!resume && fs::remove(dir / "samples.csv.resume", ec)) removed.push_back("samples.csv.resume");
    if (!removed.empty())
        std::fprintf(stderr, "%s (this run was started without --resume)\n",
                     removed_note(dir, removed, "an earlier unfinished run's resume state").c_str());
    if (resume && !any_own && !foreign.empty())
        throw ResumeRefused("--resume: the resume record '" + (dir / foreign.front()).string() +
                            "' is of a run with another number of MPI ranks than this one (" + std::to_string(ranks) +
                            "); resume with the same number of ranks, or run without --resume to start over");
}

std::optional<PartialState> ResumeRecord::read(const RunIdentity& id, const ConfigSource& source, IndexRange range,
                                               int shard_index, int shard_count) {
    std::error_code ec;
    if (!fs::exists(path_, ec)) return std::nullopt;
    // NOTE: a record that cannot be read (damaged, truncated, of another version, unreadable) is a usage error like
    // a record of another run: refused with exit 2, everything left as it is.
    PartialState st;
    try {
        st = read_state_file(path_);
    } catch (const std::exception& e) {
        throw unusable_resume(e);
    }
    if (st.id.config_hash != id.config_hash && st.id.trajectories == id.trajectories && st.id.seed == id.seed &&
        same_config_source(st.source, source))
        throw ResumeRefused("--resume: the resume record '" + clip(path_.string()) +
                            "' was written by a run of the same configuration with another model: the model file "
                            "it names has changed since (config hash " +
                            hash_text(st.id.config_hash) + ", this run's " + hash_text(id.config_hash) +
                            "); run without --resume to start over, or restore the model file as it was");
    if (st.id.config_hash != id.config_hash || st.id.trajectories != id.trajectories || st.id.seed != id.seed)
        throw ResumeRefused("--resume: the resume record '" + path_.string() +
                            "' was written by a run of another configuration (config hash " +
                            hash_text(st.id.config_hash) + ", this run's " + hash_text(id.config_hash) +
                            "); run without --resume to start over");
    if (st.range.first != range.first || st.range.end != range.end || st.ranks != ranks_ ||
        st.shard_index != shard_index || st.shard_count != shard_count)
        throw ResumeRefused("--resume: the resume record '" + path_.string() + "' covers trajectories " +
                            range_text(st.range) + " (shard " + std::to_string(st.shard_index) + "/" +
                            std::to_string(st.shard_count) + ", " + std::to_string(st.ranks) +
                            " ranks); this run covers " + range_text(range) +
                            ": resume with the same --shard and number of ranks");
    exists_ = true;
    return st;
}

void ResumeRecord::write(const PartialState& state) {
    write_state_file(path_, state);
    exists_ = true;
}

} // namespace nhvk
