// SPDX-License-Identifier: MIT
#include "modelfile/file_models.hpp"

#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include "config.hpp"
#include "input_limits.hpp"
#include "model_ops.hpp"
#include "modelfile/builtin_kernels.hpp"
#include "modelfile/cuda_compile.hpp"
#include "modelfile/interpreted.hpp"
#include "modelfile/runtime_compile.hpp"
#include "nhvk/backend/cuda_device.hpp"

namespace nhvk::modelfile {

namespace {

struct Entry {
    FileModel model;
    bool compiled = false;
    ModelOps ops{};
    /// the host unit's SampleSpec of a plan (CudaJitModule::sample_spec)
    unsigned long (*sample_spec)(const SamplingPlan*, void*, unsigned long) = nullptr;
    /// the CUDA modules handed to the backend: (arch, which, precision, method)
    std::set<std::tuple<std::string, CudaKernels, Precision, Method>> cuda_prepared;
    Scope scope; ///< what `ops` integrates with (set_scope)
    CompileReport report;
};

struct Registry {
    std::mutex mutex;
    // NOTE: entries are never freed: a replaced model's ops may still be referenced by a pointer handed out earlier.
    std::deque<std::unique_ptr<Entry>> entries;
    std::map<std::string, Entry*> by_name;
    /// the built-in models' CUDA modules handed to the backend: (name, arch, which, precision, method)
    std::set<std::tuple<std::string, std::string, CudaKernels, Precision, Method>> builtin_cuda_prepared;
    /// the last preparation of each built-in model's kernels (cuda_compile_report)
    std::map<std::string, CompileReport::Cuda> builtin_cuda_reports;
    bool quiet = false;
};

Registry& registry() {
    static Registry r;
    return r;
}

/** @brief A cache's note for stderr, said even with -q: a cache that is not used, a damaged entry or a wait are the
 *         user's to know of. `who` begins the line ("model file <path>", "nhvk: model <name>"). */
std::function<void(const std::string&)> say_always(const std::string& who) {
    return [who](const std::string& line) {
        std::fprintf(stderr, "%s: %s\n", who.c_str(), clip_message(line, 600).c_str());
    };
}

/** @brief Hands NVRTC's module `a` of model `name` (sizes n, k) to the CUDA backend, and returns what the summary
 *         reports of it. */
CompileReport::Cuda hand_to_backend(const std::string& name, int n, int k, CudaKernels which, Precision precision,
                                    Method method, const std::string& arch, const jit::CudaArtefact& a,
                                    unsigned long (*sample_spec)(const SamplingPlan*, void*, unsigned long)) {
    CudaJitModule m;
    m.model = name;
    m.n = n;
    m.k = k;
    m.trajectory = which == CudaKernels::trajectory;
    m.precision = precision;
    m.method = method;
    m.image = a.image;
    m.kernels = a.lowered;
    m.sample_spec = sample_spec;
    register_cuda_jit_module(std::move(m));
    return CompileReport::Cuda{
        false, arch, a.file.path, a.file.key, a.file.cached, a.file.compile_seconds, a.file.wait_seconds};
}

/** @brief The `nhvk compile` command that fills a cache with one entry (a read-only cache's note names it). */
std::string fill_command(const std::string& model, Precision precision, Method method, const std::string& arch,
                         CudaKernels which = CudaKernels::ensemble) {
    return "nhvk compile " + model + (arch.empty() ? "" : " --arch " + arch) + " --precision " + to_string(precision) +
           " --method " + to_string(method) + (which == CudaKernels::trajectory ? " --trajectory" : "");
}

} // namespace

const ModelInfo& register_model(FileModel m) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.by_name.find(m.info.name);
    if (it != r.by_name.end() && it->second->model.text == m.text && it->second->model.source == m.source)
        return it->second->model.info;
    r.entries.push_back(std::make_unique<Entry>());
    Entry* e = r.entries.back().get();
    e->model = std::move(m);
    r.by_name[e->model.info.name] = e;
    return e->model.info;
}

const ModelOps* find_ops(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.by_name.find(name);
    if (it == r.by_name.end()) return nullptr;
    Entry& e = *it->second;
    if (e.compiled) return &e.ops;
    const jit::CompilerSpec spec = jit::host_compiler();
    if (const std::string why = jit::compiler_problem(spec); !why.empty()) {
        e.ops = interpreted_ops(e.model);
        e.compiled = true;
        e.report.source = e.model.source;
        e.report.interpreted_because = why;
        // NOTE: said even with -q: the run is tens of times slower than it would be compiled, and the user can fix it
        std::fprintf(stderr,
                     "model file %s: %s: interpreting model '%s' instead (the reference equations on the CPU, much "
                     "slower than compiled; install a C++ compiler or set NHVK_CXX to one to compile it)\n",
                     shown_path(e.model.source).c_str(), clip_message(why, 600).c_str(), name.c_str());
        return &e.ops;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::string unit = emit_model_unit(e.model, e.scope);
    e.report.derive_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // NOTE: a compile takes seconds (the engine's templates for this model): say so before, not after.
    const std::string src = shown_path(e.model.source);
    jit::Reporter report;
    report.on_miss = [&] {
        if (!r.quiet)
            std::fprintf(stderr, "model file %s: compiling model '%s' with %s (once; later runs load it from %s)\n",
                         src.c_str(), name.c_str(), spec.cxx.c_str(), shown_path(jit::cache_root()).c_str());
    };
    report.note = say_always("model file " + src);
    if (e.scope.kind == Scope::one && e.scope.equations == EquationsKind::generated)
        report.fill_command = fill_command(src, e.scope.precision, e.scope.method, "");
    const jit::Artefact a = jit::compile_shared_object(unit, spec, "cpu", src, name, report);
    using Fn = int (*)(ModelOps*);
    const Fn fn = reinterpret_cast<Fn>(jit::load_symbol(a, ops_symbol));
    ModelOps ops{};
    if (fn(&ops) != ops_abi)
        throw std::runtime_error(e.model.source + ": the compiled model '" + a.path +
                                 "' was built for another version of nhvk; delete it and run again");
    e.ops = ops;
    e.sample_spec = reinterpret_cast<unsigned long (*)(const SamplingPlan*, void*, unsigned long)>(
        jit::load_symbol(a, sample_spec_symbol));
    e.compiled = true;
    e.report.source = e.model.source;
    e.report.artefact = a.path;
    e.report.compiled_for = e.scope.describe();
    e.report.key = a.key;
    e.report.cached = a.cached;
    e.report.compile_seconds = a.compile_seconds;
    e.report.wait_seconds = a.wait_seconds;
    if (!r.quiet) {
        if (a.cached)
            std::fprintf(stderr, "model file %s: loaded '%s' from the cache %s (derived in %.2f s)\n", src.c_str(),
                         name.c_str(), shown_path(a.path).c_str(), e.report.derive_seconds);
        else
            std::fprintf(stderr, "model file %s: derived in %.2f s, compiled in %.1f s%s\n", src.c_str(),
                         e.report.derive_seconds, a.compile_seconds,
                         a.wait_seconds > 0.5 ? (" (waited " + std::to_string(a.wait_seconds) + " s)").c_str() : "");
    }
    return &e.ops;
}

jit::CudaArtefact compile_file_cuda(const FileModel& m, CudaKernels which, Precision precision, Method method,
                                    const std::string& arch, const std::string& label, const jit::Reporter& report) {
    return jit::compile_cuda(emit_model_cuda_unit(m), cuda_kernel_names(which, precision, method), arch, "cuda", label,
                             report);
}

void prepare_cuda(const std::string& name, CudaKernels which, Precision precision, Method method) {
    if (!find_ops(name)) throw std::logic_error("prepare_cuda: '" + name + "' is not a registered model file");
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Entry& e = *r.by_name.at(name);
    if (!e.report.interpreted_because.empty())
        throw std::runtime_error(e.model.source + ": model '" + name + "' is interpreted (" +
                                 e.report.interpreted_because +
                                 "), which runs on the CPU only: its CUDA kernels need the C++ compiler too; run it "
                                 "on the CPU (run.backend = \"cpu\" or \"auto\", --backend cpu) or make the "
                                 "compiler available");
    if (!jit::nvrtc_available())
        throw std::runtime_error(e.model.source + ": model '" + name +
                                 "' runs on the CUDA backend through NVRTC, and this nhvk was built without the CUDA "
                                 "toolkit; run it on the CPU (run.backend = \"cpu\" or \"auto\", --backend cpu)");
    const std::string arch = cuda_device_arch();
    // NOTE: a run asks twice (before its clock, then for the device make_backend selected); the backend keeps the
    // module for the life of the process
    if (e.cuda_prepared.count({arch, which, precision, method})) return;
    const std::string src = shown_path(e.model.source);
    jit::Reporter report;
    report.on_miss = [&] {
        if (!r.quiet)
            std::fprintf(stderr, "model file %s: compiling the CUDA kernels of '%s' for %s with NVRTC %s (once)\n",
                         src.c_str(), name.c_str(), arch.c_str(), jit::nvrtc_version().c_str());
    };
    report.note = say_always("model file " + src);
    report.fill_command = fill_command(src + " --no-cpu", precision, method, arch, which);
    const jit::CudaArtefact a = compile_file_cuda(e.model, which, precision, method, arch, src, report);
    e.report.cuda =
        hand_to_backend(name, e.model.info.n, e.model.info.k, which, precision, method, arch, a, e.sample_spec);
    e.cuda_prepared.emplace(arch, which, precision, method);
    if (!r.quiet && !a.file.cached)
        std::fprintf(stderr, "model file %s: CUDA kernels compiled in %.1f s\n", src.c_str(), a.file.compile_seconds);
}

void prepare_cuda_kernels(const std::string& name, CudaKernels which, Precision precision, Method method) {
    if (find_registered(name)) return prepare_cuda(name, which, precision, method);
    const std::optional<BuiltinKernelSource> s = builtin_kernel_source(name);
    if (!s) return;
    if (s->ahead_of_time) {
        Registry& r = registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        CompileReport::Cuda c;
        c.ahead_of_time = true;
        r.builtin_cuda_reports[name] = c;
        return;
    }
    if (!jit::nvrtc_available())
        throw std::runtime_error("model '" + name +
                                 "': this nhvk compiles the CUDA kernels of built-in models at run time with NVRTC, "
                                 "and was built without it (no CUDA toolkit at configure time); run it on the CPU "
                                 "(run.backend = \"cpu\" or \"auto\", --backend cpu)");
    const std::string arch = cuda_device_arch();
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.builtin_cuda_prepared.count({name, arch, which, precision, method})) return;
    jit::Reporter report;
    report.on_miss = [&] {
        if (!r.quiet)
            std::fprintf(stderr,
                         "nhvk: compiling the CUDA kernels of model '%s' (%s, %s) for %s with NVRTC %s (once; later "
                         "runs load them from %s)\n",
                         name.c_str(), to_string(precision), to_string(method), arch.c_str(),
                         jit::nvrtc_version().c_str(), shown_path(jit::cache_root()).c_str());
    };
    report.note = say_always("nhvk: model " + name);
    report.fill_command = fill_command(name, precision, method, arch, which);
    const jit::CudaArtefact a = compile_builtin_cuda(*s, which, precision, method, arch, report);
    r.builtin_cuda_reports[name] = hand_to_backend(name, s->n, s->k, which, precision, method, arch, a, s->sample_spec);
    r.builtin_cuda_prepared.emplace(name, arch, which, precision, method);
    if (!r.quiet && !a.file.cached)
        std::fprintf(stderr, "nhvk: CUDA kernels of model '%s' compiled in %.1f s\n", name.c_str(),
                     a.file.compile_seconds);
}

namespace {
/// The CUDA backend asks for a module it lacks through this (a program that calls the backend directly, not a run)
[[maybe_unused]] const bool provider_set = [] {
    set_cuda_module_provider([](const std::string& model, bool trajectory, Precision precision, Method method) {
        if (!find_registered(model) && !builtin_kernel_source(model))
            throw std::invalid_argument("backend 'cuda': unknown model '" + model + "'");
        prepare_cuda_kernels(model, trajectory ? CudaKernels::trajectory : CudaKernels::ensemble, precision, method);
    });
    return true;
}();
} // namespace

std::optional<CompileReport::Cuda> cuda_compile_report(const std::string& name) {
    if (find_registered(name)) {
        const std::optional<CompileReport> r = compile_report(name);
        return r ? r->cuda : std::nullopt;
    }
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.builtin_cuda_reports.find(name);
    if (it == r.builtin_cuda_reports.end()) return std::nullopt;
    return it->second;
}

bool cuda_kernels_available(const std::string& name) {
    if (find_registered(name)) return jit::nvrtc_available() && !is_interpreted(name);
    const std::optional<BuiltinKernelSource> s = builtin_kernel_source(name);
    return s && (s->ahead_of_time || jit::nvrtc_available());
}

void set_scope(const std::string& name, const Scope& scope) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.by_name.find(name);
    if (it == r.by_name.end()) return;
    Entry& e = *it->second;
    // NOTE: every unit classifies (a run classifies its model for the summary), so inspection is always covered
    const bool covered = e.scope.kind == Scope::all || scope.kind == Scope::inspection || e.scope == scope;
    if (!e.compiled) e.scope = scope;
    else if (!covered && e.report.interpreted_because.empty()) {
        e.scope = Scope{};
        e.compiled = false;
    }
}

bool is_interpreted(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.by_name.find(name);
    return it != r.by_name.end() && it->second->compiled && !it->second->report.interpreted_because.empty();
}

std::string resolve_model_argument(const std::string& arg) {
    const std::string ext = ".toml";
    if (arg.size() <= ext.size() || arg.compare(arg.size() - ext.size(), ext.size(), ext) != 0) return arg;
    return register_model(load_model_file(arg)).name;
}

std::vector<ModelInfo> registered_infos() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<ModelInfo> v;
    for (const auto& [name, e] : r.by_name) v.push_back(e->model.info);
    return v;
}

const FileModel* find_registered(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.by_name.find(name);
    return it == r.by_name.end() ? nullptr : &it->second->model;
}

std::optional<CompileReport> compile_report(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.by_name.find(name);
    if (it == r.by_name.end() || !it->second->compiled) return std::nullopt;
    return it->second->report;
}

void quiet_compiles(bool quiet) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.quiet = quiet;
}

} // namespace nhvk::modelfile
