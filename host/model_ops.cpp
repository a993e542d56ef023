// SPDX-License-Identifier: MIT
#include "model_ops.hpp"

#include <utility>

#include "modelfile/file_models.hpp"
#include "nhvk/models/all.hpp"

namespace nhvk {

namespace {
template <class... Ms> std::vector<ModelOps> make_table(ModelList<Ms...>) { return {make_model_ops<Ms>()...}; }
} // namespace

const ModelOps* find_model_ops(const std::string& name) {
    // A model file of this name replaces the built-in model of that name (modelfile/file_models.hpp).
    if (const ModelOps* ops = modelfile::find_ops(name)) return ops;
    return find_builtin_model_ops(name);
}

const ModelOps* find_run_model_ops(const std::string& name, Precision precision, Method method,
                                   EquationsKind equations) {
    // NOTE: the CLI sets the scope itself before its clock starts; a run through the library (a plan and a
    // backend) would otherwise take whatever unit an earlier lookup compiled
    if (modelfile::find_registered(name))
        modelfile::set_scope(name, modelfile::Scope::only(precision, method, equations));
    return find_model_ops(name);
}

const ModelOps* find_builtin_model_ops(const std::string& name) {
    static const std::vector<ModelOps> table = make_table(BuiltinModels{});
    static const std::vector<ModelInfo> infos = [] {
        std::vector<ModelInfo> v;
        for (const ModelOps& o : table) v.push_back(o.info());
        return v;
    }();
    for (std::size_t i = 0; i < table.size(); ++i)
        if (infos[i].name == name) return &table[i];
    return nullptr;
}

} // namespace nhvk
