// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk merge DIR... --out DIR`: the outputs of one run from the folders of its `--shard i/N` parts.
 */
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
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
#include "pipeline/output_folder.hpp"
#include "pipeline/partial_state.hpp"
#include "pipeline/reduce_stage.hpp"
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

/** @brief Copies the body of `from` (without its first line when `skip_header`) to `to`. */
void append_file(const fs::path& from, std::ostream& to, bool skip_header) {
    std::ifstream in(from, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open '" + from.string() + "'");
    if (skip_header) {
        std::string header;
        std::getline(in, header);
    }
    to << in.rdbuf();
    if (in.bad()) throw std::runtime_error("cannot read '" + from.string() + "'");
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
    if (run_identity(cfg).config_hash != a.id.config_hash)
        throw UsageError("the configuration kept in the parts loads differently with this build (config hash " +
                         hash_text(run_identity(cfg).config_hash) + ", the parts' " + hash_text(a.id.config_hash) +
                         ")");
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

    const bool samples = std::all_of(parts.begin(), parts.end(),
                                     [&](const Part& p) { return fs::exists(fs::path(p.dir) / "samples.csv", ec); });
    std::vector<fs::path> trajectories;
    for (const Part& part : parts)
        for (fs::directory_iterator it(fs::path(part.dir) / "trajectories", ec), end; !ec && it != end; ++it)
            if (is_output_name("trajectories/" + it->path().filename().string())) trajectories.push_back(it->path());
    cfg.run.save_samples = samples;
    cfg.run.save_trajectories = static_cast<std::int64_t>(trajectories.size());
    // NOTE: the folder is merge's --out, not a config's run.out: errors name the option the user gave
    const std::unique_ptr<OutputFolder> out = claim_output_folder(cfg, false, "--out");
    if (samples) {
        OutputFile& f = out->create("samples.csv");
        for (std::size_t i = 0; i < parts.size(); ++i)
            append_file(fs::path(parts[i].dir) / "samples.csv", f.stream(), i > 0);
        f.close();
    }
    for (const fs::path& t : trajectories) {
        OutputFile& f = out->create("trajectories/" + t.filename().string());
        append_file(t, f.stream(), false);
        f.close();
    }
    write_statistics(cfg, r, *out);
    out->commit();
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
                      << r.valid << ", failed " << r.failed() << "); outputs in " << *out << "/\n";
        exit_code = r.valid > 0 ? exit_ok : exit_no_valid;
    });
}

} // namespace nhvk
