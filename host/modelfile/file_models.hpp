// SPDX-License-Identifier: MIT
/** @file
 *  @brief The model files of this process: registered by name when a config names one, compiled on first use.
 *
 *  `find_model_ops` and `model_registry` look here before the built-in models, so a model file whose name is also a
 *  built-in model's replaces it for this process (the model-file twins of the built-in models are tested that way).
 */
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model_info.hpp"
#include "modelfile/cuda_compile.hpp"
#include "modelfile/model_file.hpp"

namespace nhvk {

struct ModelOps;

namespace modelfile {

/** @brief How a model file's compiled code was obtained (summary.json `model_file`, and stderr). */
struct CompileReport {
    std::string source; ///< the model file (or the config of an inline model)
    /// why the model is interpreted (modelfile/interpreted.hpp) instead of compiled; empty: compiled
    std::string interpreted_because;
    std::string artefact;         ///< the shared object in the cache (empty when interpreted)
    std::string compiled_for;     ///< `Scope::describe()` of what it was compiled for (empty when interpreted)
    std::string key;              ///< its cache key
    bool cached = false;          ///< loaded from the cache without compiling
    double derive_seconds = 0.0;  ///< derivation and emission of the equations
    double compile_seconds = 0.0; ///< the C++ compiler's time (0 when cached)
    double wait_seconds = 0.0;    ///< waiting for another process compiling the same model
    /// NVRTC's compile of the model's CUDA kernels (a run on the CUDA backend), the last one of this process
    struct Cuda {
        bool ahead_of_time = false; ///< a built-in model's kernels compiled into nhvk (the fields below are empty)
        std::string arch;           ///< the device's, e.g. "sm_90"
        std::string artefact;       ///< the CUBIN entry in the cache
        std::string key;
        bool cached = false;
        double compile_seconds = 0.0;
        double wait_seconds = 0.0;
    };
    std::optional<Cuda> cuda;
};

/** @brief Register `m` under its name (replacing an earlier model file of that name; an identical one is kept) and
 *         return its description. Nothing is compiled yet. */
const ModelInfo& register_model(FileModel m);

/** @brief The ops of the registered model file `name`, compiling it (or loading it from the cache) on the first
 *         call; nullptr when no model file of that name is registered. Prints one line to stderr when it compiles
 *         (it takes seconds) unless `quiet_compiles(true)`. Where the compiler cannot run (`jit::compiler_problem`),
 *         the model is interpreted instead (slower; CPU only) and a line on stderr says so and why, quiet or not. */
const ModelOps* find_ops(const std::string& name);

/** @brief The kernels of one precision and method of the model file `m`, compiled by NVRTC for `arch` (no device
 *         needed) or loaded from the cache: what `prepare_cuda` hands to the backend and `nhvk compile` fills. `label`
 *         names the file in messages. */
jit::CudaArtefact compile_file_cuda(const FileModel& m, CudaKernels which, Precision precision, Method method,
                                    const std::string& arch, const std::string& label,
                                    const jit::Reporter& report = {});

/** @brief Make the CUDA kernels of model `name` ready for the current device: a model file's (`prepare_cuda`), or a
 *         built-in model's that this build did not compile ahead of time (NVRTC, cached; one line on stderr while it
 *         compiles). Nothing for a built-in model compiled ahead of time. */
void prepare_cuda_kernels(const std::string& name, CudaKernels which, Precision precision, Method method);

/** @brief Where this process's CUDA kernels of model `name` came from (`prepare_cuda_kernels`): compiled into nhvk, or
 *         NVRTC's compile (or cache hit) for the device; nothing when none were prepared (a CPU run, `nhvk merge`). */
std::optional<CompileReport::Cuda> cuda_compile_report(const std::string& name);

/** @brief Whether the CUDA backend can run model `name` in this build: compiled ahead of time, or compiled at run
 *         time where this build has NVRTC and the model is not interpreted. */
bool cuda_kernels_available(const std::string& name);

/** @brief Compile the registered model file `name` for `scope` only (call before `find_ops`; the default is every
 *         combination). A scope that the compiled ops do not cover (every unit covers `inspection`) makes the next
 *         `find_ops` compile every combination (the ops it returned before then change in place). */
void set_scope(const std::string& name, const Scope& scope);

/** @brief Whether the registered model file `name` is interpreted (after `find_ops(name)`): it then runs on the CPU
 *         only, with the reference equations (`integrator.equations = "ad"`). */
bool is_interpreted(const std::string& name);

/** @brief Compile (or load from the cache) the CUDA kernels of the registered model file `name` for the current
 *         device, `which` of them for one precision and method, and hand them to the CUDA backend (its runs and
 *         trajectories of `name` then use them). Compiles the host unit first (`find_ops`). Throws when this nhvk has
 *         no NVRTC or no CUDA backend, or `name` is not a registered model file. Prints to stderr as `find_ops`. */
void prepare_cuda(const std::string& name, CudaKernels which, Precision precision, Method method);

/** @brief A command line's model argument: a model file (`*.toml`) is loaded and registered and its model's name
 *         returned; anything else is returned as it is (a model name). */
std::string resolve_model_argument(const std::string& arg);

/** @brief The registered model files' descriptions. */
std::vector<ModelInfo> registered_infos();

/** @brief The registered model file `name`, or nullptr. */
const FileModel* find_registered(const std::string& name);

/** @brief How the model file `name` was compiled; empty before `find_ops(name)`. */
std::optional<CompileReport> compile_report(const std::string& name);

/** @brief Whether `find_ops` keeps quiet when it compiles (`nhvk run -q`). */
void quiet_compiles(bool quiet);

} // namespace modelfile
} // namespace nhvk
