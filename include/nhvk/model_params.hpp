// SPDX-License-Identifier: MIT
/** @file
 *  @brief Setting a model's parameters from a flat array, on host and device (parameter sweeps draw them per
 *         trajectory). A model lists its parameters once, in `visit_params`, which must be `NHVK_HD`.
 */
#pragma once

#include "nhvk/config.hpp"

namespace nhvk {

/** @brief Visitor that assigns `p[0], p[1], …` to the parameters in `visit_params` order (bool: p != 0). */
struct ParamSetter {
    const double* p;
    int i = 0;
    template <class V> NHVK_HD void operator()(const char*, V& value) { value = static_cast<V>(p[i++]); }
    NHVK_HD void operator()(const char*, bool& value) { value = p[i++] != 0.0; }
};

/** @brief Model `M` with parameters from `params` (`nullptr`: the defaults of `M{}`). */
template <class M> NHVK_HD M make_model(const double* params) {
    M m{};
    if (params) m.visit_params(ParamSetter{params});
    return m;
}

} // namespace nhvk
