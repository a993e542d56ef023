// SPDX-License-Identifier: MIT
// `nhvk compile`: fills the cache of compiled models ahead of the runs that use it. On a cluster, a login node (no
// GPU: NVRTC compiles for a named architecture without a device) fills a cache that the compute nodes' jobs then only
// read (README, "On a cluster").
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "config.hpp"
#include "input_limits.hpp"
#include "model_ops.hpp"
#include "modelfile/builtin_kernels.hpp"
#include "modelfile/cuda_compile.hpp"
#include "modelfile/file_models.hpp"
#include "modelfile/runtime_compile.hpp"
#include "nhvk/backend/backend.hpp"
#include "nhvk/backend/cuda_device.hpp"
#include "pipeline/output_folder.hpp"
#include "registry.hpp"

namespace nhvk {

namespace {

/** @brief "sm_90" from "sm_90" or "90"; a UsageError naming --arch otherwise. */
std::string parse_arch(const std::string& a) {
    static const std::regex form("(sm_)?([1-9][0-9]{1,2}[a-z]?)");
    std::smatch m;
    if (!std::regex_match(a, m, form))
        throw UsageError("--arch: expected a CUDA architecture such as sm_90 or 90, got '" + clip_message(a, 80) + "'");
    return "sm_" + m[2].str();
}

/** @brief The values named by an option: `all`, or the one whose spelling (config.hpp's `to_string`) is `v`; a
 *         UsageError naming the option and the spellings otherwise. */
template <class E> std::vector<E> choices(const std::string& v, const std::string& what, const std::vector<E>& all) {
    if (v == "all") return all;
    std::string spellings;
    for (const E e : all) {
        if (v == to_string(e)) return {e};
        spellings += std::string(to_string(e)) + ", ";
    }
    throw UsageError(what + ": expected " + spellings.substr(0, spellings.size() - 2) + " or all, got '" +
                     clip_message(v, 80) + "'");
}

void print_row(const std::string& model, const std::string& where, Precision p, Method m, const std::string& kernels,
               bool cached, double seconds, const std::string& path) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "compiled in %.1f s", seconds);
    std::printf("%-24s %-10s %-6s %-6s %-10s %-20s %s\n", model.c_str(), where.c_str(), to_string(p), to_string(m),
                kernels.c_str(), cached ? "in the cache" : buf, modelfile::shown_path(path).c_str());
}

} // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
    struct Options {
        std::vector<std::string> models;
        std::vector<std::string> arch;
        std::string precision = "all", method = "all";
        bool trajectory = false, no_cpu = false;
    };
    auto opt = std::make_shared<Options>();
    auto* cmd = app.add_subcommand(
        "compile", "Fill the cache of compiled models ahead of the runs: a model file's CPU code, and the CUDA kernels "
                   "of built-in models and model files for the named architectures (no GPU needed)");
    cmd->add_option("models", opt->models, "model names (see `nhvk models`) or model files (*.toml)")->required();
    cmd->add_option("--arch", opt->arch,
                    "CUDA architectures to compile kernels for, e.g. sm_90 (repeatable; default: this machine's "
                    "device, or none without one)");
    cmd->add_option("--precision", opt->precision, "double, float or all (default all)");
    cmd->add_option("--method", opt->method, method_names(", ", ", ") + " or all (default all)");
    cmd->add_flag("--trajectory", opt->trajectory, "also the kernels of `nhvk trajectory --backend cuda`");
    cmd->add_flag("--no-cpu", opt->no_cpu, "skip the CPU code of model files (CUDA kernels only)");
    cmd->callback([opt, cmd, &exit_code]() {
        // NOTE: first, while this is the only thread: a signal during a compile ends the compiler too
        clean_up_outputs_on_signals();
        refuse_empty_values(*cmd);
        const std::vector<Precision> precisions =
            choices<Precision>(opt->precision, "--precision", {Precision::f64, Precision::f32});
        const std::vector<Method> methods = choices<Method>(opt->method, "--method", all_methods());
        std::vector<std::string> archs;
        for (const std::string& a : opt->arch) archs.push_back(parse_arch(a));
        if (opt->arch.empty() && cuda_available()) archs.push_back(cuda_device_arch());
        if (!archs.empty() && !jit::nvrtc_available())
            throw UsageError("--arch: this nhvk was built without the CUDA toolkit (no NVRTC): it compiles no CUDA "
                             "kernels");
        // Every argument is checked before anything compiles: a typo in the fifth model must not cost four compiles.
        std::vector<std::string> names;
        for (const std::string& m : opt->models) {
            std::string name;
            try {
                name = modelfile::resolve_model_argument(m);
            } catch (const std::runtime_error& e) {
                throw UsageError(e.what());
            }
            require_model(model_registry(), name, "MODEL");
            names.push_back(name);
        }
        modelfile::quiet_compiles(true);
        int compiled = 0, cached = 0;
        const auto count = [&](bool c) { ++(c ? cached : compiled); };
        for (const std::string& name : names) {
            const modelfile::FileModel* file = modelfile::find_registered(name);
            const std::string label = file ? modelfile::shown_path(file->source) : name;
            if (file && !opt->no_cpu)
                for (const Precision p : precisions)
                    for (const Method m : methods) {
                        find_run_model_ops(name, p, m, EquationsKind::generated);
                        const std::optional<modelfile::CompileReport> r = modelfile::compile_report(name);
                        if (r && !r->interpreted_because.empty())
                            throw std::runtime_error(label + ": no C++ compiler to compile it with (" +
                                                     r->interpreted_because +
                                                     "): runs interpret it; pass --no-cpu to compile its CUDA "
                                                     "kernels only");
                        print_row(label, "cpu", p, m, "", r->cached, r->compile_seconds, r->artefact);
                        count(r->cached);
                    }
            std::vector<modelfile::CudaKernels> kinds{modelfile::CudaKernels::ensemble};
            if (opt->trajectory) kinds.push_back(modelfile::CudaKernels::trajectory);
            const std::optional<modelfile::BuiltinKernelSource> builtin =
                file ? std::nullopt : modelfile::builtin_kernel_source(name);
            if (builtin && builtin->ahead_of_time) {
                std::printf("%-24s %s\n", label.c_str(), "compiled into this nhvk (NHVK_AOT_MODELS): nothing to do");
                continue;
            }
            if (builtin && archs.empty())
                std::printf("%-24s %s\n", label.c_str(),
                            "built in on the CPU; no device here, so no CUDA kernels: name them with --arch");
            for (const std::string& arch : archs)
                for (const Precision p : precisions)
                    for (const Method m : methods)
                        for (const modelfile::CudaKernels which : kinds) {
                            const jit::CudaArtefact a =
                                builtin ? modelfile::compile_builtin_cuda(*builtin, which, p, m, arch)
                                        : modelfile::compile_file_cuda(*file, which, p, m, arch, label);
                            print_row(label, "cuda " + arch, p, m,
                                      which == modelfile::CudaKernels::ensemble ? "ensemble" : "trajectory",
                                      a.file.cached, a.file.compile_seconds, a.file.path);
                            count(a.file.cached);
                        }
        }
        std::printf("nhvk compile: %d compiled, %d already in the cache %s\n", compiled, cached,
                    modelfile::shown_path(jit::cache_root()).c_str());
        exit_code = exit_ok;
    });
}

} // namespace nhvk
