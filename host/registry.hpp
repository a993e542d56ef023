// SPDX-License-Identifier: MIT
/** @file
 *  @brief Run-time view of the compile-time model list: names, sizes, parameters, and dispatch by name.
 */
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "model_info.hpp"
#include "nhvk/model_params.hpp"
#include "nhvk/models/all.hpp"

namespace nhvk {

/** @brief Carries a model type through a generic lambda: `visit_model(name, [](auto tag) { using M = ...; })`. */
template <class M> struct ModelTag { using type = M; };

namespace detail {
template <class... Ms> std::vector<ModelInfo> infos(ModelList<Ms...>) { return {model_info<Ms>()...}; }
template <class F, class... Ms> bool visit(const std::string& name, F&& f, ModelList<Ms...>) {
    bool found = false;
    // NOTE: a fold over the list; exactly one name matches because the registry test checks names are unique.
    (void)((name == Ms::name ? (f(ModelTag<Ms>{}), found = true) : false) || ...);
    return found;
}
} // namespace detail

/** @brief The registry entry of `name`, or nullptr. */
inline const ModelInfo* find_model(const std::vector<ModelInfo>& reg, const std::string& name) {
    for (const ModelInfo& m : reg)
        if (m.name == name) return &m;
    return nullptr;
}

/** @brief The model files registered in this process (modelfile/file_models.hpp). */
namespace modelfile {
std::vector<ModelInfo> registered_infos();
}

/** @brief Every built-in model, in catalogue order. */
inline std::vector<ModelInfo> builtin_model_registry() { return detail::infos(BuiltinModels{}); }

/** @brief The model files registered in this process (first: one of them replaces a built-in model of its name),
 *         then every built-in model, in catalogue order. */
inline std::vector<ModelInfo> model_registry() {
    std::vector<ModelInfo> r = modelfile::registered_infos();
    for (ModelInfo& m : builtin_model_registry())
        if (!find_model(r, m.name)) r.push_back(std::move(m));
    return r;
}

/** @brief Call `f(ModelTag<M>{})` for the model named `name`; false when there is none. */
template <class F> bool visit_model(const std::string& name, F&& f) {
    return detail::visit(name, std::forward<F>(f), BuiltinModels{});
}

} // namespace nhvk
