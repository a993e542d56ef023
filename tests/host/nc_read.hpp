// SPDX-License-Identifier: MIT
// A NetCDF file read by the tests through the netCDF C library (builds with NHVK_HAVE_NETCDF).
#pragma once

#include <gtest/gtest.h>
#include <netcdf.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace nhvk_test {

/** A NetCDF file open for reading; each variable read whole, by name. */
class Nc {
public:
    explicit Nc(const std::filesystem::path& p) : path_(p.string()) {
        if (nc_open(path_.c_str(), NC_NOWRITE, &id_) != NC_NOERR) throw std::runtime_error("cannot open " + path_);
    }
    ~Nc() { nc_close(id_); }
    bool has(const std::string& name) const {
        int v = 0;
        return nc_inq_varid(id_, name.c_str(), &v) == NC_NOERR;
    }
    nc_type type(const std::string& name) const {
        nc_type t = NC_NAT;
        nc_inq_vartype(id_, var(name), &t);
        return t;
    }
    std::vector<std::string> dims(const std::string& name) const {
        int n = 0, ids[NC_MAX_VAR_DIMS];
        nc_inq_varndims(id_, var(name), &n);
        nc_inq_vardimid(id_, var(name), ids);
        std::vector<std::string> out;
        for (int i = 0; i < n; ++i) {
            char buf[NC_MAX_NAME + 1];
            nc_inq_dimname(id_, ids[i], buf);
            out.emplace_back(buf);
        }
        return out;
    }
    std::size_t size(const std::string& name) const {
        std::size_t n = 1;
        int nd = 0, ids[NC_MAX_VAR_DIMS];
        nc_inq_varndims(id_, var(name), &nd);
        nc_inq_vardimid(id_, var(name), ids);
        for (int i = 0; i < nd; ++i) {
            std::size_t len = 0;
            nc_inq_dimlen(id_, ids[i], &len);
            n *= len;
        }
        return n;
    }
    std::vector<double> doubles(const std::string& name) const {
        std::vector<double> x(size(name));
        EXPECT_EQ(type(name), NC_DOUBLE) << name;
        EXPECT_EQ(nc_get_var_double(id_, var(name), x.data()), NC_NOERR) << name;
        return x;
    }
    std::vector<unsigned long long> counts(const std::string& name) const {
        std::vector<unsigned long long> x(size(name));
        EXPECT_EQ(nc_get_var_ulonglong(id_, var(name), x.data()), NC_NOERR) << name;
        return x;
    }
    std::vector<std::string> strings(const std::string& name) const {
        std::vector<char*> p(size(name));
        EXPECT_EQ(nc_get_var_string(id_, var(name), p.data()), NC_NOERR) << name;
        std::vector<std::string> out(p.begin(), p.end());
        nc_free_string(p.size(), p.data());
        return out;
    }
    std::string attribute(const std::string& var_name, const std::string& key) const {
        const int v = var_name.empty() ? NC_GLOBAL : var(var_name);
        std::size_t len = 0;
        if (nc_inq_attlen(id_, v, key.c_str(), &len) != NC_NOERR) return "<missing>";
        std::string s(len, '\0');
        nc_get_att_text(id_, v, key.c_str(), s.data());
        return s;
    }
    /** The variable's values as they are stored (native type, in order): for comparisons byte for byte. */
    std::vector<unsigned char> bytes(const std::string& name) const {
        nc_type t = type(name);
        std::size_t width = 0;
        nc_inq_type(id_, t, nullptr, &width);
        std::vector<unsigned char> x(size(name) * width);
        EXPECT_EQ(nc_get_var(id_, var(name), x.data()), NC_NOERR) << name;
        return x;
    }
    int id() const { return id_; }
    int var_id(const std::string& name) const { return var(name); }
    std::vector<std::string> variables() const {
        int n = 0;
        nc_inq_nvars(id_, &n);
        std::vector<std::string> out;
        for (int i = 0; i < n; ++i) {
            char buf[NC_MAX_NAME + 1];
            nc_inq_varname(id_, i, buf);
            out.emplace_back(buf);
        }
        return out;
    }

private:
    std::string path_;
    int id_ = -1;
    int var(const std::string& name) const {
        int v = -1;
        if (nc_inq_varid(id_, name.c_str(), &v) != NC_NOERR) throw std::runtime_error(path_ + ": no variable " + name);
        return v;
    }
};

} // namespace nhvk_test
