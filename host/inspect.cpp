// SPDX-License-Identifier: MIT
/** @file
 *  @brief `nhvk inspect` and the classification JSON of summary.json: nhvk/classify.hpp instantiated for every
 *         built-in model (this unit alone, so that the model units of model_ops_impl.hpp do not grow).
 */
#include "inspect.hpp"

#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "cli_common.hpp"
#include "model_ops.hpp"
#include "modelfile/file_models.hpp"
#include "nhvk/classify.hpp"
#include "pipeline/output_folder.hpp"
#include "registry.hpp"

namespace nhvk {

namespace {

nlohmann::json optional_json(const std::optional<bool>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); }
nlohmann::json optional_json(const std::optional<int>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); }
/** @brief A degree: an integer when it is one (1, not 1.0). */
nlohmann::json optional_json(const std::optional<double>& x) {
    if (!x) return nullptr;
    return *x == std::round(*x) && std::fabs(*x) < 1e9 ? nlohmann::json(static_cast<long long>(*x))
                                                       : nlohmann::json(*x);
}

nlohmann::json to_json(const Classification& c, const ModelInfo& info, const std::vector<double>& params) {
    nlohmann::json j;
    j["model"] = c.model;
    j["params"] = nlohmann::json::object();
    for (std::size_t i = 0; i < info.params.size() && i < params.size(); ++i)
        j["params"][info.params[i].name] =
            info.params[i].is_bool ? nlohmann::json(params[i] != 0.0) : nlohmann::json(params[i]);
    j["samples"] = c.samples;
    j["sampling"] = {{"seed", c.options.seed},
                     {"box", c.options.box},
                     {"velocity_scales", c.velocity_scales},
                     {"tolerance", c.options.tol}};
    j["constraints"] = nlohmann::json::array();
    for (const ConstraintClass& k : c.constraints)
        j["constraints"].push_back({{"index", k.index},
                                    {"velocity_dependence", to_string(k.velocity)},
                                    {"homogeneous", k.homogeneous},
                                    {"degree", optional_json(k.degree)},
                                    {"time_dependent", k.time_dependent},
                                    {"integrability", to_string(k.integrability)}});
    const SystemClass& s = c.system;
    j["system"] = {{"integrable", optional_json(s.integrable)},
                   {"integrable_combinations", optional_json(s.integrable_combinations)},
                   {"combinations", s.combinations},
                   {"lagrangian_time_dependent", s.lagrangian_time_dependent},
                   {"has_force", s.has_force},
                   {"energy_conserved", s.energy_conserved},
                   {"reactions_do_no_work", s.reactions_do_no_work},
                   {"dynamics_must_coincide", s.dynamics_must_coincide}};
    j["statements"] = c.statements;
    return j;
}

std::string yes_no(const nlohmann::json& x) { return x.is_null() ? "undecided" : x.get<bool>() ? "yes" : "no"; }

} // namespace

nlohmann::json classification_json(const std::string& model, const std::vector<double>& params) {
    nlohmann::json out;
    // NOTE: through the model's ops, so that a model file is classified as a built-in model is (compiled without its
    // integrators: classification integrates nothing).
    modelfile::set_scope(model, modelfile::Scope{modelfile::Scope::inspection});
    const ModelOps* ops = find_model_ops(model);
    if (!ops) throw std::invalid_argument("classification: unknown model '" + model + "'");
    const ModelInfo info = ops->info();
    if (params.size() != info.params.size())
        throw std::invalid_argument("classification of '" + model + "': expected " +
                                    std::to_string(info.params.size()) + " parameters, got " +
                                    std::to_string(params.size()));
    out = to_json(ops->classify(params.empty() ? nullptr : params.data()), info, params);
    return out;
}

std::string classification_text(const nlohmann::json& c) {
    std::ostringstream os;
    os << "model " << c["model"].get<std::string>();
    if (!c["params"].empty()) {
        os << " (";
        bool first = true;
        for (const auto& [name, value] : c["params"].items()) {
            os << (first ? "" : ", ") << name << " = " << value.dump();
            first = false;
        }
        os << ")";
    }
    os << "\nchecked at " << c["samples"].get<int>() << " random states (seed " << c["sampling"]["seed"].dump()
       << ", |q| <= " << c["sampling"]["box"].dump() << ", |v_j| <= " << c["sampling"]["box"].dump()
       << " * velocity scale " << c["sampling"]["velocity_scales"].dump() << ", relative tolerance "
       << c["sampling"]["tolerance"].dump() << ")\n\n";
    for (const auto& k : c["constraints"]) {
        os << "phi" << k["index"].get<int>() << ": " << k["velocity_dependence"].get<std::string>() << " in v, ";
        if (k["homogeneous"].get<bool>()) os << "homogeneous of degree " << k["degree"].dump();
        else os << "not homogeneous";
        os << ", " << (k["time_dependent"].get<bool>() ? "time-dependent" : "time-independent");
        if (k["integrability"] != "not_applicable") os << ", " << k["integrability"].get<std::string>();
        os << "\n";
    }
    const auto& s = c["system"];
    os << "\nintegrable (holonomic):      " << yes_no(s["integrable"]) << "\n";
    os << "integrable combinations:     "
       << (s["integrable_combinations"].is_null() ? std::string("-") : s["integrable_combinations"].dump()) << "\n";
    os << "energy conserved:            " << yes_no(s["energy_conserved"]) << "\n";
    os << "reactions do no work:        " << yes_no(s["reactions_do_no_work"]) << "\n";
    os << "dynamics must coincide:      " << yes_no(s["dynamics_must_coincide"]) << "\n\n";
    for (const auto& st : c["statements"]) os << "- " << st.get<std::string>() << "\n";
    return os.str();
}

void add_inspect_command(CLI::App& app, int& exit_code) {
    struct Options {
        std::string model;
        std::vector<std::string> params;
        bool json = false;
    };
    auto opt = std::make_shared<Options>();
    auto* cmd = app.add_subcommand("inspect", "Classify the constraints of a model (linear/affine/nonlinear, "
                                              "homogeneity, integrability) and state the consequences");
    cmd->add_option("model", opt->model, "model name (see `nhvk models`) or model file (*.toml)")->required();
    cmd->add_option("--param", opt->params, "model parameter name=value (repeatable)")->allow_extra_args(false);
    cmd->add_flag("--json", opt->json, "print the classification as JSON");
    cmd->callback([opt, cmd, &exit_code]() {
        // NOTE: first, while this is the only thread: a signal during a model file's compile ends the compiler too
        clean_up_outputs_on_signals();
        refuse_empty_values(*cmd);
        // NOTE: a model file that does not load is bad input (exit 2), as an unknown model name is.
        std::string name;
        try {
            name = modelfile::resolve_model_argument(opt->model);
        } catch (const std::runtime_error& e) {
            throw UsageError(e.what());
        }
        const std::vector<ModelInfo> reg = model_registry();
        const ModelInfo& info = require_model(reg, name, "MODEL");
        const nlohmann::json c = classification_json(info.name, resolve_params(info, opt->params));
        std::cout << (opt->json ? c.dump(2) + "\n" : classification_text(c));
        exit_code = exit_ok;
    });
}

} // namespace nhvk
