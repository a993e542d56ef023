// SPDX-License-Identifier: MIT
#include "print.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace nhvk::sym {

std::string number(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

namespace {

/** @brief The strings of `v` separated by `sep`. */
std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : std::string()) + v[i];
    return s;
}

std::string index(int i) { return "[" + std::to_string(i) + "]"; }

/** @brief The names of the solves, one per variant, separated by commas. */
std::string solve_names(const std::vector<SolveKind>& kinds) {
    std::vector<std::string> names;
    for (const SolveKind s : kinds) names.push_back(solve_kind_name(s));
    return join(names, ",");
}

std::string ref(const Ref& r) {
    switch (r.kind) {
    case Ref::Kind::none:
        return std::string();
    case Ref::Kind::literal:
        return "T(" + number(r.value) + ")";
    case Ref::Kind::slot:
        return "K.c" + index(r.index);
    case Ref::Kind::temp:
        return "t" + std::to_string(r.index);
    case Ref::Kind::param_temp:
        return "c" + std::to_string(r.index);
    case Ref::Kind::solution:
        return "r_" + index(r.index);
    case Ref::Kind::variable:
        switch (r.var) {
        case Var::q:
            return "q" + index(r.index);
        case Var::v:
            return "v" + index(r.index);
        case Var::t:
            return "t";
        case Var::mu:
            return "mu" + index(r.index);
        case Var::lambda:
            return "lam_" + std::to_string(r.index);
        case Var::param:
            return "T(p" + index(r.index) + ")";
        }
        break;
    }
    throw std::logic_error("print: unexpected reference");
}

std::string refs(const std::vector<Ref>& rs, std::size_t from, std::size_t count) {
    std::vector<std::string> s;
    for (std::size_t i = from; i < from + count; ++i) s.push_back(ref(rs[i]));
    return join(s, ", ");
}

const char* array_name(Array a) {
    switch (a) {
    case Array::a:
        return "a";
    case Array::lambda:
        return "lambda";
    case Array::mudot:
        return "mudot";
    case Array::phi:
        return "phi";
    case Array::gamma:
        return "gamma";
    case Array::J:
        return "J";
    case Array::W:
        return "W";
    case Array::consts:
        break;
    }
    return "K.c";
}

/** @brief The text of one statement after the indent of its first line, without the last newline (`LuSolve`'s later
 *         lines start with `in_`). */
struct StatementText {
    std::string operator()(const Comment& s) const { return "// " + s.text; }
    std::string operator()(const Let& s) const {
        Node nd;
        nd.op = s.op;
        nd.value = s.value;
        return "const T " + ref(s.name) + " = " + node_code(nd, ref(s.a), ref(s.b), "T", true) + ";";
    }
    std::string operator()(const Bind& s) const { return "const T " + ref(s.name) + " = " + ref(s.value) + ";"; }
    std::string operator()(const Store& s) const {
        return array_name(s.array) + index(s.i) + (s.j >= 0 ? index(s.j) : std::string()) + " = " + ref(s.value) + ";";
    }
    std::string operator()(const CheckSingular& s) const {
        std::vector<std::string> terms;
        for (const PermanentTerm& t : s.bound) {
            std::vector<std::string> products;
            for (const Ref& p : t.products) products.push_back("abs(" + ref(p) + ")");
            const std::string sum = join(products, " + ");
            terms.push_back(t.factor ? "abs(" + ref(*t.factor) + ") * (" + sum + ")" : sum);
        }
        const std::string v = ref(s.value);
        const std::string bound =
            terms.empty() ? std::string("T(0)") : "NumericLimits<T>::epsilon() * (" + join(terms, " + ") + ")";
        // NOTE: one test for the bound, ±∞ and NaN (NaN fails both comparisons). The test is remembered and the
        // body goes on (what it computes from here is not used when it failed): a return here would be a branch and
        // a join in every right-hand side of every stage, and on the device the values live across the join would
        // hold registers and need moves (bench/results/2026-11-30-step-loop-sass.md).
        return "regular_ = regular_ && abs(" + v + ") > " + bound + " && abs(" + v + ") <= NumericLimits<T>::max();";
    }
    std::string operator()(const LuSolve& s) const {
        const std::string name = s.system == System::saddle ? "A_" : "S_";
        const std::size_t m = static_cast<std::size_t>(s.m);
        std::vector<std::string> rows;
        for (std::size_t i = 0; i < m; ++i) rows.push_back("{" + refs(s.A, i * m, m) + "}");
        return "T " + name + index(s.m) + index(s.m) + " = {" + join(rows, ", ") + "};\n" + in_ + "T r_" + index(s.m) +
               " = {" + refs(s.r, 0, m) + "};\n" + in_ + "if (!lu_solve(" + name + ", r_).ok) return Status::singular;";
    }
    std::string operator()(const ReactionPower& s) const {
        std::string p = "T(0)";
        for (std::size_t c = 0; c < s.rates.size(); ++c) p += " + " + ref(s.multipliers[c]) + " * " + ref(s.rates[c]);
        return "if (power) *power = " + p + "; // the power of the reactions, λ·(J·v)";
    }
    std::string operator()(const Return& s) const {
        switch (s.what) {
        case Return::What::nothing:
            return "return;";
        case Return::What::ok:
            return checks ? "return regular_ ? Status::ok : Status::singular;" : "return Status::ok;";
        case Return::What::value:
            return "return " + ref(s.value) + ";";
        case Return::What::consts:
            break;
        }
        return "return K;";
    }

    std::string in_;     ///< the indent of the lines after the first
    bool checks = false; ///< whether the body has a `CheckSingular`, which declares `regular_` first
};

/** @brief The signature of a generated function, and the `(void)x;` for the arguments a body may not read. */
struct Frame {
    std::string signature, prologue;
};

Frame frame(const LoweredModel& m, FunctionKind kind) {
    const std::string n = std::to_string(m.n), k = std::to_string(m.k);
    const std::string head = "NHVK_HD NHVK_FORCEINLINE static ";
    const std::string state_args = "(const Consts<T>& K, const T* q, const T* v, ";
    const std::string unused = "        (void)K; (void)q; (void)v; (void)t;\n";
    switch (kind) {
    case FunctionKind::consts: {
        std::string variant = "0";
        for (std::size_t b = 0; b < m.bool_params.size(); ++b)
            variant += " + (p[" + std::to_string(m.bool_params[b]) + "] != 0.0 ? " + std::to_string(1u << b) + " : 0)";
        return {head + "Consts<T> consts(const double* p)",
                "        (void)p;\n        Consts<T> K{};\n        K.variant = " + variant + ";\n"};
    }
    case FunctionKind::nh_accel:
        return {head + "Status nh_accel" + state_args + "T t, T* a, T* lambda, T* power = nullptr)",
                "        (void)K; (void)q; (void)v; (void)t; (void)power;\n"};
    case FunctionKind::vk_accel:
        return {head + "Status vk_accel" + state_args + "const T* mu, T t, T* a, T* mudot)",
                "        (void)K; (void)q; (void)v; (void)mu; (void)t;\n"};
    case FunctionKind::constraint_parts:
        return {head + "void constraint_parts" + state_args + "T t, T (&phi)[" + k + "], T (&J)[" + k + "][" + n +
                    "], T (&gamma)[" + k + "])",
                unused};
    case FunctionKind::kinetic_metric:
        return {head + "void kinetic_metric" + state_args + "T t, T (&W)[" + n + "][" + n + "])", unused};
    case FunctionKind::energy:
        break;
    }
    return {head + "T energy" + state_args + "T t)", unused};
}

} // namespace

std::string node_code(const Node& nd, const std::string& a, const std::string& b, const std::string& scalar,
                      bool header) {
    switch (nd.op) {
    case Op::add:
        return a + " + " + b;
    case Op::sub:
        return a + " - " + b;
    case Op::mul:
        return a + " * " + b;
    case Op::div:
        return a + " / " + b;
    case Op::neg:
        return "-" + a;
    case Op::pow:
        if (nd.value == 2.0) return a + " * " + a;
        if (nd.value == 0.5) return "sqrt(" + a + ")";
        if (nd.value == -1.0) return scalar + "(1) / " + a;
        // NOTE: outside the headers the exponent stays a plain number: pow(Dual, number) is the power rule, while
        // pow(Dual, Dual) is exp(p log a), NaN for a negative base (x^3 at x < 0).
        return "pow(" + a + ", " + (header ? scalar + "(" + number(nd.value) + ")" : number(nd.value)) + ")";
    default:
        break;
    }
    // the elementary functions: their spelling in the table of nhvk/ops.hpp (headers), or their name, which namespace
    // nhvk overloads for every scalar type (plain numbers and the dual numbers)
    if (const FunctionOp* f = function_op(nd.op))
        return std::string(header ? f->spelling : f->name) + "(" + a + (f->arity == 2 ? ", " + b : std::string()) + ")";
    throw std::logic_error("emit: unexpected node");
}

std::string print_statements(const Statements& body, const std::string& indent) {
    std::string out;
    StatementText text{indent};
    text.checks = std::any_of(body.begin(), body.end(),
                              [](const Statement& s) { return std::holds_alternative<CheckSingular>(s); });
    if (text.checks) out += indent + "bool regular_ = true; // every CheckSingular so far passed\n";
    for (const Statement& s : body) out += indent + std::visit(text, s) + "\n";
    return out;
}

std::string print_function(const LoweredModel& m, const Function& f) {
    const Frame fr = frame(m, f.kind);
    std::string out = "    template <class T>\n    " + fr.signature + " {\n" + fr.prologue;
    if (f.variants.size() == 1) {
        out += print_statements(f.variants[0], "        ");
    } else {
        // NOTE: the last variant is the else branch, so every path returns or assigns every output.
        const std::string in = "            ";
        for (std::size_t v = 0; v + 1 < f.variants.size(); ++v)
            out += "        if (K.variant == " + std::to_string(v) + ") {\n" + print_statements(f.variants[v], in) +
                   "        }\n";
        out += "        {\n" + print_statements(f.variants.back(), in) + "        }\n";
    }
    return out + "    }\n";
}

std::string print_generated(const LoweredModel& m) {
    std::ostringstream os;
    os << "template <> struct Generated<" << m.cpp_type << "> {\n"
       << "    static constexpr int n = " << m.n << ", k = " << m.k << ", n_params = " << m.n_params
       << ", n_variants = " << m.nh_solve.size() << ", n_consts = " << m.n_consts << ";\n"
       << "    static constexpr const char* nh_solve = \"" << solve_names(m.nh_solve) << "\";\n"
       << "    static constexpr const char* vk_solve = \"" << solve_names(m.vk_solve) << "\";\n"
       << "    /** @brief Parameter-only subexpressions, evaluated once per trajectory. */\n"
       << "    template <class T> struct Consts {\n        int variant;\n        T c[" << (m.n_consts ? m.n_consts : 1)
       << "];\n    };\n";
    for (const Function& f : m.functions) os << '\n' << print_function(m, f);
    os << "};\n";
    return os.str();
}

std::string print_header(const LoweredModel& m) {
    std::ostringstream os;
    os << "// SPDX-License-Identifier: MIT\n"
       << "// Generated by nhvk-codegen from " << (m.header.empty() ? std::string("a model file") : m.header)
       << " (host/sym/): do not edit; edit the model and rebuild.\n"
       << "// The equations of " << m.cpp_type << " derived once by the reference AD over a symbolic scalar, folded "
       << "and\n// with common subexpressions shared. Saddle-point solves (per variant): nonholonomic "
       << solve_names(m.nh_solve) << ", vakonomic " << solve_names(m.vk_solve) << ".\n"
       << "#pragma once\n\n#include \"nhvk/generated.hpp\"\n"
       // NOTE: no header for a model file's model: its struct precedes these equations in one unit.
       << (m.header.empty() ? std::string() : "#include \"" + m.header + "\"\n") << "\nnamespace nhvk {\n\n"
       << print_generated(m) << "\n} // namespace nhvk\n";
    return os.str();
}

} // namespace nhvk::sym
