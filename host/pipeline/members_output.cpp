// SPDX-License-Identifier: MIT
#include "pipeline/members_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "nhvk/member.hpp"
#include "nhvk/metrics.hpp"
#include "nhvk/sample_member.hpp"
#include "nhvk/status.hpp"

#if NHVK_HAVE_NETCDF
#include "pipeline/nc_file.hpp"
#endif

namespace nhvk {

namespace fs = std::filesystem;

namespace {

/** A status slot of a member that was not sampled (not integrated): members.nc's _FillValue of `status`. */
constexpr unsigned char no_status = 255;
/** Members per block of the conversion: a power of two, so that every chunk (a smaller power of two) lies in one
 *  block and each chunk is written whole, once. */
constexpr std::size_t block_members = 4096;
/** Members per write of a chunk's records: the buffer stays small whatever the chunk size. */
constexpr long long write_members = 1024;

} // namespace

std::size_t MemberRecordShape::doubles() const {
    return static_cast<std::size_t>(2 * n + k + n_params + 1) + metrics.size() * static_cast<std::size_t>(nt);
}
std::uint64_t MemberRecordShape::bytes() const { return 8u + 8u * doubles(); }

MemberRecordShape member_record_shape(const RunConfig& cfg, const ChunkLayout& layout) {
    MemberRecordShape s;
    s.n = layout.n;
    s.k = layout.k;
    s.nt = layout.nt;
    s.n_params = layout.per_member_params ? layout.n_params : 0;
    s.metrics = cfg.run.member_metrics;
    s.point_size = cfg.sweep ? static_cast<std::uint64_t>(cfg.run.trajectories) : 0u;
    return s;
}

fs::path members_scratch_path(const fs::path& dir, int rank, int ranks) {
    return dir / (ranks > 1 ? "members.rank" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".raw"
                            : std::string("members.raw"));
}

fs::path members_scratch_file(const fs::path& dir, int rank, int ranks) {
    return members_scratch_path(dir, rank, ranks).string() + ".resume";
}

bool is_members_scratch_name(const std::string& file) {
    const std::string tail = ".raw.resume";
    return file.rfind("members.", 0) == 0 && file.size() > tail.size() &&
           file.compare(file.size() - tail.size(), tail.size(), tail) == 0;
}

std::uint64_t members_disk_estimate(const MemberRecordShape& s, std::uint64_t members) {
    // NOTE: the scratch files and members.nc (the same values, not compressed by default) exist together until the
    // commit removes the scratch files.
    return 2u * members * s.bytes();
}

std::string members_disk_problem(const RunConfig& cfg, const MemberRecordShape& s, std::uint64_t members,
                                 const fs::path& dir) {
    struct statvfs v {};
    if (::statvfs(dir.c_str(), &v) != 0) return {}; // NOTE: the writes themselves report a full disk
    const double free_bytes = static_cast<double>(v.f_bavail) * static_cast<double>(v.f_frsize);
    const double need = static_cast<double>(members_disk_estimate(s, members));
    if (need <= free_bytes) return {};
    char text[320];
    std::snprintf(text, sizeof text,
                  "run.save_members: members.nc for %llu members (%zu metrics at %d output times) needs about %.3g GB "
                  "in '%s' while it is written, and its file system has %.3g GB free; save fewer metrics "
                  "(run.member_metrics), fewer members, or use another run.out",
                  static_cast<unsigned long long>(members), s.metrics.size(), s.nt, need / 1e9, cfg.run.out.c_str(),
                  free_bytes / 1e9);
    return text;
}

MembersWriter::MembersWriter(const RunConfig& cfg, const ChunkLayout& layout, fs::path path, std::uint64_t keep_bytes,
                             std::uint64_t keep_members)
    : shape_(member_record_shape(cfg, layout)), path_(std::move(path)) {
    if (keep_bytes != keep_members * shape_.bytes())
        throw ResumableTooShort("cannot resume '" + path_.string() + ".resume': the resume record counted " +
                                std::to_string(keep_bytes) + " bytes of it, not the " + std::to_string(keep_members) +
                                " records of " + std::to_string(shape_.bytes()) + " bytes of the members it holds");
    file_ = std::make_unique<OutputFile>(path_, path_.filename().string(), keep_bytes, OutputFile::binary);
}

void MembersWriter::add_chunk(const ChunkArgs& a, std::uint64_t, long long m) {
    for (long long j0 = 0; j0 < m; j0 += write_members) add_records(a, j0, std::min(m, j0 + write_members));
}

void MembersWriter::add_records(const ChunkArgs& a, long long j0, long long j1) {
    const std::size_t R = shape_.bytes(), nt = static_cast<std::size_t>(shape_.nt);
    buf_.resize(R * static_cast<std::size_t>(j1 - j0));
    std::vector<double> d(shape_.doubles());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (long long j = j0; j < j1; ++j) {
        char* rec = buf_.data() + R * static_cast<std::size_t>(j - j0);
        const bool sampled = a.sample_status[j] == static_cast<std::uint8_t>(SampleStatus::ok);
        const bool ok = sampled && a.status[j] == static_cast<std::uint8_t>(Status::ok);
        rec[0] = static_cast<char>(a.sample_status[j]);
        // NOTE: a member that could not be sampled was not integrated: its chunk slot holds no status of its own
        rec[1] = static_cast<char>(sampled ? a.status[j] : no_status);
        rec[2] = static_cast<char>(a.failed[j]);
        rec[3] = 0;
        std::memcpy(rec + 4, &a.fail_index[j], 4);
        // NOTE: the output times the member reached, by the rule of the statistics (chunk_reduce's times_counted):
        // a member that stopped counts at the fail_index times before it
        const long long reached = !sampled ? 0 : ok ? static_cast<long long>(nt) : std::max(0, a.fail_index[j]);
        std::size_t at = 0;
        for (int c = 0; c < shape_.n; ++c) d[at++] = a.q0[c * a.ld + j];
        for (int c = 0; c < shape_.n; ++c) d[at++] = a.v0[c * a.ld + j];
        for (int c = 0; c < shape_.k; ++c) d[at++] = a.mu0 ? a.mu0[c * a.ld + j] : 0.0;
        for (int p = 0; p < shape_.n_params; ++p) d[at++] = a.params[p * a.ld + j];
        d[at++] = sampled ? a.metrics[member_series_row(shape_.nt, member_onset_time) * a.ld + j] : nan;
        for (int metric : shape_.metrics)
            for (std::size_t i = 0; i < nt; ++i)
                d[at++] =
                    static_cast<long long>(i) < reached
                        ? a.metrics[(static_cast<long long>(metric) * shape_.nt + static_cast<long long>(i)) * a.ld + j]
                        : nan;
        std::memcpy(rec + 8, d.data(), 8 * d.size());
    }
    file_->stream().write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    file_->check();
}

#if NHVK_HAVE_NETCDF

namespace {

/** The values of `m` members in the layout of members.nc's variables (member-major). */
struct Block {
    std::size_t m = 0;
    std::vector<unsigned char> sample_status, status, failed;
    std::vector<std::int32_t> fail_index;
    std::vector<double> onset, q0, v0, mu0;
    std::vector<std::vector<double>> params, metrics; ///< one per parameter (m), one per metric (m · nt)

    void resize(const MemberRecordShape& s, std::size_t members) {
        m = members;
        sample_status.resize(m);
        status.resize(m);
        failed.resize(m);
        fail_index.resize(m);
        onset.resize(m);
        q0.resize(m * static_cast<std::size_t>(s.n));
        v0.resize(m * static_cast<std::size_t>(s.n));
        mu0.resize(m * static_cast<std::size_t>(s.k));
        params.resize(static_cast<std::size_t>(s.n_params));
        for (auto& p : params) p.resize(m);
        metrics.resize(s.metrics.size());
        for (auto& x : metrics) x.resize(m * static_cast<std::size_t>(s.nt));
    }
};

/** `members` members of the scratch file `fd` from record `at` on. */
void read_raw(int fd, const MembersSource& src, const MemberRecordShape& s, std::uint64_t at, Block& b,
              std::vector<char>& buf) {
    const std::size_t R = s.bytes(), nt = static_cast<std::size_t>(s.nt);
    buf.resize(R * b.m);
    std::size_t got = 0;
    while (got < buf.size()) {
        const ssize_t r = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(at * R + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0)
            throw std::runtime_error("members.nc: cannot read '" + src.path.string() + "': " + std::strerror(errno));
        if (r == 0)
            throw std::runtime_error("members.nc: '" + src.path.string() + "' ends before the " +
                                     std::to_string(src.count) + " members the run counted in it");
        got += static_cast<std::size_t>(r);
    }
    std::vector<double> d(s.doubles());
    for (std::size_t j = 0; j < b.m; ++j) {
        const char* rec = buf.data() + R * j;
        b.sample_status[j] = static_cast<unsigned char>(rec[0]);
        b.status[j] = static_cast<unsigned char>(rec[1]);
        b.failed[j] = static_cast<unsigned char>(rec[2]);
        std::memcpy(&b.fail_index[j], rec + 4, 4);
        std::memcpy(d.data(), rec + 8, 8 * d.size());
        std::size_t k = 0;
        for (int c = 0; c < s.n; ++c) b.q0[j * static_cast<std::size_t>(s.n) + static_cast<std::size_t>(c)] = d[k++];
        for (int c = 0; c < s.n; ++c) b.v0[j * static_cast<std::size_t>(s.n) + static_cast<std::size_t>(c)] = d[k++];
        for (int c = 0; c < s.k; ++c) b.mu0[j * static_cast<std::size_t>(s.k) + static_cast<std::size_t>(c)] = d[k++];
        for (auto& p : b.params) p[j] = d[k++];
        b.onset[j] = d[k++];
        for (auto& x : b.metrics)
            for (std::size_t i = 0; i < nt; ++i) x[j * nt + i] = d[k++];
    }
}

/** The names of members.nc's variables. */
std::string param_var(const RunConfig& cfg, int p) {
    return "param_" + cfg.model.params[static_cast<std::size_t>(p)].name;
}

/** `b.m` members of a shard's members.nc from its member `at` on. */
void read_netcdf(const NcReader& f, const RunConfig& cfg, const MemberRecordShape& s, std::size_t at, Block& b) {
    const std::vector<std::size_t> s1 = {at}, c1 = {b.m};
    f.get(f.var("sample_status"), s1, c1, b.sample_status.data());
    f.get(f.var("status"), s1, c1, b.status.data());
    f.get(f.var("failed_dynamics"), s1, c1, b.failed.data());
    f.get(f.var("fail_time_index"), s1, c1, b.fail_index.data());
    f.get(f.var("onset_time"), s1, c1, b.onset.data());
    f.get(f.var("q0"), {at, 0}, {b.m, static_cast<std::size_t>(s.n)}, b.q0.data());
    f.get(f.var("v0"), {at, 0}, {b.m, static_cast<std::size_t>(s.n)}, b.v0.data());
    if (s.k > 0) f.get(f.var("mu0"), {at, 0}, {b.m, static_cast<std::size_t>(s.k)}, b.mu0.data());
    for (int p = 0; p < s.n_params; ++p)
        f.get(f.var(param_var(cfg, p)), s1, c1, b.params[static_cast<std::size_t>(p)].data());
    for (std::size_t x = 0; x < s.metrics.size(); ++x)
        f.get(f.var(metric_info(s.metrics[x]).name), {at, 0}, {b.m, static_cast<std::size_t>(s.nt)},
              b.metrics[x].data());
}

/** The largest power of two <= 2^16 / width, at most block_members: a chunk of about 2^16 values. */
std::size_t chunk_members(std::size_t width) {
    std::size_t c = 1;
    while (2 * c <= block_members && 2 * c * std::max<std::size_t>(width, 1) <= (std::size_t{1} << 16)) c *= 2;
    return c;
}

std::string flag_meanings(int count, const char* (*name)(int)) {
    std::string s;
    for (int i = 0; i < count; ++i) s += (i ? " " : "") + std::string(name(i));
    return s;
}

} // namespace

void write_members_netcdf(const std::string& path, const RunConfig& cfg, const MemberRecordShape& s,
                          const std::vector<MembersSource>& sources) {
    NcFile f(path, "members.nc");
    const int deflate = cfg.run.members_deflate;
    const std::size_t n = static_cast<std::size_t>(s.n), k = static_cast<std::size_t>(s.k),
                      nt = static_cast<std::size_t>(s.nt);
    const int member_dim = f.dim("member", NC_UNLIMITED), time_dim = f.dim("time", nt),
              coord_dim = f.dim("coordinate", n);
    const int constraint_dim = k > 0 ? f.dim("constraint", k) : -1;
    const std::vector<std::size_t> one = {chunk_members(1)};
    const int member = f.var("member", NC_UINT64, {member_dim}, "trajectory index (samples.csv's index)", one, deflate);
    const int point =
        s.point_size ? f.var("point", NC_INT64, {member_dim}, "sweep point (sweep.nc's point)", one, deflate) : -1;
    const int time = f.var("time", NC_DOUBLE, {time_dim}, "output time t (the model's time unit)");
    const int coordinate = f.var("coordinate", NC_STRING, {coord_dim}, "the model's coordinate");
    const int sample_status = f.var("sample_status", NC_UBYTE, {member_dim},
                                    "how the member was sampled (ok: placed and integrated)", one, deflate);
    std::vector<unsigned char> flags;
    for (int i = 0; i < sample_status_count; ++i) flags.push_back(static_cast<unsigned char>(i));
    f.bytes_attribute(sample_status, "flag_values", flags);
    f.text(sample_status, "flag_meanings",
           flag_meanings(sample_status_count, [](int i) { return sample_status_name(static_cast<SampleStatus>(i)); }));
    const int status = f.var("status", NC_UBYTE, {member_dim},
                             "how the integration ended (missing: the member was not sampled)", one, deflate);
    f.bytes_attribute(status, "_FillValue", {no_status});
    flags.clear();
    for (int i = 0; i <= static_cast<int>(Status::diverged); ++i) flags.push_back(static_cast<unsigned char>(i));
    f.bytes_attribute(status, "flag_values", flags);
    f.text(status, "flag_meanings", flag_meanings(static_cast<int>(Status::diverged) + 1, [](int i) {
               return status_name(static_cast<Status>(i));
           }));
    const int failed =
        f.var("failed_dynamics", NC_UBYTE, {member_dim}, "the dynamics that failed (0: none)", one, deflate);
    f.bytes_attribute(failed, "flag_values", {0, 1, 2});
    f.text(failed, "flag_meanings", "none nonholonomic vakonomic");
    const int fail_index = f.var("fail_time_index", NC_INT, {member_dim},
                                 "a failed member: the output time index it did not reach (-1: failed at t0); a "
                                 "stopped one: the output times it reached",
                                 one, deflate);
    const int onset =
        f.var("onset_time", NC_DOUBLE, {member_dim},
              "time d_q first exceeded divergence.onset_threshold, interpolated (missing: never)", one, deflate);
    const std::vector<std::size_t> state_chunks = {chunk_members(n), n};
    const int q0 = f.var("q0", NC_DOUBLE, {member_dim, coord_dim}, "initial coordinates", state_chunks, deflate);
    const int v0 = f.var("v0", NC_DOUBLE, {member_dim, coord_dim}, "initial velocities", state_chunks, deflate);
    const int mu0 = k > 0 ? f.var("mu0", NC_DOUBLE, {member_dim, constraint_dim}, "initial vakonomic multipliers",
                                  {chunk_members(k), k}, deflate)
                          : -1;
    std::vector<int> params;
    for (std::size_t p = 0; p < cfg.params.size(); ++p) {
        const std::string name = param_var(cfg, static_cast<int>(p));
        const std::string what = "model parameter " + cfg.model.params[p].name;
        params.push_back(s.n_params > 0 ? f.var(name, NC_DOUBLE, {member_dim}, what + " of the member", one, deflate)
                                        : f.var(name, NC_DOUBLE, {}, what + " (the same for every member)"));
    }
    std::vector<int> metrics;
    for (int m : s.metrics) {
        const MetricInfo& d = metric_info(m);
        const int id = f.var(d.name, NC_DOUBLE, {member_dim, time_dim}, d.label, {chunk_members(nt), nt}, deflate);
        f.text(id, "units", metric_unit_info(d.unit).key);
        f.text(id, "definition", d.definition);
        metrics.push_back(id);
    }
    std::vector<int> along = {member, sample_status, status, failed, fail_index, onset, q0, v0};
    if (point >= 0) along.push_back(point);
    if (mu0 >= 0) along.push_back(mu0);
    if (s.n_params > 0) along.insert(along.end(), params.begin(), params.end());
    along.insert(along.end(), metrics.begin(), metrics.end());
    for (int id : along) f.chunk_cache(id, std::size_t{1} << 20);
    run_attributes(f, cfg, "nhvk ensemble members: every member's metrics at every output time", "nhvk.members_nc/1");
    f.text(NC_GLOBAL, "missing_values",
           "NaN (_FillValue) at the output times a member did not reach (failed, stopped or not sampled)");
    f.end_definitions();

    f.put(time, {0}, {nt}, cfg.times.data());
    f.put_strings(coordinate, cfg.model.coords);
    if (s.n_params == 0)
        for (std::size_t p = 0; p < params.size(); ++p) f.put(params[p], {}, {}, &cfg.params[p]);

    Block b;
    std::vector<char> buf;
    std::vector<std::uint64_t> index;
    std::vector<long long> points;
    std::size_t out = 0; // members written
    for (const MembersSource& src : sources) {
        const int fd = src.netcdf ? -1 : ::open(src.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (!src.netcdf && fd < 0)
            throw std::runtime_error("members.nc: cannot open '" + src.path.string() + "': " + std::strerror(errno));
        struct Closer {
            int fd;
            ~Closer() {
                if (fd >= 0) ::close(fd);
            }
        } closer{fd};
        std::unique_ptr<NcReader> nc;
        if (src.netcdf) nc = std::make_unique<NcReader>(src.path.string());
        if (!src.netcdf) {
            struct stat st {};
            if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < src.bytes ||
                src.bytes != src.count * s.bytes())
                throw std::runtime_error("members.nc: '" + src.path.string() + "' does not hold the " +
                                         std::to_string(src.count) + " members the run counted in it");
        }
        std::size_t m = 0;
        for (std::uint64_t at = 0; at < src.count; at += m) {
            // NOTE: a block ends at a multiple of block_members of the output, so chunks are written whole
            const std::size_t room = block_members - out % block_members;
            m = static_cast<std::size_t>(std::min<std::uint64_t>(room, src.count - at));
            b.resize(s, m);
            if (src.netcdf) read_netcdf(*nc, cfg, s, static_cast<std::size_t>(at), b);
            else read_raw(fd, src, s, at, b, buf);
            index.resize(m);
            points.resize(m);
            for (std::size_t j = 0; j < m; ++j) {
                index[j] = src.first + at + j;
                if (s.point_size) points[j] = static_cast<long long>(index[j] / s.point_size);
            }
            const std::vector<std::size_t> s1 = {out}, c1 = {m}, s2 = {out, 0};
            f.put(member, s1, c1, index.data());
            if (point >= 0) f.put(point, s1, c1, points.data());
            f.put(sample_status, s1, c1, b.sample_status.data());
            f.put(status, s1, c1, b.status.data());
            f.put(failed, s1, c1, b.failed.data());
            f.put(fail_index, s1, c1, b.fail_index.data());
            f.put(onset, s1, c1, b.onset.data());
            f.put(q0, s2, {m, n}, b.q0.data());
            f.put(v0, s2, {m, n}, b.v0.data());
            if (mu0 >= 0) f.put(mu0, s2, {m, k}, b.mu0.data());
            for (int p = 0; p < s.n_params; ++p)
                f.put(params[static_cast<std::size_t>(p)], s1, c1, b.params[static_cast<std::size_t>(p)].data());
            for (std::size_t x = 0; x < metrics.size(); ++x) f.put(metrics[x], s2, {m, nt}, b.metrics[x].data());
            out += m;
        }
    }
    f.close();
}

MembersSource read_members_extent(const fs::path& path) {
    NcReader f(path.string());
    MembersSource s;
    s.path = path;
    s.netcdf = true;
    s.count = f.dim_length("member");
    if (f.text(NC_GLOBAL, "schema") != "nhvk.members_nc/1")
        throw std::runtime_error("'" + path.string() + "': not an nhvk members.nc (no schema nhvk.members_nc/1)");
    if (s.count > 0) f.get(f.var("member"), {0}, {1}, &s.first);
    return s;
}

#else

void write_members_netcdf(const std::string&, const RunConfig&, const MemberRecordShape&,
                          const std::vector<MembersSource>&) {
    throw std::runtime_error("members.nc: this nhvk was built without the netCDF library (libnetcdf-dev)");
}

MembersSource read_members_extent(const fs::path&) {
    throw std::runtime_error("members.nc: this nhvk was built without the netCDF library (libnetcdf-dev)");
}

#endif

} // namespace nhvk
