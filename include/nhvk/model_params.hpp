// SPDX-License-Identifier: MIT
/** @file
 *  @brief Setting a model's parameters from a flat array, on host and device (parameter sweeps draw them per
 *         trajectory). A model lists its parameters once, in `visit_params`, which must be `NHVK_HD`.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/param.hpp"

namespace nhvk {

/** @brief Maximum number of parameters a model may have (what a chunk carries per member). */
inline constexpr int max_params = 16;

/** @brief Visitor that assigns `p[0], p[1], …` to the parameters in `visit_params` order (bool: p != 0). */
struct ParamSetter {
    const double* p;
    int i = 0;
    template <class V> NHVK_HD NHVK_FORCEINLINE void operator()(const char*, V& value, ParamDomain = ParamDomain::any) {
        value = static_cast<V>(p[i++]);
    }
    NHVK_HD NHVK_FORCEINLINE void operator()(const char*, bool& value) { value = p[i++] != 0.0; }
};

/** @brief Visitor that copies the parameters, in `visit_params` order, into `p[0], p[1], …` (bool: 0 or 1). */
struct ParamGetter {
    double* p;
    int i = 0;
    template <class V>
    NHVK_HD NHVK_FORCEINLINE void operator()(const char*, const V& value, ParamDomain = ParamDomain::any) {
        p[i++] = static_cast<double>(value);
    }
    NHVK_HD NHVK_FORCEINLINE void operator()(const char*, const bool& value) { p[i++] = value ? 1.0 : 0.0; }
};

/** @brief Copy the parameters of `model` into `p` (at least as many entries as the model has parameters). */
template <class M> NHVK_HD NHVK_FORCEINLINE void get_params(const M& model, double* p) {
    M m = model; // NOTE: visit_params hands out non-const references
    m.visit_params(ParamGetter{p});
}

/** @brief Model `M` with parameters from `params` (`nullptr`: the defaults of `M{}`). */
template <class M> NHVK_HD NHVK_FORCEINLINE M make_model(const double* params) {
    M m{};
    if (params) m.visit_params(ParamSetter{params});
    return m;
}

} // namespace nhvk
