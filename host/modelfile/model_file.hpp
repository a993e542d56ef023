// SPDX-License-Identifier: MIT
/** @file
 *  @brief A model written as a TOML file of expressions (README "Adding a model"): loading, derivation, emission as
 *         C++, and the compiled model's `ModelOps`.
 *
 *  @code
 *  name = "my_particle"                     # optional: the file's stem
 *  description = "..."                      # optional
 *  coordinates = ["x", "y", "z"]
 *  angles = []                              # optional: coordinates that are angles (wrapped in the divergence)
 *  lagrangian = "0.5*m*(x'^2 + y'^2 + z'^2) - m*g*z"
 *  constraints = ["z' - y*x'"]
 *  forces = ["0", "-c*y'", "0"]             # optional: one generalized force per coordinate
 *  chart = ["abs(cos(theta)) > margin(1e-4, 1e-3)"]   # optional: where the coordinates hold (no velocities)
 *  velocity_chart = ["x'^2 + y'^2 > vfloor^2"]         # optional: the same in velocity space
 *  source_residual = "abs(x'*y' - z')"      # optional: the source's own constraints, dimensionless, ~0 on the set
 *  [parameters]
 *  m = { default = 1.0, range = "> 0" }     # range: "> 0", ">= 0" or "finite" (the default)
 *  g = 9.81                                 # a number alone: the default, range "finite"
 *  rolling = { default = false }            # a boolean parameter: read only by if(rolling, a, b)
 *  [definitions]                            # optional: named subexpressions, usable in every expression
 *  wz = "psi' - phi'*sin(theta)"
 *  @endcode
 */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "model_info.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/sym/expr.hpp"
#include "sym/derived.hpp"

namespace nhvk {

struct ModelOps;

namespace modelfile {

/** @brief A chart condition `lhs > rhs` (or `>=` when not strict), node ids of `FileModel::graph`. */
struct Condition {
    int lhs = -1, rhs = -1;
    bool strict = true;
};

/** @brief One combination of the boolean parameters: every expression as node ids of `FileModel::graph`. */
struct FileVariant {
    int lagrangian = -1;
    std::vector<int> constraints; ///< k
    std::vector<int> forces;      ///< n, or empty (no forces)
    /// [0]: double precision, [1]: float (`margin(a, b)` and `vfloor` differ)
    std::vector<Condition> chart[2], velocity_chart[2];
    int source_residual = -1; ///< −1: none
};

/** @brief A parsed model file. The graph's `Var::param` index `i` is `info.params[i]` (booleans included, as the
 *         built-in models' `visit_params` order numbers them). */
struct FileModel {
    std::string source;     ///< the file (or "CONFIG [model]" for an inline model), for messages
    std::string text;       ///< what was parsed, canonical (hashed into the compiled model's key)
    ModelInfo info;         ///< name, description, n, k, coordinates, angles, parameters
    std::vector<int> flags; ///< indices into info.params of the boolean parameters (variant bit i = flags[i])
    std::shared_ptr<sym::Graph> graph;
    std::vector<FileVariant> variants; ///< 2^flags.size()
    bool lagrangian_depends_on_t = false;
    bool has_forces = false, has_chart = false, has_velocity_chart = false, has_source_residual = false;
};

/** @brief The longest name a model file may give (the model, a coordinate, a parameter, a definition). */
inline constexpr std::size_t max_name_length = 64;

/** @brief The one grammar of every name a model file gives, its file stem included when it names the model: a letter
 *         or '_', then letters, digits and '_', at most `max_name_length` characters. Only such a name is printed
 *         into generated source as it is. */
bool is_model_identifier(const std::string& s);

/** @brief `s` as a C++ string literal (quotes included) in which every byte outside printable ASCII is an octal
 *         escape: the one way any other user text (a description, a path) enters generated C++ or CUDA source. */
std::string cpp_literal(const std::string& s);

/** @brief `s` when it passes `is_model_identifier`, else a std::logic_error (the loader checks every name first;
 *         this keeps the emitter from printing an unchecked one). `what` names it in the message. */
std::string cpp_identifier(const std::string& s, const char* what);

/** @brief `s` for a message: as `cpp_literal` writes it, clipped to about `max` bytes with the length said, so a
 *         name or path of control characters or of megabytes prints as one short line. */
std::string shown(const std::string& s, std::size_t max = 80);

/** @brief A path for a message: as it is when it is printable ASCII of at most 200 bytes (every ordinary path), else
 *         as `shown` writes it (escaped, clipped). */
std::string shown_path(const std::string& path);

/** @brief The most nodes a model's parsed expressions may have, every variant's together (hash-consed: identical
 *         subexpressions count once; README "Adding a model", Limits). NOTE: the generated source grows with it and
 *         the C++ compiler's time faster, so a model past it would compile for many minutes; it also bounds the
 *         depth of every walk over the graph. */
inline constexpr int max_model_nodes = 4000;

/** @brief The keys of a model (a model file's top level, an inline model's `[model]`), in the README's order. */
const std::vector<std::string>& model_keys();

/** @brief Load a model file. Errors name the file, the key, and the line and column (of the file) of the problem. */
FileModel load_model_file(const std::string& path);

/** @brief Load a model from TOML text: its root (`table_key` empty: a model file) or its table `table_key` (a
 *         config's inline `[model]`, whose keys the messages then prefix with "model."). `source` names it in
 *         messages; `default_name` is used when there is no `name`; `ignored_keys` are the caller's (an inline
 *         model's `params`). */
FileModel load_model_text(const std::string& toml_text, const std::string& source, const std::string& table_key,
                          const std::string& default_name, const std::vector<std::string>& ignored_keys);

/** @brief Load a model from a parsed TOML table (a config's inline `[model]`): keys in messages are prefixed with
 *         `key_prefix`; `file_text` is the text the table was parsed from (for exact columns inside multi-line
 *         strings; may be empty). */
FileModel load_model_table(const toml::table& table, const std::string& source, const std::string& key_prefix,
                           const std::string& default_name, const std::vector<std::string>& ignored_keys,
                           const std::string& file_text);

/** @brief The equations of every variant, derived with the reference AD of nhvk/dynamics.hpp run over the parsed
 *         expressions, into `g` (the graph the emitter prints). */
sym::DerivedModel derive_file_model(sym::Graph& g, const FileModel& m);

/** @brief What a process integrates a model file with, so its unit compiles only that: every precision, method and
 *         equations (`all`: the tests, which ask for each), one of them (`one`: a run, a trajectory), or none
 *         (`inspection`: `nhvk inspect`, which classifies; no generated equations either). */
struct Scope {
    enum Kind { all, one, inspection } kind = all;
    Precision precision = Precision::f64;
    Method method = Method::dopri5;
    EquationsKind equations = EquationsKind::generated;
    static Scope only(Precision p, Method m, EquationsKind e) { return {one, p, m, e}; }
    bool operator==(const Scope& o) const {
        return kind == o.kind &&
               (kind != one || (precision == o.precision && method == o.method && equations == o.equations));
    }
    /** @brief "every combination", "double, dopri5, generated", "inspection" (summary.json `compiled_for`). */
    std::string describe() const;
};

/** @brief One translation unit: the model as a C++ struct of the model concept (its expressions printed as templated
 *         straight-line code, the dual-number reference), its generated equations (not for `inspection`), and an
 *         exported function that returns its `ModelOps` for `scope`. */
std::string emit_model_unit(const FileModel& m, const Scope& scope = {});

/** @brief The exported function of a compiled model unit, and the version of the `ModelOps` layout it was built
 *         against (the cache key hashes the headers, so a mismatch means a stale hand-made artefact). */
inline constexpr const char* ops_symbol = "nhvk_model_file_ops";
inline constexpr int ops_abi = 1;

/** @brief The exported `unsigned long (const SamplingPlan*, void* out, unsigned long capacity)` of a compiled model
 *         unit: writes the model's `SampleSpec` (the CUDA sampling kernel's argument) when it fits and returns its
 *         size. */
inline constexpr const char* sample_spec_symbol = "nhvk_model_file_sample_spec";

/** @brief The CUDA translation unit of `m` for NVRTC: the same struct and generated equations as `emit_model_unit`,
 *         then the kernel templates (kernels/kernel_templates.cuh), nothing of the host. */
std::string emit_model_cuda_unit(const FileModel& m);

/** @brief Which kernels of a model one CUDA module holds. */
enum class CudaKernels {
    ensemble,   ///< the chunk kernel, then the sampling kernel (`nhvk run`)
    trajectory, ///< the flat trajectory kernel (`nhvk trajectory`)
};

/** @brief The kernels NVRTC instantiates from `emit_model_cuda_unit` for one precision and method, as name
 *         expressions. A module holds one combination only: each costs seconds to a minute of NVRTC, and a run uses
 *         one. */
std::vector<std::string> cuda_kernel_names(CudaKernels which, Precision precision, Method method,
                                           const std::string& model_type = "nhvk::file_model::Model");

} // namespace modelfile
} // namespace nhvk
