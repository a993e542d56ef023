// SPDX-License-Identifier: MIT
/** @file
 *  @brief A NetCDF-4 file written or read through the netCDF C library, every call checked and its failure thrown
 *         with the file's name and the library's message. Only for builds with the library (NHVK_HAVE_NETCDF).
 */
#pragma once

#if !NHVK_HAVE_NETCDF
#error "pipeline/nc_file.hpp needs the netCDF library (NHVK_HAVE_NETCDF)"
#endif

#include <fcntl.h>
#include <netcdf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.hpp"
#include "nhvk_version.hpp"

namespace nhvk {

/** @brief The library opens a path by its own rules (quotes, backslashes and `=` in a folder's name make it fail), so
 *         it is given the file through a descriptor this process opened: /proc/self/fd/N, a plain name for the same
 *         file (the path itself where /proc is missing). */
class NcPath {
public:
    NcPath(const std::string& path, int flags, const std::string& name) {
        fd_ = ::open(path.c_str(), flags | O_CLOEXEC);
        if (fd_ < 0) throw std::runtime_error(name + ": cannot open '" + path + "': " + std::strerror(errno));
        const std::string by_fd = "/proc/self/fd/" + std::to_string(fd_);
        use_ = ::access(by_fd.c_str(), F_OK) == 0 ? by_fd : path;
    }
    ~NcPath() {
        if (fd_ >= 0) ::close(fd_);
    }
    NcPath(const NcPath&) = delete;
    NcPath& operator=(const NcPath&) = delete;
    const char* c_str() const { return use_.c_str(); }

private:
    int fd_ = -1;
    std::string use_;
};

/** @brief One NetCDF-4 file being written. */
class NcFile {
public:
    /** NC_NETCDF4 (HDF5) for strings, 64-bit unsigned counts, unlimited chunked dimensions and compression;
     *  NC_CLOBBER because the output folder has already created the (empty) temporary this writes into. */
    NcFile(const std::string& path, std::string name) : name_(std::move(name)), path_(path, O_RDWR, name_) {
        check(nc_create(path_.c_str(), NC_NETCDF4 | NC_CLOBBER, &id_), "cannot create '" + path + "'");
        open_ = true;
    }
    ~NcFile() {
        if (open_) nc_close(id_);
    }
    NcFile(const NcFile&) = delete;
    NcFile& operator=(const NcFile&) = delete;

    /** A dimension; `len` 0 makes it unlimited (it grows with the writes). */
    int dim(const std::string& n, std::size_t len) {
        int d = 0;
        check(nc_def_dim(id_, n.c_str(), len, &d), "dimension " + n);
        return d;
    }
    /** A variable over `dims`; doubles get _FillValue NaN (the CSV's empty field: no valid value). `chunks`: the
     *  chunk shape, compressed with shuffle and deflate at `deflate` (0: stored as it is). */
    int var(const std::string& n, nc_type type, const std::vector<int>& dims, const std::string& long_name,
            const std::vector<std::size_t>& chunks = {}, int deflate = 1) {
        int v = 0;
        check(nc_def_var(id_, n.c_str(), type, static_cast<int>(dims.size()), dims.data(), &v), "variable " + n);
        if (!chunks.empty()) {
            check(nc_def_var_chunking(id_, v, NC_CHUNKED, chunks.data()), "chunking of " + n);
            if (deflate > 0) check(nc_def_var_deflate(id_, v, 1, 1, deflate), "compression of " + n);
        }
        if (type == NC_DOUBLE) {
            const double nan = std::numeric_limits<double>::quiet_NaN();
            check(nc_put_att_double(id_, v, "_FillValue", NC_DOUBLE, 1, &nan), "_FillValue of " + n);
        }
        if (!long_name.empty()) text(v, "long_name", long_name);
        return v;
    }
    /** A chunk cache of `bytes` for `var`: a file written once, chunk after chunk, needs little more than a chunk,
     *  where the library's default holds many (memory that a large file would fill). */
    void chunk_cache(int var, std::size_t bytes) {
        check(nc_set_var_chunk_cache(id_, var, bytes, 61, 1.0f), "chunk cache");
    }
    void text(int var, const std::string& key, const std::string& value) {
        check(nc_put_att_text(id_, var, key.c_str(), value.size(), value.data()), "attribute " + key);
    }
    void bytes_attribute(int var, const std::string& key, const std::vector<unsigned char>& values) {
        check(nc_put_att_uchar(id_, var, key.c_str(), NC_UBYTE, values.size(), values.data()), "attribute " + key);
    }
    void end_definitions() { check(nc_enddef(id_), "end of the definitions"); }
    void put(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             const double* data) {
        check(nc_put_vara_double(id_, var, start.data(), count.data(), data), "values");
    }
    void put(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             const std::uint64_t* data) {
        static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t), "64-bit counts");
        check(nc_put_vara_ulonglong(id_, var, start.data(), count.data(),
                                    reinterpret_cast<const unsigned long long*>(data)),
              "values");
    }
    void put(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             const long long* data) {
        check(nc_put_vara_longlong(id_, var, start.data(), count.data(), data), "values");
    }
    void put(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             const unsigned char* data) {
        check(nc_put_vara_uchar(id_, var, start.data(), count.data(), data), "values");
    }
    void put(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             const std::int32_t* data) {
        check(nc_put_vara_int(id_, var, start.data(), count.data(), data), "values");
    }
    void put_strings(int var, const std::vector<std::string>& values) {
        std::vector<const char*> p;
        for (const std::string& s : values) p.push_back(s.c_str());
        check(nc_put_var_string(id_, var, p.data()), "strings");
    }
    void close() {
        open_ = false;
        check(nc_close(id_), "cannot finish the file");
    }

private:
    std::string name_;
    NcPath path_;
    int id_ = -1;
    bool open_ = false;
    void check(int status, const std::string& what) const {
        if (status != NC_NOERR) throw std::runtime_error(name_ + ": " + what + ": " + nc_strerror(status));
    }
};

/** @brief One NetCDF file being read; `name` (its path, as the user gave it) in every message. */
class NcReader {
public:
    explicit NcReader(const std::string& path) : name_(path), path_(path, O_RDONLY, path) {
        check(nc_open(path_.c_str(), NC_NOWRITE, &id_), "cannot open");
    }
    ~NcReader() { nc_close(id_); }
    NcReader(const NcReader&) = delete;
    NcReader& operator=(const NcReader&) = delete;

    const std::string& name() const { return name_; }
    /** The length of dimension `n`; throws when the file has none. */
    std::size_t dim_length(const std::string& n) const {
        int d = 0;
        std::size_t len = 0;
        check(nc_inq_dimid(id_, n.c_str(), &d), "dimension " + n);
        check(nc_inq_dimlen(id_, d, &len), "dimension " + n);
        return len;
    }
    /** The variable `n`; throws when the file has none. */
    int var(const std::string& n) const {
        int v = 0;
        check(nc_inq_varid(id_, n.c_str(), &v), "variable " + n);
        return v;
    }
    /** The text attribute `key` of `var` (NC_GLOBAL: the file's); empty when it has none. */
    std::string text(int var, const std::string& key) const {
        std::size_t len = 0;
        if (nc_inq_attlen(id_, var, key.c_str(), &len) != NC_NOERR) return {};
        std::string s(len, '\0');
        check(nc_get_att_text(id_, var, key.c_str(), s.data()), "attribute " + key);
        return s;
    }
    void get(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             double* data) const {
        check(nc_get_vara_double(id_, var, start.data(), count.data(), data), "values");
    }
    void get(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             std::uint64_t* data) const {
        check(nc_get_vara_ulonglong(id_, var, start.data(), count.data(), reinterpret_cast<unsigned long long*>(data)),
              "values");
    }
    void get(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             unsigned char* data) const {
        check(nc_get_vara_uchar(id_, var, start.data(), count.data(), data), "values");
    }
    void get(int var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
             std::int32_t* data) const {
        check(nc_get_vara_int(id_, var, start.data(), count.data(), data), "values");
    }

private:
    std::string name_;
    NcPath path_;
    int id_ = -1;
    void check(int status, const std::string& what) const {
        if (status != NC_NOERR) throw std::runtime_error("'" + name_ + "': " + what + ": " + nc_strerror(status));
    }
};

/** @brief The global attributes every nhvk NetCDF file has: `title`, `schema`, `nhvk_version`, `model`,
 *         `divergence_coordinates`, `divergence_metric`, and `config` (the resolved config as JSON). */
inline void run_attributes(NcFile& f, const RunConfig& cfg, const std::string& title, const std::string& schema) {
    f.text(NC_GLOBAL, "title", title);
    f.text(NC_GLOBAL, "schema", schema);
    f.text(NC_GLOBAL, "nhvk_version", nhvk_version);
    f.text(NC_GLOBAL, "model", cfg.model.name);
    std::string coords;
    for (int i : cfg.divergence_coords) coords += (coords.empty() ? "" : " ") + cfg.model.coords[i];
    f.text(NC_GLOBAL, "divergence_coordinates", coords);
    f.text(NC_GLOBAL, "divergence_metric", cfg.divergence_kinetic ? "kinetic" : "euclidean");
    f.text(NC_GLOBAL, "config", cfg.resolved_json().dump());
}

} // namespace nhvk
