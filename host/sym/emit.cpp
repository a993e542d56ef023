// SPDX-License-Identifier: MIT
#include "emit.hpp"

#include "nhvk/linalg.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace nhvk::sym {

const char* solve_kind_name(SolveKind s) { return s == SolveKind::schur_diagonal ? "schur_diagonal" : "lu"; }

namespace {

constexpr unsigned param_bit = 1u << static_cast<unsigned>(Var::param);

/** @brief A node that depends on nothing but the parameters (and is not a bare constant). */
bool is_param_level(const Graph& g, int id) { return !g.is_constant(id) && (g.dep_mask(id) & ~param_bit) == 0u; }

std::string literal(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return std::string("T(") + buf + ")";
}

const char* function_name(Op op) {
    switch (op) {
    // NOTE: sin and cos through nhvk/trig.hpp: on the device an argument reduction without local memory.
    case Op::sin:
        return "trig_sin";
    case Op::cos:
        return "trig_cos";
    case Op::tan:
        return "tan";
    case Op::asin:
        return "asin";
    case Op::acos:
        return "acos";
    case Op::atan:
        return "atan";
    case Op::sinh:
        return "sinh";
    case Op::cosh:
        return "cosh";
    case Op::tanh:
        return "tanh";
    case Op::asinh:
        return "asinh";
    case Op::exp:
        return "exp";
    case Op::log:
        return "log";
    case Op::sqrt:
        return "sqrt";
    default:
        return nullptr;
    }
}

/** @brief The right-hand side of one node given the names of its arguments. */
std::string node_expr(const Node& nd, const std::string& a, const std::string& b) {
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
    case Op::atan2:
        return "atan2(" + a + ", " + b + ")";
    case Op::pow:
        if (nd.value == 2.0) return a + " * " + a;
        if (nd.value == 0.5) return "sqrt(" + a + ")";
        if (nd.value == -1.0) return "T(1) / " + a;
        return "pow(" + a + ", " + literal(nd.value) + ")";
    default:
        break;
    }
    if (const char* f = function_name(nd.op)) return std::string(f) + "(" + a + ")";
    throw std::logic_error("emit: unexpected node");
}

/** @brief The parameter-only subexpressions of one variant that the functions read: slots of `Consts<T>::c`. */
class ConstTable {
public:
    int slot(int id) {
        const auto it = slot_.find(id);
        if (it != slot_.end()) return it->second;
        const int s = static_cast<int>(ids_.size());
        ids_.push_back(id);
        slot_.emplace(id, s);
        return s;
    }
    const std::vector<int>& ids() const { return ids_; }

private:
    std::vector<int> ids_;
    std::map<int, int> slot_;
};

/** @brief The body of one generated function: named temporaries for the state-dependent nodes, in topological
 *         order, each emitted once. */
class Body {
public:
    Body(const Graph& g, ConstTable& consts, std::string indent) : g_(g), k_(consts), in_(std::move(indent)) {}

    std::string ref(int id) {
        const Node& nd = g_.node(id);
        if (nd.op == Op::constant) return literal(nd.value);
        if (is_param_level(g_, id)) return "K.c[" + std::to_string(k_.slot(id)) + "]";
        if (nd.op == Op::variable) {
            switch (nd.var) {
            case Var::q:
                return "q[" + std::to_string(nd.index) + "]";
            case Var::v:
                return "v[" + std::to_string(nd.index) + "]";
            case Var::t:
                return "t";
            case Var::mu:
                return "mu[" + std::to_string(nd.index) + "]";
            case Var::lambda:
                return "lam_" + std::to_string(nd.index);
            case Var::param:
                break;
            }
            throw std::logic_error("emit: unexpected variable");
        }
        return "t" + std::to_string(id);
    }
    /** @brief Emit every state-dependent node `roots` need that is not emitted yet. */
    void need(const std::vector<int>& roots) {
        std::set<int> todo;
        std::vector<int> stack(roots.begin(), roots.end());
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            const Node& nd = g_.node(id);
            if (nd.op == Op::constant || nd.op == Op::variable || is_param_level(g_, id)) continue;
            if (emitted_.count(id) || todo.count(id)) continue;
            todo.insert(id);
            if (nd.a >= 0) stack.push_back(nd.a);
            if (nd.b >= 0) stack.push_back(nd.b);
        }
        for (const int id : todo) { // std::set: ascending ids = topological order
            const Node& nd = g_.node(id);
            line("const T t" + std::to_string(id) + " = " +
                 node_expr(nd, ref(nd.a), nd.b >= 0 ? ref(nd.b) : std::string()) + ";");
            emitted_.insert(id);
        }
    }
    void line(const std::string& s) { os_ << in_ << s << '\n'; }
    /** @brief `T NAME[m][m] = {…}; T r_[m] = {…};` from row-major node ids, then the LU solve (singular: return). */
    void lu_system(const std::string& name, const std::vector<int>& A, const std::vector<int>& r, int m) {
        const std::string sm = std::to_string(m);
        std::string init = "T " + name + "[" + sm + "][" + sm + "] = {";
        for (int i = 0; i < m; ++i) {
            init += i ? ", {" : "{";
            for (int j = 0; j < m; ++j) init += (j ? ", " : "") + ref(A[static_cast<std::size_t>(i * m + j)]);
            init += "}";
        }
        line(init + "};");
        std::string rr = "T r_[" + sm + "] = {";
        for (int i = 0; i < m; ++i) rr += (i ? ", " : "") + ref(r[static_cast<std::size_t>(i)]);
        line(rr + "};");
        line("if (!lu_solve(" + name + ", r_).ok) return Status::singular;");
    }
    std::string str() const { return os_.str(); }

private:
    const Graph& g_;
    ConstTable& k_;
    std::string in_;
    std::ostringstream os_;
    std::set<int> emitted_;
};

int sum(Graph& g, const std::vector<int>& terms) {
    int s = g.constant(0.0);
    for (const int t : terms) s = g.binary(Op::add, s, t);
    return s;
}

/** @brief The nodes `(J·v)_c` of the reaction power, emitted before the solve (for rolling_disc the kernels' registers
 *         were the same with them emitted after it; bench/results/2026-11-23-kernel-resources-power.md). */
std::vector<int> emit_jv(Graph& g, Body& body, const DerivedVariant& dv, int n, int k) {
    std::vector<int> jv(static_cast<std::size_t>(k));
    for (int c = 0; c < k; ++c) {
        std::vector<int> terms;
        for (int j = 0; j < n; ++j)
            terms.push_back(g.binary(Op::mul, dv.J[static_cast<std::size_t>(c * n + j)], g.variable(Var::v, j)));
        jv[static_cast<std::size_t>(c)] = sum(g, terms);
    }
    body.need(jv);
    return jv;
}

/** @brief `if (power) *power = Σ_c m_c (J·v)_c;` with the multipliers named by `mult_name(c)`. */
template <class Name> void emit_power(Body& body, const std::vector<int>& jv, const Name& mult_name) {
    std::string p = "T(0)";
    for (std::size_t c = 0; c < jv.size(); ++c) p += " + " + mult_name(static_cast<int>(c)) + " * " + body.ref(jv[c]);
    body.line("if (power) *power = " + p + "; // the power of the reactions, λ·(J·v)");
}

// The LU path solves the system that the engine's `motion_system` (nhvk/linalg.hpp) assembles, traced here with the
// recording scalar: one assembly for the reference equations and the generated ones. It needs the sizes at compile
// time: instantiated for n ≤ max_motion_n, k ≤ max_motion_k (the catalogue's largest model has n = 6, k = 2).
constexpr int max_motion_n = 12, max_motion_k = 6;

/** @brief `motion_system(W, J, b, γ)` traced into `g` for `N` coordinates and `K` constraints: `A` (row-major) and
 *         `r` as node ids. */
template <int N, int K>
void trace_motion_system(Graph& g, const SaddleParts& s, const DerivedVariant& dv, std::vector<int>& A,
                         std::vector<int>& r) {
    GraphScope scope(g);
    Expr W[N][N], J[K][N], b[N], gamma[K], Ax[N + K][N + K], rx[N + K];
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j) W[i][j] = Expr::from_id(s.W[static_cast<std::size_t>(i * N + j)]);
        b[i] = Expr::from_id(s.b[static_cast<std::size_t>(i)]);
    }
    for (int a = 0; a < K; ++a) {
        for (int j = 0; j < N; ++j) J[a][j] = Expr::from_id(dv.J[static_cast<std::size_t>(a * N + j)]);
        gamma[a] = Expr::from_id(dv.gamma[static_cast<std::size_t>(a)]);
    }
    motion_system(W, J, b, gamma, Ax, rx);
    A.clear();
    r.clear();
    for (const auto& row : Ax)
        for (const Expr& e : row) A.push_back(e.id());
    for (const Expr& e : rx) r.push_back(e.id());
}

/** @brief `trace_motion_system<n, k>` for run-time sizes `n`, `k` (searched from `N`, `K` upwards). */
template <int N = 1, int K = 1>
void trace_motion_system_sized(Graph& g, const SaddleParts& s, const DerivedVariant& dv, int n, int k,
                               std::vector<int>& A, std::vector<int>& r) {
    if constexpr (N > max_motion_n) {
        throw std::runtime_error(
            "the generator's saddle-point assembly is instantiated for n <= " + std::to_string(max_motion_n) +
            " coordinates (raise max_motion_n in host/sym/emit.cpp)");
    } else if constexpr (K > max_motion_k) {
        throw std::runtime_error(
            "the generator's saddle-point assembly is instantiated for k <= " + std::to_string(max_motion_k) +
            " constraints (raise max_motion_k in host/sym/emit.cpp)");
    } else if (n != N) {
        trace_motion_system_sized<N + 1, K>(g, s, dv, n, k, A, r);
    } else if (k != K) {
        trace_motion_system_sized<N, K + 1>(g, s, dv, n, k, A, r);
    } else {
        trace_motion_system<N, K>(g, s, dv, A, r);
    }
}

/** @brief The code that solves `[Wt −Jᵀ; J 0][a; m] = [−bt; γ]` into `a[]` and `mult[]` (and, with `power`, the
 *         reaction power `m·(J·v)` into `*power` when that pointer is not null), then returns ok. */
void emit_solve(Graph& g, Body& body, const SaddleParts& s, const DerivedVariant& dv, int n, int k, const char* mult,
                bool power = false) {
    const std::string M(mult);
    auto J = [&](int c, int j) { return dv.J[static_cast<std::size_t>(c * n + j)]; };
    const std::vector<int> jv = power ? emit_jv(g, body, dv, n, k) : std::vector<int>{};
    if (choose_solve(g, s, n) == SolveKind::schur_diagonal) {
        body.line("// [Wt −Jᵀ; J 0][a; m] = [−bt; γ] with Wt diagonal and constant: S m = γ + J Wt⁻¹ bt, "
                  "S = J Wt⁻¹ Jᵀ, a = Wt⁻¹ (Jᵀ m − bt)");
        std::vector<int> winv(static_cast<std::size_t>(n));
        for (int j = 0; j < n; ++j)
            winv[static_cast<std::size_t>(j)] =
                g.binary(Op::div, g.constant(1.0), s.W[static_cast<std::size_t>(j * n + j)]);
        std::vector<int> S(static_cast<std::size_t>(k * k)), r(static_cast<std::size_t>(k));
        for (int a = 0; a < k; ++a) {
            for (int c = a; c < k; ++c) {
                std::vector<int> terms;
                for (int j = 0; j < n; ++j)
                    terms.push_back(
                        g.binary(Op::mul, g.binary(Op::mul, J(a, j), J(c, j)), winv[static_cast<std::size_t>(j)]));
                S[static_cast<std::size_t>(a * k + c)] = S[static_cast<std::size_t>(c * k + a)] = sum(g, terms);
            }
            std::vector<int> terms;
            for (int j = 0; j < n; ++j)
                terms.push_back(g.binary(Op::mul, g.binary(Op::mul, J(a, j), winv[static_cast<std::size_t>(j)]),
                                         s.b[static_cast<std::size_t>(j)]));
            r[static_cast<std::size_t>(a)] = g.binary(Op::add, dv.gamma[static_cast<std::size_t>(a)], sum(g, terms));
        }
        std::vector<int> roots(S);
        roots.insert(roots.end(), r.begin(), r.end());
        body.need(roots);
        if (k == 1) {
            const std::string s00 = body.ref(S[0]);
            // NOTE: one test for 0, ±∞ and NaN (NaN fails both comparisons)
            body.line("if (!(abs(" + s00 + ") > T(0) && abs(" + s00 +
                      ") <= NumericLimits<T>::max())) return Status::singular;");
            body.line("const T lam_0 = " + body.ref(r[0]) + " / " + s00 + ";");
        } else {
            body.lu_system("S_", S, r, k);
            for (int a = 0; a < k; ++a)
                body.line("const T lam_" + std::to_string(a) + " = r_[" + std::to_string(a) + "];");
        }
        std::vector<int> acc(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            std::vector<int> terms;
            for (int c = 0; c < k; ++c) terms.push_back(g.binary(Op::mul, J(c, i), g.variable(Var::lambda, c)));
            acc[static_cast<std::size_t>(i)] =
                g.binary(Op::mul, winv[static_cast<std::size_t>(i)],
                         g.binary(Op::sub, sum(g, terms), s.b[static_cast<std::size_t>(i)]));
        }
        body.need(acc);
        for (int i = 0; i < n; ++i)
            body.line("a[" + std::to_string(i) + "] = " + body.ref(acc[static_cast<std::size_t>(i)]) + ";");
        for (int c = 0; c < k; ++c) body.line(M + "[" + std::to_string(c) + "] = lam_" + std::to_string(c) + ";");
        if (power) emit_power(body, jv, [](int c) { return "lam_" + std::to_string(c); });
        body.line("return Status::ok;");
        return;
    }
    body.line("// [Wt −Jᵀ; J 0][a; m] = [−bt; γ]: LU with partial pivoting (nhvk/linalg.hpp)");
    const int m = n + k;
    std::vector<int> A, r;
    trace_motion_system_sized(g, s, dv, n, k, A, r);
    std::vector<int> roots(A);
    roots.insert(roots.end(), r.begin(), r.end());
    body.need(roots);
    body.lu_system("A_", A, r, m);
    for (int i = 0; i < n; ++i) body.line("a[" + std::to_string(i) + "] = r_[" + std::to_string(i) + "];");
    for (int c = 0; c < k; ++c) body.line(M + "[" + std::to_string(c) + "] = r_[" + std::to_string(n + c) + "];");
    if (power) emit_power(body, jv, [n](int c) { return "r_[" + std::to_string(n + c) + "]"; });
    body.line("return Status::ok;");
}

/** @brief One generated member function: its signature, and one body per variant. */
struct Function {
    std::string signature;
    std::string prologue; ///< `(void)x;` for arguments a body may not read
    std::vector<std::string> bodies;
};

std::string assemble(const Function& f) {
    std::ostringstream os;
    os << "    template <class T>\n    " << f.signature << " {\n" << f.prologue;
    if (f.bodies.size() == 1) {
        os << f.bodies[0];
    } else {
        // NOTE: the last variant is the else branch, so every path returns or assigns every output.
        for (std::size_t v = 0; v + 1 < f.bodies.size(); ++v)
            os << "        if (K.variant == " << v << ") {\n" << f.bodies[v] << "        }\n";
        os << "        {\n" << f.bodies.back() << "        }\n";
    }
    os << "    }\n";
    return os.str();
}

} // namespace

SolveKind choose_solve(const Graph& g, const SaddleParts& s, int n) {
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            const int id = s.W[static_cast<std::size_t>(i * n + j)];
            if (i != j && !g.is_value(id, 0.0)) return SolveKind::lu;
            if (i == j && (g.is_value(id, 0.0) || (g.dep_mask(id) & ~param_bit) != 0u)) return SolveKind::lu;
        }
    return SolveKind::schur_diagonal;
}

std::string emit_header(Graph& g, const DerivedModel& m) {
    const int n = m.n, k = m.k;
    const std::size_t nv = m.variants.size();
    std::vector<ConstTable> consts(nv);
    const std::string ind = nv == 1 ? "        " : "            ";
    Function nh{
        "NHVK_HD NHVK_FORCEINLINE static Status nh_accel(const Consts<T>& K, const T* q, const T* v, T t, T* a, "
        "T* lambda, T* power = nullptr)",
        "        (void)K; (void)q; (void)v; (void)t; (void)power;\n",
        {}};
    Function vk{"NHVK_HD NHVK_FORCEINLINE static Status vk_accel(const Consts<T>& K, const T* q, const T* v, "
                "const T* mu, T t, T* a, T* mudot)",
                "        (void)K; (void)q; (void)v; (void)mu; (void)t;\n",
                {}};
    Function cp{"NHVK_HD NHVK_FORCEINLINE static void constraint_parts(const Consts<T>& K, const T* q, const T* v, "
                "T t, T (&phi)[" +
                    std::to_string(k) + "], T (&J)[" + std::to_string(k) + "][" + std::to_string(n) + "], T (&gamma)[" +
                    std::to_string(k) + "])",
                "        (void)K; (void)q; (void)v; (void)t;\n",
                {}};
    Function km{"NHVK_HD NHVK_FORCEINLINE static void kinetic_metric(const Consts<T>& K, const T* q, const T* v, T t, "
                "T (&W)[" +
                    std::to_string(n) + "][" + std::to_string(n) + "])",
                "        (void)K; (void)q; (void)v; (void)t;\n",
                {}};
    Function en{"NHVK_HD NHVK_FORCEINLINE static T energy(const Consts<T>& K, const T* q, const T* v, T t)",
                "        (void)K; (void)q; (void)v; (void)t;\n",
                {}};
    std::vector<std::string> nh_kinds, vk_kinds;
    for (std::size_t vi = 0; vi < nv; ++vi) {
        const DerivedVariant& dv = m.variants[vi];
        nh_kinds.push_back(solve_kind_name(choose_solve(g, dv.nh, n)));
        vk_kinds.push_back(solve_kind_name(choose_solve(g, dv.vk, n)));
        {
            Body b(g, consts[vi], ind);
            emit_solve(g, b, dv.nh, dv, n, k, "lambda", true);
            nh.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            emit_solve(g, b, dv.vk, dv, n, k, "mudot");
            vk.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            std::vector<int> roots(dv.phi);
            roots.insert(roots.end(), dv.J.begin(), dv.J.end());
            roots.insert(roots.end(), dv.gamma.begin(), dv.gamma.end());
            b.need(roots);
            for (int a = 0; a < k; ++a) {
                b.line("phi[" + std::to_string(a) + "] = " + b.ref(dv.phi[static_cast<std::size_t>(a)]) + ";");
                b.line("gamma[" + std::to_string(a) + "] = " + b.ref(dv.gamma[static_cast<std::size_t>(a)]) + ";");
                for (int j = 0; j < n; ++j)
                    b.line("J[" + std::to_string(a) + "][" + std::to_string(j) +
                           "] = " + b.ref(dv.J[static_cast<std::size_t>(a * n + j)]) + ";");
            }
            if (nv > 1) b.line("return;");
            cp.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            b.need(dv.nh.W);
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j)
                    b.line("W[" + std::to_string(i) + "][" + std::to_string(j) +
                           "] = " + b.ref(dv.nh.W[static_cast<std::size_t>(i * n + j)]) + ";");
            if (nv > 1) b.line("return;");
            km.bodies.push_back(b.str());
        }
        {
            Body b(g, consts[vi], ind);
            b.need({dv.energy});
            b.line("return " + b.ref(dv.energy) + ";");
            en.bodies.push_back(b.str());
        }
    }

    // ---- Consts<T> and consts<T>(p): the parameter-only nodes each variant's functions read ----
    std::size_t n_consts = 0;
    for (const ConstTable& c : consts) n_consts = std::max(n_consts, c.ids().size());
    Function cf{"NHVK_HD NHVK_FORCEINLINE static Consts<T> consts(const double* p)", "", {}};
    std::string variant_expr = "0";
    for (std::size_t b = 0; b < m.bool_params.size(); ++b)
        variant_expr += " + (p[" + std::to_string(m.bool_params[b]) + "] != 0.0 ? " + std::to_string(1u << b) + " : 0)";
    cf.prologue = "        (void)p;\n        Consts<T> K{};\n        K.variant = " + variant_expr + ";\n";
    for (std::size_t vi = 0; vi < nv; ++vi) {
        std::ostringstream os;
        std::set<int> todo;
        std::vector<int> stack(consts[vi].ids().begin(), consts[vi].ids().end());
        while (!stack.empty()) {
            const int id = stack.back();
            stack.pop_back();
            if (g.is_constant(id) || todo.count(id)) continue;
            todo.insert(id);
            const Node& nd = g.node(id);
            if (nd.a >= 0) stack.push_back(nd.a);
            if (nd.b >= 0) stack.push_back(nd.b);
        }
        auto cref = [&](int id) {
            const Node& nd = g.node(id);
            return nd.op == Op::constant ? literal(nd.value) : "c" + std::to_string(id);
        };
        for (const int id : todo) {
            const Node& nd = g.node(id);
            const std::string rhs = nd.op == Op::variable
                                        ? "T(p[" + std::to_string(nd.index) + "])"
                                        : node_expr(nd, cref(nd.a), nd.b >= 0 ? cref(nd.b) : std::string());
            os << ind << "const T c" << id << " = " << rhs << ";\n";
        }
        for (std::size_t s = 0; s < consts[vi].ids().size(); ++s)
            os << ind << "K.c[" << s << "] = c" << consts[vi].ids()[s] << ";\n";
        if (nv > 1) os << ind << "return K;\n";
        cf.bodies.push_back(os.str());
    }
    if (nv == 1) cf.bodies[0] += "        return K;\n";

    auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
        return s;
    };
    std::ostringstream os;
    os << "// SPDX-License-Identifier: MIT\n"
       << "// Generated by nhvk-codegen from " << m.header << " (host/sym/): do not edit; edit the model and rebuild.\n"
       << "// The equations of " << m.cpp_type << " derived once by the reference AD over a symbolic scalar, folded "
       << "and\n// with common subexpressions shared. Saddle-point solves (per variant): nonholonomic "
       << join(nh_kinds) << ", vakonomic " << join(vk_kinds) << ".\n"
       << "#pragma once\n\n#include \"nhvk/generated.hpp\"\n#include \"" << m.header << "\"\n\nnamespace nhvk {\n\n"
       << "template <> struct Generated<" << m.cpp_type << "> {\n"
       << "    static constexpr int n = " << n << ", k = " << k << ", n_params = " << m.params.size()
       << ", n_variants = " << nv << ", n_consts = " << n_consts << ";\n"
       << "    static constexpr const char* nh_solve = \"" << join(nh_kinds) << "\";\n"
       << "    static constexpr const char* vk_solve = \"" << join(vk_kinds) << "\";\n"
       << "    /** @brief Parameter-only subexpressions, evaluated once per trajectory. */\n"
       << "    template <class T> struct Consts {\n        int variant;\n        T c[" << (n_consts ? n_consts : 1)
       << "];\n    };\n\n";
    os << assemble(cf) << '\n'
       << assemble(nh) << '\n'
       << assemble(vk) << '\n'
       << assemble(cp) << '\n'
       << assemble(km) << '\n'
       << assemble(en);
    os << "};\n\n} // namespace nhvk\n";
    return os.str();
}

} // namespace nhvk::sym
