// SPDX-License-Identifier: MIT
// A model file as one C++ translation unit: the model as a struct of the model concept (nhvk/dynamics.hpp), whose
// functions print the parsed expressions as templated straight-line code (so the dual-number reference, the sampler
// and the trajectory writer use it as they use a built-in model), followed by its generated equations
// (host/sym/emit.hpp) and the exported `ModelOps` of model_ops_impl.hpp.
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.hpp"
#include "modelfile/model_file.hpp"
#include "sym/emit.hpp"

namespace nhvk::modelfile {

namespace {

using sym::Node;
using sym::Op;
using sym::Var;

} // namespace

// NOTE: the one door for user text into emitted C++ and CUDA source (STYLE.md). A model file travels between people
// and must stay data: every byte outside printable ASCII is written as a three-digit octal escape (never \x, which
// would swallow a following hex digit), so no raw control character (GCC takes a lone CR as a line break), no
// backslash at a line's end (a line splice) and no non-ASCII byte reaches the compiler; `"`, `\` and `?` (trigraphs
// under a strict -std) are escaped too. The literal always ends in `"`, so it is also safe inside a // comment.
std::string cpp_literal(const std::string& s) {
    std::string r = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\' || c == '?') {
            r += '\\';
            r += ch;
        } else if (c < 0x20 || c > 0x7e) {
            const char oct[] = {'\\', static_cast<char>('0' + (c >> 6)), static_cast<char>('0' + ((c >> 3) & 7)),
                                static_cast<char>('0' + (c & 7)), 0};
            r += oct;
        } else {
            r += ch;
        }
    }
    return r + "\"";
}

std::string cpp_identifier(const std::string& s, const char* what) {
    if (!is_model_identifier(s))
        throw std::logic_error(std::string("model file: the ") + what + " " + cpp_literal(s) +
                               " reached the emitter without the name check");
    return s;
}

std::string shown(const std::string& s, std::size_t max) {
    if (s.size() <= max) return cpp_literal(s);
    return cpp_literal(s.substr(0, max)) + "... (" + std::to_string(s.size()) + " bytes)";
}

namespace {

/** @brief Straight-line code of some nodes of the model's graph in scalar type `S`: one named temporary per
 *         interior node, leaves inline. */
class Printer {
public:
    Printer(const sym::Graph& g, std::string scalar, std::string indent)
        : g_(g), s_(std::move(scalar)), in_(std::move(indent)) {}

    /** @brief The expression of node `id`, after declaring the temporaries it needs. NOTE: an explicit stack, not a
     *         recursion (a graph is as deep as a sum has terms); the temporaries come in the order a recursion would
     *         give, each after its first argument's, then its second argument's. */
    std::string ref(int id) {
        if (!needs_name(id)) return name_of(id);
        std::vector<std::pair<int, int>> stack{{id, 0}}; // a node and how many of its arguments were visited
        while (!stack.empty()) {
            const int top = stack.back().first;
            const Node& nd = g_.node(top);
            const int visited = stack.back().second++;
            const int arg = visited == 0 ? nd.a : visited == 1 ? nd.b : -1;
            if (visited < 2) {
                if (arg >= 0 && needs_name(arg)) stack.emplace_back(arg, 0);
                continue;
            }
            stack.pop_back();
            const std::string a = nd.a >= 0 ? name_of(nd.a) : std::string();
            const std::string b = nd.b >= 0 ? name_of(nd.b) : std::string();
            const std::string name = "e" + std::to_string(top);
            code_ << in_ << "const " << s_ << " " << name << " = " << expression(nd, a, b) << ";\n";
            names_.emplace(top, name);
        }
        return name_of(id);
    }
    std::string code() const { return code_.str(); }

private:
    static bool is_leaf(const Node& nd) { return nd.op == Op::constant || nd.op == Op::variable; }
    /** @brief An interior node not declared yet. */
    bool needs_name(int id) const { return !is_leaf(g_.node(id)) && names_.find(id) == names_.end(); }
    /** @brief A leaf's text, or the temporary of a declared interior node. */
    std::string name_of(int id) const {
        const Node& nd = g_.node(id);
        switch (nd.op) {
        case Op::constant:
            return s_ + "(" + sym::number(nd.value) + ")";
        case Op::variable:
            switch (nd.var) {
            case Var::q:
                return "q[" + std::to_string(nd.index) + "]";
            case Var::v:
                return "v[" + std::to_string(nd.index) + "]";
            case Var::t:
                return "t";
            case Var::param:
                return s_ + "(p" + std::to_string(nd.index) + ")";
            default:
                throw std::logic_error("model file: unexpected variable in an expression");
            }
        default:
            return names_.at(id);
        }
    }
    std::string expression(const Node& nd, const std::string& a, const std::string& b) const {
        return sym::node_code(nd, a, b, s_, false);
    }

    const sym::Graph& g_;
    std::string s_, in_;
    std::ostringstream code_;
    std::map<int, std::string> names_;
};

/** @brief `if (variant == i) { … }` blocks, one per variant, each printed by `body(variant, printer)`. */
template <class Body>
std::string per_variant(const FileModel& m, const std::string& scalar, const std::string& indent, Body&& body) {
    std::string out;
    for (std::size_t i = 0; i < m.variants.size(); ++i) {
        const bool many = m.variants.size() > 1;
        const std::string in = many ? indent + "    " : indent;
        Printer p(*m.graph, scalar, in);
        const std::string tail = body(m.variants[i], p);
        if (many) out += indent + "if (variant() == " + std::to_string(i) + "u) {\n";
        out += p.code() + tail;
        if (many) out += indent + "}\n";
    }
    return out;
}

std::string conditions(const FileModel& m, bool velocity, const std::string& indent) {
    std::string out;
    for (int prec = 0; prec < 2; ++prec) {
        out += indent + (prec == 0 ? "if constexpr (sizeof(T) >= 8) {\n" : "} else {\n");
        out += per_variant(m, "T", indent + "    ", [&](const FileVariant& fv, Printer& p) {
            const std::vector<Condition>& cs = velocity ? fv.velocity_chart[prec] : fv.chart[prec];
            std::string all;
            for (const Condition& c : cs) {
                const std::string l = p.ref(c.lhs), rr = p.ref(c.rhs);
                all += std::string(all.empty() ? "" : " && ") + "(" + l + (c.strict ? " > " : " >= ") + rr + ")";
            }
            return indent + "        return " + (all.empty() ? "true" : all) + ";\n";
        });
    }
    return out + indent + "}\n";
}

} // namespace

namespace {

/// The model as a struct of the model concept, then its generated equations (unless `generated` is false): what both
/// units below start with.
std::string emit_model_equations(const FileModel& m, bool generated = true) {
    const int n = m.info.n, k = m.info.k;
    std::ostringstream o;
    // NOTE: the model file's path is user text (a folder name may hold any byte): printed as an escaped literal.
    o << "// Emitted by nhvk from the model file " << cpp_literal(m.source) << ": do not edit (edit the model file).\n"
      << "#include \"nhvk/dynamics.hpp\"\n\n"
      << "namespace nhvk::file_model {\n\n"
      << "struct Model : ModelBase {\n"
      << "    static constexpr int n = " << n << ", k = " << k << ";\n"
      << "    static constexpr const char* name = " << cpp_literal(cpp_identifier(m.info.name, "model name")) << ";\n"
      << "    static constexpr const char* description = " << cpp_literal(m.info.description) << ";\n"
      << "    static constexpr const char* coord_names[n] = {";
    for (int i = 0; i < n; ++i)
        o << (i ? ", " : "") << cpp_literal(cpp_identifier(m.info.coords[static_cast<std::size_t>(i)], "coordinate"));
    o << "};\n    static constexpr bool angles[n] = {";
    for (int i = 0; i < n; ++i) o << (i ? ", " : "") << (m.info.angles[static_cast<std::size_t>(i)] ? "true" : "false");
    o << "};\n";
    o << "    static constexpr bool has_force = " << (m.has_forces ? "true" : "false") << ";\n"
      << "    static constexpr bool lagrangian_depends_on_t = " << (m.lagrangian_depends_on_t ? "true" : "false")
      << ";\n"
      << "    static constexpr bool has_chart = " << (m.has_chart ? "true" : "false") << ";\n"
      << "    static constexpr bool has_velocity_chart = " << (m.has_velocity_chart ? "true" : "false") << ";\n"
      << "    static constexpr bool has_source_constraints = " << (m.has_source_residual ? "true" : "false") << ";\n\n";
    // Parameters: members p0, p1, … (a parameter's name may be any identifier, a C++ keyword included).
    for (std::size_t i = 0; i < m.info.params.size(); ++i) {
        const ParamInfo& p = m.info.params[i];
        if (p.is_bool) o << "    bool p" << i << " = " << (p.default_value != 0.0 ? "true" : "false") << ";\n";
        else o << "    Param p" << i << " = " << sym::number(p.default_value) << ";\n";
    }
    o << "    template <class V> NHVK_HD void visit_params(V&& visit) {\n";
    for (std::size_t i = 0; i < m.info.params.size(); ++i) {
        const ParamInfo& p = m.info.params[i];
        o << "        visit(" << cpp_literal(cpp_identifier(p.name, "parameter")) << ", p" << i;
        if (!p.is_bool)
            o << ", ParamDomain::"
              << (p.domain == ParamDomain::positive       ? "positive"
                  : p.domain == ParamDomain::non_negative ? "non_negative"
                                                          : "any");
        o << ");\n";
    }
    o << "    }\n";
    o << "    /** @brief The combination of the boolean parameters (bit i: the i-th of them). */\n"
      << "    NHVK_HD unsigned variant() const { return 0u";
    for (std::size_t b = 0; b < m.flags.size(); ++b) o << " | (p" << m.flags[b] << " ? " << (1u << b) << "u : 0u)";
    o << "; }\n\n";

    o << "    template <class S> NHVK_HD S lagrangian(const S* q, const S* v, const S& t) const {\n"
      << "        (void)q, (void)v, (void)t;\n"
      << per_variant(m, "S", "        ",
                     [](const FileVariant& fv, Printer& p) { return "        return " + p.ref(fv.lagrangian) + ";\n"; })
      << "        return S(0); // unreachable: one variant matches\n    }\n";
    o << "    template <class S> NHVK_HD void constraints(const S* q, const S* v, const S& t, S* phi) const {\n"
      << "        (void)q, (void)v, (void)t;\n"
      << per_variant(m, "S", "        ",
                     [&](const FileVariant& fv, Printer& p) {
                         std::string r;
                         for (int a = 0; a < k; ++a)
                             r += "phi[" + std::to_string(a) +
                                  "] = " + p.ref(fv.constraints[static_cast<std::size_t>(a)]) + "; ";
                         return "        " + r + "return;\n";
                     })
      << "    }\n";
    if (m.has_forces)
        o << "    template <class S> NHVK_HD void force(const S* q, const S* v, const S& t, S* F) const {\n"
          << "        (void)q, (void)v, (void)t;\n"
          << per_variant(m, "S", "        ",
                         [&](const FileVariant& fv, Printer& p) {
                             std::string r;
                             for (int i = 0; i < n; ++i)
                                 r += "F[" + std::to_string(i) +
                                      "] = " + p.ref(fv.forces[static_cast<std::size_t>(i)]) + "; ";
                             return "        " + r + "return;\n";
                         })
          << "    }\n";
    if (m.has_chart)
        o << "    template <class T> NHVK_HD bool in_chart(const T* q) const {\n        (void)q;\n"
          << conditions(m, false, "        ") << "        return false;\n    }\n";
    if (m.has_velocity_chart)
        o << "    template <class T> NHVK_HD bool in_velocity_chart(const T* q, const T* v) const {\n"
          << "        (void)q, (void)v;\n"
          << conditions(m, true, "        ") << "        return false;\n    }\n";
    if (m.has_source_residual)
        o << "    template <class T> NHVK_HD T source_residual(const T* q, const T* v, const T& t) const {\n"
          << "        (void)q, (void)v, (void)t;\n"
          << per_variant(m, "T", "        ",
                         [](const FileVariant& fv, Printer& p) {
                             return "        return " + p.ref(fv.source_residual) + ";\n";
                         })
          << "        return T(0);\n    }\n";
    o << "};\n\n} // namespace nhvk::file_model\n\n";
    if (!generated) return o.str();

    sym::Graph g;
    const sym::DerivedModel d = derive_file_model(g, m);
    o << sym::emit_header(g, d) << "\n";
    return o.str();
}

} // namespace

std::string Scope::describe() const {
    if (kind == all) return "every combination";
    if (kind == inspection) return "inspection";
    return combination_name(precision, method, equations);
}

std::string emit_model_unit(const FileModel& m, const Scope& scope) {
    std::string make = "nhvk::make_model_ops<nhvk::file_model::Model>()";
    if (scope.kind == Scope::inspection) make = "nhvk::make_model_ops_static<nhvk::file_model::Model>()";
    if (scope.kind == Scope::one)
        make = std::string("nhvk::make_model_ops_one<nhvk::file_model::Model, nhvk::Precision::") +
               (scope.precision == Precision::f64 ? "f64" : "f32") +
               ", nhvk::Method::" + method_info(scope.method).name +
               ", nhvk::EquationsKind::" + (scope.equations == EquationsKind::ad ? "ad" : "generated") + ">()";
    std::ostringstream o;
    o << emit_model_equations(m, scope.kind != Scope::inspection);
    o << "#include \"model_ops_impl.hpp\"\n#include \"nhvk/backend/sample_spec.hpp\"\n\n"
      << "extern \"C\" __attribute__((visibility(\"default\"))) int " << ops_symbol << "(nhvk::ModelOps* out) {\n"
      << "    *out = " << make << ";\n"
      << "    return " << ops_abi
      << ";\n}\n\n"
      // NOTE: the CUDA kernels of the same model (emit_model_cuda_unit) take this struct by value; NVRTC lays it out
      // as this host compiler does (CUDA keeps the host ABI's layout), so these bytes are its kernel argument.
      << "extern \"C\" __attribute__((visibility(\"default\"))) unsigned long " << sample_spec_symbol
      << "(const nhvk::SamplingPlan* plan, void* out, unsigned long capacity) {\n"
      << "    using Spec = nhvk::SampleSpec<nhvk::file_model::Model>;\n"
      << "    if (plan && out && capacity >= sizeof(Spec)) {\n"
      << "        const Spec s = nhvk::make_sample_spec<nhvk::file_model::Model>(*plan);\n"
      << "        __builtin_memcpy(out, &s, sizeof s);\n"
      << "    }\n"
      << "    return sizeof(Spec);\n}\n";
    return o.str();
}

std::string emit_model_cuda_unit(const FileModel& m) {
    return emit_model_equations(m) + "#include \"kernel_templates.cuh\"\n";
}

std::vector<std::string> cuda_kernel_names(CudaKernels which, Precision precision, Method method,
                                           const std::string& M) {
    const std::string T = precision == Precision::f64 ? "double" : "float";
    const std::string St = method_info(method).stepper;
    if (which == CudaKernels::trajectory)
        return {"&nhvk::cuda_detail::trajectory_flat_kernel<" + M + ", " + T + ", " + St + ">"};
    return {"&nhvk::cuda_detail::ensemble_chunk_kernel<" + M + ", " + T + ", " + St + ">",
            "&nhvk::cuda_detail::sample_chunk_kernel<" + M + ">"};
}

} // namespace nhvk::modelfile
