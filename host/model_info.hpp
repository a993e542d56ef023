// SPDX-License-Identifier: MIT
/** @file
 *  @brief Run-time description of a built-in model: what the CLI, the config loader and the writers need to know.
 */
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include <nhvk/param.hpp>

namespace nhvk {

/** @brief One model parameter as configs and `--param` spell it. */
struct ParamInfo {
    std::string name;
    double default_value = 0.0;
    bool is_bool = false;                  ///< stored as 0/1; configs may write true/false
    ParamDomain domain = ParamDomain::any; ///< the documented range, as the model declares it (numeric only)
};

/** @brief `"> 0"`, `">= 0"` or `"finite"`: the range of `d` as messages and the README spell it. */
inline const char* to_string(ParamDomain d) {
    switch (d) {
    case ParamDomain::positive:
        return "> 0";
    case ParamDomain::non_negative:
        return ">= 0";
    case ParamDomain::any:
    default:
        return "finite";
    }
}

/** @brief True when the finite number `x` lies in `d`. */
inline bool in_domain(ParamDomain d, double x) {
    switch (d) {
    case ParamDomain::positive:
        return x > 0.0;
    case ParamDomain::non_negative:
        return x >= 0.0;
    case ParamDomain::any:
    default:
        return true;
    }
}

/** @brief Names, sizes and defaults of one model of the catalogue. */
struct ModelInfo {
    std::string name;                ///< e.g. "nh_particle"
    std::string description;         ///< one line
    int n = 0;                       ///< number of generalized coordinates
    int k = 0;                       ///< number of constraints
    std::vector<std::string> coords; ///< coordinate names, in order (size n)
    std::vector<bool> angles;        ///< which coordinates are angles (size n)
    std::vector<ParamInfo> params;   ///< parameters, in order

    /** @brief Index of a coordinate by name, or -1. */
    int coord_index(const std::string& c) const {
        for (int i = 0; i < static_cast<int>(coords.size()); ++i)
            if (coords[i] == c) return i;
        return -1;
    }
    /** @brief Index of a parameter by name, or -1. */
    int param_index(const std::string& p) const {
        for (int i = 0; i < static_cast<int>(params.size()); ++i)
            if (params[i].name == p) return i;
        return -1;
    }
};

/** @brief Names, sizes, coordinates and default parameters of model `M`. */
template <class M> ModelInfo model_info() {
    ModelInfo info;
    info.name = M::name;
    info.description = M::description;
    info.n = M::n;
    info.k = M::k;
    for (int j = 0; j < M::n; ++j) {
        info.coords.emplace_back(M::coord_names[j]);
        info.angles.push_back(M::angles[j]);
    }
    M defaults{};
    defaults.visit_params([&](const char* name, auto& value, auto... domain) {
        ParamInfo p;
        p.name = name;
        p.default_value = static_cast<double>(value);
        p.is_bool = std::is_same<std::decay_t<decltype(value)>, bool>::value;
        const ParamDomain declared[] = {ParamDomain::any, domain...}; // the last: the model's, if any
        p.domain = declared[sizeof...(domain)];
        info.params.push_back(p);
    });
    return info;
}

} // namespace nhvk
