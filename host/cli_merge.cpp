// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk merge DIR... --out DIR`: the outputs of one run from the folders of its `--shard i/N` parts.
 */
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "cli_common.hpp"
#include "config.hpp"
#include "ensemble.hpp"
#include "input_limits.hpp"
#include "modelfile/file_models.hpp"
#include "pipeline/members_output.hpp"
#include "pipeline/output_folder.hpp"
#include "pipeline/partial_state.hpp"
#include "pipeline/reduce_stage.hpp"
#include "pipeline/resume_record.hpp"
#include "pipeline/run_plan.hpp"
#include "pipeline/write_stage.hpp"
#include "registry.hpp"

namespace nhvk {

namespace fs = std::filesystem;

namespace {

struct Part {
    std::string dir;
    PartialState state;
};

/** @brief Reads and checks every part: same run, each shard once, all of them, each complete. */
std::vector<Part> read_parts(const std::vector<std::string>& dirs) {
    std::vector<Part> parts;
    for (const std::string& d : dirs) {
        const fs::path p = fs::path(d) / "partial.nhvk";
        std::error_code ec;
        if (!fs::exists(p, ec))
            throw UsageError("'" + d +
                             "' holds no partial.nhvk: not the output folder of a finished `nhvk run --shard "
                             "i/N` (an unfinished one has a resume record instead; finish it with --resume)");
        try {
            parts.push_back({d, read_state_file(p)});
        } catch (const std::runtime_error& e) {
            throw UsageError(e.what());
        }
    }
    const PartialState& a = parts.front().state;
    std::map<int, std::string> seen;
    for (const Part& part : parts) {
        const PartialState& s = part.state;
        auto differ = [&](const std::string& what) {
            return UsageError("'" + part.dir + "' is a part of another run than '" + parts.front().dir + "': " + what);
        };
        if (s.id.seed != a.id.seed)
            throw differ("different seeds (" + std::to_string(s.id.seed) + " vs " + std::to_string(a.id.seed) + ")");
        if (s.id.trajectories != a.id.trajectories)
            throw differ("different trajectory counts (" + std::to_string(s.id.trajectories) + " vs " +
                         std::to_string(a.id.trajectories) + ")");
        if (s.id.config_hash != a.id.config_hash && same_config_source(s.source, a.source))
            throw differ("the same configuration with different models: the model file it names was changed "
                         "between the parts (config hash " +
                         hash_text(s.id.config_hash) + " vs " + hash_text(a.id.config_hash) +
                         "); rerun the parts with one version of the model file");
        if (s.id.config_hash != a.id.config_hash)
            throw differ("different configurations (config hash " + hash_text(s.id.config_hash) + " vs " +
                         hash_text(a.id.config_hash) + ")");
        if (s.shard_count != a.shard_count)
            throw differ("split into " + std::to_string(s.shard_count) + " shards, not " +
                         std::to_string(a.shard_count));
        if (!s.complete())
            throw UsageError("'" + part.dir + "' holds an unfinished part (trajectories " + std::to_string(s.next) +
                             " to " + std::to_string(s.range.end) + " missing)");
        const auto [it, fresh] = seen.emplace(s.shard_index, part.dir);
        if (!fresh)
            throw UsageError("shard " + std::to_string(s.shard_index) + "/" + std::to_string(s.shard_count) +
                             " is given twice: '" + it->second + "' and '" + part.dir + "'");
    }
    if (static_cast<int>(seen.size()) != a.shard_count) {
        // NOTE: the first few by number, then a count: a million missing shards make one short line
        constexpr std::size_t listed = 10;
        const std::size_t count = static_cast<std::size_t>(a.shard_count) - seen.size();
        std::string missing;
        std::size_t shown = 0;
        for (int i = 0; i < a.shard_count && shown < listed; ++i)
            if (!seen.count(i)) missing += (shown++ ? ", " : "") + std::to_string(i);
        if (count > shown) missing += " and " + std::to_string(count - shown) + " more";
        throw UsageError("incomplete set: shard" + std::string(count > 1 ? "s " : " ") + missing + " of " +
                         std::to_string(a.shard_count) + " missing");
    }
    std::sort(parts.begin(), parts.end(),
              [](const Part& x, const Part& y) { return x.state.shard_index < y.state.shard_index; });
    std::uint64_t expect = 0;
    for (const Part& part : parts) {
        if (part.state.range.first != expect)
            throw UsageError("'" + part.dir + "': its trajectories do not follow the previous shard's");
        expect = part.state.range.end;
    }
    if (expect != a.id.trajectories) throw UsageError("the shards do not cover every trajectory");
    return parts;
}

/** @brief What a part's folder must hold beside its partial.nhvk, as that state recorded it. */
struct PartFiles {
    std::uint64_t samples_bytes = 0;       ///< samples.csv's length (0: the run wrote none)
    std::vector<std::string> trajectories; ///< the names of its saved trajectories, relative to the folder
    MembersSource members;                 ///< its members.nc (run.save_members)
};

/** @brief Checks a part's files against its partial state before anything is written: samples.csv present with the
 *         length the state counted, and trajectories/ holding exactly the files of the members it saved (a stray or
 *         missing name is refused, so two parts can never give the merge the same name). */
PartFiles check_part_files(const Part& part, const RunConfig& cfg) {
    PartFiles f;
    const fs::path dir(part.dir);
    std::error_code ec;
    if (cfg.run.save_samples) {
        const fs::path p = dir / "samples.csv";
        const std::uintmax_t size = fs::file_size(p, ec);
        if (ec)
            throw UsageError("'" + p.string() + "' is missing or unreadable (" + ec.message() +
                             "): the part's partial.nhvk records " + std::to_string(part.state.samples_bytes) +
                             " bytes of samples.csv");
        if (size != part.state.samples_bytes)
            throw UsageError("'" + p.string() + "' holds " + std::to_string(size) + " bytes; the part's partial.nhvk " +
                             "records " + std::to_string(part.state.samples_bytes) +
                             " (cut short or changed since the run)");
        f.samples_bytes = size;
    }
    if (cfg.run.save_members) {
        const fs::path p = dir / "members.nc";
        if (!fs::exists(p, ec))
            throw UsageError("'" + p.string() + "' is missing: the parts' configuration sets run.save_members");
        try {
            f.members = read_members_extent(p);
        } catch (const std::runtime_error& e) {
            throw UsageError(e.what());
        }
        const IndexRange range = part.state.range;
        if (f.members.count != range.size() || (f.members.count > 0 && f.members.first != range.first))
            throw UsageError("'" + p.string() + "' holds " + std::to_string(f.members.count) +
                             " members from trajectory " + std::to_string(f.members.first) +
                             "; the part's partial.nhvk covers trajectories " + range_text(range));
    }
    std::set<std::string> expected;
    for (std::uint64_t g : saved_trajectory_indices(part.state.saved, (dir / "partial.nhvk").string()))
        expected.insert(trajectory_file_name(g));
    std::set<std::string> found;
    for (fs::directory_iterator it(dir / "trajectories", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string rel = "trajectories/" + it->path().filename().string();
        if (!is_output_name(rel)) continue;
        if (!expected.count(rel))
            throw UsageError("'" + (dir / rel).string() + "' is not a trajectory this part saved (its partial.nhvk " +
                             "records " + std::to_string(expected.size()) +
                             "): remove the stray file or merge the folders the parts wrote");
        found.insert(rel);
    }
    for (const std::string& rel : expected) {
        if (found.count(rel)) continue;
        throw UsageError("'" + (dir / rel).string() + "' is missing: the part's partial.nhvk records it as saved");
    }
    f.trajectories.assign(expected.begin(), expected.end());
    return f;
}

/** @brief Copies `from` to `to`, checking it as it goes: `bytes` long, ending at a line end, its first line equal to
 *         `header` (set from the first part when empty) and `rows` lines after it. The header is copied when
 *         `with_header`. */
void append_samples(const fs::path& from, std::uint64_t bytes, std::uint64_t rows, std::string& header,
                    std::ostream& to, bool with_header) {
    std::ifstream in(from, std::ios::binary);
    if (!in) throw UsageError("cannot open '" + from.string() + "'");
    std::string line;
    std::uint64_t seen_bytes = 0, seen_rows = 0;
    bool first = true, cut = false;
    while (std::getline(in, line)) {
        cut = in.eof(); // the last line had no line end
        seen_bytes += line.size() + (cut ? 0 : 1);
        if (first) {
            if (header.empty()) header = line;
            if (line != header)
                throw UsageError("'" + from.string() + "': its header differs from the first part's samples.csv");
            first = false;
            if (!with_header) continue;
        } else {
            ++seen_rows;
        }
        to << line << '\n';
    }
    if (in.bad()) throw UsageError("cannot read '" + from.string() + "'");
    if (cut || seen_bytes != bytes || seen_rows != rows || first)
        throw UsageError("'" + from.string() + "' holds " + std::to_string(seen_rows) + " rows in " +
                         std::to_string(seen_bytes) + " bytes" + (cut ? ", its last row cut short" : "") +
                         "; the part's partial.nhvk records " + std::to_string(rows) + " rows in " +
                         std::to_string(bytes) + " bytes");
}

/** @brief Copies a saved trajectory file whole; one that does not end at a line end was cut short. */
void copy_trajectory(const fs::path& from, std::ostream& to) {
    std::ifstream in(from, std::ios::binary);
    if (!in) throw UsageError("cannot open '" + from.string() + "'");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw UsageError("cannot read '" + from.string() + "'");
    if (text.empty() || text.back() != '\n')
        throw UsageError("'" + from.string() + "' is cut short (it does not end at the end of a row)");
    to << text;
}

EnsembleResult merge_parts(const std::vector<std::string>& dirs, const std::string& out_dir,
                           const std::string& summary_md, int threads) {
    std::error_code ec;
    for (const std::string& d : dirs)
        if (fs::weakly_canonical(d, ec) == fs::weakly_canonical(out_dir, ec))
            throw UsageError("--out '" + out_dir +
                             "' is one of the folders to merge; choose a new folder (the "
                             "merge would replace that shard's outputs)");
    const std::vector<Part> parts = read_parts(dirs);
    const PartialState& a = parts.front().state;
    RunConfig cfg;
    try {
        cfg = parse_config(a.source.text, a.source.name, a.source.sets, model_registry(), a.source.options);
    } catch (const ConfigError& e) {
        throw UsageError(std::string("the configuration kept in the parts no longer loads: ") + e.what());
    }
    std::uint64_t now = run_identity(cfg).config_hash;
    if (now != a.id.config_hash && modelfile::find_registered(cfg.model.name) &&
        cfg.integrator.equations != EquationsKind::ad) {
        // NOTE: a model file interpreted where the parts ran (no C++ compiler there) integrated the reference
        // equations, and the parts' identity says so (cli_run.cpp): the merge, which compiles nothing, takes that
        RunConfig interpreted = cfg;
        interpreted.integrator.equations = EquationsKind::ad;
        if (run_identity(interpreted).config_hash == a.id.config_hash) {
            cfg = interpreted;
            now = a.id.config_hash;
        }
    }
    const std::string model_file = model_file_of(cfg);
    if (now != a.id.config_hash && !model_file.empty())
        throw UsageError("the model file '" + clip(model_file) +
                         "' that the parts' configuration names has changed since they ran (or this build loads it "
                         "differently): config hash " +
                         hash_text(now) + ", the parts' " + hash_text(a.id.config_hash) +
                         "; merge with the model file as the parts ran it, or rerun the parts");
    if (now != a.id.config_hash)
        throw UsageError("the configuration kept in the parts loads differently with this build (config hash " +
                         hash_text(now) + ", the parts' " + hash_text(a.id.config_hash) + ")");
    // NOTE: after the configuration is read (cheap; nothing written yet): its model file is an input of the merge
    std::vector<std::string> inputs;
    if (!model_file.empty()) inputs.push_back(model_file);
    if (const std::string p = output_folder_problem(out_dir, "--out"); !p.empty()) throw std::runtime_error(p);
    if (const std::string p = output_folder_input_problem(out_dir, "--out", inputs); !p.empty()) throw UsageError(p);
    if (!summary_md.empty()) {
        std::vector<std::string> folders = dirs;
        folders.push_back(out_dir);
        if (const std::string p = side_file_problem(summary_md, inputs, folders); !p.empty())
            throw UsageError("--summary-md: " + p);
    }
    cfg.run.out = out_dir;

    EnsembleResult r;
    // NOTE: as `run` counts them: 0 is all cores, more than the cores are lowered to them; the results do not
    // depend on the count (summary.json `threads` says it)
    const int cores = std::max(1, omp_get_num_procs());
    r.threads = threads == 0 ? omp_get_max_threads() : std::min(threads, cores);
    omp_set_num_threads(r.threads);
    r.requested = a.id.trajectories;
    r.times = cfg.times;
    r.config_hash = hash_text(a.id.config_hash);
    r.first = 0;
    r.end = a.id.trajectories;
    ReduceStage reduce(cfg, r);
    std::set<std::string> backends;
    for (const Part& part : parts) {
        const std::string what = (fs::path(part.dir) / "partial.nhvk").string();
        reduce.add_part(part.state, what);
        backends.insert(part.state.backend);
        r.ranks = std::max(r.ranks, part.state.ranks);
        r.seconds += part.state.seconds;
        r.merged_from.push_back(part.dir);
    }
    reduce.finish();
    for (const std::string& b : backends) r.backend += (r.backend.empty() ? "" : "+") + b;

    // NOTE: every part's files are checked before the output folder is claimed, so a merge that would fail on them
    // leaves an earlier merge in --out as it was.
    std::vector<PartFiles> files;
    std::size_t trajectories = 0;
    for (const Part& part : parts) {
        files.push_back(check_part_files(part, cfg));
        trajectories += files.back().trajectories.size();
    }
    cfg.run.save_trajectories = static_cast<std::int64_t>(trajectories);
    // NOTE: the folder is merge's --out, not a config's run.out: errors name the option the user gave
    const std::unique_ptr<OutputFolder> out = claim_output_folder(cfg, false, "--out");
    if (cfg.run.save_samples) {
        OutputFile& f = out->create("samples.csv");
        std::string header;
        for (std::size_t i = 0; i < parts.size(); ++i)
            append_samples(fs::path(parts[i].dir) / "samples.csv", files[i].samples_bytes, parts[i].state.range.size(),
                           header, f.stream(), i == 0);
        f.close();
    }
    if (cfg.run.save_members) {
        std::vector<MembersSource> sources;
        for (const PartFiles& pf : files) sources.push_back(pf.members);
        OutputFile& f = out->create("members.nc");
        write_members_netcdf(f.temp_path(), cfg, member_record_shape(cfg, make_run_plan(cfg, 1).layout), sources);
        f.close();
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
        for (const std::string& rel : files[i].trajectories) {
            OutputFile& f = out->create(rel);
            copy_trajectory(fs::path(parts[i].dir) / rel, f.stream());
            f.close();
        }
    write_statistics(cfg, r, *out);
    if (const std::string note = removed_note(out_dir, out->commit(),
                                              "the earlier run's outputs that this merge does "
                                              "not write");
        !note.empty())
        std::cerr << note << "\n";
    if (!summary_md.empty()) write_file_atomic(summary_md, summary_markdown(cfg, r));
    return r;
}

} // namespace

void add_merge_command(CLI::App& app, int& exit_code) {
    auto dirs = std::make_shared<std::vector<std::string>>();
    auto out = std::make_shared<std::string>();
    auto quiet = std::make_shared<bool>(false);
    auto summary_md = std::make_shared<std::string>();
    auto threads = std::make_shared<int>(0);
    auto* cmd =
        app.add_subcommand("merge", "Merge the output folders of a run's --shard i/N parts into one run's outputs");
    cmd->add_option("dirs", *dirs, "the output folders of the parts (any order)")->required();
    cmd->add_option("--out", *out, "the output folder of the merged run")->required();
    cmd->add_flag("-q,--quiet", *quiet, "no summary on stderr");
    cmd->add_option("--summary-md", *summary_md, "also write the Markdown summary (summary.md) to this file");
    cmd->add_option("--threads", *threads, "CPU threads, 0 = all cores (more are lowered to the cores)")
        ->check(CLI::Range(0, 65536));
    cmd->callback([dirs, out, quiet, summary_md, threads, cmd, &exit_code]() {
        clean_up_outputs_on_signals();
        refuse_empty_values(*cmd);
        const EnsembleResult r = merge_parts(*dirs, *out, *summary_md, *threads);
        if (!*quiet)
            std::cerr << "nhvk merge: " << dirs->size() << " shards, " << r.requested << " trajectories (valid "
                      << r.valid << ", diverged " << r.diverged << ", failed " << r.failed() << "); outputs in " << *out
                      << "/\n";
        exit_code = r.valid + r.diverged > 0 ? exit_ok : exit_no_valid;
    });
}

} // namespace nhvk
