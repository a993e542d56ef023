// SPDX-License-Identifier: MIT
#include "pipeline/partial_state.hpp"

#include "input_limits.hpp"
#include "modelfile/file_models.hpp"
#include "pipeline/output_folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace nhvk {

namespace fs = std::filesystem;

namespace {

// NOTE: v4: the tally counts members stopped at divergence.stop_at, and the statistics carry the replica groups'
// series; v3 had neither; v3 and later carry the signed histogram rows (log_histogram.hpp); v2 carried the [1e-30,
// 1e10) bins.
constexpr char magic[16] = {'N', 'H', 'V', 'K', '-', 'S', 'T', 'A', 'T', 'E', '-', 'v', '5', '\n', '\0', '\0'};
constexpr char magic_v4[16] = {'N', 'H', 'V', 'K', '-', 'S', 'T', 'A', 'T', 'E', '-', 'v', '4', '\n', '\0', '\0'};
constexpr char magic_v3[16] = {'N', 'H', 'V', 'K', '-', 'S', 'T', 'A', 'T', 'E', '-', 'v', '3', '\n', '\0', '\0'};
constexpr char magic_v2[16] = {'N', 'H', 'V', 'K', '-', 'S', 'T', 'A', 'T', 'E', '-', 'v', '2', '\n', '\0', '\0'};

/// the keys of [run] that change no result: left out of the identity
constexpr const char* unhashed_run_keys[] = {"out", "threads", "chunk", "backend"};

/** Whether `key` (a dotted config key) is one of them. */
bool outside_identity(const std::string& key) {
    for (const char* k : unhashed_run_keys)
        if (key == std::string("run.") + k) return true;
    return false;
}

} // namespace

RunIdentity run_identity(const RunConfig& cfg) {
    nlohmann::json j = cfg.resolved_json();
    for (const char* key : unhashed_run_keys) j["run"].erase(key);
    // NOTE: the resolved config names a model file's (or an inline model's) model only by its name: its canonical
    // text goes in too, so an edit of the file between two parts, or before a resume, makes another run; a built-in
    // model adds nothing. The model is the one that runs under the name (a model file's replaces a built-in model).
    const modelfile::FileModel* model = modelfile::find_registered(cfg.model.name);
    if (model) j["model"]["text"] = model->text;
    const std::string text = j.dump(); // object keys sorted: the same configuration, the same text
    RunIdentity id;
    id.version = nhvk_version;
    id.config_hash = bytes::fnv1a64(text.data(), text.size());
    id.model_hash = model ? bytes::fnv1a64(model->text.data(), model->text.size()) : 0u;
    id.trajectories = cfg.members(); // a sweep's: every point's members
    id.seed = static_cast<std::uint64_t>(cfg.run.seed);
    return id;
}

std::string model_file_of(const RunConfig& cfg) {
    const modelfile::FileModel* model = modelfile::find_registered(cfg.model.name);
    // NOTE: an inline model's source is the config itself
    return model && model->source != cfg.source_path ? model->source : std::string();
}

bool same_config_source(const ConfigSource& a, const ConfigSource& b) {
    // NOTE: the overrides of keys outside the identity (--out above all, which differs between parts) do not count
    auto kept = [](const ConfigSource& s) {
        std::vector<std::string> v = s.sets;
        for (const OptionOverride& o : s.options)
            v.push_back(o.key + (o.is_string ? "=\"" : "=") + o.value); // options apply after every --set
        v.erase(std::remove_if(v.begin(), v.end(),
                               [](const std::string& x) { return outside_identity(x.substr(0, x.find('='))); }),
                v.end());
        return v;
    };
    return a.text == b.text && kept(a) == kept(b);
}

std::string hash_text(std::uint64_t h) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

IndexRange split_range(IndexRange r, int part, int parts) {
    const std::uint64_t n = r.size(), p = static_cast<std::uint64_t>(parts), i = static_cast<std::uint64_t>(part);
    const std::uint64_t base = n / p, extra = n % p;
    const std::uint64_t first = r.first + i * base + (i < extra ? i : extra);
    return {first, first + base + (i < extra ? 1u : 0u)};
}

void add_tally(EnsembleResult& into, const EnsembleResult& from) {
    into.valid += from.valid;
    for (std::size_t i = 0; i < into.failed_by_status.size(); ++i) into.failed_by_status[i] += from.failed_by_status[i];
    for (std::size_t d = 0; d < into.failed_by_dynamics.size(); ++d) {
        into.failed_by_dynamics[d] += from.failed_by_dynamics[d];
        for (std::size_t i = 0; i < into.failed_by_dynamics_status[d].size(); ++i)
            into.failed_by_dynamics_status[d][i] += from.failed_by_dynamics_status[d][i];
    }
    for (std::size_t i = 0; i < into.sampling.size(); ++i) into.sampling[i] += from.sampling[i];
    into.diverged += from.diverged;
    if (into.diverged_at.size() < from.diverged_at.size()) into.diverged_at.resize(from.diverged_at.size(), 0u);
    for (std::size_t i = 0; i < from.diverged_at.size(); ++i) into.diverged_at[i] += from.diverged_at[i];
    if (into.onset.counts.empty() && into.onset.never == 0 &&
        into.onset.censored == 0) // an empty tally takes the other's output times
        into.onset = from.onset;
    else into.onset.merge(from.onset);
}

void put_tally(std::string& out, const EnsembleResult& r) {
    bytes::put(out, r.valid);
    bytes::put(out, r.failed_by_status);
    bytes::put(out, r.failed_by_dynamics);
    bytes::put(out, r.failed_by_dynamics_status);
    bytes::put(out, r.sampling);
    bytes::put_vector(out, r.onset.counts);
    bytes::put(out, r.onset.never);
    bytes::put(out, r.onset.censored);
    bytes::put(out, r.diverged);
    bytes::put_vector(out, r.diverged_at);
}

void get_tally(bytes::Reader& in, EnsembleResult& r) {
    r.valid = in.get<std::uint64_t>();
    r.failed_by_status = in.get<decltype(r.failed_by_status)>();
    r.failed_by_dynamics = in.get<decltype(r.failed_by_dynamics)>();
    r.failed_by_dynamics_status = in.get<decltype(r.failed_by_dynamics_status)>();
    r.sampling = in.get<decltype(r.sampling)>();
    r.onset.counts = in.get_vector<std::uint64_t>();
    r.onset.never = in.get<std::uint64_t>();
    r.onset.censored = in.get<std::uint64_t>();
    r.diverged = in.get<std::uint64_t>();
    r.diverged_at = in.get_vector<std::uint64_t>();
}

namespace {

/** @brief A state's bytes as five pieces, the two large strings (the statistics, with exact quantiles every value,
 *         and the saved trajectories) referred to, not copied: a resume record is written at a stop, whose wait
 *         should be the disk's, not that of copies of up to `run.exact_memory_mb` of values. */
struct StatePieces {
    std::string before;            ///< magic, payload length, the fields up to the statistics' length
    const std::string* statistics; ///< the statistics' bytes
    std::string between;           ///< samples_bytes, members_bytes, the saved trajectories' length
    const std::string* saved;      ///< the saved trajectories' bytes
    std::string after;             ///< the checksum of the payload
    std::vector<std::string_view> views() const { return {before, *statistics, between, *saved, after}; }
};

StatePieces state_pieces(const PartialState& s) {
    std::string p;
    bytes::put_string(p, s.id.version);
    bytes::put(p, s.id.config_hash);
    bytes::put(p, s.id.trajectories);
    bytes::put(p, s.id.seed);
    bytes::put_string(p, s.source.name);
    bytes::put_string(p, s.source.text);
    bytes::put<std::uint64_t>(p, s.source.sets.size());
    for (const std::string& x : s.source.sets) bytes::put_string(p, x);
    bytes::put<std::uint64_t>(p, s.source.options.size());
    for (const OptionOverride& o : s.source.options) {
        bytes::put_string(p, o.option);
        bytes::put_string(p, o.key);
        bytes::put_string(p, o.value);
        bytes::put<std::uint8_t>(p, o.is_string ? 1u : 0u);
    }
    for (int v : {s.shard_index, s.shard_count, s.rank, s.ranks}) bytes::put<std::int32_t>(p, v);
    bytes::put(p, s.range.first);
    bytes::put(p, s.range.end);
    bytes::put(p, s.next);
    bytes::put_string(p, s.backend);
    for (double v : {s.seconds, s.sampling_seconds, s.integration_seconds, s.reduction_seconds, s.transfer_seconds})
        bytes::put(p, v);
    put_tally(p, s.tally);
    // NOTE: the layout is that of put_string(statistics), put(samples_bytes), put(members_bytes), put_string(saved)
    bytes::put<std::uint64_t>(p, s.statistics.size());
    StatePieces r;
    r.statistics = &s.statistics;
    r.saved = &s.saved;
    bytes::put(r.between, s.samples_bytes);
    bytes::put(r.between, s.members_bytes);
    bytes::put<std::uint64_t>(r.between, s.saved.size());
    const std::uint64_t length = p.size() + s.statistics.size() + r.between.size() + s.saved.size();
    std::uint64_t h = bytes::fnv1a64(p.data(), p.size());
    h = bytes::fnv1a64(s.statistics.data(), s.statistics.size(), h);
    h = bytes::fnv1a64(r.between.data(), r.between.size(), h);
    h = bytes::fnv1a64(s.saved.data(), s.saved.size(), h);
    r.before.assign(magic, sizeof magic);
    bytes::put(r.before, length);
    r.before += p;
    bytes::put(r.after, h);
    return r;
}

} // namespace

std::string encode_state(const PartialState& s) {
    const StatePieces pieces = state_pieces(s);
    std::string out;
    std::size_t n = 0;
    for (std::string_view v : pieces.views()) n += v.size();
    out.reserve(n);
    for (std::string_view v : pieces.views()) out.append(v.data(), v.size());
    return out;
}

PartialState decode_state(const std::string& data, const std::string& what) {
    if (data.size() >= sizeof magic_v2 && std::memcmp(data.data(), magic_v2, sizeof magic_v2) == 0)
        throw std::runtime_error(what + ": a state file of an older nhvk (NHVK-STATE-v2, whose histograms covered only "
                                        "[1e-30, 1e10)); this nhvk cannot continue or merge it: rerun that part");
    if (data.size() >= sizeof magic_v3 && std::memcmp(data.data(), magic_v3, sizeof magic_v3) == 0)
        throw std::runtime_error(what + ": a state file of an older nhvk (NHVK-STATE-v3, without the replica groups' "
                                        "statistics and the diverged count); this nhvk cannot continue or merge it: "
                                        "rerun that part");
    if (data.size() >= sizeof magic_v4 && std::memcmp(data.data(), magic_v4, sizeof magic_v4) == 0)
        throw std::runtime_error(what +
                                 ": a state file of an older nhvk (NHVK-STATE-v4, without the byte count of "
                                 "members.nc's records); this nhvk cannot continue or merge it: rerun that part");
    if (data.size() < sizeof magic + 16 || std::memcmp(data.data(), magic, sizeof magic) != 0)
        throw std::runtime_error(what + ": not an nhvk state file (no NHVK-STATE-v5 header)");
    std::uint64_t n = 0;
    std::memcpy(&n, data.data() + sizeof magic, sizeof n);
    if (n != data.size() - sizeof magic - 16)
        throw std::runtime_error(what + ": truncated or extended (payload of " + std::to_string(n) +
                                 " bytes, file of " + std::to_string(data.size()) + ")");
    const std::string payload = data.substr(sizeof magic + 8, static_cast<std::size_t>(n));
    std::uint64_t sum = 0;
    std::memcpy(&sum, data.data() + data.size() - 8, sizeof sum);
    if (sum != bytes::fnv1a64(payload.data(), payload.size()))
        throw std::runtime_error(what + ": checksum mismatch (the file is damaged)");

    bytes::Reader in(payload, what);
    PartialState s;
    s.id.version = in.get_string();
    if (s.id.version != nhvk_version)
        throw std::runtime_error(what + ": written by nhvk " + clip(s.id.version) + ", this is nhvk " + nhvk_version);
    s.id.config_hash = in.get<std::uint64_t>();
    s.id.trajectories = in.get<std::uint64_t>();
    s.id.seed = in.get<std::uint64_t>();
    s.source.name = in.get_string();
    s.source.text = in.get_string();
    const auto n_sets = in.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n_sets && in.remaining() > 0; ++i) s.source.sets.push_back(in.get_string());
    const auto n_options = in.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < n_options && in.remaining() > 0; ++i) {
        OptionOverride o;
        o.option = in.get_string();
        o.key = in.get_string();
        o.value = in.get_string();
        o.is_string = in.get<std::uint8_t>() != 0;
        s.source.options.push_back(std::move(o));
    }
    s.shard_index = in.get<std::int32_t>();
    s.shard_count = in.get<std::int32_t>();
    s.rank = in.get<std::int32_t>();
    s.ranks = in.get<std::int32_t>();
    s.range.first = in.get<std::uint64_t>();
    s.range.end = in.get<std::uint64_t>();
    s.next = in.get<std::uint64_t>();
    s.backend = in.get_string();
    s.seconds = in.get<double>();
    s.sampling_seconds = in.get<double>();
    s.integration_seconds = in.get<double>();
    s.reduction_seconds = in.get<double>();
    s.transfer_seconds = in.get<double>();
    get_tally(in, s.tally);
    s.statistics = in.get_string();
    s.samples_bytes = in.get<std::uint64_t>();
    s.members_bytes = in.get<std::uint64_t>();
    s.saved = in.get_string();
    if (in.remaining() != 0) throw std::runtime_error(what + ": unexpected bytes after the state");
    if (s.range.first > s.range.end || s.next < s.range.first || s.next > s.range.end ||
        s.range.end > s.id.trajectories || s.shard_count < 1 || s.shard_index < 0 || s.shard_index >= s.shard_count)
        throw std::runtime_error(what + ": inconsistent index range");
    return s;
}

void write_state_file(const fs::path& path, const PartialState& s) { write_file_atomic(path, state_pieces(s).views()); }

void write_file_atomic(const fs::path& path, const std::string& data) {
    write_file_atomic(path, std::vector<std::string_view>{data});
}

void write_file_atomic(const fs::path& path, const std::vector<std::string_view>& pieces) {
    const std::string tmp = path.string() + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create '" + tmp + "': " + std::strerror(errno));
    int err = 0;
    for (std::string_view piece : pieces)
        if (err == 0) err = write_fully(fd, piece.data(), piece.size());
    if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err != 0) {
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot write '" + path.string() + "': " + std::strerror(err));
    }
    const int dfd =
        ::open(path.parent_path().empty() ? "." : path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

PartialState read_state_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open '" + path.string() + "': " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw std::runtime_error("cannot read '" + path.string() + "': " + std::strerror(errno));
    return decode_state(ss.str(), path.string());
}

} // namespace nhvk
